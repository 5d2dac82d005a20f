#!/usr/bin/env bash
# install-haproxy.sh SERIES [DEST]: install a real HAProxy SERIES (3.0, 3.2,
# 3.4, ...) on a Debian 12 machine without a container registry.
#
# Debian 12 ships HAProxy 2.6 only. Newer Debian suites carry the newer series
# as binary packages (3.0 in trixie, 3.2 in sid, 3.4 in experimental), built
# against a newer glibc. This script:
#
#  1. keeps a private apt state under $CACHE/apt (own sources.list, lists,
#     package cache, config; the system's apt sources are never touched) with
#     the suites trixie, sid and experimental on the machine's own Debian mirror;
#  2. resolves the newest Debian version of SERIES with `apt-cache madison`
#     (never a pinned revision), refreshing the lists when they are missing,
#     older than a day, or a download 404s (then it retries once);
#  3. downloads haproxy plus its shared-library closure (Depends/Pre-Depends
#     named lib* or zlib1g, recursively) from the same suite (libraries for an
#     experimental haproxy come from sid) and unpacks them into DEST/root;
#  4. copies the binary to DEST/sbin/haproxy and points it at the private
#     loader and libraries with patchelf (interpreter + DT_RPATH);
#  5. verifies `haproxy -vv` and that every library resolves inside DEST/root,
#     and writes DEST/INSTALLED.
#
# A second run is instant when DEST/INSTALLED exists and the binary verifies.
# Concurrent runs are safe: installs serialise on flock($CACHE/apt/lock) and
# DEST is replaced by a rename.
#
# Defaults: CACHE is $HAPTIC_CACHE_DIR if set, else <repo>/.cache; DEST is
# $CACHE/haproxy/SERIES. The last line of stdout is the binary's path.
#
# HAPTIC_HAPROXY: if set to an executable HAProxy >= 3.0 of the requested
# SERIES, the script prints its absolute path and exits 0 without touching
# DEST or downloading anything (an installed DEST is left as it is). If it is
# another series, older than 3.0 or not usable, the script says so on stderr
# and installs SERIES from Debian as usual (so one HAPTIC_HAPROXY serves
# `make haproxy`, which asks for every series).
#
# Optional: HAPTIC_DEBIAN_MIRROR overrides the mirror URI taken from the
# machine's apt sources.
set -euo pipefail

prog=install-haproxy.sh
die() { echo "$prog: error: $*" >&2; exit 1; }
note() { echo "$prog: $*" >&2; }

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
	exit 0
fi
[[ $# -ge 1 && $# -le 2 ]] || die "usage: $prog SERIES [DEST]   (SERIES like 3.0, 3.2, 3.4)"
series=$1
[[ $series =~ ^[0-9]+\.[0-9]+$ ]] || die "series must look like 3.4, got '$series'"

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(dirname "$script_dir")
cache=${HAPTIC_CACHE_DIR:-$repo/.cache}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd -P)
dest=${2:-$cache/haproxy/$series}
mkdir -p "$(dirname "$dest")"
dest=$(cd "$(dirname "$dest")" && pwd -P)/$(basename "$dest")

arch=$(dpkg --print-architecture)
case $arch in
amd64) triplet=x86_64-linux-gnu loader=ld-linux-x86-64.so.2 ;;
arm64) triplet=aarch64-linux-gnu loader=ld-linux-aarch64.so.1 ;;
*) die "unsupported architecture $arch (amd64 and arm64 are supported)" ;;
esac

for tool in apt-get apt-cache dpkg-deb patchelf flock; do
	command -v "$tool" >/dev/null || die "$tool not found (run hack/install-deps.sh)"
done

# first_line prints the first line of its argument. Used instead of `cmd | head -1`,
# which fails under pipefail when cmd gets SIGPIPE.
first_line() { printf '%s\n' "${1%%$'\n'*}"; }

# version_series prints "X.Y" for the output of `haproxy -v`.
version_series() {
	local line
	line=$(first_line "$1")
	[[ $line =~ [Vv]ersion\ ([0-9]+)\.([0-9]+)\. ]] || return 1
	echo "${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
}

