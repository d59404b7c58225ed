// SPDX-License-Identifier: GPL-2.0
/*
 * repro_report.c - what `usbrig repro` brings back from the guest, and
 * what it makes of it: the saved report (interface states, the new_id
 * result, the usb drivers, the kernel log) and the child's KTAP parsed
 * into struct repro_out; the report printed; --expect decided; the
 * regression scenario of --out.  repro.c runs it all.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/fsutil.h"
#include "../common/plan.h"
#include "repro_int.h"
#include "klog.h"
#include "modlist.h"
#include "scenario.h"

/* ---- 4. what came back ---- */

static void add_crash(struct repro_out *o, const char *text)
{
	if (o->n_crash < REPRO_CRASH_MAX)
		o->crash[o->n_crash++] = strdup(text);
}

/* Is name an interface of the device ("3-1:1.0")? Its number, or -1. */
static int intf_num(const struct repro_out *o, const char *name)
{
	int p, i;

	for (p = 0; p < PH_N; p++)
		for (i = 0; i < o->st[p].n; i++)
			if (!strcmp(o->st[p].intf[i].name, name))
				return o->st[p].intf[i].num;
	return -1;
}

static void add_perr(struct repro_out *o, enum repro_phase ph,
		     const char *intf, const char *drv, int err,
		     const char *line)
{
	struct repro_perr *pe;
	int i;

	if (intf_num(o, intf) < 0 || err <= 0)
		return;
	for (i = 0; i < o->n_perr; i++) {
		pe = &o->perr[i];
		/* the initcall_debug line of a probe the driver named */
		if (pe->phase == ph && !strcmp(pe->intf, intf) &&
		    pe->err == err) {
			if (!pe->drv[0] && drv[0])
				snprintf(pe->drv, sizeof(pe->drv), "%s", drv);
			return;
		}
	}
	if (o->n_perr == REPRO_ERRS_MAX)
		return;
	pe = &o->perr[o->n_perr++];
	pe->phase = ph;
	snprintf(pe->intf, sizeof(pe->intf), "%.31s", intf);
	snprintf(pe->drv, sizeof(pe->drv), "%s", drv);
	pe->err = err;
	snprintf(pe->line, sizeof(pe->line), "%s", line);
}

/* A probe failure in the kernel log line s, for phase ph. */
static void scan_probe_line(struct repro_out *o, enum repro_phase ph,
			    const char *s)
{
	char intf[64], drv[64];
	int e;

	if (klog_probe_error(s, intf, drv, &e))
		add_perr(o, ph, intf, drv, e, s);
}

