// Command offline-diff shows how a platform team embeds HAPTIC's planner:
// it builds two render plans in Go with the renderplan builder (no
// templates), diffs them with deployplan for a HAProxy version, and prints
// whether the change reloads HAProxy. Only public packages are used.
//
//	go run ./examples/offline-diff [-haproxy 3.4]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/renderplan"
)

// Route is one host routed to one service's endpoints.
type Route struct {
	Host      string
	Backend   string
	Endpoints []Endpoint
}

// Endpoint is one pod behind a route.
type Endpoint struct {
	Pod  string
	IP   string
	Port int
}

// BuildPlan renders routes into a plan: one frontend that routes through a
// host map, one dynamic backend per route (so HAProxy 3.4 can add and
// delete it at runtime) and the host map.
func BuildPlan(routes []Route) (*renderplan.Plan, error) {
	b := renderplan.NewBuilder()
	b.Text(`global
    master-worker
    stats socket stats.sock mode 600 level admin expose-fd listeners

defaults base
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend fe_main from base
    bind :8080
    use_backend %[req.hdr(host),host_only,lower,map(maps/hosts.map)]
    default_backend be_default

backend be_default from base
    http-request return status 404

`)
	if err := b.Profile("web", []string{"mode http", "balance roundrobin", "timeout connect 5s", "timeout server 30s"}); err != nil {
		return nil, err
	}
	hosts := renderplan.Map{Path: "maps/hosts.map"}
	for _, r := range routes {
		be := renderplan.Backend{Name: r.Backend, GUID: "route-" + r.Backend, Profile: "web"}
		for _, e := range r.Endpoints {
			be.Servers = append(be.Servers, renderplan.Server{Name: e.Pod, Address: e.IP, Port: e.Port, Weight: renderplan.DefaultWeight})
		}
		if err := b.Backend(be); err != nil {
			return nil, err
		}
		hosts.Entries = append(hosts.Entries, renderplan.MapEntry{Key: r.Host, Value: r.Backend})
	}
	if err := b.Map(hosts); err != nil {
		return nil, err
	}
	out, err := b.Build()
	if err != nil {
		return nil, err
	}
	return out.Plan, nil
}

// Decide diffs next against a pod that runs base on the given HAProxy
// version with an agent that runs every op kind.
func Decide(base, next *renderplan.Plan, haproxyVersion string) deployplan.Decision {
	return deployplan.Diff(next, deployplan.Baseline{
		Plan:           base,
		HAProxyVersion: haproxyVersion,
		AgentOps:       agentapi.OpKinds(),
	})
}

// ExampleRoutes returns today's routes and tomorrow's: a new route for the
// shop and a rescheduled API pod.
func ExampleRoutes() (today, tomorrow []Route) {
	today = []Route{
		{Host: "api.example.com", Backend: "be_api", Endpoints: []Endpoint{{"api-7d9f-abcde", "10.0.0.11", 8080}, {"api-7d9f-fghij", "10.0.0.12", 8080}}},
	}
	tomorrow = []Route{
		{Host: "api.example.com", Backend: "be_api", Endpoints: []Endpoint{{"api-7d9f-abcde", "10.0.0.11", 8080}, {"api-7d9f-klmno", "10.0.0.13", 8080}}},
		{Host: "shop.example.com", Backend: "be_shop", Endpoints: []Endpoint{{"shop-55c6-pqrst", "10.0.1.21", 3000}}},
	}
	return today, tomorrow
}

func run(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("offline-diff", flag.ContinueOnError)
	fs.SetOutput(w)
	version := fs.String("haproxy", "3.4", "HAProxy version of the pod")
	if err := fs.Parse(args); err != nil {
		return err
	}
	today, tomorrow := ExampleRoutes()
	base, err := BuildPlan(today)
	if err != nil {
		return fmt.Errorf("build today's plan: %w", err)
	}
	next, err := BuildPlan(tomorrow)
	if err != nil {
		return fmt.Errorf("build tomorrow's plan: %w", err)
	}
	fmt.Fprint(w, Decide(base, next, *version))
	return nil
}

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "offline-diff:", err)
		os.Exit(1)
	}
}
