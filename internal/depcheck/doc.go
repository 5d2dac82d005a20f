// Package depcheck holds no code: its tests check the module's import
// graph with `go list -deps`, so that a package that must stay small does
// not grow a dependency by way of an import of an import. The pure
// packages (deployplan, renderplan and, once it exists, store) link no
// net/http, the controller does not link the agent runtime, and the haptic-agent
// binary links no Kubernetes client, templating engine or controller.
//
// The tests run the go command found on PATH and skip when there is none.
package depcheck
