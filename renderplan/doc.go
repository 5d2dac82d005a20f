// Package renderplan is the render plan: the structure of one rendered
// HAProxy file tree, as pure data. It does no I/O, keeps no global state,
// never logs and reads no clock; every function is a deterministic function
// of its arguments, and every slice it returns is sorted.
//
// # What a plan holds
//
// A [Plan] partitions haproxy.cfg byte for byte into [Section]s (core text,
// named [Profile]s, [Backend]s), lists the backends with their [Server]s,
// the [Map]s with their entries, and every [File] of the tree with its
// digest. The controller builds it in the same pass that renders the files,
// so no HAProxy configuration parser is needed to know what changed.
//
// # Building plans
//
// [NewOutput] assembles an [Output] (files and plan) from rendered [Piece]s;
// the template assembler uses it, through a [Cache], which builds the
// same output reusing what it derived from the backends and maps of its
// previous build that come back unchanged. [Builder] is the small API for building
// an Output by hand in Go, without templates. [BackendText], [ProfileText]
// and [MapText] are the one renderer of their sections and files, and
// [ProfileName] names the profile shared by backends of one shape.
//
// # Identity and encoding
//
// [Plan.Encode] writes the canonical encoding (deterministic JSON) and
// [Plan.ID] is its digest ([DigestOf], xxHash64): same inputs give
// byte-identical files and the same ID. [Output.ID] computes the ID of an
// output's plan once and keeps it. [Decode] reads an encoding back
// strictly; Decode(Encode(p)) is [Plan.Equal] to p and has its ID.
// [Plan.Validate] checks a plan's consistency and HAProxy-legality and
// reports every problem at once. [Checker] is the interface of what
// validates an output with HAProxy itself; this package declares it and
// implements none (package rendergate does).
//
// # Bounds
//
// HAProxy reads a map file into a 16 KiB buffer and a runtime command
// into one of tune.bufsize: a longer line is cut, and its rest becomes an
// entry nobody wrote. Every map entry and crt-list line of a plan fits in
// [MaxLine] of the tune.bufsize the plan declares ([Plan.BufSize],
// [WithBufSize]), as [MapLineLen] and [CrtListLineLen] count it; names,
// paths and server keywords have fixed bounds ([MaxNameLen],
// [MaxPathLen], [MaxKeywordsLen]). [CheckMapEntry] and [CheckLines] let
// code that takes outside input refuse a value before it makes a plan
// invalid.
//
// # Immutability and concurrency
//
// A Plan or Output is a whole snapshot: once built, nobody modifies it, and
// any number of goroutines may read it concurrently. The lookups
// ([Plan.Backend], [Plan.Map], [Plan.File]) return pointers into the plan
// for reading only; to derive a changed plan, [Plan.Clone] it first.
// Outputs built by one Cache share the memory of unchanged backends
// and maps. A [Builder] or a Cache is for one goroutine at a time.
package renderplan
