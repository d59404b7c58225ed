// SPDX-License-Identifier: GPL-2.0
/*
 * steps.c - one function per step kind of docs/harness-design.md ("Step
 * kinds").  Each prints exactly one result line through finish().
 *
 * Bound means both: the sysfs driver link names the driver, and the last
 * bind/unbind uevent for that interface since it was added is a bind with
 * DRIVER=<driver>.  The kernel creates the link before calling probe and
 * removes it when probe fails, but sends the bind uevent only on success
 * (drivers/base/dd.c driver_bound()), so a poller can see a link that is
 * no bind; the uevent can't lie that way.
 */
#define _GNU_SOURCE
#include "agent.h"
#include "plan.h"
#include "plan_words.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define POLL_MS		10
#define MODPROBE_MS	60000
#define TRACE_GRACE_MS	1000	/* for a trace record after its uevent */
#define READ_MAX	65536
#define SUBST_MAX	(AG_TEXT_MAX)

struct step {
	int line;
	const char *kind;
	const struct plan_tok *a;	/* the arguments after KIND */
	int n;
	char desc[512];
	char saw[AG_TEXT_MAX];
	char extra[128];
};

static int finish(struct step *s, int ok)
{
	if (!ok && cur && now_us() >= cur->deadline_us) {
		char tmp[AG_TEXT_MAX];

		strfmt(tmp, sizeof(tmp), "scenario timeout; %s", s->saw);
		strfmt(s->saw, sizeof(s->saw), "%s", tmp);
	}
	out_result(ok ? "ok" : "fail", s->line, s->desc, ok ? NULL : s->saw,
		   s->extra[0] ? s->extra : NULL);
	return ok ? 0 : -1;
}

static int bad_plan(struct step *s, const char *why)
{
	strfmt(s->saw, sizeof(s->saw), "bad plan line (%s %s): %s",
		 s->kind, s->n ? s->a[0].s : "", why);
	return finish(s, 0);
}

static uint64_t step_deadline(unsigned long timeout_ms)
{
	uint64_t d = now_us() + timeout_ms * 1000ull;

	return cur && cur->deadline_us < d ? cur->deadline_us : d;
}

/* The name of an errno the agent saw: the plan's, else glibc's. */
static const char *errno_name(int e)
{
	const char *n = plan_errno_name(e);

	if (!n)
		n = strerrorname_np(e);
	return n ? n : "E?";
}

/* The index of argument i in words[n] (plan_words.h), or -1. */
static int arg_word(const struct step *s, int i, const char *const *words,
		    size_t n)
{
	return plan_word_index(words, n, s->a[i].s);
}

static struct gadget *gadget_by_id(const char *id)
{
	for (int i = 0; cur && i < cur->n_gadgets; i++)
		if (!strcmp(cur->g[i].id, id))
			return &cur->g[i];
	return NULL;
}

/*
 * Expand ${ID.dev}, ${ID.busid} and ${ID.intfN} in `in`.  0, or -1 with
 * the reason in err.
 */
static int subst(const char *in, char *out, size_t size, char *err,
		 size_t errlen)
{
	size_t w = 0;

	while (*in) {
		const char *end, *dot;
		char id[AG_ID_MAX], field[32], val[64];
		struct gadget *g;
		size_t l;

		if (in[0] != '$' || in[1] != '{') {
			if (w + 1 >= size)
				goto long_;
			out[w++] = *in++;
			continue;
		}
		end = strchr(in, '}');
		dot = end ? memchr(in, '.', (size_t)(end - in)) : NULL;
		if (!dot || (size_t)(dot - in - 2) >= sizeof(id) ||
		    (size_t)(end - dot - 1) >= sizeof(field)) {
			strfmt(err, errlen, "bad substitution in \"%s\"", in);
			return -1;
		}
		strfmt(id, sizeof(id), "%.*s", (int)(dot - in - 2), in + 2);
		strfmt(field, sizeof(field), "%.*s", (int)(end - dot - 1),
			 dot + 1);
		g = gadget_by_id(id);
		if (!g) {
			strfmt(err, errlen, "${%s.%s}: no gadget %s", id,
				 field, id);
			return -1;
		}
		if (!strcmp(field, "busid")) {
			strfmt(val, sizeof(val), "%s", g->busid);
		} else if (!strcmp(field, "dev")) {
			if (!usb_gadget_dev(g)[0]) {
				strfmt(err, errlen, "${%s.dev}: %s has no device (not attached?)",
					 id, id);
				return -1;
			}
			strfmt(val, sizeof(val), "%s", g->dev);
		} else if (!strncmp(field, "intf", 4) && field[4] &&
			   strspn(field + 4, "0123456789") ==
			   strlen(field + 4)) {
			if (usb_intf_name(g, atoi(field + 4), val,
					  sizeof(val))) {
				strfmt(err, errlen, "${%s.%s}: %s has no configured device",
					 id, field, id);
				return -1;
			}
		} else {
			strfmt(err, errlen, "${%s.%s}: unknown field", id,
				 field);
			return -1;
		}
		l = strlen(val);
		if (w + l >= size)
			goto long_;
		memcpy(out + w, val, l);
		w += l;
		in = end + 1;
	}
	out[w] = '\0';
	return 0;
long_:
	strfmt(err, errlen, "string too long after substitution");
	return -1;
}

static int arg_uint(const struct step *s, int i, unsigned long max,
		    unsigned long *v)
{
	return i < s->n && !s->a[i].quoted ?
		plan_parse_uint(s->a[i].s, max, v) : -EINVAL;
}

/* ---- attach, detach ---- */

