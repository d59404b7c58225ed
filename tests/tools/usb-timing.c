// SPDX-License-Identifier: GPL-2.0
/*
 * usb-timing - time a usbrig device from inside the guest, through usbfs.
 * Built static (make $(BUILD)/tools/usb-timing) and copied into the guest
 * by the device-time scenarios; it goes with
 * tests/scenarios/gadgets/timing-1209-0060.gadget:
 *
 *	ep0 vendor IN 0x01: 1 byte, at once	0x02: 1 byte, `delay 5`
 *	bulk IN 0x81: source, at once		0x82: source, `delay 5`
 *	bulk IN 0x83: source, `delay 100`
 *
 *   usb-timing delay DEV MS TOL
 *	Times COUNT round trips of each request and endpoint, alternating,
 *	and checks that the delayed one takes MS longer than the prompt one
 *	(the difference of the fastest of each), within TOL ms (late: TOL
 *	plus the noise of the prompt ones, check_delay()).
 *
 *   usb-timing busy DEV SPIN [--starve]
 *	Measures the usual time of a transfer on 0x83 (median of 5), then
 *	submits one more and, on every CPU but the last (the device's, see
 *	harness/agent/devcpu.c), runs a SCHED_FIFO busy loop for SPIN ms
 *	while a thread on the last CPU waits for the completion.  Passes
 *	when the transfer completed while the loop was still running (its
 *	time is printed beside the usual one; how much longer it took on a
 *	loaded host is noise, not a verdict).  --starve first moves the device
 *	side (usbrig-gadget, vhci_rx, vhci_tx) onto CPU 0 at SCHED_OTHER, as
 *	with one vCPU, and passes only when the transfer waited for the
 *	loop: the check above can fail.
 *
 *   usb-timing freeze SECONDS
 *	A guest that hangs, for the harness's fault tests: RT throttling
 *	off, then a SCHED_FIFO 99 busy loop on every CPU for SECONDS.
 *	Nothing else runs (the agent neither), and the kernel prints
 *	nothing: the host has only its timeouts to go by.
 *
 * DEV is the device's sysfs name (1-1).  Output lines start "usb-timing:";
 * exit 0 pass, 1 fail, 2 usage or setup error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/usbdevice_fs.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

#define COUNT		40
#define USUAL_COUNT	5
#define BUF_LEN		512
#define IO_TIMEOUT_MS	5000
#define SPIN_PRIO	99

static void die(const char *what)
{
	printf("usb-timing: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int open_dev(const char *dev)
{
	char path[256], buf[32];
	unsigned int bus = 0, num = 0;
	FILE *f;
	int fd, intf = 0;

	snprintf(path, sizeof(path), "/sys/bus/usb/devices/%s/busnum", dev);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%u", &bus) != 1)
		die(path);
	fclose(f);
	snprintf(path, sizeof(path), "/sys/bus/usb/devices/%s/devnum", dev);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%u", &num) != 1)
		die(path);
	fclose(f);
	snprintf(buf, sizeof(buf), "/dev/bus/usb/%03u/%03u", bus, num);
	fd = open(buf, O_RDWR);
	if (fd < 0)
		die(buf);
	if (ioctl(fd, USBDEVFS_CLAIMINTERFACE, &intf))
		die("claim interface 0");
	return fd;
}

static void control(int fd, uint8_t req)
{
	uint8_t b[8];
	struct usbdevfs_ctrltransfer c = {
		.bRequestType = 0xc0, .bRequest = req, .wLength = 1,
		.timeout = IO_TIMEOUT_MS, .data = b,
	};

	if (ioctl(fd, USBDEVFS_CONTROL, &c) != 1)
		die("vendor request");
}

static void bulk(int fd, uint8_t ep)
{
	static uint8_t b[BUF_LEN];
	struct usbdevfs_bulktransfer t = {
		.ep = ep, .len = BUF_LEN, .timeout = IO_TIMEOUT_MS, .data = b,
	};

	if (ioctl(fd, USBDEVFS_BULK, &t) < 0)
		die("bulk IN");
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- delay ---- */

/*
 * The delay as the guest sees it: the fastest delayed round trip minus the
 * fastest prompt one.  Minimums, because on a shared machine a round
 * trip is only ever made longer by what else runs (a median of 13 ms
 * was seen with another guest booting beside this one); the medians are
 * printed too.  A delayed reply also waits for the device's vCPU to wake
 * from its timer, which a loaded host does late: so it may be late by
 * the tolerance plus the noise the prompt round trips show (their median
 * less their fastest), never early by more than the tolerance.  (Seen on
 * a slow host with two guests: control 7.23 ms for 5, the prompt ones
 * 1.38 ms fastest, 3.27 ms median.)
 */
