package cluster

import "github.com/prometheus/client_golang/prometheus"

// admissionMetrics are the webhook's: reviews by resource and verdict,
// and the time of a review and of its render and haproxy -c.
type admissionMetrics struct {
	reviews  *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newAdmissionMetrics(reg prometheus.Registerer) *admissionMetrics {
	m := &admissionMetrics{
		reviews: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "haptic_admission_reviews_total",
			Help: "Admission reviews answered, by resource and verdict (allowed, refused, error: not judged, the failure policy decided).",
		}, []string{"resource", "verdict"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "haptic_admission_duration_seconds",
			Help:    "Time of admission reviews (stage total) and of their candidate renders (render) and haproxy -c checks (check).",
			Buckets: []float64{.002, .005, .01, .02, .05, .1, .15, .25, .5, 1, 2.5, 5, 10},
		}, []string{"stage"}),
	}
	reg.MustRegister(m.reviews, m.duration)
	return m
}
