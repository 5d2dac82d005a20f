package minicluster_test

import (
	"testing"

	"github.com/haptic-io/haptic/internal/testenv/minicluster"
)

// BenchmarkClusterStart measures a cold start (empty etcd) until /readyz and
// the default ServiceAccount, and reports each process's RSS right after.
func BenchmarkClusterStart(b *testing.B) {
	minicluster.RequireT(b)
	for b.Loop() {
		c, _ := minicluster.StartT(b)
		b.StopTimer()
		for name, rss := range c.RSS() {
			b.ReportMetric(float64(rss)/(1<<20), name+"-MiB")
		}
		c.Stop()
		b.StartTimer()
	}
}
