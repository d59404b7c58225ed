// SPDX-License-Identifier: GPL-2.0
/*
 * test_scenario.c - the scenario parser, the plan writer and the
 * reporters of build/usbrig (harness/host/).
 *
 * The test links the harness libraries as usbrig does.  The harness
 * headers come before cmocka.h, whose fail()/skip() macros must not meet
 * them.
 */
#define _GNU_SOURCE
#include "plan.h"
#include "report.h"
#include "scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* ---- helpers ------------------------------------------------------------ */

/* Gadget files are "checked" by name: "bad.gadget" fails with a message
 * shaped like usbrig-gadget's, every other name passes. */
static int n_checks;

static int fake_check(void *ctx, const char *path, char *msg, size_t len)
{
	(void)ctx;
	n_checks++;
	if (strstr(path, "bad.gadget")) {
		snprintf(msg, len, "%s:3:7: unknown keyword 'edpoint'", path);
		return -1;
	}
	return 0;
}

static const struct sc_opts opts = {
	.root = "/repo",
	.check_gadget = fake_check,
};

static struct scenario *parse_ok(const char *file, const char *text)
{
	char err[SC_ERR_MAX];
	struct scenario *s = NULL;
	int ret = scenario_parse(file, text, strlen(text), &opts, &s, err,
				 sizeof(err));

	if (ret)
		print_error("unexpected error: %s\n", err);
	assert_int_equal(ret, 0);
	assert_non_null(s);
	return s;
}

/* Parse text that must fail with exactly the message `want`. */
static void parse_err(const char *text, const char *want)
{
	char err[SC_ERR_MAX];
	struct scenario *s = (struct scenario *)1;
	int ret = scenario_parse("t.scenario", text, strlen(text), &opts, &s,
				 err, sizeof(err));

	assert_int_equal(ret, -EINVAL);
	assert_null(s);
	assert_string_equal(err, want);
}

static char *plan_of(const struct scenario *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(scenario_write_plan(f, s, 0), 0);
	fclose(f);
	return buf;
}

/* ---- a full scenario: model and plan --------------------------------- */

static const char full_text[] =
	"# Teach usb-storage a vendor/product pair,\n"
	"# then check the bind.\n"
	"\n"
	"name newid-two-fields   # a comment after a statement\n"
	"timeout 90\n"
	"gadget g gadgets/examples/vendor-bulk.gadget\n"
	"gadget h ./local/two.gadget\n"
	"modprobe usb-storage\n"
	"say \"A device no driver knows.\"\n"
	"attach g\n"
	"expect unbound g 0 for 2s\n"
	"write /sys/bus/usb/drivers/usb-storage/new_id \"1209 0001\" expect ok\n"
	"expect bound g 0 usb-storage within 10s\n"
	"write /sys/bus/usb/drivers/usb-storage/new_id \"1209\" expect EINVAL\n"
	"read /sys/bus/usb/drivers/usb-storage/new_id contains \"1209 0001\"\n"
	"write /sys/bus/usb/drivers/usb-storage/unbind \"${g.intf0}\" expect ok\n"
	"expect probe-error g 0 cdc_acm EINVAL within 500ms\n"
	"attach h no-wait within 5s\n"
	"expect node \"/dev/ttyUSB0\"\n"
	"expect no-node /dev/ttyUSB1 within 3s\n"
	"expect kmsg \"config 1 has\\tan \\\"invalid\\\" \\x7e\"\n"
	"run \"echo hi > /dev/ttyUSB0; cat /dev/ttyUSB0\" output-contains \"hi\" "
	"within 20s\n"
	"run \"false\" status 1\n"
	"run \"true\" status any\n"
	"detach g\n"
	"rmmod usb-storage\n";

static const char full_plan[] =
	"scenario newid-two-fields \"tests/x/full.scenario\" 90000\n"
	"gadget g \"/usbrig/gadgets/vendor-bulk.gadget\"\n"
	"gadget h \"/usbrig/gadgets/two.gadget\"\n"
	"step 8 modprobe \"usb-storage\"\n"
	"step 10 attach g verify 30000\n"
	"step 11 expect-unbound g 0 for 2000\n"
	"step 12 write \"/sys/bus/usb/drivers/usb-storage/new_id\" \"1209 0001\" ok\n"
	"step 13 expect-bound g 0 \"usb-storage\" within 10000\n"
	"step 14 write \"/sys/bus/usb/drivers/usb-storage/new_id\" \"1209\" EINVAL\n"
	"step 15 read \"/sys/bus/usb/drivers/usb-storage/new_id\" contains \"1209 0001\"\n"
	"step 16 write \"/sys/bus/usb/drivers/usb-storage/unbind\" \"${g.intf0}\" ok\n"
	"step 17 expect-probe-error g 0 \"cdc_acm\" EINVAL 500\n"
	"step 18 attach h no-wait 5000\n"
	"step 19 expect-node \"/dev/ttyUSB0\" 10000\n"
	"step 20 expect-no-node \"/dev/ttyUSB1\" 3000\n"
	"step 21 expect-kmsg \"config 1 has\\tan \\\"invalid\\\" ~\" 10000\n"
	"step 22 run \"echo hi > /dev/ttyUSB0; cat /dev/ttyUSB0\" 0 \"hi\" 20000\n"
	"step 23 run \"false\" 1 - 10000\n"
	"step 24 run \"true\" - - 10000\n"
	"step 25 detach g 10000\n"
	"step 26 rmmod \"usb-storage\"\n"
	"end\n";

