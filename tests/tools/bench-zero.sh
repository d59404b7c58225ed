#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench-zero.sh DEV - testusb throughput of usbrig's Gadget Zero against the
# kernel's own export path, side by side in one guest (run inside it by
# tests/bench/zero-vs-kernel.scenario, which loads the modules and attaches
# usbrig's gadget as DEV, e.g. 1-1).
#
# The kernel's path: dummy_hcd + configfs SourceSink (usb_f_ss_lb, g_zero's
# ids 0525:a4a0, default options: bulk_buflen 4096, bulk_qlen 1; 64 KiB x 8
# measured the same) on dummy_udc.0, exported by usbip-host +
# usbipd on 127.0.0.1:PORT (3240 is usbrig-gadget's) and imported with the
# same `usbip attach` the harness uses.  usbtest binds both imports.
#
# Cases (testusb; MB = 10^6 bytes, from the duration usbtest measures):
#   1 bulk OUT, 2 bulk IN: -c 200 -s 65536 (200 x 64 KiB)
#   5 bulk OUT, 6 bulk IN scatter-gather: -c 6 -g 32 -s 65536 (6 x 32 x 64 KiB)
# Each case runs ROUNDS (3) times per device, alternating devices; the best
# round counts (the 2-core host is shared).  Prints one line per case:
#   bench-zero: test 1 bulk OUT 200x64KiB: usbrig 25.1 MB/s, kernel 24.3 MB/s, usbrig/kernel 1.03
# Exit status 0, or 1 with a "bench-zero: FAIL: ..." line.

set -u
PORT=${PORT:-3241}
ROUNDS=${ROUNDS:-3}
G=/sys/kernel/config/usb_gadget/usbrig-bench-zero

fail() {
	echo "bench-zero: FAIL: $*"
	exit 1
}

[ $# -eq 1 ] || fail "usage: $0 DEV"
udev_usbrig=$1

node_of() {
	printf /dev/bus/usb/%03d/%03d "$(cat "/sys/bus/usb/devices/$1/busnum")" \
		"$(cat "/sys/bus/usb/devices/$1/devnum")"
}

wait_for() {	# wait_for SECONDS COMMAND...: until COMMAND succeeds
	n=$(($1 * 10))
	shift
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.1
	done
}

# ---- the kernel's Gadget Zero on dummy_hcd ----
grep -q ' /sys/kernel/config ' /proc/mounts ||
	mount -t configfs none /sys/kernel/config || fail "mount configfs"
mkdir "$G" || fail "mkdir $G"
echo 0x0525 >"$G/idVendor"
echo 0xa4a0 >"$G/idProduct"
mkdir "$G/strings/0x409"
echo "Gadget Zero" >"$G/strings/0x409/product"
echo "kernel-zero" >"$G/strings/0x409/serialnumber"
mkdir "$G/functions/SourceSink.0" || fail "no SourceSink function (usb_f_ss_lb)"
mkdir "$G/configs/c.1"
ln -s "$G/functions/SourceSink.0" "$G/configs/c.1/" || fail "link SourceSink"
echo dummy_udc.0 >"$G/UDC" || fail "bind dummy_udc.0"

local_busid() {
	for d in /sys/devices/platform/dummy_hcd.0/usb*/*-*; do
		[ -e "$d/idVendor" ] && basename "$d" && return 0
	done
	return 1
}
wait_for 10 local_busid || fail "no device on dummy_hcd"
busid=$(local_busid)

usbipd --tcp-port "$PORT" --pid /run/usbipd.pid -D || fail "usbipd"
wait_for 5 usbip bind -b "$busid" || fail "usbip bind -b $busid"
usbip --tcp-port "$PORT" attach -r 127.0.0.1 -b "$busid" ||
	fail "usbip attach -b $busid"

vhci_kernel() {	# the imported device: on a vhci bus, serial kernel-zero
	for d in /sys/devices/platform/vhci_hcd.*/usb*/*-*; do
		[ "$(cat "$d/serial" 2>/dev/null)" = kernel-zero ] &&
			basename "$d" && return 0
	done
	return 1
}
wait_for 10 vhci_kernel || fail "the kernel's gadget did not appear on vhci"
udev_kernel=$(vhci_kernel)
wait_for 10 test -e "/sys/bus/usb/drivers/usbtest/$udev_kernel:1.0" ||
	fail "usbtest did not bind $udev_kernel:1.0"
node_usbrig=$(node_of "$udev_usbrig")
node_kernel=$(node_of "$udev_kernel")
echo "bench-zero: usbrig $udev_usbrig ($node_usbrig), kernel $busid on dummy_hcd imported as $udev_kernel ($node_kernel)"

# ---- measure ----
secs() {	# secs NODE CASE ARGS...: usbtest's duration of one run
	node=$1
	t=$2
	shift 2
	out=$(testusb -D "$node" -t "$t" "$@" 2>&1)
	s=$(echo "$out" | sed -n "s/.* test $t, *\([0-9.]*\) secs.*/\1/p")
	[ -n "$s" ] || fail "testusb -D $node -t $t $*: $out"
	echo "$s"
}

bench() {	# bench CASE LABEL BYTES ARGS...
	t=$1
	label=$2
	bytes=$3
	shift 3
	best_u=0
	best_k=0
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		su=$(secs "$node_usbrig" "$t" "$@") || exit 1
		sk=$(secs "$node_kernel" "$t" "$@") || exit 1
		best_u=$(awk -v b="$bytes" -v s="$su" -v m="$best_u" \
			'BEGIN { v = s > 0 ? b / s / 1e6 : 0; print (v > m ? v : m) }')
		best_k=$(awk -v b="$bytes" -v s="$sk" -v m="$best_k" \
			'BEGIN { v = s > 0 ? b / s / 1e6 : 0; print (v > m ? v : m) }')
		r=$((r + 1))
	done
	awk -v t="$t" -v l="$label" -v u="$best_u" -v k="$best_k" 'BEGIN {
		printf "bench-zero: test %s %s: usbrig %.1f MB/s, kernel %.1f MB/s, usbrig/kernel %.2f\n",
			t, l, u, k, (k > 0 ? u / k : 0) }'
}

bench 1 "bulk OUT 200x64KiB" $((200 * 65536)) -c 200 -s 65536
bench 2 "bulk IN 200x64KiB" $((200 * 65536)) -c 200 -s 65536
bench 5 "sg OUT 6x32x64KiB" $((6 * 32 * 65536)) -c 6 -g 32 -s 65536
bench 6 "sg IN 6x32x64KiB" $((6 * 32 * 65536)) -c 6 -g 32 -s 65536

# ---- tear the kernel's side down (the agent then unloads the modules) ----
port=$(cat /sys/devices/platform/vhci_hcd.*/status* 2>/dev/null |
	awk -v b="$udev_kernel" '$7 == b { print $2 + 0; exit }')
[ -n "$port" ] && usbip detach -p "$port" >/dev/null 2>&1
[ -f /run/usbipd.pid ] && kill "$(cat /run/usbipd.pid)" 2>/dev/null
usbip unbind -b "$busid" >/dev/null 2>&1
echo "" >"$G/UDC"
rm "$G/configs/c.1/SourceSink.0"
rmdir "$G/configs/c.1" "$G/functions/SourceSink.0" "$G/strings/0x409" "$G"
exit 0
