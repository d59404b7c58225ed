// SPDX-License-Identifier: GPL-2.0
/*
 * scenario.c - parse *.scenario files into struct scenario, write plans.
 *
 * The parser is built from small cursor primitives (bare word, quoted
 * string, number, duration, end of statement) that return 0 or -EINVAL
 * with the message already formatted as "file:line:col: ...".  One
 * statement per line; each statement keyword has one parse function.
 * After the last line, checks that need the whole file run (timeouts
 * against the scenario budget, the default name).
 */
#include "scenario.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Included by path so that tests/unit/test_scenario.c can #include this
 * file without the harness include flags. */
#include "../common/plan.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Default step timeouts (ms), clamped to the scenario budget. */
#define SC_DEF_ATTACH_MS	30000
#define SC_DEF_DETACH_MS	10000
#define SC_DEF_EXPECT_MS	10000
#define SC_DEF_RUN_MS		10000

#define PATH_MAX_GUEST		512

/* ---- errno names --------------------------------------------------- */

static const struct {
	const char *name;
	int value;
} sc_errnos[] = {
	{ "EPERM", EPERM },		{ "ENOENT", ENOENT },
	{ "ESRCH", ESRCH },		{ "EINTR", EINTR },
	{ "EIO", EIO },			{ "ENXIO", ENXIO },
	{ "E2BIG", E2BIG },		{ "ENOEXEC", ENOEXEC },
	{ "EBADF", EBADF },		{ "EAGAIN", EAGAIN },
	{ "ENOMEM", ENOMEM },		{ "EACCES", EACCES },
	{ "EFAULT", EFAULT },		{ "EBUSY", EBUSY },
	{ "EEXIST", EEXIST },		{ "EXDEV", EXDEV },
	{ "ENODEV", ENODEV },		{ "ENOTDIR", ENOTDIR },
	{ "EISDIR", EISDIR },		{ "EINVAL", EINVAL },
	{ "ENFILE", ENFILE },		{ "EMFILE", EMFILE },
	{ "ENOTTY", ENOTTY },		{ "EFBIG", EFBIG },
	{ "ENOSPC", ENOSPC },		{ "ESPIPE", ESPIPE },
	{ "EROFS", EROFS },		{ "EPIPE", EPIPE },
	{ "EDOM", EDOM },		{ "ERANGE", ERANGE },
	{ "ENOSYS", ENOSYS },		{ "ENODATA", ENODATA },
	{ "ETIME", ETIME },		{ "EPROTO", EPROTO },
	{ "EOVERFLOW", EOVERFLOW },	{ "EILSEQ", EILSEQ },
	{ "EOPNOTSUPP", EOPNOTSUPP },	{ "ECONNRESET", ECONNRESET },
	{ "ESHUTDOWN", ESHUTDOWN },	{ "ETIMEDOUT", ETIMEDOUT },
	{ "EALREADY", EALREADY },	{ "EINPROGRESS", EINPROGRESS },
	{ "EREMOTEIO", EREMOTEIO },	{ "EPROBE_DEFER", SC_EPROBE_DEFER },
};

int sc_errno_value(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sc_errnos); i++)
		if (!strcmp(sc_errnos[i].name, name))
			return sc_errnos[i].value;
	return 0;
}

const char *sc_errno_name(int err)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sc_errnos); i++)
		if (sc_errnos[i].value == err)
			return sc_errnos[i].name;
	return NULL;
}

static const char *const sc_kind_names[] = {
	[SC_ATTACH] = "attach",
	[SC_DETACH] = "detach",
	[SC_MODPROBE] = "modprobe",
	[SC_RMMOD] = "rmmod",
	[SC_WRITE] = "write",
	[SC_READ] = "read",
	[SC_EXPECT_BOUND] = "expect-bound",
	[SC_EXPECT_UNBOUND] = "expect-unbound",
	[SC_EXPECT_PROBE_ERROR] = "expect-probe-error",
	[SC_EXPECT_NODE] = "expect-node",
	[SC_EXPECT_NO_NODE] = "expect-no-node",
	[SC_EXPECT_KMSG] = "expect-kmsg",
	[SC_EXPECT_PROBE] = "expect-probe",
	[SC_EXPECT_DYNID] = "expect-dynid",
	[SC_RUN] = "run",
	[SC_SAVE] = "save",
	[SC_SAY] = "say",
};

const char *const sc_tools[] = { "lsusb", "tcpdump", NULL };

const char *sc_kind_name(enum sc_kind kind)
{
	if ((unsigned int)kind >= ARRAY_SIZE(sc_kind_names))
		return "?";
	return sc_kind_names[kind];
}

static const char *const attach_modes[] = {
	[SC_VERIFY] = "verify",
	[SC_NO_VERIFY] = "no-verify",
	[SC_NO_WAIT] = "no-wait",
};

static const char *const match_names[] = {
	[SC_EQUALS] = "equals",
	[SC_CONTAINS] = "contains",
	[SC_NOT_CONTAINS] = "not-contains",
};

static const char *const window_names[] = {
	[SC_WITHIN] = "within",
	[SC_FOR] = "for",
};

static const char *const matched_names[] = {
	[SC_MATCHED_ANY] = "-",
	[SC_MATCHED_DYNAMIC] = "dynamic",
	[SC_MATCHED_STATIC] = "static",
	[SC_MATCHED_NONE] = "none",
};

static const char *const dynid_names[] = {
	[SC_DYNID_ADD] = "add",
	[SC_DYNID_REMOVE] = "remove",
};

/* ---- the cursor ---------------------------------------------------- */

struct cur {
	const char *file;
	const char *bol;	/* first byte of the line */
	const char *p;		/* next byte to read */
	const char *eol;	/* one past the line's last byte */
	int line;
	char *err;
	size_t errlen;
};

static int cur_col(const struct cur *c, const char *at)
{
	return (int)(at - c->bol) + 1;
}

__attribute__((format(printf, 3, 4)))
static int fail_at(struct cur *c, const char *at, const char *fmt, ...)
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

