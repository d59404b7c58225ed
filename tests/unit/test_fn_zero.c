// SPDX-License-Identifier: GPL-2.0
/*
 * test_fn_zero.c - gadgets/fn/zero.c (Gadget Zero) in process: the example
 * script gadgets/examples/zero.gadget, parsed with the pattern under test,
 * served by device.c to a fake host that records completions.
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
#include "fn/function.h"
#include "log.h"
#include "model.h"

#define EXAMPLE		"gadgets/examples/zero.gadget"
#define SS_CONFIG	3
#define LB_CONFIG	2
#define EP_IN		0x81
#define EP_OUT		0x02
#define MPS		512
#define QUEUE_BYTES	(32 * 4096)	/* qlen x buflen of the example */

/* The example script with `pattern 0` replaced by `pattern P`, attached
 * (not configured). */
static struct fx *fx_new(unsigned int pattern)
{
	struct fx *fx = fx_create(FX_FORGET_DONE);
	char to[16];

	snprintf(to, sizeof(to), "pattern %u", pattern);
	fx_parse_file(fx, EXAMPLE, "pattern 0", to);
	fx_attach(fx);
	return fx;
}

static struct urb *bulk_out(struct fx *fx, uint32_t len, unsigned int pattern)
{
	struct urb *u = fx_urb_new(EP_OUT, len);
	uint32_t i;

	for (i = 0; i < len; i++)
		u->buf[i] = pattern == 1 ? (uint8_t)((i % MPS) % 63) : 0;
	return fx_submit(fx, u);
}

/* ---- source/sink ---- */

static void test_source_mod63(void **state)
{
	struct fx *fx = fx_new(1);
	struct urb *u;
	uint32_t i;

	(void)state;
	fx_set_config(fx, SS_CONFIG);
	u = fx_submit(fx, fx_urb_new(EP_IN, 65536 + 100));
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 65536 + 100);
	for (i = 0; i < u->length; i++)
		if (u->buf[i] != (i % MPS) % 63)
			fail_msg("buf[%u] = %u", i, u->buf[i]);
	fx_destroy(fx);
}

static void test_source_zeros(void **state)
{
	struct fx *fx = fx_new(0);
	struct urb *u;
	uint32_t i;

	(void)state;
	fx_set_config(fx, SS_CONFIG);
	u = fx_urb_new(EP_IN, 4096);
	memset(u->buf, 0xa5, 4096);
	fx_submit(fx, u);
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->actual_length, 4096);
	for (i = 0; i < 4096; i++)
		assert_int_equal(u->buf[i], 0);
	fx_destroy(fx);
}

/* A good OUT passes; a bad one is taken, then the endpoint is halted. */
static void test_sink_checks(void **state)
{
	struct fx *fx = fx_new(1);
	struct urb *u;

	(void)state;
	fx_set_config(fx, SS_CONFIG);
	u = bulk_out(fx, 65536, 1);
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 65536);
	assert_false(gdev_ep_by_addr(fx->dev, EP_OUT)->halted);

	u = bulk_out(fx, 4096, 0);	/* zeros: byte 1 breaks mod63 */
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->status, 0);
	assert_true(gdev_ep_by_addr(fx->dev, EP_OUT)->halted);
	u = bulk_out(fx, 4096, 1);
	assert_int_equal(u->status, -EPIPE);

	/* CLEAR_FEATURE(ENDPOINT_HALT) through the core */
	u = fx_ctrl(fx, USB_RECIP_ENDPOINT, USB_REQ_CLEAR_FEATURE,
		    USB_ENDPOINT_HALT, EP_OUT, 0, NULL);
	assert_int_equal(u->status, 0);
	u = bulk_out(fx, 4096, 1);
	assert_int_equal(u->status, 0);
	fx_destroy(fx);
}

static void test_sink_unchecked(void **state)
{
	struct fx *fx = fx_new(2);
	struct urb *u;

	(void)state;
	fx_set_config(fx, SS_CONFIG);
	u = fx_urb_new(EP_OUT, 1000);
	memset(u->buf, 0x77, 1000);
	fx_submit(fx, u);
	assert_int_equal(u->status, 0);
	assert_false(gdev_ep_by_addr(fx->dev, EP_OUT)->halted);
	fx_destroy(fx);
}

/* ---- the control-OUT test requests ---- */

