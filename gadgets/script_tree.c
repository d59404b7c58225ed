// SPDX-License-Identifier: GPL-2.0
/* script_tree.c - gadget script parser, pass 2: the statement tree. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "script_int.h"

/* ------------------------------------------------------------------ */
/* pass 2: statement tree                                              */

void ps_tree_free(struct stmt *body, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		ps_tree_free(body[i].body, body[i].n_body);
	free(body);
}

/* Statements up to the '}' matching open (or to the end of the file when
 * open is NULL), appended to parent's body as they are read so that the
 * caller frees them whatever happens. */
int ps_tree(struct parser *ps, size_t *pos, int depth,
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
			return ps_fail(ps, t, "'}' without a matching '{'");
		case T_EOF:
			if (open)
				return ps_fail(ps, open, "this '{' is never closed: missing '}'");
			return 0;
		case T_WORD:
			break;
		default:
			return ps_fail(ps, t, "expected a keyword, found %s",
				       tok_desc(t).s);
		}

		if (*n_body == parent->cap_body) {
			/* geometric: a script may hold many statements */
			size_t cap = parent->cap_body ? parent->cap_body * 2 : 8;

			st = realloc(*body, cap * sizeof(*st));
			if (!st)
				return ps_oom(ps);
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
			return ps_fail(ps, t, "blocks nested more than %d deep",
				       SCRIPT_MAX_DEPTH);
		st->open = t;
		(*pos)++;
		/* *body does not move while the block is read */
		rc = ps_tree(ps, pos, depth + 1, t, &(*body)[idx]);
		if (rc)
			return rc;
		t = &ps->toks[*pos];
		if (t->kind != T_EOL && t->kind != T_RBRACE && t->kind != T_EOF)
			return ps_fail(ps, t, "unexpected %s after '}': end the line (or use ';') first",
				       tok_desc(t).s);
	}
}
