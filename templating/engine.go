package templating

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/Masterminds/sprig/v3"

	"github.com/haptic-io/haptic/store"
)

// Template names inside an [Engine]. Snippets keep their own names; the
// other templates of a config get these names, which is what error
// messages show ("template: map:hosts.map:3:7: …").
const (
	templateConfig = "haproxy.cfg"
	prefixMap      = "map:"
	prefixFile     = "file:"
	prefixCert     = "cert:"
	prefixEach     = "each:"
)

// Engine is a compiled [Config]: every template parsed once. An Engine is
// safe for concurrent use: its config and templates never change; each
// [Engine.Render] works on its own clone of the templates (clones are
// pooled and reused), and what a render found (renderEach item results,
// backendServers resolutions) is carried to the next, which reuses it
// while its inputs are the same objects (carry.go).
type Engine struct {
	cfg       *Config
	tmpl      *textTemplate
	snippets  []string // sorted snippet names
	maps      []string // sorted map template names (config keys)
	files     []string
	certs     []string
	exprs     map[string][]store.IndexExpr
	resources map[string]store.WatchedResource

	// serviceAlias and sliceAlias are the aliases backendServers reads
	// (resource services in core v1, endpointslices in discovery.k8s.io).
	serviceAlias, sliceAlias string
	// sliceIndexed is true when sliceAlias's indexBy starts with namespace
	// and the kubernetes.io/service-name label, so Fetch finds a Service's
	// slices directly.
	sliceIndexed bool

	// carry is what the last render left for the next (carry.go);
	// eachSalt numbers renderEach calls; eachExecuted counts the items
	// executed rather than replayed.
	carry        carryBox
	eachSalt     atomic.Uint64
	eachExecuted atomic.Int64
	eachAdopted  atomic.Int64 // renderEach calls that adopted their fold
	// replayOnly makes every renderEach replay its items one by one, as
	// a sequential render would (tests compare folds with it).
	replayOnly bool
	// renderPool and fragPool hold template clones renders reuse (pool.go).
	renderPool, fragPool sync.Pool
	// regexps are the patterns the regex functions compiled.
	regexps regexpCache
}

// removedSprigFuncs are the sprig functions an Engine does not offer,
// because they read the environment, the network, the clock or a random
// source, or return map keys in random order, any of which would make a
// render non-deterministic (or leak the controller's environment).
var removedSprigFuncs = []string{
	// environment and network
	"env", "expandenv", "getHostByName",
	// clock and local time zone
	"now", "ago", "date", "dateInZone", "dateModify", "mustDateModify",
	"htmlDate", "htmlDateInZone", "toDate", "mustToDate", "unixEpoch",
	"durationRound",
	// randomness
	"randAlphaNum", "randAlpha", "randAscii", "randNumeric", "randInt",
	"randBytes", "shuffle", "uuidv4", "bcrypt", "htpasswd", "encryptAES",
	"genPrivateKey", "genCA", "genCAWithKey", "genSelfSignedCert",
	"genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey",
}

// RemovedSprigFuncs lists the sprig functions templates cannot call (see
// the package documentation for why).
func RemovedSprigFuncs() []string { return append([]string(nil), removedSprigFuncs...) }

