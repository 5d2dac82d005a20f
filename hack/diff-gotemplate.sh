#!/usr/bin/env bash
# diff-gotemplate.sh [GOROOT]: print a unified diff from Go's text/template to
# HAPTIC's fork of it, templating/internal/gotemplate, so that the fork's
# changes can be reviewed and an upstream fix carried over.
#
# Upstream is GOROOT/src/text/template, plus GOROOT/src/internal/fmtsort,
# which the fork copies to internal/fmtsort. GOROOT defaults to
# $(go env GOROOT); pass another Go tree to see what a newer release changed.
#
# The fork's files are first normalised back to upstream's names: the package
# clause (gotemplate -> template), the import paths of the fork and of its
# fmtsort copy, and the package name in expected type names
# (*gotemplate.T -> *template.T); gofmt then puts the imports back in
# upstream's order. What remains are the fork's real changes, each marked
# "HAPTIC:" in the code. Files on one side only are listed as "Only in". Not
# compared: the fork's own files (doc.go, fast.go, fast_test.go,
# testdata/fuzz/) and the upstream files the fork does not carry (doc.go, the
# package documentation; link_test.go, a linker test of text/template itself;
# parse/, which the fork imports from the standard library).
#
# Exits 0 whether or not the trees differ.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fork=$root/templating/internal/gotemplate
goroot=${1:-$(go env GOROOT)}
upstream=$goroot/src/text/template
gofmt=$(go env GOROOT)/bin/gofmt
mod=github.com/haptic-io/haptic/templating/internal/gotemplate

[[ -d $upstream ]] || { echo "diff-gotemplate: no $upstream" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# list DIR: the compared files under DIR, relative, sorted.
list() {
	(cd "$1" && find . -type f \
		! -path ./doc.go ! -path ./fast.go ! -path ./fast_test.go \
		! -path './testdata/fuzz/*' ! -path ./link_test.go ! -path './parse/*' \
		-printf '%P\n') | LC_ALL=C sort
}

# normalise FILE: the fork's FILE with upstream's names.
normalise() {
	case $1 in
	*.go)
		sed -e "s#\"$mod/internal/fmtsort\"#\"internal/fmtsort\"#" \
			-e "s#template \"$mod\"#\"text/template\"#" \
			-e 's/^package gotemplate\(_test\)\{0,1\}$/package template\1/' \
			-e 's/\bgotemplate\./template./g' "$1" | "$gofmt"
		;;
	*) cat "$1" ;;
	esac
}

mkdir -p "$tmp/upstream" "$tmp/fork"
cp -R "$upstream/." "$tmp/upstream/"
mkdir -p "$tmp/upstream/internal/fmtsort"
cp -R "$goroot/src/internal/fmtsort/." "$tmp/upstream/internal/fmtsort/"
# The fork's LICENSE is Go's.
cp "$goroot/LICENSE" "$tmp/upstream/LICENSE"

list "$tmp/upstream" >"$tmp/upstream.list"
list "$fork" >"$tmp/fork.list"

LC_ALL=C comm -23 "$tmp/upstream.list" "$tmp/fork.list" | sed 's/^/Only in upstream: /'
LC_ALL=C comm -13 "$tmp/upstream.list" "$tmp/fork.list" | sed 's/^/Only in fork: /'
LC_ALL=C comm -12 "$tmp/upstream.list" "$tmp/fork.list" | while read -r f; do
	mkdir -p "$(dirname "$tmp/fork/$f")"
	normalise "$fork/$f" >"$tmp/fork/$f"
	# diff exits 1 when the files differ.
	diff -u --label "upstream/$f" --label "fork/$f" "$tmp/upstream/$f" "$tmp/fork/$f" || [[ $? -eq 1 ]]
done
