// SPDX-License-Identifier: GPL-2.0
/*
 * trace.c - the usb_core trace events of the patched guest kernel
 * (kernel-patch/patches/0001-*, docs/kernel-patch.md).
 *
 * When the kernel has them (/sys/kernel/tracing/events/usb_core; tracefs
 * is mounted there first if /init did not), trace_init() sets the trace
 * clock to "mono" (CLOCK_MONOTONIC, the clock of now_us()), enables the
 * four events and opens trace_pipe non-blocking.  ev_pump() drains it into
 * tr.rec after the uevents, and ev_mark_scenario() forgets the records of
 * earlier scenarios, so lookups mean "since the scenario began" as they do
 * for uevents and kmsg.  The kernel emits usb_probe_interface when the
 * bus probe returns, before driver_bound() sends the bind uevent, so once
 * the uevent is in, the record is in trace_pipe too.
 *
 * trace_pipe is read, never polled: its poll support differs between
 * kernel versions, and every wait in the agent pumps at least every 20 ms.
 *
 * One trace_pipe line is (kernel/trace/trace_output.c)
 *
 *	TASK-PID [CPU] FLAGS SECONDS.MICROS: EVENT: key=value key=value ...
 *
 * with the keys of the events' TP_printk(): intf driver id match_flags vid
 * pid class ret usecs (usb_probe_interface), intf driver
 * (usb_unbind_interface), driver vid pid class driver_info (usb_dynid_add,
 * usb_dynid_remove).  Values never contain blanks.
 */
#define _GNU_SOURCE
#include "agent.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRACEFS		"/sys/kernel/tracing"
#define TR_REC_MAX	100000	/* records kept; beyond that we count drops */

struct trace tr = { .fd = -1 };

static const char *const tr_names[] = {
	[TR_PROBE] = "usb_probe_interface",
	[TR_UNBIND] = "usb_unbind_interface",
	[TR_DYNID_ADD] = "usb_dynid_add",
	[TR_DYNID_REMOVE] = "usb_dynid_remove",
};

const char *tr_event_name(enum tr_event e)
{
	return (unsigned int)e < sizeof(tr_names) / sizeof(tr_names[0]) ?
	       tr_names[e] : "?";
}

int trace_init(void)
{
	struct stat st;
	char path[256];
	size_t i;
	int ret;

	if (stat(TRACEFS "/events", &st) &&
	    mount("tracefs", TRACEFS, "tracefs", 0, NULL) && errno != EBUSY) {
		strfmt(tr.why, sizeof(tr.why), "cannot mount tracefs at %s: %s",
		       TRACEFS, strerror(errno));
		return -1;
	}
	if (stat(TRACEFS "/events/usb_core", &st)) {
		strfmt(tr.why, sizeof(tr.why), "this kernel has no usb_core "
		       "trace events (%s/events/usb_core: %s)", TRACEFS,
		       strerror(errno));
		return -1;
	}
	/* timestamps on now_us()'s clock; the records are usable without */
	ret = fs_write_small(TRACEFS "/trace_clock", "mono", 0);
	if (ret)
		ag_log("%s/trace_clock: %s", TRACEFS, strerror(-ret));
	/* an empty buffer: nothing from before the agent */
	fs_write_small(TRACEFS "/trace", "", O_TRUNC);
	for (i = 0; i < sizeof(tr_names) / sizeof(tr_names[0]); i++) {
		strfmt(path, sizeof(path), "%s/events/usb_core/%s/enable",
		       TRACEFS, tr_names[i]);
		ret = fs_write_small(path, "1", 0);
		if (ret) {
			strfmt(tr.why, sizeof(tr.why), "%s: %s", path,
			       strerror(-ret));
			return -1;
		}
	}
	ret = fs_write_small(TRACEFS "/tracing_on", "1", 0);
	if (ret) {
		strfmt(tr.why, sizeof(tr.why), "%s/tracing_on: %s", TRACEFS,
		       strerror(-ret));
		return -1;
	}
	tr.fd = open(TRACEFS "/trace_pipe", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (tr.fd < 0) {
		strfmt(tr.why, sizeof(tr.why), "%s/trace_pipe: %s", TRACEFS,
		       strerror(errno));
		return -1;
	}
	tr.on = true;
	return 0;
}

/* The value of key in "k1=v1 k2=v2 ..." into out; false if absent. */
static bool kv(const char *s, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key);
	const char *p = s;

	while ((p = strstr(p, key))) {
		if ((p == s || p[-1] == ' ') && p[kl] == '=') {
			const char *v = p + kl + 1;
			size_t n = strcspn(v, " \n");

			if (n >= size)
				n = size - 1;
			memcpy(out, v, n);
			out[n] = '\0';
			return true;
		}
		p += kl;
	}
	return false;
}

static unsigned long long kv_num(const char *s, const char *key, int base,
				 bool *ok)
{
	char v[32], *end;
	unsigned long long n;

	if (!kv(s, key, v, sizeof(v)) || !v[0]) {
		*ok = false;
		return 0;
	}
	errno = 0;
	n = strtoull(v, &end, base);
	if (errno || *end)
		*ok = false;
	return n;
}

static long long kv_snum(const char *s, const char *key, bool *ok)
{
	char v[32], *end;
	long long n;

	if (!kv(s, key, v, sizeof(v)) || !v[0]) {
		*ok = false;
		return 0;
	}
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || *end)
		*ok = false;
	return n;
}

