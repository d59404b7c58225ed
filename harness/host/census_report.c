// SPDX-License-Identifier: GPL-2.0
/*
 * census_report.c - the census's records (census-probe.sh's report.txt per
 * module) read into one row per module and kind of match, then the table
 * in Markdown, JSON (one row per line, which --baseline reads back) and
 * JUnit, the counts by outcome, and the comparison with a baseline.
 * docs/census.md defines the outcomes.
 */
#define _GNU_SOURCE
#include "census.h"
#include "census_report.h"
#include "klog.h"
#include "modlist.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/fsutil.h"
#include "../common/plan.h"

#define REPORT_MAX	(16u << 20)
#define EXCERPT_LINES	12
#define TEXT_MAX	256

enum census_phase { CP_STATIC, CP_BEFORE, CP_NEWID, CP_REPLUG, CP_N };

static const char *const phase_names[CP_N] = {
	"static", "newid-before", "newid", "replug",
};

struct phase_rec {
	bool seen, nodev;
	char drivers[TEXT_MAX];		/* "usb:x usb-serial:y" */
	char target_drv[64];		/* the target interface's driver */
	char target_name[32];		/* 1-1:1.0 */
	int perr;			/* a probe error of the target */
	char nodes[TEXT_MAX];
	char log[1024];			/* the phase's kernel log, cut */
	int log_lines;
};

struct row {
	const struct census_plan *plan;
	int kind;
	struct phase_rec ph[CP_N];
	bool newid_none, newid_wrote, removeid_none;
	bool retried;			/* in a second run (retry.log) */
	int newid_err;			/* 0, errno, -1 unknown */
	char newid_path[160];
	char st[48], nw[48], rp[48];	/* the outcomes */
	int st_err, nw_err;
	char report[2048];		/* a kernel report's excerpt */
	char harness[TEXT_MAX];		/* why the run gave no record */
	char stuck[TEXT_MAX];		/* tasks left in D state */
	double time_s;
	bool finding;
	char why[TEXT_MAX];
	char logs[3 * 1024 + 64];	/* a finding's phases' kernel logs */
};

static int phase_of(const char *s)
{
	for (int p = 0; p < CP_N; p++)
		if (!strcmp(s, phase_names[p]))
			return p;
	return -1;
}

/*
 * Is drv (an interface's driver) one of the module's?  Its usb drivers are
 * listed as usb:NAME; a usb-serial module's usb driver is registered by
 * usbserial under the module's own name, so its list has only the
 * usb-serial:NAME entries, and the module's name tells.
 */
static bool in_drivers(const char *drivers, const char *module,
		       const char *drv)
{
	char want[80];

	snprintf(want, sizeof(want), "%s", drv);
	modlist_norm(want);
	if (!strcmp(want, module))
		return true;
	snprintf(want, sizeof(want), "usb:%s", drv);
	for (const char *p = drivers; (p = strstr(p, want)); p++)
		if ((p == drivers || p[-1] == ' ') &&
		    (p[strlen(want)] == ' ' || !p[strlen(want)]))
			return true;
	return false;
}

/* Append s to dst (a space between), or nothing when it does not fit. */
static void add_text(char *dst, size_t size, const char *s)
{
	size_t w = strlen(dst);

	if (w + strlen(s) + 2 < size)
		snprintf(dst + w, size - w, "%s%s", w ? " " : "", s);
}

/* Append a line of text to an excerpt, or nothing when it does not fit. */
static void add_line(char *dst, size_t size, const char *s)
{
	size_t w = strlen(dst);

	if (w + strlen(s) + 2 < size)
		snprintf(dst + w, size - w, "%s\n", s);
}

/*
 * Is a kernel log line worth a finding's excerpt?  Not what every attach
 * prints (vhci_hcd's own lines, the enumeration's device and string
 * lines): what the driver and the core said about it.
 */
