// SPDX-License-Identifier: GPL-2.0
/*
 * devcpu.c - the device's own vCPU.
 *
 * The host boots every guest with two vCPUs (harness/host/vm.c); under TCG
 * each is a host thread of its own.  The last one is the device side:
 * usbrig-gadget (when it is served in the guest) and vhci-hcd's vhci_rx
 * and vhci_tx threads, the software that stands in for the bus and the
 * host controller's interrupt, are pinned there at SCHED_FIFO priority
 * DEVCPU_PRIO.  The agent, and so every program it starts (the usbip
 * tools, a scenario's commands, testusb), keeps off it: a task spinning in
 * the kernel without a preemption point (usbtest's unlink retry, a
 * driver's mdelay() poll) would hold that vCPU against the FIFO threads
 * too, the kernel's default preemption being voluntary.  So when the guest
 * spins waiting for the device, the device still answers and vhci still
 * completes the URB, as a real controller's interrupt would.
 * docs/harness-design.md, "Where the device runs".
 *
 * A guest with one CPU (a kernel without SMP) keeps the old layout: the
 * device shares the only vCPU, and the agent's first diag line says so.
 */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <glob.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* above every SCHED_OTHER task, below the kernel's own FIFO threads
 * (watchdogs, migration: 99) */
#define DEVCPU_PRIO	50

static int dev_cpu = -1;

int devcpu_init(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t rest;

	dev_cpu = n >= 2 ? (int)n - 1 : -1;
	if (dev_cpu < 0)
		return -1;
	CPU_ZERO(&rest);
	for (int i = 0; i < dev_cpu; i++)
		CPU_SET(i, &rest);
	if (sched_setaffinity(0, sizeof(rest), &rest))
		ag_log("keeping off the device's vCPU %d: %s", dev_cpu,
		       strerror(errno));
	return dev_cpu;
}

int devcpu_claim(pid_t pid)
{
	struct sched_param sp = { .sched_priority = DEVCPU_PRIO };
	cpu_set_t set;

	if (dev_cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(dev_cpu, &set);
	if (sched_setaffinity(pid, sizeof(set), &set))
		return -errno;
	if (sched_setscheduler(pid, SCHED_FIFO, &sp))
		return -errno;
	return 0;
}

/* vhci_rx and vhci_tx are started per attached port (usbip_start_threads)
 * and end at detach, so every attach claims the new ones. */
int devcpu_claim_vhci(void)
{
	glob_t gl;
	int ret = 0;

	if (dev_cpu < 0)
		return 0;
	if (glob("/proc/[0-9]*/comm", GLOB_NOSORT, NULL, &gl))
		return 0;
	for (size_t i = 0; i < gl.gl_pathc; i++) {
		char comm[32] = "";
		FILE *f = fopen(gl.gl_pathv[i], "r");
		int r;

		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strcmp(comm, "vhci_rx\n") && strcmp(comm, "vhci_tx\n"))
			continue;
		r = devcpu_claim((pid_t)atoi(gl.gl_pathv[i] + strlen("/proc/")));
		if (r && r != -ESRCH && !ret)
			ret = r;
	}
	globfree(&gl);
	return ret;
}

void devcpu_describe(char *buf, size_t size)
{
	if (dev_cpu < 0)
		strfmt(buf, size, "one vCPU: the device shares it");
	else
		strfmt(buf, size, "vCPU %d (SCHED_FIFO %d)", dev_cpu,
		       DEVCPU_PRIO);
}
