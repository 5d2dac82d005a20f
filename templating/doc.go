// Package templating renders HAProxy configuration from templates and
// Kubernetes objects: a [Config] (watched resources, templates, tests) is
// compiled once into an [Engine], and each [Engine.Render] turns a [Store]
// of unstructured objects into a [renderplan.Output] — haproxy.cfg, map
// files, certificates, general files — plus the [renderplan.Plan] that
// describes them, and a list of [Problem]s for bad user input.
//
// The package is pure: it does no I/O except [LoadConfig], which reads a
// file, and it never reads the clock, the environment, the network or a
// random source. Objects come from a [Store], a small interface that
// package [github.com/haptic-io/haptic/store] implements; its sources (a
// directory, Kubernetes informers) live elsewhere. An [Engine] is safe for
// concurrent renders; a [store.Snapshot] gives renders an immutable view.
// A render runs
// on the caller's goroutine, except renderEach, which starts up to
// GOMAXPROCS goroutines and waits for them before returning. Templates
// execute on internal/gotemplate, Go's text/template with allocation-free
// fast paths for JSON-shaped data (same results; upstream's tests and a
// differential test against text/template hold it to that). The
// haproxy -c checker, which runs a program, is rendergate's
// [github.com/haptic-io/haptic/rendergate.HAProxyChecker].
//
// # Config
//
// The YAML shape is the future custom resource's spec:
//
//	watchedResources:
//	  ingresses: {apiVersion: networking.k8s.io/v1, resource: ingresses, indexBy: ["metadata.namespace", "metadata.name"]}
//	  services:  {apiVersion: v1, resource: services, indexBy: ["metadata.namespace", "metadata.name"]}
//	  endpoints: {apiVersion: discovery.k8s.io/v1, resource: endpointslices,
//	              indexBy: ["metadata.namespace", "metadata.labels[\"kubernetes.io/service-name\"]"]}
//	haproxyConfig: {template: "..."}
//	snippets:        {name: {template: "..."}}
//	maps:            {hosts.map: {template: "...", ordered: false}}
//	files:           {error-503.http: {template: "...", reloadOnChange: true}}
//	sslCertificates: {name: {template: "..."}}
//	extraContext:    {ingressClass: haptic}
//	validationTests: {name: {fixtures: {...}, extraContext: {...}, assertions: [...]}}
//
// Snippet names must not be haproxy.cfg or start with map:, file:, cert:
// or each: (the names of the other templates of an [Engine]).
//
// [ParseConfig] is strict: an unknown or duplicate field is an error (field
// names match case-insensitively, as encoding/json does). YAML is 1.1, as
// in kubectl: an unquoted y, n, yes, no, on or off is a boolean, so quote
// such keys and values. Libraries and the
// operator's config combine with [Merge], operator last: later same-named
// entries win, haproxyConfig comes from the last config that sets it.
//
// # Store and objects
//
// Objects are JSON-shaped map[string]any, with integral numbers as int64
// (as in Kubernetes' unstructured objects); package store decodes,
// indexes and snapshots them. Fetch with fewer keys than indexBy
// expressions matches by prefix. ListBy "expr" returns List sorted by an
// expression's value (ListBy "metadata.creationTimestamp": oldest first,
// ties in namespace/name order, objects without the field last). Two
// optional interfaces, checked the way net/http checks for an
// [net/http.Flusher], let a store do better than the plain [Store]: a
// [SortedStore] keeps sorted lists across snapshots (so ListBy costs
// nothing per render), and a [ChangeTracker] says what changed since the
// previous render (so renderEach re-checks only the backends whose
// Services or EndpointSlices changed). [store.Snapshot] implements both.
// List, Fetch and ListBy return shared slices: never modify them.
// Templates must never modify objects (sprig's set, unset and merge on an
// object would change the store).
//
// # Template data and functions
//
// Templates are Go text/template with sprig v3, minus the functions in
// [RemovedSprigFuncs] (environment, network, clock, randomness); keys and
// values return sorted results. A missing key is an error
// (text/template's missingkey=error), never "<no value>" in the output:
// read optional fields with index (index .spec "tls" is nil when
// missing), hasKey, dig or get, and required ones as fields, so that an
// object without them is a problem (inside renderEach) or fails the
// render. The root data is:
//
//	.resources.<alias>   .List, .Get ns name, .Fetch key…, .ListBy expr
//	                     (see [Resources])
//	.extraContext        the config's extraContext (tests may override keys)
//	.cache               per-render cache: .cache.Get "k", .cache.Set "k" v
//	.paths               {maps: "maps", certs: "certs", general: "general"}
//
// Composition: render "name" ctx returns a snippet's output;
// renderGlob "prefix-*" ctx renders every matching snippet in name order,
// concatenated (how libraries contribute to extension points);
// renderEach "name" list renders a snippet once per item (dot = the item)
// and returns the outputs concatenated in list order: items run in
// parallel on up to GOMAXPROCS goroutines (chunks of at least 64), and
// their side effects (mapEntry, problem, claim) are recorded per item and
// applied afterwards in list order, so the result equals a sequential
// range. Inside it a snippet may use render, renderGlob, cacheGet (read
// only), problem, mapEntry, claim, backend and the stateless functions; calling
// any other author-API function is a render error, and it must not modify
// shared values (set on a cached dict). Each item is the boundary of bad
// objects: an item whose execution fails (a field of the wrong type, a
// missing key) is left out with everything it wrote and recorded, a
// [ReasonRenderFailed] problem names it (the object's [ObjectRef] when the
// item is an object, else its "object" key, else its position), and the
// other items render; fail still aborts the render from there. A failed
// item runs again in every render. Each item's output and effects
// depend only on the item, the cacheGet values it read and the Services
// and EndpointSlices its backends' servers came from, so an Engine
// replays an item it rendered before while the item is the same store
// object and those inputs are unchanged: a render after one object
// changed executes that object's item alone. Items that read the
// store through a cached .resources, and items that are not store
// objects, always run. Store objects and values passed to claim are
// read-only: a replayed item hands out the same values again (set, unset
// and merge refuse a claimed dict). claim "registry" key value records value under key
// unless already there (first claim wins; from renderEach, in list order)
// and returns ""; claimed "registry" returns the registry as a dict, read
// only (set, unset and merge refuse it: only claim changes it);
// memo "name" key ctx renders a snippet once per key and render (its side
// effects happen once, so output holding backend tokens must still be
// written exactly once);
// cacheGet "k" / cacheSet "k" v keep any value for the rest of the render;
// fail "msg" aborts the render with a [*FailError]; toJSON v; problem
// object reason message reports a [Problem] (name a watched object
// "Kind namespace/name", or "Kind name" when cluster-scoped, and the
// problem carries its [ObjectRef]); haproxyName s makes s a legal
// HAProxy name ([SanitizeName]); dnsNameProblem s says why s is not a
// lower-case DNS name, "*."-prefixed or not ([DNSNameProblem]), and is
// "" for one; pathProblem path max says why path is not an absolute URI
// path that fits in max bytes of a map line ([PathProblem]); haproxyQuote s returns s as one
// double-quoted config word (backslash, double quote and $ escaped;
// control characters refused), and haproxyFormatQuote s does the same for
// log-format arguments (set-header values…), doubling '%' as well; mapPath, certPath and filePath give
// maps/<n>, certs/<n> and general/<n>.
//
// The author API records what the plan needs to know. Its dict arguments
// are strict: an unknown key or a wrong type is a render error. A bad value
// (an object's field that would produce an invalid name, line or map entry)
// is a [Problem]: that backend, server or entry is left out and the render
// goes on.
//
//   - backend (dict "name" n ["guid" g] ["mode" "http"|"tcp"] ["balance" b]
//     ["timeouts" (dict "connect" "5s" …)] ["options" (list …)]
//     ["defaultServer" s] ["profileLines" (list …)] ["servers" list]
//     ["service" (dict "namespace" ns "service" name "port" p)]
//     ["body" (list …)] ["object" o]) records a backend and returns a
//     token that must be written on a line of its own in haproxy.cfg. The
//     mode, balance, timeouts (sorted by name), options, defaultServer and
//     profileLines form the backend's profile lines; backends with equal
//     profile lines share one "defaults haptic-be-<digest>" section
//     ([renderplan.ProfileName]). Body lines make a backend structural;
//     without them it is dynamic. guid defaults to "haptic:be:<name>" (or a
//     digest of the name when too long). Servers are dicts {name, address,
//     port, weight (default 1), check, disabled, keywords (list)}. A
//     "service" key adds the servers backendServers would return for that
//     dict without building server dicts: the fast path when no server
//     needs changing (about 7% fewer allocations per Ingress). A
//     duplicate backend name is a render error; a name starting with
//     "haptic-be-" (the profile prefix) or a guid already taken is a
//     problem (first comer wins). object names the object in problems.
//     backend takes further dicts after the first; a later dict's keys
//     override an earlier one's, so settings shared by many backends are
//     built once: backend $shared (dict "name" n "service" …). Profiles are
//     built, checked and digested once per render and shape.
//   - backendServers (dict "namespace" ns "service" name "port" p
//     ["object" o]) returns the server dicts {name, address, port, weight}
//     of the Service's ready endpoints (conditions.ready absent counts as
//     ready). p is the Service port's name or number; the EndpointSlice port
//     with the Service port's name gives the target port. Servers are named
//     after targetRef.name, else "ep-<address with . and : as ->", made
//     HAProxy-legal, sorted, de-duplicated. It reads the aliases watching
//     v1 services and discovery.k8s.io endpointslices; the slices are
//     fetched through the index when that alias's indexBy starts with
//     metadata.namespace and the kubernetes.io/service-name label,
//     otherwise grouped once per render. A missing Service or port is a
//     problem and gives no servers.
//   - registerMap (dict "name" n ["ordered" b]) declares maps/<n> and
//     returns that path; the config's maps are registered before
//     rendering starts. mapEntry "n" key value ["object"] adds an entry
//     and returns "": the first write of a key wins, a later different
//     value is a MapKeyConflict problem (so iterate objects oldest first to
//     let the oldest win). Keys with whitespace, control characters or a
//     leading '#', and values with control characters (tab aside) or
//     leading/trailing blanks, are MapEntryInvalid problems, never
//     written; an entry longer than HAProxy reads as one line and one
//     command (see Bounds below) is a ValueTooLong problem. A config map
//     template's output adds one entry per line
//     "key value" (blank and '#' lines skipped); use mapEntry for values
//     that come from objects. Unordered maps are sorted by key.
//   - file (dict "name" n "content" c ["reloadOnChange" b]) records
//     general/<n>; cert (dict "name" n "pem" p ["object" o]) records
//     certs/<n> (text without a PEM block is a problem and returns "");
//     crtList (dict "name" n "content" c) records the crt-list certs/<n>,
//     leaving out lines too long (ValueTooLong problems). Each returns the
//     path. The config's files and sslCertificates render the same way (an
//     empty certificate rendering writes no file).
//   - tuneBufsize n declares that haproxy.cfg sets tune.bufsize n and
//     returns n (write "tune.bufsize {{ tuneBufsize $n }}" in the global
//     section): the plan carries it ([renderplan.Plan.BufSize]). It must
//     come before any map entry, crt-list or renderEach.
//
// # Bounds
//
// HAProxy reads a map-file line into 16 KiB and a runtime command into
// tune.bufsize; a longer map line is cut and its rest read as an entry of
// its own. So every value the author API takes is bounded: map entries
// and crt-list lines by [renderplan.MaxLine] of the render's tune.bufsize
// (12288 bytes by default, the runtime command included), names, file
// paths and server keywords by renderplan's fixed bounds. A value beyond
// them is a problem (ValueTooLong, or the element's Invalid reason for a
// name) and is left out. mapLineMax "n" and crtListLineMax "n" return how
// many bytes a line of map or crt-list n may take (a key, a space and a
// value without bytes the runtime API escapes), so that a library can say
// which of its fields is too long. Server names from endpoints are cut to
// [renderplan.MaxNameLen] by haproxyName; an EndpointSlice port out of
// 1-65535 is an EndpointInvalid problem and its endpoints are left out.
//
// Paths are relative to the HAProxy base directory; HAProxy runs with its
// working directory there, so haproxy.cfg can use them as they are.
//
// # Worked example
//
// testdata/example.yaml is a complete config using every author-API
// function; its validation tests pass and its output passes haproxy -c
// on HAProxy 3.0, 3.2 and 3.4 (haproxy_integration_test.go). Its
// templates:
//
//	haproxyConfig:
//	  template: |
//	    global
//	        hard-stop-after 30s
//	        {{- render "global-extra" . }}
//	    defaults base
//	        mode http
//	        timeout connect 5s
//	        timeout client 30s
//	        timeout server 30s
//	        errorfile 503 {{ file (dict "name" "503.http" "content" "HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n") }}
//	    frontend fe_http from base
//	        bind 127.0.0.1:18080
//	        # context: {{ toJSON .extraContext }}
//	        http-request redirect location %[req.hdr(host),lower,map({{ mapPath "redirects.map" }})] if { req.hdr(host),lower,map({{ mapPath "redirects.map" }}) -m found }
//	        use_backend %[req.hdr(host),host_only,lower,map({{ registerMap (dict "name" "hosts.map") }})]
//	        default_backend be_default
//	        http-request set-header X-Ingress-Class {{ haproxyFormatQuote .extraContext.ingressClass }}
//	        {{- renderGlob "frontend-extra-*" . }}
//	    {{- with .resources.secrets.Get "default" "tls" }}
//	    {{- $pem := printf "%s%s" (index .data "tls.crt" | b64dec) (index .data "tls.key" | b64dec) }}
//	    frontend fe_https from base
//	        bind 127.0.0.1:18443 ssl crt-list {{ crtList (dict "name" "list.txt" "content" (printf "%s\n" (cert (dict "name" "default.pem" "pem" $pem "object" "Secret default/tls")))) }}
//	        use_backend %[req.hdr(host),host_only,lower,map({{ mapPath "hosts.map" }})]
//	        default_backend be_default
//	    {{- end }}
//	    backend be_default from base
//	        http-request return status 404 content-type text/plain string "no route"
//	    {{- range .resources.ingresses.List }}
//	    {{- if eq (index .spec "ingressClassName" | default "") $.extraContext.ingressClass }}
//	    {{ memo "ingress" (printf "%s/%s" .metadata.namespace .metadata.name) . }}
//	    {{- end }}
//	    {{- end }}
//	    {{ backend (dict "name" "be_stick" "body" (list "stick-table type ip size 1m" "stick on src")) }}
//	    {{ backend (dict "name" "be_web_fast" "service" (dict "namespace" "default" "service" "web" "port" 80)) }}
//	snippets:
//	  ingress:
//	    template: |
//	      {{- $ing := . }}{{ $obj := printf "Ingress %s/%s" .metadata.namespace .metadata.name }}
//	      {{- if not (index .spec "rules") }}{{ fail (printf "%s has no rules" $obj) }}{{ end }}
//	      {{- range .spec.rules }}{{ $host := index . "host" }}
//	      {{- if not $host }}{{ problem $obj "HostMissing" "a rule without host is skipped" }}{{ continue }}{{ end }}
//	      {{- range .http.paths }}{{ $svc := .backend.service }}{{ $port := or (index $svc.port "name") $svc.port.number }}
//	      {{- $name := haproxyName (printf "be_%s_%s_%v" $ing.metadata.namespace $svc.name $port) }}
//	      {{- mapEntry "hosts.map" $host $name $obj }}
//	      {{- if not (cacheGet $name) }}{{ $_ := cacheSet $name true }}
//	      {{ backend (dict "name" $name "balance" "roundrobin" "timeouts" (dict "connect" "5s" "server" "30s")
//	          "options" (list "httpchk GET /healthz") "defaultServer" "inter 2s" "object" $obj
//	          "servers" (backendServers (dict "namespace" $ing.metadata.namespace "service" $svc.name "port" $port "object" $obj))) }}
//	      {{- end }}
//	      {{- end }}{{ end }}
//	  global-extra:
//	    template: |
//	      {{- print "\n    maxconn 10000" }}
//	  frontend-extra-via:
//	    template: |
//	      {{- print "\n    http-request set-header X-Via haptic" }}
//	maps:
//	  redirects.map:
//	    ordered: true
//	    template: |
//	      # key value lines
//	      old.example.com https://new.example.com/
//	sslCertificates:
//	  fallback.pem:
//	    template: '{{ with .resources.secrets.Get "default" "fallback" }}{{ index .data "tls.crt" | b64dec }}{{ end }}'
//
// A backend for a Service port is recorded once (cacheGet/cacheSet guard),
// its host goes to a map with mapEntry, and the map path comes from
// registerMap; the stick-table backend is structural because of its body
// lines; renderGlob "frontend-extra-*" is an extension point other
// libraries fill; memo renders each Ingress once per key; fail aborts
// on an Ingress without rules (a validation test asserts that with the
// rendering_error target).
//
// # Assembly
//
// After the templates ran, the assembler replaces each backend token line
// with [renderplan.BackendText] of the recorded backend and places every
// profile's section ([renderplan.ProfileText], sorted by name) once,
// immediately before the first backend section; it then builds the plan
// with [renderplan.NewOutput]. Sections after the profiles must name their
// defaults with "from" (HAProxy's implicit "last defaults" would otherwise
// be a backend profile). A token written twice, written inside a line, or
// never written is a render error; so is a NUL byte elsewhere in
// haproxy.cfg.
//
// # Determinism
//
// Stores list objects sorted by namespace and name, text/template ranges
// over maps in key order, every recorded collection is sorted before the
// plan is built, and the non-deterministic sprig functions are gone: the
// same engine, store contents and options give byte-identical files and
// the same plan ID.
//
// # Re-rendering after a change
//
// An Engine keeps, per renderEach call, its items' results in list order
// and their fold: for every map key, claim key and backend, the items'
// writes in list order. The next render's same call matches its items to
// the previous ones in step, executes only the items that changed, and
// updates the fold by removing the writes of the items that went and
// adding those of the items that came. When the render had written none
// of those maps, registries and backends before the call (the usual
// shape: a pass over the objects into maps and claims, then one over the
// claimed backends), the render takes the fold as it is, which is what
// replaying every item in order would record; otherwise it replays the
// items one by one. A render after one object changed thus costs the
// changed items plus a walk over the lists, not a rebuild. Calls that
// list the same item twice, or reorder items they listed before, replay.
//
// # Validation tests
//
// [RunTests] renders each of the config's validationTests from its own
// fixtures and checks its assertions (contains, not_contains, equals,
// match_count, match_order, deterministic, haproxy_valid) against the
// targets haproxy.cfg, map:<name>, file:<name>, cert:<name>, problems and
// rendering_error. haproxy_valid goes through a [renderplan.Checker].
package templating
