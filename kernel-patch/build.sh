#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel-patch/build.sh - build usbrig's patched guest kernel.
#
# Debian's linux-source-6.1 tarball + kernel-patch/series + guest.config
# (+ <flavour>.config) -> OUT/bzImage and OUT/modules/lib/modules/KVER.
#
# Cache layout under CACHE (default build/kernel):
#   src/               the tarball, extracted once; the series applied in place
#   src/.usbrig/       which patches are applied and which files they touch
#   pristine/          original copies of every file a patch has touched
#   obj-FLAVOUR/       the object tree (make O=), kept between builds
#   logs/              one make log per flavour
# Outputs in OUT (default CACHE for the "default" flavour, CACHE/FLAVOUR else):
#   bzImage, modules/lib/modules/KVER, config, kernelrelease, stamp
#
# The stamp is a hash of (source package version, fragments, series, patches,
# this script). When it matches, nothing is done. Otherwise only the files
# the old and the new series touch are reset and re-patched; a file whose
# content comes out the same keeps its old mtime, so make rebuilds only what a
# changed patch really changed.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

tarball=${KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
srcpkg=${KERNEL_SRCPKG:-linux-source-6.1}
flavour=default
cache=$top/build/kernel
out=
series=
extra_patches=()
jobs=$(nproc)
nice_level=${KERNEL_NICE:-19}
arch=x86_64

usage() {
	cat <<EOF
usage: $0 [options]
  --flavour NAME   default, or NAME with kernel-patch/NAME.config on top (kasan)
  --cache DIR      source, object trees and logs (default build/kernel)
  --out DIR        bzImage and modules (default CACHE, or CACHE/FLAVOUR)
  --series FILE    patch series (default kernel-patch/KVER/series when
                   there is one for the source's version, else
                   kernel-patch/series)
  --patch FILE     one more patch after the series (repeatable)
  --jobs N         make -jN (default: nproc)
Environment: KERNEL_TARBALL, KERNEL_SRCPKG, KERNEL_NICE (default 19).
EOF
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--flavour) flavour=$2; shift 2 ;;
	--cache) cache=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--series) series=$2; shift 2 ;;
	--patch) extra_patches+=("$(readlink -f "$2")"); shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "build.sh: unknown option $1" >&2; usage ;;
	esac
done

# The series of the source's version when it has one of its own
# (kernel-patch/6.12/series), else kernel-patch/series (6.1's).
kmm=${srcpkg#linux-source-}
if [ -z "$series" ]; then
	series=$here/series
	[ -f "$here/$kmm/series" ] && series=$here/$kmm/series
fi

# A make that calls us must not leak its flags (-j, CC=...) into Kbuild.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
if [ -z "$out" ]; then
	if [ "$flavour" = default ]; then
		out=$cache
	else
		out=$cache/$flavour
	fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

src=$cache/src
pristine=$cache/pristine
state=$src/.usbrig
obj=$cache/obj-$flavour
log=$cache/logs/build-$flavour.log

# A flavour's fragment may name others to go before it, one
# "# include: FILE" line each (kasan.config includes usb-drivers.config).
fragments=("$here/guest.config")
# What a kernel version needs besides (guest-6.12.config: 6.12's tinyconfig
# turns on SLUB_TINY, which takes SLUB_DEBUG away), from the source
# package's name.
[ -f "$here/guest-$kmm.config" ] && fragments+=("$here/guest-$kmm.config")
if [ "$flavour" != default ]; then
	if [ ! -f "$here/$flavour.config" ]; then
		echo "build.sh: no fragment kernel-patch/$flavour.config" >&2
		exit 2
	fi
	while read -r inc; do
		if [ ! -f "$here/$inc" ]; then
			echo "build.sh: $flavour.config includes $inc: no such" \
			     "file in kernel-patch/" >&2
			exit 2
		fi
		fragments+=("$here/$inc")
	done < <(sed -n 's/^# include: *\([^ ]*\) *$/\1/p' "$here/$flavour.config")
	fragments+=("$here/$flavour.config")
fi

t_start=$(date +%s)
say() { printf 'kernel: %s\n' "$*"; }
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }

# Two builds at once would patch the same tree: take turns.
exec 9>"$cache/.lock"
if ! flock -n 9; then
	say "waiting for another build in $cache"
	flock 9
fi

if [ ! -r "$tarball" ]; then
	echo "build.sh: $tarball missing (apt-get install $srcpkg)" >&2
	exit 1
