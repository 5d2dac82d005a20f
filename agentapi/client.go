package agentapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Client defaults.
const (
	// DefaultClientTimeout bounds one call of a [Client] whose Timeout is
	// zero. An apply may include a reload and its verification, so it is
	// generous (the controller's syncTimeout).
	DefaultClientTimeout = 2 * time.Minute
	// DefaultRetries is how many times a call is retried after the
	// connection was refused (or, for State, reset).
	DefaultRetries = 2
	// DefaultRetryBackoff is the wait before the first retry; it doubles
	// with each retry.
	DefaultRetryBackoff = 100 * time.Millisecond
	// DefaultDialTimeout bounds connecting, for the HTTP client a [Client]
	// builds when its HTTPClient is nil.
	DefaultDialTimeout = 5 * time.Second
)

// Client talks to one agent over HTTP. It has the methods of [Applier],
// so a dispatcher can be handed a remote agent or an in-process one.
// Like http.Client, it is configured through its exported fields, which
// must not change after first use, and it is safe for concurrent use.
// Do not copy a Client after first use.
//
//	c := &agentapi.Client{BaseURL: "http://10.0.0.7:5555", Token: tok}
//	st, err := c.State(ctx)
type Client struct {
	// BaseURL is the agent's address, such as "http://10.0.0.7:5555" or
	// "https://…"; required.
	BaseURL string
	// Token is sent as "Authorization: Bearer <token>"; empty sends none.
	Token Token
	// HTTPClient sends the requests. Nil means a client of the Client's
	// own: a transport with [DefaultDialTimeout] to connect, 10s for the
	// TLS handshake, keep-alives, no proxy (agents are reached directly at
	// their pod address) and no overall timeout (Timeout bounds each call
	// instead).
	HTTPClient *http.Client
	// Timeout bounds each call, retries included. Zero means
	// [DefaultClientTimeout]; negative means no bound beyond ctx.
	Timeout time.Duration
	// Retries is how many times a call is retried when the connection was
	// refused (State and Apply: nothing was sent) or reset (State only,
	// which is idempotent). Zero means [DefaultRetries]; negative means
	// none. No other failure is retried.
	Retries int
	// RetryBackoff is the wait before the first retry, doubled for each
	// next one. Zero means [DefaultRetryBackoff].
	RetryBackoff time.Duration

	once sync.Once
	own  *http.Client
	// multipartOnly is set once the agent refused the framed format.
	multipartOnly atomic.Bool
}

var _ Applier = (*Client)(nil)

// State fetches the agent's state (GET /v1/state).
func (c *Client) State(ctx context.Context) (*State, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	resp, err := c.do(ctx, true, func() (*http.Request, func(), error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(PathState), nil)
		return req, func() {}, err
	})
	if err != nil {
		return nil, fmt.Errorf("get agent state from %s: %w", c.BaseURL, err)
	}
	defer closeBody(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get agent state from %s: %w", c.BaseURL, decodeError(resp))
	}
	var s State
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return nil, fmt.Errorf("get agent state from %s: decode: %w", c.BaseURL, err)
	}
	return &s, nil
}

// Apply sends one apply (POST /v1/apply): the manifest and the bodies,
// framed as [ContentTypeApply]; an agent that answers 415 gets
// multipart/form-data instead, on this call and the ones after it. On an
// ACK it returns the result. On a NACK the error is a *[NackError] (reach
// it with errors.As) and the returned result is its Result. It does not
// validate req: the agent does, and answers a bad request with a NACK at
// [StageDecode].
func (c *Client) Apply(ctx context.Context, req *ApplyRequest) (*ApplyResult, error) {
	if req == nil {
		return nil, decodeNack(-1, "nil request")
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	resp, err := c.send(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("apply plan %s on %s: %w", req.PlanID, c.BaseURL, err)
	}
	defer closeBody(resp)
	if resp.StatusCode != http.StatusOK {
		err := decodeError(resp)
		var ne *NackError
		if errors.As(err, &ne) {
			return ne.Result, ne
		}
		return nil, fmt.Errorf("apply plan %s on %s: %w", req.PlanID, c.BaseURL, err)
	}
	var res ApplyResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return nil, fmt.Errorf("apply plan %s on %s: decode result: %w", req.PlanID, c.BaseURL, err)
	}
	if !res.OK {
		ne := nackFromResult(&res)
		return &res, ne
	}
	return &res, nil
}

