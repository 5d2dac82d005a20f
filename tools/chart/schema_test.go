package chart_test

import (
	"strings"
	"testing"
)

// TestSchemaRefusesBadValues: a wrong value stops the install before
// anything is rendered, and the message names the value and what it
// should be.
func TestSchemaRefusesBadValues(t *testing.T) {
	c := loadChart(t)
	for name, tc := range map[string]struct {
		values map[string]any
		want   []string // substrings of the error
	}{
		"replicas is a string": {
			values: map[string]any{"controller": map[string]any{"replicas": "two"}},
			want:   []string{"/controller/replicas", "got string, want integer"},
		},
		"service type unknown": {
			values: map[string]any{"service": map[string]any{"type": "Foo"}},
			want:   []string{"/service/type", "LoadBalancer", "NodePort", "ClusterIP"},
		},
		"negative HAProxy replicas": {
			values: map[string]any{"haproxy": map[string]any{"replicas": -1}},
			want:   []string{"/haproxy/replicas", "minimum"},
		},
		"privileged HAProxy port": {
			values: map[string]any{"haproxy": map[string]any{"ports": map[string]any{"http": 80, "https": 8443, "stats": 8404}}},
			want:   []string{"/haproxy/ports/http", "minimum: got 80"},
		},
		"misspelt group": {
			values: map[string]any{"controler": map[string]any{"replicas": 1}},
			want:   []string{"controler"},
		},
		"misspelt field": {
			values: map[string]any{"agent": map[string]any{"existingSecrets": "x"}},
			want:   []string{"/agent", "existingSecrets"},
		},
		"log level unknown": {
			values: map[string]any{"agent": map[string]any{"logLevel": "verbose"}},
			want:   []string{"/agent/logLevel", "debug"},
		},
		"CPU limit not a quantity": {
			values: map[string]any{"haproxy": map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "two"}}}},
			want:   []string{"/haproxy/resources/limits/cpu"},
		},
		"hard-stop-after not an HAProxy time": {
			values: map[string]any{"haproxy": map[string]any{"hardStopAfter": "30 seconds"}},
			want:   []string{"/haproxy/hardStopAfter"},
		},
		"work directory medium unknown": {
			values: map[string]any{"haproxy": map[string]any{"workDir": map[string]any{"medium": "HugePages"}}},
			want:   []string{"/haproxy/workDir/medium"},
		},
		"work directory size not a quantity": {
			values: map[string]any{"haproxy": map[string]any{"workDir": map[string]any{"sizeLimit": "lots"}}},
			want:   []string{"/haproxy/workDir/sizeLimit"},
		},
		"webhook timeout above the apiserver's 30 s": {
			values: map[string]any{"webhook": map[string]any{"timeoutSeconds": 31}},
			want:   []string{"/webhook/timeoutSeconds", "maximum"},
		},
		"webhook failure policy unknown": {
			values: map[string]any{"webhook": map[string]any{"ingresses": map[string]any{"failurePolicy": "Never"}}},
			want:   []string{"/webhook/ingresses/failurePolicy", "Ignore", "Fail"},
		},
		"webhook kind misspelt": {
			values: map[string]any{"webhook": map[string]any{"ingress": map[string]any{"enabled": true}}},
			want:   []string{"/webhook", "ingress"},
		},
		"checker timeout not a duration": {
			values: map[string]any{"checker": map[string]any{"timeout": "ten seconds"}},
			want:   []string{"/checker/timeout"},
		},
		"image digest malformed": {
			values: map[string]any{"image": map[string]any{"digest": "latest"}},
			want:   []string{"/image/digest"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tryRender(c, tc.values)
			if err == nil {
				t.Fatal("rendered; want a schema error")
			}
			msg := err.Error()
			if !strings.Contains(msg, "values don't meet the specifications of the schema") {
				t.Errorf("error is not the schema's: %s", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			t.Logf("%s", msg)
		})
	}
}
