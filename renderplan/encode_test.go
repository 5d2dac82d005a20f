package renderplan_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/haptic-io/haptic/renderplan"
)

func TestEncodeDecodeRoundTripsToAnEqualPlan(t *testing.T) {
	p := fullOutput(t).Plan
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	q, err := renderplan.Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if diff := cmp.Diff(p, q); diff != "" {
		t.Errorf("Decode(Encode(p)) differs (-want +got):\n%s", diff)
	}
	if !p.Equal(q) {
		t.Error("Decode(Encode(p)).Equal(p) = false")
	}
	if p.ID() != q.ID() {
		t.Errorf("ID after round trip = %s, want %s", q.ID(), p.ID())
	}
	if err := q.Validate(); err != nil {
		t.Errorf("decoded plan does not validate: %v", err)
	}
}

// The hand-written encoder must write what encoding/json writes, escaping
// included, so any JSON tool reads plans the same way.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	p := fullOutput(t).Plan.Clone()
	// Strings that exercise every escape: HTML characters, controls,
	// invalid UTF-8, U+2028, non-ASCII.
	p.Backends[1].Body = append(p.Backends[1].Body, "<&>\"\\\b\f\n\r\t\x01\x7f\xff é \u2028\u2029 ☃")
	p.Backends[1].ShapeReason = "has \"body\" lines"
	p.Maps[0].Entries[0].Value = "x\x00y\x1f"
	p.Sections[0].Name = "core"
	for _, plan := range []*renderplan.Plan{p, {Schema: renderplan.Schema}, {}} {
		got, err := plan.Encode()
		if err != nil {
			t.Fatal(err)
		}
		norm := *plan
		if norm.Sections == nil {
			norm.Sections = []renderplan.Section{}
		}
		if norm.Files == nil {
			norm.Files = []renderplan.File{}
		}
		want, err := json.Marshal(&norm)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Encode() =\n%s\njson.Marshal =\n%s", got, want)
		}
	}
}

func TestEncodeWritesNilAndEmptySlicesAlike(t *testing.T) {
	p := fullOutput(t).Plan.Clone()
	q := p.Clone()
	q.Backends[1].Servers = []renderplan.Server{}
	q.Backends[0].Body = []string{}
	q.Backends[0].Servers[1].Keywords = []string{}
	if p.Backends[1].Servers != nil || p.Backends[0].Body != nil || p.Backends[0].Servers[1].Keywords != nil {
		t.Fatal("test premise: the full plan has nil slices in these places")
	}
	a, _ := p.Encode()
	b, _ := q.Encode()
	if !bytes.Equal(a, b) {
		t.Errorf("empty slices encode differently from nil ones:\n%s\n%s", a, b)
	}
	if !p.Equal(q) || p.ID() != q.ID() {
		t.Error("plans differing only in nil vs empty slices are not Equal or have different IDs")
	}
	empty := &renderplan.Plan{Schema: renderplan.Schema, Sections: []renderplan.Section{}, Files: []renderplan.File{}}
	zero := &renderplan.Plan{Schema: renderplan.Schema}
	if !empty.Equal(zero) || empty.ID() != zero.ID() {
		t.Error("a plan with empty Sections/Files differs from one with nil ones")
	}
}

