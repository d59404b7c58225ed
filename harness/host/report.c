// SPDX-License-Identifier: GPL-2.0
/*
 * report.c - KTAP, progress lines, transcript and JUnit XML.
 *
 * KTAP (Documentation/dev-tools/ktap.rst): one test per scenario, one
 * subtest per plan step, "# " diagnostics before the result line they
 * explain, subtests indented by two spaces.  A scenario with a skipped
 * step and no failure is reported as skipped (with that step's reason):
 * an expectation that was not checked must not read as a pass.
 */
#define _GNU_SOURCE
#include "plan.h"
#include "report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct report {
	struct rp_result *res;
	int n;
	int next_print;		/* KTAP is printed in order */
	int n_done;
	struct report_opts o;
	struct rp_result *tr_live;	/* the transcript told live */
	int tr_seq;		/* results with a transcript so far */
};

/* ---- a growable string ---------------------------------------------- */

struct sbuf {
	char *s;
	size_t n, cap;
};

static void sb_add(struct sbuf *b, const char *s, size_t len)
{
	if (b->n + len + 1 > b->cap) {
		size_t cap = (b->n + len + 1) * 2;
		char *ns = realloc(b->s, cap);

		if (!ns)
			return;	/* a report without its tail beats none */
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, len);
	b->n += len;
	b->s[b->n] = '\0';
}

static void sb_puts(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		sb_add(b, tmp, (size_t)n);
		return;
	}
	{
		char *big = malloc((size_t)n + 1);

		if (!big)
			return;
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		sb_add(b, big, (size_t)n);
		free(big);
	}
}

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void push_str(char ***v, int *n, const char *s)
{
	char **nv = realloc(*v, sizeof(**v) * (size_t)(*n + 1));

	if (!nv)
		return;
	*v = nv;
	nv[*n] = xstrdup(s);
	if (nv[*n])
		(*n)++;
}

static void free_strs(char **v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- setup ---------------------------------------------------------- */

struct report *report_new(struct scenario *const *sc, int n,
			  const struct report_opts *o)
{
	struct report *r = calloc(1, sizeof(*r));
	int i, j, k;

	if (!r)
		return NULL;
	r->o = *o;
	r->n = n;
	r->res = calloc((size_t)(n ? n : 1), sizeof(*r->res));
	if (!r->res) {
		free(r);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		struct rp_result *res = &r->res[i];

		res->sc = sc[i];
		res->index = i + 1;
		res->res = RP_NONE;
		res->subs = calloc((size_t)sc[i]->n_steps + 1,
				   sizeof(*res->subs));
		if (!res->subs) {
			r->n = i;
			report_free(r);
			return NULL;
		}
		for (j = 0, k = 0; j < sc[i]->n_steps; j++) {
			if (sc[i]->steps[j].kind == PLAN_SAY)
				continue;
			res->subs[k].key = sc[i]->steps[j].key;
			res->subs[k].line = sc[i]->steps[j].line;
			res->subs[k].res = RP_NONE;
			k++;
		}
		res->n_subs = k;
	}
	return r;
}

static void free_result(struct rp_result *res)
{
	int i;

	for (i = 0; i < res->n_subs; i++) {
		free(res->subs[i].desc);
		free(res->subs[i].saw);
		free(res->subs[i].kv);
		free_strs(res->subs[i].diags, res->subs[i].n_diags);
	}
	free(res->subs);
	free_strs(res->diags, res->n_diags);
	free(res->skip);
	free(res->error);
	free(res->crash_what);
	free(res->crash_excerpt);
	free(res->console);
	free(res->console_path);
	if (res->tr_f)
		fclose(res->tr_f);
	free(res->tr_buf);
}

void report_free(struct report *r)
{
	int i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		free_result(&r->res[i]);
	free(r->res);
	free(r);
}

struct rp_result *report_result(struct report *r, int idx)
{
	return idx >= 0 && idx < r->n ? &r->res[idx] : NULL;
}

int report_count(const struct report *r)
{
	return r->n;
}

void report_start(struct report *r)
{
	if (!r->o.ktap || r->o.transcript)
		return;
	fprintf(r->o.ktap, "KTAP version 1\n1..%d\n", r->n);
	fflush(r->o.ktap);
}

/* ---- transcript ------------------------------------------------------ */

static const struct sc_step *step_of(const struct rp_result *res,
				     const struct rp_sub *sub)
{
	return scenario_step_at(res->sc, sub->key);
}

/* One line of text, indented, with its own line breaks indented too. */
static void print_indented(FILE *f, const char *prefix, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);

		/* a serial console ends its lines with \r\n */
		if (len && p[len - 1] == '\r')
			len--;

		fprintf(f, "%s%.*s\n", prefix, len, p);
		if (!nl)
			break;
		p = nl + 1;
	}
}

