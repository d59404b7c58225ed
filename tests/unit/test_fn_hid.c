// SPDX-License-Identifier: GPL-2.0
/*
 * test_fn_hid.c - the hid device function in process: a script parsed
 * from text, the device runtime on a real event_base, and a fake host
 * that records completions.  Checks the class requests usbhid and the
 * HID spec use, and that interrupt IN reports come as scheduled while an
 * idle endpoint stays pending (NAK).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <cmocka.h>
#include <event2/event.h>
#include <linux/usb/ch9.h>

#include "device.h"
#include "fixture.h"
#include "fn/function.h"

/* a boot keyboard (protocol 1) or mouse (2), HID descriptor for LEN */
static const char script_fmt[] =
	"device {\n"
	"  idVendor 0x1209; idProduct 0x0041\n"
	"  config { interface {\n"
	"    bInterfaceClass 3; bInterfaceSubClass 1; bInterfaceProtocol %d\n"
	"    raw 09 21 11 01 00 01 22 %02x 00\n"
	"    endpoint { bEndpointAddress 0x81; type interrupt; wMaxPacketSize 8 }\n"
	"    %s\n"
	"  } }\n"
	"  function hid {\n%s  }\n"
	"}\n";

/* script_fmt with these into text (size bytes). */
static const char *hid_text(char *text, size_t size, int proto, int rlen,
			    const char *extra_ep, const char *opts)
{
	assert_true(snprintf(text, size, script_fmt, proto, rlen, extra_ep,
			     opts) < (int)size);
	return text;
}

static void start(struct fx *fx, int proto, int rlen, const char *extra_ep,
		  const char *opts)
{
	char text[4096];

	fx_start_text(fx, "t.gadget", hid_text(text, sizeof(text), proto, rlen,
					       extra_ep, opts));
}

static int setup(void **state)
{
	return fx_setup_flags(state, FX_POISON_OUT);
}

/* ---- tests ---- */

static void test_validate(void **state)
{
	static const struct {
		int proto, rlen;
		const char *opts, *msg;
	} bad[] = {
		{ 1, 0x40, "", "must announce the 63-byte" },
		{ 0, 0x3f, "", "neither a boot keyboard" },
		{ 1, 0x3f, "    type \"a\" b\n", "expected a quoted string" },
		{ 1, 0x3f, "    type \"\\q\"\n", "unknown escape" },
		{ 1, 0x3f, "    type \"\\x80\"\n", "no key for" },
		{ 2, 0x32, "    type \"a\"\n", "needs the built-in keyboard" },
		{ 2, 0x32, "    move 1\n", "expected DX DY" },
		{ 2, 0x32, "    move 200 0\n", "-127..127" },
		{ 1, 0x3f, "    reports 00 01 02 03 04 05 06 07 08\n", "does not fit" },
		{ 1, 0x3f, "    reports wait 5\n", "a wait after the last" },
		{ 1, 0x3f, "    reports 0g\n", "is not a byte" },
		{ 1, 0x3f, "    type a; reports 00\n", "only one of" },
		{ 1, 0x3f, "    start later\n", "expected first-in" },
		{ 1, 0x3f, "    interface 2\n", "no interface 2" },
		{ 1, 0x05, "    report-descriptor 05 01 09 06\n", "4-byte report" },
	};
	char text[4096];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		fx_expect_script_error("t.gadget",
				       hid_text(text, sizeof(text), bad[i].proto,
						bad[i].rlen, "", bad[i].opts),
				       0, 0, bad[i].msg);
	/* an endpoint the function drives keeps no script behaviour */
	hid_text(text, sizeof(text), 1, 0x3f, "endpoint { bEndpointAddress 0x02; type interrupt; wMaxPacketSize 8; delay 5 }",
		 "");
	fx_expect_script_error("t.gadget", text, 0, 0, "endpoint 0x02 (line 7) is the interrupt OUT endpoint, which the function serves");
	fx_expect_script_ok("t.gadget", hid_text(text, sizeof(text), 0, 4, "",
						 "    kind other; report-descriptor 05 01 0x9 0x06\n"));
}

