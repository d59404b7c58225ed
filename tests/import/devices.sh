#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# devices.sh - real devices' lsusb -v pastes, served and read back.
#
#   tests/import/devices.sh [--build DIR] [--out DIR] [PASTE...]
#
# For every paste (default tests/data/devices/*.lsusb, one device each;
# where each comes from: tests/data/devices/SOURCES.md): usbrig-import
# writes a gadget (`lsusb:PASTE`), usbrig-gadget --check loads it, and one
# guest boot attaches each import (one scenario per device) and saves the
# guest's own `lsusb -v` of it.  A device passes when that text shows
# every field the paste shows, with the same values, in the same order
# (tests/tools/lsusb-same.sh: the reporter's usbutils and the guest's
# differ in layout, not in fields).
#
# Pastes of devices that Linux cannot enumerate (tests/data/devices/
# unenumerable/: no configuration) must import and load, nothing more.
#
# Output: KTAP on stdout, one test per paste, then "N passed, N failed".
# Exit 0 when nothing failed, 1 otherwise, 2 usage.  Files in --out
# (default BUILD/import-devices), wiped first.

set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
out=
pastes=()

usage() {
	sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd) || usage; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help|-*) usage ;;
	*) pastes+=("$(realpath "$1")"); shift ;;
	esac
done
[ -n "$out" ] || out=$build/import-devices
given=${#pastes[@]}
if [ $given -eq 0 ]; then
	pastes=("$root"/tests/data/devices/*.lsusb)
fi
for b in usbrig usbrig-gadget usbrig-import; do
	[ -x "$build/$b" ] || { echo "devices: no $build/$b (make)" >&2; exit 2; }
done
same=$root/tests/tools/lsusb-same.sh

rm -rf "$out"
mkdir -p "$out/import" "$out/scenarios" "$out/saved" || exit 2

declare -A why paste
names=()
for p in "${pastes[@]}"; do
	n=$(basename "$p" .lsusb)
	names+=("$n")
	paste[$n]=$p
	g=$out/import/$n.gadget
	if ! "$build/usbrig-import" "lsusb:$p" -o "$g" >"$g.log" 2>&1; then
		why[$n]="usbrig-import failed: $(head -3 "$g.log" | tr '\n' ' ')"
		continue
	fi
	if ! "$build/usbrig-gadget" --check "$g" >"$g.check" 2>&1; then
		why[$n]="the import does not load: $(head -3 "$g.check" | tr '\n' ' ')"
		continue
	fi
	# lsusb by bus and device number: two pastes may share VID:PID
	d='/sys/bus/usb/devices/${d.dev}'
	{
		echo "# tests/import/devices.sh: $n, imported and read back."
		echo "timeout 60"
		echo "requires tool lsusb"
		echo "gadget d \"$g\""
		echo
		echo "attach d no-verify"
		echo "run \"lsusb -v -s \$(cat $d/busnum):\$(cat $d/devnum) >/tmp/d.lsusb 2>&1\" status any"
		echo "save /tmp/d.lsusb lsusb.txt"
	} >"$out/scenarios/$n.scenario"
done

if ls "$out"/scenarios/*.scenario >/dev/null 2>&1; then
	echo "devices: $(ls "$out/scenarios" | wc -l) import(s), one boot" >&2
	"$build/usbrig" --save-dir "$out/saved" "$out"/scenarios/*.scenario \
		>"$out/run.ktap" 2>"$out/run.log"
	echo "devices: $(tail -1 "$out/run.ktap")" >&2
fi

unenum=()
if [ $given -eq 0 ]; then
	for p in "$root"/tests/data/devices/unenumerable/*.lsusb; do
		[ -e "$p" ] && unenum+=("$p")
	done
fi

echo "KTAP version 1"
echo "1..$(( ${#names[@]} + ${#unenum[@]} + 1 ))"
t=0 passed=0 failed=0
for p in "${unenum[@]}"; do
	n=unenumerable-$(basename "$p" .lsusb)
	g=$out/import/$n.gadget
	t=$((t + 1))
	if "$build/usbrig-import" "lsusb:$p" -o "$g" >"$g.log" 2>&1 &&
	   "$build/usbrig-gadget" --check "$g" >"$g.check" 2>&1; then
		echo "ok $t $n (imports and loads; Linux does not enumerate it)"
		passed=$((passed + 1))
	else
		cat "$g.log" "$g.check" 2>/dev/null | head -3 | sed 's/^/# /'
		echo "not ok $t $n"
		failed=$((failed + 1))
	fi
done
for n in "${names[@]}"; do
	t=$((t + 1))
	c=$out/saved/$n/lsusb.txt
	if [ -n "${why[$n]:-}" ]; then
		echo "# ${why[$n]}"
	elif [ ! -s "$c" ]; then
		echo "# the guest saved no lsusb -v of the import (see $out/run.ktap, scenario $n)"
	elif "$same" "${paste[$n]}" "$c" >"$c.same" 2>&1; then
		echo "# $(tail -1 "$c.same")"
		echo "ok $t $n"
		passed=$((passed + 1))
		continue
	else
		sed 's/^/# /' "$c.same"
	fi
	echo "not ok $t $n"
	failed=$((failed + 1))
done
# The comparison must be able to fail: the first copy the guest saved,
# with one field changed, must not pass as the paste.
t=$((t + 1))
first=
for n in "${names[@]}"; do
	[ -s "$out/saved/$n/lsusb.txt" ] && { first=$n; break; }
done
if [ -n "$first" ]; then
	sed '0,/bMaxPacketSize0 *[0-9]*/s//bMaxPacketSize0 99/' \
		"$out/saved/$first/lsusb.txt" >"$out/changed.txt"
	if "$same" "${paste[$first]}" "$out/changed.txt" >"$out/changed.same" 2>&1; then
		echo "# lsusb-same.sh took a changed bMaxPacketSize0 for the paste"
		echo "not ok $t lsusb-same sees a changed field"
		failed=$((failed + 1))
	else
		echo "# $(head -1 "$out/changed.same")"
		echo "ok $t lsusb-same sees a changed field"
		passed=$((passed + 1))
	fi
else
	echo "ok $t lsusb-same sees a changed field # SKIP no copy came back"
fi
echo "$passed passed, $failed failed"
[ $failed = 0 ]
