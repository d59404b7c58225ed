// SPDX-License-Identifier: GPL-2.0
/*
 * test_kernel_report.c - `expect kernel-report TEXT`: the statement
 * (harness/host/scenario_stmt.c), which never reaches the plan, and its
 * verdict (harness/host/report.c): the kernel reports the console put in
 * the scenario answer it, or fail it.
 */
#define _GNU_SOURCE
#include "report.h"
#include "scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static const char warn[] =
	"[    5.163879] WARNING: CPU: 0 PID: 1 at drivers/usb/core/hub.c:1 t";

static struct scenario *parse(const char *text, char *err, size_t size)
{
	struct scenario *s = NULL;

	err[0] = '\0';
	if (scenario_parse("k.scenario", text, strlen(text), NULL, &s, err,
			   size))
		return NULL;
	return s;
}

static void test_parse(void **state)
{
	static const char *const bad[][2] = {
		{ "run \"true\"\nexpect kernel-report\n",
		  "k.scenario:2:21: expected the text of the report's first "
		  "line (a quoted string)" },
		{ "run \"true\"\nexpect kernel-report WARNING\n",
		  "k.scenario:2:22: expected the text of the report's first "
		  "line as a quoted string" },
		{ "run \"true\"\nexpect kernel-report \"\"\n",
		  "k.scenario:2:22: the text is empty (every report would "
		  "match)" },
		{ "run \"true\"\nexpect kernel-report \"${g.dev}\"\n",
		  "k.scenario:2:22: no substitutions in a kernel report's text" },
		{ "run \"true\"\nexpect kernel-report \"x\" within 5s\n",
		  "k.scenario:2:26: unexpected 'within' after the statement" },
	};
	char err[SC_ERR_MAX], *plan = NULL;
	struct scenario *s;
	size_t len = 0, i;
	FILE *f;

	(void)state;
	s = parse("run \"true\"\nexpect kernel-report \"hub.c:1 t\"\n", err,
		  sizeof(err));
	assert_non_null(s);
	assert_int_equal(s->n_steps, 2);
	assert_int_equal(s->steps[1].kind, PLAN_EXPECT_REPORT);
	assert_string_equal(s->steps[1].text, "hub.c:1 t");
	assert_string_equal(s->steps[1].src,
			    "expect kernel-report \"hub.c:1 t\"");
	assert_ptr_equal(scenario_step_at(s, 2), &s->steps[1]);
	assert_false(PLAN_KIND_IN_PLAN(PLAN_EXPECT_REPORT));
	/* the host's own: not in the plan */
	f = open_memstream(&plan, &len);
	assert_int_equal(scenario_write_plan(f, s, 0), 0);
	fclose(f);
	assert_string_equal(plan, "scenario k \"k.scenario\" 60000\n"
			    "step 1 run \"true\" 0 - 10000\nend\n");
	free(plan);
	scenario_free(s);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = parse(bad[i][0], err, sizeof(err));
		assert_null(s);
		assert_string_equal(err, bad[i][1]);
	}
}

struct rig {
	struct scenario *sc[1];
	struct report *r;
	struct rp_result *res;
	FILE *fo, *fe;
	char *out, *err;
	size_t out_len, err_len;
};

static void rig_init(struct rig *g, bool transcript)
{
	struct report_opts ro;
	char err[SC_ERR_MAX];

	memset(g, 0, sizeof(*g));
	g->sc[0] = parse("# Warns.\nrun \"echo w > /dev/kmsg\"\n"
			 "expect kernel-report \"hub.c:1 t\"\n", err,
			 sizeof(err));
	assert_non_null(g->sc[0]);
	g->fo = open_memstream(&g->out, &g->out_len);
	g->fe = open_memstream(&g->err, &g->err_len);
	ro = (struct report_opts){
		.ktap = g->fo, .progress = g->fe, .transcript = transcript,
	};
	g->r = report_new(g->sc, 1, &ro);
	assert_non_null(g->r);
	g->res = report_result(g->r, 0);
	report_start(g->r);
	rp_begin(g->r, g->res, 1.0);
}

/* The agent's results for the `run` step (line 2), then its end. */
static void rig_steps(struct rig *g, enum rp_res what)
{
	rp_step(g->r, g->res, 2, what, "run", what == RP_SKIP ?
		"needs the patched kernel" : NULL, NULL, 1.5);
	g->res->ended = true;
	g->res->t_end = 2.0;
}

static void rig_done(struct rig *g)
{
	report_done(g->r, g->res, 3.0);
	report_finish(g->r);
	fflush(g->fo);
	fflush(g->fe);
}

static void rig_fini(struct rig *g)
{
	report_free(g->r);
	scenario_free(g->sc[0]);
	fclose(g->fo);
	fclose(g->fe);
	free(g->out);
	free(g->err);
}

/* The report it expects: the step passes, the scenario too. */
static void test_expected(void **state)
{
	struct rig g;

	(void)state;
	rig_init(&g, false);
	rig_steps(&g, RP_PASS);
	assert_true(rp_crash(g.res, warn, "excerpt"));
	rig_done(&g);
	assert_int_equal(g.res->res, RP_PASS);
	assert_null(g.res->crash_what);
	assert_non_null(strstr(g.out, "  ok 1 run \"echo w > /dev/kmsg\"\n"
			       "  # kernel report: [    5.163879] WARNING: CPU: "
			       "0 PID: 1 at drivers/usb/core/hub.c:1 t\n"
			       "  ok 2 expect kernel-report \"hub.c:1 t\"\n"
			       "ok 1 k\n"));
	rig_fini(&g);
}

