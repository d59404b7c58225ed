// SPDX-License-Identifier: GPL-2.0
/*
 * scenario.c - parse *.scenario files into struct scenario.
 *
 * The parser is built from small cursor primitives (bare word, quoted
 * string, number, duration, end of statement; scenario_cursor.c) that
 * return 0 or -EINVAL with the message already formatted as
 * "file:line:col: ...".  One statement per line; each statement keyword
 * has one parse function (scenario_stmt.c).  This file reads the lines,
 * and after the last one runs the checks that need the whole file
 * (timeouts against the scenario budget, the default name).  The plan
 * writer is scenario_plan.c.
 */
#include "scenario_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const sc_tools[] = { "lsusb", "tcpdump", NULL };

/* The leading comment block, "# " stripped, lines joined by spaces. */
static int take_summary(struct scenario *s, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t cap = 0, n = 0;
	char *buf = NULL;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q = p;

		if (!eol)
			eol = end;
		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		if (q == eol || *q != '#')
			break;
		q++;
		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		while (eol > q && (eol[-1] == '\r' || eol[-1] == ' '))
			eol--;
		if (eol > q) {
			size_t add = (size_t)(eol - q);
			char *nb;

			if (n + add + 2 > cap) {
				cap = (n + add + 2) * 2;
				nb = realloc(buf, cap);
				if (!nb) {
					free(buf);
					return -ENOMEM;
				}
				buf = nb;
			}
			if (n)
				buf[n++] = ' ';
			memcpy(buf + n, q, add);
			n += add;
			buf[n] = '\0';
		}
		p = eol < end ? memchr(p, '\n', (size_t)(end - p)) : end;
		if (!p)
			break;
		p++;
	}
	s->summary = buf;
	return 0;
}

static int default_name(struct scenario *s, char *err, size_t errlen)
{
	const char *b = strrchr(s->file, '/');
	size_t n;

	b = b ? b + 1 : s->file;
	n = strlen(b);
	if (n > 9 && !strcmp(b + n - 9, ".scenario"))
		n -= 9;
	s->name = strndup(b, n);
	if (!s->name)
		return -ENOMEM;
	if (n >= SC_NAME_MAX || !sc_valid_name(s->name, true)) {
		snprintf(err, errlen, "%s:1:1: the file name does not make a "
			 "valid scenario name; add `name NAME`", s->file);
		return -EINVAL;
	}
	return 0;
}

/*
 * Whole-file check: the expectations that read the usb_core trace events
 * need `requires kernel patched` (anywhere in the file), so that a kernel
 * without them skips the scenario instead of failing it.
 */
static int check_trace_steps(struct scenario *s, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < s->n_reqs; i++)
		if (s->reqs[i].kind == SC_REQ_PATCHED)
			return 0;
	for (i = 0; i < s->n_steps; i++) {
		const struct sc_step *st = &s->steps[i];

		if (st->kind != PLAN_EXPECT_PROBE && st->kind != PLAN_EXPECT_DYNID)
			continue;
		snprintf(err, errlen, "%s:%d:1: `expect %s` reads the "
			 "patched kernel's usb_core trace events: add "
			 "`requires kernel patched`", s->file, st->line,
			 st->kind == PLAN_EXPECT_PROBE ? "probe" :
			 st->mode == PLAN_DYNID_ADD ? "dynid-add" :
			 "dynid-remove");
		return -EINVAL;
	}
	return 0;
}

/* Whole-file checks: step timeouts against the scenario's budget. */
static int check_timeouts(struct scenario *s, char *err, size_t errlen)
{
	unsigned int budget = s->timeout_s * 1000;
	int i;

	for (i = 0; i < s->n_steps; i++) {
		struct sc_step *st = &s->steps[i];

		if (st->timeout_ms <= budget)
			continue;
		if (!st->timeout_col) {
			st->timeout_ms = budget;	/* a default: clamp */
			continue;
		}
		snprintf(err, errlen, "%s:%d:%d: %u ms is longer than the "
			 "scenario timeout (%us)", s->file, st->line,
			 st->timeout_col, st->timeout_ms, s->timeout_s);
		return -EINVAL;
	}
	return 0;
}

