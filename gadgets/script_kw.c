// SPDX-License-Identifier: GPL-2.0
/* script_kw.c - gadget script parser, pass 3: argument cursor, keywords. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/usb/ch9.h>

#include "desc.h"
#include "script_int.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* argument cursor                                                     */
const struct tok *cur_peek(const struct cur *c)
{
	return c->i < c->st->n_args ? &c->st->args[c->i] : NULL;
}

/* decimal or 0x hex, saturated just above 32 bits; -1 if not a number */
static int tok_number(const struct tok *t, uint64_t *v)
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
		int d = util_hexval(s[i]);

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
static int tok_byte(const struct tok *t, uint8_t *v)
{
	if (t->kind != T_WORD)
		return -1;
	return util_hexbyte(t->text, t->len, v) ? -1 : 0;
}

int cur_num(struct cur *c, unsigned int bits, uint32_t *out)
{
	const struct tok *t = cur_peek(c);
	uint64_t v;

	if (!t)
		return ps_fail(c->ps, c->st->kw, "%s: missing value: expected a number",
			       tok_text(c->st->kw).s);
	if (tok_number(t, &v))
		return ps_fail(c->ps, t, "%s: expected a number (decimal or 0x hex), found %s",
			       tok_text(c->st->kw).s, tok_desc(t).s);
	if (v >> bits)
		return ps_fail(c->ps, t, "%s: %s does not fit in %u bits",
			       tok_text(c->st->kw).s, tok_text(t).s, bits);
	*out = (uint32_t)v;
	c->i++;
	return 0;
}

/* a number, or '*' for "any" (-1) */
int cur_num_or_star(struct cur *c, unsigned int bits, int *out)
{
	const struct tok *t = cur_peek(c);
	uint32_t v;
	int rc;

	if (t && t->kind == T_STAR) {
		*out = -1;
		c->i++;
		return 0;
	}
	if (t && tok_number(t, &(uint64_t){ 0 }))
		return ps_fail(c->ps, t, "%s: expected a number or '*', found %s",
			       tok_text(c->st->kw).s, tok_desc(t).s);
	rc = cur_num(c, bits, &v);
	if (!rc)
		*out = (int)v;
	return rc;
}

/* one word out of a NULL-terminated list; *idx its position */
int cur_choice(struct cur *c, const char *const *words, int *idx)
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
		return ps_fail(c->ps, c->st->kw, "%s: missing value: expected %s",
			       tok_text(c->st->kw).s, list);
	return ps_fail(c->ps, t, "%s: expected %s, found %s",
		       tok_text(c->st->kw).s, list, tok_desc(t).s);
}

const char *const ps_on_off[] = { "on", "off", NULL };

/* nothing may follow */
int cur_end(struct cur *c)
{
	const struct tok *t = cur_peek(c);

	if (!t)
		return 0;
	return ps_fail(c->ps, t, "%s: unexpected %s (one statement per line; ';' also ends one)",
		       tok_text(c->st->kw).s, tok_desc(t).s);
}

int cur_text(struct cur *c, const struct tok **out)
{
	const struct tok *t = cur_peek(c);
	long units;

	if (!t)
		return ps_fail(c->ps, c->st->kw, "%s: missing value: expected a quoted string",
			       tok_text(c->st->kw).s);
	if (t->kind != T_STRING)
		return ps_fail(c->ps, t, "%s: expected a quoted string, found %s",
			       tok_text(c->st->kw).s, tok_desc(t).s);
	if (memchr(t->text, 0, t->len))
		return ps_fail(c->ps, t, "%s: a NUL byte cannot be part of this string",
			       tok_text(c->st->kw).s);
	units = desc_utf16_units(t->text, t->len);
	if (units < 0)
		return ps_fail(c->ps, t, "%s: not valid UTF-8",
			       tok_text(c->st->kw).s);
	if (units > STRING_MAX_UNITS)
		return ps_fail(c->ps, t, "%s: %ld characters (UTF-16 code units), a string descriptor holds at most %d",
			       tok_text(c->st->kw).s, units, STRING_MAX_UNITS);
	*out = t;
	c->i++;
	return 0;
}

/* every remaining argument as bytes, appended to blob; a quoted string
 * contributes its bytes as they are */
int cur_bytes(struct cur *c, struct gd_blob *blob, bool need_one)
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

			if (tok_byte(t, &v))
				return ps_fail(c->ps, t, "%s: expected a hex byte (two hex digits such as 0a, or 0x0a), found %s",
					       tok_text(c->st->kw).s,
					       tok_desc(t).s);
			if (n == room)
				goto full;
			tmp[n++] = v;
		}
		c->i++;
	}
	if (need_one && !n && !blob->len)
		return ps_fail(c->ps, c->st->kw, "%s: expected hex bytes",
			       tok_text(c->st->kw).s);
	if (!n)
		return 0;
	p = realloc(blob->data, blob->len + n);
	if (!p)
		return ps_oom(c->ps);
	memcpy(p + blob->len, tmp, n);
	blob->data = p;
	blob->len += n;
	return 0;
