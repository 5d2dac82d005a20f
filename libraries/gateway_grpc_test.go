package libraries_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestGatewayGRPCRoutesMatchServiceAndMethod sends gRPC-shaped HTTP/2
// requests in clear text (prior knowledge, as gRPC clients do) and
// checks that GRPCRoute method and header matches pick the backend,
// which HAProxy reaches over HTTP/2 too.
func TestGatewayGRPCRoutesMatchServiceAndMethod(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	f := newGatewayFixture(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {namespace: t, name: g}
spec:
  parentRefs: [{name: gw}]
  hostnames: [grpc.test]
  rules:
  - matches: [{method: {service: pkg.Echo, method: Get}}]
    backendRefs: [{name: get, port: 8080}]
  - matches: [{method: {service: pkg.Echo}}]
    backendRefs: [{name: echo, port: 8080}]
  - matches: [{method: {method: Other}}]
    backendRefs: [{name: other, port: 8080}]
  - matches: [{headers: [{name: tenant, value: blue}]}]
    backendRefs: [{name: blue, port: 8080}]
`)
	f.services(1, "get", "echo", "other", "blue")
	for _, series := range []string{"3.0", "3.4"} {
		t.Run(series, func(t *testing.T) {
			off, _, _ := f.start(series, 80)
			tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
			tr.Protocols = new(http.Protocols)
			tr.Protocols.SetUnencryptedHTTP2(true)
			c := &http.Client{Timeout: 5 * time.Second, Transport: tr}
			for _, tc := range []struct {
				path, tenant string
				status       int
				want         string
			}{
				{"/pkg.Echo/Get", "", 200, "get"},
				{"/pkg.Echo/Put", "", 200, "echo"},
				{"/pkg.Other/Other", "", 200, "other"},
				{"/pkg.Other/Nope", "blue", 200, "blue"},
				{"/pkg.Other/Nope", "", 404, ""},
			} {
				req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d%s", 80+off, tc.path), strings.NewReader("\x00\x00\x00\x00\x00"))
				if err != nil {
					t.Fatal(err)
				}
				req.Host = "grpc.test"
				req.Header.Set("Content-Type", "application/grpc")
				if tc.tenant != "" {
					req.Header.Set("tenant", tc.tenant)
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("POST %s: %v", tc.path, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var got reflection
				_ = json.Unmarshal(b, &got)
				if resp.StatusCode != tc.status || resp.Header.Get("X-Echo") != tc.want || resp.Proto != "HTTP/2.0" {
					t.Errorf("POST %s: %s %d from %q, want HTTP/2.0 %d from %q", tc.path, resp.Proto, resp.StatusCode, resp.Header.Get("X-Echo"), tc.status, tc.want)
				}
				if tc.want != "" && got.Proto != "HTTP/2.0" {
					t.Errorf("POST %s: the backend saw %q, want HTTP/2.0", tc.path, got.Proto)
				}
			}
		})
	}
}
