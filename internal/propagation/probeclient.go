package propagation

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ProbeClientConfig configures [RunProbeClient].
type ProbeClientConfig struct {
	// URL is where to send the requests, e.g. "http://127.0.0.1:8080";
	// each is GET URL/ with the Host header of the host being polled.
	// Required.
	URL string
	// Interval is the pause between the starts of two requests to one
	// host; zero means 1 ms.
	Interval time.Duration
	// Limit is how long one host is polled without a 200 before the
	// client gives up on it; zero means 30 s.
	Limit time.Duration
}

// RunProbeClient is the probe of `haptic benchmark propagation` as a
// process of its own (`haptic benchmark probe-client`), so that the
// controller's goroutines cannot delay its timers.
//
// It reads one host per line from in (empty lines are skipped) and polls
// each, one after the other, as [Run]'s in-process poller does:
// a 404 means "not routed yet", a 200 ends the host, any other status and
// every transport error is an unexpected answer. It writes JSON lines to
// out: {"event":"polling",...} once the host's first answer came back
// (so the caller knows polling began before it changes anything), then
// one "ok" line with the wall-clock time of the first 200 (Unix
// nanoseconds), the request count and the unexpected answers, or a
// "timeout" line when Limit passed. It returns nil when in ends, ctx's
// error when ctx ends, and an error for an invalid host line.
func RunProbeClient(ctx context.Context, cfg ProbeClientConfig, in io.Reader, out io.Writer) error {
	if cfg.URL == "" {
		return errors.New("probe client: URL is required")
	}
	if cfg.Interval == 0 {
		cfg.Interval = time.Millisecond
	}
	if cfg.Limit == 0 {
		cfg.Limit = 30 * time.Second
	}
	client := benchClient()
	defer client.CloseIdleConnections()
	enc := json.NewEncoder(out)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		host := sc.Text()
		if host == "" {
			continue
		}
		if err := checkHost(host); err != nil {
			return fmt.Errorf("probe client: %w", err)
		}
		var encErr error
		o, err := pollHost(ctx, client, cfg.URL, host, cfg.Interval, cfg.Limit, func() {
			encErr = enc.Encode(probeEvent{Event: eventPolling, Host: host})
		})
		if err != nil {
			return fmt.Errorf("probe client: %w", err)
		}
		if encErr != nil {
			return fmt.Errorf("probe client: write: %w", encErr)
		}
		if err := enc.Encode(o.event(host)); err != nil {
			return fmt.Errorf("probe client: write: %w", err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("probe client: read hosts: %w", err)
	}
	return nil
}

// checkHost rejects a host that cannot be a Host header value.
func checkHost(host string) error {
	for _, c := range []byte(host) {
		if c <= ' ' || c == 0x7f {
			return fmt.Errorf("host %q: control character or space", host)
		}
	}
	return nil
}

// pollOutcome is how polling one host ended.
type pollOutcome struct {
	// At is when the first 200 came back; zero after a timeout.
	At         time.Time
	Requests   int
	Unexpected []Answer
	// TimedOut is set when limit passed without a 200.
	TimedOut bool
}

// pollHost sends GET url/ with Host host every interval until the first
// 200, for at most limit. first runs once, after the first answer. It
// returns an error only when ctx ends.
func pollHost(ctx context.Context, c *http.Client, url, host string, interval, limit time.Duration, first func()) (pollOutcome, error) {
	var o pollOutcome
	deadline := time.Now().Add(limit)
	for {
		t0 := time.Now()
		code, body, err := get(ctx, c, url, host)
		now := time.Now()
		if ctx.Err() != nil {
			return o, ctx.Err()
		}
		o.Requests++
		if o.Requests == 1 && first != nil {
			first()
		}
		switch {
		case err != nil:
			o.Unexpected = append(o.Unexpected, Answer{At: now, Host: host, Detail: err.Error()})
		case code == http.StatusOK:
			o.At = now
			return o, nil
		case code != http.StatusNotFound:
			o.Unexpected = append(o.Unexpected, Answer{At: now, Host: host, Status: code, Detail: clip(body)})
		}
		if now.After(deadline) {
			o.TimedOut = true
			return o, nil
		}
		if d := interval - time.Since(t0); d > 0 {
			select {
			case <-ctx.Done():
				return o, ctx.Err()
			case <-time.After(d):
			}
		}
	}
}

// The probe client's events.
const (
	eventPolling = "polling"
	eventOK      = "ok"
	eventTimeout = "timeout"
)

// probeEvent is one JSON line of the probe client.
type probeEvent struct {
	Event string `json:"event"`
	Host  string `json:"host"`
	// AtUnixNano is the wall-clock time of the first 200 ("ok" only).
	AtUnixNano int64         `json:"at_unix_nano,omitempty"`
	Requests   int           `json:"requests,omitempty"`
	Unexpected []probeAnswer `json:"unexpected,omitempty"`
}

// probeAnswer is an [Answer] on the wire; the host is the event's.
type probeAnswer struct {
	AtUnixNano int64  `json:"at_unix_nano"`
	Status     int    `json:"status"`
	Detail     string `json:"detail"`
}

// event is the "ok" or "timeout" line of o.
func (o pollOutcome) event(host string) probeEvent {
	ev := probeEvent{Event: eventOK, Host: host, Requests: o.Requests}
	if o.TimedOut {
		ev.Event = eventTimeout
	} else {
		ev.AtUnixNano = o.At.UnixNano()
	}
	for _, a := range o.Unexpected {
		ev.Unexpected = append(ev.Unexpected, probeAnswer{AtUnixNano: a.At.UnixNano(), Status: a.Status, Detail: a.Detail})
	}
	return ev
}

// decodeProbeEvent parses one line of the probe client and checks it is
// an event about host that makes sense.
func decodeProbeEvent(line []byte, host string) (probeEvent, error) {
	var ev probeEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return ev, fmt.Errorf("probe client line %q: %w", clip(string(line)), err)
	}
	if ev.Host != host {
		return ev, fmt.Errorf("probe client line %q: about host %q, want %q", clip(string(line)), ev.Host, host)
	}
	switch ev.Event {
	case eventPolling:
	case eventOK:
		if ev.AtUnixNano <= 0 {
			return ev, fmt.Errorf("probe client line %q: no time of the 200", clip(string(line)))
		}
		fallthrough
	case eventTimeout:
		if ev.Requests < 1 {
			return ev, fmt.Errorf("probe client line %q: %d requests", clip(string(line)), ev.Requests)
		}
	default:
		return ev, fmt.Errorf("probe client line %q: unknown event %q", clip(string(line)), ev.Event)
	}
	return ev, nil
}

// outcome is the pollOutcome an "ok" or "timeout" event stands for.
func (ev probeEvent) outcome() pollOutcome {
	o := pollOutcome{Requests: ev.Requests, TimedOut: ev.Event == eventTimeout}
	if !o.TimedOut {
		o.At = time.Unix(0, ev.AtUnixNano)
	}
	for _, a := range ev.Unexpected {
		o.Unexpected = append(o.Unexpected, Answer{At: time.Unix(0, a.AtUnixNano), Host: ev.Host, Status: a.Status, Detail: a.Detail})
	}
	return o
}
