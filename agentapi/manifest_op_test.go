package agentapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCanonicalOpsTakeTheShortcut(t *testing.T) {
	for _, o := range sampleOps() {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var got Op
		if !decodeCanonicalOp(raw, &got) {
			t.Errorf("%s: the encoding Client sends does not take the shortcut", raw)
			continue
		}
		if d := cmp.Diff(o, got); d != "" {
			t.Errorf("%s (-sent +decoded):\n%s", raw, d)
		}
	}
}

func TestTheShortcutLeavesOtherSpellingsToTheChecks(t *testing.T) {
	for _, raw := range []string{
		`{"KIND":"backend.publish","backend":"be_api"}`, // decodes without regard to case; the checks refuse it
		`{"kind": "backend.publish", "backend": "be_api"}`,
		`{"backend":"be_api","kind":"backend.publish"}`,
		`{"kind":"backend.publish","backend":"be_api","port":0}`,
	} {
		var o Op
		if decodeCanonicalOp(json.RawMessage(raw), &o) {
			t.Errorf("%s took the shortcut", raw)
		}
	}
	var o Op
	nack := decodeOp(json.RawMessage(`{"KIND":"backend.publish","backend":"be_api"}`), &o)
	if nack == nil || !nack.Unsupported || !strings.Contains(nack.Message, `unknown field "KIND"`) {
		t.Errorf("upper-case field: %v, want an unsupported unknown field", nack)
	}
}

// FuzzDecodeOpShortcut: decodeOp, shortcut included, answers every input
// as decodeOpChecked does.
func FuzzDecodeOpShortcut(f *testing.F) {
	for _, o := range sampleOps() {
		b, err := json.Marshal(o)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"KIND":"backend.publish","backend":"be_api"}`))
	f.Add([]byte(`{"kind":"backend.publish","backend":"be_api","kind":"backend.publish"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got, want Op
		gotNack, wantNack := decodeOp(b, &got), decodeOpChecked(b, &want)
		if d := cmp.Diff(wantNack, gotNack); d != "" {
			t.Fatalf("%q: nack (-checked +decodeOp):\n%s", b, d)
		}
		if d := cmp.Diff(want, got); wantNack == nil && d != "" {
			t.Fatalf("%q: op (-checked +decodeOp):\n%s", b, d)
		}
	})
}

// sampleOps holds one valid op of every kind, as runtimeop's tests do.
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
		{Kind: OpReplaceMap, Map: "maps/paths.map", Entries: []MapEntry{{Key: "/api/v2", Value: "be_v2"}, {Key: "/api", Value: "be_api"}}},
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
