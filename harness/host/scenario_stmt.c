// SPDX-License-Identifier: GPL-2.0
/*
 * scenario_stmt.c - one parse function per scenario statement
 * (docs/scenario-format.md), built from the cursor primitives.
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

static int gadget_index(const struct scenario *s, const char *id)
{
	int i;

	for (i = 0; i < s->n_gadgets; i++)
		if (!strcmp(s->gadgets[i].id, id))
			return i;
	return -1;
}

/* The first copy of the gadgets declared with `copies` as group id. */
static int group_index(const struct scenario *s, const char *id)
{
	int i;

	for (i = 0; i < s->n_gadgets; i++)
		if (s->gadgets[i].copies && !strcmp(s->gadgets[i].group, id))
			return i;
	return -1;
}

/*
 * A gadget id that names a declared gadget, or the id of a `copies` group:
 * then *idx is its first copy and ps->group_n the number of copies (the
 * statement is repeated for each, sc_parse_statement), else 1.
 */
static int gadget_ref(struct parser *ps, struct cur *c, int *idx)
{
	char id[SC_ID_MAX];
	const char *at;
	int ret;

	ret = cur_bare(c, "a gadget id", id, sizeof(id), &at);
	if (ret)
		return ret;
	ps->group_n = 1;
	*idx = gadget_index(ps->s, id);
	if (*idx < 0) {
		*idx = group_index(ps->s, id);
		if (*idx >= 0)
			ps->group_n = ps->s->gadgets[*idx].copies;
	}
	if (*idx < 0)
		return cur_fail(c, at, "unknown gadget id '%s' (declare it "
				"with `gadget %s FILE` first)", id, id);
	return 0;
}

/* Gadget g (and the rest of its group, when the reference named one) is
 * attached (want) or not: the first copy that is not, or -1. */
static int attached_as(const struct parser *ps, int g, bool want)
{
	for (int k = 0; k < ps->group_n; k++)
		if (ps->attached[g + k] != want)
			return g + k;
	return -1;
}

static void set_attached(struct parser *ps, int g, bool v)
{
	for (int k = 0; k < ps->group_n; k++)
		ps->attached[g + k] = v;
}

static int need_attached(struct parser *ps, struct cur *c, const char *at,
			 int g)
{
	int bad = attached_as(ps, g, true);

	if (bad < 0)
		return 0;
	return cur_fail(c, at, "gadget '%s' is not attached at this point",
			ps->s->gadgets[bad].id);
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
			return cur_fail(c, at, "unterminated '${' in string");
		dot = memchr(p + 2, '.', (size_t)(close - p - 2));
		if (!dot)
			return cur_fail(c, at, "'%.*s': expected ${ID.dev}, "
					"${ID.busid} or ${ID.intfN}",
					(int)(close - p + 1), p);
		n = (size_t)(dot - p - 2);
		if (n >= sizeof(id))
			n = sizeof(id) - 1;
		memcpy(id, p + 2, n);
		id[n] = '\0';
		g = gadget_index(ps->s, id);
		if (g < 0)
			return cur_fail(c, at, "'%.*s': unknown gadget id '%s'",
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
				return cur_fail(c, at, "'%.*s': bad interface "
						"number", (int)(close - p + 1),
						p);
		} else {
			return cur_fail(c, at, "'%.*s': unknown attribute "
					"(dev, busid, intfN)",
					(int)(close - p + 1), p);
		}
		if (!ps->attached[g])
			return cur_fail(c, at, "'%.*s': gadget '%s' is not "
					"attached at this point",
					(int)(close - p + 1), p, id);
		p = close + 1;
	}
	return 0;
}

static struct sc_step *new_step(struct parser *ps, struct cur *c,
				enum plan_kind kind)
{
	struct sc_step *st;

