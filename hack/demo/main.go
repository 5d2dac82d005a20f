// Command demo starts HAProxy 3.4 and adds a route at runtime through
// package haproxysock: a dynamic backend from a profile, two servers, a
// publish and a map entry, without a reload. It serves until Ctrl-C.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/haptic-io/haptic/haproxysock"
)

const config = `global
    stats socket %[1]s/stats.sock mode 600 level admin expose-fd listeners
    stats timeout 1h
    hard-stop-after 10s

defaults profile_http
    mode http
    balance roundrobin
    timeout connect 2s
    timeout client 30s
    timeout server 30s

frontend fe_main from profile_http
    bind %[2]s
    use_backend %%[req.hdr(host),host_only,lower,map(%[1]s/maps/hosts.map)]
    default_backend be_default

backend be_default from profile_http
    http-request return status 404 content-type text/plain string "no route"
`

func main() {
	bin := flag.String("haproxy", ".cache/haproxy/3.4/sbin/haproxy", "HAProxy 3.4 binary")
	listen := flag.String("listen", "127.0.0.1:8080", "address of the HTTP frontend")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *bin, *listen); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin, listen string) error {
	bin, err := filepath.Abs(bin) // HAProxy runs with cwd = the temp dir
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "haptic-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "maps"), 0o755); err != nil {
		return err
	}
	files := map[string]string{"haproxy.cfg": fmt.Sprintf(config, dir, listen), "maps/hosts.map": ""}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return err
		}
	}

	var echoes []string
	for _, name := range []string{"echo-1", "echo-2"} {
		addr, closeEcho, err := startEcho(name)
		if err != nil {
			return err
		}
		defer closeEcho()
		echoes = append(echoes, addr)
	}

	cmd := exec.Command(bin, "-W", "-S", filepath.Join(dir, "master.sock")+",mode,600", "-f", filepath.Join(dir, "haproxy.cfg"))
	logPath := filepath.Join(dir, "haproxy.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start haproxy (run make haproxy first?): %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer stopHAProxy(cmd, exited)

	master := &haproxysock.Master{Path: filepath.Join(dir, "master.sock"), Timeout: 2 * time.Second}
	client := &haproxysock.Client{Path: filepath.Join(dir, "stats.sock"), Timeout: 2 * time.Second}
	before, err := waitReady(ctx, master, client)
	if err != nil {
		out, _ := os.ReadFile(logPath)
		return fmt.Errorf("%w\nhaproxy output:\n%s", err, out)
	}
	fmt.Printf("HAProxy %s serving on %s (master pid %d, reloads %d)\n", before.Master.Version, listen, before.Master.PID, before.Master.Reloads)

	cmds, err := route(filepath.Join(dir, "maps/hosts.map"), echoes)
	if err != nil {
		return err
	}
	start := time.Now()
	results, err := client.Run(ctx, cmds...)
	for _, r := range results {
		fmt.Printf("  > %-60s %s\n", r.Command, r.Reply)
	}
	if err != nil {
		return err
	}
	after, err := master.ShowProc(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("route added in %v; reloads before %d, after %d\n\n", time.Since(start).Round(time.Microsecond), before.Master.Reloads, after.Master.Reloads)
	fmt.Printf("Try:\n  curl -H 'Host: demo.local' http://%s/\n  curl -H 'Host: other.local' http://%s/   # 404 no route\nCtrl-C to stop.\n", listen, listen)

	select {
	case <-ctx.Done():
		fmt.Println("\nstopping")
		return nil
	case err := <-exited:
		exited <- err
		return fmt.Errorf("haproxy exited: %w", err)
	}
}

// route builds the runtime commands of one route: backend, servers, publish, map entry.
func route(hostsMap string, echoes []string) ([]haproxysock.Command, error) {
	builders := []func() (haproxysock.Command, error){
		func() (haproxysock.Command, error) {
			return haproxysock.AddBackend("be_demo", "profile_http", haproxysock.BackendOptions{GUID: "be_demo"})
		},
	}
	for i, addr := range echoes {
		host, portStr, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		port, err := strconv.Atoi(portStr)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("echo-%d", i+1)
		builders = append(builders,
			func() (haproxysock.Command, error) {
				return haproxysock.AddServer("be_demo", name, host, port, haproxysock.ServerOptions{GUID: "be_demo-" + name})
			},
			func() (haproxysock.Command, error) {
				return haproxysock.SetServerState("be_demo", name, haproxysock.StateReady)
			})
	}
	builders = append(builders,
		func() (haproxysock.Command, error) { return haproxysock.PublishBackend("be_demo") },
		func() (haproxysock.Command, error) { return haproxysock.AddMap(hostsMap, "demo.local", "be_demo") })
	cmds := make([]haproxysock.Command, 0, len(builders))
	for _, b := range builders {
		c, err := b()
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, c)
	}
	return cmds, nil
}

// waitReady polls both sockets for at most 10 s.
func waitReady(ctx context.Context, master *haproxysock.Master, client *haproxysock.Client) (haproxysock.Procs, error) {
	var last error
	for range 200 {
		p, err := master.ShowProc(ctx)
		if err == nil {
			if _, err = client.Info(ctx); err == nil {
				return p, nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return haproxysock.Procs{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return haproxysock.Procs{}, fmt.Errorf("haproxy not ready: %w", last)
}

func stopHAProxy(cmd *exec.Cmd, exited chan error) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-exited
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "haproxy:", err)
	}
}

// startEcho serves "<name>\n" on a free 127.0.0.1 port.
func startEcho(name string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, name+"\n")
	})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "echo:", err)
		}
	}()
	return ln.Addr().String(), func() { _ = srv.Close(); <-done }, nil
}
