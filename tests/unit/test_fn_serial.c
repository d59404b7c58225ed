// SPDX-License-Identifier: GPL-2.0
/*
 * test_fn_serial.c - the serial device functions (gadgets/fn/acm.c, ftdi.c,
 * pl2303.c, serial_core.c) in process: the shipped example scripts,
 * driven with the URBs their Linux drivers send, answers checked byte for
 * byte; and the option errors at their file:line:col.
 *
 * Runs from the repository root (it reads gadgets/examples/).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>
#include <linux/usb/ch9.h>

#include "device.h"
#include "fixture.h"
#include "fn/serial_core.h"
#include "log.h"
#include "model.h"
#include "script.h"

/* ---- helpers (the fake host is fixture.c) ---- */

static void expect_ok(struct fx *fx, const struct urb *u, uint32_t actual)
{
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, actual);
}

static void expect_stall(struct fx *fx, const struct urb *u)
{
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->status, -EPIPE);
}

static struct urb *bulk_out(struct fx *fx, uint8_t ep, const char *s)
{
	struct urb *u = fx_urb_new(ep, strlen(s));

	memcpy(u->buf, s, strlen(s));
	return fx_submit(fx, u);
}

static void start(struct fx *fx, const char *path)
{
	struct script_error err;
	struct urb *u;

	if (script_load(path, &fx->m, &err))
		fail_msg("%s", err.msg);
	fx_attach(fx);
	u = fx_ctrl(fx, 0x00, USB_REQ_SET_CONFIGURATION, 1, 0, 0, NULL);
	expect_ok(fx, u, 0);
}

/* As start(), from a script text of the options test's shape. */
static void start_text(struct fx *fx, const char *text)
{
	struct script_error err;
	struct urb *u;

	if (script_parse("t.gadget", text, strlen(text), &fx->m, &err))
		fail_msg("%s", err.msg);
	fx_attach(fx);
	u = fx_ctrl(fx, 0x00, USB_REQ_SET_CONFIGURATION, 1, 0, 0, NULL);
	expect_ok(fx, u, 0);
}

static int setup(void **state)
{
	struct fx *fx = fx_create(FX_DISCONNECT_FAILS);

	fx->own_model = true;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fx_destroy(*state);
	return 0;
}

#define ACM	"gadgets/examples/acm.gadget"
#define FTDI	"gadgets/examples/ftdi.gadget"
#define PL2303	"gadgets/examples/pl2303.gadget"

/* ---- acm ---- */

/* 38400 baud, 2 stop bits, even parity, 7 data bits */
static const uint8_t coding_38400_7e2[7] = { 0x00, 0x96, 0, 0, 2, 2, 7 };

static void test_acm_line_coding(void **state)
{
	static const uint8_t def[7] = { 0x80, 0x25, 0, 0, 0, 0, 8 };
	struct fx *fx = *state;
	struct urb *u;

	start(fx, ACM);
	u = fx_ctrl(fx, 0xa1, 0x21, 0, 0, 7, NULL);	/* GET_LINE_CODING */
	expect_ok(fx, u, 7);
	assert_memory_equal(u->buf, def, 7);
	u = fx_ctrl(fx, 0x21, 0x20, 0, 0, 7, coding_38400_7e2);
	expect_ok(fx, u, 7);
	u = fx_ctrl(fx, 0xa1, 0x21, 0, 0, 7, NULL);
	expect_ok(fx, u, 7);
	assert_memory_equal(u->buf, coding_38400_7e2, 7);
	/* a short read is cut, not overrun */
	u = fx_ctrl(fx, 0xa1, 0x21, 0, 0, 4, NULL);
	expect_ok(fx, u, 4);
	/* wrong length, wrong interface, unknown request */
	expect_stall(fx, fx_ctrl(fx, 0x21, 0x20, 0, 0, 6, coding_38400_7e2));
	expect_stall(fx, fx_ctrl(fx, 0xa1, 0x21, 0, 1, 7, NULL));
	expect_stall(fx, fx_ctrl(fx, 0x21, 0x02, 0, 0, 0, NULL));
}

