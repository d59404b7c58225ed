// SPDX-License-Identifier: GPL-2.0
/*
 * plan.c - quote and split plan/result lines (see plan.h for the grammar).
 */
#include "plan.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char hexdig[] = "0123456789abcdef";

/* The escape for c, or 0 when c stands for itself inside quotes. */
static char quote_escape(unsigned char c)
{
	switch (c) {
	case '"':
		return '"';
	case '\\':
		return '\\';
	case '\n':
		return 'n';
	case '\t':
		return 't';
	case '\r':
		return 'r';
	}
	if (c < 0x20 || c >= 0x7f)
		return 'x';
	return 0;
}

size_t plan_quote_len(const char *s)
{
	size_t n = 3;	/* two quotes and the NUL */

	for (; *s; s++) {
		char e = quote_escape((unsigned char)*s);

		n += !e ? 1 : e == 'x' ? 4 : 2;
	}
	return n;
}

int plan_quote(char *dst, size_t size, const char *s)
{
	size_t need = plan_quote_len(s);
	size_t w = 0;

	if (need > size || need - 1 > INT32_MAX) {
		if (size)
			dst[0] = '\0';
		return -ENOSPC;
	}
	dst[w++] = '"';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char e = quote_escape(c);

		if (!e) {
			dst[w++] = (char)c;
			continue;
		}
		dst[w++] = '\\';
		dst[w++] = e;
		if (e == 'x') {
			dst[w++] = hexdig[c >> 4];
			dst[w++] = hexdig[c & 0xf];
		}
	}
	dst[w++] = '"';
	dst[w] = '\0';
	return (int)w;
}

static bool is_sep(char c)
{
	return c == ' ' || c == '\t';
}

