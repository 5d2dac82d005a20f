// Package crdschema holds no code: its tests check the generated
// CustomResourceDefinitions (config/crd/bases) with the API server's own
// packages, which the product module does not depend on. They validate
// each CRD as the API server does on create (structural schema, CEL rules
// and their estimated cost, defaults), then admit the example resources
// through pruning, defaulting, OpenAPI and CEL validation, as a create
// request would be. Run them with `make test` (or go test ./... in
// tools/codegen).
package crdschema
