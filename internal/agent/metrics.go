package agent

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the agent's Prometheus metrics, all named haptic_agent_*.
type metrics struct {
	applies       *prometheus.CounterVec
	applyDuration *prometheus.HistogramVec
	reloads       *prometheus.CounterVec
	ops           *prometheus.CounterVec
	pending       prometheus.Gauge
	drift         prometheus.Counter
	lkgAge        prometheus.GaugeFunc
}

func newMetrics(reg prometheus.Registerer, lkgAge func() float64) (*metrics, error) {
	m := &metrics{
		applies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haptic_agent_applies_total",
			Help: "Applies by mode and result (ack, or the NACK stage).",
		}, []string{"mode", "result"}),
		applyDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "haptic_agent_apply_duration_seconds",
			Help:    "Duration of an apply, by mode.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"mode"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haptic_agent_reloads_total",
			Help: "HAProxy reloads through the master socket, by result (ok, failed, verify_failed).",
		}, []string{"result"}),
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haptic_agent_runtime_ops_total",
			Help: "Runtime ops run on the worker socket, by kind and result (ok, failed, deferred).",
		}, []string{"kind", "result"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "haptic_agent_pending_deletes",
			Help: "Deferred server and backend deletes not finished yet.",
		}),
		drift: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "haptic_agent_drift_events_total",
			Help: "Times the file tree was found to differ from the applied manifest.",
		}),
		lkgAge: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "haptic_agent_last_known_good_age_seconds",
			Help: "Age of the last-known-good set; 0 when there is none.",
		}, lkgAge),
	}
	for _, c := range []prometheus.Collector{m.applies, m.applyDuration, m.reloads, m.ops, m.pending, m.drift, m.lkgAge} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