static int do_attach(struct step *s)
{
	unsigned long to;
	struct gadget *g;
	int mode;

	if (s->n != 3 || arg_uint(s, 2, 86400000, &to))
		return bad_plan(s, "want ID MODE TIMEOUT_MS");
	g = gadget_by_id(s->a[0].s);
	if (!g)
		return bad_plan(s, "unknown gadget");
	mode = arg_word(s, 1, plan_attach_modes, PLAN_N_ATTACH_MODES);
	if (mode < 0)
		return bad_plan(s, "MODE is verify|no-verify|no-wait");
	strfmt(s->desc, sizeof(s->desc), "attach %s (%s, %s)", g->id,
		 g->busid, s->a[1].s);
	cur->last_attach_us = now_us();
	if (usb_attach(cur, g, mode, step_deadline(to), s->saw,
		       sizeof(s->saw)))
		return finish(s, 0);
	if (g->dev[0])
		strfmt(s->extra, sizeof(s->extra), "dev=%s port=%d", g->dev,
			 g->port);
	else
		strfmt(s->extra, sizeof(s->extra), "port=%d", g->port);
	return finish(s, 1);
}

static int do_detach(struct step *s)
{
	unsigned long to;
	struct gadget *g;

	if (s->n != 2 || arg_uint(s, 1, 86400000, &to))
		return bad_plan(s, "want ID TIMEOUT_MS");
	g = gadget_by_id(s->a[0].s);
	if (!g)
		return bad_plan(s, "unknown gadget");
	strfmt(s->desc, sizeof(s->desc), "detach %s", g->id);
	if (usb_detach(cur, g, step_deadline(to), s->saw, sizeof(s->saw)))
		return finish(s, 0);
	return finish(s, 1);
}

/* ---- modules ---- */

/* A module name as the kernel keeps it: '-' is '_'. */
static void norm_module(char *name)
{
	for (; *name; name++)
		if (*name == '-')
			*name = '_';
}

/*
 * Is module name built into the running kernel?  modules.builtin says so
 * when the kernel has modules at all; else (or too) a /sys/module entry
 * without initstate is a built-in one (only loaded modules have it).
 */
static bool module_builtin(const char *name)
{
	char want[128], path[PATH_MAX], line[512];
	struct utsname u;
	bool found = false;
	FILE *f;

	strfmt(want, sizeof(want), "%s", name);
	norm_module(want);
	strfmt(path, sizeof(path), "/sys/module/%s/initstate", want);
	if (!access(path, F_OK))
		return false;
	strfmt(path, sizeof(path), "/sys/module/%s", want);
	if (!access(path, F_OK))
		return true;
	if (uname(&u))
		return false;
	strfmt(path, sizeof(path), "/lib/modules/%s/modules.builtin",
	       u.release);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f)) {
		char *base = strrchr(line, '/'), *dot;

		base = base ? base + 1 : line;
		dot = strstr(base, ".ko");
		if (!dot)
			continue;
		*dot = '\0';
		norm_module(base);
		found = !strcmp(base, want);
	}
	if (f)
		fclose(f);
	return found;
}

static int modprobe_step(struct step *s, bool remove)
{
	char *argv[] = { remove ? "rmmod" : "modprobe", NULL, NULL };
	char path[PATH_MAX];
	struct proc_res r;
	size_t i;

	if (s->n != 1)
		return bad_plan(s, "want \"MODULE\"");
	argv[1] = (char *)s->a[0].s;
	strfmt(s->desc, sizeof(s->desc), "%s %s", argv[0], argv[1]);
	/* a kernel with the driver built in (a developer's tree): nothing
	 * to load, and nothing that can be removed */
	if (module_builtin(argv[1])) {
		if (!remove) {
			strfmt(s->desc, sizeof(s->desc),
			       "modprobe %s: built into this kernel, nothing to load",
			       argv[1]);
			return finish(s, 1);
		}
		out_result("skip", s->line, s->desc, PLAN_WHY_BUILTIN, NULL);
		return STEP_KEPT;
	}
	if (proc_run(argv, step_deadline(MODPROBE_MS), &r)) {
		strfmt(s->saw, sizeof(s->saw), "cannot run %s", argv[0]);
		return finish(s, 0);
	}
	if (r.status) {
		strfmt(s->saw, sizeof(s->saw), "%s %s: %s %d: %s", argv[0],
			 argv[1], r.status < 0 ? "timed out" : "status",
			 r.status, r.len ? tail_lines(r.out, 3) : "no output");
		proc_res_free(&r);
		return finish(s, 0);
	}
	proc_res_free(&r);
	if (remove) {
		strfmt(path, sizeof(path), "/sys/module/%s", argv[1]);
		for (i = strlen("/sys/module/"); path[i]; i++)
			if (path[i] == '-')
				path[i] = '_';
		if (!access(path, F_OK)) {
			strfmt(s->saw, sizeof(s->saw), "rmmod exited 0 but %s is still there",
				 path);
			return finish(s, 0);
		}
	}
	return finish(s, 1);
}

/* ---- write, read ---- */

static int do_write(struct step *s)
{
	char path[PATH_MAX], val[SUBST_MAX], err[256];
	int want = 0, fd, got = 0;
	ssize_t n;
	uint64_t t0;

	if (s->n != 3 || !s->a[0].quoted || !s->a[1].quoted)
		return bad_plan(s, "want \"PATH\" \"VALUE\" ok|ERRNO");
	if (strcmp(s->a[2].s, "ok")) {
		want = plan_errno_value(s->a[2].s);
		if (!want)
			return bad_plan(s, "unknown errno name");
	}
	strfmt(s->desc, sizeof(s->desc), "write %s", s->a[0].s);
	if (subst(s->a[0].s, path, sizeof(path), err, sizeof(err)) ||
	    subst(s->a[1].s, val, sizeof(val), err, sizeof(err))) {
		strfmt(s->saw, sizeof(s->saw), "%s", err);
		return finish(s, 0);
	}
	strfmt(s->desc, sizeof(s->desc), "write \"%.200s\" to %.250s -> %s",
		 val, path, s->a[2].s);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		got = errno;
		strfmt(s->saw, sizeof(s->saw), "open: %s (%s)",
			 errno_name(got), strerror(got));
	} else {
		/* the bind a new_id write triggers happens inside write(2):
		 * stamp before it */
		t0 = now_us();
		if (cur)
			cur->last_write_us = t0;
		n = write(fd, val, strlen(val));
		if (n < 0) {
			got = errno;
			strfmt(s->saw, sizeof(s->saw), "write: %s (%s)",
				 errno_name(got), strerror(got));
		} else if ((size_t)n != strlen(val)) {
			got = -1;
			strfmt(s->saw, sizeof(s->saw), "short write: %zd of %zu bytes",
				 n, strlen(val));
		} else {
			strfmt(s->saw, sizeof(s->saw), "write succeeded");
		}
		strfmt(s->extra, sizeof(s->extra), "write_us=%llu",
			 (unsigned long long)(now_us() - t0));
		close(fd);
	}
	ev_pump(0);
	return finish(s, got == want);
}

