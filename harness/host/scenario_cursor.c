// SPDX-License-Identifier: GPL-2.0
/*
 * scenario_cursor.c - the line cursor of the scenario parser (see
 * scenario_int.h): each primitive reads one word, string, number or
 * duration and returns 0 or -EINVAL with "file:line:col: ..." in c->err.
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

#include "util.h"

int cur_col(const struct cur *c, const char *at)
{
	return (int)(at - c->bol) + 1;
}

int cur_fail(struct cur *c, const char *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!c->errlen)
		return -EINVAL;
	n = snprintf(c->err, c->errlen, "%s:%d:%d: ", c->file, c->line,
		     cur_col(c, at));
	if (n < 0 || (size_t)n >= c->errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void cur_skip_ws(struct cur *c)
{
	while (c->p < c->eol && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

/* True at the end of the statement: end of line or a comment. */
bool cur_at_end(struct cur *c)
{
	cur_skip_ws(c);
	return c->p == c->eol || *c->p == '#';
}

int cur_need_end(struct cur *c)
{
	const char *s;

	if (cur_at_end(c))
		return 0;
	s = c->p;
	while (s < c->eol && *s != ' ' && *s != '\t')
		s++;
	return cur_fail(c, c->p, "unexpected '%.*s' after the statement",
			 (int)(s - c->p > 40 ? 40 : s - c->p), c->p);
}

static bool cur_is_bare(char ch)
{
	return ch != ' ' && ch != '\t' && ch != '"';
}

/* Length of the bare word at the cursor (0 if none). */
size_t cur_bare_len(const struct cur *c)
{
	const char *s = c->p;

	while (s < c->eol && cur_is_bare(*s))
		s++;
	return (size_t)(s - c->p);
}

/* A bare word into buf; `what` names it in messages. */
int cur_bare(struct cur *c, const char *what, char *buf, size_t size,
		 const char **at)
{
	size_t n;

	if (cur_at_end(c))
		return cur_fail(c, c->p, "expected %s", what);
	*at = c->p;
	if (*c->p == '"')
		return cur_fail(c, c->p, "expected %s, not a quoted string",
				 what);
	n = cur_bare_len(c);
	if (n >= size)
		return cur_fail(c, c->p, "%s too long (max %zu bytes)", what,
				 size - 1);
	memcpy(buf, c->p, n);
	buf[n] = '\0';
	c->p += n;
	if (c->p < c->eol && *c->p == '"')
		return cur_fail(c, c->p, "a quote glued to a word");
	return 0;
}

/* If the next bare word is w, consume it and return true. */
bool cur_peek_word(struct cur *c, const char *w)
{
	size_t n;

	if (cur_at_end(c))
		return false;
	n = cur_bare_len(c);
	if (n != strlen(w) || memcmp(c->p, w, n))
		return false;
	c->p += n;
	return true;
}

/* A double-quoted string with C escapes, decoded into a new buffer. */
int cur_quoted(struct cur *c, const char *what, char **out)
{
	const char *open = c->p;
	char *buf, *w;

	/* decoding never grows: the raw length bounds the result */
	buf = malloc((size_t)(c->eol - c->p) + 1);
	if (!buf)
		return -ENOMEM;
	w = buf;
	c->p++;
	for (;;) {
		char ch;

		if (c->p == c->eol) {
			free(buf);
			return cur_fail(c, open, "missing closing quote of %s",
					 what);
		}
		ch = *c->p;
		if (ch == '"')
			break;
		if (ch != '\\') {
			*w++ = ch;
			c->p++;
			continue;
		}
		if (c->p + 1 == c->eol) {
			free(buf);
			return cur_fail(c, c->p,
					 "a backslash at the end of "
					 "the line");
		}
		switch (c->p[1]) {
		case 'n':
			*w++ = '\n';
			break;
		case 't':
			*w++ = '\t';
			break;
		case 'r':
			*w++ = '\r';
			break;
		case '\\':
			*w++ = '\\';
			break;
		case '"':
			*w++ = '"';
			break;
		case 'x': {
			int hi = c->p + 2 < c->eol ? util_hexval(c->p[2]) : -1;
			int lo = c->p + 3 < c->eol ? util_hexval(c->p[3]) : -1;

			if (hi < 0 || lo < 0 || (hi | lo) == 0) {
				free(buf);
				return cur_fail(c, c->p,
						 "\\x needs two hex "
						 "digits (not \\x00)");
			}
			*w++ = (char)(hi << 4 | lo);
			c->p += 2;
			break;
		}
		default:
			free(buf);
			return cur_fail(c, c->p,
					 "unknown escape '\\%c' "
					 "(known: \\n \\t \\r \\\\ \\\" \\xHH)",
					 c->p[1]);
		}
		c->p += 2;
	}
	c->p++;
	*w = '\0';
	if ((size_t)(w - buf) >= SC_STRING_MAX) {
		free(buf);
		return cur_fail(c, open, "%s too long (max %d bytes)", what,
				 SC_STRING_MAX - 1);
	}
	if (c->p < c->eol && cur_is_bare(*c->p)) {
		free(buf);
		return cur_fail(c, c->p, "a word glued to a quoted string");
	}
	*out = buf;
	return 0;
}

