package agentapi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
)

// ContentTypeApply is the media type of the framed apply request, the
// format [Client] sends: the manifest's length in decimal and a newline,
// the manifest JSON, then each body as its path, a newline and exactly as
// many bytes as the manifest's entry for that path says (no separator
// after it). A [Patch] is sent the same way, its line being the path, a
// tab, the base digest, a tab, the prefix, a tab and the suffix (paths
// hold no control character), and its bytes the literal, as many as the
// file's size leaves. The request ends after the last body. Sizes come from the
// manifest, so the agent reads each body straight into a buffer of its
// size and never scans it for a boundary, as multipart/form-data needs.
// The handler also accepts multipart/form-data (see [ManifestPart]), which
// agents before the framed format took; the Client falls back to it when
// an agent answers 415.
const ContentTypeApply = "application/vnd.haptic.apply"

// maxLengthLine bounds the manifest length line, newline included.
const maxLengthLine = 21

// frameReadBuffer is the handler's read buffer for a framed request:
// small, since a body read drains it and then reads the rest straight
// into the body's own buffer.
const frameReadBuffer = 4 << 10

// Bodies up to these sizes are read into a buffer of their size at once:
// when the request's length is known (and holds the body), and when it
// is not (chunked). Larger ones grow as they arrive (see readN).
const (
	maxKnownPrealloc   = 16 << 20
	maxUnknownPrealloc = 64 << 10
)

// appendFrameHead appends the framed request's head (length line and
// manifest) to dst.
func appendFrameHead(dst, manifest []byte) []byte {
	dst = strconv.AppendInt(dst, int64(len(manifest)), 10)
	dst = append(dst, '\n')
	return append(dst, manifest...)
}

// framedBody returns the framed form of manifest, bodies and patches as
// buffers to write in order (by path) and their total length. The bodies
// are not copied.
func framedBody(manifest []byte, bodies map[string][]byte, patches map[string]Patch) ([][]byte, int64) {
	paths := make([]string, 0, len(bodies)+len(patches))
	for p := range bodies {
		paths = append(paths, p)
	}
	for p := range patches {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	head := appendFrameHead(make([]byte, 0, len(manifest)+maxLengthLine), manifest)
	bufs := make([][]byte, 0, 1+2*len(paths))
	bufs = append(bufs, head)
	n := int64(len(head))
	for _, p := range paths {
		line, body := []byte(p), bodies[p]
		if pt, ok := patches[p]; ok {
			line = appendPatchLine(line, pt)
			body = pt.Literal
		}
		line = append(line, '\n')
		bufs = append(bufs, line, body)
		n += int64(len(line) + len(body))
	}
	return bufs, n
}

// appendPatchLine appends the fields of a patch line after its path:
// tab, base digest, tab, prefix, tab, suffix.
func appendPatchLine(dst []byte, pt Patch) []byte {
	dst = append(dst, '\t')
	dst = append(dst, pt.Base...)
	dst = append(dst, '\t')
	dst = strconv.AppendInt(dst, int64(pt.Prefix), 10)
	dst = append(dst, '\t')
	return strconv.AppendInt(dst, int64(pt.Suffix), 10)
}

// parsePatchLine splits a body line into the path and, for a patch line
// ("path\tbase\tprefix\tsuffix"), the patch without its literal.
func parsePatchLine(line string) (string, *Patch, error) {
	path, rest, isPatch := strings.Cut(line, "\t")
	if !isPatch {
		return path, nil, nil
	}
	fields := strings.Split(rest, "\t")
	if len(fields) != 3 {
		return "", nil, fmt.Errorf("patch line for %q has %d fields after the path, want 3", path, len(fields))
	}
	prefix, err1 := parseCount(fields[1])
	suffix, err2 := parseCount(fields[2])
	if err1 != nil || err2 != nil {
		return "", nil, fmt.Errorf("patch line for %q: prefix %q or suffix %q is not a decimal number", path, fields[1], fields[2])
	}
	return path, &Patch{Base: renderplan.Digest(fields[0]), Prefix: prefix, Suffix: suffix}, nil
}

// parseCount parses a non-negative decimal int without sign or leading
// zero.
func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || s[0] == '+' || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	return n, nil
}

