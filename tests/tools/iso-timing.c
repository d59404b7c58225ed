// SPDX-License-Identifier: GPL-2.0
/*
 * iso-timing - how evenly a device's isochronous URBs complete, as a
 * program in the guest sees it through usbfs.  Built static (make
 * $(BUILD)/tools/iso-timing) and copied into the guest by
 * tests/bench/zero-vs-kernel.scenario (tests/tools/bench-zero.sh).
 *
 *   iso-timing find DEV in|out
 *	The first isochronous endpoint of that direction in DEV's active
 *	configuration, from sysfs `descriptors` (no device I/O): its
 *	interface, alternate setting, bytes per service interval and the
 *	interval.  Exit 4 when there is none.
 *
 *   iso-timing run DEV in|out PACKETS URBS DEPTH
 *	Claims that endpoint's interface (nothing else may hold it), selects
 *	its alternate setting, and keeps DEPTH URBs of PACKETS packets queued
 *	(USBDEVFS_SUBMITURB, ISO_ASAP, each packet a full service interval's
 *	bytes) until URBS have completed, stamping each reap with
 *	CLOCK_MONOTONIC.  A URB of n packets spans n service intervals, so
 *	in a steady stream one completes every PACKETS x interval (the
 *	nominal); the first DEPTH completions fill the queue and are left
 *	out.  Prints the median interval between completions and the
 *	median, 95th percentile and maximum of |interval - nominal|.
 *
 *   iso-timing timer PERIOD_US COUNT
 *	The same figures for COUNT wakeups of an absolute clock_nanosleep
 *	every PERIOD_US: the guest's own scheduling noise, the floor under
 *	any URB figure.
 *
 * DEV is the device's sysfs name (1-1).  Output lines start "iso-timing:";
 * exit 0 done, 1 URBs failed (a URB error, or more than a tenth of the
 * packets: usbtest's own limit for isochronous), 2 usage or setup error,
 * 4 no such endpoint.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/usbdevice_fs.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

#define DESC_MAX	65536	/* sysfs descriptors: 18 + configs */
#define MAX_PACKETS	128	/* usbfs's limit per isochronous URB */
#define MAX_URBS	100000
#define MAX_DEPTH	64
#define IO_TIMEOUT_MS	5000

#define USB_DT_CONFIG		2
#define USB_DT_INTERFACE	4
#define USB_DT_ENDPOINT		5
#define USB_DT_SS_EP_COMP	0x30
#define USB_XFER_ISOC		1

struct iso_ep {
	uint8_t addr;
	uint8_t intf;
	uint8_t alt;
	uint32_t bytes;		/* per service interval */
	uint32_t interval_us;
};

