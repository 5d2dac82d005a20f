package cluster

import (
	"github.com/haptic-io/haptic/renderplan"
)

// sparseTree returns out with the dynamic backends that HAProxy cannot
// refuse left out of haproxy.cfg, and how many it left out; out itself
// when there is nothing to leave out.
//
// Why it checks the same: a dynamic backend is "backend <name> from
// <profile>", its guid and server lines, and renderplan has already
// checked everything in it that HAProxy would (a legal, unique name and
// guid, an existing profile of the same mode, canonical addresses, ports
// and weights in range). What it does not check are server keywords, so
// a backend with any is kept; and what refers to a backend from outside
// it (use_backend, track, a stick table), so a backend whose name
// appears as a word of the kept text is kept. One backend of each
// profile is kept, with its servers, so that every profile still serves
// a backend. At 5,000 such backends (20,000 servers) this takes haproxy
// -c from about 220 ms to about 30 ms: HAProxy's cost is in setting up
// proxies and servers, none of which can fail here.
func sparseTree(out *renderplan.Output) (*renderplan.Output, int) {
	plan := out.Plan
	cfgAt := -1
	for i, f := range out.Files {
		if f.Path == renderplan.ConfigPath {
			cfgAt = i
		}
	}
	if cfgAt < 0 || plan == nil {
		return out, 0
	}
	cfg := out.Files[cfgAt].Body
	backends := make(map[string]*renderplan.Backend, len(plan.Backends))
	for i := range plan.Backends {
		backends[plan.Backends[i].Name] = &plan.Backends[i]
	}
	// Pass 1: which backend sections may go.
	drop := make([]bool, len(plan.Sections))
	profileKept := map[string]bool{}
	n := 0
	for i, s := range plan.Sections {
		if s.Kind != renderplan.SectionBackend || s.Offset < 0 || s.Offset+s.Length > len(cfg) {
			continue
		}
		be := backends[s.Name]
		if be == nil || !plainDynamic(be) {
			continue
		}
		if !profileKept[be.Profile] {
			profileKept[be.Profile] = true
			continue
		}
		drop[i] = true
		n++
	}
	if n == 0 {
		return out, 0
	}
	// Pass 2: the words of what stays; a backend named there stays too.
	words := map[string]bool{}
	for i, s := range plan.Sections {
		if !drop[i] {
			addWords(words, cfg[s.Offset:s.Offset+s.Length])
		}
	}
	body := make([]byte, 0, len(cfg)/4)
	for i, s := range plan.Sections {
		if drop[i] && words[s.Name] {
			drop[i] = false
			n--
		}
		if !drop[i] {
			body = append(body, cfg[s.Offset:s.Offset+s.Length]...)
		}
	}
	files := append([]renderplan.FileContent(nil), out.Files...)
	files[cfgAt].Body = body
	return &renderplan.Output{Files: files, Plan: plan}, n
}

// plainDynamic: a dynamic backend whose servers carry no keywords.
func plainDynamic(be *renderplan.Backend) bool {
	if be.Shape != renderplan.ShapeDynamic || len(be.Body) > 0 {
		return false
	}
	for _, s := range be.Servers {
		if len(s.Keywords) > 0 {
			return false
		}
	}
	return true
}

// addWords adds the words of b: runs of the bytes an HAProxy name may
// hold (A-Z a-z 0-9 _ . : -).
func addWords(words map[string]bool, b []byte) {
	start := -1
	for i := 0; i <= len(b); i++ {
		if i < len(b) && nameByte(b[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			words[string(b[start:i])] = true
			start = -1
		}
	}
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-'
}
