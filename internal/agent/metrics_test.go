package agent_test

import (
	"context"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/haptic-io/haptic/internal/agent"
)

// metricValue sums the samples of the family name whose labels include
// every pair in labels.
func metricValue(t *testing.T, a *agent.Agent, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := a.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue metric
				}
			}
			sum += value(m)
		}
	}
	return sum
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

func TestMetricsCountAppliesReloadsOpsAndDrift(t *testing.T) {
	s := startSite(t, "3.4")
	a := s.newAgent(t, nil)
	add := addShopRoute(t, s, a)
	prev := add.prev
	mustApply(t, a, add.req)
	_, _ = a.Apply(context.Background(), fullRequest(prev, 0)) // fence NACK
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"haptic_agent_applies_total", map[string]string{"mode": "auto", "result": "ack"}, 2},
		{"haptic_agent_applies_total", map[string]string{"result": "fence"}, 1},
		{"haptic_agent_apply_duration_seconds", nil, 3},
		{"haptic_agent_reloads_total", map[string]string{"result": "ok"}, 1},
		{"haptic_agent_runtime_ops_total", map[string]string{"kind": "backend.add", "result": "ok"}, 1},
		{"haptic_agent_pending_deletes", nil, 0},
		{"haptic_agent_drift_events_total", nil, 0},
	} {
		if got := metricValue(t, a, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := metricValue(t, a, "haptic_agent_last_known_good_age_seconds", nil); got <= 0 {
		t.Errorf("last-known-good age %v, want > 0", got)
	}
}
