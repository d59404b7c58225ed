// SPDX-License-Identifier: GPL-2.0
/*
 * console.c - crash reports and scenario markers in the guest's kernel
 * console (console.h says what is told when).
 */
#define _GNU_SOURCE
#include "console.h"
#include "../common/plan.h"
#include "klog.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


bool console_mark_parse(const char *line, bool *end, char *name,
			size_t size)
{
	const char *p = line;
	size_t n;

	/* printk's "[    5.163879] " (and a caller id "[  T123] ") */
	while (*p == '[') {
		p = strchr(p, ']');
		if (!p)
			return false;
		for (p++; *p == ' '; p++)
			;
	}
	if (!strncmp(p, PLAN_MARK_BEGIN, strlen(PLAN_MARK_BEGIN))) {
		*end = false;
		p += strlen(PLAN_MARK_BEGIN);
	} else if (!strncmp(p, PLAN_MARK_END, strlen(PLAN_MARK_END))) {
		*end = true;
		p += strlen(PLAN_MARK_END);
	} else {
		return false;
	}
	/* the name, then nothing but a serial line's "\r" */
	n = strcspn(p, " \t\r");
	if (!n || n >= size || (p[n] && strcmp(p + n, "\r")))
		return false;
	memcpy(name, p, n);
	name[n] = '\0';
	return true;
}

void console_init(struct console *c, const char *log)
{
	memset(c, 0, sizeof(*c));
	c->log = log;
	c->fd = -1;
	c->reported_to = -1;
}

void console_close(struct console *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* The log from `from` (backed up ~4 lines, to a line start) up to `to`
 * (-1: up to now). */
static void excerpt(const char *log, off_t from, off_t to, char *buf,
		    size_t max)
{
	int fd = open(log, O_RDONLY | O_CLOEXEC);
	off_t start = from > 512 ? from - 512 : 0;
	size_t len = max - 1;
	ssize_t n;
	char *p;

	buf[0] = '\0';
	if (fd < 0)
		return;
	if (to >= start && (size_t)(to - start) < len)
		len = (size_t)(to - start);
	n = pread(fd, buf, len, start);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (start) {
		p = strchr(buf, '\n');
		if (p && p - buf < from - start)
			memmove(buf, p + 1, strlen(p + 1) + 1);
	}
}

/* Tell the first event and drop it. */
static void tell_first(struct console *c, const struct vm_cb *cb)
{
	struct con_event *e = &c->q[0];
	const char *sc = e->scenario[0] ? e->scenario : NULL;

	if (e->crash) {
		char *ex = malloc(CONSOLE_REPORT_MAX);
		off_t to = -1;

		/* up to the next report, which has its own */
		for (unsigned int i = 1; i < c->n_q && to < 0; i++)
			if (c->q[i].crash)
				to = c->q[i].at;
		if (ex) {
			excerpt(c->log, e->at, to, ex, CONSOLE_REPORT_MAX);
			if (cb->crash)
				cb->crash(cb->ctx, e->what, ex, sc);
			free(ex);
		}
		/* what the excerpt holds is not a report of its own */
		c->reported_to = c->off + (off_t)c->len;
		memcpy(c->reported_sc, e->scenario, sizeof(c->reported_sc));
	} else if (cb->mark) {
		cb->mark(cb->ctx, e->end, e->scenario, (long long)e->at,
			 (long long)e->to);
	}
	c->n_q--;
	memmove(c->q, c->q + 1, c->n_q * sizeof(c->q[0]));
}

void console_flush(struct console *c, uint64_t now_ms, bool all,
		   const struct vm_cb *cb)
{
	while (c->n_q && (all || !c->q[0].crash || now_ms >= c->q[0].until))
		tell_first(c, cb);
}

/* A new event at the end of the queue; a full queue tells its first one
 * early (a report's excerpt is then shorter, the order stays). */
static struct con_event *push(struct console *c, const struct vm_cb *cb)
{
	struct con_event *e;

	if (c->n_q == CONSOLE_QUEUE_MAX)
		tell_first(c, cb);
	e = &c->q[c->n_q++];
	memset(e, 0, sizeof(*e));
	memcpy(e->scenario, c->scenario, sizeof(e->scenario));
	return e;
}

/* The report of scenario sc still being printed (waiting for its
 * excerpt, no "---[ end trace" line yet), or NULL. */
static struct con_event *printing(struct console *c, const char *sc)
{
	for (unsigned int i = 0; i < c->n_q; i++)
		if (c->q[i].crash && !c->q[i].ended &&
		    !strcmp(c->q[i].scenario, sc))
			return &c->q[i];
	return NULL;
}

/* One complete line, at file offset `at`, the next one at `next`. */
static void console_line(struct console *c, const char *line, off_t at,
			 off_t next, uint64_t now_ms, const struct vm_cb *cb)
{
	char name[CONSOLE_NAME_MAX];
	struct con_event *e;
	size_t n;
	bool end;

	if (console_mark_parse(line, &end, name, sizeof(name))) {
		memcpy(c->scenario, name, sizeof(c->scenario));
		e = push(c, cb);
		e->end = end;
		e->at = at;
		e->to = next;
		return;
	}
	if (strstr(line, "Kernel panic"))
		c->panic = true;
	/* the last line of a WARNING's or an oops' report */
	if (strstr(line, "---[ end trace")) {
		e = printing(c, c->scenario);
		if (e)
			e->ended = true;
		return;
	}
	if (!klog_report_mark(line))
		return;
	/* oops_end()'s panic only says that the report before it was fatal:
	 * a line of that report, even after its end trace */
	if (strstr(line, "not syncing: Fatal exception") && c->n_q &&
	    c->q[c->n_q - 1].crash &&
	    !strcmp(c->q[c->n_q - 1].scenario, c->scenario))
		return;
	/* a line of a report being printed ("Oops:" after "BUG:", ...),
	 * or one that the last excerpt of this scenario's report holds */
	if (printing(c, c->scenario) ||
	    (at < c->reported_to && !strcmp(c->reported_sc, c->scenario)))
		return;
	e = push(c, cb);
	e->crash = true;
	e->at = at;
	e->to = next;
	/* the line, cut to fit, without a serial line's "\r" */
	n = strnlen(line, sizeof(e->what) - 1);
	memcpy(e->what, line, n);
	e->what[n] = '\0';
	e->what[strcspn(e->what, "\r")] = '\0';
	e->until = now_ms + CONSOLE_CRASH_WAIT_MS;
}

void console_feed(struct console *c, const char *buf, size_t n,
		  uint64_t now_ms, const struct vm_cb *cb)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			if (c->len < sizeof(c->line) - 1)
				c->line[c->len] = buf[i];
			c->len++;	/* an overlong line: keep its head */
			continue;
		}
		c->line[c->len < sizeof(c->line) ? c->len :
			sizeof(c->line) - 1] = '\0';
		console_line(c, c->line, c->off, c->off + (off_t)c->len + 1,
			     now_ms, cb);
		c->off += (off_t)c->len + 1;
		c->len = 0;
	}
}

void console_poll(struct console *c, uint64_t now_ms, const struct vm_cb *cb)
{
	char buf[16384];
	ssize_t n;

	if (c->fd < 0) {
		c->fd = open(c->log, O_RDONLY | O_CLOEXEC);
		if (c->fd < 0)
			return;
	}
	while ((n = read(c->fd, buf, sizeof(buf))) > 0)
		console_feed(c, buf, (size_t)n, now_ms, cb);
	console_flush(c, now_ms, false, cb);
}
