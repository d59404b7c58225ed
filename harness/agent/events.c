// SPDX-License-Identifier: GPL-2.0
/*
 * events.c - keep kernel uevents and kernel log records in memory.
 *
 * Uevents come from a NETLINK_KOBJECT_UEVENT socket bound to group 1 (the
 * kernel's own broadcasts; there is no udevd in the guest).  One datagram
 * is "ACTION@DEVPATH\0KEY=VALUE\0...".  Kernel log records come from
 * /dev/kmsg, one record per read(): "PRI,SEQ,TS_US,FLAGS;TEXT\n" followed
 * by " KEY=VALUE\n" dictionary lines (Documentation/ABI/testing/dev-kmsg).
 * TEXT escapes non-printable bytes as \xHH; we keep it as is.
 */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define UEV_MAX		200000	/* entries kept; beyond that we count drops */
#define KMSG_MAX	100000

struct events ev = { .uev_fd = -1, .kmsg_fd = -1 };

uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int ev_init(void)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = 1,
	};
	int sz = 16 * 1024 * 1024;

	ev.uev_fd = socket(AF_NETLINK,
			   SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			   NETLINK_KOBJECT_UEVENT);
	if (ev.uev_fd < 0) {
		ag_log("uevent socket: %s", strerror(errno));
		return -errno;
	}
	/* a burst (module load, enumeration) must not overflow the queue
	 * between two pumps; FORCE works as root, else take what we get */
	if (setsockopt(ev.uev_fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(ev.uev_fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (bind(ev.uev_fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ag_log("uevent bind: %s", strerror(errno));
		close(ev.uev_fd);
		ev.uev_fd = -1;
		return -errno;
	}
	ev.kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (ev.kmsg_fd < 0)
		ag_log("/dev/kmsg: %s (probe errors will not be seen)",
		       strerror(errno));
	return 0;
}

static void copy_field(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static void uev_parse(const char *buf, size_t len, uint64_t t)
{
	struct uevent *u;
	const char *p = buf, *end = buf + len;

	if (!memchr(buf, '@', strnlen(buf, len)))
		return;	/* not a kernel uevent header */
	if (ev.n_uev == ev.cap_uev) {
		size_t cap = ev.cap_uev ? ev.cap_uev * 2 : 1024;
		struct uevent *n;

		if (cap > UEV_MAX) {
			ev.uev_dropped++;
			return;
		}
		n = realloc(ev.uev, cap * sizeof(*n));
		if (!n) {
			ev.uev_dropped++;
			return;
		}
		ev.uev = n;
		ev.cap_uev = cap;
	}
	u = &ev.uev[ev.n_uev];
	memset(u, 0, sizeof(*u));
	u->t_us = t;
	p += strnlen(p, (size_t)(end - p)) + 1;
	while (p < end) {
		size_t l = strnlen(p, (size_t)(end - p));
		const char *eq = memchr(p, '=', l);

		if (eq) {
			size_t kl = (size_t)(eq - p), vl = l - kl - 1;
			const char *v = eq + 1;

			if (kl == 6 && !memcmp(p, "ACTION", 6))
				copy_field(u->action, sizeof(u->action), v, vl);
			else if (kl == 7 && !memcmp(p, "DEVPATH", 7))
				copy_field(u->devpath, sizeof(u->devpath), v,
					   vl);
			else if (kl == 9 && !memcmp(p, "SUBSYSTEM", 9))
				copy_field(u->subsystem, sizeof(u->subsystem),
					   v, vl);
			else if (kl == 7 && !memcmp(p, "DEVTYPE", 7))
				copy_field(u->devtype, sizeof(u->devtype), v,
					   vl);
			else if (kl == 6 && !memcmp(p, "DRIVER", 6))
				copy_field(u->driver, sizeof(u->driver), v, vl);
			else if (kl == 6 && !memcmp(p, "SEQNUM", 6))
				u->seqnum = strtoull(v, NULL, 10);
		}
		p += l + 1;
	}
	{
		const char *slash = strrchr(u->devpath, '/');

		const char *nm = slash ? slash + 1 : u->devpath;

		copy_field(u->name, sizeof(u->name), nm, strlen(nm));
	}
	if (u->seqnum > ev.uev_seqnum)
		ev.uev_seqnum = u->seqnum;
	ev.n_uev++;
}

static void uev_drain(void)
{
	char buf[8192 + 1];

	if (ev.uev_fd < 0)
		return;
	for (;;) {
		ssize_t n = recv(ev.uev_fd, buf, sizeof(buf) - 1, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				/* the queue overflowed: events were lost */
				ev.uev_dropped++;
				continue;
			}
			return;	/* EAGAIN */
		}
		buf[n] = '\0';
		uev_parse(buf, (size_t)n, now_us());
	}
}

static void kmsg_add(const char *rec)
{
	unsigned long long seq, ts;
	const char *semi, *nl;
	struct kmsg_rec *k;
	int pri;

	if (sscanf(rec, "%d,%llu,%llu", &pri, &seq, &ts) != 3)
		return;
	semi = strchr(rec, ';');
	if (!semi)
		return;
	semi++;
	nl = strchr(semi, '\n');
	if (ev.n_kmsg == ev.cap_kmsg) {
		size_t cap = ev.cap_kmsg ? ev.cap_kmsg * 2 : 1024;
		struct kmsg_rec *n;

		if (cap > KMSG_MAX)
			return;
		n = realloc(ev.kmsg, cap * sizeof(*n));
		if (!n)
			return;
		ev.kmsg = n;
		ev.cap_kmsg = cap;
	}
	k = &ev.kmsg[ev.n_kmsg];
	k->t_us = ts;
	k->seq = seq;
	k->text = strndup(semi, nl ? (size_t)(nl - semi) : strlen(semi));
	if (k->text)
		ev.n_kmsg++;
}

static void kmsg_drain(void)
{
	char buf[8192 + 1];

	if (ev.kmsg_fd < 0)
		return;
	for (;;) {
		ssize_t n = read(ev.kmsg_fd, buf, sizeof(buf) - 1);

		if (n < 0) {
			/* EPIPE: records were overwritten before we read
			 * them; the next read goes on from the oldest left */
			if (errno == EINTR || errno == EPIPE)
				continue;
			return;
		}
		if (n == 0)
			return;
		buf[n] = '\0';
		kmsg_add(buf);
	}
}

void ev_pump(int timeout_ms)
{
	struct pollfd p[2] = {
		{ .fd = ev.uev_fd, .events = POLLIN },
		{ .fd = ev.kmsg_fd, .events = POLLIN },
	};

	if (timeout_ms > 0)
		poll(p, 2, timeout_ms);
	uev_drain();
	kmsg_drain();
	/* after the uevents: a probe's trace record precedes its bind
	 * uevent, so a bind seen here has its record read too */
	trace_drain();
	if (cur && cur->server)
		usb_server_check(cur);
}

void ev_mark_scenario(void)
{
	size_t i;

	ev_pump(0);
	/* keep nothing from before: lookups are "since scenario start" */
	ev.n_uev = 0;
	for (i = 0; i < ev.n_kmsg; i++)
		free(ev.kmsg[i].text);
	ev.n_kmsg = 0;
	ev.uev_mark = 0;
	ev.kmsg_mark = 0;
	ev.uev_dropped = 0;
	trace_mark_scenario();
}

void ev_describe(const char *name, char *buf, size_t size)
{
	size_t i, w = 0;
	int shown = 0;

	buf[0] = '\0';
	for (i = 0; i < ev.n_uev && w + 1 < size; i++) {
		const struct uevent *u = &ev.uev[i];
		int n;

		if (name && strcmp(u->name, name))
			continue;
		if (shown == 12) {
			strfmt(buf + w, size - w, ", ...");
			break;
		}
		n = snprintf(buf + w, size - w, "%s%s %s%s%s",
			     shown ? ", " : "", u->action, u->name,
			     u->driver[0] ? " DRIVER=" : "", u->driver);
		if (n < 0)
			break;
		w += (size_t)n;
		shown++;
	}
	if (!shown)
		strfmt(buf, size, "none");
	if (ev.uev_dropped && w + 1 < size)
		strfmt(buf + strlen(buf), size - strlen(buf),
			 " (%lu uevent losses)", ev.uev_dropped);
}

void ev_kmsg_tail(const char *needle, size_t max_lines, char *buf,
		  size_t size)
{
	size_t i, first, count = 0, w = 0;

	buf[0] = '\0';
	/* find where the last max_lines matching records start */
	for (i = ev.n_kmsg; i > 0 && count < max_lines; i--)
		if (!needle || strstr(ev.kmsg[i - 1].text, needle))
			count++;
	first = i;
	for (i = first; i < ev.n_kmsg && w + 1 < size; i++) {
		int n;

		if (needle && !strstr(ev.kmsg[i].text, needle))
			continue;
		n = snprintf(buf + w, size - w, "%s%s", w ? " | " : "",
			     ev.kmsg[i].text);
		if (n < 0)
			break;
		w += (size_t)n;
	}
	if (!w)
		strfmt(buf, size, "no kernel log lines");
}
