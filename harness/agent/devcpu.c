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
#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* above every SCHED_OTHER task, below the kernel's own FIFO threads
 * (watchdogs, migration: 99) */
#define DEVCPU_PRIO	50

static int dev_cpu = -1;
static int net_irqs;	/* interrupts of network interfaces moved to it */

/* An interrupt action named after the interface or its device: "eth0",
 * "virtio0", "virtio0-input.0" (MSI-X vectors take the device's name). */
static bool irq_serves(const char *line, char names[][64], int n)
{
	char buf[512], *tok, *save;

	strfmt(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " \t\n,", &save); tok;
	     tok = strtok_r(NULL, " \t\n,", &save))
		for (int i = 0; i < n; i++) {
			size_t len = strlen(names[i]);

			if (!strncmp(tok, names[i], len) &&
			    (tok[len] == '\0' || tok[len] == '-'))
				return true;
		}
	return false;
}

/*
 * With the gadgets on the host the bus is the guest's NIC, and its
 * interrupt, with the receive softirq run on the way out of it, is the
 * controller's interrupt.  x86 delivers an interrupt to one CPU, CPU 0
 * unless told otherwise; a softirq deferred there to ksoftirqd/0 waits for
 * whatever holds CPU 0, and the device with it (device-time-busy-guest
 * failed so, 6 times in 30 on a loaded host).  So every interrupt of a
 * network interface but lo goes to the device's vCPU.
 */
static void claim_net_irqs(void)
{
	char names[16][64], line[512], path[PATH_MAX], link[PATH_MAX];
	int n = 0;
	DIR *d = opendir("/sys/class/net");
	struct dirent *e;
	FILE *f;

	if (!d)
		return;
	while ((e = readdir(d)) && n + 2 <= 16) {
		ssize_t len;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lo"))
			continue;
		strfmt(names[n++], sizeof(names[0]), "%s", e->d_name);
		strfmt(path, sizeof(path), "/sys/class/net/%s/device", e->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len > 0) {
			link[len] = '\0';
			strfmt(names[n++], sizeof(names[0]), "%s", basename(link));
		}
	}
	closedir(d);
	if (!n)
		return;
	f = fopen("/proc/interrupts", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), cpu[16];
		int irq, ret;

		if (!colon || sscanf(line, " %d:", &irq) != 1 ||
		    !irq_serves(colon + 1, names, n))
			continue;
		strfmt(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
		strfmt(cpu, sizeof(cpu), "%d", dev_cpu);
		ret = fs_write_small(path, cpu, 0);
		if (ret)
			ag_log("IRQ %d stays where it is: %s", irq, strerror(-ret));
		else
			net_irqs++;
	}
	fclose(f);
}

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
	claim_net_irqs();
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
		strfmt(buf, size, "vCPU %d (SCHED_FIFO %d%s)", dev_cpu,
		       DEVCPU_PRIO, net_irqs ? ", the NIC's interrupts" : "");
}
