package e2e_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// sumMetric sums the samples of the metric name in a Prometheus text
// exposition.
func sumMetric(text, name string) (float64, error) {
	sum, found := 0.0, false
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(fields) == 0 {
			return 0, fmt.Errorf("%s: no value in %q", name, line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		sum, found = sum+v, true
	}
	if !found {
		return 0, fmt.Errorf("no %s in the exposition", name)
	}
	return sum, nil
}

func TestSumMetricAddsEverySampleOfTheNameAlone(t *testing.T) {
	text := `# HELP haptic_reconciliation_total Reconciliations run.
# TYPE haptic_reconciliation_total counter
haptic_reconciliation_total{gateway="shop/a"} 3
haptic_reconciliation_total{gateway="shop/b"} 4.5
haptic_reconciliation_total_other 100
haptic_reconciliation_errors_total{stage="render"} 7
`
	if got, err := sumMetric(text, "haptic_reconciliation_total"); err != nil || got != 7.5 {
		t.Errorf("sumMetric = %v, %v; want 7.5", got, err)
	}
	if got, err := sumMetric("haptic_reconciliation_total 2\n", "haptic_reconciliation_total"); err != nil || got != 2 {
		t.Errorf("unlabelled: sumMetric = %v, %v; want 2", got, err)
	}
	if _, err := sumMetric("go_goroutines 12\n", "haptic_reconciliation_total"); err == nil {
		t.Error("a missing metric summed to a value")
	}
}
