package renderplan_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/haptic-io/haptic/renderplan"
)

// TestCacheBuildsWhatNewOutputBuildsOverRandomChanges runs long random
// sequences of builds through one Cache and through NewOutput and
// requires the same outputs (files, plan, ID, encoding) or the same error
// at every step, and that earlier outputs stay as they were built.
func TestCacheBuildsWhatNewOutputBuildsOverRandomChanges(t *testing.T) {
	seeds, steps := 40, 150
	if testing.Short() {
		seeds = 8
	}
	compacted := 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		compacted += checkCacheSequence(t, fmt.Sprintf("seed %d", seed), func(n int) int { return r.IntN(n) }, steps)
	}
	if compacted == 0 {
		t.Error("no build was followed by a compaction: the sequences do not test Compact")
	}
}

// TestCacheReusesUnchangedBackendsAndMaps checks that reuse happens:
// a second build from the same inputs shares the servers, map entries and
// map bodies of the first, and a changed backend does not.
func TestCacheReusesUnchangedBackendsAndMaps(t *testing.T) {
	// 1,000 entries per map: each map's part of the encoding is larger
	// than the chunks the ID hashes.
	pieces, profiles, backends, maps := threeMapInputs(1000, true)
	var c renderplan.Cache
	first, err := c.NewOutput(pieces, profiles, backends, maps, nil)
	if err != nil {
		t.Fatal(err)
	}
	backends = slices.Clone(backends)
	backends[3].Servers = slices.Clone(backends[3].Servers) // same content, new slice
	second, err := c.NewOutput(pieces, profiles, backends, maps, nil)
	if err != nil {
		t.Fatal(err)
	}
	third, err := c.NewOutput(pieces, profiles, backends, maps, nil) // with the parts of the encoding
	if err != nil {
		t.Fatal(err)
	}
	if id := second.Plan.ID(); first.ID() != id || second.ID() != id || third.ID() != id {
		t.Fatal("same inputs, different IDs")
	}
	for i := range backends {
		be1, _ := first.Plan.Backend(backends[i].Name)
		be2, _ := second.Plan.Backend(backends[i].Name)
		if shared := &be1.Servers[0] == &be2.Servers[0]; shared != (i != 3) {
			t.Errorf("backend %d: servers shared with the previous output = %v, want %v", i, shared, i != 3)
		}
	}
	for i := range second.Plan.Maps {
		if &first.Plan.Maps[i].Entries[0] != &second.Plan.Maps[i].Entries[0] {
			t.Errorf("map %s: entries not shared with the previous output", second.Plan.Maps[i].Path)
		}
	}
	for i, f := range second.Files {
		if f.Kind == renderplan.FileMap && &f.Body[0] != &first.Files[i].Body[0] {
			t.Errorf("map file %s: body not shared with the previous output", f.Path)
		}
	}
}

// checkCacheSequence runs steps random changes chosen by choose (which
// returns a number in [0, n)) through a cache and NewOutput.
func checkCacheSequence(t *testing.T, name string, choose func(n int) int, steps int) (compacted int) {
	t.Helper()
	w := newCacheWorld(choose)
	var c renderplan.Cache
	var prev *renderplan.Output
	var prevEnc []byte
	var prevFiles [][]byte
	built := 0
	for step := range steps {
		for range 1 + choose(3) {
			w.change()
		}
		pieces, profiles, backends, maps, files := w.inputs()
		want, wantErr := renderplan.NewOutput(pieces, profiles, backends, maps, files)
		got, gotErr := c.NewOutput(pieces, profiles, backends, maps, files)
		if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
			t.Fatalf("%s, step %d: errors differ\nNewOutput: %v\ncache:   %v", name, step, wantErr, gotErr)
		}
		if prev != nil {
			// Building must not have changed what earlier builds returned.
			enc, err := prev.Plan.Encode()
			if err != nil || !bytes.Equal(enc, prevEnc) {
				t.Fatalf("%s, step %d: the previous output's plan changed", name, step)
			}
			for i, f := range prev.Files {
				if !bytes.Equal(f.Body, prevFiles[i]) {
					t.Fatalf("%s, step %d: the previous output's file %s changed", name, step, f.Path)
				}
			}
		}
		if wantErr != nil {
			continue
		}
		built++
		if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(renderplan.Output{})); diff != "" {
			t.Fatalf("%s, step %d: outputs differ (-NewOutput +cache):\n%s", name, step, diff)
		}
		wantEnc, err := want.Plan.Encode()
		if err != nil {
			t.Fatal(err)
		}
		gotEnc, err := got.Plan.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(wantEnc, gotEnc) || want.ID() != got.ID() {
			t.Fatalf("%s, step %d: encodings or IDs differ", name, step)
		}
		prev, prevEnc = got, gotEnc
		prevFiles = prevFiles[:0]
		for _, f := range got.Files {
			prevFiles = append(prevFiles, bytes.Clone(f.Body))
		}
		if c.Compact() { // a controller's call after each build
			compacted++
		}
	}
	if steps >= 100 && built < steps/10 {
		t.Errorf("%s: only %d of %d steps built an output: the sequence tests errors only", name, built, steps)
	}
	return compacted
}