static void skip_ws(struct cur *c)
{
	while (c->p < c->eol && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

/* True at the end of the statement: end of line or a comment. */
static bool at_end(struct cur *c)
{
	skip_ws(c);
	return c->p == c->eol || *c->p == '#';
}

static int need_end(struct cur *c)
{
	const char *s;

	if (at_end(c))
		return 0;
	s = c->p;
	while (s < c->eol && *s != ' ' && *s != '\t')
		s++;
	return fail_at(c, c->p, "unexpected '%.*s' after the statement",
		       (int)(s - c->p > 40 ? 40 : s - c->p), c->p);
}

static bool is_bare(char ch)
{
	return ch != ' ' && ch != '\t' && ch != '"';
}

/* Length of the bare word at the cursor (0 if none). */
static size_t bare_len(const struct cur *c)
{
	const char *s = c->p;

	while (s < c->eol && is_bare(*s))
		s++;
	return (size_t)(s - c->p);
}

/* A bare word into buf; `what` names it in messages. */
static int bare(struct cur *c, const char *what, char *buf, size_t size,
		const char **at)
{
	size_t n;

	if (at_end(c))
		return fail_at(c, c->p, "expected %s", what);
	*at = c->p;
	if (*c->p == '"')
		return fail_at(c, c->p, "expected %s, not a quoted string",
			       what);
	n = bare_len(c);
	if (n >= size)
		return fail_at(c, c->p, "%s too long (max %zu bytes)", what,
			       size - 1);
	memcpy(buf, c->p, n);
	buf[n] = '\0';
	c->p += n;
	if (c->p < c->eol && *c->p == '"')
		return fail_at(c, c->p, "a quote glued to a word");
	return 0;
}

/* If the next bare word is w, consume it and return true. */
static bool peek_word(struct cur *c, const char *w)
{
	size_t n;

	if (at_end(c))
		return false;
	n = bare_len(c);
	if (n != strlen(w) || memcmp(c->p, w, n))
		return false;
	c->p += n;
	return true;
}

static int sc_hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* A double-quoted string with C escapes, decoded into a new buffer. */
static int quoted(struct cur *c, const char *what, char **out)
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
			return fail_at(c, open, "missing closing quote of %s",
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
			return fail_at(c, c->p, "a backslash at the end of "
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
			int hi = c->p + 2 < c->eol ? sc_hexval(c->p[2]) : -1;
			int lo = c->p + 3 < c->eol ? sc_hexval(c->p[3]) : -1;

			if (hi < 0 || lo < 0 || (hi | lo) == 0) {
				free(buf);
				return fail_at(c, c->p, "\\x needs two hex "
					       "digits (not \\x00)");
			}
			*w++ = (char)(hi << 4 | lo);
			c->p += 2;
			break;
		}
		default:
			free(buf);
			return fail_at(c, c->p, "unknown escape '\\%c' "
				       "(known: \\n \\t \\r \\\\ \\\" \\xHH)",
				       c->p[1]);
		}
		c->p += 2;
	}
	c->p++;
	*w = '\0';
	if ((size_t)(w - buf) >= SC_STRING_MAX) {
		free(buf);
		return fail_at(c, open, "%s too long (max %d bytes)", what,
			       SC_STRING_MAX - 1);
	}
	if (c->p < c->eol && is_bare(*c->p)) {
		free(buf);
		return fail_at(c, c->p, "a word glued to a quoted string");
	}
	*out = buf;
	return 0;
}

