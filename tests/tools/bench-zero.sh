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
#   15 iso OUT, 16 iso IN on alternate setting 1: -c 25 -g 4 -s 8192
#     (100 URBs of 8 packets, 4 queued; 1024 bytes per 1 ms service
#     interval, so the nominal rate is 1.024 MB/s)
# Each case runs ROUNDS (3) times per device, alternating devices; the best
# round counts (the 2-core host is shared).  Prints one line per case:
#   bench-zero: test 1 bulk OUT 200x64KiB: usbrig 25.1 MB/s, kernel 24.3 MB/s, usbrig/kernel 1.03
# The iso lines end ", nominal 1.024 MB/s".  Then the jitter of iso IN
# URB completions (tests/tools/iso-timing.c, usbtest unbound, usbfs
# claiming the interface), beside the guest's own timer's (the floor), in
# ROUNDS alternating rounds, each keeping its round with the lowest p95:
#   bench-zero: iso IN jitter, |URB interval - 8.000 ms| (250 URBs x 8 packets, 4 queued): usbrig median A p95 B max C ms (interval median D ms), kernel ...; guest timer median ...
#
# The kernel's side has no isochronous figures on this path: dummy_hcd
# offers no isochronous endpoints (ep3in-iso ... are commented out of
# dummy_hcd.c's table, and its transfer() fails any iso URB), so
# SourceSink's usb_ep_autoconfig() for them fails and it leaves alternate
# setting 1 out (f_sourcesink.c, sourcesink_bind() "no_iso").  The script
# looks for an isochronous endpoint in each device's descriptors and
# prints "kernel n/a (...)" when there is none; with a UDC that has them
# the same lines would measure both.
#
# Every "bench-zero:" line also goes to FIGURES (/tmp/bench-zero.txt),
# which the scenario saves to the host: a run step's result keeps only the
# last 1000 bytes of the output.
#
# Exit status 0, or 1 with a "bench-zero: FAIL: ..." line.

set -u
PORT=${PORT:-3241}
ROUNDS=${ROUNDS:-3}
FIGURES=${FIGURES:-/tmp/bench-zero.txt}
G=/sys/kernel/config/usb_gadget/usbrig-bench-zero

say() {	# say LINE: to the output and to FIGURES
	echo "$*" | tee -a "$FIGURES"
}

fail() {
	say "bench-zero: FAIL: $*"
	exit 1
}

: >"$FIGURES" || { echo "bench-zero: FAIL: cannot write $FIGURES"; exit 1; }

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
# alt 1's isochronous pair as zero.gadget's: 1024-byte packets, one per
# 2^(4-1) microframes (1 ms), mult 0, no burst.  These are SourceSink's
# defaults (g_zero.h GZERO_ISOC_*), written so that they cannot drift.
for a in isoc_interval=4 isoc_maxpacket=1024 isoc_mult=0 isoc_maxburst=0; do
	echo "${a#*=}" >"$G/functions/SourceSink.0/${a%%=*}" ||
		fail "SourceSink ${a%%=*}"
done
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
say "bench-zero: usbrig $udev_usbrig ($node_usbrig), kernel $busid on dummy_hcd imported as $udev_kernel ($node_kernel)"

# ---- measure ----
kernel_na=	# why the kernel's device is not measured, or empty
prec=1		# decimals of the MB/s figures
tail=		# the end of each bench line

secs() {	# secs NODE CASE ARGS...: usbtest's duration of one run
	node=$1
	t=$2
	shift 2
	out=$(testusb -D "$node" -t "$t" "$@" 2>&1)
	s=$(echo "$out" | sed -n "s/.* test $t, *\([0-9.]*\) secs.*/\1/p")
	# (in a command substitution: the caller fails with this text)
	[ -n "$s" ] || { echo "testusb -D $node -t $t $*: $out"; return 1; }
	echo "$s"
}

best() {	# best BYTES SECS BEST: the higher of BEST and BYTES/SECS in MB/s
	awk -v b="$1" -v s="$2" -v m="$3" \
		'BEGIN { v = s > 0 ? b / s / 1e6 : 0; print (v > m ? v : m) }'
}

# bench CASE LABEL BYTES ARGS...: one line, $tail at its end; the
# kernel's device too when $kernel_na is empty
bench() {
	t=$1
	label=$2
	bytes=$3
	shift 3
	best_u=0
	best_k=0
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		su=$(secs "$node_usbrig" "$t" "$@") || fail "$su"
		best_u=$(best "$bytes" "$su" "$best_u")
		if [ -z "$kernel_na" ]; then
			sk=$(secs "$node_kernel" "$t" "$@") || fail "$sk"
			best_k=$(best "$bytes" "$sk" "$best_k")
		fi
		r=$((r + 1))
	done
	awk -v t="$t" -v l="$label" -v u="$best_u" -v k="$best_k" \
		-v na="$kernel_na" -v p="$prec" -v tail="$tail" 'BEGIN {
		f = "%." p "f MB/s"	# (no %.*f in busybox awk)
		printf "bench-zero: test %s %s: usbrig " f ", ", t, l, u
		if (na != "")
			printf "kernel n/a (%s)", na
		else
			printf "kernel " f ", usbrig/kernel %.2f", k,
				(k > 0 ? u / k : 0)
		printf "%s\n", tail }' | tee -a "$FIGURES"
}

bench 1 "bulk OUT 200x64KiB" $((200 * 65536)) -c 200 -s 65536
bench 2 "bulk IN 200x64KiB" $((200 * 65536)) -c 200 -s 65536
bench 5 "sg OUT 6x32x64KiB" $((6 * 32 * 65536)) -c 6 -g 32 -s 65536
bench 6 "sg IN 6x32x64KiB" $((6 * 32 * 65536)) -c 6 -g 32 -s 65536

