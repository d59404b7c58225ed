// SPDX-License-Identifier: GPL-2.0
/* script_lex.c - gadget script parser: errors, tokens, pass 1 (lexer). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script_int.h"
#include "util.h"

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

int __attribute__((format(printf, 4, 5)))
ps_fail_at(struct parser *ps, int line, int col, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail_at(ps, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

int __attribute__((format(printf, 3, 4)))
ps_fail(struct parser *ps, const struct tok *t, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail_at(ps, t->line, t->col, fmt, ap);
	va_end(ap);
	return rc;
}

int ps_oom(struct parser *ps)
{
	if (ps->err) {
		ps->err->line = 0;
		ps->err->col = 0;
		snprintf(ps->err->msg, sizeof(ps->err->msg), "%s: out of memory",
			 ps->name);
	}
	return -ENOMEM;
}

struct tdesc tok_desc(const struct tok *t)
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

/* a keyword's or word's text for a message's "%s": at most 40 bytes */
struct tdesc tok_text(const struct tok *t)
{
	struct tdesc d;

	snprintf(d.s, sizeof(d.s), "%.*s", (int)(t->len > 40 ? 40 : t->len),
		 t->text);
	return d;
}

bool tok_is(const struct tok *t, const char *word)
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
			return ps_oom(ps);
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
		for (i = 0, p++; i < 2 && p < lx->end && (d = util_hexval(*p)) >= 0;
		     i++, p++)
			v = v * 16 + d;
		if (!i)
			return ps_fail_at(lx->ps, lx->line, lx_col(lx, bs),
					  "'\\x' needs one or two hex digits");
	} else if (*p >= '0' && *p <= '7') {
		for (i = 0; i < 3 && p < lx->end && *p >= '0' && *p <= '7';
		     i++, p++)
			v = v * 8 + (*p - '0');
		if (v > 0xff)
			return ps_fail_at(lx->ps, lx->line, lx_col(lx, bs),
					  "octal escape \\%.3s is larger than 0377", bs + 1);
	} else if ((unsigned char)*p > ' ' && (unsigned char)*p < 0x7f) {
		return ps_fail_at(lx->ps, lx->line, lx_col(lx, bs),
				  "unknown escape '\\%c' (known: \\\\ \\\" \\' \\? \\a \\b \\f \\n \\r \\t \\v \\xHH \\OOO)",
				  *p);
	} else {
		return ps_fail_at(lx->ps, lx->line, lx_col(lx, bs),
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
		return ps_fail_at(lx->ps, lx->line, lx_col(lx, start),
				  "unterminated string: a string must end on the line it starts");

	buf = malloc(q - start);
	if (!buf)
		return ps_oom(lx->ps);
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
			rc = ps_fail_at(lx->ps, lx->line, lx_col(lx, p),
					"control character 0x%02x in a string (write it as an escape)", c);
			goto err;
		}
		buf[n++] = c;
		p++;
	}
	if (n > GD_MAX_BLOB) {
		rc = ps_fail_at(lx->ps, lx->line, lx_col(lx, start),
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
		return ps_fail_at(lx->ps, lx->line, lx_col(lx, bs),
				  "'\\' continues a statement on the next line and must end its line");
	if (q < lx->end) {
		q++;
		lx->line++;
		lx->bol = q;
	}
	lx->p = q;
	return 0;
}

int ps_lex(struct parser *ps, const char *text, size_t len)
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
				return ps_fail_at(ps, lx.line, lx_col(&lx, start),
						  "unexpected control character 0x%02x", c);
			while (lx.p < lx.end && is_word_byte(*lx.p))
				lx.p++;
			rc = lex_add(&lx, T_WORD, start, start, lx.p - start, NULL);
			break;
		}
	}
	return rc ?: lex_add(&lx, T_EOF, lx.p, lx.p, 0, NULL);
}
