package haproxysock

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Proc is one process line of the master's "show proc".
type Proc struct {
	PID  int
	Type string // "master" or "worker" (3.0 may list "program" entries)
	// Reloads counts the reloads since this process started: 0 for the
	// newest worker. For the master it is the total number of reloads.
	Reloads int
	// Failed is the master's count of failed reloads since the last
	// successful one (zero for workers).
	Failed  int
	Uptime  time.Duration
	Version string
}

// Procs is a parsed "show proc".
type Procs struct {
	Master Proc
	// Workers are listed under "# workers": the current generation.
	Workers []Proc
	// OldWorkers are listed under "# old workers": leaving generations,
	// and on 3.2/3.4 also the serving worker after a failed reload.
	OldWorkers []Proc
}

// LastReloadFailed reports whether the latest reload failed (the master's
// failure counter is reset by a successful reload).
func (p Procs) LastReloadFailed() bool { return p.Master.Failed > 0 }

// Serving returns the worker that serves traffic: the newest current
// worker, or, when "# workers" is empty (3.2 and 3.4 after a failed
// reload), the newest old worker. The newest has the fewest reloads.
func (p Procs) Serving() (Proc, bool) {
	list := p.Workers
	if len(list) == 0 {
		list = p.OldWorkers
	}
	var best Proc
	found := false
	for _, w := range list {
		if !found || w.Reloads < best.Reloads {
			best, found = w, true
		}
	}
	return best, found
}

// Leaving returns the workers other than [Procs.Serving]: generations that
// finish their streams before exiting.
func (p Procs) Leaving() []Proc {
	serving, ok := p.Serving()
	var out []Proc
	for _, w := range append(append([]Proc(nil), p.Workers...), p.OldWorkers...) {
		if ok && w.PID == serving.PID {
			continue
		}
		out = append(out, w)
	}
	return out
}

// ParseProcs parses the master's "show proc" reply (3.0, 3.2 and 3.4
// formats).
func ParseProcs(reply string) (Procs, error) {
	var p Procs
	section := ""
	haveMaster := false
	for n, l := range strings.Split(reply, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			continue
		case strings.HasPrefix(l, "#<PID>"):
			continue
		case strings.HasPrefix(l, "#"):
			section = strings.TrimSpace(strings.TrimPrefix(l, "#"))
			continue
		}
		proc, err := parseProcLine(l)
		if err != nil {
			return Procs{}, fmt.Errorf("%w: show proc line %d: %w", ErrProtocol, n+1, err)
		}
		switch {
		case proc.Type == "master":
			p.Master, haveMaster = proc, true
		case section == "workers":
			p.Workers = append(p.Workers, proc)
		case section == "old workers":
			p.OldWorkers = append(p.OldWorkers, proc)
		}
	}
	if !haveMaster {
		return Procs{}, fmt.Errorf("%w: show proc without a master line: %q", ErrProtocol, firstLine(reply))
	}
	return p, nil
}

// parseProcLine parses "<pid> <type> <reloads> [failed: N] <uptime> <version>".
func parseProcLine(l string) (Proc, error) {
	f := strings.Fields(l)
	if len(f) < 4 {
		return Proc{}, fmt.Errorf("too few fields in %q", l)
	}
	var p Proc
	var err error
	if p.PID, err = strconv.Atoi(f[0]); err != nil || p.PID <= 0 {
		return Proc{}, fmt.Errorf("bad pid in %q", l)
	}
	p.Type = f[1]
	if p.Reloads, err = strconv.Atoi(f[2]); err != nil || p.Reloads < 0 {
		return Proc{}, fmt.Errorf("bad reload count in %q", l)
	}
	rest := f[3:]
	if len(rest) >= 2 && rest[0] == "[failed:" {
		n, err := strconv.Atoi(strings.TrimSuffix(rest[1], "]"))
		if err != nil || n < 0 || !strings.HasSuffix(rest[1], "]") {
			return Proc{}, fmt.Errorf("bad failed count in %q", l)
		}
		p.Failed = n
		rest = rest[2:]
	}
	if len(rest) < 1 {
		return Proc{}, fmt.Errorf("no uptime in %q", l)
	}
	if p.Uptime, err = parseUptime(rest[0]); err != nil {
		return Proc{}, fmt.Errorf("%w in %q", err, l)
	}
	if len(rest) > 1 {
		p.Version = rest[1]
	}
	return p, nil
}

// parseUptime parses HAProxy's "0d00h01m02s".
func parseUptime(s string) (time.Duration, error) {
	var total time.Duration
	rest := s
	for _, u := range []struct {
		sep  byte
		unit time.Duration
	}{{'d', 24 * time.Hour}, {'h', time.Hour}, {'m', time.Minute}, {'s', time.Second}} {
		i := strings.IndexByte(rest, u.sep)
		if i <= 0 {
			return 0, fmt.Errorf("bad uptime %q", s)
		}
		n, err := strconv.Atoi(rest[:i])
		if err != nil || n < 0 || n > 1<<30 {
			return 0, fmt.Errorf("bad uptime %q", s)
		}
		total += time.Duration(n) * u.unit
		rest = rest[i+1:]
	}
	if rest != "" {
		return 0, fmt.Errorf("bad uptime %q", s)
	}
	return total, nil
}
