package libraries

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/haptic-io/haptic/templating"
)

//go:embed *.yaml
var files embed.FS

// Names lists the stock libraries, sorted.
func Names() []string {
	entries, err := fs.ReadDir(files, ".")
	if err != nil { // cannot happen with an embed.FS root
		return nil
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Source returns the YAML text of the named library.
func Source(name string) ([]byte, error) {
	b, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("library %q: unknown (have %s)", name, strings.Join(Names(), ", "))
	}
	return b, nil
}

// Load parses the named libraries, in the order given; merge them with
// [templating.Merge] before the operator's config, which goes last.
func Load(names ...string) ([]*templating.Config, error) {
	cfgs := make([]*templating.Config, 0, len(names))
	for _, name := range names {
		b, err := Source(name)
		if err != nil {
			return nil, err
		}
		cfg, err := templating.ParseConfig(b)
		if err != nil {
			return nil, fmt.Errorf("library %q: %w", name, err)
		}
		cfgs = append(cfgs, cfg)
	}
	return cfgs, nil
}

// ParseList parses a comma-separated list of library names as the
// --libraries flag takes it: "base,ingress"; "none" (or an empty string)
// means no library. Every name must be a stock library and appear once.
func ParseList(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return nil, nil
	}
	known := map[string]bool{}
	for _, n := range Names() {
		known[n] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		switch {
		case p == "none":
			return nil, fmt.Errorf("libraries %q: none cannot be combined with other names", s)
		case !known[p]:
			return nil, fmt.Errorf("libraries %q: unknown library %q (have %s)", s, p, strings.Join(Names(), ", "))
		case seen[p]:
			return nil, fmt.Errorf("libraries %q: %q listed twice", s, p)
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}
