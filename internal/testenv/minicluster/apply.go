package minicluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// FieldManager is the server-side apply field manager used by [Apply].
const FieldManager = "minicluster"

// Apply server-side-applies objs in order (forcing conflicts). Kinds the
// apiserver does not know yet (CRDs just created) are retried for up to
// 30 s while discovery catches up.
func Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("apply: discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("apply: dynamic client: %w", err)
	}
	mapper, err := newMapper(dc)
	if err != nil {
		return err
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		deadline := time.Now().Add(30 * time.Second)
		var m *meta.RESTMapping
		for {
			m, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err == nil || !meta.IsNoMatchError(err) || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("apply %s %s: %w", gvk.Kind, o.GetName(), ctx.Err())
			case <-time.After(250 * time.Millisecond):
			}
			if mapper, err = newMapper(dc); err != nil {
				return err
			}
		}
		if err != nil {
			return fmt.Errorf("apply %s %s: %w", gvk.Kind, o.GetName(), err)
		}
		body, err := json.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("apply %s %s: %w", gvk.Kind, o.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := o.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		force := true
		if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: FieldManager, Force: &force}); err != nil {
			return fmt.Errorf("apply %s %s/%s: %w", gvk.Kind, o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

func newMapper(dc discovery.DiscoveryInterface) (meta.RESTMapper, error) {
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		return nil, fmt.Errorf("apply: discovery: %w", err)
	}
	return restmapper.NewDiscoveryRESTMapper(groups), nil
}

// InstallGatewayCRDs applies every gateway.networking.*.yaml file in dir
// (Binaries.GatewayCRDDir or GatewayExperimentalCRDDir) and waits until
// each CRD is Established.
func InstallGatewayCRDs(ctx context.Context, cfg *rest.Config, dir string) error {
	return InstallCRDs(ctx, cfg, filepath.Join(dir, "gateway.networking.*.yaml"))
}

// InstallCRDs applies the manifests of every file that matches pattern
// (filepath.Glob: config/crd/bases/*.yaml), in name order, and waits up
// to a minute until each CustomResourceDefinition among them is
// Established.
func InstallCRDs(ctx context.Context, cfg *rest.Config, pattern string) error {
	paths, err := filepath.Glob(pattern)
	if err != nil {
		return fmt.Errorf("install crds: %w", err)
	}
	if len(paths) == 0 {
		return fmt.Errorf("install crds: no file matches %s", pattern)
	}
	sort.Strings(paths)
	var objs []*unstructured.Unstructured
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("install crds: %w", err)
		}
		o, err := SplitManifests(b)
		if err != nil {
			return fmt.Errorf("install crds: %s: %w", filepath.Base(p), err)
		}
		objs = append(objs, o...)
	}
	if err := Apply(ctx, cfg, objs); err != nil {
		return fmt.Errorf("install crds: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("install crds: %w", err)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		for {
			got, err := crds.Get(ctx, o.GetName(), metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("install crds: get %s: %w", o.GetName(), err)
			}
			if err == nil && crdEstablished(got) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("install crds: %s not Established: %w", o.GetName(), ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func crdEstablished(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && strings.EqualFold(fmt.Sprint(m["status"]), "True") {
			return true
		}
	}
	return false
}
