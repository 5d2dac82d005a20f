package agent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

func lines(t *testing.T, op agentapi.Op, env CommandEnv) []string {
	t.Helper()
	cmds, err := Commands(op, env)
	if err != nil {
		t.Fatalf("Commands(%v): %v", op, err)
	}
	var out []string
	for _, c := range cmds {
		l := c.String()
		for _, p := range c.Payload() {
			l += "|" + p
		}
		out = append(out, l)
	}
	return out
}

func TestCommandsMapEveryOpKindToEscapedLines(t *testing.T) {
	pem := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	env := CommandEnv{
		ReadFile:      func(string) ([]byte, error) { return pem, nil },
		RemovableWait: 1500 * time.Millisecond,
	}
	digest := string(renderplan.DigestOf(pem))
	tests := []struct {
		op   agentapi.Op
		want []string
	}{
		{agentapi.Op{Kind: agentapi.OpAddBackend, Backend: "be", Profile: "web", Mode: "http", GUID: "g"}, []string{"add backend be from web mode http guid g"}},
		{agentapi.Op{Kind: agentapi.OpAddServer, Backend: "be", Server: "s", Address: "10.0.0.1", Port: 80, Weight: 5, Check: true, Keywords: []string{"maxconn", "10"}},
			[]string{"add server be/s 10.0.0.1:80 weight 5 check maxconn 10"}},
		{agentapi.Op{Kind: agentapi.OpAddServer, Backend: "be", Server: "s", Address: "2001:db8::1", Port: 80, Weight: 0},
			[]string{"add server be/s 2001:db8::1:80", "set server be/s weight 0"}},
		{agentapi.Op{Kind: agentapi.OpSetServerState, Backend: "be", Server: "s", State: agentapi.StateDrain}, []string{"set server be/s state drain"}},
		{agentapi.Op{Kind: agentapi.OpSetServerAddr, Backend: "be", Server: "s", Address: "10.0.0.2", Port: 81}, []string{"set server be/s addr 10.0.0.2 port 81"}},
		{agentapi.Op{Kind: agentapi.OpSetServerWeight, Backend: "be", Server: "s", Weight: 7}, []string{"set server be/s weight 7"}},
		{agentapi.Op{Kind: agentapi.OpEnableHealth, Backend: "be", Server: "s"}, []string{"enable health be/s"}},
		{agentapi.Op{Kind: agentapi.OpPublishBackend, Backend: "be"}, []string{"publish backend be"}},
		{agentapi.Op{Kind: agentapi.OpAddMapEntry, Map: "maps/h.map", Key: "a.test", Value: "be x;y"}, []string{`add map maps/h.map a.test be\ x\;y`}},
		{agentapi.Op{Kind: agentapi.OpSetMapEntry, Map: "maps/h.map", Key: "a.test", Value: "be2"}, []string{"set map maps/h.map a.test be2"}},
		{agentapi.Op{Kind: agentapi.OpReplaceMap, Map: "maps/p.map", Entries: []agentapi.MapEntry{{Key: "/a", Value: "be"}}}, []string{"prepare map maps/p.map"}},
		{agentapi.Op{Kind: agentapi.OpNewCert, Cert: "certs/a.pem"}, []string{"new ssl cert certs/a.pem"}},
		{agentapi.Op{Kind: agentapi.OpSetCert, Cert: "certs/a.pem", Digest: digest},
			[]string{"set ssl cert certs/a.pem <<|-----BEGIN CERTIFICATE-----|MIIB|-----END CERTIFICATE-----"}},
		{agentapi.Op{Kind: agentapi.OpCommitCert, Cert: "certs/a.pem"}, []string{"commit ssl cert certs/a.pem"}},
		{agentapi.Op{Kind: agentapi.OpAddCrtListEntry, CrtList: "certs/l.txt", Cert: "certs/a.pem"}, []string{"add ssl crt-list certs/l.txt certs/a.pem"}},
		{agentapi.Op{Kind: agentapi.OpAddCrtListEntry, CrtList: "certs/l.txt", Cert: "certs/a.pem", SSLOptions: []string{"alpn", "h2"}, SNIFilters: []string{"a.test"}},
			[]string{"add ssl crt-list certs/l.txt <<|certs/a.pem [alpn h2] a.test"}},
		{agentapi.Op{Kind: agentapi.OpDelCrtListEntry, CrtList: "certs/l.txt", Cert: "certs/a.pem"}, []string{"del ssl crt-list certs/l.txt certs/a.pem"}},
		{agentapi.Op{Kind: agentapi.OpDelMapEntry, Map: "maps/h.map", Key: "a.test"}, []string{"del map maps/h.map a.test"}},
		{agentapi.Op{Kind: agentapi.OpUnpublishBackend, Backend: "be"}, []string{"unpublish backend be"}},
		{agentapi.Op{Kind: agentapi.OpDelServer, Backend: "be", Server: "s"}, []string{"set server be/s state maint", "wait 1500 srv-removable be/s", "del server be/s"}},
		{agentapi.Op{Kind: agentapi.OpDelBackend, Backend: "be"}, []string{"wait 1500 be-removable be", "del backend be"}},
	}
	seen := map[agentapi.OpKind]bool{}
	for _, tt := range tests {
		seen[tt.op.Kind] = true
		t.Run(tt.op.String(), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, lines(t, tt.op, env)); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
	for _, k := range agentapi.OpKinds() {
		if !seen[k] {
			t.Errorf("no test for op kind %v", k)
		}
	}
}

func TestCommandsDeleteModesChooseWaitDeleteOrOnlyMaint(t *testing.T) {
	delServer := agentapi.Op{Kind: agentapi.OpDelServer, Backend: "be", Server: "s"}
	delBackend := agentapi.Op{Kind: agentapi.OpDelBackend, Backend: "be"}
	tests := []struct {
		name string
		mode DeleteMode
		op   agentapi.Op
		want []string
	}{
		{"server when removable", DeleteWhenRemovable, delServer, []string{"set server be/s state maint", "wait 1500 srv-removable be/s", "del server be/s"}},
		{"backend when removable", DeleteWhenRemovable, delBackend, []string{"wait 1500 be-removable be", "del backend be"}},
		{"server at once", DeleteAtOnce, delServer, []string{"set server be/s state maint", "del server be/s"}},
		{"backend at once", DeleteAtOnce, delBackend, []string{"del backend be"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := CommandEnv{RemovableWait: 1500 * time.Millisecond, Deletes: tt.mode}
			if diff := cmp.Diff(tt.want, lines(t, tt.op, env)); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommandsDeleteModeLeavesOtherOpsAlone(t *testing.T) {
	op := agentapi.Op{Kind: agentapi.OpSetServerState, Backend: "be", Server: "s", State: agentapi.StateDrain}
	for _, mode := range []DeleteMode{DeleteWhenRemovable, DeleteAtOnce} {
		if diff := cmp.Diff([]string{"set server be/s state drain"}, lines(t, op, CommandEnv{Deletes: mode})); diff != "" {
			t.Errorf("mode %d: commands (-want +got):\n%s", mode, diff)
		}
	}
}

func TestMapReplaceCommandsFillTheVersionAndCommit(t *testing.T) {
	op := agentapi.Op{Kind: agentapi.OpReplaceMap, Map: "maps/p.map", Entries: []agentapi.MapEntry{{Key: "/api", Value: "be_api"}, {Key: "/", Value: "be_web"}}}
	cmds, err := MapReplaceCommands(op, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cmds {
		got = append(got, c.String()+" "+strings.Join(c.Payload(), "|"))
	}
	want := []string{"add map @3 maps/p.map << /api be_api|/ be_web", "commit map @3 maps/p.map "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	empty := agentapi.Op{Kind: agentapi.OpReplaceMap, Map: "maps/p.map"}
	if cmds, err := MapReplaceCommands(empty, 4); err != nil || len(cmds) != 1 || cmds[0].String() != "commit map @4 maps/p.map" {
		t.Errorf("replace with no entries = %v, %v; want only the commit", cmds, err)
	}
}

func TestCommandsRefuseInvalidOpsAndWrongCertificates(t *testing.T) {
	if _, err := Commands(agentapi.Op{Kind: agentapi.OpPublishBackend, Backend: "be;show info"}, CommandEnv{}); !errors.Is(err, agentapi.ErrInvalidOp) {
		t.Errorf("invalid op: err = %v", err)
	}
	setCert := agentapi.Op{Kind: agentapi.OpSetCert, Cert: "certs/a.pem", Digest: "0000000000000000"}
	if _, err := Commands(setCert, CommandEnv{}); err == nil {
		t.Error("set cert without a file source succeeded")
	}
	env := CommandEnv{ReadFile: func(string) ([]byte, error) { return []byte("PEM v2\n"), nil }}
	if _, err := Commands(setCert, env); !errors.Is(err, ErrDigestMismatch) {
		t.Errorf("set cert with another file: err = %v, want ErrDigestMismatch", err)
	}
}
