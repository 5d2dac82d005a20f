package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
)

// WriteBootstrap writes [BootstrapConfig] (statsSocket, binds) as
// dir/haproxy.cfg when dir holds no haproxy.cfg yet, and reports whether
// it wrote. A haproxy.cfg that exists, bootstrap or committed by an apply,
// is never touched: HAProxy re-executes on the same -f at every reload, so
// writing over a tree the agent committed would undo it. The file appears
// whole or not at all (a temp file linked into place), so two writers
// racing leave one complete file. dir is created when missing.
//
// statsSocket is written as the worker stats socket; a relative path is
// relative to HAProxy's working directory (written unix@<path>). It may
// hold only [A-Za-z0-9_./@:-], like the base library's extraContext
// statsSocket. A bind may carry bind options but no control characters.
func WriteBootstrap(dir, statsSocket string, binds []string) (written bool, err error) {
	if err := checkBootstrap(statsSocket, binds); err != nil {
		return false, fmt.Errorf("bootstrap config: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("bootstrap config: %w", err)
	}
	cfg := filepath.Join(dir, renderplan.ConfigPath)
	if _, err := os.Lstat(cfg); err == nil {
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("bootstrap config: %w", err)
	}
	f, err := os.CreateTemp(dir, ".haproxy.cfg.bootstrap-*")
	if err != nil {
		return false, fmt.Errorf("bootstrap config: %w", err)
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }()
	_, err = f.Write(BootstrapConfig(statsSocket, binds))
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("bootstrap config: write %s: %w", tmp, err)
	}
	// link fails when haproxy.cfg appeared meanwhile: never replace it.
	if err := os.Link(tmp, cfg); errors.Is(err, os.ErrExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("bootstrap config: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return true, nil
}

// socketPathChars are the bytes a stats socket path may hold.
const socketPathChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./@:-"

// checkBootstrap refuses values that could smuggle directives into the
// bootstrap config.
func checkBootstrap(statsSocket string, binds []string) error {
	if statsSocket == "" {
		return errors.New("stats socket is required")
	}
	if strings.TrimLeft(statsSocket, socketPathChars) != "" {
		return fmt.Errorf("stats socket %q: only [A-Za-z0-9_./@:-] allowed", statsSocket)
	}
	for _, b := range binds {
		if strings.TrimSpace(b) == "" {
			return errors.New("empty bind address")
		}
		for _, c := range b {
			if c < ' ' || c == 0x7f {
				return fmt.Errorf("bind %q: control character", b)
			}
		}
	}
	return nil
}
