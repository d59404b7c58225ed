// SPDX-License-Identifier: GPL-2.0
/*
 * test_console.c - the kernel console as vm.c tails it
 * (harness/host/console.c): which scenario each crash report belongs to,
 * by the agent's markers, and the order reports and markers are told in.
 *
 * A test writes the console text to a file (excerpts are read from it),
 * feeds the same bytes in pieces at chosen times, and checks what the
 * callbacks heard, one line per call:
 *	crash SCENARIO|- WHAT
 *	mark begin|end SCENARIO AT TO
 */
#define _GNU_SOURCE
#include "console.h"
#include "klog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

struct heard {
	char log[8192];		/* one line per call */
	char excerpt[8][CONSOLE_REPORT_MAX];	/* of each crash, in order */
	int n_crash;
};

static void heard_crash(void *ctx, const char *what, const char *excerpt,
			const char *scenario)
{
	struct heard *h = ctx;
	size_t n = strlen(h->log);

	snprintf(h->log + n, sizeof(h->log) - n, "crash %s %s\n",
		 scenario ? scenario : "-", what);
	if (h->n_crash < 8)
		snprintf(h->excerpt[h->n_crash], sizeof(h->excerpt[0]), "%s",
			 excerpt);
	h->n_crash++;
}

static void heard_mark(void *ctx, bool end, const char *scenario,
		       long long at, long long to)
{
	struct heard *h = ctx;
	size_t n = strlen(h->log);

	snprintf(h->log + n, sizeof(h->log) - n, "mark %s %s %lld %lld\n",
		 end ? "end" : "begin", scenario, at, to);
}

struct rig {
	char path[64];
	struct console c;
	struct heard h;
	struct vm_cb cb;
	const char *text;	/* all of the console */
	size_t fed;		/* bytes of it fed so far */
};

