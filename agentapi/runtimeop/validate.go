package runtimeop

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
)

// field is a bit set of the [Op] fields a kind uses.
type field uint32

const (
	fBackend field = 1 << iota
	fServer
	fProfile
	fMode
	fGUID
	fAddress
	fPort
	fWeight
	fCheck
	fKeywords
	fState
	fMap
	fKey
	fValue
	fEntries
	fCert
	fDigest
	fCrtList
	fSSLOptions
	fSNIFilters
)

// opFields lists, per kind, the fields it uses (allowed) and the ones it
// needs (required). Port and Weight may be zero and so are never
// "required" in the presence sense; their ranges are checked instead.
var opFields = [opEnd]struct{ allowed, required field }{
	OpAddBackend:       {fBackend | fProfile | fMode | fGUID, fBackend | fProfile | fMode},
	OpAddServer:        {fBackend | fServer | fAddress | fPort | fWeight | fCheck | fKeywords | fGUID, fBackend | fServer | fAddress},
	OpSetServerState:   {fBackend | fServer | fState, fBackend | fServer | fState},
	OpSetServerAddr:    {fBackend | fServer | fAddress | fPort, fBackend | fServer | fAddress},
	OpSetServerWeight:  {fBackend | fServer | fWeight, fBackend | fServer},
	OpEnableHealth:     {fBackend | fServer, fBackend | fServer},
	OpPublishBackend:   {fBackend, fBackend},
	OpAddMapEntry:      {fMap | fKey | fValue, fMap | fKey | fValue},
	OpSetMapEntry:      {fMap | fKey | fValue, fMap | fKey | fValue},
	OpReplaceMap:       {fMap | fEntries, fMap},
	OpNewCert:          {fCert, fCert},
	OpSetCert:          {fCert | fDigest, fCert | fDigest},
	OpCommitCert:       {fCert, fCert},
	OpAddCrtListEntry:  {fCrtList | fCert | fSSLOptions | fSNIFilters, fCrtList | fCert},
	OpDelCrtListEntry:  {fCrtList | fCert, fCrtList | fCert},
	OpDelMapEntry:      {fMap | fKey, fMap | fKey},
	OpUnpublishBackend: {fBackend, fBackend},
	OpDelServer:        {fBackend | fServer, fBackend | fServer},
	OpDelBackend:       {fBackend, fBackend},
}

var fieldNames = []string{
	"backend", "server", "profile", "mode", "guid", "address", "port", "weight", "check",
	"keywords", "state", "map", "key", "value", "entries", "cert", "digest", "crtList",
	"sslOptions", "sniFilters",
}

func fieldsOf(k OpKind) field {
	if !k.Valid() {
		return 0
	}
	return opFields[k].allowed
}

// present returns the set of fields of o that hold a non-zero value.
func (o Op) present() field {
	var f field
	set := func(b bool, x field) {
		if b {
			f |= x
		}
	}
	set(o.Backend != "", fBackend)
	set(o.Server != "", fServer)
	set(o.Profile != "", fProfile)
	set(o.Mode != "", fMode)
	set(o.GUID != "", fGUID)
	set(o.Address != "", fAddress)
	set(o.Port != 0, fPort)
	set(o.Weight != 0, fWeight)
	set(o.Check, fCheck)
	set(o.Keywords != nil, fKeywords)
	set(o.State != "", fState)
	set(o.Map != "", fMap)
	set(o.Key != "", fKey)
	set(o.Value != "", fValue)
	set(o.Entries != nil, fEntries)
	set(o.Cert != "", fCert)
	set(o.Digest != "", fDigest)
	set(o.CrtList != "", fCrtList)
	set(o.SSLOptions != nil, fSSLOptions)
	set(o.SNIFilters != nil, fSNIFilters)
	return f
}

// MaxGUIDLen is HAProxy's limit on a guid, in bytes.
const MaxGUIDLen = renderplan.MaxGUIDLen

