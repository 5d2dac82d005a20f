package kubelet

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const tmpfsMagic = 0x01021994

func fsType(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatalf("statfs %s: %v", dir, err)
	}
	return int64(st.Type)
}

// An emptyDir of medium Memory is a tmpfs of its sizeLimit, mounted
// where the containers find the volume, and the pod's stop unmounts it;
// a plain emptyDir stays a directory of the node's disk.
func TestAMemoryEmptyDirIsATmpfsUntilThePodStops(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root (the mini cluster's kubelet runs as root)")
	}
	limit := resource.MustParse("8Mi")
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Volumes: []corev1.Volume{
			{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &limit}}},
			{Name: "disk", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
		Containers: []corev1.Container{{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "work", MountPath: "/var/lib/work"}, {Name: "disk", MountPath: "/scratch"}}}},
	}}
	k := &Kubelet{cfg: Config{Log: slog.New(slog.DiscardHandler)}}
	rp := &runningPod{dir: t.TempDir()}
	released := false
	t.Cleanup(func() {
		if !released {
			k.releaseVolumes(rp)
		}
	})
	mounts, _, err := k.materializeVolumes(context.Background(), pod, rp, "10.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	work, disk := filepath.Join(rp.dir, "volumes", "work"), filepath.Join(rp.dir, "volumes", "disk")
	if got := rewriteMounts("/var/lib/work/haproxy.cfg", mounts["c"]); got != filepath.Join(work, "haproxy.cfg") {
		t.Fatalf("the mount path maps to %s, want under %s", got, work)
	}
	if fsType(t, work) != tmpfsMagic {
		t.Fatalf("%s is not a tmpfs", work)
	}
	if fsType(t, disk) == tmpfsMagic {
		t.Fatalf("the plain emptyDir %s is a tmpfs", disk)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(work, &st); err != nil {
		t.Fatal(err)
	}
	if size := int64(st.Blocks) * st.Bsize; size != limit.Value() {
		t.Errorf("tmpfs size %d bytes, want the sizeLimit %d", size, limit.Value())
	}
	if err := os.WriteFile(filepath.Join(work, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	k.releaseVolumes(rp)
	released = true
	if fsType(t, work) == tmpfsMagic {
		t.Fatalf("%s is still a tmpfs after the pod stopped", work)
	}
	if _, err := os.Stat(filepath.Join(work, "f")); !os.IsNotExist(err) {
		t.Fatalf("a file of the tmpfs is still there after the unmount: %v", err)
	}
}
