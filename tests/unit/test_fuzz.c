// SPDX-License-Identifier: GPL-2.0
/*
 * test_fuzz.c - `usbrig fuzz` without a guest (harness/host/fuzz_*.c):
 * the PRNG and the mutations it draws are the same for the same seed;
 * a mutation sets one statement in one block (replacing what was there,
 * `type` included) and the script still parses; the planted trigger makes
 * interface 0 a Bluetooth interface; delta debugging with a fake
 * predicate finds the 1-minimal set; report signatures are stable and
 * the `expect kernel-report` text is in the report's first line; a KTAP
 * is read into one report per scenario.
 * Runs from the repository root (it reads gadgets/examples/).
 */
#define _GNU_SOURCE
#include "fuzz_int.h"
#include "script.h"
#include "model.h"

#include <dirent.h>
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

#include "../../harness/common/fsutil.h"

static char *example(const char *name)
{
	char path[256];
	char *t;

	snprintf(path, sizeof(path), "gadgets/examples/%s", name);
	t = fs_read_file(path, FZ_TEXT_MAX, NULL);
	assert_non_null(t);
	return t;
}

static bool parses(const char *text, struct gd_device **out)
{
	struct script_error err;
	struct gd_device *dev = NULL;
	int ret = script_parse("fuzz.gadget", text, strlen(text), &dev, &err);

	if (out && !ret)
		*out = dev;
	else if (!ret)
		gd_model_free(dev);
	return !ret;
}

static void test_rng(void **state)
{
	struct fz_rng a, b, c;

	(void)state;
	fz_rng_seed(&a, 42, 3);
	fz_rng_seed(&b, 42, 3);
	fz_rng_seed(&c, 43, 3);
	for (int i = 0; i < 100; i++) {
		uint64_t x = fz_rng_next(&a);

		assert_true(x == fz_rng_next(&b));
		assert_true(x != fz_rng_next(&c));
	}
	for (int i = 0; i < 1000; i++)
		assert_true(fz_rng_below(&a, 7) < 7);
}

/* every example, 40 devices each: the same draw twice, and the text
 * still lexes with the same blocks; most variants still parse */
static void test_mutator_determinism(void **state)
{
	DIR *d = opendir("gadgets/examples");
	struct dirent *e;
	int parsed = 0, total = 0;

	(void)state;
	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		int counts[FZ_BLOCK_N], after[FZ_BLOCK_N];
		char *text;

		if (l < 8 || strcmp(e->d_name + l - 7, ".gadget"))
			continue;
		text = example(e->d_name);
		assert_int_equal(fz_count_blocks(text, counts), 0);
		assert_int_equal(counts[FZ_DEVICE], 1);
		for (int i = 0; i < 40; i++) {
			struct fz_mut v1[FZ_MUT_MAX], v2[FZ_MUT_MAX];
			struct fz_rng r1, r2;
			char *t1, *t2;
			int n1, n2;

			memset(v1, 0, sizeof(v1));
			memset(v2, 0, sizeof(v2));
			fz_rng_seed(&r1, 1234, (uint64_t)i);
			fz_rng_seed(&r2, 1234, (uint64_t)i);
			n1 = fz_mut_draw(&r1, counts, v1, FZ_MUT_MAX);
			n2 = fz_mut_draw(&r2, counts, v2, FZ_MUT_MAX);
			assert_int_equal(n1, n2);
			assert_true(n1 >= 1 && n1 <= FZ_MUT_MAX);
			assert_memory_equal(v1, v2, sizeof(v1));
			assert_int_equal(fz_mut_apply_all(text, v1, n1, NULL,
							  &t1), 0);
			assert_int_equal(fz_mut_apply_all(text, v2, n2, NULL,
							  &t2), 0);
			assert_string_equal(t1, t2);
			assert_int_equal(fz_count_blocks(t1, after), 0);
			assert_memory_equal(counts, after, sizeof(counts));
			/* each mutation is a commented line of its own */
			assert_non_null(strstr(t1, "# fuzz M0 ("));
			total++;
			parsed += parses(t1, NULL);
			free(t1);
			free(t2);
		}
		free(text);
	}
	closedir(d);
	assert_true(total >= 40 * 10);
	/* the generator aims at what the parser takes: most of it */
	assert_true(parsed * 2 > total);
}

