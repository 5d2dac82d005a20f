package cluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzCompact: two objects compacted one after the other with one
// compactor read exactly as decoded, whatever they hold.
func FuzzCompact(f *testing.F) {
	for _, tmpl := range []string{serviceJSON, endpointSliceJSON, ingressJSON} {
		f.Add([]byte(object(tmpl, 1)), []byte(object(tmpl, 2)))
	}
	f.Add([]byte(`{"metadata":{"name":"a"},"x":[1,1.5,"1",true,null,{},[]]}`), []byte(`{"metadata":{"name":"b"},"x":[1,1.5,"1",true,null,{},[]],"y":{"x":[1,1.5,"1",true,null,{},[]]}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		decode := func(data []byte) map[string]any {
			obj, _, err := unstructured.UnstructuredJSONScheme.Decode(data, nil, nil)
			if err != nil {
				return nil
			}
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return nil
			}
			return u.Object
		}
		c := newCompactor()
		for _, data := range [][]byte{a, b, a} {
			obj := decode(data)
			if obj == nil {
				continue
			}
			got := c.compact(obj)
			if diff := cmp.Diff(decode(data), got); diff != "" {
				t.Fatalf("compacted object differs (-decoded +compacted):\n%s", diff)
			}
		}
	})
}
