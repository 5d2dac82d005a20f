package haproxysock

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Command is one runtime API command, built by one of this package's
// builders. Its arguments are kept unescaped; [Command.String] gives the
// escaped wire line. The zero Command is invalid. A Command is an immutable
// value and safe to share between goroutines.
type Command struct {
	args    []string
	payload []string // nil: no payload
	// splittable payload lines are independent entries: the command may
	// be sent several times with a part of them each.
	splittable bool
	expect     expectation
	// wait is how long HAProxy may legitimately take to answer ("wait").
	wait time.Duration
}

// Args returns the command's arguments as HAProxy will see them after
// unescaping, without the payload marker.
func (c Command) Args() []string { return slices.Clone(c.args) }

// Payload returns the payload lines, or nil when the command has none.
func (c Command) Payload() []string { return slices.Clone(c.payload) }

// IsZero reports whether c is the zero Command.
func (c Command) IsZero() bool { return len(c.args) == 0 }

// String returns the wire line without its trailing newline. A payload
// command ends with " <<"; its payload lines follow on the wire.
func (c Command) String() string {
	var b strings.Builder
	for i, a := range c.args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(escape(a))
	}
	if c.payload != nil {
		b.WriteString(" <<")
	}
	return b.String()
}

// wire returns the bytes sent for c: the line, the payload lines and the
// empty line that ends a payload.
func (c Command) wire() []byte {
	n := len(c.String()) + 1
	for _, p := range c.payload {
		n += len(p) + 1
	}
	b := make([]byte, 0, n+1)
	b = append(b, c.String()...)
	b = append(b, '\n')
	if c.payload != nil {
		for _, p := range c.payload {
			b = append(b, p...)
			b = append(b, '\n')
		}
		b = append(b, '\n')
	}
	return b
}

// wireLen is len(c.wire()) without building it.
func (c Command) wireLen() int {
	n := len(c.String()) + 1
	if c.payload != nil {
		for _, p := range c.payload {
			n += len(p) + 1
		}
		n++
	}
	return n
}

// escape applies HAProxy's CLI escaping to one argument that passed
// checkText: a backslash before every backslash, space, ';' and quote.
func escape(s string) string {
	if !strings.ContainsAny(s, " \\;'\"") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\\', ';', '\'', '"':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// maxArgs is HAProxy's MAX_CLI_ARGS: further words are silently dropped.
const maxArgs = 64

// newCommand assembles a command from arguments that were already checked.
func newCommand(e expectation, args ...string) (Command, error) {
	if len(args) > maxArgs {
		return Command{}, fmt.Errorf("%w: %d arguments, haproxy reads at most %d", ErrInvalidArgument, len(args), maxArgs)
	}
	return Command{args: args, expect: e}, nil
}

func invalid(field, value, why string) error {
	return fmt.Errorf("%w: %s %q %s", ErrInvalidArgument, field, value, why)
}

// checkText accepts free text that escaping makes safe (map keys and
// values, extra server keywords). It refuses what cannot be escaped:
// control characters (newline, carriage return, NUL, tab, …), an empty
// value (it would vanish from the line) and "<<", which HAProxy takes as the
// start of a payload wherever it begins the last word of a line.
func checkText(field, s string) error {
	if s == "" {
		return invalid(field, s, "is empty")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return invalid(field, s, fmt.Sprintf("contains control character %#x", c))
		}
	}
	if strings.Contains(s, "<<") {
		return invalid(field, s, `contains "<<"`)
	}
	return nil
}

// checkName accepts HAProxy object names (proxies, servers, profiles,
// GUIDs): letters, digits, '-', '_', '.' and ':', as HAProxy itself
// requires for proxy and server names.
func checkName(field, s string) error {
	if s == "" {
		return invalid(field, s, "is empty")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && !strings.ContainsRune("-_.:", rune(c)) {
			return invalid(field, s, fmt.Sprintf("contains %q (allowed: letters, digits, '-', '_', '.', ':')", c))
		}
	}
	return nil
}

// checkPath accepts file-like identifiers (map files, certificates,
// crt-lists): printable characters without whitespace, ';', backslash or
// quotes, not starting with '@' (a map version), '-' (an option) or '*'
// (a certificate transaction), and without "<<".
func checkPath(field, s string) error {
	if err := checkText(field, s); err != nil {
		return err
	}
	if i := strings.IndexAny(s, " ;\\'\""); i >= 0 {
		return invalid(field, s, fmt.Sprintf("contains %q", s[i]))
	}
	switch s[0] {
	case '@', '-', '*':
		return invalid(field, s, fmt.Sprintf("starts with %q", s[0]))
	}
	return nil
}

// checkMapRef accepts a map file path as written in the configuration or
// "#<id>".
func checkMapRef(m string) error {
	if strings.HasPrefix(m, "#") {
		if len(m) == 1 || strings.Trim(m[1:], "0123456789") != "" {
			return invalid("map", m, "is neither a path nor #<id>")
		}
		return nil
	}
	return checkPath("map", m)
}

// checkAddr accepts an IP address or a host name (letters, digits, '.',
// '-', ':', and IPv6 brackets).
func checkAddr(addr string) error {
	if addr == "" {
		return invalid("address", addr, "is empty")
	}
	for i := 0; i < len(addr); i++ {
		if c := addr[i]; !isAlnum(c) && !strings.ContainsRune(".-:[]_", rune(c)) {
			return invalid("address", addr, fmt.Sprintf("contains %q", c))
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func checkPort(port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("%w: port %d out of range 1..65535", ErrInvalidArgument, port)
	}
	return nil
}
