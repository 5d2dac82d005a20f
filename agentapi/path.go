package agentapi

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/haptic-io/haptic/renderplan"
)

// ErrInvalidPath is wrapped by every [ValidatePath] failure.
var ErrInvalidPath = errors.New("agentapi: invalid path")

// ErrMisplacedFile is wrapped by every [ValidatePlace] failure.
var ErrMisplacedFile = errors.New("agentapi: file kind does not match its place in the tree")

// kindDirs is where each kind of file but the config lives in the tree.
var kindDirs = map[renderplan.FileKind]string{
	renderplan.FileMap:     "maps/",
	renderplan.FileCert:    "certs/",
	renderplan.FileCrtList: "certs/",
	renderplan.FileGeneral: "general/",
}

// ValidatePlace checks that a file of kind k sits where its kind lives in
// the HAProxy base directory: the config at haproxy.cfg and nothing else
// there, maps under maps/, certificates and crt-lists under certs/,
// general files under general/. The place is not a name only: the agent
// writes what lies under certs/ (private keys) readable by HAProxy's user
// alone, and a map listed at haproxy.cfg would replace the configuration.
// A kind this side does not know is not its to judge (see
// [DecodeManifest]). The error wraps [ErrMisplacedFile].
func ValidatePlace(p string, k renderplan.FileKind) error {
	switch dir, known := kindDirs[k]; {
	case k == renderplan.FileConfig && p != renderplan.ConfigPath:
		return fmt.Errorf("%w: %q has kind %s, which only %s has", ErrMisplacedFile, p, k, renderplan.ConfigPath)
	case k != renderplan.FileConfig && p == renderplan.ConfigPath:
		return fmt.Errorf("%w: %s has kind %s, want %s", ErrMisplacedFile, p, k, renderplan.FileConfig)
	case known && !strings.HasPrefix(p, dir):
		return fmt.Errorf("%w: %q has kind %s, which lives under %s", ErrMisplacedFile, p, k, dir)
	}
	return nil
}

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