static void rig_init(struct rig *g, const char *text)
{
	int fd;

	memset(g, 0, sizeof(*g));
	snprintf(g->path, sizeof(g->path), "/tmp/usbrig-console-XXXXXX");
	fd = mkstemp(g->path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	g->text = text;
	g->cb = (struct vm_cb){
		.crash = heard_crash, .mark = heard_mark, .ctx = &g->h,
	};
	console_init(&g->c, g->path);
}

static void rig_fini(struct rig *g)
{
	console_close(&g->c);
	unlink(g->path);
}

/* Feed the text up to (and with) the first occurrence of upto (all of
 * it: NULL) at time now_ms, then tell what is due. */
static void feed(struct rig *g, const char *upto, uint64_t now_ms)
{
	const char *rest = g->text + g->fed;
	const char *end = upto ? strstr(rest, upto) : rest + strlen(rest);
	size_t n;

	assert_non_null(end);
	if (upto)
		end += strlen(upto);
	n = (size_t)(end - rest);
	/* in two pieces, as read() may cut it */
	console_feed(&g->c, rest, n / 2, now_ms, &g->cb);
	console_feed(&g->c, rest + n / 2, n - n / 2, now_ms, &g->cb);
	g->fed += n;
	console_flush(&g->c, now_ms, false, &g->cb);
}

static void test_mark_parse(void **state)
{
	char name[CONSOLE_NAME_MAX];
	bool end = true;

	(void)state;
	assert_true(console_mark_parse("[    5.163879] usbrig: scenario begin "
				       "a-b.c_1\r", &end, name, sizeof(name)));
	assert_false(end);
	assert_string_equal(name, "a-b.c_1");
	assert_true(console_mark_parse("usbrig: scenario end x", &end, name,
				       sizeof(name)));
	assert_true(end);
	assert_string_equal(name, "x");
	assert_true(console_mark_parse("[    1.000000] [  T123] usbrig: "
				       "scenario end y", &end, name,
				       sizeof(name)));
	assert_string_equal(name, "y");
	/* anything else on the line, or no name, is not a marker */
	assert_false(console_mark_parse("[ 1.0] usbrig: scenario begin x y",
					&end, name, sizeof(name)));
	assert_false(console_mark_parse("[ 1.0] usbrig: scenario begin ", &end,
					name, sizeof(name)));
	assert_false(console_mark_parse("usbrig-agent: scenario begin x", &end,
					name, sizeof(name)));
	assert_false(console_mark_parse("[ 1.0 usbrig: scenario begin x", &end,
					name, sizeof(name)));
	assert_false(console_mark_parse("usbrig: scenario begin abcdefgh", &end,
					name, 8));
	assert_non_null(klog_report_mark("[ 2.0] WARNING: CPU: 0 PID: 1"));
	assert_null(klog_report_mark("[ 2.0] usbrig: scenario begin x"));
	/* BUG() with and without CONFIG_DEBUG_BUGVERBOSE, x86's die() */
	assert_non_null(klog_report_mark("[ 2.0] kernel BUG at x.c:656!"));
	assert_non_null(klog_report_mark("[ 2.0] Kernel BUG at f+0x1f0/0x3b7 "
					 "[verbose debug info unavailable]"));
	assert_non_null(klog_report_mark("[ 2.0] invalid opcode: 0000 [#1]"));
}

/*
 * The bug this fixes (issue 12): a report from a scenario's last step
 * reaches the console after the agent began the next scenario.  It is
 * told with the scenario the markers put it in, and the next begin
 * marker is told after it, not before.
 */
static const char lag[] =
	"[    1.000000] Linux version 6.1.0\r\n"
	"[    2.000000] usbrig: scenario begin a\r\n"
	"[    2.100000] WARNING: CPU: 0 PID: 1 at drivers/usb/core/hub.c:1 a\r\n"
	"[    2.100001] Modules linked in: vhci_hcd\r\n"
	"[    2.200000] usbrig: scenario end a\r\n"
	"[    2.300000] usbrig: scenario begin b\r\n"
	"[    2.400000] usbrig: scenario end b\r\n";

/* The offset of needle in text. */
static long long off(const char *text, const char *needle)
{
	const char *p = strstr(text, needle);

	assert_non_null(p);
	return (long long)(p - text);
}

static void test_last_step(void **state)
{
	struct rig g;
	char want[512];

	(void)state;
	rig_init(&g, lag);
	feed(&g, "Modules linked in: vhci_hcd\r\n", 1000);
	/* only what came before the report */
	snprintf(want, sizeof(want), "mark begin a %lld %lld\n",
		 off(lag, "[    2.000000]"), off(lag, "[    2.100000]"));
	assert_string_equal(g.h.log, want);
	/* the markers after it wait for its excerpt */
	feed(&g, NULL, 2000);
	assert_string_equal(g.h.log, want);
	console_flush(&g.c, 2499, false, &g.cb);
	assert_int_equal(g.h.n_crash, 0);
	console_flush(&g.c, 2500, false, &g.cb);
	snprintf(want + strlen(want), sizeof(want) - strlen(want),
		 "crash a [    2.100000] WARNING: CPU: 0 PID: 1 at "
		 "drivers/usb/core/hub.c:1 a\n"
		 "mark end a %lld %lld\n"
		 "mark begin b %lld %lld\n"
		 "mark end b %lld %lld\n",
		 off(lag, "[    2.200000]"), off(lag, "[    2.300000]"),
		 off(lag, "[    2.300000]"), off(lag, "[    2.400000]"),
		 off(lag, "[    2.400000]"), (long long)strlen(lag));
	assert_string_equal(g.h.log, want);
	/* the excerpt: the lines before it, the report, what came after */
	assert_non_null(strstr(g.h.excerpt[0], "Linux version"));
	assert_non_null(strstr(g.h.excerpt[0], "Modules linked in"));
	assert_non_null(strstr(g.h.excerpt[0], "scenario end b"));
	rig_fini(&g);
}

/*
 * Teardown is the scenario's: a report between its end marker and the
 * next begin marker is its.  A report before any marker is the boot's.
 * One right after the next begin marker is the next scenario's, though
 * the previous report is still waiting, and each excerpt stops at the
 * next report.
 */
static const char teardown[] =
	"[    1.000000] WARNING: CPU: 0 PID: 1 at init/main.c:1 boot\r\n"
	"[    1.000001] ---[ end trace 0000000000000000 ]---\r\n"
	"[    2.000000] usbrig: scenario begin a\r\n"
	"[    2.200000] usbrig: scenario end a\r\n"
	"[    2.250000] BUG: kernel NULL pointer dereference, address: 0\r\n"
	"[    2.250001] #PF: supervisor read access in kernel mode\r\n"
	"[    2.250002] Oops: 0000 [#1] PREEMPT SMP NOPTI\r\n"
	"[    2.300000] usbrig: scenario begin b\r\n"
	"[    2.310000] WARNING: CPU: 1 PID: 9 at drivers/usb/core/hub.c:2 b\r\n"
	"[    2.400000] usbrig: scenario end b\r\n";

static void test_teardown_and_next(void **state)
{
	struct rig g;
	const char *l;

	(void)state;
	rig_init(&g, teardown);
	feed(&g, NULL, 1000);
	console_flush(&g.c, 5000, false, &g.cb);
	l = g.h.log;
	assert_int_equal(g.h.n_crash, 3);
	assert_non_null(strstr(l, "crash - [    1.000000] WARNING: CPU: 0 PID: "
			       "1 at init/main.c:1 boot\nmark begin a "));
	/* "Oops:" is a line of the BUG's report, not a report */
	assert_non_null(strstr(l, "\nmark end a "));
	assert_non_null(strstr(l, "\ncrash a [    2.250000] BUG: kernel NULL "
			       "pointer dereference, address: 0\nmark begin b "));
	assert_non_null(strstr(l, "\ncrash b [    2.310000] WARNING: CPU: 1 "
			       "PID: 9 at drivers/usb/core/hub.c:2 b\nmark end "
			       "b "));
	/* each excerpt up to the next report */
	assert_non_null(strstr(g.h.excerpt[0], "init/main.c:1 boot"));
	assert_null(strstr(g.h.excerpt[0], "BUG:"));
	assert_non_null(strstr(g.h.excerpt[1], "Oops: 0000"));
	assert_non_null(strstr(g.h.excerpt[1], "scenario begin b"));
	assert_null(strstr(g.h.excerpt[1], "hub.c:2"));
	assert_non_null(strstr(g.h.excerpt[2], "hub.c:2 b"));
	rig_fini(&g);
}

/* A second report of one scenario: after the first one's end trace line
 * it is a report of its own; before, a line of the first one. */
static const char two[] =
	"[    2.000000] usbrig: scenario begin a\r\n"
	"[    2.100000] WARNING: CPU: 0 PID: 1 at x.c:1 first\r\n"
	"[    2.100001] WARNING: CPU: 0 PID: 1 at x.c:2 same report\r\n"
	"[    2.100002] ---[ end trace 0000000000000000 ]---\r\n"
	"[    2.200000] BUG: sleeping function called from invalid context\r\n"
	"[    2.300000] usbrig: scenario end a\r\n";

static void test_two_reports(void **state)
{
	struct rig g;

	(void)state;
	rig_init(&g, two);
	feed(&g, NULL, 0);
	/* the guest is gone: everything is told, due or not */
	console_flush(&g.c, 0, true, &g.cb);
	assert_int_equal(g.h.n_crash, 2);
	assert_non_null(strstr(g.h.log, "\ncrash a [    2.100000] WARNING: CPU: "
			       "0 PID: 1 at x.c:1 first\ncrash a [    2.200000] "
			       "BUG: sleeping function called from invalid "
			       "context\nmark end a "));
	assert_non_null(strstr(g.h.excerpt[0], "same report"));
	assert_null(strstr(g.h.excerpt[0], "sleeping"));
	rig_fini(&g);
}

/*
 * A BUG() on a kernel without CONFIG_DEBUG_BUGVERBOSE (the patched ones,
 * from tinyconfig; seen in `usbrig fuzz` on the KASAN kernel, a module's
 * unload): the report is the "Kernel BUG at" line, not the panic that
 * ends it, and its excerpt holds the trace; the panic after the end trace
 * line is a line of it, not a second report.
 */
static const char bug_terse[] =
	"[   26.000000] usbrig: scenario begin a\r\n"
	"[   26.167482] ------------[ cut here ]------------\r\n"
	"[   26.168680] Kernel BUG at __x64_sys_delete_module+0x1f0/0x3b7 "
	"[verbose debug info unavailable]\r\n"
	"[   26.170453] invalid opcode: 0000 [#1] PREEMPT SMP KASAN\r\n"
	"[   26.171583] RIP: 0010:__x64_sys_delete_module+0x1f0/0x3b7\r\n"
	"[   26.172483] Call Trace:\r\n"
	"[   26.180011] ---[ end trace 0000000000000000 ]---\r\n"
	"[   26.180012] RIP: 0010:__x64_sys_delete_module+0x1f0/0x3b7\r\n"
	"[   26.182586] Kernel panic - not syncing: Fatal exception\r\n";

static void test_bug_terse(void **state)
{
	struct rig g;

	(void)state;
	rig_init(&g, bug_terse);
	feed(&g, NULL, 0);
	console_flush(&g.c, 0, true, &g.cb);
	assert_int_equal(g.h.n_crash, 1);
	assert_non_null(strstr(g.h.log, "\ncrash a [   26.168680] Kernel BUG at "
			       "__x64_sys_delete_module+0x1f0/0x3b7"));
	assert_non_null(strstr(g.h.excerpt[0], "RIP: 0010:__x64_sys_delete"));
	assert_non_null(strstr(g.h.excerpt[0], "Kernel panic"));
	rig_fini(&g);
}

/* More markers than the queue holds while a report waits: the report is
 * told early, the order stays. */
static void test_queue_full(void **state)
{
	static char text[CONSOLE_QUEUE_MAX * 80 + 256];
	struct rig g;
	size_t n = 0;
	int i;

	(void)state;
	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "[ 1.0] usbrig: scenario begin s0\n"
			      "[ 1.1] WARNING: CPU: 0 PID: 1 at x.c:1 s0\n");
	for (i = 1; i < CONSOLE_QUEUE_MAX + 2; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "[ 2.0] usbrig: scenario begin s%d\n", i);
	rig_init(&g, text);
	feed(&g, NULL, 0);
	assert_int_equal(g.h.n_crash, 1);
	assert_true(!strncmp(g.h.log, "mark begin s0 0 33\ncrash s0 [ 1.1] "
			     "WARNING: CPU: 0 PID: 1 at x.c:1 s0\nmark begin "
			     "s1 ", 80));
	assert_non_null(strstr(g.h.log, "mark begin s65 "));
	rig_fini(&g);
}

/* An overlong line keeps its head, and the offsets after it stay true. */
static void test_long_line(void **state)
{
	static char text[6000 + 256];
	char want[128];
	struct rig g;
	size_t n;

	(void)state;
	memset(text, 'x', 6000);
	n = 6000;
	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "\n[ 3.0] usbrig: scenario end a\n");
	rig_init(&g, text);
	feed(&g, NULL, 0);
	snprintf(want, sizeof(want), "mark end a 6001 %zu\n", n);
	assert_string_equal(g.h.log, want);
	rig_fini(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mark_parse),
		cmocka_unit_test(test_last_step),
		cmocka_unit_test(test_teardown_and_next),
		cmocka_unit_test(test_two_reports),
		cmocka_unit_test(test_bug_terse),
		cmocka_unit_test(test_queue_full),
		cmocka_unit_test(test_long_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