static bool phase_log_line(const char *s)
{
	static const char *const noise[] = {
		"vhci_hcd", "new high-speed USB device",
		"new full-speed USB device", "new low-speed USB device",
		"new SuperSpeed USB device", "New USB device found",
		"New USB device strings", "Product: ", "Manufacturer: ",
		"SerialNumber: ", "USB disconnect, device number",
		"SetAddress Request", PLAN_MARK_BEGIN, PLAN_MARK_END,
	};
	const char *p = strstr(s, "probe of ");

	for (size_t i = 0; i < sizeof(noise) / sizeof(noise[0]); i++)
		if (strstr(s, noise[i]))
			return false;
	/* initcall_debug's line for the device itself (1-1, no interface):
	 * the generic driver, every time */
	if (p && strstr(p, " returned 0 ") &&
	    strcspn(p, ":") > (size_t)(strstr(p, " returned") - p))
		return false;
	return true;
}

static void phase_log_add(struct phase_rec *pr, const char *s)
{
	if (pr->log_lines >= EXCERPT_LINES || !phase_log_line(s))
		return;
	add_line(pr->log, sizeof(pr->log), s);
	pr->log_lines++;
}

/* One module's report.txt into its rows (rows[k] for kind k). */
static void read_records(char *text, const char *module, struct row *rows)
{
	char *line, *save = NULL;
	int dm_phase = -1, dm_kind = -1, ex_lines = 0;
	bool in_dmesg = false, began = false;
	struct row *ex_row = NULL;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char a[32], b[64], c[160];
		int k, num, cls, st;

		if (in_dmesg) {
			const char *s = klog_strip_time(line);
			char intf[64], drv[64];
			int e;

			if (began &&
			    sscanf(s, "usbrig-census: %31s %d", a, &k) == 2 &&
			    k >= 0 && k < CK_N) {
				dm_phase = !strcmp(a, "static") ? CP_STATIC :
					   !strcmp(a, "newid") ? CP_NEWID :
					   CP_REPLUG;
				dm_kind = k;
				ex_row = NULL;
				continue;
			}
			/* this module's part starts at its own begin
			 * (census-probe cuts the log there; an older
			 * usbrig's report holds the whole boot) */
			if (sscanf(s, "usbrig-census: begin %63s", b) == 1) {
				began = !strcmp(b, module);
				dm_kind = -1;
				ex_row = NULL;
				continue;
			}
			if (!began || dm_kind < 0)
				continue;
			phase_log_add(&rows[dm_kind].ph[dm_phase], s);
			if (ex_row && ex_lines < EXCERPT_LINES) {
				add_line(ex_row->report, sizeof(ex_row->report),
					 s);
				ex_lines++;
				continue;
			}
			if (klog_report_line(s) && !rows[dm_kind].report[0]) {
				ex_row = &rows[dm_kind];
				snprintf(ex_row->report, sizeof(ex_row->report),
					 "%s: %s\n", phase_names[dm_phase], s);
				ex_lines = 1;
				continue;
			}
			if (klog_probe_error(s, intf, drv, &e)) {
				struct phase_rec *pr =
					&rows[dm_kind].ph[dm_phase];

				if (!strcmp(intf, pr->target_name) &&
				    (!drv[0] || in_drivers(pr->drivers, module, drv)))
					pr->perr = e;
			}
			continue;
		}
		if (!strcmp(line, "dmesg")) {
			in_dmesg = true;
		} else if (sscanf(line, "nodev %31s %d", a, &k) == 2 &&
			   k >= 0 && k < CK_N && phase_of(a) >= 0) {
			rows[k].ph[phase_of(a)].seen = true;
			rows[k].ph[phase_of(a)].nodev = true;
		} else if (sscanf(line, "intf %31s %d %d %x %63s %159s", a, &k,
				  &num, &cls, b, c) == 6 && k >= 0 &&
			   k < CK_N && phase_of(a) >= 0) {
			struct phase_rec *pr = &rows[k].ph[phase_of(a)];

			pr->seen = true;
			if (num == rows[k].plan->kind[k].dev.target) {
				snprintf(pr->target_name,
					 sizeof(pr->target_name), "%.31s", b);
				snprintf(pr->target_drv,
					 sizeof(pr->target_drv), "%.63s", c);
			}
		} else if (sscanf(line, "drivers %31s %d", a, &k) == 2 &&
			   k >= 0 && k < CK_N && phase_of(a) >= 0) {
			const char *p = strchr(line + 8, ' ');

			p = p ? strchr(p + 1, ' ') : NULL;
			snprintf(rows[k].ph[phase_of(a)].drivers, TEXT_MAX,
				 "%s", p ? p + 1 : "");
		} else if (sscanf(line, "node %31s %d %159s", a, &k, c) == 3 &&
			   k >= 0 && k < CK_N && phase_of(a) >= 0) {
			struct phase_rec *pr = &rows[k].ph[phase_of(a)];

			add_text(pr->nodes, sizeof(pr->nodes), c);
		} else if (sscanf(line, "newid-none %d", &k) == 1 && k >= 0 &&
			   k < CK_N) {
			rows[k].newid_none = true;
		} else if (sscanf(line, "removeid-none %d", &k) == 1 &&
			   k >= 0 && k < CK_N) {
			rows[k].removeid_none = true;
		} else if (!strncmp(line, "stuck ", 6)) {
			/* the module's, whichever kind: every row says it */
			for (k = 0; k < CK_N; k++)
				add_text(rows[k].stuck, sizeof(rows[k].stuck),
					 line + 6);
		} else if (sscanf(line, "newid %d %159s %d", &k, c, &st) == 3 &&
			   k >= 0 && k < CK_N) {
			rows[k].newid_wrote = true;
			snprintf(rows[k].newid_path, sizeof(rows[k].newid_path),
				 "%s", c);
			if (st && !rows[k].newid_err)
				rows[k].newid_err = klog_errno_of_text(line);
		}
	}
}

