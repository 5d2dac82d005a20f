package agentapi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/haptic-io/haptic/agentapi"
)

func TestDecodeManifestRoundTripsARequest(t *testing.T) {
	want := validRequest()
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "master-worker") {
		t.Errorf("manifest %s carries a body", b)
	}
	got, err := agentapi.DecodeManifest(b, agentapi.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want.Bodies = nil
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
}

func TestDecodeManifestRefusals(t *testing.T) {
	const cfg = `{"path":"haproxy.cfg","kind":"config","digest":"0123456789abcdef","size":7}`
	m := func(format string, args ...any) string { return fmt.Sprintf(format, args...) }
	cases := []struct {
		name        string
		manifest    string
		limits      agentapi.Limits
		wantOp      int
		unsupported bool
	}{
		{name: "unknown top-level field", manifest: m(`{"planID":"p","x":1,"files":[%s]}`, cfg), wantOp: -1, unsupported: true},
		{name: "unknown file field", manifest: `{"planID":"p","files":[{"path":"haproxy.cfg","kind":"config","digest":"0123456789abcdef","size":7,"mode":"0600"}]}`, wantOp: -1, unsupported: true},
		{name: "unknown op kind", manifest: m(`{"planID":"p","files":[%s],"ops":[{"kind":"backend.publish","backend":"b"},{"kind":"x.y"}]}`, cfg), wantOp: 1, unsupported: true},
		{name: "unknown op field", manifest: m(`{"planID":"p","files":[%s],"ops":[{"kind":"backend.publish","backend":"b","z":1}]}`, cfg), wantOp: 0, unsupported: true},
		{name: "unknown mode", manifest: m(`{"planID":"p","mode":"canary","files":[%s]}`, cfg), wantOp: -1, unsupported: true},
		{name: "invalid op", manifest: m(`{"planID":"p","files":[%s],"ops":[{"kind":"backend.publish","backend":"b c"}]}`, cfg), wantOp: 0},
		{name: "op of the wrong shape", manifest: m(`{"planID":"p","files":[%s],"ops":[1]}`, cfg), wantOp: 0},
		{name: "too many ops", manifest: m(`{"planID":"p","files":[%s],"ops":[{"kind":"backend.publish","backend":"b"},{"kind":"backend.publish","backend":"c"}]}`, cfg), limits: agentapi.Limits{MaxOps: 1}, wantOp: -1},
		{name: "too many files", manifest: m(`{"planID":"p","files":[%s,{"path":"a","kind":"general","digest":"0123456789abcdef","size":1}]}`, cfg), limits: agentapi.Limits{MaxFiles: 1}, wantOp: -1},
		{name: "too large", manifest: m(`{"planID":"p","files":[%s]}`, cfg), limits: agentapi.Limits{MaxManifestBytes: 10}, wantOp: -1},
		{name: "fence out of range", manifest: m(`{"planID":"p","fence":-1,"files":[%s]}`, cfg), wantOp: -1},
		{name: "keys that differ in case", manifest: m(`{"planID":"a","PlanId":"b","files":[%s]}`, cfg), wantOp: -1},
		{name: "a key twice", manifest: m(`{"planID":"a","planID":"b","files":[%s]}`, cfg), wantOp: -1},
		{name: "a key twice through an escape", manifest: m(`{"planID":"a","planID":"b","files":[%s]}`, cfg), wantOp: -1},
		{name: "file keys that differ in case", manifest: `{"planID":"p","files":[{"path":"general/x","PATH":"haproxy.cfg","kind":"config","digest":"0123456789abcdef","size":7}]}`, wantOp: -1},
		{name: "op keys that fold together", manifest: m(`{"planID":"p","files":[%s],"ops":[{"kind":"backend.publish","backend":"b","Kind":"backend.del"}]}`, cfg), wantOp: -1},
		{name: "map entry keys that differ in case", manifest: m(`{"planID":"p","files":[%s],"ops":[{"kind":"map.replace","map":"maps/h.map","entries":[{"key":"a","KEY":"b","value":"be"}]}]}`, cfg), wantOp: -1},
		{name: "a map listed as haproxy.cfg", manifest: `{"planID":"p","files":[{"path":"haproxy.cfg","kind":"map","digest":"0123456789abcdef","size":7}]}`, wantOp: -1},
		{name: "a config outside haproxy.cfg", manifest: m(`{"planID":"p","files":[%s,{"path":"general/x.cfg","kind":"config","digest":"0123456789abcdef","size":1}]}`, cfg), wantOp: -1},
		{name: "a certificate under general/", manifest: m(`{"planID":"p","files":[%s,{"path":"general/key.pem","kind":"cert","digest":"0123456789abcdef","size":1}]}`, cfg), wantOp: -1},
		{name: "not an object", manifest: `[]`, wantOp: -1},
		{name: "empty", manifest: ``, wantOp: -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := agentapi.DecodeManifest([]byte(tc.manifest), tc.limits)
			var nack *agentapi.NackError
			if !errors.As(err, &nack) || req != nil {
				t.Fatalf("DecodeManifest = %v, %v; want a nack", req, err)
			}
			got := struct {
				Stage       agentapi.Stage
				Op          int
				Unsupported bool
			}{nack.Stage, nack.Op, nack.Unsupported}
			want := got
			want.Stage, want.Op, want.Unsupported = agentapi.StageDecode, tc.wantOp, tc.unsupported
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("nack %q (-want +got):\n%s", nack.Message, diff)
			}
		})
	}
}

func TestNackErrorMessages(t *testing.T) {
	cases := []struct {
		err  *agentapi.NackError
		want string
	}{
		{&agentapi.NackError{Stage: agentapi.StageOps, Op: 3, Message: "No such server."}, "agentapi: nack at ops: op 3: No such server."},
		{&agentapi.NackError{Stage: agentapi.StageReload, Op: -1, Message: "[ALERT] parsing"}, "agentapi: nack at reload: [ALERT] parsing"},
		{&agentapi.NackError{Stage: agentapi.StageDecode, Op: -1, Unsupported: true, Message: `unknown field "x"`}, `agentapi: unsupported request: unknown field "x"`},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
