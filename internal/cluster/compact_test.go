package cluster

import (
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Objects as the apiserver sends them (managedFields dropped), with #
// for a sequence number (see object).
const (
	serviceJSON       = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"app-#","namespace":"scale-01","uid":"6f1c2b9e-#-4b1e-9d7a-0c1e2f3a4b5c","resourceVersion":"1#","creationTimestamp":"2026-12-02T10:11:12Z"},"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":3000}],"clusterIP":"10.96.#.7","clusterIPs":["10.96.#.7"],"type":"ClusterIP","sessionAffinity":"None","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","internalTrafficPolicy":"Cluster"},"status":{"loadBalancer":{}}}`
	endpointSliceJSON = `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"app-#-a","namespace":"scale-01","uid":"7f1c2b9e-#-4b1e-9d7a-0c1e2f3a4b5c","resourceVersion":"2#","generation":1,"creationTimestamp":"2026-12-02T10:11:12Z","labels":{"endpointslice.kubernetes.io/managed-by":"haptic-bench","kubernetes.io/service-name":"app-#"}},"addressType":"IPv4","endpoints":[{"addresses":["10.0.#.9"],"conditions":{"ready":true,"serving":true,"terminating":false},"nodeName":"node-1"}],"ports":[{"name":"http","protocol":"TCP","port":3000}]}`
	ingressJSON       = `{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"app-#","namespace":"scale-01","uid":"8f1c2b9e-#-4b1e-9d7a-0c1e2f3a4b5c","resourceVersion":"3#","generation":1,"creationTimestamp":"2026-12-02T10:11:12Z","annotations":{"haproxy.org/timeout":"5s"}},"spec":{"ingressClassName":"haptic","rules":[{"host":"app-#.example","http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"app-#","port":{"number":80}}}}]}}]},"status":{"loadBalancer":{"ingress":[{"ip":"10.0.0.1"}]}}}`
)

func decodeObject(t testing.TB, data string) map[string]any {
	t.Helper()
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode([]byte(data), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*unstructured.Unstructured).Object
}

func samePointer(a, b any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func TestCompactedObjectsReadAsDecoded(t *testing.T) {
	c := newCompactor()
	for i := range 3 {
		for _, tmpl := range []string{serviceJSON, endpointSliceJSON, ingressJSON} {
			data := object(tmpl, i)
			got := c.compact(decodeObject(t, data))
			if diff := cmp.Diff(decodeObject(t, data), got); diff != "" {
				t.Fatalf("compacted object differs (-decoded +compacted):\n%s", diff)
			}
		}
	}
}

func TestCompactSharesEqualValuesAcrossObjects(t *testing.T) {
	c := newCompactor()
	a := c.compact(decodeObject(t, object(endpointSliceJSON, 1)))
	b := c.compact(decodeObject(t, object(endpointSliceJSON, 2)))
	if !samePointer(a["ports"], b["ports"]) {
		t.Error("equal port lists are two instances")
	}
	condA := a["endpoints"].([]any)[0].(map[string]any)["conditions"]
	condB := b["endpoints"].([]any)[0].(map[string]any)["conditions"]
	if !samePointer(condA, condB) {
		t.Error("equal endpoint conditions are two instances")
	}
	if samePointer(a["endpoints"], b["endpoints"]) {
		t.Error("different endpoint lists share an instance")
	}
	if samePointer(a["metadata"], b["metadata"]) || samePointer(a, b) {
		t.Error("objects or their metadata share an instance")
	}
	// Strings: keys and values hold one copy of their bytes.
	nsA := a["metadata"].(map[string]any)["namespace"].(string)
	nsB := b["metadata"].(map[string]any)["namespace"].(string)
	if unsafe.StringData(nsA) != unsafe.StringData(nsB) {
		t.Error("equal namespaces are two copies")
	}
	for k := range b["metadata"].(map[string]any) {
		if k == "namespace" && unsafe.StringData(k) != unsafe.StringData(keyOf(a["metadata"].(map[string]any), "namespace")) {
			t.Error("equal map keys are two copies")
		}
	}
}

// keyOf returns m's key equal to k, the string the map holds.
func keyOf(m map[string]any, k string) string {
	for mk := range m {
		if mk == k {
			return mk
		}
	}
	return ""
}

func TestCompactLeavesLargeValuesUnshared(t *testing.T) {
	long := strings.Repeat("x", maxSharedTree)
	obj := func() map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "n"},
			"spec": map[string]any{"big": []any{long}, "small": map[string]any{"port": int64(80)}}}
	}
	c := newCompactor()
	a, b := c.compact(obj()), c.compact(obj())
	specA, specB := a["spec"].(map[string]any), b["spec"].(map[string]any)
	if samePointer(specA["big"], specB["big"]) || samePointer(specA, specB) {
		t.Error("a value longer than the bound was shared")
	}
	if !samePointer(specA["small"], specB["small"]) {
		t.Error("a small value beside a large one was not shared")
	}
}