/* What a phase shows: bound, probe-error, other:DRV, unbound, no-driver,
 * no-device, or no-record (the phase never ran). */
static void classify(const struct phase_rec *pr, const char *module,
		     char *out, size_t size, int *err)
{
	*err = 0;
	if (!pr->seen) {
		snprintf(out, size, "no-record");
	} else if (pr->nodev) {
		snprintf(out, size, "no-device");
	} else if (pr->target_drv[0] && strcmp(pr->target_drv, "none") &&
		   in_drivers(pr->drivers, module, pr->target_drv)) {
		snprintf(out, size, "bound");
	} else if (pr->perr) {
		snprintf(out, size, "probe-error");
		*err = pr->perr;
	} else if (pr->target_drv[0] && strcmp(pr->target_drv, "none")) {
		snprintf(out, size, "other:%.40s", pr->target_drv);
	} else if (!strstr(pr->drivers, "usb")) {
		snprintf(out, size, "no-driver");
	} else {
		snprintf(out, size, "unbound");
	}
}

static bool comparable(const char *o)
{
	return !strcmp(o, "bound") || !strcmp(o, "probe-error") ||
	       !strcmp(o, "unbound");
}

/* "PHASE:\n" and the phase's kernel log lines, into r->logs */
static void add_phase_log(struct row *r, const char *title, int phase)
{
	const struct phase_rec *pr = &r->ph[phase];
	size_t w = strlen(r->logs);

	snprintf(r->logs + w, sizeof(r->logs) - w, "%s:\n%s", title,
		 pr->log[0] ? pr->log : "(nothing beyond the enumeration)\n");
}