static void test_full_model(void **state)
{
	struct scenario *s;

	(void)state;
	n_checks = 0;
	s = parse_ok("tests/x/full.scenario", full_text);
	assert_string_equal(s->name, "newid-two-fields");
	assert_string_equal(s->summary,
			    "Teach usb-storage a vendor/product pair, then "
			    "check the bind.");
	assert_int_equal(s->timeout_s, 90);
	assert_int_equal(s->n_gadgets, 2);
	assert_int_equal(n_checks, 2);
	/* repo-relative, and relative to the scenario's folder */
	assert_string_equal(s->gadgets[0].path,
			    "/repo/gadgets/examples/vendor-bulk.gadget");
	assert_string_equal(s->gadgets[1].path, "tests/x/./local/two.gadget");
	assert_int_equal(s->n_steps, 19);
	assert_int_equal(s->steps[1].kind, PLAN_SAY);
	assert_string_equal(s->steps[1].text, "A device no driver knows.");
	assert_int_equal(s->steps[4].kind, PLAN_WRITE);
	assert_string_equal(s->steps[4].src,
			    "write /sys/bus/usb/drivers/usb-storage/new_id "
			    "\"1209 0001\" expect ok");
	assert_int_equal(s->steps[6].err, EINVAL);
	assert_int_equal(s->steps[9].kind, PLAN_EXPECT_PROBE_ERROR);
	assert_int_equal(s->steps[9].timeout_ms, 500);
	assert_string_equal(s->steps[13].text,
			    "config 1 has\tan \"invalid\" ~");
	assert_int_equal(s->steps[15].status, 1);
	assert_null(s->steps[16].text);
	assert_int_equal(s->steps[16].status, -1);
	assert_ptr_equal(scenario_step_at(s, 13), &s->steps[5]);
	assert_null(scenario_step_at(s, 9));	/* say: not a step */
	scenario_free(s);
}

static void test_full_plan(void **state)
{
	struct scenario *s;
	char *plan;

	(void)state;
	s = parse_ok("tests/x/full.scenario", full_text);
	plan = plan_of(s);
	assert_string_equal(plan, full_plan);
	free(plan);
	scenario_free(s);
}