	if (ps->s->n_steps >= SC_STEPS_MAX) {
		cur_fail(c, ps->stmt, "too many steps (max %d)", SC_STEPS_MAX);
		return NULL;
	}
	if (ps->s->n_steps == ps->s->cap_steps) {
		int cap = ps->s->cap_steps * 2;

		st = realloc(ps->s->steps, (size_t)cap * sizeof(*st));
		if (!st) {
			cur_fail(c, ps->stmt, "out of memory");
			return NULL;
		}
		ps->s->steps = st;
		ps->s->cap_steps = cap;
	}
	st = &ps->s->steps[ps->s->n_steps++];
	memset(st, 0, sizeof(*st));
	st->kind = kind;
	st->key = c->line;
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
	if (!cur_peek_word(c, "within"))
		return 0;
	return cur_duration(c, SC_STEP_TIMEOUT_MAX_MS, &st->timeout_ms,
			    &st->timeout_col);
}

/* `within DUR` or `for DUR`; `for` needs its duration. */
static int opt_window(struct cur *c, struct sc_step *st)
{
	st->mode = PLAN_WITHIN;
	st->timeout_ms = SC_DEF_EXPECT_MS;
	if (cur_peek_word(c, "for"))
		st->mode = PLAN_FOR;
	else if (!cur_peek_word(c, "within"))
		return 0;
	return cur_duration(c, SC_STEP_TIMEOUT_MAX_MS, &st->timeout_ms,
			    &st->timeout_col);
}

static int p_name(struct parser *ps, struct cur *c)
{
	char buf[SC_NAME_MAX];
	const char *at;
	int ret;

	if (ps->have_name)
		return cur_fail(c, ps->stmt, "a second `name` (first on line "
				"%d)", ps->name_line);
	ret = cur_bare(c, "a name", buf, sizeof(buf), &at);
	if (ret)
		return ret;
	if (!sc_valid_name(buf, true))
		return cur_fail(c, at, "bad name '%s' (letters, digits, "
				"'_', '-', '.')", buf);
	free(ps->s->name);
	ps->s->name = strdup(buf);
	if (!ps->s->name)
		return -ENOMEM;
	ps->have_name = true;
	ps->name_line = c->line;
	return cur_need_end(c);
}