static void judge(struct row *r)
{
	const struct census_kind_plan *kp = &r->plan->kind[r->kind];
	const char *mod = r->plan->module;
	int e;

	if (kp->unshaped[0]) {
		snprintf(r->st, sizeof(r->st), "not-run");
		snprintf(r->nw, sizeof(r->nw), "not-run");
		snprintf(r->rp, sizeof(r->rp), "not-run");
		return;
	}
	classify(&r->ph[CP_STATIC], mod, r->st, sizeof(r->st), &r->st_err);
	classify(&r->ph[CP_BEFORE], mod, r->nw, sizeof(r->nw), &e);
	if (kp->twin_matches) {
		/* the alias matches the twin too (a class alias with no
		 * field left to change): new_id cannot be told apart */
		snprintf(r->nw, sizeof(r->nw), "class-match");
		snprintf(r->rp, sizeof(r->rp), "n/a");
		goto findings;
	}
	if (!strcmp(r->nw, "bound")) {
		/* the twin matched before any new_id: a class alias */
		snprintf(r->nw, sizeof(r->nw), "already-bound");
	} else if (r->newid_none) {
		snprintf(r->nw, sizeof(r->nw), "no-new-id");
	} else if (r->newid_err) {
		snprintf(r->nw, sizeof(r->nw), "write-error");
		r->nw_err = r->newid_err;
	} else {
		classify(&r->ph[CP_NEWID], mod, r->nw, sizeof(r->nw), &r->nw_err);
	}
	classify(&r->ph[CP_REPLUG], mod, r->rp, sizeof(r->rp), &e);
	if (!strcmp(r->rp, "unbound") || !strncmp(r->rp, "other:", 6) ||
	    !strcmp(r->rp, "no-driver"))
		snprintf(r->rp, sizeof(r->rp), "clean");
	else if ((!strcmp(r->rp, "bound") || !strcmp(r->rp, "probe-error")) &&
		 r->removeid_none)
		snprintf(r->rp, sizeof(r->rp), "kept:no-remove-id");

findings:
	if (comparable(r->st) && comparable(r->nw) &&
	    (strcmp(r->st, r->nw) || r->st_err != r->nw_err)) {
		r->finding = true;
		add_phase_log(r, "static", CP_STATIC);
		add_phase_log(r, "new_id", CP_NEWID);
		snprintf(r->why, sizeof(r->why),
			 "new_id gives %s%s%s, the table %s%s%s", r->nw,
			 r->nw_err ? " " : "", r->nw_err ? strerror(r->nw_err) : "",
			 r->st, r->st_err ? " " : "",
			 r->st_err ? strerror(r->st_err) : "");
	}
	if ((!strcmp(r->rp, "bound") || !strcmp(r->rp, "probe-error")) &&
	    strcmp(r->nw, "already-bound")) {
		r->finding = true;
		add_text(r->why, sizeof(r->why),
			 "probed again after remove_id and a re-plug;");
		add_phase_log(r, "replug", CP_REPLUG);
	}
	if (r->report[0]) {
		r->finding = true;
		add_text(r->why, sizeof(r->why), "a kernel report;");
	}
	if (r->stuck[0]) {
		char t[TEXT_MAX + 48];

		r->finding = true;
		snprintf(t, sizeof(t), "tasks stuck in the kernel after its phases (%s);",
			 r->stuck);
		add_text(r->why, sizeof(r->why), t);
	}
}

/* The bus(es) of a driver list: usb, usb-serial, or both. */
static const char *bus_of(const char *drivers)
{
	bool usb = strstr(drivers, "usb:") != NULL;
	bool ser = strstr(drivers, "usb-serial:") != NULL;

	return ser ? "usb-serial" : usb ? "usb" : "-";
}

/* ---- the child run's own account ---- */

struct run_info {
	char name[80];
	double time_s;
	bool failed;
	bool retried;			/* in retry.log: run a second time */
	char crash[2048];
	char fail[TEXT_MAX];
};

static struct run_info *find_info(struct run_info *v, int n,
				  const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

/* OUT/TAG.log and OUT/TAG.ktap (TAG: run, or retry for the second run of
 * the modules that had no device): what they say of a module replaces
 * what an earlier call read */
static void read_run(const char *out, const char *tag, struct run_info *v,
		     int n)
{
	char path[PATH_MAX * 2], *text, *line, *save = NULL;
	char crash[2048] = "", fail[TEXT_MAX] = "";

	snprintf(path, sizeof(path), "%s/%s.log", out, tag);
	text = fs_read_file(path, REPORT_MAX, NULL);
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char res[16], name[80];
		double t;
		struct run_info *ri;

		if (sscanf(line, "[%*d/%*d] %15s %79s (%lfs)", res, name,
			   &t) != 3)
			continue;
		ri = find_info(v, n, name);
		if (ri) {
			ri->time_s = t;
			ri->failed = !strcmp(res, "FAIL");
			ri->retried = !strcmp(tag, "retry");
		}
	}
	free(text);
	snprintf(path, sizeof(path), "%s/%s.ktap", out, tag);
	text = fs_read_file(path, REPORT_MAX, NULL);
	save = NULL;
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *s = line;
		char name[80];
		struct run_info *ri;

		while (*s == ' ')
			s++;
		if (!strncmp(s, "# crash: ", 9) || !strncmp(s, "# | ", 4)) {
			add_line(crash, sizeof(crash), s + 2);
		} else if (!strncmp(s, "# saw: ", 7) && !fail[0]) {
			snprintf(fail, sizeof(fail), "%s", s + 7);
		} else if (line[0] != ' ' &&
			   (sscanf(line, "ok %*d %79s", name) == 1 ||
			    sscanf(line, "not ok %*d %79s", name) == 1)) {
			ri = find_info(v, n, name);
			/* census-probe's own end of a boot is no report */
			if (strstr(crash, CENSUS_NODEV_RESET))
				crash[0] = '\0';
			if (ri) {
				snprintf(ri->crash, sizeof(ri->crash), "%s",
					 crash);
				snprintf(ri->fail, sizeof(ri->fail), "%s",
					 fail);
			}
			crash[0] = fail[0] = '\0';
		}
	}
	free(text);
}

