// Command haptic is the HAPTIC binary. Each subcommand lives in its own
// file and is built by a constructor returning a *cli.Command; main.go
// lists them. Adding one is one file plus one line in newApp.
//
//	haptic render    -r resources/ -o out/ [-c config.yaml] [--libraries base,ingress]
//	haptic validate  [-c config.yaml] [--haproxy path] [--test name] [--dump-rendered] [--trace-templates]
//	haptic benchmark [-c config.yaml] [--objects 100,1000,5000] [--iterations 5]
//
// Every flag also reads an environment variable (HAPTIC_CONFIG,
// HAPTIC_LIBRARIES, HAPTIC_RESOURCES, HAPTIC_OUTPUT, HAPTIC_HAPROXY, …).
// The stock libraries (--libraries, default "base,ingress", "none" for
// none) are merged before the operator's config, which goes last.
//
// The commands do file I/O (render writes the tree, validate runs haproxy
// -c) and run on one goroutine. Errors go to stderr as "haptic: <err>";
// the exit code is the cli.ExitCoder's (validate: 1 when a test failed),
// else 1.
package main
