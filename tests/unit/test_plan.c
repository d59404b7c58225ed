// SPDX-License-Identifier: GPL-2.0
/*
 * test_plan.c - the plan/result line codec (harness/common/plan.c) and the
 * initramfs cpio writer (harness/host/cpio.c), the file helpers
 * (harness/common/fsutil.c) and the plan's words (plan_words.c).
 *
 * The test links the harness libraries (build/libusbrig-host.a,
 * libusbrig-harness.a) as usbrig does.
 */
#define _GNU_SOURCE
#include "cpio.h"
#include "fsutil.h"
#include "initramfs.h"
#include "plan.h"
#include "plan_words.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* ---- plan_quote / plan_split ---- */

static void quote_roundtrip(const char *s)
{
	char q[2048], line[2100];
	struct plan_tok t[4];
	int n;

	n = plan_quote(q, sizeof(q), s);
	assert_true(n > 0);
	assert_int_equal((size_t)n + 1, plan_quote_len(s));
	snprintf(line, sizeof(line), "x %s y\n", q);
	n = plan_split(line, t, 4, 0, NULL);
	assert_int_equal(n, 3);
	assert_string_equal(t[0].s, "x");
	assert_false(t[0].quoted);
	assert_true(t[1].quoted);
	assert_int_equal(t[1].len, strlen(s));
	assert_memory_equal(t[1].s, s, strlen(s));
	assert_string_equal(t[2].s, "y");
}

