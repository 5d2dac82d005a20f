package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Leader election defaults (client-go's usual ones).
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// LeaderConfig configures [RunLeader].
type LeaderConfig struct {
	// Client holds the Lease. Required.
	Client kubernetes.Interface
	// Namespace and Name name the Lease. Required.
	Namespace, Name string
	// Identity is this replica's name in the Lease (the pod name).
	// Required; two replicas must never share it.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's; zero
	// means the defaults above.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// OnLead is called when this replica starts leading, with its term:
	// the Lease's leaderTransitions + 1, which grows with every change of
	// holder and is the fencing token of its applies. ctx ends when the
	// term ends. Required.
	OnLead func(ctx context.Context, term uint64)
	// OnLose is called when a term ends (the lease lost or not renewed in
	// time). Required.
	OnLose func()
	// Owner, when set, returns the object the Lease belongs to: each
	// leader makes it the Lease's owner, so that the garbage collector
	// deletes the Lease with it (an uninstall leaves none behind). Its
	// errors are logged; the term goes on.
	Owner func(ctx context.Context) (metav1.OwnerReference, error)
	// Log; nil discards.
	Log *slog.Logger
}

// RunLeader campaigns for the Lease until ctx ends: a lost term is
// followed by a new campaign, so a replica that was deposed (paused, cut
// off) becomes a follower and may lead again later, with a higher term.
func RunLeader(ctx context.Context, cfg LeaderConfig) error {
	switch {
	case cfg.Client == nil, cfg.Namespace == "", cfg.Name == "", cfg.Identity == "", cfg.OnLead == nil, cfg.OnLose == nil:
		return errors.New("leader election: Client, Namespace, Name, Identity, OnLead and OnLose are required")
	}
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = DefaultLeaseDuration
	}
	if cfg.RenewDeadline == 0 {
		cfg.RenewDeadline = DefaultRenewDeadline
	}
	if cfg.RetryPeriod == 0 {
		cfg.RetryPeriod = DefaultRetryPeriod
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	lock := &resourcelock.LeaseLock{
		Client:     cfg.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
	}
	lock.LeaseMeta.Namespace, lock.LeaseMeta.Name = cfg.Namespace, cfg.Name
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   cfg.LeaseDuration,
			RenewDeadline:   cfg.RenewDeadline,
			RetryPeriod:     cfg.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            cfg.Name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					rec, _, err := lock.Get(ctx)
					if err != nil {
						cfg.Log.Error("leading, but the Lease cannot be read: stepping down", "error", err)
						return // Run renews until ctx ends; OnLose follows
					}
					term := uint64(rec.LeaderTransitions) + 1
					cfg.Log.Info("leading", "identity", cfg.Identity, "term", term)
					if cfg.Owner != nil {
						if err := ownLease(ctx, cfg); err != nil {
							cfg.Log.Warn("set the Lease's owner", "error", err)
						}
					}
					cfg.OnLead(ctx, term)
				},
				OnStoppedLeading: func() {
					cfg.Log.Info("not leading", "identity", cfg.Identity)
					cfg.OnLose()
				},
				OnNewLeader: func(id string) {
					if id != cfg.Identity {
						cfg.Log.Info("following", "leader", id)
					}
				},
			},
		})
		if err != nil {
			return fmt.Errorf("leader election: %w", err)
		}
		le.Run(ctx)
	}
	return ctx.Err()
}

// ownLease adds cfg.Owner's reference to the Lease unless it is there.
// The elector's next renewal then meets a newer resourceVersion once and
// retries at once with the Lease read anew, owner included.
func ownLease(ctx context.Context, cfg LeaderConfig) error {
	owner, err := cfg.Owner(ctx)
	if err != nil {
		return err
	}
	leases := cfg.Client.CoordinationV1().Leases(cfg.Namespace)
	l, err := leases.Get(ctx, cfg.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get Lease: %w", err)
	}
	for _, o := range l.OwnerReferences {
		if o.UID == owner.UID {
			return nil
		}
	}
	l.OwnerReferences = append(l.OwnerReferences, owner)
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("update Lease: %w", err)
	}
	return nil
}
