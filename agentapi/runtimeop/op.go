package runtimeop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Op is one typed runtime operation: what the planner emits and the agent
// executes on HAProxy's worker socket. An Op never carries a command line;
// the agent turns it into commands through the haproxysock builders, which
// escape every argument. Which fields an op uses depends on its Kind (see
// [Op.Validate]); the others stay zero. An Op is a value: copy it freely.
//
// Certificate ops carry the certificate's path and the digest of its file,
// never the PEM: the PEM (with its private key) travels once, as a file of
// the same apply, and ops can be logged and printed without leaking keys.
// [OpReplaceMap] does carry the map's entries, so that the agent needs no
// map-file parser.
type Op struct {
	Kind OpKind `json:"kind"`

	// Backend and Server name the target of backend and server ops.
	Backend string `json:"backend,omitempty"`
	Server  string `json:"server,omitempty"`

	// Profile, Mode and GUID describe a backend added from a profile
	// ([OpAddBackend]).
	Profile string `json:"profile,omitempty"`
	Mode    string `json:"mode,omitempty"`
	GUID    string `json:"guid,omitempty"`

	// Address (an IP address) and Port (1 to 65535) of [OpAddServer] and
	// [OpSetServerAddr].
	Address string `json:"address,omitempty"`
	Port    int    `json:"port,omitempty"`
	// Weight (0 to 256) of [OpAddServer] and [OpSetServerWeight]; it is
	// always sent, so 0 means weight 0.
	Weight int `json:"weight,omitempty"`
	// Check enables health checks on a server added at runtime
	// ([OpAddServer]); [OpEnableHealth] starts them.
	Check bool `json:"check,omitempty"`
	// Keywords are further server keywords, one token each
	// ([OpAddServer]).
	Keywords []string `json:"keywords,omitempty"`
	// State is the administrative state of [OpSetServerState].
	State ServerState `json:"state,omitempty"`

	// Map is the map's path as the configuration names it; Key and Value
	// are one entry; Entries are the whole new content of [OpReplaceMap],
	// in order.
	Map     string     `json:"map,omitempty"`
	Key     string     `json:"key,omitempty"`
	Value   string     `json:"value,omitempty"`
	Entries []MapEntry `json:"entries,omitempty"`

	// Cert is a certificate's path as the configuration or crt-list names
	// it. Digest is the digest of the certificate file of the same apply
	// whose body [OpSetCert] loads.
	Cert   string `json:"cert,omitempty"`
	Digest string `json:"digest,omitempty"`
	// CrtList is a crt-list's path; SSLOptions (written inside "[…]") and
	// SNIFilters complete a crt-list line ([OpAddCrtListEntry]).
	CrtList    string   `json:"crtList,omitempty"`
	SSLOptions []string `json:"sslOptions,omitempty"`
	SNIFilters []string `json:"sniFilters,omitempty"`
}

// ServerState is an administrative server state.
type ServerState string

// Server states.
const (
	StateReady ServerState = "ready"
	StateDrain ServerState = "drain"
	StateMaint ServerState = "maint"
)

// MapEntry is one key and value of a map.
type MapEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ErrUnknownOpKind is returned for an op kind this version does not know.
var ErrUnknownOpKind = errors.New("runtimeop: unknown op kind")

// ErrInvalidOp is wrapped by every [Op.Validate] failure.
var ErrInvalidOp = errors.New("runtimeop: invalid op")

// UnmarshalJSON decodes an op strictly: an unknown field, an unknown kind
// or a field the kind does not use is an error, and so is any op that
// fails [Op.Validate].
func (o *Op) UnmarshalJSON(b []byte) error {
	type plain Op
	var v plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("decode op: %w", err)
	}
	if dec.More() {
		return errors.New("decode op: trailing data")
	}
	if err := Op(v).Validate(); err != nil {
		return err
	}
	*o = Op(v)
	return nil
}

// UnmarshalJSON decodes a map entry strictly (unknown fields are errors).
func (e *MapEntry) UnmarshalJSON(b []byte) error {
	type plain MapEntry
	var v plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("decode map entry: %w", err)
	}
	*e = MapEntry(v)
	return nil
}

