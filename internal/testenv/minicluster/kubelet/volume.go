package kubelet

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// volumeFiles selects the files of a secret or configMap volume: every key
// when items is empty, else each item's key at its path. A missing key is an
// error unless optional. It does no I/O.
func volumeFiles(data map[string][]byte, items []corev1.KeyToPath, defaultMode int32, optional bool) (map[string]fileSpec, error) {
	out := map[string]fileSpec{}
	if len(items) == 0 {
		for k, v := range data {
			out[k] = fileSpec{data: v, mode: fs.FileMode(defaultMode)}
		}
		return out, nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf("key %q not found", it.Key)
		}
		p := filepath.Clean(it.Path)
		if filepath.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
			return nil, fmt.Errorf("item path %q escapes the volume", it.Path)
		}
		mode := defaultMode
		if it.Mode != nil {
			mode = *it.Mode
		}
		out[p] = fileSpec{data: v, mode: fs.FileMode(mode)}
	}
	return out, nil
}

type fileSpec struct {
	data []byte
	mode fs.FileMode
}

// writeVolume writes files into dir.
func writeVolume(dir string, files map[string]fileSpec) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for p, f := range files {
		dst := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, f.data, f.mode.Perm()); err != nil {
			return err
		}
	}
	return nil
}

// mountRewrite maps a container mountPath to the directory holding the
// volume's files on the host.
type mountRewrite struct {
	mountPath string
	hostPath  string
}

// rewriteMounts returns s with a leading mountPath (the whole string, or the
// value after the first '=' as in "--flag=/path") replaced by its host path.
// The longest matching mountPath wins. It does no I/O.
func rewriteMounts(s string, mounts []mountRewrite) string {
	if flag, val, ok := strings.Cut(s, "="); ok && !strings.HasPrefix(s, "/") {
		return flag + "=" + rewriteMounts(val, mounts)
	}
	sorted := append([]mountRewrite(nil), mounts...)
	sort.Slice(sorted, func(i, j int) bool { return len(sorted[i].mountPath) > len(sorted[j].mountPath) })
	for _, m := range sorted {
		mp := strings.TrimSuffix(m.mountPath, "/")
		if s == mp {
			return m.hostPath
		}
		if rest, ok := strings.CutPrefix(s, mp+"/"); ok {
			return filepath.Join(m.hostPath, rest)
		}
	}
	return s
}

func sortedStrings(s []string) []string {
	sort.Strings(s)
	return s
}
