package haproxysock

import (
	"fmt"
	"strconv"
	"time"
)

// ServerOptions are the optional parts of [AddServer].
type ServerOptions struct {
	// Weight is the server weight, 1..256. Zero omits the keyword
	// (HAProxy's default, 1); use [SetServerWeight] for weight 0.
	Weight int
	// Check adds "check". Checks of a dynamic server only start after
	// [EnableHealth].
	Check bool
	// CheckInter is the check interval ("inter"); zero omits it. Rounded
	// down to milliseconds.
	CheckInter time.Duration
	// GUID adds "guid <GUID>".
	GUID string
	// Extra are further server keywords and their values, one word per
	// element, e.g. {"ssl", "verify", "none"}. Each word is escaped.
	// "init-state" is unknown to HAProxy 3.0.
	Extra []string
}

// AddServer builds "add server <backend>/<server> <addr>[:<port>] …". The
// server starts in maintenance: follow it with [SetServerState] ready.
// A port of zero omits the port.
func AddServer(backend, server, addr string, port int, o ServerOptions) (Command, error) {
	target, err := serverTarget(backend, server)
	if err != nil {
		return Command{}, err
	}
	if err := checkAddr(addr); err != nil {
		return Command{}, err
	}
	a := addr
	if port != 0 {
		if err := checkPort(port); err != nil {
			return Command{}, err
		}
		a += ":" + strconv.Itoa(port)
	}
	args := []string{"add", "server", target, a}
	if o.Weight != 0 {
		if o.Weight < 0 || o.Weight > 256 {
			return Command{}, fmt.Errorf("%w: weight %d out of range 0..256", ErrInvalidArgument, o.Weight)
		}
		args = append(args, "weight", strconv.Itoa(o.Weight))
	}
	if o.Check {
		args = append(args, "check")
	}
	if o.CheckInter < 0 {
		return Command{}, fmt.Errorf("%w: negative check interval %s", ErrInvalidArgument, o.CheckInter)
	}
	if ms := o.CheckInter.Milliseconds(); ms > 0 {
		args = append(args, "inter", strconv.FormatInt(ms, 10))
	}
	if o.GUID != "" {
		if err := checkName("guid", o.GUID); err != nil {
			return Command{}, err
		}
		args = append(args, "guid", o.GUID)
	}
	for _, w := range o.Extra {
		if err := checkText("server keyword", w); err != nil {
			return Command{}, err
		}
		args = append(args, w)
	}
	return newCommand(wantLast("New server registered."), args...)
}

// SetServerAddr builds "set server <backend>/<server> addr <addr> [port <port>]".
// A port of zero leaves the port unchanged.
func SetServerAddr(backend, server, addr string, port int) (Command, error) {
	target, err := serverTarget(backend, server)
	if err != nil {
		return Command{}, err
	}
	if err := checkAddr(addr); err != nil {
		return Command{}, err
	}
	args := []string{"set", "server", target, "addr", addr}
	if port != 0 {
		if err := checkPort(port); err != nil {
			return Command{}, err
		}
		args = append(args, "port", strconv.Itoa(port))
	}
	// Success reports what changed ("IP changed from …", "port changed
	// from …") or nothing when nothing did.
	return newCommand(wantOutput, args...)
}

// SetServerWeight builds "set server <backend>/<server> weight <weight>".
func SetServerWeight(backend, server string, weight int) (Command, error) {
	target, err := serverTarget(backend, server)
	if err != nil {
		return Command{}, err
	}
	if weight < 0 || weight > 256 {
		return Command{}, fmt.Errorf("%w: weight %d out of range 0..256", ErrInvalidArgument, weight)
	}
	return newCommand(wantEmpty, "set", "server", target, "weight", strconv.Itoa(weight))
}

// ServerState is an administrative state for [SetServerState].
type ServerState string

// Server states.
const (
	StateReady ServerState = "ready"
	StateDrain ServerState = "drain"
	StateMaint ServerState = "maint"
)

// SetServerState builds "set server <backend>/<server> state ready|drain|maint".
func SetServerState(backend, server string, state ServerState) (Command, error) {
	target, err := serverTarget(backend, server)
	if err != nil {
		return Command{}, err
	}
	switch state {
	case StateReady, StateDrain, StateMaint:
	default:
		return Command{}, invalid("server state", string(state), "is not ready, drain or maint")
	}
	return newCommand(wantEmpty, "set", "server", target, "state", string(state))
}

// EnableHealth builds "enable health <backend>/<server>", which starts the
// checks of a dynamic server.
func EnableHealth(backend, server string) (Command, error) {
	target, err := serverTarget(backend, server)
	if err != nil {
		return Command{}, err
	}
	return newCommand(wantEmpty, "enable", "health", target)
}

// DelServer builds "del server <backend>/<server>". HAProxy refuses it
// unless the server is in maintenance and has no connection attached.
func DelServer(backend, server string) (Command, error) {
	target, err := serverTarget(backend, server)
	if err != nil {
		return Command{}, err
	}
	return newCommand(wantLast("Server deleted."), "del", "server", target)
}

// ShutdownSessionsServer builds "shutdown sessions server <backend>/<server>",
// which cuts the server's in-flight streams.
func ShutdownSessionsServer(backend, server string) (Command, error) {
	target, err := serverTarget(backend, server)
	if err != nil {
		return Command{}, err
	}
	return newCommand(wantEmpty, "shutdown", "sessions", "server", target)
}

// WaitServerRemovable builds "wait <ms> srv-removable <backend>/<server>".
// It succeeds with "Done." once the server may be deleted; "Wait delay
// expired." is a [*CommandError].
func WaitServerRemovable(d time.Duration, backend, server string) (Command, error) {
	target, err := serverTarget(backend, server)
	if err != nil {
		return Command{}, err
	}
	ms, err := waitMillis(d)
	if err != nil {
		return Command{}, err
	}
	c, err := newCommand(wantLast("Done."), "wait", ms, "srv-removable", target)
	c.wait = d
	return c, err
}

func waitMillis(d time.Duration) (string, error) {
	if d < time.Millisecond || d > time.Hour {
		return "", fmt.Errorf("%w: wait %s out of range 1ms..1h", ErrInvalidArgument, d)
	}
	return strconv.FormatInt(d.Milliseconds(), 10), nil
}

func serverTarget(backend, server string) (string, error) {
	if err := checkName("backend", backend); err != nil {
		return "", err
	}
	if err := checkName("server", server); err != nil {
		return "", err
	}
	return backend + "/" + server, nil
}
