#!/usr/bin/env bash
# build-minicluster.sh: build the binaries of the test-only mini cluster
# (internal/testenv/minicluster) from the nested Go modules under
# tools/minicluster/ into .cache/minicluster/bin/:
#
#   etcd                                  tools/minicluster/etcd    (etcd v3.6.16)
#   kube-apiserver, kube-controller-manager tools/minicluster/kube  (k8s v1.37.2)
#   echo-basic, conformance.test          tools/minicluster/gateway (gateway-api v1.6.3)
#
# and copies the Gateway API CRDs (standard and experimental channels) and the
# conformance base manifests of that module version to
# .cache/minicluster/gateway-api/.
#
# Each module's build is skipped when its key (go version + go.mod + go.sum +
# the module's .go files + this recipe) matches the stamp of the last good
# build and its binaries exist. A cold kube build takes ~6-7 min and ~3 GB of
# RAM on 2 cores; a warm one ~15 s.
#
# Usage: hack/build-minicluster.sh [etcd|kube|gateway ...]   (default: all)
# Env:   GO (go), MINICLUSTER_DIR (.cache/minicluster), MINICLUSTER_BUILD_P (2)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-go}
DIR=${MINICLUSTER_DIR:-$ROOT/.cache/minicluster}
OUT=$DIR/bin
STAMPS=$DIR/stamps
P=${MINICLUSTER_BUILD_P:-2}
TOOLS=$ROOT/tools/minicluster

KUBE_VERSION=v1.37.2
KUBE_LDFLAGS="-X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"

mkdir -p "$OUT" "$STAMPS"

# recipe prints the build command of a module; it is part of the cache key.
recipe() {
	case $1 in
	etcd) echo "go build -trimpath -o etcd go.etcd.io/etcd/server/v3" ;;
	kube) echo "go build -trimpath -ldflags=$KUBE_LDFLAGS k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager" ;;
	gateway) echo "go build -trimpath sigs.k8s.io/gateway-api/conformance/echo-basic; go test -c -trimpath ./conformance" ;;
	*) echo "unknown module $1" >&2; return 1 ;;
	esac
}

binaries() {
	case $1 in
	etcd) echo etcd ;;
	kube) echo kube-apiserver kube-controller-manager ;;
	gateway) echo echo-basic conformance.test ;;
	esac
}

key() {
	local mod=$1 d=$TOOLS/$1
	{
		"$GO" version
		recipe "$mod"
		cat "$d/go.mod" "$d/go.sum"
		find "$d" -name '*.go' -type f | LC_ALL=C sort | xargs cat
	} | sha256sum | cut -d' ' -f1
}

build() {
	local mod=$1 d=$TOOLS/$1 tmp
	tmp=$(mktemp -d "$DIR/build.XXXXXX")
	case $mod in
	etcd)
		(cd "$d" && "$GO" build -p "$P" -trimpath -o "$tmp/etcd" go.etcd.io/etcd/server/v3)
		;;
	kube)
		(cd "$d" && "$GO" build -p "$P" -trimpath -ldflags="$KUBE_LDFLAGS" -o "$tmp/" \
			k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager)
		;;
	gateway)
		(cd "$d" && "$GO" build -p "$P" -trimpath -o "$tmp/echo-basic" sigs.k8s.io/gateway-api/conformance/echo-basic)
		(cd "$d" && "$GO" test -p "$P" -c -trimpath -o "$tmp/conformance.test" ./conformance)
		# The Gateway API CRDs of both channels and the conformance base
		# manifests, copied from the module cache so tests need no `go` at
		# run time.
		local gw conf
		gw=$(cd "$d" && "$GO" list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)
		conf=$(cd "$d" && "$GO" list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api/conformance)
		rm -rf "$DIR/gateway-api"
		mkdir -p "$DIR/gateway-api/crd/standard" "$DIR/gateway-api/crd/experimental" "$DIR/gateway-api/conformance/base"
		cp "$gw"/config/crd/standard/gateway.networking.k8s.io_*.yaml "$DIR/gateway-api/crd/standard/"
		cp "$gw"/config/crd/experimental/gateway.networking.*.yaml "$DIR/gateway-api/crd/experimental/"
		cp "$conf/base/manifests.yaml" "$DIR/gateway-api/conformance/base/"
		chmod -R u+w "$DIR/gateway-api"
		;;
	esac
	local b
	for b in $(binaries "$mod"); do
		mv -f "$tmp/$b" "$OUT/$b"
	done
	rm -rf "$tmp"
}

mods=("$@")
[ ${#mods[@]} -gt 0 ] || mods=(etcd gateway kube)

for mod in "${mods[@]}"; do
	k=$(key "$mod")
	fresh=1
	for b in $(binaries "$mod"); do
		[ -x "$OUT/$b" ] || fresh=0
	done
	if [ "$mod" = gateway ] && { [ ! -f "$DIR/gateway-api/conformance/base/manifests.yaml" ] || [ ! -d "$DIR/gateway-api/crd/experimental" ]; }; then
		fresh=0
	fi
	if [ "$fresh" = 1 ] && [ "$(cat "$STAMPS/$mod" 2>/dev/null)" = "$k" ]; then
		echo "minicluster: $mod up to date ($(binaries "$mod"))"
		continue
	fi
	echo "minicluster: building $mod -> $OUT ..."
	start=$(date +%s)
	build "$mod"
	echo "$k" >"$STAMPS/$mod"
	echo "minicluster: built $mod in $(($(date +%s) - start)) s"
done
