package renderplan_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// TestHAProxyReadsLinesAndCommandsAsTheBoundsAssume measures, on every
// series and for three tune.bufsize values, the longest map-file line
// HAProxy loads as one entry (a longer one is cut, and its rest becomes
// an entry of its own) and the longest runtime command it runs, and holds
// MaxLine below both.
func TestHAProxyReadsLinesAndCommandsAsTheBoundsAssume(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		for _, bufSize := range []int{8192, renderplan.DefaultBufSize, 32768} {
			t.Run(strconv.Itoa(bufSize), func(t *testing.T) {
				fileLimit, cmdLimit := measureLineLimits(t, series, bufSize)
				t.Logf("haproxy %s, tune.bufsize %d: longest map-file line read whole %d bytes; longest command run %d bytes; MaxLine %d",
					series, bufSize, fileLimit, cmdLimit, renderplan.MaxLine(bufSize))
				// The file is read into a buffer of the default size,
				// whatever tune.bufsize says.
				if fileLimit != 16383 {
					t.Errorf("longest map-file line %d bytes, want 16383", fileLimit)
				}
				want := bufSize // 3.2 and 3.4
				if series == "3.0" {
					want = bufSize - 1
				}
				if cmdLimit != want {
					t.Errorf("longest command %d bytes, want %d", cmdLimit, want)
				}
				if m := renderplan.MaxLine(bufSize); m > fileLimit || m >= cmdLimit {
					t.Errorf("MaxLine(%d) = %d, not within the measured limits %d and %d", bufSize, m, fileLimit, cmdLimit)
				}
			})
		}
	})
}

var entryCount = regexp.MustCompile(`\((?:\S*/)?maps/(\w+)\.map\).*entry_cnt=(\d+)`)

// measureLineLimits starts HAProxy series with tune.bufsize bufSize and
// returns the longest map-file line (without its newline) it reads as one
// entry and the longest "add map" command (with its newline) it runs,
// trying lengths around both limits. Each candidate has a map of its own,
// and "show map" counts the entries of every map: a cut line makes two.
func measureLineLimits(t *testing.T, series string, bufSize int) (fileLimit, cmdLimit int) {
	t.Helper()
	fileLengths := []int{16382, 16383, 16384, 16385}
	cmdLengths := []int{bufSize - 2, bufSize - 1, bufSize, bufSize + 1}
	files := map[string]string{}
	var lookups strings.Builder
	for _, n := range fileLengths {
		name := fmt.Sprintf("f%d", n)
		files["maps/"+name+".map"] = "k " + strings.Repeat("v", n-2) + "\n"
		fmt.Fprintf(&lookups, "    http-request set-var(txn.%s) path,map_str(maps/%s.map)\n", name, name)
	}
	for _, n := range cmdLengths {
		name := fmt.Sprintf("c%d", n)
		files["maps/"+name+".map"] = ""
		fmt.Fprintf(&lookups, "    http-request set-var(txn.%s) path,map_str(maps/%s.map)\n", name, name)
	}
	inst := haproxytest.Start(t, series, haproxytest.Options{
		Global: []string{fmt.Sprintf("tune.bufsize %d", bufSize)},
		Files:  files,
		Config: func(string) string {
			return fmt.Sprintf(`defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend fe
    bind 127.0.0.1:%d
%s    http-request return status 200
`, haproxytest.FreePort(t), lookups.String())
		},
	})
	// "add map maps/cN.map k vvv…" and its newline: N bytes.
	for _, n := range cmdLengths {
		head := fmt.Sprintf("add map maps/c%d.map k ", n)
		line := head + strings.Repeat("v", n-len(head)-1)
		reply, err := inst.TryCmd(line)
		if err == nil && strings.TrimSpace(reply) != "" && !strings.Contains(reply, "too big") {
			t.Fatalf("a %d-byte command was answered %q", n, reply)
		}
	}
	counts := map[string]int{}
	for _, m := range entryCount.FindAllStringSubmatch(inst.Cmd(t, "show map"), -1) {
		counts[m[1]], _ = strconv.Atoi(m[2])
	}
	for _, n := range fileLengths {
		switch c := counts[fmt.Sprintf("f%d", n)]; c {
		case 1:
			fileLimit = max(fileLimit, n)
		case 2: // cut in two
		default:
			t.Fatalf("map of one %d-byte line has %d entries", n, c)
		}
	}
	for _, n := range cmdLengths {
		if counts[fmt.Sprintf("c%d", n)] == 1 {
			cmdLimit = max(cmdLimit, n)
		}
	}
	return fileLimit, cmdLimit
}

// TestHAProxyReadsCrtListLinesOfUpTo65534Bytes: a crt-list line is read
// up to 65534 bytes whatever tune.bufsize; a longer one fails the check
// (it is never cut). CheckLines refuses it at any bufsize.
func TestHAProxyReadsCrtListLinesOfUpTo65534Bytes(t *testing.T) {
	pemText := selfSignedPEM(t)
	line := func(n int) string {
		s := "certs/site.pem"
		for i := 0; len(s) < n-70; i++ {
			s += fmt.Sprintf(" h%04d.%s.test", i, strings.Repeat("a", 50))
		}
		return s + " " + strings.Repeat("z", n-len(s)-1)
	}
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		bin := haproxytest.Binary(t, series)
		for n, ok := range map[int]bool{65534: true, 65535: false} {
			crtList := line(n) + "\n"
			out := &renderplan.Output{Files: []renderplan.FileContent{
				{Path: renderplan.ConfigPath, Body: []byte("defaults\n    mode http\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n" +
					fmt.Sprintf("frontend fe\n    bind 127.0.0.1:%d ssl crt-list certs/crt-list.txt\n", haproxytest.FreePort(t)))},
				{Path: "certs/site.pem", Body: []byte(pemText)},
				{Path: "certs/crt-list.txt", Body: []byte(crtList)},
			}}
			msg, err := checkConfig(t, bin, out)
			if (err == nil) != ok {
				t.Errorf("haproxy %s -c with a %d-byte crt-list line: %v, want ok=%t\n%s", series, n, err, ok, msg)
			}
			if !ok && !strings.Contains(msg, "line too long") {
				t.Errorf("haproxy %s -c: %s, want \"line too long\"", series, msg)
			}
			if renderplan.CheckLines(renderplan.FileCrtList, "certs/crt-list.txt", []byte(crtList), renderplan.MaxBufSize) == nil {
				t.Errorf("CheckLines accepts a %d-byte crt-list line", n)
			}
		}
	})
}

// selfSignedPEM returns a self-signed certificate and its key, as PEM.
func selfSignedPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "site.test"},
		DNSNames: []string{"site.test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) +
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}