/* "  12.345678: " before the event name: the event's time in us. */
static uint64_t line_time(const char *line, const char *name_at)
{
	const char *end = name_at, *p;
	unsigned long long sec, usec;

	while (end > line && end[-1] == ' ')
		end--;
	if (end == line || end[-1] != ':')
		return 0;
	for (p = end - 1; p > line && p[-1] != ' '; p--)
		;
	if (sscanf(p, "%llu.%llu:", &sec, &usec) != 2)
		return 0;
	return (uint64_t)sec * 1000000u + usec;
}

static void tr_parse(const char *line)
{
	struct tr_rec r = { 0 };
	const char *at = NULL, *f;
	bool ok = true;
	size_t i;

	for (i = 0; i < sizeof(tr_names) / sizeof(tr_names[0]); i++) {
		char pat[64];

		strfmt(pat, sizeof(pat), " %s: ", tr_names[i]);
		at = strstr(line, pat);
		if (at) {
			r.event = (enum tr_event)i;
			break;
		}
	}
	if (!at)
		return;	/* another system's event, or a "lost events" note */
	f = at + 1 + strlen(tr_names[r.event]) + 2;
	r.t_us = line_time(line, at + 1);
	if (!kv(f, "driver", r.driver, sizeof(r.driver)))
		ok = false;
	switch (r.event) {
	case TR_PROBE:
		if (!kv(f, "intf", r.intf, sizeof(r.intf)) ||
		    !kv(f, "id", r.id, sizeof(r.id)))
			ok = false;
		r.match_flags = (unsigned int)kv_num(f, "match_flags", 16, &ok);
		r.vid = (unsigned int)kv_num(f, "vid", 16, &ok);
		r.pid = (unsigned int)kv_num(f, "pid", 16, &ok);
		r.cls = (unsigned int)kv_num(f, "class", 16, &ok);
		r.ret = (int)kv_snum(f, "ret", &ok);
		r.usecs = kv_snum(f, "usecs", &ok);
		break;
	case TR_UNBIND:
		if (!kv(f, "intf", r.intf, sizeof(r.intf)))
			ok = false;
		break;
	case TR_DYNID_ADD:
	case TR_DYNID_REMOVE:
		r.vid = (unsigned int)kv_num(f, "vid", 16, &ok);
		r.pid = (unsigned int)kv_num(f, "pid", 16, &ok);
		r.cls = (unsigned int)kv_num(f, "class", 16, &ok);
		r.driver_info = kv_num(f, "driver_info", 0, &ok);
		break;
	}
	if (!ok) {
		ag_log("unparsed trace line: %.300s", line);
		return;
	}
	if (tr.n == tr.cap) {
		size_t cap = tr.cap ? tr.cap * 2 : 256;
		struct tr_rec *n;

		if (cap > TR_REC_MAX) {
			tr.dropped++;
			return;
		}
		n = realloc(tr.rec, cap * sizeof(*n));
		if (!n) {
			tr.dropped++;
			return;
		}
		tr.rec = n;
		tr.cap = cap;
	}
	r.text = strdup(at + 1);
	if (!r.text) {
		tr.dropped++;
		return;
	}
	tr.rec[tr.n++] = r;
}

void trace_drain(void)
{
	char buf[8192];

	if (tr.fd < 0)
		return;
	for (;;) {
		ssize_t n = read(tr.fd, buf, sizeof(buf));
		ssize_t i;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;	/* EAGAIN: empty */
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				/* a longer line than ours is not one of
				 * our events: cut it, it will not parse */
				if (tr.part_len + 1 < sizeof(tr.part))
					tr.part[tr.part_len++] = buf[i];
				continue;
			}
			tr.part[tr.part_len] = '\0';
			tr_parse(tr.part);
			tr.part_len = 0;
		}
	}
}

void trace_mark_scenario(void)
{
	size_t i;

	for (i = 0; i < tr.n; i++)
		free(tr.rec[i].text);
	tr.n = 0;
	tr.dropped = 0;
}

static bool tr_about(const struct tr_rec *r, const char *intf,
		     const char *driver)
{
	return (!intf || !strcmp(r->intf, intf)) &&
	       (!driver || !strcmp(r->driver, driver));
}

void trace_describe(const char *intf, const char *driver, char *buf,
		    size_t size)
{
	size_t i, first, count = 0, w = 0;
	bool more = false;
	int shown = 0;

	buf[0] = '\0';
	if (!tr.on) {
		strfmt(buf, size, "no usb_core trace events: %s", tr.why);
		return;
	}
	/* the last 8 records about it */
	for (i = tr.n; i > 0 && count < 8; i--)
		if (tr_about(&tr.rec[i - 1], intf, driver))
			count++;
	first = i;
	while (i > 0 && !more)
		more = tr_about(&tr.rec[--i], intf, driver);
	for (i = first; i < tr.n && w + 1 < size; i++) {
		const struct tr_rec *r = &tr.rec[i];
		int n;

		if (!tr_about(r, intf, driver))
			continue;
		n = snprintf(buf + w, size - w, "%s%s", shown ? " | " :
			     more ? "... | " : "", r->text);
		if (n < 0)
			break;
		w += (size_t)n;
		shown++;
	}
	if (!shown)
		strfmt(buf, size, "no usb_core records%s%s%s%s",
		       intf ? " for " : "", intf ? intf : "",
		       driver ? " of driver " : "", driver ? driver : "");
	if (tr.dropped && strlen(buf) + 1 < size)
		strfmt(buf + strlen(buf), size - strlen(buf),
		       " (%lu records lost)", tr.dropped);
}