/* A string: quoted, or one bare word (for paths and plain values). */
static int text_arg(struct cur *c, const char *what, char **out,
		    const char **at)
{
	char buf[SC_STRING_MAX];
	int ret;

	if (at_end(c))
		return fail_at(c, c->p, "expected %s", what);
	*at = c->p;
	if (*c->p == '"')
		return quoted(c, what, out);
	ret = bare(c, what, buf, sizeof(buf), at);
	if (ret)
		return ret;
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

/* A quoted string only (free text, where a bare word would mislead). */
static int string_arg(struct cur *c, const char *what, char **out,
		      const char **at)
{
	if (at_end(c))
		return fail_at(c, c->p, "expected %s (a quoted string)", what);
	*at = c->p;
	if (*c->p != '"')
		return fail_at(c, c->p, "expected %s as a quoted string", what);
	return quoted(c, what, out);
}

static int uint_arg(struct cur *c, const char *what, unsigned long max,
		    unsigned long *out)
{
	char buf[24];
	const char *at;
	char *end;
	int ret;

	ret = bare(c, what, buf, sizeof(buf), &at);
	if (ret)
		return ret;
	if (buf[0] < '0' || buf[0] > '9')
		return fail_at(c, at, "expected %s (a decimal number), not "
			       "'%s'", what, buf);
	errno = 0;
	*out = strtoul(buf, &end, 10);
	if (*end)
		return fail_at(c, at, "expected %s (a decimal number), not "
			       "'%s'", what, buf);
	if (errno || *out > max)
		return fail_at(c, at, "%s out of range (0..%lu)", what, max);
	return 0;
}

/*
 * A duration: N (seconds), Ns or Nms.  Must be within [1 ms, max_ms].
 */
static int duration(struct cur *c, unsigned int max_ms, unsigned int *ms,
		    int *col)
{
	char buf[24];
	const char *at;
	unsigned long long v = 0, unit = 1000;
	char *s;
	int ret;

	ret = bare(c, "a duration (e.g. 10s, 500ms)", buf, sizeof(buf), &at);
	if (ret)
		return ret;
	*col = cur_col(c, at);
	for (s = buf; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (unsigned long long)(*s - '0');
		if (v > UINT32_MAX)
			break;
	}
	if (s == buf)
		return fail_at(c, at, "expected a duration (e.g. 10s, 500ms), "
			       "not '%s'", buf);
	if (!strcmp(s, "ms"))
		unit = 1;
	else if (*s && strcmp(s, "s"))
		return fail_at(c, at, "bad duration '%s' (units: s, ms)", buf);
	v *= unit;
	if (v < 1 || v > max_ms)
		return fail_at(c, at, "duration '%s' out of range (1ms..%us)",
			       buf, max_ms / 1000);
	*ms = (unsigned int)v;
	return 0;
}

static bool valid_name(const char *s, bool dots)
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

/* ---- the parser ---------------------------------------------------- */

struct parser {
	struct scenario *s;
	const struct sc_opts *o;
	bool attached[SC_GADGETS_MAX];
	bool have_name;
	int name_line;
	int timeout_line;
	const char *stmt;	/* first byte of the current statement */
};

static int gadget_index(const struct scenario *s, const char *id)
{
	int i;

	for (i = 0; i < s->n_gadgets; i++)
		if (!strcmp(s->gadgets[i].id, id))
			return i;
	return -1;
}

/* A gadget id that names a declared gadget. */
static int gadget_ref(struct parser *ps, struct cur *c, int *idx)
{
	char id[SC_ID_MAX];
	const char *at;
	int ret;

	ret = bare(c, "a gadget id", id, sizeof(id), &at);
	if (ret)
		return ret;
	*idx = gadget_index(ps->s, id);
	if (*idx < 0)
		return fail_at(c, at, "unknown gadget id '%s' (declare it "
			       "with `gadget %s FILE` first)", id, id);
	return 0;
}

static int need_attached(struct parser *ps, struct cur *c, const char *at,
			 int g)
{
	if (ps->attached[g])
		return 0;
	return fail_at(c, at, "gadget '%s' is not attached at this point",
		       ps->s->gadgets[g].id);
}

/*
 * Check the ${ID.attr} substitutions of a string: a declared ID, attr
 * dev, busid or intfN; dev and intfN only while the gadget is attached.
 */
static int check_subst(struct parser *ps, struct cur *c, const char *at,
		       const char *str)
{
	const char *p = str;

	while ((p = strstr(p, "${"))) {
		const char *close = strchr(p, '}');
		const char *dot;
		char id[SC_ID_MAX];
		const char *attr;
		size_t n;
		int g;

		if (!close)
			return fail_at(c, at, "unterminated '${' in string");
		dot = memchr(p + 2, '.', (size_t)(close - p - 2));
		if (!dot)
			return fail_at(c, at, "'%.*s': expected ${ID.dev}, "
				       "${ID.busid} or ${ID.intfN}",
				       (int)(close - p + 1), p);
		n = (size_t)(dot - p - 2);
		if (n >= sizeof(id))
			n = sizeof(id) - 1;
		memcpy(id, p + 2, n);
		id[n] = '\0';
		g = gadget_index(ps->s, id);
		if (g < 0)
			return fail_at(c, at, "'%.*s': unknown gadget id '%s'",
				       (int)(close - p + 1), p, id);
		attr = dot + 1;
		n = (size_t)(close - attr);
		if (n == 5 && !memcmp(attr, "busid", 5)) {
			p = close + 1;
			continue;
		}
		if (n == 3 && !memcmp(attr, "dev", 3)) {
			/* fine */
		} else if (n > 4 && n <= 7 && !memcmp(attr, "intf", 4)) {
			char num[4];
			char *end;
			unsigned long v;

			memcpy(num, attr + 4, n - 4);
			num[n - 4] = '\0';
			v = strtoul(num, &end, 10);
			if (*end || num[0] < '0' || num[0] > '9' || v > 255 ||
			    (num[0] == '0' && num[1]))
				return fail_at(c, at, "'%.*s': bad interface "
					       "number", (int)(close - p + 1),
					       p);
		} else {
			return fail_at(c, at, "'%.*s': unknown attribute (dev, "
				       "busid, intfN)", (int)(close - p + 1),
				       p);
		}
		if (!ps->attached[g])
			return fail_at(c, at, "'%.*s': gadget '%s' is not "
				       "attached at this point",
				       (int)(close - p + 1), p, id);
		p = close + 1;
	}
	return 0;
}

static struct sc_step *new_step(struct parser *ps, struct cur *c,
				enum sc_kind kind)
{
	struct sc_step *st;

	if (ps->s->n_steps >= SC_STEPS_MAX) {
		fail_at(c, ps->stmt, "too many steps (max %d)", SC_STEPS_MAX);
		return NULL;
	}
	st = &ps->s->steps[ps->s->n_steps++];
	memset(st, 0, sizeof(*st));
	st->kind = kind;
	st->line = c->line;
	st->col = cur_col(c, c->p);
	st->gadget = -1;
	st->status = -1;
	return st;
}

/* `within DUR` if present, else def. */
static int opt_within(struct cur *c, struct sc_step *st, unsigned int def)
{
	st->timeout_ms = def;
	if (!peek_word(c, "within"))
		return 0;
	return duration(c, SC_STEP_TIMEOUT_MAX_MS, &st->timeout_ms,
			&st->timeout_col);
}

/* `within DUR` or `for DUR`; `for` needs its duration. */
static int opt_window(struct cur *c, struct sc_step *st)
{
	st->mode = SC_WITHIN;
	st->timeout_ms = SC_DEF_EXPECT_MS;
	if (peek_word(c, "for"))
		st->mode = SC_FOR;
	else if (!peek_word(c, "within"))
		return 0;
	return duration(c, SC_STEP_TIMEOUT_MAX_MS, &st->timeout_ms,
			&st->timeout_col);
}

static int p_name(struct parser *ps, struct cur *c)
{
	char buf[SC_NAME_MAX];
	const char *at;
	int ret;

	if (ps->have_name)
		return fail_at(c, ps->stmt, "a second `name` (first on line "
			       "%d)", ps->name_line);
	ret = bare(c, "a name", buf, sizeof(buf), &at);
	if (ret)
		return ret;
	if (!valid_name(buf, true))
		return fail_at(c, at, "bad name '%s' (letters, digits, "
			       "'_', '-', '.')", buf);
	free(ps->s->name);
	ps->s->name = strdup(buf);
	if (!ps->s->name)
		return -ENOMEM;
	ps->have_name = true;
	ps->name_line = c->line;
	return need_end(c);
}

static int p_timeout(struct parser *ps, struct cur *c)
{
	unsigned int ms;
	int col, ret;

	if (ps->timeout_line)
		return fail_at(c, ps->stmt, "a second `timeout` (first on "
			       "line %d)", ps->timeout_line);
	ret = duration(c, SC_TIMEOUT_MAX_S * 1000, &ms, &col);
	if (ret)
		return ret;
	if (ms % 1000 || ms == 0)
		return fail_at(c, c->bol + col - 1, "a scenario timeout is "
			       "whole seconds (1s..%ds)", SC_TIMEOUT_MAX_S);
	ps->s->timeout_s = ms / 1000;
	ps->timeout_line = c->line;
	return need_end(c);
}

static int p_requires(struct parser *ps, struct cur *c)
{
	struct scenario *s = ps->s;
	struct sc_require *r, *n;
	char buf[SC_NAME_MAX];
	const char *at;
	int ret;

	n = realloc(s->reqs, sizeof(*s->reqs) * (size_t)(s->n_reqs + 1));
	if (!n)
		return -ENOMEM;
	s->reqs = n;
	r = &s->reqs[s->n_reqs];
	memset(r, 0, sizeof(*r));
	r->line = c->line;
	ret = bare(c, "`module NAME`, `kernel patched`, `config NAME` or "
		   "`tool NAME`", buf, sizeof(buf), &at);
	if (ret)
		return ret;
	if (!strcmp(buf, "tool")) {
		size_t k;

		r->kind = SC_REQ_TOOL;
		ret = bare(c, "a tool name", buf, sizeof(buf), &at);
		if (ret)
			return ret;
		for (k = 0; sc_tools[k] && strcmp(sc_tools[k], buf); k++)
			;
		if (!sc_tools[k])
			return fail_at(c, at, "unknown tool '%s' (known: "
				       "lsusb, tcpdump)", buf);
		r->arg = strdup(buf);
		if (!r->arg)
			return -ENOMEM;
	} else if (!strcmp(buf, "config")) {
		const char *name = buf, *p;

		r->kind = SC_REQ_CONFIG;
		ret = bare(c, "a kernel config option", buf, sizeof(buf), &at);
		if (ret)
			return ret;
		if (!strncmp(name, "CONFIG_", 7))
			name += 7;
		for (p = name; *p; p++)
			if (!((*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '_'))
				break;
		if (!*name || *p)
			return fail_at(c, at, "bad config option '%s' (e.g. "
				       "DYNAMIC_DEBUG or CONFIG_DYNAMIC_DEBUG)",
				       buf);
		r->arg = malloc(strlen(name) + 8);
		if (!r->arg)
			return -ENOMEM;
		sprintf(r->arg, "CONFIG_%s", name);
	} else if (!strcmp(buf, "module")) {
		r->kind = SC_REQ_MODULE;
		ret = bare(c, "a module name", buf, sizeof(buf), &at);
		if (ret)
			return ret;
		if (!valid_name(buf, false))
			return fail_at(c, at, "bad module name '%s'", buf);
		r->arg = strdup(buf);
		if (!r->arg)
			return -ENOMEM;
	} else if (!strcmp(buf, "kernel")) {
		r->kind = SC_REQ_PATCHED;
		ret = bare(c, "`patched`", buf, sizeof(buf), &at);
		if (ret)
			return ret;
		if (strcmp(buf, "patched"))
			return fail_at(c, at, "unknown kernel requirement '%s' "
				       "(known: patched)", buf);
	} else {
		return fail_at(c, at, "unknown requirement '%s' (known: "
			       "module, kernel, config, tool)", buf);
	}
	r->col = cur_col(c, at);
	s->n_reqs++;
	return need_end(c);
}

static int p_skip(struct parser *ps, struct cur *c)
{
	const char *at;
	int ret;

	if (ps->s->skip)
		return fail_at(c, ps->stmt, "a second `skip`");
	ret = string_arg(c, "the reason", &ps->s->skip, &at);
	return ret ? ret : need_end(c);
}

static char *resolve_path(const char *file, const char *root,
			  const char *p)
{
	const char *base = root ? root : ".";
	size_t blen;
	char *out;

	if (p[0] == '/')
		return strdup(p);
	if (!strncmp(p, "./", 2) || !strncmp(p, "../", 3)) {
		const char *slash = strrchr(file, '/');

		base = slash ? file : ".";
		blen = slash ? (size_t)(slash - file) : 1;
	} else {
		blen = strlen(base);
	}
	out = malloc(blen + strlen(p) + 2);
	if (!out)
		return NULL;
	memcpy(out, base, blen);
	out[blen] = '/';
	strcpy(out + blen + 1, p);
	return out;
}

static int p_gadget(struct parser *ps, struct cur *c)
{
	struct scenario *s = ps->s;
	struct sc_gadget *g;
	char id[SC_ID_MAX], msg[512];
	const char *at, *pat;
	char *path;
	int ret;

	ret = bare(c, "a gadget id", id, sizeof(id), &at);
	if (ret)
		return ret;
	if (id[0] < 'a' || id[0] > 'z' || !valid_name(id, false) ||
	    strchr(id, '-'))
		return fail_at(c, at, "bad gadget id '%s' (a lower-case "
			       "letter, then letters, digits, '_')", id);
	if (gadget_index(s, id) >= 0)
		return fail_at(c, at, "gadget id '%s' declared twice", id);
	if (s->n_gadgets >= SC_GADGETS_MAX)
		return fail_at(c, at, "too many gadgets (max %d)",
			       SC_GADGETS_MAX);
	ret = text_arg(c, "the gadget file", &path, &pat);
	if (ret)
		return ret;
	g = &s->gadgets[s->n_gadgets];
	strcpy(g->id, id);
	g->line = c->line;
	g->path = resolve_path(s->file, ps->o ? ps->o->root : NULL, path);
	free(path);
	if (!g->path)
		return -ENOMEM;
	s->n_gadgets++;
	msg[0] = '\0';
	if (ps->o && ps->o->check_gadget)
		ret = ps->o->check_gadget(ps->o->ctx, g->path, msg,
					  sizeof(msg));
	else if ((ret = access(g->path, R_OK)))
		snprintf(msg, sizeof(msg), "%s", strerror(errno));
	if (ret)
		return fail_at(c, pat, "gadget file '%s': %s", g->path,
			       msg[0] ? msg : "invalid");
	return need_end(c);
}

/*
 * A guest path for `file`: absolute, no "." or ".." component, no empty
 * one, and not where the guest mounts something or keeps its own (the
 * file would be hidden or would break the boot).
 */
static const char *bad_guest_path(const char *p)
{
	static const char *const reserved[] = {
		"/init", "/usbrig", "/proc", "/sys", "/dev", "/tmp", "/run",
	};
	const char *q;
	size_t i;

	if (p[0] != '/')
		return "must be absolute";
	if (strlen(p) >= PATH_MAX_GUEST)
		return "is too long";
	for (q = p; *q; q++)
		if ((unsigned char)*q <= ' ' || *q == '\\' || *q == '$')
			return "has a blank, a backslash or a '$'";
	for (q = p; *q; ) {
		const char *e = strchr(q + 1, '/');
		size_t n = e ? (size_t)(e - q - 1) : strlen(q + 1);

		if (!n || (n == 1 && q[1] == '.') ||
		    (n == 2 && q[1] == '.' && q[2] == '.'))
			return "has an empty, '.' or '..' component";
		q = e ? e : q + 1 + n;
	}
	for (i = 0; i < ARRAY_SIZE(reserved); i++) {
		size_t n = strlen(reserved[i]);

		if (!strncmp(p, reserved[i], n) && (!p[n] || p[n] == '/'))
			return "is reserved by the harness (/init, /usbrig, /proc, /sys, /dev, /tmp, /run)";
	}
	return NULL;
}

/* file SRC DEST */
static int p_file(struct parser *ps, struct cur *c)
{
	static const char build_var[] = "${build}/";
	struct scenario *s = ps->s;
	struct sc_file *f;
	const char *at, *dat, *why;
	char *src, *dst;
	struct stat st;
	bool from_build;
	int ret, i;

	if (s->n_files >= SC_FILES_MAX)
		return fail_at(c, ps->stmt, "too many `file` statements (max %d)",
			       SC_FILES_MAX);
	ret = text_arg(c, "the host file", &src, &at);
	if (ret)
		return ret;
	from_build = !strncmp(src, build_var, sizeof(build_var) - 1);
	if (strstr(src + (from_build ? sizeof(build_var) - 1 : 0), "${")) {
		free(src);
		return fail_at(c, at, "only `${build}/` at the start of the "
			       "host file is substituted");
	}
	ret = text_arg(c, "the guest path", &dst, &dat);
	if (ret) {
		free(src);
		return ret;
	}
	why = bad_guest_path(dst);
	for (i = 0; !why && i < s->n_files; i++)
		if (!strcmp(s->files[i].dst, dst))
			why = "is already the target of a `file` statement";
	if (why) {
		ret = fail_at(c, dat, "guest path '%s' %s", dst, why);
		free(src);
		free(dst);
		return ret;
	}
	f = &s->files[s->n_files++];
	f->line = c->line;
	f->dst = dst;
	if (from_build) {
		const char *rest = src + sizeof(build_var) - 1;
		const char *bd = ps->o ? ps->o->build_dir : NULL;
		const char *root = ps->o && ps->o->root ? ps->o->root : ".";
		size_t n = (bd ? strlen(bd) : strlen(root) + 6) +
			   strlen(rest) + 2;

		f->src = malloc(n);
		if (f->src) {
			if (bd)
				snprintf(f->src, n, "%s/%s", bd, rest);
			else
				snprintf(f->src, n, "%s/build/%s", root, rest);
		}
	} else {
		f->src = resolve_path(s->file, ps->o ? ps->o->root : NULL, src);
	}
	free(src);
	if (!f->src)
		return -ENOMEM;
	if (stat(f->src, &st)) {
		/* a build product may simply not be built yet: skip then */
		if (from_build && errno == ENOENT)
			f->missing = true;
		else
			return fail_at(c, at, "host file '%s': %s", f->src,
				       strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		return fail_at(c, at, "host file '%s' is not a regular file",
			       f->src);
	} else if (access(f->src, R_OK)) {
		return fail_at(c, at, "host file '%s': %s", f->src,
			       strerror(errno));
	}
	return need_end(c);
}

static int module_arg(struct cur *c, struct sc_step *st)
{
	char buf[SC_NAME_MAX];
	const char *at;
	int ret;

	ret = bare(c, "a module name", buf, sizeof(buf), &at);
	if (ret)
		return ret;
	if (!valid_name(buf, false))
		return fail_at(c, at, "bad module name '%s' (letters, digits, "
			       "'_', '-')", buf);
	st->col = cur_col(c, at);
	st->path = strdup(buf);
	return st->path ? need_end(c) : -ENOMEM;
}

static int p_modprobe(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, SC_MODPROBE);

	return st ? module_arg(c, st) : -EINVAL;
}

static int p_rmmod(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, SC_RMMOD);

	return st ? module_arg(c, st) : -EINVAL;
}

static int p_attach(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, SC_ATTACH);
	const char *at;
	size_t i;
	int ret;

	if (!st)
		return -EINVAL;
	at = (skip_ws(c), c->p);
	ret = gadget_ref(ps, c, &st->gadget);
	if (ret)
		return ret;
	if (ps->attached[st->gadget])
		return fail_at(c, at, "gadget '%s' is already attached",
			       ps->s->gadgets[st->gadget].id);
	st->mode = SC_VERIFY;
	for (i = 0; i < ARRAY_SIZE(attach_modes); i++)
		if (peek_word(c, attach_modes[i])) {
			st->mode = (int)i;
			break;
		}
	ret = opt_within(c, st, SC_DEF_ATTACH_MS);
	if (ret)
		return ret;
	ps->attached[st->gadget] = true;
	return need_end(c);
}

