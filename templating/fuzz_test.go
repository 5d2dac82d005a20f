package templating_test

import (
	"testing"

	"github.com/haptic-io/haptic/templating"
)

// FuzzParseConfig: parsing never panics, and a config that parses also
// compiles or fails with an error (never a panic).
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(resourcesYAML + "haproxyConfig: {template: \"{{ range .resources.services.List }}{{ .metadata.name }}{{ end }}\"}\n"))
	f.Add([]byte("validationTests: {t: {assertions: [{type: match_count, pattern: a, expected: 2}]}}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := templating.ParseConfig(b)
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("parsed config does not validate: %v", err)
		}
		_, _ = templating.Compile(cfg)
		_ = templating.Merge(cfg, cfg)
	})
}
