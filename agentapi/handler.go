package agentapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/haptic-io/haptic/renderplan"
)

// HandlerOptions configures [NewHandler]. The zero value serves nothing
// under /v1/ (no token configured); see Token and AllowNoToken.
type HandlerOptions struct {
	// Token is the bearer token every /v1/ request must present
	// ("Authorization: Bearer <token>"), compared in constant time. Read
	// it with [ReadTokenFile]. A request without it is answered 401 and
	// the Applier is not called. Empty refuses every /v1/ request unless
	// AllowNoToken is set.
	Token Token
	// AllowNoToken serves /v1/ without authentication when Token is
	// empty: for an agent reached only over loopback (local mode, tests).
	AllowNoToken bool
	// Limits bound each apply request; zero fields mean the defaults
	// ([DefaultMaxBodyBytes], [DefaultMaxFiles], [DefaultMaxOps] …).
	Limits Limits
	// ReadTimeout bounds reading an apply's manifest, and each file body
	// beyond the time its declared size needs at MinReadRate: the
	// request's read deadline moves ahead before each part. A request
	// that misses it is answered 408. Zero means [DefaultReadTimeout];
	// negative sets no deadline (the http.Server's ReadTimeout, if any,
	// still applies).
	ReadTimeout time.Duration
	// MinReadRate is the slowest rate, in bytes per second, a body may
	// arrive at (see ReadTimeout). Zero or negative means
	// [DefaultMinReadRate].
	MinReadRate int64
	// Log receives one record per API request, with the keys plan_id,
	// stage and op; nil discards.
	Log *slog.Logger
	// Metrics serves GET /metrics (such as promhttp.HandlerFor); nil
	// answers 404.
	Metrics http.Handler
}

