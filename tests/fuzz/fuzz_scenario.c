// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_scenario.c - the scenario parser (harness/host/scenario*.c) and
 * what consumes its model: the plan writer, each step's line, the save
 * paths.  Every plan line the writer accepts must split back with the
 * agent's own codec (plan_split(), at most PLAN_TOKENS_MAX words, lines
 * of at most PLAN_LINE_MAX bytes): a plan the guest cannot read is a bug.
 *
 * Gadget files are "checked" by a stub (no file is read; a path ending in
 * ".bad" is refused, so that error path runs too); relative paths resolve
 * under a folder that does not exist.  `file` statements stat() the host
 * path they name, read-only.
 *
 * Input: the scenario text, not NUL-terminated.  Seeds: tests/scenarios/,
 * tests/demo/, tests/census/spot/.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "plan.h"
#include "scenario.h"

static int check_gadget(void *ctx, const char *path, char *msg, size_t len)
{
	size_t n = strlen(path);

	(void)ctx;
	if (n >= 4 && !strcmp(path + n - 4, ".bad")) {
		snprintf(msg, len, "refused by the fuzz stub");
		return -1;
	}
	return 0;
}

static const struct sc_opts opts = {
	.root = "/nonexistent-usbrig-fuzz",
	.check_gadget = check_gadget,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init();
	return 0;
}

/* Every line of the plan must be one the agent splits. */
static void check_plan(char *plan, size_t len)
{
	struct plan_tok toks[PLAN_TOKENS_MAX];
	char *line = plan, *nl;
	int n;

	while (line < plan + len) {
		nl = memchr(line, '\n', plan + len - line);
		if (!nl)
			fz_fail("plan: last line without a newline");
		*nl = '\0';
		if ((size_t)(nl - line) > PLAN_LINE_MAX)
			fz_fail("plan line of %zu bytes: %.80s...",
				(size_t)(nl - line), line);
		n = plan_split(line, toks, PLAN_TOKENS_MAX, 0, NULL);
		if (n <= 0)
			fz_fail("plan line the agent cannot split (%d)", n);
		line = nl + 1;
	}
}

static void write_plan(const struct scenario *s, int remote_first)
{
	char *plan = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	f = open_memstream(&plan, &len);
	if (!f)
		fz_fail("open_memstream");
	ret = scenario_write_plan(f, s, remote_first);
	if (fclose(f))
		fz_fail("fclose");
	if (!ret)
		check_plan(plan, len);
	free(plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[SC_ERR_MAX], buf[PLAN_LINE_MAX + 1];
	struct scenario *s = NULL;
	int i, ret;

	err[0] = '\0';
	ret = scenario_parse("fuzz.scenario", (const char *)data, size, &opts,
			     &s, err, sizeof(err));
	if (ret) {
		if (ret == -EINVAL && !err[0])
			fz_fail("scenario_parse: -EINVAL without a message");
		return 0;
	}
	write_plan(s, 0);
	write_plan(s, 3);
	for (i = 0; i < s->n_steps; i++) {
		const struct sc_step *st = &s->steps[i];

		scenario_format_step(buf, sizeof(buf), s, st);
		if (st->kind != PLAN_SAY && !scenario_step_at(s, st->line))
			fz_fail("step of line %d not found", st->line);
		if (st->kind == PLAN_SAVE)
			scenario_save_path(buf, sizeof(buf), "/save", s, st);
	}
	scenario_free(s);
	return 0;
}
