package propagation

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"
)

// child is a helper process of the benchmark (the probe client, the echo
// servers), driven through its stdin and the lines of its stdout; its
// stderr is this process's. It ends when its stdin ends.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser

	lines   chan []byte // closed at the end of the child's stdout
	readErr error       // set before lines is closed
	quit    chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// startChild starts argv; ctx's end kills it. name is for errors.
func startChild(ctx context.Context, name string, argv []string) (*child, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("%s: empty command", name)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 2 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s %s: %w", name, argv[0], err)
	}
	c := &child{name: name, cmd: cmd, stdin: stdin, lines: make(chan []byte), quit: make(chan struct{})}
	go c.read(stdout)
	return c, nil
}

func (c *child) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		select {
		case c.lines <- slices.Clone(sc.Bytes()):
		case <-c.quit:
			return
		}
	}
	c.readErr = sc.Err()
	close(c.lines)
}

// send writes line and a newline to the child's stdin.
func (c *child) send(line string) error {
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		return fmt.Errorf("%s: send %q: %w", c.name, line, err)
	}
	return nil
}

// next returns the child's next line of output.
func (c *child) next(ctx context.Context) ([]byte, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case line, ok := <-c.lines:
		if !ok {
			err := c.readErr
			if err == nil {
				err = c.close() // the child ended its output: why?
			}
			return nil, fmt.Errorf("%s stopped answering: %w", c.name, errors.Join(err, io.ErrUnexpectedEOF))
		}
		return line, nil
	}
}

// close ends the child's stdin, which ends it, and waits for it; it kills
// a child that has not exited within 5 s. It returns the child's exit
// error, if any.
func (c *child) close() error {
	c.closeOnce.Do(func() {
		close(c.quit)
		_ = c.stdin.Close()
		exited := make(chan error, 1)
		go func() { exited <- c.cmd.Wait() }()
		select {
		case c.closeErr = <-exited:
		case <-time.After(5 * time.Second):
			_ = c.cmd.Process.Kill()
			c.closeErr = <-exited
		}
		if c.closeErr != nil {
			c.closeErr = fmt.Errorf("%s: %w", c.name, c.closeErr)
		}
	})
	return c.closeErr
}
