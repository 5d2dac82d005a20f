package renderplan

import (
	"strconv"
	"strings"
)

// indent is the indentation of every line inside a section.
const indent = "    "

// DefaultWeight is HAProxy's default server weight. A [Server] has no
// implicit weight: its Weight is rendered as it is, so set DefaultWeight
// for HAProxy's default.
const DefaultWeight = 1

// BackendText renders be as its haproxy.cfg section. It is the one renderer
// of backend sections: the template assembler, the [Builder] and
// [Plan.Validate] all use it, so a backend's text is a function of the
// [Backend] value alone. The format is exact:
//
//	backend <name> from <profile>
//	    guid <guid>
//	    <body line>                  one per Body line, verbatim
//	    server <name> <addr>:<port> weight <w>[ disabled][ check][ <keyword>…]
//	<empty line>
//
// Lines are indented with four spaces and end with "\n"; the section ends
// with an empty line. Body lines come before the servers, in order; servers
// come in the order of be.Servers (sorted by name in a built plan).
//
// Weight is always written, "weight 0" included: 0 is a real HAProxy weight
// (the server takes no load-balanced traffic), not "HAProxy's default"; use
// [DefaultWeight] for that. Writing it always keeps the file and the runtime
// API in agreement, because HAProxy does not apply default-server settings
// to servers added at runtime. "disabled" starts the server in maintenance
// and "check" enables health checks; Keywords follow, space-separated.
// IPv6 addresses are written as "[addr]:port".
//
// BackendText does not validate be; [Plan.Validate] rejects the names,
// addresses and tokens that would change the structure above.
func BackendText(be Backend) string {
	return string(appendBackendText(make([]byte, 0, backendTextSize(&be)), &be))
}

// backendTextSize is the length of be's section: exact for ports and
// weights of 0 to 999999999 (every valid one), an upper bound otherwise.
func backendTextSize(be *Backend) int {
	n := len("backend  from \n"+indent+"guid \n\n") + len(be.Name) + len(be.Profile) + len(be.GUID)
	for _, l := range be.Body {
		n += len(indent) + len(l) + 1
	}
	for i := range be.Servers {
		s := &be.Servers[i]
		n += len(indent+"server  : weight \n") + len(s.Name) + len(s.Address) + decimalLen(s.Port) + decimalLen(s.Weight)
		if strings.IndexByte(s.Address, ':') >= 0 {
			n += 2 // [ ]
		}
		if s.Disabled {
			n += len(" disabled")
		}
		if s.Check {
			n += len(" check")
		}
		for _, k := range s.Keywords {
			n += 1 + len(k)
		}
	}
	return n
}

// decimalLen is the length of appendInt(nil, n) for n in 0 to 999999999,
// and at least that length otherwise.
func decimalLen(n int) int {
	switch {
	case n < 0 || n >= 1e9:
		return 20
	case n < 10:
		return 1
	case n < 100:
		return 2
	case n < 1000:
		return 3
	case n < 10000:
		return 4
	case n < 100000:
		return 5
	}
	l := 6
	for n >= 1000000 {
		n /= 10
		l++
	}
	return l
}

// appendBackendText appends BackendText(*be) to dst: the one renderer.
func appendBackendText(dst []byte, be *Backend) []byte {
	dst = append(dst, "backend "...)
	dst = append(dst, be.Name...)
	dst = append(dst, " from "...)
	dst = append(dst, be.Profile...)
	dst = append(dst, "\n"+indent+"guid "...)
	dst = append(dst, be.GUID...)
	dst = append(dst, '\n')
	for _, l := range be.Body {
		dst = append(dst, indent...)
		dst = append(dst, l...)
		dst = append(dst, '\n')
	}
	for i := range be.Servers {
		s := &be.Servers[i]
		dst = append(dst, indent+"server "...)
		dst = append(dst, s.Name...)
		dst = append(dst, ' ')
		dst = appendHostPort(dst, s.Address, s.Port)
		dst = append(dst, " weight "...)
		dst = appendInt(dst, s.Weight)
		if s.Disabled {
			dst = append(dst, " disabled"...)
		}
		if s.Check {
			dst = append(dst, " check"...)
		}
		for _, k := range s.Keywords {
			dst = append(dst, ' ')
			dst = append(dst, k...)
		}
		dst = append(dst, '\n')
	}
	return append(dst, '\n')
}

