package minicluster

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitManifestsDecodesDocumentsInOrder(t *testing.T) {
	in := `# leading comment
---
apiVersion: v1
kind: Namespace
metadata:
  name: a
---   
# only a comment
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b, namespace: a}
  data: {k: "--- not a separator"}
- apiVersion: v1
  kind: Service
  metadata: {name: c, namespace: a}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  namespace: a
`
	objs, err := SplitManifests([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	want := []string{"Namespace//a", "ConfigMap/a/b", "Service/a/c", "Deployment/a/d"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("objects (-want +got):\n%s", d)
	}
	if v := objs[1].Object["data"].(map[string]any)["k"]; v != "--- not a separator" {
		t.Fatalf("ConfigMap data = %q", v)
	}
}

func TestSplitManifestsRejectsIncompleteObjects(t *testing.T) {
	tests := map[string]string{
		"no kind":     "apiVersion: v1\nmetadata: {name: x}\n",
		"no name":     "apiVersion: v1\nkind: ConfigMap\n",
		"not yaml":    "apiVersion: [v1\n",
		"scalar body": "just a string\n",
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := SplitManifests([]byte(in)); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestSplitManifestsReadsTheConformanceBase(t *testing.T) {
	b, _ := FindBinaries()
	if _, err := os.Stat(b.ConformanceManifests); err != nil {
		t.Skipf("conformance manifests not copied yet (make minicluster): %v", err)
	}
	objs, err := SplitManifests(mustRead(t, b.ConformanceManifests))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	if kinds["Deployment"] < 10 || kinds["Namespace"] != 3 || kinds["Gateway"] < 4 {
		t.Fatalf("kinds = %v, want >=10 Deployments, 3 Namespaces, >=4 Gateways", kinds)
	}
}

func FuzzSplitManifests(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n"))
	f.Add([]byte("---\n---\n# c\n"))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := SplitManifests(data)
		if err != nil {
			return
		}
		for _, o := range objs {
			if o.GetKind() == "" || o.GetName() == "" || o.GetAPIVersion() == "" {
				t.Fatalf("object without kind/name/apiVersion: %v", o.Object)
			}
		}
		if len(objs) > strings.Count(string(data), "\n")+1 {
			t.Fatalf("%d objects from %d lines", len(objs), strings.Count(string(data), "\n")+1)
		}
	})
}
