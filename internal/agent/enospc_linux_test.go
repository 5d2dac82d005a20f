package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAFullWorkDirNacksTheApplyAndKeepsServing: the pod's work directory
// is a tmpfs (the chart's default medium) with a size limit, and it is
// full. A route add is answered with a NACK that carries the kernel's
// "no space left on device", HAProxy keeps serving the plan it ran, the
// tree is that plan's, and once there is room again the same change
// applies.
func TestAFullWorkDirNacksTheApplyAndKeepsServing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir, err := os.MkdirTemp("", "hxa-full-")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size=4m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	// Registered first, run last: after HAProxy and the agent stopped.
	t.Cleanup(func() {
		_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		_ = os.RemoveAll(dir)
	})
	s := startSiteIn(t, "3.4", dir)
	a := s.newAgent(t, nil)
	add := addShopRoute(t, s, a)

	filler := filepath.Join(dir, "filler")
	fill(t, filler)
	_, err = a.Apply(t.Context(), add.req)
	nack := nackStage(t, err)
	if !strings.Contains(nack.Message, "no space left on device") {
		t.Errorf("nack %+v, want the kernel's no space left on device", nack)
	}
	if code, body := s.get(t, "api.example.com"); code != 200 || body != "api-a\n" {
		t.Errorf("GET api = %d %q, want 200 api-a from the plan HAProxy ran", code, body)
	}
	if code, _ := s.get(t, "shop.example.com"); code != 404 {
		t.Errorf("GET shop.example.com = %d, want 404 (the refused route is not served)", code)
	}
	want := outFiles(add.prev)
	if diff := cmp.Diff(want, treeFiles(t, s.dir)); diff != "" {
		t.Errorf("tree is not the running plan's (-want +got):\n%s", diff)
	}
	st, err := a.State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.AppliedPlanID != add.prev.Plan.ID() {
		t.Errorf("applied plan %q, want the running one %q", st.AppliedPlanID, add.prev.Plan.ID())
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	add.req.Fence = st.Fence + 1
	mustApply(t, a, add.req)
	if code, body := s.get(t, "shop.example.com"); code != 200 || body != "shop-a\n" {
		t.Errorf("GET shop.example.com once there is room = %d %q, want 200 shop-a", code, body)
	}
}

// fill writes path until its file system has no room left.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for range 1 << 12 { // at most 256 MiB: the tmpfs holds 4
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
	t.Fatal("the file system never filled")
}
