// SPDX-License-Identifier: GPL-2.0
/*
 * test_fn_usbtmc.c - the usbtmc device function (gadgets/fn/usbtmc.c) in
 * process: the shipped example and small scripts, driven with the class
 * requests and bulk messages the Linux usbtmc driver sends, answers checked
 * byte for byte; and the option errors at their file:line:col.
 *
 * Runs from the repository root (it reads gadgets/examples/).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/usb/ch9.h>

#include "device.h"
#include "fixture.h"
#include "log.h"
#include "model.h"

#define USBTMC		"gadgets/examples/usbtmc.gadget"
#define IDENTITY	"usbrig,Virtual Meter 1,TMC0001,1.0.0"	/* the example's */

#define EP_OUT		0x01
#define EP_IN		0x82
#define EP_INT		0x83

/* USBTMC 1.0 Table 2 (MsgID), Table 15 (bRequest) */
#define DEV_DEP_MSG_OUT		1
#define REQUEST_DEV_DEP_MSG_IN	2
#define DEV_DEP_MSG_IN		2
#define INITIATE_CLEAR		5
#define CHECK_CLEAR_STATUS	6
#define GET_CAPABILITIES	7
#define INDICATOR_PULSE		64
#define HDR			12

/* *IDN? as usbtmc sends it: a 12-byte header, the 6 bytes, 2 to align */
static const uint8_t idn_msg[20] = {
	0x01, 0x05, 0xfa, 0x00,		/* DEV_DEP_MSG_OUT, bTag 5, ~bTag */
	0x06, 0x00, 0x00, 0x00,		/* TransferSize 6 */
	0x01, 0x00, 0x00, 0x00,		/* EOM */
	'*', 'I', 'D', 'N', '?', '\n',
	0x00, 0x00,			/* alignment */
};

/* the host asks for up to 4096 bytes of it */
static const uint8_t req_msg[12] = {
	0x02, 0x06, 0xf9, 0x00,		/* REQUEST_DEV_DEP_MSG_IN, bTag 6 */
	0x00, 0x10, 0x00, 0x00,		/* TransferSize 4096 */
	0x00, 0x00, 0x00, 0x00,		/* no TermChar */
};

/* and gets the example's identity */
static const uint8_t idn_reply_hdr[12] = {
	0x02, 0x06, 0xf9, 0x00,		/* DEV_DEP_MSG_IN, the request's bTag */
	0x25, 0x00, 0x00, 0x00,		/* TransferSize 37: identity + "\n" */
	0x01, 0x00, 0x00, 0x00,		/* EOM */
};

/* An instrument whose interface has the class line cls (line 5), bulk OUT
 * 0x01 and IN 0x82, then the function block fn (its line is 10). */
static const char tmc_fmt[] =
	"device {\n"
	"  idVendor 0x1209; idProduct 0x0071\n"
	"  config {\n"
	"    interface {\n"
	"      %s\n"
	"      endpoint { bEndpointAddress 0x01; type bulk }\n"
	"      endpoint { bEndpointAddress 0x82; type bulk }\n"
	"    }\n"
	"  }\n"
	"%s"
	"}\n";

#define TMC	"bInterfaceClass 0xfe; bInterfaceSubClass 3"

/* tmc_fmt with cls and fn into text (size bytes). */
static const char *tmc_text(char *text, size_t size, const char *cls,
			    const char *fn)
{
	assert_true(snprintf(text, size, tmc_fmt, cls, fn) < (int)size);
	return text;
}

/* The example when cls is NULL, else tmc_fmt with cls and fn; attached
 * and configured. */
static void start(struct fx *fx, const char *cls, const char *fn)
{
	char text[4096];

	if (!cls)
		fx_start_file(fx, USBTMC, NULL, NULL);
	else
		fx_start_text(fx, "t.gadget",
			      tmc_text(text, sizeof(text), cls, fn));
}