/* ---- writing ---- */

void census_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void xml_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n')
				fputc(*s, f);
		}
	}
}

static const char *errname(int e)
{
	return e > 0 ? strerror(e) : "";
}

static const char *drivers_of(const struct row *r)
{
	for (int p = 0; p < CP_N; p++)
		if (r->ph[p].drivers[0])
			return r->ph[p].drivers;
	return "";
}

static const char *nodes_of(const struct row *r)
{
	return r->ph[CP_STATIC].nodes[0] ? r->ph[CP_STATIC].nodes :
	       r->ph[CP_NEWID].nodes;
}

static int write_json(const char *path, const char *kver,
		      const struct row *rows, int n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "{\"kernel\": ");
	census_json_str(f, kver);
	fprintf(f, ", \"rows\": [\n");
	for (int i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		fprintf(f, "{\"module\": ");
		census_json_str(f, r->plan->module);
		fprintf(f, ", \"kind\": \"%s\", \"drivers\": ",
			census_kind_names[r->kind]);
		census_json_str(f, drivers_of(r));
		fprintf(f, ", \"static\": \"%s\", \"static_errno\": %d, "
			"\"newid\": \"%s\", \"newid_errno\": %d, "
			"\"replug\": \"%s\", \"nodes\": ", r->st, r->st_err,
			r->nw, r->nw_err, r->rp);
		census_json_str(f, nodes_of(r));
		fprintf(f, ", \"time_s\": %.1f, \"finding\": ", r->time_s);
		census_json_str(f, r->why);
		fprintf(f, ", \"report\": ");
		census_json_str(f, r->report);
		if (r->logs[0]) {
			fprintf(f, ", \"logs\": ");
			census_json_str(f, r->logs);
		}
		fprintf(f, "}%s\n", i + 1 < n ? "," : "");
	}
	fprintf(f, "]}\n");
	return fclose(f) ? -EIO : 0;
}

struct count {
	char what[48];
	int n;
};

static void count(struct count *c, int *nc, const char *what)
{
	int i;

	for (i = 0; i < *nc; i++)
		if (!strcmp(c[i].what, what))
			break;
	if (i == *nc) {
		snprintf(c[i].what, sizeof(c[i].what), "%s", what);
		c[i].n = 0;
		(*nc)++;
	}
	c[i].n++;
}

static void print_counts(FILE *f, const char *title, const struct row *rows,
			 int n, int which)
{
	struct count c[64];
	int nc = 0;

	for (int i = 0; i < n; i++) {
		const char *o = which == 0 ? rows[i].st : which == 1 ?
				rows[i].nw : rows[i].rp;
		char cls[48];

		/* other:DRV counts as other */
		snprintf(cls, sizeof(cls), "%.*s", (int)strcspn(o, ":"), o);
		if (nc < 64)
			count(c, &nc, cls);
	}
	fprintf(f, "%s:", title);
	for (int i = 0; i < nc; i++)
		fprintf(f, " %s %d%s", c[i].what, c[i].n, i + 1 < nc ? "," : "");
	fputc('\n', f);
}

/* text as a code block inside a list item (each line indented) */
static void md_block(FILE *f, const char *text)
{
	const char *p = text;

	fprintf(f, "\n  ```\n");
	while (*p) {
		size_t len = strcspn(p, "\n");

		fprintf(f, "  %.*s\n", (int)len, p);
		p += len + (p[len] == '\n');
	}
	fprintf(f, "  ```\n\n");
}

