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
