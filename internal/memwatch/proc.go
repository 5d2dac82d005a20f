package memwatch

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Resident is a process's resident set, in bytes.
type Resident struct {
	// RSS is the resident set now (VmRSS).
	RSS int64
	// Peak is the highest resident set since the process started
	// (VmHWM), or since it was last reset through /proc/<pid>/clear_refs,
	// and never below RSS. The kernel records the high-water mark only on
	// some of the paths that shrink the resident set (not when a process
	// returns memory with madvise, as the Go runtime does), so VmHWM can
	// stay below an earlier VmRSS: a [Watcher]'s report takes the maximum
	// of both over every sample.
	Peak int64
	// Anon is the part of RSS that is the process's own memory (RssAnon:
	// the Go heap, stacks, the runtime's structures); the rest is mostly
	// pages of the executable (RssFile), shared with every process that
	// runs it and reclaimable by the kernel.
	Anon int64
}

// Read returns the resident set of process pid; pid 0 means this process.
func Read(pid int) (Resident, error) {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Resident{}, fmt.Errorf("memwatch: %w", err)
	}
	r, err := parseStatus(b)
	if err != nil {
		return Resident{}, fmt.Errorf("memwatch: %s: %w", path, err)
	}
	return r, nil
}

// parseStatus reads VmRSS, VmHWM ("VmHWM:	  108224 kB") and RssAnon
// from the text of a /proc/<pid>/status file.
func parseStatus(b []byte) (Resident, error) {
	var r Resident
	var seen int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, rest, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(key) {
		case "VmRSS":
			dst = &r.RSS
		case "VmHWM":
			dst = &r.Peak
		case "RssAnon":
			dst = &r.Anon
			seen-- // optional: older kernels lack it
		default:
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return Resident{}, fmt.Errorf("%s: unexpected value %q", key, rest)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 || kb > 1<<42 {
			return Resident{}, fmt.Errorf("%s: unexpected value %q", key, rest)
		}
		*dst = kb << 10
		seen++
	}
	if seen != 2 {
		return Resident{}, fmt.Errorf("no VmRSS and VmHWM lines (a kernel thread?)")
	}
	r.Peak = max(r.Peak, r.RSS)
	return r, nil
}
