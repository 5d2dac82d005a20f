package haproxysock_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/haproxysock"
)

// FuzzMapCommands: for any map, key and value, every map builder either
// refuses the input or builds one command that HAProxy reads back as
// exactly the given arguments.
func FuzzMapCommands(f *testing.F) {
	f.Add("/etc/haproxy/maps/hosts.map", "a.example.com", "be_a")
	f.Add("#4", "k", "a b;show info")
	f.Fuzz(func(t *testing.T, m, key, value string) {
		builders := map[string]func() (haproxysock.Command, error){
			"add":     func() (haproxysock.Command, error) { return haproxysock.AddMap(m, key, value) },
			"set":     func() (haproxysock.Command, error) { return haproxysock.SetMap(m, key, value) },
			"del":     func() (haproxysock.Command, error) { return haproxysock.DelMap(m, key) },
			"get":     func() (haproxysock.Command, error) { return haproxysock.GetMap(m, key) },
			"add@":    func() (haproxysock.Command, error) { return haproxysock.AddMapVersion(7, m, key, value) },
			"clear":   func() (haproxysock.Command, error) { return haproxysock.ClearMap(m) },
			"prepare": func() (haproxysock.Command, error) { return haproxysock.PrepareMap(m) },
			"commit":  func() (haproxysock.Command, error) { return haproxysock.CommitMap(7, m) },
			"show":    func() (haproxysock.Command, error) { return haproxysock.ShowMap(m) },
		}
		for name, build := range builders {
			c, err := build()
			if err != nil {
				checkRefused(t, err)
				continue
			}
			checkWire(t, c)
			args := c.Args()
			if m != "" && !slices.Contains(args, m) { // ShowMap("") lists the maps
				t.Fatalf("%s: map %q not among args %q", name, m, args)
			}
			if name == "add" || name == "set" || name == "add@" {
				if args[len(args)-2] != key || args[len(args)-1] != value {
					t.Fatalf("%s: args %q do not end with key %q value %q", name, args, key, value)
				}
			}
		}
		c, err := haproxysock.AddMapPayload(m, []haproxysock.MapEntry{{Key: key, Value: value}, {Key: "k2", Value: "v2"}})
		if err != nil {
			checkRefused(t, err)
			return
		}
		checkWire(t, c)
		// HAProxy reads a payload entry as: key up to the first space or
		// tab, value after the following spaces and tabs.
		p := c.Payload()[0]
		i := strings.IndexAny(p, " \t")
		if i < 0 || p[:i] != key || strings.TrimLeft(p[i:], " \t") != value {
			t.Fatalf("payload line %q does not read back as %q %q", p, key, value)
		}
	})
}

// FuzzServerCommands: server builders refuse or build a line that reads
// back as exactly the intended arguments, whatever the names, address and
// extra keywords.
func FuzzServerCommands(f *testing.F) {
	f.Add("be_app", "pod-a", "10.0.0.1", 8080, "check")
	f.Add("be", "s", "1.2.3.4", 80, "sni str(a;b)")
	f.Fuzz(func(t *testing.T, be, srv, addr string, port int, extra string) {
		words := strings.Split(extra, " ")
		builders := []func() (haproxysock.Command, error){
			func() (haproxysock.Command, error) {
				return haproxysock.AddServer(be, srv, addr, port, haproxysock.ServerOptions{Weight: 10, GUID: srv, Extra: words})
			},
			func() (haproxysock.Command, error) { return haproxysock.SetServerAddr(be, srv, addr, port) },
			func() (haproxysock.Command, error) { return haproxysock.SetServerWeight(be, srv, port) },
			func() (haproxysock.Command, error) {
				return haproxysock.SetServerState(be, srv, haproxysock.ServerState(extra))
			},
			func() (haproxysock.Command, error) { return haproxysock.EnableHealth(be, srv) },
			func() (haproxysock.Command, error) { return haproxysock.DelServer(be, srv) },
			func() (haproxysock.Command, error) { return haproxysock.ShutdownSessionsServer(be, srv) },
			func() (haproxysock.Command, error) {
				return haproxysock.WaitServerRemovable(time.Duration(port)*time.Millisecond, be, srv)
			},
			func() (haproxysock.Command, error) {
				return haproxysock.AddBackend(be, srv, haproxysock.BackendOptions{Mode: extra, GUID: addr})
			},
			func() (haproxysock.Command, error) { return haproxysock.PublishBackend(be) },
			func() (haproxysock.Command, error) { return haproxysock.UnpublishBackend(be) },
			func() (haproxysock.Command, error) { return haproxysock.DelBackend(be) },
			func() (haproxysock.Command, error) { return haproxysock.ShowServersState(be) },
		}
		for _, build := range builders {
			c, err := build()
			if err != nil {
				checkRefused(t, err)
				continue
			}
			checkWire(t, c)
		}
	})
}

// FuzzSSLCommands: certificate and crt-list builders refuse or build
// lines and payloads that cannot carry a second command.
func FuzzSSLCommands(f *testing.F) {
	f.Add("/etc/haproxy/certs/a.pem", "/etc/haproxy/crt-list.txt", "a.test", "-----BEGIN CERTIFICATE-----\nAAA\n\n-----END CERTIFICATE-----\n")
	f.Fuzz(func(t *testing.T, cert, list, sni, pem string) {
		builders := []func() (haproxysock.Command, error){
			func() (haproxysock.Command, error) { return haproxysock.NewSSLCert(cert) },
			func() (haproxysock.Command, error) { return haproxysock.SetSSLCert(cert, []byte(pem)) },
			func() (haproxysock.Command, error) { return haproxysock.CommitSSLCert(cert) },
			func() (haproxysock.Command, error) { return haproxysock.AbortSSLCert(cert) },
			func() (haproxysock.Command, error) { return haproxysock.DelSSLCert(cert) },
			func() (haproxysock.Command, error) { return haproxysock.AddSSLCrtList(list, cert) },
			func() (haproxysock.Command, error) { return haproxysock.DelSSLCrtList(list, cert) },
			func() (haproxysock.Command, error) {
				return haproxysock.AddSSLCrtListEntries(list, []haproxysock.CrtListEntry{{Cert: cert, Options: []string{"alpn", sni}, SNI: []string{sni}}})
			},
		}
		for _, build := range builders {
			c, err := build()
			if err != nil {
				checkRefused(t, err)
				continue
			}
			checkWire(t, c)
		}
	})
}
