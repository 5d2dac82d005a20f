package deployplan

import (
	"fmt"
	"strconv"
	"strings"
)

// Capabilities are what a HAProxy series accepts on its runtime API, as
// measured on 3.0.11, 3.2.26 and 3.4.7.
type Capabilities struct {
	// Series is the tested series the capabilities are those of: "3.0",
	// "3.2" or "3.4".
	Series string
	// DynamicBackends: "add backend … from <defaults>", "publish",
	// "unpublish", "del backend" and "wait be-removable" (3.4 and later).
	DynamicBackends bool
	// ServerInitState: "add server … init-state" (3.2 and later; 3.0
	// answers "unknown keyword 'init-state'").
	ServerInitState bool
	// DelMapDeletesAllDuplicates: "del map <map> <key>" removes every
	// entry of a duplicated key (3.0, 3.2); 3.4.7 removes one per call.
	DelMapDeletesAllDuplicates bool
	// LargePayloads: a "<<" payload larger than tune.bufsize is accepted
	// (3.4); 3.0 hangs and 3.2 closes the connection.
	LargePayloads bool
	// Echo: the "echo" command on both sockets (3.2 and later).
	Echo bool
}

// CapabilitiesFor returns the capabilities of a HAProxy version such as
// "3.4.7-1", "3.2" or "3.4-dev5". A version between tested series gets the
// capabilities of the series below it (3.1 → 3.0, 3.3 → 3.2); a version
// above 3.4 gets 3.4's. Versions below 3.0 and unparseable ones are errors.
func CapabilitiesFor(version string) (Capabilities, error) {
	major, minor, ok := parseSeries(version)
	if !ok {
		return Capabilities{}, fmt.Errorf("haproxy version %q: not of the form <major>.<minor>[…]", version)
	}
	if major < 3 {
		return Capabilities{}, fmt.Errorf("haproxy version %q: below 3.0, which is the oldest supported series", version)
	}
	if major > 3 {
		minor = 4
	}
	switch {
	case minor >= 4:
		return Capabilities{Series: "3.4", DynamicBackends: true, ServerInitState: true, LargePayloads: true, Echo: true}, nil
	case minor >= 2:
		return Capabilities{Series: "3.2", ServerInitState: true, DelMapDeletesAllDuplicates: true, Echo: true}, nil
	default:
		return Capabilities{Series: "3.0", DelMapDeletesAllDuplicates: true}, nil
	}
}

func parseSeries(v string) (major, minor int, ok bool) {
	v = strings.TrimSpace(v)
	dot := strings.IndexByte(v, '.')
	if dot <= 0 {
		return 0, 0, false
	}
	major, err := strconv.Atoi(v[:dot])
	if err != nil || major < 0 {
		return 0, 0, false
	}
	rest := v[dot+1:]
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if end == 0 || end > 4 {
		return 0, 0, false
	}
	minor, _ = strconv.Atoi(rest[:end])
	return major, minor, true
}