/*
 * Where a scenario's transcript goes.  One is told live at a time; one
 * that begins while the one before is not done yet (its result waits for
 * the kernel console, run.c) is held in a buffer until its turn
 * (tr_next_live).
 */
static FILE *tr_file(struct report *r, struct rp_result *res)
{
	if (!res->tr_seq)
		res->tr_seq = ++r->tr_seq;
	if (!r->tr_live)
		r->tr_live = res;
	if (r->tr_live == res)
		return r->o.ktap;
	if (!res->tr_f)
		res->tr_f = open_memstream(&res->tr_buf, &res->tr_len);
	return res->tr_f ? res->tr_f : r->o.ktap;
}

/* The live one is done: tell the held ones in the order they began, up
 * to one not done, which goes on live. */
static void tr_next_live(struct report *r)
{
	r->tr_live = NULL;
	for (;;) {
		struct rp_result *next = NULL;
		int i;

		for (i = 0; i < r->n; i++)
			if (r->res[i].tr_f &&
			    (!next || r->res[i].tr_seq < next->tr_seq))
				next = &r->res[i];
		if (!next)
			return;
		fclose(next->tr_f);
		next->tr_f = NULL;
		if (next->tr_buf)
			fwrite(next->tr_buf, 1, next->tr_len, r->o.ktap);
		free(next->tr_buf);
		next->tr_buf = NULL;
		fflush(r->o.ktap);
		if (!next->done) {
			r->tr_live = next;
			return;
		}
	}
}

/* Transcript: a step's diags and result, under its statement. */
static void tr_result(FILE *f, const struct rp_sub *sub)
{
	int d;

	for (d = 0; d < sub->n_diags; d++)
		print_indented(f, "        | ", sub->diags[d]);
	switch (sub->res) {
	case RP_PASS:
		if (sub->at < 0) {	/* judged at the end: no time */
			fprintf(f, "        ok\n");
			break;
		}
		fprintf(f, "        ok%s%s%s (%.1fs)\n", sub->kv ? " (" : "",
			sub->kv ? sub->kv : "", sub->kv ? ")" : "", sub->at);
		break;
	case RP_FAIL:
		fprintf(f, "        FAILED: %s\n", sub->saw ? sub->saw : "");
		break;
	case RP_SKIP:
		fprintf(f, "        skipped: %s\n", sub->saw ? sub->saw : "");
		break;
	case RP_NONE:
		break;
	}
}

/* Transcript: print the statements up to the step of `key` not printed yet
 * (say texts as prose; `expect kernel-report` waits for tr_done); with
 * sub, that step's diags and result under it. */
static void tr_upto(struct report *r, struct rp_result *res, int key,
		    const struct rp_sub *sub)
{
	const struct scenario *sc = res->sc;
	FILE *f;
	int last;

	if (!r->o.ktap || !r->o.transcript)
		return;
	f = tr_file(r, res);
	/* keys are unique, not ordered (copies): up to the step's index */
	for (last = sc->n_steps - 1; key != 1 << 30 && last >= 0; last--)
		if (sc->steps[last].key == key)
			break;
	while (res->tr_next < sc->n_steps && res->tr_next <= last) {
		const struct sc_step *st = &sc->steps[res->tr_next++];

		if (st->kind == PLAN_SAY) {
			fprintf(f, "\n");
			print_indented(f, "  ", st->text);
			continue;
		}
		if (st->kind == PLAN_EXPECT_REPORT)
			continue;
		fprintf(f, "  %s:%d $ %s\n", sc->file, st->line, st->src);
	}
	if (sub)
		tr_result(f, sub);
	fflush(f);
}

