package haproxysock

import "time"

// BackendOptions are the optional parts of [AddBackend].
type BackendOptions struct {
	// Mode overrides the profile's mode ("http" or "tcp"); empty omits it.
	// Keep it equal to the mode of the frontends that route to the
	// backend.
	Mode string
	// GUID adds "guid <GUID>".
	GUID string
}

// AddBackend builds "add backend <name> from <profile> [mode <m>] [guid <g>]"
// (HAProxy 3.4 and later; older versions answer with [ErrUnsupported]).
// The backend starts unpublished: see [PublishBackend].
func AddBackend(name, profile string, o BackendOptions) (Command, error) {
	if err := checkName("backend", name); err != nil {
		return Command{}, err
	}
	if err := checkName("profile", profile); err != nil {
		return Command{}, err
	}
	args := []string{"add", "backend", name, "from", profile}
	if o.Mode != "" {
		if o.Mode != "http" && o.Mode != "tcp" {
			return Command{}, invalid("mode", o.Mode, "is not http or tcp")
		}
		args = append(args, "mode", o.Mode)
	}
	if o.GUID != "" {
		if err := checkName("guid", o.GUID); err != nil {
			return Command{}, err
		}
		args = append(args, "guid", o.GUID)
	}
	return newCommand(wantLast("New backend registered."), args...)
}

// PublishBackend builds "publish backend <name>" (3.4+).
func PublishBackend(name string) (Command, error) {
	if err := checkName("backend", name); err != nil {
		return Command{}, err
	}
	return newCommand(wantLast("Backend published."), "publish", "backend", name)
}

// UnpublishBackend builds "unpublish backend <name>" (3.4+).
func UnpublishBackend(name string) (Command, error) {
	if err := checkName("backend", name); err != nil {
		return Command{}, err
	}
	return newCommand(wantLast("Backend unpublished."), "unpublish", "backend", name)
}

// DelBackend builds "del backend <name>" (3.4+). HAProxy refuses it unless
// the backend is unpublished and has no server.
func DelBackend(name string) (Command, error) {
	if err := checkName("backend", name); err != nil {
		return Command{}, err
	}
	return newCommand(wantLast("Backend deleted."), "del", "backend", name)
}

// WaitBackendRemovable builds "wait <ms> be-removable <name>" (3.4+).
func WaitBackendRemovable(d time.Duration, name string) (Command, error) {
	if err := checkName("backend", name); err != nil {
		return Command{}, err
	}
	ms, err := waitMillis(d)
	if err != nil {
		return Command{}, err
	}
	c, err := newCommand(wantLast("Done."), "wait", ms, "be-removable", name)
	c.wait = d
	return c, err
}
