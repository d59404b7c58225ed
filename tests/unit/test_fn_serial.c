// SPDX-License-Identifier: GPL-2.0
/*
 * test_fn_serial.c - the serial device functions (gadgets/fn/acm.c, ftdi.c,
 * pl2303.c, cp210x.c, ch341.c, mct_u232.c, serial_core.c) in process: the shipped example scripts,
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

/* ---- helpers (the fake host is fixture.c) ---- */

static struct urb *bulk_out(struct fx *fx, uint8_t ep, const char *s)
{
	struct urb *u = fx_urb_new(ep, strlen(s));

	memcpy(u->buf, s, strlen(s));
	return fx_submit(fx, u);
}

static void start(struct fx *fx, const char *path)
{
	fx_start_file(fx, path, NULL, NULL);
}

/* As start(), from a script text of the options test's shape. */
static void start_text(struct fx *fx, const char *text)
{
	fx_start_text(fx, "t.gadget", text);
}

static int setup(void **state)
{
	return fx_setup_flags(state, FX_DISCONNECT_FAILS);
}

#define ACM	"gadgets/examples/acm.gadget"
#define FTDI	"gadgets/examples/ftdi.gadget"
#define PL2303	"gadgets/examples/pl2303.gadget"
#define CP210X	"gadgets/examples/cp210x.gadget"
#define CH341	"gadgets/examples/ch341.gadget"
#define MCT	"gadgets/examples/mct_u232.gadget"

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
	fx_expect_ok(fx, u, 7);
	assert_memory_equal(u->buf, def, 7);
	u = fx_ctrl(fx, 0x21, 0x20, 0, 0, 7, coding_38400_7e2);
	fx_expect_ok(fx, u, 7);
	u = fx_ctrl(fx, 0xa1, 0x21, 0, 0, 7, NULL);
	fx_expect_ok(fx, u, 7);
	assert_memory_equal(u->buf, coding_38400_7e2, 7);
	/* a short read is cut, not overrun */
	u = fx_ctrl(fx, 0xa1, 0x21, 0, 0, 4, NULL);
	fx_expect_ok(fx, u, 4);
	/* wrong length, wrong interface, unknown request */
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, 0x20, 0, 0, 6, coding_38400_7e2));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, 0x21, 0, 1, 7, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, 0x02, 0, 0, 0, NULL));
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
	fx_expect_ok(fx, u, 0);
	assert_false(fx_is_done(fx, irq));
	u = fx_ctrl(fx, 0x21, 0x22, 0x0003, 0, 0, NULL);	/* DTR rises */
	fx_expect_ok(fx, u, 0);
	fx_expect_ok(fx, irq, 10);
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
	fx_expect_ok(fx, u, 8);
	assert_memory_equal(u->buf, note, 8);
	u = fx_submit(fx, fx_urb_new(0x83, 8));
	fx_expect_ok(fx, u, 2);
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
	fx_expect_ok(fx, out, 5);
	fx_expect_ok(fx, in, 5);
	assert_memory_equal(in->buf, "hello", 5);

	fx_ctrl(fx, 0x21, 0x20, 0, 0, 7, coding_38400_7e2);
	/* the request split over two URBs still matches */
	bulk_out(fx, 0x02, "AT+I");
	bulk_out(fx, 0x02, "PR?\r");
	in = fx_submit(fx, fx_urb_new(0x81, 64));
	fx_expect_ok(fx, in, strlen(want));
	assert_memory_equal(in->buf, want, strlen(want));

	/* "AT\r" answered, after its echo */
	bulk_out(fx, 0x02, "AT\r");
	in = fx_submit(fx, fx_urb_new(0x81, 64));
	fx_expect_ok(fx, in, 9);
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
	fx_expect_ok(fx, in, 7);
	assert_memory_equal(in->buf, "<%9600>", 7);
	in = fx_submit(fx, fx_urb_new(0x81, 64));
	bulk_out(fx, 0x02, "say \"?");
	fx_expect_ok(fx, in, 5);
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
	fx_expect_ok(fx, out, big);
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
	fx_set_config(fx, 1);
	assert_true(fx_is_done(fx, in));
	assert_int_equal(in->status, -ESHUTDOWN);
	u = fx_ctrl(fx, 0xa1, 0x21, 0, 0, 7, NULL);
	fx_expect_ok(fx, u, 7);
	assert_int_equal(u->buf[0], 0x80);	/* 9600 again */
}

