package haproxysock_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/haproxysock"
)

// BenchmarkMapLoad10000 loads 10,000 map entries into HAProxy 3.4 three
// ways in the same run: pipelined "add map" lines on one connection,
// payload chunks on one connection, and writing the map file plus one
// master reload. It reports each in ms/op and the reload's cost relative
// to the runtime API. Reference (facts §5): 25–84 ms pipelined, 4–25 ms
// payload, ~100 ms via reload.
func BenchmarkMapLoad10000(b *testing.B) {
	if testing.Short() {
		b.Skip("benchmark needs real HAProxy 3.4; skipped in -short")
	}
	e := startEnv(b, "3.4")
	build := mustBuild(b)
	dir := e.inst.Dir
	// Every iteration starts on a fresh worker: the reload that ends it
	// drops the runtime entries, so bench1.map and bench2.map are empty.
	pipeMap, payloadMap := dir+"/maps/bench1.map", dir+"/maps/bench2.map"
	entries := hostEntries(10000, "be_app")
	lines := make([]haproxysock.Command, len(entries))
	var file strings.Builder
	for i, en := range entries {
		lines[i] = build(haproxysock.AddMap(pipeMap, en.Key, en.Value))
		fmt.Fprintf(&file, "%s %s\n", en.Key, en.Value)
	}
	payload := build(haproxysock.AddMapPayload(payloadMap, entries))

	var pipelined, chunked, reload time.Duration
	for b.Loop() {
		t0 := time.Now()
		e.run(b, lines...)
		pipelined += time.Since(t0)

		t0 = time.Now()
		e.run(b, payload)
		chunked += time.Since(t0)

		b.StopTimer()
		if n1, n2 := e.mapCount(b, pipeMap), e.mapCount(b, payloadMap); n1 != 10000 || n2 != 10000 {
			b.Fatalf("maps hold %d and %d entries, want 10000", n1, n2)
		}
		b.StartTimer()

		t0 = time.Now()
		e.inst.WriteFile(b, "maps/hosts.map", file.String())
		if _, err := e.master.Reload(b.Context()); err != nil {
			b.Fatal(err)
		}
		reload += time.Since(t0)
	}
	b.StopTimer()
	if n := e.mapCount(b, e.hostsMap); n != 10000 {
		b.Fatalf("hosts.map holds %d entries after the reload, want 10000", n)
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
	b.ReportMetric(ms(pipelined), "pipelined-ms/op")
	b.ReportMetric(ms(chunked), "payload-ms/op")
	b.ReportMetric(ms(reload), "reload-ms/op")
	b.ReportMetric(float64(reload)/float64(pipelined), "reload/pipelined")
	b.ReportMetric(float64(reload)/float64(chunked), "reload/payload")
}

// BenchmarkRouteAddBatches runs the five batches of a route add on 3.4
// (add backend, add server, set server state ready, publish backend, add
// map: one batch each, as the agent sends one per op) and the matching
// removal, two ways in the same run: a Client.Run per batch (a connection
// each) and all batches on one Session. It reports ms per route add and
// remove for each.
func BenchmarkRouteAddBatches(b *testing.B) {
	if testing.Short() {
		b.Skip("benchmark needs real HAProxy 3.4; skipped in -short")
	}
	e := startEnv(b, "3.4")
	build := mustBuild(b)
	batches := func(i int) [][]haproxysock.Command {
		be := fmt.Sprintf("be_r%d", i)
		host := fmt.Sprintf("r%d.example.test", i)
		return [][]haproxysock.Command{
			{build(haproxysock.AddBackend(be, "profile_http", haproxysock.BackendOptions{}))},
			{build(haproxysock.AddServer(be, "s1", "127.0.0.1", e.a.Port, haproxysock.ServerOptions{}))},
			{build(haproxysock.SetServerState(be, "s1", haproxysock.StateReady))},
			{build(haproxysock.PublishBackend(be))},
			{build(haproxysock.AddMap(e.hostsMap, host, be))},
			// Removal, so that HAProxy's state stays the same size.
			{build(haproxysock.DelMap(e.hostsMap, host))},
			{build(haproxysock.UnpublishBackend(be))},
			{build(haproxysock.SetServerState(be, "s1", haproxysock.StateMaint)), build(haproxysock.DelServer(be, "s1"))},
			{build(haproxysock.DelBackend(be))},
		}
	}
	var perRun, session time.Duration
	i := 0
	for b.Loop() {
		i++
		t0 := time.Now()
		for _, batch := range batches(i) {
			if _, err := e.client.Run(b.Context(), batch...); err != nil {
				b.Fatal(err)
			}
		}
		perRun += time.Since(t0)

		i++
		t0 = time.Now()
		s := e.client.Session()
		for _, batch := range batches(i) {
			if _, err := s.Run(b.Context(), batch...); err != nil {
				b.Fatal(err)
			}
		}
		_ = s.Close()
		session += time.Since(t0)
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
	b.ReportMetric(ms(perRun), "run-per-batch-ms/op")
	b.ReportMetric(ms(session), "session-ms/op")
}
