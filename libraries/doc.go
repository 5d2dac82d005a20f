// Package libraries holds HAPTIC's stock template libraries as YAML files
// embedded into the binary, and loads them as [templating.Config] values.
// It does no I/O beyond reading its embedded files and keeps no state, so
// it is safe for concurrent use.
//
// # Libraries
//
//   - base: the HAProxy skeleton. A master-worker friendly global section
//     (no daemon, hard-stop-after, an admin stats socket with expose-fd
//     listeners), the named defaults the frontends use, a stats/health
//     frontend, the HTTP (and, when certificates exist, HTTPS) frontend, and
//     a static 404 backend. The HTTP frontend routes only through maps, so
//     dynamic backends are never named in the configuration and HAProxy 3.4
//     can add and delete them at runtime.
//   - ingress: networking.k8s.io/v1 Ingresses, with their Services,
//     EndpointSlices and TLS Secrets, rendered into map entries, one dynamic
//     backend per Service port, and a crt-list.
//   - gateway: the Gateway API for one Gateway per render. Package
//     [github.com/haptic-io/haptic/gatewayapi] resolves the objects into a
//     routing model that the render gets at .extraContext.gateway; the
//     library renders one frontend per listener port from it, routing by
//     maps (docs/gateway.md). Its haproxyConfig replaces base's (it keeps
//     base's skeleton snippet), so it is not combined with ingress.
//
// Merge order is libraries first, in the order named, then the operator's
// config (see [templating.Merge]): the operator can replace any snippet,
// map or extraContext key of a library.
//
// # Routing
//
// The HTTP frontend picks a backend with map lookups only:
//
//  1. txn.hostkey: the request host (Host header without port, lower-cased)
//     looked up in maps/hosts.map; if absent, the host with its first label
//     replaced by "*" (a wildcard host "*.example.com" matches exactly one
//     label, as in Kubernetes).
//  2. txn.backend: the key hostkey+path looked up in maps/paths-exact.map
//     (Exact paths, map_str), then maps/paths-prefix-exact.map (Prefix paths
//     matched exactly, map_str), then maps/paths-prefix.map (Prefix paths
//     plus "/", map_beg). map_str and map_beg use trees: map_beg returns the
//     longest matching prefix whatever the file order (HAProxy indexes beg
//     patterns in a prefix tree; checked with real traffic on 3.0 and 3.4),
//     so every map is unordered and can be updated entry by entry.
//  3. If nothing matched, the same three lookups with hostkey "*" (rules
//     without a host), then the key "@default" in paths-exact.map (the
//     oldest Ingress's defaultBackend).
//  4. use_backend %[var(txn.backend)]; otherwise the static 404 backend.
//     A map value naming a backend that does not exist (yet) also ends
//     there.
//
// Kubernetes Prefix matching is element-wise: Prefix /foo matches /foo and
// /foo/bar but not /foobar. A Prefix path p (trailing slash removed) is
// therefore stored as host+p in paths-prefix-exact.map and as host+p+"/" in
// paths-prefix.map; Prefix / is only host+"/". Exact paths go to
// paths-exact.map, which is looked up first, so an Exact path wins over an
// equal Prefix path. ImplementationSpecific is treated as Prefix. Each path
// adds at most two entries: the maps grow linearly with the objects.
//
// Paths are matched as the client sent them, without normalization
// ("/a/../b" or "//a" are not rewritten): HAProxy's normalize-uri is still
// experimental in 3.0 to 3.4. An operator who wants it can add the lines
// through the base-global-* (expose-experimental-directives) and
// base-frontend-http-* extension points.
//
// Conflicts are resolved by age: Ingresses are processed oldest first
// (creationTimestamp, then namespace/name) and the first map entry of a key
// wins; a later Ingress claiming the key with another backend gets a
// MapKeyConflict problem.
//
// # Untrusted input
//
// Hosts, paths and names from objects only ever reach map files and the
// crt-list, and only after validation: a host must be lower-case DNS
// characters (optionally "*."), a path an absolute path of RFC 3986 path
// characters, Service names and ports DNS labels. Anything else is dropped
// with a problem (HostInvalid, PathInvalid, BackendInvalid,
// PathTypeInvalid, SecretInvalid), so quotes, spaces, newlines or "%[" in
// an object cannot change the configuration's meaning; ";" is a legal path
// character and stays inert inside a map key. Annotations other than
// kubernetes.io/ingress.class are never read. extraContext values (operator
// input) are checked before they reach haproxy.cfg; a bad one fails the
// render.
//
// Field types are not trusted either: the API server enforces the Ingress
// schema, but a manifest file, a custom resource without schema or an
// annotation can hold anything. An Ingress the templates fail on (a
// numeric host, rules that are not a list) is left out whole with a
// RenderFailed problem naming it, and the others render; one without
// metadata.namespace is a NamespaceMissing problem.
//
// # Paths
//
// haproxy.cfg refers to maps/<name>, certs/<name> and unix@stats.sock
// relative to HAProxy's working directory, which must be the base
// directory of the rendered tree (the agent and the tests run HAProxy so).
package libraries
