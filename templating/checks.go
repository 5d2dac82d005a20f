package templating

import "github.com/haptic-io/haptic/renderplan"

// Values that come from objects are checked with renderplan's Check
// functions ([renderplan.CheckName] and its siblings) at the author-API
// call, so that a bad one becomes a [Problem] before it could make the
// whole plan invalid.

// SanitizeName turns s into an HAProxy-legal proxy or server name: every
// byte outside A-Z a-z 0-9 _ . : - becomes '_', and an empty s becomes "_".
// Distinct inputs can map to the same name; callers that need uniqueness
// must check it. It is the template function haproxyName.
func SanitizeName(s string) string {
	if renderplan.CheckName(s) == nil {
		return s
	}
	if s == "" {
		return "_"
	}
	b := []byte(s)
	for i := range b {
		// A one-byte name is legal exactly when its byte is.
		if renderplan.CheckName(s[i:i+1]) != nil {
			b[i] = '_'
		}
	}
	return string(b)
}