/* A bulk header (USBTMC 3.2 Table 1) into b. */
static void put_hdr(uint8_t *b, uint8_t msgid, uint8_t tag, uint32_t size,
		    uint8_t attr)
{
	memset(b, 0, HDR);
	b[0] = msgid;
	b[1] = tag;
	b[2] = ~tag;
	b[4] = size;
	b[5] = size >> 8;
	b[6] = size >> 16;
	b[7] = size >> 24;
	b[8] = attr;
}

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* A DEV_DEP_MSG_OUT of n bytes of cmd into b, aligned; its length. */
static size_t msg_out(uint8_t *b, uint8_t tag, const char *cmd, size_t n,
		      bool eom)
{
	put_hdr(b, DEV_DEP_MSG_OUT, tag, n, eom);
	memcpy(b + HDR, cmd, n);
	memset(b + HDR + n, 0, pad4(HDR + n) - HDR - n);
	return pad4(HDR + n);
}

static struct urb *send(struct fx *fx, const uint8_t *b, size_t len)
{
	struct urb *u = fx_urb_new(EP_OUT, len);

	memcpy(u->buf, b, len);
	return fx_submit(fx, u);
}

static void send_ok(struct fx *fx, const uint8_t *b, size_t len)
{
	fx_expect_ok(fx, send(fx, b, len), len);
}

/* A whole command (EOM) in one transfer. */
static void command(struct fx *fx, uint8_t tag, const char *cmd)
{
	uint8_t b[HDR + 256];

	assert_true(strlen(cmd) <= 256);
	send_ok(fx, b, msg_out(b, tag, cmd, strlen(cmd), true));
}

/* REQUEST_DEV_DEP_MSG_IN for up to max bytes. */
static void ask(struct fx *fx, uint8_t tag, uint32_t max)
{
	uint8_t b[HDR];

	put_hdr(b, REQUEST_DEV_DEP_MSG_IN, tag, max, 0);
	send_ok(fx, b, HDR);
}

/* A bulk IN URB of len bytes, filled with 0xee so that the alignment the
 * device writes shows. */
static struct urb *in_urb(struct fx *fx, uint32_t len)
{
	struct urb *u = fx_urb_new(EP_IN, len);

	memset(u->buf, 0xee, len);
	return fx_submit(fx, u);
}

/* b (len bytes) is one DEV_DEP_MSG_IN for tag carrying text, aligned. */
static void expect_msg_in(const uint8_t *b, size_t len, uint8_t tag,
			  const char *text, bool eom)
{
	size_t n = strlen(text);
	uint8_t h[HDR];

	assert_int_equal(len, pad4(HDR + n));
	put_hdr(h, DEV_DEP_MSG_IN, tag, n, eom);
	assert_memory_equal(b, h, HDR);
	assert_memory_equal(b + HDR, text, n);
	for (; HDR + n < len; n++)
		assert_int_equal(b[HDR + n], 0);
}

/* Ask for up to 4096 bytes with tag; one IN URB brings reply. */
static void expect_reply(struct fx *fx, uint8_t tag, const char *reply)
{
	struct urb *in;

	ask(fx, tag, 4096);
	in = in_urb(fx, 4096);
	assert_true(fx_is_done(fx, in));
	assert_int_equal(in->status, 0);
	expect_msg_in(in->buf, in->actual_length, tag, reply, true);
}

/* Ask with tag; the IN URB waits (the instrument has nothing to say). */
static struct urb *expect_no_reply(struct fx *fx, uint8_t tag)
{
	struct urb *in;

	ask(fx, tag, 4096);
	in = in_urb(fx, 4096);
	fx_run_for(fx, 20);
	assert_false(fx_is_done(fx, in));
	return in;
}

static void unlink_urb(struct fx *fx, struct urb *u)
{
	assert_ptr_equal(gdev_unlink(fx->dev, u->seqnum), u);
	fx_urb_free(u);
}

static void expect_ep_halted(struct fx *fx, uint8_t addr, bool halted)
{
	struct urb *u;

	u = fx_ctrl(fx, 0x82, USB_REQ_GET_STATUS, 0, addr, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0] | u->buf[1] << 8, halted);
}

