// SPDX-License-Identifier: GPL-2.0
/*
 * test_kernel.c - which guest kernel `--kernel debian:VERSION` means
 * (harness/host/kernel.c): package names to kernel versions, and which
 * versions a spec names.
 */
#include "kernel.h"

#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_image_version(void **state)
{
	static const struct {
		const char *pkg, *ver;	/* ver NULL: not a guest kernel */
	} cases[] = {
		{ "linux-image-6.1.0-57-amd64", "6.1.0-57" },
		{ "linux-image-6.1.0-57-amd64-unsigned", "6.1.0-57" },
		{ "linux-image-6.12.113+deb12-amd64-unsigned", "6.12.113+deb12" },
		{ "linux-image-6.12.113+deb12-amd64", "6.12.113+deb12" },
		{ "linux-image-6.1.0-57-cloud-amd64", NULL },
		{ "linux-image-6.1.0-57-rt-amd64-unsigned", NULL },
		{ "linux-image-6.1.0-57-amd64-dbg", NULL },
		{ "linux-image-6.12-amd64-signed-template", NULL },
		{ "linux-image-6.12-amd64", NULL },	/* a metapackage */
		{ "linux-image-amd64", NULL },
		{ "linux-image-cloud-amd64", NULL },
		{ "linux-headers-6.1.0-57-amd64", NULL },
		{ "linux-image-6.1.0-57-arm64", NULL },
	};
	char ver[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool is = kernel_deb_image_version(cases[i].pkg, ver,
						   sizeof(ver));

		if (!cases[i].ver) {
			if (is)
				fail_msg("%s: not a guest kernel, got %s",
					 cases[i].pkg, ver);
			continue;
		}
		if (!is)
			fail_msg("%s: no version", cases[i].pkg);
		assert_string_equal(ver, cases[i].ver);
	}
	/* a version that does not fit is refused, not cut */
	assert_false(kernel_deb_image_version("linux-image-6.1.0-57-amd64",
					      ver, 8));
	assert_true(kernel_deb_image_version("linux-image-6.1.0-57-amd64",
					     ver, 9));
}

static void test_version_matches(void **state)
{
	(void)state;
	assert_true(kernel_deb_version_matches("6.1.0-57", "6.1"));
	assert_true(kernel_deb_version_matches("6.1.0-57", "6.1.0"));
	assert_true(kernel_deb_version_matches("6.1.0-57", "6.1.0-57"));
	assert_false(kernel_deb_version_matches("6.12.113+deb12", "6.1"));
	assert_true(kernel_deb_version_matches("6.12.113+deb12", "6.12"));
	assert_true(kernel_deb_version_matches("6.12.113+deb12", "6.12.113"));
	assert_true(kernel_deb_version_matches("6.12.113+deb12",
					       "6.12.113+deb12"));
	assert_false(kernel_deb_version_matches("6.1.0-57", "6.1.0-5"));
	assert_false(kernel_deb_version_matches("6.1.0-57", "6.12"));
	assert_false(kernel_deb_version_matches("6.1", "6.1.0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_image_version),
		cmocka_unit_test(test_version_matches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
