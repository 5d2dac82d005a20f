#!/usr/bin/env bash
# generate-crds.sh: regenerate what controller-gen derives from the API types
# under api/ (their +kubebuilder markers):
#
#   api/<version>/zz_generated.deepcopy.go       DeepCopy methods
#   config/crd/bases/<group>_<plural>.yaml       CustomResourceDefinitions
#   charts/haptic/crds/<group>_<plural>.yaml     the Helm chart's copies
#
# config/crd/bases is the one source of the CRDs: the Helm chart
# (charts/haptic/crds) holds byte-for-byte copies, written here and never
# edited; a test in tools/chart fails when they differ.
#
# controller-gen is pinned by the nested module tools/codegen and built into
# .cache/bin/controller-gen. The build is skipped when its key (go version +
# tools/codegen's go.mod, go.sum and tools.go) matches the stamp of the last
# build: a cold build takes 1.5-3 min on 2 cores (less with a warm Go build
# cache), a warm run 3-7 s.
#
# Usage: hack/generate-crds.sh [OUT | --build]
#   Without OUT the files are replaced in the tree (`make generate`). With OUT
#   they are written under OUT (OUT/api/<version>/..., OUT/config/crd/bases/)
#   and the tree is left alone: the staleness test in api/ compares them with
#   the committed ones. --build only builds controller-gen (`make test` does
#   it before the tests, so no test waits for the build).
# Env: GO (go), HAPTIC_CACHE_DIR (<repo>/.cache)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-go}
CACHE=${HAPTIC_CACHE_DIR:-$ROOT/.cache}
case $CACHE in /*) ;; *) CACHE=$ROOT/$CACHE ;; esac
BIN=$CACHE/bin
TOOLS=$ROOT/tools/codegen
GEN=$BIN/controller-gen
STAMP=$BIN/controller-gen.stamp

key() {
	{
		"$GO" version
		cat "$TOOLS/go.mod" "$TOOLS/go.sum" "$TOOLS/tools.go"
	} | sha256sum | cut -d' ' -f1
}

mkdir -p "$BIN"
k=$(key)
if [ ! -x "$GEN" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$k" ]; then
	echo "generate-crds: building controller-gen -> $GEN ..." >&2
	start=$(date +%s)
	tmp=$(mktemp "$BIN/controller-gen.XXXXXX")
	(cd "$TOOLS" && "$GO" build -trimpath -o "$tmp" sigs.k8s.io/controller-tools/cmd/controller-gen)
	mv -f "$tmp" "$GEN"
	echo "$k" >"$STAMP"
	echo "generate-crds: built controller-gen in $(($(date +%s) - start)) s" >&2
fi

out=${1:-}
[ "$out" != --build ] || exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$ROOT"
# Every package under api/ with a doc.go is an API version.
mapfile -t pkgs < <(find api -name doc.go -exec dirname {} \; | LC_ALL=C sort)
[ ${#pkgs[@]} -gt 0 ] || { echo "generate-crds: no API package under api/" >&2; exit 1; }

for p in "${pkgs[@]}"; do
	"$GEN" object paths="./$p" output:object:dir="$work/$p"
done
"$GEN" crd paths=./api/... output:crd:dir="$work/config/crd/bases"

if [ -n "$out" ]; then
	mkdir -p "$out"
	cp -r "$work/." "$out/"
	exit 0
fi
for p in "${pkgs[@]}"; do
	cp "$work/$p/zz_generated.deepcopy.go" "$p/"
done
for dir in config/crd/bases charts/haptic/crds; do
	mkdir -p "$dir"
	rm -f "$dir"/*.yaml
	cp "$work"/config/crd/bases/*.yaml "$dir"/
done
echo "generate-crds: wrote ${pkgs[*]/%//zz_generated.deepcopy.go}, config/crd/bases and charts/haptic/crds" >&2