// readFramed reads a framed apply (see [ContentTypeApply]) of
// contentLength bytes (-1: unknown) from body, checked against l (with
// defaults applied), moving dl ahead of the manifest and of each body.
// What a body may cost derives from the manifest: its declared size must
// fit what the request may still carry, known length or not, before a
// byte of it is read, and it is read into a buffer that ends at that
// size. Every error is a *NackError, a tooLargeError, a
// *http.MaxBytesError or a read error.
func readFramed(body io.Reader, contentLength int64, l Limits, dl readDeadline) (*ApplyRequest, error) {
	br := bufio.NewReaderSize(body, frameReadBuffer)
	line, err := readLine(br, maxLengthLine)
	if err != nil {
		return nil, lineError("manifest length", err)
	}
	n, err := strconv.ParseInt(string(line), 10, 64)
	if err != nil || n < 0 || line[0] == '+' || (len(line) > 1 && line[0] == '0') {
		return nil, decodeNack(-1, "manifest length %q is not a decimal number", line)
	}
	if n > l.MaxManifestBytes {
		return nil, tooLargeNack("manifest is larger than %d bytes", l.MaxManifestBytes)
	}
	read := int64(len(line) + 1)
	if contentLength >= 0 && n > contentLength-read {
		return nil, decodeNack(-1, "manifest length %d is more than the request holds", n)
	}
	prealloc := maxUnknownPrealloc
	if contentLength >= 0 {
		prealloc = maxKnownPrealloc
	}
	dl.expect(n)
	mb, err := readN(br, int(n), prealloc)
	if err != nil {
		return nil, truncated("manifest", err)
	}
	read += n
	req, ne := decodeManifest(mb, l)
	if ne != nil {
		return nil, ne
	}
	files := req.fileIndex()
	for {
		dl.expect(0)
		line, err := readLine(br, MaxPathLen+1)
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return req, nil
		}
		if err != nil {
			return nil, lineError("body path", err)
		}
		read += int64(len(line) + 1)
		path, pt, err := parsePatchLine(string(line))
		if err != nil {
			return nil, decodeNack(-1, "%v", err)
		}
		f, err := req.bodyFile(files, path)
		if err != nil {
			return nil, err
		}
		size := f.Size
		if pt != nil {
			// The patch's literal is what the file's size leaves.
			size = f.Size - pt.Prefix - pt.Suffix
			if size < 0 {
				return nil, decodeNack(-1, "patch for %q keeps %d and %d bytes of a file of %d", f.Path, pt.Prefix, pt.Suffix, f.Size)
			}
		}
		if contentLength >= 0 && int64(size) > contentLength-read {
			return nil, decodeNack(-1, "body for %q: the manifest says %d bytes, the request holds %d more", f.Path, size, contentLength-read)
		}
		if left := l.MaxBodyBytes - read; int64(size) > left {
			return nil, tooLargeNack("body for %q: the manifest says %d bytes, more than the %d the request may still carry", f.Path, size, left)
		}
		dl.expect(int64(size))
		b, err := readN(br, size, prealloc)
		if err != nil {
			return nil, truncated("body for "+strconv.Quote(f.Path), err)
		}
		read += int64(size)
		if pt != nil {
			pt.Literal = b
			if ne := checkPatch(f, *pt); ne != nil {
				return nil, ne
			}
			req.addPatch(f.Path, *pt)
			continue
		}
		if ne := checkBody(f, b); ne != nil {
			return nil, ne
		}
		req.addBody(f.Path, b)
	}
}

// errBadLine is wrapped by readLine's errors about the line itself.
var errBadLine = errors.New("bad line")

// readLine reads up to a newline within max bytes (the newline
// included) and returns the line without it; io.EOF only at the end of
// the input. A line too long or cut short wraps errBadLine; a read error
// (a deadline, the body limit) is returned as it is.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	b, err := br.ReadSlice('\n')
	switch {
	case err == nil && len(b) <= max:
		return b[:len(b)-1], nil
	case err == nil, errors.Is(err, bufio.ErrBufferFull):
		return nil, fmt.Errorf("%w: line is too long", errBadLine)
	case errors.Is(err, io.EOF) && len(b) == 0:
		return nil, io.EOF
	case errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%w: the request ends inside a line", errBadLine)
	}
	return nil, err
}

// lineError turns what readLine says of the line what into a NACK; a
// read error passes through (wrapped), for the handler to tell a missed
// deadline or the body limit from a malformed request.
func lineError(what string, err error) error {
	switch {
	case errors.Is(err, errBadLine):
		return decodeNack(-1, "%s: %s", what, strings.TrimPrefix(err.Error(), errBadLine.Error()+": "))
	case errors.Is(err, io.EOF):
		return decodeNack(-1, "%s: the request ends before it", what)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// readN reads exactly n bytes. A body of at most prealloc bytes is read
// into a buffer of its size at once. A larger one is read into a buffer
// that doubles as the bytes arrive and, once more than a quarter of it
// has, grows to n at once: a manifest cannot make the handler allocate
// more than four times what the request sent, all the buffers of one
// body together come to at most 2n bytes (1.5n live at once), and the
// body's own buffer is exactly n bytes. (bytes.Buffer, which this
// replaces, doubles past its limit to look for the end of the input: a
// 200 MiB body cost 512 MiB.)
func readN(r io.Reader, n, prealloc int) ([]byte, error) {
	if n <= prealloc {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	b := make([]byte, 0, prealloc)
	for len(b) < n {
		if len(b) == cap(b) {
			next := 2 * cap(b)
			if next > n/2 {
				next = n
			}
			grown := make([]byte, len(b), next)
			copy(grown, b)
			b = grown
		}
		m, err := io.ReadFull(r, b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// truncated turns a short read of what into a NACK; other errors (the
// body limit) pass through.
func truncated(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return decodeNack(-1, "%s: the request ends early", what)
	}
	return err
}