// cacheWorld is a caller's state between builds: it changes backends and
// maps the way a caller keeping its promise does (a changed slice is a
// new slice), and sometimes makes them invalid.
type cacheWorld struct {
	choose   func(n int) int
	profiles []renderplan.Profile
	backends []renderplan.Backend
	maps     []renderplan.Map
	files    []renderplan.FileContent
	// pieceOrder permutes the backend pieces; extraPiece, dropPiece and
	// pieceText make pieces wrong.
	shufflePieces bool
	dropPiece     int // index+1 of a backend piece left out, 0 for none
	extraPiece    string
	pieceText     int // index+1 of a backend piece given its text (or a wrong one)
	wrongText     bool
	next          int // for fresh names
}

var cacheProfileLines = map[string][]string{
	"web": {"mode http", "balance roundrobin"},
	"raw": {"mode tcp"},
	"alt": {"mode http", "timeout server 5s"},
}

func newCacheWorld(choose func(n int) int) *cacheWorld {
	w := &cacheWorld{choose: choose}
	w.profiles = []renderplan.Profile{{Name: "web", Mode: "http"}, {Name: "raw", Mode: "tcp"}}
	for range 6 {
		w.addBackend()
	}
	for _, path := range []string{"maps/hosts.map", "maps/paths.map", "maps/redir.map"} {
		m := renderplan.Map{Path: path, Ordered: path == "maps/redir.map"}
		for range 4 {
			m.Entries = append(m.Entries, w.entry())
		}
		if !m.Ordered {
			slices.SortFunc(m.Entries, func(a, b renderplan.MapEntry) int { return strings.Compare(a.Key, b.Key) })
			m.Entries = slices.CompactFunc(m.Entries, func(a, b renderplan.MapEntry) bool { return a.Key == b.Key })
		}
		w.maps = append(w.maps, m)
	}
	w.files = []renderplan.FileContent{{Path: "general/503.http", Kind: renderplan.FileGeneral, Body: []byte("HTTP/1.1 503\r\n\r\n")}}
	return w
}

func (w *cacheWorld) pick(options ...string) string { return options[w.choose(len(options))] }

func (w *cacheWorld) fresh(prefix string) string {
	w.next++
	return fmt.Sprintf("%s%d", prefix, w.next)
}

func (w *cacheWorld) server() renderplan.Server {
	s := renderplan.Server{
		Name:    w.pick("a", "b", "c", "d", w.fresh("s")),
		Address: fmt.Sprintf("10.0.%d.%d", w.choose(3), 1+w.choose(200)),
		Port:    8080, Weight: renderplan.DefaultWeight, Check: w.choose(2) == 0,
	}
	switch w.choose(12) {
	case 0:
		s.Keywords = []string{"guid", w.fresh("sg")}
	case 1:
		s.Keywords = []string{"inter", "2s"}
	case 2:
		s.Address = w.pick("10.0.0.01", "host.example", "::ffff:10.0.0.1")
	case 3:
		s.Port = w.pick2(0, 70000)
	case 4:
		s.Keywords = []string{w.pick("check", "bad word", "guid", "")}
	case 5:
		s.Keywords = []string{"guid", "g-shared"} // a guid used twice, maybe
	case 6:
		s.Address = "2001:db8::" + fmt.Sprint(1+w.choose(9))
	}
	return s
}

