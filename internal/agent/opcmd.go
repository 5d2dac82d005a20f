package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/renderplan"
)

// CommandEnv gives [Commands] what ops name but do not carry.
type CommandEnv struct {
	// ReadFile returns the body of a file of the apply being run, by its
	// path relative to the HAProxy base directory. Needed by
	// [agentapi.OpSetCert] only; nil makes that op an error.
	ReadFile func(path string) ([]byte, error)
	// RemovableWait bounds "wait srv-removable" and "wait be-removable".
	// Zero means [DefaultRemovableWait].
	RemovableWait time.Duration
	// Deletes says which commands server and backend deletes become. Zero
	// means [DeleteWhenRemovable].
	Deletes DeleteMode
}

// DeleteMode says which commands [Commands] returns for
// [agentapi.OpDelServer] and [agentapi.OpDelBackend].
type DeleteMode int

const (
	// DeleteWhenRemovable waits until the object is removable ("wait …
	// srv-removable" or "wait … be-removable", bounded by
	// [CommandEnv.RemovableWait]) before the delete. The background
	// delete loop uses it; a failed wait leaves the delete to be retried.
	DeleteWhenRemovable DeleteMode = iota
	// DeleteAtOnce leaves the wait out, because HAProxy answers a wait
	// that is not satisfied at once only after about 100 ms (measured on
	// 3.4), whatever its delay. A delete run inside an apply uses it; one
	// refused because the object is busy is deferred to the background
	// loop, which uses [DeleteWhenRemovable].
	DeleteAtOnce
)

// DefaultRemovableWait is how long a server or backend delete waits for
// the object's last connection before the delete is attempted. It is
// short because a deferred attempt holds reloads back while it waits;
// an object still busy is simply tried again later.
const DefaultRemovableWait = 500 * time.Millisecond

// ErrDigestMismatch means the file an [agentapi.OpSetCert] names does not
// have the digest the op expects: the apply's files and ops disagree.
var ErrDigestMismatch = errors.New("agent: certificate file digest mismatch")

