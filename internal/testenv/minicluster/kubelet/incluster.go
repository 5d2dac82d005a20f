package kubelet

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// projectedFiles resolves a projected volume's sources into files: a
// serviceAccountToken by a TokenRequest bound to the pod (as the kubelet
// asks for one), configMap and secret sources like their volumes, and
// downwardAPI items by their fieldRef. ClusterTrustBundle and resource
// field sources are refused.
func (k *Kubelet) projectedFiles(ctx context.Context, pod *corev1.Pod, p *corev1.ProjectedVolumeSource, podIP string) (map[string]fileSpec, error) {
	mode := int32(0o644)
	if p.DefaultMode != nil {
		mode = *p.DefaultMode
	}
	out := map[string]fileSpec{}
	add := func(files map[string]fileSpec) {
		for path, f := range files {
			out[path] = f
		}
	}
	for _, src := range p.Sources {
		switch {
		case src.ServiceAccountToken != nil:
			tok, err := k.podToken(ctx, pod, src.ServiceAccountToken)
			if err != nil {
				return nil, err
			}
			out[filepath.Clean(src.ServiceAccountToken.Path)] = fileSpec{data: []byte(tok), mode: fs.FileMode(mode)}
		case src.ConfigMap != nil, src.Secret != nil:
			kind, name, items, optional := "ConfigMap", "", []corev1.KeyToPath(nil), false
			if c := src.ConfigMap; c != nil {
				name, items, optional = c.Name, c.Items, c.Optional != nil && *c.Optional
			} else {
				kind, name, items, optional = "Secret", src.Secret.Name, src.Secret.Items, src.Secret.Optional != nil && *src.Secret.Optional
			}
			data, err := k.objectData(ctx, pod.Namespace, kind, name)
			if err != nil {
				return nil, err
			}
			if data == nil && !optional {
				return nil, fmt.Errorf("projected %s %s/%s not found", kind, pod.Namespace, name)
			}
			files, err := volumeFiles(data, items, mode, optional)
			if err != nil {
				return nil, fmt.Errorf("projected %s %s: %w", kind, name, err)
			}
			add(files)
		case src.DownwardAPI != nil:
			for _, it := range src.DownwardAPI.Items {
				if it.FieldRef == nil {
					return nil, fmt.Errorf("projected downwardAPI %s: only fieldRef is supported by the process kubelet", it.Path)
				}
				v, err := fieldValue(pod, it.FieldRef.FieldPath, podIP, "127.0.0.1")
				if err != nil {
					return nil, fmt.Errorf("projected downwardAPI %s: %w", it.Path, err)
				}
				m := mode
				if it.Mode != nil {
					m = *it.Mode
				}
				out[filepath.Clean(it.Path)] = fileSpec{data: []byte(v), mode: fs.FileMode(m)}
			}
		default:
			return nil, fmt.Errorf("projected volume source %+v is not supported by the process kubelet", src)
		}
	}
	for path := range out {
		if filepath.IsAbs(path) || path == ".." || strings.HasPrefix(path, "../") {
			return nil, fmt.Errorf("projected path %q escapes the volume", path)
		}
	}
	return out, nil
}

// podToken asks the apiserver for a token of the pod's service account,
// bound to the pod, with the source's audience and lifetime.
func (k *Kubelet) podToken(ctx context.Context, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection) (string, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: src.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if src.Audience != "" {
		req.Spec.Audiences = []string{src.Audience}
	}
	tr, err := k.cfg.Client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of service account %s/%s: %w", pod.Namespace, sa, err)
	}
	return tr.Status.Token, nil
}

// bindMount is a volume mounted for real at dst in a container's own
// mount namespace.
type bindMount struct{ src, dst string }

// underRun reports whether a mount path lies under /run (or /var/run,
// its usual symlink): the only place the process kubelet mounts volumes
// for real, on a tmpfs of the container's own, so that programs that
// read a fixed path (client-go's in-cluster config reads
// /var/run/secrets/kubernetes.io/serviceaccount) find the files there.
func underRun(path string) bool {
	p := filepath.Clean(path)
	return strings.HasPrefix(p, "/run/") || strings.HasPrefix(p, "/var/run/")
}

// bindArgv is what `ip netns exec <ns>` runs for a container: the binary
// itself, or, with bind mounts, a shell that mounts a tmpfs of the
// container's own over /run (`ip netns exec` gives each process a mount
// namespace of its own, a slave of the node's, so nothing leaks out),
// binds each volume there and execs the binary in its place (same PID).
// It does no I/O.
func bindArgv(binds []bindMount, binary string, args []string) []string {
	if len(binds) == 0 {
		return append([]string{binary}, args...)
	}
	script := []string{"set -e", "mount -t tmpfs -o mode=0755 kubelet-run /run"}
	for _, b := range binds {
		script = append(script, "mkdir -p "+shellQuote(b.dst), "mount --bind "+shellQuote(b.src)+" "+shellQuote(b.dst))
	}
	script = append(script, `exec "$@"`)
	return append([]string{"/bin/sh", "-c", strings.Join(script, "\n"), "sh", binary}, args...)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// serviceEnv is what the kubelet gives every container about the API
// server: KUBERNETES_SERVICE_HOST and _PORT (with _PORT_HTTPS), the
// ClusterIP and port of Service default/kubernetes, which the service
// proxy forwards to Config.APIServer. Nil without Config.APIServer.
func (k *Kubelet) serviceEnv(ctx context.Context) ([]string, error) {
	if k.cfg.APIServer == "" {
		return nil, nil
	}
	svc, err := k.cfg.Client.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("service default/kubernetes: %w", err)
	}
	if len(svc.Spec.Ports) == 0 || svc.Spec.ClusterIP == "" {
		return nil, fmt.Errorf("service default/kubernetes has no ClusterIP or port")
	}
	port := strconv.Itoa(int(svc.Spec.Ports[0].Port))
	return []string{
		"KUBERNETES_SERVICE_HOST=" + svc.Spec.ClusterIP,
		"KUBERNETES_SERVICE_PORT=" + port,
		"KUBERNETES_SERVICE_PORT_HTTPS=" + port,
	}, nil
}
