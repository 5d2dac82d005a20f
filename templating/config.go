package templating

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"sigs.k8s.io/yaml"
)

// Config is a template configuration: the resources it watches, the
// templates it renders and the tests that check them. Its YAML shape is the
// shape the future custom resource's spec will have. A Config is plain data;
// [Compile] turns it into an [Engine].
type Config struct {
	// WatchedResources maps an alias (a template identifier, exposed as
	// .resources.<alias>) to the resource it watches.
	WatchedResources map[string]store.WatchedResource `json:"watchedResources,omitempty"`
	// HAProxyConfig renders haproxy.cfg. Nil means "not set": [Merge] keeps
	// the last config that sets it.
	HAProxyConfig *TemplateSource `json:"haproxyConfig,omitempty"`
	// Snippets are named templates reachable with render, renderGlob and memo.
	Snippets map[string]TemplateSource `json:"snippets,omitempty"`
	// Maps are map files whose rendered text lines "key value" become
	// entries of maps/<name>.
	Maps map[string]MapTemplate `json:"maps,omitempty"`
	// Files are general files rendered to general/<name>.
	Files map[string]FileTemplate `json:"files,omitempty"`
	// SSLCertificates are PEM files rendered to certs/<name>; an empty
	// rendering writes no file.
	SSLCertificates map[string]TemplateSource `json:"sslCertificates,omitempty"`
	// ExtraContext is exposed to templates as .extraContext.
	ExtraContext map[string]any `json:"extraContext,omitempty"`
	// ValidationTests are run by [RunTests].
	ValidationTests map[string]ValidationTest `json:"validationTests,omitempty"`
}

// TemplateSource is the text of one template.
type TemplateSource struct {
	Template string `json:"template"`
}

// MapTemplate renders one map file.
type MapTemplate struct {
	Template string `json:"template"`
	// Ordered maps keep their entries in rendered order (first match wins);
	// unordered maps are sorted by key.
	Ordered bool `json:"ordered,omitempty"`
}

// FileTemplate renders one general file.
type FileTemplate struct {
	Template string `json:"template"`
	// ReloadOnChange nil means true: HAProxy only reads general files at
	// start-up.
	ReloadOnChange *bool `json:"reloadOnChange,omitempty"`
}

// ValidationTest is one test of a config: fixtures per alias rendered with
// optional extraContext overrides, then checked by assertions.
type ValidationTest struct {
	Description string `json:"description,omitempty"`
	// Fixtures maps a watched-resource alias to its objects.
	Fixtures map[string][]map[string]any `json:"fixtures,omitempty"`
	// ExtraContext keys override the config's extraContext (shallowly).
	ExtraContext map[string]any `json:"extraContext,omitempty"`
	Assertions   []Assertion    `json:"assertions"`
}

// Assertion is one check of a [ValidationTest].
type Assertion struct {
	Type AssertionType `json:"type"`
	// Target is haproxy.cfg (the default), map:<name>, file:<name>,
	// cert:<name>, problems or rendering_error.
	Target string `json:"target,omitempty"`
	// Pattern is a regular expression (contains, not_contains, match_count).
	Pattern string `json:"pattern,omitempty"`
	// Patterns are regular expressions that must match in this order
	// (match_order).
	Patterns []string `json:"patterns,omitempty"`
	// Expected is the exact content (equals, a string) or the number of
	// matches (match_count, an integer).
	Expected    any    `json:"expected,omitempty"`
	Description string `json:"description,omitempty"`
}

// AssertionType names what an [Assertion] checks.
type AssertionType string

// Assertion types.
const (
	AssertContains      AssertionType = "contains"
	AssertNotContains   AssertionType = "not_contains"
	AssertEquals        AssertionType = "equals"
	AssertMatchCount    AssertionType = "match_count"
	AssertMatchOrder    AssertionType = "match_order"
	AssertDeterministic AssertionType = "deterministic"
	AssertHAProxyValid  AssertionType = "haproxy_valid"
)

// Special assertion targets.
const (
	TargetConfig         = "haproxy.cfg"
	TargetRenderingError = "rendering_error"
	TargetProblems       = "problems"
)

// LoadConfig reads and validates a config file.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	cfg, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("load config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig decodes a YAML (or JSON) config strictly (an unknown or
// duplicate field is an error) and validates it with [Config.Validate].
func ParseConfig(b []byte) (*Config, error) {
	var cfg Config
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		return nil, fmt.Errorf("parse config: %w", err)
	}
	cfg.normalize()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// normalize turns integral float64 values in free-form fields into int64,
