// SPDX-License-Identifier: GPL-2.0
/*
 * test_device.c - gadgets/device.c in process: a hand-built model, a real
 * event_base, and a fake host that records completions and disconnects.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <cmocka.h>
#include <event2/event.h>
#include <linux/usb/ch9.h>

#include "device.h"
#include "fixture.h"
#include "fn/function.h"
#include "log.h"
#include "model.h"

/* ---- the model, built by hand ---- */

struct dev_model {
	struct gd_device m;
	struct gd_config cfg;
	struct gd_alt alt[2];
	struct gd_endpoint eps[16];
	struct gd_blob seq[3];
	struct gd_ctrl_rule rules[10];
};

static struct dev_model *model_of(struct fx *fx)
{
	return fx->priv;
}

static const uint8_t pattern7[] = { 0, 1, 2, 3, 4, 5, 6 };
static const uint8_t seq_a[] = { 0xa0, 0xa1, 0xa2, 0xa3 };
static const uint8_t seq_b[] = { 0xb0, 0xb1, 0xb2, 0xb3, 0xb4,
				 0xb5, 0xb6, 0xb7, 0xb8, 0xb9 };
static const uint8_t seq_c[] = { 0xc0, 0xc1 };
static const uint8_t reply10[] = "0123456789";

enum {
	EP_LOOP_OUT, EP_LOOP_IN, EP_SOURCE, EP_SEQ, EP_NAK, EP_STALL2,
	EP_DELAY, EP_ISO_IN, EP_ISO_OUT, N_EPS
};

static void rule_init(struct gd_ctrl_rule *r, int type, int req,
		      enum gd_ctrl_action action)
{
	memset(r, 0, sizeof(*r));
	r->bmRequestType = type;
	r->bRequest = req;
	r->wValue = -1;
	r->wIndex = -1;
	r->action = action;
	r->short_len = -1;
}