/* The modules run a second time, in a fresh guest, because their device
 * never enumerated in the first run's boot (census.c, retry_nodev()). */
static void md_retried(FILE *f, const struct row *rows, int n)
{
	const struct census_plan *last = NULL;
	int count = 0;

	for (int i = 0; i < n; i++) {
		if (!rows[i].retried || rows[i].plan == last)
			continue;
		last = rows[i].plan;
		fprintf(f, "%s%s", count++ ? ", " : "Run again in a fresh guest, "
			"their device not enumerated in the first boot: ",
			last->module);
	}
	if (count)
		fprintf(f, ".\n\n");
}

static int write_md(const char *path, const char *kver, const struct row *rows,
		    int n, int n_mod, double elapsed, unsigned int jobs)
{
	FILE *f = fopen(path, "w");
	int findings = 0;

	if (!f)
		return -errno;
	fprintf(f, "# USB driver census of %s\n\n%d module(s), %d row(s) "
		"(one per kind of match), %.0f s with %u job(s).\n\n```\n",
		kver, n_mod, n, elapsed, jobs);
	print_counts(f, "static", rows, n, 0);
	print_counts(f, "new_id", rows, n, 1);
	print_counts(f, "replug", rows, n, 2);
	fprintf(f, "```\n\n");
	md_retried(f, rows, n);
	fprintf(f, "## Findings\n\n");
	for (int i = 0; i < n; i++) {
		if (!rows[i].finding)
			continue;
		findings++;
		fprintf(f, "- **%s** (%s): %s\n", rows[i].plan->module,
			census_kind_names[rows[i].kind], rows[i].why);
		if (rows[i].report[0])
			md_block(f, rows[i].report);
		if (rows[i].logs[0])
			md_block(f, rows[i].logs);
	}
	if (!findings)
		fprintf(f, "None.\n");
	fprintf(f, "\n## Table\n\n| module | kind | drivers | bus | static | "
		"new_id | replug | errno | nodes | time |\n"
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
	for (int i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		const char *e = r->st_err ? errname(r->st_err) :
				errname(r->nw_err);

		fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | "
			"%.1f |\n", r->plan->module,
			census_kind_names[r->kind], drivers_of(r),
			bus_of(drivers_of(r)), r->st, r->nw, r->rp, e,
			nodes_of(r), r->time_s);
	}
	return fclose(f) ? -EIO : 0;
}

static int write_junit(const char *path, const struct row *rows, int n)
{
	FILE *f = fopen(path, "w");
	int failures = 0;

	if (!f)
		return -errno;
	for (int i = 0; i < n; i++)
		failures += rows[i].finding;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuite name=\"usbrig-census\" tests=\"%d\" "
		"failures=\"%d\">\n", n, failures);
	for (int i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		fprintf(f, "  <testcase classname=\"census.%s\" name=\"%s\" "
			"time=\"%.1f\">\n", r->plan->module,
			census_kind_names[r->kind], r->time_s);
		if (!strcmp(r->st, "not-run"))
			fprintf(f, "    <skipped/>\n");
		if (r->finding) {
			fprintf(f, "    <failure message=\"");
			xml_str(f, r->why);
			fprintf(f, "\">");
			xml_str(f, r->report);
			xml_str(f, r->logs);
			fprintf(f, "</failure>\n");
		}
		fprintf(f, "    <system-out>static %s, new_id %s, replug %s",
			r->st, r->nw, r->rp);
		if (r->harness[0]) {
			fprintf(f, "; the run: ");
			xml_str(f, r->harness);
		}
		fprintf(f, "</system-out>\n  </testcase>\n");
	}
	fprintf(f, "</testsuite>\n");
	return fclose(f) ? -EIO : 0;
}

/* ---- the baseline ---- */

/* The value of "key": "..." (or a number) in one JSON row line. */
static void json_field(const char *line, const char *key, char *out,
		       size_t size)
{
	char want[64];
	const char *p;
	size_t n;

	snprintf(want, sizeof(want), "\"%s\": ", key);
	out[0] = '\0';
	p = strstr(line, want);
	if (!p)
		return;
	p += strlen(want);
	if (*p == '"') {
		p++;
		n = strcspn(p, "\"");
	} else {
		n = strcspn(p, ",}");
	}
	snprintf(out, size, "%.*s", (int)n, p);
}

