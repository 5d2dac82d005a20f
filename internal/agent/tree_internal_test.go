package agent

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckPathAcceptsOnlyTheManagedTree(t *testing.T) {
	for p, ok := range map[string]bool{
		"haproxy.cfg":                       true,
		"maps/hosts.map":                    true,
		"certs/a/b.pem":                     true,
		"general/errors/503.http":           true,
		"":                                  false,
		"/etc/passwd":                       false,
		"../x":                              false,
		"maps/../haproxy.cfg":               false,
		"maps":                              false,
		"maps/":                             false,
		"maps//x":                           false,
		"maps/./x":                          false,
		"maps/.hidden":                      false,
		".haptic/state.json":                false,
		"other/x":                           false,
		"haproxy.cfg/x":                     false,
		"maps/a b":                          false,
		"maps/a\nb":                         false,
		"maps/a\\b":                         false,
		"maps/\xff":                         false,
		"maps/" + strings.Repeat("a", 1100): false,
	} {
		if got := checkPath(p) == nil; got != ok {
			t.Errorf("checkPath(%q) accepted=%v, want %v", p, got, ok)
		}
	}
}

func TestSwapOrderPutsTheConfigLast(t *testing.T) {
	got := swapOrder([]journalEntry{{Path: "haproxy.cfg"}, {Path: "maps/b"}, {Path: "certs/a"}})
	want := []journalEntry{{Path: "certs/a"}, {Path: "maps/b"}, {Path: "haproxy.cfg"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("swap order (-want +got):\n%s", diff)
	}
}

func TestConfigDefaultsAndCeilings(t *testing.T) {
	c, err := Config{BaseDir: "/b", MasterSocket: "/m", StatsSocket: "/s"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.MinReloadInterval != DefaultMinReloadInterval || c.ReloadTimeout != DefaultReloadTimeout ||
		c.DriftInterval != DefaultDriftInterval || c.StateDir != "/b/.haptic" {
		t.Errorf("defaults: %+v", c)
	}
	for name, bad := range map[string]Config{
		"BaseDir":           {MasterSocket: "/m", StatsSocket: "/s"},
		"MinReloadInterval": {BaseDir: "/b", MasterSocket: "/m", StatsSocket: "/s", MinReloadInterval: 61e9},
		"ReloadTimeout":     {BaseDir: "/b", MasterSocket: "/m", StatsSocket: "/s", ReloadTimeout: 61e9},
		"MasterSocket":      {BaseDir: "/b", StatsSocket: "/s"},
	} {
		if _, err := bad.withDefaults(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the field", name, err)
		}
	}
}

// FuzzCheckPath: an accepted path stays inside the base directory, under
// haproxy.cfg or a managed directory, with no hidden element.
func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"haproxy.cfg", "maps/hosts.map", "../x", "maps/../../x", "maps/.x", "certs/a/b.pem", "general/x y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if checkPath(p) != nil {
			return
		}
		joined := filepath.Join("/base", p)
		if !strings.HasPrefix(joined, "/base/") {
			t.Fatalf("%q escapes the base: %s", p, joined)
		}
		first, _, _ := strings.Cut(p, "/")
		if p != "haproxy.cfg" && !isManagedDir(first) {
			t.Fatalf("%q is outside the managed tree", p)
		}
		for _, e := range strings.Split(p, "/") {
			if strings.HasPrefix(e, ".") || e == "" {
				t.Fatalf("%q has a hidden or empty element", p)
			}
		}
	})
}