/* ---- ftdi ---- */

static void test_ftdi_probe_requests(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, FTDI);
	u = fx_ctrl(fx, 0xc0, 0x0a, 0, 0, 1, NULL); /* GET_LATENCY_TIMER */
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 7);	/* the example's `latency 7` */
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x09, 5, 0, 0, NULL), 0);
	u = fx_ctrl(fx, 0xc0, 0x0a, 0, 0, 1, NULL);
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 5);
	/* EEPROM word 1 is the vendor id, little-endian; word 0x0a (the
	 * FT232R CBUS configuration ftdi_sio reads) is 0 */
	u = fx_ctrl(fx, 0xc0, 0x90, 0, 1, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0], 0x03);
	assert_int_equal(u->buf[1], 0x04);
	u = fx_ctrl(fx, 0xc0, 0x90, 0, 0x0a, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0] | u->buf[1], 0);
	u = fx_ctrl(fx, 0xc0, 0x05, 0, 0, 2, NULL); /* GET_MODEM_STATUS */
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0], 0x31);
	assert_int_equal(u->buf[1], 0x60);
	fx_expect_stall(fx, fx_ctrl(fx, 0xc0, 0x91, 0, 0, 2, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0x40, 0x0a, 0, 0, 0, NULL));
}

/* What ftdi_sio's open sends for 38400 8N1, and the line it makes. */
static void test_ftdi_open_and_baud(void **state)
{
	static const char want[] = "line?\nline 38400 8N1 dtr=1 rts=1\n";
	struct fx *fx = *state;
	struct urb *in;

	start(fx, FTDI);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x00, 0, 0, 0, NULL), 0); /* reset */
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x04, 0x0008, 0, 0, NULL), 0);
	/* ftdi_232bm_baud_to_divisor(38400) = 78 + 1/8: 0xc04e */
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x03, 0xc04e, 0, 0, NULL), 0);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x02, 0, 0, 0, NULL), 0);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x01, 0x0303, 0, 0, NULL), 0);

	/* the first IN after the reset is the status alone */
	in = fx_submit(fx, fx_urb_new(0x81, 512));
	fx_expect_ok(fx, in, 2);
	assert_int_equal(in->buf[0], 0x31);
	assert_int_equal(in->buf[1], 0x60);
	in = fx_submit(fx, fx_urb_new(0x81, 512));
	assert_false(fx_is_done(fx, in));
	bulk_out(fx, 0x02, "line?\n");
	fx_expect_ok(fx, in, 2 + strlen(want));
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
	fx_expect_ok(fx, in, 2);		/* status after attach */
	for (i = 0; i < 130; i++)
		data[i] = 'a' + i % 26;
	data[130] = 0;
	out = bulk_out(fx, 0x02, data);
	fx_expect_ok(fx, out, 130);
	in = fx_submit(fx, fx_urb_new(0x81, 512));
	/* 62 + 62 + 6 data bytes in 64 + 64 + 8 */
	fx_expect_ok(fx, in, 136);
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
	fx_expect_ok(fx, in, 100);
	assert_memory_equal(in->buf + 66, data + 62, 34);
	in = fx_submit(fx, fx_urb_new(0x81, 512));
	fx_expect_ok(fx, in, 2 + 34);
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
	fx_expect_ok(fx, u, 1);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x01, 0x0404, 0, 0, NULL), 0);
	fx_expect_ok(fx, fx_ctrl(fx, 0xc0, 0x01, 0x8484, 0, 1, NULL), 1);
	fx_expect_ok(fx, fx_ctrl(fx, 0xc0, 0x01, 0x8383, 0, 1, NULL), 1);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x01, 0x0404, 1, 0, NULL), 0);
	u = fx_ctrl(fx, 0xc0, 0x01, 0x8484, 0, 1, NULL);
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 1);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x01, 0, 1, 0, NULL), 0);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x01, 1, 0, 0, NULL), 0);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x01, 2, 0x44, 0, NULL), 0);
	/* pl2303_update_reg(): read R | 0x80, write R */
	u = fx_ctrl(fx, 0xc0, 0x01, 0x82, 0, 1, NULL);
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 0x44);
	fx_expect_stall(fx, fx_ctrl(fx, 0xc0, 0x05, 0, 0, 1, NULL));
}