static void test_class_requests(void **state)
{
	static const uint8_t leds = 0x03;
	struct fx *fx = *state;
	struct urb *u;

	start(fx, 1, 0x3f, "", "");
	/* the report descriptor: the boot keyboard's 63 bytes, cut */
	u = fx_ctrl(fx, 0x81, USB_REQ_GET_DESCRIPTOR, 0x2200, 0, 0x3f, NULL);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 63);
	assert_memory_equal(u->buf, "\x05\x01\x09\x06\xa1\x01", 6);
	assert_int_equal(u->buf[62], 0xc0);
	u = fx_ctrl(fx, 0x81, USB_REQ_GET_DESCRIPTOR, 0x2200, 0, 9, NULL);
	assert_int_equal(u->actual_length, 9);
	u = fx_ctrl(fx, 0x81, USB_REQ_GET_DESCRIPTOR, 0x2100, 0, 64, NULL);
	assert_int_equal(u->actual_length, 9);
	assert_memory_equal(u->buf, "\x09\x21\x11\x01\x00\x01\x22\x3f\x00", 9);
	u = fx_ctrl(fx, 0x81, USB_REQ_GET_DESCRIPTOR, 0x2200, 1, 64, NULL);
	assert_int_equal(u->status, -EPIPE);	/* no interface 1 */

	/* idle: keyboard default 500 ms (125), per report ID */
	u = fx_ctrl(fx, 0xa1, 0x02, 0x0000, 0, 1, NULL);
	assert_int_equal(u->buf[0], 125);
	fx_ctrl(fx, 0x21, 0x0a, 0x0000, 0, 0, NULL); /* SET_IDLE 0, all */
	fx_ctrl(fx, 0x21, 0x0a, 0x0a02, 0, 0, NULL); /* 40 ms, report 2 */
	u = fx_ctrl(fx, 0xa1, 0x02, 0x0000, 0, 1, NULL);
	assert_int_equal(u->buf[0], 0);
	u = fx_ctrl(fx, 0xa1, 0x02, 0x0002, 0, 1, NULL);
	assert_int_equal(u->buf[0], 0x0a);

	/* protocol: report after reset, boot when set */
	u = fx_ctrl(fx, 0xa1, 0x03, 0, 0, 1, NULL);
	assert_int_equal(u->buf[0], 1);
	u = fx_ctrl(fx, 0x21, 0x0b, 0, 0, 0, NULL);
	assert_int_equal(u->status, 0);
	u = fx_ctrl(fx, 0xa1, 0x03, 0, 0, 1, NULL);
	assert_int_equal(u->buf[0], 0);
	u = fx_ctrl(fx, 0x21, 0x0b, 2, 0, 0, NULL);
	assert_int_equal(u->status, -EPIPE);

	/* LEDs: SET_REPORT(output) stored, GET_REPORT(output) returns it */
	u = fx_ctrl(fx, 0xa1, 0x01, 0x0200, 0, 1, NULL);
	assert_int_equal(u->actual_length, 1);
	assert_int_equal(u->buf[0], 0);
	u = fx_ctrl(fx, 0x21, 0x09, 0x0200, 0, 1, &leds);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 1);
	u = fx_ctrl(fx, 0xa1, 0x01, 0x0200, 0, 1, NULL);
	assert_int_equal(u->buf[0], 0x03);
	/* input report before any: zeros of the boot report's 8 bytes */
	u = fx_ctrl(fx, 0xa1, 0x01, 0x0100, 0, 64, NULL);
	assert_int_equal(u->actual_length, 8);
	/* feature reports: none */
	u = fx_ctrl(fx, 0xa1, 0x01, 0x0300, 0, 8, NULL);
	assert_int_equal(u->status, -EPIPE);
	u = fx_ctrl(fx, 0x21, 0x09, 0x0300, 0, 1, &leds);
	assert_int_equal(u->status, -EPIPE);
}

/* type "aB": press/release pairs, Shift for B; NAK when done */
static void test_type_schedule(void **state)
{
	static const uint8_t want[4][8] = {
		{ 0, 0, 0x04 }, { 0 }, { 0x02, 0, 0x05 }, { 0 },
	};
	struct fx *fx = *state;
	struct urb *u[5];
	struct timeval t0;
	int i;

	start(fx, 1, 0x3f, "", "    type \"aB\"; delay 50; interval 10\n");
	gettimeofday(&t0, NULL);
	u[0] = fx_submit(fx, fx_urb_new(0x81, 8));
	/* pending: the start delay */
	assert_false(fx_is_done(fx, u[0]));
	fx_run_until_done(fx, u[0]);
	assert_true(fx_ms_since(&t0) >= 45);
	for (i = 0; i < 4; i++) {
		if (i)
			u[i] = fx_submit(fx, fx_urb_new(0x81, 8));
		fx_run_until_done(fx, u[i]);
		assert_int_equal(u[i]->status, 0);
		assert_int_equal(u[i]->actual_length, 8);
		assert_memory_equal(u[i]->buf, want[i], 8);
	}
	/* the last input report is what GET_REPORT(input) says */
	u[4] = fx_ctrl(fx, 0xa1, 0x01, 0x0100, 0, 8, NULL);
	assert_memory_equal(u[4]->buf, want[3], 8);
	/* idle: never answered with zero bytes, stays pending */
	u[4] = fx_submit(fx, fx_urb_new(0x81, 8));
	fx_run_for(fx, 100);
	assert_false(fx_is_done(fx, u[4]));
	assert_ptr_equal(gdev_unlink(fx->dev, u[4]->seqnum), u[4]);
	fx_urb_free(u[4]);
}

