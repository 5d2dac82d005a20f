package renderplan

import (
	"bytes"
	"fmt"
)

// What HAProxy reads as one line or one command, measured on 3.0, 3.2 and
// 3.4 (bounds_integration_test.go holds the first three numbers to the
// real binaries):
//
//   - a map file is read line by line into a buffer of 16384 bytes,
//     whatever tune.bufsize says (HAProxy reads it while it parses the
//     configuration, before the configured size applies): a line of up to
//     16383 bytes (without its newline) is one entry; a longer one is cut
//     there, and the rest of the line becomes an entry of its own, as if
//     it were a line of the file;
//   - a runtime API command (line, payload and the empty line ending a
//     payload) is taken up to tune.bufsize-1 bytes on 3.0 and tune.bufsize
//     bytes on 3.2 and 3.4; a longer one is refused;
//   - a crt-list line is read up to 65534 bytes, whatever tune.bufsize; a
//     longer one fails the configuration;
//   - a configuration line has no limit below 64 MiB.
//
// The agent sends no command longer than three quarters of tune.bufsize
// (haproxysock), and a map entry or crt-list line must reach HAProxy as a
// command as well as a file line, so [MaxLine] bounds the command that
// carries it, and never above the longest map-file line. A value that made a longer line would be refused at
// runtime, and the reload that follows would load it cut in two: the
// second half would be an entry nobody wrote.

// DefaultBufSize is HAProxy's default tune.bufsize, in bytes: the size a
// plan that declares none ([Plan.BufSize] 0) is checked against.
const DefaultBufSize = 16384

// MinBufSize and MaxBufSize bound the tune.bufsize a plan may declare.
const (
	MinBufSize = 4096
	MaxBufSize = 1 << 26
)

// MaxNameLen is the longest backend, server or profile name, in bytes;
// [MaxPathLen] the longest file path; [MaxKeywordsLen] the most bytes a
// server's keywords may take, spaces between them included. With them,
// every command a backend or server needs ("add backend <name> from
// <profile> guid <guid>", "add server <backend>/<server> <address>:<port>
// weight <w> <keywords…>") fits in [MaxLine] of [MinBufSize].
const (
	MaxNameLen     = 512
	MaxPathLen     = 1024
	MaxKeywordsLen = 1024
)

// maxMapFileLine is the longest map-file line, without its newline.
const maxMapFileLine = 16383

// Overheads of the commands that carry a map entry or crt-list line,
// around the line and the file's path: "add map @<version> <path> <<\n",
// the line, "\n\n" (a version has at most ten digits: HAProxy counts
// them in an unsigned int), and "add ssl crt-list <path> <<\n", the line,
// "\n\n".
const (
	mapLineOverhead     = len("add map @4294967295 ") + len(" <<\n") + len("\n\n")
	crtListLineOverhead = len("add ssl crt-list ") + len(" <<\n") + len("\n\n")
)

// MaxLine returns the most bytes a map entry or crt-list line may count
// ([MapLineLen], [CrtListLineLen]) in a plan for an HAProxy with
// tune.bufsize bufSize (0 means [DefaultBufSize]): three quarters of it,
// the longest command the agent sends, but no more than the 16383 bytes
// of the longest map-file line. With the default, 12288.
func MaxLine(bufSize int) int {
	if bufSize <= 0 {
		bufSize = DefaultBufSize
	}
	return min(bufSize/4*3, maxMapFileLine)
}

// MapLineLen returns what the entry key, value of the map at path counts
// against [MaxLine]: the length of the longest runtime command that
// carries it, with room to spare. That is "add map @<version> <path> <<",
// a newline, the line "<key> <value>" as the map file holds it, counting
// every byte the runtime API escapes (space, backslash, ';' and quotes;
// the separating space included) twice, and the empty line that ends
// the payload. No command the agent builds for the entry ("add map",
// "set map", with a version or not, as a payload or not) is longer.
func MapLineLen(path, key, value string) int {
	return mapLineOverhead + len(path) + escapedLen(key) + 2 + escapedLen(value)
}

// CrtListLineLen returns what line, a line of the crt-list at path,
// counts against [MaxLine]: the length of "add ssl crt-list <path> <<",
// a newline, the line and the empty line that ends the payload.
func CrtListLineLen(path, line string) int {
	return crtListLineOverhead + len(path) + len(line)
}

// escapedLen is the length of s once the runtime API's escaping put a
// backslash before each space, backslash, ';' and quote.
func escapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\\', ';', '\'', '"':
			n++
		}
	}
	return n
}

// lineTooLong says how much line counts against max and why that is too
// much, or returns "".
func lineTooLong(n, max, bufSize int) string {
	if n <= max {
		return ""
	}
	if bufSize <= 0 {
		bufSize = DefaultBufSize
	}
	return fmt.Sprintf("makes a line of %d bytes with the runtime command that carries it, more than the %d allowed with tune.bufsize %d", n, max, bufSize)
}

// mapEntryTooLong says why the entry key, value of the map at path does
// not fit in max, or returns "". Short entries are decided without
// counting escapes: an entry can count at most twice its length.
func mapEntryTooLong(path, key, value string, max, bufSize int) string {
	if mapLineOverhead+len(path)+2*(len(key)+len(value)+1) <= max {
		return ""
	}
	return lineTooLong(MapLineLen(path, key, value), max, bufSize)
}

// CheckMapEntry checks that the entry key, value of the map at path fits
// in [MaxLine] of bufSize (0 means [DefaultBufSize]). [Plan.Validate]
// applies it to every entry of a plan's maps; the error says how long
// the line is and the limit.
func CheckMapEntry(path, key, value string, bufSize int) error {
	return checkErr(mapEntryTooLong(path, key, value, MaxLine(bufSize), bufSize))
}

// CheckLines checks every line of body, the content of the file of kind
// kind at path, against [MaxLine] of bufSize (0 means [DefaultBufSize]):
// for a map file, as [MapLineLen] counts an entry (the line as the file
// holds it); for a crt-list, as [CrtListLineLen] counts a line. Files of
// other kinds have no lines to check. The error is a [*LineError] for the
// first line that is too long.
func CheckLines(kind FileKind, path string, body []byte, bufSize int) error {
	if kind != FileMap && kind != FileCrtList {
		return nil
	}
	if n, problem := longLine(kind, path, body, bufSize); problem != "" {
		return &LineError{Line: n, Problem: problem}
	}
	return nil
}

// LineError is a line [CheckLines] refuses: its number, counting from 1,
// and what is wrong with it.
type LineError struct {
	Line    int
	Problem string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d %s", e.Line, e.Problem) }

// longLine returns the number of the first line of body that is too long
// for a file of kind at path, and why, or 0 and "".
func longLine(kind FileKind, path string, body []byte, bufSize int) (int, string) {
	max := MaxLine(bufSize)
	// A line shorter than short fits whatever it holds.
	short := (max - mapLineOverhead - len(path)) / 2
	if kind == FileCrtList {
		short = max - crtListLineOverhead - len(path)
	}
	for n := 1; len(body) > 0; n++ {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		if len(line) <= short {
			continue
		}
		if problem := lineProblemOf(kind, path, string(line), max, bufSize); problem != "" {
			return n, problem
		}
	}
	return 0, ""
}

// lineProblemOf checks one line of a map or crt-list file.
func lineProblemOf(kind FileKind, path, line string, max, bufSize int) string {
	if kind == FileCrtList {
		return lineTooLong(CrtListLineLen(path, line), max, bufSize)
	}
	return lineTooLong(mapLineOverhead+len(path)+escapedLen(line), max, bufSize)
}
