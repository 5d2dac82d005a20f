package controller

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// durationBuckets span 0.5 ms to ~16 s, doubling.
var durationBuckets = prometheus.ExponentialBuckets(0.0005, 2, 16)

// metrics are the loop's Prometheus metrics. They are registered once, on
// the Registerer the loop is given; the collectors are safe for concurrent
// use.
type metrics struct {
	reconciliations    prometheus.Counter
	reconcileErrors    *prometheus.CounterVec // stage: render | dispatch
	reconcileDuration  prometheus.Histogram
	renderDuration     prometheus.Histogram
	renderProblems     prometheus.Gauge
	sourceProblems     prometheus.Counter
	gateVerdicts       *prometheus.CounterVec // verdict
	gateLatched        prometheus.Gauge
	applies            *prometheus.CounterVec // pod, mode
	applyFailures      *prometheus.CounterVec // pod, stage
	deploymentDuration prometheus.Histogram
	reloads            *prometheus.CounterVec // pod
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		reconciliations: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "haptic_reconciliation_total",
			Help: "Reconciliations run: render, gate and dispatch of the current objects.",
		}),
		reconcileErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haptic_reconciliation_errors_total",
			Help: "Reconciliations that failed, by stage (render: a template error; dispatch: at least one pod failed).",
		}, []string{"stage"}),
		reconcileDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "haptic_reconciliation_duration_seconds",
			Help:    "Time from the start of a reconciliation to the last pod's answer.",
			Buckets: durationBuckets,
		}),
		renderDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "haptic_render_duration_seconds",
			Help:    "Time of one full render of the templates.",
			Buckets: durationBuckets,
		}),
		renderProblems: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "haptic_render_problems",
			Help: "Problems with objects (left out of the configuration) in the last successful render.",
		}),
		sourceProblems: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "haptic_source_problems_total",
			Help: "Problems reading objects (a manifest that does not parse, an object without a name); the last good objects are kept.",
		}),
		gateVerdicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haptic_gate_verdicts_total",
			Help: "Validation verdicts of the render gate (haproxy -c), by verdict: pass, refused, unknown.",
		}, []string{"verdict"}),
		gateLatched: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "haptic_gate_latched",
			Help: "1 while the gate validates before dispatch because a plan was refused, else 0.",
		}),
		applies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haptic_deploy_apply_total",
			Help: "Applies acknowledged by an agent, by pod and mode (runtime, file_only, reload, noop, revert_lkg).",
		}, []string{"pod", "mode"}),
		applyFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haptic_deploy_apply_failures_total",
			Help: "Applies an agent refused or that could not reach it, by pod and stage (the NACK stage, or state / transport).",
		}, []string{"pod", "stage"}),
		deploymentDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "haptic_deployment_duration_seconds",
			Help:    "Time of one pod's deployment: state, diff and apply.",
			Buckets: durationBuckets,
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haptic_haproxy_reloads_total",
			Help: "HAProxy reloads the agents reported performing during applies, by pod.",
		}, []string{"pod"}),
	}
	for _, c := range []prometheus.Collector{
		m.reconciliations, m.reconcileErrors, m.reconcileDuration, m.renderDuration, m.renderProblems,
		m.sourceProblems, m.gateVerdicts, m.gateLatched, m.applies, m.applyFailures, m.deploymentDuration, m.reloads,
	} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, fmt.Errorf("register controller metrics: %w (one loop per registry)", err)
			}
			return nil, fmt.Errorf("register controller metrics: %w", err)
		}
	}
	return m, nil
}