/* No report: the step fails, and says what was missing. */
static void test_missing(void **state)
{
	struct rig g;

	(void)state;
	rig_init(&g, false);
	rig_steps(&g, RP_PASS);
	rig_done(&g);
	assert_int_equal(g.res->res, RP_FAIL);
	assert_non_null(strstr(g.out, "  # k.scenario:3: expected: expect "
			       "kernel-report \"hub.c:1 t\"\n  # saw: no kernel "
			       "report whose first line contains \"hub.c:1 t\" "
			       "was logged during the scenario (its steps and "
			       "its cleanup)\n  not ok 2 expect kernel-report "
			       "\"hub.c:1 t\"\nnot ok 1 k\n"));
	assert_non_null(strstr(g.err, "[1/1] FAIL k (1.0s) - k.scenario:3: "
			       "expect kernel-report \"hub.c:1 t\": no kernel "
			       "report"));
	rig_fini(&g);
}

/* Another report fails it, whichever came first. */
static void test_unexpected(void **state)
{
	struct rig g;

	(void)state;
	rig_init(&g, false);
	rig_steps(&g, RP_PASS);
	assert_false(rp_crash(g.res, "[    5.2] BUG: unable to handle page "
			      "fault", "excerpt 2"));
	assert_true(rp_crash(g.res, warn, "excerpt"));
	rig_done(&g);
	assert_int_equal(g.res->res, RP_FAIL);
	assert_non_null(strstr(g.out, "  ok 2 expect kernel-report \"hub.c:1 "
			       "t\"\n# error: kernel crash report: [    5.2] "
			       "BUG: unable to handle page fault\n"));
	rig_fini(&g);
}

/* The step that would make the report was skipped: so is the check. */
static void test_skipped(void **state)
{
	struct rig g;

	(void)state;
	rig_init(&g, false);
	rig_steps(&g, RP_SKIP);
	rig_done(&g);
	assert_int_equal(g.res->res, RP_SKIP);
	assert_non_null(strstr(g.out, "  ok 2 expect kernel-report \"hub.c:1 "
			       "t\" # SKIP needs the patched kernel\n"));
	rig_fini(&g);
}

/* The transcript tells the check after the steps, when it is judged. */
static void test_transcript(void **state)
{
	struct rig g;

	(void)state;
	rig_init(&g, true);
	rig_steps(&g, RP_PASS);
	rp_crash(g.res, warn, "excerpt");
	rig_done(&g);
	assert_non_null(strstr(g.out, "  k.scenario:2 $ run \"echo w > "
			       "/dev/kmsg\"\n        ok (0.5s)\n"
			       "  k.scenario:3 $ expect kernel-report "
			       "\"hub.c:1 t\"\n        | kernel report: "
			       "[    5.163879] WARNING: CPU: 0 PID: 1 at "
			       "drivers/usb/core/hub.c:1 t\n        ok\n"
			       "== PASS: k\n"));
	rig_fini(&g);
}

/*
 * The transcript tells one scenario at a time: the next one begins while
 * the console has not shown the end of the one before (run.c waits for
 * it), and is held until that one is done.
 */
static void test_transcript_order(void **state)
{
	struct scenario *sc[2];
	struct report_opts ro;
	struct rp_result *a, *b;
	struct report *r;
	char err[SC_ERR_MAX], *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	sc[0] = parse("run \"true\"\n", err, sizeof(err));
	sc[1] = parse("run \"false\" status 1\n", err, sizeof(err));
	assert_non_null(sc[0]);
	assert_non_null(sc[1]);
	free(sc[1]->name);
	sc[1]->name = strdup("l");
	f = open_memstream(&out, &len);
	ro = (struct report_opts){ .ktap = f, .transcript = true };
	r = report_new(sc, 2, &ro);
	a = report_result(r, 0);
	b = report_result(r, 1);
	rp_begin(r, a, 1.0);
	rp_step(r, a, 1, RP_PASS, "run", NULL, NULL, 1.5);
	a->ended = true;
	rp_begin(r, b, 2.0);
	rp_step(r, b, 1, RP_PASS, "run", NULL, NULL, 2.5);
	fflush(f);
	/* b is held while a waits for the console */
	assert_null(strstr(out, "== l"));
	report_done(r, a, 3.0);
	b->ended = true;
	report_done(r, b, 3.5);
	report_finish(r);
	fflush(f);
	assert_string_equal(out,
			    "\n== k (k.scenario)\n"
			    "  k.scenario:1 $ run \"true\"\n        ok (0.5s)\n"
			    "== PASS: k\n"
			    "\n== l (k.scenario)\n"
			    "  k.scenario:1 $ run \"false\" status 1\n"
			    "        ok (0.5s)\n"
			    "== PASS: l\n"
			    "2 passed, 0 failed, 0 skipped\n");
	report_free(r);
	scenario_free(sc[0]);
	scenario_free(sc[1]);
	fclose(f);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_expected),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_unexpected),
		cmocka_unit_test(test_skipped),
		cmocka_unit_test(test_transcript),
		cmocka_unit_test(test_transcript_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
