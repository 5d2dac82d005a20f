package agentapi

// Default limits of one apply request. They bound what the handler reads
// into memory; [Limits.WithDefaults] applies them.
const (
	// DefaultMaxBodyBytes bounds a whole POST /v1/apply request (manifest
	// and file bodies): 256 MiB. What a request may cost below it is what
	// its manifest declares: a body whose declared size does not fit what
	// the request may still carry is refused before it is read.
	DefaultMaxBodyBytes int64 = 256 << 20
	// DefaultMaxManifestBytes bounds the manifest part: 64 MiB.
	DefaultMaxManifestBytes int64 = 64 << 20
	// DefaultMaxFiles bounds the files of one manifest.
	DefaultMaxFiles = 20000
	// DefaultMaxOps bounds the ops of one manifest; it is not below the
	// planner's own default (deployplan.DefaultMaxOps), so a decision the
	// planner emits always fits.
	DefaultMaxOps = 20000
)

// Fixed limits of the wire format.
const (
	// MaxPathLen is the longest file path a manifest may name, in bytes.
	MaxPathLen = 1024
	// MaxPlanIDLen is the longest plan ID, in bytes.
	MaxPlanIDLen = 256
)

// Limits bounds one apply request. The zero value means the defaults.
// A Limits is a plain value.
type Limits struct {
	// MaxBodyBytes bounds the whole request, in bytes; 0 means
	// [DefaultMaxBodyBytes]. A larger request is refused with 413.
	MaxBodyBytes int64
	// MaxManifestBytes bounds the manifest JSON, in bytes; 0 means
	// [DefaultMaxManifestBytes].
	MaxManifestBytes int64
	// MaxFiles bounds the files a manifest lists; 0 means
	// [DefaultMaxFiles].
	MaxFiles int
	// MaxOps bounds the ops of a manifest; 0 means [DefaultMaxOps].
	MaxOps int
}

// WithDefaults returns l with every zero or negative field set to its
// default.
func (l Limits) WithDefaults() Limits {
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxManifestBytes <= 0 {
		l.MaxManifestBytes = DefaultMaxManifestBytes
	}
	if l.MaxManifestBytes > l.MaxBodyBytes {
		l.MaxManifestBytes = l.MaxBodyBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxOps <= 0 {
		l.MaxOps = DefaultMaxOps
	}
	return l
}