static void die(const char *what)
{
	printf("iso-timing: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* the first line of /sys/bus/usb/devices/DEV/ATTR, or "" */
static void sys_attr(const char *dev, const char *attr, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/sys/bus/usb/devices/%s/%s", dev, attr);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/*
 * The service interval (USB 2.0 9.6.6, USB 3.2 9.6.6): 2^(bInterval-1)
 * frames at full and low speed, microframes (125 us) above.
 */
static uint32_t interval_us(const char *speed, uint8_t b_interval)
{
	unsigned int b = b_interval < 1 ? 1 : b_interval > 16 ? 16 : b_interval;
	double mbps = atof(speed);

	return (mbps >= 480 ? 125u : 1000u) << (b - 1);
}

/*
 * Walks DEV's descriptors (bLength chain, every length checked against
 * what was read) for the first isochronous endpoint of direction DIR_IN
 * in the active configuration.  0, -ENOENT when there is none, or -errno.
 */
static int find_iso(const char *dev, int dir_in, struct iso_ep *out,
		    unsigned int *cfg_out)
{
	static uint8_t d[DESC_MAX];
	char path[256], speed[32], cfgs[16];
	unsigned int active, cfg = 0;
	size_t len = 0, i;
	ssize_t n;
	int fd;

	sys_attr(dev, "speed", speed, sizeof(speed));
	sys_attr(dev, "bConfigurationValue", cfgs, sizeof(cfgs));
	if (!speed[0])
		return -ENODEV;
	active = (unsigned int)atoi(cfgs);
	*cfg_out = active;
	snprintf(path, sizeof(path), "/sys/bus/usb/devices/%s/descriptors",
		 dev);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	while (len < sizeof(d) && (n = read(fd, d + len, sizeof(d) - len)) > 0)
		len += (size_t)n;
	close(fd);
	memset(out, 0, sizeof(*out));
	for (i = 0; i + 2 <= len; i += d[i]) {
		const uint8_t *p = d + i;

		/* a descriptor shorter than its header, or running past
		 * the end, ends the walk: nothing after it can be placed */
		if (p[0] < 2 || i + p[0] > len)
			break;
		if (p[1] == USB_DT_CONFIG && p[0] >= 6)
			cfg = p[5];
		else if (p[1] == USB_DT_INTERFACE && p[0] >= 4) {
			out->intf = p[2];
			out->alt = p[3];
		} else if (p[1] == USB_DT_ENDPOINT && p[0] >= 7 &&
			   cfg == active && (p[3] & 3) == USB_XFER_ISOC &&
			   !!(p[2] & 0x80) == !!dir_in) {
			uint16_t maxp = p[4] | p[5] << 8;
			const uint8_t *c = p + p[0];

			out->addr = p[2];
			out->interval_us = interval_us(speed, p[6]);
			out->bytes = (maxp & 0x7ff) * (((maxp >> 11) & 3) + 1);
			/* super speed: the companion says how much */
			if (i + p[0] + 6 <= len && c[0] >= 6 &&
			    c[1] == USB_DT_SS_EP_COMP)
				out->bytes = c[4] | c[5] << 8;
			return out->bytes ? 0 : -ENOENT;
		}
	}
	return -ENOENT;
}

static int dir_arg(const char *s)
{
	if (!strcmp(s, "in"))
		return 1;
	if (!strcmp(s, "out"))
		return 0;
	printf("iso-timing: direction \"%s\": in or out\n", s);
	exit(2);
}

static int find_or_skip(const char *dev, int dir_in, struct iso_ep *ep)
{
	unsigned int cfg;
	int r = find_iso(dev, dir_in, ep, &cfg);

	if (r == -ENOENT) {
		printf("iso-timing: %s has no isochronous %s endpoint in configuration %u\n",
		       dev, dir_in ? "IN" : "OUT", cfg);
		exit(4);
	}
	if (r) {
		errno = -r;
		die(dev);
	}
	return 0;
}

static int cmd_find(const char *dev, int dir_in)
{
	struct iso_ep ep;

	find_or_skip(dev, dir_in, &ep);
	printf("iso-timing: %s %s: ep 0x%02x, interface %u alt %u, %u B per %u us\n",
	       dev, dir_in ? "in" : "out", ep.addr, ep.intf, ep.alt, ep.bytes,
	       ep.interval_us);
	return 0;
}

/* ---- figures ---- */

/* sorts V; P in 0..1, nearest rank */
static double pct(double *v, int n, double p)
{
	int k;

	qsort(v, n, sizeof(*v), cmp_double);
	k = (int)(p * n + 0.999999) - 1;
	return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

/*
 * The intervals between consecutive stamps T[0..N-1] against NOMINAL ms:
 * "interval median M ms, nominal X ms; |interval - nominal| median A p95
 * B max C ms (n=K)".  0, or -EINVAL with fewer than two stamps.
 */
static int report(const double *t, int n, double nominal)
{
	double *iv, *dev;
	double med;
	int k = n - 1;

	if (k < 1)
		return -EINVAL;
	iv = calloc(k, sizeof(*iv));
	dev = calloc(k, sizeof(*dev));
	if (!iv || !dev)
		die("calloc");
	for (int i = 0; i < k; i++) {
		iv[i] = t[i + 1] - t[i];
		dev[i] = iv[i] > nominal ? iv[i] - nominal : nominal - iv[i];
	}
	med = pct(iv, k, 0.5);
	printf("iso-timing: interval median %.3f ms, nominal %.3f ms; |interval - nominal| median %.3f p95 %.3f max %.3f ms (n=%d)\n",
	       med, nominal, pct(dev, k, 0.5), pct(dev, k, 0.95),
	       pct(dev, k, 1.0), k);
	free(iv);
	free(dev);
	return 0;
}

/* ---- run ---- */

static int open_claimed(const char *dev, const struct iso_ep *ep)
{
	struct usbdevfs_setinterface si = {
		.interface = ep->intf, .altsetting = ep->alt,
	};
	char path[64], b[16], n[16];
	unsigned int intf = ep->intf;
	int fd;

	sys_attr(dev, "busnum", b, sizeof(b));
	sys_attr(dev, "devnum", n, sizeof(n));
	snprintf(path, sizeof(path), "/dev/bus/usb/%03d/%03d", atoi(b),
		 atoi(n));
	fd = open(path, O_RDWR);
	if (fd < 0)
		die(path);
	if (ioctl(fd, USBDEVFS_CLAIMINTERFACE, &intf))
		die("claim the interface (is a driver bound to it?)");
	if (ioctl(fd, USBDEVFS_SETINTERFACE, &si))
		die("set the alternate setting");
	return fd;
}

static void fill(struct usbdevfs_urb *u, const struct iso_ep *ep,
		 void *buf, int packets)
{
	memset(u, 0, sizeof(*u) + packets * sizeof(u->iso_frame_desc[0]));
	u->type = USBDEVFS_URB_TYPE_ISO;
	u->endpoint = ep->addr;
	u->flags = USBDEVFS_URB_ISO_ASAP;
	u->buffer = buf;
	u->buffer_length = (int)(ep->bytes * packets);
	u->number_of_packets = packets;
	for (int i = 0; i < packets; i++)
		u->iso_frame_desc[i].length = ep->bytes;
}

static int cmd_run(const char *dev, int dir_in, int packets, int urbs,
		   int depth)
{
	struct usbdevfs_urb *u[MAX_DEPTH];
	long bytes = 0, bad_packets = 0, all_packets = 0;
	int fd, submitted = 0, done = 0, failed = 0;
	struct iso_ep ep;
	double *t;

	find_or_skip(dev, dir_in, &ep);
	if (urbs < depth + 2) {
		printf("iso-timing: URBS must be at least DEPTH + 2 (the first DEPTH fill the queue)\n");
		exit(2);
	}
	fd = open_claimed(dev, &ep);
	t = calloc(urbs, sizeof(*t));
	if (!t)
		die("calloc");
	for (int i = 0; i < depth; i++) {
		void *buf = calloc(packets, ep.bytes);

		u[i] = malloc(sizeof(*u[i]) +
			      packets * sizeof(u[i]->iso_frame_desc[0]));
		if (!buf || !u[i])
			die("malloc");
		fill(u[i], &ep, buf, packets);
		if (ioctl(fd, USBDEVFS_SUBMITURB, u[i]))
			die("submit");
		submitted++;
	}
	while (done < urbs) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		struct usbdevfs_urb *r = NULL;
		int p = poll(&pfd, 1, IO_TIMEOUT_MS);

		if (p < 0 && errno != EINTR)
			die("poll");
		if (p == 0) {
			printf("iso-timing: no completion within %d ms (%d of %d done)\n",
			       IO_TIMEOUT_MS, done, urbs);
			for (int i = 0; i < depth; i++)
				ioctl(fd, USBDEVFS_DISCARDURB, u[i]);
			exit(1);
		}
		/* every URB that has completed, each stamped as reaped */
		while (done < urbs && !ioctl(fd, USBDEVFS_REAPURBNDELAY, &r)) {
			t[done++] = now_ms();
			if (r->status)
				failed++;
			for (int i = 0; i < r->number_of_packets; i++) {
				const struct usbdevfs_iso_packet_desc *d =
					&r->iso_frame_desc[i];

				all_packets++;
				bytes += d->actual_length;
				if (d->status || d->actual_length != d->length)
					bad_packets++;
			}
			if (submitted < urbs) {
				fill(r, &ep, r->buffer, packets);
				if (ioctl(fd, USBDEVFS_SUBMITURB, r))
					die("resubmit");
				submitted++;
			}
		}
		if (errno != EAGAIN && done < urbs)
			die("reap");
	}
	close(fd);
	printf("iso-timing: %s %s ep 0x%02x (interface %u alt %u), %u B per %u us; %d URBs x %d packets, %d queued (the first %d left out)\n",
	       dev, dir_in ? "in" : "out", ep.addr, ep.intf, ep.alt, ep.bytes,
	       ep.interval_us, urbs, packets, depth, depth);
	report(t + depth, urbs - depth, packets * ep.interval_us / 1000.0);
	printf("iso-timing: %ld bytes, %ld of %ld packets short or failed, %d URB(s) failed\n",
	       bytes, bad_packets, all_packets, failed);
	free(t);
	return failed || bad_packets * 10 > all_packets;
}

/* ---- timer ---- */

static int cmd_timer(long period_us, int count)
{
	struct timespec next;
	double *t = calloc(count, sizeof(*t));

	if (!t)
		die("calloc");
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (int i = 0; i < count; i++) {
		next.tv_nsec += period_us * 1000;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while ((errno = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
						&next, NULL)) == EINTR)
			;
		if (errno)
			die("clock_nanosleep");
		t[i] = now_ms();
	}
	printf("iso-timing: timer %ld us x %d\n", period_us, count);
	report(t, count, period_us / 1000.0);
	free(t);
	return 0;
}

static int int_arg(const char *s, int lo, int hi)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
		printf("iso-timing: \"%s\": a number %d..%d\n", s, lo, hi);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "find"))
		return cmd_find(argv[2], dir_arg(argv[3]));
	if (argc == 7 && !strcmp(argv[1], "run"))
		return cmd_run(argv[2], dir_arg(argv[3]),
			       int_arg(argv[4], 1, MAX_PACKETS),
			       int_arg(argv[5], 3, MAX_URBS),
			       int_arg(argv[6], 1, MAX_DEPTH));
	if (argc == 4 && !strcmp(argv[1], "timer"))
		return cmd_timer(int_arg(argv[2], 1, 10000000),
				 int_arg(argv[3], 2, MAX_URBS));
	fprintf(stderr, "usage: iso-timing find DEV in|out | run DEV in|out PACKETS URBS DEPTH | timer PERIOD_US COUNT\n");
	return 2;
}