static void model_init(struct dev_model *dm)
{
	struct gd_device *m = &dm->m;
	struct gd_endpoint *e = dm->eps;

	fx_model_init(m, "test");

	fx_ep_init(&e[EP_LOOP_OUT], 0x01, USB_ENDPOINT_XFER_BULK, 512,
		   GD_EP_LOOPBACK);
	e[EP_LOOP_OUT].beh.loop_to = 0x81;
	fx_ep_init(&e[EP_LOOP_IN], 0x81, USB_ENDPOINT_XFER_BULK, 512,
		   GD_EP_DEFAULT);
	fx_ep_init(&e[EP_SOURCE], 0x82, USB_ENDPOINT_XFER_BULK, 512,
		   GD_EP_SOURCE);
	e[EP_SOURCE].beh.pattern.data = (uint8_t *)pattern7;
	e[EP_SOURCE].beh.pattern.len = sizeof(pattern7);
	dm->seq[0] = (struct gd_blob){ (uint8_t *)seq_a, sizeof(seq_a) };
	dm->seq[1] = (struct gd_blob){ (uint8_t *)seq_b, sizeof(seq_b) };
	dm->seq[2] = (struct gd_blob){ (uint8_t *)seq_c, sizeof(seq_c) };
	fx_ep_init(&e[EP_SEQ], 0x83, USB_ENDPOINT_XFER_BULK, 512,
		   GD_EP_SEQUENCE);
	e[EP_SEQ].beh.packets = dm->seq;
	e[EP_SEQ].beh.n_packets = 3;
	fx_ep_init(&e[EP_NAK], 0x84, USB_ENDPOINT_XFER_INT, 8, GD_EP_NAK);
	fx_ep_init(&e[EP_STALL2], 0x03, USB_ENDPOINT_XFER_BULK, 512,
		   GD_EP_SINK);
	e[EP_STALL2].beh.stall_nth = 2;
	fx_ep_init(&e[EP_DELAY], 0x05, USB_ENDPOINT_XFER_BULK, 512,
		   GD_EP_SINK);
	e[EP_DELAY].beh.delay_ms = 20;
	fx_ep_init(&e[EP_ISO_IN], 0x86, USB_ENDPOINT_XFER_ISOC, 1024,
		   GD_EP_SOURCE);
	e[EP_ISO_IN].beh.pattern.data = (uint8_t *)pattern7;
	e[EP_ISO_IN].beh.pattern.len = sizeof(pattern7);
	fx_ep_init(&e[EP_ISO_OUT], 0x06, USB_ENDPOINT_XFER_ISOC, 1024,
		   GD_EP_DEFAULT);

	dm->alt[0].bInterfaceNumber = 0;
	dm->alt[0].bInterfaceClass = 0xff;
	dm->alt[0].bNumEndpoints_override = -1;
	dm->alt[0].bLength_override = -1;
	dm->alt[0].eps = dm->eps;
	dm->alt[0].n_eps = N_EPS;

	fx_config_init(&dm->cfg, dm->alt, 1);
	m->configs = &dm->cfg;
	m->n_configs = 1;

	rule_init(&dm->rules[0], 0xc0, 0x01, GD_CTRL_REPLY);
	dm->rules[0].data = (struct gd_blob){ (uint8_t *)reply10, 10 };
	rule_init(&dm->rules[1], 0xc0, 0x02, GD_CTRL_REPLY);
	dm->rules[1].data = (struct gd_blob){ (uint8_t *)reply10, 10 };
	dm->rules[1].short_len = 3;
	rule_init(&dm->rules[2], 0x40, 0x03, GD_CTRL_ACK);
	rule_init(&dm->rules[3], 0xc0, 0x04, GD_CTRL_STALL);
	rule_init(&dm->rules[4], 0xc0, 0x05, GD_CTRL_REPLY);
	dm->rules[4].data = (struct gd_blob){ (uint8_t *)reply10, 10 };
	dm->rules[4].delay_ms = 30;
	rule_init(&dm->rules[5], 0x40, 0x06, GD_CTRL_ACK);
	dm->rules[5].stall_nth = 2;
	/* wildcard type: must not take GET_DESCRIPTOR (standard, 0x06) */
	rule_init(&dm->rules[6], -1, USB_REQ_GET_DESCRIPTOR, GD_CTRL_STALL);
	rule_init(&dm->rules[7], 0x41, 0x07, GD_CTRL_REPLY);
	/* a status that reads 00 twice, then 01 (`times`) */
	rule_init(&dm->rules[8], 0xc0, 0x08, GD_CTRL_REPLY);
	dm->rules[8].data = (struct gd_blob){ (uint8_t *)reply10, 1 };
	dm->rules[8].times = 2;
	rule_init(&dm->rules[9], 0xc0, 0x08, GD_CTRL_REPLY);
	dm->rules[9].data = (struct gd_blob){ (uint8_t *)reply10 + 1, 1 };
	m->rules = dm->rules;
	m->n_rules = 10;
}

static int setup(void **state)
{
	struct fx *fx = fx_create(0);
	struct dev_model *dm = calloc(1, sizeof(*dm));

	if (!dm)
		return -1;
	model_init(dm);
	fx->priv = dm;
	fx->m = &dm->m;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	struct dev_model *dm = fx->priv;

	fx_destroy(fx);
	free(dm);
	return 0;
}

/* Create, attach and configure (after the test tweaked the model). */
static void start(struct fx *fx, bool configure)
{
	fx_attach(fx);
	if (configure)
		assert_int_equal(gdev_set_config(fx->dev, 1), 0);
}

/* ---- control rules ---- */

static void test_ctrl_reply(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, false);
	u = fx_submit(fx, fx_ctrl_new(0xc0, 0x01, 0, 0, 64, 64));
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 10);
	assert_memory_equal(u->buf, reply10, 10);

	/* cut to wLength */
	u = fx_submit(fx, fx_ctrl_new(0xc0, 0x01, 0x1234, 7, 4, 64));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 4);
	/* never more than the URB's buffer, whatever wLength says */
	u = fx_submit(fx, fx_ctrl_new(0xc0, 0x01, 0, 0, 64, 2));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 2);
	assert_memory_equal(u->buf, "01", 2);

	/* OUT REPLY takes the data stage */
	u = fx_ctrl_new(0x41, 0x07, 0, 0, 5, 5);
	memcpy(u->buf, "hello", 5);
	fx_submit(fx, u);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 5);
}

