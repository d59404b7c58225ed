/* SPDX-License-Identifier: GPL-2.0 */
/*
 * console.h - the guest's kernel console as vm.c tails it: crash reports,
 * each with the scenario it belongs to, and the agent's scenario markers.
 *
 * The agent writes a marker into the kernel log as each scenario begins
 * and after its cleanup (harness/common/plan.h).  A crash report belongs
 * to the scenario whose marker came last before the report's first line:
 * from `begin NAME` to the next scenario's begin marker, NAME's steps and
 * cleanup, and whatever the kernel logs after them before the next one
 * begins.  A report's first line is one that matches a crash pattern; it
 * goes on until its "---[ end trace" line (a WARNING's, an oops') or for
 * CONSOLE_CRASH_WAIT_MS, and crash patterns in it (an oops' "Oops:" after
 * its "BUG:") are not reports of their own.  Reports and markers are told
 * in console order, a report once CONSOLE_CRASH_WAIT_MS have passed since
 * its first line (so that its excerpt holds the whole report, up to the
 * next report at most): a marker that came after a report waits for it.
 * When the caller hears a scenario's end marker (or a later marker), it
 * has heard every report of that scenario.
 */
#ifndef USBRIG_CONSOLE_H
#define USBRIG_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vm.h"

#define CONSOLE_CRASH_WAIT_MS	1500	/* let a report finish printing */
#define CONSOLE_REPORT_MAX	8192
#define CONSOLE_QUEUE_MAX	64	/* reports and markers not told yet */
#define CONSOLE_NAME_MAX	64	/* a scenario name, NUL included */

/* A report or a marker not told yet. */
struct con_event {
	bool crash;		/* a report; else a marker */
	bool end;		/* marker: `end` (else `begin`) */
	char scenario[CONSOLE_NAME_MAX];	/* "": before any marker */
	off_t at;		/* offset of its line in the log */
	off_t to;		/* offset of the line after it */
	char what[256];		/* report: the line that matched */
	uint64_t until;		/* report: when its excerpt is taken */
	bool ended;		/* report: its "---[ end trace" line came */
};

struct console {
	const char *log;	/* the console's file */
	int fd;
	char line[4096];	/* the line being read */
	size_t len;
	off_t off;		/* file offset of line[0] */
	char scenario[CONSOLE_NAME_MAX];	/* of the last marker, or "" */
	struct con_event q[CONSOLE_QUEUE_MAX];	/* in console order */
	unsigned int n_q;
	off_t reported_to;	/* the last excerpt told went this far, */
	char reported_sc[CONSOLE_NAME_MAX];	/* for a report of this one */
	bool panic;		/* "Kernel panic" was seen */
};

void console_init(struct console *c, const char *log);
void console_close(struct console *c);

/* Read what the log has gained, then tell what is due at now_ms. */
void console_poll(struct console *c, uint64_t now_ms, const struct vm_cb *cb);

/* Take bytes that follow what the log had (console_poll reads them). */
void console_feed(struct console *c, const char *buf, size_t n,
		  uint64_t now_ms, const struct vm_cb *cb);

/* Tell the reports and markers due at now_ms, in order; with all, every
 * one (the guest is gone). */
void console_flush(struct console *c, uint64_t now_ms, bool all,
		   const struct vm_cb *cb);

/* Is line (as the console shows it: a time stamp first, maybe "\r" at
 * the end) a marker?  Then *end and name[size] say which. */
bool console_mark_parse(const char *line, bool *end, char *name,
			size_t size);

#endif /* USBRIG_CONSOLE_H */
