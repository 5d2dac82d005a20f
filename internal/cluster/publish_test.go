package cluster

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSameLoadBalancerComparesTheStatusAddressesInOrder(t *testing.T) {
	withStatus := func(ips ...string) *unstructured.Unstructured {
		lb := make([]any, len(ips))
		for i, ip := range ips {
			lb[i] = map[string]any{"ip": ip}
		}
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"loadBalancer": map[string]any{"ingress": lb}}}}
	}
	tests := []struct {
		name  string
		obj   *unstructured.Unstructured
		addrs []string
		want  bool
	}{
		{name: "the same addresses", obj: withStatus("10.0.0.1", "10.0.0.2"), addrs: []string{"10.0.0.1", "10.0.0.2"}, want: true},
		{name: "another order", obj: withStatus("10.0.0.2", "10.0.0.1"), addrs: []string{"10.0.0.1", "10.0.0.2"}},
		{name: "one more pod", obj: withStatus("10.0.0.1"), addrs: []string{"10.0.0.1", "10.0.0.2"}},
		{name: "one pod fewer", obj: withStatus("10.0.0.1", "10.0.0.2"), addrs: []string{"10.0.0.1"}},
		{name: "no status and no pods", obj: &unstructured.Unstructured{Object: map[string]any{}}, want: true},
		{name: "no status yet", obj: &unstructured.Unstructured{Object: map[string]any{}}, addrs: []string{"10.0.0.1"}},
		{name: "a hostname entry", obj: &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"hostname": "lb"}}}}}}, addrs: []string{"10.0.0.1"}},
		{name: "a malformed status", obj: &unstructured.Unstructured{Object: map[string]any{"status": "x"}}, addrs: []string{"10.0.0.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameLoadBalancer(tt.obj, tt.addrs); got != tt.want {
				t.Errorf("sameLoadBalancer = %v, want %v", got, tt.want)
			}
		})
	}
}

func BenchmarkSameLoadBalancerAllocatesNothing(b *testing.B) {
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "10.0.0.1"}}}}}}
	addrs := []string{"10.0.0.1"}
	b.ReportAllocs()
	for b.Loop() {
		if !sameLoadBalancer(u, addrs) {
			b.Fatal("not the same")
		}
	}
}