static void test_apply(void **state)
{
	const char *src =
		"device {\n"
		"    idVendor 0x1209; idProduct 0x0001\n"
		"    config {\n"
		"        interface {\n"
		"            bInterfaceClass 0xff  # vendor\n"
		"            endpoint { bEndpointAddress 0x81; type bulk }\n"
		"            endpoint { bEndpointAddress 0x02; type bulk }\n"
		"        }\n"
		"    }\n"
		"}\n";
	struct fz_mut m[3] = {
		{ .block = FZ_ENDPOINT, .index = 1, .kind = "type",
		  .kws = "type bmAttributes", .line = "bmAttributes 0x03" },
		{ .block = FZ_INTERFACE, .index = 0, .kind = "count",
		  .kws = "bNumEndpoints", .line = "bNumEndpoints 9" },
		{ .block = FZ_INTERFACE, .index = 0, .kind = "count",
		  .kws = "bNumEndpoints", .line = "bNumEndpoints 31" },
	};
	struct fz_mut bad = { .block = FZ_ENDPOINT, .index = 2,
			      .line = "bLength 0" };
	bool use[3] = { true, false, true };
	struct gd_device *dev = NULL;
	char *t;

	(void)state;
	assert_int_equal(fz_mut_apply(src, &bad, 0, &t), -ENOENT);
	assert_int_equal(fz_mut_apply_all(src, m, 3, NULL, &t), 0);
	/* the later bNumEndpoints replaced the earlier one */
	assert_null(strstr(t, "bNumEndpoints 9"));
	assert_non_null(strstr(t, "bNumEndpoints 31"));
	assert_true(parses(t, &dev));
	assert_int_equal(dev->configs[0].alts[0].bNumEndpoints_override, 31);
	assert_int_equal(dev->configs[0].alts[0].eps[1].bmAttributes, 3);
	assert_int_equal(dev->configs[0].alts[0].eps[0].bmAttributes, 2);
	gd_model_free(dev);
	free(t);
	assert_int_equal(fz_mut_apply_all(src, m, 3, use, &t), 0);
	assert_null(strstr(t, "M1"));
	assert_non_null(strstr(t, "# fuzz M2 (count)"));
	free(t);
}

static void test_planted(void **state)
{
	char *text = example("vendor-bulk.gadget"), *t;
	struct gd_device *dev = NULL;
	struct fz_mut m;

	(void)state;
	fz_mut_planted(&m);
	assert_int_equal(fz_mut_apply(text, &m, 0, &t), 0);
	assert_true(parses(t, &dev));
	assert_int_equal(dev->configs[0].alts[0].bInterfaceClass, 0xe0);
	assert_int_equal(dev->configs[0].alts[0].bInterfaceSubClass, 0x01);
	assert_int_equal(dev->configs[0].alts[0].bInterfaceProtocol, 0x01);
	gd_model_free(dev);
	free(t);
	free(text);
}

/* ---- ddmin with fake predicates ---- */

struct fake {
	unsigned int need, any;	/* all of need, or one of any */
	int calls, cands;
};

static int fake_test(void *ctx, const bool *cands, int n_cands, int n,
		     bool *hit)
{
	struct fake *f = ctx;

	f->calls++;
	f->cands += n_cands;
	for (int c = 0; c < n_cands; c++) {
		unsigned int set = 0;

		for (int i = 0; i < n; i++)
			if (cands[c * n + i])
				set |= 1u << i;
		hit[c] = f->any ? (set & f->any) != 0 :
				  (set & f->need) == f->need;
	}
	return 0;
}

static unsigned int mask(const bool *keep, int n)
{
	unsigned int m = 0;

	for (int i = 0; i < n; i++)
		if (keep[i])
			m |= 1u << i;
	return m;
}

static void run_dd(int n, struct fake *f, bool *keep)
{
	for (int i = 0; i < n; i++)
		keep[i] = true;
	assert_true(fz_ddmin(n, keep, fake_test, f) == f->calls);
}

static int fail_test(void *ctx, const bool *cands, int n_cands, int n,
		     bool *hit)
{
	(void)ctx;
	(void)cands;
	(void)n_cands;
	(void)n;
	(void)hit;
	return -EIO;
}