// Commands returns the runtime commands of one op, in order. It is the one
// place where an op becomes command lines; the haproxysock builders escape
// every argument. The op is validated first.
//
//   - [agentapi.OpAddServer] with weight 0 adds the server and sets weight
//     0 (the builder omits a zero weight, which would mean 1).
//   - [agentapi.OpDelServer] is "set server … state maint", "wait …
//     srv-removable" and "del server"; [agentapi.OpDelBackend] is "wait …
//     be-removable" and "del backend". [CommandEnv.Deletes] leaves the
//     wait out ([DeleteAtOnce]).
//   - [agentapi.OpReplaceMap] returns only "prepare map": the rest needs
//     the version HAProxy answers; see [MapReplaceCommands] and [RunOp].
func Commands(op agentapi.Op, env CommandEnv) ([]haproxysock.Command, error) {
	if err := op.Validate(); err != nil {
		return nil, err
	}
	wait := env.RemovableWait
	if wait <= 0 {
		wait = DefaultRemovableWait
	}
	var cmds []haproxysock.Command
	add := func(c haproxysock.Command, err error) error {
		if err != nil {
			return err
		}
		cmds = append(cmds, c)
		return nil
	}
	var err error
	switch op.Kind {
	case agentapi.OpAddBackend:
		err = add(haproxysock.AddBackend(op.Backend, op.Profile, haproxysock.BackendOptions{Mode: op.Mode, GUID: op.GUID}))
	case agentapi.OpAddServer:
		err = add(haproxysock.AddServer(op.Backend, op.Server, op.Address, op.Port,
			haproxysock.ServerOptions{Weight: op.Weight, Check: op.Check, GUID: op.GUID, Extra: op.Keywords}))
		if err == nil && op.Weight == 0 {
			err = add(haproxysock.SetServerWeight(op.Backend, op.Server, 0))
		}
	case agentapi.OpSetServerState:
		err = add(haproxysock.SetServerState(op.Backend, op.Server, haproxysock.ServerState(op.State)))
	case agentapi.OpSetServerAddr:
		err = add(haproxysock.SetServerAddr(op.Backend, op.Server, op.Address, op.Port))
	case agentapi.OpSetServerWeight:
		err = add(haproxysock.SetServerWeight(op.Backend, op.Server, op.Weight))
	case agentapi.OpEnableHealth:
		err = add(haproxysock.EnableHealth(op.Backend, op.Server))
	case agentapi.OpPublishBackend:
		err = add(haproxysock.PublishBackend(op.Backend))
	case agentapi.OpAddMapEntry:
		err = add(haproxysock.AddMap(op.Map, op.Key, op.Value))
	case agentapi.OpSetMapEntry:
		err = add(haproxysock.SetMap(op.Map, op.Key, op.Value))
	case agentapi.OpReplaceMap:
		err = add(haproxysock.PrepareMap(op.Map))
	case agentapi.OpNewCert:
		err = add(haproxysock.NewSSLCert(op.Cert))
	case agentapi.OpSetCert:
		var pem []byte
		if pem, err = certBody(op, env); err == nil {
			err = add(haproxysock.SetSSLCert(op.Cert, pem))
		}
	case agentapi.OpCommitCert:
		err = add(haproxysock.CommitSSLCert(op.Cert))
	case agentapi.OpAddCrtListEntry:
		if len(op.SSLOptions) == 0 && len(op.SNIFilters) == 0 {
			err = add(haproxysock.AddSSLCrtList(op.CrtList, op.Cert))
		} else {
			err = add(haproxysock.AddSSLCrtListEntries(op.CrtList, []haproxysock.CrtListEntry{{Cert: op.Cert, Options: op.SSLOptions, SNI: op.SNIFilters}}))
		}
	case agentapi.OpDelCrtListEntry:
		err = add(haproxysock.DelSSLCrtList(op.CrtList, op.Cert))
	case agentapi.OpDelMapEntry:
		err = add(haproxysock.DelMap(op.Map, op.Key))
	case agentapi.OpUnpublishBackend:
		err = add(haproxysock.UnpublishBackend(op.Backend))
	case agentapi.OpDelServer:
		err = add(haproxysock.SetServerState(op.Backend, op.Server, haproxysock.StateMaint))
		if err == nil && env.Deletes == DeleteWhenRemovable {
			err = add(haproxysock.WaitServerRemovable(wait, op.Backend, op.Server))
		}
		if err == nil {
			err = add(haproxysock.DelServer(op.Backend, op.Server))
		}
	case agentapi.OpDelBackend:
		if env.Deletes == DeleteWhenRemovable {
			err = add(haproxysock.WaitBackendRemovable(wait, op.Backend))
		}
		if err == nil {
			err = add(haproxysock.DelBackend(op.Backend))
		}
	default:
		err = fmt.Errorf("%w: %v", agentapi.ErrUnknownOpKind, op.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("op %v: %w", op, err)
	}
	return cmds, nil
}

func certBody(op agentapi.Op, env CommandEnv) ([]byte, error) {
	if env.ReadFile == nil {
		return nil, errors.New("no file source for the certificate")
	}
	pem, err := env.ReadFile(op.Cert)
	if err != nil {
		return nil, fmt.Errorf("read certificate: %w", err)
	}
	if got := renderplan.DigestOf(pem); string(got) != op.Digest {
		return nil, fmt.Errorf("%w: %s has digest %s, the op expects %s", ErrDigestMismatch, op.Cert, got, op.Digest)
	}
	return pem, nil
}

// MapReplaceCommands returns the commands that finish an
// [agentapi.OpReplaceMap] once "prepare map" answered version: the
// entries into that version (as payload, split by the client to fit
// tune.bufsize) and the atomic commit.
func MapReplaceCommands(op agentapi.Op, version int) ([]haproxysock.Command, error) {
	if op.Kind != agentapi.OpReplaceMap {
		return nil, fmt.Errorf("op %v: not a map replace", op)
	}
	if err := op.Validate(); err != nil {
		return nil, err
	}
	var cmds []haproxysock.Command
	if len(op.Entries) > 0 {
		entries := make([]haproxysock.MapEntry, len(op.Entries))
		for i, e := range op.Entries {
			entries[i] = haproxysock.MapEntry{Key: e.Key, Value: e.Value}
		}
		c, err := haproxysock.AddMapVersionPayload(version, op.Map, entries)
		if err != nil {
			return nil, fmt.Errorf("op %v: %w", op, err)
		}
		cmds = append(cmds, c)
	}
	c, err := haproxysock.CommitMap(version, op.Map)
	if err != nil {
		return nil, fmt.Errorf("op %v: %w", op, err)
	}
	return append(cmds, c), nil
}

// Runner runs one batch of runtime commands as [haproxysock.Client.Run]
// does: every command is sent, one [haproxysock.Result] each. Both
// *haproxysock.Client (a connection per batch) and *haproxysock.Session
// (one connection for a series of batches) are Runners.
type Runner interface {
	Run(ctx context.Context, cmds ...haproxysock.Command) ([]haproxysock.Result, error)
}

// RunOp runs the commands of one op on r, in one batch (two for a map
// replace), and returns their results. As with [haproxysock.Client.Run],
// every command of the batch is sent; the error is the first refused
// command's [*haproxysock.CommandError] or a transport error. A map
// replace whose "prepare map" fails sends nothing more.
func RunOp(ctx context.Context, r Runner, op agentapi.Op, env CommandEnv) ([]haproxysock.Result, error) {
	cmds, err := Commands(op, env)
	if err != nil {
		return nil, err
	}
	results, err := r.Run(ctx, cmds...)
	if err != nil || op.Kind != agentapi.OpReplaceMap {
		return results, err
	}
	version, err := haproxysock.ParsePrepareMap(results[0].Reply)
	if err != nil {
		return results, fmt.Errorf("op %v: %w", op, err)
	}
	rest, err := MapReplaceCommands(op, version)
	if err != nil {
		return results, err
	}
	more, err := r.Run(ctx, rest...)
	return append(results, more...), err
}