static void test_ctrl_short_ack_stall(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, false);
	u = fx_submit(fx, fx_ctrl_new(0xc0, 0x02, 0, 0, 64, 64));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 3);
	assert_memory_equal(u->buf, "012", 3);

	u = fx_submit(fx, fx_ctrl_new(0x40, 0x03, 1, 2, 0, 0));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 0);

	u = fx_submit(fx, fx_ctrl_new(0xc0, 0x04, 0, 0, 64, 64));
	assert_int_equal(u->status, -EPIPE);
	assert_int_equal(u->actual_length, 0);

	/* no rule, not standard: STALL */
	u = fx_submit(fx, fx_ctrl_new(0xc0, 0x7f, 0, 0, 64, 64));
	assert_int_equal(u->status, -EPIPE);
	assert_int_equal(u->actual_length, 0);
}

static void test_ctrl_delay(void **state)
{
	struct fx *fx = *state;
	struct timeval t0;
	struct urb *u;

	start(fx, false);
	gettimeofday(&t0, NULL);
	u = fx_submit(fx, fx_ctrl_new(0xc0, 0x05, 0, 0, 64, 64));
	assert_false(fx_is_done(fx, u));
	/* another request is not held up by the delayed one */
	fx_submit(fx, fx_ctrl_new(0xc0, 0x01, 0, 0, 64, 64));
	assert_int_equal(fx->n_done, 1);
	fx_run_until_done(fx, u);
	assert_true(fx_ms_since(&t0) >= 25);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 10);
	assert_memory_equal(u->buf, reply10, 10);
	assert_null(u->timer);
}

static void test_ctrl_wildcard_not_standard(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, false);
	/* GET_DESCRIPTOR(device): the wildcard-type STALL rule must not win */
	u = fx_submit(fx, fx_ctrl_new(0x80, USB_REQ_GET_DESCRIPTOR,
				      USB_DT_DEVICE << 8,
				      0, 64, 64));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 18);
	assert_int_equal(u->buf[0], 18);
	assert_int_equal(u->buf[1], USB_DT_DEVICE);
	/* but a vendor request with the same bRequest is taken */
	u = fx_submit(fx, fx_ctrl_new(0xc0, USB_REQ_GET_DESCRIPTOR, 0, 0, 64,
				      64));
	assert_int_equal(u->status, -EPIPE);
}

static void test_ctrl_stall_nth(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, false);
	u = fx_submit(fx, fx_ctrl_new(0x40, 0x06, 0, 0, 0, 0));
	assert_int_equal(u->status, 0);
	u = fx_submit(fx, fx_ctrl_new(0x40, 0x06, 0, 0, 0, 0));
	assert_int_equal(u->status, -EPIPE);
	u = fx_submit(fx, fx_ctrl_new(0x40, 0x06, 0, 0, 0, 0));
	assert_int_equal(u->status, 0);
}

/* `times N`: the rule answers N matches, then the next one does */
static void test_ctrl_times(void **state)
{
	struct fx *fx = *state;
	struct urb *u;
	int i;

	start(fx, false);
	for (i = 0; i < 4; i++) {
		u = fx_submit(fx, fx_ctrl_new(0xc0, 0x08, 0, 0, 1, 1));
		assert_int_equal(u->status, 0);
		assert_int_equal(u->actual_length, 1);
		assert_int_equal(u->buf[0], i < 2 ? reply10[0] : reply10[1]);
	}
}

static void test_ctrl_unlink_delayed(void **state)
{
	struct fx *fx = *state;
	struct urb *u, *got;

	start(fx, false);
	u = fx_submit(fx, fx_ctrl_new(0xc0, 0x05, 0, 0, 64, 64));
	got = gdev_unlink(fx->dev, u->seqnum);
	assert_ptr_equal(got, u);
	assert_null(u->timer);
	assert_null(gdev_unlink(fx->dev, u->seqnum));
	fx_run_for(fx, 60);
	assert_int_equal(fx->n_done, 0);
	fx_urb_free(u);
}

