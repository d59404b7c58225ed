// SPDX-License-Identifier: GPL-2.0
/*
 * test_run.c - the work dirs of build/usbrig's runs (harness/host/run.c).
 */
#define _GNU_SOURCE
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static const struct tm tm = {
	.tm_year = 126, .tm_mon = 11, .tm_mday = 3,
	.tm_hour = 10, .tm_min = 4, .tm_sec = 9,
};

static void test_dir_paths(void **state)
{
	char run[PATH_MAX], boot[PATH_MAX];

	(void)state;
	assert_int_equal(run_dir_path(run, sizeof(run), "build/runs", &tm,
				      4242), 0);
	assert_string_equal(run, "build/runs/20261203-100409-4242");
	assert_int_equal(run_boot_dir_path(boot, sizeof(boot), run, 2, 13), 0);
	assert_string_equal(boot, "build/runs/20261203-100409-4242/job2-boot13");
}

/* A path that does not fit is refused, not cut: exactly full fits. */
static void test_dir_paths_too_long(void **state)
{
	char runs[PATH_MAX], run[PATH_MAX], boot[PATH_MAX];
	size_t n;

	(void)state;
	n = sizeof(run) - 1 - strlen("/20261203-100409-4242");
	memset(runs, 'r', n);
	runs[n] = '\0';
	assert_int_equal(run_dir_path(run, sizeof(run), runs, &tm, 4242), 0);
	assert_int_equal(strlen(run), sizeof(run) - 1);
	runs[n] = 'r';
	runs[n + 1] = '\0';
	assert_int_equal(run_dir_path(run, sizeof(run), runs, &tm, 4242),
			 -ENAMETOOLONG);

	n = sizeof(boot) - 1 - strlen("/job1-boot1");
	memset(run, 'r', n);
	run[n] = '\0';
	assert_int_equal(run_boot_dir_path(boot, sizeof(boot), run, 1, 1), 0);
	assert_int_equal(run_boot_dir_path(boot, sizeof(boot), run, 1, 10),
			 -ENAMETOOLONG);
	assert_int_equal(run_boot_dir_path(boot, 8, "build", 1, 1),
			 -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dir_paths),
		cmocka_unit_test(test_dir_paths_too_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
