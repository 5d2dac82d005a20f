package agentapi

import (
	"errors"
	"fmt"

	"github.com/haptic-io/haptic/renderplan"
)

// Validate checks a request the way the handler does before it calls the
// [Applier]: the manifest (see [DecodeManifest]), the bodies (each names a
// listed file and has its size and digest) and the patches (each names a
// listed file without a body, has a well-formed base digest and makes the
// file's size; what it makes is the agent's to check). l's zero fields mean
// the defaults. The error is a *[NackError] at [StageDecode]; an agent
// that is handed requests in process calls Validate itself.
func (r *ApplyRequest) Validate(l Limits) error {
	l = l.WithDefaults()
	if len(r.Files) > l.MaxFiles {
		return decodeNack(-1, "manifest lists %d files, more than %d", len(r.Files), l.MaxFiles)
	}
	if len(r.Ops) > l.MaxOps {
		return decodeNack(-1, "manifest has %d ops, more than %d", len(r.Ops), l.MaxOps)
	}
	if err := r.validateManifest(); err != nil {
		return err
	}
	files := r.fileIndex()
	var total int64
	for p, body := range r.Bodies {
		f, ok := files[p]
		if !ok {
			if err := ValidatePath(p); err != nil {
				return decodeNack(-1, "body: %v", err)
			}
			return decodeNack(-1, "body for %q: the manifest does not list it", p)
		}
		if err := checkBody(f, body); err != nil {
			return err
		}
		total += int64(len(body))
	}
	for p, pt := range r.Patches {
		f, ok := files[p]
		if !ok {
			if err := ValidatePath(p); err != nil {
				return decodeNack(-1, "patch: %v", err)
			}
			return decodeNack(-1, "patch for %q: the manifest does not list it", p)
		}
		if _, both := r.Bodies[p]; both {
			return decodeNack(-1, "%q has a body and a patch", p)
		}
		if err := checkPatch(f, pt); err != nil {
			return err
		}
		total += int64(len(pt.Literal))
	}
	if total > l.MaxBodyBytes {
		return decodeNack(-1, "bodies hold %d bytes, more than %d", total, l.MaxBodyBytes)
	}
	return nil
}

// validateManifest checks everything but the bodies and the counts.
func (r *ApplyRequest) validateManifest() *NackError {
	if p := idIssue(r.PlanID); p != "" {
		return decodeNack(-1, "plan ID %s", p)
	}
	if p := idIssue(r.ExpectedPlanID); p != "" {
		return decodeNack(-1, "expected plan ID %s", p)
	}
	switch r.Mode {
	case "", ModeAuto, ModeReload, ModeRevertLKG:
	default:
		return unsupportedNack(-1, "unknown mode %q", r.Mode)
	}
	switch r.Verdict {
	case "", VerdictNoop, VerdictFileOnly, VerdictRuntime, VerdictReload:
	default:
		return unsupportedNack(-1, "unknown verdict %q", r.Verdict)
	}
	if r.Mode == ModeRevertLKG {
		if len(r.Files) > 0 || len(r.Ops) > 0 || len(r.Bodies) > 0 || len(r.Patches) > 0 {
			return decodeNack(-1, "mode %s carries no files, bodies or ops", ModeRevertLKG)
		}
		return nil
	}
	if r.PlanID == "" {
		return decodeNack(-1, "plan ID is empty")
	}
	seen := make(map[string]bool, len(r.Files))
	for _, f := range r.Files {
		if err := ValidatePath(f.Path); err != nil {
			return decodeNack(-1, "file: %v", err)
		}
		if seen[f.Path] {
			return decodeNack(-1, "file %q is listed twice", f.Path)
		}
		seen[f.Path] = true
		switch f.Kind {
		case renderplan.FileConfig, renderplan.FileMap, renderplan.FileCert, renderplan.FileCrtList, renderplan.FileGeneral:
		default:
			return unsupportedNack(-1, "file %q: unknown kind %q", f.Path, f.Kind)
		}
		if err := ValidatePlace(f.Path, f.Kind); err != nil {
			return decodeNack(-1, "file: %v", err)
		}
		if !validDigest(f.Digest) {
			return decodeNack(-1, "file %q: digest %q is not 16 lower-case hex digits", f.Path, f.Digest)
		}
		if f.Size < 0 {
			return decodeNack(-1, "file %q: size %d is negative", f.Path, f.Size)
		}
	}
	if !seen[renderplan.ConfigPath] {
		return decodeNack(-1, "manifest does not list %s", renderplan.ConfigPath)
	}
	for i, o := range r.Ops {
		if err := o.Validate(); err != nil {
			if errors.Is(err, ErrUnknownOpKind) {
				return unsupportedNack(i, "%v", err)
			}
			return decodeNack(i, "%v", err)
		}
	}
	return nil
}

// fileIndex maps each listed path to its file.
func (r *ApplyRequest) fileIndex() map[string]renderplan.File {
	m := make(map[string]renderplan.File, len(r.Files))
	for _, f := range r.Files {
		m[f.Path] = f
	}
	return m
}

// checkBody checks a body against its manifest entry.
func checkBody(f renderplan.File, body []byte) *NackError {
	if len(body) != f.Size {
		return decodeNack(-1, "body for %q has %d bytes, the manifest says %d", f.Path, len(body), f.Size)
	}
	if d := renderplan.DigestOf(body); d != f.Digest {
		return decodeNack(-1, "body for %q has digest %s, the manifest says %s", f.Path, d, f.Digest)
	}
	return nil
}

// idIssue checks a plan ID: at most MaxPlanIDLen bytes of printable ASCII
// without spaces. Empty is fine here.
func idIssue(id string) string {
	if len(id) > MaxPlanIDLen {
		return fmt.Sprintf("is longer than %d bytes", MaxPlanIDLen)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c >= 0x7f {
			return fmt.Sprintf("%q has a byte that is not printable ASCII", id)
		}
	}
	return ""
}

// validDigest reports whether d has the form renderplan.DigestOf makes.
func validDigest(d renderplan.Digest) bool {
	if len(d) != 16 {
		return false
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
