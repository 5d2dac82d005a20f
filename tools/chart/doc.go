// Package chart tests the Helm chart charts/haptic through the Helm SDK: it
// renders the chart with its default values and with a production values
// file (golden files, rewritten with -update), lints it, checks that the
// values schema refuses bad values with a clear message, decodes every
// rendered object into its Kubernetes type and checks the security
// settings, RBAC and derived settings (nbthread, GOMEMLIMIT, the agent
// token) of what it renders. It also checks that the CRDs under
// charts/haptic/crds are the generated ones, and that the
// HAProxyTemplateConfig the chart installs compiles with the stock
// libraries and passes their validation tests, `haproxy -c` included.
//
// It is a module of its own so that the product's go.mod does not carry
// Helm; it imports the product through a replace directive.
//
// # I/O and concurrency
//
// The tests read the chart from the repository, write golden files under
// testdata with -update, and run HAProxy 3.4 from .cache/haproxy (skipped
// under -short). The package has no non-test code.
package chart
