package propagation

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecodeProbeEvent checks that what decodeProbeEvent accepts is a
// consistent event about the host asked for, and survives a round trip.
func FuzzDecodeProbeEvent(f *testing.F) {
	f.Add([]byte(`{"event":"polling","host":"a.test"}`), "a.test")
	f.Add([]byte(`{"event":"ok","host":"a.test","at_unix_nano":1764400000000000000,"requests":3,"unexpected":[{"at_unix_nano":1764399999999000000,"status":503,"detail":"no server"}]}`), "a.test")
	f.Add([]byte(`{"event":"timeout","host":"a.test","requests":9}`), "a.test")
	f.Fuzz(func(t *testing.T, line []byte, host string) {
		ev, err := decodeProbeEvent(line, host)
		if err != nil {
			return
		}
		if ev.Host != host {
			t.Fatalf("event about %q accepted for host %q", ev.Host, host)
		}
		o := ev.outcome()
		switch ev.Event {
		case eventPolling:
		case eventOK:
			if o.TimedOut || o.At.UnixNano() != ev.AtUnixNano || ev.AtUnixNano <= 0 || o.Requests < 1 {
				t.Fatalf("ok event %+v gave outcome %+v", ev, o)
			}
		case eventTimeout:
			if !o.TimedOut || !o.At.IsZero() || o.Requests < 1 {
				t.Fatalf("timeout event %+v gave outcome %+v", ev, o)
			}
		default:
			t.Fatalf("unknown event %q accepted", ev.Event)
		}
		if len(o.Unexpected) != len(ev.Unexpected) {
			t.Fatalf("%d unexpected answers became %d", len(ev.Unexpected), len(o.Unexpected))
		}
		for _, a := range o.Unexpected {
			if a.Host != host {
				t.Fatalf("answer %+v not about host %q", a, host)
			}
		}
		enc, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		back, err := decodeProbeEvent(enc, host)
		if err != nil {
			t.Fatalf("decode of re-encoded %s: %v", enc, err)
		}
		if diff := cmp.Diff(ev, back); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}
