package cluster

import (
	"context"
	"testing"

	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
	"github.com/haptic-io/haptic/templating/fixtures"
)

// TestSparseTreeChecksLikeTheFullTree: on configurations that pass and
// on ones HAProxy refuses for each reason a left-out backend could hide
// (a reference to it from the kept text, server keywords, a structural
// backend), haproxy -c of the sparse tree gives the full tree's verdict.
func TestSparseTreeChecksLikeTheFullTree(t *testing.T) {
	checker := testChecker(t)
	objs := fixtures.GenerateIngressMix(50)
	for name, tc := range map[string]struct {
		snippets map[string]string
		pass     bool
		minLeft  int // backends the sparse tree must leave out
	}{
		"the stock libraries":                {pass: true, minLeft: 45},
		"a static use_backend to one":        {snippets: map[string]string{"base-frontend-http-zz": "    use_backend be_ns-3_app-3_http if { path /x }\n"}, pass: true, minLeft: 45},
		"a use_backend to none":              {snippets: map[string]string{"base-frontend-http-zz": "    use_backend be_nope if { path /x }\n"}},
		"tracking a server of one":           {snippets: map[string]string{"base-sections-zz": "backend tracker from haptic-http\n    server s 10.9.9.9:80 track be_ns-3_app-3_http/app-3-0\n"}},
		"a deny on a bad network":            {snippets: map[string]string{"base-frontend-http-zz": "    http-request deny if { src 10.0.0.0/33 }\n"}},
		"a server keyword HAProxy refuses":   {snippets: map[string]string{"base-backends-zz": `{{ backend (dict "name" "be_kw" "servers" (list (dict "name" "s1" "address" "10.9.9.9" "port" 80 "keywords" (list "bogus-keyword")))) }}` + "\n"}},
		"a structural backend with bad body": {snippets: map[string]string{"base-backends-zz": `{{ backend (dict "name" "be_body" "body" (list "bogus-directive on")) }}` + "\n"}},
	} {
		t.Run(name, func(t *testing.T) {
			spec := testSpec()
			sn := spec["snippets"].(map[string]any)
			for k, v := range tc.snippets {
				sn[k] = map[string]any{"template": v}
			}
			s, err := ParseSpec(spec, "haptic", 1)
			if err != nil {
				t.Fatal(err)
			}
			engine, err := templating.Compile(s.Templates)
			if err != nil {
				t.Fatal(err)
			}
			st, err := store.NewMemory(s.Templates.WatchedResources)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.AddObjects(objs...); err != nil {
				t.Fatal(err)
			}
			out, _, err := engine.Render(context.Background(), st.Snapshot(), templating.RenderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sparse, left := sparseTree(out)
			full := checker.Check(context.Background(), out)
			got := checker.Check(context.Background(), sparse)
			if rendergate.VerdictOf(full) != rendergate.VerdictOf(got) {
				t.Fatalf("full tree: %v; sparse tree (%d backends left out): %v", full, left, got)
			}
			if (full == nil) != tc.pass {
				t.Fatalf("full tree: %v, want pass=%v", full, tc.pass)
			}
			if left < tc.minLeft {
				t.Errorf("left out %d backends, want at least %d", left, tc.minLeft)
			}
			t.Logf("left out %d of %d backends; verdict %v", left, len(out.Plan.Backends), rendergate.VerdictOf(full))
			if len(sparse.Files) != len(out.Files) {
				t.Errorf("sparse tree has %d files, want %d", len(sparse.Files), len(out.Files))
			}
		})
	}
}
