package libraries_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/haptic-io/haptic/templating"
	"github.com/haptic-io/haptic/templating/fixtures"
)

// TestMapsGrowLinearlyWithIngresses renders the reference mix at 100 and
// 500 Ingresses: every map and the backend count grow exactly 5x (the
// reference implementation's prefix maps grew 15x).
func TestMapsGrowLinearlyWithIngresses(t *testing.T) {
	counts := func(n int) map[string]int {
		engine, snap := benchEngine(t, n)
		out, problems, err := engine.Render(context.Background(), snap, templating.RenderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) > 0 {
			t.Fatalf("problems: %v", problems)
		}
		c := map[string]int{"backends": len(out.Plan.Backends)}
		for _, m := range out.Plan.Maps {
			c[m.Path] = len(m.Entries)
		}
		return c
	}
	small, large := counts(100), counts(500)
	for name, n := range small {
		if large[name] != 5*n {
			t.Errorf("%s: %d entries for 100 Ingresses, %d for 500, want exactly 5x", name, n, large[name])
		}
	}
	if small["maps/paths-prefix.map"] != 100 || small["maps/paths-exact.map"] != 100 || small["maps/hosts.map"] != 100 {
		t.Errorf("100 Ingresses (one Prefix / and one Exact /healthz each): %v", small)
	}
}

// TestRenderIsDeterministicWhateverTheInsertionOrder renders the same
// objects inserted in two different orders: byte-identical files and the
// same plan ID.
func TestRenderIsDeterministicWhateverTheInsertionOrder(t *testing.T) {
	objs := append(fixtures.GenerateIngressMix(50), hostileIngress("ok.example.com", "/a b", "web", "http", "x")...)
	engine := stockEngine(t)
	out1, p1 := renderObjects(t, engine, objs)
	shuffled := append([]map[string]any(nil), objs...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	out2, p2 := renderObjects(t, engine, shuffled)
	if out1.Plan.ID() != out2.Plan.ID() {
		t.Errorf("plan IDs differ: %s vs %s", out1.Plan.ID(), out2.Plan.ID())
	}
	if len(out1.Files) != len(out2.Files) {
		t.Fatalf("%d files vs %d", len(out1.Files), len(out2.Files))
	}
	for i := range out1.Files {
		if string(out1.Files[i].Body) != string(out2.Files[i].Body) {
			t.Errorf("%s differs between the two renders", out1.Files[i].Path)
		}
	}
	if len(p1) != 1 || len(p2) != 1 || p1[0] != p2[0] {
		t.Errorf("problems differ or are not the one PathInvalid: %v vs %v", p1, p2)
	}
}
