#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replay.sh - real captures replayed: the driver's probe must succeed.
#
#   tests/import/replay.sh [--build DIR]
#
# Each capture in the table below is a usbmon text taken on real hardware
# (where from: tests/data/devices/SOURCES.md, "Captures").  Its control
# transfers become the import's `control` rules, so the replayed device
# answers the driver's vendor requests as the chip did.  For each one,
# `usbrig repro CAPTURE --expect OUTCOME` must exit 0, the guest must not
# warn or oops, and (usb-serial drivers) no port probe may fail: a
# usb-serial driver binds the interface even when its port_probe (where
# ch341, pl2303, cp210x talk to the chip) fails, so the interface alone
# says nothing.
#
# Then one negative control, proving the test can fail: a capture with its
# driver's first vendor request (S and C lines) deleted by sed must NOT
# give the outcome (repro exit 1).
#
# Output: KTAP on stdout, one test per capture plus the control, then
# "N passed, N failed".  Exit 0 when nothing failed, 1 otherwise, 2 usage.
# Work files in BUILD/import-replay, wiped first.

set -u

# capture (tests/data/devices/captures/) | expected outcome(s) for repro,
# comma-separated | usb-serial port that must probe (- when none)
CAPTURES=(
	"asix-ax88772-2001-3c05-enumeration-and-probe.usbmon|0:bound:asix,no-crash|-"
	"ch341-1a86-7523-enumeration-and-probe.usbmon|0:bound:ch341,no-crash|ttyUSB"
)
# negative control: capture | outcome that must NOT hold | sed address of
# the first vendor request's submission (that line and its completion, the
# next line, are deleted)
NEGATIVE="asix-ax88772-2001-3c05-enumeration-and-probe.usbmon|0:bound:asix|/ S Ci:.* s c0 13 0000 0000 0006 /"

root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build

usage() {
	sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || usage; build=$(cd "$2" && pwd) || usage; shift 2 ;;
	*) usage ;;
	esac
done
for b in usbrig usbrig-gadget usbrig-import; do
	[ -x "$build/$b" ] || { echo "replay: no $build/$b (make)" >&2; exit 2; }
done
caps=$root/tests/data/devices/captures
out=$build/import-replay
rm -rf "$out"
mkdir -p "$out" || exit 2

# repro FILE LOG OUTCOME... -> repro's exit status; the report of the guest
# is copied to LOG.report, the work folder removed
repro() {
	local file=$1 log=$2 rc work
	shift 2
	local args=()
	for e in "$@"; do args+=(--expect "$e"); done
	"$build/usbrig" repro "$file" "${args[@]}" --keep >"$log" 2>&1
	rc=$?
	work=$(sed -n 's/^usbrig repro: work folder //p' "$log" | tail -1)
	if [ -n "$work" ] && [ -d "$work" ]; then
		cat "$work"/saved/*/report.txt >"$log.report" 2>/dev/null
		rm -rf "$work"
	fi
	return $rc
}

echo "KTAP version 1"
echo "1..$(( ${#CAPTURES[@]} + 1 ))"
t=0 passed=0 failed=0
for row in "${CAPTURES[@]}"; do
	IFS='|' read -r cap outcomes port <<<"$row"
	n=${cap%.usbmon}
	t=$((t + 1))
	log=$out/$n.log
	IFS=',' read -r -a exp <<<"$outcomes"
	repro "$caps/$cap" "$log" "${exp[@]}"
	rc=$?
	sed -n '/^after attach/,/^verdict/p' "$log" | sed 's/^/# /'
	why=
	if [ $rc != 0 ]; then
		why="usbrig repro exit $rc (see $log)"
	elif [ "$port" != - ] &&
	     grep -q "probe of $port[0-9]* failed" "$log.report" 2>/dev/null; then
		why="the interface is bound but the port probe failed: $(grep -o "[^]]*probe of $port[0-9]* failed with error -[0-9]*" "$log.report" | head -1)"
	elif [ "$port" != - ] && [ ! -s "$log.report" ]; then
		why="no guest report to check the $port probe in"
	fi
	if [ -z "$why" ]; then
		echo "ok $t $n"
		passed=$((passed + 1))
	else
		echo "# $why"
		grep -E 'Could not|failed|error -[0-9]' "$log.report" 2>/dev/null |
			grep -v -E 'MMCONFIG|TSC' | head -5 | sed 's/^/# guest: /'
		echo "not ok $t $n"
		failed=$((failed + 1))
	fi
done

# negative control
t=$((t + 1))
IFS='|' read -r cap outcome addr <<<"$NEGATIVE"
n=${cap%.usbmon}-without-first-vendor-reply
mut=$out/$n.usbmon
sed "${addr},+1d" "$caps/$cap" >"$mut"
removed=$(( $(wc -l <"$caps/$cap") - $(wc -l <"$mut") ))
if [ $removed != 2 ]; then
	echo "# the sed address $addr deleted $removed lines of $cap, not 2"
	echo "not ok $t $n does not give $outcome"
	failed=$((failed + 1))
else
	repro "$mut" "$out/$n.log" "$outcome"
	rc=$?
	sed -n '/^after attach/,/^verdict/p' "$out/$n.log" | sed 's/^/# /'
	if [ $rc = 1 ]; then
		echo "ok $t $n does not give $outcome"
		passed=$((passed + 1))
	else
		echo "# usbrig repro exit $rc, wanted 1 (the outcome must not hold)"
		echo "not ok $t $n does not give $outcome"
		failed=$((failed + 1))
	fi
fi
echo "$passed passed, $failed failed"
[ $failed = 0 ]
