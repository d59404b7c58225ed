// SPDX-License-Identifier: GPL-2.0
/*
 * test_balance.c - the jobs' share of the scenarios (harness/host/balance.c):
 * the times file of --balance and the longest-first assignment.
 */
#include "balance.h"

#include <errno.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static int parse(const char *text, struct balance_time **t, int *n,
		 char *err, size_t errlen)
{
	return balance_parse("times.txt", text, strlen(text), t, n, err,
			     errlen);
}

static void test_parse(void **state)
{
	const char *text = "# from run 12\n"
			   "census-acecad 6.3\n"
			   "\n"
			   "  census-gspca_stk1135\t32.4  \r\n"
			   "census-visor 0";
	struct balance_time *t = NULL;
	char err[256] = "";
	int n = -1;

	(void)state;
	assert_int_equal(parse(text, &t, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(t[0].name, "census-acecad");
	assert_true(t[0].seconds > 6.29 && t[0].seconds < 6.31);
	assert_string_equal(t[1].name, "census-gspca_stk1135");
	assert_true(t[1].seconds > 32.39 && t[1].seconds < 32.41);
	assert_string_equal(t[2].name, "census-visor");
	assert_true(t[2].seconds == 0);
	balance_free(t, n);
}

/* Every bad line says where and what; nothing comes back. */
static void test_parse_errors(void **state)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "a 1\nb\n", "times.txt:2:2: expected NAME SECONDS, found no SECONDS after 'b'" },
		{ "a x1\n", "times.txt:1:3: 'x1' is not a time in seconds (0 to 86400)" },
		{ "a -1\n", "times.txt:1:3: '-1' is not a time in seconds (0 to 86400)" },
		{ "a nan\n", "times.txt:1:3: 'nan' is not a time in seconds (0 to 86400)" },
		{ "a 1e9\n", "times.txt:1:3: '1e9' is not a time in seconds (0 to 86400)" },
		{ "a 1 s\n", "times.txt:1:5: unexpected 's' after the time" },
		{ "\n\n  a 2 # x\n", "times.txt:3:7: unexpected '# x' after the time" },
	};
	struct balance_time *t;
	char err[256];
	int n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = NULL;
		n = -1;
		err[0] = '\0';
		assert_int_equal(parse(bad[i].text, &t, &n, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err, bad[i].err);
		assert_null(t);
		assert_int_equal(n, -1);
	}
	/* a NUL inside a line */
	assert_int_equal(balance_parse("times.txt", "a\0 1\n", 5, &t, &n, err,
				       sizeof(err)), -EINVAL);
	assert_string_equal(err, "times.txt:1:2: a NUL byte");
}

/* No time known: round robin in list order, as before --balance. */
static void test_assign_round_robin(void **state)
{
	const double est[5] = { 0 };
	int job[5];

	(void)state;
	balance_assign(est, 5, 2, job);
	assert_int_equal(job[0], 0);
	assert_int_equal(job[1], 1);
	assert_int_equal(job[2], 0);
	assert_int_equal(job[3], 1);
	assert_int_equal(job[4], 0);
	balance_assign(est, 5, 1, job);
	for (int i = 0; i < 5; i++)
		assert_int_equal(job[i], 0);
}

/*
 * The census shard that ran alone at its end: the 30 s module fell to
 * job 0 by turn, with as much again after it.  Longest first it gets
 * the 30 s one and little else; an unknown time counts as the mean of
 * the known (68 / 7 here, the second longest).
 */
static void test_assign_longest_first(void **state)
{
	const double est[8] = { 6, 7, 6, 30, 6, 7, 6, 0 };
	const int want[8] = { 1, 1, 1, 0, 0, 1, 1, 1 };
	int job[8], again[8];
	double l[3] = { 0, 0, 0 };

	(void)state;
	balance_assign(est, 8, 2, job);
	assert_memory_equal(job, want, sizeof(job));
	/* the same input, the same answer */
	balance_assign(est, 8, 2, again);
	assert_memory_equal(job, again, sizeof(job));
	/* three jobs: the 30 s one alone, the rest shared by the others */
	balance_assign(est, 8, 3, job);
	for (int i = 0; i < 8; i++)
		l[job[i]] += est[i] ? est[i] : 68.0 / 7;
	assert_true(l[0] > 29.9 && l[0] < 30.1);
	assert_true(l[1] > 20 && l[2] > 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_assign_round_robin),
		cmocka_unit_test(test_assign_longest_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
