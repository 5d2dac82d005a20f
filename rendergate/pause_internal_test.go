package rendergate

import (
	"context"
	"testing"
	"time"
)

func TestPausesNestAndAnUnmatchedResumeIsIgnored(t *testing.T) {
	var p pauser
	held := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		return p.wait(ctx) != nil
	}
	if held() {
		t.Fatal("a new pauser holds checks")
	}
	p.Pause()
	p.Pause()
	p.Resume()
	if !held() {
		t.Fatal("one Resume of two Pauses let checks run")
	}
	p.Resume()
	if held() {
		t.Fatal("checks are still held after the second Resume")
	}
	p.Resume() // unmatched
	p.Pause()
	if !held() {
		t.Fatal("an unmatched Resume made the next Pause ineffective")
	}
	p.Resume()
}