static int check_delay(const char *what, const double *fast,
		       const double *slow, double ms, double tol)
{
	double f[COUNT], s[COUNT], d, noise;
	bool ok;

	memcpy(f, fast, sizeof(f));
	memcpy(s, slow, sizeof(s));
	qsort(f, COUNT, sizeof(*f), cmp_double);
	qsort(s, COUNT, sizeof(*s), cmp_double);
	d = s[0] - f[0];
	noise = median(f, COUNT) - f[0];
	ok = d >= ms - tol && d <= ms + tol + noise;
	printf("usb-timing: %s delay %.0f ms: measured %.2f ms (fastest of %d: %.2f - %.2f ms; medians %.2f - %.2f ms), %s %.0f ms (-%.0f, +%.0f and %.2f of noise)\n",
	       what, ms, d, COUNT, s[0], f[0], median(s, COUNT),
	       median(f, COUNT), ok ? "within" : "NOT within", ms, tol, tol,
	       noise);
	return ok ? 0 : 1;
}

static int cmd_delay(const char *dev, double ms, double tol)
{
	double cf[COUNT], cs[COUNT], bf[COUNT], bs[COUNT], t;
	int fd = open_dev(dev), bad;

	/* one of each first: the first transfer sets up what the rest reuse */
	control(fd, 0x01);
	bulk(fd, 0x81);
	for (int i = 0; i < COUNT; i++) {
		t = now_ms();
		control(fd, 0x01);
		cf[i] = now_ms() - t;
		t = now_ms();
		control(fd, 0x02);
		cs[i] = now_ms() - t;
		t = now_ms();
		bulk(fd, 0x81);
		bf[i] = now_ms() - t;
		t = now_ms();
		bulk(fd, 0x82);
		bs[i] = now_ms() - t;
	}
	bad = check_delay("control", cf, cs, ms, tol);
	bad |= check_delay("bulk", bf, bs, ms, tol);
	close(fd);
	return bad;
}

/* ---- busy ---- */

struct reaper {
	int fd;
	struct usbdevfs_urb *urb;
	double done_ms;
	int status;
};

/* 0, or -errno (-ESRCH: the task is gone, which a caller may ignore) */
static int pin(pid_t pid, int cpu, int policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(pid, sizeof(set), &set) ||
	    sched_setscheduler(pid, policy, &sp))
		return -errno;
	return 0;
}

static void pin_self(int cpu, int policy, int prio)
{
	errno = -pin(0, cpu, policy, prio);
	if (errno)
		die("pin to a CPU");
}

/* Polls, so that a device that never answers costs a message, not a
 * hang: after IO_TIMEOUT_MS the URB is discarded. */
static void *reap(void *arg)
{
	struct reaper *r = arg;
	struct usbdevfs_urb *u = NULL;
	double deadline = now_ms() + IO_TIMEOUT_MS;

	while (ioctl(r->fd, USBDEVFS_REAPURBNDELAY, &u)) {
		if (errno != EAGAIN) {
			r->status = -errno;
			return NULL;
		}
		if (now_ms() > deadline) {
			r->status = -ETIMEDOUT;
			ioctl(r->fd, USBDEVFS_DISCARDURB, r->urb);
			return NULL;
		}
		usleep(100);
	}
	r->done_ms = now_ms();
	r->status = u ? u->status : -EIO;
	return NULL;
}

/* The device side onto CPU 0, SCHED_OTHER: what one vCPU would give. */
static void starve(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int moved = 0, r;

	if (!d)
		die("/proc");
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strcmp(comm, "usbrig-gadget\n") &&
		    strcmp(comm, "vhci_rx\n") && strcmp(comm, "vhci_tx\n"))
			continue;
		r = pin(atoi(e->d_name), 0, SCHED_OTHER, 0);
		if (r == -ESRCH)
			continue;
		errno = -r;
		if (r)
			die("move a device-side task");
		moved++;
	}
	closedir(d);
	printf("usb-timing: --starve: %d device-side tasks moved to CPU 0 at SCHED_OTHER\n",
	       moved);
}