func (w *cacheWorld) pick2(a, b int) int {
	if w.choose(2) == 0 {
		return a
	}
	return b
}

func (w *cacheWorld) servers() []renderplan.Server {
	n := w.choose(4)
	if n == 0 && w.choose(2) == 0 {
		return nil
	}
	s := make([]renderplan.Server, n)
	for i := range s {
		s[i] = w.server()
	}
	return s
}

func (w *cacheWorld) addBackend() {
	name := w.pick("be_a", "be_b", "be_c", "be_d", "be_e", "be_f", "be_g", "be_h", w.fresh("be_"))
	be := renderplan.Backend{Name: name, GUID: "g-" + name, Profile: w.pick("web", "web", "raw", "alt"), Servers: w.servers()}
	switch w.choose(10) {
	case 0:
		be.Body = []string{"http-request deny"}
	case 1:
		be.Shape, be.ShapeReason = renderplan.ShapeStructural, "forced"
	case 2:
		be.Mode = w.pick("http", "tcp", "bogus")
	case 3:
		be.GUID = w.pick("g-be_a", "", "bad guid")
	case 4:
		be.Name = w.pick("bad name", "web") // illegal, or a profile's
	}
	w.backends = append(slices.Clip(w.backends), be)
}

func (w *cacheWorld) entry() renderplan.MapEntry {
	e := renderplan.MapEntry{Key: w.pick("a.example", "b.example", "c.example", w.fresh("h")+".example"), Value: w.pick("be_a", "be_b", "be x y")}
	switch w.choose(25) {
	case 0:
		e.Key = w.pick("", "#x", "a b")
	case 1:
		e.Value = w.pick("", " v", "a\x01")
	}
	return e
}

