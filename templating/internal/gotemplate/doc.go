// Package gotemplate is Go 1.26's text/template with fast paths for the
// data HAPTIC renders: JSON-shaped objects (map[string]any) and the common
// function signatures of sprig and the author API. It exists because a
// render spends most of its time in text/template's reflection: field
// steps on map[string]any allocate twice through MapIndex, and every
// function call goes through reflect.Value.Call.
//
// The package is upstream text/template (exec.go, funcs.go, helper.go,
// option.go, template.go, and upstream's tests), BSD-licensed (LICENSE),
// changed only where marked: the package name, the fmtsort import (a copy
// of internal/fmtsort), and hooks in exec.go, most into fast.go — evalField
// tries [fastMapField] and evalCall tries [fastCall] before the reflective
// path, and range over a map with string keys sorts them as strings
// ([sortedStringKeyed]) instead of through fmtsort's reflection; and
// printValue writes a plain string as is rather than through fmt's
// buffer (a renderEach result can be hundreds of kilobytes).
// The fast paths return what the reflective path would (upstream's tests
// run against them); they only skip allocations and reflect.Value.Call.
// Parsing is the standard library's text/template/parse.
//
// Concurrency and I/O are as in text/template: a parsed Template is safe
// for concurrent Execute calls; Execute writes to the given io.Writer.
package gotemplate
