package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// cachedHAProxy is where hack/install-haproxy.sh puts HAProxy 3.4,
// relative to the repository root.
const cachedHAProxy = ".cache/haproxy/3.4/sbin/haproxy"

func validateCommand() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "run the validation tests of the libraries and the config",
		Description: "Merges the stock libraries (--libraries) and the config (-c), compiles the templates and runs\n" +
			"every validationTests entry (the libraries' own tests included). Prints one line per test\n" +
			"and a summary line \"N passed, M failed\"; exits 1 when a test failed. haproxy_valid\n" +
			"assertions run --haproxy -c on the rendered tree.",
		Flags: []cli.Flag{
			configFlag(false),
			librariesFlag(),
			&cli.StringFlag{Name: "haproxy", Usage: "haproxy binary for haproxy_valid (default: " + cachedHAProxy + " if present, else haproxy on PATH)", EnvVars: []string{"HAPTIC_HAPROXY"}},
			&cli.StringSliceFlag{Name: "test", Usage: "run only these tests (repeatable)", EnvVars: []string{"HAPTIC_TESTS"}},
			&cli.BoolFlag{Name: "dump-rendered", Usage: "print every file each test rendered", EnvVars: []string{"HAPTIC_DUMP_RENDERED"}},
			&cli.BoolFlag{Name: "trace-templates", Usage: "print the templates each test executed, nested, with times", EnvVars: []string{"HAPTIC_TRACE_TEMPLATES"}},
		},
		Action: func(c *cli.Context) error {
			cfg, err := loadConfig(c.String("libraries"), c.String("config"))
			if err != nil {
				return err
			}
			engine, err := templating.Compile(cfg)
			if err != nil {
				return err
			}
			opts := templating.TestOptions{
				Checker:     lazyHAProxyChecker(haproxyBinary(c.String("haproxy"))),
				Tests:       c.StringSlice("test"),
				KeepOutputs: c.Bool("dump-rendered"),
			}
			report, runErr := templating.RunTests(c.Context, engine, opts)
			w := c.App.Writer
			for _, t := range report.Tests {
				printTestResult(w, t)
				if c.Bool("dump-rendered") && t.Output != nil {
					for _, f := range t.Output.Files {
						fmt.Fprintf(w, "  --- %s (%s, %d bytes)\n%s", f.Path, f.Kind, len(f.Body), indentText(string(f.Body)))
					}
				}
				if c.Bool("trace-templates") {
					if err := traceTest(c.Context, w, engine, t.Name); err != nil {
						return err
					}
				}
			}
			fmt.Fprintf(w, "%d passed, %d failed\n", report.Passed, report.Failed)
			if report.Failed > 0 {
				return cli.Exit(fmt.Sprintf("%d of %d validation tests failed", report.Failed, report.Passed+report.Failed), 1)
			}
			return runErr
		},
	}
}

// haproxyBinary picks the haproxy executable: the flag, else the cached
// 3.4 install when present, else "haproxy" from PATH.
func haproxyBinary(flag string) string {
	if flag != "" {
		if strings.ContainsRune(flag, '/') {
			if abs, err := filepath.Abs(flag); err == nil {
				return abs
			}
		}
		return flag
	}
	if abs, err := filepath.Abs(cachedHAProxy); err == nil {
		if _, err := os.Stat(abs); err == nil {
			return abs // absolute: the checker runs haproxy in a scratch dir
		}
	}
	return "haproxy"
}

func printTestResult(w io.Writer, t templating.TestResult) {
	status := "PASS"
	if !t.Passed {
		status = "FAIL"
	}
	fmt.Fprintf(w, "%s %s", status, t.Name)
	if t.Description != "" {
		fmt.Fprintf(w, ": %s", t.Description)
	}
	fmt.Fprintln(w)
	if t.Passed {
		return
	}
	if t.RenderError != "" {
		fmt.Fprintf(w, "  render error: %s\n", t.RenderError)
	}
	for _, a := range t.Assertions {
		if a.Passed {
			continue
		}
		target := a.Target
		if target == "" {
			target = templating.TargetConfig
		}
		fmt.Fprintf(w, "  assertion %d (%s on %s", a.Index, a.Type, target)
		if a.Description != "" {
			fmt.Fprintf(w, ", %s", a.Description)
		}
		fmt.Fprintf(w, "): %s\n", a.Message)
	}
	for _, p := range t.Problems {
		fmt.Fprintf(w, "  problem: %s\n", p)
	}
}

// traceTest renders the named test's fixtures again with a trace and
// prints each template with its depth, wall time and output size.
func traceTest(ctx context.Context, w io.Writer, e *templating.Engine, name string) error {
	t := e.Config().ValidationTests[name]
	st, err := store.NewMemory(e.Config().WatchedResources)
	if err != nil {
		return err
	}
	for _, alias := range sortedKeys(t.Fixtures) {
		for _, obj := range t.Fixtures[alias] {
			if err := st.Add(alias, obj); err != nil {
				return fmt.Errorf("trace %s: %w", name, err)
			}
		}
	}
	var starts []time.Time
	trace := func(ev templating.TraceEvent) {
		if !ev.End {
			starts = append(starts, time.Now())
			return
		}
		d := time.Since(starts[len(starts)-1])
		starts = starts[:len(starts)-1]
		fmt.Fprintf(w, "  trace %s%s %s %dB\n", strings.Repeat("  ", ev.Depth), ev.Template, d.Round(time.Microsecond), ev.Bytes)
	}
	_, _, err = e.Render(ctx, st.Snapshot(), templating.RenderOptions{ExtraContext: t.ExtraContext, Trace: trace})
	if err != nil {
		fmt.Fprintf(w, "  trace: render error: %v\n", err)
	}
	return nil
}

func indentText(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l == "" {
			continue
		}
		b.WriteString("    ")
		b.WriteString(l)
	}
	if !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// lazyHAProxyChecker is rendergate's haproxy -c checker, made at the first
// haproxy_valid assertion, so configs without one validate where no
// HAProxy is installed.
func lazyHAProxyChecker(binary string) renderplan.Checker {
	var (
		once    sync.Once
		checker *rendergate.HAProxyChecker
		err     error
	)
	return renderplan.CheckerFunc(func(ctx context.Context, out *renderplan.Output) error {
		once.Do(func() { checker, err = rendergate.NewHAProxyChecker(rendergate.Config{Binary: binary}) })
		if err != nil {
			return err
		}
		return checker.Check(ctx, out)
	})
}