/* ---- ep0 ---- */

static void test_capabilities_and_requests(void **state)
{
	static const uint8_t caps[24] = {
		0x01, 0x00,		/* USBTMC_STATUS_SUCCESS, reserved */
		0x00, 0x01,		/* bcdUSBTMC 1.00 */
		0x04,			/* interface: INDICATOR_PULSE */
		0x00,			/* device: no TermChar */
	};
	struct fx *fx = *state;
	struct urb *u;

	start(fx, NULL, NULL);
	u = fx_ctrl(fx, 0xa1, GET_CAPABILITIES, 0, 0, 24, NULL);
	fx_expect_ok(fx, u, 24);
	assert_memory_equal(u->buf, caps, 24);
	/* wLength is 0x18, no other (4.2.1.8) */
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, GET_CAPABILITIES, 0, 0, 0x10,
				    NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, GET_CAPABILITIES, 1, 0, 24,
				    NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, GET_CAPABILITIES, 0, 0, 0,
				    NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, GET_CAPABILITIES, 0, 1, 24,
				    NULL));

	u = fx_ctrl(fx, 0xa1, INDICATOR_PULSE, 0, 0, 1, NULL);
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 0x01);
	u = fx_ctrl(fx, 0xa1, CHECK_CLEAR_STATUS, 0, 0, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0], 0x01);
	assert_int_equal(u->buf[1], 0x00);
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, CHECK_CLEAR_STATUS, 0, 0, 1,
				    NULL));
	/* INITIATE_ABORT_BULK_OUT (to the endpoint), USB488's
	 * READ_STATUS_BYTE, an unknown request */
	fx_expect_stall(fx, fx_ctrl(fx, 0xa2, 1, 5, EP_OUT, 2, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, 128, 2, 0, 3, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, 99, 0, 0, 1, NULL));
}

/* ---- messages ---- */

static void test_idn(void **state)
{
	struct fx *fx = *state;
	struct urb *in, *irq;
	uint8_t b[HDR + 8];

	/* the test's encoder agrees with the golden message */
	assert_int_equal(msg_out(b, 5, "*IDN?\n", 6, true), sizeof(idn_msg));
	assert_memory_equal(b, idn_msg, sizeof(idn_msg));

	start(fx, NULL, NULL);
	irq = fx_submit(fx, fx_urb_new(EP_INT, 2));
	in = in_urb(fx, 4096);
	send_ok(fx, idn_msg, sizeof(idn_msg));
	assert_false(fx_is_done(fx, in));	/* not asked yet */
	send_ok(fx, req_msg, sizeof(req_msg));
	/* 12 + 37 bytes, aligned to 52 */
	fx_expect_ok(fx, in, 52);
	assert_memory_equal(in->buf, idn_reply_hdr, HDR);
	assert_memory_equal(in->buf + HDR, IDENTITY "\n", 37);
	assert_memory_equal(in->buf + 49, "\0\0\0", 3);
	/* once read, the reply is gone; the next one waits for the host to
	 * ask again */
	in = in_urb(fx, 4096);
	command(fx, 8, "*IDN?");
	fx_run_for(fx, 20);
	assert_false(fx_is_done(fx, in));
	ask(fx, 9, 4096);
	fx_expect_ok(fx, in, 52);
	expect_msg_in(in->buf, 52, 9, IDENTITY "\n", true);
	/* no SRQ on the interrupt endpoint */
	assert_false(fx_is_done(fx, irq));
}

/* Messages and commands in pieces: a header split over two transfers, a
 * command over two messages, two messages in one transfer. */
