package templating

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
)

// A render's values are bounded by what HAProxy reads as one line and
// one command (renderplan's Bounds): every map entry and crt-list line by
// [renderplan.MaxLine] of the tune.bufsize the render declares with
// tuneBufsize (HAProxy's default without), names, paths and keywords by
// renderplan's fixed bounds. A value beyond them is a [Problem], most
// with [ReasonValueTooLong], and is left out; the rest renders.
//
// tuneBufsize must come before anything is checked against the bound:
// renderEach results and the verdicts they carry hold for one bound, so
// a renderEach segment is replayed only by a render with the bound it was
// made with (segmentFor).

// renderBound is the tune.bufsize a render declared (0 for none) and
// whether a value was checked against it.
type renderBound struct {
	bufSize int
	used    bool
}

// tuneBufsize n declares that haproxy.cfg sets tune.bufsize n and returns
// n, so that the global section writes "tune.bufsize {{ tuneBufsize 32768 }}".
// n is [renderplan.MinBufSize] to [renderplan.MaxBufSize]. It may be called
// again with the same n; with another, only while nothing was checked
// against the bound yet.
func (r *renderState) tuneBufsize(n any) (string, error) {
	size, ok := toInt(n)
	if s, isString := n.(string); isString {
		var err error
		size, err = strconv.Atoi(s)
		ok = err == nil
	}
	if !ok || size < renderplan.MinBufSize || size > renderplan.MaxBufSize {
		return "", fmt.Errorf("tuneBufsize: %v is not a number of bytes from %d to %d", n, renderplan.MinBufSize, renderplan.MaxBufSize)
	}
	if size != r.bound.bufSize && r.bound.used {
		return "", fmt.Errorf("tuneBufsize %d: values were checked against tune.bufsize %d already; declare it before any map entry, crt-list or renderEach", size, r.effectiveBufSize())
	}
	r.bound.bufSize = size
	return strconv.Itoa(size), nil
}

// effectiveBufSize is the render's tune.bufsize, the default if none was
// declared.
func (r *renderState) effectiveBufSize() int {
	if r.bound.bufSize == 0 {
		return renderplan.DefaultBufSize
	}
	return r.bound.bufSize
}

// fixBound returns the render's tune.bufsize (the default if none was
// declared) and fixes it: values are checked against it from now on.
func (r *renderState) fixBound() int {
	r.bound.used = true
	return r.effectiveBufSize()
}

// maxLine returns the render's [renderplan.MaxLine] and fixes the
// tune.bufsize it depends on.
func (r *renderState) maxLine() int { return renderplan.MaxLine(r.fixBound()) }

// mapLineMax "name" returns how many bytes a key, a space and a value
// may take in map <name>, when none of them is escaped by the runtime API
// (space, backslash, ';' and quotes count twice); mapEntry refuses longer
// entries with a ValueTooLong problem. A library checks its own fields
// against it to say which one is too long.
func (r *renderState) mapLineMax(name string) int {
	return r.maxLine() - (renderplan.MapLineLen(dirMaps+"/"+name, "", "") - 1)
}

// crtListLineMax "name" is mapLineMax for a line of crt-list <name>.
func (r *renderState) crtListLineMax(name string) int {
	return r.maxLine() - renderplan.CrtListLineLen(dirCerts+"/"+name, "")
}

// crtListLines returns content without the lines too long for the
// crt-list at path, and a ValueTooLong problem for each.
func (r *renderState) crtListLines(name, path, content string) string {
	bufSize := r.bound.bufSize
	max := r.maxLine()
	if renderplan.CheckLines(renderplan.FileCrtList, path, []byte(content), bufSize) == nil {
		return content
	}
	var b strings.Builder
	n := 0
	for rest := content; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = ""
		}
		n++
		if l := renderplan.CrtListLineLen(path, strings.TrimSuffix(line, "\n")); l > max {
			r.addProblem("crt-list "+name, ReasonValueTooLong, fmt.Sprintf("crt-list %s: line %d %s makes a line of %d bytes with the runtime command that carries it, more than the %d allowed with tune.bufsize %d; line left out",
				name, n, shortQuote(line), l, max, r.effectiveBufSize()))
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// shortQuote quotes s, cut to its first 40 bytes (and its length given)
// when longer: problems name a value without repeating all of it.
func shortQuote(s string) string {
	if len(s) <= 40 {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:40], len(s))
}