static void parse_report(struct repro *rp, char *text)
{
	struct repro_out *o = &rp->r;
	enum repro_phase ph = PH_ATTACH;
	char *line, *save = NULL, *excerpt = NULL;
	bool in_dmesg = false, seen_mark = false;
	size_t ex_len = 0;
	int ex_lines = 0;

	o->ran = true;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char a[64], b[64], c[64], d[64];
		int num, cls;

		if (in_dmesg) {
			const char *s = klog_strip_time(line);

			if (strstr(s, "usbrig-repro: attach")) {
				seen_mark = true;
				ph = PH_ATTACH;
				continue;
			}
			if (strstr(s, "usbrig-repro: new_id")) {
				ph = PH_NEWID;
				continue;
			}
			if (!seen_mark)
				continue;
			if (excerpt && ex_lines < REPRO_EXCERPT_LINES) {
				size_t n = strlen(s);
				char *ne = realloc(excerpt, ex_len + n + 2);

				if (ne) {
					excerpt = ne;
					memcpy(excerpt + ex_len, s, n);
					ex_len += n;
					excerpt[ex_len++] = '\n';
					excerpt[ex_len] = '\0';
				}
				if (++ex_lines == REPRO_EXCERPT_LINES) {
					add_crash(o, excerpt);
					free(excerpt);
					excerpt = NULL;
				}
				continue;
			}
			if (klog_report_line(s)) {
				excerpt = strdup(s);
				ex_len = excerpt ? strlen(excerpt) : 0;
				if (excerpt) {
					excerpt = realloc(excerpt, ex_len + 2);
					if (excerpt) {
						excerpt[ex_len++] = '\n';
						excerpt[ex_len] = '\0';
					}
				}
				ex_lines = 1;
				continue;
			}
			scan_probe_line(o, ph, s);
			continue;
		}
		if (!strcmp(line, "dmesg")) {
			in_dmesg = true;
		} else if (sscanf(line, "device %31s", o->dev) == 1) {
			o->enumerated = true;
		} else if (sscanf(line, "state %63s", a) == 1) {
			ph = !strcmp(a, "newid") ? PH_NEWID : PH_ATTACH;
			o->st[ph].seen = true;
		} else if (sscanf(line, "intf %63s %d %x %31s %63s", a, &num,
				  &cls, c, d) == 5) {
			struct repro_state *st = &o->st[!strcmp(a, "newid") ?
							PH_NEWID : PH_ATTACH];

			if (st->n < REPRO_INTF_MAX) {
				struct repro_seen *it = &st->intf[st->n++];

				it->num = num;
				it->cls = cls;
				snprintf(it->name, sizeof(it->name), "%.31s", c);
				snprintf(it->drv, sizeof(it->drv), "%s", d);
			}
		} else if (!strncmp(line, "newid-none ", 11)) {
			o->newid_tried = true;
			o->newid_err = -1;
			snprintf(o->newid_note, sizeof(o->newid_note), "%s",
				 line + 11);
		} else if (sscanf(line, "newid %255s %d", o->newid_path,
				  &num) == 2) {
			const char *t = strchr(line + 6, ' ');

			t = t ? strchr(t + 1, ' ') : NULL;
			o->newid_tried = true;
			snprintf(o->newid_text, sizeof(o->newid_text), "%s",
				 t ? t + 1 : "");
			o->newid_err = num ? klog_errno_of_text(o->newid_text) : 0;
		} else if (sscanf(line, "usbdrv %63s %63s", a, b) >= 1) {
			void *nv = realloc(o->usbdrv, sizeof(*o->usbdrv) *
					   (size_t)(o->n_usbdrv + 1));

			if (!nv)
				continue;
			o->usbdrv = nv;
			if (sscanf(line, "usbdrv %63s %63s", a, b) < 2)
				b[0] = '\0';
			snprintf(o->usbdrv[o->n_usbdrv][0], 64, "%s", a);
			snprintf(o->usbdrv[o->n_usbdrv][1], 64, "%s", b);
			o->n_usbdrv++;
		}
	}
	if (excerpt) {
		add_crash(o, excerpt);
		free(excerpt);
	}
}

/*
 * Is usb driver d (name, module) one of module mod's?  The usb drivers of
 * usb-serial modules are registered by usbserial, so their `module` link
 * says usbserial: for those the name, which is the module's, tells.
 */
static bool drv_in_module(const char (*d)[64], const char *mod)
{
	char name[64];

	snprintf(name, sizeof(name), "%s", d[0]);
	modlist_norm(name);
	if (!strcmp(name, mod))
		return true;
	return strcmp(d[1], "usbserial") && !strcmp(d[1], mod);
}

/*
 * A probe error that names no driver (initcall_debug: ENODEV, ENXIO are
 * otherwise silent): after new_id only --driver's probe can have run (the
 * id went to it alone); at attach, the one usb driver of the modules
 * loaded by alias, when there is exactly one.
 */
static void attribute_errors(struct repro *rp)
{
	struct repro_out *o = &rp->r;
	char only[64] = "";
	int i, k, n = 0;

	for (i = 0; i < o->n_usbdrv; i++)
		for (k = 0; k < rp->n_alias; k++)
			if (drv_in_module(o->usbdrv[i], rp->modules[k])) {
				snprintf(only, sizeof(only), "%s",
					 o->usbdrv[i][0]);
				n++;
			}
	for (i = 0; i < o->n_perr; i++) {
		struct repro_perr *pe = &o->perr[i];

		if (pe->drv[0])
			continue;
		if (pe->phase == PH_NEWID && rp->o.driver) {
			/* the usb driver of --driver's module */
			for (k = 0; k < o->n_usbdrv; k++)
				if (rp->drv_module[0] &&
				    drv_in_module(o->usbdrv[k], rp->drv_module))
					snprintf(pe->drv, sizeof(pe->drv), "%s",
						 o->usbdrv[k][0]);
			if (!pe->drv[0])
				snprintf(pe->drv, sizeof(pe->drv), "%s",
					 rp->o.driver);
		} else if (pe->phase == PH_ATTACH && n == 1) {
			snprintf(pe->drv, sizeof(pe->drv), "%s", only);
		}
	}
}