static int read_path(const char *path, char *buf, size_t size, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	*err = 0;
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*err = errno;
			close(fd);
			return -1;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (int)len;
}

static int do_read(struct step *s)
{
	char path[PATH_MAX], text[SUBST_MAX], err[256];
	char *buf;
	int len, e, ok, match;

	if (s->n != 3 || !s->a[0].quoted || !s->a[2].quoted)
		return bad_plan(s, "want \"PATH\" equals|contains|not-contains \"TEXT\"");
	match = arg_word(s, 1, plan_match_names, PLAN_N_MATCHES);
	if (match < 0)
		return bad_plan(s, "MATCH is equals|contains|not-contains");
	strfmt(s->desc, sizeof(s->desc), "read %s", s->a[0].s);
	if (subst(s->a[0].s, path, sizeof(path), err, sizeof(err)) ||
	    subst(s->a[2].s, text, sizeof(text), err, sizeof(err))) {
		strfmt(s->saw, sizeof(s->saw), "%s", err);
		return finish(s, 0);
	}
	strfmt(s->desc, sizeof(s->desc), "read %.250s %s \"%.200s\"", path,
		 s->a[1].s, text);
	buf = malloc(READ_MAX);
	if (!buf) {
		strfmt(s->saw, sizeof(s->saw), "out of memory");
		return finish(s, 0);
	}
	len = read_path(path, buf, READ_MAX, &e);
	if (len < 0) {
		strfmt(s->saw, sizeof(s->saw), "%s: %s (%s)", path,
			 errno_name(e), strerror(e));
		free(buf);
		return finish(s, 0);
	}
	if (match == PLAN_EQUALS) {
		if (len && buf[len - 1] == '\n')
			buf[--len] = '\0';
		ok = !strcmp(buf, text);
	} else if (match == PLAN_CONTAINS) {
		ok = strstr(buf, text) != NULL;
	} else {
		ok = strstr(buf, text) == NULL;
	}
	{
		char q[1024];

		if (plan_quote(q, sizeof(q), len > 900 ? buf + len - 900 : buf) < 0)
			strfmt(q, sizeof(q), "(unprintable)");
		strfmt(s->saw, sizeof(s->saw), "read %s", q);
		out_diag("%s: %s", path, q);
	}
	free(buf);
	return finish(s, ok);
}

/* ---- the usb_core trace events (patched kernel) ----
 *
 * On a kernel with them (tr.on), every bind and probe error the sysfs,
 * uevent and kmsg views show is confirmed by the probe's trace record too;
 * a disagreement fails the step with both views.  Without them nothing
 * here runs.
 */

__attribute__((format(printf, 2, 3)))
static void extra_add(struct step *s, const char *fmt, ...)
{
	size_t w = strlen(s->extra);
	va_list ap;

	if (w && w + 1 < sizeof(s->extra))
		s->extra[w++] = ' ';
	s->extra[w] = '\0';
	va_start(ap, fmt);
	vsnprintf(s->extra + w, sizeof(s->extra) - w, fmt, ap);
	va_end(ap);
}

static void extra_probe(struct step *s, const struct tr_rec *r)
{
	extra_add(s, "id=%s ret=%d probe_us=%lld", r->id, r->ret, r->usecs);
}

/* Index of the last probe record of intf by drv, -1 if none. */
static long tr_last_probe(const char *intf, const char *drv)
{
	for (size_t i = tr.n; i > 0; i--) {
		const struct tr_rec *r = &tr.rec[i - 1];

		if (r->event == TR_PROBE && !strcmp(r->intf, intf) &&
		    !strcmp(r->driver, drv))
			return (long)(i - 1);
	}
	return -1;
}

/* A successful probe by drv of another interface of intf's configuration:
 * the probe that took intf with usb_driver_claim_interface(). */
static bool tr_sibling_bound(const char *intf, const char *drv)
{
	const char *dot = strrchr(intf, '.');
	size_t plen = dot ? (size_t)(dot - intf) + 1 : 0;

	for (size_t i = 0; plen && i < tr.n; i++) {
		const struct tr_rec *r = &tr.rec[i];

		if (r->event == TR_PROBE && !r->ret &&
		    !strcmp(r->driver, drv) && strcmp(r->intf, intf) &&
		    !strncmp(r->intf, intf, plen))
			return true;
	}
	return false;
}

/*
 * sysfs and the uevents say intf is bound to drv: the last probe record of
 * intf by drv must say ret=0.  An interface claimed by the driver from
 * another interface's probe has no probe record of its own; a successful
 * probe of a sibling stands for it (id=claimed).  0 with id= ret= probe_us=
 * added to the result, or -1 with both views in s->saw.  *at is the
 * record's index (-1: none, or no trace events).
 */
static int trace_confirm_bound(struct step *s, const char *intf,
			       const char *drv, long *at)
{
	uint64_t until = now_us() + TRACE_GRACE_MS * 1000ull;
	char tv[AG_TEXT_MAX / 2];
	long i;

	*at = -1;
	if (!tr.on)
		return 0;
	for (;;) {
		ev_pump(0);
		i = tr_last_probe(intf, drv);
		if (i >= 0 && !tr.rec[i].ret) {
			*at = i;
			extra_probe(s, &tr.rec[i]);
			return 0;
		}
		if (i < 0 && tr_sibling_bound(intf, drv)) {
			extra_add(s, "id=claimed");
			return 0;
		}
		if (now_us() >= until)
			break;
		ev_pump(POLL_MS);
	}
	trace_describe(intf, NULL, tv, sizeof(tv));
	strfmt(s->saw, sizeof(s->saw), "sysfs and uevents: %s bound to %s; tracepoint: %s; usb_core records for %s: %s",
	       intf, drv, i >= 0 ? "its last probe by that driver failed" :
	       "no probe of it by that driver", intf, tv);
	return -1;
}