// change makes one random change.
func (w *cacheWorld) change() {
	bs := w.backends
	switch w.choose(16) {
	case 0:
		w.addBackend()
	case 1:
		if len(bs) > 0 {
			i := w.choose(len(bs))
			w.backends = slices.Delete(slices.Clone(bs), i, i+1)
		}
	case 2, 3: // servers changed: always a new slice
		if len(bs) > 0 {
			i := w.choose(len(bs))
			w.backends = slices.Clone(bs)
			be := &w.backends[i]
			s := slices.Clone(be.Servers)
			switch w.choose(5) {
			case 0:
				s = append(s, w.server())
			case 1:
				if len(s) > 0 {
					s = s[:len(s)-1] // same array, shorter
					be.Servers = be.Servers[:len(s)]
					return
				}
			case 2:
				if len(s) > 0 {
					s[w.choose(len(s))].Weight = w.choose(300)
				}
			case 3:
				// Same content, new slice.
			case 4:
				s = w.servers()
			}
			be.Servers = s
		}
	case 4: // a field changed by value
		if len(bs) > 0 {
			w.backends = slices.Clone(bs)
			be := &w.backends[w.choose(len(bs))]
			switch w.choose(9) {
			case 0:
				be.GUID = w.pick("g-"+be.Name, w.fresh("g"), "g-be_a")
			case 1:
				be.Profile = w.pick("web", "raw", "alt", "none")
			case 2:
				be.Mode = w.pick("", "", "http", "tcp")
			case 3:
				be.Shape, be.ShapeReason = renderplan.Shape(w.pick("", "dynamic", "structural", "odd")), w.pick("", "forced", "bad\nreason")
			case 4:
				be.Body = w.pick3([]string{"http-request deny"}, nil, []string{"bad\nline"})
			case 5:
				be.Name = strings.Clone(be.Name) // same value, other memory
			case 6:
				be.Name = w.fresh("be_")
			case 7:
				be.Shape = renderplan.Shape(w.pick("", "dynamic", "structural"))
			case 8:
				be.ShapeReason = w.pick("", "forced", "other")
			}
		}
	case 5: // a duplicate name
		if len(bs) > 0 && w.choose(3) == 0 {
			be := bs[w.choose(len(bs))]
			if w.choose(2) == 0 {
				be.Servers = w.servers()
			}
			w.backends = append(slices.Clip(bs), be)
		}
	case 6: // backends reordered
		w.backends = slices.Clone(bs)
		if w.choose(2) == 0 {
			slices.SortFunc(w.backends, func(a, b renderplan.Backend) int { return strings.Compare(a.Name, b.Name) })
		} else {
			for i := len(w.backends) - 1; i > 0; i-- {
				j := w.choose(i + 1)
				w.backends[i], w.backends[j] = w.backends[j], w.backends[i]
			}
		}
	case 7, 8, 9: // a map changed: always a new slice
		if len(w.maps) == 0 {
			return
		}
		w.maps = slices.Clone(w.maps)
		m := &w.maps[w.choose(len(w.maps))]
		e := slices.Clone(m.Entries)
		switch w.choose(8) {
		case 0, 1:
			e = append(e, w.entry()) // maybe unsorted or a duplicate key
		case 2:
			if len(e) > 0 {
				e = slices.Delete(e, 0, 1)
			}
		case 3:
			if !m.Ordered {
				slices.SortFunc(e, func(a, b renderplan.MapEntry) int { return strings.Compare(a.Key, b.Key) })
				e = slices.CompactFunc(e, func(a, b renderplan.MapEntry) bool { return a.Key == b.Key })
			}
		case 4:
			m.Ordered = !m.Ordered // same slice, other flag
			return
		case 5:
			if len(m.Entries) > 1 {
				m.Entries = m.Entries[1:] // same array, other start
				return
			}
		case 6: // inserted in key order, as a route add does
			ent := w.entry()
			at, _ := slices.BinarySearchFunc(e, ent.Key, func(x renderplan.MapEntry, key string) int { return strings.Compare(x.Key, key) })
			e = slices.Insert(e, at, ent)
		case 7: // a value changed in the middle
			if len(e) > 0 {
				e[len(e)/2].Value = w.entry().Value
			}
		}
		m.Entries = e
	case 10: // a map added, removed or duplicated
		switch w.choose(3) {
		case 0:
			w.maps = append(slices.Clip(w.maps), renderplan.Map{Path: w.pick("maps/x.map", "maps/hosts.map", "bad path/../x"), Entries: []renderplan.MapEntry{w.entry()}})
		case 1:
			if len(w.maps) > 1 {
				w.maps = slices.Delete(slices.Clone(w.maps), len(w.maps)-1, len(w.maps))
			}
		case 2:
			w.maps = slices.Clone(w.maps)
			for i, j := 0, len(w.maps)-1; i < j; i, j = i+1, j-1 {
				w.maps[i], w.maps[j] = w.maps[j], w.maps[i]
			}
		}
	case 11: // profiles
		w.profiles = slices.Clone(w.profiles)
		switch w.choose(4) {
		case 0:
			i := w.choose(len(w.profiles))
			w.profiles[i].Mode = w.pick("http", "tcp")
		case 1:
			if !slices.ContainsFunc(w.profiles, func(p renderplan.Profile) bool { return p.Name == "alt" }) {
				w.profiles = append(w.profiles, renderplan.Profile{Name: "alt", Mode: "http"})
			}
		case 2:
			if len(w.profiles) > 1 {
				w.profiles = w.profiles[:len(w.profiles)-1]
			}
		case 3:
			w.profiles = []renderplan.Profile{{Name: "web", Mode: "http"}, {Name: "raw", Mode: "tcp"}}
		}
	case 12: // pieces
		w.shufflePieces = w.choose(3) == 0
		w.dropPiece, w.pieceText, w.extraPiece = 0, 0, ""
		switch w.choose(5) {
		case 0:
			w.dropPiece = 1 + w.choose(len(bs)+1)
		case 1:
			w.pieceText, w.wrongText = 1+w.choose(len(bs)+1), w.choose(2) == 0
		case 2:
			w.extraPiece = w.pick("be_a", "be_zz")
		}
	case 13: // a file passed: a general one, a map (only if equal) or a config
		w.files = slices.Clone(w.files)
		switch w.choose(4) {
		case 0:
			w.files = append(w.files, renderplan.FileContent{Path: w.fresh("general/f"), Kind: renderplan.FileGeneral, Body: []byte("x")})
		case 1:
			if len(w.maps) > 0 {
				m := w.maps[0]
				if !m.Ordered {
					m.Entries = slices.SortedFunc(slices.Values(m.Entries), func(a, b renderplan.MapEntry) int {
						return strings.Compare(a.Key+" "+a.Value, b.Key+" "+b.Value)
					})
				}
				w.files = append(w.files, renderplan.FileContent{Path: m.Path, Kind: renderplan.FileMap, Body: renderplan.MapText(m)})
			}
		case 2:
			w.files = append(w.files, renderplan.FileContent{Path: renderplan.ConfigPath, Kind: renderplan.FileConfig})
		case 3:
			w.files = w.files[:1]
		}
	case 14: // back to valid: the world must not drift into errors only
		w.backends = slices.DeleteFunc(slices.Clone(bs), func(be renderplan.Backend) bool {
			return !validAlone(be)
		})
		slices.SortFunc(w.backends, func(a, b renderplan.Backend) int { return strings.Compare(a.Name, b.Name) })
		w.backends = slices.CompactFunc(w.backends, func(a, b renderplan.Backend) bool { return a.Name == b.Name })
		w.profiles = []renderplan.Profile{{Name: "web", Mode: "http"}, {Name: "raw", Mode: "tcp"}, {Name: "alt", Mode: "http"}}
		w.dropPiece, w.pieceText, w.extraPiece = 0, 0, ""
		w.files = w.files[:1]
		w.maps = slices.Clone(w.maps)
		for i := range w.maps {
			m := &w.maps[i]
			m.Entries = slices.DeleteFunc(slices.Clone(m.Entries), func(e renderplan.MapEntry) bool {
				return !validEntry(e)
			})
			if !m.Ordered {
				slices.SortFunc(m.Entries, func(a, b renderplan.MapEntry) int { return strings.Compare(a.Key, b.Key) })
				m.Entries = slices.CompactFunc(m.Entries, func(a, b renderplan.MapEntry) bool { return a.Key == b.Key })
			}
		}
		w.maps = slices.DeleteFunc(w.maps, func(m renderplan.Map) bool { return strings.Contains(m.Path, " ") })
		slices.SortFunc(w.maps, func(a, b renderplan.Map) int { return strings.Compare(a.Path, b.Path) })
		w.maps = slices.CompactFunc(w.maps, func(a, b renderplan.Map) bool { return a.Path == b.Path })
	case 15: // nothing changed
	}
}

