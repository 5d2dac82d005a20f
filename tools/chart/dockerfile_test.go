package chart_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// dockerfile is what the tests read of the repository's Dockerfile.
type dockerfile struct {
	runtime string   // the last FROM's image
	user    string   // the last USER
	build   string   // the RUN line that builds the binaries
	copies  []string // the COPY lines' fields after COPY
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d dockerfile
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "FROM":
			d.runtime = fields[1]
		case "USER":
			d.user = fields[1]
		case "COPY":
			d.copies = append(d.copies, strings.Join(fields[1:], " "))
		case "RUN":
			if strings.Contains(s.Text(), "go build") {
				d.build = strings.TrimSpace(strings.TrimPrefix(s.Text(), "RUN"))
			}
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return d
}

// chartDefaults reads the chart's values.yaml.
func chartDefaults(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDockerfileMatchesTheChart: the image runs as the user the chart's
// pods run as, on the HAProxy image the chart runs beside it.
func TestDockerfileMatchesTheChart(t *testing.T) {
	d := readDockerfile(t)
	v := chartDefaults(t)
	sc := v["securityContext"].(map[string]any)
	if want := fmt.Sprintf("%v:%v", sc["runAsUser"], sc["runAsGroup"]); d.user != want {
		t.Errorf("Dockerfile USER %q; want %q, the chart's securityContext", d.user, want)
	}
	img := v["haproxy"].(map[string]any)["image"].(map[string]any)
	if want := fmt.Sprintf("%v:%v", img["repository"], img["tag"]); d.runtime != want {
		t.Errorf("Dockerfile runtime image %q; want %q, the chart's haproxy.image", d.runtime, want)
	}
	if !strings.HasPrefix(d.build, "CGO_ENABLED=0 go build ") || !strings.HasSuffix(d.build, " -o /out/ ./cmd/haptic ./cmd/haptic-agent") {
		t.Errorf("Dockerfile build %q; want a static build of ./cmd/haptic and ./cmd/haptic-agent into /out/", d.build)
	}
	// The HAProxy pods' agent and bootstrap run the program the chart
	// names, which the image must hold.
	if want := "--from=build /out/haptic /out/haptic-agent /usr/local/bin/"; !slices.Contains(d.copies, want) {
		t.Errorf("Dockerfile copies %q; want %q (the chart runs /usr/local/bin/haptic-agent)", d.copies, want)
	}
}

// TestDockerfileBuildStageMakesAStaticBinary runs the Dockerfile's build
// command on this machine (there is no container engine here): the
// binary must link statically, since the runtime image is not the build
// image, and run.
func TestDockerfileBuildStageMakesAStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping a build of ./cmd/haptic")
	}
	d := readDockerfile(t)
	dir := t.TempDir()
	cmdline := strings.Replace(d.build, "-o /out/ ", "-o "+dir+"/ ", 1)
	if cmdline == d.build {
		t.Fatalf("Dockerfile build %q: no -o /out/", d.build)
	}
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = repoRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, b)
	}
	for bin, want := range map[string]string{"haptic": "controller", "haptic-agent": "bootstrap"} {
		out := filepath.Join(dir, bin)
		f, err := elf.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s is dynamically linked; the runtime image may lack its loader", out)
			}
		}
		_ = f.Close()
		help, err := exec.Command(out, "--help").CombinedOutput()
		if err != nil || !bytes.Contains(help, []byte(want)) {
			t.Errorf("%s --help: %v; want %q in\n%s", bin, err, want, help)
		}
	}
}
