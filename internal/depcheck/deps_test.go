package depcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/haptic-io/haptic"

// pkg is the part of `go list -json` these tests read.
type pkg struct {
	ImportPath string
	Imports    []string
}

func TestPurePackagesDoNotLinkNetHTTP(t *testing.T) {
	pure := []string{"./deployplan", "./renderplan"}
	root := moduleRoot(t)
	if fi, err := os.Stat(filepath.Join(root, "store")); err == nil && fi.IsDir() {
		pure = append(pure, "./store")
	}
	for _, p := range pure {
		t.Run(strings.TrimPrefix(p, "./"), func(t *testing.T) {
			assertNotLinked(t, root, p, "net/http")
		})
	}
}

func TestControllerDoesNotLinkTheAgent(t *testing.T) {
	assertNotLinked(t, moduleRoot(t), "./internal/controller", module+"/internal/agent")
}

// TestAgentBinaryLinksNoKubernetesClient keeps haptic-agent, which runs
// in every HAProxy pod, to the agent runtime: the Kubernetes client, the
// templating engine and the controller each cost its every process
// memory at start (package initialisation) for nothing.
func TestAgentBinaryLinksNoKubernetesClient(t *testing.T) {
	root := moduleRoot(t)
	for _, banned := range []string{"k8s.io/client-go/rest", "k8s.io/apimachinery/pkg/runtime", module + "/templating", module + "/internal/controller"} {
		t.Run(banned, func(t *testing.T) { assertNotLinked(t, root, "./cmd/haptic-agent", banned) })
	}
}

// assertNotLinked fails the test when the package at dir (relative to the
// module root) depends on banned, directly or through its imports, and
// names the chain of imports that leads there.
func assertNotLinked(t *testing.T, root, dir, banned string) {
	t.Helper()
	pkgs := listDeps(t, root, dir)
	if _, ok := pkgs[banned]; !ok {
		return
	}
	from := module + strings.TrimPrefix(dir, ".")
	t.Errorf("%s links %s: %s", from, banned, strings.Join(importChain(pkgs, from, banned), " → "))
}

// listDeps runs `go list -deps -json dir` in root and returns the
// packages it lists, by import path.
func listDeps(t *testing.T, root, dir string) map[string]pkg {
	t.Helper()
	goCmd := goCommand(t)
	cmd := exec.Command(goCmd, "list", "-deps", "-json=ImportPath,Imports", dir)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", dir, err, stderr.Bytes())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -deps %s: decode: %v", dir, err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list -deps %s listed no packages", dir)
	}
	return pkgs
}

// importChain returns the shortest chain of imports from from to to,
// both included, or just the two when there is none in pkgs.
func importChain(pkgs map[string]pkg, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, imp := range pkgs[p].Imports {
			if _, seen := prev[imp]; !seen {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return []string{from, to}
}

// goCommand returns the go command on PATH, skipping the test without one.
func goCommand(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH; the import graph cannot be listed")
	}
	return p
}

// moduleRoot returns the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(goCommand(t), "env", "GOMOD")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		t.Fatal("go env GOMOD: not in a module")
	}
	return filepath.Dir(gomod)
}
