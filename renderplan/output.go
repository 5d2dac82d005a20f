package renderplan

import "sync/atomic"

// Output is one rendered tree: the bytes of every file and the plan that
// describes them. Files are sorted by path and match Plan.Files one to one.
// An Output is immutable once built and safe for concurrent reads.
//
// An Output holds its plan ID once computed (see [Output.ID]): pass it by
// pointer, and compare Outputs in tests with
// cmpopts.IgnoreUnexported(renderplan.Output{}).
type Output struct {
	Files []FileContent
	Plan  *Plan

	// id is Plan.ID(), stored by the first ID call or, when idDone is
	// not nil, by the Cache that built the output, before it closes
	// idDone.
	id     atomic.Pointer[string]
	idDone chan struct{}
}

// ID returns the ID of o.Plan ([Plan.ID]), computed once: the first call
// encodes the plan, later calls return the stored ID. An output built by
// a [Cache] has its ID computed in the background, from the moment it
// is built: ID waits for it. It is safe for
// concurrent use: an Output is immutable, so concurrent first calls
// compute the same ID. A nil Output, or one without a plan, has the empty
// ID. Outputs built as struct literals work too.
func (o *Output) ID() string {
	if o == nil || o.Plan == nil {
		return ""
	}
	if id := o.id.Load(); id != nil {
		return *id
	}
	if o.idDone != nil {
		<-o.idDone
		return *o.id.Load()
	}
	id := o.Plan.ID()
	o.id.Store(&id)
	return id
}

// FileContent is the body of one file of an [Output].
type FileContent struct {
	Path string
	Kind FileKind
	Body []byte
	// ReloadOnChange, when non-nil, overrides [DefaultReloadOnChange] for a
	// cert, crtlist or general file passed to [NewOutput]. NewOutput ignores it
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