char *census_times(const char *path)
{
	char *text = fs_read_file(path, REPORT_MAX, NULL);
	char *line, *save = NULL, *out = NULL;
	char last[CENSUS_NAME_MAX] = "";
	double t_last = -1;
	size_t len = 0;
	FILE *f;

	if (!text)
		return NULL;
	f = open_memstream(&out, &len);
	if (!f) {
		free(text);
		return NULL;
	}
	/* rows are per module and kind, a module's rows together */
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char mod[CENSUS_NAME_MAX], t[32];
		double v;

		json_field(line, "module", mod, sizeof(mod));
		json_field(line, "time_s", t, sizeof(t));
		if (!mod[0] || !t[0])
			continue;
		v = atof(t);
		if (strcmp(mod, last)) {
			if (last[0])
				fprintf(f, "census-%s %.1f\n", last, t_last);
			snprintf(last, sizeof(last), "%s", mod);
			t_last = v;
		} else if (v > t_last) {
			t_last = v;
		}
	}
	if (last[0])
		fprintf(f, "census-%s %.1f\n", last, t_last);
	free(text);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

/* A report's first line (in ours a newline ends it, in the baseline's
 * JSON text a "\n"), what the change line shows of it. */
static void first_line(const char *s, char *out, size_t size)
{
	const char *esc = strstr(s, "\\n");
	size_t n = strcspn(s, "\n");

	if (esc && (size_t)(esc - s) < n)
		n = (size_t)(esc - s);
	snprintf(out, size, "%.*s", (int)n, s);
}

/*
 * The rows of BASELINE against ours, by module and kind: a changed
 * outcome (and errno), a kernel report that came or went (its presence:
 * the text has times and addresses), a row the baseline lacks.  Each
 * change is a `census: changed:` line; the count of changed rows.
 */
static int compare(const char *baseline, const struct row *rows, int n)
{
	char *text = fs_read_file(baseline, REPORT_MAX, NULL);
	char *line, *save = NULL;
	int changed = 0;
	bool *seen = calloc((size_t)n + 1, sizeof(*seen));

	if (!text || !seen) {
		fprintf(stderr, "usbrig census: %s: %s\n", baseline,
			strerror(errno));
		free(text);
		free(seen);
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char mod[CENSUS_NAME_MAX], kind[32], st[48], nw[48], rp[48];
		char se[16], ne[16], rep[160], shown[160];

		json_field(line, "module", mod, sizeof(mod));
		if (!mod[0])
			continue;
		json_field(line, "kind", kind, sizeof(kind));
		json_field(line, "static", st, sizeof(st));
		json_field(line, "static_errno", se, sizeof(se));
		json_field(line, "newid", nw, sizeof(nw));
		json_field(line, "newid_errno", ne, sizeof(ne));
		json_field(line, "replug", rp, sizeof(rp));
		json_field(line, "report", rep, sizeof(rep));
		for (int i = 0; i < n; i++) {
			const struct row *r = &rows[i];
			bool outcome, report;

			if (strcmp(r->plan->module, mod) ||
			    strcmp(census_kind_names[r->kind], kind))
				continue;
			seen[i] = true;
			outcome = strcmp(r->st, st) || r->st_err != atoi(se) ||
				  strcmp(r->nw, nw) || r->nw_err != atoi(ne) ||
				  strcmp(r->rp, rp);
			report = !r->report[0] != !rep[0];
			changed += outcome || report;
			if (report) {
				first_line(r->report[0] ? r->report : rep,
					   shown, sizeof(shown));
				printf("census: changed: %s (%s): kernel report %s: %s\n",
				       mod, kind, r->report[0] ? "new" : "gone",
				       shown);
			}
			if (outcome) {
				printf("census: changed: %s (%s): static %s%s%s -> %s%s%s, new_id %s%s%s -> %s%s%s, replug %s -> %s\n",
				       mod, kind, st, atoi(se) ? " " : "",
				       errname(atoi(se)), r->st,
				       r->st_err ? " " : "", errname(r->st_err),
				       nw, atoi(ne) ? " " : "", errname(atoi(ne)),
				       r->nw, r->nw_err ? " " : "",
				       errname(r->nw_err), rp, r->rp);
			}
		}
	}
	for (int i = 0; i < n; i++)
		if (!seen[i]) {
			printf("census: new: %s (%s) is not in %s\n",
			       rows[i].plan->module,
			       census_kind_names[rows[i].kind], baseline);
			changed++;
		}
	free(text);
	free(seen);
	return changed;
}

