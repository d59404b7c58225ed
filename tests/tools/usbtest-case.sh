#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# usbtest-case.sh DEV N [TESTUSB-OPTION...] - run one testusb case in the guest.
#
# Scenarios put it in the guest with
#   file tests/tools/usbtest-case.sh /usr/bin/usbtest-case
# next to testusb (`file ${build}/tools/testusb /usr/bin/testusb`).
# DEV is the device's name on the guest's USB bus (`${ID.dev}`, e.g. 1-1);
# its usbfs node /dev/bus/usb/BBB/DDD comes from sysfs busnum/devnum.
#
# testusb itself exits 0 whatever the kernel says: it prints
# "NODE test N,    S.UUUUUU secs" when usbtest ran the case and it passed,
# "NODE test N --> ERRNO (TEXT)" when it failed, and nothing when usbtest
# answered EOPNOTSUPP (the case does not apply to this device).  This
# wrapper prints testusb's output and turns those into an exit status:
# 0 passed, 1 failed, 4 skipped by usbtest (kselftest's code), 2 usage.

[ $# -ge 2 ] || { echo "usage: $0 DEV N [testusb options]" >&2; exit 2; }
dev=$1
n=$2
shift 2
sys=/sys/bus/usb/devices/$dev
if [ ! -r "$sys/busnum" ] || [ ! -r "$sys/devnum" ]; then
	echo "usbtest-case: no USB device $dev in sysfs" >&2
	exit 2
fi
node=$(printf /dev/bus/usb/%03d/%03d "$(cat "$sys/busnum")" "$(cat "$sys/devnum")")
out=$(testusb -D "$node" -t "$n" "$@" 2>&1)
st=$?
echo "$out"
if [ $st -ne 0 ]; then
	echo "usbtest-case: testusb exited with status $st"
	exit 1
fi
case "$out" in
*"test $n -->"*)
	exit 1 ;;
*"test $n, "*)
	exit 0 ;;
esac
echo "usbtest-case: usbtest skipped case $n (EOPNOTSUPP: it does not apply)"
exit 4
