package haproxysock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/haptic-io/haptic/haproxysock"
)

// Builders escape free text so that it cannot start a second command.
func ExampleSetMap() {
	c, err := haproxysock.SetMap("/etc/haproxy/maps/hosts.map", "shop.example.com", "be_shop;clear map x")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c)
	_, err = haproxysock.DelBackend("be_shop\nshow info")
	fmt.Println(errors.Is(err, haproxysock.ErrInvalidArgument))
	// Output:
	// set map /etc/haproxy/maps/hosts.map shop.example.com be_shop\;clear\ map\ x
	// true
}

// A route on HAProxy 3.4: a backend from a profile, a server made ready,
// published, then reachable through the host map. Older versions refuse
// "add backend" with ErrUnsupported.
func ExampleClient_Run() {
	c := &haproxysock.Client{Path: "/run/haproxy/stats.sock", Timeout: 2 * time.Second}
	var cmds []haproxysock.Command
	for _, b := range []func() (haproxysock.Command, error){
		func() (haproxysock.Command, error) {
			return haproxysock.AddBackend("be_shop", "profile_http", haproxysock.BackendOptions{GUID: "be_shop"})
		},
		func() (haproxysock.Command, error) {
			return haproxysock.AddServer("be_shop", "pod-1", "10.0.0.7", 8080, haproxysock.ServerOptions{})
		},
		func() (haproxysock.Command, error) {
			return haproxysock.SetServerState("be_shop", "pod-1", haproxysock.StateReady)
		},
		func() (haproxysock.Command, error) { return haproxysock.PublishBackend("be_shop") },
		func() (haproxysock.Command, error) {
			return haproxysock.SetMap("/etc/haproxy/maps/hosts.map", "shop.example.com", "be_shop")
		},
	} {
		cmd, err := b()
		if err != nil {
			log.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	results, err := c.Run(context.Background(), cmds...)
	if errors.Is(err, haproxysock.ErrUnsupported) {
		log.Print("dynamic backends need HAProxy 3.4: reload instead")
	}
	for _, r := range results {
		fmt.Printf("%s -> %q (%v)\n", r.Command, r.Reply, r.Err)
	}
}

// After a failed reload, HAProxy 3.2 and 3.4 list the serving worker under
// "# old workers"; Serving finds it on every version.
func ExampleProcs_Serving() {
	procs, err := haproxysock.ParseProcs(`#<PID>          <type>          <reloads>       <uptime>        <version>
24660           master          5 [failed: 1]   0d00h01m05s     3.4.7-1
# workers
# old workers
1559            worker          1               0d00h00m03s     3.4.7-1
`)
	if err != nil {
		log.Fatal(err)
	}
	w, _ := procs.Serving()
	fmt.Println(w.PID, procs.LastReloadFailed())
	// Output: 1559 true
}

// Reload is synchronous; a refused configuration keeps the old worker and
// returns HAProxy's [ALERT] lines.
func ExampleMaster_Reload() {
	m := &haproxysock.Master{Path: "/run/haproxy/master.sock"}
	_, err := m.Reload(context.Background())
	var re *haproxysock.ReloadError
	if errors.As(err, &re) {
		for _, a := range re.Alerts {
			fmt.Println(a)
		}
	}
}

// A map replace on one session: "prepare map" answers the version the
// next batch fills and commits. Each batch costs one round trip, and the
// second is not sent when the first fails.
func ExampleClient_Session() {
	c := &haproxysock.Client{Path: "/run/haproxy/stats.sock", Timeout: 2 * time.Second}
	s := c.Session()
	defer s.Close()
	ctx := context.Background()
	const hosts = "/etc/haproxy/maps/hosts.map"
	prepare, err := haproxysock.PrepareMap(hosts)
	if err != nil {
		log.Fatal(err)
	}
	res, err := s.Run(ctx, prepare)
	if err != nil {
		log.Fatal(err)
	}
	version, err := haproxysock.ParsePrepareMap(res[0].Reply)
	if err != nil {
		log.Fatal(err)
	}
	fill, err := haproxysock.AddMapVersionPayload(version, hosts, []haproxysock.MapEntry{{Key: "shop.example.com", Value: "be_shop"}})
	if err != nil {
		log.Fatal(err)
	}
	commit, err := haproxysock.CommitMap(version, hosts)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := s.Run(ctx, fill, commit); err != nil {
		log.Fatal(err)
	}
}