static void test_acm_serial_state_on_dtr(void **state)
{
	static const uint8_t note[10] = { 0xa1, 0x20, 0, 0, 0, 0, 2, 0,
					  0x03, 0x00 };
	struct fx *fx = *state;
	struct urb *irq, *irq2, *u;

	start(fx, ACM);
	irq = fx_submit(fx, fx_urb_new(0x83, 16));
	assert_false(fx_is_done(fx, irq));		/* idle: NAK */
	u = fx_ctrl(fx, 0x21, 0x22, 0x0002, 0, 0, NULL);	/* RTS only */
	expect_ok(fx, u, 0);
	assert_false(fx_is_done(fx, irq));
	u = fx_ctrl(fx, 0x21, 0x22, 0x0003, 0, 0, NULL);	/* DTR rises */
	expect_ok(fx, u, 0);
	expect_ok(fx, irq, 10);
	assert_memory_equal(irq->buf, note, 10);
	/* DTR stays up: nothing new */
	irq2 = fx_submit(fx, fx_urb_new(0x83, 16));
	fx_ctrl(fx, 0x21, 0x22, 0x0003, 0, 0, NULL);
	assert_false(fx_is_done(fx, irq2));
	/* the pending notification URB is the function's to give back */
	assert_ptr_equal(gdev_unlink(fx->dev, irq2->seqnum), irq2);
	fx_urb_free(irq2);
	/* dropped and raised again: a second notification, split over two
	 * 8-byte URBs as cdc_acm would reassemble it */
	fx_ctrl(fx, 0x21, 0x22, 0, 0, 0, NULL);
	fx_ctrl(fx, 0x21, 0x22, 1, 0, 0, NULL);
	u = fx_submit(fx, fx_urb_new(0x83, 8));
	expect_ok(fx, u, 8);
	assert_memory_equal(u->buf, note, 8);
	u = fx_submit(fx, fx_urb_new(0x83, 8));
	expect_ok(fx, u, 2);
	assert_memory_equal(u->buf, note + 8, 2);
}

static void test_acm_echo_and_respond(void **state)
{
	static const char want[] = "AT+IPR?\r\r\n+IPR: 38400 7E2\r\n";
	struct fx *fx = *state;
	struct urb *in, *out;

	start(fx, ACM);
	in = fx_submit(fx, fx_urb_new(0x81, 64));
	assert_false(fx_is_done(fx, in));
	out = bulk_out(fx, 0x02, "hello");
	expect_ok(fx, out, 5);
	expect_ok(fx, in, 5);
	assert_memory_equal(in->buf, "hello", 5);

	fx_ctrl(fx, 0x21, 0x20, 0, 0, 7, coding_38400_7e2);
	/* the request split over two URBs still matches */
	bulk_out(fx, 0x02, "AT+I");
	bulk_out(fx, 0x02, "PR?\r");
	in = fx_submit(fx, fx_urb_new(0x81, 64));
	expect_ok(fx, in, strlen(want));
	assert_memory_equal(in->buf, want, strlen(want));

	/* "AT\r" answered, after its echo */
	bulk_out(fx, 0x02, "AT\r");
	in = fx_submit(fx, fx_urb_new(0x81, 64));
	expect_ok(fx, in, 9);
	assert_memory_equal(in->buf, "AT\r\r\nOK\r\n", 9);
}

