package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Defaults and ceilings of [Config] fields.
const (
	// DefaultMinReloadInterval is the reload pacing window.
	DefaultMinReloadInterval = 2 * time.Second
	// MaxMinReloadInterval is the largest pacing window New accepts.
	MaxMinReloadInterval = 60 * time.Second
	// DefaultReloadTimeout bounds one reload and its verification; it is
	// also the ceiling.
	DefaultReloadTimeout = 60 * time.Second
	// DefaultDriftInterval is how often the tree is re-hashed.
	DefaultDriftInterval = 60 * time.Second
	// DefaultSocketTimeout bounds each read and write on a socket.
	DefaultSocketTimeout = 10 * time.Second
	// DefaultMaxPendingDeletes bounds the deferred delete queue.
	DefaultMaxPendingDeletes = 4096
	// DefaultDeleteRetry is the pause between two attempts of a deferred
	// delete that is not removable yet.
	DefaultDeleteRetry = 2 * time.Second
	// stateDirName is the default StateDir under BaseDir.
	stateDirName = ".haptic"
	// txnDirName holds staged and backed-up files, always inside BaseDir
	// so that renames never cross a filesystem.
	txnDirName = ".haptic-txn"
)

// Config configures an [Agent]. Zero fields take the documented defaults.
type Config struct {
	// BaseDir is the HAProxy base directory (HAProxy's cwd): haproxy.cfg,
	// maps/, certs/ and general/ live here. Required; made absolute.
	BaseDir string
	// MasterSocket is the master CLI socket (haproxy -W -S). Required.
	MasterSocket string
	// StatsSocket is the worker stats socket (level admin). Required.
	StatsSocket string
	// StateDir holds the journal, the durable state and the
	// last-known-good set. Empty means BaseDir/.haptic. It must be on the
	// same filesystem as BaseDir.
	StateDir string

	// MinReloadInterval is the least time between two reloads; a reload
	// asked for inside the window is scheduled for when it opens. Zero
	// means [DefaultMinReloadInterval]; negative means no pacing; more
	// than [MaxMinReloadInterval] is refused.
	MinReloadInterval time.Duration
	// ReloadTimeout bounds a reload with its verification. Zero means
	// [DefaultReloadTimeout], which is also the ceiling.
	ReloadTimeout time.Duration
	// DriftInterval is how often the tree is re-hashed and compared with
	// the applied manifest. Zero means [DefaultDriftInterval]; negative
	// turns the check off.
	DriftInterval time.Duration
	// SocketTimeout bounds each socket read and write. Zero means
	// [DefaultSocketTimeout].
	SocketTimeout time.Duration
	// BufSize is HAProxy's tune.bufsize in bytes; zero means 16384.
	BufSize int
	// RemovableWait bounds each "wait srv-removable" / "wait be-removable"
	// of a deferred delete. Zero means [DefaultRemovableWait].
	RemovableWait time.Duration
	// DeleteRetry is the pause between attempts of a deferred delete.
	// Zero means [DefaultDeleteRetry].
	DeleteRetry time.Duration
	// MaxPendingDeletes bounds the deferred delete queue; an apply whose
	// deletes do not fit is refused at the fence. Zero means
	// [DefaultMaxPendingDeletes].
	MaxPendingDeletes int

	// ReadyAfterPlan makes [Agent.Ready] wait for a plan: until one is
	// applied (or recovered from the tree at start), HAProxy serves the
	// bootstrap config's 503, and a pod that is Ready then would take
	// traffic from its Service it can only refuse. The controller deploys
	// to pods whether they are Ready or not.
	ReadyAfterPlan bool
	// Version is the agent's version reported in the state.
	Version string
	// Log receives the agent's logs; nil discards them.
	Log *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Registerer receives the agent's metrics; nil means a private
	// registry (see [Agent.Gatherer]).
	Registerer prometheus.Registerer

	// crashPoint, when set (tests only, see export_test.go), is called at
	// each step of an apply with the step's name.
	crashPoint func(step string)
}

// withDefaults checks c and fills its defaults, naming the field in each
// error.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.BaseDir == "" {
		errs = append(errs, errors.New("BaseDir is required"))
	} else {
		abs, err := filepath.Abs(c.BaseDir)
		if err != nil {
			errs = append(errs, fmt.Errorf("BaseDir: %w", err))
		}
		c.BaseDir = abs
	}
	if c.MasterSocket == "" {
		errs = append(errs, errors.New("MasterSocket is required"))
	}
	if c.StatsSocket == "" {
		errs = append(errs, errors.New("StatsSocket is required"))
	}
	if c.StateDir == "" {
		c.StateDir = filepath.Join(c.BaseDir, stateDirName)
	} else if abs, err := filepath.Abs(c.StateDir); err != nil {
		errs = append(errs, fmt.Errorf("StateDir: %w", err))
	} else {
		c.StateDir = abs
	}
	switch {
	case c.MinReloadInterval == 0:
		c.MinReloadInterval = DefaultMinReloadInterval
	case c.MinReloadInterval < 0:
		c.MinReloadInterval = 0
	case c.MinReloadInterval > MaxMinReloadInterval:
		errs = append(errs, fmt.Errorf("MinReloadInterval %v is above the ceiling %v", c.MinReloadInterval, MaxMinReloadInterval))
	}
	switch {
	case c.ReloadTimeout == 0:
		c.ReloadTimeout = DefaultReloadTimeout
	case c.ReloadTimeout < 0 || c.ReloadTimeout > DefaultReloadTimeout:
		errs = append(errs, fmt.Errorf("ReloadTimeout %v is outside (0, %v]", c.ReloadTimeout, DefaultReloadTimeout))
	}
	if c.DriftInterval == 0 {
		c.DriftInterval = DefaultDriftInterval
	}
	if c.SocketTimeout <= 0 {
		c.SocketTimeout = DefaultSocketTimeout
	}
	if c.RemovableWait <= 0 {
		c.RemovableWait = DefaultRemovableWait
	}
	if c.DeleteRetry <= 0 {
		c.DeleteRetry = DefaultDeleteRetry
	}
	if c.MaxPendingDeletes <= 0 {
		c.MaxPendingDeletes = DefaultMaxPendingDeletes
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("agent config: %w", err)
	}
	return c, nil
}
