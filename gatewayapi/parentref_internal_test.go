package gatewayapi

import (
	"reflect"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestEqualParentRefReadsEveryField: equalParentRef compares the fields
// of ParentReference one by one, so that a parentRef differing in any
// of them reads as different; a field the API adds must be added there.
func TestEqualParentRefReadsEveryField(t *testing.T) {
	group, kind, ns, section, port := gatewayv1.Group("g"), gatewayv1.Kind("k"), gatewayv1.Namespace("n"), gatewayv1.SectionName("s"), gatewayv1.PortNumber(80)
	full := gatewayv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: "gw", SectionName: &section, Port: &port}
	typ := reflect.TypeOf(full)
	for i := range typ.NumField() {
		other := full
		f := reflect.ValueOf(&other).Elem().Field(i)
		f.Set(reflect.Zero(f.Type())) // nil pointer, or "" for Name
		if equalParentRef(full, other) {
			t.Errorf("parentRefs that differ in %s read as equal", typ.Field(i).Name)
		}
	}
	copied := full
	p := gatewayv1.PortNumber(80)
	copied.Port = &p
	if !equalParentRef(full, copied) {
		t.Error("parentRefs equal in value but not in pointers read as different")
	}
}
