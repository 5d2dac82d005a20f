package libraries_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/internal/agent"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// hijackPath is the attack on HAProxy's map-file reader: behind host
// www.evil.test (13 bytes), the key of this path is cut after 16383
// bytes, and its rest, "victim.example.com/admin <backend>", reads as a
// route of another namespace's host.
var hijackPath = "/" + strings.Repeat("a", 16369) + "victim.example.com/admin"

// ingressObj is an Ingress of namespace ns routing host and path (Prefix)
// to Service svc port 80.
func ingressObj(ns, name, host, path, svc string) map[string]any {
	return map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"namespace": ns, "name": name, "creationTimestamp": "2026-01-01T00:00:00Z"},
		"spec": map[string]any{
			"ingressClassName": "haptic",
			"rules": []any{map[string]any{
				"host": host,
				"http": map[string]any{"paths": []any{map[string]any{
					"path": path, "pathType": "Prefix",
					"backend": map[string]any{"service": map[string]any{"name": svc, "port": map[string]any{"number": int64(80)}}},
				}}},
			}},
		},
	}
}

// serviceObjs are Service ns/name port 80 and its EndpointSlice with one
// ready endpoint at 127.0.0.1:port, pod <name>-pod.
func serviceObjs(ns, name string, port int) []map[string]any {
	return []map[string]any{
		{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"namespace": ns, "name": name},
			"spec":     map[string]any{"ports": []any{map[string]any{"port": int64(80), "targetPort": int64(port)}}},
		},
		{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata":    map[string]any{"namespace": ns, "name": name + "-1", "labels": map[string]any{"kubernetes.io/service-name": name}},
			"addressType": "IPv4",
			"ports":       []any{map[string]any{"port": int64(port)}},
			"endpoints": []any{map[string]any{
				"addresses": []any{"127.0.0.1"}, "conditions": map[string]any{"ready": true},
				"targetRef": map[string]any{"kind": "Pod", "namespace": ns, "name": name + "-pod"},
			}},
		},
	}
}

func mapBody(t testing.TB, out *renderplan.Output, name string) string {
	t.Helper()
	return string(out.Files[indexOf(out, "maps/"+name)].Body)
}

func TestOverlongIngressValuesAreProblemsAndAddNothing(t *testing.T) {
	victim := append([]map[string]any{ingressObj("victim", "site", "victim.example.com", "/", "web")}, serviceObjs("victim", "web", 8080)...)
	for _, tt := range []struct {
		name, host, path string
		reason, message  string
	}{
		{"the hijack path", "www.evil.test", hijackPath, "ValueTooLong", `path "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"… (16394 bytes) takes 16394 bytes of a map line, more than the 11833 it leaves for a path with tune.bufsize 16384; ignored`},
		{"a path whose escapes make it too long", "www.evil.test", "/" + strings.Repeat(";", 6000), "ValueTooLong", "(6001 bytes) takes 12001 bytes of a map line"},
		{"a host of 300 bytes", strings.Repeat("h", 300), "/", "HostInvalid", "is longer than 253 bytes"},
		{"a label of 64 bytes", strings.Repeat("h", 64) + ".example.com", "/", "HostInvalid", "has a label of 64 bytes, more than 63"},
		{"a lone wildcard", "*", "/", "HostInvalid", `host "*" has "*" other than as its whole first label`},
		{"empty labels and dashes", "a..b--.*", "/", "HostInvalid", "has an empty label"},
		{"a dash at a label's end", "b--.example.com", "/", "HostInvalid", `label "b--" that starts or ends with '-'`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs := append([]map[string]any{ingressObj("evil", "x", tt.host, tt.path, "web")}, victim...)
			out, problems := renderObjects(t, stockEngine(t), append(objs, serviceObjs("evil", "web", 8081)...))
			if len(problems) != 1 || problems[0].Object != "Ingress evil/x" || problems[0].Reason != tt.reason || !strings.Contains(problems[0].Message, tt.message) {
				t.Fatalf("problems = %v, want one %s for Ingress evil/x containing %q", problems, tt.reason, tt.message)
			}
			for _, m := range []string{"hosts.map", "paths-exact.map", "paths-prefix-exact.map", "paths-prefix.map"} {
				if body := mapBody(t, out, m); strings.Contains(body, "evil") || strings.Contains(body, "aaaa") {
					t.Errorf("%s holds a line of the refused Ingress: %.80q", m, body)
				}
			}
			if got := mapBody(t, out, "paths-prefix.map"); got != "victim.example.com/ be_victim_web_80\n" {
				t.Errorf("paths-prefix.map = %q", got)
			}
			if _, ok := out.Plan.Backend("be_evil_web_80"); ok {
				t.Error("the refused Ingress still has its backend")
			}
		})
	}
}

