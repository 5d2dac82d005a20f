package v1alpha1

// defaultLibraries backs DefaultLibraries; the CRD's schema has the same
// default.
var defaultLibraries = []string{"base", "ingress"}

// DefaultLibraries returns the stock libraries merged before a spec whose
// Libraries is unset: base, then ingress.
func DefaultLibraries() []string {
	return append([]string(nil), defaultLibraries...)
}

// LibraryNames returns the stock libraries to merge before the spec, in
// order: Libraries, or [DefaultLibraries] when it is unset (nil). The
// result is a copy.
func (s *HAProxyTemplateConfigSpec) LibraryNames() []string {
	if s.Libraries == nil {
		return DefaultLibraries()
	}
	return append([]string{}, s.Libraries...)
}