/* The child's KTAP: crash reports, and why a step failed. */
static void parse_ktap(struct repro *rp, const char *path)
{
	struct repro_out *o = &rp->r;
	char *text = fs_read_file(path, REPRO_MAX_FILE, NULL), *line, *save = NULL;
	char *ex = NULL;
	size_t len = 0;

	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *s = line;

		while (*s == ' ')
			s++;
		if (!strncmp(s, "# | ", 4) && (ex || !o->ran)) {
			size_t n = strlen(s + 4);
			char *ne = realloc(ex, len + n + 2);

			if (!ne)
				break;
			ex = ne;
			memcpy(ex + len, s + 4, n);
			len += n;
			ex[len++] = '\n';
			ex[len] = '\0';
		} else if (!strncmp(s, "# crash: ", 9)) {
			if (!o->ran && !ex) {
				ex = strdup(s + 9);
				len = ex ? strlen(ex) : 0;
				if (ex)
					ex = realloc(ex, len + 2);
				if (ex) {
					ex[len++] = '\n';
					ex[len] = '\0';
				}
			}
		} else if ((!strncmp(s, "# saw: ", 7) ||
			    !strncmp(s, "not ok ", 7)) &&
			   strlen(o->child_fail) < sizeof(o->child_fail) / 2) {
			size_t w = strlen(o->child_fail);

			snprintf(o->child_fail + w, sizeof(o->child_fail) - w,
				 "%s%s", w ? "; " : "", s);
		}
	}
	/* a guest that died: its crash report is the only account left */
	if (ex && !o->n_crash)
		add_crash(o, ex);
	free(ex);
	free(text);
}

/* The saved guest report (when it came back) and the child's KTAP. */
void repro_read_results(struct repro *rp, const char *saved, const char *ktap)
{
	char *text = fs_read_file(saved, REPRO_MAX_FILE, NULL);

	if (text) {
		parse_report(rp, text);
		free(text);
		attribute_errors(rp);
	}
	parse_ktap(rp, ktap);
}

/* ---- 5. report, verdict, regression scenario ---- */

static const char *errno_word(int e, char *buf, size_t size)
{
	const char *n = plan_errno_name(e);

	if (n)
		return n;
	snprintf(buf, size, "errno %d", e);
	return buf;
}

/* The state the verdict looks at: after new_id when there was one. */
static const struct repro_state *final_state(const struct repro *rp)
{
	if (rp->o.driver && rp->r.st[PH_NEWID].seen)
		return &rp->r.st[PH_NEWID];
	return &rp->r.st[PH_ATTACH];
}

static const char *drv_of(const struct repro_state *st, int num)
{
	int i;

	for (i = 0; i < st->n; i++)
		if (st->intf[i].num == num)
			return st->intf[i].drv;
	return NULL;
}

static void print_state(const struct repro *rp, enum repro_phase ph)
{
	const struct repro_state *st = &rp->r.st[ph];
	char eb[32];
	int i, k;

	for (i = 0; i < st->n; i++) {
		const struct repro_seen *it = &st->intf[i];
		const char *before = ph == PH_NEWID ?
			drv_of(&rp->r.st[PH_ATTACH], it->num) : NULL;

		printf("  interface %d (%s, class %02x): %s%s\n", it->num,
		       it->name, it->cls, strcmp(it->drv, "none") ? "bound to "
		       : "", strcmp(it->drv, "none") ? it->drv : "no driver");
		if (before && strcmp(before, it->drv))
			printf("    (was %s before new_id)\n",
			       strcmp(before, "none") ? before : "unbound");
		for (k = 0; k < rp->r.n_perr; k++) {
			const struct repro_perr *pe = &rp->r.perr[k];

			if (pe->phase != ph || strcmp(pe->intf, it->name))
				continue;
			printf("    probe error: %s %s: \"%s\"\n",
			       pe->drv[0] ? pe->drv : "(driver not named)",
			       errno_word(pe->err, eb, sizeof(eb)), pe->line);
		}
	}
}

