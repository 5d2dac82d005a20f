package agentapi

import (
	"fmt"
	"net/netip"
	"path"
	"strings"
	"unicode/utf8"
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
const MaxGUIDLen = 127

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

func isControl(b byte) bool { return b < 0x20 || b == 0x7f }

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// nameProblem checks a backend, server or profile name: HAProxy accepts
// letters, digits, '_', '.', ':' and '-'.
func nameProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isNameByte(c) {
			return fmt.Sprintf("has invalid character %q", rune(c))
		}
	}
	return ""
}

func isNameByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return c == '_' || c == '.' || c == ':' || c == '-'
}

func guidProblem(s string) string {
	if len(s) > MaxGUIDLen {
		return fmt.Sprintf("is longer than %d bytes", MaxGUIDLen)
	}
	return nameProblem(s)
}

// pathProblem checks a file path relative to the HAProxy base directory,
// the form in which the configuration names maps and certificates.
func pathProblem(p string) string {
	switch {
	case p == "":
		return "is empty"
	case strings.HasPrefix(p, "/"):
		return "is absolute"
	case !utf8.ValidString(p):
		return "is not valid UTF-8"
	case p[0] == '@' || p[0] == '-' || p[0] == '*' || p[0] == '#':
		return fmt.Sprintf("starts with %q", p[0])
	case strings.Contains(p, "<<"):
		return `contains "<<"`
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; isControl(c) || isSpace(c) || c == ';' || c == '\\' || c == '\'' || c == '"' {
			return fmt.Sprintf("contains %q", rune(c))
		}
	}
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || path.Clean(p) != p {
		return "is not a clean path inside the base directory"
	}
	return ""
}

func mapKeyProblem(k string) string {
	switch {
	case k == "":
		return "is empty"
	case k[0] == '#':
		return "starts with '#'"
	case !utf8.ValidString(k):
		return "is not valid UTF-8"
	case strings.Contains(k, "<<"):
		return `contains "<<"`
	}
	for i := 0; i < len(k); i++ {
		if isSpace(k[i]) || isControl(k[i]) {
			return "contains whitespace or a control character"
		}
	}
	return ""
}

func mapValueProblem(v string) string {
	switch {
	case v == "":
		return "is empty"
	case !utf8.ValidString(v):
		return "is not valid UTF-8"
	case strings.Contains(v, "<<"):
		return `contains "<<"`
	case v[0] == ' ' || v[len(v)-1] == ' ':
		return "starts or ends with a space"
	}
	for i := 0; i < len(v); i++ {
		if isControl(v[i]) {
			return "contains a control character"
		}
	}
	return ""
}

func tokenProblem(s string) string {
	switch {
	case s == "":
		return "is empty"
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.Contains(s, "<<"):
		return `contains "<<"`
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isSpace(c) || isControl(c):
			return "contains whitespace or a control character"
		case c == '"' || c == '\'' || c == '\\' || c == '#' || c == ';':
			return fmt.Sprintf("contains %q", rune(c))
		}
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