static int p_timeout(struct parser *ps, struct cur *c)
{
	unsigned int ms;
	int col, ret;

	if (ps->timeout_line)
		return cur_fail(c, ps->stmt, "a second `timeout` (first on "
				"line %d)", ps->timeout_line);
	ret = cur_duration(c, SC_TIMEOUT_MAX_S * 1000, &ms, &col);
	if (ret)
		return ret;
	if (ms % 1000 || ms == 0)
		return cur_fail(c, c->bol + col - 1, "a scenario timeout is "
				"whole seconds (1s..%ds)", SC_TIMEOUT_MAX_S);
	ps->s->timeout_s = ms / 1000;
	ps->timeout_line = c->line;
	return cur_need_end(c);
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
	ret = cur_bare(c, "`module NAME`, `kernel patched`, `kernel >= VERSION`, `config NAME`, `tool NAME` or `gadget in-guest`",
		       buf, sizeof(buf), &at);
	if (ret)
		return ret;
	if (!strcmp(buf, "tool")) {
		size_t k;

		r->kind = SC_REQ_TOOL;
		ret = cur_bare(c, "a tool name", buf, sizeof(buf), &at);
		if (ret)
			return ret;
		for (k = 0; sc_tools[k] && strcmp(sc_tools[k], buf); k++)
			;
		if (!sc_tools[k])
			return cur_fail(c, at, "unknown tool '%s' (known: "
					"lsusb, tcpdump)", buf);
		r->arg = strdup(buf);
		if (!r->arg)
			return -ENOMEM;
	} else if (!strcmp(buf, "config")) {
		const char *name = buf, *p;

		r->kind = SC_REQ_CONFIG;
		ret = cur_bare(c, "a kernel config option", buf, sizeof(buf),
			       &at);
		if (ret)
			return ret;
		if (!strncmp(name, "CONFIG_", 7))
			name += 7;
		for (p = name; *p; p++)
			if (!((*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '_'))
				break;
		if (!*name || *p)
			return cur_fail(c, at, "bad config option '%s' (e.g. "
					"DYNAMIC_DEBUG or "
					"CONFIG_DYNAMIC_DEBUG)", buf);
		r->arg = malloc(strlen(name) + 8);
		if (!r->arg)
			return -ENOMEM;
		sprintf(r->arg, "CONFIG_%s", name);
	} else if (!strcmp(buf, "module")) {
		r->kind = SC_REQ_MODULE;
		ret = cur_bare(c, "a module name", buf, sizeof(buf), &at);
		if (ret)
			return ret;
		if (!sc_valid_name(buf, false))
			return cur_fail(c, at, "bad module name '%s'", buf);
		r->arg = strdup(buf);
		if (!r->arg)
			return -ENOMEM;
	} else if (!strcmp(buf, "kernel")) {
		static const char *const ops[] = { "<", "<=", "=", ">=", ">",
						   NULL };
		char ver[64];
		size_t k;

		r->kind = SC_REQ_PATCHED;
		ret = cur_bare(c, "`patched` or a comparison (`>= 6.12`)", buf,
			       sizeof(buf), &at);
		if (ret)
			return ret;
		for (k = 0; ops[k] && strcmp(ops[k], buf); k++)
			;
		if (!ops[k] && strcmp(buf, "patched"))
			return cur_fail(c, at, "unknown kernel requirement '%s' (known: patched, < <= = >= > VERSION)",
					buf);
		if (ops[k]) {
			r->kind = SC_REQ_KERNEL_VERSION;
			ret = cur_bare(c, "a kernel version (6.12)", ver,
				       sizeof(ver), &at);
			if (ret)
				return ret;
			if (ver[0] < '0' || ver[0] > '9' ||
			    ver[strspn(ver, "0123456789.")])
				return cur_fail(c, at, "bad kernel version '%s' (digits and dots: 6.12, 6.1.90)",
						ver);
			r->arg = malloc(strlen(buf) + strlen(ver) + 2);
			if (!r->arg)
				return -ENOMEM;
			sprintf(r->arg, "%s %s", buf, ver);
		}
	} else if (!strcmp(buf, "gadget")) {
		r->kind = SC_REQ_GADGET_IN_GUEST;
		ret = cur_bare(c, "`in-guest`", buf, sizeof(buf), &at);
		if (ret)
			return ret;
		if (strcmp(buf, "in-guest"))
			return cur_fail(c, at, "unknown gadget requirement "
					"'%s' (known: in-guest)", buf);
	} else {
		return cur_fail(c, at, "unknown requirement '%s' (known: "
				"module, kernel, config, tool, gadget)", buf);
	}
	r->col = cur_col(c, at);
	s->n_reqs++;
	return cur_need_end(c);
}

static int p_skip(struct parser *ps, struct cur *c)
{
	const char *at;
	int ret;

	if (ps->s->skip)
		return cur_fail(c, ps->stmt, "a second `skip`");
	ret = cur_string(c, "the reason", &ps->s->skip, &at);
	return ret ? ret : cur_need_end(c);
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

/*
 * `copies N` after `gadget ID FILE` (the gadget just declared): N gadgets
 * ID_1 .. ID_N of the same file, each a device of its own; a statement
 * naming ID is done for each in turn.
 */
static int p_copies(struct parser *ps, struct cur *c, const char *id)
{
	struct scenario *s = ps->s;
	struct sc_gadget *first = &s->gadgets[s->n_gadgets - 1];
	char num[16], *end;
	const char *at;
	unsigned long n;
	int ret;

	ret = cur_bare(c, "a number of copies", num, sizeof(num), &at);
	if (ret)
		return ret;
	n = strtoul(num, &end, 10);
	if (*end || num[0] < '1' || num[0] > '9' || n < 2 ||
	    n > (unsigned long)(SC_GADGETS_MAX - s->n_gadgets + 1))
		return cur_fail(c, at, "copies: '%s' is not a number from 2 "
				"to %d (at most %d gadgets a scenario)", num,
				SC_GADGETS_MAX - s->n_gadgets + 1,
				SC_GADGETS_MAX);
	if (strlen(id) + 1 + strlen(num) >= SC_ID_MAX)
		return cur_fail(c, at, "gadget id '%s' is too long for %lu "
				"copies", id, n);
	for (int k = 0; k < (int)n; k++) {
		struct sc_gadget *g = first + k;

		if (k) {
			*g = *first;
			g->path = strdup(first->path);
			if (!g->path)
				return -ENOMEM;
			s->n_gadgets++;
		}
		snprintf(g->id, sizeof(g->id), "%s_%d", id, k + 1);
		snprintf(g->group, sizeof(g->group), "%s", id);
		g->copies = (int)n;
	}
	for (int k = 0; k < (int)n; k++)
		if (gadget_index(s, first[k].id) != (int)(first - s->gadgets) + k)
			return cur_fail(c, at, "gadget id '%s' declared twice",
					first[k].id);
	return 0;
}

static int p_gadget(struct parser *ps, struct cur *c)
{
	struct scenario *s = ps->s;
	struct sc_gadget *g;
	char id[SC_ID_MAX], msg[512];
	const char *at, *pat;
	char *path;
	int ret;

	ret = cur_bare(c, "a gadget id", id, sizeof(id), &at);
	if (ret)
		return ret;
	if (id[0] < 'a' || id[0] > 'z' || !sc_valid_name(id, false) ||
	    strchr(id, '-'))
		return cur_fail(c, at, "bad gadget id '%s' (a lower-case "
				"letter, then letters, digits, '_')", id);
	if (gadget_index(s, id) >= 0 || group_index(s, id) >= 0)
		return cur_fail(c, at, "gadget id '%s' declared twice", id);
	if (s->n_gadgets >= SC_GADGETS_MAX)
		return cur_fail(c, at, "too many gadgets (max %d)",
				SC_GADGETS_MAX);
	ret = cur_word_or_string(c, "the gadget file", &path, &pat);
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
	if (cur_peek_word(c, "copies")) {
		ret = p_copies(ps, c, id);
		if (ret)
			return ret;
	}
	msg[0] = '\0';
	if (ps->o && ps->o->check_gadget) {
		ret = ps->o->check_gadget(ps->o->ctx, g->path, msg,
					  sizeof(msg));
	} else {
		ret = access(g->path, R_OK);
		if (ret)
			snprintf(msg, sizeof(msg), "%s", strerror(errno));
	}
	if (ret)
		return cur_fail(c, pat, "gadget file '%s': %s", g->path,
				msg[0] ? msg : "invalid");
	return cur_need_end(c);
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
		return cur_fail(c, ps->stmt, "too many `file` statements "
				"(max %d)", SC_FILES_MAX);
	ret = cur_word_or_string(c, "the host file", &src, &at);
	if (ret)
		return ret;
	from_build = !strncmp(src, build_var, sizeof(build_var) - 1);
	if (strstr(src + (from_build ? sizeof(build_var) - 1 : 0), "${")) {
		free(src);
		return cur_fail(c, at, "only `${build}/` at the start of the "
				"host file is substituted");
	}
	ret = cur_word_or_string(c, "the guest path", &dst, &dat);
	if (ret) {
		free(src);
		return ret;
	}
	why = bad_guest_path(dst);
	for (i = 0; !why && i < s->n_files; i++)
		if (!strcmp(s->files[i].dst, dst))
			why = "is already the target of a `file` statement";
	if (why) {
		ret = cur_fail(c, dat, "guest path '%s' %s", dst, why);
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
			return cur_fail(c, at, "host file '%s': %s", f->src,
					strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		return cur_fail(c, at, "host file '%s' is not a regular file",
				f->src);
	} else if (access(f->src, R_OK)) {
		return cur_fail(c, at, "host file '%s': %s", f->src,
				strerror(errno));
	}
	return cur_need_end(c);
}

static int module_arg(struct cur *c, struct sc_step *st)
{
	char buf[SC_NAME_MAX];
	const char *at;
	int ret;

	ret = cur_bare(c, "a module name", buf, sizeof(buf), &at);
	if (ret)
		return ret;
	if (!sc_valid_name(buf, false))
		return cur_fail(c, at, "bad module name '%s' (letters, digits, "
				"'_', '-')", buf);
	st->col = cur_col(c, at);
	st->path = strdup(buf);
	return st->path ? cur_need_end(c) : -ENOMEM;
}

static int p_modprobe(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, PLAN_MODPROBE);

	return st ? module_arg(c, st) : -EINVAL;
}

static int p_rmmod(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, PLAN_RMMOD);

	return st ? module_arg(c, st) : -EINVAL;
}

static int p_attach(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, PLAN_ATTACH);
	const char *at;
	size_t i;
	int ret;

	if (!st)
		return -EINVAL;
	at = (cur_skip_ws(c), c->p);
	ret = gadget_ref(ps, c, &st->gadget);
	if (ret)
		return ret;
	ret = attached_as(ps, st->gadget, false);
	if (ret >= 0)
		return cur_fail(c, at, "gadget '%s' is already attached",
				ps->s->gadgets[ret].id);
	st->mode = PLAN_VERIFY;
	for (i = 0; i < ARRAY_SIZE(plan_attach_modes); i++)
		if (cur_peek_word(c, plan_attach_modes[i])) {
			st->mode = (int)i;
			break;
		}
	ret = opt_within(c, st, SC_DEF_ATTACH_MS);
	if (ret)
		return ret;
	set_attached(ps, st->gadget, true);
	return cur_need_end(c);
}

