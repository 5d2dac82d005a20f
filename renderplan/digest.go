package renderplan

import (
	"encoding/binary"
	"encoding/hex"

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

// DigestString returns the digest of s; it equals DigestOf([]byte(s))
// without copying s.
func DigestString(s string) Digest {
	return digestSum(xxhash.Sum64String(s))
}

func digestSum(sum uint64) Digest {
	var raw [8]byte
	var out [16]byte
	binary.BigEndian.PutUint64(raw[:], sum)
	hex.Encode(out[:], raw[:])
	return Digest(out[:])
}

// validDigest reports whether d has the form DigestOf produces.
func validDigest(d Digest) bool {
	if len(d) != 16 {
		return false
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
