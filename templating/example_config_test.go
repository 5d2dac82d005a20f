package templating_test

import (
	"context"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// The worked example of the package documentation runs its own validation
// tests; haproxy_valid goes through a checker that only checks the plan
// here (integration_test.go runs the real haproxy -c).
func TestWorkedExampleConfigPassesItsValidationTests(t *testing.T) {
	cfg, err := templating.LoadConfig("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	checker := renderplan.CheckerFunc(func(_ context.Context, out *renderplan.Output) error { return out.Plan.Validate() })
	report, err := templating.RunTests(context.Background(), e, templating.TestOptions{Checker: checker})
	if err != nil {
		t.Fatalf("validation tests: %v", err)
	}
	if report.Passed != 4 {
		t.Fatalf("passed %d tests, want 4", report.Passed)
	}
}