static int p_detach(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, PLAN_DETACH);
	const char *at;
	int ret;

	if (!st)
		return -EINVAL;
	at = (cur_skip_ws(c), c->p);
	ret = gadget_ref(ps, c, &st->gadget);
	if (ret)
		return ret;
	ret = need_attached(ps, c, at, st->gadget);
	if (ret)
		return ret;
	ret = opt_within(c, st, SC_DEF_DETACH_MS);
	if (ret)
		return ret;
	set_attached(ps, st->gadget, false);
	return cur_need_end(c);
}

/* An absolute path (possibly built from substitutions). */
static int path_arg(struct parser *ps, struct cur *c, struct sc_step *st)
{
	const char *at;
	int ret;

	ret = cur_word_or_string(c, "a path", &st->path, &at);
	if (ret)
		return ret;
	st->col = cur_col(c, at);
	if (st->path[0] != '/' && strncmp(st->path, "${", 2))
		return cur_fail(c, at, "'%s' is not an absolute path",
				st->path);
	return check_subst(ps, c, at, st->path);
}

static int errno_arg(struct cur *c, int *err)
{
	char buf[SC_NAME_MAX];
	const char *at;
	int ret;

	ret = cur_bare(c, "an errno name (EINVAL, ENODEV, ...)", buf,
		       sizeof(buf), &at);
	if (ret)
		return ret;
	*err = plan_errno_value(buf);
	if (!*err)
		return cur_fail(c, at, "unknown errno name '%s'", buf);
	return 0;
}