static void test_vendor_requests(void **state)
{
	struct fx *fx = fx_new(0);
	uint8_t data[4097];
	struct urb *u;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	/* not configured: g_zero's configuration answers them, nothing else */
	u = fx_ctrl(fx, 0x40, 0x5b, 0, 0, 16, data);
	assert_int_equal(u->status, -EPIPE);

	fx_set_config(fx, SS_CONFIG);
	u = fx_ctrl(fx, 0x40, 0x5b, 0, 0, 4096, data);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 4096);
	u = fx_ctrl(fx, 0xc0, 0x5c, 0, 0, 4096, NULL);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 4096);
	assert_memory_equal(u->buf, data, 4096);
	u = fx_ctrl(fx, 0xc0, 0x5c, 0, 0, 0, NULL); /* zero-length read */
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 0);

	/* what STALLs: too long, wValue/wIndex set, wrong direction */
	assert_int_equal(fx_ctrl(fx, 0x40, 0x5b, 0, 0, 4097, data)->status,
			 -EPIPE);
	assert_int_equal(fx_ctrl(fx, 0xc0, 0x5c, 1, 0, 8, NULL)->status,
			 -EPIPE);
	assert_int_equal(fx_ctrl(fx, 0xc0, 0x5c, 0, 1, 8, NULL)->status,
			 -EPIPE);
	assert_int_equal(fx_ctrl(fx, 0xc0, 0x5b, 0, 0, 8, NULL)->status,
			 -EPIPE);
	assert_int_equal(fx_ctrl(fx, 0x41, 0x5b, 0, 0, 8, data)->status,
			 -EPIPE);
	assert_int_equal(fx_ctrl(fx, 0xc0, 0x5d, 0, 0, 8, NULL)->status,
			 -EPIPE);

	fx_set_config(fx, LB_CONFIG);
	assert_int_equal(fx_ctrl(fx, 0xc0, 0x5c, 0, 0, 8, NULL)->status,
			 -EPIPE);
	fx_destroy(fx);
}

/* ---- loopback ---- */

static void test_loopback_short(void **state)
{
	struct fx *fx = fx_new(0);
	struct urb *o, *i1, *i2;

	(void)state;
	fx_set_config(fx, LB_CONFIG);
	/* an IN waiting first: NAK until data comes */
	i1 = fx_submit(fx, fx_urb_new(EP_IN, 4096));
	assert_false(fx_is_done(fx, i1));
	o = fx_urb_new(EP_OUT, 1000);	/* ends with a short packet */
	memset(o->buf, 0x42, 1000);
	fx_submit(fx, o);
	assert_true(fx_is_done(fx, o));
	assert_int_equal(o->actual_length, 1000);
	assert_true(fx_is_done(fx, i1));
	assert_int_equal(i1->actual_length, 1000);
	assert_int_equal(i1->buf[999], 0x42);

	/* 1024 bytes: two full packets and no transfer end; 1024 + ZLP */
	o = fx_urb_new(EP_OUT, 1024);
	memset(o->buf, 1, 1024);
	fx_submit(fx, o);
	i1 = fx_submit(fx, fx_urb_new(EP_IN, 4096));
	assert_false(fx_is_done(fx, i1));	/* the transfer goes on */
	o = fx_urb_new(EP_OUT, 1024);
	memset(o->buf, 2, 1024);
	o->transfer_flags = 0x0040;	/* URB_ZERO_PACKET */
	fx_submit(fx, o);
	assert_true(fx_is_done(fx, i1));
	assert_int_equal(i1->actual_length, 2048);
	assert_int_equal(i1->buf[0], 1);
	assert_int_equal(i1->buf[2047], 2);

	/* a full IN URB leaves the zero-length packet to the next one */
	o = fx_urb_new(EP_OUT, 512);
	o->transfer_flags = 0x0040;
	fx_submit(fx, o);
	i1 = fx_submit(fx, fx_urb_new(EP_IN, 512));
	i2 = fx_submit(fx, fx_urb_new(EP_IN, 512));
	assert_true(fx_is_done(fx, i1));
	assert_int_equal(i1->actual_length, 512);
	assert_true(fx_is_done(fx, i2));
	assert_int_equal(i2->actual_length, 0);
	fx_destroy(fx);
}

/* More than the queue holds: the OUT URB waits, IN drains it, in order. */
static void test_loopback_bound(void **state)
{
	struct fx *fx = fx_new(0);
	uint32_t len = 3 * QUEUE_BYTES + 100, got = 0, k;
	struct urb *o, *in;

	(void)state;
	fx_set_config(fx, LB_CONFIG);
	o = fx_urb_new(EP_OUT, len);
	for (k = 0; k < len; k++)
		o->buf[k] = (uint8_t)(k * 13 + k / 251);
	fx_submit(fx, o);
	assert_false(fx_is_done(fx, o));	/* the rest is NAKed */
	while (got < len) {
		in = fx_submit(fx, fx_urb_new(EP_IN, 16384));
		assert_true(fx_is_done(fx, in));
		assert_memory_equal(in->buf, o->buf + got, in->actual_length);
		got += in->actual_length;
		assert_true(in->actual_length == 16384 || got == len);
	}
	assert_true(fx_is_done(fx, o));
	assert_int_equal(o->actual_length, len);
	fx_destroy(fx);
}

