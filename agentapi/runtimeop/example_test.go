package runtimeop_test

import (
	"encoding/json"
	"fmt"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
)

func ExampleDecodeOps() {
	ops, err := runtimeop.DecodeOps([]byte(`[
		{"kind":"server.add","backend":"be_api","server":"pod-a","address":"10.0.0.7","port":8080,"weight":1},
		{"kind":"server.set_state","backend":"be_api","server":"pod-a","state":"ready"}
	]`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range ops {
		fmt.Println(o)
	}
	_, err = runtimeop.DecodeOps([]byte(`[{"kind":"backend.publish","backend":"be_api","key":"x"}]`))
	fmt.Println(err)
	// Output:
	// server.add be_api/pod-a addr=10.0.0.7 port=8080 weight=1
	// server.set_state be_api/pod-a state=ready
	// op 0: runtimeop: invalid op: backend.publish: field key is not used by backend.publish
}

func ExampleOp() {
	o := runtimeop.Op{Kind: runtimeop.OpSetMapEntry, Map: "maps/hosts.map", Key: "api.example.com", Value: "be_api"}
	b, _ := json.Marshal(o)
	fmt.Println(string(b))
	fmt.Println(o.Kind.Phase() < runtimeop.OpDelMapEntry.Phase())
	// Output:
	// {"kind":"map.set","map":"maps/hosts.map","key":"api.example.com","value":"be_api"}
	// true
}
