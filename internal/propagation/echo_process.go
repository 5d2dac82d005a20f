package propagation

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"

	"github.com/haptic-io/haptic/internal/echo"
)

// RunEchoServers serves echo servers on addrs ("127.0.0.1:0" picks a
// port), the same as [Config.Echo] starts, in a process of its own:
// [Run] runs it (`haptic benchmark echo-servers`) so that its
// busy goroutines do not delay the backends' answers. Once the servers
// listen it writes one JSON line to out,
// {"event":"listening","echo":["127.0.0.1:PORT",...]}, in the order of
// addrs; then it serves until in ends (nil) or ctx ends (ctx's error), and
// stops the servers. Reading in continues in a goroutine after ctx ends
// until in ends.
func RunEchoServers(ctx context.Context, addrs []string, in io.Reader, out io.Writer) error {
	if len(addrs) == 0 {
		return fmt.Errorf("echo servers: no address")
	}
	e, err := echo.Start(addrs)
	if err != nil {
		return err
	}
	defer e.Close()
	if err := json.NewEncoder(out).Encode(echoEvent{Event: eventListening, Echo: e.Addrs()}); err != nil {
		return fmt.Errorf("echo servers: write: %w", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, in)
		done <- err
	}()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-done:
		if err != nil {
			return fmt.Errorf("echo servers: read stdin: %w", err)
		}
		return nil
	}
}

const eventListening = "listening"

// echoEvent is the echo servers' one line.
type echoEvent struct {
	Event string   `json:"event"`
	Echo  []string `json:"echo"`
}

// decodeEchoEvent parses the echo servers' line and checks it names n
// loopback TCP addresses.
func decodeEchoEvent(line []byte, n int) ([]string, error) {
	var ev echoEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil, fmt.Errorf("echo servers line %q: %w", clip(string(line)), err)
	}
	if ev.Event != eventListening {
		return nil, fmt.Errorf("echo servers line %q: event %q, want %q", clip(string(line)), ev.Event, eventListening)
	}
	if len(ev.Echo) != n {
		return nil, fmt.Errorf("echo servers line %q: %d addresses, want %d", clip(string(line)), len(ev.Echo), n)
	}
	for _, a := range ev.Echo {
		ap, err := netip.ParseAddrPort(a)
		if err != nil || !ap.Addr().IsLoopback() || ap.Port() == 0 {
			return nil, fmt.Errorf("echo servers line %q: %q is not a loopback address with a port", clip(string(line)), a)
		}
	}
	return ev.Echo, nil
}

// startEchoProcess runs argv (see [Config.EchoCommand]), which
// starts n echo servers, and returns it and the servers' addresses.
func startEchoProcess(ctx context.Context, argv []string, n int) (*child, []string, error) {
	c, err := startChild(ctx, "echo servers", argv)
	if err != nil {
		return nil, nil, err
	}
	line, err := c.next(ctx)
	if err == nil {
		var addrs []string
		if addrs, err = decodeEchoEvent(line, n); err == nil {
			return c, addrs, nil
		}
	}
	_ = c.close()
	return nil, nil, err
}