// TestOverlongPathCannotHijackAnotherHostsRoute deploys the attack as the
// controller would, on every series: the victim's Ingress first (a full
// apply through the agent), then the attacker's, diffed into runtime ops
// and a fallback reload, or a reload. victim.example.com/admin must still
// reach the victim, and the attacker's Ingress must be reported.
func TestOverlongPathCannotHijackAnotherHostsRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		victimEcho, evilEcho := haproxytest.StartEcho(t, "victim"), haproxytest.StartEcho(t, "evil")
		victim := append([]map[string]any{ingressObj("victim", "site", "victim.example.com", "/", "web")}, serviceObjs("victim", "web", victimEcho.Port)...)
		evil := append([]map[string]any{ingressObj("evil", "x", "www.evil.test", hijackPath, "web")}, serviceObjs("evil", "web", evilEcho.Port)...)

		inst := haproxytest.Start(t, series, haproxytest.Options{})
		a := newLibraryAgent(t, inst)
		httpPort := haproxytest.FreePort(t)
		extra := map[string]any{"httpPort": httpPort, "httpsPort": 0, "statsPort": haproxytest.FreePort(t), "statsSocket": inst.StatsSocket}
		engine := stockEngine(t)
		render := func(objs []map[string]any) (*renderplan.Output, []templating.Problem) {
			t.Helper()
			out, problems, err := engine.Render(context.Background(), storeOf(t, engine.Config(), objs).Snapshot(), templating.RenderOptions{ExtraContext: extra})
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			return out, problems
		}

		first, problems := render(victim)
		if len(problems) != 0 {
			t.Fatalf("problems of the victim alone: %v", problems)
		}
		apply(t, a, fullApply(first, 1))
		url := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
		if status, body := haproxytest.Get(t, url+"/admin", "victim.example.com"); status != 200 || body != "victim\n" {
			t.Fatalf("before: GET victim.example.com/admin = %d %q", status, body)
		}

		next, problems := render(append(victim, evil...))
		found := false
		for _, p := range problems {
			found = found || p.Object == "Ingress evil/x" && p.Reason == templating.ReasonValueTooLong
		}
		if !found {
			t.Errorf("problems %v do not report Ingress evil/x as ValueTooLong", problems)
		}
		d := deployplan.Diff(next.Plan, deployplan.Baseline{Plan: first.Plan, HAProxyVersion: inst.Version, AgentOps: agentapi.OpKinds()})
		req := &agentapi.ApplyRequest{PlanID: next.Plan.ID(), ExpectedPlanID: first.Plan.ID(), Fence: 2, Verdict: d.Verdict, Ops: d.Ops,
			Files: next.Plan.Files, Bodies: map[string][]byte{}}
		for _, f := range next.Files {
			req.Bodies[f.Path] = f.Body
		}
		apply(t, a, req)
		// A reload loads the files, whatever the verdict was.
		if reply := inst.MasterCmd(t, "reload"); !strings.HasPrefix(reply, "Success=1") {
			t.Fatalf("reload: %s", reply)
		}

		for _, path := range []string{"/admin", "/admin/x"} {
			if status, body := haproxytest.Get(t, url+path, "victim.example.com"); status != 200 || body != "victim\n" {
				t.Errorf("GET victim.example.com%s = %d %q, want the victim", path, status, body)
			}
		}
		for _, m := range []string{"paths-prefix-exact.map", "paths-prefix.map"} {
			key := "victim.example.com/admin"
			if m == "paths-prefix.map" {
				key += "/"
			}
			if reply := inst.Cmd(t, fmt.Sprintf("get map maps/%s %s", m, key)); strings.Contains(reply, "be_evil") {
				t.Errorf("get map maps/%s %s: %s", m, key, reply)
			}
		}
		for _, m := range []string{"paths-prefix-exact.map", "paths-prefix.map"} {
			b, err := os.ReadFile(filepath.Join(inst.Dir, "maps", m))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "evil") {
				t.Errorf("maps/%s on disk holds the attacker's entry", m)
			}
		}
	})
}

// newLibraryAgent runs an agent on inst until the test ends: no reload
// pacing, no drift checks.
func newLibraryAgent(t *testing.T, inst *haproxytest.Instance) *agent.Agent {
	t.Helper()
	a, err := agent.New(agent.Config{
		BaseDir: inst.Dir, MasterSocket: inst.MasterSocket, StatsSocket: inst.StatsSocket,
		StateDir: filepath.Join(t.TempDir(), "state"), MinReloadInterval: -1, DriftInterval: -1,
		RemovableWait: 500 * time.Millisecond, DeleteRetry: 50 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(testWriter{t}, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = a.Close()
	})
	return a
}

// fullApply brings a pod to out: every body, a reload.
func fullApply(out *renderplan.Output, fence uint64) *agentapi.ApplyRequest {
	req := &agentapi.ApplyRequest{PlanID: out.Plan.ID(), Fence: fence, Mode: agentapi.ModeAuto, Verdict: agentapi.VerdictReload,
		Files: out.Plan.Files, Bodies: map[string][]byte{}}
	for _, f := range out.Files {
		req.Bodies[f.Path] = f.Body
	}
	return req
}

func apply(t *testing.T, a *agent.Agent, req *agentapi.ApplyRequest) *agentapi.ApplyResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := a.Apply(ctx, req)
	if err != nil {
		t.Fatalf("apply %s: %v", req.PlanID, err)
	}
	return res
}

// testWriter writes through t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
