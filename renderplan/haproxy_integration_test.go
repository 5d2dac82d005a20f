package renderplan_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// Builder and NewOutput output is accepted by `haproxy -c` on every
// supported series: named defaults, "backend x from profile", guid lines,
// server lines with IPv6 brackets, weights, flags and keywords, relative
// map paths resolved from the base directory.
func TestHAProxyAcceptsBuiltPlans(t *testing.T) {
	outputs := map[string]*renderplan.Output{
		"full builder plan":     fullOutput(t),
		"1000 backends plan":    bigOutput(t, 1000),
		"every legal character": legalCharacterOutput(t),
	}
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		bin := haproxytest.Binary(t, series)
		for name, out := range outputs {
			t.Run(name, func(t *testing.T) {
				if msg, err := checkConfig(t, bin, out); err != nil {
					t.Fatalf("haproxy %s -c rejected the plan's tree: %v\n%s\n--- haproxy.cfg\n%s", series, err, msg, configBody(t, out))
				}
			})
		}
		// The check can fail, and HAProxy's limits are the ones Validate
		// enforces: what Validate rejects, HAProxy rejects too.
		for _, tt := range []struct{ name, old, new, want string }{
			{"backend from a missing profile", "backend be_app from web", "backend be_app from nosuchprofile", "nosuchprofile"},
			{"guid of 128 bytes", "guid guid-be-app", "guid " + strings.Repeat("g", renderplan.MaxGUIDLen+1), "guid"},
			{"guid with a slash", "guid guid-be-app", "guid guid/be-app", "guid"},
			{"guid shared with a server", "guid guid-be-app", "guid guid-app-a", "guid"},
			{"weight 257", "weight 7", "weight 257", "weight"},
			{"port 65536", "127.0.0.2:8080", "127.0.0.2:65536", "65536"},
		} {
			t.Run("rejects "+tt.name, func(t *testing.T) {
				out := fullOutput(t)
				for i := range out.Files {
					if out.Files[i].Path == renderplan.ConfigPath {
						body := string(out.Files[i].Body)
						if !strings.Contains(body, tt.old) {
							t.Fatalf("no %q in haproxy.cfg", tt.old)
						}
						out.Files[i].Body = []byte(strings.Replace(body, tt.old, tt.new, 1))
					}
				}
				msg, err := checkConfig(t, bin, out)
				if err == nil {
					t.Fatalf("haproxy %s -c accepted the tree with %s:\n%s", series, tt.name, msg)
				}
				if !strings.Contains(msg, "ALERT") || !strings.Contains(msg, tt.want) {
					t.Fatalf("haproxy %s -c failed, but not over %s:\n%s", series, tt.name, msg)
				}
			})
		}
	})
}

// legalCharacterOutput uses every character Validate allows in names and
// guids, and a guid of the maximum length.
func legalCharacterOutput(t *testing.T) *renderplan.Output {
	t.Helper()
	const legal = "AZaz09_.:-"
	b := renderplan.NewBuilder()
	b.Text("global\n    maxconn 100\n\nfrontend fe\n    mode tcp\n    bind 127.0.0.1:18081\n    timeout client 1s\n\n")
	must(t, b.Profile("p"+legal, []string{"mode tcp", "timeout connect 1s", "timeout server 1s"}))
	must(t, b.Backend(renderplan.Backend{
		Name: "be" + legal, GUID: strings.Repeat("g", renderplan.MaxGUIDLen-len(legal)) + legal, Profile: "p" + legal,
		Servers: []renderplan.Server{{Name: "s" + legal, Address: "127.0.0.1", Port: 65535, Weight: renderplan.MaxWeight,
			Keywords: []string{"guid", "sg" + legal}}},
	}))
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkConfig writes out's files into a temporary base directory and runs
// `haproxy -c -f haproxy.cfg` there.
func checkConfig(t *testing.T, bin string, out *renderplan.Output) (string, error) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range out.Files {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-c", "-f", renderplan.ConfigPath)
	cmd.Dir = dir
	msg, err := cmd.CombinedOutput()
	return string(msg), err
}
