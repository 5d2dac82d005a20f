package runtimeop

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sampleOps holds one valid op of every kind.
func sampleOps() []Op {
	return []Op{
		{Kind: OpAddBackend, Backend: "be_api", Profile: "haptic-be-0123456789ab", Mode: "http", GUID: "be-api"},
		{Kind: OpAddServer, Backend: "be_api", Server: "pod-a", Address: "10.0.0.1", Port: 8080, Weight: 1, Check: true, Keywords: []string{"inter", "2s"}},
		{Kind: OpSetServerState, Backend: "be_api", Server: "pod-a", State: StateReady},
		{Kind: OpSetServerAddr, Backend: "be_api", Server: "pod-a", Address: "2001:db8::1", Port: 80},
		{Kind: OpSetServerWeight, Backend: "be_api", Server: "pod-a", Weight: 0},
		{Kind: OpEnableHealth, Backend: "be_api", Server: "pod-a"},
		{Kind: OpPublishBackend, Backend: "be_api"},
		{Kind: OpAddMapEntry, Map: "maps/hosts.map", Key: "api.example.com", Value: "be_api"},
		{Kind: OpSetMapEntry, Map: "maps/hosts.map", Key: "api.example.com", Value: "be_api2"},
		{Kind: OpReplaceMap, Map: "maps/paths.map", Entries: []MapEntry{{"/api/v2", "be_v2"}, {"/api", "be_api"}}},
		{Kind: OpNewCert, Cert: "certs/api.pem"},
		{Kind: OpSetCert, Cert: "certs/api.pem", Digest: "0123456789abcdef"},
		{Kind: OpCommitCert, Cert: "certs/api.pem"},
		{Kind: OpAddCrtListEntry, CrtList: "certs/list.txt", Cert: "certs/api.pem", SSLOptions: []string{"alpn", "h2,http/1.1"}, SNIFilters: []string{"api.example.com"}},
		{Kind: OpDelCrtListEntry, CrtList: "certs/list.txt", Cert: "certs/api.pem"},
		{Kind: OpDelMapEntry, Map: "maps/hosts.map", Key: "old.example.com"},
		{Kind: OpUnpublishBackend, Backend: "be_old"},
		{Kind: OpDelServer, Backend: "be_old", Server: "pod-z"},
		{Kind: OpDelBackend, Backend: "be_old"},
	}
}

func TestSampleOpsCoverEveryKind(t *testing.T) {
	got := map[OpKind]bool{}
	for _, o := range sampleOps() {
		got[o.Kind] = true
	}
	for _, k := range OpKinds() {
		if !got[k] {
			t.Errorf("no sample op of kind %v", k)
		}
	}
}