// Validate checks an op the way the agent does on decode: a known kind,
// every field the kind needs, no field it does not use, HAProxy-legal
// names, IP addresses, ports and weights in range, and no text that could
// leave its argument (whitespace where HAProxy splits words, control
// characters, "<<"). The error wraps [ErrInvalidOp] or [ErrUnknownOpKind].
func (o Op) Validate() error {
	if !o.Kind.Valid() {
		return fmt.Errorf("%w: %d", ErrUnknownOpKind, int(o.Kind))
	}
	spec := opFields[o.Kind]
	have := o.present()
	if extra := have &^ spec.allowed; extra != 0 {
		return o.invalid("field %s is not used by %s", firstField(extra), o.Kind)
	}
	if missing := spec.required &^ have; missing != 0 {
		return o.invalid("field %s is required", firstField(missing))
	}
	checks := []struct {
		f     field
		name  string
		value string
		check func(string) string
	}{
		{fBackend, "backend", o.Backend, nameProblem},
		{fServer, "server", o.Server, nameProblem},
		{fProfile, "profile", o.Profile, nameProblem},
		{fGUID, "guid", o.GUID, guidProblem},
		{fMap, "map", o.Map, pathProblem},
		{fKey, "key", o.Key, mapKeyProblem},
		{fValue, "value", o.Value, mapValueProblem},
		{fCert, "cert", o.Cert, pathProblem},
		{fCrtList, "crtList", o.CrtList, pathProblem},
		{fDigest, "digest", o.Digest, digestProblem},
	}
	for _, c := range checks {
		if have&c.f == 0 {
			continue
		}
		if p := c.check(c.value); p != "" {
			return o.invalid("%s %q %s", c.name, c.value, p)
		}
	}
	if have&fMode != 0 && o.Mode != "http" && o.Mode != "tcp" {
		return o.invalid("mode %q is not http or tcp", o.Mode)
	}
	if have&fAddress != 0 {
		if a, err := netip.ParseAddr(o.Address); err != nil || a.Zone() != "" {
			return o.invalid("address %q is not an IP address", o.Address)
		}
	}
	if spec.allowed&fPort != 0 && (o.Port < 1 || o.Port > 65535) {
		return o.invalid("port %d is out of range 1..65535", o.Port)
	}
	if spec.allowed&fWeight != 0 && (o.Weight < 0 || o.Weight > 256) {
		return o.invalid("weight %d is out of range 0..256", o.Weight)
	}
	if have&fState != 0 {
		switch o.State {
		case StateReady, StateDrain, StateMaint:
		default:
			return o.invalid("state %q is not ready, drain or maint", o.State)
		}
	}
	for _, lists := range []struct {
		name string
		v    []string
	}{{"keyword", o.Keywords}, {"ssl option", o.SSLOptions}, {"sni filter", o.SNIFilters}} {
		for _, t := range lists.v {
			if p := tokenProblem(t); p != "" {
				return o.invalid("%s %q %s", lists.name, t, p)
			}
		}
	}
	for i, e := range o.Entries {
		if p := mapKeyProblem(e.Key); p != "" {
			return o.invalid("entry %d: key %q %s", i, e.Key, p)
		}
		if p := mapValueProblem(e.Value); p != "" {
			return o.invalid("entry %d: value %q %s", i, e.Value, p)
		}
	}
	return nil
}

func (o Op) invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidOp, o.Kind, fmt.Sprintf(format, args...))
}

func firstField(f field) string {
	for i, n := range fieldNames {
		if f&(1<<i) != 0 {
			return n
		}
	}
	return "?"
}

// The rules below are renderplan's (see the renderplan Check functions),
// so that an op the controller derives from a valid plan passes here too.
// Where the agent is stricter it says why: an op's strings go onto a
// runtime CLI line, where ';' separates commands and "<<" opens a payload,
// so text that is harmless in a rendered file could change the command.

// problemOf turns a renderplan check's result into the "" or message form
// Validate uses.
func problemOf(err error) string {
	if err != nil {
		return err.Error()
	}
	return ""
}

func nameProblem(s string) string { return problemOf(renderplan.CheckName(s)) }

func guidProblem(s string) string { return problemOf(renderplan.CheckGUID(s)) }

// pathProblem checks a map, cert or crt-list path: renderplan's path rule,
// plus no text that would change the CLI command the path goes into: a
// leading '#' (HAProxy reads "#<id>" as a map's unique id), '@' (a map
// version), '*' (an uncommitted cert transaction) or '-' (which could read
// as an option), "<<", ';', a backslash or a quote. A path that breaks
// renderplan's rule is reported as not a clean path, followed by
// renderplan's message.
func pathProblem(p string) string {
	if err := renderplan.CheckPath(p); err != nil {
		return "is not a clean path inside the base directory: " + err.Error()
	}
	switch c := p[0]; {
	case c == '@' || c == '-' || c == '*' || c == '#':
		return fmt.Sprintf("starts with %q", c)
	case strings.Contains(p, "<<"):
		return `contains "<<"`
	}
	if i := strings.IndexAny(p, `;\'"`); i >= 0 {
		return fmt.Sprintf("contains %q", rune(p[i]))
	}
	return ""
}

// mapKeyProblem is renderplan's map key rule plus no "<<" (see above).
func mapKeyProblem(k string) string {
	if p := problemOf(renderplan.CheckMapKey(k)); p != "" {
		return p
	}
	if strings.Contains(k, "<<") {
		return `contains "<<"`
	}
	return ""
}

// mapValueProblem is renderplan's map value rule plus no "<<" (see above)
// and no tab anywhere: renderplan allows a tab inside a value, but on a
// CLI line HAProxy splits words at blanks, so the tab would not reach the
// map as sent.
func mapValueProblem(v string) string {
	if p := problemOf(renderplan.CheckMapValue(v)); p != "" {
		return p
	}
	switch {
	case strings.Contains(v, "<<"):
		return `contains "<<"`
	case strings.ContainsRune(v, '\t'):
		return "contains a tab"
	}
	return ""
}

// tokenProblem is renderplan's token rule plus no "<<" and no ';' (see
// above).
func tokenProblem(s string) string {
	if p := problemOf(renderplan.CheckToken(s)); p != "" {
		return p
	}
	switch {
	case strings.Contains(s, "<<"):
		return `contains "<<"`
	case strings.Contains(s, ";"):
		return "contains ';'"
	}
	return ""
}

func digestProblem(d string) string {
	if len(d) == 0 || len(d) > 64 {
		return "is not 1 to 64 hex digits"
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "is not lower-case hex"
		}
	}
	return ""
}
