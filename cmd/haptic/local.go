package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/internal/local"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

func localCommand() *cli.Command {
	return &cli.Command{
		Name:  "local",
		Usage: "run the controller loop, the agent and HAProxy on a directory of manifests, without Kubernetes",
		Description: "Starts HAProxy (--haproxy) on a bootstrap configuration, the agent in process behind its HTTP\n" +
			"API on a loopback port, and the controller loop watching -r: every change of a manifest file is\n" +
			"rendered, validated (haproxy -c, in the background), diffed and applied, without a reload when\n" +
			"HAProxy can take it at runtime. One log line per apply; metrics on --metrics-listen.\n" +
			"Changes to -c are picked up too. Ctrl-C stops HAProxy and everything else.",
		Flags: []cli.Flag{
			configFlag(false),
			librariesFlag(),
			&cli.StringFlag{Name: "resources", Aliases: []string{"r"}, Usage: "directory of manifests to watch (*.yaml, *.yml, *.json, recursive)", EnvVars: []string{"HAPTIC_RESOURCES"}, Required: true},
			haproxyFlag(),
			&cli.StringFlag{Name: "listen", Usage: "address of the HTTP frontend", Value: local.DefaultListen, EnvVars: []string{"HAPTIC_LISTEN"}},
			&cli.StringFlag{Name: "stats-listen", Usage: "address of HAProxy's stats/health frontend", Value: local.DefaultStatsListen, EnvVars: []string{"HAPTIC_STATS_LISTEN"}},
			&cli.IntFlag{Name: "https-port", Usage: "HTTPS port on the --listen address (0: no HTTPS frontend)", EnvVars: []string{"HAPTIC_HTTPS_PORT"}},
			&cli.StringFlag{Name: "metrics-listen", Usage: `address serving Prometheus /metrics ("" for none)`, Value: "127.0.0.1:9180", EnvVars: []string{"HAPTIC_METRICS_LISTEN"}},
			debounceFlag(),
			&cli.DurationFlag{Name: "min-reload-interval", Usage: "least time between two reloads (the agent paces reloads); negative: no pacing", Value: 0, DefaultText: "2s", EnvVars: []string{"HAPTIC_MIN_RELOAD_INTERVAL"}},
			idleGCFlag(),
			heapHeadroomFlag(),
			checkSpacingFlag(),
			&cli.StringFlag{Name: "workdir", Usage: "directory for HAProxy's tree, the agent's state and sockets (default: a temporary directory, removed at exit: on /dev/shm when it is a tmpfs and TMPDIR is unset, else in TMPDIR)", EnvVars: []string{"HAPTIC_WORKDIR"}},
			&cli.StringFlag{Name: "echo", Usage: "comma-separated loopback addresses to start tiny echo HTTP servers on (demo backends)", EnvVars: []string{"HAPTIC_ECHO"}},
			&cli.StringFlag{Name: "log-level", Usage: "debug, info, warn or error", Value: "info", EnvVars: []string{"HAPTIC_LOG_LEVEL"}},
			&cli.BoolFlag{Name: "haproxy-output", Usage: "copy HAProxy's own output to stderr", EnvVars: []string{"HAPTIC_HAPROXY_OUTPUT"}},
		},
		Action: func(c *cli.Context) error {
			cfg, err := localConfig(c)
			if err != nil {
				return err
			}
			stopGovernor, err := startHeapGovernor(c)
			if err != nil {
				return err
			}
			defer stopGovernor()
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			resources := c.String("resources")
			cfg.Ready = func(info local.Info) { printBanner(c.App.Writer, info, resources) }
			return local.Run(ctx, cfg)
		},
	}
}

// debounceFlag is the loop's opt-in holdoff
// (controller.DebounceConfig.Interval).
func debounceFlag() *cli.DurationFlag {
	return &cli.DurationFlag{
		Name: "debounce",
		Usage: "opt-in holdoff for harder batching: a change within this long of the last reconciliation's start waits until no change came for this long, at most 5×; " +
			"0 holds no change (a change that finds the loop idle is reconciled at once, changes that come during a reconciliation are coalesced into the next)",
		EnvVars: []string{"HAPTIC_DEBOUNCE"},
	}
}

// checkSpacingFlag spaces the background checks of rendered plans.
func checkSpacingFlag() *cli.DurationFlag {
	return &cli.DurationFlag{
		Name:    "check-spacing",
		Usage:   "least time between two background haproxy -c checks of rendered plans; under a stream of changes each check covers the newest plan (0: check every plan)",
		Value:   controller.DefaultCheckSpacing,
		EnvVars: []string{"HAPTIC_CHECK_SPACING"},
	}
}

// idleGCFlag turns the controller loop's idle garbage collection on or off.
func idleGCFlag() *cli.BoolFlag {
	return &cli.BoolFlag{
		Name:    "idle-gc",
		Usage:   "collect garbage right after a reconciliation when the next one would start a collection, so that it runs in the quiet before the next change (--idle-gc=false: leave it to the Go runtime)",
		Value:   true,
		EnvVars: []string{"HAPTIC_IDLE_GC"},
	}
}

