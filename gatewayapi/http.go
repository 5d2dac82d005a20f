package gatewayapi

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// httpRoute is an HTTPRoute (or a GRPCRoute, rewritten into the same
// shape) with its rules resolved.
type httpRoute struct {
	rules []*httpRule
	// nMatches counts the matches of the rules.
	nMatches int
}

// add appends rule, complete, to h's rules.
func (h *httpRoute) add(rule *httpRule) {
	h.rules = append(h.rules, rule)
	h.nMatches += len(rule.matches)
}

// httpRule is one rule: its matches and what a request that matched gets.
type httpRule struct {
	index   int
	matches []httpMatch
	// backend is nil when no backend of the rule resolves: the rule
	// answers 500 (unless it redirects).
	backend *backendSet
	// filters in spec order, minus those that need the match (path
	// rewrites take the matched prefix).
	filters []gatewayv1.HTTPRouteFilter
	// timeoutMS is the server timeout of the rule's backend (the
	// smaller of timeouts.request and timeouts.backendRequest), 0 for the
	// default.
	timeoutMS int64
	// retryOn and retries are the rule's retry policy as HAProxy's
	// retry-on and retries say it; retryOn "" keeps the library's.
	retryOn string
	retries int64
	// choices, when set, replace backend: the rule has backendRef-level
	// filters, so each backendRef is a backend of its own (with its
	// filters in its section) and the frontend picks one by weight.
	choices []*choice
	// fail, when set, makes every request of the rule answer 500
	// (a filter HAPTIC cannot apply).
	fail bool
}

// choice is one backendRef of a rule with backendRef-level filters:
// backend nil means the share answers 500 (a backendRef that does not
// resolve).
type choice struct {
	backend *backendSet
	weight  int64
}

// decorate gives bs the rule's settings that HAProxy keeps per backend
// (server timeout, retries), naming it after them.
func (hr *httpRule) decorate(bs *backendSet) {
	if hr.timeoutMS > 0 {
		// HAProxy sets a server timeout in a backend only: a rule with
		// timeouts gets a backend of its own timeout.
		bs.TimeoutMS = hr.timeoutMS
		bs.Name += "_t" + strconv.FormatInt(hr.timeoutMS, 10)
	}
	if hr.retryOn != "" {
		bs.RetryOn, bs.Retries = hr.retryOn, hr.retries
		bs.Name += "_r" + shortID(hr.retryOn, strconv.FormatInt(hr.retries, 10))[:8]
	}
}

// httpMatch is one match of a rule, normalized.
type httpMatch struct {
	pathType string // Exact, PathPrefix or RegularExpression
	// path is the value; for PathPrefix without its trailing slash ("/"
	// stays "/").
	path    string
	method  string
	headers []valueMatch
	query   []valueMatch
}

// valueMatch is a header or query parameter match.
type valueMatch struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Regex bool   `json:"regex"`
}

func (m *httpMatch) conditional() bool {
	return m.method != "" || len(m.headers) > 0 || len(m.query) > 0 || m.pathType == string(gatewayv1.PathMatchRegularExpression)
}

// safeHeaderName says whether a header or query parameter name can be
// written into haproxy.cfg as it is ([A-Za-z0-9_.-]); the API allows a
// few more token characters, which HAPTIC refuses.
func safeHeaderName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// safeValue says whether a header value or match value may reach
// haproxy.cfg (quoted): no control characters, bounded.
func safeValue(s string) bool {
	if len(s) > 4096 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}

