package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kjson "sigs.k8s.io/json"
)

// MaxReviewBytes bounds the body of an AdmissionReview the webhook reads:
// an object and its old version at the apiserver's 3 MiB request limit
// each, and room for the rest.
const MaxReviewBytes = 7 << 20

// errReviewTooLarge is a body over MaxReviewBytes.
var errReviewTooLarge = errors.New("admission review larger than the limit")

// review is one decoded AdmissionReview request, its objects as
// unstructured (JSON-shaped, integers as int64) maps.
type review struct {
	req       *admissionv1.AdmissionRequest
	object    map[string]any // nil for DELETE
	oldObject map[string]any // nil for CREATE
}

// decodeReview reads an admission.k8s.io/v1 AdmissionReview of at most
// limit bytes. Decoding is strict where it matters for what is judged:
// keys are case-sensitive and a duplicate key anywhere (review or
// objects) is refused, so no two readers can see different objects;
// unknown fields of the review are tolerated, since a newer apiserver
// may add some.
func decodeReview(r io.Reader, limit int64) (*review, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read admission review: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w (%d bytes)", errReviewTooLarge, limit)
	}
	var ar admissionv1.AdmissionReview
	if err := strictUnmarshal(body, &ar); err != nil {
		return nil, fmt.Errorf("decode admission review: %w", err)
	}
	if ar.APIVersion != admissionv1.SchemeGroupVersion.String() || ar.Kind != "AdmissionReview" {
		return nil, fmt.Errorf("decode admission review: apiVersion %q kind %q, want %s AdmissionReview", ar.APIVersion, ar.Kind, admissionv1.SchemeGroupVersion)
	}
	req := ar.Request
	switch {
	case req == nil:
		return nil, errors.New("decode admission review: no request")
	case req.UID == "":
		return nil, errors.New("decode admission review: request without uid")
	}
	rv := &review{req: req}
	if rv.object, err = rawObject(req.Object.Raw); err != nil {
		return nil, fmt.Errorf("decode admission review: object: %w", err)
	}
	if rv.oldObject, err = rawObject(req.OldObject.Raw); err != nil {
		return nil, fmt.Errorf("decode admission review: oldObject: %w", err)
	}
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
		if rv.object == nil {
			return nil, fmt.Errorf("decode admission review: %s without an object", req.Operation)
		}
	case admissionv1.Delete, admissionv1.Connect:
	default:
		return nil, fmt.Errorf("decode admission review: unknown operation %q", req.Operation)
	}
	return rv, nil
}

// rawObject decodes an embedded object: nil for none (absent or null),
// else a JSON object.
func rawObject(raw []byte) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var obj map[string]any
	if err := strictUnmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("not a JSON object")
	}
	return obj, nil
}

// strictUnmarshal decodes case-sensitively, integers as int64, and
// refuses duplicate keys.
func strictUnmarshal(data []byte, v any) error {
	strict, err := kjson.UnmarshalStrict(data, v, kjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// verdict is the webhook's answer to one review.
type verdict struct {
	allowed bool
	// message says why a request is refused (or, allowed, what was not
	// checked); bounded by maxMessageBytes.
	message string
	// warnings are shown to the client (kubectl prints them), each
	// bounded by maxWarningBytes, at most maxWarnings.
	warnings []string
}

// Bounds of what the webhook says: the apiserver hands the message to
// the client whole, and cuts warnings itself beyond these.
const (
	maxMessageBytes = 2048
	maxWarningBytes = 256
	maxWarnings     = 8
)

// encodeReview returns the AdmissionReview answering uid with v.
func encodeReview(uid string, v verdict) ([]byte, error) {
	resp := &admissionv1.AdmissionResponse{UID: types.UID(uid), Allowed: v.allowed}
	if msg := clip(v.message, maxMessageBytes); msg != "" {
		resp.Result = &metav1.Status{Message: msg}
		if !v.allowed {
			resp.Result.Code = 403
			resp.Result.Reason = metav1.StatusReasonForbidden
		}
	}
	for i, w := range v.warnings {
		if i == maxWarnings {
			resp.Warnings = append(resp.Warnings, fmt.Sprintf("%d more warnings", len(v.warnings)-i))
			break
		}
		resp.Warnings = append(resp.Warnings, clip(w, maxWarningBytes))
	}
	ar := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Response: resp,
	}
	return json.Marshal(&ar)
}