static struct rp_sub *sub_at(struct rp_result *res, int key)
{
	int i;

	for (i = 0; i < res->n_subs; i++)
		if (res->subs[i].key == key)
			return &res->subs[i];
	return NULL;
}

void rp_begin(struct report *r, struct rp_result *res, double now)
{
	FILE *f;

	res->begun = true;
	res->t_begin = now;
	if (!r->o.ktap || !r->o.transcript)
		return;
	f = tr_file(r, res);
	fprintf(f, "\n== %s (%s)\n", res->sc->name, res->sc->file);
	if (res->sc->summary)
		print_indented(f, "   ", res->sc->summary);
	fflush(f);
}

void rp_step(struct report *r, struct rp_result *res, int key,
	     enum rp_res what, const char *desc, const char *saw,
	     const char *kv, double now)
{
	struct rp_sub *sub = sub_at(res, key);

	if (!sub) {
		rp_error(res, "the agent reported on step %d, which the "
			 "scenario does not have: %s %s", key,
			 desc ? desc : "", saw ? saw : "");
		return;
	}
	if (sub->res != RP_NONE) {
		rp_error(res, "the agent reported step %d (line %d) twice",
			 key, sub->line);
		return;
	}
	sub->res = what;
	sub->desc = xstrdup(desc);
	sub->saw = xstrdup(saw);
	sub->kv = kv && *kv ? xstrdup(kv) : NULL;
	sub->at = now - res->t_begin;
	/* diags seen since the last result belong to this step */
	sub->diags = res->diags;
	sub->n_diags = res->n_diags;
	res->diags = NULL;
	res->n_diags = 0;
	tr_upto(r, res, key, sub);
}

void rp_diag(struct report *r, struct rp_result *res, const char *text)
{
	(void)r;
	push_str(&res->diags, &res->n_diags, text);
}

__attribute__((format(printf, 1, 0)))
static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

void rp_error(struct rp_result *res, const char *fmt, ...)
{
	va_list ap;

	if (res->error)
		return;
	va_start(ap, fmt);
	res->error = vfmt(fmt, ap);
	va_end(ap);
}

void rp_skip(struct rp_result *res, const char *fmt, ...)
{
	va_list ap;

	if (res->skip)
		return;
	va_start(ap, fmt);
	res->skip = vfmt(fmt, ap);
	va_end(ap);
}

/* The `expect kernel-report` step a report's first line answers (one
 * not answered yet first), or NULL. */
static struct rp_sub *expected_report(struct rp_result *res,
				      const char *what)
{
	struct rp_sub *any = NULL;
	int i;

	for (i = 0; i < res->n_subs; i++) {
		struct rp_sub *sub = &res->subs[i];
		const struct sc_step *st = step_of(res, sub);

		if (!st || st->kind != PLAN_EXPECT_REPORT ||
		    !strstr(what, st->text))
			continue;
		if (sub->res == RP_NONE)
			return sub;
		if (!any)
			any = sub;
	}
	return any;
}

bool rp_crash(struct rp_result *res, const char *what, const char *excerpt)
{
	struct rp_sub *sub = expected_report(res, what);

	if (sub) {
		/* what the scenario expects: that step passes (the first
		 * such report says so), the scenario does not fail */
		if (sub->res == RP_NONE) {
			char *d = NULL;

			sub->res = RP_PASS;
			sub->at = -1;
			if (asprintf(&d, "kernel report: %s", what) >= 0) {
				push_str(&sub->diags, &sub->n_diags, d);
				free(d);
			}
		}
		return true;
	}
	if (res->crash_what)
		return false;	/* the first report is the one that matters */
	res->crash_what = xstrdup(what);
	res->crash_excerpt = xstrdup(excerpt);
	return false;
}

