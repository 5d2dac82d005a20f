package rendergate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/haptic-io/haptic/renderplan"
)

// The check service: a [CheckServer] runs [HAProxyChecker] checks for a
// [RemoteChecker] in another process, over HTTP on a Unix socket. It lets
// `haproxy -c` of user templates run in a container that holds none of the
// controller's credentials (no service-account token, no agent token),
// which is what a hostile template would otherwise read and quote in a
// refusal (ingress-nginx's CVE-2025-1974 class): the controller container
// and the checker container share only the directory of the socket.
//
// Checks go through lanes, named by the client (the controller's gate is
// "gate", its admission webhook "webhook"): each lane has a checker of its
// own, so that a Pause of the gate's lane never holds a webhook review.
const (
	// DefaultMaxRequest bounds the body of one check request.
	DefaultMaxRequest = 256 << 20
	// DefaultMaxHold bounds how long a lane stays held by a Pause without
	// its Resume: a client that dies while holding must not stop checks
	// for good.
	DefaultMaxHold = 10 * time.Second
	maxLanes       = 8
	laneHeader     = "Haptic-Lane"
)

// LaneWebhook is the lane of admission reviews, whose checks are
// interactive ([Config.Interactive]): an apiserver request waits on each.
const LaneWebhook = "webhook"

var laneName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// checkRequest is the body of POST /v1/check.
type checkRequest struct {
	PlanID string                   `json:"planID"`
	Files  []renderplan.FileContent `json:"files"`
}

// checkResponse is the answer to a check: Refusal set for a refusal,
// Error for a check that could not run, neither for a pass.
type checkResponse struct {
	Refusal *CheckError `json:"refusal,omitempty"`
	Error   string      `json:"error,omitempty"`
}

// holdRequest is the body of POST /v1/hold.
type holdRequest struct {
	Held bool `json:"held"`
}

// CheckServer serves checks over HTTP: POST /v1/check with a JSON
// {planID, files} body answers {} for a pass, {"refusal": CheckError} or
// {"error": "..."}; POST /v1/hold with {"held": true|false} pauses or
// resumes the lane's checker. The lane is the Haptic-Lane header ("gate"
// when absent). Make one with [NewCheckServer].
type CheckServer struct {
	cfg     Config
	maxHold time.Duration
	log     *slog.Logger

	mu    sync.Mutex
	lanes map[string]*lane // guarded by mu
}

type lane struct {
	checker *HAProxyChecker

	mu      sync.Mutex
	held    bool        // guarded by mu
	release *time.Timer // guarded by mu; ends a hold after maxHold
}

// NewCheckServer makes the server of cfg's checks; it makes one checker
// at once, so that a wrong cfg fails here and not at the first check.
func NewCheckServer(cfg Config) (*CheckServer, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &CheckServer{cfg: cfg, maxHold: DefaultMaxHold, log: cfg.Log, lanes: map[string]*lane{}}
	if _, err := s.lane("gate"); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *CheckServer) lane(name string) (*lane, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.lanes[name]; ok {
		return l, nil
	}
	if len(s.lanes) >= maxLanes {
		return nil, fmt.Errorf("rendergate: more than %d lanes", maxLanes)
	}
	cfg := s.cfg
	cfg.Log = s.log.With("lane", name)
	cfg.Interactive = cfg.Interactive || name == LaneWebhook
	c, err := NewHAProxyChecker(cfg)
	if err != nil {
		return nil, err
	}
	l := &lane{checker: c}
	s.lanes[name] = l
	return l, nil
}

// Checker is the checker of the "gate" lane, for its version and
// isolation.
func (s *CheckServer) Checker() *HAProxyChecker {
	l, _ := s.lane("gate")
	return l.checker
}