/* A raw byte that may not appear in a line outside an escape. */
static bool is_ctl(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

/*
 * Decode the quoted word starting at *pr (on the opening quote) in place.
 * The decoded bytes are never more than the raw ones, so writing behind
 * the read cursor is safe; the closing quote's slot takes the NUL.
 */
static int split_quoted(char *line, char **pr, size_t *len, size_t *err_col)
{
	char *r = *pr + 1;
	char *w = *pr;
	int hi, lo;

	for (;;) {
		unsigned char c = (unsigned char)*r;

		if (c == '\0') {
			*err_col = (size_t)(r - line) + 1;
			return -EINVAL;	/* unterminated */
		}
		if (c == '"')
			break;
		if (is_ctl(c)) {
			*err_col = (size_t)(r - line) + 1;
			return -EINVAL;
		}
		if (c != '\\') {
			*w++ = (char)c;
			r++;
			continue;
		}
		switch (r[1]) {
		case '"':
		case '\\':
			*w++ = r[1];
			r += 2;
			break;
		case 'n':
			*w++ = '\n';
			r += 2;
			break;
		case 't':
			*w++ = '\t';
			r += 2;
			break;
		case 'r':
			*w++ = '\r';
			r += 2;
			break;
		case 'x':
			hi = util_hexval(r[2]);
			lo = hi < 0 ? -1 : util_hexval(r[3]);
			if (lo < 0 || (hi | lo) == 0) {
				*err_col = (size_t)(r - line) + 1;
				return -EINVAL;	/* \x needs 2 digits, no NUL */
			}
			*w++ = (char)(hi << 4 | lo);
			r += 4;
			break;
		default:
			*err_col = (size_t)(r - line) + 1;
			return -EINVAL;
		}
	}
	*len = (size_t)(w - *pr);
	*w = '\0';
	r++;	/* past the closing quote */
	if (*r && !is_sep(*r)) {
		*err_col = (size_t)(r - line) + 1;
		return -EINVAL;	/* "abc"def */
	}
	*pr = r;
	return 0;
}

int plan_split(char *line, struct plan_tok *toks, size_t max_toks,
	       size_t max_len, size_t *err_col)
{
	size_t n = 0, col = 0, len;
	char *r = line;
	size_t l = strlen(line);
	int ret;

	if (!err_col)
		err_col = &col;
	*err_col = 0;
	if (l && line[l - 1] == '\n')
		line[--l] = '\0';
	if (l && line[l - 1] == '\r')
		line[--l] = '\0';

	for (;;) {
		char *start;
		bool quoted;

		while (is_sep(*r))
			r++;
		if (!*r)
			break;
		start = r;
		if (n == max_toks) {
			*err_col = (size_t)(r - line) + 1;
			return -E2BIG;
		}
		quoted = *r == '"';
		if (quoted) {
			ret = split_quoted(line, &r, &len, err_col);
			if (ret)
				return ret;
			/* the separator after it (if any) is left as is */
		} else {
			while (*r && !is_sep(*r)) {
				if (*r == '"' || is_ctl((unsigned char)*r)) {
					*err_col = (size_t)(r - line) + 1;
					return -EINVAL;
				}
				r++;
			}
			len = (size_t)(r - start);
			if (*r)
				*r++ = '\0';
		}
		if (max_len && len > max_len) {
			*err_col = (size_t)(start - line) + 1;
			return -ENAMETOOLONG;
		}
		toks[n].s = start;
		toks[n].len = len;
		toks[n].quoted = quoted;
		n++;
	}
	return (int)n;
}

int plan_parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		unsigned long d = (unsigned long)(*s - '0');

		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > max / 10 || d > max - v * 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* ---- the data lines of a `save` (plan.h) ---- */

static const char b64dig[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t plan_b64_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

void plan_b64_encode(char *dst, const void *src, size_t n)
{
	const unsigned char *p = src;
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 |
			     p[i + 2];

		*dst++ = b64dig[v >> 18];
		*dst++ = b64dig[(v >> 12) & 63];
		*dst++ = b64dig[(v >> 6) & 63];
		*dst++ = b64dig[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 |
			     (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);

		*dst++ = b64dig[v >> 18];
		*dst++ = b64dig[(v >> 12) & 63];
		*dst++ = i + 1 < n ? b64dig[(v >> 6) & 63] : '=';
		*dst++ = '=';
	}
	*dst = '\0';
}

static int b64val(char c)
{
	const char *p = c ? strchr(b64dig, c) : NULL;

	return p ? (int)(p - b64dig) : -1;
}

long plan_b64_decode(void *dst, size_t size, const char *s)
{
	unsigned char *out = dst;
	size_t len = strlen(s), w = 0, i;

	if (len % 4)
		return -EINVAL;
	for (i = 0; i < len; i += 4) {
		int a = b64val(s[i]), b = b64val(s[i + 1]);
		int c = b64val(s[i + 2]), d = b64val(s[i + 3]);
		bool last = i + 4 == len;
		size_t n = 3;
		uint32_t v;

		if (a < 0 || b < 0)
			return -EINVAL;
		if (last && s[i + 3] == '=') {
			n = s[i + 2] == '=' ? 1 : 2;
			if (n == 2 && c < 0)
				return -EINVAL;
		} else if (c < 0 || d < 0) {
			return -EINVAL;	/* '=' inside, or a stray byte */
		}
		if (w + n > size)
			return -ENOSPC;
		v = (uint32_t)a << 18 | (uint32_t)b << 12 |
		    (uint32_t)(c < 0 ? 0 : c) << 6 | (uint32_t)(d < 0 ? 0 : d);
		out[w++] = (unsigned char)(v >> 16);
		if (n > 1)
			out[w++] = (unsigned char)(v >> 8);
		if (n > 2)
			out[w++] = (unsigned char)v;
	}
	return (long)w;
}

unsigned int plan_crc32(unsigned int crc, const void *p, size_t n)
{
	static uint32_t table[256];
	const unsigned char *c = p;

	/* filled on first use; racing fillers write the same values */
	if (!table[1]) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t v = i;

			for (int k = 0; k < 8; k++)
				v = v >> 1 ^ (0xedb88320u & -(v & 1));
			table[i] = v;
		}
	}
	crc = ~crc;
	while (n--)
		crc = table[(crc ^ *c++) & 0xff] ^ crc >> 8;
	return ~crc;
}