// the way Kubernetes' unstructured objects carry them.
func (c *Config) normalize() {
	if c.ExtraContext != nil {
		c.ExtraContext = store.Normalize(c.ExtraContext).(map[string]any)
	}
	for name, t := range c.ValidationTests {
		if t.ExtraContext != nil {
			t.ExtraContext = store.Normalize(t.ExtraContext).(map[string]any)
		}
		for alias, objs := range t.Fixtures {
			for i, o := range objs {
				if o != nil {
					objs[i] = store.Normalize(o).(map[string]any)
				}
			}
			t.Fixtures[alias] = objs
		}
		c.ValidationTests[name] = t
	}
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks what can be checked without compiling templates: aliases
// are template identifiers, indexBy expressions parse, names are legal file
// names, and every assertion has a known type and target. Templates are
// checked by [Compile].
func (c *Config) Validate() error {
	var errs []error
	for _, alias := range sortedKeys(c.WatchedResources) {
		wr := c.WatchedResources[alias]
		if !identRE.MatchString(alias) {
			errs = append(errs, fmt.Errorf("watchedResources %q: alias must be an identifier ([A-Za-z_][A-Za-z0-9_]*)", alias))
		}
		if wr.APIVersion == "" {
			errs = append(errs, fmt.Errorf("watchedResources %q: apiVersion is empty", alias))
		}
		if wr.Resource == "" {
			errs = append(errs, fmt.Errorf("watchedResources %q: resource is empty", alias))
		}
		for _, e := range wr.IndexBy {
			if _, err := store.ParseIndexExpr(e); err != nil {
				errs = append(errs, fmt.Errorf("watchedResources %q: indexBy: %w", alias, err))
			}
		}
	}
	for _, name := range sortedKeys(c.Snippets) {
		if name == "" || strings.ContainsAny(name, "\x00\n") {
			errs = append(errs, fmt.Errorf("snippets %q: invalid name", name))
		}
	}
	for _, name := range sortedKeys(c.Maps) {
		if err := checkFileName(name); err != nil {
			errs = append(errs, fmt.Errorf("maps %q: %w", name, err))
		}
	}
	for _, name := range sortedKeys(c.Files) {
		if err := checkFileName(name); err != nil {
			errs = append(errs, fmt.Errorf("files %q: %w", name, err))
		}
	}
	for _, name := range sortedKeys(c.SSLCertificates) {
		if err := checkFileName(name); err != nil {
			errs = append(errs, fmt.Errorf("sslCertificates %q: %w", name, err))
		}
	}
	for _, name := range sortedKeys(c.ValidationTests) {
		t := c.ValidationTests[name]
		for alias := range t.Fixtures {
			if _, ok := c.WatchedResources[alias]; !ok {
				errs = append(errs, fmt.Errorf("validationTests %q: fixtures for unknown alias %q", name, alias))
			}
		}
		for i, a := range t.Assertions {
			if err := a.validate(); err != nil {
				errs = append(errs, fmt.Errorf("validationTests %q: assertion %d: %w", name, i, err))
			}
		}
	}
	return errors.Join(errs...)
}

func (a Assertion) validate() error {
	if err := checkTarget(a.Target); err != nil {
		return err
	}
	compile := func(p string) error {
		if _, err := regexp.Compile(p); err != nil {
			return fmt.Errorf("%s: pattern %q: %w", a.Type, p, err)
		}
		return nil
	}
	switch a.Type {
	case AssertContains, AssertNotContains:
		if a.Pattern == "" {
			return fmt.Errorf("%s: pattern is empty", a.Type)
		}
		return compile(a.Pattern)
	case AssertEquals:
		if _, ok := a.Expected.(string); !ok {
			return fmt.Errorf("equals: expected must be a string")
		}
	case AssertMatchCount:
		if a.Pattern == "" {
			return fmt.Errorf("match_count: pattern is empty")
		}
		if _, ok := expectedCount(a.Expected); !ok {
			return fmt.Errorf("match_count: expected must be a non-negative integer")
		}
		return compile(a.Pattern)
	case AssertMatchOrder:
		if len(a.Patterns) == 0 {
			return fmt.Errorf("match_order: patterns is empty")
		}
		for _, p := range a.Patterns {
			if err := compile(p); err != nil {
				return err
			}
		}
	case AssertDeterministic, AssertHAProxyValid:
	default:
		return fmt.Errorf("unknown assertion type %q", a.Type)
	}
	return nil
}

func expectedCount(v any) (int, bool) {
	switch n := v.(type) {
	case int64:
		return int(n), n >= 0
	case int:
		return n, n >= 0
	case float64:
		if n >= 0 && n == float64(int(n)) {
			return int(n), true
		}
	}
	return 0, false
}

// checkTarget accepts the assertion targets listed on [Assertion.Target].
func checkTarget(t string) error {
	switch t {
	case "", TargetConfig, TargetRenderingError, TargetProblems:
		return nil
	}
	kind, name, ok := strings.Cut(t, ":")
	if ok && name != "" && (kind == "map" || kind == "file" || kind == "cert") {
		return nil
	}
	return fmt.Errorf("unknown target %q (want haproxy.cfg, map:<name>, file:<name>, cert:<name>, problems or rendering_error)", t)
}

// checkFileName accepts a clean relative path without "..", whitespace,
// control characters or backslashes, in valid UTF-8.
func checkFileName(name string) error {
	switch {
	case name == "":
		return errors.New("empty file name")
	case len(name) > maxFileNameLen:
		return fmt.Errorf("file name longer than %d bytes", maxFileNameLen)
	case !utf8.ValidString(name):
		return errors.New("file name is not valid UTF-8")
	case strings.HasPrefix(name, "/"):
		return errors.New("file name is absolute")
	}
	for i := 0; i < len(name); i++ {
		// Bytes up to ' ' are the space and the control characters.
		if c := name[i]; c <= ' ' || c == 0x7f || c == '\\' {
			return errors.New("file name contains whitespace, a control character or a backslash")
		}
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return errors.New("file name is not a clean relative path")
		}
	}
	return nil
}

// maxFileNameLen is the longest file name: with the longest directory
// ("general/") the path is at most renderplan.MaxPathLen bytes.
const maxFileNameLen = renderplan.MaxPathLen - len(dirGeneral) - 1

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
