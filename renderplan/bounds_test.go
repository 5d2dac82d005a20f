package renderplan_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
)

func TestMaxLineIsThreeQuartersOfTheBufSizeUpToAMapFileLine(t *testing.T) {
	for bufSize, want := range map[int]int{0: 12288, 16384: 12288, 8192: 6144, 4096: 3072, 21844: 16383, 65536: 16383} {
		if got := renderplan.MaxLine(bufSize); got != want {
			t.Errorf("MaxLine(%d) = %d, want %d", bufSize, got, want)
		}
	}
}

func TestMapLineLenCountsTheCommandAndEscapedBytesTwice(t *testing.T) {
	// "add map @4294967295 " + path + " <<\n" + line + "\n\n"
	const overhead = 20 + 4 + 2
	for _, tt := range []struct {
		key, value string
		want       int
	}{
		{"a.example.com", "be_app", overhead + 14 + 13 + 2 + 6},
		{"k", "be app", overhead + 14 + 1 + 2 + 7},
		{"k;x", `v"\'`, overhead + 14 + 4 + 2 + 7},
	} {
		if got := renderplan.MapLineLen("maps/hosts.map", tt.key, tt.value); got != tt.want {
			t.Errorf("MapLineLen(%q, %q) = %d, want %d", tt.key, tt.value, got, tt.want)
		}
	}
	if got, want := renderplan.CrtListLineLen("certs/crt-list.txt", "certs/a.pem a.example.com"), 17+4+2+18+25; got != want {
		t.Errorf("CrtListLineLen = %d, want %d", got, want)
	}
}

func TestCheckMapEntryFollowsTheBufSize(t *testing.T) {
	const path = "maps/m.map"
	// The longest key with value "v" at the default: 26 + 10 + key + 2 + 1.
	longest := strings.Repeat("k", 12288-39)
	for _, tt := range []struct {
		name    string
		key     string
		bufSize int
		ok      bool
	}{
		{"longest key at the default", longest, 0, true},
		{"one byte more", longest + "k", 0, false},
		{"longest key at 16384 declared", longest, 16384, true},
		{"longest key at a smaller bufsize", longest, 8192, false},
		{"longest key at a larger bufsize", longest + "kkkk", 32768, true},
		{"escaped bytes count twice", strings.Repeat(";", 6124), 0, true},
		{"escaped bytes count twice, one more", strings.Repeat(";", 6125), 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := renderplan.CheckMapEntry(path, tt.key, "v", tt.bufSize)
			if (err == nil) != tt.ok {
				t.Fatalf("CheckMapEntry(%d-byte key, bufsize %d) = %v, want ok=%t", len(tt.key), tt.bufSize, err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "tune.bufsize") {
				t.Errorf("error %q does not name tune.bufsize", err)
			}
		})
	}
}