// DecodeOps decodes a JSON array of ops strictly; the error names the
// index of the first bad op.
func DecodeOps(b []byte) ([]Op, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("decode ops: %w", err)
	}
	ops := make([]Op, len(raw))
	for i, r := range raw {
		if err := ops[i].UnmarshalJSON(r); err != nil {
			return nil, fmt.Errorf("op %d: %w", i, err)
		}
	}
	return ops, nil
}

// Target returns what the op acts on, such as "be_api/pod-a",
// "maps/hosts.map example.com" or "certs/a.pem"; ops with the same target
// belong together in the apply order.
func (o Op) Target() string {
	switch {
	case o.Server != "":
		return o.Backend + "/" + o.Server
	case o.Backend != "":
		return o.Backend
	case o.Map != "" && o.Key != "":
		return o.Map + " " + o.Key
	case o.Map != "":
		return o.Map
	case o.Cert != "":
		return o.Cert
	}
	return ""
}

// String returns a one-line, human-readable form of the op: its kind, its
// target and its other fields as name=value, in a fixed order. Values that
// are empty or contain spaces, quotes or control characters are quoted.
// It is for people and logs; the agent never parses it.
func (o Op) String() string {
	var b strings.Builder
	b.WriteString(o.Kind.String())
	f := fieldsOf(o.Kind)
	kv := func(name, v string) {
		b.WriteByte(' ')
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(quoteIfNeeded(v))
	}
	switch {
	case f&fMap != 0:
		b.WriteByte(' ')
		b.WriteString(quoteIfNeeded(o.Map))
		if f&fKey != 0 {
			kv("key", o.Key)
		}
	case f&fServer != 0:
		b.WriteByte(' ')
		b.WriteString(quoteIfNeeded(o.Backend + "/" + o.Server))
	case f&fBackend != 0:
		b.WriteByte(' ')
		b.WriteString(quoteIfNeeded(o.Backend))
	case f&fCert != 0 && f&fCrtList == 0:
		b.WriteByte(' ')
		b.WriteString(quoteIfNeeded(o.Cert))
	case f&fCrtList != 0:
		b.WriteByte(' ')
		b.WriteString(quoteIfNeeded(o.CrtList))
		kv("cert", o.Cert)
	}
	if f&fProfile != 0 {
		kv("profile", o.Profile)
	}
	if f&fMode != 0 {
		kv("mode", o.Mode)
	}
	if f&fGUID != 0 && o.GUID != "" {
		kv("guid", o.GUID)
	}
	if f&fAddress != 0 {
		kv("addr", o.Address)
	}
	if f&fPort != 0 {
		kv("port", strconv.Itoa(o.Port))
	}
	if f&fWeight != 0 {
		kv("weight", strconv.Itoa(o.Weight))
	}
	if f&fCheck != 0 && o.Check {
		b.WriteString(" check")
	}
	if f&fKeywords != 0 && len(o.Keywords) > 0 {
		kv("keywords", strings.Join(o.Keywords, " "))
	}
	if f&fState != 0 {
		kv("state", string(o.State))
	}
	if f&fValue != 0 {
		kv("value", o.Value)
	}
	if f&fEntries != 0 {
		kv("entries", strconv.Itoa(len(o.Entries)))
	}
	if f&fDigest != 0 {
		kv("digest", o.Digest)
	}
	if f&fSSLOptions != 0 && len(o.SSLOptions) > 0 {
		kv("ssl-options", strings.Join(o.SSLOptions, " "))
	}
	if f&fSNIFilters != 0 && len(o.SNIFilters) > 0 {
		kv("sni", strings.Join(o.SNIFilters, " "))
	}
	return b.String()
}

func quoteIfNeeded(s string) string {
	if s == "" {
		return `""`
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == '"' || c == '\'' || c == '\\' || c == 0x7f || c >= 0x80 {
			return strconv.Quote(s)
		}
	}
	return s
}
