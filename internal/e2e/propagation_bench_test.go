package e2e_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkIngressPropagationThroughTheAPIServer measures the product in
// a cluster as the public gateway-api-bench probe does: routes created
// one right after another through the apiserver, each polled every
// millisecond through an HAProxy pod until its first 200. It reports the
// p50, p99 and max of "create returned → first 200", the time from the
// controller's start to its first served route, and the controller's
// resident memory (now and peak) with HAPTIC_BENCH_INGRESSES routes
// (default 100) in place.
//
//	go test -run '^$' -bench IngressPropagation -benchtime 1x ./internal/e2e/
func BenchmarkIngressPropagationThroughTheAPIServer(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("HAPTIC_BENCH_INGRESSES")); err == nil && v > 0 {
		n = v
	}
	for b.Loop() {
		benchPropagation(b, n)
	}
}

func benchPropagation(b *testing.B, n int) {
	tb := testing.TB(b)
	e := startProduct(tb, 1)
	e.deployEcho(e.ctx, tb, e.app, "echo")
	start := time.Now()
	ctl := e.startController("controller-0")
	e.createIngress(tb, "first", "first.example", "echo")
	e.serveEverywhere(tb, "first.example", 200)
	firstServed := time.Since(start)
	pod := e.pods(tb)[0]
	url := "http://" + pod.Status.PodIP + "/"
	lat := make([]time.Duration, 0, n)
	errs := 0
	for i := range n {
		host := fmt.Sprintf("r%d.example", i)
		ing := echoIngress(e.app, host, "echo")
		ing.Name = fmt.Sprintf("r%d", i)
		if _, err := e.Client.NetworkingV1().Ingresses(e.app).Create(e.ctx, ing, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		for {
			code, _, err := get(e.ctx, url, host)
			if err == nil && code == 200 {
				break
			}
			if err != nil || code != 404 {
				errs++
			}
			if time.Since(t0) > 30*time.Second {
				b.Fatalf("route %s not served after 30 s (last %d %v)", host, code, err)
			}
			time.Sleep(time.Millisecond)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50_ms")
	b.ReportMetric(q(0.99), "p99_ms")
	b.ReportMetric(q(1), "max_ms")
	b.ReportMetric(float64(errs), "errors")
	b.ReportMetric(float64(firstServed.Milliseconds()), "first_served_ms")
	rss, hwm := procMemory(ctl.cmd.Process.Pid)
	b.ReportMetric(float64(rss)/(1<<20), "controller_rss_MiB")
	b.ReportMetric(float64(hwm)/(1<<20), "controller_peak_rss_MiB")
}

// procMemory returns VmRSS and VmHWM of pid in bytes.
func procMemory(pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = v << 10
		case "VmHWM:":
			hwm = v << 10
		}
	}
	return rss, hwm
}