static int p_write(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, PLAN_WRITE);
	char buf[SC_NAME_MAX];
	const char *at;
	int ret;

	if (!st)
		return -EINVAL;
	ret = path_arg(ps, c, st);
	if (ret)
		return ret;
	ret = cur_word_or_string(c, "the value to write", &st->text, &at);
	if (ret)
		return ret;
	ret = check_subst(ps, c, at, st->text);
	if (ret)
		return ret;
	if (!cur_peek_word(c, "expect"))
		return cur_fail(c, c->p, "expected `expect ok` or `expect "
				"ERRNO` after the value");
	ret = cur_bare(c, "ok or an errno name", buf, sizeof(buf), &at);
	if (ret)
		return ret;
	if (strcmp(buf, "ok")) {
		st->err = plan_errno_value(buf);
		if (!st->err)
			return cur_fail(c, at, "expected ok or an errno name, "
					"not '%s'", buf);
		if (st->err == PLAN_EPROBE_DEFER)
			return cur_fail(c, at, "a write never fails with "
					"EPROBE_DEFER (a bind reports it as "
					"EAGAIN)");
	}
	return cur_need_end(c);
}

static int p_read(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, PLAN_READ);
	const char *at;
	size_t i;
	int ret;

	if (!st)
		return -EINVAL;
	ret = path_arg(ps, c, st);
	if (ret)
		return ret;
	cur_skip_ws(c);
	at = c->p;
	for (i = 0; i < ARRAY_SIZE(plan_match_names); i++)
		if (cur_peek_word(c, plan_match_names[i]))
			break;
	if (i == ARRAY_SIZE(plan_match_names))
		return cur_fail(c, at, "expected equals, contains or "
				"not-contains");
	st->mode = (int)i;
	ret = cur_string(c, "the text", &st->text, &at);
	if (ret)
		return ret;
	ret = check_subst(ps, c, at, st->text);
	return ret ? ret : cur_need_end(c);
}

