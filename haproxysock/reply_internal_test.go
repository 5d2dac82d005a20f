package haproxysock

import (
	"errors"
	"strings"
	"testing"
)

func TestClassifyJudgesRepliesByCommand(t *testing.T) {
	addServer, _ := AddServer("be", "s", "127.0.0.1", 80, ServerOptions{})
	setMap, _ := SetMap("/m", "k", "v")
	delBackend, _ := DelBackend("be")
	commit, _ := CommitSSLCert("/c.pem")
	tests := []struct {
		name    string
		cmd     Command
		reply   string
		wantErr bool
		wantIs  error
	}{
		{"add server ok", addServer, "[6]: New server registered.", false, nil},
		{"add server refused", addServer, "[3]: No such backend.", true, nil},
		{"add server unexpected text without severity", addServer, "Already exists a server with the same name in backend.", true, nil},
		{"set map ok is empty", setMap, "", false, nil},
		{"set map missing key", setMap, "[3]: entry not found.", true, nil},
		{"unknown command is unsupported", delBackend, "[6]: Unknown command: 'del', but maybe one of the following ones is a better match:\n  del map …", true, ErrUnsupported},
		{"async lines before the status", delBackend, "[5]: Server be/n1 is going DOWN for maintenance.\nbackend 'be' has no server available!\nBackend deleted.", false, nil},
		{"commit ssl cert", commit, "[6]: Committing /c.pem\nSuccess!", false, nil},
		{"show output", ShowInfo(), "Name: HAProxy\nPid: 1", false, nil},
		{"show routed error without severity", ShowInfo(), "Unknown map identifier.", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := classify(tt.cmd, tt.reply)
			if (err != nil) != tt.wantErr {
				t.Fatalf("classify = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Fatalf("classify = %v, want %v", err, tt.wantIs)
			}
			var ce *CommandError
			if err != nil && (!errors.As(err, &ce) || ce.Command != tt.cmd.String() || strings.HasPrefix(ce.Reply, "[")) {
				t.Fatalf("error %#v does not keep the command and the reply without severity", err)
			}
		})
	}
}

// FuzzClassify: any reply with an error severity is a failure, an
// "Unknown command" is ErrUnsupported, and the error keeps the reply.
func FuzzClassify(f *testing.F) {
	f.Add("[3]: entry not found.")
	f.Add("[6]: New server registered.")
	f.Add("")
	f.Add("[6]: Unknown command: 'add'")
	setMap, _ := SetMap("/m", "k", "v")
	addServer, _ := AddServer("be", "s", "127.0.0.1", 80, ServerOptions{})
	f.Fuzz(func(t *testing.T, reply string) {
		for _, c := range []Command{setMap, addServer, ShowInfo()} {
			err := classify(c, reply)
			text, sev := splitSeverity(reply)
			if sev >= 0 && sev <= errorSeverity && err == nil {
				t.Fatalf("%q: error severity %d judged a success", reply, sev)
			}
			if strings.HasPrefix(strings.TrimSpace(firstLine(strings.TrimRight(text, "\n"))), "Unknown command") && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("%q: unknown command not ErrUnsupported: %v", reply, err)
			}
			var ce *CommandError
			if err != nil && !errors.As(err, &ce) {
				t.Fatalf("%q: error %v is not a *CommandError", reply, err)
			}
			if c.expect.kind == expectEmpty && strings.TrimSpace(text) != "" && err == nil {
				t.Fatalf("%q: non-empty reply to %q judged a success", reply, c)
			}
		}
	})
}