/* echo off, escapes in a request, %% in a reply */
static void test_acm_escapes_echo_off(void **state)
{
	static const char text[] =
		"device {\n"
		"  idVendor 0x1209; idProduct 0x7e57\n"
		"  config {\n"
		"    interface {\n"
		"      bInterfaceClass 2; bInterfaceSubClass 2\n"
		"      endpoint { bEndpointAddress 0x83; type interrupt }\n"
		"    }\n"
		"    interface {\n"
		"      bInterfaceClass 0x0a\n"
		"      endpoint { bEndpointAddress 0x81; type bulk }\n"
		"      endpoint { bEndpointAddress 0x02; type bulk }\n"
		"    }\n"
		"  }\n"
		"  function acm {\n"
		"    echo off\n"
		"    serial-state off\n"
		"    respond \"\\x41\\102\\t\" \"<%%%b>\" \\\n"
		"            \"\\\"?\" \"quote\"\n"
		"  }\n"
		"}\n";
	struct fx *fx = *state;
	struct urb *in, *irq;

	start_text(fx, text);
	in = fx_submit(fx, fx_urb_new(0x81, 64));
	bulk_out(fx, 0x02, "xyz");		/* no echo, no match */
	assert_false(fx_is_done(fx, in));
	bulk_out(fx, 0x02, "AB\t");
	expect_ok(fx, in, 7);
	assert_memory_equal(in->buf, "<%9600>", 7);
	in = fx_submit(fx, fx_urb_new(0x81, 64));
	bulk_out(fx, 0x02, "say \"?");
	expect_ok(fx, in, 5);
	assert_memory_equal(in->buf, "quote", 5);
	/* serial-state off: DTR rising sends nothing */
	irq = fx_submit(fx, fx_urb_new(0x83, 16));
	fx_ctrl(fx, 0x21, 0x22, 1, 0, 0, NULL);
	assert_false(fx_is_done(fx, irq));
}

/* A big write with nobody reading: the OUT URB NAKs (stays pending)
 * once the queue is full, and completes as IN URBs drain it. */
static void test_acm_backpressure(void **state)
{
	struct fx *fx = *state;
	const size_t big = 3 * SER_TX_CAP;
	struct urb *out, *in;
	size_t got = 0, n_in = 0;

	start(fx, ACM);
	out = fx_urb_new(0x02, big);
	memset(out->buf, 'x', big);
	fx_submit(fx, out);
	assert_false(fx_is_done(fx, out));
	while (!fx_is_done(fx, out)) {
		in = fx_submit(fx, fx_urb_new(0x81, 4096));
		assert_true(fx_is_done(fx, in));
		got += in->actual_length;
		assert_true(++n_in < 1000);
	}
	expect_ok(fx, out, big);
	while (got < big) {
		in = fx_submit(fx, fx_urb_new(0x81, 4096));
		assert_true(fx_is_done(fx, in));
		got += in->actual_length;
	}
	assert_int_equal(got, big);
	/* all delivered: the next IN waits */
	in = fx_submit(fx, fx_urb_new(0x81, 4096));
	assert_false(fx_is_done(fx, in));
}

static void test_acm_detach_frees(void **state)
{
	struct fx *fx = *state;

	start(fx, ACM);
	fx_submit(fx, fx_urb_new(0x81, 64));
	fx_submit(fx, fx_urb_new(0x83, 16));
	fx_submit(fx, fx_urb_new(0x81, 64));
	gdev_detach(fx->dev, fx_free_urb);
	assert_int_equal(fx->freed, 3);
	gdev_free(fx->dev);
	fx->dev = NULL;
}

static void test_acm_reset_shuts(void **state)
{
	struct fx *fx = *state;
	struct urb *in, *u;

	start(fx, ACM);
	fx_ctrl(fx, 0x21, 0x20, 0, 0, 7, coding_38400_7e2);
	in = fx_submit(fx, fx_urb_new(0x81, 64));
	u = fx_ctrl(fx, 0x00, USB_REQ_SET_CONFIGURATION, 1, 0, 0, NULL);
	expect_ok(fx, u, 0);
	assert_true(fx_is_done(fx, in));
	assert_int_equal(in->status, -ESHUTDOWN);
	u = fx_ctrl(fx, 0xa1, 0x21, 0, 0, 7, NULL);
	expect_ok(fx, u, 7);
	assert_int_equal(u->buf[0], 0x80);	/* 9600 again */
}

/* ---- ftdi ---- */