func (w *cacheWorld) pick3(a, b, c []string) []string {
	switch w.choose(3) {
	case 0:
		return a
	case 1:
		return b
	}
	return c
}

// inputs returns NewOutput's arguments for the world's state.
func (w *cacheWorld) inputs() ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend, []renderplan.Map, []renderplan.FileContent) {
	pieces := []renderplan.Piece{{Kind: renderplan.SectionCore, Text: "global\n    maxconn 100\n\n"}}
	for _, pr := range w.profiles {
		lines := cacheProfileLines[pr.Name]
		pieces = append(pieces, renderplan.Piece{Kind: renderplan.SectionProfile, Name: pr.Name, Text: renderplan.ProfileText(pr.Name, lines)})
	}
	var bePieces []renderplan.Piece
	for i, be := range w.backends {
		if i+1 == w.dropPiece {
			continue
		}
		pc := renderplan.Piece{Kind: renderplan.SectionBackend, Name: be.Name}
		if i+1 == w.pieceText {
			pc.Text = renderplan.BackendText(be)
			if w.wrongText {
				pc.Text += "# x\n"
			}
		}
		bePieces = append(bePieces, pc)
	}
	if w.extraPiece != "" {
		bePieces = append(bePieces, renderplan.Piece{Kind: renderplan.SectionBackend, Name: w.extraPiece})
	}
	if w.shufflePieces {
		for i := len(bePieces) - 1; i > 0; i-- {
			j := w.choose(i + 1)
			bePieces[i], bePieces[j] = bePieces[j], bePieces[i]
		}
	}
	pieces = append(pieces, bePieces...)
	pieces = append(pieces, renderplan.Piece{Kind: renderplan.SectionCore, Text: "frontend fe\n    bind :80\n"})
	return pieces, w.profiles, w.backends, w.maps, w.files
}

