// SPDX-License-Identifier: GPL-2.0
/*
 * test_trace.c - the agent's reader of the usb_core trace events
 * (harness/agent/trace.c): trace_pipe lines as the patched 6.1 kernel
 * prints them, cut anywhere by read(), into records.
 *
 * The test links build/libusbrig-agent.a and gives trace.c the two
 * helpers it takes from the agent's main.c.
 */
#define _GNU_SOURCE
#include "agent.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

void strfmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static int n_logged;

void ag_log(const char *fmt, ...)
{
	(void)fmt;
	n_logged++;
}

/* Lines as trace_pipe gives them (trace_clock mono, 6.1, patch 0001). */
static const char lines[] =
	"            bash-212     [000] .....    95.123456: usb_dynid_add: "
	"driver=usb_bindtest vid=1209 pid=0001 class=00 driver_info=0x0\n"
	"            bash-212     [000] .....    95.124001: usb_probe_interface: "
	"intf=1-1:1.0 driver=usb_bindtest id=dynamic match_flags=0x0003 "
	"vid=1209 pid=0001 class=00 ret=0 usecs=126\n"
	"     kworker/0:2-31      [001] d..1.   96.000010: sched_switch: "
	"prev_comm=x\n"
	"    usbrig-agent-90      [000] .....   97.500000: usb_probe_interface: "
	"intf=3-1:3.0 driver=usbtest id=static match_flags=0x0003 "
	"vid=0525 pid=a4a0 class=00 ret=-517 usecs=1087\n"
	"            bash-212     [000] .....    98.000000: "
	"usb_unbind_interface: intf=1-1:1.0 driver=usb_bindtest\n"
	"            bash-212     [000] .....    99.000001: usb_dynid_remove: "
	"driver=usb_bindtest vid=0525 pid=a4a0 class=ff "
	"driver_info=0x80640016\n"
	"            bash-212     [000] .....   100.000001: "
	"usb_probe_interface: intf=3-1:3.0 driver=usb_bindtest id=none "
	"match_flags=0x0000 vid=0000 pid=0000 class=00 ret=-19 usecs=11\n"
	/* a record with a field missing is dropped and logged */
	"            bash-212     [000] .....   101.000001: "
	"usb_probe_interface: intf=3-1:3.0 driver=x id=none\n";

static void feed(const char *text, size_t chunk)
{
	int fds[2];
	size_t off = 0, len = strlen(text);

	assert_int_equal(pipe2(fds, O_NONBLOCK), 0);
	tr.fd = fds[0];
	while (off < len) {
		size_t n = len - off < chunk ? len - off : chunk;

		assert_int_equal(write(fds[1], text + off, n), (ssize_t)n);
		off += n;
		trace_drain();	/* a read may end anywhere in a line */
	}
	close(fds[1]);
	trace_drain();
	close(fds[0]);
	tr.fd = -1;
}

static void check_records(void)
{
	const struct tr_rec *r = tr.rec;

	assert_int_equal(tr.n, 6);
	assert_int_equal(r[0].event, TR_DYNID_ADD);
	assert_string_equal(r[0].driver, "usb_bindtest");
	assert_int_equal(r[0].vid, 0x1209);
	assert_int_equal(r[0].pid, 0x0001);
	assert_int_equal(r[0].t_us, 95123456);

	assert_int_equal(r[1].event, TR_PROBE);
	assert_string_equal(r[1].intf, "1-1:1.0");
	assert_string_equal(r[1].id, "dynamic");
	assert_int_equal(r[1].match_flags, 3);
	assert_int_equal(r[1].ret, 0);
	assert_int_equal(r[1].usecs, 126);
	assert_string_equal(r[1].text, "usb_probe_interface: intf=1-1:1.0 "
			    "driver=usb_bindtest id=dynamic match_flags=0x0003 "
			    "vid=1209 pid=0001 class=00 ret=0 usecs=126");

	/* the sched_switch line is not ours: skipped */
	assert_string_equal(r[2].driver, "usbtest");
	assert_string_equal(r[2].id, "static");
	assert_int_equal(r[2].vid, 0x0525);
	assert_int_equal(r[2].pid, 0xa4a0);
	assert_int_equal(r[2].ret, -517);

	assert_int_equal(r[3].event, TR_UNBIND);
	assert_string_equal(r[3].intf, "1-1:1.0");
	assert_string_equal(r[3].driver, "usb_bindtest");

	assert_int_equal(r[4].event, TR_DYNID_REMOVE);
	assert_int_equal(r[4].cls, 0xff);
	assert_int_equal(r[4].driver_info, 0x80640016ull);

	assert_string_equal(r[5].id, "none");
	assert_int_equal(r[5].ret, -19);
}

static void test_whole_lines(void **state)
{
	(void)state;
	n_logged = 0;
	feed(lines, sizeof(lines));
	check_records();
	assert_int_equal(n_logged, 1);
	trace_mark_scenario();
	assert_int_equal(tr.n, 0);
}

static void test_cut_lines(void **state)
{
	size_t chunk;

	(void)state;
	for (chunk = 1; chunk < 80; chunk += 13) {
		feed(lines, chunk);
		check_records();
		trace_mark_scenario();
	}
}

static void test_describe(void **state)
{
	char buf[1024];

	(void)state;
	tr.on = false;
	strfmt(tr.why, sizeof(tr.why), "no events");
	trace_describe(NULL, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "no usb_core trace events: no events");

	tr.on = true;
	feed(lines, sizeof(lines));
	trace_describe("1-1:1.0", NULL, buf, sizeof(buf));
	assert_string_equal(buf, "usb_probe_interface: intf=1-1:1.0 "
			    "driver=usb_bindtest id=dynamic match_flags=0x0003 "
			    "vid=1209 pid=0001 class=00 ret=0 usecs=126 | "
			    "usb_unbind_interface: intf=1-1:1.0 "
			    "driver=usb_bindtest");
	trace_describe("9-9:1.0", "x", buf, sizeof(buf));
	assert_string_equal(buf, "no usb_core records for 9-9:1.0 of driver x");
	trace_mark_scenario();
	tr.on = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_lines),
		cmocka_unit_test(test_cut_lines),
		cmocka_unit_test(test_describe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