static void test_ftdi_probe_requests(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, FTDI);
	u = fx_ctrl(fx, 0xc0, 0x0a, 0, 0, 1, NULL); /* GET_LATENCY_TIMER */
	expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 7);	/* the example's `latency 7` */
	expect_ok(fx, fx_ctrl(fx, 0x40, 0x09, 5, 0, 0, NULL), 0);
	u = fx_ctrl(fx, 0xc0, 0x0a, 0, 0, 1, NULL);
	expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 5);
	/* EEPROM word 1 is the vendor id, little-endian; word 0x0a (the
	 * FT232R CBUS configuration ftdi_sio reads) is 0 */
	u = fx_ctrl(fx, 0xc0, 0x90, 0, 1, 2, NULL);
	expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0], 0x03);
	assert_int_equal(u->buf[1], 0x04);
	u = fx_ctrl(fx, 0xc0, 0x90, 0, 0x0a, 2, NULL);
	expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0] | u->buf[1], 0);
	u = fx_ctrl(fx, 0xc0, 0x05, 0, 0, 2, NULL); /* GET_MODEM_STATUS */
	expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0], 0x31);
	assert_int_equal(u->buf[1], 0x60);
	expect_stall(fx, fx_ctrl(fx, 0xc0, 0x91, 0, 0, 2, NULL));
	expect_stall(fx, fx_ctrl(fx, 0x40, 0x0a, 0, 0, 0, NULL));
}

/* What ftdi_sio's open sends for 38400 8N1, and the line it makes. */
static void test_ftdi_open_and_baud(void **state)
{
	static const char want[] = "line?\nline 38400 8N1 dtr=1 rts=1\n";
	struct fx *fx = *state;
	struct urb *in;

	start(fx, FTDI);
	expect_ok(fx, fx_ctrl(fx, 0x40, 0x00, 0, 0, 0, NULL), 0); /* reset */
	expect_ok(fx, fx_ctrl(fx, 0x40, 0x04, 0x0008, 0, 0, NULL), 0);
	/* ftdi_232bm_baud_to_divisor(38400) = 78 + 1/8: 0xc04e */
	expect_ok(fx, fx_ctrl(fx, 0x40, 0x03, 0xc04e, 0, 0, NULL), 0);
	expect_ok(fx, fx_ctrl(fx, 0x40, 0x02, 0, 0, 0, NULL), 0);
	expect_ok(fx, fx_ctrl(fx, 0x40, 0x01, 0x0303, 0, 0, NULL), 0);

	/* the first IN after the reset is the status alone */
	in = fx_submit(fx, fx_urb_new(0x81, 512));
	expect_ok(fx, in, 2);
	assert_int_equal(in->buf[0], 0x31);
	assert_int_equal(in->buf[1], 0x60);
	in = fx_submit(fx, fx_urb_new(0x81, 512));
	assert_false(fx_is_done(fx, in));
	bulk_out(fx, 0x02, "line?\n");
	expect_ok(fx, in, 2 + strlen(want));
	assert_memory_equal(in->buf + 2, want, strlen(want));

	/* 115200 is 26 exactly on a BM chip: 115385 baud, reported so */
	fx_ctrl(fx, 0x40, 0x03, 26, 0, 0, NULL);
	in = fx_submit(fx, fx_urb_new(0x81, 512));
	bulk_out(fx, 0x02, "line?\n");
	assert_non_null(strstr((char *)in->buf + 2, "line 115385 8N1"));
	/* the special divisors 0 and 1: 3 and 2 Mbaud */
	fx_ctrl(fx, 0x40, 0x03, 0, 0, 0, NULL);
	in = fx_submit(fx, fx_urb_new(0x81, 512));
	bulk_out(fx, 0x02, "line?\n");
	assert_non_null(strstr((char *)in->buf + 2, "line 3000000 8N1"));
	fx_ctrl(fx, 0x40, 0x03, 1, 0, 0, NULL);
	fx_ctrl(fx, 0x40, 0x04, 0x1207, 0, 0, NULL);	/* 7E2 */
	in = fx_submit(fx, fx_urb_new(0x81, 512));
	bulk_out(fx, 0x02, "line?\n");
	assert_non_null(strstr((char *)in->buf + 2, "line 2000000 7E2"));
}

