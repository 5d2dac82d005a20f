package agent

import (
	"bytes"
	"errors"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

// HAProxy reads a map-file line into 16 KiB and a runtime command into
// tune.bufsize: a longer map line is cut, and its rest loads as an entry
// of its own, which no plan holds (renderplan's Bounds). Plans built by
// renderplan never have one; the agent refuses one anyway, before
// anything of the apply runs, because the reload that follows a refused
// runtime op would load it.

// checkLines refuses the body p writes at path if it is a map or a
// crt-list with a line longer than [renderplan.MaxLine] of the
// configured tune.bufsize allows, naming the file and the line. A body
// still to be made from a patch is checked where the patch changes it:
// the lines it keeps from its base are the lines the agent wrote there.
func (a *Agent) checkLines(p *plannedApply, path string) error {
	kind, ok := p.lineFiles[path]
	if !ok {
		return nil
	}
	if body, ok := p.bodies[path]; ok {
		if err := renderplan.CheckLines(kind, path, body, a.cfg.BufSize); err != nil {
			return nackf(agentapi.StageFiles, -1, "file %s: %v", path, err)
		}
		return nil
	}
	pb, ok := p.pending[path]
	if !ok || pb.patch.Prefix+pb.patch.Suffix > len(pb.base) {
		return nil // entries and applyPatches refuse these
	}
	// The changed lines: from the start of the line the literal starts in
	// to the end of the line it ends in.
	pt, base := pb.patch, pb.base
	start := bytes.LastIndexByte(base[:pt.Prefix], '\n') + 1
	tail := base[len(base)-pt.Suffix:]
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[:i]
	}
	region := make([]byte, 0, pt.Prefix-start+len(pt.Literal)+len(tail))
	region = append(append(append(region, base[start:pt.Prefix]...), pt.Literal...), tail...)
	if err := renderplan.CheckLines(kind, path, region, a.cfg.BufSize); err != nil {
		var le *renderplan.LineError
		if errors.As(err, &le) {
			le.Line += bytes.Count(base[:start], []byte{'\n'}) // the region's first line's number, less one
		}
		return nackf(agentapi.StageFiles, -1, "file %s: %v", path, err)
	}
	return nil
}
