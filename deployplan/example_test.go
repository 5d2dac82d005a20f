package deployplan_test

import (
	"fmt"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/renderplan"
)

// route builds a small plan whose host map routes api.example.com to
// be_api; extra adds a second route with its own dynamic backend.
func route(extra bool) *renderplan.Plan {
	b := renderplan.NewBuilder()
	b.Text("frontend fe\n    bind :8080\n    use_backend %[req.hdr(host),lower,map(maps/hosts.map)]\n")
	_ = b.Profile("web", []string{"mode http", "balance roundrobin"})
	_ = b.Backend(renderplan.Backend{Name: "be_api", GUID: "be_api", Profile: "web",
		Servers: []renderplan.Server{{Name: "pod-a", Address: "10.0.0.1", Port: 8080, Weight: 1}}})
	hosts := renderplan.Map{Path: "maps/hosts.map", Entries: []renderplan.MapEntry{{Key: "api.example.com", Value: "be_api"}}}
	if extra {
		_ = b.Backend(renderplan.Backend{Name: "be_shop", GUID: "be_shop", Profile: "web",
			Servers: []renderplan.Server{{Name: "pod-s", Address: "10.0.0.9", Port: 8080, Weight: 1, Check: true}}})
		hosts.Entries = append(hosts.Entries, renderplan.MapEntry{Key: "shop.example.com", Value: "be_shop"})
	}
	_ = b.Map(hosts)
	out, err := b.Build()
	if err != nil {
		panic(err)
	}
	return out.Plan
}

func ExampleDiff() {
	base, next := route(false), route(true)
	for _, version := range []string{"3.4.7-1", "3.2.26-1"} {
		d := deployplan.Diff(next, deployplan.Baseline{Plan: base, HAProxyVersion: version, AgentOps: runtimeop.OpKinds()})
		fmt.Printf("HAProxy %s:\n%s", version, d)
	}
	// Output:
	// HAProxy 3.4.7-1:
	// verdict runtime
	// reason backend be_shop: dynamic backend added (1 server) → runtime
	// reason map maps/hosts.map: entries: 1 added → runtime
	// op backend.add be_shop profile=web mode=http guid=be_shop
	// op server.add be_shop/pod-s addr=10.0.0.9 port=8080 weight=1 check
	// op server.set_state be_shop/pod-s state=ready
	// op server.enable_health be_shop/pod-s
	// op backend.publish be_shop
	// op map.add maps/hosts.map key=shop.example.com value=be_shop
	// files 2
	// HAProxy 3.2.26-1:
	// verdict reload
	// reason backend be_shop: dynamic backend added; HAProxy 3.2 cannot add backends at runtime (3.4+) → reload
	// files 2
}

func ExampleCapabilitiesFor() {
	c, err := deployplan.CapabilitiesFor("3.0.11-1+deb13u4")
	fmt.Println(c.Series, c.DynamicBackends, c.ServerInitState, err)
	// Output: 3.0 false false <nil>
}