/* Every 64-byte packet starts with the two status bytes. */
static void test_ftdi_packets(void **state)
{
	struct fx *fx = *state;
	char data[131];
	struct urb *in, *out;
	int i;

	start(fx, FTDI);
	in = fx_submit(fx, fx_urb_new(0x81, 512));
	expect_ok(fx, in, 2);			/* status after attach */
	for (i = 0; i < 130; i++)
		data[i] = 'a' + i % 26;
	data[130] = 0;
	out = bulk_out(fx, 0x02, data);
	expect_ok(fx, out, 130);
	in = fx_submit(fx, fx_urb_new(0x81, 512));
	/* 62 + 62 + 6 data bytes in 64 + 64 + 8 */
	expect_ok(fx, in, 136);
	for (i = 0; i < 3; i++) {
		assert_int_equal(in->buf[64 * i], 0x31);
		assert_int_equal(in->buf[64 * i + 1], 0x60);
	}
	assert_memory_equal(in->buf + 2, data, 62);
	assert_memory_equal(in->buf + 66, data + 62, 62);
	assert_memory_equal(in->buf + 130, data + 124, 6);

	/* a 100-byte URB: one full packet, then what fits of the next */
	bulk_out(fx, 0x02, data);
	in = fx_submit(fx, fx_urb_new(0x81, 100));
	expect_ok(fx, in, 100);
	assert_memory_equal(in->buf + 66, data + 62, 34);
	in = fx_submit(fx, fx_urb_new(0x81, 512));
	expect_ok(fx, in, 2 + 34);
	assert_memory_equal(in->buf + 2, data + 96, 34);
}

/* ---- pl2303 ---- */

static void test_pl2303_startup(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, PL2303);
	/* pl2303_startup() for an HX */
	u = fx_ctrl(fx, 0xc0, 0x01, 0x8484, 0, 1, NULL);
	expect_ok(fx, u, 1);
	expect_ok(fx, fx_ctrl(fx, 0x40, 0x01, 0x0404, 0, 0, NULL), 0);
	expect_ok(fx, fx_ctrl(fx, 0xc0, 0x01, 0x8484, 0, 1, NULL), 1);
	expect_ok(fx, fx_ctrl(fx, 0xc0, 0x01, 0x8383, 0, 1, NULL), 1);
	expect_ok(fx, fx_ctrl(fx, 0x40, 0x01, 0x0404, 1, 0, NULL), 0);
	u = fx_ctrl(fx, 0xc0, 0x01, 0x8484, 0, 1, NULL);
	expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 1);
	expect_ok(fx, fx_ctrl(fx, 0x40, 0x01, 0, 1, 0, NULL), 0);
	expect_ok(fx, fx_ctrl(fx, 0x40, 0x01, 1, 0, 0, NULL), 0);
	expect_ok(fx, fx_ctrl(fx, 0x40, 0x01, 2, 0x44, 0, NULL), 0);
	/* pl2303_update_reg(): read R | 0x80, write R */
	u = fx_ctrl(fx, 0xc0, 0x01, 0x82, 0, 1, NULL);
	expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 0x44);
	expect_stall(fx, fx_ctrl(fx, 0xc0, 0x05, 0, 0, 1, NULL));
}

static void test_pl2303_line_and_state(void **state)
{
	static const uint8_t line_10000[7] = { 150, 8, 0, 0x80, 0, 0, 8 };
	static const char want[] = "line?\nline 10000 8N1 dtr=1 rts=1\n";
	struct fx *fx = *state;
	struct urb *irq, *in, *u;

	start(fx, PL2303);
	/* a divisor-coded rate: 12M * 32 / (150 * 4^4) = 10000 */
	expect_ok(fx, fx_ctrl(fx, 0x21, 0x20, 0, 0, 7, line_10000), 7);
	u = fx_ctrl(fx, 0xa1, 0x21, 0, 0, 7, NULL);
	expect_ok(fx, u, 7);
	assert_memory_equal(u->buf, line_10000, 7);

	irq = fx_submit(fx, fx_urb_new(0x81, 10));
	assert_false(fx_is_done(fx, irq));
	expect_ok(fx, fx_ctrl(fx, 0x21, 0x22, 3, 0, 0, NULL), 0);
	expect_ok(fx, irq, 10);
	assert_int_equal(irq->buf[8], 0x83);

	in = fx_submit(fx, fx_urb_new(0x83, 256));
	bulk_out(fx, 0x02, "line?\n");
	expect_ok(fx, in, strlen(want));
	assert_memory_equal(in->buf, want, strlen(want));
}

