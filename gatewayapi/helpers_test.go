package gatewayapi_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/store"
)

// base is the world most tests share: our class, namespaces, Services.
const base = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: haptic, generation: 1}
spec: {controllerName: haproxy-haptic.org/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: other, generation: 1}
spec: {controllerName: example.com/other}
---
apiVersion: v1
kind: Namespace
metadata: {name: infra, labels: {team: infra}}
---
apiVersion: v1
kind: Namespace
metadata: {name: apps, labels: {gateway-conformance: backend}}
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: v1
kind: Service
metadata: {namespace: infra, name: web}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {namespace: infra, name: api}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {namespace: apps, name: web}
spec: {ports: [{name: http, port: 8080}]}
`

// build decodes manifests (after base) into a store and builds a model.
func build(t testing.TB, manifests string) *gatewayapi.Model {
	t.Helper()
	m, err := memory(base + "\n---\n" + manifests)
	if err != nil {
		t.Fatal(err)
	}
	return gatewayapi.Build(m.Snapshot(), gatewayapi.Options{})
}

func memory(manifests string) (*store.Memory, error) {
	objs, err := store.DecodeManifests([]byte(manifests))
	if err != nil {
		return nil, err
	}
	m, err := store.NewMemory(gatewayapi.WatchedResources())
	if err != nil {
		return nil, err
	}
	if _, err := m.AddObjects(objs...); err != nil {
		return nil, err
	}
	return m, nil
}

// programmed is a fleet that runs every generation at 10.0.0.1.
func programmed(gatewayapi.Ref) gatewayapi.Fleet {
	return gatewayapi.Fleet{Addresses: []string{"10.0.0.1"}, ProgrammedGeneration: 1 << 40}
}

// summary renders statuses as lines a test can compare:
//
//	Gateway infra/gw: Accepted=True/Accepted Programmed=True/Programmed
//	Gateway infra/gw listener http: attached=1 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted …
//	HTTPRoute infra/r parent gw/http: Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs
func summary(sts []gatewayapi.Status) string {
	var lines []string
	for _, st := range sts {
		id := st.Kind + " " + strings.TrimPrefix(st.Namespace+"/"+st.Name, "/")
		if c := conds(st.Status); c != "" {
			lines = append(lines, id+": "+c)
		}
		if ls, ok := st.Status["listeners"].([]any); ok {
			for _, l := range ls {
				lm := l.(map[string]any)
				var kinds []string
				for _, k := range lm["supportedKinds"].([]any) {
					kinds = append(kinds, k.(map[string]any)["kind"].(string))
				}
				lines = append(lines, fmt.Sprintf("%s listener %s: attached=%d kinds=%s %s", id, lm["name"], lm["attachedRoutes"], strings.Join(kinds, ","), conds(lm)))
			}
		}
		if ps, ok := st.Status["parents"].([]any); ok {
			for _, p := range ps {
				pm := p.(map[string]any)
				pr := pm["parentRef"].(map[string]any)
				ref := fmt.Sprint(pr["name"])
				if s, ok := pr["sectionName"]; ok {
					ref += "/" + fmt.Sprint(s)
				}
				if s, ok := pr["port"]; ok {
					ref += ":" + fmt.Sprint(s)
				}
				lines = append(lines, fmt.Sprintf("%s parent %s: %s", id, ref, conds(pm)))
			}
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func conds(m map[string]any) string {
	cs, _ := m["conditions"].([]any)
	var out []string
	for _, c := range cs {
		cm := c.(map[string]any)
		out = append(out, fmt.Sprintf("%s=%s/%s", cm["type"], cm["status"], cm["reason"]))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// mapsOf renders the maps of a render context, one "map: key value" a
// line, in the context's order.
func mapsOf(ctx map[string]any) string {
	var lines []string
	ms := ctx["maps"].(map[string]any)
	var names []string
	for n := range ms {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, e := range ms[n].([]any) {
			em := e.(map[string]any)
			lines = append(lines, fmt.Sprintf("%s: %s %s", n, em["key"], em["value"]))
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
