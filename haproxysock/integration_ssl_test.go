package haproxysock_test

import (
	"errors"
	"testing"

	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/internal/haproxytest"
)

func TestCertificatesAreAddedThroughTheRuntimeAPI(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		b := mustBuild(t)
		if cn := e.servedCN(t, "new.test"); cn != "default.test" {
			t.Fatalf("before: SNI new.test served CN %q, want the default", cn)
		}
		certPEM, keyPEM := selfSigned(t, "new.test")
		// A blank line inside the PEM would end the payload early; the
		// builder strips it.
		pem := []byte(certPEM + "\n\n" + keyPEM)
		newCert := e.certDir + "/new.test.pem"
		e.run(t,
			b(haproxysock.NewSSLCert(newCert)),
			b(haproxysock.SetSSLCert(newCert, pem)),
			b(haproxysock.CommitSSLCert(newCert)),
			b(haproxysock.AddSSLCrtListEntries(e.crtList, []haproxysock.CrtListEntry{
				{Cert: newCert, Options: []string{"alpn", "h2,http/1.1"}, SNI: []string{"new.test", "alias.test"}},
			})),
		)
		for _, sni := range []string{"new.test", "alias.test"} {
			if cn := e.servedCN(t, sni); cn != "new.test" {
				t.Errorf("SNI %s served CN %q, want new.test", sni, cn)
			}
		}
		// A second certificate through the one-line crt-list form.
		c2, k2 := selfSigned(t, "two.test")
		two := e.certDir + "/two.test.pem"
		e.run(t,
			b(haproxysock.NewSSLCert(two)),
			b(haproxysock.SetSSLCert(two, []byte(c2+k2))),
			b(haproxysock.CommitSSLCert(two)),
			b(haproxysock.AddSSLCrtList(e.crtList, two)),
		)
		if cn := e.servedCN(t, "two.test"); cn != "two.test" {
			t.Errorf("SNI two.test served CN %q", cn)
		}
		// A certificate in use cannot be deleted; after its crt-list
		// entry is gone it can.
		_, err := e.runOne(t, b(haproxysock.DelSSLCert(newCert)))
		var ce *haproxysock.CommandError
		if !errors.As(err, &ce) {
			t.Fatalf("del ssl cert in use = %v, want a refusal", err)
		}
		e.run(t, b(haproxysock.DelSSLCrtList(e.crtList, newCert)), b(haproxysock.DelSSLCert(newCert)))
		if cn := e.servedCN(t, "new.test"); cn != "default.test" {
			t.Errorf("after delete: SNI new.test served CN %q, want the default", cn)
		}
		// An uncommitted transaction can be aborted.
		e.run(t, b(haproxysock.SetSSLCert(two, []byte(c2+k2))), b(haproxysock.AbortSSLCert(two)))
	})
}
