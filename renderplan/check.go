package renderplan

import "errors"

// The Check functions export the rules [Plan.Validate] applies to single
// strings, so that code building a plan from outside input can refuse a
// bad value before it makes the whole plan invalid. Each returns nil if s
// is legal, or an error whose lower-case message says what is wrong
// without naming the value or its role ("is empty", "contains
// whitespace"); callers add that context, as in
//
//	if err := renderplan.CheckName(n); err != nil {
//		return fmt.Errorf("backend name %q %w", n, err)
//	}

// CheckName checks a backend, server or profile name: non-empty, with only
// the bytes HAProxy allows in proxy and server names (A-Z a-z 0-9 _ . : -).
func CheckName(s string) error { return checkErr(nameProblem(s)) }

// CheckGUID checks a backend or server guid: a name (see [CheckName]) of
// at most [MaxGUIDLen] bytes.
func CheckGUID(s string) error { return checkErr(guidProblem(s)) }

// CheckPath checks a file path such as a map or file path of the plan:
// non-empty, relative to the HAProxy base directory, clean
// (path.Clean(p) == p), not the base directory itself, with no ".."
// element, whitespace or control character, in valid UTF-8.
func CheckPath(s string) error { return checkErr(pathProblem(s)) }

// CheckLine checks a line rendered verbatim inside a section, such as a
// backend body or profile line: not blank, with no newline, carriage return
// or NUL, in valid UTF-8.
func CheckLine(s string) error { return checkErr(lineProblem(s)) }

// CheckToken checks one word of a server line or directive, such as a
// server keyword or a timeout value: non-empty, with no whitespace, control
// character, quote, backslash or '#', in valid UTF-8.
func CheckToken(s string) error { return checkErr(tokenProblem(s)) }

// CheckAddress checks a [Server] address: an IP address without a zone,
// in canonical form ("10.0.0.1", "2001:db8::1").
func CheckAddress(s string) error { return checkErr(addressProblem(s)) }

// CheckMapKey checks the key of a [MapEntry]: non-empty, not starting with
// '#', with no whitespace or control character, in valid UTF-8.
func CheckMapKey(s string) error { return checkErr(mapKeyProblem(s)) }

// CheckMapValue checks the value of a [MapEntry]: non-empty, with no
// control character other than tab, not starting or ending with a space or
// tab, in valid UTF-8.
func CheckMapValue(s string) error { return checkErr(mapValueProblem(s)) }

// checkErr turns a problem ("" for none) into an error.
func checkErr(problem string) error {
	if problem == "" {
		return nil
	}
	return errors.New(problem)
}