static void test_ddmin(void **state)
{
	bool keep[16];
	struct fake f;

	(void)state;
	f = (struct fake){ .need = 1u << 3 | 1u << 7 };
	run_dd(10, &f, keep);
	assert_int_equal(mask(keep, 10), 1u << 3 | 1u << 7);

	f = (struct fake){ .need = 1u << 5 };
	run_dd(8, &f, keep);
	assert_int_equal(mask(keep, 8), 1u << 5);
	/* halving: a handful of guest runs, not one per subset */
	assert_true(f.calls <= 4);

	f = (struct fake){ .need = 0xff };	/* all are needed */
	run_dd(8, &f, keep);
	assert_int_equal(mask(keep, 8), 0xff);

	/* one of two does it: a single one is left, the same every time */
	f = (struct fake){ .any = 1u << 2 | 1u << 6 };
	run_dd(8, &f, keep);
	assert_int_equal(mask(keep, 8), 1u << 2);

	f = (struct fake){ .need = 1u << 0 };
	run_dd(1, &f, keep);
	assert_int_equal(f.calls, 0);

	for (int i = 0; i < 4; i++)
		keep[i] = true;
	assert_int_equal(fz_ddmin(4, keep, fail_test, NULL), -EIO);
}

/* ---- reports ---- */

static void test_signature(void **state)
{
	const char *w1 = "[   50.927284] WARNING: CPU: 1 PID: 1176 at crypto/testmgr.c:5907 alg_test.cold+0x7c/0xf5";
	const char *w2 = "[  117.349249] WARNING: CPU: 0 PID: 2218 at crypto/testmgr.c:5907 alg_test.cold+0x7c/0xf5";
	const char *bug = "BUG: kernel NULL pointer dereference, address: 0000000000000014";
	const char *ex = "[ 21.1] #PF: supervisor read access in kernel mode\n[ 21.2] RIP: 0010:atp_probe+0x1a3/0x4a0 [appletouch]\n";
	char s1[FZ_SIG_MAX], s2[FZ_SIG_MAX], x[FZ_SIG_MAX];

	(void)state;
	fz_signature(w1, NULL, s1, sizeof(s1));
	fz_signature(w2, NULL, s2, sizeof(s2));
	assert_string_equal(s1, s2);
	assert_string_equal(s1, "WARNING: at crypto/testmgr.c:5907 alg_test.cold");
	fz_sig_expect(s1, w1, x, sizeof(x));
	assert_string_equal(x, "at crypto/testmgr.c:5907 alg_test.cold");
	fz_signature(bug, ex, s1, sizeof(s1));
	assert_string_equal(s1, "BUG: kernel NULL pointer dereference, address: X @ atp_probe");
	fz_sig_expect(s1, bug, x, sizeof(x));
	assert_string_equal(x, "BUG: kernel NULL pointer dereference, address:");
	fz_signature("INFO: task kworker/0:1:45 blocked for more than 60 seconds.",
		     NULL, s1, sizeof(s1));
	assert_string_equal(s1, "INFO: task blocked for more than 60 seconds.");
}

static void test_read_crashes(void **state)
{
	char path[] = "/tmp/test_fuzz_ktapXXXXXX";
	const char *ktap =
		"KTAP version 1\n1..3\n"
		"  ok 1 attach g\nok 1 fz-000000\n"
		"# error: kernel crash report: [ 5.1] WARNING: CPU: 0 PID: 9 at a.c:1 f+0x1/0x2\n"
		"# crash: [ 5.1] WARNING: CPU: 0 PID: 9 at a.c:1 f+0x1/0x2\n"
		"# | [ 5.0] usbrig: scenario begin fz-000001\n"
		"# | [ 5.1] WARNING: CPU: 0 PID: 9 at a.c:1 f+0x1/0x2\n"
		"not ok 2 fz-000001\n"
		"ok 3 fz-000002\n";
	struct fz_crash *v;
	FILE *f;
	int fd = mkstemp(path), n;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(ktap, f);
	fclose(f);
	n = fz_read_crashes(path, &v);
	unlink(path);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].scenario, "fz-000001");
	assert_string_equal(v[0].first, "WARNING: CPU: 0 PID: 9 at a.c:1 f+0x1/0x2");
	assert_string_equal(v[0].sig, "WARNING: at a.c:1 f");
	assert_non_null(strstr(v[0].excerpt, "scenario begin fz-000001"));
	fz_crashes_free(v, n);
	assert_true(fz_read_crashes("/nonexistent/ktap", &v) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rng),
		cmocka_unit_test(test_mutator_determinism),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_planted),
		cmocka_unit_test(test_ddmin),
		cmocka_unit_test(test_signature),
		cmocka_unit_test(test_read_crashes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