// NewHandler returns an http.Handler that serves the agent contract on
// top of a:
//
//	GET  /v1/state   the agent's State (JSON), bearer token required
//	POST /v1/apply   one apply (framed or multipart: manifest, then bodies), bearer token required
//	GET  /healthz    200 while the process serves
//	GET  /readyz     200, or 503 when a's [ReadyChecker] says not ready
//	GET  /metrics    HandlerOptions.Metrics, or 404; no token (Prometheus scrapes it)
//
// /healthz, /readyz and /metrics answer without a token: serve the
// handler on an address only the controller, the kubelet and Prometheus
// reach. An apply is checked completely before a is called: size limits
// (413) against the request and, body by body, against the sizes its
// manifest declares, read deadlines (408, see HandlerOptions.ReadTimeout),
// strict manifest decoding, clean unique paths, valid ops and body
// digests (400); a version-skewed manifest (unknown field, op kind, mode,
// verdict or file kind) is answered 422 with an unsupported NACK that
// [Client] decodes into a *[NackError] with Unsupported set. A NACK from
// a is answered with [NackError.HTTPStatus] and its fields, any other
// error with 500. An accepted apply runs with a context that is not
// canceled when the client disconnects and that carries [BodiesChecked].
// After answering a request of more than 32 MiB the handler returns the
// memory it freed to the operating system (debug.FreeOSMemory). The
// handler serves plain HTTP; wrap it in an http.Server with TLSConfig for
// TLS, and set that server's ReadHeaderTimeout and IdleTimeout. It is
// safe for concurrent use; serializing applies is the Applier's job.
func NewHandler(a Applier, o HandlerOptions) http.Handler {
	h := &handler{a: a, o: o, limits: o.Limits.WithDefaults(), log: o.Log}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	switch {
	case o.ReadTimeout == 0:
		h.readTimeout = DefaultReadTimeout
	case o.ReadTimeout > 0:
		h.readTimeout = o.ReadTimeout
	}
	h.minRate = o.MinReadRate
	if h.minRate <= 0 {
		h.minRate = DefaultMinReadRate
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+PathState, h.auth(http.HandlerFunc(h.state)))
	mux.Handle("POST "+PathApply, h.auth(http.HandlerFunc(h.apply)))
	mux.HandleFunc("GET "+PathHealthz, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET "+PathReadyz, h.ready)
	mux.HandleFunc("GET "+PathMetrics, func(w http.ResponseWriter, r *http.Request) {
		if o.Metrics == nil {
			http.NotFound(w, r)
			return
		}
		o.Metrics.ServeHTTP(w, r)
	})
	return mux
}

type handler struct {
	a           Applier
	o           HandlerOptions
	limits      Limits
	readTimeout time.Duration // 0: no deadline
	minRate     int64
	log         *slog.Logger
}

// auth refuses requests without the configured bearer token.
func (h *handler) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.o.Token == "" && h.o.AllowNoToken {
			next.ServeHTTP(w, r)
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !h.o.Token.Equal(Token(got)) {
			h.log.Warn("unauthorized request", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="haptic-agent"`)
			writeJSON(w, http.StatusUnauthorized, errorBody{Error: codeUnauthorized, Message: "missing or wrong bearer token"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (h *handler) state(w http.ResponseWriter, r *http.Request) {
	s, err := h.a.State(r.Context())
	if err != nil {
		h.log.Error("state", "err", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: codeInternal, Message: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, s)
}

func (h *handler) ready(w http.ResponseWriter, r *http.Request) {
	if rc, ok := h.a.(ReadyChecker); ok {
		if err := rc.Ready(r.Context()); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: codeNotReady, Message: err.Error()})
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "ok\n")
}

func (h *handler) apply(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	log := h.log
	body := &countingBody{ReadCloser: r.Body}
	r.Body = body
	defer body.release()
	req, status, nack := h.readApply(w, r)
	if nack != nil {
		log.Warn("apply refused", "stage", nack.Stage, "op", nack.Op, "unsupported", nack.Unsupported, "err", nack.Message)
		writeJSON(w, status, nackBody(nack))
		return
	}
	log = log.With("plan_id", req.PlanID)
	// An accepted apply runs to its end even if the caller goes away: a
	// transaction cut short between ops helps no one. The Applier bounds
	// its own work (reload verification timeout).
	res, err := h.a.Apply(withBodiesChecked(context.WithoutCancel(r.Context()), req), req)
	var ne *NackError
	switch {
	case errors.As(err, &ne):
		if ne.Result == nil {
			ne.Result = res
		}
		log.Warn("apply nack", "stage", ne.Stage, "op", ne.Op, "err", ne.Message, "took", time.Since(start))
		writeJSON(w, ne.HTTPStatus(), nackBody(ne))
	case err != nil:
		log.Error("apply failed", "err", err, "took", time.Since(start))
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: codeInternal, Message: err.Error()})
	case res == nil:
		log.Error("apply returned no result", "took", time.Since(start))
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: codeInternal, Message: "applier returned no result and no error"})
	case !res.OK:
		ne := nackFromResult(res)
		log.Warn("apply nack", "stage", ne.Stage, "op", ne.Op, "err", ne.Message, "took", time.Since(start))
		writeJSON(w, ne.HTTPStatus(), nackBody(ne))
	default:
		log.Info("apply ack", "reload", res.Reload.Performed, "ops", len(req.Ops), "took", time.Since(start))
		writeJSON(w, http.StatusOK, res)
	}
}

// releaseAbove is the request size, in bytes, past which the handler
// hands the memory the request took back to the operating system once it
// has answered. The Go runtime returns freed memory slowly on its own:
// after a 200 MiB apply the agent kept that much resident for minutes.
const releaseAbove = 32 << 20

// countingBody counts what is read of a request body.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n += int64(n)
	return n, err
}

// release returns the memory freed since the request was read to the
// operating system when the request was large: its bodies are garbage
// once the Applier has returned (an Applier does not keep them).
func (c *countingBody) release() {
	if c.n > releaseAbove {
		debug.FreeOSMemory()
	}
}

// readApply reads and checks one apply request, in either wire format
// (see [ContentTypeApply]). On failure it returns the status to answer and
// the NACK.
func (h *handler) readApply(w http.ResponseWriter, r *http.Request) (*ApplyRequest, int, *NackError) {
	l := h.limits
	if r.ContentLength > l.MaxBodyBytes {
		return nil, http.StatusRequestEntityTooLarge, decodeNack(-1, "request body has %d bytes, more than %d", r.ContentLength, l.MaxBodyBytes)
	}
	r.Body = http.MaxBytesReader(w, r.Body, l.MaxBodyBytes)
	var dl readDeadline
	if h.readTimeout > 0 {
		dl = readDeadline{rc: http.NewResponseController(w), timeout: h.readTimeout, rate: h.minRate}
		dl.expect(0) // the manifest: its length is not known yet
		defer dl.clear()
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var req *ApplyRequest
	switch {
	case err == nil && mt == ContentTypeApply:
		req, err = readFramed(r.Body, r.ContentLength, l, dl)
	case err == nil && mt == "multipart/form-data" && params["boundary"] != "":
		req, err = readMultipart(r, l, dl)
	case err == nil && mt == "multipart/form-data":
		return nil, http.StatusBadRequest, decodeNack(-1, "content type %q has no boundary parameter, which multipart/form-data needs", r.Header.Get("Content-Type"))
	default:
		return nil, http.StatusUnsupportedMediaType, unsupportedNack(-1, "content type %q is neither %s nor multipart/form-data", r.Header.Get("Content-Type"), ContentTypeApply)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		var tl tooLargeError
		var ne *NackError
		var te interface{ Timeout() bool }
		switch {
		case errors.As(err, &te) && te.Timeout():
			return nil, http.StatusRequestTimeout, decodeNack(-1, "request not read in time (%v, and %d bytes a second for each body): %v", h.readTimeout, h.minRate, err)
		case errors.As(err, &tl):
			return nil, http.StatusRequestEntityTooLarge, tl.NackError
		case errors.As(err, &mbe):
			return nil, http.StatusRequestEntityTooLarge, decodeNack(-1, "request body is larger than %d bytes", l.MaxBodyBytes)
		case errors.As(err, &ne):
			return nil, ne.HTTPStatus(), ne
		}
		return nil, http.StatusBadRequest, decodeNack(-1, "read request: %v", err)
	}
	return req, http.StatusOK, nil
}

// readMultipart reads a multipart/form-data apply: the manifest part,
// then one part per body, named by its path, moving dl ahead of each.
// Every error is a *NackError, a tooLargeError, a *http.MaxBytesError or
// a read error.
func readMultipart(r *http.Request, l Limits, dl readDeadline) (*ApplyRequest, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, err
	}
	part, err := mr.NextRawPart()
	if err != nil {
		return nil, err
	}
	if part.FormName() != ManifestPart {
		return nil, decodeNack(-1, "first part is %q, not %q", part.FormName(), ManifestPart)
	}
	mb, err := io.ReadAll(io.LimitReader(part, l.MaxManifestBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(mb)) > l.MaxManifestBytes {
		return nil, tooLargeNack("manifest is larger than %d bytes", l.MaxManifestBytes)
	}
	req, ne := decodeManifest(mb, l)
	if ne != nil {
		return nil, ne
	}
	files := req.fileIndex()
	bodies := int64(0) // body bytes so far; the parts' framing is not counted
	for {
		dl.expect(0)
		part, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			return req, nil
		}
		if err != nil {
			return nil, err
		}
		f, err := req.bodyFile(files, part.FormName())
		if err != nil {
			return nil, err
		}
		if left := l.MaxBodyBytes - int64(len(mb)) - bodies; int64(f.Size) > left {
			return nil, tooLargeNack("body for %q: the manifest says %d bytes, more than the %d the request may still carry", f.Path, f.Size, left)
		}
		dl.expect(int64(f.Size))
		body, err := readBody(part, f, r.ContentLength >= 0)
		if err != nil {
			return nil, err
		}
		bodies += int64(len(body))
		req.addBody(f.Path, body)
	}
}

// bodyFile returns the listed file a body part names, refusing a bad
// path, an unlisted one and a second body for the same path.
func (r *ApplyRequest) bodyFile(files map[string]renderplan.File, p string) (renderplan.File, error) {
	if err := ValidatePath(p); err != nil {
		return renderplan.File{}, decodeNack(-1, "body: %v", err)
	}
	f, ok := files[p]
	if !ok {
		return renderplan.File{}, decodeNack(-1, "body for %q: the manifest does not list it", p)
	}
	_, dupBody := r.Bodies[p]
	_, dupPatch := r.Patches[p]
	if dupBody || dupPatch {
		return renderplan.File{}, decodeNack(-1, "body for %q is sent twice", p)
	}
	return f, nil
}

// tooLargeError is a NACK the handler answers with 413.
type tooLargeError struct{ *NackError }

func (e tooLargeError) Unwrap() error { return e.NackError }

func tooLargeNack(format string, args ...any) error {
	return tooLargeError{decodeNack(-1, format, args...)}
}

func (r *ApplyRequest) addPatch(p string, pt Patch) {
	if r.Patches == nil {
		r.Patches = make(map[string]Patch)
	}
	r.Patches[p] = pt
}

func (r *ApplyRequest) addBody(p string, body []byte) {
	if r.Bodies == nil {
		r.Bodies = make(map[string][]byte)
	}
	r.Bodies[p] = body
}

// readBody reads one body part of the manifest's size (see readN; known
// says the request's length is), checks that the part ends there, and
// checks its digest.
func readBody(part io.Reader, f renderplan.File, known bool) ([]byte, error) {
	prealloc := maxUnknownPrealloc
	if known {
		prealloc = maxKnownPrealloc
	}
	body, err := readN(part, f.Size, prealloc)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, decodeNack(-1, "body for %q is shorter than the manifest's %d bytes", f.Path, f.Size)
	}
	if err != nil {
		return nil, err
	}
	var one [1]byte
	if n, err := io.ReadFull(part, one[:]); n > 0 {
		return nil, decodeNack(-1, "body for %q is longer than the manifest's %d bytes", f.Path, f.Size)
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := checkBody(f, body); err != nil {
		return nil, err
	}
	return body, nil
}

// nackFromResult builds the NACK of a result that is not OK.
func nackFromResult(res *ApplyResult) *NackError {
	ne := &NackError{Stage: res.Stage, Op: -1, Message: res.Message, Result: res}
	if ne.Stage == "" {
		ne.Stage = StageCommit
	}
	for _, o := range res.Ops {
		if !o.OK {
			ne.Op = o.Index
			break
		}
	}
	if ne.Message == "" {
		ne.Message = fmt.Sprintf("apply of plan %s failed", res.PlanID)
	}
	return ne
}
