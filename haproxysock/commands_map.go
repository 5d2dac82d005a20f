package haproxysock

import (
	"fmt"
	"strconv"
	"strings"
)

// MapEntry is one key and value of a map.
type MapEntry struct {
	Key   string
	Value string
}

// AddMap builds "add map <map> <key> <value>". HAProxy never de-duplicates:
// use [SetMap] for a key that may exist.
func AddMap(m, key, value string) (Command, error) {
	if err := checkMapEntryArgs(m, key, value); err != nil {
		return Command{}, err
	}
	return newCommand(wantEmpty, "add", "map", m, key, value)
}

// SetMap builds "set map <map> <key> <value>"; HAProxy answers an error for
// an absent key.
func SetMap(m, key, value string) (Command, error) {
	if err := checkMapEntryArgs(m, key, value); err != nil {
		return Command{}, err
	}
	if err := checkKeyNotRef(key); err != nil {
		return Command{}, err
	}
	return newCommand(wantEmpty, "set", "map", m, key, value)
}

// DelMap builds "del map <map> <key>". On HAProxy 3.4.7 it removes only one
// entry of a duplicated key.
func DelMap(m, key string) (Command, error) {
	if err := checkMapRef(m); err != nil {
		return Command{}, err
	}
	if err := checkText("map key", key); err != nil {
		return Command{}, err
	}
	if err := checkKeyNotRef(key); err != nil {
		return Command{}, err
	}
	return newCommand(wantEmpty, "del", "map", m, key)
}

// GetMap builds "get map <map> <value>", a lookup as traffic would do it.
func GetMap(m, sample string) (Command, error) {
	if err := checkMapRef(m); err != nil {
		return Command{}, err
	}
	if err := checkText("map sample", sample); err != nil {
		return Command{}, err
	}
	return newCommand(wantOutput, "get", "map", m, sample)
}

// ClearMap builds "clear map <map>".
func ClearMap(m string) (Command, error) {
	if err := checkMapRef(m); err != nil {
		return Command{}, err
	}
	return newCommand(wantEmpty, "clear", "map", m)
}

// ShowMap builds "show map [<map>]": the list of maps when m is empty, else
// the map's entries.
func ShowMap(m string) (Command, error) {
	if m == "" {
		return newCommand(wantOutput, "show", "map")
	}
	if err := checkMapRef(m); err != nil {
		return Command{}, err
	}
	return newCommand(wantOutput, "show", "map", m)
}

// ShowMapVersion builds "show map @<version> <map>".
func ShowMapVersion(version int, m string) (Command, error) {
	v, err := mapVersion(version)
	if err != nil {
		return Command{}, err
	}
	if err := checkMapRef(m); err != nil {
		return Command{}, err
	}
	return newCommand(wantOutput, "show", "map", v, m)
}

// PrepareMap builds "prepare map <map>". Its reply "New version created: N"
// gives the version for [AddMapVersion] and [CommitMap]; see
// [ParsePrepareMap].
func PrepareMap(m string) (Command, error) {
	if err := checkMapRef(m); err != nil {
		return Command{}, err
	}
	return newCommand(wantLast("New version created:"), "prepare", "map", m)
}

// ParsePrepareMap returns the version number in a [PrepareMap] reply.
func ParsePrepareMap(reply string) (int, error) {
	last := lastNonEmptyLine(reply)
	rest, ok := strings.CutPrefix(last, "New version created:")
	if !ok {
		return 0, fmt.Errorf("%w: prepare map reply %q", ErrProtocol, reply)
	}
	v, err := strconv.Atoi(strings.TrimSpace(rest))
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%w: prepare map reply %q", ErrProtocol, reply)
	}
	return v, nil
}

// AddMapVersion builds "add map @<version> <map> <key> <value>": the entry
// stays invisible to traffic until [CommitMap].
func AddMapVersion(version int, m, key, value string) (Command, error) {
	v, err := mapVersion(version)
	if err != nil {
		return Command{}, err
	}
	if err := checkMapEntryArgs(m, key, value); err != nil {
		return Command{}, err
	}
	return newCommand(wantEmpty, "add", "map", v, m, key, value)
}

// CommitMap builds "commit map @<version> <map>", which atomically replaces
// every entry of the map by the version's.
func CommitMap(version int, m string) (Command, error) {
	v, err := mapVersion(version)
	if err != nil {
		return Command{}, err
	}
	if err := checkMapRef(m); err != nil {
		return Command{}, err
	}
	return newCommand(wantEmpty, "commit", "map", v, m)
}

// AddMapPayload builds "add map <map> <<" followed by one "key value" line
// per entry. [Client.Run] splits it into several commands when it does not
// fit in tune.bufsize. Keys may not contain spaces here (the payload has no
// escaping); values may, but not at their start.
func AddMapPayload(m string, entries []MapEntry) (Command, error) {
	if err := checkMapRef(m); err != nil {
		return Command{}, err
	}
	return mapPayload([]string{"add", "map", m}, entries)
}

// AddMapVersionPayload is [AddMapPayload] into version <version> of the map
// ("add map @<version> <map> <<").
func AddMapVersionPayload(version int, m string, entries []MapEntry) (Command, error) {
	v, err := mapVersion(version)
	if err != nil {
		return Command{}, err
	}
	if err := checkMapRef(m); err != nil {
		return Command{}, err
	}
	return mapPayload([]string{"add", "map", v, m}, entries)
}

func mapPayload(args []string, entries []MapEntry) (Command, error) {
	if len(entries) == 0 {
		return Command{}, fmt.Errorf("%w: map payload without entries", ErrInvalidArgument)
	}
	lines := make([]string, len(entries))
	for i, e := range entries {
		if err := checkPayloadWord("map key", e.Key); err != nil {
			return Command{}, err
		}
		if err := checkText("map value", e.Value); err != nil {
			return Command{}, err
		}
		if strings.ContainsAny(e.Value[:1], " ") {
			return Command{}, invalid("map value", e.Value, "starts with a space (payload form)")
		}
		if strings.HasSuffix(e.Value, " ") {
			return Command{}, invalid("map value", e.Value, "ends with a space (payload form)")
		}
		lines[i] = e.Key + " " + e.Value
	}
	c, err := newCommand(wantEmpty, args...)
	if err != nil {
		return Command{}, err
	}
	c.payload = lines
	c.splittable = true
	return c, nil
}

// checkPayloadWord accepts one word of a payload line: text without
// spaces (the payload is split on spaces and takes no escapes).
func checkPayloadWord(field, s string) error {
	if err := checkText(field, s); err != nil {
		return err
	}
	if strings.Contains(s, " ") {
		return invalid(field, s, "contains a space (payload form)")
	}
	return nil
}

func checkMapEntryArgs(m, key, value string) error {
	if err := checkMapRef(m); err != nil {
		return err
	}
	if err := checkText("map key", key); err != nil {
		return err
	}
	return checkText("map value", value)
}

// checkKeyNotRef refuses keys that set/del map would read as an entry
// reference ("#0x…").
func checkKeyNotRef(key string) error {
	if strings.HasPrefix(key, "#") {
		return invalid("map key", key, `starts with "#" (read as an entry reference)`)
	}
	return nil
}

func mapVersion(v int) (string, error) {
	if v < 0 {
		return "", fmt.Errorf("%w: map version %d is negative", ErrInvalidArgument, v)
	}
	return "@" + strconv.Itoa(v), nil
}
