package minicluster

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// SplitManifests decodes a multi-document YAML stream (documents separated
// by lines that start with "---") into objects, in order. Documents that hold
// only comments or whitespace are skipped; a "List" kind is flattened. Each
// object must have apiVersion, kind and metadata.name. It does no I/O.
func SplitManifests(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for i, doc := range splitDocuments(data) {
		if isBlankDocument(doc) {
			continue
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("manifest document %d: %w", i, err)
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("manifest document %d: %w", i, err)
		}
		objs := []*unstructured.Unstructured{u}
		if u.IsList() {
			l, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("manifest document %d: %w", i, err)
			}
			objs = objs[:0]
			for j := range l.Items {
				objs = append(objs, &l.Items[j])
			}
		}
		for _, o := range objs {
			if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
				return nil, fmt.Errorf("manifest document %d: apiVersion, kind and metadata.name are required", i)
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// splitDocuments cuts data at lines beginning with "---".
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "---") && strings.TrimSpace(strings.TrimPrefix(line, "---")) == "" {
			docs = append(docs, bytes.Clone(cur.Bytes()))
			cur.Reset()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	return append(docs, cur.Bytes())
}

func isBlankDocument(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}
