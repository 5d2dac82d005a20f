package haproxytest_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// fatalRecorder is a testing.TB whose Fatal and Skip end only the goroutine
// that run started, recording the message, and whose Cleanup functions run when
// cleanup is called. Everything else goes to the real test.
type fatalRecorder struct {
	testing.TB
	mu       sync.Mutex
	fatal    bool
	skipped  bool
	msg      string
	cleanups []func()
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.fatal, f.msg = true, fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fatalRecorder) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

func (f *fatalRecorder) Skipf(format string, args ...any) {
	f.mu.Lock()
	f.skipped, f.msg = true, fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fatalRecorder) Skip(args ...any) { f.Skipf("%s", fmt.Sprint(args...)) }

func (f *fatalRecorder) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// Failed reports true once Fatal was called, like a real test.
func (f *fatalRecorder) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fatal
}

// run calls fn on its own goroutine and waits for it to return or call Fatal.
func (f *fatalRecorder) run(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}

// cleanup runs the registered cleanups, last first.
func (f *fatalRecorder) cleanup() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}