/* Reports that come due without an URB wait for one; repeat starts over;
 * a URB shorter than the report gets only its length. */
static void test_reports_wait_and_repeat(void **state)
{
	struct fx *fx = *state;
	struct urb *u;
	int i;

	start(fx, 1, 0x3f, "",
	      "    reports 01 02 03, wait 0, 04, 05 06\n"
	      "    start attach; delay 0; interval 0; repeat 30\n");
	fx_run_for(fx, 20);			/* due, no URB yet */
	u = fx_submit(fx, fx_urb_new(0x81, 2)); /* shorter than the report */
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->actual_length, 2);
	assert_memory_equal(u->buf, "\x01\x02", 2);
	for (i = 0; i < 3; i++) {
		if (i) {
			/* the next round comes 30 ms after the last report */
			u = fx_submit(fx, fx_urb_new(0x81, 8));
			assert_false(fx_is_done(fx, u));
			fx_run_until_done(fx, u);
			assert_int_equal(u->actual_length, 3);
			assert_memory_equal(u->buf, "\x01\x02\x03", 3);
		}
		u = fx_submit(fx, fx_urb_new(0x81, 8));
		assert_true(fx_is_done(fx, u));
		assert_int_equal(u->actual_length, 1);
		assert_int_equal(u->buf[0], 0x04);
		u = fx_submit(fx, fx_urb_new(0x81, 8));
		assert_true(fx_is_done(fx, u));
		assert_int_equal(u->actual_length, 2);
		assert_memory_equal(u->buf, "\x05\x06", 2);
	}
}

/* start set-idle: nothing before SET_IDLE; the mouse's move reports */
static void test_mouse_set_idle_start(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, 2, 0x32, "", "    move -3 4 1; start set-idle; delay 0\n");
	u = fx_submit(fx, fx_urb_new(0x81, 4));
	fx_run_for(fx, 30);
	assert_false(fx_is_done(fx, u));
	fx_ctrl(fx, 0x21, 0x0a, 0, 0, 0, NULL);
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->actual_length, 3);
	assert_memory_equal(u->buf, "\x01\xfd\x04", 3);
}

/* an interrupt OUT endpoint takes output reports (LEDs) */
static void test_interrupt_out(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, 1, 0x3f,
	      "endpoint { bEndpointAddress 0x02; type interrupt; wMaxPacketSize 8 }",
	      "");
	u = fx_urb_new(0x02, 1);
	u->buf[0] = 0x04;
	fx_submit(fx, u);
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->actual_length, 1);
	u = fx_ctrl(fx, 0xa1, 0x01, 0x0200, 0, 1, NULL);
	assert_int_equal(u->buf[0], 0x04);
}

/* a custom descriptor with report IDs: GET_REPORT(input) per ID */
static void test_report_ids(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, 0, 4, "",
	      "    report-descriptor 05 01 09 06\n"
	      "    reports 02 11 22, 03 44; start attach; delay 0\n");
	u = fx_ctrl(fx, 0xa1, 0x01, 0x0103, 0, 8, NULL);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 2);
	assert_memory_equal(u->buf, "\x03\x00", 2);
	u = fx_ctrl(fx, 0xa1, 0x01, 0x0105, 0, 8, NULL);
	assert_int_equal(u->status, -EPIPE);
	u = fx_submit(fx, fx_urb_new(0x81, 8));
	assert_int_equal(u->actual_length, 3);
	u = fx_ctrl(fx, 0xa1, 0x01, 0x0102, 0, 8, NULL);
	assert_int_equal(u->actual_length, 3);
	assert_memory_equal(u->buf, "\x02\x11\x22", 3);
}

/* SET_CONFIGURATION fails held URBs with -ESHUTDOWN */
static void test_reset_fails_held(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, 1, 0x3f, "", "");
	u = fx_submit(fx, fx_urb_new(0x81, 8));
	assert_false(fx_is_done(fx, u));
	assert_int_equal(gdev_set_config(fx->dev, 1), 0);
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->status, -ESHUTDOWN);
}

/* Not attached (no state yet): a configuration change is harmless. */
static void test_reset_unattached(void **state)
{
	struct fx *fx = *state;
	char text[4096];

	fx_parse(fx, "t.gadget", hid_text(text, sizeof(text), 1, 0x3f, "", ""));
	fx_config_unattached(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, fx_teardown)
		T(test_validate),
		T(test_class_requests),
		T(test_type_schedule),
		T(test_reports_wait_and_repeat),
		T(test_mouse_set_idle_start),
		T(test_interrupt_out),
		T(test_report_ids),
		T(test_reset_fails_held),
		T(test_reset_unattached),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