/* ---- bulk ---- */

static void test_loopback_out_then_in(void **state)
{
	struct fx *fx = *state;
	struct urb *o, *i;

	start(fx, true);
	o = fx_urb_new(0x01, 5);
	memcpy(o->buf, "hello", 5);
	fx_submit(fx, o);
	assert_true(fx_is_done(fx, o));
	assert_int_equal(o->status, 0);
	assert_int_equal(o->actual_length, 5);

	i = fx_submit(fx, fx_urb_new(0x81, 512));
	assert_true(fx_is_done(fx, i));
	assert_int_equal(i->status, 0);
	assert_int_equal(i->actual_length, 5);
	assert_memory_equal(i->buf, "hello", 5);

	/* fifo empty again: the next IN NAKs */
	i = fx_submit(fx, fx_urb_new(0x81, 512));
	assert_false(fx_is_done(fx, i));
}

static void test_loopback_in_first(void **state)
{
	struct fx *fx = *state;
	struct urb *o, *i1, *i2;

	start(fx, true);
	i1 = fx_submit(fx, fx_urb_new(0x81, 4));
	i2 = fx_submit(fx, fx_urb_new(0x81, 512));
	assert_int_equal(fx->n_done, 0);

	o = fx_urb_new(0x01, 6);
	memcpy(o->buf, "abcdef", 6);
	fx_submit(fx, o);
	assert_int_equal(fx->n_done, 3);
	assert_int_equal(o->actual_length, 6);
	/* IN URBs served in order, each up to its length */
	assert_int_equal(i1->status, 0);
	assert_int_equal(i1->actual_length, 4);
	assert_memory_equal(i1->buf, "abcd", 4);
	assert_int_equal(i2->actual_length, 2);
	assert_memory_equal(i2->buf, "ef", 2);
}

static uint8_t byte_at(size_t off)
{
	return (uint8_t)(off * 131 + (off >> 13) + 7);
}

static void test_loopback_1mib(void **state)
{
	struct fx *fx = *state;
	const size_t chunk = 64 * 1024, total = 1024 * 1024;
	size_t off, j;
	struct urb *u;

	start(fx, true);
	/* interleaved: OUT a chunk, IN a chunk */
	for (off = 0; off < total; off += chunk) {
		u = fx_urb_new(0x01, chunk);
		for (j = 0; j < chunk; j++)
			u->buf[j] = byte_at(off + j);
		fx_submit(fx, u);
		assert_int_equal(u->status, 0);
		assert_int_equal(u->actual_length, chunk);
		u = fx_submit(fx, fx_urb_new(0x81, chunk));
		assert_true(fx_is_done(fx, u));
		assert_int_equal(u->actual_length, chunk);
		for (j = 0; j < chunk; j++)
			if (u->buf[j] != byte_at(off + j))
				fail_msg("byte %zu differs", off + j);
	}
	/* all OUT first (exactly GDEV_FIFO_MAX), then all IN */
	for (off = 0; off < total; off += chunk) {
		u = fx_urb_new(0x01, chunk);
		for (j = 0; j < chunk; j++)
			u->buf[j] = byte_at(off + j);
		fx_submit(fx, u);
		assert_true(fx_is_done(fx, u));
	}
	for (off = 0; off < total; off += chunk) {
		u = fx_submit(fx, fx_urb_new(0x81, chunk));
		assert_int_equal(u->actual_length, chunk);
		for (j = 0; j < chunk; j++)
			if (u->buf[j] != byte_at(off + j))
				fail_msg("byte %zu differs", off + j);
	}
}

