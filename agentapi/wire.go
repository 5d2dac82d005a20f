package agentapi

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
)

// An apply request on the wire is framed ([ContentTypeApply]) or, as
// earlier clients send it, multipart/form-data: a first part named
// [ManifestPart] holding the manifest JSON, then one part per file body,
// named by the file's path.
const (
	// ManifestPart is the form name of the manifest part of a
	// multipart/form-data apply.
	ManifestPart = "manifest"
	// Paths of the HTTP API.
	PathState   = "/v1/state"
	PathApply   = "/v1/apply"
	PathHealthz = "/healthz"
	PathReadyz  = "/readyz"
	PathMetrics = "/metrics"
)

// Error codes of an error response body ("error" field).
const (
	codeNack         = "nack"
	codeUnsupported  = "unsupported"
	codeUnauthorized = "unauthorized"
	codeInternal     = "internal"
	codeNotReady     = "not_ready"
)

// errorBody is the JSON body of every error response. For a NACK it
// carries the NackError's fields.
type errorBody struct {
	Error       string       `json:"error"`
	Stage       Stage        `json:"stage,omitempty"`
	Op          *int         `json:"op,omitempty"`
	Message     string       `json:"message"`
	Unsupported bool         `json:"unsupported,omitempty"`
	Result      *ApplyResult `json:"result,omitempty"`
}

func nackBody(e *NackError) errorBody {
	code := codeNack
	if e.Unsupported {
		code = codeUnsupported
	}
	op := e.Op
	return errorBody{Error: code, Stage: e.Stage, Op: &op, Message: e.Message, Unsupported: e.Unsupported, Result: e.Result}
}

// writeJSON writes v with the given status, or a 500 if v does not
// encode.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{Error: codeInternal, Message: "encode response: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// maxErrorBody bounds how much of an error response the client reads.
const maxErrorBody = 16 << 20

// decodeError turns a non-2xx response into a *NackError (when the body
// says so) or a *StatusError.
func decodeError(resp *http.Response) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return &StatusError{Code: resp.StatusCode, Message: "read error body: " + err.Error()}
	}
	var eb errorBody
	if json.Unmarshal(b, &eb) != nil || eb.Error == "" {
		msg := strings.TrimSpace(string(b))
		if len(msg) > 512 {
			msg = msg[:512]
		}
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return &StatusError{Code: resp.StatusCode, Message: msg}
	}
	switch eb.Error {
	case codeNack, codeUnsupported:
		e := &NackError{Stage: eb.Stage, Op: -1, Message: eb.Message, Unsupported: eb.Unsupported || eb.Error == codeUnsupported, Result: eb.Result}
		if eb.Op != nil {
			e.Op = *eb.Op
		}
		return e
	}
	return &StatusError{Code: resp.StatusCode, Message: eb.Message}
}

// writeMultipart writes req as the multipart body of POST /v1/apply:
// the manifest first, then the bodies sorted by path.
func writeMultipart(mw *multipart.Writer, req *ApplyRequest) error {
	manifest, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if err := writePart(mw, ManifestPart, "application/json", manifest); err != nil {
		return err
	}
	paths := make([]string, 0, len(req.Bodies))
	for p := range req.Bodies {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if err := writePart(mw, p, "application/octet-stream", req.Bodies[p]); err != nil {
			return err
		}
	}
	return mw.Close()
}

// writePart writes one form-data part named name.
func writePart(mw *multipart.Writer, name, contentType string, body []byte) error {
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": name}))
	h.Set("Content-Type", contentType)
	pw, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = pw.Write(body)
	return err
}
