package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// LoadDir reads every *.yaml, *.yml and *.json file under dir (recursively,
// in lexical order) with [DecodeManifests] and files each object under
// every alias whose apiVersion equals the object's apiVersion and whose
// resource is [ResourceForKind] of its kind. Objects no alias watches are
// skipped. Two objects with the same alias, namespace and name are an
// error.
func LoadDir(dir string, resources map[string]WatchedResource) (*Memory, error) {
	store, err := NewMemory(resources)
	if err != nil {
		return nil, err
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load dir %s: %w", dir, err)
	}
	sort.Strings(files)
	aliases := slices.Sorted(maps.Keys(resources))
	seen := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("load dir: %w", err)
		}
		objs, err := DecodeManifests(b)
		if err != nil {
			return nil, fmt.Errorf("load dir: %s: %w", f, err)
		}
		for i, obj := range objs {
			apiVersion, _ := obj["apiVersion"].(string)
			kind, _ := obj["kind"].(string)
			ns, name, _ := ObjectMeta(obj)
			for _, alias := range aliases {
				wr := resources[alias]
				if wr.APIVersion != apiVersion || wr.Resource != ResourceForKind(kind) {
					continue
				}
				if name == "" {
					return nil, fmt.Errorf("load dir: %s: object %d (%s %s): no metadata.name", f, i, apiVersion, kind)
				}
				id := alias + "\x00" + ns + "\x00" + name
				if prev, dup := seen[id]; dup {
					return nil, fmt.Errorf("load dir: %s: %s %s/%s already loaded from %s", f, kind, ns, name, prev)
				}
				seen[id] = f
				if err := store.Add(alias, obj); err != nil {
					return nil, fmt.Errorf("load dir: %s: %w", f, err)
				}
			}
		}
	}
	return store, nil
}

// DecodeManifests decodes a YAML or JSON stream of Kubernetes objects:
// documents separated by "---" lines, empty documents skipped, and the
// items of every kind "List" (or "<Kind>List") flattened into the result.
// Every document must be a mapping. Integral numbers become int64, others
// float64, as in Kubernetes' unstructured objects. Scalars follow YAML 1.1
// like kubectl: an unquoted y, n, yes, no, on or off is a boolean.
func DecodeManifests(b []byte) ([]map[string]any, error) {
	var out []map[string]any
	for i, doc := range splitYAMLDocuments(b) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		v, err := decodeYAMLDocument(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if v == nil {
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("document %d: not a mapping", i)
		}
		if kind, _ := obj["kind"].(string); kind == "List" || strings.HasSuffix(kind, "List") && obj["items"] != nil {
			items, ok := obj["items"].([]any)
			if !ok && obj["items"] != nil {
				return nil, fmt.Errorf("document %d: %s items is not a list", i, kind)
			}
			for j, it := range items {
				m, ok := it.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("document %d: item %d: not a mapping", i, j)
				}
				out = append(out, m)
			}
			continue
		}
		out = append(out, obj)
	}
	return out, nil
}

// splitYAMLDocuments splits at lines that are "---" or start with "--- ".
// The documents are slices of b.
func splitYAMLDocuments(b []byte) [][]byte {
	var docs [][]byte
	doc := 0 // start of the current document
	for line := 0; line < len(b); {
		next := len(b)
		if i := bytes.IndexByte(b[line:], '\n'); i >= 0 {
			next = line + i + 1
		}
		t := bytes.TrimRight(b[line:next], "\r\n")
		if bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			docs = append(docs, b[doc:line])
			doc = next
		}
		line = next
	}
	return append(docs, b[doc:])
}

// Normalize converts json.Number and integral float64 values to int64
// (other numbers to float64), recursively, in place where it can.
func Normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = Normalize(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = Normalize(e)
		}
		return x
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return Normalize(f)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case int:
		return int64(x)
	}
	return v
}

// knownResources maps the kinds HAPTIC's libraries watch to their plural
// resource names.
var knownResources = map[string]string{
	"BackendTLSPolicy": "backendtlspolicies",
	"ConfigMap":        "configmaps",
	"EndpointSlice":    "endpointslices",
	"Endpoints":        "endpoints",
	"GRPCRoute":        "grpcroutes",
	"Gateway":          "gateways",
	"GatewayClass":     "gatewayclasses",
	"HTTPRoute":        "httproutes",
	"Ingress":          "ingresses",
	"IngressClass":     "ingressclasses",
	"Namespace":        "namespaces",
	"NetworkPolicy":    "networkpolicies",
	"Node":             "nodes",
	"Pod":              "pods",
	"ReferenceGrant":   "referencegrants",
	"Secret":           "secrets",
	"Service":          "services",
	"TCPRoute":         "tcproutes",
	"TLSRoute":         "tlsroutes",
	"UDPRoute":         "udproutes",
}

// ResourceForKind returns the plural resource name of a kind: from a small
// table of known kinds (Ingress → ingresses, EndpointSlice →
// endpointslices, Endpoints → endpoints, …), otherwise the lower-cased kind
// plus "es" after s, x, z, ch or sh, "ies" for a consonant then y, and "s"
// otherwise. Custom resources with irregular plurals are loaded by giving
// them a regular kind or by feeding a [Memory] directly.
func ResourceForKind(kind string) string {
	if r, ok := knownResources[kind]; ok {
		return r
	}
	k := strings.ToLower(kind)
	switch {
	case k == "":
		return ""
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "z"),
		strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}
