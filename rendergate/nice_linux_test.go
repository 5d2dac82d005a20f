package rendergate_test

import (
	"os"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/rendergate"
)

// niceScript prints the nice value of the check process (field 19 of
// /proc/<pid>/stat) once it is 19, or after about two seconds, whatever it
// is then; the priority is lowered just after the process starts.
const niceScript = `i=0
while [ "$i" -lt 200 ]; do
  n=$(cut -d' ' -f19 /proc/$$/stat)
  [ "$n" = 19 ] && break
  sleep 0.01
  i=$((i+1))
done
echo "nice=$(cut -d' ' -f19 /proc/$$/stat)"
exit 1
`

func TestCheckerRunsTheCheckAtNiceNineteen(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc to read the nice value from: %v", err)
	}
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t)})
	ce := mustRefuse(t, checkScript(t, c, niceScript))
	if !strings.Contains(ce.Output, "nice=19\n") {
		t.Errorf("the check did not run at nice 19; it printed:\n%s", ce.Output)
	}
}

// TestAnInteractiveCheckKeepsTheCallersPriority: the script waits its two
// seconds for a nice 19 that never comes and prints the caller's value.
func TestAnInteractiveCheckKeepsTheCallersPriority(t *testing.T) {
	self, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skipf("no /proc to read the nice value from: %v", err)
	}
	// The fields after the command name, which is in parentheses.
	fields := strings.Fields(string(self[strings.LastIndexByte(string(self), ')')+2:]))
	own := fields[16] // field 19 of the whole line
	if own == "19" {
		t.Skip("the test itself runs at nice 19: no difference to see")
	}
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t), Interactive: true})
	ce := mustRefuse(t, checkScript(t, c, niceScript))
	if !strings.Contains(ce.Output, "nice="+own+"\n") {
		t.Errorf("the interactive check did not keep nice %s; it printed:\n%s", own, ce.Output)
	}
}

// TestTheWebhookLaneIsInteractive: through a CheckServer, the gate's lane
// checks at nice 19 and the webhook's at the server's own priority.
func TestTheWebhookLaneIsInteractive(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc to read the nice value from: %v", err)
	}
	sock := serveChecksOf(t, fakeBinary(t))
	gate := mustRefuse(t, checkScript(t, rendergate.NewRemoteChecker(sock, "gate"), niceScript))
	if !strings.Contains(gate.Output, "nice=19\n") {
		t.Errorf("the gate lane's check did not run at nice 19; it printed:\n%s", gate.Output)
	}
	webhook := mustRefuse(t, checkScript(t, rendergate.NewRemoteChecker(sock, rendergate.LaneWebhook), niceScript))
	if strings.Contains(webhook.Output, "nice=19\n") {
		t.Errorf("the webhook lane's check ran at nice 19; it printed:\n%s", webhook.Output)
	}
}
