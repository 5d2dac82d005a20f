package agentapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// MinTokenLen is the shortest bearer token [ReadTokenFile] accepts, in
// bytes.
const MinTokenLen = 16

// maxTokenFileBytes bounds what ReadTokenFile reads.
const maxTokenFileBytes = 4096

// Token is the bearer token the controller presents to the agent. It never
// prints itself: String, GoString, Format-through-%v and slog all show
// "[redacted]" (or "[none]" when empty), so a Token can sit in a Config
// that is logged. Pass it around by value.
type Token string

const redacted = "[redacted]"

// String returns "[redacted]", or "[none]" for the empty token.
func (t Token) String() string {
	if t == "" {
		return "[none]"
	}
	return redacted
}

// GoString redacts like String, for %#v.
func (t Token) GoString() string { return "agentapi.Token(" + t.String() + ")" }

// LogValue redacts the token in slog output.
func (t Token) LogValue() slog.Value { return slog.StringValue(t.String()) }

// MarshalText redacts the token, so that encoding a struct that holds one
// does not leak it.
func (t Token) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Equal reports whether t equals u in time independent of where they
// differ (and of their lengths). The empty token equals nothing.
func (t Token) Equal(u Token) bool {
	if t == "" || u == "" {
		return false
	}
	a := sha256.Sum256([]byte(t))
	b := sha256.Sum256([]byte(u))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// ReadTokenFile reads a bearer token from a file, such as a mounted
// Kubernetes Secret. Leading and trailing whitespace (the usual trailing
// newline) is dropped; the rest must be at least [MinTokenLen] bytes of
// printable ASCII without spaces.
func ReadTokenFile(path string) (Token, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("read token file %s: %w", path, err)
	}
	if len(b) > maxTokenFileBytes {
		return "", fmt.Errorf("read token file %s: longer than %d bytes", path, maxTokenFileBytes)
	}
	t, err := ParseToken(string(b))
	if err != nil {
		return "", fmt.Errorf("read token file %s: %w", path, err)
	}
	return t, nil
}

// ParseToken trims s and checks it the way [ReadTokenFile] does.
func ParseToken(s string) (Token, error) {
	s = strings.TrimSpace(s)
	if len(s) < MinTokenLen {
		return "", fmt.Errorf("token is shorter than %d bytes", MinTokenLen)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return "", fmt.Errorf("token has a byte that is not printable ASCII at offset %d", i)
		}
	}
	return Token(s), nil
}
