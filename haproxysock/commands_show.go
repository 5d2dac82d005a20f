package haproxysock

// ShowInfo builds "show info"; see [ParseInfo] and [Client.Info].
func ShowInfo() Command { return mustCommand(wantOutput, "show", "info") }

// ShowVersion builds "show version".
func ShowVersion() Command { return mustCommand(wantOutput, "show", "version") }

// ShowBackend builds "show backend": one backend name per line after a
// "# name" header.
func ShowBackend() Command { return mustCommand(wantOutput, "show", "backend") }

// ShowStat builds "show stat" (CSV).
func ShowStat() Command { return mustCommand(wantOutput, "show", "stat") }

// ShowServersState builds "show servers state [<backend>]"; an empty
// backend lists every backend.
func ShowServersState(backend string) (Command, error) {
	if backend == "" {
		return newCommand(wantOutput, "show", "servers", "state")
	}
	if err := checkName("backend", backend); err != nil {
		return Command{}, err
	}
	return newCommand(wantOutput, "show", "servers", "state", backend)
}

// mustCommand builds a command from constant words.
func mustCommand(e expectation, args ...string) Command {
	return Command{args: args, expect: e}
}
