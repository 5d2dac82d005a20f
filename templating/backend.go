package templating

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
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
	var resolve resolver
	if r.e.watchesServices() {
		resolve = r.resolveEntry
	}
	p, err := prepareBackend(d, more, &r.mergeBuf, resolve, &r.profileCache)
	if err != nil {
		return "", err
	}
	idx, ok, err := r.addBackend(p)
	if err != nil || !ok {
		return "", err
	}
	return backendToken(idx), nil
}

// preparedBackend is a backend call with everything that depends on its
// arguments and the store done: what is left (addBackend) depends on the
// backends recorded before it. renderEach items prepare backends in
// parallel and replay them in later renders.
type preparedBackend struct {
	name, guid, mode, object string
	body                     []string
	servers                  []renderplan.Server
	profile                  profileResult
	// profileErr is a template error found while building the profile;
	// it is raised when the backend is added, where backend raised it.
	profileErr error
	// svcKey and svc are the service resolution the servers came from.
	svcKey *serversKey
	svc    *serversEntry
	// Problems that leave the backend out, in the order backend checks
	// them: the name, then (after the duplicate checks) the guid, then
	// the profile and body lines.
	nameBad, guidBad, linesBad string
	// serverProblems are the servers left out.
	serverProblems []Problem
}

// resolver returns the resolution of a service reference.
type resolver func(serversKey) *serversEntry