static int p_detach(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, SC_DETACH);
	const char *at;
	int ret;

	if (!st)
		return -EINVAL;
	at = (skip_ws(c), c->p);
	ret = gadget_ref(ps, c, &st->gadget);
	if (ret)
		return ret;
	ret = need_attached(ps, c, at, st->gadget);
	if (ret)
		return ret;
	ret = opt_within(c, st, SC_DEF_DETACH_MS);
	if (ret)
		return ret;
	ps->attached[st->gadget] = false;
	return need_end(c);
}

/* An absolute path (possibly built from substitutions). */
static int path_arg(struct parser *ps, struct cur *c, struct sc_step *st)
{
	const char *at;
	int ret;

	ret = text_arg(c, "a path", &st->path, &at);
	if (ret)
		return ret;
	st->col = cur_col(c, at);
	if (st->path[0] != '/' && strncmp(st->path, "${", 2))
		return fail_at(c, at, "'%s' is not an absolute path",
			       st->path);
	return check_subst(ps, c, at, st->path);
}

static int errno_arg(struct cur *c, int *err)
{
	char buf[SC_NAME_MAX];
	const char *at;
	int ret;

	ret = bare(c, "an errno name (EINVAL, ENODEV, ...)", buf,
		   sizeof(buf), &at);
	if (ret)
		return ret;
	*err = sc_errno_value(buf);
	if (!*err)
		return fail_at(c, at, "unknown errno name '%s'", buf);
	return 0;
}