/* An unbind record of intf by drv after record index `after`. */
static bool tr_unbind_after(const char *intf, const char *drv, long after)
{
	for (size_t i = (size_t)(after + 1); after >= 0 && i < tr.n; i++) {
		const struct tr_rec *r = &tr.rec[i];

		if (r->event == TR_UNBIND && !strcmp(r->intf, intf) &&
		    !strcmp(r->driver, drv))
			return true;
	}
	return false;
}

/*
 * The kernel log says a probe of intf by drv failed with errno e (kline):
 * a probe record of intf by drv with ret=-e must say so too.  0 with id=
 * ret= probe_us= added, or -1 with both views in s->saw.
 */
static int trace_confirm_probe_error(struct step *s, const char *intf,
				     const char *drv, int e,
				     const char *kline)
{
	uint64_t until = now_us() + TRACE_GRACE_MS * 1000ull;
	char tv[AG_TEXT_MAX / 2];

	if (!tr.on)
		return 0;
	for (;;) {
		ev_pump(0);
		for (size_t i = tr.n; i > 0; i--) {
			const struct tr_rec *r = &tr.rec[i - 1];

			if (r->event == TR_PROBE && r->ret == -e &&
			    !strcmp(r->intf, intf) && !strcmp(r->driver, drv)) {
				extra_probe(s, r);
				return 0;
			}
		}
		if (now_us() >= until)
			break;
		ev_pump(POLL_MS);
	}
	trace_describe(intf, NULL, tv, sizeof(tv));
	strfmt(s->saw, sizeof(s->saw), "kernel log: \"%s\"; tracepoint: no probe of %s by %s returned %d; usb_core records for %s: %s",
	       kline, intf, drv, -e, intf, tv);
	return -1;
}

/* ---- bound / unbound ---- */

/* The driver the uevents say `intf` is bound to ("" none), and the bind
 * event that says so. */
static const struct uevent *uev_bound(const char *intf, char *drv,
				      size_t size)
{
	const struct uevent *b = NULL;

	drv[0] = '\0';
	for (size_t i = 0; i < ev.n_uev; i++) {
		const struct uevent *u = &ev.uev[i];

		if (strcmp(u->name, intf) || strcmp(u->subsystem, "usb"))
			continue;
		if (!strcmp(u->action, "bind")) {
			strfmt(drv, size, "%s", u->driver);
			b = u;
		} else if (!strcmp(u->action, "unbind") ||
			   !strcmp(u->action, "add") ||
			   !strcmp(u->action, "remove")) {
			drv[0] = '\0';
			b = NULL;
		}
	}
	return b;
}

static void describe_intf(const char *intf, char *saw, size_t size)
{
	char link[64], evs[1024], log[1024];

	usb_driver_of(intf, link, sizeof(link));
	ev_describe(intf, evs, sizeof(evs));
	ev_kmsg_tail(intf, 3, log, sizeof(log));
	strfmt(saw, size, "driver link: %s; uevents: %s; kernel: %s",
		 link[0] ? link : "none", evs, log);
}

static int parse_intf_args(struct step *s, int nargs, struct gadget **g,
			   unsigned long *intf, unsigned long *to)
{
	if (s->n != nargs || arg_uint(s, 1, 255, intf) ||
	    arg_uint(s, nargs - 1, 86400000, to))
		return -1;
	*g = gadget_by_id(s->a[0].s);
	return *g ? 0 : -1;
}

static bool intf_bound(const char *intf, const char *driver,
		       const struct uevent **bind)
{
	char link[64], udrv[64];

	*bind = uev_bound(intf, udrv, sizeof(udrv));
	usb_driver_of(intf, link, sizeof(link));
	return !strcmp(link, driver) && !strcmp(udrv, driver);
}

static int do_expect_bound(struct step *s)
{
	const struct uevent *bind = NULL;
	unsigned long intf_no, to;
	struct gadget *g;
	char intf[64] = "";
	const char *drv;
	uint64_t deadline, start = now_us();
	long probe_at;
	bool forever;

	if (parse_intf_args(s, 5, &g, &intf_no, &to) || !s->a[2].quoted ||
	    arg_word(s, 3, plan_window_names, PLAN_N_WINDOWS) < 0)
		return bad_plan(s, "want ID INTF \"DRIVER\" within|for TIMEOUT_MS");
	drv = s->a[2].s;
	forever = arg_word(s, 3, plan_window_names, PLAN_N_WINDOWS) == PLAN_FOR;
	strfmt(s->desc, sizeof(s->desc), "%s interface %lu bound to %s %s %lu ms",
		 g->id, intf_no, drv, s->a[3].s, to);
	deadline = step_deadline(to);
	for (;;) {
		ev_pump(0);
		if (usb_intf_name(g, (int)intf_no, intf, sizeof(intf)))
			intf[0] = '\0';
		if (intf[0] && intf_bound(intf, drv, &bind))
			break;
		if (forever || now_us() >= deadline || cur->server_dead) {
			if (!intf[0])
				strfmt(s->saw, sizeof(s->saw), "%s has no configured device (%s)",
					 g->id, g->dev[0] ? g->dev : "not attached");
			else
				describe_intf(intf, s->saw, sizeof(s->saw));
			return finish(s, 0);
		}
		ev_pump(POLL_MS);
	}
	strfmt(s->desc, sizeof(s->desc), "%s bound to %s %s %lu ms", intf,
		 drv, s->a[3].s, to);
	/* what made it bind: the later of the last write and the last
	 * attach (a new_id written before the device came names no bind) */
	if (!forever && cur->last_attach_us > cur->last_write_us &&
	    bind->t_us >= cur->last_attach_us)
		strfmt(s->extra, sizeof(s->extra), "attach_us=%llu",
			 (unsigned long long)(bind->t_us - cur->last_attach_us));
	else if (!forever && cur->last_write_us &&
		 bind->t_us >= cur->last_write_us)
		strfmt(s->extra, sizeof(s->extra), "latency_us=%llu",
			 (unsigned long long)(bind->t_us - cur->last_write_us));
	if (trace_confirm_bound(s, intf, drv, &probe_at))
		return finish(s, 0);
	if (!forever)
		return finish(s, 1);
	while (now_us() < deadline) {
		ev_pump(POLL_MS);
		if (!intf_bound(intf, drv, &bind)) {
			char tmp[AG_TEXT_MAX];

			describe_intf(intf, tmp, sizeof(tmp));
			strfmt(s->saw, sizeof(s->saw), "unbound after %llu ms: %s",
				 (unsigned long long)(now_us() - start) / 1000,
				 tmp);
			return finish(s, 0);
		}
	}
	ev_pump(0);
	if (tr_unbind_after(intf, drv, probe_at)) {
		char tv[AG_TEXT_MAX / 2];

		trace_describe(intf, NULL, tv, sizeof(tv));
		strfmt(s->saw, sizeof(s->saw), "sysfs and uevents: %s stayed bound to %s; tracepoint: it was unbound: %s",
		       intf, drv, tv);
		return finish(s, 0);
	}
	return finish(s, 1);
}

