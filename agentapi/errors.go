package agentapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Stage names a step of the agent's apply transaction. A [NackError] says
// at which stage an apply failed.
type Stage string

// Apply stages, in the order the agent runs them.
const (
	// StageFence: the expected previous plan or the fencing token did not
	// match (a stale or concurrent controller). Over HTTP: 409.
	StageFence Stage = "fence"
	// StageDecode: the request was malformed, too large, or not understood
	// (see [NackError.Unsupported]). Over HTTP: 400, 413, 415 or 422.
	StageDecode Stage = "decode"
	// StageFiles: staging the new files failed (a body is missing, a digest
	// on disk differs, a write failed).
	StageFiles Stage = "files"
	// StageSwap: moving the staged files into place failed.
	StageSwap Stage = "swap"
	// StageOps: HAProxy refused a runtime op; [NackError.Op] says which.
	StageOps Stage = "ops"
	// StageReload: the reload through the master socket failed.
	StageReload Stage = "reload"
	// StageVerify: the reload did not produce a healthy new worker.
	StageVerify Stage = "verify"
	// StageCommit: recording the applied set as last-known-good failed.
	StageCommit Stage = "commit"
)

// Stages returns every stage, in transaction order.
func Stages() []Stage {
	return []Stage{StageFence, StageDecode, StageFiles, StageSwap, StageOps, StageReload, StageVerify, StageCommit}
}

// ErrUnsupported is matched (with errors.Is) by a [NackError] whose
// Unsupported flag is set: the agent does not understand the request (an
// unknown field, op kind, mode or verdict). A controller answers it with
// the full state and a reload, never by giving up.
var ErrUnsupported = errors.New("agentapi: unsupported request")

// ErrUnauthorized is matched (with errors.Is) by a [StatusError] with
// status 401: the bearer token was missing or wrong.
var ErrUnauthorized = errors.New("agentapi: unauthorized")

// NackError is a refused apply: the stage that failed, the op at fault and
// HAProxy's (or the agent's) own message, verbatim. The handler encodes it
// and [Client] decodes it back into the same type, so callers branch with
// errors.As the same way in process and over HTTP:
//
//	var nack *agentapi.NackError
//	if errors.As(err, &nack) && nack.Stage == agentapi.StageReload { … }
type NackError struct {
	// Stage is where the apply failed.
	Stage Stage `json:"stage"`
	// Op is the index in [ApplyRequest.Ops] of the op at fault (StageOps,
	// or StageDecode for an op that did not decode), or -1 when no op is.
	Op int `json:"op"`
	// Message is HAProxy's reply or the agent's error text, verbatim.
	Message string `json:"message"`
	// Unsupported marks a version-skew refusal at StageDecode: the request
	// is well-formed but uses a field, op kind, mode or verdict this agent
	// does not know. errors.Is(err, ErrUnsupported) matches it.
	Unsupported bool `json:"unsupported,omitempty"`
	// Result is what the agent did before it stopped and how it rolled
	// back; nil when it did nothing (fence and decode failures).
	Result *ApplyResult `json:"result,omitempty"`
}

// Error returns "agentapi: nack at <stage>[: op <n>]: <message>", or
// "agentapi: unsupported request[: op <n>]: <message>".
func (e *NackError) Error() string {
	s := "agentapi: nack at " + string(e.Stage)
	if e.Unsupported {
		s = "agentapi: unsupported request"
	}
	if e.Op >= 0 && (e.Stage == StageOps || e.Stage == StageDecode) {
		s += ": op " + strconv.Itoa(e.Op)
	}
	return s + ": " + e.Message
}

// Is reports whether target is [ErrUnsupported] and e is unsupported.
func (e *NackError) Is(target error) bool {
	return target == ErrUnsupported && e.Unsupported
}

// HTTPStatus returns the status code the handler answers e with: 409 for
// StageFence; for StageDecode 422 when Unsupported, else 400; 502 for the
// stages where HAProxy refused (ops, reload, verify); 500 for the agent's
// own stages (files, swap, commit) and unknown stages.
func (e *NackError) HTTPStatus() int {
	switch e.Stage {
	case StageFence:
		return http.StatusConflict
	case StageDecode:
		if e.Unsupported {
			return http.StatusUnprocessableEntity
		}
		return http.StatusBadRequest
	case StageOps, StageReload, StageVerify:
		return http.StatusBadGateway
	default:
		return http.StatusInternalServerError
	}
}

// StatusError is an HTTP answer from the agent that is not a [NackError]:
// 401, 404, 405, 5xx from a failed [Applier.State], or a body the client
// could not read. errors.Is(err, ErrUnauthorized) matches a 401.
type StatusError struct {
	// Code is the HTTP status code.
	Code int
	// Message is the error text from the body, or the body's start.
	Message string
}

// Error returns "agentapi: http <code>: <message>".
func (e *StatusError) Error() string {
	return fmt.Sprintf("agentapi: http %d: %s", e.Code, e.Message)
}

// Is reports whether target is [ErrUnauthorized] and e is a 401.
func (e *StatusError) Is(target error) bool {
	return target == ErrUnauthorized && e.Code == http.StatusUnauthorized
}

// decodeNack returns a decode-stage NackError for op (or -1).
func decodeNack(op int, format string, args ...any) *NackError {
	return &NackError{Stage: StageDecode, Op: op, Message: fmt.Sprintf(format, args...)}
}

// unsupportedNack returns a version-skew NackError.
func unsupportedNack(op int, format string, args ...any) *NackError {
	return &NackError{Stage: StageDecode, Op: op, Unsupported: true, Message: fmt.Sprintf(format, args...)}
}
