package renderplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// Encode returns the canonical encoding of p: compact JSON with the fields
// in declaration order, as encoding/json would write them (including its
// HTML-safe escaping), with empty and nil slices written alike. Encode
// writes slices in the order they have; a built plan holds them sorted, so
// equal plans encode to equal bytes. Encode never fails on a non-nil plan.
func (p *Plan) Encode() ([]byte, error) {
	if p == nil {
		return nil, errors.New("renderplan: encode nil plan")
	}
	e := encoder{buf: make([]byte, 0, p.sizeHint())}
	e.plan(p)
	return e.buf, nil
}

// ID returns the plan's identity: the digest of its canonical encoding
// ([Plan.Encode]). Equal plans have equal IDs; a nil plan has the empty ID.
// ID encodes the plan on every call, streaming the encoding into the hash
// without keeping it; [Output.ID] computes it once per output.
func (p *Plan) ID() string {
	if p == nil {
		return ""
	}
	return p.id(nil)
}

// id is ID, taking the encodings parts knows (parts may be nil).
func (p *Plan) id(parts encodedParts) string {
	e := encoder{buf: make([]byte, 0, hashChunk+4<<10), hash: xxhash.New(), parts: parts}
	e.plan(p)
	_, _ = e.hash.Write(e.buf)
	return string(digestSum(e.hash.Sum64()))
}

// SchemaError is returned by [Decode] for a plan of another schema. A
// consumer should treat such a plan as unknown (full state and reload).
type SchemaError struct {
	// Schema is the schema the encoding names ("" when it names none).
	Schema string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("renderplan: unknown plan schema %q (want %q)", e.Schema, Schema)
}

// Decode parses a plan's JSON encoding strictly: unknown fields, trailing
// data and a schema other than [Schema] are errors (the latter a
// [*SchemaError]). Empty slices decode as nil, so Decode(Encode(p)) is
// Equal to p. Decode does not check the plan's consistency; call
// [Plan.Validate] for that.
func Decode(b []byte) (*Plan, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		var head struct {
			Schema string `json:"schema"`
		}
		if json.Unmarshal(b, &head) == nil && head.Schema != Schema {
			return nil, &SchemaError{Schema: head.Schema}
		}
		return nil, fmt.Errorf("renderplan: decode plan: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("renderplan: decode plan: trailing data after the plan")
	}
	if p.Schema != Schema {
		return nil, &SchemaError{Schema: p.Schema}
	}
	normalize(&p)
	return &p, nil
}

// normalize turns empty slices into nil throughout p.
func normalize(p *Plan) {
	normalizeTop(p)
	for i := range p.Backends {
		normalizeBackend(&p.Backends[i])
	}
}

// normalizeTop is normalize but for the backends' own slices.
func normalizeTop(p *Plan) {
	if len(p.Sections) == 0 {
		p.Sections = nil
	}
	if len(p.Profiles) == 0 {
		p.Profiles = nil
	}
	if len(p.Backends) == 0 {
		p.Backends = nil
	}
	if len(p.Maps) == 0 {
		p.Maps = nil
	}
	if len(p.Files) == 0 {
		p.Files = nil
	}
	for i := range p.Maps {
		if len(p.Maps[i].Entries) == 0 {
			p.Maps[i].Entries = nil
		}
	}
}

// normalizeBackend turns be's empty slices into nil. It writes only
// empty slices that are not nil yet, so it never writes to a backend that
// is normalized already (a [Cache] shares those between plans).
func normalizeBackend(be *Backend) {
	if len(be.Body) == 0 && be.Body != nil {
		be.Body = nil
	}
	if len(be.Servers) == 0 && be.Servers != nil {
		be.Servers = nil
	}
	for j := range be.Servers {
		if s := &be.Servers[j]; len(s.Keywords) == 0 && s.Keywords != nil {
			s.Keywords = nil
		}
	}
}

// sizeHint estimates the encoded size of p to size the buffer once.
func (p *Plan) sizeHint() int {
	n := 64 + 96*len(p.Sections) + 96*len(p.Profiles) + 128*len(p.Files)
	for i := range p.Backends {
		be := &p.Backends[i]
		n += 128 + 2*len(be.Name) + len(be.GUID) + len(be.Profile)
		for _, l := range be.Body {
			n += 4 + len(l)
		}
		n += 96 * len(be.Servers)
	}
	for i := range p.Maps {
		n += 64 + len(p.Maps[i].Path) + 24*len(p.Maps[i].Entries)
		for _, e := range p.Maps[i].Entries {
			n += len(e.Key) + len(e.Value)
		}
	}
	return n
}

// hashChunk is how many encoded bytes ID buffers before hashing them.
const hashChunk = 32 << 10

// encoder writes the canonical encoding. With a hash, it feeds the bytes
// to the hash in chunks instead of keeping them (ID); without, it keeps
// them all in buf (Encode).
type encoder struct {
	buf  []byte
	hash *xxhash.Digest
	// parts, if set, has the encodings of some backends and maps already.
	parts encodedParts
}

