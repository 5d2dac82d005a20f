package haproxycheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// DefaultTimeout bounds one haproxy -c run when Checker.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Checker runs haproxy -c on rendered trees.
type Checker struct {
	// Binary is the haproxy executable (a path, or a name looked up in
	// PATH). Empty means "haproxy".
	Binary string
	// Timeout bounds one run; zero means [DefaultTimeout].
	Timeout time.Duration
	// TempDir is where scratch directories are made; empty means
	// os.TempDir().
	TempDir string
}

var _ templating.Checker = (*Checker)(nil)

// CheckError is HAProxy's refusal of a tree, with its output verbatim.
type CheckError struct {
	// Output is what haproxy -c printed (stdout and stderr).
	Output string
	Err    error
}

func (e *CheckError) Error() string {
	return fmt.Sprintf("haproxy -c: %v: %s", e.Err, strings.TrimSpace(e.Output))
}

func (e *CheckError) Unwrap() error { return e.Err }

// Check writes out's files into a fresh directory and runs
// "<binary> -c -f haproxy.cfg" with that directory as working directory
// (so relative paths in the config resolve as they do for the agent) and
// an environment holding nothing but PATH. A refusal is a [*CheckError].
func (c *Checker) Check(ctx context.Context, out *renderplan.Output) error {
	dir, err := os.MkdirTemp(c.TempDir, "haptic-check-")
	if err != nil {
		return fmt.Errorf("haproxy check: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := WriteFiles(dir, out); err != nil {
		return fmt.Errorf("haproxy check: %w", err)
	}
	bin := c.Binary
	if bin == "" {
		bin = "haproxy"
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-c", "-f", renderplan.ConfigPath)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		return &CheckError{Output: buf.String(), Err: err}
	}
	return nil
}

// WriteFiles writes every file of out under dir (directories 0755, files
// 0644). Paths are checked again: one leaving dir is an error.
func WriteFiles(dir string, out *renderplan.Output) error {
	if out == nil {
		return errors.New("write files: nil output")
	}
	for _, f := range out.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(f.Path) {
			return fmt.Errorf("write files: path %q leaves the directory", f.Path)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write files: %w", err)
		}
		if err := os.WriteFile(p, f.Body, 0o644); err != nil {
			return fmt.Errorf("write files: %w", err)
		}
	}
	return nil
}
