package rendergate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
)

// realChecker returns a checker on the real haproxy of series, or skips
// (fails on CI) as haproxytest.Binary does.
func realChecker(t *testing.T, series string, cfg rendergate.Config) *rendergate.HAProxyChecker {
	t.Helper()
	cfg.Binary = haproxytest.Binary(t, series)
	c := newChecker(t, cfg)
	if !strings.Contains(c.Version(), "version "+series+".") {
		t.Fatalf("checker runs %q, want series %s", c.Version(), series)
	}
	return c
}

func TestHAProxyCheckerVerdictsOnEverySeries(t *testing.T) {
	valid := validOutput(t)
	tests := []struct {
		name string
		out  *renderplan.Output
		// wantExit 0 means the output passes; otherwise the refusal's exit
		// code, and wantReason must be in its Reason (Error) and wantAlert
		// in one of its Alerts ("" when HAProxy prints no alert).
		wantExit              int
		wantReason, wantAlert string
	}{
		{name: "a valid output with a relative map path in the tree passes", out: valid},
		{name: "a config with warnings passes", out: textOutput(t, "frontend fe\n    mode http\n    bind 127.0.0.1:18482\n")},
		{name: "an unresolvable server name passes under -dr",
			out: withConfig(t, valid, "    http-request return status 404\n", "    http-request return status 404\n    server dns1 no-such-host.invalid:80\n")},
		{name: "an unknown keyword is refused with its ALERT line",
			out:      withConfig(t, valid, "    maxconn 100\n", "    maxconn 100\n    bogus_keyword 1\n"),
			wantExit: 1, wantReason: "parsing [haproxy.cfg:3] : unknown keyword 'bogus_keyword' in 'global' section",
			wantAlert: "unknown keyword 'bogus_keyword'"},
		{name: "a map file missing from the tree is refused",
			out:      withoutFile(valid, "maps/hosts.map"),
			wantExit: 1, wantReason: "failed to open pattern file <maps/hosts.map>", wantAlert: "maps/hosts.map"},
		{name: "a use_backend naming a missing backend is refused",
			out:      withConfig(t, valid, "default_backend be_default", "default_backend be_missing"),
			wantExit: 1, wantReason: "be_missing", wantAlert: "be_missing"},
		{name: "a config without a listener is refused with exit 2",
			out:      textOutput(t, "global\n    maxconn 100\n"),
			wantExit: 2, wantReason: "will not start (no listener)"},
	}
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		c := realChecker(t, series, rendergate.Config{})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := c.Check(context.Background(), tt.out)
				if tt.wantExit == 0 {
					if err != nil {
						t.Fatalf("haproxy %s refused a valid output: %v", series, err)
					}
					return
				}
				ce := mustRefuse(t, err)
				if ce.ExitCode != tt.wantExit || ce.PlanID != tt.out.Plan.ID() || !strings.Contains(err.Error(), tt.wantReason) {
					t.Fatalf("refusal = exit %d, plan %s, %q; want exit %d, plan %s, error with %q\n%s",
						ce.ExitCode, ce.PlanID, err, tt.wantExit, tt.out.Plan.ID(), tt.wantReason, ce.Output)
				}
				if tt.wantAlert == "" {
					return
				}
				for _, a := range ce.Alerts {
					if strings.HasPrefix(a, "[ALERT]") && strings.Contains(a, tt.wantAlert) {
						return
					}
				}
				t.Fatalf("no [ALERT] line with %q in %q\n%s", tt.wantAlert, ce.Alerts, ce.Output)
			})
		}
	})
}