# verify_private BIN ROOT checks that BIN runs from its private loader, reports
# SERIES, and that every library resolves inside ROOT. Prints nothing on success,
# the reason on failure.
verify_private() {
	local bin=$1 root=$2 out lib
	local ld=$root/usr/lib/$triplet/$loader
	[[ -x $bin ]] || { echo "$bin is missing or not executable"; return 1; }
	[[ -x $ld ]] || { echo "private loader $ld is missing"; return 1; }
	if ! out=$(env -u LD_LIBRARY_PATH -u LD_PRELOAD "$ld" --list "$bin" 2>&1); then
		echo "$ld --list $bin failed: $out"
		return 1
	fi
	if [[ $out == *"not found"* ]]; then
		echo "unresolved libraries: $out"
		return 1
	fi
	while read -r lib; do
		# lines: "libx.so.1 => /path (0x...)", "/path/ld-linux... (0x...)", "linux-vdso.so.1 (0x...)"
		local path=
		if [[ $lib == *" => "* ]]; then
			path=${lib#* => }
			path=${path%% (*}
		elif [[ $lib == /* ]]; then
			path=${lib%% (*}
		fi
		[[ -z $path || $path == "$root"/* ]] || { echo "library outside $root: $lib"; return 1; }
	done <<<"$out"
	if ! out=$(env -u LD_LIBRARY_PATH -u LD_PRELOAD "$bin" -vv 2>&1); then
		echo "$bin -vv failed: $out"
		return 1
	fi
	local got
	got=$(version_series "$out") || { echo "cannot read a version from $bin -vv: $(first_line "$out")"; return 1; }
	[[ $got == "$series" ]] || { echo "$bin is HAProxy $got, not $series"; return 1; }
}

# verify_dest checks an installed DEST and prints the reason on failure.
verify_dest() {
	local d=$1
	[[ -f $d/INSTALLED ]] || { echo "$d/INSTALLED is missing"; return 1; }
	verify_private "$d/sbin/haproxy" "$d/root"
}

# --- HAPTIC_HAPROXY ---------------------------------------------------------
if [[ -n ${HAPTIC_HAPROXY:-} ]]; then
	env_bin=$HAPTIC_HAPROXY env_reason='' env_out=''
	if [[ ! -f $env_bin || ! -x $env_bin ]]; then
		env_reason="not an executable file"
	elif ! env_out=$("$env_bin" -v 2>&1); then
		env_reason="'$env_bin -v' failed: $(first_line "$env_out")"
	elif ! env_series=$(version_series "$env_out"); then
		env_reason="no version in '$env_bin -v': $(first_line "$env_out")"
	elif [[ ${env_series%%.*} -lt 3 ]]; then
		env_reason="HAProxy $env_series is older than 3.0"
	elif [[ $env_series != "$series" ]]; then
		env_reason="it is HAProxy $env_series, not $series"
	fi
	if [[ -z $env_reason ]]; then
		env_bin=$(cd "$(dirname "$env_bin")" && pwd -P)/$(basename "$env_bin")
		note "using HAPTIC_HAPROXY: $(first_line "$env_out")"
		echo "$env_bin"
		exit 0
	fi
	note "ignoring HAPTIC_HAPROXY=$HAPTIC_HAPROXY ($env_reason); using HAProxy $series from Debian"
fi

# Fast path, without the lock: DEST is only ever replaced by a rename, and
# DEST/INSTALLED appears (by a rename) only after the binary verified.
if verify_dest "$dest" >/dev/null 2>&1; then
	echo "$dest/sbin/haproxy"
	exit 0
fi

apt_dir=$cache/apt
mkdir -p "$apt_dir"
exec 9>"$apt_dir/lock"
if ! flock -n 9; then
	note "waiting for another install (lock $apt_dir/lock)"
	flock -w 900 9 || die "timed out after 900 s waiting for $apt_dir/lock"
fi
# Another run may have installed DEST while we waited.
if why=$(verify_dest "$dest" 2>&1); then
	echo "$dest/sbin/haproxy"
	exit 0
fi
[[ -e $dest ]] && note "reinstalling $dest: $why"

# --- private apt state ------------------------------------------------------

# debian_suite tells whether SUITE names a Debian archive suite (not security,
# not a third-party repository such as "nodistro").
debian_suite() {
	[[ $1 =~ ^(buster|bullseye|bookworm|trixie|forky|duke|sid|oldoldstable|oldstable|stable|testing|unstable|experimental)(-updates|-backports|-proposed-updates)?$ ]]
}

# mirror_uri prints the Debian archive URI from the machine's apt sources
# (one-line sources.list and deb822 *.sources), skipping security archives.
mirror_uri() {
	local f line uri
	local -a files=()
	[[ -f /etc/apt/sources.list ]] && files+=(/etc/apt/sources.list)
	for f in /etc/apt/sources.list.d/*.list; do [[ -f $f ]] && files+=("$f"); done
	for f in "${files[@]}"; do
		while read -r line; do
			line=${line%%#*}
			[[ $line =~ ^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+([^[:space:]]+) ]] || continue
			uri=${BASH_REMATCH[2]} suite=${BASH_REMATCH[3]}
			if ! debian_suite "$suite" || [[ $uri == *security* ]]; then continue; fi
			echo "${uri%/}"
			return 0
		done <"$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -f $f ]] || continue
		# deb822: paragraphs separated by blank lines; fields Types, URIs, Suites.
		local types='' uris='' suites='' enabled=yes
		while IFS= read -r line || [[ -n $line ]]; do
			if [[ -z ${line//[[:space:]]/} ]]; then
				local suite ok=
				for suite in $suites; do debian_suite "$suite" && ok=1; done
				if [[ " $types " == *" deb "* && $enabled != no && -n $ok ]]; then
					for uri in $uris; do
						[[ $uri != *security* ]] && { echo "${uri%/}"; return 0; }
					done
				fi
				types='' uris='' suites='' enabled=yes
				continue
			fi
			[[ $line == \#* ]] && continue
			case ${line%%:*} in
			Types) types=${line#*:} ;;
			URIs) uris=${line#*:} ;;
			Suites) suites=${line#*:} ;;
			Enabled) enabled=${line#*:}; enabled=${enabled// /} ;;
			esac
		done < <(cat "$f"; echo)
	done
	return 1
}

mirror=${HAPTIC_DEBIAN_MIRROR:-}
if [[ -z $mirror ]]; then
	mirror=$(mirror_uri) || die "no Debian mirror found in /etc/apt/sources.list or /etc/apt/sources.list.d/*.{list,sources}; set HAPTIC_DEBIAN_MIRROR (e.g. http://deb.debian.org/debian)"
fi
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -f $keyring ]] || die "$keyring is missing (apt-get install debian-archive-keyring)"

mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
sources=$apt_dir/sources.list
want_sources=""
for s in trixie sid experimental; do
	want_sources+="deb [arch=$arch signed-by=$keyring target=Packages pdiffs=no] $mirror $s main"$'\n'
done
if [[ ! -f $sources || $(<"$sources")$'\n' != "$want_sources" ]]; then
	printf '%s' "$want_sources" >"$sources"
	rm -f "$apt_dir/lists.stamp" "$apt_dir"/cache/*.bin
fi
# The system's apt.conf.d still applies (proxies etc.); this file, read after
# it, drops what must not leak into the private state.
want_conf='#clear APT::Update::Post-Invoke-Success;
#clear APT::Update::Post-Invoke;
#clear DPkg::Post-Invoke;
#clear APT::Architectures;
APT::Architectures { "'$arch'"; };'
[[ -f $apt_dir/apt.conf && $(<"$apt_dir/apt.conf") == "$want_conf" ]] || printf '%s\n' "$want_conf" >"$apt_dir/apt.conf"
# An empty dpkg status: resolve as if nothing were installed. Created once:
# touching it again would invalidate the package cache (apt checks its mtime).
[[ -f $apt_dir/status ]] || : >"$apt_dir/status"

# Debian 12's docker-clean config sets Dir::Cache::pkgcache "": re-enable it, or
# every apt-cache call re-parses all ~40 MB of (lz4-compressed) lists: ~2-6 s
# per call instead of ~0.05 s.
apt_opts=(
	-o "Dir::Etc::SourceList=$sources"
	-o "Dir::Etc::SourceParts=/dev/null"
	-o "Dir::State::Lists=$apt_dir/lists"
	-o "Dir::State::status=$apt_dir/status"
	-o "Dir::Cache=$apt_dir/cache"
	-o "Dir::Cache::archives=$apt_dir/cache/archives"
	-o "Dir::Cache::pkgcache=$apt_dir/cache/pkgcache.bin"
	-o "Dir::Cache::srcpkgcache=" # a second 70 MB copy buys nothing: the status file never changes
	-o "APT::Architecture=$arch"
	-o "APT::Sandbox::User=root"
	-o "Debug::NoLocking=true" # this script serialises on its own flock
	-o "Acquire::Retries=3"
)
apt_get() { APT_CONFIG=$apt_dir/apt.conf apt-get -q "${apt_opts[@]}" "$@"; }
apt_cache() { APT_CONFIG=$apt_dir/apt.conf apt-cache "${apt_opts[@]}" "$@"; }

refresh_lists() {
	note "refreshing Debian package lists (trixie, sid, experimental from $mirror) in $apt_dir"
	local out
	if ! out=$(apt_get update 2>&1) || [[ $out == *NO_PUBKEY* ]]; then
		local hint=
		[[ $out == *NO_PUBKEY* ]] && hint=$'\n'"hint: the archive keys in $keyring are too old for these suites; upgrade debian-archive-keyring (bookworm-updates carries the trixie keys)"
		die "apt-get update (private state in $apt_dir) failed:"$'\n'"$out$hint"
	fi
	if [[ $out == *"W: "* || $out == *"E: "* ]]; then
		note "apt-get update reported:"$'\n'"$(grep -E '^(W|E): ' <<<"$out" || true)"
	fi
	compgen -G "$apt_dir/lists/*_Packages*" >/dev/null || die "apt-get update fetched no Packages lists into $apt_dir/lists:"$'\n'"$out"
	rm -f "$apt_dir"/cache/*.bin
	touch "$apt_dir/lists.stamp"
}

lists_fresh() {
	[[ -f $apt_dir/lists.stamp ]] || return 1
	compgen -G "$apt_dir/lists/*_Packages*" >/dev/null || return 1
	[[ -z $(find "$apt_dir/lists.stamp" -mmin +1440) ]]
}

# madison PKG prints "version suite" lines for PKG, all suites.
madison() {
	local out
	out=$(apt_cache madison "$1" 2>/dev/null) || true
	# " haproxy | 3.2.26-1 | http://deb.debian.org/debian sid/main amd64 Packages"
	awk -F'|' 'NF >= 3 { v=$2; gsub(/ /, "", v); split($3, a, " "); s=a[2]; sub(/\/.*/, "", s); print v, s }' <<<"$out"
}

# newest_in PKG SUITE prints the newest version of PKG in SUITE.
newest_in() {
	local v s best=
	while read -r v s; do
		[[ $s == "$2" ]] || continue
		if [[ -z $best ]] || dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
	done < <(madison "$1")
	[[ -n $best ]] && echo "$best"
}

# satisfies VERSION OP REF checks a Debian version constraint; an empty OP holds.
satisfies() {
	local op
	case $2 in
	'') return 0 ;;
	'>=') op=ge ;; '<=') op=le ;; '>>') op=gt ;; '<<') op=lt ;; '=') op=eq ;;
	*) return 0 ;;
	esac
	dpkg --compare-versions "$1" "$op" "$3"
}

