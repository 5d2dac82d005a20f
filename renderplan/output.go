package renderplan

// Output is one rendered tree: the bytes of every file and the plan that
// describes them. Files are sorted by path and match Plan.Files one to one.
// An Output is immutable once built and safe for concurrent reads.
type Output struct {
	Files []FileContent
	Plan  *Plan
}

// FileContent is the body of one file of an [Output].
type FileContent struct {
	Path string
	Kind FileKind
	Body []byte
	// ReloadOnChange, when non-nil, overrides [DefaultReloadOnChange] for a
	// cert, crtlist or general file passed to [NewPlan]. NewPlan ignores it
	// for haproxy.cfg and map files, which it generates; [Plan.Files] holds
	// the value that applies.
	ReloadOnChange *bool
}

// DefaultReloadOnChange says whether a change of a file of kind k needs a
// reload unless the caller says otherwise: true for haproxy.cfg and general
// files (HAProxy reads them only at startup), false for maps, certificates
// and crt-lists (the runtime API updates them).
func DefaultReloadOnChange(k FileKind) bool {
	switch k {
	case FileConfig, FileGeneral:
		return true
	default:
		return false
	}
}