static bool bind_since(const char *intf, uint64_t since)
{
	for (size_t i = ev.n_uev; i > 0; i--) {
		const struct uevent *u = &ev.uev[i - 1];

		if (u->t_us < since)
			break;
		if (!strcmp(u->name, intf) && !strcmp(u->action, "bind"))
			return true;
	}
	return false;
}

static int do_expect_unbound(struct step *s)
{
	unsigned long intf_no, to;
	struct gadget *g;
	char intf[64] = "", path[PATH_MAX], link[64], why[256];
	uint64_t deadline, start = now_us();
	bool forever;

	if (parse_intf_args(s, 4, &g, &intf_no, &to) ||
	    arg_word(s, 2, plan_window_names, PLAN_N_WINDOWS) < 0)
		return bad_plan(s, "want ID INTF within|for TIMEOUT_MS");
	forever = arg_word(s, 2, plan_window_names, PLAN_N_WINDOWS) == PLAN_FOR;
	strfmt(s->desc, sizeof(s->desc), "%s interface %lu unbound %s %lu ms",
		 g->id, intf_no, s->a[2].s, to);
	deadline = step_deadline(to);
	for (;;) {
		ev_pump(0);
		if (usb_intf_name(g, (int)intf_no, intf, sizeof(intf)))
			intf[0] = '\0';
		strfmt(path, sizeof(path), "/sys/bus/usb/devices/%s", intf);
		usb_driver_of(intf, link, sizeof(link));
		if (intf[0] && !access(path, F_OK) && !link[0])
			break;
		if (forever || now_us() >= deadline || cur->server_dead) {
			if (!intf[0] || access(path, F_OK))
				strfmt(s->saw, sizeof(s->saw), "interface %lu of %s does not exist (device %s)",
					 intf_no, g->id, g->dev[0] ? g->dev : "none");
			else
				describe_intf(intf, s->saw, sizeof(s->saw));
			return finish(s, 0);
		}
		ev_pump(POLL_MS);
	}
	strfmt(s->desc, sizeof(s->desc), "%s unbound %s %lu ms", intf,
		 s->a[2].s, to);
	if (!forever)
		return finish(s, 1);
	/*
	 * Nothing binds for the window, or until the kernel has provably
	 * finished matching the interface (settle.c), whichever is first.
	 * The settle check comes before the look at the interface: a bind
	 * the kernel made before it finished is then in sysfs already.
	 */
	for (;;) {
		bool settled;

		ev_pump(0);
		settled = settle_done(g->dev, intf, why, sizeof(why));
		usb_driver_of(intf, link, sizeof(link));
		if (bind_since(intf, start) || link[0]) {
			char tmp[AG_TEXT_MAX];

			describe_intf(intf, tmp, sizeof(tmp));
			strfmt(s->saw, sizeof(s->saw), "bound after %llu ms: %s",
				 (unsigned long long)(now_us() - start) / 1000,
				 tmp);
			return finish(s, 0);
		}
		if (settled) {
			strfmt(s->extra, sizeof(s->extra), "ended=settled after_ms=%llu %s",
			       (unsigned long long)(now_us() - start) / 1000,
			       why);
			return finish(s, 1);
		}
		if (now_us() >= deadline)
			break;
		ev_pump(POLL_MS);
	}
	/* the window ran out: say why it could not end sooner */
	out_diag("%s: matching not shown to be over: %s", intf, why);
	strfmt(s->extra, sizeof(s->extra), "ended=window after_ms=%llu",
	       (unsigned long long)(now_us() - start) / 1000);
	return finish(s, 1);
}

/* ---- probe errors, kmsg ---- */

/*
 * The three ways the kernel reports a failed probe of intf by drv with
 * errno e (drivers/base/dd.c):
 *	6.1:	"DRV: probe of INTF failed with error -E"
 *	6.3+:	"... INTF: probe with driver DRV failed with error -E"
 *	initcall_debug: "probe of INTF returned E after T usecs" (sign varies
 *	by version; the driver is not named)
 */
static bool probe_error_line(const char *text, const char *intf,
			     const char *drv, int e)
{
	char pat[256];

	strfmt(pat, sizeof(pat), "%s: probe of %s failed with error -%d",
		 drv, intf, e);
	if (strstr(text, pat))
		return true;
	strfmt(pat, sizeof(pat), "%s: probe with driver %s failed with error -%d",
		 intf, drv, e);
	if (strstr(text, pat))
		return true;
	/*
	 * really_probe() names the driver in its warning for every errno but
	 * ENODEV, ENXIO and EPROBE_DEFER, which it keeps quiet; only for
	 * those may the initcall_debug line, which names no driver, stand in
	 * (on the patched kernel the tracepoint then confirms the driver).
	 * Otherwise another driver's failure would pass for this one's.
	 */
	if (e != ENODEV && e != ENXIO && e != PLAN_EPROBE_DEFER)
		return false;
	strfmt(pat, sizeof(pat), "probe of %s returned %d after ", intf, e);
	if (strstr(text, pat))
		return true;
	strfmt(pat, sizeof(pat), "probe of %s returned -%d after ", intf, e);
	return strstr(text, pat) != NULL;
}