// prepareBackend parses a backend call's dicts and does every check that
// depends on them alone. merge is a scratch map; it reads the store only
// through resolve. Errors are template errors.
func prepareBackend(d map[string]any, more []map[string]any, merge *map[string]any, resolve resolver, profiles *profileCache) (*preparedBackend, error) {
	if len(more) > 0 {
		// A scratch map: backend keeps values, never the dict itself.
		if *merge == nil {
			*merge = make(map[string]any, len(backendKeys))
		}
		m := *merge
		clear(m)
		for k, v := range d {
			m[k] = v
		}
		for _, x := range more {
			for k, v := range x {
				m[k] = v
			}
		}
		d = m
	}
	a := newDictArgs("backend", d, backendKeys...)
	p := &preparedBackend{
		name:   a.str("name", true),
		guid:   a.str("guid", false),
		mode:   a.str("mode", false),
		object: a.str("object", false),
	}
	balance := a.str("balance", false)
	timeouts := a.dict("timeouts")
	options := a.strings("options")
	defaultServer := a.str("defaultServer", false)
	extra := a.strings("profileLines")
	p.body = a.strings("body")
	var servers []renderplan.Server
	var serr error
	if sv, ok := d["servers"]; ok {
		servers, serr = parseServers(sv)
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
	switch p.mode {
	case "":
		p.mode = "http"
	case "http", "tcp":
	default:
		a.fail("mode", "must be http or tcp, not %q", p.mode)
	}
	if err := a.err(); err != nil {
		return nil, err
	}
	if svc != nil {
		if resolve == nil {
			return nil, fmt.Errorf("backend: service: %w", errServicesNotWatched)
		}
		svcObject := svc.object
		if svcObject == "" {
			svcObject = p.object
		}
		if svcObject == "" {
			svcObject = "Service " + svc.ns + "/" + svc.svc
		}
		key := serversKey{svc.ns, svc.svc, svc.portName, svc.portNum, svcObject}
		p.svcKey, p.svc = &key, resolve(key)
		if servers == nil {
			// Resolved servers are valid and unique by construction
			// (resolveServers): no copy, no re-validation.
			servers, prevalidated = slices.Clone(p.svc.servers), true
		} else {
			servers = append(servers, p.svc.servers...)
		}
	}
	if p.object == "" {
		p.object = "backend " + p.name
	}
	bad := func(format string, args ...any) string {
		return fmt.Sprintf("backend %q: ", p.name) + fmt.Sprintf(format, args...)
	}
	if err := renderplan.CheckName(p.name); err != nil {
		p.nameBad = bad("name %v", err)
		return p, nil
	}
	if strings.HasPrefix(p.name, renderplan.ProfileNamePrefix) {
		p.nameBad = bad("name starts with %q, which is reserved for profiles", renderplan.ProfileNamePrefix)
		return p, nil
	}
	if p.guid == "" {
		p.guid = deriveGUID(p.name)
	} else if err := renderplan.CheckName(p.guid); err != nil {
		p.guidBad = bad("guid %v", err)
		return p, nil
	} else if len(p.guid) > renderplan.MaxGUIDLen {
		p.guidBad = bad("guid longer than %d bytes", renderplan.MaxGUIDLen)
		return p, nil
	}
	p.profile, p.profileErr = profiles.get(p.mode, balance, timeouts, options, defaultServer, extra)
	if p.profileErr != nil {
		return p, nil
	}
	if p.profile.problem != "" {
		p.linesBad = bad("%s", p.profile.problem)
		return p, nil
	}
	for _, l := range p.body {
		if err := renderplan.CheckLine(l); err != nil {
			p.linesBad = bad("body line %q %v", l, err)
			return p, nil
		}
	}
	p.servers = servers
	if !prevalidated {
		p.servers, p.serverProblems = checkServers(p.object, p.name, servers)
	}
	return p, nil
}

// refused reports whether p is left out whatever was recorded before it.
func (p *preparedBackend) refused() bool {
	return p.nameBad != "" || p.guidBad != "" || p.linesBad != "" || p.profileErr != nil
}

// addBackend records p after the backends recorded so far and returns its
// index; ok is false when p is left out (a problem says why).
func (r *renderState) addBackend(p *preparedBackend) (idx int, ok bool, err error) {
	if p.svcKey != nil {
		r.useServers(*p.svcKey, p.svc)
	}
	bad := func(msg string) (int, bool, error) {
		r.addProblem(p.object, ReasonBackendInvalid, msg)
		return 0, false, nil
	}
	if p.nameBad != "" {
		return bad(p.nameBad)
	}
	_, dup := r.beByName[p.name]
	if sb := r.segBackends; sb != nil && !dup {
		_, dup = sb.byName[p.name]
	}
	if dup {
		return 0, false, fmt.Errorf("backend: backend %q recorded twice", p.name)
	}
	if p.guidBad != "" {
		return bad(p.guidBad)
	}
	owner, dup := r.guids[p.guid]
	if sb := r.segBackends; sb != nil && !dup {
		owner, dup = sb.guidOwner[p.guid]
	}
	if dup {
		return bad(fmt.Sprintf("backend %q: guid %q already used by backend %q", p.name, p.guid, owner))
	}
	if p.profileErr != nil {
		return 0, false, p.profileErr
	}
	if p.linesBad != "" {
		return bad(p.linesBad)
	}
	r.problems = append(r.problems, p.serverProblems...)
	idx = len(r.backends)
	if _, ok := r.profiles[p.profile.name]; !ok {
		r.profiles[p.profile.name] = p.profile.lines
	}
	r.beByName[p.name] = idx
	r.guids[p.guid] = p.name
	r.backends = append(r.backends, renderplan.Backend{
		Name:    p.name,
		GUID:    p.guid,
		Profile: p.profile.name,
		Mode:    p.mode,
		Body:    p.body,
		Servers: p.servers,
	})
	return idx, true, nil
}

// checkServers drops the servers that are invalid or whose name is
// taken, and returns the problems saying so; it filters servers in place.
func checkServers(object, backend string, servers []renderplan.Server) ([]renderplan.Server, []Problem) {
	kept := servers[:0]
	var problems []Problem
	seen := make(map[string]bool, len(servers))
	for _, s := range servers {
		if p := serverProblem(s); p != "" {
			problems = append(problems, Problem{Object: object, Reason: ReasonServerInvalid, Message: fmt.Sprintf("backend %q: server %q: %s", backend, s.Name, p)})
			continue
		}
		if seen[s.Name] {
			problems = append(problems, Problem{Object: object, Reason: ReasonServerInvalid, Message: fmt.Sprintf("backend %q: server %q: name used twice", backend, s.Name)})
			continue
		}
		seen[s.Name] = true
		kept = append(kept, s)
	}
	return kept, problems
}

// profileCache builds the profile (name and lines) a backend with given
// inputs uses, or a problem (an input that would make a bad line); err is
// a template bug (a non-string timeout). Results are cached by the
// inputs' text, so backends of one shape build, check and digest their
// lines once. The zero value is ready; it is not safe for concurrent use.
type profileCache struct {
	m      map[string]profileResult
	keyBuf []byte
}

// maxProfiles bounds a profileCache that lives across renders.
const maxProfiles = 1024

func (c *profileCache) get(mode, balance string, timeouts map[string]any, options []string, defaultServer string, extra []string) (profileResult, error) {
	// The cache key is every input, NUL-separated (inputs with a NUL
	// fail renderplan.CheckLine, and are then not cached as good).
	buf := c.keyBuf[:0]
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
		v, ok := store.ScalarString(timeouts[k])
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
	c.keyBuf = buf
	if res, ok := c.m[string(buf)]; ok {
		return res, nil
	}
	key := string(buf)
	res, err := buildProfile(mode, balance, tkeys, timeouts, options, defaultServer, extra)
	if err != nil {
		return res, err
	}
	if c.m == nil || len(c.m) >= maxProfiles {
		c.m = map[string]profileResult{}
	}
	c.m[key] = res
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
		v, ok := store.ScalarString(timeouts[k])
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

// namedBackendToken is the token of a backend recorded by a renderEach
// item, which does not know the backend's index: "=" name, SOH, guid. A
// name and guid pair names at most one recorded backend; a token whose
// backend was left out after all (its guid was taken) stands for nothing.
func namedBackendToken(name, guid string) string {
	return tokenStart + "=" + name + "\x01" + guid + string(rune(tokenEnd))
}

func backendToken(idx int) string {
	b := make([]byte, 0, len(tokenStart)+12)
	b = append(b, tokenStart...)
	b = strconv.AppendInt(b, int64(idx), 10)
	return string(append(b, tokenEnd))
}

// parseServers accepts a list of server dicts ([]any or []map[string]any,
// as sprig's list and backendServers give) or a []renderplan.Server.
func parseServers(v any) ([]renderplan.Server, error) {
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
	if n := len(strings.Join(s.Keywords, " ")); n > renderplan.MaxKeywordsLen {
		return fmt.Sprintf("keywords take %d bytes, more than %d", n, renderplan.MaxKeywordsLen)
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
