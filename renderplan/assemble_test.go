package renderplan_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
)

// The sections partition haproxy.cfg: their texts, concatenated in order,
// are the file, and each section's digest is the digest of its bytes.
func TestNewOutputSectionsPartitionTheConfig(t *testing.T) {
	for name, out := range map[string]*renderplan.Output{
		"full plan": fullOutput(t),
		"big plan":  bigOutput(t, 300),
	} {
		t.Run(name, func(t *testing.T) {
			cfg := configBody(t, out)
			var joined strings.Builder
			for i, s := range out.Plan.Sections {
				text := cfg[s.Offset : s.Offset+s.Length]
				if s.Offset != joined.Len() {
					t.Fatalf("section %d starts at %d, want %d", i, s.Offset, joined.Len())
				}
				joined.WriteString(text)
				if got := renderplan.DigestString(text); got != s.Digest {
					t.Errorf("section %d digest = %s, want %s", i, s.Digest, got)
				}
				switch s.Kind {
				case renderplan.SectionBackend:
					be, ok := out.Plan.Backend(s.Name)
					if !ok {
						t.Fatalf("section %d names backend %s, not in the plan", i, s.Name)
					}
					if text != renderplan.BackendText(*be) {
						t.Errorf("section %d is not BackendText(%s)", i, s.Name)
					}
				case renderplan.SectionProfile:
					if !strings.HasPrefix(text, "defaults "+s.Name+"\n") {
						t.Errorf("profile section %d does not start with its defaults line: %q", i, text)
					}
				}
			}
			if joined.String() != cfg {
				t.Error("concatenated sections differ from haproxy.cfg")
			}
			f, _ := out.Plan.File(renderplan.ConfigPath)
			if f.Size != len(cfg) || f.Digest != renderplan.DigestString(cfg) {
				t.Errorf("haproxy.cfg file entry %+v does not describe its %d bytes", f, len(cfg))
			}
		})
	}
}

func TestNewOutputDescribesEveryFileOnce(t *testing.T) {
	out := fullOutput(t)
	if len(out.Files) != len(out.Plan.Files) {
		t.Fatalf("%d file bodies, %d plan files", len(out.Files), len(out.Plan.Files))
	}
	var got []renderplan.File
	for _, fc := range out.Files {
		f, _ := out.Plan.File(fc.Path)
		got = append(got, *f)
		if f.Kind != fc.Kind || f.Size != len(fc.Body) || f.Digest != renderplan.DigestOf(fc.Body) {
			t.Errorf("file %s: plan says %+v, body has %d bytes", fc.Path, f, len(fc.Body))
		}
	}
	want := []renderplan.File{
		{Path: "certs/site.pem", Kind: renderplan.FileCert},
		{Path: "general/503.http", Kind: renderplan.FileGeneral, ReloadOnChange: true},
		{Path: "haproxy.cfg", Kind: renderplan.FileConfig, ReloadOnChange: true},
		{Path: "maps/hosts.map", Kind: renderplan.FileMap},
		{Path: "maps/paths.map", Kind: renderplan.FileMap},
	}
	ignore := func(fs []renderplan.File) []renderplan.File {
		out := make([]renderplan.File, len(fs))
		for i, f := range fs {
			out[i] = renderplan.File{Path: f.Path, Kind: f.Kind, ReloadOnChange: f.ReloadOnChange}
		}
		return out
	}
	if diff := cmp.Diff(want, ignore(got)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, ignore(out.Plan.Files)); diff != "" {
		t.Errorf("plan files (-want +got):\n%s", diff)
	}
	hosts := fileBody(t, out, "maps/hosts.map")
	if want := "a.example.com be_tcp\nb.example.com be_app\n"; hosts != want {
		t.Errorf("unordered map file = %q, want sorted %q", hosts, want)
	}
	paths := fileBody(t, out, "maps/paths.map")
	if want := "/shop/cart be_app\n/shop be app with spaces\n"; paths != want {
		t.Errorf("ordered map file = %q, want in given order %q", paths, want)
	}
}