static void test_pl2303_line_and_state(void **state)
{
	static const uint8_t line_10000[7] = { 150, 8, 0, 0x80, 0, 0, 8 };
	static const char want[] = "line?\nline 10000 8N1 dtr=1 rts=1\n";
	struct fx *fx = *state;
	struct urb *irq, *in, *u;

	start(fx, PL2303);
	/* a divisor-coded rate: 12M * 32 / (150 * 4^4) = 10000 */
	fx_expect_ok(fx, fx_ctrl(fx, 0x21, 0x20, 0, 0, 7, line_10000), 7);
	u = fx_ctrl(fx, 0xa1, 0x21, 0, 0, 7, NULL);
	fx_expect_ok(fx, u, 7);
	assert_memory_equal(u->buf, line_10000, 7);

	irq = fx_submit(fx, fx_urb_new(0x81, 10));
	assert_false(fx_is_done(fx, irq));
	fx_expect_ok(fx, fx_ctrl(fx, 0x21, 0x22, 3, 0, 0, NULL), 0);
	fx_expect_ok(fx, irq, 10);
	assert_int_equal(irq->buf[8], 0x83);

	in = fx_submit(fx, fx_urb_new(0x83, 256));
	bulk_out(fx, 0x02, "line?\n");
	fx_expect_ok(fx, in, strlen(want));
	assert_memory_equal(in->buf, want, strlen(want));
}

/* ---- cp210x ---- */

/* An IN URB of len bytes after OUT text s: what came back. */
static struct urb *round_trip(struct fx *fx, uint8_t in_ep, uint8_t out_ep,
			      const char *s, size_t len)
{
	struct urb *in = fx_submit(fx, fx_urb_new(in_ep, len));

	fx_expect_ok(fx, bulk_out(fx, out_ep, s), strlen(s));
	assert_true(fx_is_done(fx, in));
	return in;
}

static void expect_reply(struct fx *fx, uint8_t in_ep, uint8_t out_ep,
			 const char *ask, const char *want)
{
	char buf[256];
	struct urb *in = round_trip(fx, in_ep, out_ep, ask, sizeof(buf));

	snprintf(buf, sizeof(buf), "%s%s", ask, want);
	assert_int_equal(in->actual_length, strlen(buf));
	assert_memory_equal(in->buf, buf, strlen(buf));
}

