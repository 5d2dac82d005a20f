package minicluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Binaries are the paths of the executables and data files the cluster needs,
// as laid out by hack/build-minicluster.sh under .cache/minicluster.
type Binaries struct {
	Etcd              string
	APIServer         string
	ControllerManager string
	// EchoBasic is the Gateway API conformance backend.
	EchoBasic string
	// ConformanceTest is the compiled Gateway API conformance suite.
	ConformanceTest string
	// GatewayCRDDir holds the Gateway API standard-channel CRD files.
	GatewayCRDDir string
	// GatewayExperimentalCRDDir holds the experimental-channel CRD files
	// (a superset of the standard channel; install one channel per
	// cluster). Not checked by [FindBinaries].
	GatewayExperimentalCRDDir string
	// ConformanceManifests is the suite's base/manifests.yaml.
	ConformanceManifests string
}

// EnvDir names the environment variable that overrides the cache directory
// (default: .cache/minicluster at the repository root).
const EnvDir = "HAPTIC_MINICLUSTER_DIR"

// ErrNoBinaries is returned (wrapped) by [FindBinaries] when a file is
// missing; the fix is `make minicluster`.
var ErrNoBinaries = errors.New("minicluster: binaries missing (run make minicluster)")

// BinariesIn returns the layout under dir without checking that it exists.
func BinariesIn(dir string) Binaries {
	bin := filepath.Join(dir, "bin")
	return Binaries{
		Etcd:                      filepath.Join(bin, "etcd"),
		APIServer:                 filepath.Join(bin, "kube-apiserver"),
		ControllerManager:         filepath.Join(bin, "kube-controller-manager"),
		EchoBasic:                 filepath.Join(bin, "echo-basic"),
		ConformanceTest:           filepath.Join(bin, "conformance.test"),
		GatewayCRDDir:             filepath.Join(dir, "gateway-api", "crd", "standard"),
		GatewayExperimentalCRDDir: filepath.Join(dir, "gateway-api", "crd", "experimental"),
		ConformanceManifests:      filepath.Join(dir, "gateway-api", "conformance", "base", "manifests.yaml"),
	}
}

// FindBinaries locates the cache directory ($HAPTIC_MINICLUSTER_DIR, else
// .cache/minicluster in the first ancestor of the working directory that
// holds hack/build-minicluster.sh) and checks that every file exists.
func FindBinaries() (Binaries, error) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return Binaries{}, err
		}
		dir = filepath.Join(root, ".cache", "minicluster")
	}
	b := BinariesIn(dir)
	for _, p := range []string{b.Etcd, b.APIServer, b.ControllerManager, b.EchoBasic, b.ConformanceTest, b.GatewayCRDDir, b.ConformanceManifests} {
		if _, err := os.Stat(p); err != nil {
			return b, fmt.Errorf("%w: %s", ErrNoBinaries, p)
		}
	}
	return b, nil
}

// repoRoot walks up from the working directory to the directory that holds
// hack/build-minicluster.sh.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "hack", "build-minicluster.sh")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("find repository root: no hack/build-minicluster.sh above %s", wd)
		}
	}
}
