// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_report.c - what a child `usbrig` run of fuzz scenarios says about
 * kernel reports, and the fuzz run's summary.  The console machinery
 * (console.c, run.c) has already tied each report to the scenario it
 * belongs to; the KTAP carries it as `# crash: FIRST LINE` and `# | `
 * excerpt lines before the scenario's result line (report.c).
 */
#define _GNU_SOURCE
#include "fuzz_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/fsutil.h"
#include "census_report.h"
#include "klog.h"

#define KTAP_MAX	(64u << 20)

static int add_excerpt(char **ex, const char *line)
{
	size_t old = *ex ? strlen(*ex) : 0, n = strlen(line);
	char *e;

	if (old + n > (1u << 20))	/* a report's excerpt, bounded */
		return 0;
	e = realloc(*ex, old + n + 2);
	if (!e)
		return -ENOMEM;
	memcpy(e + old, line, n);
	e[old + n] = '\n';
	e[old + n + 1] = '\0';
	*ex = e;
	return 0;
}

int fz_read_crashes(const char *ktap, struct fz_crash **out)
{
	char *text = fs_read_file(ktap, KTAP_MAX, NULL), *line, *save = NULL;
	char first[512] = "", *ex = NULL;
	struct fz_crash *v = NULL;
	int n = 0, ret = 0;

	*out = NULL;
	if (!text)
		return -errno;
	for (line = strtok_r(text, "\n", &save); line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[80];
		struct fz_crash *nv;

		if (!strncmp(line, "# crash: ", 9)) {
			if (!first[0])
				snprintf(first, sizeof(first), "%s",
					 klog_strip_time(line + 9));
			ret = add_excerpt(&ex, line + 9);
			continue;
		}
		if (!strncmp(line, "# | ", 4)) {
			ret = add_excerpt(&ex, line + 4);
			continue;
		}
		if (sscanf(line, "ok %*d %79s", name) != 1 &&
		    sscanf(line, "not ok %*d %79s", name) != 1)
			continue;
		if (first[0]) {
			nv = realloc(v, sizeof(*v) * (size_t)(n + 1));
			if (!nv) {
				ret = -ENOMEM;
				break;
			}
			v = nv;
			memset(&v[n], 0, sizeof(v[n]));
			snprintf(v[n].scenario, sizeof(v[n].scenario), "%s",
				 name);
			snprintf(v[n].first, sizeof(v[n].first), "%s", first);
			v[n].excerpt = ex;
			fz_signature(first, ex, v[n].sig, sizeof(v[n].sig));
			ex = NULL;
			n++;
		}
		free(ex);
		ex = NULL;
		first[0] = '\0';
	}
	free(ex);
	free(text);
	if (ret) {
		fz_crashes_free(v, n);
		return ret;
	}
	*out = v;
	return n;
}

void fz_crashes_free(struct fz_crash *v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i].excerpt);
	free(v);
}

static bool starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* s without what varies between two runs of the same bug */
static void normalise(const char *s, char *out, size_t size)
{
	size_t o = 0;

	while (*s && o + 1 < size) {
		if (starts(s, "CPU: ") || starts(s, "PID: ")) {
			s += 5;	/* the number after it, and a blank */
			while (isdigit((unsigned char)*s))
				s++;
			while (*s == ' ')
				s++;
			continue;
		}
		if (*s == '+' && starts(s + 1, "0x")) {	/* +0x7c/0xf5 */
			s++;
			while (*s && *s != ' ' && *s != ',')
				s++;
			continue;
		}
		if (isxdigit((unsigned char)*s) &&
		    (o == 0 || !isalnum((unsigned char)out[o - 1]))) {
			size_t k = 0;

			if (starts(s, "0x"))
				k = 2;
			while (isxdigit((unsigned char)s[k]))
				k++;
			if (k >= 8 && !isalnum((unsigned char)s[k])) {
				out[o++] = 'X';	/* an address */
				s += k;
				continue;
			}
		}
		out[o++] = *s++;
	}
	out[o] = '\0';
	/* "INFO: task kworker/0:1:45 blocked ...": the task varies */
	if (strstr(out, "INFO: task ") == out) {
		char *b = strstr(out, " blocked");

		if (b)
			memmove(out + 11, b + 1, strlen(b + 1) + 1);
	}
	while (o && (out[o - 1] == ' ' || out[o - 1] == '\r'))
		out[--o] = '\0';
}

void fz_signature(const char *first, const char *excerpt, char *sig,
		  size_t size)
{
	char norm[FZ_SIG_MAX], rip[96] = "";
	const char *r = excerpt ? strstr(excerpt, "RIP: 0010:") : NULL;

	normalise(klog_strip_time(first), norm, sizeof(norm));
	if (r) {
		size_t k;

		r += 10;
		k = strcspn(r, "+ \n");
		if (k >= sizeof(rip))
			k = sizeof(rip) - 1;
		memcpy(rip, r, k);
		rip[k] = '\0';
	}
	if (rip[0] && !strstr(norm, rip))
		snprintf(sig, size, "%s @ %s", norm, rip);
	else
		snprintf(sig, size, "%s", norm);
}