static void test_reassembly(void **state)
{
	const char *blanks = " \tsyst:err?\r\n";
	struct fx *fx = *state;
	struct urb *in;
	uint8_t b[64];
	size_t n;

	start(fx, NULL, NULL);
	send_ok(fx, idn_msg, 5);
	send_ok(fx, idn_msg + 5, 10);
	send_ok(fx, idn_msg + 15, 5);
	expect_reply(fx, 9, IDENTITY "\n");

	/* "meas:" without EOM, then "VOLT?" with it: the respond query, in
	 * another case */
	send_ok(fx, b, msg_out(b, 10, "meas:", 5, false));
	in = expect_no_reply(fx, 11);		/* not a command yet */
	send_ok(fx, b, msg_out(b, 12, "VOLT?\n", 6, true));
	/* the URB that waited takes it, with the request's bTag */
	fx_expect_ok(fx, in, 28);
	expect_msg_in(in->buf, 28, 11, "+1.23456E+00\n", true);

	/* a command and the request for its reply in one transfer, blanks
	 * around the query */
	n = msg_out(b, 13, blanks, strlen(blanks), true);
	put_hdr(b + n, REQUEST_DEV_DEP_MSG_IN, 14, 4096, 0);
	send_ok(fx, b, n + HDR);
	in = in_urb(fx, 4096);
	fx_expect_ok(fx, in, 28);
	expect_msg_in(in->buf, 28, 14, "+0,\"No error\"\n", true);

	/* a host that leaves out the alignment: the next transfer starts
	 * with a header all the same */
	send_ok(fx, b, msg_out(b, 15, "*IDN?", 5, true) - 3);
	expect_reply(fx, 16, IDENTITY "\n");
}

/* A DEV_DEP_MSG_OUT of len bytes of cmd the Linux way: the header and 4084
 * bytes in one 4096-byte transfer, the rest in transfers of up to 4096
 * bytes, aligned at the end. */
static void send_long(struct fx *fx, uint8_t tag, const char *cmd, size_t len)
{
	uint8_t *b = malloc(HDR + len + 3);
	size_t off, total;

	assert_non_null(b);
	total = msg_out(b, tag, cmd, len, true);
	for (off = 0; off < total; off += 4096)
		send_ok(fx, b + off, total - off < 4096 ? total - off : 4096);
	free(b);
}

/* A command of 6001 bytes echoed back over IN URBs of 4096 bytes. */
static void test_long_echo(void **state)
{
	size_t len = 6001, total = pad4(HDR + len + 1), got = 0, i;
	uint8_t *back = malloc(total);
	char *cmd = malloc(len + 2);
	struct fx *fx = *state;
	struct urb *in;

	assert_non_null(back);
	assert_non_null(cmd);
	for (i = 0; i < len; i++)
		cmd[i] = 'a' + i % 26;
	start(fx, "bInterfaceClass 0xff",
	      "  function usbtmc {\n    interface 0\n    echo on\n  }\n");
	send_long(fx, 1, cmd, len);
	ask(fx, 2, 8192);
	while (got < total) {
		in = in_urb(fx, 4096);
		fx_expect_ok(fx, in, total - got < 4096 ? total - got : 4096);
		memcpy(back + got, in->buf, in->actual_length);
		got += in->actual_length;
	}
	memcpy(cmd + len, "\n", 2);
	expect_msg_in(back, total, 2, cmd, true);
	free(back);
	free(cmd);
}

/* A reply longer than the IN URB spans several; a request for fewer
 * bytes than queued gets them without EOM, the next one the rest. */
static void test_split_reply(void **state)
{
	struct fx *fx = *state;
	uint8_t got[64];
	struct urb *in;
	size_t off = 0;

	start(fx, NULL, NULL);
	command(fx, 3, "*idn?");
	ask(fx, 4, 4096);
	while (off < 52) {
		in = in_urb(fx, 16);
		fx_expect_ok(fx, in, off < 48 ? 16 : 4);
		memcpy(got + off, in->buf, in->actual_length);
		off += in->actual_length;
	}
	expect_msg_in(got, 52, 4, IDENTITY "\n", true);

	command(fx, 5, "*IDN?");
	ask(fx, 6, 10);
	in = in_urb(fx, 4096);
	fx_expect_ok(fx, in, 24);			/* 12 + 10, aligned */
	expect_msg_in(in->buf, 24, 6, "usbrig,Vir", false);
	ask(fx, 7, 4096);
	in = in_urb(fx, 4096);
	fx_expect_ok(fx, in, 40);			/* 12 + 27, aligned */
	expect_msg_in(in->buf, 40, 7, "tual Meter 1,TMC0001,1.0.0\n", true);
}