static int p_write(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, SC_WRITE);
	char buf[SC_NAME_MAX];
	const char *at;
	int ret;

	if (!st)
		return -EINVAL;
	ret = path_arg(ps, c, st);
	if (ret)
		return ret;
	ret = text_arg(c, "the value to write", &st->text, &at);
	if (ret)
		return ret;
	ret = check_subst(ps, c, at, st->text);
	if (ret)
		return ret;
	if (!peek_word(c, "expect"))
		return fail_at(c, c->p, "expected `expect ok` or `expect "
			       "ERRNO` after the value");
	ret = bare(c, "ok or an errno name", buf, sizeof(buf), &at);
	if (ret)
		return ret;
	if (strcmp(buf, "ok")) {
		st->err = sc_errno_value(buf);
		if (!st->err)
			return fail_at(c, at, "expected ok or an errno name, "
				       "not '%s'", buf);
		if (st->err == SC_EPROBE_DEFER)
			return fail_at(c, at, "a write never fails with "
				       "EPROBE_DEFER (a bind reports it as "
				       "EAGAIN)");
	}
	return need_end(c);
}

static int p_read(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, SC_READ);
	const char *at;
	size_t i;
	int ret;

	if (!st)
		return -EINVAL;
	ret = path_arg(ps, c, st);
	if (ret)
		return ret;
	skip_ws(c);
	at = c->p;
	for (i = 0; i < ARRAY_SIZE(match_names); i++)
		if (peek_word(c, match_names[i]))
			break;
	if (i == ARRAY_SIZE(match_names))
		return fail_at(c, at, "expected equals, contains or "
			       "not-contains");
	st->mode = (int)i;
	ret = string_arg(c, "the text", &st->text, &at);
	if (ret)
		return ret;
	ret = check_subst(ps, c, at, st->text);
	return ret ? ret : need_end(c);
}

static int intf_arg(struct cur *c, struct sc_step *st)
{
	unsigned long v;
	int ret;

	ret = uint_arg(c, "an interface number", 255, &v);
	st->intf = (int)v;
	return ret;
}

static int driver_arg(struct cur *c, struct sc_step *st)
{
	char buf[SC_NAME_MAX];
	const char *at;
	int ret;

	ret = bare(c, "a driver name", buf, sizeof(buf), &at);
	if (ret)
		return ret;
	if (!valid_name(buf, true))
		return fail_at(c, at, "bad driver name '%s'", buf);
	st->driver = strdup(buf);
	return st->driver ? 0 : -ENOMEM;
}

/* ID INTF, with the gadget attached */
static int intf_ref(struct parser *ps, struct cur *c, struct sc_step *st)
{
	const char *at;
	int ret;

	at = (skip_ws(c), c->p);
	ret = gadget_ref(ps, c, &st->gadget);
	if (ret)
		return ret;
	ret = need_attached(ps, c, at, st->gadget);
	return ret ? ret : intf_arg(c, st);
}