func TestNewOutputSetsShapesModesAndProfileDigests(t *testing.T) {
	p := fullOutput(t).Plan
	type shape struct {
		Name, Mode  string
		Shape       renderplan.Shape
		ShapeReason string
		Servers     []string
	}
	var got []shape
	for _, be := range p.Backends {
		s := shape{Name: be.Name, Mode: be.Mode, Shape: be.Shape, ShapeReason: be.ShapeReason}
		for _, srv := range be.Servers {
			s.Servers = append(s.Servers, srv.Name)
		}
		got = append(got, s)
	}
	want := []shape{
		{Name: "be_app", Mode: "http", Shape: renderplan.ShapeDynamic, Servers: []string{"app-a", "app-b"}},
		{Name: "be_default", Mode: "http", Shape: renderplan.ShapeStructural, ShapeReason: renderplan.ShapeReasonBody},
		{Name: "be_tcp", Mode: "tcp", Shape: renderplan.ShapeDynamic, Servers: []string{"db-0"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backends (-want +got):\n%s", diff)
	}
	web, _ := p.Profile("web")
	if want := renderplan.DigestString(renderplan.ProfileText("web", []string{"mode http", "balance roundrobin", "timeout connect 5s", "timeout server 30s"})); web.Digest != want {
		t.Errorf("profile web digest = %s, want %s", web.Digest, want)
	}
}

func TestNewOutputKeepsAForcedStructuralShape(t *testing.T) {
	pieces, profiles, backends, _ := bigInputs(2)
	backends[0].Shape, backends[0].ShapeReason = renderplan.ShapeStructural, "named by use_backend"
	backends[1].Shape = renderplan.ShapeStructural // no reason: not forced
	out, err := renderplan.NewOutput(pieces, profiles, backends, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Plan.Backends[0]; got.Shape != renderplan.ShapeStructural || got.ShapeReason != "named by use_backend" {
		t.Errorf("forced backend: shape %s (%q)", got.Shape, got.ShapeReason)
	}
	if got := out.Plan.Backends[1]; got.Shape != renderplan.ShapeDynamic {
		t.Errorf("backend with shape but no reason: shape %s, want dynamic", got.Shape)
	}
}

func TestNewOutputMergesAdjacentCoreAndDropsEmptyCore(t *testing.T) {
	pieces, profiles, backends, _ := bigInputs(1)
	pieces = append([]renderplan.Piece{{Kind: renderplan.SectionCore, Text: ""}, {Kind: renderplan.SectionCore, Text: "# head\n"}}, pieces...)
	pieces = append(pieces, renderplan.Piece{Kind: renderplan.SectionCore, Text: "# tail\n"}, renderplan.Piece{Kind: renderplan.SectionCore})
	out, err := renderplan.NewOutput(pieces, profiles, backends, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []renderplan.SectionKind
	for _, s := range out.Plan.Sections {
		kinds = append(kinds, s.Kind)
	}
	want := []renderplan.SectionKind{renderplan.SectionCore, renderplan.SectionProfile, renderplan.SectionBackend, renderplan.SectionCore}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("section kinds (-want +got):\n%s", diff)
	}
	cfg := configBody(t, out)
	if !strings.HasPrefix(cfg, "# head\nglobal\n") || !strings.HasSuffix(cfg, "# tail\n") {
		t.Errorf("haproxy.cfg does not hold the merged core text:\n%s", cfg)
	}
}

func TestNewOutputDoesNotModifyItsArguments(t *testing.T) {
	pieces, profiles, backends, maps := bigInputs(20)
	for i := range backends {
		backends[i].Servers[0], backends[i].Servers[1] = backends[i].Servers[1], backends[i].Servers[0]
	}
	maps[0].Entries[0], maps[0].Entries[1] = maps[0].Entries[1], maps[0].Entries[0]
	wantPieces, wantBackends := clonePieces(pieces), cloneBackends(backends)
	wantEntries := append([]renderplan.MapEntry(nil), maps[0].Entries...)
	if _, err := renderplan.NewOutput(pieces, profiles, backends, maps, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantPieces, pieces); diff != "" {
		t.Errorf("pieces changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantBackends, backends); diff != "" {
		t.Errorf("backends changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantEntries, maps[0].Entries); diff != "" {
		t.Errorf("map entries changed (-want +got):\n%s", diff)
	}
	if profiles[0].Digest != "" {
		t.Error("profile digest written into the caller's slice")
	}
}

func TestNewOutputFileRules(t *testing.T) {
	yes, no := true, false
	pieces, profiles, backends, maps := bigInputs(1)
	mapBody := renderplan.MapText(maps[0])
	tests := []struct {
		name  string
		files []renderplan.FileContent
		want  map[string]bool // path → ReloadOnChange
		err   string
	}{
		{"defaults per kind", []renderplan.FileContent{
			{Path: "certs/a.pem", Kind: renderplan.FileCert, Body: []byte("a")},
			{Path: "certs/list", Kind: renderplan.FileCrtList, Body: []byte("certs/a.pem\n")},
			{Path: "general/e.http", Kind: renderplan.FileGeneral, Body: []byte("x")},
		}, map[string]bool{"certs/a.pem": false, "certs/list": false, "general/e.http": true, "haproxy.cfg": true, "maps/hosts.map": false}, ""},
		{"overrides", []renderplan.FileContent{
			{Path: "certs/a.pem", Kind: renderplan.FileCert, Body: []byte("a"), ReloadOnChange: &yes},
			{Path: "general/e.http", Kind: renderplan.FileGeneral, Body: []byte("x"), ReloadOnChange: &no},
		}, map[string]bool{"certs/a.pem": true, "general/e.http": false, "haproxy.cfg": true, "maps/hosts.map": false}, ""},
		{"identical map file accepted", []renderplan.FileContent{
			{Path: "maps/hosts.map", Kind: renderplan.FileMap, Body: mapBody},
		}, map[string]bool{"haproxy.cfg": true, "maps/hosts.map": false}, ""},
		{"different map file refused", []renderplan.FileContent{
			{Path: "maps/hosts.map", Kind: renderplan.FileMap, Body: []byte("x y\n")},
		}, nil, "file maps/hosts.map: map files are generated from the maps"},
		{"config refused", []renderplan.FileContent{
			{Path: "haproxy.cfg", Kind: renderplan.FileGeneral, Body: []byte("x")},
		}, nil, "file haproxy.cfg: haproxy.cfg is generated from the pieces"},
		{"same path twice", []renderplan.FileContent{
			{Path: "certs/a.pem", Kind: renderplan.FileCert},
			{Path: "certs/a.pem", Kind: renderplan.FileCert},
		}, nil, "file certs/a.pem: appears twice"},
		{"bad path", []renderplan.FileContent{
			{Path: "../a.pem", Kind: renderplan.FileCert},
		}, nil, `file "../a.pem": path has a ".." element`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := renderplan.NewOutput(pieces, profiles, backends, maps, tt.files)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("NewOutput error = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, f := range out.Plan.Files {
				got[f.Path] = f.ReloadOnChange
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reloadOnChange per file (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewOutputRejectsInconsistentPieces(t *testing.T) {
	tests := []struct {
		name   string
		change func(pieces []renderplan.Piece, profiles []renderplan.Profile, backends []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend)
		want   string
	}{
		{"backend without piece", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			return pc[:2], pr, be
		}, "backend be_ns0000_svc0000_http: no piece places it in haproxy.cfg"},
		{"piece without backend", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			return append(pc, renderplan.Piece{Kind: renderplan.SectionBackend, Name: "be_ghost"}), pr, be
		}, "backend be_ghost: piece without a backend"},
		{"backend placed twice", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			return append(pc, pc[2]), pr, be
		}, "backend be_ns0000_svc0000_http: more than one piece"},
		{"backend declared twice", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			return pc, pr, append(be, be[0])
		}, "backend be_ns0000_svc0000_http: declared twice"},
		{"backend declared twice reaches Validate", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			return pc, pr, append(be, be[0])
		}, "backend be_ns0000_svc0000_http: appears twice"},
		{"backend piece text differs", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			pc[2].Text = "backend x\n"
			return pc, pr, be
		}, "piece text is not BackendText of the backend"},
		{"profile without piece", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			return pc, append(pr, renderplan.Profile{Name: "lonely", Mode: "http"}), be
		}, "profile lonely: no piece places it in haproxy.cfg"},
		{"profile piece without profile", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			return append(pc, renderplan.Piece{Kind: renderplan.SectionProfile, Name: "ghost", Text: "defaults ghost\n"}), pr, be
		}, "profile ghost: piece without a profile"},
		{"empty profile piece", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			pc[1].Text = ""
			return pc, pr, be
		}, "empty piece"},
		{"unknown kind", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			return append(pc, renderplan.Piece{Kind: "frontend", Text: "x\n"}), pr, be
		}, `unknown section kind "frontend"`},
		{"core text without final newline before a section", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			pc[0].Text = "global"
			return pc, pr, be
		}, "text before it does not end with a newline"},
		{"backend profile missing", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			be[0].Profile = "nope"
			return pc, pr, be
		}, `profile "nope" not in plan`},
		{"invalid server reaches Validate", func(pc []renderplan.Piece, pr []renderplan.Profile, be []renderplan.Backend) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend) {
			be[0].Servers[0].Address = "not-an-ip"
			return pc, pr, be
		}, `address "not-an-ip" is not an IP address`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pieces, profiles, backends, _ := bigInputs(1)
			pieces, profiles, backends = tt.change(pieces, profiles, backends)
			out, err := renderplan.NewOutput(pieces, profiles, backends, nil, nil)
			if err == nil {
				t.Fatalf("NewOutput() = %v, nil; want an error containing %q", out, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewOutput() error = %v\nwant one containing %q", err, tt.want)
			}
		})
	}
}

