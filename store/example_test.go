package store_test

import (
	"fmt"

	"github.com/haptic-io/haptic/store"
)

// A source decodes manifests into a Memory; a render reads a snapshot,
// and a later snapshot says what changed since a mark of the earlier one.
func Example() {
	st, err := store.NewMemory(map[string]store.WatchedResource{
		"services": {APIVersion: "v1", Resource: "services", IndexBy: []string{"metadata.namespace", "metadata.name"}},
	})
	if err != nil {
		panic(err)
	}
	objs, err := store.DecodeManifests([]byte(`
apiVersion: v1
kind: Service
metadata: {namespace: shop, name: cart}
---
apiVersion: v1
kind: Service
metadata: {namespace: shop, name: web}
`))
	if err != nil {
		panic(err)
	}
	if _, err := st.AddObjects(objs...); err != nil {
		panic(err)
	}
	before := st.Snapshot()
	mark := before.Mark("services")
	if err := st.Delete("services", "shop", "cart"); err != nil {
		panic(err)
	}
	after := st.Snapshot()
	fmt.Println(len(before.List("services")), len(after.Fetch("services", "shop")))
	cs, ok := after.ChangesSince("services", mark)
	fmt.Println(ok, cs.IDs["shop\x00cart"], cs.IDs["shop\x00web"])
	// Output:
	// 2 1
	// true true false
}