static void test_loopback_fifo_full(void **state)
{
	struct fx *fx = *state;
	const size_t chunk = 256 * 1024;
	struct urb *o[5], *in;
	int k;

	start(fx, true);
	for (k = 0; k < 5; k++) {
		o[k] = fx_urb_new(0x01, chunk);
		memset(o[k]->buf, 'a' + k, chunk);
		fx_submit(fx, o[k]);
	}
	/* 4 x 256 KiB fill GDEV_FIFO_MAX: the fifth NAKs */
	for (k = 0; k < 4; k++)
		assert_true(fx_is_done(fx, o[k]));
	assert_false(fx_is_done(fx, o[4]));

	/* an IN drains 256 KiB: the waiting OUT gets in */
	in = fx_submit(fx, fx_urb_new(0x81, chunk));
	assert_int_equal(in->actual_length, chunk);
	assert_int_equal(in->buf[0], 'a');
	assert_int_equal(in->buf[chunk - 1], 'a');
	assert_true(fx_is_done(fx, o[4]));
	assert_int_equal(o[4]->actual_length, chunk);
	assert_true(fx->done[fx->n_done - 1] == o[4]);

	/* the order of the data is kept */
	for (k = 1; k < 5; k++) {
		in = fx_submit(fx, fx_urb_new(0x81, chunk));
		assert_int_equal(in->actual_length, chunk);
		assert_int_equal(in->buf[0], 'a' + k);
		assert_int_equal(in->buf[chunk - 1], 'a' + k);
	}
}

static void test_source_continuity(void **state)
{
	struct fx *fx = *state;
	static const uint8_t want1[] = { 0, 1, 2, 3, 4, 5, 6, 0, 1, 2 };
	static const uint8_t want2[] = { 3, 4, 5, 6, 0 };
	struct urb *u;

	start(fx, true);
	u = fx_submit(fx, fx_urb_new(0x82, 10));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 10);
	assert_memory_equal(u->buf, want1, 10);
	u = fx_submit(fx, fx_urb_new(0x82, 5));
	assert_int_equal(u->actual_length, 5);
	assert_memory_equal(u->buf, want2, 5);
}

static void test_sequence(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, true);
	u = fx_submit(fx, fx_urb_new(0x83, 8));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 4);
	assert_memory_equal(u->buf, seq_a, 4);
	/* 10-byte packet into 8 bytes: cut, babble */
	u = fx_submit(fx, fx_urb_new(0x83, 8));
	assert_int_equal(u->status, -EOVERFLOW);
	assert_int_equal(u->actual_length, 8);
	assert_memory_equal(u->buf, seq_b, 8);
	u = fx_submit(fx, fx_urb_new(0x83, 8));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 2);
	assert_memory_equal(u->buf, seq_c, 2);
	/* the end, no repeat: NAK */
	u = fx_submit(fx, fx_urb_new(0x83, 8));
	assert_false(fx_is_done(fx, u));
	fx_run_for(fx, 10);
	assert_false(fx_is_done(fx, u));
	assert_ptr_equal(gdev_unlink(fx->dev, u->seqnum), u);
	fx_urb_free(u);
}

static void test_sequence_repeat(void **state)
{
	struct fx *fx = *state;
	struct urb *u;
	int k;

	model_of(fx)->eps[EP_SEQ].beh.repeat = true;
	start(fx, true);
	for (k = 0; k < 3; k++)
		fx_submit(fx, fx_urb_new(0x83, 64));
	u = fx_submit(fx, fx_urb_new(0x83, 64));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 4);
	assert_memory_equal(u->buf, seq_a, 4);
	u = fx_submit(fx, fx_urb_new(0x83, 64));
	assert_int_equal(u->actual_length, 10);
	assert_memory_equal(u->buf, seq_b, 10);
}