/* ---- options ---- */

static void check_error(const char *fn_block, int line, int col,
			const char *what)
{
	char text[2048];
	struct script_error err;
	struct gd_device *dev = NULL;
	int rc;

	snprintf(text, sizeof(text),
		 "device {\n"
		 "  idVendor 0x1209; idProduct 0x7e57\n"
		 "  config {\n"
		 "    interface {\n"
		 "      bInterfaceClass 2; bInterfaceSubClass 2\n"
		 "      endpoint { bEndpointAddress 0x83; type interrupt }\n"
		 "    }\n"
		 "    interface {\n"
		 "      bInterfaceClass 0x0a\n"
		 "      endpoint { bEndpointAddress 0x81; type bulk }\n"
		 "      endpoint { bEndpointAddress 0x02; type bulk }\n"
		 "    }\n"
		 "  }\n"
		 "%s"
		 "}\n", fn_block);
	rc = script_parse("t.gadget", text, strlen(text), &dev, &err);
	if (rc != -EINVAL) {
		gd_model_free(dev);
		fail_msg("expected \"%s\", got rc %d\n%s", what, rc, text);
	}
	if (err.line != line || err.col != col || !strstr(err.msg, what))
		fail_msg("expected %d:%d \"%s\", got \"%s\"", line, col, what,
			 err.msg);
}

static void test_options(void **state)
{
	(void)state;
	/* line 14 is the function line */
	check_error("  function acm { respond \"AT\" }\n", 14, 26,
		    "pairs of quoted strings");
	check_error("  function acm { respond \"AT\" \"OK\" \"X\" }\n", 14,
		    26, "request 2 has no reply");
	check_error("  function acm {\n    respond \"a\" \"%z\"\n  }\n", 15, 13,
		    "'%z' is not a template");
	check_error("  function acm {\n    respond AT OK\n  }\n", 15, 13,
		    "pairs of quoted strings");
	check_error("  function acm {\n    echo maybe\n  }\n", 15, 10,
		    "echo: expected on or off");
	check_error("  function acm {\n    serial-state 0x10000\n  }\n", 15,
		    18, "more than 65535");
	check_error("  function acm {\n    baud 9600\n  }\n", 15, 10,
		    "unknown option 'baud'");
	/* ftdi: bcdDevice 0x0100 is no modelled type */
	check_error("  function ftdi\n", 14, 12, "bcdDevice 0x0100");
	/* pl2303 wants the interrupt endpoint in the bulk pair's interface */
	check_error("  function pl2303\n", 14, 12, "interrupt IN");
}

static void test_options_ep_behaviour(void **state)
{
	static const char text[] =
		"device {\n"
		"  idVendor 0x0403; idProduct 0x7e57; bcdDevice 0x0600\n"
		"  config {\n"
		"    interface {\n"
		"      endpoint { bEndpointAddress 0x81; type bulk }\n"
		"      endpoint { bEndpointAddress 0x02; type bulk; loopback 0x81 }\n"
		"    }\n"
		"  }\n"
		"  function ftdi\n"
		"}\n";
	struct script_error err;
	struct gd_device *dev = NULL;

	(void)state;
	assert_int_equal(script_parse("t.gadget", text, strlen(text), &dev,
				      &err), -EINVAL);
	assert_non_null(strstr(err.msg, "endpoint 0x02 (line 6)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_acm_line_coding),
		T(test_acm_serial_state_on_dtr),
		T(test_acm_echo_and_respond),
		T(test_acm_escapes_echo_off),
		T(test_acm_backpressure),
		T(test_acm_detach_frees),
		T(test_acm_reset_shuts),
		T(test_ftdi_probe_requests),
		T(test_ftdi_open_and_baud),
		T(test_ftdi_packets),
		T(test_pl2303_startup),
		T(test_pl2303_line_and_state),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_options_ep_behaviour),
#undef T
	};

	log_init_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