static void test_quote_roundtrip(void **state)
{
	char all[256];
	int i;

	(void)state;
	quote_roundtrip("");
	quote_roundtrip("plain");
	quote_roundtrip("a \"b\" \\ c");
	quote_roundtrip("tab\tnl\ncr\r");
	quote_roundtrip("\x01\x1f\x7f\x80\xff");
	quote_roundtrip("${g.intf0}");
	for (i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = '\0';
	quote_roundtrip(all);
}

static void test_quote_output(void **state)
{
	char q[64];

	(void)state;
	/* only printable ASCII leaves plan_quote */
	assert_int_equal(plan_quote(q, sizeof(q), "a\"\\\n\t\r\x01\xff"), 21);
	assert_string_equal(q, "\"a\\\"\\\\\\n\\t\\r\\x01\\xff\"");
}

static void test_quote_nospace(void **state)
{
	char q[6];

	(void)state;
	assert_int_equal(plan_quote(q, 5, "abc"), -ENOSPC);	/* needs 6 */
	assert_string_equal(q, "");
	assert_int_equal(plan_quote(q, 6, "abc"), 5);
	assert_string_equal(q, "\"abc\"");
	assert_int_equal(plan_quote(q, 0, "abc"), -ENOSPC);
}

static void split_err(const char *text, size_t max_toks, size_t max_len,
		      int want, size_t want_col)
{
	struct plan_tok t[8];
	char line[256];
	size_t col = 99;

	snprintf(line, sizeof(line), "%s", text);
	assert_int_equal(plan_split(line, t, max_toks, max_len, &col), want);
	assert_int_equal(col, want_col);
}

static void test_split_errors(void **state)
{
	(void)state;
	split_err("a \"bc", 8, 0, -EINVAL, 6);		/* unterminated */
	split_err("a \"bc\"d", 8, 0, -EINVAL, 7);	/* glued */
	split_err("a b\"c\"", 8, 0, -EINVAL, 4);	/* quote in a word */
	split_err("\"\\q\"", 8, 0, -EINVAL, 2);		/* unknown escape */
	split_err("\"\\x4\"", 8, 0, -EINVAL, 2);	/* one hex digit */
	split_err("\"\\x00\"", 8, 0, -EINVAL, 2);	/* no NUL */
	split_err("a\x01", 8, 0, -EINVAL, 2);		/* raw control */
	split_err("\"a\x01\"", 8, 0, -EINVAL, 3);
	split_err("a b c", 2, 0, -E2BIG, 5);
	split_err("a bbbb c", 8, 3, -ENAMETOOLONG, 3);
	split_err("\"abcd\"", 8, 3, -ENAMETOOLONG, 1);
}

static void test_split_ok(void **state)
{
	struct plan_tok t[8];
	char line[128];

	(void)state;
	strcpy(line, "");
	assert_int_equal(plan_split(line, t, 8, 0, NULL), 0);
	strcpy(line, "  \t \r\n");
	assert_int_equal(plan_split(line, t, 8, 0, NULL), 0);
	strcpy(line, "step 12 write \"\" ok\r\n");
	assert_int_equal(plan_split(line, t, 8, 0, NULL), 5);
	assert_string_equal(t[3].s, "");
	assert_int_equal(t[3].len, 0);
	assert_true(t[3].quoted);
	assert_string_equal(t[4].s, "ok");
	/* exactly max_toks words and max_len bytes are fine */
	strcpy(line, "abc \"def\"");
	assert_int_equal(plan_split(line, t, 2, 3, NULL), 2);
	/* raw UTF-8 is taken as is */
	strcpy(line, "\"caf\xc3\xa9\"");
	assert_int_equal(plan_split(line, t, 2, 0, NULL), 1);
	assert_string_equal(t[0].s, "caf\xc3\xa9");
}

static void test_parse_uint(void **state)
{
	unsigned long v = 0;

	(void)state;
	assert_int_equal(plan_parse_uint("0", 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(plan_parse_uint("600000", 600000, &v), 0);
	assert_int_equal(v, 600000);
	assert_int_equal(plan_parse_uint("600001", 600000, &v), -ERANGE);
	assert_int_equal(plan_parse_uint("18446744073709551615", ~0UL, &v), 0);
	assert_int_equal(plan_parse_uint("18446744073709551616", ~0UL, &v),
			 -ERANGE);
	assert_int_equal(plan_parse_uint("", 10, &v), -EINVAL);
	assert_int_equal(plan_parse_uint("-1", 10, &v), -EINVAL);
	assert_int_equal(plan_parse_uint("1x", 10, &v), -EINVAL);
}

/* ---- the newc writer ---- */

/* Walk a newc archive: names in order into `names` (space-separated),
 * and check every header, padding and the trailer. */
static void cpio_walk(const char *path, char *names, size_t size)
{
	FILE *f = fopen(path, "rb");
	char hdr[111], name[256];
	size_t w = 0;

	assert_non_null(f);
	names[0] = '\0';
	for (;;) {
		unsigned int v[13];
		long pos;

		assert_int_equal(fread(hdr, 1, 110, f), 110);
		hdr[110] = '\0';
		assert_memory_equal(hdr, "070701", 6);
		for (int i = 0; i < 13; i++) {
			char field[9];

			memcpy(field, hdr + 6 + i * 8, 8);
			field[8] = '\0';
			v[i] = (unsigned int)strtoul(field, NULL, 16);
		}
		/* v[11] namesize (with NUL), v[6] filesize */
		assert_true(v[11] > 1 && v[11] < sizeof(name));
		assert_int_equal(fread(name, 1, v[11], f), v[11]);
		assert_int_equal(name[v[11] - 1], '\0');
		pos = ftell(f);
		fseek(f, (4 - pos % 4) % 4, SEEK_CUR);
		if (!strcmp(name, "TRAILER!!!"))
			break;
		w += (size_t)snprintf(names + w, size - w, "%s%s", w ? " " : "",
				      name);
		fseek(f, (long)v[6], SEEK_CUR);
		pos = ftell(f);
		fseek(f, (4 - pos % 4) % 4, SEEK_CUR);
	}
	fclose(f);
}

/* ---- the data lines of a `save`: base64 and CRC-32 ---- */

static void test_b64(void **state)
{
	/* RFC 4648 section 10 */
	static const char *const vec[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" },
		{ "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	unsigned char all[PLAN_DATA_CHUNK], back[PLAN_DATA_CHUNK];
	char enc[PLAN_DATA_CHUNK / 3 * 4 + 1], dec[16];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		size_t n = strlen(vec[i][0]);

		assert_int_equal(plan_b64_len(n), strlen(vec[i][1]));
		plan_b64_encode(enc, vec[i][0], n);
		assert_string_equal(enc, vec[i][1]);
		assert_int_equal(plan_b64_decode(dec, sizeof(dec), enc),
				 (long)n);
		assert_memory_equal(dec, vec[i][0], n);
	}
	/* every byte value, NUL included, in a whole chunk */
	for (i = 0; i < sizeof(all); i++)
		all[i] = (unsigned char)(i * 7);
	plan_b64_encode(enc, all, sizeof(all));
	assert_int_equal(strlen(enc), PLAN_DATA_CHUNK / 3 * 4);
	/* a data line fits a plan line: "data LINE OFFSET " + the chunk */
	assert_true(strlen(enc) + 32 < PLAN_LINE_MAX);
	assert_null(strpbrk(enc, " \t\""));
	assert_int_equal(plan_b64_decode(back, sizeof(back), enc),
			 PLAN_DATA_CHUNK);
	assert_memory_equal(back, all, sizeof(all));

	assert_int_equal(plan_b64_decode(dec, sizeof(dec), "Zm9"), -EINVAL);
	assert_int_equal(plan_b64_decode(dec, sizeof(dec), "Zm=v"), -EINVAL);
	assert_int_equal(plan_b64_decode(dec, sizeof(dec), "Zg==Zm9v"),
			 -EINVAL);
	assert_int_equal(plan_b64_decode(dec, sizeof(dec), "Z\"9v"), -EINVAL);
	assert_int_equal(plan_b64_decode(dec, sizeof(dec), "=Zm9"), -EINVAL);
	assert_int_equal(plan_b64_decode(dec, 2, "Zm9v"), -ENOSPC);
	assert_int_equal(plan_b64_decode(dec, 2, "Zm8="), 2);
}

static void test_crc32(void **state)
{
	(void)state;
	/* the check value of CRC-32/ISO-HDLC (zlib's crc32) */
	assert_int_equal(plan_crc32(0, "123456789", 9), 0xcbf43926u);
	assert_int_equal(plan_crc32(0, "", 0), 0);
	/* chained: the same as in one go */
	assert_int_equal(plan_crc32(plan_crc32(0, "1234", 4), "56789", 5),
			 0xcbf43926u);
}

static void test_cpio_tree(void **state)
{
	char dir[] = "/tmp/usbrig-test-XXXXXX";
	char p[PATH_MAX], out[PATH_MAX], names[1024];
	struct cpio c = { 0 };
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/root/b/c", dir);
	assert_int_equal(fs_mkdir_p(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/root/a", dir);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs("hello", f);	/* 5 bytes: padding needed */
	fclose(f);
	snprintf(p, sizeof(p), "%s/root/b/link", dir);
	assert_int_equal(symlink("/a", p), 0);
	snprintf(out, sizeof(out), "%s/out.cpio", dir);
	c.fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(c.fd >= 0);
	cpio_header(&c, "dev/console", S_IFCHR | 0600, 0, 0, 5, 1);
	snprintf(p, sizeof(p), "%s/root", dir);
	cpio_tree(&c, p, "");
	cpio_trailer(&c);
	close(c.fd);
	assert_int_equal(c.err, 0);
	cpio_walk(out, names, sizeof(names));
	/* sorted, parents before children */
	assert_string_equal(names, "dev/console a b b/c b/link");
	fs_rm_rf(dir);
}

static void test_kernel_release(void **state)
{
	char path[PATH_MAX], rel[128];

	(void)state;
	if (initramfs_default_kernel(path, sizeof(path)))
		skip();
	assert_int_equal(initramfs_kernel_release(path, rel, sizeof(rel)), 0);
	/* /boot/vmlinuz-RELEASE names the same release */
	assert_string_equal(rel, strrchr(path, '-') ?
			    strstr(path, "vmlinuz-") + 8 : "");
	assert_int_equal(initramfs_kernel_release("/dev/null", rel,
						  sizeof(rel)), -ENOEXEC);
}

/* ---- the plan's words (harness/common/plan_words.c) ---- */

static void test_words(void **state)
{
	(void)state;
	assert_string_equal(plan_kind_name(PLAN_EXPECT_PROBE_ERROR),
			    "expect-probe-error");
	assert_string_equal(plan_kind_name(PLAN_N_KINDS), "?");
	assert_int_equal(plan_word_index(plan_kind_names, PLAN_N_KINDS,
					 "expect-dynid"), PLAN_EXPECT_DYNID);
	assert_int_equal(plan_word_index(plan_kind_names, PLAN_N_KINDS,
					 "expect"), -1);
	assert_int_equal(plan_word_index(plan_matched_names, PLAN_N_MATCHED,
					 "-"), PLAN_MATCHED_ANY);
	/* every table is full: no hole a designated initializer left */
	for (int i = 0; i < PLAN_N_KINDS; i++)
		assert_non_null(plan_kind_names[i]);
	assert_int_equal(plan_errno_value("EPROBE_DEFER"), PLAN_EPROBE_DEFER);
	assert_string_equal(plan_errno_name(PLAN_EPROBE_DEFER), "EPROBE_DEFER");
	assert_int_equal(plan_errno_value("ENODEV"), ENODEV);
	assert_string_equal(plan_errno_name(EBUSY), "EBUSY");
	assert_int_equal(plan_errno_value("22"), 0);
	assert_null(plan_errno_name(0));
}

/* ---- fs_read_file, fs_mkdir_p (harness/common/fsutil.c) ---- */

/*
 * A plan that comes in two read()s: through a FIFO whose writer pauses
 * between the halves, the first read() returns only the first half (and
 * fstat() says 0 bytes).  The reader must go on to end of file.
 */
static void test_read_file_short_reads(void **state)
{
	char dir[] = "/tmp/usbrig-test-XXXXXX", fifo[64];
	size_t len = 1;
	char *got;
	pid_t pid;
	int status;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/plan", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int fd = open(fifo, O_WRONLY);

		if (fd < 0 || write(fd, "scenario a f 1\n", 15) != 15)
			_exit(1);
		usleep(100 * 1000);
		if (write(fd, "end\n", 4) != 4)
			_exit(1);
		_exit(0);
	}
	got = fs_read_file(fifo, 1024, &len);
	waitpid(pid, &status, 0);
	unlink(fifo);
	rmdir(dir);
	assert_non_null(got);
	assert_string_equal(got, "scenario a f 1\nend\n");
	assert_int_equal(len, 19);
	assert_int_equal(status, 0);
	free(got);
}

static void test_read_file_limits(void **state)
{
	char path[] = "/tmp/usbrig-test-XXXXXX";
	size_t len;
	char *got;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	close(fd);
	got = fs_read_file(path, 10, &len);
	assert_non_null(got);
	assert_int_equal(len, 10);
	assert_string_equal(got, "0123456789");
	free(got);
	errno = 0;
	assert_null(fs_read_file(path, 9, &len));
	assert_int_equal(errno, EFBIG);
	unlink(path);
	errno = 0;
	assert_null(fs_read_file(path, 10, &len));
	assert_int_equal(errno, ENOENT);
}

static void test_mkdir_p(void **state)
{
	char dir[] = "/tmp/usbrig-test-XXXXXX", path[PATH_MAX + 8];
	struct stat st;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	assert_int_equal(fs_mkdir_p(path, 0755), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(fs_mkdir_p(path, 0755), 0);	/* exists: fine */
	/* a path that does not fit PATH_MAX is refused, nothing created */
	n = strlen(dir);
	memset(path + n, 'x', sizeof(path) - n - 1);
	path[n] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(fs_mkdir_p(path, 0755), -ENAMETOOLONG);
	fs_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quote_roundtrip),
		cmocka_unit_test(test_quote_output),
		cmocka_unit_test(test_quote_nospace),
		cmocka_unit_test(test_split_errors),
		cmocka_unit_test(test_split_ok),
		cmocka_unit_test(test_parse_uint),
		cmocka_unit_test(test_b64),
		cmocka_unit_test(test_crc32),
		cmocka_unit_test(test_cpio_tree),
		cmocka_unit_test(test_kernel_release),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_read_file_short_reads),
		cmocka_unit_test(test_read_file_limits),
		cmocka_unit_test(test_mkdir_p),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