static void test_nak_unlink(void **state)
{
	struct fx *fx = *state;
	struct urb *nak, *u;

	start(fx, true);
	nak = fx_submit(fx, fx_urb_new(0x84, 8));
	assert_false(fx_is_done(fx, nak));
	/* an idle interrupt IN blocks nothing else */
	u = fx_submit(fx, fx_urb_new(0x82, 3));
	assert_true(fx_is_done(fx, u));
	u = fx_ctrl_new(0xc0, 0x01, 0, 0, 64, 64);
	fx_submit(fx, u);
	assert_true(fx_is_done(fx, u));

	fx_run_for(fx, 10);
	assert_false(fx_is_done(fx, nak));
	assert_ptr_equal(gdev_unlink(fx->dev, nak->seqnum), nak);
	assert_null(gdev_unlink(fx->dev, nak->seqnum));
	/* a completed URB is not pending */
	assert_null(gdev_unlink(fx->dev, u->seqnum));
	fx_run_for(fx, 10);
	assert_false(fx_is_done(fx, nak));
	fx_urb_free(nak);
}

static void test_unknown_ep(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, false);
	/* address state: no endpoint but ep0 */
	u = fx_submit(fx, fx_urb_new(0x82, 8));
	assert_int_equal(u->status, -EPIPE);
	assert_int_equal(u->actual_length, 0);
	assert_int_equal(gdev_set_config(fx->dev, 1), 0);
	u = fx_submit(fx, fx_urb_new(0x89, 8));
	assert_int_equal(u->status, -EPIPE);
	u = fx_submit(fx, fx_urb_new(0x0f, 8));
	assert_int_equal(u->status, -EPIPE);
	/* the direction counts: 0x05 is an OUT endpoint, IN 5 is absent */
	u = fx_submit(fx, fx_urb_new(0x85, 8));
	assert_int_equal(u->status, -EPIPE);
	assert_int_equal(gdev_set_config(fx->dev, 2), -EINVAL);
}

static void test_ep_stall_nth(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, true);
	u = fx_submit(fx, fx_urb_new(0x03, 16));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 16);
	u = fx_submit(fx, fx_urb_new(0x03, 16));
	assert_int_equal(u->status, -EPIPE);
	assert_int_equal(u->actual_length, 0);
	/* halted until CLEAR_FEATURE(ENDPOINT_HALT) */
	u = fx_submit(fx, fx_urb_new(0x03, 16));
	assert_int_equal(u->status, -EPIPE);
	u = fx_submit(fx, fx_ctrl_new(USB_RECIP_ENDPOINT, USB_REQ_CLEAR_FEATURE,
				      USB_ENDPOINT_HALT, 0x03, 0, 0));
	assert_int_equal(u->status, 0);
	u = fx_submit(fx, fx_urb_new(0x03, 16));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 16);
}

static void test_ep_delay(void **state)
{
	struct fx *fx = *state;
	struct timeval t0;
	struct urb *u, *got;

	start(fx, true);
	gettimeofday(&t0, NULL);
	u = fx_submit(fx, fx_urb_new(0x05, 32));
	assert_false(fx_is_done(fx, u));
	fx_run_until_done(fx, u);
	assert_true(fx_ms_since(&t0) >= 15);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 32);

	/* unlinking a delayed bulk URB cancels its timer */
	u = fx_submit(fx, fx_urb_new(0x05, 32));
	got = gdev_unlink(fx->dev, u->seqnum);
	assert_ptr_equal(got, u);
	fx_run_for(fx, 40);
	assert_false(fx_is_done(fx, u));
	fx_urb_free(u);
}

/* ---- faults ---- */

static void test_disconnect_after_urbs(void **state)
{
	struct fx *fx = *state;

	fx->m->faults.disconnect_after_urbs = 3;
	start(fx, true);
	fx_submit(fx, fx_urb_new(0x82, 4));
	fx_submit(fx, fx_urb_new(0x84, 4));
	event_base_loop(fx->base, EVLOOP_NONBLOCK);
	assert_int_equal(fx->disconnects, 0);
	fx_submit(fx, fx_urb_new(0x82, 4));
	/* never from inside gdev_submit */
	assert_int_equal(fx->disconnects, 0);
	fx_run_for(fx, 100);
	assert_int_equal(fx->disconnects, 1);
	assert_non_null(strstr(fx->why, "disconnect_after_urbs=3"));
}