// haproxyFlag selects the HAProxy binary: a path, or a series installed by
// hack/install-haproxy.sh.
func haproxyFlag() *cli.StringFlag {
	return &cli.StringFlag{
		Name:    "haproxy",
		Usage:   `haproxy binary: a path, or a series ("3.4", "3.0") installed under $HAPTIC_CACHE_DIR/haproxy/<series> by hack/install-haproxy.sh`,
		Value:   "3.4",
		EnvVars: []string{"HAPTIC_HAPROXY_BINARY"},
	}
}

// localConfig maps the flags onto local.Config.
func localConfig(c *cli.Context) (local.Config, error) {
	bin, err := resolveHAProxy(c.String("haproxy"))
	if err != nil {
		return local.Config{}, err
	}
	level := new(slog.LevelVar)
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return local.Config{}, fmt.Errorf("log-level: %w", err)
	}
	libs, path := c.String("libraries"), c.String("config")
	cfg := local.Config{
		LoadConfig:        func() (*templating.Config, error) { return loadConfig(libs, path) },
		ConfigPath:        path,
		Resources:         c.String("resources"),
		HAProxy:           bin,
		Listen:            c.String("listen"),
		StatsListen:       c.String("stats-listen"),
		HTTPSPort:         c.Int("https-port"),
		MetricsListen:     c.String("metrics-listen"),
		WorkDir:           c.String("workdir"),
		Debounce:          c.Duration("debounce"),
		MinReloadInterval: c.Duration("min-reload-interval"),
		IdleGC:            c.Bool("idle-gc"),
		CheckSpacing:      c.Duration("check-spacing"),
		Log:               slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level})),
	}
	if s := strings.TrimSpace(c.String("echo")); s != "" {
		for _, a := range strings.Split(s, ",") {
			cfg.Echo = append(cfg.Echo, strings.TrimSpace(a))
		}
	}
	if c.Bool("haproxy-output") {
		cfg.HAProxyOutput = c.App.ErrWriter
	}
	return cfg, nil
}

var seriesPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)

// resolveHAProxy turns --haproxy into a binary path: a series is looked up
// under $HAPTIC_CACHE_DIR (or ./.cache) as hack/install-haproxy.sh installs
// it; anything else is a path or a name in PATH.
func resolveHAProxy(s string) (string, error) {
	if seriesPattern.MatchString(s) {
		cache := os.Getenv("HAPTIC_CACHE_DIR")
		if cache == "" {
			cache = ".cache"
		}
		p := filepath.Join(cache, "haproxy", s, "sbin", "haproxy")
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("haproxy %s is not installed at %s: run ./hack/install-haproxy.sh %s (or pass --haproxy <path>)", s, p, s)
		}
		return filepath.Abs(p)
	}
	p, err := exec.LookPath(s)
	if err != nil {
		return "", fmt.Errorf("haproxy: %w", err)
	}
	return filepath.Abs(p)
}

// printBanner tells the person at the terminal what to try.
func printBanner(w io.Writer, info local.Info, resources string) {
	fmt.Fprintf(w, "\nHAPTIC local: HAProxy %s serving http://%s (tree %s)\n", info.HAProxyVersion, info.HTTPAddr, info.BaseDir)
	if info.MetricsAddr != "" {
		fmt.Fprintf(w, "  metrics:  curl -s http://%s/metrics | grep ^haptic_\n", info.MetricsAddr)
	}
	if len(info.Echo) > 0 {
		fmt.Fprintf(w, "  echo backends: %s\n", strings.Join(info.Echo, ", "))
	}
	if hosts := ingressHosts(resources); len(hosts) > 0 {
		fmt.Fprintln(w, "Try:")
		for _, h := range hosts {
			fmt.Fprintf(w, "  curl -H 'Host: %s' http://%s%s\n", h.host, info.HTTPAddr, h.path)
		}
	}
	fmt.Fprintf(w, "Add a route: drop an Ingress manifest into %s (for the quickstart: cp examples/quickstart/extra/new-route.yaml %s/),\n", resources, resources)
	fmt.Fprintf(w, "  then: curl -H 'Host: new.localhost' http://%s/   — remove the file to remove the route. Ctrl-C stops everything.\n\n", info.HTTPAddr)
}

type hostPath struct{ host, path string }

// ingressHosts lists the first path of every host of the Ingresses in dir,
// for the banner; unreadable manifests are skipped.
func ingressHosts(dir string) []hostPath {
	st, err := store.LoadDir(dir, map[string]store.WatchedResource{
		"ingresses": {APIVersion: "networking.k8s.io/v1", Resource: "ingresses"},
	})
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []hostPath
	for _, ing := range st.List("ingresses") {
		spec, _ := ing["spec"].(map[string]any)
		rules, _ := spec["rules"].([]any)
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			host, _ := rule["host"].(string)
			if host == "" || strings.Contains(host, "*") || seen[host] {
				continue
			}
			path := "/"
			if http, ok := rule["http"].(map[string]any); ok {
				if paths, ok := http["paths"].([]any); ok && len(paths) > 0 {
					if p, ok := paths[0].(map[string]any); ok {
						if s, ok := p["path"].(string); ok && s != "" {
							path = s
						}
					}
				}
			}
			seen[host] = true
			out = append(out, hostPath{host, path})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].host < out[j].host })
	return out
}