/* A string: quoted, or one bare word (for paths and plain values). */
int cur_word_or_string(struct cur *c, const char *what, char **out,
		       const char **at)
{
	char buf[SC_STRING_MAX];
	int ret;

	if (cur_at_end(c))
		return cur_fail(c, c->p, "expected %s", what);
	*at = c->p;
	if (*c->p == '"')
		return cur_quoted(c, what, out);
	ret = cur_bare(c, what, buf, sizeof(buf), at);
	if (ret)
		return ret;
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

/* A quoted string only (free text, where a bare word would mislead). */
int cur_string(struct cur *c, const char *what, char **out, const char **at)
{
	if (cur_at_end(c))
		return cur_fail(c, c->p, "expected %s (a quoted string)", what);
	*at = c->p;
	if (*c->p != '"')
		return cur_fail(c, c->p, "expected %s as a quoted string",
				what);
	return cur_quoted(c, what, out);
}

int cur_uint(struct cur *c, const char *what, unsigned long max,
	     unsigned long *out)
{
	char buf[24];
	const char *at;
	char *end;
	int ret;

	ret = cur_bare(c, what, buf, sizeof(buf), &at);
	if (ret)
		return ret;
	if (buf[0] < '0' || buf[0] > '9')
		return cur_fail(c, at,
				 "expected %s (a decimal number), not "
				 "'%s'",
				 what, buf);
	errno = 0;
	*out = strtoul(buf, &end, 10);
	if (*end)
		return cur_fail(c, at,
				 "expected %s (a decimal number), not "
				 "'%s'",
				 what, buf);
	if (errno || *out > max)
		return cur_fail(c, at, "%s out of range (0..%lu)", what, max);
	return 0;
}

/*
 * A duration: N (seconds), Ns or Nms.  Must be within [1 ms, max_ms].
 */
int cur_duration(struct cur *c, unsigned int max_ms, unsigned int *ms, int *col)
{
	char buf[24];
	const char *at;
	unsigned long long v = 0, unit = 1000;
	char *s;
	int ret;

	ret = cur_bare(c, "a duration (e.g. 10s, 500ms)", buf, sizeof(buf),
		       &at);
	if (ret)
		return ret;
	*col = cur_col(c, at);
	for (s = buf; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (unsigned long long)(*s - '0');
		if (v > UINT32_MAX)
			break;
	}
	if (s == buf)
		return cur_fail(c, at,
				 "expected a duration (e.g. 10s, 500ms), "
				 "not '%s'",
				 buf);
	if (!strcmp(s, "ms"))
		unit = 1;
	else if (*s && strcmp(s, "s"))
		return cur_fail(c, at, "bad duration '%s' (units: s, ms)", buf);
	v *= unit;
	if (v < 1 || v > max_ms)
		return cur_fail(c, at, "duration '%s' out of range (1ms..%us)",
				 buf, max_ms / 1000);
	*ms = (unsigned int)v;
	return 0;
}

bool sc_valid_name(const char *s, bool dots)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' ||
		      (dots && *s == '.')))
			return false;
	return true;
}