# ---- isochronous: alternate setting 1 ----
intf0() {	# intf0 DEV: the sysfs name of DEV's interface 0 (DEV:CONFIG.0)
	for i in /sys/bus/usb/devices/"$1":*.0; do
		[ -e "$i" ] && basename "$i" && return 0
	done
	return 1
}

# usbtest_bind ALT DEV...: usbtest's alt parameter (-1: its own choice,
# alt 0 here), then each DEV's interface 0 bound to usbtest afresh, so
# that its probe selects the alternate setting (an unbind puts alt 0 back)
usbtest_bind() {
	echo "$1" >/sys/module/usbtest/parameters/alt || fail "usbtest alt=$1"
	shift
	for d in "$@"; do
		i=$(intf0 "$d") || fail "no interface 0 on $d"
		[ -e "/sys/bus/usb/drivers/usbtest/$i" ] &&
			echo "$i" >/sys/bus/usb/drivers/usbtest/unbind
		echo "$i" >/sys/bus/usb/drivers/usbtest/bind ||
			fail "usbtest did not bind $i"
	done
}

usbtest_unbind() {	# usbtest_unbind DEV...
	for d in "$@"; do
		i=$(intf0 "$d") || fail "no interface 0 on $d"
		echo "$i" >/sys/bus/usb/drivers/usbtest/unbind ||
			fail "unbind usbtest from $i"
	done
}

# usbrig's alt 1 sets the figures: B bytes per service interval of US us
found=$(iso-timing find "$udev_usbrig" in) || fail "usbrig's gadget: $found"
echo "$found"
iso_b=$(echo "$found" | sed -n 's/.*, \([0-9]*\) B per [0-9]* us$/\1/p')
iso_us=$(echo "$found" | sed -n 's/.* B per \([0-9]*\) us$/\1/p')
if [ -z "$iso_b" ] || [ -z "$iso_us" ] || [ "$iso_us" -le 0 ]; then
	fail "iso-timing find: $found"
fi
ISO_URBS=250		# jitter: URBs of ISO_PACKETS packets, ISO_DEPTH queued
ISO_PACKETS=8
ISO_DEPTH=4
iso_size=$((ISO_PACKETS * iso_b))	# testusb -s: one URB, ISO_PACKETS packets
iso_devs=$udev_usbrig
iso-timing find "$udev_kernel" in
case $? in
0) iso_devs="$iso_devs $udev_kernel" ;;
4) kernel_na="no alt 1: dummy_udc has no isochronous endpoints" ;;
*) fail "iso-timing find $udev_kernel in" ;;
esac

# shellcheck disable=SC2086 # device names, split on purpose
usbtest_bind 1 $iso_devs
prec=3
# bytes per us are MB/s
tail=$(awk -v b="$iso_b" -v u="$iso_us" 'BEGIN { printf ", nominal %.3f MB/s", b / u }')
kib=$((iso_size / 1024))
bench 15 "iso OUT 25x4x${kib}KiB" $((25 * 4 * iso_size)) -c 25 -g 4 -s "$iso_size"
bench 16 "iso IN 25x4x${kib}KiB" $((25 * 4 * iso_size)) -c 25 -g 4 -s "$iso_size"

# jitter: usbfs claims the interface, so usbtest lets go of it first
# shellcheck disable=SC2086
usbtest_unbind $iso_devs

# spread ARGS...: one `iso-timing ARGS`, as "median A p95 B max C ms
# (interval median D ms)"
spread() {
	out=$(iso-timing "$@") || { echo "iso-timing $*: $out"; return 1; }
	echo "$out" | sed -n 's/^iso-timing: interval median \([0-9.]*\) ms, .*| median \([0-9.]*\) p95 \([0-9.]*\) max \([0-9.]*\) ms.*/median \2 p95 \3 max \4 ms (interval median \1 ms)/p'
}

lower_p95() {	# lower_p95 A B: the one with the lower p95, A when B is ""
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ")
		print (b != "" && (a == "" || y[4] + 0 < x[4] + 0)) ? b : a }'
}

# ROUNDS rounds, alternating usbrig, kernel and the guest's timer; each
# keeps its round with the lowest p95 (the host is shared)
ju=
jk=
jt=
r=0
while [ $r -lt "$ROUNDS" ]; do
	j=$(spread run "$udev_usbrig" in "$ISO_PACKETS" "$ISO_URBS" "$ISO_DEPTH") ||
		fail "$j"
	ju=$(lower_p95 "$ju" "$j")
	if [ -z "$kernel_na" ]; then
		j=$(spread run "$udev_kernel" in "$ISO_PACKETS" "$ISO_URBS" \
			"$ISO_DEPTH") || fail "$j"
		jk=$(lower_p95 "$jk" "$j")
	fi
	j=$(spread timer $((ISO_PACKETS * iso_us)) "$ISO_URBS") || fail "$j"
	jt=$(lower_p95 "$jt" "$j")
	r=$((r + 1))
done
if [ -z "$kernel_na" ]; then
	jk="kernel $jk"
else
	jk="kernel n/a ($kernel_na)"
fi
nominal=$(awk -v n="$ISO_PACKETS" -v u="$iso_us" 'BEGIN { printf "%.3f", n * u / 1000 }')
say "bench-zero: iso IN jitter, |URB interval - $nominal ms| ($ISO_URBS URBs x $ISO_PACKETS packets, $ISO_DEPTH queued): usbrig $ju, $jk; guest timer $jt"
# shellcheck disable=SC2086
usbtest_bind -1 $iso_devs

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
