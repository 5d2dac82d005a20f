package kubelet

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestVolumeFilesHonoursItemsAndModes(t *testing.T) {
	data := map[string][]byte{"tls.crt": []byte("C"), "tls.key": []byte("K"), "other": []byte("O")}
	mode := int32(0o600)
	got, err := volumeFiles(data, []corev1.KeyToPath{{Key: "tls.crt", Path: "crt"}, {Key: "tls.key", Path: "dir/key", Mode: &mode}}, 0o644, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fileSpec{"crt": {data: []byte("C"), mode: 0o644}, "dir/key": {data: []byte("K"), mode: 0o600}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(fileSpec{})); d != "" {
		t.Fatalf("files (-want +got):\n%s", d)
	}

	all, err := volumeFiles(data, nil, 0o644, false)
	if err != nil || len(all) != 3 {
		t.Fatalf("without items: %d files, %v; want all 3 keys", len(all), err)
	}
}

func TestVolumeFilesRejectsMissingKeysAndEscapes(t *testing.T) {
	data := map[string][]byte{"a": []byte("A")}
	if _, err := volumeFiles(data, []corev1.KeyToPath{{Key: "b", Path: "b"}}, 0o644, false); err == nil {
		t.Error("missing required key: no error")
	}
	if got, err := volumeFiles(data, []corev1.KeyToPath{{Key: "b", Path: "b"}}, 0o644, true); err != nil || len(got) != 0 {
		t.Errorf("missing optional key = %v, %v; want no files and no error", got, err)
	}
	for _, p := range []string{"../x", "/etc/passwd", ".."} {
		if _, err := volumeFiles(data, []corev1.KeyToPath{{Key: "a", Path: p}}, 0o644, false); err == nil {
			t.Errorf("item path %q: no error", p)
		}
	}
}

func TestWriteVolumeCreatesFilesWithModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vol")
	if err := writeVolume(dir, map[string]fileSpec{"d/key": {data: []byte("K"), mode: 0o600}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "d", "key"))
	if err != nil || string(b) != "K" {
		t.Fatalf("read back %q, %v", b, err)
	}
	st, _ := os.Stat(filepath.Join(dir, "d", "key"))
	if st.Mode().Perm() != fs.FileMode(0o600) {
		t.Fatalf("mode = %v, want 0600", st.Mode().Perm())
	}
}

func TestRewriteMountsMapsMountPathsToHostDirectories(t *testing.T) {
	mounts := []mountRewrite{
		{mountPath: "/etc/secret-volume", hostPath: "/pods/p/volumes/secret-volume"},
		{mountPath: "/etc/secret-volume/nested", hostPath: "/pods/p/volumes/nested"},
		{mountPath: "/root/", hostPath: "/pods/p/volumes/conf"},
	}
	tests := map[string]string{
		"/etc/secret-volume/crt":        "/pods/p/volumes/secret-volume/crt",
		"/etc/secret-volume":            "/pods/p/volumes/secret-volume",
		"/etc/secret-volume/nested/a":   "/pods/p/volumes/nested/a",
		"/etc/secret-volumes/crt":       "/etc/secret-volumes/crt",
		"/root/Corefile":                "/pods/p/volumes/conf/Corefile",
		"--conf=/root/Corefile":         "--conf=/pods/p/volumes/conf/Corefile",
		"-conf":                         "-conf",
		"plain value":                   "plain value",
		"/etc/other=/etc/secret-volume": "/etc/other=/etc/secret-volume",
	}
	for in, want := range tests {
		if got := rewriteMounts(in, mounts); got != want {
			t.Errorf("rewriteMounts(%q) = %q, want %q", in, got, want)
		}
	}
}
