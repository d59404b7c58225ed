// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_mutate.c - hostile variants of a gadget script.  A mutation sets
 * or adds one statement in one block of the script (docs/gadget-format.md:
 * the overrides bLength, wTotalLength, bNum*, raw bytes, stall-nth,
 * control rules, fault), so what it does to the descriptors is what the
 * language already says, and a minimised gadget is the seed plus the few
 * lines that matter, each after a `# fuzz` comment.  The text is edited,
 * not regenerated: the seed's comments and layout stay.
 *
 * The lexer below knows only what finding blocks and statements needs:
 * words, strings, comments, `\` continuations, separators and braces; the
 * gadget parser judges the result (`usbrig-gadget --check`).
 */
#include "fuzz_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const fz_block_names[FZ_BLOCK_N] = {
	[FZ_DEVICE] = "device", [FZ_CONFIG] = "config",
	[FZ_INTERFACE] = "interface", [FZ_ENDPOINT] = "endpoint",
};

/* ---- the PRNG ---- */

void fz_rng_seed(struct fz_rng *r, uint64_t seed, uint64_t stream)
{
	r->s = seed ^ (stream * 0xd1342543de82ef95ull);
	fz_rng_next(r);
}

uint64_t fz_rng_next(struct fz_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

unsigned int fz_rng_below(struct fz_rng *r, unsigned int n)
{
	return n ? (unsigned int)(fz_rng_next(r) % n) : 0;
}

/* ---- the lexer ---- */

enum tok { T_WORD, T_LBRACE, T_RBRACE, T_SEP, T_EOF, T_BAD };

struct lex {
	const char *s;
	size_t len, pos;
	size_t start;		/* of the last token */
};

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static enum tok lex_next(struct lex *l)
{
	for (;;) {
		char c;

		while (l->pos < l->len && blank(l->s[l->pos]))
			l->pos++;
		l->start = l->pos;
		if (l->pos >= l->len)
			return T_EOF;
		c = l->s[l->pos];
		if (c == '#') {
			while (l->pos < l->len && l->s[l->pos] != '\n')
				l->pos++;
			continue;
		}
		if (c == '\\') {	/* a continuation: up to the newline */
			l->pos++;
			while (l->pos < l->len && l->s[l->pos] != '\n')
				l->pos++;
			if (l->pos < l->len)
				l->pos++;
			continue;
		}
		l->pos++;
		if (c == '\n' || c == ';')
			return T_SEP;
		if (c == '{')
			return T_LBRACE;
		if (c == '}')
			return T_RBRACE;
		if (c == '"') {
			while (l->pos < l->len && l->s[l->pos] != '"' &&
			       l->s[l->pos] != '\n')
				l->pos += l->s[l->pos] == '\\' &&
					  l->pos + 1 < l->len ? 2 : 1;
			if (l->pos >= l->len || l->s[l->pos] != '"')
				return T_BAD;
			l->pos++;
			return T_WORD;
		}
		while (l->pos < l->len && !blank(l->s[l->pos]) &&
		       !strchr("{}\"#;\\\n", l->s[l->pos]))
			l->pos++;
		return T_WORD;
	}
}

static enum fz_block block_of(const char *w, size_t n)
{
	for (int k = 0; k < FZ_BLOCK_N; k++)
		if (strlen(fz_block_names[k]) == n &&
		    !memcmp(fz_block_names[k], w, n))
			return (enum fz_block)k;
	return FZ_BLOCK_N;
}

/*
 * Walk the script's blocks.  With want < FZ_BLOCK_N, stop at the idx-th
 * block of that kind: *open is the offset after its `{`, *close that of
 * its `}`.  counts (may be NULL) gets how many blocks of each kind.
 * 0 found (or, without want, lexed), -ENOENT, -EINVAL.
 */
static int walk(const char *text, size_t len, enum fz_block want, int idx,
		size_t *open, size_t *close, int counts[FZ_BLOCK_N])
{
	struct lex l = { .s = text, .len = len };
	int seen[FZ_BLOCK_N] = { 0 };
	int depth = 0, target = -1;
	enum fz_block first = FZ_BLOCK_N;
	bool at_start = true;

	for (;;) {
		enum tok t = lex_next(&l);

		switch (t) {
		case T_BAD:
			return -EINVAL;
		case T_EOF:
			if (depth)
				return -EINVAL;
			if (counts)
				memcpy(counts, seen, sizeof(seen));
			return want < FZ_BLOCK_N ? -ENOENT : 0;
		case T_SEP:
			at_start = true;
			first = FZ_BLOCK_N;
			break;
		case T_WORD:
			if (at_start)
				first = block_of(text + l.start,
						 l.pos - l.start);
			at_start = false;
			break;
		case T_LBRACE:
			if (depth >= 16)
				return -EINVAL;
			depth++;
			if (first < FZ_BLOCK_N) {
				if (first == want && seen[first] == idx &&
				    target < 0) {
					target = depth;
					*open = l.pos;
				}
				seen[first]++;
			}
			at_start = true;
			first = FZ_BLOCK_N;
			break;
		case T_RBRACE:
			if (!depth)
				return -EINVAL;
			if (depth == target) {
				*close = l.start;
				return 0;
			}
			depth--;
			at_start = true;
			first = FZ_BLOCK_N;
			break;
		}
	}
}

int fz_count_blocks(const char *text, int counts[FZ_BLOCK_N])
{
	return walk(text, strlen(text), FZ_BLOCK_N, 0, NULL, NULL, counts);
}

static bool in_list(const char *kws, const char *w, size_t n)
{
	const char *p = kws;

	while (*p) {
		size_t k = strcspn(p, " ");

		if (k == n && !memcmp(p, w, n))
			return true;
		p += k;
		p += strspn(p, " ");
	}
	return false;
}

/* Blank out the statements of text[open..close) at its own level whose
 * keyword is in kws (their bytes become spaces: offsets stay). */
static void remove_kws(char *text, size_t open, size_t close,
		       const char *kws)
{
	struct lex l = { .s = text, .len = close, .pos = open };
	size_t from = 0;
	bool at_start = true, cut = false;
	int depth = 0;

	for (;;) {
		enum tok t = lex_next(&l);
		bool end = t == T_EOF || t == T_BAD ||
			   (depth == 0 && (t == T_SEP || t == T_LBRACE ||
					   t == T_RBRACE));

		if (cut && end) {
			memset(text + from, ' ', l.start - from);
			cut = false;
		}
		if (t == T_EOF || t == T_BAD)
			return;
		if (t == T_LBRACE)
			depth++;
		else if (t == T_RBRACE && depth)
			depth--;
		if (t == T_WORD && at_start && depth == 0 &&
		    in_list(kws, text + l.start, l.pos - l.start)) {
			cut = true;
			from = l.start;
		}
		at_start = t != T_WORD;
	}
}

void fz_mut_describe(const struct fz_mut *m, char *buf, size_t size)
{
	snprintf(buf, size, "%s %d: %s", fz_block_names[m->block], m->index,
		 m->line);
}

int fz_mut_apply(const char *text, const struct fz_mut *m, int tag,
		 char **out)
{
	size_t len = strlen(text), open = 0, close = 0, add, at;
	char *base, *t;
	char indent[40] = "";
	int ret, n, ind;

	ret = walk(text, len, m->block, m->index, &open, &close, NULL);
	if (ret)
		return ret;
	add = strlen(m->kind) + strlen(m->line) + 32 + 2 * 32;
	if (len + add > FZ_TEXT_MAX)
		return -E2BIG;
	base = strdup(text);
	t = malloc(len + add + 1);
	if (!base || !t) {
		free(base);
		free(t);
		return -ENOMEM;
	}
	if (m->kws[0])
		remove_kws(base, open, close, m->kws);
	/* the note is a comment, so a line of its own; the statement too,
	 * after the rest of the line that opens the block and indented as
	 * the block's next line, so the script still reads as written */
	at = open;
	at += strspn(base + at, " \t");
	if (base[at] == '#')
		at += strcspn(base + at, "\n");
	if (base[at] == '\n') {
		size_t ls = open;

		while (ls && base[ls - 1] != '\n')
			ls--;
		ind = (int)strspn(base + ls, " \t");
		if (ind > 28)
			ind = 28;
		memcpy(indent, base + ls, (size_t)ind);
		/* one level deeper, in the file's own kind of indent */
		memcpy(indent + ind, ind && base[ls] == '\t' ? "\t" : "    ",
		       ind && base[ls] == '\t' ? 2 : 5);
		at++;
	} else {
		at = open;
	}
	memcpy(t, base, at);
	n = snprintf(t + at, add + 1, "%s%s# fuzz M%d (%s)\n%s%s\n",
		     at == open ? "\n" : "", indent, tag, m->kind, indent,
		     m->line);
	if (n < 0 || (size_t)n > add) {
		free(base);
		free(t);
		return -E2BIG;
	}
	memcpy(t + at + (size_t)n, base + at, len - at + 1);
	free(base);
	*out = t;
	return 0;
}

int fz_mut_apply_all(const char *text, const struct fz_mut *v, int n,
		     const bool *use, char **out)
{
	char *cur = strdup(text), *next;

	if (!cur)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		int ret;

		if (use && !use[i])
			continue;
		ret = fz_mut_apply(cur, &v[i], i, &next);
		free(cur);
		if (ret)
			return ret;
		cur = next;
	}
	*out = cur;
	return 0;
}

/* ---- what to mutate ---- */

/* interface classes worth a driver (cls, subclass, protocol) */
static const uint8_t classes[][3] = {
	{ 0x01, 0x01, 0x00 }, { 0x01, 0x02, 0x00 }, { 0x01, 0x03, 0x00 },
	{ 0x02, 0x02, 0x01 }, { 0x02, 0x06, 0x00 }, { 0x02, 0x0d, 0x00 },
	{ 0x02, 0x0e, 0x00 }, { 0x03, 0x00, 0x00 }, { 0x03, 0x01, 0x01 },
	{ 0x03, 0x01, 0x02 }, { 0x07, 0x01, 0x02 }, { 0x08, 0x06, 0x50 },
	{ 0x08, 0x06, 0x62 }, { 0x09, 0x00, 0x00 }, { 0x0a, 0x00, 0x00 },
	{ 0x0e, 0x01, 0x00 }, { 0x0e, 0x02, 0x00 }, { 0x10, 0x01, 0x00 },
	{ 0xe0, 0x01, 0x03 }, { 0xef, 0x04, 0x01 }, { 0xfe, 0x01, 0x01 },
	{ 0xff, 0xff, 0xff }, { 0xff, 0x00, 0x00 },
};

static const unsigned int u8_odd[] = { 0, 1, 2, 3, 7, 8, 9, 0x7f, 0x80,
				       0xfe, 0xff };
static const unsigned int u16_odd[] = { 0, 1, 2, 4, 8, 9, 18, 0x3f, 0x40,
					0x41, 0x1ff, 0x400, 0x7ff, 0x1800,
					0x8000, 0xfffe, 0xffff };

#define PICK(r, a)	((a)[fz_rng_below(r, sizeof(a) / sizeof((a)[0]))])

static void set(struct fz_mut *m, enum fz_block b, int idx, const char *kind,
		const char *kws)
{
	m->block = b;
	m->index = idx;
	snprintf(m->kind, sizeof(m->kind), "%s", kind);
	snprintf(m->kws, sizeof(m->kws), "%s", kws);
}

static int put(struct fz_mut *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int put(struct fz_mut *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(m->line, sizeof(m->line), fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= sizeof(m->line) ? -E2BIG : 0;
}

static unsigned int u8r(struct fz_rng *r)
{
	return fz_rng_below(r, 2) ? PICK(r, u8_odd) : fz_rng_below(r, 256);
}

/* A class-specific descriptor (CDC, HID, UAC, UVC), its lengths and
 * counts bent, as raw bytes for an interface's extra. */
static void class_desc(struct fz_rng *r, struct fz_mut *m)
{
	unsigned int a = u8r(r), b = u8r(r), c = u8r(r);

	switch (fz_rng_below(r, 9)) {
	case 0:	/* CDC header + union naming interfaces a, b */
		put(m, "raw 05 24 00 10 01 05 24 06 %02x %02x", a, b);
		break;
	case 1:	/* CDC union cut short, or longer than it is */
		put(m, "raw %02x 24 06 %02x", a % 8, b);
		break;
	case 2:	/* CDC call management: data interface a */
		put(m, "raw 05 24 00 10 01 05 24 01 03 %02x 04 24 02 %02x",
		    a, b);
		break;
	case 3:	/* CDC ethernet: iMACAddress a, wMaxSegmentSize b */
		put(m, "raw 05 24 00 10 01 0d 24 0f %02x 00 00 00 00 %02x %02x 00 00 00",
		    a, b, c);
		break;
	case 4:	/* CDC NCM / MBIM functional descriptors, lengths bent */
		put(m, "raw 05 24 00 10 01 %02x 24 1a 00 01 %02x 0c 24 1b 00 01 %02x 02 20 %02x 00 00 00",
		    6 + a % 3, b, c, a);
		break;
	case 5:	/* HID descriptor: report descriptor length b:a, c descs */
		put(m, "raw 09 21 11 01 00 %02x 22 %02x %02x", c % 4, a, b);
		break;
	case 6:	/* UAC1 AC header: wTotalLength b:a, c streaming ifaces */
		put(m, "raw %02x 24 01 00 01 %02x %02x %02x 01 02", 8 + c % 4,
		    a, b, c);
		break;
	case 7:	/* UVC VC header: wTotalLength, bInCollection c */
		put(m, "raw 0d 24 01 00 01 %02x %02x 00 6c dc 02 %02x 01",
		    a, b, c);
		break;
	default:	/* UAC2 clock source, cut or bent */
		put(m, "raw %02x 24 0a %02x 03 07 00 00", a % 9, b);
		break;
	}
}

/* A descriptor where it does not belong, or broken in itself. */
static void nesting(struct fz_rng *r, struct fz_mut *m)
{
	unsigned int a = u8r(r), b = u8r(r);

	switch (fz_rng_below(r, 6)) {
	case 0:	/* an interface descriptor claiming a endpoints */
		put(m, "raw 09 04 %02x 00 %02x ff 00 00 00", b % 4, a);
		break;
	case 1:	/* an endpoint descriptor out of place */
		put(m, "raw 07 05 %02x %02x 40 00 01", 0x80 | (a & 0x8f),
		    b & 3);
		break;
	case 2:	/* bLength 0 or 1: a descriptor that never ends */
		put(m, "raw %02x %02x", a % 2, b);
		break;
	case 3:	/* bLength past the end of the configuration */
		put(m, "raw %02x 24 01", 0x20 | a);
		break;
	case 4:	/* an IAD over interfaces that are not there */
		put(m, "raw 08 0b %02x %02x 02 02 01 00", a % 8, b);
		break;
	default:	/* a SuperSpeed companion where none belongs */
		put(m, "raw 06 30 %02x %02x 00 00", a, b);
		break;
	}
}

static int draw_one(struct fz_rng *r, const int counts[FZ_BLOCK_N],
		    struct fz_mut *m)
{
	int cfg = counts[FZ_CONFIG] ? (int)fz_rng_below(r,
				(unsigned int)counts[FZ_CONFIG]) : -1;
	int itf = counts[FZ_INTERFACE] ? (int)fz_rng_below(r,
				(unsigned int)counts[FZ_INTERFACE]) : -1;
	int ep = counts[FZ_ENDPOINT] ? (int)fz_rng_below(r,
				(unsigned int)counts[FZ_ENDPOINT]) : -1;
	const uint8_t *c;

	memset(m, 0, sizeof(*m));
	switch (fz_rng_below(r, 12)) {
	case 0:	/* counts */
		switch (fz_rng_below(r, 3)) {
		case 0:
			if (itf < 0)
				return -ENOENT;
			set(m, FZ_INTERFACE, itf, "count", "bNumEndpoints");
			return put(m, "bNumEndpoints %u", PICK(r, u8_odd));
		case 1:
			if (cfg < 0)
				return -ENOENT;
			set(m, FZ_CONFIG, cfg, "count", "bNumInterfaces");
			return put(m, "bNumInterfaces %u", PICK(r, u8_odd));
		default:
			set(m, FZ_DEVICE, 0, "count", "bNumConfigurations");
			return put(m, "bNumConfigurations %u",
				   PICK(r, u8_odd));
		}
	case 1:	/* lengths */
		switch (fz_rng_below(r, 4)) {
		case 0:
			if (itf < 0)
				return -ENOENT;
			set(m, FZ_INTERFACE, itf, "length", "bLength");
			break;
		case 1:
			if (ep < 0)
				return -ENOENT;
			set(m, FZ_ENDPOINT, ep, "length", "bLength");
			break;
		case 2:
			if (cfg < 0)
				return -ENOENT;
			set(m, FZ_CONFIG, cfg, "length", "bLength");
			break;
		default:
			set(m, FZ_DEVICE, 0, "length", "bLength");
			break;
		}
		return put(m, "bLength %u", PICK(r, u8_odd));
	case 2:	/* wTotalLength lies */
		if (cfg < 0)
			return -ENOENT;
		set(m, FZ_CONFIG, cfg, "total", "wTotalLength");
		return put(m, "wTotalLength %u", PICK(r, u16_odd));
	case 3:	/* endpoint types and sizes */
		if (ep < 0)
			return -ENOENT;
		if (fz_rng_below(r, 2)) {
			set(m, FZ_ENDPOINT, ep, "type", "type bmAttributes");
			return put(m, "bmAttributes 0x%02x", u8r(r));
		}
		set(m, FZ_ENDPOINT, ep, "length", "wMaxPacketSize");
		return put(m, "wMaxPacketSize 0x%04x", PICK(r, u16_odd));
	case 4:	/* interface class: another driver's */
		if (itf < 0)
			return -ENOENT;
		c = PICK(r, classes);
		set(m, FZ_INTERFACE, itf, "class",
		    "bInterfaceClass bInterfaceSubClass bInterfaceProtocol");
		return put(m, "bInterfaceClass 0x%02x; bInterfaceSubClass 0x%02x; bInterfaceProtocol 0x%02x",
			   c[0], c[1], c[2]);
	case 5:
	case 6:	/* class-specific descriptors */
		if (itf < 0)
			return -ENOENT;
		set(m, FZ_INTERFACE, itf, "class-desc", "");
		class_desc(r, m);
		return 0;
	case 7:	/* order and nesting */
		if (fz_rng_below(r, 2) && ep >= 0)
			set(m, FZ_ENDPOINT, ep, "nesting", "");
		else if (itf >= 0 && fz_rng_below(r, 2))
			set(m, FZ_INTERFACE, itf, "nesting", "");
		else if (cfg >= 0)
			set(m, FZ_CONFIG, cfg, "nesting", "");
		else
			return -ENOENT;
		nesting(r, m);
		return 0;
	case 8:	/* a STALL on an endpoint */
		if (ep < 0)
			return -ENOENT;
		set(m, FZ_ENDPOINT, ep, "stall", "stall-nth");
		return put(m, "stall-nth %u", 1 + fz_rng_below(r, 4));
	case 9:	/* a STALL on ep0: a descriptor, or every class request */
		set(m, FZ_DEVICE, 0, "stall", "");
		switch (fz_rng_below(r, 3)) {
		case 0:
			return put(m, "control { bmRequestType 0x80; bRequest 0x06; wValue 0x%04x; stall; times %u }",
				   fz_rng_below(r, 2) ? 0x0200 : 0x0100,
				   1 + fz_rng_below(r, 3));
		case 1:
			return put(m, "control { bmRequestType 0x80; bRequest 0x06; wValue 0x03%02x; stall }",
				   fz_rng_below(r, 4));
		default:
			return put(m, "control { bmRequestType 0x%02x; bRequest *; stall-nth %u; ack }",
				   fz_rng_below(r, 2) ? 0xa1 : 0xc0,
				   1 + fz_rng_below(r, 3));
		}
	case 10:	/* a disconnect at an odd point */
		set(m, FZ_DEVICE, 0, "disconnect", "fault");
		if (fz_rng_below(r, 2))
			return put(m, "fault disconnect-after-urbs %u",
				   1 + fz_rng_below(r, 40));
		return put(m, "fault disconnect-after-ms %u",
			   20 + fz_rng_below(r, 1500));
	default:	/* the device class */
		c = PICK(r, classes);
		set(m, FZ_DEVICE, 0, "class",
		    "bDeviceClass bDeviceSubClass bDeviceProtocol");
		return put(m, "bDeviceClass 0x%02x; bDeviceSubClass 0x%02x; bDeviceProtocol 0x%02x",
			   c[0], c[1], c[2]);
	}
}

int fz_mut_draw(struct fz_rng *r, const int counts[FZ_BLOCK_N],
		struct fz_mut *v, int max)
{
	int want = 1 + (int)fz_rng_below(r, (unsigned int)max), n = 0;

	for (int tries = 0; n < want && tries < 8 * max; tries++)
		if (!draw_one(r, counts, &v[n]))
			n++;
	return n;
}

int fz_mut_class_desc(struct fz_rng *r, const int counts[FZ_BLOCK_N],
		      struct fz_mut *m)
{
	if (!counts[FZ_INTERFACE])
		return -ENOENT;
	memset(m, 0, sizeof(*m));
	set(m, FZ_INTERFACE, (int)fz_rng_below(r,
			(unsigned int)counts[FZ_INTERFACE]), "class-desc", "");
	class_desc(r, m);
	return 0;
}

void fz_mut_planted(struct fz_mut *m)
{
	memset(m, 0, sizeof(*m));
	set(m, FZ_INTERFACE, 0, "planted",
	    "bInterfaceClass bInterfaceSubClass bInterfaceProtocol");
	put(m, "bInterfaceClass 0xe0; bInterfaceSubClass 0x01; bInterfaceProtocol 0x01");
}
