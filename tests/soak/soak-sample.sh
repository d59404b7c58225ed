#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# soak-sample - the guest side of the soak scenarios (busybox sh): what the
# gadget server holds, sampled once the soak is warm and again at its end.
#
#   soak-sample mark      note usbrig-gadget's open descriptors and VmRSS
#   soak-sample check     compare with the mark: the same descriptors, and
#                         at most SOAK_RSS_SLACK_KIB (256) more memory
#
# Prints "soak: fds A -> B, rss A -> B KiB"; exit 1 when either grew.

dir=/tmp/soak
mkdir -p $dir

pid=$(pidof usbrig-gadget | cut -d' ' -f1)
if [ -z "$pid" ]; then
	echo "soak: no usbrig-gadget process"
	exit 1
fi
fds=$(ls /proc/$pid/fd | wc -l)
rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$pid/status)

case $1 in
mark)
	echo "$fds $rss" >$dir/mark
	echo "soak: mark: fds $fds, rss $rss KiB"
	;;
check)
	read -r fds0 rss0 <$dir/mark
	echo "soak: fds $fds0 -> $fds, rss $rss0 -> $rss KiB"
	if [ "$fds" -ne "$fds0" ]; then
		echo "soak: usbrig-gadget holds $((fds - fds0)) more descriptors"
		exit 1
	fi
	if [ $((rss - rss0)) -gt ${SOAK_RSS_SLACK_KIB:-256} ]; then
		echo "soak: usbrig-gadget grew by $((rss - rss0)) KiB"
		exit 1
	fi
	;;
*)
	echo "usage: soak-sample mark|check" >&2
	exit 2
	;;
esac