static int intf_arg(struct cur *c, struct sc_step *st)
{
	unsigned long v;
	int ret;

	ret = cur_uint(c, "an interface number", 255, &v);
	st->intf = (int)v;
	return ret;
}

static int driver_arg(struct cur *c, struct sc_step *st)
{
	char buf[SC_NAME_MAX];
	const char *at;
	int ret;

	ret = cur_bare(c, "a driver name", buf, sizeof(buf), &at);
	if (ret)
		return ret;
	if (!sc_valid_name(buf, true))
		return cur_fail(c, at, "bad driver name '%s'", buf);
	st->driver = strdup(buf);
	return st->driver ? 0 : -ENOMEM;
}

/* ID INTF, with the gadget attached */
static int intf_ref(struct parser *ps, struct cur *c, struct sc_step *st)
{
	const char *at;
	int ret;

	at = (cur_skip_ws(c), c->p);
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

	ret = cur_bare(c, what, buf, sizeof(buf), &at);
	if (ret)
		return ret;
	p = buf;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (!*p || strlen(p) > 4)
		goto bad;
	for (; *p; p++) {
		int h = util_hexval(*p);

		if (h < 0)
			goto bad;
		v = v << 4 | (unsigned int)h;
	}
	*out = v;
	return 0;
bad:
	return cur_fail(c, at, "expected %s in hex (1 to 4 digits, e.g. 1209), "
			"not '%s'", what, buf);
}

/* expect probe ID INTF DRIVER [matched M] [returns 0|ERRNO] [within D] */
/* `within DUR` among clauses that come in any order, each at most once;
 * at is where the word `within` was. */
static int within_clause(struct cur *c, const char *at, bool *seen,
			 struct sc_step *st)
{
	if (*seen)
		return cur_fail(c, at, "a second `within`");
	*seen = true;
	return cur_duration(c, SC_STEP_TIMEOUT_MAX_MS, &st->timeout_ms,
			    &st->timeout_col);
}

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
	st->mode = PLAN_MATCHED_ANY;
	st->status = -1;
	st->timeout_ms = SC_DEF_EXPECT_MS;
	while (!cur_at_end(c)) {
		at = c->p;
		if (cur_peek_word(c, "matched")) {
			if (have_matched)
				return cur_fail(c, at, "a second `matched`");
			have_matched = true;
			ret = cur_bare(c, "dynamic, static or none", buf,
				       sizeof(buf), &at);
			if (ret)
				return ret;
			for (i = PLAN_MATCHED_DYNAMIC;
			     i < ARRAY_SIZE(plan_matched_names); i++)
				if (!strcmp(buf, plan_matched_names[i]))
					break;
			if (i == ARRAY_SIZE(plan_matched_names))
				return cur_fail(c, at, "expected dynamic, "
						"static or none, not '%s'",
						buf);
			st->mode = (int)i;
		} else if (cur_peek_word(c, "returns")) {
			if (have_returns)
				return cur_fail(c, at, "a second `returns`");
			have_returns = true;
			if (cur_peek_word(c, "0")) {
				st->status = 0;
			} else {
				ret = errno_arg(c, &st->status);
				if (ret)
					return ret;
			}
		} else if (cur_peek_word(c, "within")) {
			ret = within_clause(c, at, &have_within, st);
			if (ret)
				return ret;
		} else {
			return cur_fail(c, at, "expected matched, returns or "
					"within");
		}
	}
	return 0;
}