void rp_console(struct rp_result *res, const char *path,
		const char *excerpt)
{
	free(res->console_path);
	free(res->console);
	res->console_path = xstrdup(path);
	res->console = xstrdup(excerpt);
}

/* ---- verdicts --------------------------------------------------------- */

/* The first step that failed (or NULL). */
static const struct rp_sub *first_fail(const struct rp_result *res)
{
	int i;

	for (i = 0; i < res->n_subs; i++)
		if (res->subs[i].res == RP_FAIL)
			return &res->subs[i];
	return NULL;
}

/*
 * An rmmod of a built-in driver that the agent skipped with only teardown
 * after it (else it skips the rest with a reason of its own): the step
 * shows as skipped, the scenario is judged by its other steps.
 */
static bool kept_builtin(const struct rp_result *res,
			 const struct rp_sub *sub)
{
	const struct sc_step *st = step_of(res, sub);

	return st && st->kind == PLAN_RMMOD && sub->saw &&
	       !strcmp(sub->saw, PLAN_WHY_BUILTIN);
}

/* The first skipped step that makes the scenario skipped. */
static const struct rp_sub *first_skip(const struct rp_result *res)
{
	int i;

	for (i = 0; i < res->n_subs; i++)
		if (res->subs[i].res == RP_SKIP &&
		    !kept_builtin(res, &res->subs[i]))
			return &res->subs[i];
	return NULL;
}

/*
 * The `expect kernel-report` steps no report answered (rp_crash) fail;
 * or, when a step of the agent's was skipped (then what makes the report
 * may not have run), they are skipped with its reason.
 */
static void judge_reports(struct rp_result *res)
{
	const struct rp_sub *skipped = first_skip(res);
	char *why = NULL;
	int i;

	for (i = 0; i < res->n_subs; i++) {
		struct rp_sub *sub = &res->subs[i];
		const struct sc_step *st = step_of(res, sub);

		if (!st || st->kind != PLAN_EXPECT_REPORT ||
		    sub->res != RP_NONE)
			continue;
		sub->at = -1;
		if (skipped) {
			sub->res = RP_SKIP;
			sub->saw = xstrdup(skipped->saw ? skipped->saw :
					   "a step was skipped");
			continue;
		}
		sub->res = RP_FAIL;
		if (asprintf(&why, "no kernel report whose first line contains "
			     "\"%s\" was logged during the scenario (its steps "
			     "and its cleanup)", st->text) >= 0)
			sub->saw = why;
	}
}

static enum rp_res decide(struct rp_result *res)
{
	int i;

	if (res->skip)
		return RP_SKIP;
	if (res->sc->skip) {
		rp_skip(res, "%s", res->sc->skip);
		return RP_SKIP;
	}
	if (!res->begun && !res->error)
		rp_error(res, "never ran (the agent did not begin it)");
	if (res->begun && !res->ended && !res->error)
		rp_error(res, "no end: the scenario did not finish");
	if (res->begun)
		judge_reports(res);
	if (res->crash_what)
		rp_error(res, "kernel crash report: %s", res->crash_what);
	if (res->error || first_fail(res))
		return RP_FAIL;
	for (i = 0; i < res->n_subs; i++)
		if (res->subs[i].res == RP_NONE) {
			rp_error(res, "the agent reported nothing for line "
				 "%d", res->subs[i].line);
			return RP_FAIL;
		}
	if (first_skip(res))
		return RP_SKIP;
	return RP_PASS;
}

static const char *skip_reason(const struct rp_result *res)
{
	const struct rp_sub *s;

	if (res->skip)
		return res->skip;
	s = first_skip(res);
	if (s)
		return s->saw ? s->saw : "a step was skipped";
	return "";
}