static int do_expect_probe_error(struct step *s)
{
	unsigned long intf_no, to;
	struct gadget *g;
	char intf[64] = "", link[64], log[2048];
	const char *drv;
	uint64_t deadline;
	int e;

	if (parse_intf_args(s, 5, &g, &intf_no, &to) || !s->a[2].quoted)
		return bad_plan(s, "want ID INTF \"DRIVER\" ERRNO TIMEOUT_MS");
	drv = s->a[2].s;
	e = plan_errno_value(s->a[3].s);
	if (!e)
		return bad_plan(s, "unknown errno name");
	strfmt(s->desc, sizeof(s->desc), "%s interface %lu: %s probe fails with %s",
		 g->id, intf_no, drv, s->a[3].s);
	deadline = step_deadline(to);
	for (;;) {
		ev_pump(0);
		if (usb_intf_name(g, (int)intf_no, intf, sizeof(intf)))
			intf[0] = '\0';
		if (intf[0]) {
			for (size_t i = 0; i < ev.n_kmsg; i++) {
				if (!probe_error_line(ev.kmsg[i].text, intf,
						      drv, e))
					continue;
				usb_driver_of(intf, link, sizeof(link));
				if (!strcmp(link, drv))
					break;	/* bound after all */
				strfmt(s->desc, sizeof(s->desc), "%s: %s probe fails with %s",
					 intf, drv, s->a[3].s);
				/* a copy: the pumps below may move ev.kmsg */
				strfmt(log, sizeof(log), "%s", ev.kmsg[i].text);
				out_diag("kernel: %s", log);
				if (trace_confirm_probe_error(s, intf, drv, e,
							      log))
					return finish(s, 0);
				return finish(s, 1);
			}
		}
		if (now_us() >= deadline || cur->server_dead) {
			if (!intf[0]) {
				strfmt(s->saw, sizeof(s->saw), "%s has no configured device",
					 g->id);
			} else {
				char d[AG_TEXT_MAX / 2];

				describe_intf(intf, d, sizeof(d));
				ev_kmsg_tail("probe", 4, log, sizeof(log));
				strfmt(s->saw, sizeof(s->saw), "no probe error %s for %s by %s; %s; probe lines: %s",
					 s->a[3].s, intf, drv, d, log);
			}
			return finish(s, 0);
		}
		ev_pump(POLL_MS);
	}
}

/* ---- expectations on the trace records alone ---- */

static int need_trace(struct step *s)
{
	if (tr.on)
		return 0;
	strfmt(s->saw, sizeof(s->saw), "no usb_core trace events: %s",
	       tr.why);
	return finish(s, 0);
}

/* expect-probe ID INTF "DRIVER" MATCHED|- RET|- TIMEOUT_MS */
static int do_expect_probe(struct step *s)
{
	unsigned long intf_no, to;
	struct gadget *g;
	char intf[64] = "", tv[AG_TEXT_MAX / 2];
	const char *drv, *matched = NULL;
	bool any_ret;
	uint64_t deadline;
	int ret = 0;

	if (parse_intf_args(s, 6, &g, &intf_no, &to) || !s->a[2].quoted)
		return bad_plan(s, "want ID INTF \"DRIVER\" MATCHED|- RET|- TIMEOUT_MS");
	drv = s->a[2].s;
	switch (arg_word(s, 3, plan_matched_names, PLAN_N_MATCHED)) {
	case -1:
		return bad_plan(s, "MATCHED is dynamic|static|none|-");
	case PLAN_MATCHED_ANY:
		break;
	default:
		matched = s->a[3].s;
	}
	any_ret = !strcmp(s->a[4].s, "-");
	if (!any_ret && strcmp(s->a[4].s, "0")) {
		ret = -plan_errno_value(s->a[4].s);
		if (!ret)
			return bad_plan(s, "RET is 0, an errno name or -");
	}
	strfmt(s->desc, sizeof(s->desc), "%s interface %lu: a %s probe%s%s%s%s",
	       g->id, intf_no, drv, matched ? " matched " : "",
	       matched ? matched : "", any_ret ? "" : " returns ",
	       any_ret ? "" : s->a[4].s);
	if (!tr.on)
		return need_trace(s);
	deadline = step_deadline(to);
	for (;;) {
		ev_pump(0);
		if (usb_intf_name(g, (int)intf_no, intf, sizeof(intf)))
			intf[0] = '\0';
		for (size_t i = 0; intf[0] && i < tr.n; i++) {
			const struct tr_rec *r = &tr.rec[i];

			if (r->event != TR_PROBE || strcmp(r->intf, intf) ||
			    strcmp(r->driver, drv) ||
			    (matched && strcmp(r->id, matched)) ||
			    (!any_ret && r->ret != ret))
				continue;
			strfmt(s->desc, sizeof(s->desc), "%s: a %s probe%s%s%s%s",
			       intf, drv, matched ? " matched " : "",
			       matched ? matched : "",
			       any_ret ? "" : " returns ",
			       any_ret ? "" : s->a[4].s);
			out_diag("trace: %s", r->text);
			extra_probe(s, r);
			return finish(s, 1);
		}
		if (now_us() >= deadline || cur->server_dead) {
			if (!intf[0]) {
				strfmt(s->saw, sizeof(s->saw), "%s has no configured device",
				       g->id);
			} else {
				trace_describe(intf, NULL, tv, sizeof(tv));
				strfmt(s->saw, sizeof(s->saw), "no such probe record; usb_core records for %s: %s",
				       intf, tv);
			}
			return finish(s, 0);
		}
		ev_pump(POLL_MS);
	}
}