static void test_disconnect_after_ms(void **state)
{
	struct fx *fx = *state;
	struct timeval t0;

	fx->m->faults.disconnect_after_ms = 20;
	gettimeofday(&t0, NULL);
	start(fx, true);
	assert_int_equal(fx->disconnects, 0);
	fx_run_for(fx, 1000);	/* the fake host breaks the loop */
	assert_int_equal(fx->disconnects, 1);
	assert_true(fx_ms_since(&t0) >= 15);
	assert_true(fx_ms_since(&t0) < 1000);
	assert_non_null(strstr(fx->why, "disconnect_after_ms=20"));

	/* a detach cancels it */
	gdev_detach(fx->dev, fx_free_urb);
	assert_int_equal(gdev_attach(fx->dev, &fx->host, fx), 0);
	gdev_detach(fx->dev, fx_free_urb);
	fx_run_for(fx, 50);
	assert_int_equal(fx->disconnects, 1);
}

static void test_detach_frees_pending(void **state)
{
	struct fx *fx = *state;

	start(fx, true);
	fx_submit(fx, fx_urb_new(0x84, 8));			/* NAK */
	fx_submit(fx, fx_urb_new(0x81, 512));	/* loopback IN, empty */
	fx_submit(fx, fx_urb_new(0x83, 8));		/* sequence... */
	fx_submit(fx, fx_urb_new(0x83, 8));
	fx_submit(fx, fx_urb_new(0x83, 8));
	fx_submit(fx, fx_urb_new(0x83, 8));	/* ...at its end: NAK */
	fx_submit(fx, fx_ctrl_new(0xc0, 0x05, 0, 0, 64, 64)); /* delayed ctrl */
	fx_submit(fx, fx_urb_new(0x05, 8));		/* delayed bulk */
	assert_int_equal(fx->n_done, 3);
	fx->freed = 0;
	gdev_detach(fx->dev, fx_free_urb);
	assert_int_equal(fx->freed, 5);
	fx_run_for(fx, 60);
	assert_int_equal(fx->n_done, 3);
	/* back to the address state */
	assert_null(fx->dev->config);
	assert_null(gdev_ep_by_addr(fx->dev, 0x81));
}

/* ---- isochronous ---- */

static void test_iso_in(void **state)
{
	struct fx *fx = *state;
	/* packets of 5, 3 and 4 bytes at their host offsets 0, 8, 16 */
	static const uint32_t plen[] = { 5, 3, 4 };
	static const uint8_t want[] = { 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4 };
	struct urb *u;
	int k;

	start(fx, true);
	u = fx_urb_new(0x86, 24);
	u->number_of_packets = 3;
	u->iso = calloc(3, sizeof(*u->iso));
	for (k = 0; k < 3; k++) {
		u->iso[k].offset = 8 * k;
		u->iso[k].length = plen[k];
	}
	fx_submit(fx, u);
	/* three intervals of 125 us (high speed, bInterval 1) */
	assert_false(fx_is_done(fx, u));
	fx_run_until_done(fx, u);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->error_count, 0);
	/* actual_length is the sum; the data is packed back to back */
	assert_int_equal(u->actual_length, 12);
	assert_memory_equal(u->buf, want, 12);
	for (k = 0; k < 3; k++) {
		assert_int_equal(u->iso[k].actual_length, plen[k]);
		assert_int_equal(u->iso[k].status, 0);
		assert_int_equal(u->iso[k].offset, 8 * k);
	}

	/* packet lengths beyond the buffer are clipped */
	u = fx_urb_new(0x86, 10);
	u->number_of_packets = 2;
	u->iso = calloc(2, sizeof(*u->iso));
	u->iso[0].length = 8;
	u->iso[1].offset = 8;
	u->iso[1].length = 8;
	fx_submit(fx, u);
	fx_run_until_done(fx, u);
	assert_int_equal(u->actual_length, 10);
	assert_int_equal(u->iso[0].actual_length, 8);
	assert_int_equal(u->iso[1].actual_length, 2);
	/* the pattern went on from where the previous URB stopped (5) */
	assert_int_equal(u->buf[0], 5);
}

