package renderplan

import (
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Digest is the hex form of a 64-bit xxHash of some bytes. It identifies
// content; it is not a security boundary.
type Digest string

// DigestOf returns the digest of b: 16 lower-case hex digits of its
// xxHash64 (seed 0), big-endian.
func DigestOf(b []byte) Digest {
	return digestSum(xxhash.Sum64(b))
}

// DigestOfParts returns the digest of the concatenation of parts, without
// concatenating them.
func DigestOfParts(parts ...[]byte) Digest {
	h := xxhash.New()
	for _, p := range parts {
		_, _ = h.Write(p)
	}
	return digestSum(h.Sum64())
}

// DigestString returns the digest of s; it equals DigestOf([]byte(s))
// without copying s.
func DigestString(s string) Digest {
	return digestSum(xxhash.Sum64String(s))
}

func digestSum(sum uint64) Digest {
	var out [16]byte
	return Digest(appendDigest(out[:0], sum))
}

// appendDigest appends the digest of a sum (16 hex digits) to dst.
func appendDigest(dst []byte, sum uint64) []byte {
	var out [16]byte
	for i := 14; i >= 0; i -= 2 {
		b := sum & 0xff
		out[i], out[i+1] = hexDigits[b>>4], hexDigits[b&0xf]
		sum >>= 8
	}
	return append(dst, out[:]...)
}

// isDigestOf reports whether d is DigestOf(b), without allocating.
func isDigestOf(d Digest, b []byte) bool {
	var out [16]byte
	return string(appendDigest(out[:0], xxhash.Sum64(b))) == string(d)
}

// digestsOf returns the digests of the sums, in order, as substrings of
// one string: one allocation for all of them instead of one each.
func digestsOf(sums []uint64) []Digest {
	var b strings.Builder
	b.Grow(16 * len(sums))
	for _, sum := range sums {
		var out [16]byte
		b.Write(appendDigest(out[:0], sum))
	}
	all := b.String()
	out := make([]Digest, len(sums))
	for i := range out {
		out[i] = Digest(all[16*i : 16*i+16])
	}
	return out
}

// validDigest reports whether d has the form DigestOf produces.
func validDigest(d Digest) bool {
	return len(d) == 16 && allOf(string(d))&classHexDigit != 0
}