func TestIDIsStableForTheSameInputs(t *testing.T) {
	first := fullOutput(t)
	for range 5 {
		again := fullOutput(t)
		if got, want := again.Plan.ID(), first.Plan.ID(); got != want {
			t.Fatalf("ID = %s, want %s for the same inputs", got, want)
		}
		if diff := cmp.Diff(first, again, cmpopts.IgnoreUnexported(renderplan.Output{})); diff != "" {
			t.Fatalf("outputs differ for the same inputs (-want +got):\n%s", diff)
		}
	}
	// The ID does not depend on the order the caller passed things in.
	pieces, profiles, backends, maps := bigInputs(50)
	a, err := renderplan.NewOutput(pieces, profiles, backends, maps, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(backends)-1; i < j; i, j = i+1, j-1 {
		backends[i], backends[j] = backends[j], backends[i]
	}
	for i := range backends {
		s := backends[i].Servers
		s[0], s[1] = s[1], s[0]
	}
	e := maps[0].Entries
	e[0], e[len(e)-1] = e[len(e)-1], e[0]
	b, err := renderplan.NewOutput(pieces, profiles, backends, maps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Plan.ID() != b.Plan.ID() {
		t.Error("ID depends on the order of backends, servers or unordered map entries")
	}
}

// Every leaf field of the plan takes part in the ID: change any one and
// the ID changes. The walk finds fields by reflection, so a field added
// later is covered too.
func TestIDChangesWhenAnyFieldChanges(t *testing.T) {
	base := fullOutput(t).Plan
	baseID := base.ID()
	n := 0
	// filled records, per field of a type (indices dropped), whether the
	// full plan has a non-empty slice there at least once.
	filled := map[string]bool{}
	var walk func(path, typePath string, get func(p *renderplan.Plan) reflect.Value, typ reflect.Type, sample reflect.Value)
	walk = func(path, typePath string, get func(p *renderplan.Plan) reflect.Value, typ reflect.Type, sample reflect.Value) {
		switch typ.Kind() {
		case reflect.Struct:
			for i := range typ.NumField() {
				f := typ.Field(i)
				walk(path+"."+f.Name, typePath+"."+f.Name, func(p *renderplan.Plan) reflect.Value { return get(p).Field(i) }, f.Type, sample.Field(i))
			}
		case reflect.Slice:
			filled[typePath] = filled[typePath] || sample.Len() > 0
			for i := range sample.Len() {
				walk(fmt.Sprintf("%s[%d]", path, i), typePath+"[]", func(p *renderplan.Plan) reflect.Value { return get(p).Index(i) }, typ.Elem(), sample.Index(i))
			}
		case reflect.String, reflect.Int, reflect.Bool:
			p := base.Clone()
			v := get(p)
			switch typ.Kind() {
			case reflect.String:
				v.SetString(v.String() + "x")
			case reflect.Int:
				v.SetInt(v.Int() + 1)
			case reflect.Bool:
				v.SetBool(!v.Bool())
			}
			n++
			if p.ID() == baseID {
				t.Errorf("changing %s leaves the ID unchanged", path)
			}
			if p.Equal(base) {
				t.Errorf("changing %s leaves the plan Equal", path)
			}
			if !base.Equal(fullOutput(t).Plan) {
				t.Fatalf("changing %s of a clone changed the original", path)
			}
		default:
			t.Fatalf("%s: unexpected kind %s", path, typ.Kind())
		}
	}
	walk("Plan", "Plan", func(p *renderplan.Plan) reflect.Value { return reflect.ValueOf(p).Elem() }, reflect.TypeOf(*base), reflect.ValueOf(base).Elem())
	for path, ok := range filled {
		if !ok {
			t.Errorf("%s is empty everywhere in the full plan; give it an element so the walk covers it", path)
		}
	}
	if n < 50 {
		t.Errorf("walked %d fields, want at least 50", n)
	}
}

func TestDecodeIsStrict(t *testing.T) {
	good, err := fullOutput(t).Plan.Encode()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		input  string
		want   string
		schema bool // want a *SchemaError
	}{
		{"unknown top-level field", strings.Replace(string(good), `"schema":`, `"extra":1,"schema":`, 1), `unknown field "extra"`, false},
		{"unknown nested field", strings.Replace(string(good), `"guid":`, `"weight2":1,"guid":`, 1), `unknown field "weight2"`, false},
		{"trailing data", string(good) + `{}`, "trailing data", false},
		{"not JSON", `{"schema":`, "decode plan", false},
		{"wrong type", strings.Replace(string(good), `"port":8080`, `"port":"8080"`, 1), "decode plan", false},
		{"other schema", strings.Replace(string(good), renderplan.Schema, "haptic.renderplan/v2", 1), `unknown plan schema "haptic.renderplan/v2"`, true},
		{"other schema with new fields", `{"schema":"haptic.renderplan/v2","frontends":[]}`, "unknown plan schema", true},
		{"no schema", `{"sections":[],"files":[]}`, `unknown plan schema ""`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := renderplan.Decode([]byte(tt.input))
			if err == nil {
				t.Fatalf("Decode() = %v, nil; want an error containing %q", p, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode() error = %v, want it to contain %q", err, tt.want)
			}
			var se *renderplan.SchemaError
			if got := errors.As(err, &se); got != tt.schema {
				t.Errorf("errors.As(err, *SchemaError) = %v, want %v", got, tt.schema)
			}
		})
	}
}

func TestNilPlanHasNoIDAndDoesNotEncode(t *testing.T) {
	var p *renderplan.Plan
	if p.ID() != "" {
		t.Errorf("ID() of nil plan = %q, want empty", p.ID())
	}
	if _, err := p.Encode(); err == nil {
		t.Error("Encode() of nil plan succeeded")
	}
}

// ID streams the encoding into the hash in chunks; it must equal the
// digest of Encode for plans much larger than a chunk.
func TestIDIsTheDigestOfTheEncoding(t *testing.T) {
	for _, p := range []*renderplan.Plan{fullOutput(t).Plan, bigOutput(t, 2000).Plan, {}} {
		enc, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := p.ID(), string(renderplan.DigestOf(enc)); got != want {
			t.Errorf("ID() = %s, DigestOf(Encode()) = %s (encoding %d bytes)", got, want, len(enc))
		}
	}
}
