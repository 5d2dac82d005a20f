package templating

import "maps"

// Merge combines configs in order: libraries first, the operator's config
// last. For every named collection (watchedResources, snippets, maps,
// files, sslCertificates, validationTests, and the top-level keys of
// extraContext) a later config's entry replaces an earlier entry of the same
// name; haproxyConfig comes from the last config that sets it. Nil configs
// are skipped. The inputs are not modified; the result shares their leaf
// values (template text, extraContext values), which must be treated as
// read-only.
func Merge(base *Config, overlays ...*Config) *Config {
	out := &Config{}
	for _, c := range append([]*Config{base}, overlays...) {
		if c == nil {
			continue
		}
		out.WatchedResources = mergeMap(out.WatchedResources, c.WatchedResources)
		if c.HAProxyConfig != nil {
			hc := *c.HAProxyConfig
			out.HAProxyConfig = &hc
		}
		out.Snippets = mergeMap(out.Snippets, c.Snippets)
		out.Maps = mergeMap(out.Maps, c.Maps)
		out.Files = mergeMap(out.Files, c.Files)
		out.SSLCertificates = mergeMap(out.SSLCertificates, c.SSLCertificates)
		out.ExtraContext = mergeMap(out.ExtraContext, c.ExtraContext)
		out.ValidationTests = mergeMap(out.ValidationTests, c.ValidationTests)
	}
	return out
}

func mergeMap[V any](dst, src map[string]V) map[string]V {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = make(map[string]V, len(src))
	}
	maps.Copy(dst, src)
	return dst
}
