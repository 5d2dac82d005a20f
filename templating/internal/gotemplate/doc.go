// Package gotemplate is Go 1.26's text/template with fast paths for the
// data HAPTIC renders: JSON-shaped objects (map[string]any) and the common
// function signatures of sprig and the author API. It exists because a
// render spends most of its time in text/template's reflection: field
// steps on map[string]any allocate twice through MapIndex, and every
// function call goes through reflect.Value.Call.
//
// Concurrency and I/O are as in text/template: a parsed Template is safe
// for concurrent Execute calls; Execute writes to the given io.Writer.
//
// # Changes from upstream
//
// The package is upstream text/template (exec.go, funcs.go, helper.go,
// option.go, template.go, and upstream's tests), BSD-licensed (LICENSE),
// changed only where marked: the package name, the fmtsort import (a copy
// of internal/fmtsort), and hooks in exec.go, each marked "HAPTIC:", most
// into fast.go — evalField tries [fastMapField] and evalCall tries
// [fastCall] before the reflective path, and range over a map with string
// keys sorts them as strings ([sortedStringKeyed]) instead of through
// fmtsort's reflection; and printValue writes a plain string as is rather
// than through fmt's buffer (a renderEach result can be hundreds of
// kilobytes). The fast paths return what the reflective path would
// (upstream's tests run against them, and TestForkMatchesTextTemplate and
// its fuzz target compare the fork with text/template); they only skip
// allocations and reflect.Value.Call. Parsing is the standard library's
// text/template/parse.
//
// Everything else is upstream's text, lint findings included: the linters
// skip those files (.golangci.yml) so that hack/diff-gotemplate.sh, which
// prints the diff against $(go env GOROOT)/src/text/template with the names
// normalised, shows only the changes above. Given another Go tree as its
// argument it shows what a newer release changed, to carry over.
//
// # What the fork buys
//
// templating builds on the standard library's text/template instead with
// -tags stdtemplate (templating/template_std.go). Measured on 2026-12-01,
// 2 shared cores (load average ≈ 9), the full render of 5,000 Ingresses with
// the stock libraries, eight alternating runs of each, medians by benchstat:
// 272 ms vs 461 ms of process CPU per render (1.69×), 590 ms vs 900 ms wall
// (1.53×, ±50% on that machine), 555k vs 1,596k allocs/op (2.87×) and 48 vs
// 92 MiB/op, fork vs standard library:
//
//	go test [-tags stdtemplate] -run '^$' -bench 'RenderIngresses/ingresses=5000' \
//		-benchmem -benchtime=5x -count=1 ./libraries/
package gotemplate