/* A vendor or product id in hex, as new_id takes it: an optional 0x, then
 * 1 to 4 hex digits. */
static int hex16_arg(struct cur *c, const char *what, unsigned int *out)
{
	char buf[16];
	const char *at, *p;
	unsigned int v = 0;
	int ret;

	ret = bare(c, what, buf, sizeof(buf), &at);
	if (ret)
		return ret;
	p = buf;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (!*p || strlen(p) > 4)
		goto bad;
	for (; *p; p++) {
		int h = sc_hexval(*p);

		if (h < 0)
			goto bad;
		v = v << 4 | (unsigned int)h;
	}
	*out = v;
	return 0;
bad:
	return fail_at(c, at, "expected %s in hex (1 to 4 digits, e.g. 1209), "
		       "not '%s'", what, buf);
}

/* expect probe ID INTF DRIVER [matched M] [returns 0|ERRNO] [within D] */
static int p_expect_probe(struct parser *ps, struct cur *c,
			  struct sc_step *st)
{
	bool have_matched = false, have_returns = false, have_within = false;
	char buf[SC_NAME_MAX];
	const char *at;
	size_t i;
	int ret;

	ret = intf_ref(ps, c, st);
	if (!ret)
		ret = driver_arg(c, st);
	if (ret)
		return ret;
	st->mode = SC_MATCHED_ANY;
	st->status = -1;
	st->timeout_ms = SC_DEF_EXPECT_MS;
	while (!at_end(c)) {
		at = c->p;
		if (peek_word(c, "matched")) {
			if (have_matched)
				return fail_at(c, at, "a second `matched`");
			have_matched = true;
			ret = bare(c, "dynamic, static or none", buf,
				   sizeof(buf), &at);
			if (ret)
				return ret;
			for (i = SC_MATCHED_DYNAMIC;
			     i < ARRAY_SIZE(matched_names); i++)
				if (!strcmp(buf, matched_names[i]))
					break;
			if (i == ARRAY_SIZE(matched_names))
				return fail_at(c, at, "expected dynamic, "
					       "static or none, not '%s'", buf);
			st->mode = (int)i;
		} else if (peek_word(c, "returns")) {
			if (have_returns)
				return fail_at(c, at, "a second `returns`");
			have_returns = true;
			if (peek_word(c, "0"))
				st->status = 0;
			else if ((ret = errno_arg(c, &st->status)))
				return ret;
		} else if (peek_word(c, "within")) {
			if (have_within)
				return fail_at(c, at, "a second `within`");
			have_within = true;
			ret = duration(c, SC_STEP_TIMEOUT_MAX_MS,
				       &st->timeout_ms, &st->timeout_col);
			if (ret)
				return ret;
		} else {
			return fail_at(c, at, "expected matched, returns or "
				       "within");
		}
	}
	return 0;
}

static int p_expect(struct parser *ps, struct cur *c)
{
	static const struct {
		const char *word;
		enum sc_kind kind;
		int mode;
	} kinds[] = {
		{ "bound", SC_EXPECT_BOUND, 0 },
		{ "unbound", SC_EXPECT_UNBOUND, 0 },
		{ "probe-error", SC_EXPECT_PROBE_ERROR, 0 },
		{ "node", SC_EXPECT_NODE, 0 },
		{ "no-node", SC_EXPECT_NO_NODE, 0 },
		{ "kmsg", SC_EXPECT_KMSG, 0 },
		{ "probe", SC_EXPECT_PROBE, 0 },
		{ "dynid-add", SC_EXPECT_DYNID, SC_DYNID_ADD },
		{ "dynid-remove", SC_EXPECT_DYNID, SC_DYNID_REMOVE },
	};
	struct sc_step *st;
	char word[SC_NAME_MAX];
	const char *at;
	size_t i;
	int ret;

	ret = bare(c, "what to expect (bound, unbound, probe-error, node, "
		   "no-node, kmsg, probe, dynid-add, dynid-remove)", word,
		   sizeof(word), &at);
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(word, kinds[i].word))
			break;
	if (i == ARRAY_SIZE(kinds))
		return fail_at(c, at, "unknown expectation '%s' (known: "
			       "bound, unbound, probe-error, node, no-node, "
			       "kmsg, probe, dynid-add, dynid-remove)", word);
	st = new_step(ps, c, kinds[i].kind);
	if (!st)
		return -EINVAL;
	st->mode = kinds[i].mode;
	switch (st->kind) {
	case SC_EXPECT_BOUND:
		ret = intf_ref(ps, c, st);
		if (!ret)
			ret = driver_arg(c, st);
		if (!ret)
			ret = opt_window(c, st);
		break;
	case SC_EXPECT_UNBOUND:
		ret = intf_ref(ps, c, st);
		if (!ret)
			ret = opt_window(c, st);
		break;
	case SC_EXPECT_PROBE_ERROR:
		ret = intf_ref(ps, c, st);
		if (!ret)
			ret = driver_arg(c, st);
		if (!ret)
			ret = errno_arg(c, &st->err);
		if (!ret)
			ret = opt_within(c, st, SC_DEF_EXPECT_MS);
		break;
	case SC_EXPECT_NODE:
	case SC_EXPECT_NO_NODE:
		ret = path_arg(ps, c, st);
		if (!ret)
			ret = opt_within(c, st, SC_DEF_EXPECT_MS);
		break;
	case SC_EXPECT_PROBE:
		ret = p_expect_probe(ps, c, st);
		break;
	case SC_EXPECT_DYNID:
		ret = driver_arg(c, st);
		if (!ret)
			ret = hex16_arg(c, "a vendor id", &st->vid);
		if (!ret)
			ret = hex16_arg(c, "a product id", &st->pid);
		if (!ret)
			ret = opt_within(c, st, SC_DEF_EXPECT_MS);
		break;
	default:	/* SC_EXPECT_KMSG */
		ret = string_arg(c, "the text", &st->text, &at);
		if (!ret)
			ret = check_subst(ps, c, at, st->text);
		if (!ret)
			ret = opt_within(c, st, SC_DEF_EXPECT_MS);
		break;
	}
	return ret ? ret : need_end(c);
}