static void test_iso_out(void **state)
{
	struct fx *fx = *state;
	struct urb *u;
	int k;

	start(fx, true);
	u = fx_urb_new(0x06, 24);
	u->number_of_packets = 3;
	u->iso = calloc(3, sizeof(*u->iso));
	for (k = 0; k < 3; k++) {
		u->iso[k].offset = 8 * k;
		u->iso[k].length = 8;
		u->iso[k].status = -EINPROGRESS;
	}
	fx_submit(fx, u);
	fx_run_until_done(fx, u);
	assert_int_equal(u->status, 0);
	/* vhci insists: actual_length == sum of the packets' actual_length */
	assert_int_equal(u->actual_length, 24);
	for (k = 0; k < 3; k++) {
		assert_int_equal(u->iso[k].actual_length, 8);
		assert_int_equal(u->iso[k].status, 0);
	}
}

/* ---- configuration changes ---- */

static void test_set_config_shuts_pending(void **state)
{
	struct fx *fx = *state;
	struct urb *nak, *o;

	start(fx, true);
	nak = fx_submit(fx, fx_urb_new(0x84, 8));
	o = fx_urb_new(0x01, 3);
	memcpy(o->buf, "xyz", 3);
	fx_submit(fx, o);
	assert_int_equal(fx->n_done, 1);
	assert_int_equal(gdev_set_config(fx->dev, 1), 0);
	assert_true(fx_is_done(fx, nak));
	assert_int_equal(nak->status, -ESHUTDOWN);
	/* the fifo was dropped */
	assert_false(fx_is_done(fx, fx_submit(fx, fx_urb_new(0x81, 64))));
	assert_int_equal(gdev_set_config(fx->dev, 0), 0);
	assert_null(fx->dev->config);
}

/* ---- attach that fails ---- */

static int fail_attach(struct gdev *dev)
{
	(void)dev;
	return -EIO;
}

static const struct fn_ops fail_ops = {
	.name = "fail",
	.attach = fail_attach,
};

/*
 * A function whose attach fails leaves the device as gdev_new() made it:
 * the server frees the connection it offered as host, so no pointer to it
 * may stay behind, nor a disconnect timer that would call it.
 */
static void test_attach_failure_unwinds(void **state)
{
	struct fx *fx = *state;

	fx->m->faults.disconnect_after_ms = 10;
	fx->dev = gdev_new(fx->m, fx->base);
	assert_non_null(fx->dev);
	fx->dev->fops = &fail_ops;
	assert_int_equal(gdev_attach(fx->dev, &fx->host, fx), -EIO);
	assert_null(fx->dev->host);
	assert_null(fx->dev->host_ctx);
	assert_null(fx->dev->function_state);
	fx_run_for(fx, 50);
	assert_int_equal(fx->disconnects, 0);

	/* and it can be attached again once the function works */
	fx->dev->fops = NULL;
	assert_int_equal(gdev_attach(fx->dev, &fx->host, fx), 0);
	assert_ptr_equal(fx->dev->host_ctx, fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_ctrl_reply),
		T(test_ctrl_short_ack_stall),
		T(test_ctrl_delay),
		T(test_ctrl_wildcard_not_standard),
		T(test_ctrl_stall_nth),
		T(test_ctrl_times),
		T(test_ctrl_unlink_delayed),
		T(test_loopback_out_then_in),
		T(test_loopback_in_first),
		T(test_loopback_1mib),
		T(test_loopback_fifo_full),
		T(test_source_continuity),
		T(test_sequence),
		T(test_sequence_repeat),
		T(test_nak_unlink),
		T(test_unknown_ep),
		T(test_ep_stall_nth),
		T(test_ep_delay),
		T(test_disconnect_after_urbs),
		T(test_disconnect_after_ms),
		T(test_detach_frees_pending),
		T(test_iso_in),
		T(test_iso_out),
		T(test_set_config_shuts_pending),
		T(test_attach_failure_unwinds),
#undef T
	};

	log_init_from_env();	/* USBRIG_LOG=debug shows every URB */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
