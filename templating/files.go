package templating

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
)

// file (dict "name" n "content" c ["reloadOnChange" b]) records
// general/<n> and returns that path. reloadOnChange defaults to true.
func (r *renderState) file(d map[string]any) (string, error) {
	a := newDictArgs("file", d, "name", "content", "reloadOnChange")
	name := a.str("name", true)
	content := a.str("content", false)
	var reload *bool
	if a.has("reloadOnChange") {
		b := a.boolean("reloadOnChange")
		reload = &b
	}
	if err := a.err(); err != nil {
		return "", err
	}
	p, err := r.addFile(dirGeneral, name, renderplan.FileGeneral, []byte(content), reload)
	if err != nil {
		return "", fmt.Errorf("file: %w", err)
	}
	return p, nil
}

// cert (dict "name" n "pem" p ["object" o]) records certs/<n> and returns
// that path; PEM text without a "-----BEGIN " block is a
// CertificateInvalid problem, a name that would make a path longer than
// [renderplan.MaxPathLen] a ValueTooLong problem, and either returns "".
func (r *renderState) cert(d map[string]any) (string, error) {
	a := newDictArgs("cert", d, "name", "pem", "object")
	name := a.str("name", true)
	pem := a.str("pem", false)
	object := a.str("object", false)
	if err := a.err(); err != nil {
		return "", err
	}
	p, err := r.certLocked(name, pem, object)
	if err != nil {
		return "", fmt.Errorf("cert: %w", err)
	}
	return p, nil
}

func (r *renderState) certLocked(name, pem, object string) (string, error) {
	if object == "" {
		object = "cert " + name
	}
	if !strings.Contains(pem, "-----BEGIN ") || strings.IndexByte(pem, 0) >= 0 {
		r.addProblem(object, ReasonCertificateInvalid, fmt.Sprintf("certificate %s: no PEM block", name))
		return "", nil
	}
	if len(name) > maxFileNameLen {
		r.addProblem(object, ReasonValueTooLong, fmt.Sprintf("certificate %s: name longer than %d bytes; left out", shortQuote(name), maxFileNameLen))
		return "", nil
	}
	if !strings.HasSuffix(pem, "\n") {
		pem += "\n"
	}
	return r.addFile(dirCerts, name, renderplan.FileCert, []byte(pem), nil)
}

// crtList (dict "name" n "content" c) records the crt-list certs/<n> and
// returns that path. A line too long for HAProxy to read as one line and
// one command ([renderplan.CheckLines] with the render's tune.bufsize) is
// left out with a ValueTooLong problem.
func (r *renderState) crtList(d map[string]any) (string, error) {
	a := newDictArgs("crtList", d, "name", "content")
	name := a.str("name", true)
	content := a.str("content", false)
	if err := a.err(); err != nil {
		return "", err
	}
	if err := checkFileName(name); err != nil {
		return "", fmt.Errorf("crtList: %q: %w", name, err)
	}
	content = r.crtListLines(name, dirCerts+"/"+name, content)
	p, err := r.addFile(dirCerts, name, renderplan.FileCrtList, []byte(content), nil)
	if err != nil {
		return "", fmt.Errorf("crtList: %w", err)
	}
	return p, nil
}

// addFile records dir/name. Recording the same path again with the same
// kind and bytes is harmless; anything else is an error.
func (r *renderState) addFile(dir, name string, kind renderplan.FileKind, body []byte, reload *bool) (string, error) {
	if err := checkFileName(name); err != nil {
		return "", fmt.Errorf("%q: %w", name, err)
	}
	p := dir + "/" + name
	if old, ok := r.files[p]; ok {
		if old.Kind != kind || !bytes.Equal(old.Body, body) {
			return "", fmt.Errorf("%s recorded twice with different content", p)
		}
		return p, nil
	}
	r.files[p] = &renderplan.FileContent{Path: p, Kind: kind, Body: body, ReloadOnChange: reload}
	return p, nil
}