// send posts req framed, or as multipart/form-data to an agent that
// predates the framed format (it answers 415): on this call and, once
// known, from then on.
func (c *Client) send(ctx context.Context, req *ApplyRequest) (*http.Response, error) {
	if !c.multipartOnly.Load() {
		resp, err := c.post(ctx, req, true)
		if err != nil || resp.StatusCode != http.StatusUnsupportedMediaType {
			return resp, err
		}
		closeBody(resp)
		c.multipartOnly.Store(true)
	}
	if len(req.Patches) > 0 {
		return nil, unsupportedNack(-1, "the agent takes only multipart/form-data, which carries no patches")
	}
	return c.post(ctx, req, false)
}

// post sends req as POST /v1/apply, framed ([ContentTypeApply], with its
// length known) or as multipart/form-data (streamed).
func (c *Client) post(ctx context.Context, req *ApplyRequest, framed bool) (*http.Response, error) {
	if framed {
		manifest, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		bufs, n := framedBody(manifest, req.Bodies, req.Patches)
		return c.do(ctx, false, func() (*http.Request, func(), error) {
			readers := make([]io.Reader, len(bufs))
			for i, b := range bufs {
				readers[i] = bytes.NewReader(b)
			}
			hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(PathApply), io.MultiReader(readers...))
			if err != nil {
				return nil, nil, err
			}
			hr.ContentLength = n
			hr.Header.Set("Content-Type", ContentTypeApply)
			return hr, func() {}, nil
		})
	}
	return c.do(ctx, false, func() (*http.Request, func(), error) {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		done := make(chan struct{})
		go func() {
			defer close(done)
			pw.CloseWithError(writeMultipart(mw, req))
		}()
		wait := func() {
			_ = pr.Close()
			<-done
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(PathApply), pr)
		if err != nil {
			wait()
			return nil, nil, err
		}
		hr.Header.Set("Content-Type", mw.FormDataContentType())
		return hr, wait, nil
	})
}

// do sends the request newReq builds, retrying per the Client's rules.
// newReq also returns a func that releases what the request holds; do
// calls it once the attempt is over.
func (c *Client) do(ctx context.Context, idempotent bool, newReq func() (*http.Request, func(), error)) (*http.Response, error) {
	if c.BaseURL == "" {
		return nil, errors.New("agentapi: client has no BaseURL")
	}
	retries := c.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	backoff := c.RetryBackoff
	if backoff <= 0 {
		backoff = DefaultRetryBackoff
	}
	hc := c.httpClient()
	for attempt := 0; ; attempt++ {
		req, release, err := newReq()
		if err != nil {
			return nil, err
		}
		req.Header.Set("User-Agent", "haptic-agentapi ("+APIVersion+")")
		req.Header.Set("Accept", "application/json")
		if c.Token != "" {
			req.Header.Set("Authorization", "Bearer "+string(c.Token))
		}
		resp, err := hc.Do(req)
		if err == nil {
			// The response may arrive before the body is fully sent (an
			// early refusal); release the writer only when the response
			// has been read.
			resp.Body = &releaseBody{ReadCloser: resp.Body, release: release}
			return resp, nil
		}
		release()
		if attempt >= retries || !retryable(err, idempotent) {
			return nil, err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errors.Join(err, ctx.Err())
		case <-t.C:
		}
		backoff *= 2
	}
}

// retryable reports whether a failed attempt may be sent again: the
// connection was refused (nothing was sent), or, for idempotent calls,
// reset.
func retryable(err error, idempotent bool) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	return idempotent && errors.Is(err, syscall.ECONNRESET)
}

func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	switch {
	case c.Timeout < 0:
		return context.WithCancel(ctx)
	case c.Timeout == 0:
		return context.WithTimeout(ctx, DefaultClientTimeout)
	}
	return context.WithTimeout(ctx, c.Timeout)
}

func (c *Client) url(path string) string {
	return strings.TrimRight(c.BaseURL, "/") + path
}

func (c *Client) httpClient() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	c.once.Do(func() {
		c.own = &http.Client{Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
			ForceAttemptHTTP2:   true,
		}}
	})
	return c.own
}

// releaseBody runs release after the response body is closed.
type releaseBody struct {
	io.ReadCloser
	release func()
	once    sync.Once
}

func (b *releaseBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// closeBody drains a little of the body (so the connection can be
// reused) and closes it.
func closeBody(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	_ = resp.Body.Close()
}
