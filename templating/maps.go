package templating

import (
	"fmt"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
)

type mapState struct {
	name    string
	ordered bool
	entries []renderplan.MapEntry
	byKey   map[string]int // key → index in entries
	// seg holds the entries an adopted renderEach segment wrote before
	// those in entries (segment.go).
	seg *segMap
}

// registerMap (dict "name" n "ordered" b) declares maps/<n> and returns
// that path. Registering a map again with the same ordered flag is
// harmless; with another one it is an error.
func (r *renderState) registerMap(d map[string]any) (string, error) {
	a := newDictArgs("registerMap", d, "name", "ordered")
	name := a.str("name", true)
	ordered := a.boolean("ordered")
	if err := a.err(); err != nil {
		return "", err
	}
	return r.registerMapLocked(name, ordered)
}

func (r *renderState) registerMapLocked(name string, ordered bool) (string, error) {
	if err := checkFileName(name); err != nil {
		return "", fmt.Errorf("registerMap %q: %w", name, err)
	}
	if m, ok := r.mapsByKey[name]; ok {
		if m.ordered != ordered {
			return "", fmt.Errorf("registerMap %q: registered before with ordered=%t", name, m.ordered)
		}
		return dirMaps + "/" + name, nil
	}
	n := r.hints.sizes[dirMaps+"/"+name]
	r.mapsByKey[name] = &mapState{name: name, ordered: ordered, byKey: make(map[string]int, n), entries: make([]renderplan.MapEntry, 0, n)}
	return dirMaps + "/" + name, nil
}

// mapEntry "name" key value [object] adds one entry to a registered map
// and returns "". The first write of a key wins; a later write of another
// value is a MapKeyConflict problem. Keys and values that would break the
// map file are refused as MapEntryInvalid problems, an entry longer than
// HAProxy reads as one line and one command ([renderplan.CheckMapEntry]
// with the render's tune.bufsize) as a ValueTooLong problem. object, when
// given, names the object in those problems.
func (r *renderState) mapEntry(name string, key, value any, object ...string) (string, error) {
	m, k, v, obj, err := r.mapEntryArgs(name, key, value, object)
	if err != nil {
		return "", err
	}
	r.addEntry(m, k, v, obj)
	return "", nil
}

// mapEntryArgs checks mapEntry's arguments; it only reads the render.
func (r *renderState) mapEntryArgs(name string, key, value any, object []string) (m *mapState, k, v, obj string, err error) {
	m, ok := r.mapsByKey[name]
	if !ok {
		return nil, "", "", "", fmt.Errorf("mapEntry: map %q is not registered (registerMap or the config's maps)", name)
	}
	if k, err = scalarArg("mapEntry", "key", key); err != nil {
		return nil, "", "", "", err
	}
	if v, err = scalarArg("mapEntry", "value", value); err != nil {
		return nil, "", "", "", err
	}
	if len(object) > 1 {
		return nil, "", "", "", fmt.Errorf("mapEntry: at most one object argument, got %d", len(object))
	}
	if len(object) == 1 && object[0] != "" {
		obj = object[0]
	} else {
		obj = "map " + name
	}
	return m, k, v, obj, nil
}

func (r *renderState) addEntry(m *mapState, k, v, obj string) {
	r.maxLine() // fixes the bound entryProblem checks against
	if reason, msg := entryProblem(m.name, k, v, r.bound.bufSize); msg != "" {
		r.addProblem(obj, reason, msg)
		return
	}
	r.addCheckedEntry(m, k, v, obj)
}

// entryProblem says why key k and value v cannot be an entry of map name
// in a render of tune.bufsize bufSize (0: the default), with the reason,
// or returns "", "".
func entryProblem(name, k, v string, bufSize int) (reason, msg string) {
	if err := renderplan.CheckMapKey(k); err != nil {
		return ReasonMapEntryInvalid, fmt.Sprintf("map %s: key %q %v", name, k, err)
	}
	if err := renderplan.CheckMapValue(v); err != nil {
		return ReasonMapEntryInvalid, fmt.Sprintf("map %s: key %q: value %q %v", name, k, v, err)
	}
	if err := renderplan.CheckMapEntry(dirMaps+"/"+name, k, v, bufSize); err != nil {
		return ReasonValueTooLong, fmt.Sprintf("map %s: key %s with value %s %v; entry left out", name, shortQuote(k), shortQuote(v), err)
	}
	return "", ""
}

// addCheckedEntry is addEntry for a key and value that passed
// entryProblem.
func (r *renderState) addCheckedEntry(m *mapState, k, v, obj string) {
	if m.seg != nil {
		if was, dup := m.seg.winner(k); dup {
			if was != v {
				r.addProblem(obj, ReasonMapKeyConflict, fmt.Sprintf("map %s: key %q already maps to %q; %q ignored", m.name, k, was, v))
			}
			return
		}
	}
	if i, dup := m.byKey[k]; dup {
		if m.entries[i].Value != v {
			r.addProblem(obj, ReasonMapKeyConflict, fmt.Sprintf("map %s: key %q already maps to %q; %q ignored", m.name, k, m.entries[i].Value, v))
		}
		return
	}
	m.byKey[k] = len(m.entries)
	m.entries = append(m.entries, renderplan.MapEntry{Key: k, Value: v})
}

// mapLines adds the rendered text of a config map template: one "key value"
// entry per line; blank lines and lines starting with '#' are skipped.
func (r *renderState) mapLines(name, text string) {
	m := r.mapsByKey[name]
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, _ := strings.Cut(line, " ")
		if i := strings.IndexByte(k, '\t'); i >= 0 {
			k, v = line[:i], line[i+1:]
		}
		r.addEntry(m, k, strings.TrimSpace(v), "map "+name)
	}
}