/* ---- the whole ---- */

int census_report(const char *out, const char *kver,
		  const struct census_plan *plans, int n, double elapsed_s,
		  unsigned int jobs, const char *baseline)
{
	struct run_info *ri = calloc((size_t)n + 1, sizeof(*ri));
	struct row *rows = calloc((size_t)n * CK_N + 1, sizeof(*rows));
	char path[PATH_MAX * 2];
	int nr = 0, ret = CENSUS_EXIT_OK, findings = 0, changed;

	if (!ri || !rows) {
		free(ri);
		free(rows);
		return CENSUS_EXIT_ERROR;
	}
	for (int i = 0; i < n; i++)
		snprintf(ri[i].name, sizeof(ri[i].name), "census-%s",
			 plans[i].module);
	read_run(out, "run", ri, n);
	read_run(out, "retry", ri, n);
	for (int i = 0; i < n; i++) {
		struct row *mine = rows + nr;
		struct row by_kind[CK_N];
		char *text;
		bool have;
		int planned = 0;

		memset(by_kind, 0, sizeof(by_kind));
		for (int k = 0; k < CK_N; k++) {
			by_kind[k].plan = &plans[i];
			by_kind[k].kind = k;
			planned += plans[i].kind[k].planned;
		}
		snprintf(path, sizeof(path), "%s/saved/census-%s/report.txt",
			 out, plans[i].module);
		text = fs_read_file(path, REPORT_MAX, NULL);
		have = text != NULL;
		if (have)
			read_records(text, plans[i].module, by_kind);
		free(text);
		for (int k = 0; k < CK_N; k++) {
			struct row *r = &by_kind[k];

			if (!plans[i].kind[k].planned)
				continue;
			r->time_s = ri[i].time_s / (planned ? planned : 1);
			r->retried = ri[i].retried;
			if (!have && !plans[i].kind[k].unshaped[0])
				snprintf(r->harness, sizeof(r->harness),
					 "no record came back%s%s",
					 ri[i].fail[0] ? ": " : "", ri[i].fail);
			if (ri[i].crash[0] && !r->report[0])
				snprintf(r->report, sizeof(r->report), "%s",
					 ri[i].crash);
			judge(r);
			*mine++ = *r;
			nr++;
		}
	}
	for (int i = 0; i < nr; i++)
		findings += rows[i].finding;
	snprintf(path, sizeof(path), "%s/census.json", out);
	if (write_json(path, kver, rows, nr))
		ret = CENSUS_EXIT_ERROR;
	snprintf(path, sizeof(path), "%s/census.md", out);
	if (write_md(path, kver, rows, nr, n, elapsed_s, jobs))
		ret = CENSUS_EXIT_ERROR;
	snprintf(path, sizeof(path), "%s/census.xml", out);
	if (write_junit(path, rows, nr))
		ret = CENSUS_EXIT_ERROR;
	print_counts(stdout, "census: static", rows, nr, 0);
	print_counts(stdout, "census: new_id", rows, nr, 1);
	print_counts(stdout, "census: replug", rows, nr, 2);
	printf("census: %d module(s), %d row(s), %d finding(s), %.0f s with %u job(s) (%.1f s per module); %s/census.md\n",
	       n, nr, findings, elapsed_s, jobs, n ? elapsed_s / n : 0.0, out);
	if (baseline && ret == CENSUS_EXIT_OK) {
		changed = compare(baseline, rows, nr);
		if (changed < 0)
			ret = CENSUS_EXIT_ERROR;
		else if (changed)
			ret = CENSUS_EXIT_CHANGED;
		printf("census: %d row(s) changed against %s\n",
		       changed < 0 ? 0 : changed, baseline);
	}
	free(ri);
	free(rows);
	return ret;
}
