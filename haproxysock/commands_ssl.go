package haproxysock

import (
	"fmt"
	"strings"
)

// NewSSLCert builds "new ssl cert <file>": an empty certificate store to
// fill with [SetSSLCert].
func NewSSLCert(file string) (Command, error) {
	if err := checkPath("certificate", file); err != nil {
		return Command{}, err
	}
	return newCommand(wantContains("New empty certificate store"), "new", "ssl", "cert", file)
}

// SetSSLCert builds "set ssl cert <file> <<" with the PEM (certificate and
// key) as payload. Blank lines are removed from the PEM, since an empty
// line would end the payload. The change needs [CommitSSLCert].
func SetSSLCert(file string, pem []byte) (Command, error) {
	if err := checkPath("certificate", file); err != nil {
		return Command{}, err
	}
	var lines []string
	for _, l := range strings.Split(string(pem), "\n") {
		l = strings.TrimRight(l, "\r \t")
		if l == "" {
			continue
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; c < 0x20 || c == 0x7f {
				return Command{}, fmt.Errorf("%w: pem for %q contains control character %#x", ErrInvalidArgument, file, c)
			}
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return Command{}, fmt.Errorf("%w: empty pem for %q", ErrInvalidArgument, file)
	}
	c, err := newCommand(wantContains("Transaction created for certificate"), "set", "ssl", "cert", file)
	if err != nil {
		return Command{}, err
	}
	c.payload = lines
	return c, nil
}

// CommitSSLCert builds "commit ssl cert <file>".
func CommitSSLCert(file string) (Command, error) {
	if err := checkPath("certificate", file); err != nil {
		return Command{}, err
	}
	return newCommand(wantContains("Success!"), "commit", "ssl", "cert", file)
}

// AbortSSLCert builds "abort ssl cert <file>".
func AbortSSLCert(file string) (Command, error) {
	if err := checkPath("certificate", file); err != nil {
		return Command{}, err
	}
	return newCommand(wantContains("Transaction aborted"), "abort", "ssl", "cert", file)
}

// DelSSLCert builds "del ssl cert <file>"; HAProxy refuses it while a
// crt-list still uses the certificate.
func DelSSLCert(file string) (Command, error) {
	if err := checkPath("certificate", file); err != nil {
		return Command{}, err
	}
	return newCommand(wantLast("Certificate '"+file+"' deleted!"), "del", "ssl", "cert", file)
}

// AddSSLCrtList builds "add ssl crt-list <list> <cert>".
func AddSSLCrtList(list, cert string) (Command, error) {
	if err := checkPath("crt-list", list); err != nil {
		return Command{}, err
	}
	if err := checkPath("certificate", cert); err != nil {
		return Command{}, err
	}
	return newCommand(wantContains("Success!"), "add", "ssl", "crt-list", list, cert)
}

// CrtListEntry is one crt-list line: a certificate, its bind options
// (written inside "[…]") and its SNI filters.
type CrtListEntry struct {
	Cert    string
	Options []string // e.g. {"alpn", "h2,http/1.1"}
	SNI     []string
}

// AddSSLCrtListEntries builds "add ssl crt-list <list> <<" with one line per
// entry. [Client.Run] splits it when it does not fit in tune.bufsize.
func AddSSLCrtListEntries(list string, entries []CrtListEntry) (Command, error) {
	if err := checkPath("crt-list", list); err != nil {
		return Command{}, err
	}
	if len(entries) == 0 {
		return Command{}, fmt.Errorf("%w: crt-list payload without entries", ErrInvalidArgument)
	}
	lines := make([]string, len(entries))
	for i, e := range entries {
		if err := checkPath("certificate", e.Cert); err != nil {
			return Command{}, err
		}
		words := []string{e.Cert}
		if len(e.Options) > 0 {
			for _, o := range e.Options {
				if err := checkCrtListWord("crt-list option", o); err != nil {
					return Command{}, err
				}
			}
			words = append(words, "["+strings.Join(e.Options, " ")+"]")
		}
		for _, s := range e.SNI {
			if err := checkCrtListWord("sni", s); err != nil {
				return Command{}, err
			}
			words = append(words, s)
		}
		lines[i] = strings.Join(words, " ")
	}
	c, err := newCommand(wantContains("Success!"), "add", "ssl", "crt-list", list)
	if err != nil {
		return Command{}, err
	}
	c.payload = lines
	c.splittable = true
	return c, nil
}

func checkCrtListWord(field, s string) error {
	if err := checkPayloadWord(field, s); err != nil {
		return err
	}
	if i := strings.IndexAny(s, "[]#;\\"); i >= 0 {
		return invalid(field, s, fmt.Sprintf("contains %q", s[i]))
	}
	return nil
}

// DelSSLCrtList builds "del ssl crt-list <list> <cert>".
func DelSSLCrtList(list, cert string) (Command, error) {
	if err := checkPath("crt-list", list); err != nil {
		return Command{}, err
	}
	if err := checkPath("certificate", cert); err != nil {
		return Command{}, err
	}
	return newCommand(wantContains("Entry '"), "del", "ssl", "crt-list", list, cert)
}