/* KTAP names and directives may not hold '#' or line breaks. */
static void ktap_clean(char *dst, size_t size, const char *s)
{
	size_t i = 0;

	for (; s && *s && i + 1 < size; s++)
		dst[i++] = (*s == '#' || *s == '\n' || *s == '\r') ? ' ' : *s;
	dst[i] = '\0';
}

static void ktap_diag(FILE *f, const char *indent, const char *prefix,
		      const char *text)
{
	char pre[256];

	snprintf(pre, sizeof(pre), "%s# %s", indent, prefix);
	print_indented(f, pre, text);
}

static void print_ktap(struct report *r, struct rp_result *res)
{
	const struct scenario *sc = res->sc;
	FILE *f = r->o.ktap;
	char name[512];
	int i, d;

	if (!f || r->o.transcript)
		return;
	if (res->res == RP_SKIP && !res->begun) {
		ktap_clean(name, sizeof(name), skip_reason(res));
		fprintf(f, "ok %d %s # SKIP %s\n", res->index, sc->name, name);
		fflush(f);
		return;
	}
	fprintf(f, "  KTAP version 1\n  # Subtest: %s\n  1..%d\n", sc->name,
		res->n_subs);
	for (i = 0; i < res->n_subs; i++) {
		const struct rp_sub *sub = &res->subs[i];
		const struct sc_step *st = step_of(res, sub);

		ktap_clean(name, sizeof(name), st ? st->src : "?");
		for (d = 0; d < sub->n_diags; d++)
			ktap_diag(f, "  ", "", sub->diags[d]);
		if (sub->kv)
			fprintf(f, "  # %s\n", sub->kv);
		switch (sub->res) {
		case RP_PASS:
			fprintf(f, "  ok %d %s\n", i + 1, name);
			break;
		case RP_FAIL:
			fprintf(f, "  # %s:%d: expected: %s\n", sc->file,
				sub->line, st ? st->src : "?");
			ktap_diag(f, "  ", "saw: ", sub->saw ? sub->saw : "");
			fprintf(f, "  not ok %d %s\n", i + 1, name);
			break;
		case RP_SKIP: {
			char why[512];

			ktap_clean(why, sizeof(why), sub->saw);
			fprintf(f, "  ok %d %s # SKIP %s\n", i + 1, name, why);
			break;
		}
		case RP_NONE:
			fprintf(f, "  ok %d %s # SKIP not run\n", i + 1, name);
			break;
		}
	}
	for (d = 0; d < res->n_diags; d++)
		ktap_diag(f, "  ", "", res->diags[d]);
	if (res->error)
		ktap_diag(f, "", "error: ", res->error);
	if (res->crash_what)
		ktap_diag(f, "", "crash: ", res->crash_what);
	if (res->crash_excerpt)
		ktap_diag(f, "", "| ", res->crash_excerpt);
	if (res->console_path && res->res == RP_FAIL)
		fprintf(f, "# console: %s\n", res->console_path);
	if (res->res == RP_SKIP) {
		ktap_clean(name, sizeof(name), skip_reason(res));
		fprintf(f, "ok %d %s # SKIP %s\n", res->index, sc->name, name);
	} else {
		fprintf(f, "%s %d %s\n", res->res == RP_PASS ? "ok" : "not ok",
			res->index, sc->name);
	}
	fflush(f);
}

/* One line: "file:line: statement: saw" of the first failure. */
static void first_failure(const struct rp_result *res, char *buf,
			  size_t size)
{
	const struct rp_sub *sub = first_fail(res);

	if (res->error) {
		snprintf(buf, size, "%s: %s", res->sc->file, res->error);
	} else if (sub) {
		const struct sc_step *st = step_of(res, sub);

		snprintf(buf, size, "%s:%d: %s: %s", res->sc->file, sub->line,
			 st ? st->src : "?", sub->saw ? sub->saw : "");
	} else {
		buf[0] = '\0';
	}
}