/* Every plan line splits back into the words the agent expects. */
static void test_plan_round_trip(void **state)
{
	struct plan_tok t[PLAN_TOKENS_MAX];
	struct scenario *s;
	char *plan, *line, *save = NULL;
	int n_lines = 0;

	(void)state;
	s = parse_ok("tests/x/full.scenario", full_text);
	plan = plan_of(s);
	for (line = strtok_r(plan, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		int n = plan_split(line, t, PLAN_TOKENS_MAX, 0, NULL);

		assert_true(n > 0);
		if (!strcmp(t[0].s, "step") && !strcmp(t[2].s, "expect-kmsg"))
			assert_string_equal(t[3].s,
					    "config 1 has\tan \"invalid\" ~");
		if (!strcmp(t[0].s, "step") && !strcmp(t[2].s, "run") &&
		    !strcmp(t[1].s, "22")) {
			assert_int_equal(n, 7);
			assert_string_equal(t[3].s, "echo hi > /dev/ttyUSB0; "
					    "cat /dev/ttyUSB0");
			assert_false(t[4].quoted);
		}
		n_lines++;
	}
	assert_int_equal(n_lines, 22);
	free(plan);
	scenario_free(s);
}

/* ---- defaults ------------------------------------------------------------ */

static void test_defaults(void **state)
{
	struct scenario *s;

	(void)state;
	s = parse_ok("dir/detach-while-bound.scenario",
		     "gadget g a.gadget\nattach g\nexpect bound g 1 option\n");
	assert_string_equal(s->name, "detach-while-bound");
	assert_null(s->summary);
	assert_int_equal(s->timeout_s, SC_TIMEOUT_DEFAULT_S);
	assert_int_equal(s->steps[0].mode, PLAN_VERIFY);
	assert_int_equal(s->steps[0].timeout_ms, 30000);
	assert_int_equal(s->steps[1].mode, PLAN_WITHIN);
	assert_int_equal(s->steps[1].intf, 1);
	assert_int_equal(s->steps[1].timeout_ms, 10000);
	scenario_free(s);

	/* a default step timeout is clamped to a short scenario budget */
	s = parse_ok("t.scenario", "timeout 5\ngadget g a.gadget\nattach g\n");
	assert_int_equal(s->steps[0].timeout_ms, 5000);
	scenario_free(s);

	/* skip needs no steps; CRLF and blank/comment lines are fine */
	s = parse_ok("t.scenario", "# only a skip\r\n\r\n  skip \"later\"\r\n");
	assert_string_equal(s->skip, "later");
	assert_int_equal(s->n_steps, 0);
	scenario_free(s);

	s = parse_ok("t.scenario", "requires module option\nrequires kernel "
		     "patched\nmodprobe option\n");
	assert_int_equal(s->n_reqs, 2);
	assert_int_equal(s->reqs[0].kind, SC_REQ_MODULE);
	assert_string_equal(s->reqs[0].arg, "option");
	assert_int_equal(s->reqs[1].kind, SC_REQ_PATCHED);
	scenario_free(s);

	s = parse_ok("t.scenario", "requires kernel >= 6.12\nmodprobe x\n");
	assert_int_equal(s->reqs[0].kind, SC_REQ_KERNEL_VERSION);
	assert_string_equal(s->reqs[0].arg, ">= 6.12");
	scenario_free(s);
}

/* `requires kernel OP VERSION` against what uname -r says */
static void test_kernel_version(void **state)
{
	static const struct {
		const char *kver, *req;
		bool want;
	} cases[] = {
		{ "6.1.0-57-amd64", "< 6.12", true },
		{ "6.1.0-57-amd64", ">= 6.12", false },
		{ "6.12.118+deb12-amd64", ">= 6.12", true },
		{ "6.12.118+deb12-amd64", "= 6.12", true },
		{ "6.12.118+deb12-amd64", "< 6.12", false },
		{ "6.12.118+deb12-amd64", "> 6.12", false },
		{ "6.12.118+deb12-amd64", "> 6.12.100", true },
		{ "6.12.118+deb12-amd64", "<= 6.12.118", true },
		{ "6.1.192-usbrig", ">= 6.1.100", true },
		{ "6.1.192-usbrig", "= 6.1", true },
		{ "6.1.192-usbrig", "> 6", false },
		{ "7.0.0", "> 6", true },
		{ "6.1.0-57-amd64", "= 6.1.0", true },
		{ "vmlinuz", ">= 6", false },
		{ "6.1.0", "== 6.1", false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (sc_kernel_matches(cases[i].kver, cases[i].req) !=
		    cases[i].want)
			fail_msg("%s %s: expected %d", cases[i].kver,
				 cases[i].req, cases[i].want);
	parse_err("requires kernel >= six\n",
		  "t.scenario:1:20: bad kernel version 'six' (digits and dots: 6.12, 6.1.90)");
	parse_err("requires kernel ~ 6.12\n",
		  "t.scenario:1:17: unknown kernel requirement '~' (known: patched, < <= = >= > VERSION)");
	parse_err("requires kernel >=\n",
		  "t.scenario:1:19: expected a kernel version (6.12)");
}

/* ---- errors: every one names file:line:col -------------------------- */

static void test_errors(void **state)
{
	(void)state;
	parse_err("modprobe x\nfrobnicate g\n",
		  "t.scenario:2:1: unknown statement 'frobnicate'");
	parse_err("gadget g a.gadget\nattach q\n",
		  "t.scenario:2:8: unknown gadget id 'q' (declare it with "
		  "`gadget q FILE` first)");
	parse_err("  write /sys/x \"1 2\" expect EWHAT\n",
		  "t.scenario:1:29: expected ok or an errno name, not 'EWHAT'");
	parse_err("gadget g a.gadget\nattach g\n"
		  "expect probe-error g 0 cdc_acm EFOO\n",
		  "t.scenario:3:32: unknown errno name 'EFOO'");
	parse_err("write /sys/x \"1 2 expect ok\n",
		  "t.scenario:1:14: missing closing quote of the value to "
		  "write");
	parse_err("write /sys/x \"a\\qb\" expect ok\n",
		  "t.scenario:1:16: unknown escape '\\q' (known: \\n \\t \\r "
		  "\\\\ \\\" \\xHH)");
	parse_err("write /sys/x \"a\\x0\" expect ok\n",
		  "t.scenario:1:16: \\x needs two hex digits (not \\x00)");
	parse_err("write sys/x \"1\" expect ok\n",
		  "t.scenario:1:7: 'sys/x' is not an absolute path");
	parse_err("write /sys/x \"1\"\n",
		  "t.scenario:1:17: expected `expect ok` or `expect ERRNO` "
		  "after the value");
	parse_err("gadget g a.gadget\nattach g within 0s\n",
		  "t.scenario:2:17: duration '0s' out of range (1ms..600s)");
	parse_err("gadget g a.gadget\nattach g within 10min\n",
		  "t.scenario:2:17: bad duration '10min' (units: s, ms)");
	parse_err("timeout 10\ngadget g a.gadget\nattach g within 20s\n",
		  "t.scenario:3:17: 20000 ms is longer than the scenario "
		  "timeout (10s)");
	parse_err("timeout 4000\n",
		  "t.scenario:1:9: duration '4000' out of range (1ms..3600s)");
	parse_err("gadget g bad.gadget\n",
		  "t.scenario:1:10: gadget file '/repo/bad.gadget': "
		  "/repo/bad.gadget:3:7: unknown keyword 'edpoint'");
	parse_err("gadget g a.gadget\ngadget g b.gadget\n",
		  "t.scenario:2:8: gadget id 'g' declared twice");
	parse_err("gadget G a.gadget\n",
		  "t.scenario:1:8: bad gadget id 'G' (a lower-case letter, "
		  "then letters, digits, '_')");
	parse_err("gadget g a.gadget\nattach g\nattach g\n",
		  "t.scenario:3:8: gadget 'g' is already attached");
	parse_err("gadget g a.gadget\ndetach g\n",
		  "t.scenario:2:8: gadget 'g' is not attached at this point");
	parse_err("gadget g a.gadget\nexpect bound g 0 usb-storage\n",
		  "t.scenario:2:14: gadget 'g' is not attached at this point");
	parse_err("gadget g a.gadget\nattach g\nexpect bound g 256 x\n",
		  "t.scenario:3:16: an interface number out of range "
		  "(0..255)");
	parse_err("gadget g a.gadget\nattach g\nexpect bound g 0 x sometime\n",
		  "t.scenario:3:20: unexpected 'sometime' after the statement");
	parse_err("gadget g a.gadget\nattach g\nexpect bogus g 0\n",
		  "t.scenario:3:8: unknown expectation 'bogus' (known: bound, "
		  "unbound, probe-error, node, no-node, kmsg, probe, "
		  "dynid-add, dynid-remove, kernel-report)");
	parse_err("gadget g a.gadget\nattach g\nexpect bound g 0 x for\n",
		  "t.scenario:3:23: expected a duration (e.g. 10s, 500ms)");
	parse_err("write /sys/x \"${g.dev}\" expect ok\n",
		  "t.scenario:1:14: '${g.dev}': unknown gadget id 'g'");
	parse_err("gadget g a.gadget\nwrite /sys/x \"${g.intf0}\" expect ok\n",
		  "t.scenario:2:14: '${g.intf0}': gadget 'g' is not attached "
		  "at this point");
	parse_err("gadget g a.gadget\nattach g\nwrite /sys/x \"${g.port}\" "
		  "expect ok\n",
		  "t.scenario:3:14: '${g.port}': unknown attribute (dev, "
		  "busid, intfN)");
	parse_err("gadget g a.gadget\nattach g\nwrite /sys/x \"${g.intf01}\" "
		  "expect ok\n",
		  "t.scenario:3:14: '${g.intf01}': bad interface number");
	parse_err("write /sys/x \"${g.dev\" expect ok\n",
		  "t.scenario:1:14: unterminated '${' in string");
	parse_err("run echo\n",
		  "t.scenario:1:5: expected the command as a quoted string");
	parse_err("run \"x\" status 1 status 2\n",
		  "t.scenario:1:18: a second `status`");
	parse_err("run \"x\" exit 1\n",
		  "t.scenario:1:9: expected status, output-contains or within");
	parse_err("read /sys/x has \"y\"\n",
		  "t.scenario:1:13: expected equals, contains or not-contains");
	parse_err("name a\nname b\n",
		  "t.scenario:2:1: a second `name` (first on line 1)");
	parse_err("name a/b\nmodprobe x\n",
		  "t.scenario:1:6: bad name 'a/b' (letters, digits, '_', '-', "
		  "'.')");
	parse_err("requires firmware x\n",
		  "t.scenario:1:10: unknown requirement 'firmware' (known: "
		  "module, kernel, config, tool, gadget)");
	parse_err("modprobe \"usb-storage\"\n",
		  "t.scenario:1:10: expected a module name, not a quoted "
		  "string");
	parse_err("modprobe a\"b\"\n", "t.scenario:1:11: a quote glued to a "
		  "word");
	parse_err("write /sys/x \"1\"x expect ok\n",
		  "t.scenario:1:17: a word glued to a quoted string");
	parse_err("modprobe x\x01\n", "t.scenario:1:11: control character "
		  "0x01");
	parse_err("# nothing\n", "t.scenario:1:1: the scenario has no steps");
	parse_err("", "t.scenario:1:1: the scenario has no steps");
}

static void test_error_name_from_file(void **state)
{
	char err[SC_ERR_MAX];
	struct scenario *s;
	const char *text = "modprobe x\n";

	(void)state;
	assert_int_equal(scenario_parse("a b.scenario", text, strlen(text),
					&opts, &s, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "a b.scenario:1:1: the file name does not "
			    "make a valid scenario name; add `name NAME`");
}

/* A statement whose plan line would not fit is refused at load time. */
static void test_too_long(void **state)
{
	size_t n = 1200;
	char *text = malloc(n + 64);
	char err[SC_ERR_MAX];
	struct scenario *s;
	size_t i;

	(void)state;
	assert_non_null(text);
	/* 1200 bytes of \x01 become 4800 bytes in the plan */
	strcpy(text, "write /sys/x \"");
	for (i = 0; i < n / 4; i++)
		strcat(text, "\\x01");
	strcat(text, "\" expect ok\n");
	assert_int_equal(scenario_parse("t.scenario", text, strlen(text),
					&opts, &s, err, sizeof(err)), 0);
	scenario_free(s);
	text = realloc(text, 4 * n + 64);
	strcpy(text, "write /sys/x \"");
	for (i = 0; i < n; i++)
		strcat(text, "\\x01");
	strcat(text, "\" expect ok\n");
	assert_int_equal(scenario_parse("t.scenario", text, strlen(text),
					&opts, &s, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.scenario:1:1: line too long (max 4096 "
			    "bytes)");
	free(text);
}

static void test_errno_names(void **state)
{
	(void)state;
	assert_int_equal(plan_errno_value("EINVAL"), EINVAL);
	assert_int_equal(plan_errno_value("ENODEV"), ENODEV);
	assert_int_equal(plan_errno_value("EBUSY"), EBUSY);
	assert_int_equal(plan_errno_value("einval"), 0);
	assert_string_equal(plan_errno_name(EAGAIN), "EAGAIN");
	assert_null(plan_errno_name(0));
}

/* ---- reports ---------------------------------------------------------- */

struct rig {
	struct scenario *sc[3];
	struct report *r;
	char *out, *err;
	size_t out_len, err_len;
	FILE *fo, *fe;
};

static void rig_init(struct rig *g, bool transcript)
{
	struct report_opts ro;

	memset(g, 0, sizeof(*g));
	g->sc[0] = parse_ok("s/a.scenario",
			    "# First.\ngadget g a.gadget\nattach g\n"
			    "say \"Now the write.\"\n"
			    "write /sys/bus/usb/drivers/usb-storage/new_id "
			    "\"1209 0001\" expect ok\n"
			    "expect bound g 0 usb-storage\n");
	g->sc[1] = parse_ok("s/b.scenario",
			    "modprobe cdc_acm\nrun \"echo # hash\" "
			    "output-contains \"x\"\nrmmod cdc_acm\n");
	g->sc[2] = parse_ok("s/c.scenario", "skip \"not yet\"\n");
	g->fo = open_memstream(&g->out, &g->out_len);
	g->fe = open_memstream(&g->err, &g->err_len);
	ro = (struct report_opts){
		.ktap = g->fo, .progress = g->fe, .transcript = transcript,
	};
	g->r = report_new(g->sc, 3, &ro);
	assert_non_null(g->r);
}

static void rig_fini(struct rig *g)
{
	int i;

	report_free(g->r);
	for (i = 0; i < 3; i++)
		scenario_free(g->sc[i]);
	fclose(g->fo);
	fclose(g->fe);
	free(g->out);
	free(g->err);
}

/* Scenario a passes (b finishes first but prints second), b fails,
 * c is skipped. */
static void rig_run(struct rig *g)
{
	struct report *r = g->r;
	struct rp_result *a = report_result(r, 0);
	struct rp_result *b = report_result(r, 1);
	struct rp_result *c = report_result(r, 2);

	report_start(r);
	rp_skip(c, "not yet");
	report_done(r, c, 0);

	rp_begin(r, b, 1.0);
	rp_step(r, b, 1, RP_PASS, "modprobe", NULL, NULL, 1.5);
	rp_diag(r, b, "output: hash");
	rp_step(r, b, 2, RP_FAIL, "run", "exit 0, output \"# hash\"", NULL,
		2.0);
	rp_step(r, b, 3, RP_SKIP, "rmmod", "an earlier step failed", NULL,
		2.0);
	b->ended = true;
	b->t_end = 2.5;
	rp_console(b, "build/runs/x/console.log", "[ 1.0] <usb> & more\n");
	report_done(r, b, 2.5);

	rp_begin(r, a, 3.0);
	rp_step(r, a, 3, RP_PASS, "attach", NULL, NULL, 4.0);
	rp_step(r, a, 5, RP_PASS, "write", NULL, NULL, 4.1);
	rp_diag(r, a, "driver usb-storage");
	rp_step(r, a, 6, RP_PASS, "bound", NULL, "latency_us=1834", 4.2);
	a->ended = true;
	a->t_end = 4.5;
	report_done(r, a, 4.5);
	report_finish(r);
	fflush(g->fo);
	fflush(g->fe);
}

static const char ktap_want[] =
	"KTAP version 1\n"
	"1..3\n"
	"  KTAP version 1\n"
	"  # Subtest: a\n"
	"  1..3\n"
	"  ok 1 attach g\n"
	"  ok 2 write /sys/bus/usb/drivers/usb-storage/new_id \"1209 0001\" "
	"expect ok\n"
	"  # driver usb-storage\n"
	"  # latency_us=1834\n"
	"  ok 3 expect bound g 0 usb-storage\n"
	"ok 1 a\n"
	"  KTAP version 1\n"
	"  # Subtest: b\n"
	"  1..3\n"
	"  ok 1 modprobe cdc_acm\n"
	"  # output: hash\n"
	"  # s/b.scenario:2: expected: run \"echo # hash\" output-contains "
	"\"x\"\n"
	"  # saw: exit 0, output \"# hash\"\n"
	"  not ok 2 run \"echo   hash\" output-contains \"x\"\n"
	"  ok 3 rmmod cdc_acm # SKIP an earlier step failed\n"
	"# console: build/runs/x/console.log\n"
	"not ok 2 b\n"
	"ok 3 c # SKIP not yet\n"
	"1 passed, 1 failed, 1 skipped\n";

static void test_ktap(void **state)
{
	struct rig g;

	(void)state;
	rig_init(&g, false);
	rig_run(&g);
	assert_string_equal(g.out, ktap_want);
	/* progress: one line per scenario, in the order they finished */
	assert_non_null(strstr(g.err, "[1/3] SKIP c (0.0s) - not yet\n"));
	assert_non_null(strstr(g.err, "[2/3] FAIL b (1.5s) - s/b.scenario:2: "
			       "run \"echo # hash\" output-contains \"x\": "
			       "exit 0, output \"# hash\"\n"));
	assert_non_null(strstr(g.err, "[3/3] PASS a (1.5s)\n"));
	rig_fini(&g);
}

static void test_transcript(void **state)
{
	struct rig g;

	(void)state;
	rig_init(&g, true);
	rig_run(&g);
	assert_non_null(strstr(g.out, "\n== a (s/a.scenario)\n   First.\n"
			       "  s/a.scenario:3 $ attach g\n        ok (1.0s)\n"
			       "\n  Now the write.\n"
			       "  s/a.scenario:5 $ write "));
	assert_non_null(strstr(g.out, "        | driver usb-storage\n"
			       "        ok (latency_us=1834) (1.2s)\n"
			       "== PASS: a\n"));
	assert_non_null(strstr(g.out, "        FAILED: exit 0, output "
			       "\"# hash\"\n"));
	assert_non_null(strstr(g.out, "== FAIL: b\n"));
	/* the closing line is the last line in every mode */
	assert_non_null(strstr(g.out, "\n1 passed, 1 failed, 1 skipped\n"));
	assert_int_equal(g.out[g.out_len - 1], '\n');
	rig_fini(&g);
}

/* A scenario that never ended fails, and names why. */
static void test_no_end(void **state)
{
	struct rig g;
	struct rp_result *a;

	(void)state;
	rig_init(&g, false);
	a = report_result(g.r, 0);
	rp_begin(g.r, a, 1.0);
	rp_step(g.r, a, 3, RP_PASS, "attach", NULL, NULL, 1.1);
	rp_crash(a, "BUG: kernel NULL pointer dereference", "RIP: x\nCall");
	report_done(g.r, a, 9.0);
	assert_int_equal(a->res, RP_FAIL);
	assert_string_equal(a->error, "no end: the scenario did not finish");
	report_finish(g.r);
	fflush(g.fo);
	assert_non_null(strstr(g.out, "  ok 2 write /sys/bus/usb/drivers/"
			       "usb-storage/new_id \"1209 0001\" expect ok "
			       "# SKIP not run\n"));
	assert_non_null(strstr(g.out, "# error: no end: the scenario did not "
			       "finish\n# crash: BUG: kernel NULL pointer "
			       "dereference\n# | RIP: x\n# | Call\n"
			       "not ok 1 a\n"));
	/* never begun: failed, not silently passed */
	assert_non_null(strstr(g.out, "not ok 2 b\n"));
	assert_non_null(strstr(g.out, "0 passed, 2 failed, 1 skipped\n"));
	rig_fini(&g);
}

/*
 * An rmmod of a built-in driver that the agent skipped with only teardown
 * after it: the step shows as skipped, the scenario passes on its other
 * steps.  Skipped for any other reason, it skips the scenario.
 */
static void test_builtin_rmmod(void **state)
{
	static const char *const why[] = {
		PLAN_WHY_BUILTIN, "needs the patched kernel",
	};
	struct rp_result *b;
	struct rig g;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		rig_init(&g, false);
		b = report_result(g.r, 1);
		report_start(g.r);
		rp_begin(g.r, b, 1.0);
		rp_step(g.r, b, 1, RP_PASS, "modprobe", NULL, NULL, 1.1);
		rp_step(g.r, b, 2, RP_PASS, "run", NULL, NULL, 1.2);
		rp_step(g.r, b, 3, RP_SKIP, "rmmod", why[i], NULL, 1.3);
		b->ended = true;
		b->t_end = 1.4;
		report_done(g.r, b, 1.4);
		assert_int_equal(b->res, i ? RP_SKIP : RP_PASS);
		report_finish(g.r);
		fflush(g.fo);
		if (i) {
			assert_non_null(strstr(g.out, "ok 2 b # SKIP needs the "
					       "patched kernel\n"));
		} else {
			assert_non_null(strstr(g.out, "  ok 3 rmmod cdc_acm # SKIP "
					       PLAN_WHY_BUILTIN "\nok 2 b\n"));
		}
		rig_fini(&g);
	}
}

static void test_junit(void **state)
{
	char path[] = "/tmp/usbrig-junit-XXXXXX";
	char *xml = NULL;
	size_t len = 0;
	struct rig g;
	FILE *f;
	int fd;

	(void)state;
	rig_init(&g, false);
	rig_run(&g);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(report_write_junit(g.r, path), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(getdelim(&xml, &len, '\0', f) > 0, 1);
	fclose(f);
	unlink(path);
	assert_non_null(strstr(xml, "<testsuites tests=\"3\" failures=\"1\" "
			       "skipped=\"1\""));
	assert_non_null(strstr(xml, "<testcase classname=\"usbrig\" name=\"b\" "
			       "file=\"s/b.scenario\" time=\"1.500\">\n"
			       "      <failure type=\"expectation\" message=\""
			       "s/b.scenario:2: run &quot;echo # hash&quot; "
			       "output-contains &quot;x&quot;: exit 0, output "
			       "&quot;# hash&quot;\">"));
	assert_non_null(strstr(xml, "agent saw: exit 0, output &quot;# hash"
			       "&quot;\n"));
	assert_non_null(strstr(xml, "--- kernel console (build/runs/x/"
			       "console.log) ---\n[ 1.0] &lt;usb&gt; &amp; "
			       "more\n"));
	assert_non_null(strstr(xml, "<skipped message=\"not yet\"/>"));
	assert_non_null(strstr(xml, "s/a.scenario:6: expect bound g 0 "
			       "usb-storage: ok latency_us=1834\n"));
	free(xml);
	rig_fini(&g);
}

/* `file SRC DEST`: sources resolved, guest paths checked, and a build
 * product that is not built yet marks the file missing (a skip). */
static void test_file(void **state)
{
	struct scenario *s;

	(void)state;
	s = parse_ok("/repo/tests/f.scenario",
		     "file /bin/sh /usr/bin/x\n"
		     "file ${build}/tools/testusb /usr/bin/testusb\n"
		     "run \"x\"\n");
	assert_int_equal(s->n_files, 2);
	assert_string_equal(s->files[0].src, "/bin/sh");
	assert_string_equal(s->files[0].dst, "/usr/bin/x");
	assert_false(s->files[0].missing);
	assert_int_equal(s->files[0].line, 1);
	assert_string_equal(s->files[1].src, "/repo/build/tools/testusb");
	assert_true(s->files[1].missing);
	scenario_free(s);

	parse_err("file /bin/sh usr/x\nrun \"x\"\n",
		  "t.scenario:1:14: guest path 'usr/x' must be absolute");
	parse_err("file /bin/sh /usr//x\nrun \"x\"\n",
		  "t.scenario:1:14: guest path '/usr//x' has an empty, '.' or '..' component");
	parse_err("file /bin/sh /proc/x\nrun \"x\"\n",
		  "t.scenario:1:14: guest path '/proc/x' is reserved by the harness (/init, /usbrig, /proc, /sys, /dev, /tmp, /run)");
	parse_err("file /bin/sh /x\nfile /bin/ls /x\nrun \"x\"\n",
		  "t.scenario:2:14: guest path '/x' is already the target of a `file` statement");
	parse_err("file /nonexistent/y /x\nrun \"x\"\n",
		  "t.scenario:1:6: host file '/nonexistent/y': No such file or directory");
	parse_err("file /bin /x\nrun \"x\"\n",
		  "t.scenario:1:6: host file '/bin' is not a regular file");
	parse_err("file ${build}/${x} /x\nrun \"x\"\n",
		  "t.scenario:1:6: only `${build}/` at the start of the host file is substituted");
	parse_err("file /bin/sh\nrun \"x\"\n",
		  "t.scenario:1:13: expected the guest path");
}

/* `save GUESTPATH HOSTPATH` and `requires tool NAME`: model, plan, where
 * the file goes on the host, and the errors at file:line:col. */
static void test_save(void **state)
{
	static const char text[] =
		"requires tool lsusb\n"
		"requires tool tcpdump\n"
		"gadget g a.gadget\n"
		"attach g\n"
		"save \"/sys/bus/usb/devices/${g.dev}/descriptors\" g/descriptors\n"
		"save /tmp/cap.pcap /abs/cap.pcap   # absolute: as written\n";
	char buf[PLAN_LINE_MAX + 1];
	struct scenario *s;
	char *plan;

	(void)state;
	s = parse_ok("/repo/tests/save-it.scenario", text);
	assert_int_equal(s->n_reqs, 2);
	assert_int_equal(s->reqs[0].kind, SC_REQ_TOOL);
	assert_string_equal(s->reqs[0].arg, "lsusb");
	assert_string_equal(s->reqs[1].arg, "tcpdump");
	assert_int_equal(s->n_steps, 3);
	assert_int_equal(s->steps[1].kind, PLAN_SAVE);
	assert_string_equal(s->steps[1].path,
			    "/sys/bus/usb/devices/${g.dev}/descriptors");
	assert_string_equal(s->steps[1].text, "g/descriptors");
	assert_int_equal(s->steps[1].col, 6);
	plan = plan_of(s);
	assert_non_null(strstr(plan,
		"step 5 save \"/sys/bus/usb/devices/${g.dev}/descriptors\" "
		"\"g/descriptors\"\n"
		"step 6 save \"/tmp/cap.pcap\" \"/abs/cap.pcap\"\n"));
	free(plan);
	assert_int_equal(scenario_save_path(buf, sizeof(buf), "/b/saved", s,
					    &s->steps[1]),
			 (int)strlen("/b/saved/save-it/g/descriptors"));
	assert_string_equal(buf, "/b/saved/save-it/g/descriptors");
	assert_true(scenario_save_path(buf, sizeof(buf), "/b/saved", s,
				       &s->steps[2]) > 0);
	assert_string_equal(buf, "/abs/cap.pcap");
	assert_int_equal(scenario_save_path(buf, 8, "/b/saved", s,
					    &s->steps[1]), -ENOSPC);
	assert_int_equal(scenario_save_path(buf, sizeof(buf), "/b", s,
					    &s->steps[0]), -EINVAL);
	scenario_free(s);

	parse_err("save tmp/x y\n",
		  "t.scenario:1:6: the guest file must be absolute");
	parse_err("save /tmp/x\n",
		  "t.scenario:1:12: expected the host path");
	parse_err("save /tmp/x ../y\n",
		  "t.scenario:1:13: host path '../y' has a '..' component (a relative path stays in the save folder)");
	parse_err("save /tmp/x a/../../y\n",
		  "t.scenario:1:13: host path 'a/../../y' has a '..' component (a relative path stays in the save folder)");
	parse_err("save /tmp/x \"\"\n",
		  "t.scenario:1:13: host path '' is empty");
	parse_err("save /tmp/x d/\n",
		  "t.scenario:1:13: host path 'd/' names a folder");
	parse_err("save /tmp/x ${g.dev}\n",
		  "t.scenario:1:13: host path '${g.dev}' has a `${` (host paths take no substitutions)");
	parse_err("save /tmp/x a\nsave /tmp/y a\n",
		  "t.scenario:2:13: host path 'a' is already saved to on line 1");
	parse_err("gadget g a.gadget\nsave /sys/${g.dev}/descriptors d\n",
		  "t.scenario:2:6: '${g.dev}': gadget 'g' is not attached at this point");
	parse_err("save /tmp/x y z\n",
		  "t.scenario:1:15: unexpected 'z' after the statement");
	parse_err("requires tool gdb\nrun \"x\"\n",
		  "t.scenario:1:15: unknown tool 'gdb' (known: lsusb, tcpdump)");
	parse_err("requires toolz lsusb\nrun \"x\"\n",
		  "t.scenario:1:10: unknown requirement 'toolz' (known: module, kernel, config, tool, gadget)");
}

/* The patched kernel's statements: requirements, `expect probe`,
 * `expect dynid-*`, EPROBE_DEFER, and what the plan says of them. */
static void test_patched(void **state)
{
	static const char text[] =
		"requires kernel patched\n"
		"requires config DYNAMIC_DEBUG\n"
		"requires config CONFIG_DEBUG_FS\n"
		"gadget g a.gadget\n"
		"modprobe usb_bindtest\n"
		"attach g\n"
		"expect probe g 0 usb_bindtest\n"
		"expect probe g 1 usb_bindtest returns EPROBE_DEFER matched "
		"dynamic within 2s\n"
		"expect probe g 0 pl2303 matched static returns 0\n"
		"expect dynid-add usb_bindtest 0x1209 1\n"
		"expect dynid-remove pl2303 067B 7e57 within 500ms\n"
		"expect probe-error g 0 usb_bindtest EPROBE_DEFER\n";
	static const char plan[] =
		"scenario t \"t.scenario\" 60000\n"
		"require patched\n"
		"gadget g \"/usbrig/gadgets/a.gadget\"\n"
		"step 5 modprobe \"usb_bindtest\"\n"
		"step 6 attach g verify 30000\n"
		"step 7 expect-probe g 0 \"usb_bindtest\" - - 10000\n"
		"step 8 expect-probe g 1 \"usb_bindtest\" dynamic EPROBE_DEFER "
		"2000\n"
		"step 9 expect-probe g 0 \"pl2303\" static 0 10000\n"
		"step 10 expect-dynid add \"usb_bindtest\" 1209 0001 10000\n"
		"step 11 expect-dynid remove \"pl2303\" 067b 7e57 500\n"
		"step 12 expect-probe-error g 0 \"usb_bindtest\" EPROBE_DEFER "
		"10000\n"
		"end\n";
	struct scenario *s;
	char *p;

	(void)state;
	s = parse_ok("t.scenario", text);
	assert_int_equal(s->n_reqs, 3);
	assert_int_equal(s->reqs[1].kind, SC_REQ_CONFIG);
	assert_string_equal(s->reqs[1].arg, "CONFIG_DYNAMIC_DEBUG");
	assert_string_equal(s->reqs[2].arg, "CONFIG_DEBUG_FS");
	assert_int_equal(s->steps[2].kind, PLAN_EXPECT_PROBE);
	assert_int_equal(s->steps[2].mode, PLAN_MATCHED_ANY);
	assert_int_equal(s->steps[2].status, -1);
	assert_int_equal(s->steps[3].status, PLAN_EPROBE_DEFER);
	assert_int_equal(s->steps[3].mode, PLAN_MATCHED_DYNAMIC);
	assert_int_equal(s->steps[4].status, 0);
	assert_int_equal(s->steps[5].kind, PLAN_EXPECT_DYNID);
	assert_int_equal(s->steps[5].vid, 0x1209);
	assert_int_equal(s->steps[5].pid, 0x0001);
	assert_int_equal(s->steps[6].mode, PLAN_DYNID_REMOVE);
	p = plan_of(s);
	assert_string_equal(p, plan);
	free(p);
	scenario_free(s);

	parse_err("gadget g a.gadget\nattach g\nexpect probe g 0 x\n",
		  "t.scenario:3:1: `expect probe` reads the patched kernel's "
		  "usb_core trace events: add `requires kernel patched`");
	parse_err("expect dynid-add x 1 2\n",
		  "t.scenario:1:1: `expect dynid-add` reads the patched "
		  "kernel's usb_core trace events: add `requires kernel "
		  "patched`");
	parse_err("requires kernel patched\nexpect dynid-add x 12345 2\n",
		  "t.scenario:2:20: expected a vendor id in hex (1 to 4 "
		  "digits, e.g. 1209), not '12345'");
	parse_err("requires kernel patched\nexpect dynid-remove x 1 0xg\n",
		  "t.scenario:2:25: expected a product id in hex (1 to 4 "
		  "digits, e.g. 1209), not '0xg'");
	parse_err("requires kernel patched\ngadget g a.gadget\nattach g\n"
		  "expect probe g 0 x matched maybe\n",
		  "t.scenario:4:28: expected dynamic, static or none, not "
		  "'maybe'");
	parse_err("requires kernel patched\ngadget g a.gadget\nattach g\n"
		  "expect probe g 0 x returns 0 returns 0\n",
		  "t.scenario:4:30: a second `returns`");
	parse_err("requires kernel patched\ngadget g a.gadget\nattach g\n"
		  "expect probe g 0 x for 1s\n",
		  "t.scenario:4:20: expected matched, returns or within");
	parse_err("write /a b expect EPROBE_DEFER\n",
		  "t.scenario:1:19: a write never fails with EPROBE_DEFER (a "
		  "bind reports it as EAGAIN)");
	parse_err("requires gadget on-host\n",
		  "t.scenario:1:17: unknown gadget requirement 'on-host' "
		  "(known: in-guest)");
	parse_err("requires gadget\n",
		  "t.scenario:1:16: expected `in-guest`");
	parse_err("requires config dynamic_debug\n",
		  "t.scenario:1:17: bad config option 'dynamic_debug' (e.g. "
		  "DYNAMIC_DEBUG or CONFIG_DYNAMIC_DEBUG)");
}

/* `gadget ID FILE copies N`: N gadgets ID_1 .. ID_N, and a statement that
 * names ID done for each in turn; steps beyond the first allocation. */
static void test_copies(void **state)
{
	struct scenario *s;
	char *plan, *text, line[64];
	size_t i;

	(void)state;
	s = parse_ok("t.scenario",
		     "gadget one a.gadget\n"
		     "gadget m a.gadget copies 3\n"
		     "attach m no-verify\n"
		     "expect bound m 0 cdc_acm\n"
		     "write /sys/x \"${m_2.busid}\" expect ok\n"
		     "detach m_2\n"
		     "attach one\n");
	assert_int_equal(s->n_gadgets, 4);
	assert_string_equal(s->gadgets[1].id, "m_1");
	assert_string_equal(s->gadgets[3].id, "m_3");
	assert_string_equal(s->gadgets[3].path, "/repo/a.gadget");
	assert_int_equal(s->n_steps, 3 + 3 + 1 + 1 + 1);
	for (i = 0; i < 3; i++) {
		assert_int_equal(s->steps[i].kind, PLAN_ATTACH);
		assert_int_equal(s->steps[i].gadget, 1 + (int)i);
		assert_int_equal(s->steps[i].line, 3);
		assert_int_equal(s->steps[3 + i].gadget, 1 + (int)i);
		assert_string_equal(s->steps[3 + i].driver, "cdc_acm");
	}
	assert_int_equal(s->steps[7].gadget, 2);
	plan = plan_of(s);
	assert_non_null(strstr(plan, "gadget m_3 "));
	assert_non_null(strstr(plan, "attach m_3 "));
	free(plan);
	scenario_free(s);

	parse_err("gadget m a.gadget copies 3\nattach m_2\nattach m\n",
		  "t.scenario:3:8: gadget 'm_2' is already attached");
	parse_err("gadget m a.gadget copies 3\nattach m\ndetach m_1\n"
		  "detach m\n",
		  "t.scenario:4:8: gadget 'm_1' is not attached at this point");
	parse_err("gadget m_2 a.gadget\ngadget m a.gadget copies 3\n",
		  "t.scenario:2:26: gadget id 'm_2' declared twice");
	parse_err("gadget m a.gadget copies 1\n",
		  "t.scenario:1:26: copies: '1' is not a number from 2 to 120 "
		  "(at most 120 gadgets a scenario)");
	parse_err("gadget a a.gadget\ngadget m a.gadget copies 120\n",
		  "t.scenario:2:26: copies: '120' is not a number from 2 to "
		  "119 (at most 120 gadgets a scenario)");
	parse_err("gadget m a.gadget copies 3\ngadget m b.gadget\n",
		  "t.scenario:2:8: gadget id 'm' declared twice");

	/* a soak: 3000 steps */
	text = malloc(3000 * 24 + 64);
	assert_non_null(text);
	strcpy(text, "gadget g a.gadget\n");
	for (i = 0; i < 1500; i++) {
		strcat(text, "attach g no-wait\n");
		snprintf(line, sizeof(line), "detach g\n");
		strcat(text, line);
	}
	s = parse_ok("t.scenario", text);
	assert_int_equal(s->n_steps, 3000);
	assert_int_equal(s->steps[2999].kind, PLAN_DETACH);
	scenario_free(s);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_model),
		cmocka_unit_test(test_full_plan),
		cmocka_unit_test(test_plan_round_trip),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_kernel_version),
		cmocka_unit_test(test_error_name_from_file),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_errno_names),
		cmocka_unit_test(test_ktap),
		cmocka_unit_test(test_transcript),
		cmocka_unit_test(test_no_end),
		cmocka_unit_test(test_builtin_rmmod),
		cmocka_unit_test(test_junit),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_patched),
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_save),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
