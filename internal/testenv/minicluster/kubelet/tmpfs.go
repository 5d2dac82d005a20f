package kubelet

import (
	"fmt"
	"os"
	"syscall"

	"k8s.io/apimachinery/pkg/api/resource"
)

// mountMemoryVolume mounts a tmpfs at dir, as the kubelet does for an
// emptyDir of medium Memory: files written there never wait on the
// node's disk. sizeLimit, when set, is the tmpfs size; else the kernel's
// default (half the RAM) applies.
func mountMemoryVolume(dir string, sizeLimit *resource.Quantity) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	opts := "mode=0777"
	if sizeLimit != nil && !sizeLimit.IsZero() {
		opts += fmt.Sprintf(",size=%d", sizeLimit.Value())
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount tmpfs at %s: %w", dir, err)
	}
	return nil
}

// unmountMemoryVolume undoes mountMemoryVolume. The unmount is lazy: a
// process of the pod that outlived its stop keeps what it holds open,
// and the pod's directory can be removed at once.
func unmountMemoryVolume(dir string) error {
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("unmount tmpfs at %s: %w", dir, err)
	}
	return nil
}
