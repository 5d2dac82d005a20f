package templating

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/go-multierror"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
)

// TestOptions select and equip a [RunTests] run.
type TestOptions struct {
	// Checker runs haproxy_valid assertions; nil makes them fail with
	// "no checker configured". rendergate.HAProxyChecker is the real one.
	Checker renderplan.Checker
	// Tests names the tests to run; empty runs all, in name order. An
	// unknown name is an error.
	Tests []string
	// KeepOutputs keeps each test's rendered output in its result
	// (for --dump-rendered).
	KeepOutputs bool
	// Trace, when set, receives the template events of every render, with
	// the test's name (for --trace-templates).
	Trace func(test string, ev TraceEvent)
}

// TestReport is the outcome of [RunTests].
type TestReport struct {
	Tests          []TestResult
	Passed, Failed int
}

// TestResult is the outcome of one validation test.
type TestResult struct {
	Name        string
	Description string
	Passed      bool
	// RenderError is the render's error text, "" when it rendered.
	RenderError string
	Problems    []Problem
	Assertions  []AssertionResult
	// Output is set when TestOptions.KeepOutputs is and the render worked.
	Output *renderplan.Output
}

// AssertionResult is the outcome of one assertion.
type AssertionResult struct {
	// Index is the assertion's position in the test, from 0.
	Index       int
	Type        AssertionType
	Target      string
	Description string
	Passed      bool
	// Message says why it failed.
	Message string
}

// RunTests runs the validation tests of the engine's config: each test's
// fixtures go into a fresh [store.Memory], the test's extraContext overrides
// the config's, and every assertion is checked. The report lists every
// test; the error is nil when all passed and otherwise aggregates one
// error per failed assertion (go-multierror), or reports why tests could
// not run.
func RunTests(ctx context.Context, e *Engine, opts TestOptions) (TestReport, error) {
	cfg := e.Config()
	names := opts.Tests
	if len(names) == 0 {
		names = sortedKeys(cfg.ValidationTests)
	}
	var report TestReport
	var errs *multierror.Error
	for _, name := range names {
		t, ok := cfg.ValidationTests[name]
		if !ok {
			return report, fmt.Errorf("run tests: no validation test %q", name)
		}
		if err := ctx.Err(); err != nil {
			return report, fmt.Errorf("run tests: %w", err)
		}
		res := runTest(ctx, e, name, t, opts)
		report.Tests = append(report.Tests, res)
		if res.Passed {
			report.Passed++
			continue
		}
		report.Failed++
		for _, a := range res.Assertions {
			if !a.Passed {
				errs = multierror.Append(errs, fmt.Errorf("test %s: assertion %d (%s %s): %s", name, a.Index, a.Type, targetOrDefault(a.Target), a.Message))
			}
		}
	}
	return report, errs.ErrorOrNil()
}

func targetOrDefault(t string) string {
	if t == "" {
		return TargetConfig
	}
	return t
}

// fixtureStore builds a store from a test's fixtures, inserting the objects
// of each alias in order or in reverse.
func fixtureStore(cfg *Config, t ValidationTest, reverse bool) (*store.Memory, error) {
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		return nil, err
	}
	for _, alias := range sortedKeys(t.Fixtures) {
		objs := t.Fixtures[alias]
		for i := range objs {
			o := objs[i]
			if reverse {
				o = objs[len(objs)-1-i]
			}
			if err := st.Add(alias, o); err != nil {
				return nil, fmt.Errorf("fixtures: %w", err)
			}
		}
	}
	return st, nil
}

type testRender struct {
	out      *renderplan.Output
	problems []Problem
	err      error
}

func renderTest(ctx context.Context, e *Engine, name string, t ValidationTest, reverse bool, trace func(string, TraceEvent)) testRender {
	st, err := fixtureStore(e.Config(), t, reverse)
	if err != nil {
		return testRender{err: err}
	}
	opts := RenderOptions{ExtraContext: t.ExtraContext}
	if trace != nil {
		opts.Trace = func(ev TraceEvent) { trace(name, ev) }
	}
	out, problems, err := e.Render(ctx, st.Snapshot(), opts)
	return testRender{out: out, problems: problems, err: err}
}

func runTest(ctx context.Context, e *Engine, name string, t ValidationTest, opts TestOptions) TestResult {
	res := TestResult{Name: name, Description: t.Description, Passed: true}
	first := renderTest(ctx, e, name, t, false, opts.Trace)
	if first.err != nil {
		res.RenderError = first.err.Error()
	}
	res.Problems = first.problems
	if opts.KeepOutputs {
		res.Output = first.out
	}
	for i, a := range t.Assertions {
		ar := AssertionResult{Index: i, Type: a.Type, Target: a.Target, Description: a.Description}
		ar.Message = checkAssertion(ctx, e, name, t, a, first, opts.Checker)
		ar.Passed = ar.Message == ""
		if !ar.Passed {
			res.Passed = false
		}
		res.Assertions = append(res.Assertions, ar)
	}
	return res
}

