#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/kernel-tree/run.sh [--source TARBALL] [--cache DIR] [--jobs N]
#                          [-- USBRIG-ARGS...]
#
# usbrig --kernel-tree on a tree built the way a developer builds theirs:
# the kernel source as it comes (default Debian's linux-source-6.12, no
# usbrig patch), configured with USB core, vhci-hcd and some class drivers
# built in (kernel-patch/builtin.config on top of the guest fragments), and
# built in an O= object tree.  Then the whole suite (or USBRIG-ARGS) runs
# on that object tree with --kernel-tree: usbrig installs the tree's
# modules into its own cache and boots its bzImage.  The exit status is
# usbrig's.
#
# kernel-patch/build.sh does the unpacking, configuring (and checking that
# every setting made it into .config) and building; the object tree is
# CACHE/obj-builtin.  Incremental: a second run rebuilds nothing.

set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
src=/usr/src/linux-source-6.12.tar.xz
cache=
jobs=$(nproc)
build=${BUILD:-build}

usage() {
	echo "usage: $0 [--source TARBALL] [--cache DIR] [--jobs N] [-- USBRIG-ARGS...]" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--source) [ $# -ge 2 ] || usage; src=$2; shift 2 ;;
	--cache) [ $# -ge 2 ] || usage; cache=$2; shift 2 ;;
	--jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "run.sh: unknown option '$1'" >&2; usage ;;
	esac
done
case $jobs in ''|*[!0-9]*) echo "run.sh: --jobs takes a number, not '$jobs'" >&2; exit 2 ;; esac
if [ ! -r "$src" ]; then
	echo "run.sh: $src: no such file (apt-get install $(basename "$src" .tar.xz))" >&2
	exit 2
fi

# linux-source-6.12.tar.xz -> linux-source-6.12, version 6.12
pkg=$(basename "$src" .tar.xz)
ver=${pkg#linux-source-}
[ -n "$cache" ] || cache=$top/build/kernel-tree-$ver

cd "$top"
t0=$(date +%s)
KERNEL_TARBALL=$src KERNEL_SRCPKG=$pkg kernel-patch/build.sh \
	--cache "$cache" --flavour builtin --series /dev/null --jobs "$jobs"
obj=$cache/obj-builtin
echo "kernel-tree: $obj built in $(( $(date +%s) - t0 ))s:" \
	"$(grep -c '=y' "$obj/.config") options built in," \
	"$(grep -c '=m' "$obj/.config") modules"

[ $# -gt 0 ] || set -- tests/scenarios
exec "$build/usbrig" --kernel-tree "$obj" "$@"
