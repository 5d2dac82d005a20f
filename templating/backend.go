package templating

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
)

// guidPrefix starts every guid derived from a backend name.
const guidPrefix = "haptic:be:"

var backendKeys = []string{
	"name", "guid", "mode", "balance", "timeouts", "options", "defaultServer",
	"profileLines", "servers", "service", "body", "object",
}

var serverKeys = []string{"name", "address", "port", "weight", "check", "disabled", "keywords"}

// backend records one backend section and returns its token (see the
// package documentation). A value from an object that would make the
// section invalid becomes a Problem: the backend is left out and ""
// returned; a bad server is left out alone.
//
// backend takes one or more dicts: keys of a later dict override those of
// an earlier one, so a template can build the settings its backends share
// once (backend $shared (dict "name" … "service" …)).
func (r *renderState) backend(d map[string]any, more ...map[string]any) (string, error) {
	if len(more) > 0 {
		// A scratch map: backend keeps values, never the dict itself.
		if r.mergeBuf == nil {
			r.mergeBuf = make(map[string]any, len(backendKeys))
		}
		clear(r.mergeBuf)
		for k, v := range d {
			r.mergeBuf[k] = v
		}
		for _, m := range more {
			for k, v := range m {
				r.mergeBuf[k] = v
			}
		}
		d = r.mergeBuf
	}
	a := newDictArgs("backend", d, backendKeys...)
	name := a.str("name", true)
	guid := a.str("guid", false)
	mode := a.str("mode", false)
	balance := a.str("balance", false)
	timeouts := a.dict("timeouts")
	options := a.strings("options")
	defaultServer := a.str("defaultServer", false)
	extra := a.strings("profileLines")
	body := a.strings("body")
	object := a.str("object", false)
	var servers []renderplan.Server
	var serr error
	if sv, ok := d["servers"]; ok {
		servers, serr = r.parseServers(sv)
	}
	if serr != nil {
		a.fail("servers", "%v", serr)
	}
	var svc *serviceRef
	prevalidated := false
	if sd := a.dict("service"); sd != nil {
		ref, err := parseServiceRef("backend: service", sd)
		if err != nil {
			a.fail("service", "%v", err)
		}
		svc = &ref
	}
	switch mode {
	case "":
		mode = "http"
	case "http", "tcp":
	default:
		a.fail("mode", "must be http or tcp, not %q", mode)
	}
	if err := a.err(); err != nil {
		return "", err
	}
	if svc != nil {
		svcObject := svc.object
		if svcObject == "" {
			svcObject = object
		}
		if svcObject == "" {
			svcObject = "Service " + svc.ns + "/" + svc.svc
		}
		resolved, err := r.servicesServers(*svc, svcObject)
		if err != nil {
			return "", fmt.Errorf("backend: service: %w", err)
		}
		if servers == nil {
			// Resolved servers are valid and unique by construction
			// (resolveServers): no copy, no re-validation.
			servers, prevalidated = slices.Clone(resolved), true
		} else {
			servers = append(servers, resolved...)
		}
	}
	if object == "" {
		object = "backend " + name
	}
	bad := func(format string, args ...any) (string, error) {
		r.addProblem(object, ReasonBackendInvalid, fmt.Sprintf("backend %q: ", name)+fmt.Sprintf(format, args...))
		return "", nil
	}
	if err := renderplan.CheckName(name); err != nil {
		return bad("name %v", err)
	}
	if strings.HasPrefix(name, renderplan.ProfileNamePrefix) {
		return bad("name starts with %q, which is reserved for profiles", renderplan.ProfileNamePrefix)
	}
	if _, dup := r.beByName[name]; dup {
		return "", fmt.Errorf("backend: backend %q recorded twice", name)
	}
	if guid == "" {
		guid = deriveGUID(name)
	} else if err := renderplan.CheckName(guid); err != nil {
		return bad("guid %v", err)
	} else if len(guid) > renderplan.MaxGUIDLen {
		return bad("guid longer than %d bytes", renderplan.MaxGUIDLen)
	}
	if owner, dup := r.guids[guid]; dup {
		return bad("guid %q already used by backend %q", guid, owner)
	}

	prof, err := r.profileFor(mode, balance, timeouts, options, defaultServer, extra)
	if err != nil {
		return "", err
	}
	if prof.problem != "" {
		return bad("%s", prof.problem)
	}
	for _, l := range body {
		if err := renderplan.CheckLine(l); err != nil {
			return bad("body line %q %v", l, err)
		}
	}

	kept := servers
	if !prevalidated {
		kept = r.checkServers(object, name, servers)
	}
	idx := len(r.backends)
	profile := prof.name
	if _, ok := r.profiles[profile]; !ok {
		r.profiles[profile] = prof.lines
	}
	r.beByName[name] = idx
	r.guids[guid] = name
	r.backends = append(r.backends, renderplan.Backend{
		Name:    name,
		GUID:    guid,
		Profile: profile,
		Mode:    mode,
		Body:    body,
		Servers: kept,
	})
	return backendToken(idx), nil
}

