package templating_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
	"github.com/haptic-io/haptic/templating/fixtures"
)

// renderBench renders testdata/bench.yaml over objs inserted in the given
// order.
func renderBench(t *testing.T, objs []map[string]any) *renderplan.Output {
	t.Helper()
	cfg, err := templating.LoadConfig("testdata/bench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Map iteration order inside the template: ranging over a dict and
	// sprig's keys must not leak into the output.
	cfg.Snippets["zz-order"] = templating.TemplateSource{Template: `{{ range $k, $v := dict "q" 1 "a" 2 "m" 3 "c" 4 "x" 5 }}{{ $k }}{{ end }}{{ keys (dict "q" 1 "a" 2 "m" 3 "c" 4) }}{{ toJSON (dict "q" 1 "a" 2 "m" 3) }}`}
	cfg.HAProxyConfig = &templating.TemplateSource{Template: cfg.HAProxyConfig.Template + "# {{ render \"zz-order\" . }}\n"}
	out, problems, err := renderConfig(t, cfg, objs...)
	if err != nil || len(problems) > 0 {
		t.Fatalf("render: %v %v", err, problems)
	}
	return out
}

func TestRenderIsDeterministicAcrossInsertionOrders(t *testing.T) {
	objs := fixtures.GenerateIngressMix(200)
	reversed := make([]map[string]any, len(objs))
	for i, o := range objs {
		reversed[len(objs)-1-i] = o
	}
	interleaved := make([]map[string]any, 0, len(objs))
	for i := 0; i < len(objs); i += 2 {
		interleaved = append(interleaved, objs[i])
	}
	for i := 1; i < len(objs); i += 2 {
		interleaved = append(interleaved, objs[i])
	}
	first := renderBench(t, objs)
	for name, order := range map[string][]map[string]any{"same": objs, "reversed": reversed, "interleaved": interleaved} {
		t.Run(name, func(t *testing.T) {
			for i := 0; i < 3; i++ {
				got := renderBench(t, order)
				if got.Plan.ID() != first.Plan.ID() {
					t.Fatalf("plan ID %s, want %s", got.Plan.ID(), first.Plan.ID())
				}
				if len(got.Files) != len(first.Files) {
					t.Fatalf("%d files, want %d", len(got.Files), len(first.Files))
				}
				for j := range got.Files {
					if got.Files[j].Path != first.Files[j].Path || !bytes.Equal(got.Files[j].Body, first.Files[j].Body) {
						t.Fatalf("file %s differs", got.Files[j].Path)
					}
				}
			}
		})
	}
	if !bytes.Contains(first.Files[0].Body, []byte("# acmqx[a c m q]{\"a\":2,\"m\":3,\"q\":1}")) {
		t.Errorf("map iteration not sorted in output:\n%s", first.Files[0].Body[len(first.Files[0].Body)-200:])
	}
}

func TestRenderFromOneEngineConcurrently(t *testing.T) {
	cfg, err := templating.LoadConfig("testdata/bench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := store.NewMemory(cfg.WatchedResources)
	if _, err := st.AddObjects(fixtures.GenerateIngressMix(50)...); err != nil {
		t.Fatal(err)
	}
	snap := st.Snapshot()
	ids := make(chan string, 4)
	for i := 0; i < 4; i++ {
		go func() {
			out, _, err := e.Render(context.Background(), snap, templating.RenderOptions{})
			if err != nil {
				ids <- "error: " + err.Error()
				return
			}
			ids <- out.Plan.ID()
		}()
	}
	first := <-ids
	for i := 1; i < 4; i++ {
		if id := <-ids; id != first {
			t.Fatalf("concurrent renders gave %s and %s", first, id)
		}
	}
}