// ServeHTTP implements http.Handler.
func (s *CheckServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.Header.Get(laneHeader)
	if name == "" {
		name = "gate"
	}
	if r.Method != http.MethodPost || (r.URL.Path != "/v1/check" && r.URL.Path != "/v1/hold") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if !laneName.MatchString(name) {
		http.Error(w, "bad lane name", http.StatusBadRequest)
		return
	}
	l, err := s.lane(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	body := http.MaxBytesReader(w, r.Body, DefaultMaxRequest)
	if r.URL.Path == "/v1/hold" {
		var req holdRequest
		if err := json.NewDecoder(body).Decode(&req); err != nil {
			http.Error(w, "bad hold request: "+err.Error(), http.StatusBadRequest)
			return
		}
		l.hold(req.Held, s.maxHold)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var req checkRequest
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		http.Error(w, "bad check request: "+err.Error(), http.StatusBadRequest)
		return
	}
	// The tree is what counts; the plan is the client's, which keeps its ID.
	out := &renderplan.Output{Files: req.Files, Plan: &renderplan.Plan{}}
	start := time.Now()
	err = l.checker.Check(r.Context(), out)
	s.log.Debug("rendergate: remote check", "lane", name, "plan_id", req.PlanID, "duration", time.Since(start), "error", errString(err))
	var resp checkResponse
	var ce *CheckError
	switch {
	case errors.As(err, &ce):
		refusal := *ce
		refusal.PlanID = req.PlanID
		resp.Refusal = &refusal
	case err != nil:
		resp.Error = err.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// hold pauses or resumes the lane's checker; a hold ends by itself after
// maxHold.
func (l *lane) hold(held bool, maxHold time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if held == l.held {
		if held {
			l.release.Reset(maxHold)
		}
		return
	}
	l.held = held
	if held {
		l.checker.Pause()
		l.release = time.AfterFunc(maxHold, func() { l.hold(false, maxHold) })
		return
	}
	l.release.Stop()
	l.checker.Resume()
}

// ListenUnix listens on the Unix socket path, mode 0660 (the controller
// and the checker containers share a group), replacing a stale socket a
// previous run left.
func ListenUnix(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().Type() == fs.ModeSocket {
		_ = os.Remove(path)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("rendergate: %w", err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("rendergate: %w", err)
	}
	return l, nil
}

// Serve serves s on l until ctx ends.
func (s *CheckServer) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(l)
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// RemoteChecker is the [renderplan.Checker] (and [Pauser]) that sends
// each check to a [CheckServer] on a Unix socket. A refusal is the
// server's [*CheckError] with the plan's ID; a server that cannot be
// reached, or a check that could not run there, is an error that is not a
// refusal ([VerdictUnknown]). It is safe for concurrent use.
type RemoteChecker struct {
	lane   string
	client *http.Client

	mu       sync.Mutex
	depth    int  // guarded by mu; Pause nesting
	sent     bool // guarded by mu; the held state last sent
	sendLock sync.Mutex
}

var (
	_ renderplan.Checker = (*RemoteChecker)(nil)
	_ Pauser             = (*RemoteChecker)(nil)
)

// NewRemoteChecker returns the checker of the server on the Unix socket
// path, on lane (empty: "gate").
func NewRemoteChecker(path, lane string) *RemoteChecker {
	if lane == "" {
		lane = "gate"
	}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	}
	return &RemoteChecker{lane: lane, client: &http.Client{Transport: tr}}
}

func (r *RemoteChecker) post(ctx context.Context, path string, v any) (*http.Response, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://checker"+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(laneHeader, r.lane)
	return r.client.Do(req)
}

// Check sends out's files to the server and returns its verdict.
func (r *RemoteChecker) Check(ctx context.Context, out *renderplan.Output) error {
	if out == nil || out.Plan == nil {
		return errors.New("rendergate: check: output has no plan")
	}
	id := out.ID()
	resp, err := r.post(ctx, "/v1/check", checkRequest{PlanID: id, Files: out.Files})
	// The checker container may start after the controller's first
	// check: wait for its socket a while rather than answer no verdict.
	for wait := time.Now().Add(startWait); err != nil && notListening(err) && time.Now().Before(wait); {
		select {
		case <-ctx.Done():
			return fmt.Errorf("rendergate: check plan %s: checker: %w", id, context.Cause(ctx))
		case <-time.After(200 * time.Millisecond):
		}
		resp, err = r.post(ctx, "/v1/check", checkRequest{PlanID: id, Files: out.Files})
	}
	if err != nil {
		return fmt.Errorf("rendergate: check plan %s: checker: %w", id, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("rendergate: check plan %s: checker: %s: %s", id, resp.Status, bytes.TrimSpace(msg))
	}
	var cr checkResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4*DefaultMaxOutput+64<<10)).Decode(&cr); err != nil {
		return fmt.Errorf("rendergate: check plan %s: checker: %w", id, err)
	}
	switch {
	case cr.Refusal != nil:
		cr.Refusal.PlanID = id
		return cr.Refusal
	case cr.Error != "":
		return fmt.Errorf("rendergate: check plan %s: checker: %s", id, cr.Error)
	}
	return nil
}

// startWait is how long a check waits for a checker that does not listen
// yet.
const startWait = 30 * time.Second

// notListening says whether err is a dial to a socket nobody serves yet.
func notListening(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// Pause holds the lane's checks on the server until Resume. It does not
// wait for the server: the hold is sent in the background.
func (r *RemoteChecker) Pause() { r.setDepth(+1) }

// Resume undoes one Pause.
func (r *RemoteChecker) Resume() { r.setDepth(-1) }

func (r *RemoteChecker) setDepth(d int) {
	r.mu.Lock()
	if r.depth+d < 0 {
		r.mu.Unlock()
		return
	}
	r.depth += d
	changed := (r.depth > 0) != r.sent
	r.mu.Unlock()
	if changed {
		go r.sendHold()
	}
}

// sendHold sends the current held state unless the server has it: sends
// are serialised and each sends the state of its own time, so the last
// one sent is the newest.
func (r *RemoteChecker) sendHold() {
	r.sendLock.Lock()
	defer r.sendLock.Unlock()
	r.mu.Lock()
	held := r.depth > 0
	if held == r.sent {
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := r.post(ctx, "/v1/hold", holdRequest{Held: held})
	if err != nil {
		return // the server holds for DefaultMaxHold at most
	}
	_ = resp.Body.Close()
	r.mu.Lock()
	r.sent = held
	r.mu.Unlock()
}