// checkServers drops (as problems) the servers that are invalid or whose
// name is taken; it filters servers in place.
func (r *renderState) checkServers(object, backend string, servers []renderplan.Server) []renderplan.Server {
	kept := servers[:0]
	seen := make(map[string]bool, len(servers))
	for _, s := range servers {
		if p := serverProblem(s); p != "" {
			r.addProblem(object, ReasonServerInvalid, fmt.Sprintf("backend %q: server %q: %s", backend, s.Name, p))
			continue
		}
		if seen[s.Name] {
			r.addProblem(object, ReasonServerInvalid, fmt.Sprintf("backend %q: server %q: name used twice", backend, s.Name))
			continue
		}
		seen[s.Name] = true
		kept = append(kept, s)
	}
	return kept
}

// profileFor returns the profile (name and lines) a backend with these
// inputs uses, or a problem (an input that would make a bad line); err is
// a template bug (a non-string timeout). Results are cached per render by
// the inputs' text, so backends of one shape build, check and digest their
// lines once.
func (r *renderState) profileFor(mode, balance string, timeouts map[string]any, options []string, defaultServer string, extra []string) (profileResult, error) {
	// The cache key is every input, NUL-separated (inputs with a NUL
	// fail renderplan.CheckLine, and are then not cached as good).
	buf := r.keyBuf[:0]
	buf = append(buf, mode...)
	buf = append(buf, 0)
	buf = append(buf, balance...)
	buf = append(buf, 0)
	buf = append(buf, defaultServer...)
	var tk [8]string
	tkeys := tk[:0]
	for k := range timeouts {
		tkeys = append(tkeys, k)
	}
	slices.Sort(tkeys)
	for _, k := range tkeys {
		v, ok := scalarString(timeouts[k])
		if !ok {
			// Not cacheable; buildProfile reports it in key order.
			return buildProfile(mode, balance, tkeys, timeouts, options, defaultServer, extra)
		}
		buf = append(buf, 1)
		buf = append(buf, k...)
		buf = append(buf, 0)
		buf = append(buf, v...)
	}
	for _, o := range options {
		buf = append(buf, 2)
		buf = append(buf, o...)
	}
	for _, l := range extra {
		buf = append(buf, 3)
		buf = append(buf, l...)
	}
	r.keyBuf = buf
	if c, ok := r.profileCache[string(buf)]; ok {
		return c, nil
	}
	key := string(buf)
	res, err := buildProfile(mode, balance, tkeys, timeouts, options, defaultServer, extra)
	if err != nil {
		return res, err
	}
	r.profileCache[key] = res
	return res, nil
}

// profileResult is a profile's name and lines, or the problem that
// prevents it. Its lines are shared: never modify them.
type profileResult struct {
	name    string
	lines   []string
	problem string
}