// HostPort joins an address and a port the way HAProxy's server lines and
// runtime commands take them: "10.0.0.1:8080", or "[2001:db8::1]:8080"
// when the address contains a colon (IPv6).
func HostPort(address string, port int) string {
	return string(appendHostPort(make([]byte, 0, len(address)+8), address, port))
}

func appendHostPort(dst []byte, address string, port int) []byte {
	if strings.IndexByte(address, ':') >= 0 {
		dst = append(dst, '[')
		dst = append(dst, address...)
		dst = append(dst, ']')
	} else {
		dst = append(dst, address...)
	}
	dst = append(dst, ':')
	return appendInt(dst, port)
}

// appendInt is strconv.AppendInt(dst, int64(n), 10), faster for the
// small non-negative numbers of ports, weights, offsets and sizes.
func appendInt(dst []byte, n int) []byte {
	if n < 0 || n >= 1e9 {
		return strconv.AppendInt(dst, int64(n), 10)
	}
	u := uint(n)
	if u < 10 {
		return append(dst, byte('0'+u))
	}
	var buf [9]byte
	i := len(buf)
	for u >= 100 {
		q := u / 100
		r := 2 * (u - 100*q)
		i -= 2
		buf[i], buf[i+1] = decimalPairs[r], decimalPairs[r+1]
		u = q
	}
	if u >= 10 {
		i -= 2
		buf[i], buf[i+1] = decimalPairs[2*u], decimalPairs[2*u+1]
	} else {
		i--
		buf[i] = byte('0' + u)
	}
	return append(dst, buf[i:]...)
}

// decimalPairs holds the two digits of 00 to 99 at 2n and 2n+1.
const decimalPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// ProfileText renders a profile as its haproxy.cfg section:
//
//	defaults <name>
//	    <line>                       one per line, verbatim
//	<empty line>
//
// The lines carry the profile's mode ("mode http") like any other
// directive. ProfileText does not validate its arguments.
func ProfileText(name string, lines []string) string {
	var b strings.Builder
	n := len("defaults \n\n") + len(name)
	for _, l := range lines {
		n += len(indent) + len(l) + 1
	}
	b.Grow(n)
	b.WriteString("defaults ")
	b.WriteString(name)
	b.WriteByte('\n')
	for _, l := range lines {
		b.WriteString(indent)
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.String()
}

// ProfileNamePrefix starts every name [ProfileName] returns.
const ProfileNamePrefix = "haptic-be-"

// ProfileName names the profile of backends with the given mode and profile
// lines: "haptic-be-" followed by the first 12 hex digits of the digest of
// the mode and the lines. Backends of the same shape get the same name, so
// they share one profile; any change of a line or of their order gives
// another name. The lines are taken as given (not sorted), since directive
// order can matter to HAProxy.
func ProfileName(mode string, lines []string) string {
	n := len(mode)
	for _, l := range lines {
		n += 1 + len(l)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(mode)
	for _, l := range lines {
		b.WriteByte('\n')
		b.WriteString(l)
	}
	return ProfileNamePrefix + string(DigestString(b.String())[:12])
}

// MapText renders m as a map file: "<key> <value>\n" per entry, in the order
// of m.Entries. An empty map renders as no bytes.
func MapText(m Map) []byte {
	return appendMapText(make([]byte, 0, mapTextSize(&m)), &m)
}

// mapTextSize is the length of MapText(*m).
func mapTextSize(m *Map) int {
	n := 0
	for _, e := range m.Entries {
		n += len(e.Key) + len(e.Value) + 2
	}
	return n
}

// appendMapText appends MapText(*m) to dst.
func appendMapText(dst []byte, m *Map) []byte {
	for _, e := range m.Entries {
		dst = append(dst, e.Key...)
		dst = append(dst, ' ')
		dst = append(dst, e.Value...)
		dst = append(dst, '\n')
	}
	return dst
}
