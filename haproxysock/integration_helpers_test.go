package haproxysock_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/internal/haproxytest"
)

// env is one real HAProxy with the layout of the measured facts: a
// "profile_http" defaults section, an HTTP frontend routing by Host through
// maps/hosts.map (default be_default: 404), two more maps loaded empty
// (maps/bench1.map and maps/bench2.map, for benchmarks), a TLS bind on a crt-list, file
// backends be_app (server a1 → echo "a") and be_hash (balance source), and
// echo servers "a" and "b".
type env struct {
	inst     *haproxytest.Instance
	client   *haproxysock.Client
	master   *haproxysock.Master
	url      string // http://127.0.0.1:<port>
	tlsAddr  string
	hostsMap string
	crtList  string
	certDir  string
	a, b     *haproxytest.Echo
}

func startEnv(t testing.TB, series string, global ...string) *env {
	t.Helper()
	a := haproxytest.StartEcho(t, "a")
	b := haproxytest.StartEcho(t, "b")
	port, tlsPort := haproxytest.FreePort(t), haproxytest.FreePort(t)
	defCert, defKey := selfSigned(t, "default.test")
	e := &env{a: a, b: b}
	inst := haproxytest.Start(t, series, haproxytest.Options{
		Global: global,
		Files: map[string]string{
			"maps/hosts.map":    "app.test be_app\n",
			"maps/bench1.map":   "",
			"maps/bench2.map":   "",
			"certs/default.pem": defCert + defKey,
		},
		Config: func(dir string) string {
			e.hostsMap = dir + "/maps/hosts.map"
			e.crtList = dir + "/crt-list.txt"
			e.certDir = dir + "/certs"
			// The crt-list file is written here: it needs the directory.
			writeFileOrFail(t, e.crtList, dir+"/certs/default.pem\n")
			return fmt.Sprintf(`defaults profile_http
    mode http
    balance roundrobin
    timeout connect 2s
    timeout client 30s
    timeout server 30s

frontend fe_main from profile_http
    bind 127.0.0.1:%d
    bind 127.0.0.1:%d ssl crt-list %s
    http-request set-var(txn.b1) req.hdr(host),map(%s/maps/bench1.map,x)
    http-request set-var(txn.b2) req.hdr(host),map(%s/maps/bench2.map,x)
    use_backend %%[req.hdr(host),host_only,lower,map(%s)]
    default_backend be_default

backend be_default from profile_http
    http-request return status 404 content-type text/plain string "no route"

backend be_app from profile_http
    server a1 %s

backend be_hash from profile_http
    balance source
    server h1 %s
`, port, tlsPort, e.crtList, dir, dir, e.hostsMap, a.Addr, a.Addr)
		},
	})
	e.inst = inst
	e.client = &haproxysock.Client{Path: inst.StatsSocket, Timeout: 5 * time.Second}
	e.master = &haproxysock.Master{Path: inst.MasterSocket, Timeout: 5 * time.Second}
	e.url = fmt.Sprintf("http://127.0.0.1:%d/", port)
	e.tlsAddr = fmt.Sprintf("127.0.0.1:%d", tlsPort)
	return e
}

// run runs cmds and fails the test on any error.
func (e *env) run(t testing.TB, cmds ...haproxysock.Command) []haproxysock.Result {
	t.Helper()
	res, err := e.client.Run(t.Context(), cmds...)
	if err != nil {
		t.Fatalf("haproxy %s: %v", e.inst.Series, err)
	}
	return res
}

// runOne runs one command and returns its reply and error.
func (e *env) runOne(t testing.TB, c haproxysock.Command) (string, error) {
	t.Helper()
	res, err := e.client.Run(t.Context(), c)
	if len(res) != 1 {
		t.Fatalf("haproxy %s: %q: %v", e.inst.Series, c, err)
	}
	return res[0].Reply, res[0].Err
}

// mapCount returns the number of entries of a map, read through the raw
// test channel, independent of the client under test.
func (e *env) mapCount(t testing.TB, m string) int {
	t.Helper()
	out := e.inst.Cmd(t, "show map "+m)
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "0x") {
			n++
		}
	}
	return n
}

// get sends one request for host and returns status and body.
func (e *env) get(t testing.TB, host string) (int, string) {
	t.Helper()
	return haproxytest.Get(t, e.url, host)
}

// servedCN returns the CN of the certificate HAProxy serves for sni.
func (e *env) servedCN(t testing.TB, sni string) string {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", e.tlsAddr, &tls.Config{ServerName: sni, InsecureSkipVerify: true}) //nolint:gosec // the test reads the served certificate
	if err != nil {
		t.Fatalf("tls handshake with SNI %s: %v", sni, err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
}

// selfSigned returns a PEM certificate and PEM key for cn.
func selfSigned(t testing.TB, cn string) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     []string{cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}

func writeFileOrFail(t testing.TB, path, content string) {
	t.Helper()
	if err := writeFile(path, content); err != nil {
		t.Fatal(err)
	}
}

// startSlow starts an HTTP server on 127.0.0.1 whose requests block until
// release is called (or the test ends), to keep an old worker alive.
func startSlow(t *testing.T) (addr string, release func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-gate:
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
			_, _ = fmt.Fprintln(w, "slow")
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	var released bool
	release = func() {
		if !released {
			released = true
			close(gate)
		}
	}
	t.Cleanup(func() { release(); _ = srv.Close(); <-done })
	return ln.Addr().String(), release
}

func readFileOrFail(t testing.TB, path string) string {
	t.Helper()
	b, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func portOf(t testing.TB, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if _, err := fmt.Sscanf(p, "%d", &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitFor polls cond every 10 ms for at most 5 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting until %s", what)
}

// curConns returns scur of server srv of be_app from "show stat".
func curConns(t testing.TB, e *env, srv string) int {
	t.Helper()
	for _, l := range strings.Split(e.inst.Cmd(t, "show stat"), "\n") {
		f := strings.Split(l, ",")
		if len(f) > 4 && f[0] == "be_app" && f[1] == srv {
			var n int
			_, _ = fmt.Sscanf(f[4], "%d", &n)
			return n
		}
	}
	return 0
}
