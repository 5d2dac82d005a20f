package kubelet

import (
	"context"
	"sync"
	"testing"
)

// StartT creates a Kubelet from cfg and runs it until the test ends: the
// cleanup cancels Run, waits for it (which stops every pod) and reports a Run
// error as a test error. Config errors fail the test at once.
func StartT(t testing.TB, cfg Config) *Kubelet {
	t.Helper()
	k, err := New(cfg)
	if err != nil {
		t.Fatalf("kubelet: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var runErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		runErr = k.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		if runErr != nil {
			t.Errorf("kubelet: %v", runErr)
		}
	})
	return k
}