bool repro_expect_holds(const struct repro *rp, const struct repro_expect *x)
{
	const struct repro_state *st = final_state(rp);
	const struct repro_out *o = &rp->r;
	int i, n = 0;

	switch (x->kind) {
	case EK_BOUND:
		for (i = 0; i < st->n; i++)
			if ((x->intf < 0 || st->intf[i].num == x->intf) &&
			    !strcmp(st->intf[i].drv, x->drv))
				return true;
		return false;
	case EK_UNBOUND:
		for (i = 0; i < st->n; i++) {
			if (x->intf >= 0 && st->intf[i].num != x->intf)
				continue;
			n++;
			if (strcmp(st->intf[i].drv, "none"))
				return false;
		}
		return n > 0;
	case EK_PERR:
		for (i = 0; i < o->n_perr; i++) {
			const struct repro_perr *pe = &o->perr[i];

			if (pe->err == x->err &&
			    (!strcmp(x->drv, "*") || !strcmp(pe->drv, x->drv)) &&
			    (x->intf < 0 || intf_num(o, pe->intf) == x->intf))
				return true;
		}
		return false;
	case EK_CRASH:
		return o->n_crash > 0;
	case EK_NO_CRASH:
		return o->ran && !o->n_crash;
	case EK_NEWID:
		return o->newid_tried && o->newid_err == x->err;
	}
	return false;
}

void repro_print_report(const struct repro *rp)
{
	const struct repro_out *o = &rp->r;
	char eb[32];
	int i;

	printf("usbrig repro: %s -> %04x:%04x (class %02x/%02x/%02x, %d "
	       "interface(s)), %s\n", rp->o.dump, rp->dev.vid, rp->dev.pid,
	       rp->dev.cls, rp->dev.sub, rp->dev.proto, rp->dev.n_intf,
	       rp->gadget);
	if (rp->reporter[0])
		printf("  the reporter's kernel had bound: %s\n", rp->reporter);
	printf("  kernel %s (%s); loaded by modules.alias:", rp->k.kver,
	       rp->k.bzimage);
	for (i = 0; i < rp->n_alias; i++)
		printf(" %s", rp->modules[i]);
	printf("%s\n", rp->n_alias ? "" : " none");
	if (!o->ran) {
		printf("no result from the guest\n");
	} else if (!o->enumerated) {
		printf("after attach: the device did not enumerate\n");
	} else {
		printf("after attach (static id tables):\n");
		print_state(rp, PH_ATTACH);
	}
	if (rp->o.driver && o->ran) {
		printf("new_id for %s (%s):\n", rp->o.driver, rp->class_note);
		if (!o->newid_tried)
			printf("  not written (the device did not enumerate)\n");
		else if (!o->newid_path[0] || o->newid_err < 0 ||
			 !strcmp(o->newid_path, "-"))
			printf("  %s%s\n", o->newid_note, o->newid_text);
		else
			printf("  \"%s\" > %s: %s\n", rp->newid_value,
			       o->newid_path, o->newid_err ?
			       errno_word(o->newid_err, eb, sizeof(eb)) : "ok");
		if (o->st[PH_NEWID].seen) {
			printf("after new_id:\n");
			print_state(rp, PH_NEWID);
		}
	}
	if (!o->n_crash) {
		printf("kernel warnings and oopses: %s\n", o->ran ? "none" :
		       "unknown");
	}
	for (i = 0; i < o->n_crash; i++) {
		const char *p = o->crash[i];

		printf("kernel warning or oops:\n");
		while (*p) {
			size_t n = strcspn(p, "\n");

			printf("  | %.*s\n", (int)n, p);
			p += n + (p[n] == '\n');
		}
	}
}

