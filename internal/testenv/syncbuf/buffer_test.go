package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

func TestConcurrentWritesKeepEveryByte(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("ab"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := b.String(); len(got) != 8*100*2 || strings.Count(got, "ab") != 800 {
		t.Errorf("got %d bytes, %d pairs; want 1600 bytes, 800 pairs", len(got), strings.Count(got, "ab"))
	}
}