static int cmd_busy(const char *dev, double spin_ms, int starving)
{
	static uint8_t buf[BUF_LEN];
	struct usbdevfs_urb urb = {
		.type = USBDEVFS_URB_TYPE_BULK, .endpoint = 0x83,
		.buffer = buf, .buffer_length = BUF_LEN,
	};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int fd = open_dev(dev), dev_cpu = (int)ncpu - 1;
	double usual[USUAL_COUNT], u, t0, t_end, took;
	struct reaper r = { .fd = fd, .urb = &urb, .status = 1 };
	pthread_t th;
	pthread_attr_t at;
	cpu_set_t set;
	int pass;

	if (ncpu < 2) {
		printf("usb-timing: one CPU: nothing runs beside the guest\n");
		return 1;
	}
	for (int i = 0; i < USUAL_COUNT; i++) {
		t0 = now_ms();
		bulk(fd, 0x83);
		usual[i] = now_ms() - t0;
	}
	u = median(usual, USUAL_COUNT);
	if (starving)
		starve();

	/* the waiter on the device's CPU, the busy loop on every other one
	 * (this thread, pinned to CPU 0; a 2-vCPU guest has no third) */
	pthread_attr_init(&at);
	CPU_ZERO(&set);
	CPU_SET(dev_cpu, &set);
	errno = pthread_attr_setaffinity_np(&at, sizeof(set), &set);
	if (errno)
		die("pthread_attr_setaffinity_np");
	pin_self(0, SCHED_OTHER, 0);
	if (ioctl(fd, USBDEVFS_SUBMITURB, &urb))
		die("submit");
	t0 = now_ms();
	if (pthread_create(&th, &at, reap, &r))
		die("pthread_create");
	pin_self(0, SCHED_FIFO, SPIN_PRIO);
	while (now_ms() < t0 + spin_ms)
		;
	t_end = now_ms();
	pin_self(0, SCHED_OTHER, 0);
	pthread_join(th, NULL);
	close(fd);
	if (r.status) {
		printf("usb-timing: the transfer ended with status %d\n",
		       r.status);
		return 1;
	}
	took = r.done_ms - t0;
	printf("usb-timing: usual time %.1f ms; with CPU 0 busy for %.0f ms it took %.1f ms%s\n",
	       u, t_end - t0, took,
	       r.done_ms < t_end ? " (done while the loop ran)" :
	       " (done after the loop)");
	if (starving) {
		pass = r.done_ms >= t_end - 1;
		printf("usb-timing: %s\n", pass ?
		       "starved as expected: the device waited for CPU 0" :
		       "NOT starved: the check cannot tell a shared CPU from its own");
	} else {
		pass = r.done_ms < t_end;
		printf("usb-timing: %s\n", pass ?
		       "the device kept its time" :
		       "the device waited for the busy CPU");
	}
	return pass ? 0 : 1;
}

/* ---- freeze ---- */

static void *spin_thread(void *arg)
{
	double end = *(double *)arg;

	while (now_ms() < end)
		;
	return NULL;
}

static int cmd_freeze(double seconds)
{
	int n = (int)sysconf(_SC_NPROCESSORS_ONLN), fd;
	pthread_t t[64];
	double end = now_ms() + seconds * 1000;

	if (n < 1 || n > 64 || seconds <= 0)
		die("freeze: CPUs or SECONDS");
	fd = open("/proc/sys/kernel/sched_rt_runtime_us", O_WRONLY);
	if (fd < 0 || write(fd, "-1", 2) != 2)
		die("freeze: RT throttling");
	close(fd);
	printf("usb-timing: freezing %d CPU(s) for %.0f s\n", n, seconds);
	fflush(stdout);
	for (int c = 1; c < n; c++)
		if (pthread_create(&t[c], NULL, spin_thread, &end))
			die("freeze: thread");
	for (int c = n - 1; c >= 0; c--) {
		struct sched_param sp = { .sched_priority = 99 };
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(c, &set);
		if (pthread_setaffinity_np(c ? t[c] : pthread_self(),
					   sizeof(set), &set) ||
		    pthread_setschedparam(c ? t[c] : pthread_self(),
					  SCHED_FIFO, &sp))
			die("freeze: pin");
	}
	spin_thread(&end);
	for (int c = 1; c < n; c++)
		pthread_join(t[c], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "freeze"))
		return cmd_freeze(atof(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "delay"))
		return cmd_delay(argv[2], atof(argv[3]), atof(argv[4]));
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "busy") &&
	    (argc == 4 || !strcmp(argv[4], "--starve")))
		return cmd_busy(argv[2], atof(argv[3]), argc == 5);
	fprintf(stderr, "usage: usb-timing delay DEV MS TOL | busy DEV SPIN_MS [--starve] | freeze SECONDS\n");
	return 2;
}
