package agent

// WithCrashPoint returns c with the test-only crash hook set: f is called
// with the name of each apply step ("staged", "synced", "journaled",
// "swap:<path>", "swapped", "ops", "reloaded", "committed", "done"; see
// apply.go for where "synced" falls).
func WithCrashPoint(c Config, f func(step string)) Config {
	c.crashPoint = f
	return c
}