static void print_progress(struct report *r, struct rp_result *res)
{
	static const char *const words[] = {
		[RP_PASS] = "PASS", [RP_FAIL] = "FAIL", [RP_SKIP] = "SKIP",
		[RP_NONE] = "????",
	};
	FILE *f = r->o.progress;
	char why[600];
	double secs = res->ended || res->begun ?
		      res->t_end - res->t_begin : 0;

	if (!f)
		return;
	why[0] = '\0';
	if (res->res == RP_FAIL)
		first_failure(res, why, sizeof(why));
	else if (res->res == RP_SKIP)
		snprintf(why, sizeof(why), "%s", skip_reason(res));
	/* the reason may hold line breaks: keep one line */
	for (char *p = why; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	/* a progress line stays short: the details are in the KTAP */
	if (strlen(why) > 200)
		strcpy(why + 197, "...");
	fprintf(f, "[%d/%d] %s %s (%.1fs)%s%s\n", r->n_done, r->n,
		words[res->res], res->sc->name, secs < 0 ? 0 : secs,
		why[0] ? " - " : "", why);
	fflush(f);
}

static void tr_done(struct report *r, struct rp_result *res)
{
	FILE *f;
	int i;

	if (!r->o.ktap || !r->o.transcript)
		return;
	tr_upto(r, res, 1 << 30, NULL);
	f = tr_file(r, res);
	/* judged when the scenario ended: told last */
	for (i = 0; i < res->n_subs; i++) {
		const struct rp_sub *sub = &res->subs[i];
		const struct sc_step *st = step_of(res, sub);

		if (!st || st->kind != PLAN_EXPECT_REPORT)
			continue;
		fprintf(f, "  %s:%d $ %s\n", res->sc->file, st->line, st->src);
		tr_result(f, sub);
	}
	if (res->error)
		print_indented(f, "  !! ", res->error);
	if (res->crash_what)
		print_indented(f, "  !! crash: ", res->crash_what);
	if (res->crash_excerpt)
		print_indented(f, "  !! | ", res->crash_excerpt);
	if (res->res == RP_FAIL && res->console_path)
		fprintf(f, "  (kernel console: %s)\n", res->console_path);
	fprintf(f, "== %s: %s\n", res->res == RP_PASS ? "PASS" :
		res->res == RP_FAIL ? "FAIL" : "SKIP", res->sc->name);
	if (res->res == RP_SKIP)
		fprintf(f, "   (%s)\n", skip_reason(res));
	fflush(f);
	if (r->tr_live == res)
		tr_next_live(r);
}

void report_done(struct report *r, struct rp_result *res, double now)
{
	if (res->done)
		return;
	res->done = true;
	if (res->begun && !res->ended)
		res->t_end = now;
	res->res = decide(res);
	r->n_done++;
	if (!r->o.transcript)
		print_progress(r, res);
	tr_done(r, res);
	while (r->next_print < r->n && r->res[r->next_print].done)
		print_ktap(r, &r->res[r->next_print++]);
}

void report_note(struct report *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->o.ktap)
		return;
	fputs(r->o.transcript ? "" : "# ", r->o.ktap);
	va_start(ap, fmt);
	vfprintf(r->o.ktap, fmt, ap);
	va_end(ap);
	fputc('\n', r->o.ktap);
	fflush(r->o.ktap);
}

void report_counts(const struct report *r, int *passed, int *failed,
		   int *skipped)
{
	int i;

	*passed = *failed = *skipped = 0;
	for (i = 0; i < r->n; i++) {
		switch (r->res[i].res) {
		case RP_PASS:
			(*passed)++;
			break;
		case RP_SKIP:
			(*skipped)++;
			break;
		default:
			(*failed)++;
			break;
		}
	}
}

void report_finish(struct report *r)
{
	int i, p, fl, s;

	for (i = 0; i < r->n; i++)
		if (!r->res[i].done)
			report_done(r, &r->res[i], r->res[i].t_begin);
	report_counts(r, &p, &fl, &s);
	if (r->o.ktap) {
		fprintf(r->o.ktap, "%d passed, %d failed, %d skipped\n", p, fl,
			s);
		fflush(r->o.ktap);
	}
}

