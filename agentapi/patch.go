package agentapi

import (
	"bytes"
	"fmt"

	"github.com/haptic-io/haptic/renderplan"
)

// Patch is the body of a changed file sent as its difference from the
// file the agent has: the first Prefix bytes of that file, then Literal,
// then its last Suffix bytes. A route add on a large tree changes a few
// hundred bytes of haproxy.cfg and of two maps; a patch sends those
// instead of the whole files. A Patch is a plain value.
type Patch struct {
	// Base is the digest of the file the patch applies to: the agent
	// refuses the patch when the file it has at the path differs.
	Base renderplan.Digest
	// Prefix and Suffix are how many bytes of the base start and end
	// the new body.
	Prefix, Suffix int
	// Literal is what lies between them.
	Literal []byte
}

// MinPatchSize is the smallest new body [MakePatch] makes a patch for:
// below it a body costs about what a patch costs.
const MinPatchSize = 4 << 10

// MakePatch returns the patch that turns base (whose digest is baseDigest)
// into body, and false when a patch would not pay: body is smaller than
// [MinPatchSize] or the patch would carry more than half of it. It is
// pure.
func MakePatch(baseDigest renderplan.Digest, base, body []byte) (Patch, bool) {
	if len(body) < MinPatchSize {
		return Patch{}, false
	}
	n := min(len(base), len(body))
	prefix := commonPrefix(base[:n], body[:n])
	suffix := commonSuffix(base[prefix:], body[prefix:])
	literal := body[prefix : len(body)-suffix]
	if len(literal) > len(body)/2 {
		return Patch{}, false
	}
	return Patch{Base: baseDigest, Prefix: prefix, Suffix: suffix, Literal: literal}, true
}

// Size is the length of the body p makes.
func (p Patch) Size() int { return p.Prefix + len(p.Literal) + p.Suffix }

// Apply returns the body p makes of base, in a new buffer. It checks that
// base is long enough, not its digest: the caller compares base with
// p.Base and the result with the manifest.
func (p Patch) Apply(base []byte) ([]byte, error) {
	if err := p.fits(base); err != nil {
		return nil, err
	}
	out := make([]byte, 0, p.Size())
	out = append(out, base[:p.Prefix]...)
	out = append(out, p.Literal...)
	return append(out, base[len(base)-p.Suffix:]...), nil
}

// Digest returns the digest of the body p makes of base, without making
// it: an agent checks a patch before it needs the body. It checks what
// Apply checks.
func (p Patch) Digest(base []byte) (renderplan.Digest, error) {
	if err := p.fits(base); err != nil {
		return "", err
	}
	return renderplan.DigestOfParts(base[:p.Prefix], p.Literal, base[len(base)-p.Suffix:]), nil
}

// fits checks that base is long enough for p.
func (p Patch) fits(base []byte) error {
	if p.Prefix < 0 || p.Suffix < 0 || p.Prefix+p.Suffix > len(base) {
		return fmt.Errorf("patch keeps %d and %d bytes of a base of %d", p.Prefix, p.Suffix, len(base))
	}
	return nil
}

// checkPatch checks a patch against its manifest entry: a well-formed
// base digest and the entry's size.
func checkPatch(f renderplan.File, p Patch) *NackError {
	if !validDigest(p.Base) {
		return decodeNack(-1, "patch for %q: base digest %q is not 16 lower-case hex digits", f.Path, p.Base)
	}
	if p.Prefix < 0 || p.Suffix < 0 || p.Size() != f.Size {
		return decodeNack(-1, "patch for %q makes %d bytes, the manifest says %d", f.Path, p.Size(), f.Size)
	}
	return nil
}

// commonPrefix returns how many leading bytes a and b (of equal length)
// share, comparing blocks before bytes.
func commonPrefix(a, b []byte) int {
	const block = 256
	i := 0
	for i+block <= len(a) && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for i < len(a) && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix returns how many trailing bytes a and b share, at most
// the length of the shorter.
func commonSuffix(a, b []byte) int {
	const block = 256
	n := 0
	m := min(len(a), len(b))
	for n+block <= m && bytes.Equal(a[len(a)-n-block:len(a)-n], b[len(b)-n-block:len(b)-n]) {
		n += block
	}
	for n < m && a[len(a)-n-1] == b[len(b)-n-1] {
		n++
	}
	return n
}
