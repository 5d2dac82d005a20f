package agentapi

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// ErrInvalidPath is wrapped by every [ValidatePath] failure.
var ErrInvalidPath = errors.New("agentapi: invalid path")

// ValidatePath checks a file path of a manifest: relative to the HAProxy
// base directory, clean (path.Clean(p) == p), with no ".." element, no
// backslash, no NUL or other control character, valid UTF-8 and at most
// [MaxPathLen] bytes. The handler checks every path with it and the agent
// calls it again before writing; following symbolic links out of the base
// directory is the agent's to refuse at write time. The error wraps
// [ErrInvalidPath].
func ValidatePath(p string) error {
	if problem := pathIssue(p); problem != "" {
		return fmt.Errorf("%w: %q %s", ErrInvalidPath, p, problem)
	}
	return nil
}

// pathIssue is not renderplan's path rule (renderplan.CheckPath), though
// it agrees with it on emptiness, absolute paths, UTF-8, control
// characters, ".." elements, "." and cleanliness: it accepts a space,
// which renderplan refuses, because it guards what the agent may write
// under its base directory rather than what a plan may name, and it adds
// the [MaxPathLen] cap and the backslash refusal. Basing it on
// renderplan.CheckPath would make it refuse paths it accepts today.
func pathIssue(p string) string {
	switch {
	case p == "":
		return "is empty"
	case len(p) > MaxPathLen:
		return fmt.Sprintf("is longer than %d bytes", MaxPathLen)
	case !utf8.ValidString(p):
		return "is not valid UTF-8"
	case strings.HasPrefix(p, "/"):
		return "is absolute"
	case strings.ContainsRune(p, '\\'):
		return "contains a backslash"
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f {
			return "contains a control character"
		}
	}
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasSuffix(p, "/..") || strings.Contains(p, "/../") {
		return `has a ".." element`
	}
	if path.Clean(p) != p {
		return "is not clean"
	}
	return ""
}
