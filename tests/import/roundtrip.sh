#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# roundtrip.sh - every example gadget through the importers and back.
#
#   tests/import/roundtrip.sh [--build DIR] [--out DIR] [--identity]
#                             [--group N] [GADGET...]
#
# Phase 1, one guest boot: the gadgets (default gadgets/examples/*.gadget,
# but those of SKIP below) are attached, up to --group N (default 7, at
# most 8) per scenario, with a usbmon text capture (debugfs usbmon/0u) and
# a tcpdump pcap of usbmon0 running from before the first attach; then
# each device's `lsusb -v -d VID:PID` and its sysfs folder (descriptors,
# bos_descriptors, manufacturer, product, serial, speed, busnum, devnum,
# configuration, each interface's `interface`) are saved to the host
# (the scenarios' `save` steps).
#
# On the host each dump is imported: `usbrig-import FORMAT:FILE --select
# VID:PID` for lsusb, sysfs, usbmon and pcap.
#
# Phase 2, one guest boot: one scenario per imported gadget attaches it
# and saves the same two dumps.  A test passes when the guest read back
# what it read from the original: the sysfs `descriptors` byte for byte
# (sysfs, usbmon, pcap imports; the sysfs import also the manufacturer,
# product, serial and speed attributes), the `lsusb -v` text but for the
# bus and device numbers (lsusb import).
#
# Output: KTAP on stdout, one test per gadget for the collection and one
# per gadget and format for the round trip, then "N passed, N failed".
# A usbmon text import of a device whose descriptors are longer than 32
# bytes is `not ok ... # TODO` (KTAP: an expected failure, not counted)
# when the importer noted the cut and the device descriptor came back
# right: usbmon's text interface keeps 32 bytes of each URB's data.
# Exit 0 when nothing failed, 1 otherwise, 2 usage.  Everything lands in
# --out (default BUILD/import-roundtrip), wiped first.
#
# --identity: no importer; each "import" is a copy of the original
# script.  Checks the rig itself (capture, save, comparison) while
# usbrig-import is not built; without --identity a missing usbrig-import
# skips phase 2.

set -u

# Gadgets that cannot round trip, on purpose:
#  - malformed-total: its configuration descriptor is broken by design
#    (wTotalLength cuts the last endpoint, bNumEndpoints overstates);
#    usbcore parses around it, so the device's own bytes are not what the
#    kernel and lsusb show, and no import of them can be a valid script.
SKIP="malformed-total"
FORMATS="lsusb sysfs usbmon pcap"

root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
out=
identity=0
group=7
gadgets=()

usage() {
	sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd) || usage; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--identity) identity=1; shift ;;
	--group) group=$2; shift 2 ;;
	-h|--help) usage ;;
	-*) usage ;;
	*) gadgets+=("$(realpath "$1")"); shift ;;
	esac
done
case $group in [1-8]) ;; *) usage ;; esac
[ -n "$out" ] || out=$build/import-roundtrip
usbrig=$build/usbrig
gadget_bin=$build/usbrig-gadget
import=$build/usbrig-import
for b in "$usbrig" "$gadget_bin"; do
	[ -x "$b" ] || { echo "roundtrip: no $b (make)" >&2; exit 2; }