static int p_expect(struct parser *ps, struct cur *c)
{
	static const struct {
		const char *word;
		enum plan_kind kind;
		int mode;
	} kinds[] = {
		{ "bound", PLAN_EXPECT_BOUND, 0 },
		{ "unbound", PLAN_EXPECT_UNBOUND, 0 },
		{ "probe-error", PLAN_EXPECT_PROBE_ERROR, 0 },
		{ "node", PLAN_EXPECT_NODE, 0 },
		{ "no-node", PLAN_EXPECT_NO_NODE, 0 },
		{ "kmsg", PLAN_EXPECT_KMSG, 0 },
		{ "probe", PLAN_EXPECT_PROBE, 0 },
		{ "dynid-add", PLAN_EXPECT_DYNID, PLAN_DYNID_ADD },
		{ "dynid-remove", PLAN_EXPECT_DYNID, PLAN_DYNID_REMOVE },
		{ "kernel-report", PLAN_EXPECT_REPORT, 0 },
	};
	struct sc_step *st;
	char word[SC_NAME_MAX];
	const char *at;
	size_t i;
	int ret;

	ret = cur_bare(c, "what to expect (bound, unbound, probe-error, node, "
		       "no-node, kmsg, probe, dynid-add, dynid-remove, "
		       "kernel-report)", word, sizeof(word), &at);
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(word, kinds[i].word))
			break;
	if (i == ARRAY_SIZE(kinds))
		return cur_fail(c, at, "unknown expectation '%s' (known: "
				"bound, unbound, probe-error, node, no-node, "
				"kmsg, probe, dynid-add, dynid-remove, "
				"kernel-report)", word);
	st = new_step(ps, c, kinds[i].kind);
	if (!st)
		return -EINVAL;
	st->mode = kinds[i].mode;
	switch (st->kind) {
	case PLAN_EXPECT_BOUND:
		ret = intf_ref(ps, c, st);
		if (!ret)
			ret = driver_arg(c, st);
		if (!ret)
			ret = opt_window(c, st);
		break;
	case PLAN_EXPECT_UNBOUND:
		ret = intf_ref(ps, c, st);
		if (!ret)
			ret = opt_window(c, st);
		break;
	case PLAN_EXPECT_PROBE_ERROR:
		ret = intf_ref(ps, c, st);
		if (!ret)
			ret = driver_arg(c, st);
		if (!ret)
			ret = errno_arg(c, &st->err);
		if (!ret)
			ret = opt_within(c, st, SC_DEF_EXPECT_MS);
		break;
	case PLAN_EXPECT_NODE:
	case PLAN_EXPECT_NO_NODE:
		ret = path_arg(ps, c, st);
		if (!ret)
			ret = opt_within(c, st, SC_DEF_EXPECT_MS);
		break;
	case PLAN_EXPECT_PROBE:
		ret = p_expect_probe(ps, c, st);
		break;
	case PLAN_EXPECT_DYNID:
		ret = driver_arg(c, st);
		if (!ret)
			ret = hex16_arg(c, "a vendor id", &st->vid);
		if (!ret)
			ret = hex16_arg(c, "a product id", &st->pid);
		if (!ret)
			ret = opt_within(c, st, SC_DEF_EXPECT_MS);
		break;
	case PLAN_EXPECT_REPORT:
		/* judged on the host, from the console's reports: no
		 * substitutions (the agent resolves those), no timeout (the
		 * scenario's end, cleanup included, is the window) */
		ret = cur_string(c, "the text of the report's first line",
				 &st->text, &at);
		if (!ret && !st->text[0])
			ret = cur_fail(c, at, "the text is empty (every report "
				       "would match)");
		if (!ret && strstr(st->text, "${"))
			ret = cur_fail(c, at, "no substitutions in a kernel "
				       "report's text");
		break;
	default:	/* PLAN_EXPECT_KMSG */
		ret = cur_string(c, "the text", &st->text, &at);
		if (!ret)
			ret = check_subst(ps, c, at, st->text);
		if (!ret)
			ret = opt_within(c, st, SC_DEF_EXPECT_MS);
		break;
	}
	return ret ? ret : cur_need_end(c);
}

