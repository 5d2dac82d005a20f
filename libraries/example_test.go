package libraries_test

import (
	"context"
	"fmt"

	"github.com/haptic-io/haptic/libraries"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// Load the stock libraries, merge an operator config last, and render one
// Ingress.
func ExampleLoad() {
	cfgs, err := libraries.Load("base", "ingress")
	if err != nil {
		panic(err)
	}
	operator, err := templating.ParseConfig([]byte("extraContext: {httpPort: 80}\n"))
	if err != nil {
		panic(err)
	}
	cfg := templating.Merge(cfgs[0], append(cfgs[1:], operator)...)

	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		panic(err)
	}
	err = st.Add("ingresses", map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"namespace": "shop", "name": "web", "creationTimestamp": "2026-01-01T00:00:00Z"},
		"spec": map[string]any{
			"ingressClassName": "haptic",
			"rules": []any{map[string]any{
				"host": "shop.example.com",
				"http": map[string]any{"paths": []any{map[string]any{
					"path": "/cart", "pathType": "Prefix",
					"backend": map[string]any{"service": map[string]any{"name": "cart", "port": map[string]any{"number": int64(80)}}},
				}}},
			}},
		},
	})
	if err != nil {
		panic(err)
	}
	out, problems, err := templating.Render(context.Background(), cfg, st.Snapshot())
	if err != nil {
		panic(err)
	}
	for _, m := range out.Plan.Maps {
		for _, e := range m.Entries {
			fmt.Println(m.Path, e.Key, e.Value)
		}
	}
	fmt.Println(problems)
	// Output:
	// maps/hosts.map shop.example.com shop.example.com
	// maps/paths-prefix-exact.map shop.example.com/cart be_shop_cart_80
	// maps/paths-prefix.map shop.example.com/cart/ be_shop_cart_80
	// [Ingress shop/web: ServiceNotFound: service shop/cart not found]
}

func ExampleParseList() {
	names, err := libraries.ParseList("base,ingress")
	fmt.Println(names, err)
	names, err = libraries.ParseList("none")
	fmt.Println(names, err)
	// Output:
	// [base ingress] <nil>
	// [] <nil>
}
