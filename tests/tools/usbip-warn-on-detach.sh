#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# usbip-warn-on-detach.sh - stands in for the guest's /usr/sbin/usbip (the
# real one moved to /usr/sbin/usbip.real) until the next `usbip detach`,
# which logs a kernel warning first, as a driver's disconnect might, then
# puts the real usbip back and runs it.  Everything else goes straight to
# the real one.  tests/scenarios/kernel-report-1-teardown.scenario installs
# it so that the agent's cleanup (which detaches what the scenario left
# attached) makes the kernel report.
if [ "$1" = detach ]; then
	echo '<4>WARNING: CPU: 0 PID: 1 at drivers/usb/usbip/vhci_hcd.c:1 usbrig teardown test' >/dev/kmsg
	mv /usr/sbin/usbip.real /usr/sbin/usbip
	exec /usr/sbin/usbip "$@"
fi
exec /usr/sbin/usbip.real "$@"