/* Unlink takes back a waiting URB; SET_CONFIGURATION flushes the rest;
 * detach frees what is still held. */
static void test_loopback_unlink_reset_detach(void **state)
{
	struct fx *fx = fx_new(0);
	struct urb *a, *b, *o;
	uint32_t seq;

	(void)state;
	fx_set_config(fx, LB_CONFIG);
	a = fx_submit(fx, fx_urb_new(EP_IN, 512));
	b = fx_submit(fx, fx_urb_new(EP_IN, 512));
	seq = a->seqnum;
	assert_ptr_equal(gdev_unlink(fx->dev, seq), a);
	fx_urb_free(a);
	assert_null(gdev_unlink(fx->dev, seq));
	fx_set_config(fx, LB_CONFIG);
	assert_true(fx_is_done(fx, b));
	assert_int_equal(b->status, -ESHUTDOWN);

	/* held at detach: one IN, and an OUT bigger than the queue */
	fx_submit(fx, fx_urb_new(EP_IN, 512));
	o = fx_submit(fx, fx_urb_new(EP_OUT, 2 * QUEUE_BYTES));
	/* the IN took 512 bytes, the queue is full, the OUT waits */
	assert_false(fx_is_done(fx, o));
	fx->freed = 0;
	gdev_detach(fx->dev, fx_free_urb);
	assert_int_equal(fx->freed, 1);
	assert_int_equal(gdev_attach(fx->dev, &fx->host, fx), 0);
	fx_destroy(fx);
}

/* Other configurations and the iso endpoints are the core's. */
static void test_iso_is_core(void **state)
{
	struct fx *fx = fx_new(1);
	struct urb *u, *alt;

	(void)state;
	fx_set_config(fx, SS_CONFIG);
	alt = fx_ctrl(fx, USB_RECIP_INTERFACE, USB_REQ_SET_INTERFACE, 1, 0, 0,
		      NULL);
	assert_int_equal(alt->status, 0);
	u = fx_urb_new(0x83, 3072);
	fx_submit(fx, u);
	/* one service interval later (docs/gadget-format.md 7a) */
	fx_run_until_done(fx, u);
	assert_int_equal(u->status, 0);
	/* the bulk pair still sources and sinks in alternate setting 1 */
	u = fx_submit(fx, fx_urb_new(EP_IN, 1024));
	assert_int_equal(u->buf[100], 100 % 63);
	fx_destroy(fx);
}

/* ---- options ---- */

static void check_bad(const char *function_block, const char *want)
{
	static const char head[] =
		"device {\n"
		"  speed high; idVendor 0x0525; idProduct 0xa4a0\n"
		"  config { bConfigurationValue 3\n"
		"    interface { endpoint { bEndpointAddress 0x81; type bulk }\n"
		"                endpoint { bEndpointAddress 0x02; type bulk } } }\n"
		"  config { bConfigurationValue 2\n"
		"    interface { endpoint { bEndpointAddress 0x81; type bulk }\n"
		"                endpoint { bEndpointAddress 0x02; type bulk; sink } } }\n";
	char text[2048];

	snprintf(text, sizeof(text), "%s%s\n}\n", head, function_block);
	fx_expect_script_error("t.gadget", text, 0, 0, want);
}

static void test_options(void **state)
{
	(void)state;
	check_bad("function zero { pattern 3; loopback-config 0 }",
		  "t.gadget:9:25: function zero: pattern: 3 is more than 2");
	check_bad("function zero { colour blue; loopback-config 0 }",
		  "unknown option 'colour'");
	check_bad("function zero { sourcesink-config 4; loopback-config 0 }",
		  "no configuration with bConfigurationValue 4");
	check_bad("function zero { loopback-config 3 }",
		  "3 is the source/sink configuration too");
	check_bad("function zero { sourcesink-config 0; loopback-config 0 }",
		  "both 0");
	check_bad("function zero { qlen 0; loopback-config 0 }",
		  "qlen: must be at least 1");
	check_bad("function zero { qlen 1024; buflen 64K }",
		  "qlen x buflen is more than");
	/* the loopback configuration's OUT endpoint says `sink` */
	check_bad("function zero",
		  "t.gadget:8:1: function zero serves endpoint 0x02 of configuration 2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_source_mod63),
		cmocka_unit_test(test_source_zeros),
		cmocka_unit_test(test_sink_checks),
		cmocka_unit_test(test_sink_unchecked),
		cmocka_unit_test(test_vendor_requests),
		cmocka_unit_test(test_loopback_short),
		cmocka_unit_test(test_loopback_bound),
		cmocka_unit_test(test_loopback_unlink_reset_detach),
		cmocka_unit_test(test_iso_is_core),
		cmocka_unit_test(test_options),
	};

	log_threshold = GLOG_ERR;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