// validAlone reports whether NewOutput accepts be with the world's profiles.
func validAlone(be renderplan.Backend) bool {
	var pieces []renderplan.Piece
	var profiles []renderplan.Profile
	for _, name := range []string{"alt", "raw", "web"} {
		pieces = append(pieces, renderplan.Piece{Kind: renderplan.SectionProfile, Name: name, Text: renderplan.ProfileText(name, cacheProfileLines[name])})
		profiles = append(profiles, renderplan.Profile{Name: name, Mode: strings.TrimPrefix(cacheProfileLines[name][0], "mode ")})
	}
	pieces = append(pieces, renderplan.Piece{Kind: renderplan.SectionBackend, Name: be.Name})
	_, err := renderplan.NewOutput(pieces, profiles, []renderplan.Backend{be}, nil, nil)
	return err == nil
}

// validEntry reports whether NewOutput accepts a map holding e.
func validEntry(e renderplan.MapEntry) bool {
	m := renderplan.Map{Path: "maps/m.map", Entries: []renderplan.MapEntry{e}}
	_, err := renderplan.NewOutput([]renderplan.Piece{{Kind: renderplan.SectionCore, Text: "x\n"}}, nil, nil, []renderplan.Map{m}, nil)
	return err == nil
}

// TestCacheAllocatesPerChangeNotPerBackend checks that rebuilding
// unchanged inputs allocates the same number of times for 100 backends
// and for 1,000: nothing is allocated per unchanged backend or map, the
// plan ID included.
func TestCacheAllocatesPerChangeNotPerBackend(t *testing.T) {
	allocs := func(n int) float64 {
		pieces, profiles, backends, maps := threeMapInputs(n, true)
		var c renderplan.Cache
		// The first build makes the entries, the second their parts
		// of the plan's encoding; later ones only reuse.
		for range 2 {
			if _, err := c.NewOutput(pieces, profiles, backends, maps, nil); err != nil {
				t.Fatal(err)
			}
		}
		return testing.AllocsPerRun(5, func() {
			if _, err := c.NewOutput(pieces, profiles, backends, maps, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(100), allocs(1000)
	if large > small+2 {
		t.Errorf("rebuilding unchanged inputs allocates %v times for 100 backends, %v for 1,000", small, large)
	}
}

// FuzzCache: for any sequence of changes the input bytes choose, a
// Cache builds what NewOutput builds at every step (see
// TestCacheBuildsWhatNewOutputBuildsOverRandomChanges).
func FuzzCache(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		choose := func(n int) int {
			if len(b) == 0 {
				return 0
			}
			c := int(b[0])
			b = b[1:]
			return c % n
		}
		checkCacheSequence(t, "fuzz", choose, 1+len(b)/8)
	})
}

// TestCacheIDsComputedInTheBackgroundSurviveLaterBuilds builds
// changed inputs one after the other without asking for the IDs, then
// checks every output's ID and files against NewOutput's: each output's ID
// is computed from the cache as it was at its own build. The changed map
// is big enough to be generated beside the backends.
func TestCacheIDsComputedInTheBackgroundSurviveLaterBuilds(t *testing.T) {
	pieces, profiles, backends, maps := threeMapInputs(1200, true)
	var c renderplan.Cache
	var outs []*renderplan.Output
	var want []string
	for step := range 6 {
		backends = slices.Clone(backends)
		be := &backends[step*7]
		be.Servers = slices.Clone(be.Servers)
		be.Servers[0].Port = 9000 + step
		maps = slices.Clone(maps)
		maps[step%3].Entries = slices.Clone(maps[step%3].Entries)
		maps[step%3].Entries[step].Value = backends[step+1].Name
		out, err := c.NewOutput(pieces, profiles, backends, maps, nil)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := renderplan.NewOutput(pieces, profiles, backends, maps, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Files) != len(ref.Files) {
			t.Fatalf("build %d: %d files, NewOutput %d", step, len(out.Files), len(ref.Files))
		}
		for i, f := range ref.Files {
			if g := out.Files[i]; g.Path != f.Path || !bytes.Equal(g.Body, f.Body) {
				t.Fatalf("build %d: file %s differs from NewOutput's", step, f.Path)
			}
		}
		outs, want = append(outs, out), append(want, ref.Plan.ID())
	}
	for i, out := range outs {
		if got := out.ID(); got != want[i] || got != out.Plan.ID() {
			t.Errorf("build %d: ID %s, want %s", i, got, want[i])
		}
	}
	if want[0] == want[1] {
		t.Fatal("the steps did not change the plan")
	}
}
