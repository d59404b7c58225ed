// SPDX-License-Identifier: GPL-2.0
/*
 * scenario_plan.c - write a parsed scenario as plan lines
 * (docs/harness-design.md, "The plan").
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
	put_uint(&o, (unsigned long)st->key);
	put_word(&o, plan_kind_name(st->kind));
	switch (st->kind) {
	case PLAN_ATTACH:
		put_word(&o, gid);
		put_word(&o, plan_attach_modes[st->mode]);
		put_uint(&o, st->timeout_ms);
		break;
	case PLAN_DETACH:
		put_word(&o, gid);
		put_uint(&o, st->timeout_ms);
		break;
	case PLAN_MODPROBE:
	case PLAN_RMMOD:
		put_str(&o, st->path);
		break;
	case PLAN_WRITE:
		put_str(&o, st->path);
		put_str(&o, st->text);
		put_word(&o, st->err ? plan_errno_name(st->err) : "ok");
		break;
	case PLAN_READ:
		put_str(&o, st->path);
		put_word(&o, plan_match_names[st->mode]);
		put_str(&o, st->text);
		break;
	case PLAN_EXPECT_BOUND:
		put_word(&o, gid);
		put_uint(&o, (unsigned long)st->intf);
		put_str(&o, st->driver);
		put_word(&o, plan_window_names[st->mode]);
		put_uint(&o, st->timeout_ms);
		break;
	case PLAN_EXPECT_UNBOUND:
		put_word(&o, gid);
		put_uint(&o, (unsigned long)st->intf);
		put_word(&o, plan_window_names[st->mode]);
		put_uint(&o, st->timeout_ms);
		break;
	case PLAN_EXPECT_PROBE_ERROR:
		put_word(&o, gid);
		put_uint(&o, (unsigned long)st->intf);
		put_str(&o, st->driver);
		put_word(&o, plan_errno_name(st->err));
		put_uint(&o, st->timeout_ms);
		break;
	case PLAN_EXPECT_NODE:
	case PLAN_EXPECT_NO_NODE:
		put_str(&o, st->path);
		put_uint(&o, st->timeout_ms);
		break;
	case PLAN_EXPECT_KMSG:
		put_str(&o, st->text);
		put_uint(&o, st->timeout_ms);
		break;
	case PLAN_EXPECT_PROBE:
		put_word(&o, gid);
		put_uint(&o, (unsigned long)st->intf);
		put_str(&o, st->driver);
		put_word(&o, plan_matched_names[st->mode]);
		put_word(&o, st->status < 0 ? "-" : st->status == 0 ? "0" :
			 plan_errno_name(st->status));
		put_uint(&o, st->timeout_ms);
		break;
	case PLAN_EXPECT_DYNID: {
		char id[8];

		put_word(&o, plan_dynid_names[st->mode]);
		put_str(&o, st->driver);
		snprintf(id, sizeof(id), "%04x", st->vid);
		put_word(&o, id);
		snprintf(id, sizeof(id), "%04x", st->pid);
		put_word(&o, id);
		put_uint(&o, st->timeout_ms);
		break;
	}
	case PLAN_RUN:
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
	case PLAN_SAVE:
		put_str(&o, st->path);
		put_str(&o, st->text);
		break;
	case PLAN_SAY:
	case PLAN_EXPECT_REPORT:
		return -EINVAL;	/* host only: not in a plan */
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

	if (st->kind != PLAN_SAVE || !st->text)
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

int scenario_write_plan(FILE *f, const struct scenario *s, int remote_first)
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
		if (remote_first > 0)
			fprintf(f, "gadget %s %s 1-%d\n", s->gadgets[i].id, q,
				remote_first + i);
		else
			fprintf(f, "gadget %s %s\n", s->gadgets[i].id, q);
	}
	for (i = 0; i < s->n_steps; i++) {
		if (!PLAN_KIND_IN_PLAN(s->steps[i].kind))
			continue;
		if (scenario_format_step(buf, sizeof(buf), s,
					 &s->steps[i]) < 0)
			return -ENOSPC;
		fprintf(f, "%s\n", buf);
	}
	fprintf(f, "end\n");
	return ferror(f) ? -EIO : 0;
}