static void test_unknown_query(void **state)
{
	struct fx *fx = *state;

	start(fx, NULL, NULL);
	command(fx, 1, "FOO?\n");
	/* Linux's read times out and kills its URB */
	unlink_urb(fx, expect_no_reply(fx, 2));
	/* the next query is answered as if nothing happened */
	command(fx, 3, "*IDN?\n");
	expect_reply(fx, 4, IDENTITY "\n");
}

static void test_echo(void **state)
{
	static const char fn[] =
		"  function usbtmc {\n"
		"    identity \"acme,1,2,3\"\n"
		"    respond \"A?\" \"\" \"B?\" \"bee\"\n"
		"    echo on\n"
		"  }\n";
	struct fx *fx = *state;

	start(fx, TMC, fn);
	command(fx, 1, "FOO?\n");
	expect_reply(fx, 2, "FOO?\n");
	command(fx, 3, "  Hello, World \r\n");
	expect_reply(fx, 4, "Hello, World\n");
	command(fx, 5, "*idn?");
	expect_reply(fx, 6, "acme,1,2,3\n");
	/* an empty reply is still a line */
	command(fx, 7, "a?");
	expect_reply(fx, 8, "\n");
	command(fx, 9, "B?");
	expect_reply(fx, 10, "bee\n");
}

/* Two replies queued before the host asks come in one message. */
static void test_queued_replies(void **state)
{
	struct fx *fx = *state;

	start(fx, NULL, NULL);
	command(fx, 1, "*IDN?\n");
	command(fx, 2, "MEAS:VOLT?\n");
	expect_reply(fx, 3, IDENTITY "\n+1.23456E+00\n");
}

/* A bad header halts bulk OUT: the URB fails with -EPIPE, so does the
 * next one until the host clears the halt, then all is well again. */
static void test_bad_headers(void **state)
{
	struct fx *fx = *state;
	uint8_t bad[4][20];
	struct urb *u;
	size_t i;

	for (i = 0; i < 4; i++)
		memcpy(bad[i], idn_msg, sizeof(idn_msg));
	bad[0][1] = 0x00;		/* bTag 0 */
	bad[0][2] = 0xff;
	bad[1][2] = 0xfb;		/* bTagInverse not ~bTag */
	bad[2][4] = 0x00;		/* TransferSize 0 */
	bad[3][0] = 126;		/* VENDOR_SPECIFIC_OUT */

	start(fx, NULL, NULL);
	for (i = 0; i < 4; i++) {
		u = send(fx, bad[i], sizeof(bad[i]));
		assert_true(fx_is_done(fx, u));
		assert_int_equal(u->status, -EPIPE);
		assert_int_equal(u->actual_length, 0);
		expect_ep_halted(fx, EP_OUT, true);
		fx_expect_stall(fx, send(fx, idn_msg, sizeof(idn_msg)));
		fx_expect_ok(fx, fx_ctrl(fx, 0x02, USB_REQ_CLEAR_FEATURE,
					 USB_ENDPOINT_HALT, EP_OUT, 0, NULL),
			     0);
		command(fx, 1, "*IDN?");
		expect_reply(fx, 2, IDENTITY "\n");
	}
	/* bad in its second half, after a good first half */
	send_ok(fx, bad[1], 2);
	fx_expect_stall(fx, send(fx, bad[1] + 2, sizeof(bad[1]) - 2));
	expect_ep_halted(fx, EP_OUT, true);
	/* a bad REQUEST_DEV_DEP_MSG_IN: TransferSize 0 */
	fx_expect_ok(fx, fx_ctrl(fx, 0x02, USB_REQ_CLEAR_FEATURE,
				 USB_ENDPOINT_HALT, EP_OUT, 0, NULL), 0);
	command(fx, 3, "*IDN?");
	u = send(fx, req_msg, 4);
	fx_expect_ok(fx, u, 4);
	fx_expect_stall(fx, send(fx, (const uint8_t *)"\0\0\0\0\0\0\0\0", 8));
}

