package haproxycheck_test

import (
	"context"
	"fmt"

	"github.com/haptic-io/haptic/templating"
	"github.com/haptic-io/haptic/templating/haproxycheck"
)

// The checker runs the haproxy_valid assertions of a config's validation
// tests.
func ExampleChecker() {
	cfg, err := templating.LoadConfig("../testdata/example.yaml")
	if err != nil {
		panic(err)
	}
	engine, err := templating.Compile(cfg)
	if err != nil {
		panic(err)
	}
	checker := &haproxycheck.Checker{Binary: "/usr/sbin/haproxy"}
	report, err := templating.RunTests(context.Background(), engine, templating.TestOptions{Checker: checker})
	fmt.Printf("passed %d, failed %d, err %v\n", report.Passed, report.Failed, err)
}