done
if [ ${#gadgets[@]} -eq 0 ]; then
	for g in "$root"/gadgets/examples/*.gadget; do
		n=$(basename "$g" .gadget)
		case " $SKIP " in *" $n "*) continue ;; esac
		gadgets+=("$g")
	done
fi

rm -rf "$out"
mkdir -p "$out/phase1" "$out/phase2" "$out/import" "$out/saved1" \
	"$out/saved2" || exit 2

# ---- the gadgets: name, VID:PID, scenario of phase 1 ----
declare -A vidpid scen gid gpath
names=()
i=0
for g in "${gadgets[@]}"; do
	n=$(basename "$g" .gadget)
	# "# NAME: VVVV:PPPP speed"
	vp=$("$gadget_bin" --dump "$g" 2>/dev/null | sed -n '1s/^# [^ ]*: \([0-9a-f]\{4\}:[0-9a-f]\{4\}\) .*/\1/p')
	if [ -z "$vp" ]; then
		echo "roundtrip: $g: usbrig-gadget --dump gives no VID:PID" >&2
		exit 2
	fi
	names+=("$n")
	gpath[$n]=$g
	vidpid[$n]=$vp
	scen[$n]=collect-$((i / group + 1))
	gid[$n]=g$((i % group + 1))
	i=$((i + 1))
done

# The shell of one device's dumps: lsusb -v, the sysfs folder as a tar.
# $1 gadget id, $2 lsusb's selector ("": -s BUS:DEV of the device).  No
# `${` but the gadget's own: the scenario language has no escape for it.
dump_cmd() {
	local id=$1 sel=$2 d="/sys/bus/usb/devices/\${$1.dev}"

	[ -n "$sel" ] || sel="-s \$(cat $d/busnum):\$(cat $d/devnum)"
	printf '%s' "rm -rf /tmp/$id /tmp/$id.tar; mkdir -p /tmp/$id; lsusb -v $sel >/tmp/$id.lsusb 2>&1; for f in descriptors bos_descriptors manufacturer product serial speed busnum devnum configuration; do [ -e $d/\$f ] && cat $d/\$f >/tmp/$id/\$f; done; for i in $d/*:*; do [ -e \$i/interface ] && b=\$(basename \$i) && mkdir -p /tmp/$id/\$b && cat \$i/interface >/tmp/$id/\$b/interface; done; tar -C /tmp/$id -cf /tmp/$id.tar ."
}

# ---- phase 1: collect ----
for s in $(printf '%s\n' "${scen[@]}" | sort -u); do
	f=$out/phase1/$s.scenario
	{
		echo "# Round trip phase 1 (tests/import/roundtrip.sh): attach the"
		echo "# gadgets under usbmon and tcpdump, save what a bug report carries."
		echo "timeout 600"
		echo "requires tool lsusb"
		echo "requires tool tcpdump"
		for n in "${names[@]}"; do
			[ "${scen[$n]}" = "$s" ] || continue
			echo "gadget ${gid[$n]} \"${gpath[$n]}\""
		done
		echo
		echo "modprobe usbmon"
		echo "expect node /sys/kernel/debug/usb/usbmon/0u"
		echo "run \"setsid cat /sys/kernel/debug/usb/usbmon/0u </dev/null >/tmp/usbmon.txt 2>&1 & echo \$! >/tmp/cat.pid; sleep 1; kill -0 \$(cat /tmp/cat.pid)\""
		# no log of an earlier boot's capture: the loop must wait for
		# this tcpdump's own line (by then setsid has left the step's
		# process group, which is killed when the step's shell exits)
		echo "run \"rm -f /tmp/tcpdump.log /tmp/attach.pcap; setsid tcpdump -i usbmon0 -U -w /tmp/attach.pcap </dev/null >/tmp/tcpdump.log 2>&1 & echo \$! >/tmp/tcpdump.pid; for i in 1 2 3 4 5 6 7 8 9 10; do grep -q listening /tmp/tcpdump.log && break; sleep 0.5; done; cat /tmp/tcpdump.log\" output-contains \"listening on usbmon0\""
		for n in "${names[@]}"; do
			[ "${scen[$n]}" = "$s" ] || continue
			echo "attach ${gid[$n]} no-verify"
		done
		echo "run \"sleep 1; kill \$(cat /tmp/tcpdump.pid) \$(cat /tmp/cat.pid); sleep 1\" within 30s"
		echo "save /tmp/usbmon.txt usbmon.txt"
		echo "save /tmp/attach.pcap attach.pcap"
		for n in "${names[@]}"; do
			[ "${scen[$n]}" = "$s" ] || continue
			id=${gid[$n]}
			echo "run \"$(dump_cmd "$id" "-d ${vidpid[$n]}")\" status any"
			echo "save /tmp/$id.lsusb $n/lsusb.txt"
			echo "save /tmp/$id.tar $n/sysfs.tar"
		done
	} >"$f"
done

echo "roundtrip: phase 1: ${#names[@]} gadget(s) in $(ls "$out/phase1" | wc -l) scenario(s), one boot" >&2
"$usbrig" --save-dir "$out/saved1" "$out"/phase1/*.scenario \
	>"$out/phase1.ktap" 2>"$out/phase1.log"
echo "roundtrip: phase 1: $(tail -1 "$out/phase1.ktap")" >&2

untar() {
	[ -s "$1/sysfs.tar" ] || return 1
	mkdir -p "$1/sysfs" && tar -C "$1/sysfs" -xf "$1/sysfs.tar"
}

# ---- import ----
declare -A why
have_import=1
if [ $identity = 0 ] && [ ! -x "$import" ]; then
	have_import=0
fi
n_imports=0
for n in "${names[@]}"; do
	d=$out/saved1/${scen[$n]}
	untar "$d/$n" 2>/dev/null
	[ $have_import = 1 ] || continue
	for fmt in $FORMATS; do
		case $fmt in
		lsusb) src=$d/$n/lsusb.txt ;;
		sysfs) src=$d/$n/sysfs/descriptors ;;
		usbmon) src=$d/usbmon.txt ;;
		pcap) src=$d/attach.pcap ;;
		esac
		dst=$out/import/$n-$fmt.gadget
		if [ ! -s "$src" ]; then
			why[$n.$fmt]="phase 1 saved no $src"
			continue
		fi
		if [ $identity = 1 ]; then
			cp "${gpath[$n]}" "$dst"
		elif ! "$import" "$fmt:$src" --select "${vidpid[$n]}" \
			-o "$dst" >"$dst.log" 2>&1; then
			why[$n.$fmt]="usbrig-import $fmt:$src --select ${vidpid[$n]} failed: $(tail -3 "$dst.log" | tr '\n' ' ')"
			rm -f "$dst"
			continue
		fi
		if ! "$gadget_bin" --check "$dst" >"$dst.check" 2>&1; then
			why[$n.$fmt]="the import does not pass usbrig-gadget --check: $(head -3 "$dst.check" | tr '\n' ' ')"
			continue
		fi
		f=$out/phase2/$n-$fmt.scenario
		{
			echo "# Round trip phase 2 (tests/import/roundtrip.sh): the $fmt"
			echo "# import of $n, attached and dumped again."
			echo "timeout 120"
			echo "requires tool lsusb"
			echo "gadget d \"$dst\""
			echo
			echo "attach d no-verify"
			echo "run \"$(dump_cmd d "")\" status any"
			echo "save /tmp/d.lsusb lsusb.txt"
			echo "save /tmp/d.tar sysfs.tar"
		} >"$f"
		n_imports=$((n_imports + 1))
	done
done

# ---- phase 2: read the imports back ----
if [ $n_imports -gt 0 ]; then
	echo "roundtrip: phase 2: $n_imports import(s), one boot" >&2
	"$usbrig" --save-dir "$out/saved2" "$out"/phase2/*.scenario \
		>"$out/phase2.ktap" 2>"$out/phase2.log"
	echo "roundtrip: phase 2: $(tail -1 "$out/phase2.ktap")" >&2
fi

# ---- compare, report ----
lsusb_norm() {
	sed -E 's/^Bus [0-9]+ Device [0-9]+:/Bus B Device D:/' "$1"
}

total=$(( ${#names[@]} * (1 + $(echo $FORMATS | wc -w)) ))
echo "KTAP version 1"
echo "1..$total"
t=0 passed=0 failed=0 skipped=0 todo=0
result() {	# ok|fail|skip|todo NAME [DETAIL...]
	local r=$1 name=$2 reason=${3:-}

	shift 2
	t=$((t + 1))
	case $r in
	skip|todo) shift ;;
	esac
	for l in "$@"; do
		printf '%s\n' "$l" | sed 's/^/# /'
	done
	case $r in
	ok) echo "ok $t $name"; passed=$((passed + 1)) ;;
	skip) echo "ok $t $name # SKIP $reason"; skipped=$((skipped + 1)) ;;
	todo) echo "not ok $t $name # TODO $reason"; todo=$((todo + 1)) ;;
	*) echo "not ok $t $name"; failed=$((failed + 1)) ;;
	esac
}

for n in "${names[@]}"; do
	d=$out/saved1/${scen[$n]}/$n
	if [ -s "$d/lsusb.txt" ] && [ -s "$d/sysfs/descriptors" ] &&
	   [ -s "$out/saved1/${scen[$n]}/usbmon.txt" ] &&
	   [ -s "$out/saved1/${scen[$n]}/attach.pcap" ]; then
		result ok "collect $n"
	else
		result fail "collect $n" "phase 1 did not save every dump of $n (see $out/phase1.ktap)"
	fi
done
for n in "${names[@]}"; do
	o=$out/saved1/${scen[$n]}/$n
	for fmt in $FORMATS; do
		name="roundtrip $fmt $n"
		c=$out/saved2/$n-$fmt
		if [ $have_import = 0 ]; then
			result skip "$name" "$import is not built (make $import)"
			continue
		fi
		if [ -n "${why[$n.$fmt]:-}" ]; then
			result fail "$name" "${why[$n.$fmt]}"
			continue
		fi
		if ! untar "$c" 2>/dev/null || [ ! -s "$c/lsusb.txt" ]; then
			result fail "$name" "phase 2 saved no dump of the import (see $out/phase2.ktap, scenario $n-$fmt)"
			continue
		fi
		if [ $fmt = lsusb ]; then
			if diff -u <(lsusb_norm "$o/lsusb.txt") \
				<(lsusb_norm "$c/lsusb.txt") >"$c/lsusb.diff"; then
				result ok "$name"
			else
				result fail "$name" "lsusb -v differs (original, import):" \
					"$(head -20 "$c/lsusb.diff")"
			fi
			continue
		fi
		if ! cmp -s "$o/sysfs/descriptors" "$c/sysfs/descriptors" &&
		   [ $fmt = usbmon ] &&
		   grep -q 'the capture kept' "$out/import/$n-$fmt.gadget" &&
		   cmp -s -n 18 "$o/sysfs/descriptors" "$c/sysfs/descriptors"; then
			# usbmon's text keeps 32 bytes of each URB's data
			# (DATA_MAX in drivers/usb/mon/mon_text.c): a longer
			# descriptor cannot come back whole.  The importer
			# says so; the device descriptor must still be right.
			result todo "$name" "usbmon text keeps 32 bytes per URB" \
				"$(grep 'the capture kept' "$out/import/$n-$fmt.gadget" |
				   sed 's/^# //' | head -2)"
			continue
		fi
		if ! cmp -s "$o/sysfs/descriptors" "$c/sysfs/descriptors"; then
			result fail "$name" "sysfs descriptors differ (original, import):" \
				"$(cmp -l "$o/sysfs/descriptors" "$c/sysfs/descriptors" 2>&1 | head -5)" \
				"$(xxd "$o/sysfs/descriptors" | head -8)" \
				"$(xxd "$c/sysfs/descriptors" | head -8)"
			continue
		fi
		bad=
		if [ $fmt = sysfs ]; then
			for a in manufacturer product serial speed; do
				if [ -e "$o/sysfs/$a" ] || [ -e "$c/sysfs/$a" ]; then
					cmp -s "$o/sysfs/$a" "$c/sysfs/$a" 2>/dev/null ||
						bad="$bad $a"
				fi
			done
		fi
		if [ -n "$bad" ]; then
			result fail "$name" "descriptors equal, but not:$bad"
		else
			result ok "$name"
		fi
	done
done
[ $skipped = 0 ] || echo "# $skipped skipped"
[ $todo = 0 ] || echo "# $todo todo (known limits of a format, not counted as failures)"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
