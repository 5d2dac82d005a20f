package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/haptic-io/haptic/internal/heapgoal"
)

// heapHeadroomFlag bounds the Go heap's growth between collections
// (internal/heapgoal).
func heapHeadroomFlag() *cli.StringFlag {
	return &cli.StringFlag{
		Name: "heap-headroom",
		Usage: "how far the Go heap may grow past its live size before the next garbage collection (a quantity: 64Mi); " +
			"a large live heap then collects more often instead of doubling, which bounds the peak memory; 0 leaves it to GOGC",
		Value:   "64Mi",
		EnvVars: []string{"HAPTIC_HEAP_HEADROOM"},
	}
}

// startHeapGovernor starts the governor --heap-headroom asks for; stop
// ends it (a no-op when the flag is 0).
func startHeapGovernor(c *cli.Context) (stop func(), err error) {
	q, err := resource.ParseQuantity(c.String("heap-headroom"))
	if err != nil {
		return nil, fmt.Errorf("--heap-headroom: %w", err)
	}
	n, ok := q.AsInt64()
	if !ok || n < 0 {
		return nil, fmt.Errorf("--heap-headroom %s: want a byte count of zero or more", c.String("heap-headroom"))
	}
	if n == 0 {
		return func() {}, nil
	}
	g, err := heapgoal.Start(heapgoal.Config{Headroom: uint64(n)})
	if err != nil {
		return nil, fmt.Errorf("--heap-headroom: %w", err)
	}
	return g.Stop, nil
}