// encodedParts gives the encodings of a plan's backends and maps that are
// known already: what encoder.backend and encoder.mapJSON would write for
// backend or map i of the plan, nil if it does not know.
type encodedParts interface {
	backend(i int) []byte
	mapJSON(i int, m *Map) []byte
	// section returns the encoding of section i of the plan but for its
	// offset: what comes before the offset's digits and what after.
	section(i int, s *Section) (head, tail []byte)
}

// part writes an encoding given by parts.
func (e *encoder) part(b []byte) {
	if e.hash != nil && len(b) >= hashChunk {
		_, _ = e.hash.Write(e.buf)
		_, _ = e.hash.Write(b)
		e.buf = e.buf[:0]
		return
	}
	e.buf = append(e.buf, b...)
}

// item ends one element of a list: a chance to hand buffered bytes to
// the hash.
func (e *encoder) item() {
	if e.hash != nil && len(e.buf) >= hashChunk {
		_, _ = e.hash.Write(e.buf)
		e.buf = e.buf[:0]
	}
}

func (e *encoder) raw(s string) { e.buf = append(e.buf, s...) }
func (e *encoder) str(s string) { e.buf = appendString(e.buf, s) }
func (e *encoder) num(n int)    { e.buf = appendInt(e.buf, n) }
func (e *encoder) sep(i int) {
	if i > 0 {
		e.buf = append(e.buf, ',')
	}
}

// plan writes p exactly as encoding/json.Marshal writes it for the struct
// tags of the types (a test holds it to that), but without reflection.
func (e *encoder) plan(p *Plan) {
	e.raw(`{"schema":`)
	e.str(p.Schema)
	if p.BufSize != 0 {
		e.raw(`,"bufSize":`)
		e.num(p.BufSize)
	}
	e.raw(`,"sections":[`)
	for i := range p.Sections {
		e.sep(i)
		s := &p.Sections[i]
		if e.parts != nil {
			if head, tail := e.parts.section(i, s); head != nil {
				e.buf = append(e.buf, head...)
				e.num(s.Offset)
				e.buf = append(e.buf, tail...)
				e.item()
				continue
			}
		}
		e.sectionHead(s)
		e.num(s.Offset)
		e.sectionTail(s)
		e.item()
	}
	e.raw(`]`)
	if len(p.Profiles) > 0 {
		e.raw(`,"profiles":[`)
		for i := range p.Profiles {
			e.sep(i)
			pr := &p.Profiles[i]
			e.raw(`{"name":`)
			e.str(pr.Name)
			e.raw(`,"mode":`)
			e.str(pr.Mode)
			e.raw(`,"digest":`)
			e.str(string(pr.Digest))
			e.raw(`}`)
		}
		e.raw(`]`)
	}
	if len(p.Backends) > 0 {
		e.raw(`,"backends":[`)
		for i := range p.Backends {
			e.sep(i)
			if b := e.knownBackend(i); b != nil {
				e.part(b)
			} else {
				e.backend(&p.Backends[i])
			}
			e.item()
		}
		e.raw(`]`)
	}
	if len(p.Maps) > 0 {
		e.raw(`,"maps":[`)
		for i := range p.Maps {
			e.sep(i)
			if b := e.knownMap(i, &p.Maps[i]); b != nil {
				e.part(b)
			} else {
				e.mapJSON(&p.Maps[i])
			}
		}
		e.raw(`]`)
	}
	e.raw(`,"files":[`)
	for i := range p.Files {
		e.sep(i)
		f := &p.Files[i]
		e.raw(`{"path":`)
		e.str(f.Path)
		e.raw(`,"kind":`)
		e.str(string(f.Kind))
		e.raw(`,"digest":`)
		e.str(string(f.Digest))
		e.raw(`,"size":`)
		e.num(f.Size)
		if f.ReloadOnChange {
			e.raw(`,"reloadOnChange":true`)
		}
		e.raw(`}`)
		e.item()
	}
	e.raw(`]}`)
}

// sectionHead writes a section's encoding up to its offset's digits.
func (e *encoder) sectionHead(s *Section) {
	e.raw(`{"kind":`)
	e.str(string(s.Kind))
	if s.Name != "" {
		e.raw(`,"name":`)
		e.str(s.Name)
	}
	e.raw(`,"offset":`)
}

// sectionTail writes the rest of a section's encoding.
func (e *encoder) sectionTail(s *Section) {
	e.raw(`,"length":`)
	e.num(s.Length)
	e.raw(`,"digest":`)
	e.str(string(s.Digest))
	e.raw(`}`)
}

func (e *encoder) knownBackend(i int) []byte {
	if e.parts == nil {
		return nil
	}
	return e.parts.backend(i)
}