static int p_run(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, PLAN_RUN);
	bool have_status = false, have_within = false;
	const char *at;
	int ret;

	if (!st)
		return -EINVAL;
	ret = cur_string(c, "the command", &st->path, &at);
	if (ret)
		return ret;
	ret = check_subst(ps, c, at, st->path);
	if (ret)
		return ret;
	st->status = 0;
	st->timeout_ms = SC_DEF_RUN_MS;
	while (!cur_at_end(c)) {
		at = c->p;
		if (cur_peek_word(c, "status")) {
			unsigned long v;

			if (have_status)
				return cur_fail(c, at, "a second `status`");
			have_status = true;
			if (cur_peek_word(c, "any")) {
				st->status = -1;
				continue;
			}
			ret = cur_uint(c, "an exit status (or any)", 255, &v);
			if (ret)
				return ret;
			st->status = (int)v;
		} else if (cur_peek_word(c, "output-contains")) {
			if (st->text)
				return cur_fail(c, at, "a second "
						"`output-contains`");
			ret = cur_string(c, "the text", &st->text, &at);
			if (!ret)
				ret = check_subst(ps, c, at, st->text);
			if (ret)
				return ret;
		} else if (cur_peek_word(c, "within")) {
			ret = within_clause(c, at, &have_within, st);
			if (ret)
				return ret;
		} else {
			return cur_fail(c, at, "expected status, "
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
	struct sc_step *st = new_step(ps, c, PLAN_SAVE);
	const char *at, *hat, *why;
	int ret, i;

	if (!st)
		return -EINVAL;
	ret = cur_word_or_string(c, "the guest file", &st->path, &at);
	if (ret)
		return ret;
	st->col = cur_col(c, at);
	if (st->path[0] != '/' && strncmp(st->path, "${", 2))
		return cur_fail(c, at, "the guest file must be absolute");
	ret = check_subst(ps, c, at, st->path);
	if (ret)
		return ret;
	ret = cur_word_or_string(c, "the host path", &st->text, &hat);
	if (ret)
		return ret;
	why = bad_host_path(st->text);
	for (i = 0; !why && i < ps->s->n_steps - 1; i++)
		if (ps->s->steps[i].kind == PLAN_SAVE &&
		    !strcmp(ps->s->steps[i].text, st->text)) {
			return cur_fail(c, hat, "host path '%s' is already "
					"saved to on line %d", st->text,
					ps->s->steps[i].line);
		}
	if (why)
		return cur_fail(c, hat, "host path '%s' %s", st->text, why);
	return cur_need_end(c);
}

static int p_say(struct parser *ps, struct cur *c)
{
	struct sc_step *st = new_step(ps, c, PLAN_SAY);
	const char *at;
	int ret;

	if (!st)
		return -EINVAL;
	ret = cur_string(c, "the text", &st->text, &at);
	return ret ? ret : cur_need_end(c);
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

static char *dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

/* The step just parsed named a `copies` group: the same step for copies
 * 2 .. N, right after it. */
static int repeat_for_copies(struct parser *ps, struct cur *c)
{
	const struct sc_step *st = &ps->s->steps[ps->s->n_steps - 1];
	struct sc_step model = *st;

	for (int k = 1; k < ps->group_n; k++) {
		struct sc_step *cp = new_step(ps, c, model.kind);
		bool oom = false;

		if (!cp)
			return -EINVAL;
		*cp = model;
		cp->key = ps->next_key++;
		cp->gadget = model.gadget + k;
		cp->path = dup_or_null(model.path, &oom);
		cp->text = dup_or_null(model.text, &oom);
		cp->driver = dup_or_null(model.driver, &oom);
		cp->src = dup_or_null(model.src, &oom);
		if (oom)
			return -ENOMEM;
	}
	return 0;
}

int sc_parse_statement(struct parser *ps, struct cur *c)
{
	char kw[32];
	const char *at;
	size_t i;
	int n0 = ps->s->n_steps;
	int ret;

	if (cur_at_end(c))
		return 0;
	ps->stmt = c->p;
	if (*c->p == '"')
		return cur_fail(c, c->p, "expected a statement keyword");
	ret = cur_bare(c, "a statement", kw, sizeof(kw), &at);
	if (ret)
		return cur_fail(c, at, "unknown statement '%.*s'",
				(int)cur_bare_len(c), c->p);
	for (i = 0; i < ARRAY_SIZE(statements); i++)
		if (!strcmp(kw, statements[i].kw))
			break;
	if (i == ARRAY_SIZE(statements))
		return cur_fail(c, at, "unknown statement '%s'", kw);
	ps->group_n = 1;
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
		if (PLAN_KIND_IN_PLAN(st->kind) &&
		    scenario_format_step(buf, sizeof(buf), ps->s, st) < 0)
			return cur_fail(c, ps->stmt, "statement too long for "
					"the plan (max %d bytes once quoted)",
					PLAN_LINE_MAX);
		if (ps->group_n > 1)
			return repeat_for_copies(ps, c);
	}
	return 0;
}