/* INITIATE_CLEAR drops a queued reply, a command half sent and a reply
 * half read. */
static void test_clear(void **state)
{
	struct fx *fx = *state;
	struct urb *u;
	uint8_t b[64];

	start(fx, NULL, NULL);
	command(fx, 1, "*IDN?\n");
	u = fx_ctrl(fx, 0xa1, INITIATE_CLEAR, 0, 0, 1, NULL);
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 0x01);
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, INITIATE_CLEAR, 0, 0, 2, NULL));
	u = fx_ctrl(fx, 0xa1, CHECK_CLEAR_STATUS, 0, 0, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0], 0x01);
	unlink_urb(fx, expect_no_reply(fx, 2));

	/* "MEAS:" then clear: "*IDN?" is a command of its own */
	send_ok(fx, b, msg_out(b, 3, "MEAS:", 5, false));
	fx_expect_ok(fx, fx_ctrl(fx, 0xa1, INITIATE_CLEAR, 0, 0, 1, NULL), 1);
	command(fx, 4, "*IDN?");
	/* half read, then cleared: the next message starts afresh */
	ask(fx, 5, 4096);
	u = in_urb(fx, 16);
	fx_expect_ok(fx, u, 16);
	put_hdr(b, DEV_DEP_MSG_IN, 5, 37, 1);
	memcpy(b + HDR, "usbr", 4);
	assert_memory_equal(u->buf, b, 16);
	fx_expect_ok(fx, fx_ctrl(fx, 0xa1, INITIATE_CLEAR, 0, 0, 1, NULL), 1);
	command(fx, 6, "MEAS:VOLT?");
	expect_reply(fx, 7, "+1.23456E+00\n");
}

/* A new configuration ends the held URBs; the detach takes back the
 * rest. */
static void test_reset_and_detach(void **state)
{
	struct fx *fx = *state;
	struct urb *in, *irq;

	start(fx, NULL, NULL);
	in = in_urb(fx, 512);
	irq = fx_submit(fx, fx_urb_new(EP_INT, 2));
	fx_set_config(fx, 0);
	assert_true(fx_is_done(fx, in));
	assert_int_equal(in->status, -ESHUTDOWN);
	assert_true(fx_is_done(fx, irq));
	assert_int_equal(irq->status, -ESHUTDOWN);
	fx_set_config(fx, 1);
	in_urb(fx, 512);
	irq = fx_submit(fx, fx_urb_new(EP_INT, 2));
	unlink_urb(fx, irq);
	fx_submit(fx, fx_urb_new(EP_INT, 2));
	gdev_detach(fx->dev, fx_free_urb);
	assert_int_equal(fx->freed, 2);
}

/* A command of 16 KiB is taken; one byte more and it is dropped whole,
 * and the next is served. */
static void test_command_max(void **state)
{
	size_t len = 16384;
	struct fx *fx = *state;
	char *cmd = malloc(len + 1);
	uint8_t h[HDR];
	struct urb *in;

	assert_non_null(cmd);
	memset(cmd, 'x', len + 1);
	start(fx, TMC, "  function usbtmc { echo on }\n");
	send_long(fx, 1, cmd, len);
	ask(fx, 2, 65536);
	in = in_urb(fx, 4096);
	fx_expect_ok(fx, in, 4096);
	put_hdr(h, DEV_DEP_MSG_IN, 2, len + 1, 1);	/* and "\n", EOM */
	assert_memory_equal(in->buf, h, HDR);
	fx_expect_ok(fx, fx_ctrl(fx, 0xa1, INITIATE_CLEAR, 0, 0, 1, NULL), 1);

	send_long(fx, 3, cmd, len + 1);
	unlink_urb(fx, expect_no_reply(fx, 4));
	command(fx, 5, "ok?");
	expect_reply(fx, 6, "ok?\n");
	free(cmd);
}