/* ---- JUnit ------------------------------------------------------------ */

/* XML 1.0 text: escape markup, drop what XML cannot hold. */
static void xml_text(struct sbuf *b, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&':
			sb_puts(b, "&amp;");
			break;
		case '<':
			sb_puts(b, "&lt;");
			break;
		case '>':
			sb_puts(b, "&gt;");
			break;
		case '"':
			sb_puts(b, "&quot;");
			break;
		case '\r':
			break;	/* a serial console's line ends */
		default:
			if ((c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f)
				sb_puts(b, "?");	/* not valid XML */
			else
				sb_add(b, s, 1);
		}
	}
}

static const char *res_word(enum rp_res r)
{
	return r == RP_PASS ? "ok" : r == RP_FAIL ? "FAIL" :
	       r == RP_SKIP ? "skip" : "no result";
}

void report_side_by_side(FILE *f, const struct report *const *r, int nk)
{
	int n = r[0]->n, w = 8, i, k, differ = 0;
	int p = 0, fl = 0, s = 0;

	for (i = 0; i < n; i++) {
		int len = (int)strlen(r[0]->res[i].sc->name);

		w = len > w ? len : w;
	}
	fprintf(f, "# side by side:\n# %-*s", w, "scenario");
	for (k = 0; k < nk; k++)
		fprintf(f, "  %s", r[k]->o.kernel ? r[k]->o.kernel : "?");
	fputc('\n', f);
	for (i = 0; i < n; i++) {
		enum rp_res first = RP_NONE;
		bool diff = false;

		fprintf(f, "# %-*s", w, r[0]->res[i].sc->name);
		for (k = 0; k < nk; k++) {
			enum rp_res res = r[k]->res[i].res;
			int cw = k + 1 < nk && r[k]->o.kernel ?
				 (int)strlen(r[k]->o.kernel) : 0;

			fprintf(f, "  %-*s", cw, res_word(res));
			if (res == RP_SKIP)
				continue;
			if (first == RP_NONE)
				first = res;
			else if (res != first)
				diff = true;
		}
		fputs(diff ? "  <- differs\n" : "\n", f);
		differ += diff;
	}
	fprintf(f, "# %d of %d scenario(s) differ between the kernels\n",
		differ, n);
	for (k = 0; k < nk; k++) {
		int kp, kf, ks;

		report_counts(r[k], &kp, &kf, &ks);
		p += kp;
		fl += kf;
		s += ks;
	}
	fprintf(f, "%d passed, %d failed, %d skipped\n", p, fl, s);
}

/* What happened, step by step (system-out, and a failure's body). */
static void step_log(struct sbuf *b, const struct rp_result *res)
{
	int i, d;

	for (i = 0; i < res->n_subs; i++) {
		const struct rp_sub *sub = &res->subs[i];
		const struct sc_step *st = step_of(res, sub);

		for (d = 0; d < sub->n_diags; d++)
			sb_printf(b, "    | %s\n", sub->diags[d]);
		sb_printf(b, "%s:%d: %s: %s%s%s%s%s\n", res->sc->file,
			  sub->line, st ? st->src : "?", res_word(sub->res),
			  sub->saw ? ": " : "", sub->saw ? sub->saw : "",
			  sub->kv ? " " : "", sub->kv ? sub->kv : "");
	}
	for (d = 0; d < res->n_diags; d++)
		sb_printf(b, "    | %s\n", res->diags[d]);
}

