#!/usr/bin/env bash
# install-deps.sh: install the Debian packages HAPTIC's scripts and tests use,
# if any is missing. Idempotent; when everything is present it only runs
# `dpkg -s` and exits (well under a second). Needs root (or sudo) only when it
# has something to install.
set -euo pipefail

PACKAGES=(patchelf socat curl openssl iproute2 ca-certificates)

missing=()
for p in "${PACKAGES[@]}"; do
	# dpkg -s exits 0 for removed-but-configured packages too; check the state.
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[[ $status == ii* ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=()
if [[ $(id -u) -ne 0 ]]; then
	command -v sudo >/dev/null || { echo "install-deps.sh: need root to install: ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
echo "install-deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
