// SPDX-License-Identifier: GPL-2.0
/*
 * test_kernel.c - which guest kernel `--kernel` means
 * (harness/host/kernel.c): package names to kernel versions, which
 * versions a `debian:` spec names, and the modules a bzImage named by its
 * path brings from its folder.
 */
#include "kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* --cmdline: printable words pass; control bytes, nothing and too much
 * do not, with where and what */
static void test_cmdline_check(void **state)
{
	char why[128], big[GUEST_CMDLINE_MAX + 1];

	(void)state;
	assert_int_equal(guest_cmdline_check("usbcore.old_scheme_first=1",
					     why, sizeof(why)), 0);
	assert_int_equal(guest_cmdline_check("a=1 b=\"x y\" dyndbg=+p",
					     why, sizeof(why)), 0);
	assert_int_equal(guest_cmdline_check("a=1\tb", why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why,
			    "column 4: byte 0x09 is not printable ASCII");
	assert_int_equal(guest_cmdline_check("x\n", why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why,
			    "column 2: byte 0x0a is not printable ASCII");
	assert_int_equal(guest_cmdline_check("", why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "no parameter given");
	assert_int_equal(guest_cmdline_check("   ", why, sizeof(why)),
			 -EINVAL);
	memset(big, 'a', GUEST_CMDLINE_MAX - 1);
	big[GUEST_CMDLINE_MAX - 1] = '\0';
	assert_int_equal(guest_cmdline_check(big, why, sizeof(why)), 0);
	big[GUEST_CMDLINE_MAX - 1] = 'a';
	big[GUEST_CMDLINE_MAX] = '\0';
	assert_int_equal(guest_cmdline_check(big, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "512 bytes; the most is 511");
}

/* every --cmdline joined in order, up to the budget, a refused one
 * leaving what was there; guest_opt() keeps the first refusal and adds
 * nothing after it */
static void test_cmdline_add(void **state)
{
	char line[GUEST_CMDLINE_MAX] = "", why[128], big[GUEST_CMDLINE_MAX];
	struct guest_opts o = { 0 };

	(void)state;
	memset(big, 'a', GUEST_CMDLINE_MAX - 1);
	big[GUEST_CMDLINE_MAX - 1] = '\0';
	assert_int_equal(guest_cmdline_add(line, big, why, sizeof(why)), 0);
	assert_int_equal(strlen(line), GUEST_CMDLINE_MAX - 1);
	assert_int_equal(guest_cmdline_add(line, "b", why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why,
			    "after the 511 bytes before it, more than 511 in all");
	assert_int_equal(strlen(line), GUEST_CMDLINE_MAX - 1);

	line[0] = '\0';
	assert_int_equal(guest_cmdline_add(line, "a=1", why, sizeof(why)), 0);
	assert_int_equal(guest_cmdline_add(line, "b=2 c", why, sizeof(why)),
			 0);
	assert_string_equal(line, "a=1 b=2 c");
	assert_int_equal(guest_cmdline_add(line, big, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "after 'a=1 b=2 c', more than 511 bytes in all");
	big[GUEST_CMDLINE_MAX - 1 - 10] = '\0';	/* 9 + 1 + 501 = 511 */
	assert_int_equal(guest_cmdline_add(line, big, why, sizeof(why)), 0);
	assert_int_equal(strlen(line), GUEST_CMDLINE_MAX - 1);

	assert_true(guest_opt(GUEST_OPT_CMDLINE, "a=1", &o));
	assert_true(guest_opt(GUEST_OPT_CMDLINE, "x\ty", &o));
	assert_true(guest_opt(GUEST_OPT_CMDLINE, "", &o));
	assert_true(guest_opt(GUEST_OPT_CMDLINE, "b=2", &o));
	assert_string_equal(o.cmdline, "a=1");
	assert_string_equal(o.cmdline_bad, "x\ty");
	assert_string_equal(o.cmdline_why,
			    "column 2: byte 0x09 is not printable ASCII");
}

/* The console level the --cmdline parameters leave, as the kernel reads
 * them: the last of quiet, debug and loglevel=N wins (N as get_option()
 * reads it: base 0, what follows the digits ignored, no digit: ignored),
 * ignore_loglevel prints all, nothing after "--" counts. */
static void test_cmdline_quiet(void **state)
{
	char w[64] = "";

	(void)state;
	assert_false(guest_cmdline_quiet("", w, sizeof(w)));
	assert_false(guest_cmdline_quiet("usbcore.autosuspend=-1", w,
					 sizeof(w)));
	assert_true(guest_cmdline_quiet("a=1 quiet b", w, sizeof(w)));
	assert_string_equal(w, "quiet");
	assert_true(guest_cmdline_quiet("quiet=0", w, sizeof(w)));
	assert_true(guest_cmdline_quiet("loglevel=7  loglevel=3", w,
					sizeof(w)));
	assert_string_equal(w, "loglevel=3");
	assert_false(guest_cmdline_quiet("quiet loglevel=5", w, sizeof(w)));
	assert_false(guest_cmdline_quiet("quiet debug", w, sizeof(w)));
	assert_true(guest_cmdline_quiet("loglevel=3x", w, sizeof(w)));
	assert_true(guest_cmdline_quiet("loglevel=08", w, sizeof(w)));
	assert_true(guest_cmdline_quiet("loglevel=-1", w, sizeof(w)));
	assert_false(guest_cmdline_quiet("loglevel=0x7", w, sizeof(w)));
	assert_true(guest_cmdline_quiet("quiet loglevel=+3", w, sizeof(w)));
	assert_string_equal(w, "quiet");
	assert_false(guest_cmdline_quiet("loglevel=+3 loglevel=", w,
					 sizeof(w)));
	assert_false(guest_cmdline_quiet("quiet_x myloglevel=1", w,
					 sizeof(w)));
	assert_false(guest_cmdline_quiet("quiet ignore_loglevel", w,
					 sizeof(w)));
	assert_false(guest_cmdline_quiet("-- quiet", w, sizeof(w)));
	assert_true(guest_cmdline_quiet("debug loglevel=0 -- debug", w,
					sizeof(w)));
	assert_string_equal(w, "loglevel=0");
}

/* A file with just the boot header's release: "HdrS" at 0x202, the
 * kernel_version offset at 0x20e (from 0x200), the string there. */
static void write_header_only(const char *path, const char *release)
{
	unsigned char img[0x400] = { 0 };
	int fd;

	memcpy(img + 0x202, "HdrS", 4);
	img[0x20e] = 0x80;		/* the string at 0x280 */
	snprintf((char *)img + 0x280, 64, "%s (builder) #1", release);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, img, sizeof(img)), sizeof(img));
	close(fd);
}

static void mkdir_p(const char *dir, const char *sub)
{
	char path[PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	for (p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	assert_int_equal(mkdir(path, 0755), 0);
}

static void resolve(const char *bzimage, const char *modules,
		    struct guest_kernel *k)
{
	const struct guest_opts o = { .kernel = bzimage,
				      .modules_dir = modules };

	assert_int_equal(guest_kernel_resolve("test", &o, "/nonexistent", k),
			 0);
}

/* --kernel DIR/bzImage: DIR/modules when it holds lib/modules/RELEASE;
 * a build.sh stamp makes it a patched build; --modules wins; a folder
 * without that layout (or for another release) leaves the host's. */
static void test_bzimage_own_modules(void **state)
{
	static const char *const made[] = {	/* deepest first */
		"modules/lib/modules/6.12.118-usbrig",
		"modules/lib/modules/6.1.0-usbrig",
		"modules/lib/modules", "modules/lib", "modules",
	};
	char dir[] = "/tmp/usbrig-test-kernel-XXXXXX", img[PATH_MAX],
	     want[PATH_MAX + 64], stamp[PATH_MAX];
	struct guest_kernel k;
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(img, sizeof(img), "%s/bzImage", dir);
	snprintf(stamp, sizeof(stamp), "%s/stamp", dir);
	write_header_only(img, "6.12.118-usbrig");

	resolve(img, NULL, &k);
	assert_string_equal(k.kver, "6.12.118-usbrig");
	assert_string_equal(k.mods_root, "");
	assert_false(k.patched);

	mkdir_p(dir, "modules/lib/modules/6.1.0-usbrig");	/* not its own */
	resolve(img, NULL, &k);
	assert_string_equal(k.mods_root, "");

	mkdir_p(dir, "modules/lib/modules/6.12.118-usbrig");
	resolve(img, NULL, &k);
	snprintf(want, sizeof(want), "%s/modules", dir);
	assert_string_equal(k.mods_root, want);
	assert_false(k.patched);

	write_header_only(stamp, "x");
	resolve(img, NULL, &k);
	assert_string_equal(k.mods_root, want);
	assert_true(k.patched);

	resolve(img, "/opt/mods", &k);
	assert_string_equal(k.mods_root, "/opt/mods");
	assert_false(k.patched);

	unlink(stamp);
	unlink(img);
	for (i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		snprintf(want, sizeof(want), "%s/%s", dir, made[i]);
		assert_int_equal(rmdir(want), 0);
	}
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_image_version),
		cmocka_unit_test(test_version_matches),
		cmocka_unit_test(test_cmdline_check),
		cmocka_unit_test(test_cmdline_add),
		cmocka_unit_test(test_cmdline_quiet),
		cmocka_unit_test(test_bzimage_own_modules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