static int p_run(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, SC_RUN);
	bool have_status = false, have_within = false;
	const char *at;
	int ret;

	if (!st)
		return -EINVAL;
	ret = string_arg(c, "the command", &st->path, &at);
	if (ret)
		return ret;
	ret = check_subst(ps, c, at, st->path);
	if (ret)
		return ret;
	st->status = 0;
	st->timeout_ms = SC_DEF_RUN_MS;
	while (!at_end(c)) {
		at = c->p;
		if (peek_word(c, "status")) {
			unsigned long v;

			if (have_status)
				return fail_at(c, at, "a second `status`");
			have_status = true;
			if (peek_word(c, "any")) {
				st->status = -1;
				continue;
			}
			ret = uint_arg(c, "an exit status (or any)", 255, &v);
			if (ret)
				return ret;
			st->status = (int)v;
		} else if (peek_word(c, "output-contains")) {
			if (st->text)
				return fail_at(c, at, "a second "
					       "`output-contains`");
			ret = string_arg(c, "the text", &st->text, &at);
			if (!ret)
				ret = check_subst(ps, c, at, st->text);
			if (ret)
				return ret;
		} else if (peek_word(c, "within")) {
			if (have_within)
				return fail_at(c, at, "a second `within`");
			have_within = true;
			ret = duration(c, SC_STEP_TIMEOUT_MAX_MS,
				       &st->timeout_ms, &st->timeout_col);
			if (ret)
				return ret;
		} else {
			return fail_at(c, at, "expected status, "
				       "output-contains or within");
		}
	}
	return 0;
}

/*
 * A host path for `save`: absolute, or relative without a ".." component
 * (it stays inside the run's save folder); no empty one, no `${`.
 */
static const char *bad_host_path(const char *p)
{
	const char *q;

	if (!*p)
		return "is empty";
	if (strlen(p) >= PATH_MAX_GUEST)
		return "is too long";
	if (strstr(p, "${"))
		return "has a `${` (host paths take no substitutions)";
	if (p[strlen(p) - 1] == '/')
		return "names a folder";
	for (q = p; *q; ) {
		const char *e = strchr(q, '/');
		size_t n = e ? (size_t)(e - q) : strlen(q);

		if (n == 2 && q[0] == '.' && q[1] == '.' && p[0] != '/')
			return "has a '..' component (a relative path stays "
			       "in the save folder)";
		q = e ? e + 1 : q + n;
	}
	return NULL;
}

/* save GUESTPATH HOSTPATH */
static int p_save(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, SC_SAVE);
	const char *at, *hat, *why;
	int ret, i;

	if (!st)
		return -EINVAL;
	ret = text_arg(c, "the guest file", &st->path, &at);
	if (ret)
		return ret;
	st->col = cur_col(c, at);
	if (st->path[0] != '/' && strncmp(st->path, "${", 2))
		return fail_at(c, at, "the guest file must be absolute");
	ret = check_subst(ps, c, at, st->path);
	if (ret)
		return ret;
	ret = text_arg(c, "the host path", &st->text, &hat);
	if (ret)
		return ret;
	why = bad_host_path(st->text);
	for (i = 0; !why && i < ps->s->n_steps - 1; i++)
		if (ps->s->steps[i].kind == SC_SAVE &&
		    !strcmp(ps->s->steps[i].text, st->text)) {
			return fail_at(c, hat, "host path '%s' is already "
				       "saved to on line %d", st->text,
				       ps->s->steps[i].line);
		}
	if (why)
		return fail_at(c, hat, "host path '%s' %s", st->text, why);
	return need_end(c);
}

static int p_say(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, SC_SAY);
	const char *at;
	int ret;

	if (!st)
		return -EINVAL;
	ret = string_arg(c, "the text", &st->text, &at);
	return ret ? ret : need_end(c);
}

static const struct {
	const char *kw;
	int (*parse)(struct parser *ps, struct cur *c);
} statements[] = {
	{ "name", p_name },
	{ "timeout", p_timeout },
	{ "requires", p_requires },
	{ "skip", p_skip },
	{ "gadget", p_gadget },
	{ "file", p_file },
	{ "modprobe", p_modprobe },
	{ "rmmod", p_rmmod },
	{ "attach", p_attach },
	{ "detach", p_detach },
	{ "write", p_write },
	{ "read", p_read },
	{ "expect", p_expect },
	{ "run", p_run },
	{ "save", p_save },
	{ "say", p_say },
};

/* Strip the statement's trailing comment and blanks: the text reports
 * show for it. */
static char *statement_text(const char *from, const char *to)
{
	char *s;

	while (to > from && (to[-1] == ' ' || to[-1] == '\t'))
		to--;
	s = malloc((size_t)(to - from) + 1);
	if (!s)
		return NULL;
	memcpy(s, from, (size_t)(to - from));
	s[to - from] = '\0';
	return s;
}