func TestCheckLinesNamesTheFirstLineTooLong(t *testing.T) {
	long := strings.Repeat("a", 13000)
	for _, tt := range []struct {
		name string
		kind renderplan.FileKind
		body string
		want string // "" for no error
	}{
		{"short map lines", renderplan.FileMap, "a b\nc d\n", ""},
		{"second map line too long", renderplan.FileMap, "a b\n" + long + " v\nc d\n", "line 2 makes a line of 13039 bytes"},
		{"last map line without newline", renderplan.FileMap, "a b\n" + long, "line 2 "},
		{"map line that fits", renderplan.FileMap, strings.Repeat("k", 12000) + " v\n", ""},
		{"map line that fits until escaped", renderplan.FileMap, strings.Repeat("k", 6000) + " " + strings.Repeat(";", 6000) + "\n", "line 1 makes a line of"},
		{"crt-list line too long", renderplan.FileCrtList, "certs/a.pem a.example.com\ncerts/b.pem " + long + "\n", "line 2 makes a line of"},
		{"crt-list line that fits", renderplan.FileCrtList, "certs/b.pem " + strings.Repeat("h", 12000) + "\n", ""},
		{"general files have no lines to check", renderplan.FileGeneral, long + long, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := renderplan.CheckLines(tt.kind, "maps/m.map", []byte(tt.body), 0)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckLines = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("CheckLines = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// A large bufsize does not raise the bound above a map-file line.
	if err := renderplan.CheckLines(renderplan.FileMap, "m", []byte(strings.Repeat("k", 16384)+" v"), renderplan.MaxBufSize); err == nil || !strings.Contains(err.Error(), "more than the 16383 allowed") {
		t.Errorf("CheckLines of a 16386-byte map line at the largest bufsize = %v, want the 16383-byte bound", err)
	}
}

// The attack the bounds close: a key that the map file would cut at
// tune.bufsize-1 bytes so that its tail reads as another host's route.
func TestValidateRefusesAMapEntryHAProxyWouldCut(t *testing.T) {
	key := "www.evil.test/" + strings.Repeat("a", 16369) + "victim.example.com/admin"
	b := renderplan.NewBuilder()
	b.Text("global\n")
	must(t, b.Map(renderplan.Map{Path: "maps/paths-prefix-exact.map", Entries: []renderplan.MapEntry{{Key: key, Value: "be_evil_web_80"}}}))
	_, err := b.Build()
	if err == nil {
		t.Fatal("Build accepted a map entry longer than a line HAProxy reads")
	}
	for _, want := range []string{"map maps/paths-prefix-exact.map: entry 1: key \"www.evil.test/aaaa", "(16407 bytes)", "more than the 12288 allowed with tune.bufsize 16384"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestValidateBoundsBufSizeNamesPathsAndKeywords(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(p *renderplan.Plan)
		want   string // "" for valid
	}{
		{"bufsize 0", func(p *renderplan.Plan) { p.BufSize = 0 }, ""},
		{"bufsize at the minimum", func(p *renderplan.Plan) { p.BufSize = renderplan.MinBufSize }, ""},
		{"bufsize below the minimum", func(p *renderplan.Plan) { p.BufSize = renderplan.MinBufSize - 1 }, "plan: bufSize 4095 out of range 4096-67108864"},
		{"bufsize above the maximum", func(p *renderplan.Plan) { p.BufSize = renderplan.MaxBufSize + 1 }, "out of range"},
		{"negative bufsize", func(p *renderplan.Plan) { p.BufSize = -1 }, "out of range"},
		{"server name of 513 bytes", func(p *renderplan.Plan) { p.Backends[0].Servers[0].Name = "a" + strings.Repeat("p", 512) }, "name is longer than 512 bytes"},
		{"file path of 1025 bytes", func(p *renderplan.Plan) { p.Files[1].Path = "certs/" + strings.Repeat("p", 1019) }, "path is longer than 1024 bytes"},
		{"keywords of 1025 bytes", func(p *renderplan.Plan) {
			p.Backends[0].Servers[0].Keywords = []string{strings.Repeat("k", 512), strings.Repeat("k", 512)}
		}, "keywords take 1025 bytes, more than 1024"},
		{"map entry at the limit", func(p *renderplan.Plan) { setSecondHost(p, 12288-48) }, ""},
		{"map entry one byte over", func(p *renderplan.Plan) { setSecondHost(p, 12288-48+1) }, "map maps/hosts.map: entry 2: key \"bkkk"},
		{"map entry over the limit of a declared bufsize", func(p *renderplan.Plan) {
			setSecondHost(p, 4000)
			p.BufSize = 4096
		}, "more than the 3072 allowed with tune.bufsize 4096"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := fullOutput(t).Plan.Clone()
			tt.change(p)
			err := p.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// setSecondHost gives the second entry of the host map (value be_app) a
// key of n bytes that keeps the map sorted, and fixes the map file. The
// entry then counts 48+n bytes: 26 of command, the path's 14, the
// separator's 2 and the value's 6.
func setSecondHost(p *renderplan.Plan, n int) {
	m, _ := p.Map("maps/hosts.map")
	m.Entries[1].Key = "b" + strings.Repeat("k", n-1)
	body := renderplan.MapText(*m)
	f, _ := p.File("maps/hosts.map")
	f.Size, f.Digest = len(body), renderplan.DigestOf(body)
}

func TestNewPlanRefusesACrtListLineTooLong(t *testing.T) {
	b := fullBuilder(t)
	must(t, b.File("certs/crt-list.txt", renderplan.FileCrtList, []byte("certs/site.pem a.example.com\ncerts/site.pem "+strings.Repeat("h", 12300)+"\n"), false))
	_, err := b.Build()
	if err == nil || !strings.Contains(err.Error(), "file certs/crt-list.txt: line 2 makes a line of") {
		t.Fatalf("Build() = %v, want the crt-list's line 2 refused", err)
	}
	b.BufSize(32768)
	if _, err := b.Build(); err != nil {
		t.Fatalf("Build() with tune.bufsize 32768 = %v, want nil", err)
	}
}

func TestPlanCacheChecksTheEntriesAgainWhenTheBufSizeChanges(t *testing.T) {
	pieces, profiles, backends, maps := bigInputs(3)
	maps = append(maps, renderplan.Map{Path: "maps/long.map", Entries: []renderplan.MapEntry{{Key: strings.Repeat("k", 5000), Value: "v"}}})
	var c renderplan.Cache
	for i, step := range []struct {
		bufSize int
		ok      bool
	}{{0, true}, {4096, false}, {4096, false}, {0, true}, {32768, true}} {
		out, err := c.NewOutput(pieces, profiles, backends, maps, nil, renderplan.WithBufSize(step.bufSize))
		want, wantErr := renderplan.NewOutput(pieces, profiles, backends, maps, nil, renderplan.WithBufSize(step.bufSize))
		if (err == nil) != step.ok || (wantErr == nil) != step.ok {
			t.Fatalf("build %d (bufsize %d): cache %v, NewOutput %v, want ok=%t", i, step.bufSize, err, wantErr, step.ok)
		}
		if err == nil && (out.ID() != want.ID() || out.Plan.BufSize != step.bufSize) {
			t.Fatalf("build %d: cache and NewOutput differ", i)
		}
	}
}

func TestEncodeWritesBufSizeOnlyWhenDeclared(t *testing.T) {
	b := fullBuilder(t)
	plain, err := b.Build()
	must(t, err)
	b.BufSize(32768)
	declared, err := b.Build()
	must(t, err)
	enc, err := plain.Plan.Encode()
	must(t, err)
	if strings.Contains(string(enc), "bufSize") {
		t.Errorf("a plan without bufsize encodes it: %.120s", enc)
	}
	enc, err = declared.Plan.Encode()
	must(t, err)
	if !strings.HasPrefix(string(enc), `{"schema":"haptic.renderplan/v1","bufSize":32768,`) {
		t.Errorf("encoding starts %.80s", enc)
	}
	want, err := json.Marshal(declared.Plan)
	must(t, err)
	if string(want) != string(enc) {
		t.Errorf("Encode differs from json.Marshal")
	}
	back, err := renderplan.Decode(enc)
	must(t, err)
	if !back.Equal(declared.Plan) || back.ID() != declared.Plan.ID() || back.Equal(plain.Plan) || plain.Plan.ID() == declared.Plan.ID() {
		t.Errorf("the bufsize does not round-trip or does not change the identity")
	}
}

// FuzzMapLinesReadBackWhole: for an entry that a plan accepts with the
// bufsize it declares, HAProxy's map-file reader (fgets into a buffer of
// 16384 bytes, whatever tune.bufsize) gives back exactly that entry, and
// every command the agent may send for it fits in the three quarters of
// tune.bufsize the socket client sends.
func FuzzMapLinesReadBackWhole(f *testing.F) {
	f.Add("example.com/", "be_app", uint16(0), uint16(0), byte('a'))
	f.Add("www.evil.test/", "be_evil_web_80", uint16(16369), uint16(0), byte('a'))
	f.Add("k", "be x", uint16(8000), uint16(8192), byte(';'))
	f.Add("k", "v", uint16(12230), uint16(0), byte(' '))
	f.Fuzz(func(t *testing.T, key, value string, pad, bufSize uint16, padByte byte) {
		k, v := key+strings.Repeat(string(padByte), int(pad)), value
		if padByte == ' ' || padByte == '\t' {
			v = value + strings.Repeat(string(padByte), int(pad)) + "x"
			k = key
		}
		bs := int(bufSize)
		if bs != 0 {
			bs = renderplan.MinBufSize + bs%(4*renderplan.DefaultBufSize)
		}
		b := renderplan.NewBuilder()
		b.Text("global\n")
		b.BufSize(bs)
		const path = "maps/m.map"
		if b.Map(renderplan.Map{Path: path, Ordered: true, Entries: []renderplan.MapEntry{{Key: k, Value: v}}}) != nil {
			return
		}
		if _, err := b.Build(); err != nil {
			return
		}
		if bs == 0 {
			bs = renderplan.DefaultBufSize
		}
		// fgets(buf, 16384): at most 16383 bytes per read.
		text := string(renderplan.MapText(renderplan.Map{Entries: []renderplan.MapEntry{{Key: k, Value: v}}}))
		line := strings.TrimSuffix(text, "\n")
		if len(line) > 16383 {
			t.Fatalf("accepted a %d-byte line; HAProxy cuts map-file lines at 16383", len(line))
		}
		limit := bs / 4 * 3
		for _, cmd := range []string{
			fmt.Sprintf("add map @4294967295 %s %s %s\n", path, cliEscape(k), cliEscape(v)),
			fmt.Sprintf("set map %s %s %s\n", path, cliEscape(k), cliEscape(v)),
			fmt.Sprintf("add map @4294967295 %s <<\n%s\n\n", path, line),
		} {
			if len(cmd) > limit {
				t.Fatalf("accepted an entry whose command %.40q… is %d bytes, more than %d", cmd, len(cmd), limit)
			}
		}
	})
}

// cliEscape escapes one runtime API argument as haproxysock does.
func cliEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\\', ';', '\'', '"':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestCheckLinesReturnsALineError(t *testing.T) {
	err := renderplan.CheckLines(renderplan.FileMap, "maps/m.map", []byte("a b\nc d\n"+strings.Repeat("k", 20000)+" v\n"), 0)
	var le *renderplan.LineError
	if !errors.As(err, &le) || le.Line != 3 || !strings.Contains(le.Problem, "more than the 12288 allowed") {
		t.Fatalf("CheckLines = %#v, want a *LineError for line 3", err)
	}
}