// checkAssertion returns "" when a holds, else why not.
func checkAssertion(ctx context.Context, e *Engine, name string, t ValidationTest, a Assertion, r testRender, checker renderplan.Checker) string {
	target := targetOrDefault(a.Target)
	switch a.Type {
	case AssertDeterministic:
		if r.err != nil {
			return "render failed: " + r.err.Error()
		}
		again := renderTest(ctx, e, name, t, true, nil)
		if again.err != nil {
			return "second render failed: " + again.err.Error()
		}
		return diffOutputs(r.out, again.out)
	case AssertHAProxyValid:
		if r.err != nil {
			return "render failed: " + r.err.Error()
		}
		if checker == nil {
			return "no checker configured"
		}
		if err := checker.Check(ctx, r.out); err != nil {
			return err.Error()
		}
		return ""
	}
	content, msg := targetContent(target, r)
	if msg != "" {
		return msg
	}
	switch a.Type {
	case AssertContains:
		if !regexp.MustCompile(a.Pattern).MatchString(content) {
			return fmt.Sprintf("pattern %q not found", a.Pattern)
		}
	case AssertNotContains:
		if loc := regexp.MustCompile(a.Pattern).FindStringIndex(content); loc != nil {
			return fmt.Sprintf("pattern %q found: %q", a.Pattern, content[loc[0]:loc[1]])
		}
	case AssertEquals:
		if want := a.Expected.(string); content != want {
			return fmt.Sprintf("content differs: got %q, want %q", clip(content), clip(want))
		}
	case AssertMatchCount:
		want, _ := expectedCount(a.Expected)
		if got := len(regexp.MustCompile(a.Pattern).FindAllStringIndex(content, -1)); got != want {
			return fmt.Sprintf("pattern %q matched %d times, want %d", a.Pattern, got, want)
		}
	case AssertMatchOrder:
		rest, offset := content, 0
		for _, p := range a.Patterns {
			loc := regexp.MustCompile(p).FindStringIndex(rest)
			if loc == nil {
				return fmt.Sprintf("pattern %q not found after offset %d", p, offset)
			}
			rest, offset = rest[loc[1]:], offset+loc[1]
		}
	default:
		return fmt.Sprintf("unknown assertion type %q", a.Type)
	}
	return ""
}

// targetContent returns the text an assertion looks at, or why there is
// none.
func targetContent(target string, r testRender) (string, string) {
	switch target {
	case TargetRenderingError:
		if r.err == nil {
			return "", ""
		}
		return r.err.Error(), ""
	case TargetProblems:
		var b strings.Builder
		for _, p := range r.problems {
			b.WriteString(p.String())
			b.WriteByte('\n')
		}
		if r.err != nil {
			return "", "render failed: " + r.err.Error()
		}
		return b.String(), ""
	}
	if r.err != nil {
		return "", "render failed: " + r.err.Error()
	}
	path := target
	if kind, name, ok := strings.Cut(target, ":"); ok {
		switch kind {
		case "map":
			path = dirMaps + "/" + name
		case "file":
			path = dirGeneral + "/" + name
		case "cert":
			path = dirCerts + "/" + name
		}
	}
	for _, f := range r.out.Files {
		if f.Path == path {
			return string(f.Body), ""
		}
	}
	return "", fmt.Sprintf("no file %s in the output", path)
}

// diffOutputs returns "" when two outputs are byte-identical with the same
// plan ID, else the first difference.
func diffOutputs(a, b *renderplan.Output) string {
	if len(a.Files) != len(b.Files) {
		return fmt.Sprintf("renders differ: %d files, then %d", len(a.Files), len(b.Files))
	}
	for i := range a.Files {
		if a.Files[i].Path != b.Files[i].Path {
			return fmt.Sprintf("renders differ: file %s, then %s", a.Files[i].Path, b.Files[i].Path)
		}
		if !bytes.Equal(a.Files[i].Body, b.Files[i].Body) {
			return fmt.Sprintf("renders differ: %s", a.Files[i].Path)
		}
	}
	if a.ID() != b.ID() {
		return fmt.Sprintf("renders differ: plan ID %s, then %s", a.ID(), b.ID())
	}
	return ""
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