func TestCompactTellsTypesApart(t *testing.T) {
	c := newCompactor()
	objs := []map[string]any{
		{"metadata": map[string]any{"name": "a"}, "v": map[string]any{"x": "80"}},
		{"metadata": map[string]any{"name": "b"}, "v": map[string]any{"x": int64(80)}},
		{"metadata": map[string]any{"name": "c"}, "v": map[string]any{"x": float64(80)}},
		{"metadata": map[string]any{"name": "d"}, "v": map[string]any{"x": []any{"80"}}},
		{"metadata": map[string]any{"name": "e"}, "v": map[string]any{"x": map[string]any{}}},
		{"metadata": map[string]any{"name": "f"}, "v": map[string]any{"x": nil}},
		{"metadata": map[string]any{"name": "g"}, "v": map[string]any{"x": true}},
		{"metadata": map[string]any{"name": "h"}, "v": map[string]any{"x": "true"}},
	}
	for _, o := range objs {
		c.compact(o)
	}
	for i, o := range objs {
		for _, p := range objs[i+1:] {
			if samePointer(o["v"], p["v"]) {
				t.Errorf("%v and %v share an instance", o["v"], p["v"])
			}
		}
	}
}

func TestSharedTableStaysBounded(t *testing.T) {
	tab := newSharedTable(4)
	for i := range 100 {
		k := fmt.Sprint(i % 10)
		tab.canonical(k, k)
		if len(tab.hot) > 4 || len(tab.cold) > 4 {
			t.Fatalf("after %d keys: hot %d cold %d, bound 4", i+1, len(tab.hot), len(tab.cold))
		}
	}
	v := "kept"
	tab.canonical("k", v)
	if got := tab.canonical("k", "other"); got != v {
		t.Errorf("second sighting returned %v, want the first instance", got)
	}
}

// BenchmarkCompact decodes (and compacts) the objects of one kind as an
// informer does, one per op, and reports the memory a cached object
// keeps (retained_B/object), measured over 5,000 of them.
func BenchmarkCompact(b *testing.B) {
	for _, kind := range []struct{ name, tmpl string }{{"Service", serviceJSON}, {"EndpointSlice", endpointSliceJSON}, {"Ingress", ingressJSON}} {
		raw := make([][]byte, 5000)
		for i := range raw {
			raw[i] = []byte(object(kind.tmpl, i))
		}
		for _, compacted := range []bool{false, true} {
			b.Run(fmt.Sprintf("kind=%s/compact=%t", kind.name, compacted), func(b *testing.B) {
				decode := func(c *compactor, data []byte) map[string]any {
					obj := decodeObject(b, string(data))
					if compacted {
						obj = c.compact(obj)
					}
					return obj
				}
				c := newCompactor()
				objs := make([]map[string]any, len(raw))
				h0 := liveHeap()
				for i, data := range raw {
					objs[i] = decode(c, data)
				}
				retained := (liveHeap() - h0) / uint64(len(raw))
				runtime.KeepAlive(objs)
				i := 0
				for b.Loop() {
					objs[i%len(objs)] = decode(c, raw[i%len(raw)])
					i++
				}
				b.ReportMetric(float64(retained), "retained_B/object")
			})
		}
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// object is tmpl with its # replaced by i.
func object(tmpl string, i int) string { return strings.ReplaceAll(tmpl, "#", strconv.Itoa(i)) }
