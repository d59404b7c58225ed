/* SPDX-License-Identifier: GPL-2.0 */
/*
 * script_int.h - what the files of the gadget script parser share; not an
 * API (script.h is).  One file per job:
 *	script_lex.c	errors, tokens, pass 1 (bytes to tokens)
 *	script_tree.c	pass 2 (tokens to statements)
 *	script_kw.c	the argument cursor and the keyword engine (pass 3)
 *	script_blocks.c	one keyword table and handlers per block kind
 *	script.c	the entry points, script_parse() and script_load()
 */
#ifndef USBRIG_SCRIPT_INT_H
#define USBRIG_SCRIPT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* a token as a message shows it */
struct tdesc {
	char s[80];
};


struct blk;

struct cur {
	struct parser *ps;
	const struct stmt *st;
	size_t i;
};

#define CUR(ps_, st_) { .ps = (ps_), .st = (st_), .i = 0 }


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

/* the top level of a file, where only 'device' goes (script_blocks.c) */
extern const struct block_def script_top_block;

/* ---- script_lex.c ---- */
int __attribute__((format(printf, 4, 5)))
ps_fail_at(struct parser *ps, int line, int col, const char *fmt, ...);
int __attribute__((format(printf, 3, 4)))
ps_fail(struct parser *ps, const struct tok *t, const char *fmt, ...);
int ps_oom(struct parser *ps);
struct tdesc tok_desc(const struct tok *t);
struct tdesc tok_text(const struct tok *t);
bool tok_is(const struct tok *t, const char *word);
int ps_lex(struct parser *ps, const char *text, size_t len);

/* ---- script_tree.c ---- */
void ps_tree_free(struct stmt *body, size_t n);
int ps_tree(struct parser *ps, size_t *pos, int depth,
	    const struct tok *open, struct stmt *parent);

/* ---- script_kw.c ---- */
const struct tok *cur_peek(const struct cur *c);
int cur_num(struct cur *c, unsigned int bits, uint32_t *out);
int cur_num_or_star(struct cur *c, unsigned int bits, int *out);
int cur_choice(struct cur *c, const char *const *words, int *idx);
extern const char *const ps_on_off[];
int cur_end(struct cur *c);
int cur_text(struct cur *c, const struct tok **out);
int cur_bytes(struct cur *c, struct gd_blob *blob, bool need_one);
const struct tok *blk_seen_val(const struct blk *b, int slot,
			       const struct tok *fallback);
int kw_num(struct blk *b, const struct stmt *st, const struct kw_def *d);
int kw_override(struct blk *b, const struct stmt *st,
		const struct kw_def *d);
int kw_nth(struct blk *b, const struct stmt *st, const struct kw_def *d);
int kw_onoff(struct blk *b, const struct stmt *st,
	     const struct kw_def *d);
int kw_stridx(struct blk *b, const struct stmt *st,
	      const struct kw_def *d);
int kw_text(struct blk *b, const struct stmt *st, const struct kw_def *d);
const struct kw_def *kw_lookup(const struct block_def *bd,
			       const struct tok *t);
int ps_run_block(struct blk *b);
int ps_no_args(struct blk *b, const struct stmt *st);
const char *ps_xfer_name(unsigned int xfer);

/* ---- script_blocks.c ---- */
int ps_unknown_keyword(struct blk *b, const struct stmt *st);

#endif /* USBRIG_SCRIPT_INT_H */