// NewOutput skips sorting map entries whose keys already increase; in every
// order it must give what a full sort by key gives, and ordered maps keep
// their order.
func TestNewOutputSortsMapEntriesLikeAFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pieces, profiles, backends, _ := bigInputs(1)
	for _, n := range []int{0, 1, 2, 3, 20, 500} {
		sorted := make([]renderplan.MapEntry, n)
		for i := range sorted {
			sorted[i] = renderplan.MapEntry{Key: fmt.Sprintf("h%04d.example.com", i), Value: fmt.Sprintf("be_%d", r.IntN(5))}
		}
		orders := map[string][]renderplan.MapEntry{
			"sorted":   slices.Clone(sorted),
			"reversed": slices.Clone(sorted),
			"shuffled": slices.Clone(sorted),
			"one swap": slices.Clone(sorted),
		}
		slices.Reverse(orders["reversed"])
		r.Shuffle(n, func(i, j int) {
			orders["shuffled"][i], orders["shuffled"][j] = orders["shuffled"][j], orders["shuffled"][i]
		})
		if n > 1 {
			e := orders["one swap"]
			e[n/2], e[n-1] = e[n-1], e[n/2]
		}
		for name, entries := range orders {
			maps := []renderplan.Map{
				{Path: "maps/a.map", Entries: entries},
				{Path: "maps/b.map", Ordered: true, Entries: entries},
			}
			out, err := renderplan.NewOutput(pieces, profiles, backends, maps, nil)
			if err != nil {
				t.Fatalf("n=%d %s: %v", n, name, err)
			}
			for _, want := range []renderplan.Map{{Path: "maps/a.map", Entries: sorted}, {Path: "maps/b.map", Ordered: true, Entries: entries}} {
				got, _ := out.Plan.Map(want.Path)
				if !slices.Equal(got.Entries, want.Entries) {
					t.Errorf("n=%d %s: %s entries are not in the expected order", n, name, want.Path)
				}
				if body := fileBody(t, out, want.Path); body != string(renderplan.MapText(want)) {
					t.Errorf("n=%d %s: %s body differs from MapText of the expected entries", n, name, want.Path)
				}
			}
		}
	}
}