/* ---- options ---- */

/* tmc_fmt with cls and fn_block fails at line:col with what. */
static void check_error(const char *cls, const char *fn_block, int line,
			int col, const char *what)
{
	char text[4096];

	fx_expect_script_error("t.gadget",
			       tmc_text(text, sizeof(text), cls, fn_block),
			       line, col, what);
}

/* A function block: head, then `respond` with n pairs "Qi?" "Ri". */
static void respond_block(char *b, size_t size, const char *head, size_t n)
{
	size_t len, i;

	len = snprintf(b, size, "  function usbtmc {\n%s    respond", head);
	for (i = 1; i <= n && len < size; i++)
		len += snprintf(b + len, size - len, " \"Q%zu?\" \"R%zu\"", i,
				i);
	assert_true(len < size);
	assert_true(snprintf(b + len, size - len, "\n  }\n") <
		    (int)(size - len));
}

static void test_options(void **state)
{
	char block[2048];

	(void)state;
	check_error("bInterfaceClass 0xfe; bInterfaceSubClass 1",
		    "  function usbtmc\n", 10, 12,
		    "interface 0 has bInterfaceSubClass 0x01, not 3 (USBTMC)");
	check_error("bInterfaceClass 0xff", "  function usbtmc\n", 10, 12,
		    "no USBTMC interface (bInterfaceClass 0xfe)");
	check_error(TMC, "  function usbtmc {\n    respond \"A?\" \"1\" \"B?\"\n  }\n",
		    11, 13, "respond: expected \"QUERY\" \"REPLY\" pairs of quoted strings");
	check_error(TMC, "  function usbtmc {\n    respond \"A?\"\n  }\n", 11,
		    13, "respond: expected \"QUERY\" \"REPLY\" pairs");
	check_error(TMC, "  function usbtmc {\n    respond \"A?\" 1\n  }\n", 11,
		    13, "respond: reply 1: expected a quoted string");
	check_error(TMC, "  function usbtmc {\n    respond \"A?\" \"1\" \"\" \"2\"\n  }\n",
		    11, 13, "respond: query 2: printable ASCII, 1 to 256 bytes");
	check_error(TMC, "  function usbtmc {\n    respond \"A?\" \"\\n\"\n  }\n",
		    11, 13, "respond: reply 1: printable ASCII, 0 to 1024 bytes");
	check_error(TMC, "  function usbtmc {\n    identity \"\"\n  }\n", 11, 14,
		    "identity: the *IDN? reply, printable ASCII, 1 to 1024 bytes");
	check_error(TMC, "  function usbtmc {\n    echo maybe\n  }\n", 11, 10,
		    "echo: expected on or off, got 'maybe'");
	check_error(TMC, "  function usbtmc {\n    srq on\n  }\n", 11, 9,
		    "unknown option 'srq'");

	/* 33 pairs: one too many */
	respond_block(block, sizeof(block), "", 33);
	check_error(TMC, block, 11, 13, "respond: at most 32 pairs");
}

/* 32 pairs are fine, and the last one answers; named, the interface may
 * have any subclass. */
static void test_most_pairs(void **state)
{
	struct fx *fx = *state;
	char block[2048];

	respond_block(block, sizeof(block), "    interface 0\n", 32);
	start(fx, "bInterfaceClass 0xfe; bInterfaceSubClass 1", block);
	command(fx, 1, "q32?");
	expect_reply(fx, 2, "R32\n");
	command(fx, 3, "Q1?");
	expect_reply(fx, 4, "R1\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
		T(test_capabilities_and_requests),
		T(test_idn),
		T(test_reassembly),
		T(test_long_echo),
		T(test_split_reply),
		T(test_unknown_query),
		T(test_echo),
		T(test_queued_replies),
		T(test_bad_headers),
		T(test_clear),
		T(test_reset_and_detach),
		T(test_command_max),
		T(test_most_pairs),
#undef T
		cmocka_unit_test(test_options),
	};

	log_init_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
