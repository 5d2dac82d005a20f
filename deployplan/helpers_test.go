package deployplan_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/renderplan"
)

// parsePlan builds a plan with renderplan.Builder from a small line
// format used by the scenario files:
//
//	text <core line>                      core text (one line)
//	profile <name> <line> | <line> …      a profile; lines split on " | "
//	backend <name> <profile> [guid=<g>]   a backend (guid defaults to g-<name>)
//	  body <line>                         a body line (makes it structural)
//	  server <name> <addr>:<port> [weight=<n>] [disabled] [check] [<keyword>…]
//	map <path> [ordered]                  a map
//	  <key> <value>                       one entry
//	file <path> <kind> <body> [reload]    a cert, crtlist or general file
//
// Blank lines and lines starting with '#' are ignored. Weight defaults
// to 1.
func parsePlan(t testing.TB, src string) *renderplan.Output {
	t.Helper()
	out, err := buildPlan(src)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return out
}

func buildPlan(src string) (*renderplan.Output, error) {
	b := renderplan.NewBuilder()
	var be *renderplan.Backend
	var m *renderplan.Map
	flush := func() error {
		if be != nil {
			if err := b.Backend(*be); err != nil {
				return err
			}
			be = nil
		}
		if m != nil {
			if err := b.Map(*m); err != nil {
				return err
			}
			m = nil
		}
		return nil
	}
	for n, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indented := strings.HasPrefix(line, " ")
		f := strings.Fields(trimmed)
		fail := func(format string, args ...any) error {
			return fmt.Errorf("line %d %q: %s", n+1, line, fmt.Sprintf(format, args...))
		}
		if indented {
			switch {
			case be != nil && f[0] == "body":
				be.Body = append(be.Body, strings.TrimSpace(strings.TrimPrefix(trimmed, "body")))
			case be != nil && f[0] == "server" && len(f) >= 3:
				s, err := parseServer(f[1:])
				if err != nil {
					return nil, fail("%v", err)
				}
				be.Servers = append(be.Servers, s)
			case m != nil && len(f) >= 2:
				m.Entries = append(m.Entries, renderplan.MapEntry{Key: f[0], Value: strings.Join(f[1:], " ")})
			default:
				return nil, fail("unexpected indented line")
			}
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
		switch f[0] {
		case "text":
			b.Text(strings.TrimPrefix(trimmed, "text ") + "\n")
		case "profile":
			if len(f) < 3 {
				return nil, fail("want profile <name> <lines>")
			}
			rest := strings.TrimSpace(strings.TrimPrefix(trimmed[len("profile"):], " "+f[1]))
			if err := b.Profile(f[1], strings.Split(rest, " | ")); err != nil {
				return nil, fail("%v", err)
			}
		case "backend":
			if len(f) < 3 {
				return nil, fail("want backend <name> <profile>")
			}
			be = &renderplan.Backend{Name: f[1], Profile: f[2], GUID: "g-" + f[1]}
			for _, opt := range f[3:] {
				if g, ok := strings.CutPrefix(opt, "guid="); ok {
					be.GUID = g
				} else {
					return nil, fail("unknown backend option %q", opt)
				}
			}
		case "map":
			m = &renderplan.Map{Path: f[1], Ordered: len(f) > 2 && f[2] == "ordered"}
		case "file":
			if len(f) < 4 {
				return nil, fail("want file <path> <kind> <body> [reload]")
			}
			if err := b.File(f[1], renderplan.FileKind(f[2]), []byte(f[3]+"\n"), len(f) > 4 && f[4] == "reload"); err != nil {
				return nil, fail("%v", err)
			}
		default:
			return nil, fail("unknown directive %q", f[0])
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return b.Build()
}

func parseServer(f []string) (renderplan.Server, error) {
	s := renderplan.Server{Name: f[0], Weight: 1}
	hp := f[1]
	colon := strings.LastIndexByte(hp, ':')
	if colon < 0 {
		return s, fmt.Errorf("server address %q has no port", hp)
	}
	port, err := strconv.Atoi(hp[colon+1:])
	if err != nil {
		return s, fmt.Errorf("server port: %w", err)
	}
	s.Address, s.Port = strings.Trim(hp[:colon], "[]"), port
	for _, opt := range f[2:] {
		switch {
		case strings.HasPrefix(opt, "weight="):
			if s.Weight, err = strconv.Atoi(strings.TrimPrefix(opt, "weight=")); err != nil {
				return s, fmt.Errorf("weight: %w", err)
			}
		case opt == "disabled":
			s.Disabled = true
		case opt == "check":
			s.Check = true
		default:
			s.Keywords = append(s.Keywords, opt)
		}
	}
	return s, nil
}

// parseCaps reads the caps section of a scenario into a Baseline (without
// its plan):
//
//	haproxy <version>
//	agent all | agent <kind> …
//	pending <backend>[/<server>]
//	maxops <n>
func parseCaps(t testing.TB, src string) deployplan.Baseline {
	t.Helper()
	var base deployplan.Baseline
	for _, line := range strings.Split(src, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch {
		case f[0] == "haproxy" && len(f) == 2:
			base.HAProxyVersion = f[1]
		case f[0] == "agent" && len(f) == 2 && f[1] == "all":
			base.AgentOps = runtimeop.OpKinds()
		case f[0] == "agent":
			for _, name := range f[1:] {
				k, err := runtimeop.ParseOpKind(name)
				if err != nil {
					t.Fatalf("caps: %v", err)
				}
				base.AgentOps = append(base.AgentOps, k)
			}
		case f[0] == "pending" && len(f) == 2:
			b, s, _ := strings.Cut(f[1], "/")
			base.PendingDeletes = append(base.PendingDeletes, runtimeop.PendingDelete{Backend: b, Server: s})
		case f[0] == "maxops" && len(f) == 2:
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("caps: maxops: %v", err)
			}
			base.MaxOps = n
		default:
			t.Fatalf("caps: unknown line %q", line)
		}
	}
	return base
}
