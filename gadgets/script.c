// SPDX-License-Identifier: GPL-2.0
/*
 * script.c - gadget script parser: text -> tokens -> statement tree ->
 * struct gd_device.  docs/gadget-format.md is the language reference.
 *
 * Three small passes:
 *  1. lex():  bytes to tokens - words, "strings", { } *, end of statement
 *     (newline or ';') - each carrying its line and column;
 *  2. tree(): statements "keyword args... [{ block }]";
 *  3. run_block(): one table of keywords per block kind fills the model;
 *     each block kind then checks what can only be checked once the block
 *     is complete (required fields, defaults, cross references).
 *
 * Arguments are read through a cursor (struct cur) whose primitives
 * return 0 or a negative errno and chain with ?:, e.g.
 *	return cur_num(&c, 8, &v) ?: cur_end(&c);
 * Every error goes through fail(): it records "file:line:col: message"
 * and returns -EINVAL.  The first error stops the parse and everything
 * built so far is freed, so a caller never sees half a model.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/usb/ch9.h>

#include "function.h"
#include "model.h"
#include "script.h"

#define SCRIPT_MAX_BYTES	(1024 * 1024)	/* a script file */
#define SCRIPT_MAX_DEPTH	8		/* nested blocks (the language uses 5) */
#define SCRIPT_MAX_NAME		64		/* the "name" of a device */
#define STRING_MAX_UNITS	126		/* (255 - 2) / 2 UTF-16 code units */
#define MAX_SLOTS		20		/* fields per block kind (device: D_NSLOTS) */

/* ------------------------------------------------------------------ */
/* tokens and the statement tree                                       */

enum tok_kind {
	T_WORD,		/* keyword, number, hex byte, choice: any run of word bytes */
	T_STRING,	/* "..." with C escapes, decoded */
	T_LBRACE,
	T_RBRACE,
	T_STAR,
	T_EOL,		/* newline or ';' */
	T_EOF,
};

struct tok {
	enum tok_kind kind;
	int line;
	int col;
	const char *text;	/* T_WORD: into the script; T_STRING: own */
	size_t len;
	char *own;		/* T_STRING: the decoded bytes, freed at the end */
	const char *src;	/* the token as written in the script */
	size_t src_len;
	bool semi;		/* T_EOL written as ';' */
};

/* "keyword args... [{ body }]"; args are consecutive tokens */
struct stmt {
	const struct tok *kw;
	const struct tok *args;
	size_t n_args;
	const struct tok *open;	/* the '{', NULL when there is no block */
	struct stmt *body;
	size_t n_body;
	size_t cap_body;
};

/* A text field (manufacturer "x") waits for its string index until every
 * explicit index in the file is known; then the indices are handed out in
 * script order.  The field is found again by level/ci/idx/off because the
 * arrays holding it may have moved since. */
enum str_level { LV_DEVICE, LV_CONFIG, LV_ALT, LV_IAD };

struct pending_str {
	const struct tok *tok;
	enum str_level level;
	size_t ci;
	size_t idx;
	size_t off;
};

struct parser {
	const char *name;
	struct script_error *err;
	struct gd_device *dev;
	struct tok *toks;
	size_t n_toks;
	size_t cap_toks;
	struct stmt top;		/* the file: a body without keyword */
	struct pending_str *pend;
	size_t n_pend;
	const struct tok *str_set[256];	/* "string N ...": N's token */
	bool str_named[256];		/* N given by an explicit iXxx N */
};

/* grow array arr (count n) by one zeroed element; its address or NULL */
#define PUSH(arr, n) ({							\
	__typeof__(arr) p_ = realloc((arr), ((n) + 1) * sizeof(*(arr)));	\
	if (p_) {							\
		(arr) = p_;						\
		memset(&p_[(n)], 0, sizeof(*p_));			\
		p_ = &p_[(n)++];					\
	}								\
	p_;								\
})

/* ------------------------------------------------------------------ */
/* errors                                                              */

static int __attribute__((format(printf, 4, 0)))
vfail_at(struct parser *ps, int line, int col, const char *fmt, va_list ap)
{
	struct script_error *e = ps->err;
	int n;

	if (!e)
		return -EINVAL;
	e->line = line;
	e->col = col;
	n = snprintf(e->msg, sizeof(e->msg), "%s:%d:%d: ", ps->name, line, col);
	if (n < 0 || (size_t)n >= sizeof(e->msg))
		return -EINVAL;
	vsnprintf(e->msg + n, sizeof(e->msg) - n, fmt, ap);
	return -EINVAL;
}

