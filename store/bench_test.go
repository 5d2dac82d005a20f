package store_test

import (
	"fmt"
	"maps"
	"strconv"
	"testing"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating/fixtures"
)

// benchmarkSnapshotAfterOneChange measures what the controller pays per
// object change before it renders: update one Ingress (a new
// resourceVersion), take a snapshot and list the ingresses by
// creationTimestamp. The store holds n Ingresses, n Services and 2n
// EndpointSlices, indexed as testResources says.
func benchmarkSnapshotAfterOneChange(b *testing.B, n int) {
	st, err := store.NewMemory(testResources)
	if err != nil {
		b.Fatal(err)
	}
	objs := fixtures.GenerateIngressMix(n)
	if _, err := st.AddObjects(objs...); err != nil {
		b.Fatal(err)
	}
	var ingresses []map[string]any
	for _, o := range objs {
		if o["kind"] == "Ingress" {
			ingresses = append(ingresses, o)
		}
	}
	byAge, err := store.ParseIndexExpr("metadata.creationTimestamp")
	if err != nil {
		b.Fatal(err)
	}
	if got := len(st.Snapshot().ListBy("ingresses", byAge)); got != n {
		b.Fatalf("ListBy gave %d ingresses, want %d", got, n)
	}
	rv := 1_000_000
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rv++
		old := ingresses[rv%n]
		o := maps.Clone(old)
		md := maps.Clone(old["metadata"].(map[string]any))
		md["resourceVersion"] = strconv.Itoa(rv)
		o["metadata"] = md
		if err := st.Update("ingresses", o); err != nil {
			b.Fatal(err)
		}
		if got := len(st.Snapshot().ListBy("ingresses", byAge)); got != n {
			b.Fatalf("ListBy gave %d ingresses, want %d", got, n)
		}
	}
}

func BenchmarkSnapshotAfterOneChange(b *testing.B) {
	for _, n := range []int{300, 3000, 5000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) { benchmarkSnapshotAfterOneChange(b, n) })
	}
}

// BenchmarkSnapshotLookups measures what templates pay per Get and Fetch
// on a snapshot of 5,000 Ingresses (and their Services and
// EndpointSlices), after the snapshot was derived from an earlier one.
func BenchmarkSnapshotLookups(b *testing.B) {
	const n = 5000
	st, err := store.NewMemory(testResources)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.AddObjects(fixtures.GenerateIngressMix(n)...); err != nil {
		b.Fatal(err)
	}
	st.Snapshot()
	if _, err := st.AddObjects(fixtures.GenerateIngressMix(1)...); err != nil { // changes app-0's objects
		b.Fatal(err)
	}
	snap := st.Snapshot()
	type ref struct{ ns, name string }
	refs := make([]ref, n)
	for i := range refs {
		j := (i * 7919) % n
		refs[i] = ref{fmt.Sprintf("ns-%d", j%fixtures.Namespaces), fmt.Sprintf("app-%d", j)}
	}
	b.Run("Get", func(b *testing.B) {
		i := 0
		for b.Loop() {
			r := refs[i%len(refs)]
			if _, ok := snap.Get("services", r.ns, r.name); !ok {
				b.Fatalf("no service %s/%s", r.ns, r.name)
			}
			i++
		}
	})
	b.Run("Fetch", func(b *testing.B) {
		i := 0
		for b.Loop() {
			r := refs[i%len(refs)]
			if got := len(snap.Fetch("endpoints", r.ns, r.name)); got != 2 {
				b.Fatalf("%d slices for %s/%s, want 2", got, r.ns, r.name)
			}
			i++
		}
	})
}
