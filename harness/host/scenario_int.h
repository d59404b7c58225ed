/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scenario_int.h - what the parts of the scenario parser share (not for
 * the rest of usbrig: scenario.h is the interface).
 *
 *	scenario_cursor.c	the line cursor: small primitives that read one
 *				word, string, number or duration each
 *	scenario_stmt.c		one parse function per statement keyword
 *	scenario.c		the file: lines, summary, whole-file checks
 *	scenario_plan.c		the plan writer
 *
 * Every primitive returns 0 or -EINVAL with the message already
 * formatted as "file:line:col: ..." in the cursor's err (or -ENOMEM).
 */
#ifndef USBRIG_SCENARIO_INT_H
#define USBRIG_SCENARIO_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/plan.h"
#include "../common/plan_words.h"
#include "scenario.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Default step timeouts (ms), clamped to the scenario budget. */
#define SC_DEF_ATTACH_MS	30000
#define SC_DEF_DETACH_MS	10000
#define SC_DEF_EXPECT_MS	10000
#define SC_DEF_RUN_MS		10000

#define PATH_MAX_GUEST		512

/* ---- the line cursor (scenario_cursor.c) ---- */

struct cur {
	const char *file;
	const char *bol;	/* first byte of the line */
	const char *p;		/* next byte to read */
	const char *eol;	/* one past the line's last byte */
	int line;
	char *err;
	size_t errlen;
};

/* 1-based column of at in the cursor's line. */
int cur_col(const struct cur *c, const char *at);
/* Format "file:line:col: " + fmt into c->err; returns -EINVAL. */
int cur_fail(struct cur *c, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cur_skip_ws(struct cur *c);
/* True at the end of the statement: end of line or a comment. */
bool cur_at_end(struct cur *c);
/* 0 at the end of the statement, else an error naming what follows. */
int cur_need_end(struct cur *c);
/* Length of the bare word at the cursor (0 if none). */
size_t cur_bare_len(const struct cur *c);
/* A bare word into buf; `what` names it in messages; *at: where it was. */
int cur_bare(struct cur *c, const char *what, char *buf, size_t size,
	     const char **at);
/* If the next bare word is w, consume it and return true. */
bool cur_peek_word(struct cur *c, const char *w);
/* A double-quoted string with C escapes, decoded into a new buffer. */
int cur_quoted(struct cur *c, const char *what, char **out);
/* A string: quoted, or one bare word (for paths and plain values). */
int cur_word_or_string(struct cur *c, const char *what, char **out,
		       const char **at);
/* A quoted string only (free text, where a bare word would mislead). */
int cur_string(struct cur *c, const char *what, char **out,
	       const char **at);
/* A decimal number in [0, max]. */
int cur_uint(struct cur *c, const char *what, unsigned long max,
	     unsigned long *out);
/* A duration: N (seconds), Ns or Nms, within [1 ms, max_ms]; *col: its
 * column. */
int cur_duration(struct cur *c, unsigned int max_ms, unsigned int *ms,
		 int *col);
/* [A-Za-z0-9_-]+ (and '.' when dots): a scenario or gadget name. */
bool sc_valid_name(const char *s, bool dots);

/* ---- statements (scenario_stmt.c) ---- */

struct parser {
	struct scenario *s;
	const struct sc_opts *o;
	bool attached[SC_GADGETS_MAX];
	int group_n;		/* the last gadget reference named copies */
	int next_key;		/* for copies' steps: past the last line */
	bool have_name;
	int name_line;
	int timeout_line;
	const char *stmt;	/* first byte of the current statement */
};

/*
 * Parse the statement at the cursor (one line; nothing when the line is
 * blank or a comment) into ps->s.
 */
int sc_parse_statement(struct parser *ps, struct cur *c);

#endif /* USBRIG_SCENARIO_INT_H */