func (e *encoder) knownMap(i int, m *Map) []byte {
	if e.parts == nil {
		return nil
	}
	return e.parts.mapJSON(i, m)
}

func (e *encoder) backend(be *Backend) {
	e.raw(`{"name":`)
	e.str(be.Name)
	e.raw(`,"guid":`)
	e.str(be.GUID)
	e.raw(`,"profile":`)
	e.str(be.Profile)
	e.raw(`,"mode":`)
	e.str(be.Mode)
	e.raw(`,"shape":`)
	e.str(string(be.Shape))
	if be.ShapeReason != "" {
		e.raw(`,"shapeReason":`)
		e.str(be.ShapeReason)
	}
	if len(be.Body) > 0 {
		e.raw(`,"body":`)
		e.strings(be.Body)
	}
	if len(be.Servers) > 0 {
		e.raw(`,"servers":[`)
		for i := range be.Servers {
			e.sep(i)
			s := &be.Servers[i]
			e.raw(`{"name":`)
			e.str(s.Name)
			e.raw(`,"address":`)
			e.str(s.Address)
			e.raw(`,"port":`)
			e.num(s.Port)
			e.raw(`,"weight":`)
			e.num(s.Weight)
			if s.Disabled {
				e.raw(`,"disabled":true`)
			}
			if s.Check {
				e.raw(`,"check":true`)
			}
			if len(s.Keywords) > 0 {
				e.raw(`,"keywords":`)
				e.strings(s.Keywords)
			}
			e.raw(`}`)
		}
		e.raw(`]`)
	}
	e.raw(`}`)
}

func (e *encoder) mapJSON(m *Map) {
	e.raw(`{"path":`)
	e.str(m.Path)
	if m.Ordered {
		e.raw(`,"ordered":true`)
	}
	if len(m.Entries) > 0 {
		e.raw(`,"entries":[`)
		for i := range m.Entries {
			e.sep(i)
			e.mapEntry(&m.Entries[i])
			e.item()
		}
		e.raw(`]`)
	}
	e.raw(`}`)
}

func (e *encoder) mapEntry(me *MapEntry) {
	e.raw(`{"key":`)
	e.str(me.Key)
	e.raw(`,"value":`)
	e.str(me.Value)
	e.raw(`}`)
}

func (e *encoder) strings(ss []string) {
	e.raw(`[`)
	for i, s := range ss {
		e.sep(i)
		e.str(s)
	}
	e.raw(`]`)
}

const hexDigits = "0123456789abcdef"

// jsonSafe[b] is true for the ASCII bytes encoding/json writes unescaped
// (with HTML escaping on, as json.Marshal does).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		switch b {
		case '"', '\\', '<', '>', '&':
		default:
			t[b] = true
		}
	}
	return t
}()

// appendString appends s as a JSON string exactly as encoding/json does:
// HTML-safe, invalid UTF-8 replaced by U+FFFD, U+2028/U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	i := safePrefix(s)
	dst = append(dst, '"')
	if i == len(s) {
		// The common case: names, digests, addresses.
		dst = append(dst, s...)
		return append(dst, '"')
	}
	start := 0
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// safePrefix returns the length of the longest prefix of s that
// encoding/json writes unescaped (jsonSafe ASCII bytes). Strings of at
// least 8 bytes are tested a word at a time, the last word overlapping
// the one before it, shorter ones through their byte classes; only if
// that finds an unsafe byte, byte by byte.
func safePrefix(s string) int {
	if n := len(s); n >= 8 {
		bad := unsafeBytes(load64(s[n-8:]))
		for i := 0; i+8 < n; i += 8 {
			bad |= unsafeBytes(load64(s[i:]))
		}
		if bad == 0 {
			return n
		}
	} else if allOf(s)&classJSONSafe != 0 {
		return n
	}
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf && jsonSafe[s[i]] {
		i++
	}
	return i
}

// Masks for unsafeBytes: every byte of the word set to the constant.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// load64 returns the first 8 bytes of s as a little-endian word.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// unsafeBytes is zero if the 8 bytes of w are all jsonSafe: each below
// 0x80, at least 0x20, and not one of " & < > \\. The zero-byte test
// z(x) = (x-lsb)&^x (masked with msb) never misses a zero byte, and its
// rare false positives only send the string to the byte loop, which
// decides exactly. z(w^'\\') finds backslashes, z((w|2)^'>') finds < and
// >, z((w|4)^'&') finds " and &; (w-0x20)&^w finds bytes below 0x20 once
// bytes of 0x80 and above (w itself) are ruled out.
func unsafeBytes(w uint64) uint64 {
	bs := w ^ ('\\' * lsb)
	gtlt := (w | 2*lsb) ^ ('>' * lsb)
	qamp := (w | 4*lsb) ^ ('&' * lsb)
	return (w | (w-0x20*lsb)&^w | (bs-lsb)&^bs | (gtlt-lsb)&^gtlt | (qamp-lsb)&^qamp) & msb
}
