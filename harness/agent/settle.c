// SPDX-License-Identifier: GPL-2.0
/*
 * settle.c - has the kernel finished matching an interface?
 *
 * `expect unbound ... for D` used to watch for D whatever happened; it now
 * ends as soon as the kernel has provably finished matching the interface,
 * D staying the upper bound.  The kernel matches a USB interface only
 * synchronously, in the thread that caused it (Linux 6.1,
 * drivers/base/bus.c, drivers/base/dd.c, drivers/usb/core/driver.c):
 *
 *	device add	hub_wq: usb_new_device() -> generic probe ->
 *			usb_set_configuration() -> device_add(intf) ->
 *			bus_probe_device(); the usb_device's own `bind`
 *			uevent (DRIVER=usb) comes after all of it
 *	new_id		new_id_store() -> usb_store_new_id() -> driver_attach()
 *			before write(2) returns; the same for usb-serial's
 *			new_id and for remove_id's absence of any match
 *	bind		bind_store() -> device_driver_attach() before write(2)
 *	driver load	bus_add_driver() -> driver_attach() before modprobe's
 *			init_module() returns
 *
 * The agent runs one step at a time, so when an `expect unbound ... for`
 * begins, every write and modprobe of the scenario has returned.  What is
 * left that could still bind the interface later, with nothing new
 * happening, and how each is ruled out here:
 *
 *	a probe deferred (-EPROBE_DEFER): retried whenever any other driver
 *		binds (driver_deferred_probe_trigger()), so never "over": a
 *		deferral of the interface in this scenario (initcall_debug's
 *		"probe of INTF returned 517", the usb_probe_interface record,
 *		or /sys/kernel/debug/devices_deferred) keeps the whole window
 *	asynchronous probing (driver_async_probe=, async_probe module
 *		options): not on the command line, or no early end
 *	a module loaded for the device by user space on a uevent: no uevent
 *		helper (/sys/kernel/uevent_helper empty) and no udev
 *	an uevent in flight (a re-enumeration, an add the agent has not
 *		read): every uevent up to /sys/kernel/uevent_seqnum received
 *	the interface's first probe: its add was followed by the
 *		usb_device's bind (the configuration is settled)
 *
 * A bind from another process of the scenario's own (a `run` left in the
 * background) is no match of the kernel's and is not waited for.
 */
#define _GNU_SOURCE
#include "agent.h"
#include "fsutil.h"
#include "plan_words.h"

#include <stdlib.h>
#include <string.h>

#define DEFERRED_PATH	"/sys/kernel/debug/devices_deferred"

/* Why the kernel may match later on its own, whatever the device: ""
 * none.  The command line is read once; the uevent helper each time (a
 * scenario may write it). */
static const char *settle_never(void)
{
	static char why[128];
	static int cmdline_async = -1;
	char buf[4096];

	if (cmdline_async < 0)
		cmdline_async = fs_read_small("/proc/cmdline", buf, sizeof(buf)) > 0 &&
				strstr(buf, "async_probe");
	why[0] = '\0';
	if (cmdline_async)
		strfmt(why, sizeof(why), "asynchronous probing on the command line");
	else if (fs_read_small("/sys/kernel/uevent_helper", buf, sizeof(buf)) > 0)
		strfmt(why, sizeof(why), "a uevent helper may load modules (%s)",
		       buf);
	return why;
}

/* A probe of intf deferred in this scenario, by any of the three views. */
static bool deferred_seen(const char *intf)
{
	char pat[96], buf[8192], *line, *save = NULL;
	size_t l;

	for (size_t i = 0; i < tr.n; i++)
		if (tr.rec[i].event == TR_PROBE &&
		    tr.rec[i].ret == -PLAN_EPROBE_DEFER &&
		    !strcmp(tr.rec[i].intf, intf))
			return true;
	strfmt(pat, sizeof(pat), "probe of %s returned ", intf);
	l = strlen(pat);
	for (size_t i = 0; i < ev.n_kmsg; i++) {
		const char *p = strstr(ev.kmsg[i].text, pat);

		if (p && labs(strtol(p + l, NULL, 10)) == PLAN_EPROBE_DEFER)
			return true;
	}
	if (fs_read_small(DEFERRED_PATH, buf, sizeof(buf)) <= 0)
		return false;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, intf, strlen(intf)) &&
		    (line[strlen(intf)] == '\t' || !line[strlen(intf)]))
			return true;
	return false;
}

/* The usb_device dev bound (DRIVER=usb) after intf's last add. */
static bool configured_after_add(const char *dev, const char *intf)
{
	size_t i, add = ev.n_uev;

	for (i = ev.n_uev; i > 0; i--)
		if (!strcmp(ev.uev[i - 1].name, intf) &&
		    !strcmp(ev.uev[i - 1].action, "add")) {
			add = i - 1;
			break;
		}
	for (i = add + 1; i < ev.n_uev; i++) {
		const struct uevent *u = &ev.uev[i];

		if (!strcmp(u->name, dev) && !strcmp(u->action, "bind") &&
		    !strcmp(u->devtype, "usb_device") &&
		    !strcmp(u->driver, "usb"))
			return true;
	}
	return false;
}

bool settle_done(const char *dev, const char *intf, char *why, size_t size)
{
	const char *never = settle_never();
	char buf[32];
	unsigned long long seq;

	if (never[0]) {
		strfmt(why, size, "%s", never);
		return false;
	}
	if (deferred_seen(intf)) {
		strfmt(why, size, "a probe of %s was deferred (retried whenever another driver binds)",
		       intf);
		return false;
	}
	if (!configured_after_add(dev, intf)) {
		strfmt(why, size, "no bind of usb_device %s after %s was added",
		       dev, intf);
		return false;
	}
	if (fs_read_small("/sys/kernel/uevent_seqnum", buf, sizeof(buf)) <= 0) {
		strfmt(why, size, "no /sys/kernel/uevent_seqnum");
		return false;
	}
	seq = strtoull(buf, NULL, 10);
	if (ev.uev_seqnum < seq) {
		strfmt(why, size, "uevents up to %llu not received (last %llu)",
		       seq, (unsigned long long)ev.uev_seqnum);
		return false;
	}
	strfmt(why, size, "seqnum=%llu", seq);
	return true;
}
