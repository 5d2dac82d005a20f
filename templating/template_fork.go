//go:build !stdtemplate

package templating

import "github.com/haptic-io/haptic/templating/internal/gotemplate"

// The engine executes on internal/gotemplate, the text/template fork with
// fast paths for JSON-shaped data. Building with -tags stdtemplate swaps in
// the standard library's text/template (template_std.go) for an A/B
// comparison; no other file names either package.

// textTemplate is a parsed template.
type textTemplate = gotemplate.Template

// funcMap maps template function names to functions.
type funcMap = gotemplate.FuncMap

// newTextTemplate allocates a new, undefined template with the given name.
func newTextTemplate(name string) *textTemplate { return gotemplate.New(name) }