is_lib() { [[ $1 == lib* || $1 == zlib1g ]]; }

# pick_lib NAME OP REF [PROVIDER...] prints "pkg=version" for the library NAME
# (or, if NAME is virtual, the first PROVIDER) from the library suite, falling
# back to the haproxy suite (experimental) when the library suite has none that
# satisfies the constraint.
pick_lib() {
	local name=$1 op=$2 ref=$3 s p v
	shift 3
	for s in "$lib_suite" "$hp_suite"; do
		for p in "$name" "$@"; do
			is_lib "$p" || continue
			v=$(newest_in "$p" "$s") || continue
			[[ $p != "$name" ]] || satisfies "$v" "$op" "$ref" || continue
			echo "$p=$v"
			return 0
		done
	done
	return 1
}

# lib_deps PKG=VER... prints, for each Depends/Pre-Depends group of the given
# packages that contains a library, the chosen library as "pkg=version". It
# reads `apt-cache depends` (answered from the binary cache, unlike `apt-cache
# show`, which re-reads the compressed lists: ~0.5 s per call).
lib_deps() {
	local out
	out=$(apt_cache -o APT::Cache::ShowVersion=1 depends "$@" 2>&1) || die "apt-cache depends $* failed: $out"
	# Lines: "pkg" (a section), "  Depends: name (>= v)", " |Depends: name" (OR the
	# next), "  PreDepends: <virtual>" followed by "    provider" lines.
	local line group=() cur=''
	flush_group() {
		local g name op ref provs choice=
		for g in "${group[@]}"; do
			# '|' separates fields and keeps empty ones (a tab would not).
			IFS='|' read -r name op ref provs <<<"$g"
			name=${name%%:*} # drop an ":any" qualifier
			# shellcheck disable=SC2086
			is_lib "$name" || [[ -n $provs ]] || continue
			# shellcheck disable=SC2086
			if choice=$(pick_lib "$name" "$op" "$ref" $provs); then break; fi
		done
		if [[ -z $choice ]]; then
			for g in "${group[@]}"; do
				IFS='|' read -r name _ <<<"$g"
				name=${name%%:*}
				is_lib "$name" && die "$cur depends on library $name, which is in neither $lib_suite nor $hp_suite"
			done
		else
			echo "$choice"
		fi
		group=()
	}
	local more=0
	while IFS= read -r line; do
		if [[ $line =~ ^[[:space:]]{4}([^[:space:]]+)$ ]]; then
			# provider of the previous virtual dependency
			[[ ${#group[@]} -gt 0 ]] && group[-1]+=" ${BASH_REMATCH[1]}"
			continue
		fi
		if [[ $line =~ ^\ (\ |\|)(Depends|PreDepends):\ \<?([^[:space:]>]+)\>?(\ \(([<>=]+)\ ([^\)]+)\))?$ ]]; then
			if [[ $more -eq 0 && ${#group[@]} -gt 0 ]]; then flush_group; fi
			group+=("${BASH_REMATCH[3]}|${BASH_REMATCH[5]}|${BASH_REMATCH[6]}|")
			[[ ${BASH_REMATCH[1]} == '|' ]] && more=1 || more=0
			continue
		fi
		if [[ ${#group[@]} -gt 0 && $more -eq 0 ]]; then flush_group; fi
		[[ $line =~ ^[^[:space:]] ]] && cur=$line
	done <<<"$out"
	if [[ ${#group[@]} -gt 0 ]]; then flush_group; fi
}

# resolve sets hp_version, hp_suite, lib_suite and closure (pkg=version list).
resolve() {
	local v s
	hp_version='' hp_suite=''
	while read -r v s; do
		# upstream version "X.Y.Z...", optional epoch
		[[ ${v#*:} == "$series".* ]] || continue
		if [[ -z $hp_version ]] || dpkg --compare-versions "$v" gt "$hp_version"; then
			hp_version=$v hp_suite=$s
		fi
	done < <(madison haproxy)
	if [[ -z $hp_version ]]; then
		local avail
		avail=$(madison haproxy | awk '{printf "%s (%s) ", $1, $2}')
		die "no HAProxy $series in Debian trixie/sid/experimental; available: ${avail:-none}"
	fi
	lib_suite=$hp_suite
	[[ $hp_suite == experimental ]] && lib_suite=sid

	# Breadth-first over the dependency graph, one apt-cache call per level.
	closure=("haproxy=$hp_version")
	local -A seen=([haproxy]=1)
	local -a level=("haproxy=$hp_version") next found
	local item depth=0
	while [[ ${#level[@]} -gt 0 ]]; do
		((++depth <= 20)) || die "library closure of haproxy $hp_version is deeper than 20 levels"
		next=()
		mapfile -t found < <(lib_deps "${level[@]}")
		for item in "${found[@]}"; do
			[[ -n ${seen[${item%%=*}]:-} ]] && continue
			seen[${item%%=*}]=1
			closure+=("$item")
			next+=("$item")
		done
		level=("${next[@]}")
	done
}

# download sets debs to the .deb files of closure under $apt_dir/debs,
# fetching the missing ones. Prints apt's output and fails on error.
download() {
	local out uri file _rest
	local -a need=()
	debs=()
	out=$(apt_get download --print-uris "${closure[@]}" 2>&1) || { echo "apt-get download --print-uris failed: $out"; return 1; }
	# "'http://.../haproxy_3.4.7-1_amd64.deb' haproxy_3.4.7-1_amd64.deb 3313044 SHA256:..."
	# apt lists them in its own order: match files to packages by name.
	local -A file_of=()
	while read -r uri file _rest; do
		[[ $uri == \'* ]] || continue
		file_of[${file%%_*}]=$file
	done <<<"$out"
	local item
	for item in "${closure[@]}"; do
		file=${file_of[${item%%=*}]:-}
		[[ -n $file ]] || { echo "apt-get download --print-uris lists no file for $item: $out"; return 1; }
		debs+=("$apt_dir/debs/$file")
		[[ -s $apt_dir/debs/$file ]] || need+=("$item")
	done
	[[ ${#need[@]} -eq 0 ]] && return 0
	note "downloading ${need[*]}"
	out=$(cd "$apt_dir/debs" && apt_get download "${need[@]}" 2>&1) || { echo "$out"; return 1; }
	for file in "${debs[@]}"; do
		[[ -s $file ]] || { echo "apt-get download did not produce $file"; echo "$out"; return 1; }
	done
}

lists_fresh || refresh_lists
resolve
if ! dl_err=$(download 2>&1); then
	note "download failed; refreshing the lists and retrying once:"$'\n'"$dl_err"
	refresh_lists
	resolve
	dl_err=$(download 2>&1) || die "downloading HAProxy $series ($hp_version from $hp_suite) failed:"$'\n'"$dl_err"
fi
download # sets debs (the command substitution above ran in a subshell); files are all there now

# --- unpack, patch, verify ----------------------------------------------------
tmp=$dest.tmp.$$
trap 'rm -rf "$tmp"' EXIT
rm -rf "$tmp"
mkdir -p "$tmp/root" "$tmp/sbin"
for f in "${debs[@]}"; do
	dpkg-deb -x "$f" "$tmp/root" || die "dpkg-deb -x $f failed"
done
[[ -x $tmp/root/usr/sbin/haproxy ]] || die "haproxy package $hp_version has no usr/sbin/haproxy"
# Debian's multiarch libc puts the loader under usr/lib/<triplet>; some layouts
# only have lib/<triplet> (merged-/usr symlinks are not in the .debs).
if [[ ! -e $tmp/root/usr/lib/$triplet/$loader && -e $tmp/root/lib/$triplet/$loader ]]; then
	ln -s "../../../lib/$triplet/$loader" "$tmp/root/usr/lib/$triplet/$loader"
fi
if [[ -d $tmp/root/lib/$triplet ]]; then
	# Libraries unpacked under /lib: expose them in usr/lib/<triplet> too.
	for f in "$tmp/root/lib/$triplet"/*; do
		[[ -e $tmp/root/usr/lib/$triplet/$(basename "$f") ]] || ln -s "$f" "$tmp/root/usr/lib/$triplet/" 2>/dev/null || true
	done
fi
cp "$tmp/root/usr/sbin/haproxy" "$tmp/sbin/haproxy"
# Patch with the final paths (DEST, not the temporary dir): DEST is renamed into place below.
patchelf --set-interpreter "$dest/root/usr/lib/$triplet/$loader" \
	--force-rpath --set-rpath "$dest/root/usr/lib/$triplet" "$tmp/sbin/haproxy" ||
	die "patchelf on $tmp/sbin/haproxy failed"

{
	echo "package: haproxy"
	echo "version: $hp_version"
	echo "suite: $hp_suite"
	echo "library-suite: $lib_suite"
	echo "mirror: $mirror"
	echo "packages: ${closure[*]}"
	echo "installed: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$tmp/INSTALLED.pending"

rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
if ! why=$(verify_private "$dest/sbin/haproxy" "$dest/root"); then
	die "installed HAProxy $hp_version into $dest but it does not verify: $why"
fi
mv "$dest/INSTALLED.pending" "$dest/INSTALLED"
# Drop downloads nobody has needed for a month (superseded Debian revisions).
find "$apt_dir/debs" -name '*.deb' -atime +30 -delete 2>/dev/null || true
note "installed HAProxy $hp_version ($hp_suite) into $dest"
echo "$dest/sbin/haproxy"