func TestOpJSONRoundTripsEveryKind(t *testing.T) {
	for _, o := range sampleOps() {
		t.Run(o.Kind.String(), func(t *testing.T) {
			if err := o.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			b, err := json.Marshal(o)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			if !strings.Contains(string(b), `"kind":"`+o.Kind.String()+`"`) {
				t.Errorf("encoding %s does not carry the kind's name", b)
			}
			var back Op
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("unmarshal %s: %v", b, err)
			}
			if diff := cmp.Diff(o, back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeOpsRejectsBadOps(t *testing.T) {
	tests := []struct {
		name, in string
		is       error
		contains string
	}{
		{"unknown kind", `[{"kind":"server.teleport","backend":"b","server":"s"}]`, ErrUnknownOpKind, "op 0"},
		{"unknown field", `[{"kind":"backend.publish","backend":"b","colour":"red"}]`, nil, "unknown field"},
		{"field the kind does not use", `[{"kind":"backend.publish","backend":"b","server":"s"}]`, ErrInvalidOp, "field server is not used"},
		{"missing field", `[{"kind":"server.set_state","backend":"b","server":"s"}]`, ErrInvalidOp, "field state is required"},
		{"bad state", `[{"kind":"server.set_state","backend":"b","server":"s","state":"up"}]`, ErrInvalidOp, "state"},
		{"name with a space", `[{"kind":"backend.publish","backend":"b x"}]`, ErrInvalidOp, "invalid character"},
		{"name with a semicolon", `[{"kind":"backend.del","backend":"b;show"}]`, ErrInvalidOp, "invalid character"},
		{"host name instead of an address", `[{"kind":"server.set_addr","backend":"b","server":"s","address":"example.com","port":80}]`, ErrInvalidOp, "not an IP"},
		{"port out of range", `[{"kind":"server.add","backend":"b","server":"s","address":"10.0.0.1","port":70000}]`, ErrInvalidOp, "port"},
		{"missing port", `[{"kind":"server.add","backend":"b","server":"s","address":"10.0.0.1"}]`, ErrInvalidOp, "port 0"},
		{"weight out of range", `[{"kind":"server.set_weight","backend":"b","server":"s","weight":300}]`, ErrInvalidOp, "weight"},
		{"newline in a map value", `[{"kind":"map.set","map":"m.map","key":"k","value":"a\nshow info"}]`, ErrInvalidOp, "control"},
		{"payload marker in a map value", `[{"kind":"map.add","map":"m.map","key":"k","value":"<<"}]`, ErrInvalidOp, "<<"},
		{"absolute map path", `[{"kind":"map.del","map":"/etc/passwd","key":"k"}]`, ErrInvalidOp, "absolute"},
		{"map path leaving the base", `[{"kind":"map.del","map":"../x.map","key":"k"}]`, ErrInvalidOp, "clean path"},
		{"bad entry in a replace", `[{"kind":"map.replace","map":"m.map","entries":[{"key":"a b","value":"v"}]}]`, ErrInvalidOp, "entry 0"},
		{"unknown field in an entry", `[{"kind":"map.replace","map":"m.map","entries":[{"key":"a","value":"v","x":1}]}]`, nil, "unknown field"},
		{"keyword with a space", `[{"kind":"server.add","backend":"b","server":"s","address":"10.0.0.1","port":1,"keywords":["a b"]}]`, ErrInvalidOp, "keyword"},
		{"bad digest", `[{"kind":"cert.set","cert":"c.pem","digest":"XYZ"}]`, ErrInvalidOp, "digest"},
		{"guid too long", `[{"kind":"backend.add","backend":"b","profile":"p","mode":"http","guid":"` + strings.Repeat("g", 128) + `"}]`, ErrInvalidOp, "longer"},
		{"bad mode", `[{"kind":"backend.add","backend":"b","profile":"p","mode":"udp"}]`, ErrInvalidOp, "mode"},
		{"not an array", `{"kind":"backend.del","backend":"b"}`, nil, "decode ops"},
		{"second op bad", `[{"kind":"backend.del","backend":"b"},{"kind":"backend.del"}]`, ErrInvalidOp, "op 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeOps([]byte(tt.in))
			if err == nil {
				t.Fatal("DecodeOps succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want it to wrap %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("err = %q, want it to contain %q", err, tt.contains)
			}
		})
	}
}

func TestOpStringNamesKindTargetAndFields(t *testing.T) {
	tests := []struct {
		op   Op
		want string
	}{
		{Op{Kind: OpAddBackend, Backend: "be_api", Profile: "p", Mode: "http", GUID: "g"}, "backend.add be_api profile=p mode=http guid=g"},
		{Op{Kind: OpAddServer, Backend: "be", Server: "s", Address: "10.0.0.1", Port: 80, Weight: 1, Check: true}, "server.add be/s addr=10.0.0.1 port=80 weight=1 check"},
		{Op{Kind: OpSetServerState, Backend: "be", Server: "s", State: StateMaint}, "server.set_state be/s state=maint"},
		{Op{Kind: OpSetServerWeight, Backend: "be", Server: "s"}, "server.set_weight be/s weight=0"},
		{Op{Kind: OpSetMapEntry, Map: "maps/h.map", Key: "a.example", Value: "be x"}, `map.set maps/h.map key=a.example value="be x"`},
		{Op{Kind: OpReplaceMap, Map: "maps/p.map", Entries: []MapEntry{{"a", "b"}}}, "map.replace maps/p.map entries=1"},
		{Op{Kind: OpSetCert, Cert: "certs/a.pem", Digest: "00ff"}, "cert.set certs/a.pem digest=00ff"},
		{Op{Kind: OpAddCrtListEntry, CrtList: "l.txt", Cert: "a.pem", SNIFilters: []string{"a", "b"}}, `crtlist.add l.txt cert=a.pem sni="a b"`},
		{Op{Kind: OpDelServer, Backend: "be", Server: "s"}, "server.del be/s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.op.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOpTargetGroupsOpsOfOneObject(t *testing.T) {
	tests := []struct {
		op   Op
		want string
	}{
		{Op{Kind: OpAddServer, Backend: "be", Server: "s"}, "be/s"},
		{Op{Kind: OpPublishBackend, Backend: "be"}, "be"},
		{Op{Kind: OpSetMapEntry, Map: "m", Key: "k"}, "m k"},
		{Op{Kind: OpReplaceMap, Map: "m"}, "m"},
		{Op{Kind: OpCommitCert, Cert: "c.pem"}, "c.pem"},
		{Op{Kind: OpAddCrtListEntry, CrtList: "l", Cert: "c.pem"}, "c.pem"},
	}
	for _, tt := range tests {
		if got := tt.op.Target(); got != tt.want {
			t.Errorf("%v: Target() = %q, want %q", tt.op.Kind, got, tt.want)
		}
	}
}