// Compile validates cfg and parses all its templates. Parse errors name
// the template and line; all of them are returned, joined.
func Compile(cfg *Config) (*Engine, error) {
	if cfg == nil {
		return nil, errors.New("compile: nil config")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if cfg.HAProxyConfig == nil {
		return nil, errors.New("compile: haproxyConfig is not set")
	}
	e := &Engine{
		cfg:       cfg,
		snippets:  sortedKeys(cfg.Snippets),
		maps:      sortedKeys(cfg.Maps),
		files:     sortedKeys(cfg.Files),
		certs:     sortedKeys(cfg.SSLCertificates),
		exprs:     map[string][]store.IndexExpr{},
		resources: cfg.WatchedResources,
	}
	for _, alias := range sortedKeys(cfg.WatchedResources) {
		wr := cfg.WatchedResources[alias]
		for _, s := range wr.IndexBy {
			x, _ := store.ParseIndexExpr(s) // checked by Validate
			e.exprs[alias] = append(e.exprs[alias], x)
		}
		switch {
		case wr.Resource == "services" && wr.APIVersion == "v1" && e.serviceAlias == "":
			e.serviceAlias = alias
		case wr.Resource == "endpointslices" && strings.HasPrefix(wr.APIVersion, "discovery.k8s.io/") && e.sliceAlias == "":
			e.sliceAlias = alias
			x := e.exprs[alias]
			e.sliceIndexed = len(x) >= 2 && x[0].SamePath("metadata.namespace") && x[1].SamePath(`metadata.labels["kubernetes.io/service-name"]`)
		}
	}

	root := newTextTemplate("").Funcs(baseFuncs(&e.regexps)).Funcs(placeholderFuncs())
	// A missing key is an error, never "<no value>" in the output: probe
	// optional fields with index, hasKey, dig or get.
	root.Option("missingkey=error")
	var errs []error
	parse := func(name, text string) {
		if _, err := root.New(name).Parse(text); err != nil {
			errs = append(errs, err)
		}
	}
	parse(templateConfig, cfg.HAProxyConfig.Template)
	for _, name := range e.snippets {
		if name == templateConfig || strings.HasPrefix(name, prefixMap) ||
			strings.HasPrefix(name, prefixFile) || strings.HasPrefix(name, prefixCert) ||
			strings.HasPrefix(name, prefixEach) {
			errs = append(errs, fmt.Errorf("snippet %q: name is reserved", name))
			continue
		}
		parse(name, cfg.Snippets[name].Template)
	}
	for _, name := range e.snippets {
		// renderEach runs a chunk of items through one execution of this
		// wrapper (one template state per chunk, not per item).
		parse(prefixEach+name, "{{ range $i, $x := . }}{{ "+eachItemFunc+" $i }}{{ template "+strconv.Quote(name)+" $x }}{{ end }}")
	}
	for _, name := range e.maps {
		parse(prefixMap+name, cfg.Maps[name].Template)
	}
	for _, name := range e.files {
		parse(prefixFile+name, cfg.Files[name].Template)
	}
	for _, name := range e.certs {
		parse(prefixCert+name, cfg.SSLCertificates[name].Template)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("compile: %w", errors.Join(errs...))
	}
	e.tmpl = root
	return e, nil
}

// watchesServices reports whether the config watches the Services and
// EndpointSlices backendServers and backend's "service" key read.
func (e *Engine) watchesServices() bool { return e.serviceAlias != "" && e.sliceAlias != "" }

// Config returns the config the engine was compiled from; treat it as
// read-only.
func (e *Engine) Config() *Config { return e.cfg }

// baseFuncs are the stateless functions: sprig minus [removedSprigFuncs],
// with keys and values made deterministic and the regex functions
// compiling through re, plus HAPTIC helpers.
func baseFuncs(re *regexpCache) funcMap {
	fm := funcMap(sprig.TxtFuncMap())
	for _, name := range removedSprigFuncs {
		delete(fm, name)
	}
	maps.Copy(fm, re.funcs())
	fm["keys"] = sortedMapKeys
	fm["values"] = sortedMapValues
	fm["toJSON"] = toJSON
	fm["fail"] = fail
	fm["haproxyName"] = SanitizeName
	fm["dnsNameProblem"] = DNSNameProblem
	fm["pathProblem"] = PathProblem
	fm["mapPath"] = func(name string) string { return dirMaps + "/" + name }
	fm["certPath"] = func(name string) string { return dirCerts + "/" + name }
	fm["filePath"] = func(name string) string { return dirGeneral + "/" + name }
	fm["haproxyQuote"] = haproxyQuote
	fm["haproxyFormatQuote"] = haproxyFormatQuote
	return fm
}

// renderFuncNames are the functions bound to one render's state.
var renderFuncNames = []string{
	"render", "renderGlob", "memo", "cacheGet", "cacheSet", "problem",
	"backend", "backendServers", "registerMap", "mapEntry", "file", "cert", "crtList",
	"renderEach", "claim", "claimed", "tuneBufsize", "mapLineMax", "crtListLineMax", eachItemFunc,
}

// placeholderFuncs declare the per-render functions at parse time; every
// render replaces them on its own clone.
func placeholderFuncs() funcMap {
	fm := funcMap{}
	for _, name := range renderFuncNames {
		fm[name] = func(...any) (string, error) {
			return "", fmt.Errorf("%s called outside a render", name)
		}
	}
	return fm
}

func sortedMapKeys(dicts ...map[string]any) []string {
	var keys []string
	for _, d := range dicts {
		for k := range d {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func sortedMapValues(d map[string]any) []any {
	return valuesOf(d, sortedMapKeys(d))
}

func valuesOf(d map[string]any, keys []string) []any {
	out := make([]any, 0, len(d))
	for _, k := range keys {
		out = append(out, d[k])
	}
	return out
}

// sortedMapKeys is keys for the main template: an adopted registry's
// keys come sorted (segment.go).
func (r *renderState) sortedMapKeys(dicts ...map[string]any) []string {
	if len(dicts) == 1 {
		if sr, ok := r.adopted[reflect.ValueOf(dicts[0]).UnsafePointer()]; ok && len(sr.keys) == len(dicts[0]) {
			// The registry's keys change only by claims, which add keys:
			// the same length means the same keys.
			return slices.Clone(sr.keys)
		}
	}
	return sortedMapKeys(dicts...)
}

func (r *renderState) sortedMapValues(d map[string]any) []any {
	if sr, ok := r.adopted[reflect.ValueOf(d).UnsafePointer()]; ok && len(sr.keys) == len(d) {
		// Claims add keys, never change a value: the same length means
		// the same values.
		return slices.Clone(sr.vals)
	}
	return sortedMapValues(d)
}

// haproxyQuote returns s as one double-quoted HAProxy configuration word:
// backslash, double quote and dollar sign (environment expansion)
// are escaped. Control characters are refused.
func haproxyQuote(s string) (string, error) {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < ' ' || c == 0x7f:
			return "", fmt.Errorf("haproxyQuote: %q contains a control character", s)
		case c == '\\' || c == '"' || c == '$':
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String(), nil
}

// haproxyFormatQuote is haproxyQuote for log-format arguments (header
// values, http-request return strings, …): '%' is doubled too, so "%[src]"
// in s stays text instead of becoming a sample fetch.
func haproxyFormatQuote(s string) (string, error) {
	q, err := haproxyQuote(s)
	if err != nil {
		return "", fmt.Errorf("haproxyFormatQuote: %w", err)
	}
	return strings.ReplaceAll(q, "%", "%%"), nil
}