/* cp210x's probe and open for 38400 7E2, then tiocmset and break. */
static void test_cp210x_probe_and_line(void **state)
{
	/* ulControlHandshake 0x01 (DTR on), ulFlowReplace 0x40 (RTS on) */
	static const uint8_t flow[16] = { 0x01, 0, 0, 0, 0x40 };
	static const uint8_t baud_38400[4] = { 0x00, 0x96, 0, 0 };
	struct fx *fx = *state;
	struct urb *u;

	start(fx, CP210X);
	/* GET_PARTNUM: 1 byte, and both bytes of the counterfeit test */
	u = fx_ctrl(fx, 0xc0, 0xff, 0x370b, 0, 1, NULL);
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 2);
	u = fx_ctrl(fx, 0xc0, 0xff, 0x370b, 0, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[1], 0);
	fx_expect_stall(fx, fx_ctrl(fx, 0xc0, 0xff, 0x000e, 0, 3, NULL));

	fx_expect_ok(fx, fx_ctrl(fx, 0x41, 0x00, 1, 0, 0, NULL), 0);
	/* not the interface it serves */
	fx_expect_stall(fx, fx_ctrl(fx, 0x41, 0x00, 1, 1, 0, NULL));
	fx_expect_ok(fx, fx_ctrl(fx, 0x41, 0x1e, 0, 0, 4, baud_38400), 4);
	u = fx_ctrl(fx, 0xc1, 0x1d, 0, 0, 4, NULL);
	fx_expect_ok(fx, u, 4);
	assert_memory_equal(u->buf, baud_38400, 4);
	/* a 3-byte SET_BAUDRATE is no request of the chip's */
	fx_expect_stall(fx, fx_ctrl(fx, 0x41, 0x1e, 0, 0, 3, baud_38400));
	fx_expect_ok(fx, fx_ctrl(fx, 0x41, 0x03, 0x0722, 0, 0, NULL), 0);
	fx_expect_stall(fx, fx_ctrl(fx, 0x41, 0x03, 0x0905, 0, 0, NULL));
	u = fx_ctrl(fx, 0xc1, 0x04, 0, 0, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0] | u->buf[1] << 8, 0x0722);
	u = fx_ctrl(fx, 0xc1, 0x14, 0, 0, 16, NULL);	/* GET_FLOW */
	fx_expect_ok(fx, u, 16);
	fx_expect_ok(fx, fx_ctrl(fx, 0x41, 0x13, 0, 0, 16, flow), 16);
	u = fx_ctrl(fx, 0xc1, 0x14, 0, 0, 16, NULL);
	fx_expect_ok(fx, u, 16);
	assert_memory_equal(u->buf, flow, 16);
	expect_reply(fx, 0x81, 0x01, "line?\n", "line 38400 7E2 dtr=1 rts=1\n");

	/* tiocmset: DTR off, RTS untouched; GET_MDMSTS shows both */
	fx_expect_ok(fx, fx_ctrl(fx, 0x41, 0x07, 0x0100, 0, 0, NULL), 0);
	u = fx_ctrl(fx, 0xc1, 0x08, 0, 0, 1, NULL);
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 0x30 | 0x02);
	fx_expect_ok(fx, fx_ctrl(fx, 0x41, 0x05, 1, 0, 0, NULL), 0);
	fx_expect_ok(fx, fx_ctrl(fx, 0x41, 0x05, 0, 0, 0, NULL), 0);
	expect_reply(fx, 0x81, 0x01, "breaks?\n", "breaks=1\n");
	expect_reply(fx, 0x81, 0x01, "line?\n", "line 38400 7E2 dtr=0 rts=1\n");
	/* the old divisor request: 3686400 / 384 = 9600 */
	fx_expect_ok(fx, fx_ctrl(fx, 0x41, 0x01, 384, 0, 0, NULL), 0);
	expect_reply(fx, 0x81, 0x01, "line?\n", "line 9600 7E2 dtr=0 rts=1\n");
	u = fx_ctrl(fx, 0xc1, 0x10, 0, 0, 19, NULL);	/* GET_COMM_STATUS */
	fx_expect_ok(fx, u, 19);
}

/* Event-insertion mode: 0xec goes to the host as 0xec 0x00, whole. */
static void test_cp210x_events(void **state)
{
	struct fx *fx = *state;
	struct urb *in;

	start(fx, CP210X);
	fx_expect_ok(fx, fx_ctrl(fx, 0x41, 0x00, 1, 0, 0, NULL), 0);
	fx_expect_ok(fx, fx_ctrl(fx, 0x41, 0x15, 0xec, 0, 0, NULL), 0);
	in = round_trip(fx, 0x81, 0x01, "a\xec" "b", 64);
	fx_expect_ok(fx, in, 4);
	assert_memory_equal(in->buf, "a\xec\x00" "b", 4);
	/* a 3-byte URB holds one escaped byte, not one and a half */
	in = round_trip(fx, 0x81, 0x01, "\xec\xec", 3);
	fx_expect_ok(fx, in, 2);
	assert_memory_equal(in->buf, "\xec\x00", 2);
	in = fx_submit(fx, fx_urb_new(0x81, 64));
	fx_expect_ok(fx, in, 2);
	/* disabling the UART ends the mode */
	fx_expect_ok(fx, fx_ctrl(fx, 0x41, 0x00, 0, 0, 0, NULL), 0);
	in = round_trip(fx, 0x81, 0x01, "\xec", 64);
	fx_expect_ok(fx, in, 1);
	/* PURGE of the receive side drops what waits for the host */
	bulk_out(fx, 0x01, "xyz");
	fx_expect_ok(fx, fx_ctrl(fx, 0x41, 0x12, 0x000f, 0, 0, NULL), 0);
	in = fx_submit(fx, fx_urb_new(0x81, 64));
	assert_false(fx_is_done(fx, in));
}