static int __attribute__((format(printf, 4, 5)))
fail_at(struct parser *ps, int line, int col, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail_at(ps, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

static int __attribute__((format(printf, 3, 4)))
fail(struct parser *ps, const struct tok *t, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail_at(ps, t->line, t->col, fmt, ap);
	va_end(ap);
	return rc;
}

static int oom(struct parser *ps)
{
	if (ps->err) {
		ps->err->line = 0;
		ps->err->col = 0;
		snprintf(ps->err->msg, sizeof(ps->err->msg), "%s: out of memory",
			 ps->name);
	}
	return -ENOMEM;
}

/* a token as a message shows it */
struct tdesc {
	char s[80];
};

static struct tdesc tok_desc(const struct tok *t)
{
	struct tdesc d;

	switch (t->kind) {
	case T_WORD:
		if (t->len > 40)
			snprintf(d.s, sizeof(d.s), "'%.40s...'", t->text);
		else
			snprintf(d.s, sizeof(d.s), "'%.*s'", (int)t->len, t->text);
		break;
	case T_STRING:
		snprintf(d.s, sizeof(d.s), "a quoted string");
		break;
	case T_LBRACE:
		snprintf(d.s, sizeof(d.s), "'{'");
		break;
	case T_RBRACE:
		snprintf(d.s, sizeof(d.s), "'}'");
		break;
	case T_STAR:
		snprintf(d.s, sizeof(d.s), "'*'");
		break;
	case T_EOL:
		snprintf(d.s, sizeof(d.s), t->semi ? "';'" : "the end of the line");
		break;
	default:
		snprintf(d.s, sizeof(d.s), "the end of the file");
		break;
	}
	return d;
}

/* printf arguments for a keyword: "%.*s" */
#define KWA(st)	(int)((st)->kw->len > 40 ? 40 : (st)->kw->len), (st)->kw->text
#define TOKA(t)	(int)((t)->len > 40 ? 40 : (t)->len), (t)->text

static bool tok_is(const struct tok *t, const char *word)
{
	return t->kind == T_WORD && strlen(word) == t->len &&
	       !memcmp(t->text, word, t->len);
}

/* ------------------------------------------------------------------ */
/* pass 1: lexer                                                       */

struct lexer {
	struct parser *ps;
	const char *p;
	const char *end;
	const char *bol;	/* beginning of the current line */
	int line;
};

static int lx_col(const struct lexer *lx, const char *at)
{
	return (int)(at - lx->bol) + 1;
}

static int lex_add(struct lexer *lx, enum tok_kind kind, const char *at,
		   const char *text, size_t len, struct tok **out)
{
	struct parser *ps = lx->ps;
	struct tok *t;

	if (ps->n_toks == ps->cap_toks) {
		size_t cap = ps->cap_toks ? ps->cap_toks * 2 : 256;

		t = realloc(ps->toks, cap * sizeof(*t));
		if (!t)
			return oom(ps);
		ps->toks = t;
		ps->cap_toks = cap;
	}
	t = &ps->toks[ps->n_toks++];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->line = lx->line;
	t->col = lx_col(lx, at);
	t->text = text;
	t->len = len;
	t->src = at;
	t->src_len = len;
	if (out)
		*out = t;
	return 0;
}

static bool is_word_byte(unsigned char c)
{
	if (c <= ' ' || c == 0x7f)
		return false;
	return !strchr("{}*\"#;\\", c);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* one escape after a backslash at *pp; advances *pp past it */
static int lex_escape(struct lexer *lx, const char *bs, const char **pp,
		      unsigned char *out)
{
	static const char simple[] = "\\\\\"\"''??a\ab\bf\fn\nr\rt\tv\v";
	const char *p = *pp;
	unsigned int v = 0;
	int i, d;

	for (i = 0; simple[i]; i += 2) {
		if (*p == simple[i]) {
			*out = (unsigned char)simple[i + 1];
			*pp = p + 1;
			return 0;
		}
	}
	if (*p == 'x') {
		for (i = 0, p++; i < 2 && p < lx->end && (d = hexval(*p)) >= 0;
		     i++, p++)
			v = v * 16 + d;
		if (!i)
			return fail_at(lx->ps, lx->line, lx_col(lx, bs),
				       "'\\x' needs one or two hex digits");
	} else if (*p >= '0' && *p <= '7') {
		for (i = 0; i < 3 && p < lx->end && *p >= '0' && *p <= '7';
		     i++, p++)
			v = v * 8 + (*p - '0');
		if (v > 0xff)
			return fail_at(lx->ps, lx->line, lx_col(lx, bs),
				       "octal escape \\%.3s is larger than 0377", bs + 1);
	} else if ((unsigned char)*p > ' ' && (unsigned char)*p < 0x7f) {
		return fail_at(lx->ps, lx->line, lx_col(lx, bs),
			       "unknown escape '\\%c' (known: \\\\ \\\" \\' \\? \\a \\b \\f \\n \\r \\t \\v \\xHH \\OOO)",
			       *p);
	} else {
		return fail_at(lx->ps, lx->line, lx_col(lx, bs),
			       "a '\\' in a string must start an escape");
	}
	*out = (unsigned char)v;
	*pp = p;
	return 0;
}

static int lex_string(struct lexer *lx)
{
	const char *start = lx->p, *p, *q;
	unsigned char *buf;
	struct tok *t;
	size_t n = 0;
	int rc;

	/* find the end first: the decoded text is never longer */
	for (q = start + 1; q < lx->end && *q != '\n' && *q != '"'; q++)
		if (*q == '\\' && q + 1 < lx->end && q[1] != '\n')
			q++;
	if (q >= lx->end || *q != '"')
		return fail_at(lx->ps, lx->line, lx_col(lx, start),
			       "unterminated string: a string must end on the line it starts");

	buf = malloc(q - start);
	if (!buf)
		return oom(lx->ps);
	for (p = start + 1; p < q;) {
		unsigned char c = *p;

		if (c == '\\') {
			const char *bs = p++;

			rc = lex_escape(lx, bs, &p, &buf[n]);
			if (rc)
				goto err;
			n++;
			continue;
		}
		if ((c < ' ' && c != '\t') || c == 0x7f) {
			rc = fail_at(lx->ps, lx->line, lx_col(lx, p),
				     "control character 0x%02x in a string (write it as an escape)", c);
			goto err;
		}
		buf[n++] = c;
		p++;
	}
	if (n > GD_MAX_BLOB) {
		rc = fail_at(lx->ps, lx->line, lx_col(lx, start),
			     "string of %zu bytes, longer than the limit of %d",
			     n, GD_MAX_BLOB);
		goto err;
	}
	rc = lex_add(lx, T_STRING, start, (const char *)buf, n, &t);
	if (rc)
		goto err;
	t->own = (char *)buf;
	t->src_len = q + 1 - start;
	lx->p = q + 1;
	return 0;
err:
	free(buf);
	return rc;
}

/* '\' at the end of a line (blanks and a comment may follow) joins the
 * next line to this statement */
static int lex_continuation(struct lexer *lx)
{
	const char *bs = lx->p, *q = bs + 1;

	while (q < lx->end && (*q == ' ' || *q == '\t' || *q == '\r'))
		q++;
	if (q < lx->end && *q == '#')
		while (q < lx->end && *q != '\n')
			q++;
	if (q < lx->end && *q != '\n')
		return fail_at(lx->ps, lx->line, lx_col(lx, bs),
			       "'\\' continues a statement on the next line and must end its line");
	if (q < lx->end) {
		q++;
		lx->line++;
		lx->bol = q;
	}
	lx->p = q;
	return 0;
}

static int lex(struct parser *ps, const char *text, size_t len)
{
	struct lexer lx = {
		.ps = ps, .p = text, .end = text + len, .bol = text, .line = 1,
	};
	struct tok *t;
	int rc = 0;

	while (!rc && lx.p < lx.end) {
		unsigned char c = *lx.p;
		const char *start = lx.p;

		switch (c) {
		case ' ': case '\t': case '\r': case '\f': case '\v':
			lx.p++;
			break;
		case '#':
			while (lx.p < lx.end && *lx.p != '\n')
				lx.p++;
			break;
		case '\n':
			rc = lex_add(&lx, T_EOL, start, start, 1, NULL);
			lx.p++;
			lx.line++;
			lx.bol = lx.p;
			break;
		case ';':
			rc = lex_add(&lx, T_EOL, start, start, 1, &t);
			if (!rc)
				t->semi = true;
			lx.p++;
			break;
		case '{':
			rc = lex_add(&lx, T_LBRACE, start, start, 1, NULL);
			lx.p++;
			break;
		case '}':
			rc = lex_add(&lx, T_RBRACE, start, start, 1, NULL);
			lx.p++;
			break;
		case '*':
			rc = lex_add(&lx, T_STAR, start, start, 1, NULL);
			lx.p++;
			break;
		case '"':
			rc = lex_string(&lx);
			break;
		case '\\':
			rc = lex_continuation(&lx);
			break;
		default:
			if (!is_word_byte(c))
				return fail_at(ps, lx.line, lx_col(&lx, start),
					       "unexpected control character 0x%02x", c);
			while (lx.p < lx.end && is_word_byte(*lx.p))
				lx.p++;
			rc = lex_add(&lx, T_WORD, start, start, lx.p - start, NULL);
			break;
		}
	}
	return rc ?: lex_add(&lx, T_EOF, lx.p, lx.p, 0, NULL);
}

/* ------------------------------------------------------------------ */
/* pass 2: statement tree                                              */

static void tree_free(struct stmt *body, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		tree_free(body[i].body, body[i].n_body);
	free(body);
}

/* Statements up to the '}' matching open (or to the end of the file when
 * open is NULL), appended to parent's body as they are read so that the
 * caller frees them whatever happens. */
static int tree(struct parser *ps, size_t *pos, int depth,
		const struct tok *open, struct stmt *parent)
{
	struct stmt **body = &parent->body;
	size_t *n_body = &parent->n_body;

	for (;;) {
		const struct tok *t = &ps->toks[*pos];
		struct stmt *st;
		size_t idx;
		int rc;

		switch (t->kind) {
		case T_EOL:
			(*pos)++;
			continue;
		case T_RBRACE:
			if (open) {
				(*pos)++;
				return 0;
			}
			return fail(ps, t, "'}' without a matching '{'");
		case T_EOF:
			if (open)
				return fail(ps, open, "this '{' is never closed: missing '}'");
			return 0;
		case T_WORD:
			break;
		default:
			return fail(ps, t, "expected a keyword, found %s",
				    tok_desc(t).s);
		}

		if (*n_body == parent->cap_body) {
			/* geometric: a script may hold many statements */
			size_t cap = parent->cap_body ? parent->cap_body * 2 : 8;

			st = realloc(*body, cap * sizeof(*st));
			if (!st)
				return oom(ps);
			*body = st;
			parent->cap_body = cap;
		}
		idx = (*n_body)++;
		st = &(*body)[idx];
		memset(st, 0, sizeof(*st));
		st->kw = t;
		st->args = &ps->toks[++*pos];
		while (ps->toks[*pos].kind == T_WORD ||
		       ps->toks[*pos].kind == T_STRING ||
		       ps->toks[*pos].kind == T_STAR) {
			st->n_args++;
			(*pos)++;
		}
		t = &ps->toks[*pos];
		if (t->kind != T_LBRACE)
			continue;	/* EOL, '}' or EOF: handled above */
		if (depth >= SCRIPT_MAX_DEPTH)
			return fail(ps, t, "blocks nested more than %d deep",
				    SCRIPT_MAX_DEPTH);
		st->open = t;
		(*pos)++;
		/* *body does not move while the block is read */
		rc = tree(ps, pos, depth + 1, t, &(*body)[idx]);
		if (rc)
			return rc;
		t = &ps->toks[*pos];
		if (t->kind != T_EOL && t->kind != T_RBRACE && t->kind != T_EOF)
			return fail(ps, t, "unexpected %s after '}': end the line (or use ';') first",
				    tok_desc(t).s);
	}
}

/* ------------------------------------------------------------------ */
/* argument cursor                                                     */

struct blk;

struct cur {
	struct parser *ps;
	const struct stmt *st;
	size_t i;
};

#define CUR(ps_, st_) { .ps = (ps_), .st = (st_), .i = 0 }

static const struct tok *cur_peek(const struct cur *c)
{
	return c->i < c->st->n_args ? &c->st->args[c->i] : NULL;
}

/* decimal or 0x hex, saturated just above 32 bits; -1 if not a number */
static int parse_number(const struct tok *t, uint64_t *v)
{
	const char *s = t->text;
	size_t n = t->len, i = 0;
	unsigned int base = 10;
	uint64_t acc = 0;

	if (t->kind != T_WORD || !n)
		return -1;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	for (; i < n; i++) {
		int d = hexval(s[i]);

		if (d < 0 || (unsigned int)d >= base)
			return -1;
		acc = acc * base + d;
		if (acc > 0xffffffffull)
			acc = 0x100000000ull;
	}
	*v = acc;
	return 0;
}

/* two hex digits, or 0x with one or two */
static int parse_byte(const struct tok *t, uint8_t *v)
{
	const char *s = t->text;
	size_t n = t->len;
	int hi = 0, lo;

	if (t->kind != T_WORD)
		return -1;
	if (n >= 3 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	} else if (n != 2) {
		return -1;
	}
	if (n == 2) {
		hi = hexval(s[0]);
		s++;
	} else if (n != 1) {
		return -1;
	}
	lo = hexval(s[0]);
	if (hi < 0 || lo < 0)
		return -1;
	*v = (uint8_t)(hi << 4 | lo);
	return 0;
}

static int cur_num(struct cur *c, unsigned int bits, uint32_t *out)
{
	const struct tok *t = cur_peek(c);
	uint64_t v;

	if (!t)
		return fail(c->ps, c->st->kw, "%.*s: missing value: expected a number",
			    KWA(c->st));
	if (parse_number(t, &v))
		return fail(c->ps, t, "%.*s: expected a number (decimal or 0x hex), found %s",
			    KWA(c->st), tok_desc(t).s);
	if (v >> bits)
		return fail(c->ps, t, "%.*s: %.*s does not fit in %u bits",
			    KWA(c->st), TOKA(t), bits);
	*out = (uint32_t)v;
	c->i++;
	return 0;
}

/* a number, or '*' for "any" (-1) */
static int cur_num_or_star(struct cur *c, unsigned int bits, int *out)
{
	const struct tok *t = cur_peek(c);
	uint32_t v;
	int rc;

	if (t && t->kind == T_STAR) {
		*out = -1;
		c->i++;
		return 0;
	}
	if (t && parse_number(t, &(uint64_t){ 0 }))
		return fail(c->ps, t, "%.*s: expected a number or '*', found %s",
			    KWA(c->st), tok_desc(t).s);
	rc = cur_num(c, bits, &v);
	if (!rc)
		*out = (int)v;
	return rc;
}

/* one word out of a NULL-terminated list; *idx its position */
static int cur_choice(struct cur *c, const char *const *words, int *idx)
{
	const struct tok *t = cur_peek(c);
	char list[160];
	size_t n = 0;
	int i;

	for (i = 0; t && words[i]; i++) {
		if (tok_is(t, words[i])) {
			*idx = i;
			c->i++;
			return 0;
		}
	}
	for (i = 0, list[0] = 0; words[i] && n < sizeof(list); i++)
		n += snprintf(list + n, sizeof(list) - n, "%s%s",
			      !i ? "" : words[i + 1] ? ", " : " or ", words[i]);
	if (!t)
		return fail(c->ps, c->st->kw, "%.*s: missing value: expected %s",
			    KWA(c->st), list);
	return fail(c->ps, t, "%.*s: expected %s, found %s", KWA(c->st), list,
		    tok_desc(t).s);
}

static const char *const on_off[] = { "on", "off", NULL };

/* nothing may follow */
static int cur_end(struct cur *c)
{
	const struct tok *t = cur_peek(c);

	if (!t)
		return 0;
	return fail(c->ps, t, "%.*s: unexpected %s (one statement per line; ';' also ends one)",
		    KWA(c->st), tok_desc(t).s);
}

/* a quoted string fit for a string descriptor: valid UTF-8, no NUL, at
 * most STRING_MAX_UNITS UTF-16 code units */
static long utf16_units(const unsigned char *s, size_t n)
{
	long units = 0;
	size_t i = 0, j, k;

	while (i < n) {
		uint32_t cp = s[i];

		if (cp < 0x80) {
			k = 0;
		} else if ((cp & 0xe0) == 0xc0) {
			cp &= 0x1f;
			k = 1;
		} else if ((cp & 0xf0) == 0xe0) {
			cp &= 0x0f;
			k = 2;
		} else if ((cp & 0xf8) == 0xf0) {
			cp &= 0x07;
			k = 3;
		} else {
			return -1;
		}
		if (k >= n - i)
			return -1;
		for (j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return -1;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) ||
		    (k == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return -1;
		units += cp >= 0x10000 ? 2 : 1;
		i += k + 1;
	}
	return units;
}

static int cur_text(struct cur *c, const struct tok **out)
{
	const struct tok *t = cur_peek(c);
	long units;

	if (!t)
		return fail(c->ps, c->st->kw, "%.*s: missing value: expected a quoted string",
			    KWA(c->st));
	if (t->kind != T_STRING)
		return fail(c->ps, t, "%.*s: expected a quoted string, found %s",
			    KWA(c->st), tok_desc(t).s);
	if (memchr(t->text, 0, t->len))
		return fail(c->ps, t, "%.*s: a NUL byte cannot be part of this string",
			    KWA(c->st));
	units = utf16_units((const unsigned char *)t->text, t->len);
	if (units < 0)
		return fail(c->ps, t, "%.*s: not valid UTF-8", KWA(c->st));
	if (units > STRING_MAX_UNITS)
		return fail(c->ps, t, "%.*s: %ld characters (UTF-16 code units), a string descriptor holds at most %d",
			    KWA(c->st), units, STRING_MAX_UNITS);
	*out = t;
	c->i++;
	return 0;
}

/* every remaining argument as bytes, appended to blob; a quoted string
 * contributes its bytes as they are */
static int cur_bytes(struct cur *c, struct gd_blob *blob, bool need_one)
{
	uint8_t tmp[GD_MAX_BLOB];
	size_t n = 0, room = GD_MAX_BLOB - blob->len;
	const struct tok *t;
	uint8_t *p;

	while ((t = cur_peek(c))) {
		if (t->kind == T_STRING) {
			if (t->len > room - n)
				goto full;
			memcpy(tmp + n, t->text, t->len);
			n += t->len;
		} else {
			uint8_t v;

			if (parse_byte(t, &v))
				return fail(c->ps, t, "%.*s: expected a hex byte (two hex digits such as 0a, or 0x0a), found %s",
					    KWA(c->st), tok_desc(t).s);
			if (n == room)
				goto full;
			tmp[n++] = v;
		}
		c->i++;
	}
	if (need_one && !n && !blob->len)
		return fail(c->ps, c->st->kw, "%.*s: expected hex bytes", KWA(c->st));
	if (!n)
		return 0;
	p = realloc(blob->data, blob->len + n);
	if (!p)
		return oom(c->ps);
	memcpy(p + blob->len, tmp, n);
	blob->data = p;
	blob->len += n;
	return 0;
full:
	return fail(c->ps, t, "%.*s: more than %d bytes in one place (the limit of one descriptor run, reply or packet)",
		    KWA(c->st), GD_MAX_BLOB);
}

/* ------------------------------------------------------------------ */
/* pass 3: blocks and their keywords                                   */

enum { NOBLK, OPTBLK, NEEDBLK };

struct kw_def;
typedef int (*kw_fn)(struct blk *b, const struct stmt *st,
		     const struct kw_def *d);

struct kw_def {
	const char *name;
	kw_fn fn;
	unsigned char block;	/* NOBLK, OPTBLK, NEEDBLK */
	signed char slot;	/* statements sharing a slot appear once; -1: any number */
	unsigned char bits;	/* field width for the generic handlers */
	bool early;		/* run before the other statements of the block */
	size_t off;		/* offsetof the field in the block's model */
};

struct block_def {
	const char *name;
	const struct kw_def *kws;
	size_t n;
};

struct blk {
	struct parser *ps;
	const struct block_def *def;
	const struct stmt *st;		/* the statement owning the block */
	void *model;			/* the gd_* struct being filled */
	void *ctx;			/* the block kind's own state */
	enum str_level level;		/* where its text fields point */
	size_t ci;
	size_t idx;
	const struct stmt *seen[MAX_SLOTS];
};

/* defined at the end, after their keyword tables */
static const struct block_def top_block, device_block, config_block,
	interface_block, endpoint_block, iad_block, companion_block,
	sequence_block, control_block, bos_block;

static int unknown_keyword(struct blk *b, const struct stmt *st);

/* the value token of a slot's statement, or the fallback */
static const struct tok *seen_val(const struct blk *b, int slot,
				  const struct tok *fallback)
{
	const struct stmt *s = b->seen[slot];

	return s && s->n_args ? &s->args[0] : fallback;
}

static void store(void *base, size_t off, unsigned int bits, uint32_t v)
{
	char *p = (char *)base + off;

	if (bits == 8)
		*(uint8_t *)p = (uint8_t)v;
	else if (bits == 16)
		*(uint16_t *)p = (uint16_t)v;
	else
		*(uint32_t *)p = v;
}

/* field N */
static int kw_num(struct blk *b, const struct stmt *st, const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int rc = cur_num(&c, d->bits, &v) ?: cur_end(&c);

	if (!rc)
		store(b->model, d->off, d->bits, v);
	return rc;
}

/* an int override field (-1 unless given) */
static int kw_override(struct blk *b, const struct stmt *st,
		       const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int rc = cur_num(&c, d->bits, &v) ?: cur_end(&c);

	if (!rc)
		*(int *)((char *)b->model + d->off) = (int)v;
	return rc;
}

/* a count from 1 (stall-nth) */
static int kw_nth(struct blk *b, const struct stmt *st, const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int rc = cur_num(&c, 32, &v) ?: cur_end(&c);

	if (rc)
		return rc;
	if (!v)
		return fail(b->ps, &st->args[0], "%.*s: counts from 1", KWA(st));
	store(b->model, d->off, 32, v);
	return 0;
}

static int kw_onoff(struct blk *b, const struct stmt *st,
		    const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	int i, rc = cur_choice(&c, on_off, &i) ?: cur_end(&c);

	if (!rc)
		*(bool *)((char *)b->model + d->off) = i == 0;
	return rc;
}

/* iXxx N: an explicit string index, kept free of automatic ones */
static int kw_stridx(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int rc = cur_num(&c, 8, &v) ?: cur_end(&c);

	if (rc)
		return rc;
	store(b->model, d->off, 8, v);
	b->ps->str_named[v] = true;
	return 0;
}

/* manufacturer "text": the string gets the next free index at the end */
static int kw_text(struct blk *b, const struct stmt *st, const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	struct pending_str *p;
	const struct tok *t;
	int rc = cur_text(&c, &t) ?: cur_end(&c);

	if (rc)
		return rc;
	p = PUSH(b->ps->pend, b->ps->n_pend);
	if (!p)
		return oom(b->ps);
	p->tok = t;
	p->level = b->level;
	p->ci = b->ci;
	p->idx = b->idx;
	p->off = d->off;
	return 0;
}

#define KW(n, f, blk, sl, b, o) \
	{ .name = (n), .fn = (f), .block = (blk), .slot = (sl), .bits = (b), .off = (o) }
#define NUM(n, type, field, b, sl) \
	KW(n, kw_num, NOBLK, sl, b, offsetof(type, field))
#define OVR(n, type, field, b, sl) \
	KW(n, kw_override, NOBLK, sl, b, offsetof(type, field))
#define TEXT(n, type, field, sl) \
	KW(n, kw_text, NOBLK, sl, 8, offsetof(type, field))
#define SIDX(n, type, field, sl) \
	KW(n, kw_stridx, NOBLK, sl, 8, offsetof(type, field))
#define BLOCK(n, kws) { (n), (kws), sizeof(kws) / sizeof((kws)[0]) }


static const struct kw_def *kw_lookup(const struct block_def *bd,
				      const struct tok *t)
{
	size_t i;

	for (i = 0; i < bd->n; i++)
		if (tok_is(t, bd->kws[i].name))
			return &bd->kws[i];
	return NULL;
}

/* Run the statements of b->st's block through b->def; "early" keywords
 * first (speed: the defaults of everything else depend on it). */
static int run_block(struct blk *b)
{
	int pass, rc;
	size_t i;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < b->st->n_body; i++) {
			const struct stmt *s = &b->st->body[i];
			const struct kw_def *d = kw_lookup(b->def, s->kw);

			if (!d) {
				if (pass)
					return unknown_keyword(b, s);
				continue;
			}
			if (d->early != !pass)
				continue;
			if (d->block == NOBLK && s->open)
				return fail(b->ps, s->open, "'%s' takes no block",
					    d->name);
			if (d->block == NEEDBLK && !s->open)
				return fail(b->ps, s->kw, "'%s' needs a block: %s { ... }",
					    d->name, d->name);
			if (d->slot >= 0) {
				const struct stmt *prev = b->seen[d->slot];

				if (prev && d->block == NEEDBLK)
					return fail(b->ps, s->kw, "only one '%s' block is allowed here (the first is at line %d)",
						    d->name, prev->kw->line);
				if (prev && tok_is(prev->kw, d->name))
					return fail(b->ps, s->kw, "%s is set twice (first at line %d)",
						    d->name, prev->kw->line);
				if (prev)
					return fail(b->ps, s->kw, "'%s' conflicts with '%.*s' at line %d: give only one of them",
						    d->name, KWA(prev), prev->kw->line);
				b->seen[d->slot] = s;
			}
			rc = d->fn(b, s, d);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* a block statement takes no arguments (except where its handler says) */
static int no_args(struct blk *b, const struct stmt *st)
{
	struct cur c = CUR(b->ps, st);

	return cur_end(&c);
}

static const char *xfer_name(unsigned int xfer)
{
	static const char *const names[] = {
		"control", "isochronous", "bulk", "interrupt",
	};

	return names[xfer & USB_ENDPOINT_XFERTYPE_MASK];
}

/* ---- sequence { packet .. } ---- */

static int kw_packet(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_ep_behaviour *beh = b->model;
	struct cur c = CUR(b->ps, st);
	struct gd_blob *pkt;

	(void)d;
	if (beh->n_packets >= GD_MAX_SEQ_PACKETS)
		return fail(b->ps, st->kw, "packet: more than %d packets in one sequence",
			    GD_MAX_SEQ_PACKETS);
	pkt = PUSH(beh->packets, beh->n_packets);
	if (!pkt)
		return oom(b->ps);
	return cur_bytes(&c, pkt, false);
}

static const struct kw_def sequence_kws[] = {
	KW("packet", kw_packet, NOBLK, -1, 0, 0),
};

/* ---- companion { .. } ---- */

enum { S_BURST, S_ATTR, S_BPI, S_BLEN };

static const struct kw_def companion_kws[] = {
	NUM("bMaxBurst", struct gd_ss_companion, bMaxBurst, 8, S_BURST),
	NUM("bmAttributes", struct gd_ss_companion, bmAttributes, 8, S_ATTR),
	NUM("wBytesPerInterval", struct gd_ss_companion, wBytesPerInterval, 16, S_BPI),
	OVR("bLength", struct gd_ss_companion, bLength_override, 8, S_BLEN),
};

/* ---- endpoint { .. } ---- */

enum { E_ADDR, E_TYPE, E_MPS, E_INTERVAL, E_BLEN, E_COMP, E_MODE, E_DELAY,
       E_STALL };

struct loop_ref {
	const struct tok *tok;	/* the target's token */
	uint8_t addr;
};

struct cfg_ctx {
	struct {
		const struct stmt *st;
		size_t alts_before;	/* interfaces written before it */
	} iads[GD_MAX_IADS];
	struct loop_ref *loops;
	size_t n_loops;
};

struct ep_ctx {
	struct cfg_ctx *cc;
	bool bpi_given;		/* companion wBytesPerInterval */
};

static int kw_epaddr(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int rc = cur_num(&c, 8, &v) ?: cur_end(&c);

	(void)d;
	if (rc)
		return rc;
	if ((v & 0x70) || !(v & USB_ENDPOINT_NUMBER_MASK))
		return fail(b->ps, &st->args[0], "bEndpointAddress: 0x%02x is not an endpoint address: expected 0x01..0x0f (OUT) or 0x81..0x8f (IN)",
			    v);
	ep->bEndpointAddress = (uint8_t)v;
	return 0;
}

static int kw_eptype(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	static const char *const types[] = {
		"control", "iso", "bulk", "interrupt", "isochronous", NULL,
	};
	struct gd_endpoint *ep = b->model;
	struct cur c = CUR(b->ps, st);
	int i, rc = cur_choice(&c, types, &i) ?: cur_end(&c);

	(void)d;
	if (!rc)
		ep->bmAttributes = (uint8_t)(i & USB_ENDPOINT_XFERTYPE_MASK);
	return rc;
}

static int kw_companion(struct blk *b, const struct stmt *st,
			const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct ep_ctx *ec = b->ctx;
	struct cur c = CUR(b->ps, st);
	struct blk cb = {
		.ps = b->ps, .def = &companion_block, .st = st, .model = &ep->ss,
	};
	int i = 1, rc;

	(void)d;
	if (!st->open) {
		rc = cur_choice(&c, on_off, &i) ?: cur_end(&c);
		ep->ss.present = !rc && i == 0;
		return rc;
	}
	rc = cur_end(&c) ?: run_block(&cb);
	ep->ss.present = true;
	ec->bpi_given = cb.seen[S_BPI] != NULL;
	return rc;
}

static int kw_epraw(struct blk *b, const struct stmt *st,
		    const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct cur c = CUR(b->ps, st);

	(void)d;
	return cur_bytes(&c, &ep->extra, true);
}

static int kw_loopback(struct blk *b, const struct stmt *st,
		       const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct ep_ctx *ec = b->ctx;
	struct cur c = CUR(b->ps, st);
	struct loop_ref *lr;
	uint32_t v;
	int rc = cur_num(&c, 8, &v) ?: cur_end(&c);

	(void)d;
	if (rc)
		return rc;
	if (!(v & USB_DIR_IN) || (v & 0x70) || !(v & USB_ENDPOINT_NUMBER_MASK))
		return fail(b->ps, &st->args[0], "loopback: 0x%02x is not an IN endpoint address (0x81..0x8f)",
			    v);
	ep->beh.mode = GD_EP_LOOPBACK;
	ep->beh.loop_to = (uint8_t)v;
	lr = PUSH(ec->cc->loops, ec->cc->n_loops);
	if (!lr)
		return oom(b->ps);
	lr->tok = &st->args[0];
	lr->addr = (uint8_t)v;
	return 0;
}

static int kw_sink(struct blk *b, const struct stmt *st,
		   const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;

	(void)d;
	ep->beh.mode = tok_is(st->kw, "sink") ? GD_EP_SINK : GD_EP_NAK;
	return no_args(b, st);
}

static int kw_source(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct cur c = CUR(b->ps, st);
	const struct tok *t = cur_peek(&c);

	(void)d;
	ep->beh.mode = GD_EP_SOURCE;
	if (!t)
		return 0;
	if (!tok_is(t, "pattern"))
		return fail(b->ps, t, "source: expected 'pattern' and hex bytes, or nothing, found %s",
			    tok_desc(t).s);
	c.i++;
	return cur_bytes(&c, &ep->beh.pattern, true);
}

static int kw_sequence(struct blk *b, const struct stmt *st,
		       const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct cur c = CUR(b->ps, st);
	struct blk sb = {
		.ps = b->ps, .def = &sequence_block, .st = st, .model = &ep->beh,
	};
	int rc;

	(void)d;
	ep->beh.mode = GD_EP_SEQUENCE;
	if (cur_peek(&c) && tok_is(cur_peek(&c), "repeat")) {
		ep->beh.repeat = true;
		c.i++;
	}
	rc = cur_end(&c) ?: run_block(&sb);
	if (!rc && !ep->beh.n_packets)
		return fail(b->ps, st->kw, "sequence: needs at least one packet");
	return rc;
}

static const struct kw_def endpoint_kws[] = {
	KW("bEndpointAddress", kw_epaddr, NOBLK, E_ADDR, 0, 0),
	KW("type", kw_eptype, NOBLK, E_TYPE, 0, 0),
	NUM("bmAttributes", struct gd_endpoint, bmAttributes, 8, E_TYPE),
	NUM("wMaxPacketSize", struct gd_endpoint, wMaxPacketSize, 16, E_MPS),
	NUM("bInterval", struct gd_endpoint, bInterval, 8, E_INTERVAL),
	OVR("bLength", struct gd_endpoint, bLength_override, 8, E_BLEN),
	KW("companion", kw_companion, OPTBLK, E_COMP, 0, 0),
	KW("raw", kw_epraw, NOBLK, -1, 0, 0),
	KW("loopback", kw_loopback, NOBLK, E_MODE, 0, 0),
	KW("sink", kw_sink, NOBLK, E_MODE, 0, 0),
	KW("nak", kw_sink, NOBLK, E_MODE, 0, 0),
	KW("source", kw_source, NOBLK, E_MODE, 0, 0),
	KW("sequence", kw_sequence, NEEDBLK, E_MODE, 0, 0),
	NUM("delay", struct gd_endpoint, beh.delay_ms, 32, E_DELAY),
	KW("stall-nth", kw_nth, NOBLK, E_STALL, 0,
	   offsetof(struct gd_endpoint, beh.stall_nth)),
};

/* wMaxPacketSize when not given, [type][speed]; 0: no such endpoint */
static uint16_t default_mps(unsigned int xfer, enum usbip_speed speed)
{
	static const uint16_t table[4][4] = {
		/*			 low  full  high  super */
		[USB_ENDPOINT_XFER_CONTROL] = { 8, 64, 64, 512 },
		[USB_ENDPOINT_XFER_ISOC] = { 0, 1023, 1024, 1024 },
		[USB_ENDPOINT_XFER_BULK] = { 0, 64, 512, 1024 },
		[USB_ENDPOINT_XFER_INT] = { 8, 64, 64, 64 },
	};
	int col = speed == USBIP_SPEED_LOW ? 0 : speed == USBIP_SPEED_HIGH ? 2 :
		  speed == USBIP_SPEED_SUPER ? 3 : 1;

	return table[xfer][col];
}

static uint8_t default_interval(unsigned int xfer, enum usbip_speed speed)
{
	bool fast = speed == USBIP_SPEED_HIGH || speed == USBIP_SPEED_SUPER;

	if (xfer == USB_ENDPOINT_XFER_INT)
		return fast ? 4 : 10;	/* 2^(4-1) x 125 us = 1 ms; 10 frames */
	if (xfer == USB_ENDPOINT_XFER_ISOC)
		return 1;		/* every (micro)frame */
	return 0;
}

static int endpoint_finish(struct blk *b, struct gd_alt *alt, size_t ei)
{
	struct parser *ps = b->ps;
	struct gd_endpoint *ep = &alt->eps[ei];
	struct ep_ctx *ec = b->ctx;
	enum usbip_speed speed = ps->dev->speed;
	unsigned int xfer = ep->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK;
	bool in = ep->bEndpointAddress & USB_DIR_IN;
	const struct stmt *mode = b->seen[E_MODE];
	const struct stmt *beh[] = { mode, b->seen[E_DELAY], b->seen[E_STALL] };
	size_t i;

	if (!b->seen[E_ADDR])
		return fail(ps, b->st->kw, "endpoint: missing bEndpointAddress (required)");
	if (!b->seen[E_TYPE])
		return fail(ps, b->st->kw, "endpoint: missing type (or bmAttributes)");
	for (i = 0; i < ei; i++)
		if (alt->eps[i].bEndpointAddress == ep->bEndpointAddress)
			return fail(ps, seen_val(b, E_ADDR, b->st->kw),
				    "bEndpointAddress: 0x%02x is already used in this interface (line %d)",
				    ep->bEndpointAddress, alt->eps[i].line);
	if (speed == USBIP_SPEED_LOW && !default_mps(xfer, speed))
		return fail(ps, seen_val(b, E_TYPE, b->st->kw),
			    "%.*s: low-speed devices have no %s endpoints",
			    KWA(b->seen[E_TYPE]), xfer_name(xfer));

	if (!b->seen[E_MPS])
		ep->wMaxPacketSize = default_mps(xfer, speed);
	if (!b->seen[E_INTERVAL])
		ep->bInterval = default_interval(xfer, speed);

	if (!b->seen[E_COMP])
		ep->ss.present = speed == USBIP_SPEED_SUPER;
	if (ep->ss.present && !ec->bpi_given &&
	    (xfer == USB_ENDPOINT_XFER_INT || xfer == USB_ENDPOINT_XFER_ISOC)) {
		/* USB 3.2 9.6.7: what one service interval moves at most */
		uint32_t mult = xfer == USB_ENDPOINT_XFER_ISOC ?
				(ep->ss.bmAttributes & 3) + 1 : 1;
		uint32_t bpi = (uint32_t)(ep->wMaxPacketSize & 0x7ff) *
			       (ep->ss.bMaxBurst + 1u) * mult;

		ep->ss.wBytesPerInterval = bpi > 0xffff ? 0xffff : (uint16_t)bpi;
	}

	for (i = 0; i < sizeof(beh) / sizeof(beh[0]); i++)
		if (beh[i] && xfer != USB_ENDPOINT_XFER_BULK &&
		    xfer != USB_ENDPOINT_XFER_INT)
			return fail(ps, beh[i]->kw, "%.*s: behaviours are for bulk and interrupt endpoints, this one is %s",
				    KWA(beh[i]), xfer_name(xfer));
	if (!mode)
		return 0;
	if (in && (ep->beh.mode == GD_EP_LOOPBACK || ep->beh.mode == GD_EP_SINK))
		return fail(ps, mode->kw, "%.*s: only for OUT endpoints, 0x%02x is IN",
			    KWA(mode), ep->bEndpointAddress);
	if (!in && (ep->beh.mode == GD_EP_SOURCE ||
		    ep->beh.mode == GD_EP_SEQUENCE))
		return fail(ps, mode->kw, "%.*s: only for IN endpoints, 0x%02x is OUT",
			    KWA(mode), ep->bEndpointAddress);
	return 0;
}

/* ---- interface { .. } ---- */

enum { I_NUM, I_ALT, I_CLASS, I_SUB, I_PROTO, I_STR, I_NUMEP, I_BLEN };

static int kw_endpoint(struct blk *b, const struct stmt *st,
		       const struct kw_def *d)
{
	struct gd_alt *alt = b->model;
	struct ep_ctx ec = { .cc = b->ctx };
	struct blk eb = {
		.ps = b->ps, .def = &endpoint_block, .st = st, .ctx = &ec,
	};
	struct gd_endpoint *ep;
	int rc;

	(void)d;
	rc = no_args(b, st);
	if (rc)
		return rc;
	if (alt->n_eps >= GD_MAX_ENDPOINTS)
		return fail(b->ps, st->kw, "more than %d endpoints in one interface descriptor",
			    GD_MAX_ENDPOINTS);
	ep = PUSH(alt->eps, alt->n_eps);
	if (!ep)
		return oom(b->ps);
	ep->bLength_override = -1;
	ep->ss.bLength_override = -1;
	ep->line = st->kw->line;
	eb.model = ep;
	return run_block(&eb) ?: endpoint_finish(&eb, alt, alt->n_eps - 1);
}

/* raw in an interface: before its first endpoint to the interface, after
 * one to that endpoint, so that the bytes land where they are written */
static int kw_altraw(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_alt *alt = b->model;
	struct cur c = CUR(b->ps, st);

	(void)d;
	return cur_bytes(&c, alt->n_eps ? &alt->eps[alt->n_eps - 1].extra :
			 &alt->extra, true);
}

static const struct kw_def interface_kws[] = {
	NUM("bInterfaceNumber", struct gd_alt, bInterfaceNumber, 8, I_NUM),
	NUM("bAlternateSetting", struct gd_alt, bAlternateSetting, 8, I_ALT),
	NUM("bInterfaceClass", struct gd_alt, bInterfaceClass, 8, I_CLASS),
	NUM("bInterfaceSubClass", struct gd_alt, bInterfaceSubClass, 8, I_SUB),
	NUM("bInterfaceProtocol", struct gd_alt, bInterfaceProtocol, 8, I_PROTO),
	TEXT("interface-name", struct gd_alt, iInterface, I_STR),
	SIDX("iInterface", struct gd_alt, iInterface, I_STR),
	OVR("bNumEndpoints", struct gd_alt, bNumEndpoints_override, 8, I_NUMEP),
	OVR("bLength", struct gd_alt, bLength_override, 8, I_BLEN),
	KW("raw", kw_altraw, NOBLK, -1, 0, 0),
	KW("endpoint", kw_endpoint, NEEDBLK, -1, 0, 0),
};

static int interface_finish(struct blk *b, struct gd_config *cfg, size_t ai)
{
	struct gd_alt *alt = &cfg->alts[ai];
	size_t i;

	if (!b->seen[I_NUM] && ai) {
		uint8_t prev = cfg->alts[ai - 1].bInterfaceNumber;

		if (alt->bAlternateSetting)
			alt->bInterfaceNumber = prev;
		else if (prev == 0xff)
			return fail(b->ps, b->st->kw, "interface: no number left after 255: give bInterfaceNumber");
		else
			alt->bInterfaceNumber = prev + 1;
	}
	for (i = 0; i < ai; i++)
		if (cfg->alts[i].bInterfaceNumber == alt->bInterfaceNumber &&
		    cfg->alts[i].bAlternateSetting == alt->bAlternateSetting)
			return fail(b->ps, seen_val(b, I_ALT, seen_val(b, I_NUM, b->st->kw)),
				    "interface %u alternate setting %u is already defined at line %d",
				    alt->bInterfaceNumber, alt->bAlternateSetting,
				    cfg->alts[i].line);
	if (gd_config_num_interfaces(cfg) > GD_MAX_INTERFACES)
		return fail(b->ps, b->st->kw, "more than %d interfaces in one configuration",
			    GD_MAX_INTERFACES);
	return 0;
}

/* ---- iad { .. } ---- */

enum { A_FIRST, A_COUNT, A_CLASS, A_SUB, A_PROTO, A_STR, A_BLEN };

static const struct kw_def iad_kws[] = {
	NUM("bFirstInterface", struct gd_iad, bFirstInterface, 8, A_FIRST),
	NUM("bInterfaceCount", struct gd_iad, bInterfaceCount, 8, A_COUNT),
	NUM("bFunctionClass", struct gd_iad, bFunctionClass, 8, A_CLASS),
	NUM("bFunctionSubClass", struct gd_iad, bFunctionSubClass, 8, A_SUB),
	NUM("bFunctionProtocol", struct gd_iad, bFunctionProtocol, 8, A_PROTO),
	TEXT("function", struct gd_iad, iFunction, A_STR),
	SIDX("iFunction", struct gd_iad, iFunction, A_STR),
	OVR("bLength", struct gd_iad, bLength_override, 8, A_BLEN),
};

/* ---- config { .. } ---- */

enum { C_VALUE, C_ATTR, C_POWER, C_STR, C_TOTAL, C_NUMIF, C_BLEN };

static int kw_interface(struct blk *b, const struct stmt *st,
			const struct kw_def *d)
{
	struct gd_config *cfg = b->model;
	struct blk ib = {
		.ps = b->ps, .def = &interface_block, .st = st, .ctx = b->ctx,
		.level = LV_ALT, .ci = b->ci,
	};
	struct gd_alt *alt;
	int rc;

	(void)d;
	rc = no_args(b, st);
	if (rc)
		return rc;
	if (cfg->n_alts >= GD_MAX_ALTS)
		return fail(b->ps, st->kw, "more than %d interface descriptors in one configuration",
			    GD_MAX_ALTS);
	alt = PUSH(cfg->alts, cfg->n_alts);
	if (!alt)
		return oom(b->ps);
	alt->bNumEndpoints_override = -1;
	alt->bLength_override = -1;
	alt->line = st->kw->line;
	ib.model = alt;
	ib.idx = cfg->n_alts - 1;
	return run_block(&ib) ?: interface_finish(&ib, cfg, ib.idx);
}

static int kw_iad(struct blk *b, const struct stmt *st, const struct kw_def *d)
{
	struct gd_config *cfg = b->model;
	struct cfg_ctx *cc = b->ctx;
	struct blk ab = {
		.ps = b->ps, .def = &iad_block, .st = st, .level = LV_IAD, .ci = b->ci,
	};
	struct gd_iad *iad;
	int rc;

	(void)d;
	rc = no_args(b, st);
	if (rc)
		return rc;
	if (cfg->n_iads >= GD_MAX_IADS)
		return fail(b->ps, st->kw, "more than %d iad blocks in one configuration",
			    GD_MAX_IADS);
	iad = PUSH(cfg->iads, cfg->n_iads);
	if (!iad)
		return oom(b->ps);
	iad->bLength_override = -1;
	ab.model = iad;
	ab.idx = cfg->n_iads - 1;
	rc = run_block(&ab);
	if (rc)
		return rc;
	if (!ab.seen[A_COUNT])
		return fail(b->ps, st->kw, "iad: missing bInterfaceCount (required)");
	/* bFirstInterface is settled once the interfaces that follow are read */
	cc->iads[ab.idx].st = ab.seen[A_FIRST] ? ab.seen[A_FIRST] : st;
	cc->iads[ab.idx].alts_before = cfg->n_alts;
	return 0;
}

/* raw in a config: before any interface right after the configuration
 * descriptor, else after the last descriptor written so far */
static int kw_cfgraw(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_config *cfg = b->model;
	struct cur c = CUR(b->ps, st);
	struct gd_blob *dst = &cfg->extra;

	(void)d;
	if (cfg->n_alts) {
		struct gd_alt *alt = &cfg->alts[cfg->n_alts - 1];

		dst = alt->n_eps ? &alt->eps[alt->n_eps - 1].extra : &alt->extra;
	}
	return cur_bytes(&c, dst, true);
}

static const struct kw_def config_kws[] = {
	NUM("bConfigurationValue", struct gd_config, bConfigurationValue, 8, C_VALUE),
	NUM("bmAttributes", struct gd_config, bmAttributes, 8, C_ATTR),
	NUM("bMaxPower", struct gd_config, bMaxPower, 8, C_POWER),
	TEXT("configuration", struct gd_config, iConfiguration, C_STR),
	SIDX("iConfiguration", struct gd_config, iConfiguration, C_STR),
	OVR("wTotalLength", struct gd_config, wTotalLength_override, 16, C_TOTAL),
	OVR("bNumInterfaces", struct gd_config, bNumInterfaces_override, 8, C_NUMIF),
	OVR("bLength", struct gd_config, bLength_override, 8, C_BLEN),
	KW("raw", kw_cfgraw, NOBLK, -1, 0, 0),
	KW("iad", kw_iad, NEEDBLK, -1, 0, 0),
	KW("interface", kw_interface, NEEDBLK, -1, 0, 0),
};

static size_t config_bytes(const struct gd_config *cfg)
{
	size_t n = USB_DT_CONFIG_SIZE + cfg->extra.len, i, j;

	n += cfg->n_iads * USB_DT_INTERFACE_ASSOCIATION_SIZE;
	for (i = 0; i < cfg->n_alts; i++) {
		const struct gd_alt *alt = &cfg->alts[i];

		n += USB_DT_INTERFACE_SIZE + alt->extra.len;
		for (j = 0; j < alt->n_eps; j++)
			n += USB_DT_ENDPOINT_SIZE + alt->eps[j].extra.len +
			     (alt->eps[j].ss.present ? USB_DT_SS_EP_COMP_SIZE : 0);
	}
	return n;
}

static int config_finish(struct blk *b, struct gd_config *cfg)
{
	struct parser *ps = b->ps;
	struct gd_device *dev = ps->dev;
	struct cfg_ctx *cc = b->ctx;
	size_t i, j, k, total;

	if (!cfg->bConfigurationValue)
		return fail(ps, seen_val(b, C_VALUE, b->st->kw),
			    "bConfigurationValue: 0 means \"not configured\" and cannot name a configuration");
	for (i = 0; i + 1 < dev->n_configs; i++)
		if (dev->configs[i].bConfigurationValue == cfg->bConfigurationValue)
			return fail(ps, seen_val(b, C_VALUE, b->st->kw),
				    "bConfigurationValue %u is already used by configuration %zu",
				    cfg->bConfigurationValue, i + 1);

	for (i = 0; i < cfg->n_iads; i++) {
		struct gd_iad *iad = &cfg->iads[i];
		const struct stmt *st = cc->iads[i].st;

		if (!tok_is(st->kw, "bFirstInterface")) {
			/* default: the interface written right after it */
			if (cc->iads[i].alts_before >= cfg->n_alts)
				return fail(ps, st->kw, "iad: no interface follows it: give bFirstInterface");
			iad->bFirstInterface =
				cfg->alts[cc->iads[i].alts_before].bInterfaceNumber;
			continue;
		}
		for (j = 0; j < cfg->n_alts; j++)
			if (cfg->alts[j].bInterfaceNumber == iad->bFirstInterface)
				break;
		if (j == cfg->n_alts)
			return fail(ps, &st->args[0], "bFirstInterface: no interface %u in this configuration",
				    iad->bFirstInterface);
	}

	for (i = 0; i < cc->n_loops; i++) {
		const struct loop_ref *lr = &cc->loops[i];
		bool found = false;

		for (j = 0; j < cfg->n_alts; j++) {
			for (k = 0; k < cfg->alts[j].n_eps; k++) {
				const struct gd_endpoint *t = &cfg->alts[j].eps[k];
				unsigned int xfer = t->bmAttributes &
						    USB_ENDPOINT_XFERTYPE_MASK;

				if (t->bEndpointAddress != lr->addr)
					continue;
				found = true;
				if (xfer != USB_ENDPOINT_XFER_BULK &&
				    xfer != USB_ENDPOINT_XFER_INT)
					return fail(ps, lr->tok, "loopback: 0x%02x is a %s endpoint (line %d): expected bulk or interrupt",
						    lr->addr, xfer_name(xfer), t->line);
				if (t->beh.mode != GD_EP_DEFAULT)
					return fail(ps, lr->tok, "loopback: 0x%02x has a behaviour of its own (line %d)",
						    lr->addr, t->line);
			}
		}
		if (!found)
			return fail(ps, lr->tok, "loopback: no endpoint 0x%02x in this configuration",
				    lr->addr);
	}

	total = config_bytes(cfg);
	if (total > GD_DESC_MAX)
		return fail(ps, b->st->kw, "config: its descriptors add up to %zu bytes, more than wTotalLength can count (%d)",
			    total, GD_DESC_MAX);
	return 0;
}

/* ---- control { .. } ---- */

enum { R_TYPE, R_REQ, R_VALUE, R_INDEX, R_ACTION, R_SHORT, R_DELAY, R_STALL,
       R_TIMES };

static int kw_match(struct blk *b, const struct stmt *st,
		    const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	int v = -1, rc = cur_num_or_star(&c, d->bits, &v) ?: cur_end(&c);

	if (!rc)
		*(int *)((char *)b->model + d->off) = v;
	return rc;
}

static int kw_action(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_ctrl_rule *r = b->model;
	struct cur c = CUR(b->ps, st);

	(void)d;
	if (tok_is(st->kw, "reply")) {
		r->action = GD_CTRL_REPLY;
		return cur_bytes(&c, &r->data, true);
	}
	r->action = tok_is(st->kw, "ack") ? GD_CTRL_ACK : GD_CTRL_STALL;
	return cur_end(&c);
}

static const struct kw_def control_kws[] = {
	KW("bmRequestType", kw_match, NOBLK, R_TYPE, 8,
	   offsetof(struct gd_ctrl_rule, bmRequestType)),
	KW("bRequest", kw_match, NOBLK, R_REQ, 8,
	   offsetof(struct gd_ctrl_rule, bRequest)),
	KW("wValue", kw_match, NOBLK, R_VALUE, 16,
	   offsetof(struct gd_ctrl_rule, wValue)),
	KW("wIndex", kw_match, NOBLK, R_INDEX, 16,
	   offsetof(struct gd_ctrl_rule, wIndex)),
	KW("reply", kw_action, NOBLK, R_ACTION, 0, 0),
	KW("ack", kw_action, NOBLK, R_ACTION, 0, 0),
	KW("stall", kw_action, NOBLK, R_ACTION, 0, 0),
	OVR("short", struct gd_ctrl_rule, short_len, 16, R_SHORT),
	NUM("delay", struct gd_ctrl_rule, delay_ms, 32, R_DELAY),
	KW("stall-nth", kw_nth, NOBLK, R_STALL, 0,
	   offsetof(struct gd_ctrl_rule, stall_nth)),
	KW("times", kw_nth, NOBLK, R_TIMES, 0,
	   offsetof(struct gd_ctrl_rule, times)),
};

/* ---- bos { .. } ---- */

enum { B_GEN, B_TOTAL, B_NCAPS };

static int kw_bosraw(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_bos *bos = b->model;
	struct cur c = CUR(b->ps, st);

	(void)d;
	return cur_bytes(&c, &bos->extra, true);
}

static const struct kw_def bos_kws[] = {
	KW("generated", kw_onoff, NOBLK, B_GEN, 0,
	   offsetof(struct gd_bos, generated_caps)),
	KW("raw", kw_bosraw, NOBLK, -1, 0, 0),
	OVR("wTotalLength", struct gd_bos, wTotalLength_override, 16, B_TOTAL),
	OVR("bNumDeviceCaps", struct gd_bos, bNumDeviceCaps_override, 8, B_NCAPS),
};

/* ---- device { .. } ---- */

enum { D_NAME, D_SPEED, D_BCDUSB, D_CLASS, D_SUB, D_PROTO, D_MPS0, D_VID,
       D_PID, D_BCDDEV, D_MANUF, D_PRODUCT, D_SERIAL, D_NUMCFG, D_BLEN,
       D_LANGIDS, D_QUAL, D_BOS, D_FUNC, D_NSLOTS };
_Static_assert(D_NSLOTS <= MAX_SLOTS, "MAX_SLOTS too small");

struct dev_ctx {
	const struct tok *faults[2];
};

static int kw_name(struct blk *b, const struct stmt *st,
		   const struct kw_def *d)
{
	struct gd_device *dev = b->model;
	struct cur c = CUR(b->ps, st);
	const struct tok *t;
	size_t i;
	int rc = cur_text(&c, &t) ?: cur_end(&c);

	(void)d;
	if (rc)
		return rc;
	if (!t->len || t->len > SCRIPT_MAX_NAME)
		return fail(b->ps, t, "name: must be 1 to %d bytes long",
			    SCRIPT_MAX_NAME);
	for (i = 0; i < t->len; i++)
		if ((unsigned char)t->text[i] < ' ')
			return fail(b->ps, t, "name: no control characters");
	dev->name = strndup(t->text, t->len);
	return dev->name ? 0 : oom(b->ps);
}

static int kw_speed(struct blk *b, const struct stmt *st,
		    const struct kw_def *d)
{
	static const char *const names[] = {
		"low", "full", "high", "super", NULL,
	};
	static const enum usbip_speed speeds[] = {
		USBIP_SPEED_LOW, USBIP_SPEED_FULL, USBIP_SPEED_HIGH,
		USBIP_SPEED_SUPER,
	};
	struct gd_device *dev = b->model;
	struct cur c = CUR(b->ps, st);
	int i, rc = cur_choice(&c, names, &i) ?: cur_end(&c);

	(void)d;
	if (!rc)
		dev->speed = speeds[i];
	return rc;
}

static int kw_langids(struct blk *b, const struct stmt *st,
		      const struct kw_def *d)
{
	struct gd_device *dev = b->model;
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int rc;

	(void)d;
	do {
		if (dev->n_langids == GD_MAX_LANGIDS && cur_peek(&c))
			return fail(b->ps, cur_peek(&c), "langids: more than %d LANGIDs",
				    GD_MAX_LANGIDS);
		rc = cur_num(&c, 16, &v);
		if (rc)
			return rc;
		dev->langids[dev->n_langids++] = (uint16_t)v;
	} while (cur_peek(&c));
	return 0;
}

static int kw_string(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct parser *ps = b->ps;
	struct gd_device *dev = b->model;
	struct cur c = CUR(ps, st);
	const struct tok *idx_tok = cur_peek(&c), *t;
	uint32_t idx;
	int rc;

	(void)d;
	rc = cur_num(&c, 8, &idx);
	if (rc)
		return rc;
	if (!idx)
		return fail(ps, idx_tok, "string: index 0 is reserved for the LANGID table");
	if (ps->str_set[idx])
		return fail(ps, idx_tok, "string: index %u is already used (line %d)",
			    idx, ps->str_set[idx]->line);
	ps->str_set[idx] = idx_tok;
	t = cur_peek(&c);
	if (t && tok_is(t, "raw")) {
		c.i++;
		return cur_bytes(&c, &dev->string_raw[idx], true);
	}
	if (t && t->kind != T_STRING)
		return fail(ps, t, "string: expected a quoted string or 'raw' and hex bytes, found %s",
			    tok_desc(t).s);
	rc = cur_text(&c, &t) ?: cur_end(&c);
	if (rc)
		return rc;
	dev->strings[idx] = strndup(t->text, t->len);
	return dev->strings[idx] ? 0 : oom(ps);
}

static int kw_bos(struct blk *b, const struct stmt *st, const struct kw_def *d)
{
	struct gd_device *dev = b->model;
	struct cur c = CUR(b->ps, st);
	struct blk bb = {
		.ps = b->ps, .def = &bos_block, .st = st, .model = &dev->bos,
	};
	int i = 1, rc;

	(void)d;
	if (st->open) {
		dev->bos.present = true;
		return cur_end(&c) ?: run_block(&bb);
	}
	rc = cur_choice(&c, on_off, &i) ?: cur_end(&c);
	dev->bos.present = i == 0;
	return rc;
}

static int kw_config(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_device *dev = b->model;
	struct cfg_ctx cc = { .loops = NULL };
	struct blk cb = {
		.ps = b->ps, .def = &config_block, .st = st, .ctx = &cc,
		.level = LV_CONFIG, .ci = dev->n_configs,
	};
	struct gd_config *cfg;
	int rc;

	(void)d;
	rc = no_args(b, st);
	if (rc)
		return rc;
	if (dev->n_configs >= GD_MAX_CONFIGS)
		return fail(b->ps, st->kw, "more than %d configurations",
			    GD_MAX_CONFIGS);
	cfg = PUSH(dev->configs, dev->n_configs);
	if (!cfg)
		return oom(b->ps);
	cfg->bConfigurationValue = (uint8_t)dev->n_configs;
	cfg->bmAttributes = USB_CONFIG_ATT_ONE;
	cfg->bMaxPower = 50;
	cfg->wTotalLength_override = -1;
	cfg->bNumInterfaces_override = -1;
	cfg->bLength_override = -1;
	cb.model = cfg;
	rc = run_block(&cb) ?: config_finish(&cb, cfg);
	free(cc.loops);
	return rc;
}

static int kw_control(struct blk *b, const struct stmt *st,
		      const struct kw_def *d)
{
	struct gd_device *dev = b->model;
	struct blk rb = { .ps = b->ps, .def = &control_block, .st = st };
	struct gd_ctrl_rule *r;
	int rc;

	(void)d;
	rc = no_args(b, st);
	if (rc)
		return rc;
	if (dev->n_rules >= GD_MAX_RULES)
		return fail(b->ps, st->kw, "more than %d control rules",
			    GD_MAX_RULES);
	r = PUSH(dev->rules, dev->n_rules);
	if (!r)
		return oom(b->ps);
	r->bmRequestType = -1;
	r->bRequest = -1;
	r->wValue = -1;
	r->wIndex = -1;
	r->short_len = -1;
	r->line = st->kw->line;
	rb.model = r;
	rc = run_block(&rb);
	if (rc)
		return rc;
	if (!rb.seen[R_ACTION])
		return fail(b->ps, st->kw, "control: needs an action: reply, ack or stall");
	if (rb.seen[R_SHORT] && r->action != GD_CTRL_REPLY)
		return fail(b->ps, rb.seen[R_SHORT]->kw, "short: only applies to reply");
	return 0;
}

static int kw_fault(struct blk *b, const struct stmt *st,
		    const struct kw_def *d)
{
	static const char *const kinds[] = {
		"disconnect-after-urbs", "disconnect-after-ms", NULL,
	};
	struct gd_device *dev = b->model;
	struct dev_ctx *dc = b->ctx;
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int i, rc;

	(void)d;
	rc = cur_choice(&c, kinds, &i);
	if (rc)
		return rc;
	if (dc->faults[i])
		return fail(b->ps, &st->args[0], "fault %s is set twice (first at line %d)",
			    kinds[i], dc->faults[i]->line);
	dc->faults[i] = &st->args[0];
	rc = cur_num(&c, 32, &v) ?: cur_end(&c);
	if (rc)
		return rc;
	if (!v)
		return fail(b->ps, &st->args[1], "fault %s: must be at least 1",
			    kinds[i]);
	if (i == 0)
		dev->faults.disconnect_after_urbs = v;
	else
		dev->faults.disconnect_after_ms = v;
	return 0;
}

/* one `key value...` line of a function block; the value is the rest of
 * the statement as written (tokens joined by one space), or a lone quoted
 * string unquoted */
static int function_opt(struct parser *ps, const struct stmt *s,
			struct gd_fn_opt *opt)
{
	const struct tok *first = s->n_args ? &s->args[0] : s->kw;
	size_t i, n = 0;

	opt->line = first->line;
	opt->col = first->col;
	opt->key = strndup(s->kw->text, s->kw->len);
	if (!opt->key)
		return oom(ps);
	if (s->n_args == 1 && first->kind == T_STRING) {
		if (memchr(first->text, 0, first->len))
			return fail(ps, first, "%.*s: a NUL byte cannot be part of an option value",
				    KWA(s));
		opt->value = strndup(first->text, first->len);
		return opt->value ? 0 : oom(ps);
	}
	for (i = 0; i < s->n_args; i++)
		n += s->args[i].src_len + 1;
	opt->value = malloc(n + 1);
	if (!opt->value)
		return oom(ps);
	for (i = 0, n = 0; i < s->n_args; i++) {
		if (i)
			opt->value[n++] = ' ';
		memcpy(opt->value + n, s->args[i].src, s->args[i].src_len);
		n += s->args[i].src_len;
	}
	opt->value[n] = 0;
	return 0;
}

/* function NAME [{ key value... }]: a built-in device function
 * (function.h); its options are checked by the function itself */
static int kw_function(struct blk *b, const struct stmt *st,
		       const struct kw_def *d)
{
	struct parser *ps = b->ps;
	struct gd_device *dev = b->model;
	struct cur c = CUR(ps, st);
	const struct tok *name = cur_peek(&c);
	size_t i, j;
	int rc;

	(void)d;
	if (!name)
		return fail(ps, st->kw, "function: missing value: expected the name of a device function");
	if (name->kind != T_WORD)
		return fail(ps, name, "function: expected the name of a device function, found %s",
			    tok_desc(name).s);
	c.i++;
	rc = cur_end(&c);
	if (rc)
		return rc;
	dev->function = strndup(name->text, name->len);
	if (!dev->function)
		return oom(ps);
	dev->function_line = name->line;
	dev->function_col = name->col;
	if (!gd_function_find(dev->function)) {
		char list[200];
		size_t n = 0;

		list[0] = 0;
		for (i = 0; gd_functions[i] && n < sizeof(list); i++)
			n += snprintf(list + n, sizeof(list) - n, "%s%s",
				      i ? ", " : "", gd_functions[i]->name);
		return fail(ps, name, "function: no device function '%.*s' (there are: %s)",
			    TOKA(name), list);
	}
	if (!st->open)
		return 0;
	dev->function_opts = calloc(st->n_body ? st->n_body : 1,
				    sizeof(*dev->function_opts));
	if (!dev->function_opts)
		return oom(ps);
	for (i = 0; i < st->n_body; i++) {
		const struct stmt *s = &st->body[i];

		if (s->open)
			return fail(ps, s->open, "function options take no block");
		for (j = 0; j < i; j++)
			if (s->kw->len == st->body[j].kw->len &&
			    !memcmp(s->kw->text, st->body[j].kw->text, s->kw->len))
				return fail(ps, s->kw, "%.*s is set twice (first at line %d)",
					    KWA(s), st->body[j].kw->line);
		dev->n_function_opts++;
		rc = function_opt(ps, s, &dev->function_opts[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static const struct kw_def device_kws[] = {
	KW("name", kw_name, NOBLK, D_NAME, 0, 0),
	{ .name = "speed", .fn = kw_speed, .slot = D_SPEED, .early = true },
	NUM("bcdUSB", struct gd_device, bcdUSB, 16, D_BCDUSB),
	NUM("bDeviceClass", struct gd_device, bDeviceClass, 8, D_CLASS),
	NUM("bDeviceSubClass", struct gd_device, bDeviceSubClass, 8, D_SUB),
	NUM("bDeviceProtocol", struct gd_device, bDeviceProtocol, 8, D_PROTO),
	NUM("bMaxPacketSize0", struct gd_device, bMaxPacketSize0, 8, D_MPS0),
	NUM("idVendor", struct gd_device, idVendor, 16, D_VID),
	NUM("idProduct", struct gd_device, idProduct, 16, D_PID),
	NUM("bcdDevice", struct gd_device, bcdDevice, 16, D_BCDDEV),
	TEXT("manufacturer", struct gd_device, iManufacturer, D_MANUF),
	SIDX("iManufacturer", struct gd_device, iManufacturer, D_MANUF),
	TEXT("product", struct gd_device, iProduct, D_PRODUCT),
	SIDX("iProduct", struct gd_device, iProduct, D_PRODUCT),
	TEXT("serial", struct gd_device, iSerialNumber, D_SERIAL),
	SIDX("iSerialNumber", struct gd_device, iSerialNumber, D_SERIAL),
	OVR("bNumConfigurations", struct gd_device, bNumConfigurations_override, 8, D_NUMCFG),
	OVR("bLength", struct gd_device, bLength_override, 8, D_BLEN),
	KW("langids", kw_langids, NOBLK, D_LANGIDS, 0, 0),
	KW("string", kw_string, NOBLK, -1, 0, 0),
	KW("qualifier", kw_onoff, NOBLK, D_QUAL, 0,
	   offsetof(struct gd_device, qualifier)),
	KW("bos", kw_bos, OPTBLK, D_BOS, 0, 0),
	KW("config", kw_config, NEEDBLK, -1, 0, 0),
	KW("control", kw_control, NEEDBLK, -1, 0, 0),
	KW("fault", kw_fault, NOBLK, -1, 0, 0),
	KW("function", kw_function, OPTBLK, D_FUNC, 0, 0),
};

/* hand out string indices to text fields, in script order, skipping every
 * index the script names explicitly */
static int assign_strings(struct parser *ps)
{
	struct gd_device *dev = ps->dev;
	bool used[256];
	size_t i, next = 1;

	for (i = 0; i < 256; i++)
		used[i] = ps->str_set[i] || ps->str_named[i];
	for (i = 0; i < ps->n_pend; i++) {
		const struct pending_str *p = &ps->pend[i];
		char *base;

		while (next < 256 && used[next])
			next++;
		if (next == 256)
			return fail(ps, p->tok, "no free string index left for this string (1..255 are taken)");
		used[next] = true;
		switch (p->level) {
		case LV_DEVICE:
			base = (char *)dev;
			break;
		case LV_CONFIG:
			base = (char *)&dev->configs[p->ci];
			break;
		case LV_ALT:
			base = (char *)&dev->configs[p->ci].alts[p->idx];
			break;
		default:
			base = (char *)&dev->configs[p->ci].iads[p->idx];
			break;
		}
		*(uint8_t *)(base + p->off) = (uint8_t)next;
		dev->strings[next] = strndup(p->tok->text, p->tok->len);
		if (!dev->strings[next])
			return oom(ps);
	}
	return 0;
}

/* "dir/vendor-bulk.gadget" -> "vendor-bulk" */
static char *name_from_path(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > 7 && !strcmp(base + n - 7, ".gadget"))
		n -= 7;
	if (!n)
		return strdup("gadget");
	return strndup(base, n);
}

static int device_finish(struct blk *b)
{
	struct parser *ps = b->ps;
	struct gd_device *dev = ps->dev;
	size_t i;
	int rc;

	if (!b->seen[D_VID])
		return fail(ps, b->st->kw, "device: missing idVendor (required)");
	if (!b->seen[D_PID])
		return fail(ps, b->st->kw, "device: missing idProduct (required)");
	if (!dev->n_configs)
		return fail(ps, b->st->kw, "device: needs at least one config block");

	if (!b->seen[D_BCDUSB])
		dev->bcdUSB = dev->speed == USBIP_SPEED_SUPER ? 0x0320 :
			      dev->speed == USBIP_SPEED_HIGH ? 0x0200 : 0x0110;
	if (!b->seen[D_MPS0])
		dev->bMaxPacketSize0 = dev->speed == USBIP_SPEED_SUPER ? 9 :
				       dev->speed == USBIP_SPEED_LOW ? 8 : 64;
	if (!b->seen[D_QUAL])
		dev->qualifier = dev->speed == USBIP_SPEED_HIGH;
	if (!b->seen[D_BOS])
		dev->bos.present = dev->bcdUSB >= 0x0201;

	rc = assign_strings(ps);
	if (rc)
		return rc;
	if (!b->seen[D_LANGIDS]) {
		for (i = 1; i < 256; i++)
			if (dev->strings[i] || dev->string_raw[i].len)
				break;
		if (i < 256) {
			dev->langids[0] = 0x0409;	/* English (United States) */
			dev->n_langids = 1;
		}
	}
	if (!dev->name) {
		dev->name = name_from_path(ps->name);
		if (!dev->name)
			return oom(ps);
	}
	return 0;
}

static int kw_device(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct dev_ctx dc = { .faults = { NULL } };
	struct blk db = {
		.ps = b->ps, .def = &device_block, .st = st, .model = b->ps->dev,
		.ctx = &dc, .level = LV_DEVICE,
	};

	(void)d;
	return no_args(b, st) ?: run_block(&db) ?: device_finish(&db);
}

static const struct kw_def top_kws[] = {
	KW("device", kw_device, NEEDBLK, 0, 0, 0),
};

static const struct block_def top_block = BLOCK("the top level of the file, where only 'device' goes", top_kws);
static const struct block_def device_block = BLOCK("the device block", device_kws);
static const struct block_def config_block = BLOCK("a config block", config_kws);
static const struct block_def interface_block = BLOCK("an interface block", interface_kws);
static const struct block_def endpoint_block = BLOCK("an endpoint block", endpoint_kws);
static const struct block_def iad_block = BLOCK("an iad block", iad_kws);
static const struct block_def companion_block = BLOCK("a companion block", companion_kws);
static const struct block_def sequence_block = BLOCK("a sequence block", sequence_kws);
static const struct block_def control_block = BLOCK("a control block", control_kws);
static const struct block_def bos_block = BLOCK("a bos block", bos_kws);

/* for "X is a keyword of Y" */
static const struct block_def *const all_blocks[] = {
	&top_block, &device_block, &config_block, &interface_block,
	&endpoint_block, &iad_block, &companion_block, &sequence_block,
	&control_block, &bos_block,
};
static const size_t n_all_blocks = sizeof(all_blocks) / sizeof(all_blocks[0]);

/* edit distance, for "did you mean"; large when not worth computing */
static size_t edit_distance(const char *a, size_t na, const char *b)
{
	size_t row[48], nb = strlen(b), i, j;

	if (na >= 40 || nb >= 40)
		return 99;
	for (j = 0; j <= nb; j++)
		row[j] = j;
	for (i = 1; i <= na; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= nb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[nb];
}

static int unknown_keyword(struct blk *b, const struct stmt *st)
{
	const struct block_def *bd = b->def;
	const char *best = NULL;
	size_t i, dist = 3;

	for (i = 0; i < n_all_blocks; i++)
		if (all_blocks[i] != bd && kw_lookup(all_blocks[i], st->kw))
			return fail(b->ps, st->kw, "'%.*s' does not belong in %s (it is a keyword of %s)",
				    KWA(st), bd->name, all_blocks[i]->name);
	for (i = 0; i < bd->n; i++) {
		size_t d = edit_distance(st->kw->text, st->kw->len,
					 bd->kws[i].name);

		if (d < dist) {
			dist = d;
			best = bd->kws[i].name;
		}
	}
	if (best && st->kw->len > 3)
		return fail(b->ps, st->kw, "unknown keyword '%.*s' in %s; did you mean '%s'?",
			    KWA(st), bd->name, best);
	return fail(b->ps, st->kw, "unknown keyword '%.*s' in %s", KWA(st),
		    bd->name);
}

/* ------------------------------------------------------------------ */
/* entry points                                                        */

static void parser_free(struct parser *ps)
{
	size_t i;

	tree_free(ps->top.body, ps->top.n_body);
	for (i = 0; i < ps->n_toks; i++)
		free(ps->toks[i].own);
	free(ps->toks);
	free(ps->pend);
}

int script_parse(const char *name, const char *text, size_t len,
		 struct gd_device **out, struct script_error *err)
{
	struct parser ps = {
		.name = name ? name : "<script>",
		.err = err,
	};
	struct blk top = { .ps = &ps, .def = &top_block, .st = &ps.top };
	struct gd_device *dev;
	size_t pos = 0;
	int rc;

	*out = NULL;
	if (err)
		memset(err, 0, sizeof(*err));
	if (len > SCRIPT_MAX_BYTES)
		return fail_at(&ps, 1, 1, "script of %zu bytes, larger than the limit of %d",
			       len, SCRIPT_MAX_BYTES);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return oom(&ps);
	ps.dev = dev;
	dev->speed = USBIP_SPEED_FULL;
	dev->bcdDevice = 0x0100;
	dev->bNumConfigurations_override = -1;
	dev->bLength_override = -1;
	dev->bos.generated_caps = true;
	dev->bos.wTotalLength_override = -1;
	dev->bos.bNumDeviceCaps_override = -1;
	dev->path = strdup(ps.name);
	if (!dev->path) {
		rc = oom(&ps);
		goto out;
	}

	rc = lex(&ps, text, len) ?:
	     tree(&ps, &pos, 0, NULL, &ps.top) ?:
	     run_block(&top);
	if (!rc && !top.seen[0])
		rc = fail(&ps, &ps.toks[ps.n_toks - 1], "no device block: a script describes one device { ... }");
	if (!rc && dev->function) {
		/* the function checks its options and the descriptors it needs */
		const struct gd_function_ops *ops = gd_function_find(dev->function);
		struct script_error scratch;

		if (ops && ops->validate)
			rc = ops->validate(dev, err ? err : &scratch);
	}
out:
	parser_free(&ps);
	if (rc) {
		gd_model_free(dev);
		return rc;
	}
	*out = dev;
	return 0;
}

/* an error that belongs to the file, not to a place in it */
static int __attribute__((format(printf, 4, 5)))
load_fail(struct script_error *err, const char *path, int rc,
	  const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err)
		return rc;
	err->line = 0;
	err->col = 0;
	n = snprintf(err->msg, sizeof(err->msg), "%s: ", path);
	if (n < 0 || (size_t)n >= sizeof(err->msg))
		return rc;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof(err->msg) - n, fmt, ap);
	va_end(ap);
	return rc;
}

int script_load(const char *path, struct gd_device **out,
		struct script_error *err)
{
	struct stat sb;
	size_t len = 0;
	char *buf;
	int fd, rc;

	*out = NULL;
	if (err)
		memset(err, 0, sizeof(*err));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return load_fail(err, path, -errno, "cannot open: %s",
				 strerror(errno));
	if (fstat(fd, &sb)) {
		rc = -errno;
		close(fd);
		return load_fail(err, path, rc, "cannot stat: %s", strerror(-rc));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return load_fail(err, path, -EINVAL, "not a regular file");
	}
	if (sb.st_size > SCRIPT_MAX_BYTES) {
		close(fd);
		return load_fail(err, path, -EINVAL, "larger than the limit of %d bytes",
				 SCRIPT_MAX_BYTES);
	}
	buf = malloc(sb.st_size ? sb.st_size : 1);
	if (!buf) {
		close(fd);
		return load_fail(err, path, -ENOMEM, "out of memory");
	}
	while (len < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + len, sb.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			close(fd);
			free(buf);
			return load_fail(err, path, rc, "cannot read: %s",
					 strerror(-rc));
		}
		if (!n)
			break;	/* it shrank meanwhile: parse what was there */
		len += n;
	}
	close(fd);
	rc = script_parse(path, buf, len, out, err);
	free(buf);
	return rc;
}