/* expect-dynid add|remove "DRIVER" VID PID TIMEOUT_MS */
static int do_expect_dynid(struct step *s)
{
	unsigned long to, vid, pid;
	enum tr_event want;
	char tv[AG_TEXT_MAX / 2], *end;
	const char *drv;
	uint64_t deadline;

	if (s->n != 5 || !s->a[1].quoted || arg_uint(s, 4, 86400000, &to))
		return bad_plan(s, "want add|remove \"DRIVER\" VID PID TIMEOUT_MS");
	switch (arg_word(s, 0, plan_dynid_names, PLAN_N_DYNIDS)) {
	case PLAN_DYNID_ADD:
		want = TR_DYNID_ADD;
		break;
	case PLAN_DYNID_REMOVE:
		want = TR_DYNID_REMOVE;
		break;
	default:
		return bad_plan(s, "add|remove");
	}
	vid = strtoul(s->a[2].s, &end, 16);
	if (*end || vid > 0xffff)
		return bad_plan(s, "VID is hex");
	pid = strtoul(s->a[3].s, &end, 16);
	if (*end || pid > 0xffff)
		return bad_plan(s, "PID is hex");
	drv = s->a[1].s;
	strfmt(s->desc, sizeof(s->desc), "%s: dynamic id %04lx:%04lx %s",
	       drv, vid, pid, want == TR_DYNID_ADD ? "added" : "removed");
	if (!tr.on)
		return need_trace(s);
	deadline = step_deadline(to);
	for (;;) {
		ev_pump(0);
		for (size_t i = 0; i < tr.n; i++) {
			const struct tr_rec *r = &tr.rec[i];

			if (r->event != want || strcmp(r->driver, drv) ||
			    r->vid != vid || r->pid != pid)
				continue;
			out_diag("trace: %s", r->text);
			extra_add(s, "class=%02x driver_info=0x%llx", r->cls,
				  r->driver_info);
			return finish(s, 1);
		}
		if (now_us() >= deadline) {
			trace_describe(NULL, drv, tv, sizeof(tv));
			strfmt(s->saw, sizeof(s->saw), "no %s record; usb_core records of %s: %s",
			       tr_event_name(want), drv, tv);
			return finish(s, 0);
		}
		ev_pump(POLL_MS);
	}
}

static int do_expect_kmsg(struct step *s)
{
	char text[SUBST_MAX], err[256], log[1024];
	unsigned long to;
	uint64_t deadline;

	if (s->n != 2 || !s->a[0].quoted || arg_uint(s, 1, 86400000, &to))
		return bad_plan(s, "want \"TEXT\" TIMEOUT_MS");
	strfmt(s->desc, sizeof(s->desc), "kernel log contains \"%.300s\"",
		 s->a[0].s);
	if (subst(s->a[0].s, text, sizeof(text), err, sizeof(err))) {
		strfmt(s->saw, sizeof(s->saw), "%s", err);
		return finish(s, 0);
	}
	deadline = step_deadline(to);
	for (;;) {
		ev_pump(0);
		for (size_t i = 0; i < ev.n_kmsg; i++) {
			if (strstr(ev.kmsg[i].text, text)) {
				out_diag("kernel: %s", ev.kmsg[i].text);
				return finish(s, 1);
			}
		}
		if (now_us() >= deadline) {
			ev_kmsg_tail(NULL, 5, log, sizeof(log));
			strfmt(s->saw, sizeof(s->saw), "not in the kernel log; last lines: %s",
				 log);
			return finish(s, 0);
		}
		ev_pump(POLL_MS);
	}
}

/* ---- nodes ---- */

static int expect_node_step(struct step *s, bool present)
{
	char path[PATH_MAX], err[256];
	unsigned long to;
	uint64_t deadline;
	struct stat st;

	if (s->n != 2 || !s->a[0].quoted || arg_uint(s, 1, 86400000, &to))
		return bad_plan(s, "want \"PATH\" TIMEOUT_MS");
	strfmt(s->desc, sizeof(s->desc), "%s %s", s->a[0].s,
		 present ? "exists" : "does not exist");
	deadline = step_deadline(to);
	for (;;) {
		ev_pump(0);
		/* re-expanded each time: ${ID.intfN} may appear late */
		if (subst(s->a[0].s, path, sizeof(path), err, sizeof(err))) {
			if (now_us() >= deadline) {
				strfmt(s->saw, sizeof(s->saw), "%s", err);
				return finish(s, 0);
			}
		} else if (!stat(path, &st) == present) {
			strfmt(s->desc, sizeof(s->desc), "%.400s %s", path,
				 present ? "exists" : "does not exist");
			return finish(s, 1);
		} else if (now_us() >= deadline) {
			strfmt(s->saw, sizeof(s->saw), "%s %s after %lu ms",
				 path, present ? "missing" : "still there", to);
			return finish(s, 0);
		}
		ev_pump(POLL_MS);
	}
}

/* ---- run ---- */

static int do_run(struct step *s)
{
	char cmd[SUBST_MAX], want[SUBST_MAX], err[256], q[1200];
	char *const argv[] = { "/bin/sh", "-c", cmd, NULL };
	unsigned long to, status = 0;
	bool any_status, any_out;
	struct proc_res r;
	int ok;

	if (s->n != 4 || !s->a[0].quoted || arg_uint(s, 3, 86400000, &to))
		return bad_plan(s, "want \"COMMAND\" STATUS|- OUTPUT|- TIMEOUT_MS");
	any_status = !s->a[1].quoted && !strcmp(s->a[1].s, "-");
	any_out = !s->a[2].quoted && !strcmp(s->a[2].s, "-");
	if (!any_status && arg_uint(s, 1, 255, &status))
		return bad_plan(s, "STATUS is a number or -");
	if (!any_out && !s->a[2].quoted)
		return bad_plan(s, "OUTPUT is a string or -");
	strfmt(s->desc, sizeof(s->desc), "run %.400s", s->a[0].s);
	if (subst(s->a[0].s, cmd, sizeof(cmd), err, sizeof(err)) ||
	    (!any_out && subst(s->a[2].s, want, sizeof(want), err,
			       sizeof(err)))) {
		strfmt(s->saw, sizeof(s->saw), "%s", err);
		return finish(s, 0);
	}
	strfmt(s->desc, sizeof(s->desc), "run %.400s", cmd);
	if (proc_run(argv, step_deadline(to), &r)) {
		strfmt(s->saw, sizeof(s->saw), "cannot start /bin/sh");
		return finish(s, 0);
	}
	ok = r.status >= 0 && (any_status || (unsigned long)r.status == status) &&
	     (any_out || strstr(r.out, want));
	if (plan_quote(q, sizeof(q), r.len > 1000 ? r.out + r.len - 1000 :
		       r.out) < 0)
		strfmt(q, sizeof(q), "\"\"");
	if (r.status < 0)
		strfmt(s->saw, sizeof(s->saw), "timed out after %lu ms, killed; output: %s",
			 to, q);
	else
		strfmt(s->saw, sizeof(s->saw), "status %d; output: %s",
			 r.status, q);
	out_diag("run: status %d; output: %s", r.status, q);
	proc_res_free(&r);
	return finish(s, ok);
}