static int parse_line(struct parser *ps, struct cur *c)
{
	char kw[32];
	const char *at;
	size_t i;
	int n0 = ps->s->n_steps;
	int ret;

	if (at_end(c))
		return 0;
	ps->stmt = c->p;
	if (*c->p == '"')
		return fail_at(c, c->p, "expected a statement keyword");
	ret = bare(c, "a statement", kw, sizeof(kw), &at);
	if (ret)
		return fail_at(c, at, "unknown statement '%.*s'",
			       (int)bare_len(c), c->p);
	for (i = 0; i < ARRAY_SIZE(statements); i++)
		if (!strcmp(kw, statements[i].kw))
			break;
	if (i == ARRAY_SIZE(statements))
		return fail_at(c, at, "unknown statement '%s'", kw);
	ret = statements[i].parse(ps, c);
	if (ret)
		return ret;
	if (ps->s->n_steps > n0) {
		struct sc_step *st = &ps->s->steps[ps->s->n_steps - 1];
		char buf[PLAN_LINE_MAX + 1];

		/* c->p is at the end of the statement or its comment */
		st->src = statement_text(ps->stmt, c->p);
		if (!st->src)
			return -ENOMEM;
		if (st->kind != SC_SAY &&
		    scenario_format_step(buf, sizeof(buf), ps->s, st) < 0)
			return fail_at(c, ps->stmt, "statement too long for "
				       "the plan (max %d bytes once quoted)",
				       PLAN_LINE_MAX);
	}
	return 0;
}

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
	if (n >= SC_NAME_MAX || !valid_name(s->name, true)) {
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

		if (st->kind != SC_EXPECT_PROBE && st->kind != SC_EXPECT_DYNID)
			continue;
		snprintf(err, errlen, "%s:%d:1: `expect %s` reads the "
			 "patched kernel's usb_core trace events: add "
			 "`requires kernel patched`", s->file, st->line,
			 st->kind == SC_EXPECT_PROBE ? "probe" :
			 st->mode == SC_DYNID_ADD ? "dynid-add" :
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
	s->timeout_s = SC_TIMEOUT_DEFAULT_S;
	if (o && o->default_timeout_s)
		s->timeout_s = o->default_timeout_s;
	s->file = strdup(file);
	s->steps = calloc(SC_STEPS_MAX, sizeof(*s->steps));
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
				ret = fail_at(&c, q, "control character 0x%02x",
					      (unsigned char)*q);
				goto err;
			}
		if (c.eol - p > PLAN_LINE_MAX) {
			ret = fail_at(&c, p, "line too long (max %d bytes)",
				      PLAN_LINE_MAX);
			goto err;
		}
		ret = parse_line(&ps, &c);
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

const struct sc_step *scenario_step_at(const struct scenario *s, int line)
{
	int i;

	for (i = 0; i < s->n_steps; i++)
		if (s->steps[i].line == line && s->steps[i].kind != SC_SAY)
			return &s->steps[i];
	return NULL;
}

/* ---- the plan writer ----------------------------------------------- */

struct out {
	char *buf;
	size_t size;
	size_t n;
	bool full;
};

static void put_raw(struct out *o, const char *s)
{
	size_t len = strlen(s);

	if (o->full || o->n + len + 1 > o->size) {
		o->full = true;
		return;
	}
	memcpy(o->buf + o->n, s, len + 1);
	o->n += len;
}

/* " word" */
static void put_word(struct out *o, const char *w)
{
	put_raw(o, " ");
	put_raw(o, w);
}

/* " \"quoted\"" */
static void put_str(struct out *o, const char *s)
{
	int n;

	put_raw(o, " ");
	if (o->full)
		return;
	n = plan_quote(o->buf + o->n, o->size - o->n, s);
	if (n < 0)
		o->full = true;
	else
		o->n += (size_t)n;
}

static void put_uint(struct out *o, unsigned long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%lu", v);
	put_word(o, num);
}

int scenario_format_step(char *buf, size_t size, const struct scenario *s,
			 const struct sc_step *st)
{
	struct out o = { .buf = buf, .size = size };
	const char *gid = st->gadget >= 0 ? s->gadgets[st->gadget].id : "";

	if (!size)
		return -ENOSPC;
	buf[0] = '\0';
	put_raw(&o, "step");
	put_uint(&o, (unsigned long)st->line);
	put_word(&o, sc_kind_name(st->kind));
	switch (st->kind) {
	case SC_ATTACH:
		put_word(&o, gid);
		put_word(&o, attach_modes[st->mode]);
		put_uint(&o, st->timeout_ms);
		break;
	case SC_DETACH:
		put_word(&o, gid);
		put_uint(&o, st->timeout_ms);
		break;
	case SC_MODPROBE:
	case SC_RMMOD:
		put_str(&o, st->path);
		break;
	case SC_WRITE:
		put_str(&o, st->path);
		put_str(&o, st->text);
		put_word(&o, st->err ? sc_errno_name(st->err) : "ok");
		break;
	case SC_READ:
		put_str(&o, st->path);
		put_word(&o, match_names[st->mode]);
		put_str(&o, st->text);
		break;
	case SC_EXPECT_BOUND:
		put_word(&o, gid);
		put_uint(&o, (unsigned long)st->intf);
		put_str(&o, st->driver);
		put_word(&o, window_names[st->mode]);
		put_uint(&o, st->timeout_ms);
		break;
	case SC_EXPECT_UNBOUND:
		put_word(&o, gid);
		put_uint(&o, (unsigned long)st->intf);
		put_word(&o, window_names[st->mode]);
		put_uint(&o, st->timeout_ms);
		break;
	case SC_EXPECT_PROBE_ERROR:
		put_word(&o, gid);
		put_uint(&o, (unsigned long)st->intf);
		put_str(&o, st->driver);
		put_word(&o, sc_errno_name(st->err));
		put_uint(&o, st->timeout_ms);
		break;
	case SC_EXPECT_NODE:
	case SC_EXPECT_NO_NODE:
		put_str(&o, st->path);
		put_uint(&o, st->timeout_ms);
		break;
	case SC_EXPECT_KMSG:
		put_str(&o, st->text);
		put_uint(&o, st->timeout_ms);
		break;
	case SC_EXPECT_PROBE:
		put_word(&o, gid);
		put_uint(&o, (unsigned long)st->intf);
		put_str(&o, st->driver);
		put_word(&o, matched_names[st->mode]);
		put_word(&o, st->status < 0 ? "-" : st->status == 0 ? "0" :
			 sc_errno_name(st->status));
		put_uint(&o, st->timeout_ms);
		break;
	case SC_EXPECT_DYNID: {
		char id[8];

		put_word(&o, dynid_names[st->mode]);
		put_str(&o, st->driver);
		snprintf(id, sizeof(id), "%04x", st->vid);
		put_word(&o, id);
		snprintf(id, sizeof(id), "%04x", st->pid);
		put_word(&o, id);
		put_uint(&o, st->timeout_ms);
		break;
	}
	case SC_RUN:
		put_str(&o, st->path);
		if (st->status < 0)
			put_word(&o, "-");
		else
			put_uint(&o, (unsigned long)st->status);
		if (st->text)
			put_str(&o, st->text);
		else
			put_word(&o, "-");
		put_uint(&o, st->timeout_ms);
		break;
	case SC_SAVE:
		put_str(&o, st->path);
		put_str(&o, st->text);
		break;
	case SC_SAY:
		return -EINVAL;
	}
	if (o.full || o.n > PLAN_LINE_MAX) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	return (int)o.n;
}

int scenario_save_path(char *buf, size_t size, const char *save_dir,
		       const struct scenario *s, const struct sc_step *st)
{
	int n;

	if (st->kind != SC_SAVE || !st->text)
		return -EINVAL;
	if (st->text[0] == '/')
		n = snprintf(buf, size, "%s", st->text);
	else
		n = snprintf(buf, size, "%s/%s/%s", save_dir, s->name,
			     st->text);
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return n;
}

int scenario_write_plan(FILE *f, const struct scenario *s)
{
	char buf[PLAN_LINE_MAX + 1];
	char q[PLAN_LINE_MAX + 1];
	int i;

	if (plan_quote(q, sizeof(q), s->file) < 0)
		return -ENOSPC;
	fprintf(f, "scenario %s %s %u\n", s->name, q,
		s->timeout_s * 1000);
	for (i = 0; i < s->n_reqs; i++)
		if (s->reqs[i].kind == SC_REQ_PATCHED) {
			fprintf(f, "require patched\n");
			break;
		}
	for (i = 0; i < s->n_gadgets; i++) {
		const char *b = strrchr(s->gadgets[i].path, '/');
		char guest[PATH_MAX_GUEST];

		snprintf(guest, sizeof(guest), "/usbrig/gadgets/%s",
			 b ? b + 1 : s->gadgets[i].path);
		if (plan_quote(q, sizeof(q), guest) < 0)
			return -ENOSPC;
		fprintf(f, "gadget %s %s\n", s->gadgets[i].id, q);
	}
	for (i = 0; i < s->n_steps; i++) {
		if (s->steps[i].kind == SC_SAY)
			continue;
		if (scenario_format_step(buf, sizeof(buf), s,
					 &s->steps[i]) < 0)
			return -ENOSPC;
		fprintf(f, "%s\n", buf);
	}
	fprintf(f, "end\n");
	return ferror(f) ? -EIO : 0;
}
