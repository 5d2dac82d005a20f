package renderplan

// Schema names the version of the plan encoding. A consumer that meets a
// plan with another schema must treat it as unknown (full state + reload).
const Schema = "haptic.renderplan/v1"

// Plan describes the structure of one rendered HAProxy file tree: how
// haproxy.cfg is partitioned into sections, the backends with their servers,
// the profiles they share, the maps and every file. A Plan is a whole
// snapshot and is immutable once built; it is safe for concurrent reads.
type Plan struct {
	// Schema is [Schema] for plans built by this package.
	Schema string `json:"schema"`
	// BufSize is the tune.bufsize, in bytes, that haproxy.cfg sets: 0 when
	// it sets none, [MinBufSize] to [MaxBufSize] otherwise. Map entries and
	// crt-list lines are bounded by [MaxLine] of it (of [DefaultBufSize]
	// for 0), so that HAProxy reads each as one line and one command.
	BufSize int `json:"bufSize,omitempty"`
	// Sections partition haproxy.cfg byte for byte, in file order.
	Sections []Section `json:"sections"`
	// Profiles are the named defaults sections backends are created from,
	// sorted by name.
	Profiles []Profile `json:"profiles,omitempty"`
	// Backends are sorted by name.
	Backends []Backend `json:"backends,omitempty"`
	// Maps are sorted by path.
	Maps []Map `json:"maps,omitempty"`
	// Files lists every file of the tree, haproxy.cfg included, sorted by path.
	Files []File `json:"files"`
}

// SectionKind says what a [Section] of haproxy.cfg holds.
type SectionKind string

// Section kinds.
const (
	// SectionCore is text the templates wrote directly: global, defaults,
	// frontends, and anything between recorded sections.
	SectionCore SectionKind = "core"
	// SectionProfile is a named defaults section shared by backends.
	SectionProfile SectionKind = "profile"
	// SectionBackend is one backend recorded through the author API.
	SectionBackend SectionKind = "backend"
)

// Section is one contiguous byte range of haproxy.cfg.
type Section struct {
	Kind SectionKind `json:"kind"`
	// Name is the profile or backend name; empty for core sections.
	Name string `json:"name,omitempty"`
	// Offset and Length locate the section in haproxy.cfg, in bytes.
	Offset int `json:"offset"`
	Length int `json:"length"`
	// Digest is the digest of the section's bytes.
	Digest Digest `json:"digest"`
}

// Shape says whether a backend can be created and deleted at runtime.
type Shape string

// Backend shapes.
const (
	// ShapeDynamic backends hold nothing but a guid and server lines beyond
	// what their profile carries, so HAProxy 3.4 can add them at runtime
	// with "add backend <name> from <profile> guid <guid>".
	ShapeDynamic Shape = "dynamic"
	// ShapeStructural backends carry directives of their own; adding,
	// removing or changing one needs a reload.
	ShapeStructural Shape = "structural"
)

// Profile is a named defaults section from which backends inherit
// everything but their servers.
type Profile struct {
	Name string `json:"name"`
	// Mode is the proxy mode the profile sets ("http" or "tcp").
	Mode string `json:"mode"`
	// Digest is the digest of the profile section's text.
	Digest Digest `json:"digest"`
}

// Backend is one backend section of haproxy.cfg.
type Backend struct {
	Name string `json:"name"`
	// GUID is the backend's global identifier, at most 127 bytes of
	// A-Z a-z 0-9 _ . : -, unique across the plan's backends and servers.
	GUID string `json:"guid"`
	// Profile names the defaults section the backend is created from.
	Profile string `json:"profile"`
	// Mode is "http" or "tcp", equal to the profile's mode.
	Mode  string `json:"mode"`
	Shape Shape  `json:"shape"`
	// ShapeReason says why a backend is structural ("has body lines").
	ShapeReason string `json:"shapeReason,omitempty"`
	// Body holds the backend's own directive lines (without indentation),
	// in order; empty for dynamic backends.
	Body []string `json:"body,omitempty"`
	// Servers are sorted by name.
	Servers []Server `json:"servers,omitempty"`
}

// Server is one server line of a backend. Servers are named after the pod
// or endpoint they point at, never after a slot number.
type Server struct {
	Name string `json:"name"`
	// Address is an IP address in canonical form ("10.0.0.1",
	// "2001:db8::1"); plans carry resolved addresses, never host names.
	Address string `json:"address"`
	// Port is 1 to 65535.
	Port int `json:"port"`
	// Weight is 0 to 256 and is always rendered ("weight 0" included):
	// 0 means the server takes no load-balanced traffic (drain), it does
	// not mean HAProxy's default. Set [DefaultWeight] (1) for that.
	Weight int `json:"weight"`
	// Disabled servers are rendered in maintenance.
	Disabled bool `json:"disabled,omitempty"`
	// Check enables health checks for the server.
	Check bool `json:"check,omitempty"`
	// Keywords are further server keywords as tokens ("ssl", "verify",
	// "none"), in order, rendered after the flags. A token holds no
	// whitespace, quote, backslash or '#'; "weight", "disabled" and "check"
	// are fields, not keywords. A server guid is given as "guid", "<id>".
	Keywords []string `json:"keywords,omitempty"`
}

// Map is one map file with its entries.
type Map struct {
	// Path is the map file's path relative to the HAProxy base directory.
	Path string `json:"path"`
	// Ordered maps are matched first-match-wins (regex or prefix lists);
	// they are replaced atomically, never entry by entry.
	Ordered bool `json:"ordered,omitempty"`
	// Entries are in file order; for unordered maps they are sorted by key
	// and keys are unique. See [MapText] for the file format.
	Entries []MapEntry `json:"entries,omitempty"`
}

// MapEntry is one line of a map file.
type MapEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// FileKind says what a file of the tree is for.
type FileKind string

// File kinds.
const (
	FileConfig  FileKind = "config"
	FileMap     FileKind = "map"
	FileCert    FileKind = "cert"
	FileCrtList FileKind = "crtlist"
	FileGeneral FileKind = "general"
)

// ConfigPath is the path of the main configuration file in every tree.
const ConfigPath = "haproxy.cfg"

// File is one file of the rendered tree.
type File struct {
	// Path is relative to the HAProxy base directory, clean, without "..".
	Path   string   `json:"path"`
	Kind   FileKind `json:"kind"`
	Digest Digest   `json:"digest"`
	Size   int      `json:"size"`
	// ReloadOnChange says a change of this file only reaches HAProxy
	// through a reload (no runtime command can deliver it).
	ReloadOnChange bool `json:"reloadOnChange,omitempty"`
}