/* An errno given as a name (EINVAL) or a number (22, -22). */
static int parse_errno(const char *s)
{
	char *end;
	long v;

	if (isalpha((unsigned char)*s))
		return plan_errno_value(s);
	v = strtol(s, &end, 10);
	if (*end || end == s)
		return 0;
	return (int)(v < 0 ? -v : v);
}

/*
 * [N:]bound:DRIVER  [N:]unbound  [N:]probe-error:DRIVER|*:ERRNO  crash
 * no-crash  newid:ok|ERRNO
 */
int repro_parse_expect(const char *text, struct repro_expect *x)
{
	char buf[160], *p = buf, *colon;

	if (strlen(text) >= sizeof(buf))
		goto bad;
	snprintf(buf, sizeof(buf), "%s", text);
	x->text = text;
	x->intf = -1;
	if (isdigit((unsigned char)*p)) {
		char *end;
		long v = strtol(p, &end, 10);

		if (*end != ':' || v > 255)
			goto bad;
		x->intf = (int)v;
		p = end + 1;
	}
	colon = strchr(p, ':');
	if (colon)
		*colon++ = '\0';
	if (!strcmp(p, "bound") && colon && repro_is_name(colon)) {
		x->kind = EK_BOUND;
		snprintf(x->drv, sizeof(x->drv), "%s", colon);
		return 0;
	}
	if (!strcmp(p, "unbound") && !colon) {
		x->kind = EK_UNBOUND;
		return 0;
	}
	if (!strcmp(p, "probe-error") && colon) {
		char *e = strchr(colon, ':');

		if (!e)
			goto bad;
		*e++ = '\0';
		if (strcmp(colon, "*") && !repro_is_name(colon))
			goto bad;
		x->kind = EK_PERR;
		snprintf(x->drv, sizeof(x->drv), "%s", colon);
		x->err = parse_errno(e);
		if (x->err <= 0)
			goto bad;
		return 0;
	}
	if (!strcmp(p, "crash") && !colon && x->intf < 0) {
		x->kind = EK_CRASH;
		return 0;
	}
	if (!strcmp(p, "no-crash") && !colon && x->intf < 0) {
		x->kind = EK_NO_CRASH;
		return 0;
	}
	if (!strcmp(p, "newid") && colon && x->intf < 0) {
		x->kind = EK_NEWID;
		x->err = strcmp(colon, "ok") ? parse_errno(colon) : 0;
		if (x->err < 0 || (x->err == 0 && strcmp(colon, "ok")))
			goto bad;
		return 0;
	}
bad:
	repro_err("--expect: '%s' is not one of [N:]bound:DRIVER, [N:]unbound, "
		"[N:]probe-error:DRIVER|*:ERRNO, crash, no-crash, "
		"newid:ok|ERRNO", text);
	return -EINVAL;
}

/* The regression scenario: what was seen, as expectations. */
static void out_phase(FILE *f, const struct repro *rp, enum repro_phase ph)
{
	const struct repro_state *st = &rp->r.st[ph];
	int i, k;

	for (i = 0; i < st->n; i++) {
		const struct repro_seen *it = &st->intf[i];
		bool had_err = false;

		for (k = 0; k < rp->r.n_perr; k++) {
			const struct repro_perr *pe = &rp->r.perr[k];
			const char *en = plan_errno_name(pe->err);

			if (pe->phase != ph || strcmp(pe->intf, it->name) ||
			    !pe->drv[0] || !en || !strcmp(pe->drv, it->drv))
				continue;
			fprintf(f, "expect probe-error g %d %s %s within 5s\n",
				it->num, pe->drv, en);
			had_err = true;
		}
		if (strcmp(it->drv, "none"))
			fprintf(f, "expect bound g %d %s within 10s\n", it->num,
				it->drv);
		else
			fprintf(f, "expect unbound g %d %s\n", it->num,
				had_err ? "within 2s" : "for 1s");
	}
}