/* ---- ch341 ---- */

/* ch341's probe and open (the values its 6.1 driver sends) for 9600 8N1,
 * then 500000 7E2 and a break. */
static void test_ch341_probe_and_line(void **state)
{
	struct fx *fx = *state;
	struct urb *u, *irq;

	start(fx, CH341);
	u = fx_ctrl(fx, 0xc0, 0x5f, 0, 0, 2, NULL);	/* READ_VERSION */
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0], 0x31);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0xa1, 0, 0, 0, NULL), 0);
	/* ps 2, fact 0, div 256 - 0xb2 = 78: 48M / (64 * 78) = 9615 */
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x9a, 0x1312, 0xb282, 0, NULL), 0);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x9a, 0x2518, 0x00c3, 0, NULL), 0);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0xa4, 0xffff, 0, 0, NULL), 0);
	/* the break register reads fine: no simulated break */
	u = fx_ctrl(fx, 0xc0, 0x95, 0x0005, 0, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0], 0x01);
	/* open: the interrupt URB waits, the lines read inverted */
	irq = fx_submit(fx, fx_urb_new(0x81, 8));
	u = fx_ctrl(fx, 0xc0, 0x95, 0x0706, 0, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0], 0xfc);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0xa4, 0xff9f, 0, 0, NULL), 0);
	expect_reply(fx, 0x82, 0x02, "line?\n", "line 9615 8N1 dtr=1 rts=1\n");
	assert_false(fx_is_done(fx, irq));

	/* 500000 (ps 3, fact 0, div 12) 7E2; RTS dropped */
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x9a, 0x1312, 0xf483, 0, NULL), 0);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x9a, 0x2518, 0x00de, 0, NULL), 0);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0xa4, 0xffdf, 0, 0, NULL), 0);
	expect_reply(fx, 0x82, 0x02, "line?\n",
		     "line 500000 7E2 dtr=1 rts=0\n");
	/* break on as ch341_break_ctl() does it: read 0x1805, clear the bits */
	u = fx_ctrl(fx, 0xc0, 0x95, 0x1805, 0, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[1], 0xde);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x9a, 0x1805, 0x9e00, 0, NULL), 0);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x9a, 0x1805, 0xde01, 0, NULL), 0);
	expect_reply(fx, 0x82, 0x02, "breaks?\n", "breaks=1\n");
	fx_expect_stall(fx, fx_ctrl(fx, 0xc0, 0x9a, 0, 0, 2, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0x40, 0x5e, 0, 0, 0, NULL));
	/* a configuration change ends the waiting interrupt URB */
	fx_set_config(fx, 1);
	assert_true(fx_is_done(fx, irq));
	assert_int_equal(irq->status, -ESHUTDOWN);
	expect_reply(fx, 0x82, 0x02, "line?\n", "line 9600 8N1 dtr=0 rts=0\n");
}

/* A chip before version 0x30 keeps 8N1: ch341 never writes its LCR. */
static void test_ch341_old_version(void **state)
{
	static const char text[] =
		"device {\n"
		"  idVendor 0x1a86; idProduct 0x7523\n"
		"  config {\n"
		"    interface {\n"
		"      endpoint { bEndpointAddress 0x81; type interrupt }\n"
		"      endpoint { bEndpointAddress 0x82; type bulk }\n"
		"      endpoint { bEndpointAddress 0x02; type bulk }\n"
		"    }\n"
		"  }\n"
		"  function ch341 {\n"
		"    version 0x27\n"
		"    respond \"?\" \"%f\"\n"
		"  }\n"
		"}\n";
	struct fx *fx = *state;

	start_text(fx, text);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 0x9a, 0x2518, 0x00de, 0, NULL), 0);
	expect_reply(fx, 0x82, 0x02, "?", "8N1");
}

/* ---- mct_u232 ---- */

