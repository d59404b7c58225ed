#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/faults/check.sh USBRIG OUT - the rig under faults (make check-faults).
#
# One run, one job, of seven faults each followed by a good scenario:
#   agent-oops       an oops in the agent's own step kills usbrig-agent
#   connection-cut   the device's TCP connection closed mid-transfer
#   driver-hung      a driver stuck in probe: the kernel's hung-task report
#   driver-oops      a driver's oops in a child of the agent, a device's
#                    lock left held
#   guest-hang       the guest hangs without a word (every CPU spinning)
#   guest-panic      the guest panics during a step
#   server-killed    usbrig-gadget killed in the middle of a transfer
# Each fault must fail with its cause in the report, each good neighbour
# (which also checks that its kernel has not oopsed) pass, the JUnit file
# must be there with all fourteen, and the run must end within the
# scenarios' own timeouts (plus boots); the oopses must not wait for
# theirs.  Then a guest that never boots: exit 125 (cannot test).  Exit 0
# when all hold.

set -u
usbrig=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
rm -f "$out"/*.scenario "$out"/faults.xml "$out"/faults.ktap

# usbrig runs scenarios sorted by name: fault-X-next comes right after
# fault-X, in its boot or, when fault-X ends the boot, in the next one
faults="agent-oops connection-cut driver-hung driver-oops guest-hang
guest-panic server-killed"
list=
for f in $faults; do
	cp "$here/$f.scenario" "$out/$f.scenario"
	sed "s/^name fault-neighbour$/name fault-$f-next/" \
		"$here/good.scenario" >"$out/$f-next.scenario"
	list="$list $out/$f.scenario $out/$f-next.scenario"
done

t0=$(date +%s)
# shellcheck disable=SC2086
timeout 900 "$usbrig" --jobs 1 --junit "$out/faults.xml" $list \
	>"$out/faults.ktap" 2>"$out/faults.log"
rc=$?
took=$(( $(date +%s) - t0 ))

bad=0
say() { echo "faults: $*"; }
no() { say "FAIL: $*"; bad=$((bad + 1)); }

[ $rc -eq 1 ] || no "usbrig exited $rc (want 1: some scenarios failed)"
# the scenarios' timeouts (40+60+60+40+20+60+60 and 7 x 60) and a few
# boots
[ $took -le 840 ] || no "the run took $took s"
if [ -s "$out/faults.xml" ]; then
	n=$(grep -c '<testcase ' "$out/faults.xml")
	[ "$n" -eq 14 ] || no "JUnit has $n test cases, not 14"
else
	no "no JUnit file"
fi

# the block of one scenario in the KTAP (its subtest, up to its result)
block() {
	awk -v n="$1" '$0 ~ "# Subtest: " n "$" { on = 1 }
		on { print }
		on && $0 ~ "^(not )?ok [0-9]+ " n "$" { exit }' "$out/faults.ktap"
}

expect_fail() {	# NAME TEXT: fails, and its block says TEXT
	b=$(block "$1")
	if ! echo "$b" | grep -q "^not ok [0-9]* $1\$"; then
		no "$1 did not fail"
	elif ! echo "$b" | grep -qi -- "$2"; then
		no "$1 failed without '$2' in its report"
	else
		say "$1 failed as it should ($2)"
	fi
}

expect_fail fault-server-killed "usbrig-gadget"
# the device gone under the transfer; or, now and then on Debian's 6.1,
# usblcd's own general protection fault in usb_autopm_put_interface after
# lcd_write's failed submit, or from lcd_release when dd exits (a kernel
# bug the cut finds, a use of the interface after the disconnect freed it:
# the report, with the failed write, fails the scenario as it should)
expect_fail fault-connection-cut "no configured device\|lcd_write\|lcd_release"
expect_fail fault-guest-panic "sysrq"
expect_fail fault-guest-hang "ran over its timeout"
expect_fail fault-driver-hung "blocked for more than"
expect_fail fault-driver-oops "NULL pointer dereference"
expect_fail fault-agent-oops "NULL pointer dereference"
# the oopses end their boots at once, not by their 40 s timeouts
for f in driver-oops agent-oops; do
	t=$(sed -n "s/.*<testcase [^>]*name=\"fault-$f\"[^>]*time=\"\([0-9]*\).*/\1/p" \
		"$out/faults.xml")
	if [ -z "$t" ] || [ "$t" -ge 30 ]; then
		no "fault-$f took ${t:-?} s: its boot was not stopped at the oops"
	else
		say "fault-$f ended in $t s"
	fi
done
for f in $faults; do
	if grep -q "^ok [0-9]* fault-$f-next\$" "$out/faults.ktap"; then
		say "fault-$f-next passed"
	else
		no "fault-$f-next did not pass: a fault leaked into its neighbour"
	fi
done

# a guest that never boots (here: a boot limit no kernel meets) is no
# failure of the kernel under test but "cannot test", 125 as `git bisect
# run` wants it, with its JUnit still written
rm -f "$out/no-boot.xml"
timeout 120 "$usbrig" --boot-timeout 2 --junit "$out/no-boot.xml" \
	"$here/good.scenario" >"$out/no-boot.ktap" 2>"$out/no-boot.log"
rc=$?
if [ $rc -ne 125 ]; then
	no "a guest that does not boot: usbrig exited $rc (want 125)"
elif ! grep -q "did not run" "$out/no-boot.xml" 2>/dev/null; then
	no "a guest that does not boot: no JUnit saying the scenario did not run"
else
	say "a guest that does not boot: exit 125, JUnit written"
fi
say "$((17 - bad)) of 17 held, $took s; KTAP $out/faults.ktap"
[ $bad -eq 0 ]