full:
	return ps_fail(c->ps, t, "%s: more than %d bytes in one place (the limit of one descriptor run, reply or packet)",
		       tok_text(c->st->kw).s, GD_MAX_BLOB);
}

/* ------------------------------------------------------------------ */
/* pass 3: blocks and their keywords                                   */
/* the value token of a slot's statement, or the fallback */
const struct tok *blk_seen_val(const struct blk *b, int slot,
			       const struct tok *fallback)
{
	const struct stmt *s = b->seen[slot];

	return s && s->n_args ? &s->args[0] : fallback;
}

static void kw_store(void *base, size_t off, unsigned int bits, uint32_t v)
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
int kw_num(struct blk *b, const struct stmt *st, const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int rc = cur_num(&c, d->bits, &v) ?: cur_end(&c);

	if (!rc)
		kw_store(b->model, d->off, d->bits, v);
	return rc;
}

/* an int override field (-1 unless given) */
int kw_override(struct blk *b, const struct stmt *st,
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
int kw_nth(struct blk *b, const struct stmt *st, const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int rc = cur_num(&c, 32, &v) ?: cur_end(&c);

	if (rc)
		return rc;
	if (!v)
		return ps_fail(b->ps, &st->args[0], "%s: counts from 1",
			       tok_text(st->kw).s);
	kw_store(b->model, d->off, 32, v);
	return 0;
}

int kw_onoff(struct blk *b, const struct stmt *st,
	     const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	int i, rc = cur_choice(&c, ps_on_off, &i) ?: cur_end(&c);

	if (!rc)
		*(bool *)((char *)b->model + d->off) = i == 0;
	return rc;
}

/* iXxx N: an explicit string index, kept free of automatic ones */
int kw_stridx(struct blk *b, const struct stmt *st,
	      const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int rc = cur_num(&c, 8, &v) ?: cur_end(&c);

	if (rc)
		return rc;
	kw_store(b->model, d->off, 8, v);
	b->ps->str_named[v] = true;
	return 0;
}

/* manufacturer "text": the string gets the next free index at the end */
int kw_text(struct blk *b, const struct stmt *st, const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	struct pending_str *p;
	const struct tok *t;
	int rc = cur_text(&c, &t) ?: cur_end(&c);

	if (rc)
		return rc;
	p = PUSH(b->ps->pend, b->ps->n_pend);
	if (!p)
		return ps_oom(b->ps);
	p->tok = t;
	p->level = b->level;
	p->ci = b->ci;
	p->idx = b->idx;
	p->off = d->off;
	return 0;
}

const struct kw_def *kw_lookup(const struct block_def *bd,
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
int ps_run_block(struct blk *b)
{
	int pass, rc;
	size_t i;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < b->st->n_body; i++) {
			const struct stmt *s = &b->st->body[i];
			const struct kw_def *d = kw_lookup(b->def, s->kw);

			if (!d) {
				if (pass)
					return ps_unknown_keyword(b, s);
				continue;
			}
			if (d->early != !pass)
				continue;
			if (d->block == NOBLK && s->open)
				return ps_fail(b->ps, s->open, "'%s' takes no block",
					       d->name);
			if (d->block == NEEDBLK && !s->open)
				return ps_fail(b->ps, s->kw, "'%s' needs a block: %s { ... }",
					       d->name, d->name);
			if (d->slot >= 0) {
				const struct stmt *prev = b->seen[d->slot];

				if (prev && d->block == NEEDBLK)
					return ps_fail(b->ps, s->kw, "only one '%s' block is allowed here (the first is at line %d)",
						       d->name, prev->kw->line);
				if (prev && tok_is(prev->kw, d->name))
					return ps_fail(b->ps, s->kw, "%s is set twice (first at line %d)",
						       d->name, prev->kw->line);
				if (prev)
					return ps_fail(b->ps, s->kw, "'%s' conflicts with '%s' at line %d: give only one of them",
						       d->name, tok_text(prev->kw).s,
						       prev->kw->line);
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
int ps_no_args(struct blk *b, const struct stmt *st)
{
	struct cur c = CUR(b->ps, st);

	return cur_end(&c);
}

const char *ps_xfer_name(unsigned int xfer)
{
	static const char *const names[] = {
		"control", "isochronous", "bulk", "interrupt",
	};

	return names[xfer & USB_ENDPOINT_XFERTYPE_MASK];
}
