package renderplan

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-multierror"
)

// Builder builds an [Output] by hand, without templates: a platform team's
// way to produce plans in Go. haproxy.cfg is assembled in call order from
// [Builder.Text], [Builder.Profile] and [Builder.Backend]; [Builder.Build]
// hands everything to [NewOutput]. A Builder is not safe for concurrent use.
//
//	b := renderplan.NewBuilder()
//	b.Text("global\n    master-worker\n\n")
//	b.Profile("web", []string{"mode http", "timeout connect 5s"})
//	b.Backend(renderplan.Backend{Name: "be_app", GUID: "be_app", Profile: "web", Servers: …})
//	out, err := b.Build()
type Builder struct {
	pieces   []Piece
	profiles []Profile
	backends []Backend
	maps     []Map
	files    []FileContent
	bufSize  int
	errs     *multierror.Error
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{} }

// Text appends core text (global, defaults, frontends, …) to haproxy.cfg,
// adding a final newline if s lacks one. Empty text is ignored.
func (b *Builder) Text(s string) {
	if s == "" {
		return
	}
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	b.pieces = append(b.pieces, Piece{Kind: SectionCore, Text: s})
}

// Profile appends the profile section "defaults <name>" with the given
// directive lines (see [ProfileText]). The lines must set the mode
// ("mode http" or "mode tcp"); the profile's mode is taken from there.
// Errors are returned and reported again by Build.
func (b *Builder) Profile(name string, lines []string) error {
	mode := ""
	for _, l := range lines {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "mode" {
			mode = f[1]
		}
	}
	if mode == "" {
		return b.fail(fmt.Errorf("profile %s: no \"mode http\" or \"mode tcp\" line", name))
	}
	for _, l := range lines {
		if problem := lineProblem(l); problem != "" {
			return b.fail(fmt.Errorf("profile %s: line %q %s", name, l, problem))
		}
	}
	b.profiles = append(b.profiles, Profile{Name: name, Mode: mode})
	b.pieces = append(b.pieces, Piece{Kind: SectionProfile, Name: name, Text: ProfileText(name, lines)})
	return nil
}

// Backend appends the backend's section (see [BackendText]). The backend's
// profile must have been added before. An empty Mode is taken from the
// profile; Shape and ShapeReason are set by [NewOutput] from the body lines
// (set Shape to ShapeStructural with a reason to force a structural
// backend). The backend is copied. Errors are returned and reported again
// by Build.
func (b *Builder) Backend(be Backend) error {
	found := false
	for _, pr := range b.profiles {
		found = found || pr.Name == be.Profile
	}
	if !found {
		return b.fail(fmt.Errorf("backend %s: profile %q not added before it", be.Name, be.Profile))
	}
	b.backends = append(b.backends, be.clone())
	b.pieces = append(b.pieces, Piece{Kind: SectionBackend, Name: be.Name})
	return nil
}

// Map adds a map file at m.Path with m's entries (see [MapText]); entries
// of an unordered map are sorted by key. Reference it from core text by its
// path, relative to the HAProxy base directory. The map is copied.
func (b *Builder) Map(m Map) error {
	if problem := pathProblem(m.Path); problem != "" {
		return b.fail(fmt.Errorf("map %q: path %s", m.Path, problem))
	}
	m.Entries = append([]MapEntry(nil), m.Entries...)
	b.maps = append(b.maps, m)
	return nil
}

// File adds a cert, crtlist or general file. reloadOnChange says whether a
// change of it needs a reload (see [DefaultReloadOnChange] for the usual
// choice per kind). haproxy.cfg and maps are generated; File refuses them.
// The body is copied.
func (b *Builder) File(path string, kind FileKind, body []byte, reloadOnChange bool) error {
	switch kind {
	case FileCert, FileCrtList, FileGeneral:
	default:
		return b.fail(fmt.Errorf("file %s: kind %q cannot be added (want cert, crtlist or general)", path, kind))
	}
	if problem := pathProblem(path); problem != "" {
		return b.fail(fmt.Errorf("file %q: path %s", path, problem))
	}
	reload := reloadOnChange
	b.files = append(b.files, FileContent{Path: path, Kind: kind, Body: append([]byte(nil), body...), ReloadOnChange: &reload})
	return nil
}

// BufSize declares that the text sets tune.bufsize n ([Plan.BufSize]);
// 0, the default, declares none.
func (b *Builder) BufSize(n int) { b.bufSize = n }

// Build assembles and validates the output with [NewOutput]. It reports the
// errors of earlier calls as well as the plan's problems, all aggregated
// with go-multierror. The Builder can be built again after more calls.
func (b *Builder) Build() (*Output, error) {
	if err := b.errs.ErrorOrNil(); err != nil {
		return nil, err
	}
	return NewOutput(b.pieces, b.profiles, b.backends, b.maps, b.files, WithBufSize(b.bufSize))
}

func (b *Builder) fail(err error) error {
	b.errs = multierror.Append(b.errs, err)
	return err
}
