#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/settle/check.sh USBRIG OUT [KERNEL] - a negative wait that may end
# early still fails on a late bind (make check-vm-patched).  Needs the
# patched kernel's usb_bindtest: KERNEL is usbrig's --kernel (`patched`
# unless told), USBRIG_KERNEL_DIR as the Makefile sets it.
#
# late-deferred-bind.scenario: `expect unbound h 0 for 5s` on a device
# nothing can bind must end at once (ended=settled), and `expect unbound g
# 0 for 5s` on an interface whose probe was deferred must wait, see the
# deferred probe succeed 1.5 s into the wait and fail ("bound after").  Exit 0
# when both hold.

set -u
usbrig=$1
out=$2
kernel=${3:-patched}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
ktap=$out/settle.ktap

"$usbrig" --kernel "$kernel" --jobs 1 "$here/late-deferred-bind.scenario" \
	>"$ktap" 2>"$out/settle.log"
rc=$?

bad=0
say() { echo "settle: $*"; }
no() { say "FAIL: $*"; bad=$((bad + 1)); }

[ $rc -eq 1 ] || no "usbrig exited $rc (want 1: the scenario fails)"
# the step's comment lines (extras, diags) come before its result line
grep -B1 '^  ok [0-9]* expect unbound h 0 for 5s$' "$ktap" |
	grep -q 'ended=settled' ||
	no "expect unbound h did not end early on settled matching"
if grep -B3 '^  not ok [0-9]* expect unbound g 0 for 5s$' "$ktap" |
	grep -q 'bound after'; then
	say "the deferred probe's late bind failed the negative wait, as it should"
else
	no "the late bind of g did not fail expect unbound g 0 for 5s"
fi
[ $bad -eq 0 ] || sed -n '/Subtest/,$p' "$ktap"
[ $bad -eq 0 ]