int repro_write_out(struct repro *rp)
{
	const struct repro_out *o = &rp->r;
	char gpath[PATH_MAX * 2], spath[PATH_MAX * 2], eb[32];
	char usbrig[PATH_MAX * 2], log[PATH_MAX * 2], q[512];
	char *const argv[] = { usbrig, "--check", spath, NULL };
	FILE *f;
	int i, ret;

	ret = fs_mkdir_p(rp->o.out_dir, 0755);
	if (ret) {
		repro_err("--out %s: %s", rp->o.out_dir, strerror(-ret));
		return ret;
	}
	snprintf(gpath, sizeof(gpath), "%s/%s.gadget", rp->o.out_dir,
		 rp->name);
	snprintf(spath, sizeof(spath), "%s/%s.scenario", rp->o.out_dir,
		 rp->name);
	ret = repro_copy_file(rp->gadget, gpath);
	if (ret) {
		repro_err("%s: %s", gpath, strerror(-ret));
		return ret;
	}
	f = fopen(spath, "w");
	if (!f) {
		repro_err("%s: %s", spath, strerror(errno));
		return -errno;
	}
	fprintf(f, "# %04x:%04x from %s, on %s:\n#", rp->dev.vid, rp->dev.pid,
		rp->o.dump, rp->k.kver);
	if (!o->enumerated) {
		fprintf(f, " the device does not enumerate.\n");
	} else {
		const struct repro_state *a = &o->st[PH_ATTACH];
		int bound = 0;

		for (i = 0; i < a->n; i++)
			bound += !!strcmp(a->intf[i].drv, "none");
		fprintf(f, " %s", bound ? "bound by the static id tables" :
			"no driver's static id table takes it");
		if (rp->o.driver && o->newid_tried)
			fprintf(f, ";\n# new_id on %s %s", rp->o.driver,
				o->newid_err ? "fails" : "is accepted");
		fprintf(f, ".\n");
	}
	if (o->n_crash)
		fprintf(f, "# The kernel logged a warning or oops here when this "
			"was made:\n# %.*s\n# this scenario fails while it "
			"does.\n", (int)strcspn(o->crash[0], "\n"),
			o->crash[0]);
	fprintf(f, "# Made by: usbrig repro %s%s%s%s%s --out DIR\n",
		rp->o.dump, rp->o.select ? " --select " : "",
		rp->o.select ? rp->o.select : "", rp->o.driver ?
		" --driver " : "", rp->o.driver ? rp->o.driver : "");
	fprintf(f, "timeout 120\ngadget g ./%s.gadget\n\n", rp->name);
	for (i = 0; i < rp->n_modules; i++)
		fprintf(f, "modprobe %s\n", rp->modules[i]);
	if (!o->enumerated) {
		fprintf(f, "attach g no-wait\n");
		goto done;
	}
	fprintf(f, "attach g no-verify\n");
	out_phase(f, rp, PH_ATTACH);
	if (rp->o.driver && o->newid_tried && o->newid_path[0] &&
	    o->newid_err >= 0) {
		if (plan_quote(q, sizeof(q), rp->newid_value) < 0)
			q[0] = '\0';
		fprintf(f, "write %s %s expect %s\n", o->newid_path, q,
			o->newid_err ? errno_word(o->newid_err, eb,
						  sizeof(eb)) : "ok");
		out_phase(f, rp, PH_NEWID);
	}
	fprintf(f, "detach g\n");
done:
	if (fclose(f)) {
		repro_err("%s: write error", spath);
		return -EIO;
	}
	snprintf(usbrig, sizeof(usbrig), "%s/usbrig", rp->bin_dir);
	snprintf(log, sizeof(log), "%s/out-check.log", rp->work);
	ret = fs_run_cmd(argv, "/dev/null", log);
	if (ret) {
		char *e = fs_read_file(log, REPRO_MAX_FILE, NULL);

		repro_err("%s does not pass usbrig --check: %s", spath,
			e ? e : "");
		free(e);
		return -EINVAL;
	}
	printf("wrote %s and %s (usbrig --check: ok)\n", spath, gpath);
	return 0;
}