/* ---- save ---- */

/*
 * save "GUEST" "HOST": the file's bytes as `data LINE OFFSET BASE64`
 * lines, then the result with bytes= and crc32=, which the host checks
 * before it writes HOST (plan.h).  The file is read whole first: a file
 * over PLAN_SAVE_MAX fails the step before anything is sent, and one that
 * still grows (a capture running in the background) is cut where it was.
 * The read does not block: a file with nothing to give now (usbmon's
 * text interface, a FIFO) ends there.
 */
static int do_save(struct step *s)
{
	char path[PATH_MAX], err[256];
	char enc[PLAN_DATA_CHUNK / 3 * 4 + 8];
	size_t len = 0, cap = 65536, off;
	unsigned int crc;
	char *buf;
	ssize_t n;
	int fd;

	if (s->n != 2 || !s->a[0].quoted || !s->a[1].quoted)
		return bad_plan(s, "want \"GUESTPATH\" \"HOSTPATH\"");
	strfmt(s->desc, sizeof(s->desc), "save %.250s to %.250s", s->a[0].s,
	       s->a[1].s);
	if (subst(s->a[0].s, path, sizeof(path), err, sizeof(err))) {
		strfmt(s->saw, sizeof(s->saw), "%s", err);
		return finish(s, 0);
	}
	strfmt(s->desc, sizeof(s->desc), "save %.250s to %.250s", path,
	       s->a[1].s);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		strfmt(s->saw, sizeof(s->saw), "%s: %s (%s)", path,
		       errno_name(errno), strerror(errno));
		return finish(s, 0);
	}
	buf = malloc(cap);
	for (;;) {
		if (!buf) {
			close(fd);
			strfmt(s->saw, sizeof(s->saw), "out of memory");
			return finish(s, 0);
		}
		if (len == cap) {
			char *nb = cap > PLAN_SAVE_MAX ? NULL :
				   realloc(buf, cap * 2);

			if (!nb) {
				close(fd);
				free(buf);
				strfmt(s->saw, sizeof(s->saw), cap > PLAN_SAVE_MAX ?
				       "%s is larger than %u MiB" :
				       "out of memory reading %s", path,
				       PLAN_SAVE_MAX >> 20);
				return finish(s, 0);
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;	/* nothing more now: the file ends here */
		if (n < 0) {
			strfmt(s->saw, sizeof(s->saw), "read %s: %s (%s)", path,
			       errno_name(errno), strerror(errno));
			close(fd);
			free(buf);
			return finish(s, 0);
		}
		if (!n)
			break;
		len += (size_t)n;
		if (len > PLAN_SAVE_MAX) {
			close(fd);
			free(buf);
			strfmt(s->saw, sizeof(s->saw), "%s is larger than %u MiB",
			       path, PLAN_SAVE_MAX >> 20);
			return finish(s, 0);
		}
	}
	close(fd);
	for (off = 0; off < len; off += PLAN_DATA_CHUNK) {
		size_t k = len - off < PLAN_DATA_CHUNK ? len - off :
			   PLAN_DATA_CHUNK;

		plan_b64_encode(enc, buf + off, k);
		out_line("data %d %zu %s", s->line, off, enc);
	}
	crc = plan_crc32(0, buf, len);
	free(buf);
	strfmt(s->extra, sizeof(s->extra), "bytes=%zu crc32=%08x", len, crc);
	return finish(s, 1);
}

static int do_modprobe(struct step *s)
{
	return modprobe_step(s, false);
}

static int do_rmmod(struct step *s)
{
	return modprobe_step(s, true);
}

static int do_expect_node(struct step *s)
{
	return expect_node_step(s, true);
}

static int do_expect_no_node(struct step *s)
{
	return expect_node_step(s, false);
}

/* One function per plan kind; NULL for those no plan holds (PLAN_SAY,
 * PLAN_EXPECT_REPORT: PLAN_KIND_IN_PLAN). */
static int (*const step_fns[PLAN_N_KINDS])(struct step *s) = {
	[PLAN_ATTACH] = do_attach,
	[PLAN_DETACH] = do_detach,
	[PLAN_MODPROBE] = do_modprobe,
	[PLAN_RMMOD] = do_rmmod,
	[PLAN_WRITE] = do_write,
	[PLAN_READ] = do_read,
	[PLAN_EXPECT_BOUND] = do_expect_bound,
	[PLAN_EXPECT_UNBOUND] = do_expect_unbound,
	[PLAN_EXPECT_PROBE_ERROR] = do_expect_probe_error,
	[PLAN_EXPECT_NODE] = do_expect_node,
	[PLAN_EXPECT_NO_NODE] = do_expect_no_node,
	[PLAN_EXPECT_KMSG] = do_expect_kmsg,
	[PLAN_EXPECT_PROBE] = do_expect_probe,
	[PLAN_EXPECT_DYNID] = do_expect_dynid,
	[PLAN_RUN] = do_run,
	[PLAN_SAVE] = do_save,
};

int step_run(int line, const char *kind, const struct plan_tok *a, int n)
{
	struct step s = {
		.line = line, .kind = kind, .a = a, .n = n,
	};
	int k;

	strfmt(s.desc, sizeof(s.desc), "%s", kind);
	k = plan_word_index(plan_kind_names, PLAN_N_KINDS, kind);
	if (k < 0 || !step_fns[k])
		return bad_plan(&s, "unknown step kind");
	return step_fns[k](&s);
}