static void junit_case(struct sbuf *b, const struct rp_result *res,
		       const char *kernel)
{
	const struct rp_sub *fail = first_fail(res);
	double t = res->begun ? res->t_end - res->t_begin : 0;
	struct sbuf body = { 0 };
	char msg[600];

	sb_puts(b, "    <testcase classname=\"usbrig");
	if (kernel) {
		sb_puts(b, ".");
		xml_text(b, kernel);
	}
	sb_puts(b, "\" name=\"");
	xml_text(b, res->sc->name);
	if (kernel) {
		sb_puts(b, " [");
		xml_text(b, kernel);
		sb_puts(b, "]");
	}
	sb_puts(b, "\" file=\"");
	xml_text(b, res->sc->file);
	sb_printf(b, "\" time=\"%.3f\">\n", t < 0 ? 0 : t);
	if (res->res == RP_SKIP) {
		sb_puts(b, "      <skipped message=\"");
		xml_text(b, skip_reason(res));
		sb_puts(b, "\"/>\n");
	} else if (res->res == RP_FAIL) {
		const struct sc_step *st = fail ? step_of(res, fail) : NULL;

		first_failure(res, msg, sizeof(msg));
		if (fail) {
			sb_printf(&body, "expectation: %s:%d: %s\n",
				  res->sc->file, fail->line,
				  st ? st->src : "?");
			sb_printf(&body, "agent saw: %s\n",
				  fail->saw ? fail->saw : "");
		}
		if (res->error)
			sb_printf(&body, "error: %s\n", res->error);
		if (res->crash_excerpt)
			sb_printf(&body, "\n--- crash report ---\n%s\n",
				  res->crash_excerpt);
		sb_puts(&body, "\n--- steps ---\n");
		step_log(&body, res);
		if (res->console)
			sb_printf(&body, "\n--- kernel console (%s) ---\n%s\n",
				  res->console_path ? res->console_path : "",
				  res->console);
		sb_printf(b, "      <failure type=\"%s\" message=\"",
			  res->crash_what ? "crash" :
			  fail ? "expectation" : "error");
		xml_text(b, msg);
		sb_puts(b, "\">");
		xml_text(b, body.s);
		sb_puts(b, "</failure>\n");
		free(body.s);
		body = (struct sbuf){ 0 };
	}
	step_log(&body, res);
	if (body.s) {
		sb_puts(b, "      <system-out>");
		xml_text(b, body.s);
		sb_puts(b, "</system-out>\n");
	}
	free(body.s);
	sb_puts(b, "    </testcase>\n");
}

int report_write_junit(const struct report *r, const char *path)
{
	return report_write_junit_all(&r, 1, path);
}

int report_write_junit_all(const struct report *const *rs, int n_rs,
			   const char *path)
{
	struct sbuf b = { 0 }, suites = { 0 };
	double total = 0;
	int tests = 0, failures = 0, skips = 0, ret = 0;
	FILE *f;

	for (int k = 0; k < n_rs; k++) {
		const struct report *r = rs[k];
		const char *kernel = r->o.kernel;
		double t = 0;
		int p, fl, s, i;

		report_counts(r, &p, &fl, &s);
		for (i = 0; i < r->n; i++)
			if (r->res[i].begun && r->res[i].t_end > r->res[i].t_begin)
				t += r->res[i].t_end - r->res[i].t_begin;
		sb_puts(&suites, "  <testsuite name=\"usbrig");
		if (kernel) {
			sb_puts(&suites, " ");
			xml_text(&suites, kernel);
		}
		sb_printf(&suites, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n",
			  r->n, fl, s, t);
		for (i = 0; i < r->n; i++)
			junit_case(&suites, &r->res[i], kernel);
		sb_puts(&suites, "  </testsuite>\n");
		tests += r->n;
		failures += fl;
		skips += s;
		total += t;
	}
	sb_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		  "<testsuites tests=\"%d\" failures=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
		  tests, failures, skips, total);
	if (suites.s)
		sb_puts(&b, suites.s);
	free(suites.s);
	sb_puts(&b, "</testsuites>\n");
	f = fopen(path, "w");
	if (!f) {
		free(b.s);
		return -errno;
	}
	if (b.s && fwrite(b.s, 1, b.n, f) != b.n)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -EIO;
	free(b.s);
	return ret;
}
