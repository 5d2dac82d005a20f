package controller

import (
	"maps"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestAStatusOnlyUpdateOfAQuietAliasIsFiledWithoutARender: the echo of a
// status HAPTIC wrote costs no reconciliation; the same update of an
// alias not named in QuietStatus, or a spec change, does.
func TestAStatusOnlyUpdateOfAQuietAliasIsFiledWithoutARender(t *testing.T) {
	for _, c := range []struct {
		name  string
		quiet []string
		want  float64 // reconciliations after the listing's
	}{
		{"quiet alias", []string{"routes"}, 1},
		{"other alias", []string{"ingresses"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, agent, reg := newChanSource(), newFakeAgent(), prometheus.NewRegistry()
			l, err := New(Config{
				Source:      src,
				QuietStatus: c.quiet,
				Engine:      testEngine(t),
				Targets:     func() []Target { return []Target{{Name: "haproxy-0", Agent: agent}} },
				Log:         testLogger(t),
				Registerer:  reg,
			})
			if err != nil {
				t.Fatal(err)
			}
			runLoop(t, l)
			a := route("a", "a.example", "127.0.0.1", 9001)
			a["metadata"].(map[string]any)["resourceVersion"] = "1"
			src.send(t, Event{Changes: []Change{upsert(a)}, Initialized: true})
			agent.next(t)
			listed := metricValue(t, reg, "haptic_reconciliation_total")

			withStatus := maps.Clone(a)
			withStatus["metadata"] = map[string]any{"namespace": "default", "name": "a", "resourceVersion": "2"}
			withStatus["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "10.0.0.1"}}}}
			src.send(t, Event{Changes: []Change{upsert(withStatus)}})
			if c.want > 1 {
				// The update's own reconciliation, before the spec change
				// can share it.
				eventually(t, "the status update to be reconciled", func() bool {
					return metricValue(t, reg, "haptic_reconciliation_total")-listed == 1
				})
			}
			// A spec change after it: its apply says the update before it
			// was taken.
			src.send(t, Event{Changes: []Change{upsert(route("b", "b.example", "127.0.0.1", 9002))}})
			agent.next(t)
			eventually(t, "the reconciliations to be counted", func() bool {
				return metricValue(t, reg, "haptic_reconciliation_total")-listed == c.want
			})
			got, ok := l.store.Get("routes", "default", "a")
			if !ok || got["status"] == nil {
				t.Errorf("the store holds %v; want the object with its new status", got)
			}
		})
	}
}

func TestOnlyStatusDiffers(t *testing.T) {
	obj := func(rv, host string, status any) map[string]any {
		o := map[string]any{"kind": "Ingress", "metadata": map[string]any{"name": "a", "resourceVersion": rv, "labels": map[string]any{"x": "y"}},
			"spec": map[string]any{"host": host}}
		if status != nil {
			o["status"] = status
		}
		return o
	}
	lb := map[string]any{"loadBalancer": map[string]any{}}
	for _, c := range []struct {
		name      string
		prev, cur map[string]any
		want      bool
	}{
		{"status added, new resourceVersion", obj("1", "a", nil), obj("2", "a", lb), true},
		{"status removed", obj("1", "a", lb), obj("2", "a", nil), true},
		{"spec changed too", obj("1", "a", nil), obj("2", "b", lb), false},
		{"a label changed", obj("1", "a", nil), func() map[string]any {
			o := obj("2", "a", lb)
			o["metadata"].(map[string]any)["labels"] = map[string]any{"x": "z"}
			return o
		}(), false},
		{"a top-level field added", obj("1", "a", nil), func() map[string]any { o := obj("2", "a", nil); o["data"] = "x"; return o }(), false},
		{"a top-level field removed", func() map[string]any { o := obj("1", "a", nil); o["data"] = "x"; return o }(), obj("2", "a", nil), false},
		{"identical", obj("1", "a", lb), obj("1", "a", lb), true},
	} {
		if got := OnlyStatusDiffers(c.prev, c.cur); got != c.want {
			t.Errorf("%s: OnlyStatusDiffers = %v, want %v", c.name, got, c.want)
		}
	}
}
