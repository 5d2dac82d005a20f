//go:build stdtemplate

package templating

import "text/template"

// With -tags stdtemplate the engine executes on the standard library's
// text/template instead of internal/gotemplate; see template_fork.go.

// textTemplate is a parsed template.
type textTemplate = template.Template

// funcMap maps template function names to functions.
type funcMap = template.FuncMap

// newTextTemplate allocates a new, undefined template with the given name.
func newTextTemplate(name string) *textTemplate { return template.New(name) }