// safePath says whether a path (match or rewrite value) is an absolute
// path of RFC 3986 path characters that is safe in map keys and
// log-format strings once '%' is doubled.
func safePath(s string) bool {
	if s == "" || s[0] != '/' || len(s) > 2048 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("/-._~!$&'()*+,;=:@%", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// addMatches adds a rule's matches, normalized, to hr; one that cannot
// be normalized is left out and makes the route UnsupportedValue. No
// matches is one match of every path.
func addMatches[M any](r *route, hr *httpRule, matches []M, normalize func(M) (httpMatch, string)) {
	for _, m := range matches {
		nm, problem := normalize(m)
		if problem != "" {
			r.unsupported = problem
			continue
		}
		hr.matches = append(hr.matches, nm)
	}
	if len(matches) == 0 {
		hr.matches = []httpMatch{{pathType: string(gatewayv1.PathMatchPathPrefix), path: "/"}}
	}
}

// keepFilter adds filter f to hr; a filter HAPTIC does not apply fails
// the rule (its requests get a 500) and makes the route UnsupportedValue.
func (r *route) keepFilter(hr *httpRule, f gatewayv1.HTTPRouteFilter) {
	if problem := checkFilter(f); problem != "" {
		hr.fail = true
		if r.unsupported == "" {
			r.unsupported = problem
		}
		return
	}
	hr.filters = append(hr.filters, f)
}

var methods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true, "CONNECT": true, "OPTIONS": true, "TRACE": true, "PATCH": true}

// resolveHTTPRoute turns an HTTPRoute into a route.
func (w *world) resolveHTTPRoute(hr *gatewayv1.HTTPRoute) *route {
	r := newRoute(kindHTTP, &hr.ObjectMeta, hr.Spec.ParentRefs, hr.Spec.Hostnames)
	r.http = &httpRoute{}
	var results []refResult
	for i, rule := range hr.Spec.Rules {
		hr := &httpRule{index: i}
		addMatches(r, hr, rule.Matches, normalizeHTTPMatch)
		for _, f := range rule.Filters {
			r.keepFilter(hr, f)
		}
		if t := rule.Timeouts; t != nil {
			hr.timeoutMS = minTimeout(t.Request, t.BackendRequest)
		}
		if rule.Retry != nil {
			var problem string
			hr.retryOn, hr.retries, problem = retryPolicy(rule.Retry)
			if problem != "" && r.unsupported == "" {
				r.unsupported = problem
			}
		}
		var rr []refResult
		var actions [][]*actionIR
		filtered := false
		for _, b := range rule.BackendRefs {
			res := w.resolveBackend(kindHTTP, r.ref.Namespace, b.BackendRef)
			var acts []*actionIR
			if res.reason == "" && len(b.Filters) > 0 {
				var problem string
				if acts, problem = backendRefActions(b.Filters); problem != "" {
					// The share of a backendRef whose filters HAPTIC
					// cannot apply is answered with 500.
					res.reason, res.msg = string(gatewayv1.RouteReasonUnsupportedValue), problem
					if r.unsupported == "" {
						r.unsupported = problem
					}
				} else if len(acts) > 0 {
					filtered = true
				}
			}
			rr = append(rr, res)
			actions = append(actions, acts)
		}
		results = append(results, rr...)
		if filtered {
			hr.choices = ruleChoices(hr, rr, actions)
		} else {
			hr.backend, _ = newBackendSet("http", "be_", false, rr)
			if hr.backend != nil {
				hr.decorate(hr.backend)
			}
		}
		r.http.add(hr)
	}
	r.resolved = resolvedRefs(results)
	return r
}

// ruleChoices makes one backend per backendRef of a rule with
// backendRef-level filters: the backendRef's filters go into its
// backend's section.
func ruleChoices(hr *httpRule, rr []refResult, actions [][]*actionIR) []*choice {
	var out []*choice
	for i, res := range rr {
		if res.ref.Weight <= 0 {
			continue
		}
		if res.reason != "" {
			out = append(out, &choice{weight: res.ref.Weight})
			continue
		}
		bs, _ := newBackendSet("http", "be_", false, []refResult{res})
		if acts := actions[i]; len(acts) > 0 {
			bs.Actions = acts
			parts := make([]string, 0, 3*len(acts))
			for _, a := range acts {
				parts = append(parts, a.Kind, a.Name, a.Value)
			}
			bs.Name += "_f" + shortID(parts...)[:8]
		}
		hr.decorate(bs)
		out = append(out, &choice{backend: bs, weight: res.ref.Weight})
	}
	return out
}

// backendRefActions turns the filters of one backendRef into the lines
// of its backend's section: request and response header modifiers are
// what a backend section can apply.
func backendRefActions(fs []gatewayv1.HTTPRouteFilter) ([]*actionIR, string) {
	var out []*actionIR
	for _, f := range fs {
		switch f.Type {
		case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
			if p := checkHeaderFilter(f.RequestHeaderModifier); p != "" {
				return nil, p
			}
			out = append(out, headerActions("req", f.RequestHeaderModifier)...)
		case gatewayv1.HTTPRouteFilterResponseHeaderModifier:
			if p := checkHeaderFilter(f.ResponseHeaderModifier); p != "" {
				return nil, p
			}
			out = append(out, headerActions("rsp", f.ResponseHeaderModifier)...)
		default:
			return nil, fmt.Sprintf("backendRef filter type %q is not supported (header modifiers are)", f.Type)
		}
	}
	return out, ""
}

// retryCodes are the status codes HAProxy's retry-on knows.
var retryCodes = map[int]bool{401: true, 403: true, 404: true, 408: true, 425: true, 429: true, 500: true, 501: true, 502: true, 503: true, 504: true}

// defaultRetries is HAProxy's retries when a rule's retry sets no
// attempts.
const defaultRetries = 3

// retryPolicy turns a rule's retry into HAProxy's retry-on and retries:
// connection failures and empty responses are always retried (the API
// asks for connection errors), the codes HAProxy knows are added. A code
// HAProxy cannot retry on and a backoff (HAProxy retries without delay)
// are reported as problem; the rest of the policy still applies.
func retryPolicy(rt *gatewayv1.HTTPRouteRetry) (on string, retries int64, problem string) {
	on = "conn-failure empty-response"
	seen := map[int]bool{}
	for _, c := range rt.Codes {
		code := int(c)
		if seen[code] {
			continue
		}
		seen[code] = true
		if !retryCodes[code] {
			if problem == "" {
				problem = fmt.Sprintf("retry code %d is not supported (HAProxy retries on 401, 403, 404, 408, 425, 429, 500-504)", code)
			}
			continue
		}
	}
	for _, code := range []int{401, 403, 404, 408, 425, 429, 500, 501, 502, 503, 504} {
		if seen[code] {
			on += " " + strconv.Itoa(code)
		}
	}
	retries = defaultRetries
	if rt.Attempts != nil {
		retries = int64(*rt.Attempts)
		if retries < 1 || retries > 100 {
			retries = min(max(retries, 1), 100)
			if problem == "" {
				problem = "retry attempts must be between 1 and 100"
			}
		}
	}
	if rt.Backoff != nil && problem == "" {
		problem = "retry backoff is not supported: HAProxy retries without delay"
	}
	return on, retries, problem
}

// normalizeHTTPMatch applies the API defaults and checks the values that
// reach haproxy.cfg.
func normalizeHTTPMatch(m gatewayv1.HTTPRouteMatch) (httpMatch, string) {
	nm := httpMatch{pathType: string(gatewayv1.PathMatchPathPrefix), path: "/"}
	if m.Path != nil {
		if m.Path.Type != nil {
			nm.pathType = string(*m.Path.Type)
		}
		if m.Path.Value != nil {
			nm.path = *m.Path.Value
		}
	}
	switch nm.pathType {
	case string(gatewayv1.PathMatchExact), string(gatewayv1.PathMatchPathPrefix):
		if !safePath(nm.path) {
			return nm, fmt.Sprintf("path %.64q is not an absolute path of URI path characters", nm.path)
		}
		if nm.pathType == string(gatewayv1.PathMatchPathPrefix) && nm.path != "/" {
			nm.path = strings.TrimRight(nm.path, "/")
			if nm.path == "" {
				nm.path = "/"
			}
		}
	case string(gatewayv1.PathMatchRegularExpression):
		if !safeValue(nm.path) || nm.path == "" {
			return nm, "path regular expression has control characters"
		}
	default:
		return nm, fmt.Sprintf("path match type %q is not supported", nm.pathType)
	}
	if m.Method != nil {
		nm.method = string(*m.Method)
		if !methods[nm.method] {
			return nm, fmt.Sprintf("method %q is not supported", nm.method)
		}
	}
	for _, h := range m.Headers {
		t := gatewayv1.HeaderMatchExact
		if h.Type != nil {
			t = *h.Type
		}
		if !safeHeaderName(string(h.Name)) || !safeValue(h.Value) {
			return nm, fmt.Sprintf("header match %.64q: name or value not supported", string(h.Name))
		}
		if t != gatewayv1.HeaderMatchExact && t != gatewayv1.HeaderMatchRegularExpression {
			return nm, fmt.Sprintf("header match type %q is not supported", t)
		}
		nm.headers = appendMatch(nm.headers, valueMatch{Name: lower(string(h.Name)), Value: h.Value, Regex: t == gatewayv1.HeaderMatchRegularExpression}, true)
	}
	for _, q := range m.QueryParams {
		t := gatewayv1.QueryParamMatchExact
		if q.Type != nil {
			t = *q.Type
		}
		if !safeHeaderName(string(q.Name)) || !safeValue(q.Value) {
			return nm, fmt.Sprintf("query parameter match %.64q: name or value not supported", string(q.Name))
		}
		if t != gatewayv1.QueryParamMatchExact && t != gatewayv1.QueryParamMatchRegularExpression {
			return nm, fmt.Sprintf("query parameter match type %q is not supported", t)
		}
		nm.query = appendMatch(nm.query, valueMatch{Name: string(q.Name), Value: q.Value, Regex: t == gatewayv1.QueryParamMatchRegularExpression}, false)
	}
	return nm, ""
}

// appendMatch adds v unless a match of the same name is there: the API
// says the first of several matches with one name wins (header names
// compare case-insensitively, and are lower-cased by the caller).
func appendMatch(l []valueMatch, v valueMatch, _ bool) []valueMatch {
	for _, x := range l {
		if x.Name == v.Name {
			return l
		}
	}
	return append(l, v)
}

// checkFilter says why a filter cannot be applied; "" when it can.
func checkFilter(f gatewayv1.HTTPRouteFilter) string {
	switch f.Type {
	case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
		return checkHeaderFilter(f.RequestHeaderModifier)
	case gatewayv1.HTTPRouteFilterResponseHeaderModifier:
		return checkHeaderFilter(f.ResponseHeaderModifier)
	case gatewayv1.HTTPRouteFilterRequestRedirect:
		rd := f.RequestRedirect
		if rd == nil {
			return "requestRedirect is missing"
		}
		if rd.Scheme != nil && *rd.Scheme != "http" && *rd.Scheme != "https" {
			return "redirect scheme must be http or https"
		}
		if rd.Hostname != nil && hostnameProblem(string(*rd.Hostname)) != "" {
			return "redirect hostname is not a DNS name"
		}
		if rd.StatusCode != nil && !redirectCodes[*rd.StatusCode] {
			return "redirect statusCode is not supported"
		}
		return checkPathModifier(rd.Path)
	case gatewayv1.HTTPRouteFilterCORS:
		return checkCORS(f.CORS)
	case gatewayv1.HTTPRouteFilterURLRewrite:
		rw := f.URLRewrite
		if rw == nil {
			return "urlRewrite is missing"
		}
		if rw.Hostname != nil && hostnameProblem(string(*rw.Hostname)) != "" {
			return "rewrite hostname is not a DNS name"
		}
		return checkPathModifier(rw.Path)
	}
	return fmt.Sprintf("filter type %q is not supported", f.Type)
}

// checkCORS says why a CORS filter cannot be applied.
func checkCORS(c *gatewayv1.HTTPCORSFilter) string {
	if c == nil {
		return "cors is missing"
	}
	for _, o := range c.AllowOrigins {
		if !safeOrigin(string(o)) {
			return fmt.Sprintf("cors origin %.64q is not scheme://host[:port] or *", string(o))
		}
	}
	for _, m := range c.AllowMethods {
		if m != "*" && !methods[string(m)] {
			return fmt.Sprintf("cors method %.32q is not supported", string(m))
		}
	}
	for _, h := range append(append([]gatewayv1.HTTPHeaderName(nil), c.AllowHeaders...), c.ExposeHeaders...) {
		if h != "*" && !safeHeaderName(string(h)) {
			return fmt.Sprintf("cors header %.64q is not supported", string(h))
		}
	}
	return ""
}

// safeOrigin says whether o is "*" or an origin (a scheme, "://", a host
// that may start with "*." and an optional port) of characters safe in a
// regular expression once quoted.
func safeOrigin(o string) bool {
	if o == "*" {
		return true
	}
	scheme, rest, ok := strings.Cut(o, "://")
	if !ok || scheme == "" || rest == "" || len(o) > 253 {
		return false
	}
	for i := 0; i < len(o); i++ {
		c := o[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && strings.IndexByte(".-:/*", c) < 0 {
			return false
		}
	}
	return !strings.Contains(strings.TrimPrefix(rest, "*."), "*")
}

// corsActions are the lines of a CORS filter: an allowed Origin is kept
// in txn.cors; a preflight (OPTIONS with Access-Control-Request-Method)
// from it is answered 204 with the allow headers; other responses to it
// get Access-Control-Allow-Origin and the rest. The origin is echoed
// (never "*"), which is right with and without credentials; wildcard
// methods and headers echo what the preflight asks for.
func corsActions(c *gatewayv1.HTTPCORSFilter) []*actionIR {
	var alts []string
	for _, o := range c.AllowOrigins {
		switch {
		case o == "*":
			alts = append(alts, ".+")
		case strings.Contains(string(o), "://*."):
			scheme, host, _ := strings.Cut(string(o), "://*.")
			alts = append(alts, regexp.QuoteMeta(scheme)+"://[^/]+\\."+regexp.QuoteMeta(host))
		default:
			alts = append(alts, regexp.QuoteMeta(string(o)))
		}
	}
	if len(alts) == 0 {
		return nil // no origin allowed: no CORS header is ever sent
	}
	creds := c.AllowCredentials != nil && *c.AllowCredentials
	var pre, rsp []mapEntryIR
	origin := mapEntryIR{Key: "Access-Control-Allow-Origin", Value: "%[var(txn.cors)]"}
	pre = append(pre, origin)
	rsp = append(rsp, origin)
	if ms := corsList(c.AllowMethods, "%[req.hdr(access-control-request-method)]"); ms != "" {
		pre = append(pre, mapEntryIR{Key: "Access-Control-Allow-Methods", Value: ms})
	}
	if hs := corsList(c.AllowHeaders, "%[req.fhdr(access-control-request-headers)]"); hs != "" {
		pre = append(pre, mapEntryIR{Key: "Access-Control-Allow-Headers", Value: hs})
	}
	wildExpose := "*"
	if creds {
		wildExpose = "" // "*" means a literal header name with credentials
	}
	if eh := corsList(c.ExposeHeaders, wildExpose); eh != "" {
		pre = append(pre, mapEntryIR{Key: "Access-Control-Expose-Headers", Value: eh})
		rsp = append(rsp, mapEntryIR{Key: "Access-Control-Expose-Headers", Value: eh})
	}
	maxAge := int64(c.MaxAge)
	if maxAge <= 0 {
		maxAge = 5
	}
	pre = append(pre, mapEntryIR{Key: "Access-Control-Max-Age", Value: strconv.FormatInt(maxAge, 10)})
	if creds {
		cr := mapEntryIR{Key: "Access-Control-Allow-Credentials", Value: "true"}
		pre = append(pre, cr)
		rsp = append(rsp, cr)
	}
	return []*actionIR{
		{Kind: "cors-origin", Value: "^(" + strings.Join(alts, "|") + ")$"},
		{Kind: "cors-preflight", Headers: pre},
		{Kind: "cors-response", Headers: rsp},
		// The answer depends on the Origin: caches must know.
		{Kind: "rsp-add", Name: "Vary", Value: "Origin"},
	}
}

// corsList joins a CORS list with ", "; a "*" in it gives wild instead
// (what the request asked for, or "*").
func corsList[T ~string](l []T, wild string) string {
	var out []string
	for _, x := range l {
		if x == "*" {
			return wild
		}
		out = append(out, string(x))
	}
	return strings.Join(out, ", ")
}

var redirectCodes = map[int]bool{301: true, 302: true, 303: true, 307: true, 308: true}

func checkHeaderFilter(h *gatewayv1.HTTPHeaderFilter) string {
	if h == nil {
		return "header modifier is missing"
	}
	for _, x := range append(append([]gatewayv1.HTTPHeader(nil), h.Set...), h.Add...) {
		if !safeHeaderName(string(x.Name)) || !safeValue(x.Value) {
			return fmt.Sprintf("header %.64q: name or value not supported", string(x.Name))
		}
	}
	for _, n := range h.Remove {
		if !safeHeaderName(n) {
			return fmt.Sprintf("header %.64q: name not supported", n)
		}
	}
	return ""
}

func checkPathModifier(p *gatewayv1.HTTPPathModifier) string {
	if p == nil {
		return ""
	}
	switch p.Type {
	case gatewayv1.FullPathHTTPPathModifier:
		if p.ReplaceFullPath == nil || !safePath(*p.ReplaceFullPath) {
			return "replaceFullPath is not an absolute path"
		}
	case gatewayv1.PrefixMatchHTTPPathModifier:
		if p.ReplacePrefixMatch == nil || !safePath(*p.ReplacePrefixMatch) {
			return "replacePrefixMatch is not an absolute path"
		}
	default:
		return fmt.Sprintf("path modifier type %q is not supported", p.Type)
	}
	return ""
}

// minTimeout returns the smaller of two Gateway API durations in
// milliseconds, 0 when neither is set (or both are 0, which disables).
func minTimeout(a, b *gatewayv1.Duration) int64 {
	var best int64
	for _, d := range []*gatewayv1.Duration{a, b} {
		if d == nil {
			continue
		}
		v, err := time.ParseDuration(string(*d))
		if err != nil || v <= 0 {
			continue
		}
		ms := v.Milliseconds()
		if ms < 1 {
			ms = 1
		}
		if best == 0 || ms < best {
			best = ms
		}
	}
	return best
}

// formatLiteral escapes s for a log-format string: '%' is doubled.
func formatLiteral(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// itoa is strconv.Itoa for int32 ports.
func itoa(n int32) string { return strconv.Itoa(int(n)) }
