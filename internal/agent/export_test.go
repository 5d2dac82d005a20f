package agent

// WithCrashPoint returns c with the test-only crash hook set: f is called
// with the name of each apply step ("marked", "ops", "staged",
// "journaled", "swap:<path>", "swapped", "reloaded", "committed", "done";
// see apply.go for the order).
func WithCrashPoint(c Config, f func(step string)) Config {
	c.crashPoint = f
	return c
}
