package kubelet

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// valueLookup returns the value at key of a Secret or ConfigMap (kind
// "Secret" or "ConfigMap") in the pod's namespace; found is false when the
// object or the key does not exist.
type valueLookup func(kind, name, key string) (value string, found bool, err error)

// resolveEnv computes a container's environment as "NAME=value" strings in
// declaration order, following Kubernetes' rules for $(VAR) references to
// variables declared earlier. podIP and hostIP are the addresses the pod
// status will carry. It does no I/O other than through lookup.
func resolveEnv(pod *corev1.Pod, c *corev1.Container, podIP, hostIP string, lookup valueLookup) ([]string, error) {
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("container %s: envFrom is not supported by the process kubelet", c.Name)
	}
	vars := map[string]string{}
	out := make([]string, 0, len(c.Env))
	for _, e := range c.Env {
		var v string
		switch {
		case e.ValueFrom == nil:
			v = expandVars(e.Value, vars)
		case e.ValueFrom.FieldRef != nil:
			var err error
			if v, err = fieldValue(pod, e.ValueFrom.FieldRef.FieldPath, podIP, hostIP); err != nil {
				return nil, fmt.Errorf("container %s env %s: %w", c.Name, e.Name, err)
			}
		case e.ValueFrom.SecretKeyRef != nil, e.ValueFrom.ConfigMapKeyRef != nil:
			kind, name, key, optional := "Secret", "", "", false
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				name, key, optional = r.Name, r.Key, r.Optional != nil && *r.Optional
			} else {
				r := e.ValueFrom.ConfigMapKeyRef
				kind, name, key, optional = "ConfigMap", r.Name, r.Key, r.Optional != nil && *r.Optional
			}
			val, found, err := lookup(kind, name, key)
			if err != nil {
				return nil, fmt.Errorf("container %s env %s: %w", c.Name, e.Name, err)
			}
			if !found && !optional {
				return nil, fmt.Errorf("container %s env %s: %s %s has no key %q", c.Name, e.Name, kind, name, key)
			}
			if !found {
				continue
			}
			v = val
		case e.ValueFrom.ResourceFieldRef != nil:
			var err error
			if v, err = resourceValue(c, e.ValueFrom.ResourceFieldRef); err != nil {
				return nil, fmt.Errorf("container %s env %s: %w", c.Name, e.Name, err)
			}
		default:
			return nil, fmt.Errorf("container %s env %s: only fieldRef, resourceFieldRef, secretKeyRef and configMapKeyRef are supported", c.Name, e.Name)
		}
		vars[e.Name] = v
		out = append(out, e.Name+"="+v)
	}
	return out, nil
}

// fieldValue resolves a downward-API field path.
func fieldValue(pod *corev1.Pod, path, podIP, hostIP string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	case "status.hostIP", "status.hostIPs":
		return hostIP, nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
		if k, ok := strings.CutPrefix(path, prefix+"['"); ok {
			if k, ok = strings.CutSuffix(k, "']"); ok {
				return m[k], nil
			}
		}
	}
	return "", fmt.Errorf("fieldRef %q is not supported", path)
}

// expandVars replaces $(NAME) with vars[NAME] when defined, turns $$ into $,
// and leaves every other text, including undefined references, as written.
func expandVars(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// resourceValue resolves a resourceFieldRef of the container's own
// requests or limits ("limits.memory", "requests.cpu", ...) in units of
// its divisor (default 1), rounded up, as the kubelet does. An unset
// limit is 0 here (the kubelet would give the node's allocatable).
func resourceValue(c *corev1.Container, r *corev1.ResourceFieldSelector) (string, error) {
	kind, name, ok := strings.Cut(r.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("resourceFieldRef %q is not supported", r.Resource)
	}
	list := c.Resources.Limits
	if kind == "requests" {
		list = c.Resources.Requests
	}
	q := list[corev1.ResourceName(name)]
	div := r.Divisor
	if div.IsZero() {
		div = resource.MustParse("1")
	}
	v := (q.MilliValue() + div.MilliValue() - 1) / div.MilliValue()
	return strconv.FormatInt(v, 10), nil
}