void fz_sig_expect(const char *sig, const char *first, char *buf,
		   size_t size)
{
	const char *at = strstr(sig, " @ ");
	size_t lim = at ? (size_t)(at - sig) : strlen(sig), best = 0, from = 0;
	char part[FZ_SIG_MAX];

	/* the longest run of the signature's words the line has as it is */
	for (size_t i = 0; i < lim; i++) {
		if (i && sig[i - 1] != ' ')
			continue;
		for (size_t k = lim - i; k > best; k--) {
			if (k >= sizeof(part))
				continue;
			memcpy(part, sig + i, k);
			part[k] = '\0';
			if (strstr(first, part)) {
				best = k;
				from = i;
				break;
			}
		}
	}
	while (best && sig[from + best - 1] == ' ')
		best--;
	if (best >= size)
		best = size - 1;
	memcpy(buf, sig + from, best);
	buf[best] = '\0';
}

/* ---- the summary ---- */

static int write_json(const char *path, const struct fz_summary *s)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "{\n  \"seed\": %llu,\n  \"kernel\": ", s->seed);
	census_json_str(f, s->kernel);
	fprintf(f, ",\n  \"devices\": %ld,\n  \"guest_runs\": %d,\n"
		"  \"seconds\": %.1f,\n  \"fuzz_seconds\": %.1f,\n"
		"  \"devices_per_minute\": %.1f,\n  \"findings\": [",
		s->devices, s->runs, s->seconds, s->fuzz_seconds,
		s->fuzz_seconds > 0 ? 60.0 * (double)s->devices /
				      s->fuzz_seconds : 0.0);
	for (int i = 0; i < s->n; i++) {
		const struct fz_finding *x = &s->f[i];

		fprintf(f, "%s\n    { \"dir\": ", i ? "," : "");
		census_json_str(f, x->dir);
		fprintf(f, ", \"signature\": ");
		census_json_str(f, x->sig);
		fprintf(f, ", \"first_line\": ");
		census_json_str(f, x->first);
		fprintf(f, ", \"seed_gadget\": ");
		census_json_str(f, x->seed);
		fprintf(f, ", \"device\": %ld, \"planted\": %s, "
			"\"confirmed\": %s, \"mutations\": %d, "
			"\"minimised\": %d, \"guest_runs\": %d, "
			"\"minimal\": [", x->device,
			x->planted ? "true" : "false",
			x->confirmed ? "true" : "false", x->n_mut, x->n_min,
			x->tests);
		for (int j = 0; j < x->n_min; j++) {
			fputs(j ? ", " : "", f);
			census_json_str(f, x->muts[j]);
		}
		fputs("] }", f);
	}
	fputs(s->n ? "\n  ]\n}\n" : "]\n}\n", f);
	return fclose(f) ? -EIO : 0;
}

static int write_md(const char *path, const struct fz_summary *s)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "# usbrig fuzz: hostile devices against %s\n\n"
		"Seed %llu: %ld device(s) in %.0f s of fuzzing "
		"(%.1f per minute), %.0f s in all with the minimisations, "
		"%d guest run(s).  The same seed draws the same devices "
		"(devices.txt lists each one's mutations).\n\n",
		s->kernel, s->seed, s->devices, s->fuzz_seconds,
		s->fuzz_seconds > 0 ? 60.0 * (double)s->devices /
				      s->fuzz_seconds : 0.0,
		s->seconds, s->runs);
	fprintf(f, "## Findings: %d\n\n", s->n);
	if (!s->n)
		fputs("No kernel report.\n", f);
	for (int i = 0; i < s->n; i++) {
		const struct fz_finding *x = &s->f[i];

		fprintf(f, "### %s: `%s`%s\n\n", x->dir, x->sig,
			x->planted ? " (planted)" : "");
		fprintf(f, "- first line: `%s`\n- device %ld, seed gadget "
			"`%s`, %d mutation(s)\n", x->first, x->device,
			x->seed, x->n_mut);
		if (!x->confirmed) {
			fprintf(f, "- **not reproduced alone**: the report "
				"may belong to an earlier device of the same "
				"boot; `%s/original.gadget` and the excerpt are "
				"kept\n\n", x->dir);
			continue;
		}
		fprintf(f, "- minimised to %d mutation(s) in %d guest "
			"run(s):\n", x->n_min, x->tests);
		for (int j = 0; j < x->n_min; j++)
			fprintf(f, "  - `%s`\n", x->muts[j]);
		if (!x->n_min)
			fputs("  - none: the seed gadget alone does it\n", f);
		fprintf(f, "- reproduce: `build/usbrig %s/repro.scenario`; "
			"read `%s/%s-minimised.gadget` (each change after a "
			"`# fuzz` comment) and `%s/kernel.log`\n\n", x->dir,
			x->dir, x->dir, x->dir);
	}
	return fclose(f) ? -EIO : 0;
}

int fz_write_summary(const char *dir, const struct fz_summary *s)
{
	char path[4200];
	int ret;

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	ret = write_json(path, s);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/summary.md", dir);
	return write_md(path, s);
}