/* mct_u232's open and set_termios for 57600 7E2; data IN on interrupt. */
static void test_mct_u232_line(void **state)
{
	static const uint8_t div_57600[4] = { 2, 0, 0, 0 };
	static const uint8_t div_0[4] = { 0 };
	static const uint8_t mcr = 0x08 | 0x01 | 0x02, lcr_7e2 = 0x1e;
	static const uint8_t zero = 0, lcr_break = 0x1e | 0x40;
	struct fx *fx = *state;
	struct urb *u, *status;

	start(fx, MCT);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 10, 0, 0, 1, &mcr), 1);
	u = fx_ctrl(fx, 0xc0, 2, 0, 0, 1, NULL);	/* GET_MODEM_STAT */
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 0x30);
	status = fx_submit(fx, fx_urb_new(0x81, 2));
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 5, 0, 0, 4, div_57600), 4);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 11, 0, 0, 1, &zero), 1);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 12, 0, 0, 1, &zero), 1);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 7, 0, 0, 1, &lcr_7e2), 1);
	u = fx_ctrl(fx, 0xc0, 6, 0, 0, 1, NULL);	/* GET_LINE_CTRL */
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], lcr_7e2);
	expect_reply(fx, 0x83, 0x02, "line?\n", "line 57600 7E2 dtr=1 rts=1\n");
	assert_false(fx_is_done(fx, status));
	/* break_ctl(): the LCR with 0x40, then without */
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 7, 0, 0, 1, &lcr_break), 1);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 7, 0, 0, 1, &lcr_7e2), 1);
	expect_reply(fx, 0x83, 0x02, "breaks?\n", "breaks=1\n");
	/* divisor 0, a short SET_BAUD_RATE, an unknown request */
	fx_expect_stall(fx, fx_ctrl(fx, 0x40, 5, 0, 0, 4, div_0));
	fx_expect_stall(fx, fx_ctrl(fx, 0x40, 5, 0, 0, 2, div_57600));
	fx_expect_stall(fx, fx_ctrl(fx, 0x40, 3, 0, 0, 1, &zero));
}

/* The Sitecom product id takes rate codes, as mct_u232 sends them. */
static void test_mct_u232_sitecom_codes(void **state)
{
	static const char text[] =
		"device {\n"
		"  idVendor 0x0711; idProduct 0x0230\n"
		"  config {\n"
		"    interface {\n"
		"      endpoint { bEndpointAddress 0x81; type interrupt; wMaxPacketSize 2 }\n"
		"      endpoint { bEndpointAddress 0x02; type bulk }\n"
		"      endpoint { bEndpointAddress 0x83; type interrupt }\n"
		"    }\n"
		"  }\n"
		"  function mct_u232 { respond \"?\" \"%b\" }\n"
		"}\n";
	static const uint8_t code_57600[4] = { 0x0b }, code_5[4] = { 0x05 };
	struct fx *fx = *state;

	start_text(fx, text);
	fx_expect_ok(fx, fx_ctrl(fx, 0x40, 5, 0, 0, 4, code_57600), 4);
	expect_reply(fx, 0x83, 0x02, "?", "57600");
	fx_expect_stall(fx, fx_ctrl(fx, 0x40, 5, 0, 0, 4, code_5));
}

/* ---- options ---- */

static void check_error(const char *fn_block, int line, int col,
			const char *what)
{
	char text[2048];

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
	fx_expect_script_error("t.gadget", text, line, col, what);
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
	check_error("  function cp210x {\n    part 4\n  }\n", 15, 10,
		    "part: 1 CP2101");
	check_error("  function cp210x {\n    modem-status 0x01\n  }\n", 15,
		    18, "only the line bits 0x10");
	check_error("  function ch341 {\n    modem-status 0x10\n  }\n", 15,
		    18, "only the line bits 0x01");
	check_error("  function ch341\n", 14, 12, "interrupt IN");
	check_error("  function mct_u232\n", 14, 12, "two interrupt IN");
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
	(void)state;
	fx_expect_script_error("t.gadget", text, 0, 0,
			       "endpoint 0x02 (line 6)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, fx_teardown)
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
		T(test_cp210x_probe_and_line),
		T(test_cp210x_events),
		T(test_ch341_probe_and_line),
		T(test_ch341_old_version),
		T(test_mct_u232_line),
		T(test_mct_u232_sitecom_codes),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_options_ep_behaviour),
#undef T
	};

	log_init_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