func buildProfile(mode, balance string, tkeys []string, timeouts map[string]any, options []string, defaultServer string, extra []string) (profileResult, error) {
	lines := make([]string, 0, 4+len(tkeys)+len(options)+len(extra))
	lines = append(lines, "mode "+mode)
	if balance != "" {
		lines = append(lines, "balance "+balance)
	}
	for _, k := range tkeys {
		v, ok := scalarString(timeouts[k])
		if !ok {
			return profileResult{}, fmt.Errorf("backend: timeouts: %s must be a string, not %T", k, timeouts[k])
		}
		if err := renderplan.CheckToken(k); err != nil {
			return profileResult{problem: fmt.Sprintf("timeout name %q %v", k, err)}, nil
		}
		if err := renderplan.CheckToken(v); err != nil {
			return profileResult{problem: fmt.Sprintf("timeout %s value %q %v", k, v, err)}, nil
		}
		lines = append(lines, "timeout "+k+" "+v)
	}
	for _, o := range options {
		lines = append(lines, "option "+o)
	}
	if defaultServer != "" {
		lines = append(lines, "default-server "+defaultServer)
	}
	lines = append(lines, extra...)
	for _, l := range lines {
		if err := renderplan.CheckLine(l); err != nil {
			return profileResult{problem: fmt.Sprintf("profile line %q %v", l, err)}, nil
		}
	}
	return profileResult{name: renderplan.ProfileName(mode, lines), lines: lines}, nil
}

// deriveGUID returns "haptic:be:<name>", or "haptic:be:<digest of name>"
// when that would exceed HAProxy's guid limit.
func deriveGUID(name string) string {
	if len(guidPrefix)+len(name) <= renderplan.MaxGUIDLen {
		return guidPrefix + name
	}
	return guidPrefix + string(renderplan.DigestString(name))
}

// Backend tokens are NUL-delimited so no object text can forge one: NUL
// bytes cannot reach haproxy.cfg any other way (the assembler refuses a
// NUL outside a token).
const (
	tokenStart = "\x00haptic-backend:"
	tokenEnd   = '\x00'
)

func backendToken(idx int) string {
	b := make([]byte, 0, len(tokenStart)+12)
	b = append(b, tokenStart...)
	b = strconv.AppendInt(b, int64(idx), 10)
	return string(append(b, tokenEnd))
}

// parseServers accepts a list of server dicts ([]any or []map[string]any,
// as sprig's list and backendServers give) or a []renderplan.Server.
func (r *renderState) parseServers(v any) ([]renderplan.Server, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []renderplan.Server:
		return append([]renderplan.Server(nil), x...), nil
	case []map[string]any:
		out := make([]renderplan.Server, 0, len(x))
		for i, d := range x {
			s, err := parseServer(d)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out = append(out, s)
		}
		return out, nil
	case []any:
		out := make([]renderplan.Server, 0, len(x))
		for i, e := range x {
			d, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("item %d must be a dict, not %T", i, e)
			}
			s, err := parseServer(d)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("must be a list of server dicts, not %T", v)
}

func parseServer(d map[string]any) (renderplan.Server, error) {
	a := newDictArgs("server", d, serverKeys...)
	s := renderplan.Server{
		Name:     a.str("name", true),
		Address:  a.str("address", true),
		Check:    a.boolean("check"),
		Disabled: a.boolean("disabled"),
		Keywords: a.strings("keywords"),
	}
	s.Port, _ = a.integer("port")
	if w, ok := a.integer("weight"); ok {
		s.Weight = w
	} else {
		s.Weight = renderplan.DefaultWeight
	}
	if !a.has("port") {
		a.fail("port", "is required")
	}
	return s, a.err()
}

func serverProblem(s renderplan.Server) string {
	if err := renderplan.CheckName(s.Name); err != nil {
		return "name " + err.Error()
	}
	if err := renderplan.CheckAddress(s.Address); err != nil {
		return fmt.Sprintf("address %q %v", s.Address, err)
	}
	if s.Port < 1 || s.Port > 65535 {
		return fmt.Sprintf("port %d out of range 1-65535", s.Port)
	}
	if s.Weight < 0 || s.Weight > renderplan.MaxWeight {
		return fmt.Sprintf("weight %d out of range 0-%d", s.Weight, renderplan.MaxWeight)
	}
	for _, k := range s.Keywords {
		if err := renderplan.CheckToken(k); err != nil {
			return fmt.Sprintf("keyword %q %v", k, err)
		}
		switch k {
		case "weight", "disabled", "check":
			return fmt.Sprintf("keyword %q must be set through the server's field", k)
		}
	}
	return ""
}