int scenario_parse(const char *file, const char *text, size_t len,
		   const struct sc_opts *o, struct scenario **out,
		   char *err, size_t errlen)
{
	struct parser ps = { .o = o };
	struct cur c = {
		.file = file, .err = err, .errlen = errlen,
	};
	const char *p = text, *end = text + len;
	struct scenario *s;
	int ret;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	ps.s = s;
	/* the keys of copies' steps start past the last line */
	ps.next_key = 2;
	for (size_t i = 0; i < len; i++)
		ps.next_key += text[i] == '\n';
	s->timeout_s = SC_TIMEOUT_DEFAULT_S;
	if (o && o->default_timeout_s)
		s->timeout_s = o->default_timeout_s;
	s->file = strdup(file);
	s->cap_steps = 64;
	s->steps = calloc((size_t)s->cap_steps, sizeof(*s->steps));
	if (!s->file || !s->steps) {
		ret = -ENOMEM;
		goto err;
	}
	ret = take_summary(s, text, len);
	if (ret)
		goto err;
	if (len > SC_FILE_MAX) {
		snprintf(err, errlen, "%s: too large (max %d bytes)", file,
			 SC_FILE_MAX);
		ret = -EINVAL;
		goto err;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *q;

		c.line++;
		c.bol = p;
		c.p = p;
		c.eol = nl ? nl : end;
		if (c.eol > p && c.eol[-1] == '\r')
			c.eol--;
		for (q = p; q < c.eol; q++)
			if ((unsigned char)*q < 0x20 && *q != '\t') {
				ret =
				    cur_fail(&c, q, "control character 0x%02x",
					      (unsigned char)*q);
				goto err;
			}
		if (c.eol - p > PLAN_LINE_MAX) {
			ret = cur_fail(&c, p, "line too long (max %d bytes)",
					PLAN_LINE_MAX);
			goto err;
		}
		ret = sc_parse_statement(&ps, &c);
		if (ret)
			goto err;
		p = nl ? nl + 1 : end;
	}
	if (!ps.have_name) {
		ret = default_name(s, err, errlen);
		if (ret)
			goto err;
	}
	ret = check_timeouts(s, err, errlen);
	if (!ret)
		ret = check_trace_steps(s, err, errlen);
	if (ret)
		goto err;
	if (!s->n_steps && !s->skip) {
		snprintf(err, errlen, "%s:%d:1: the scenario has no steps",
			 file, c.line ? c.line : 1);
		ret = -EINVAL;
		goto err;
	}
	*out = s;
	return 0;
err:
	if (ret == -ENOMEM && errlen)
		snprintf(err, errlen, "%s: out of memory", file);
	scenario_free(s);
	return ret;
}

int scenario_load(const char *file, const struct sc_opts *o,
		  struct scenario **out, char *err, size_t errlen)
{
	FILE *f = fopen(file, "r");
	char *buf;
	size_t n;
	int ret;

	*out = NULL;
	if (!f) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return -errno;
	}
	buf = malloc(SC_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, SC_FILE_MAX + 1, f);
	if (ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "%s: read error", file);
	} else if (memchr(buf, '\0', n)) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: contains a NUL byte", file);
	} else {
		ret = scenario_parse(file, buf, n, o, out, err, errlen);
	}
	fclose(f);
	free(buf);
	return ret;
}

void scenario_free(struct scenario *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; s->steps && i < s->n_steps; i++) {
		free(s->steps[i].path);
		free(s->steps[i].text);
		free(s->steps[i].driver);
		free(s->steps[i].src);
	}
	for (i = 0; i < s->n_gadgets; i++)
		free(s->gadgets[i].path);
	for (i = 0; i < s->n_files; i++) {
		free(s->files[i].src);
		free(s->files[i].dst);
	}
	for (i = 0; i < s->n_reqs; i++)
		free(s->reqs[i].arg);
	free(s->reqs);
	free(s->steps);
	free(s->file);
	free(s->name);
	free(s->summary);
	free(s->skip);
	free(s);
}

const struct sc_step *scenario_step_at(const struct scenario *s, int key)
{
	int i;

	for (i = 0; i < s->n_steps; i++)
		if (s->steps[i].key == key && s->steps[i].kind != PLAN_SAY)
			return &s->steps[i];
	return NULL;
}

/* Up to max leading numbers of "6.12.118+deb12": their count. */
static int version_numbers(const char *s, unsigned long *v, int max)
{
	int n = 0;

	while (n < max && *s >= '0' && *s <= '9') {
		char *end;

		v[n++] = strtoul(s, &end, 10);
		if (*end != '.')
			break;
		s = end + 1;
	}
	return n;
}

bool sc_kernel_matches(const char *kver, const char *op_version)
{
	unsigned long want[8], have[8] = { 0 };
	char op[4];
	int nw, cmp = 0, i;
	const char *sp = strchr(op_version, ' ');

	if (!sp || sp - op_version > 2)
		return false;
	snprintf(op, sizeof(op), "%.*s", (int)(sp - op_version), op_version);
	nw = version_numbers(sp + 1, want, 8);
	if (!nw || !version_numbers(kver, have, nw))
		return false;
	for (i = 0; i < nw && !cmp; i++)
		cmp = have[i] < want[i] ? -1 : have[i] > want[i];
	if (!strcmp(op, "<"))
		return cmp < 0;
	if (!strcmp(op, "<="))
		return cmp <= 0;
	if (!strcmp(op, "="))
		return cmp == 0;
	if (!strcmp(op, ">="))
		return cmp >= 0;
	return !strcmp(op, ">") && cmp > 0;
}