fi
srcver=$(dpkg-query -W -f='${Version}' "$srcpkg" 2>/dev/null || true)
srcver="$srcpkg ${srcver:-unknown} $(stat -c '%s %Y' "$tarball")"

# The series: one patch file name per line, '#' comments, in patches/.
seriesdir=$(dirname "$series")
patches=()
while read -r line; do
	line=${line%%#*}
	line=$(echo "$line" | tr -d '[:space:]')
	[ -n "$line" ] || continue
	p=$seriesdir/patches/$line
	[ -f "$p" ] || { echo "build.sh: $series: no $p" >&2; exit 1; }
	patches+=("$(readlink -f "$p")")
done < "$series"
patches+=("${extra_patches[@]}")

patch_hash=$( { for p in "${patches[@]}"; do
	basename "$p"; cat "$p"; done; } | sha256sum | cut -c1-16)
# The configuration depends on the fragments and on what the patches do to
# Kconfig files (a patch adding a symbol the fragment asks for).
kconfig_diffs() {
	awk '/^diff --git /{k = ($3 ~ /Kconfig/)} k' "$@"
}
config_hash=$( { echo "$srcver $arch"; cat "${fragments[@]}";
	[ ${#patches[@]} -eq 0 ] || kconfig_diffs "${patches[@]}"; } |
	sha256sum | cut -c1-16)
build_hash=$( { echo "$patch_hash $config_hash"; cat "$0"; } |
	sha256sum | cut -c1-16)

if [ -f "$out/bzImage" ] && [ -f "$out/stamp" ] &&
   [ "$(cat "$out/stamp")" = "$build_hash" ]; then
	say "up to date ($flavour, $build_hash): $out/bzImage"
	exit 0
fi

# ---- 1. the source tree, extracted once --------------------------------
if [ ! -f "$src/.usbrig-source" ] ||
   [ "$(cat "$src/.usbrig-source")" != "$srcver" ]; then
	t=$(date +%s)
	say "extracting $tarball into $src"
	rm -rf "$src" "$src.tmp" "$pristine" "$cache"/obj-*
	mkdir -p "$src.tmp"
	nice -n "$nice_level" tar -xJf "$tarball" -C "$src.tmp" \
		--strip-components=1
	echo "$srcver" > "$src.tmp/.usbrig-source"
	mv "$src.tmp" "$src"
	say "extracted in $(elapsed "$t")"
fi
mkdir -p "$state" "$pristine"

# ---- 2. the series, applied in place -------------------------------------
# Paths a patch touches, from its diff --git/---/+++ lines (an empty new
# file has only the first). No renames or copies.
patch_files() {
	sed -n -e 's|^diff --git a/\([^[:space:]]*\) b/\([^[:space:]]*\)$|\1\n\2|p' \
	       -e 's|^--- a/\([^[:space:]]*\).*|\1|p' \
	       -e 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$1" | sort -u
}

apply_series() {
	local stash f p
	if [ -f "$state/applied" ] &&
	   [ "$(cat "$state/applied")" = "$patch_hash" ]; then
		say "patches: ${#patches[@]} already applied"
		return
	fi
	stash=$(mktemp -d)
	touch "$state/touched"
	# Reset: every file the previous series touched goes back to pristine
	# (or away, if the series created it). Keep the patched copies to
	# compare with afterwards.
	rm -f "$state/applied"
	while read -r f; do
		[ -n "$f" ] || continue
		if [ -e "$src/$f" ]; then
			mkdir -p "$stash/$(dirname "$f")"
			cp -p "$src/$f" "$stash/$f"
		fi
		if [ -e "$pristine/$f" ]; then
			cp "$pristine/$f" "$src/$f"
		else
			rm -f "$src/$f"
		fi
	done < "$state/touched"
	cp "$state/touched" "$stash/.touched-before"

	for p in "${patches[@]}"; do
		for f in $(patch_files "$p"); do
			echo "$f" >> "$state/touched"
			if [ -e "$src/$f" ] && [ ! -e "$pristine/$f" ]; then
				mkdir -p "$pristine/$(dirname "$f")"
				cp -p "$src/$f" "$pristine/$f"
			fi
		done
		sort -u -o "$state/touched" "$state/touched"
		if ! patch -p1 -d "$src" --batch --forward --quiet \
			--no-backup-if-mismatch -r - -i "$p"; then
			echo "build.sh: $(basename "$p") does not apply" >&2
			keep_mtimes "$stash"
			exit 1
		fi
		say "applied $(basename "$p")"
	done
	keep_mtimes "$stash"
	echo "$patch_hash" > "$state/applied"
}

# A file with the same content as before the reset gets its old mtime back,
# so make does not rebuild what did not change.
keep_mtimes() {
	local stash=$1 f
	sort -u "$stash/.touched-before" "$state/touched" | while read -r f; do
		[ -n "$f" ] || continue
		if [ -f "$stash/$f" ] && [ -f "$src/$f" ] &&
		   cmp -s "$stash/$f" "$src/$f"; then
			touch -r "$stash/$f" "$src/$f"
		fi
	done
	rm -rf "$stash"
}
apply_series

# ---- 3. the configuration: tinyconfig + fragments (allnoconfig merge) ----
kmake() {
	nice -n "$nice_level" make -C "$src" O="$obj" ARCH="$arch" "$@"
}

configure() {
	local line sym want got bad=0 old
	if [ -f "$obj/.config" ] && [ -f "$obj/.usbrig-config" ] &&
	   [ "$(cat "$obj/.usbrig-config")" = "$config_hash" ]; then
		return
	fi
	mkdir -p "$obj"
	old=$(mktemp)
	[ -f "$obj/.config" ] && cp -p "$obj/.config" "$old"
	kmake -s tinyconfig > "$obj/.merge.log" 2>&1
	# -n: anything the fragments do not ask for stays off.
	(cd "$src" && ARCH=$arch ./scripts/kconfig/merge_config.sh -n \
		-O "$obj" "$obj/.config" "${fragments[@]}") >> "$obj/.merge.log" 2>&1
	# Every setting of the fragments (the last one of a symbol wins, as in
	# merge_config.sh) must have made it, or the build is not the kernel
	# the fragments describe.
	while read -r line; do
		case $line in
		CONFIG_*=*)
			sym=${line%%=*}; want=$line ;;
		*)
			sym=${line#\# }; sym=${sym%% *}; want= ;;
		esac
		got=$(grep -E "^(# )?${sym}[= ]" "$obj/.config" || true)
		case $got in "# "*) got= ;; esac
		if [ "$got" != "$want" ]; then
			echo "build.sh: fragments want '${want:-$sym off}'," \
			     "got '${got:-off}'" >&2
			bad=1
		fi
	done < <(cat "${fragments[@]}" | awk '
		/^CONFIG_[A-Za-z0-9_]+=/ { s = $0; sub(/=.*/, "", s) }
		/^# CONFIG_[A-Za-z0-9_]+ is not set/ { s = $2 }
		s != "" { if (!(s in v)) o[n++] = s; v[s] = $0; s = "" }
		END { for (i = 0; i < n; i++) print v[o[i]] }')
	if [ $bad -ne 0 ]; then
		rm -f "$obj/.usbrig-config" "$old"
		exit 1
	fi
	if [ -s "$old" ] && cmp -s "$old" "$obj/.config"; then
		cp -p "$old" "$obj/.config"
	fi
	rm -f "$old"
	echo "$config_hash" > "$obj/.usbrig-config"
	say "configured: tinyconfig + ${fragments[*]##*/}" \
	    "($(grep -c '=[ym]' "$obj/.config") options on)"
}
configure

# ---- 4. build and install -------------------------------------------------
mkdir -p "$(dirname "$log")"
t=$(date +%s)
say "make -j$jobs bzImage modules (nice $nice_level, log: $log)"
if ! kmake -j"$jobs" bzImage modules > "$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "build.sh: make failed, see $log" >&2
	exit 1
fi
say "built in $(elapsed "$t") ($(grep -cE '^  (CC|LD|AR)' "$log" || true) compile/link steps)"

kver=$(kmake -s kernelrelease)
rm -rf "$out/modules.tmp"
kmake -s INSTALL_MOD_PATH="$out/modules.tmp" INSTALL_MOD_STRIP=1 \
	modules_install >> "$log" 2>&1
# The build/source links point into the cache; a guest has no use for them.
rm -f "$out/modules.tmp/lib/modules/$kver/build" \
      "$out/modules.tmp/lib/modules/$kver/source"
rm -rf "$out/modules"
mv "$out/modules.tmp" "$out/modules"
cp "$obj/arch/x86/boot/bzImage" "$out/bzImage"
cp "$obj/.config" "$out/config"
echo "$kver" > "$out/kernelrelease"
echo "$build_hash" > "$out/stamp"

nmod=$(find "$out/modules/lib/modules/$kver" -name '*.ko' | wc -l)
say "$out/bzImage ($(stat -c %s "$out/bzImage") bytes), $kver, $nmod modules" \
    "in $out/modules/lib/modules/$kver"
say "done in $(elapsed "$t_start")"
