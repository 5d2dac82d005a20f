package controller

import (
	"reflect"
	"slices"

	"github.com/haptic-io/haptic/store"
)

// StatusEcho says whether c changes nothing but the .status of an object
// st holds under one of the quiet aliases (see [Config].QuietStatus).
func StatusEcho(st *store.Memory, quiet []string, c Change) bool {
	if c.Object == nil || !slices.Contains(quiet, c.Alias) {
		return false
	}
	prev, ok := st.Get(c.Alias, c.Namespace, c.Name)
	return ok && OnlyStatusDiffers(prev, c.Object)
}

// OnlyStatusDiffers says whether two versions of an object differ in
// nothing but .status and metadata.resourceVersion (see
// [Config].QuietStatus).
func OnlyStatusDiffers(prev, cur map[string]any) bool {
	pm, _ := prev["metadata"].(map[string]any)
	cm, _ := cur["metadata"].(map[string]any)
	return equalExcept(pm, cm, "resourceVersion") && equalExcept(prev, cur, "status", "metadata")
}

// equalExcept says whether a and b are deep-equal but for the keys skip.
func equalExcept(a, b map[string]any, skip ...string) bool {
	n := 0
	for k, v := range b {
		if slices.Contains(skip, k) {
			continue
		}
		n++
		if av, ok := a[k]; !ok || !reflect.DeepEqual(av, v) {
			return false
		}
	}
	for k := range a {
		if !slices.Contains(skip, k) {
			n--
		}
	}
	return n == 0
}
