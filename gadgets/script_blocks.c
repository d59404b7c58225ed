// SPDX-License-Identifier: GPL-2.0
/* script_blocks.c - gadget script parser: each block kind's keywords. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/usb/ch9.h>

#include "fn/registry.h"
#include "script_int.h"
#include "stream.h"

/* defined at the end, after their keyword tables */
static const struct block_def device_block, config_block, interface_block,
	endpoint_block, iad_block, companion_block, sequence_block, control_block,
	bos_block;


/* ---- sequence { packet .. } ---- */

static int kw_packet(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_ep_behaviour *beh = b->model;
	struct cur c = CUR(b->ps, st);
	struct gd_blob *pkt;

	(void)d;
	if (beh->n_packets >= GD_MAX_SEQ_PACKETS)
		return ps_fail(b->ps, st->kw, "packet: more than %d packets in one sequence",
			       GD_MAX_SEQ_PACKETS);
	pkt = PUSH(beh->packets, beh->n_packets);
	if (!pkt)
		return ps_oom(b->ps);
	return cur_bytes(&c, pkt, false);
}

static const struct kw_def sequence_kws[] = {
	KW("packet", kw_packet, NOBLK, -1, 0, 0),
};

/* ---- companion { .. } ---- */

enum { S_BURST, S_ATTR, S_BPI, S_BLEN };

static const struct kw_def companion_kws[] = {
	NUM("bMaxBurst", struct gd_ss_companion, bMaxBurst, 8, S_BURST),
	NUM("bmAttributes", struct gd_ss_companion, bmAttributes, 8, S_ATTR),
	NUM("wBytesPerInterval", struct gd_ss_companion, wBytesPerInterval, 16, S_BPI),
	OVR("bLength", struct gd_ss_companion, bLength_override, 8, S_BLEN),
};

/* ---- endpoint { .. } ---- */

enum { E_ADDR, E_TYPE, E_MPS, E_INTERVAL, E_BLEN, E_COMP, E_MODE, E_DELAY,
	E_STALL, E_RATE, E_CHANNELS, E_SBYTES, E_SIZES };

#define PATH_MAX_BYTES	4096	/* a file a source reads, a sink or sizes writes */

struct loop_ref {
	const struct tok *tok;	/* the target's token */
	uint8_t addr;
};

struct cfg_ctx {
	struct {
		const struct stmt *st;
		size_t alts_before;	/* interfaces written before it */
	} iads[GD_MAX_IADS];
	struct loop_ref *loops;
	size_t n_loops;
};

struct ep_ctx {
	struct cfg_ctx *cc;
	bool bpi_given;		/* companion wBytesPerInterval */
};

static int kw_epaddr(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int rc = cur_num(&c, 8, &v) ?: cur_end(&c);

	(void)d;
	if (rc)
		return rc;
	if ((v & 0x70) || !(v & USB_ENDPOINT_NUMBER_MASK))
		return ps_fail(b->ps, &st->args[0], "bEndpointAddress: 0x%02x is not an endpoint address: expected 0x01..0x0f (OUT) or 0x81..0x8f (IN)",
			       v);
	ep->bEndpointAddress = (uint8_t)v;
	return 0;
}

static int kw_eptype(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	static const char *const types[] = {
		"control", "iso", "bulk", "interrupt", "isochronous", NULL,
	};
	struct gd_endpoint *ep = b->model;
	struct cur c = CUR(b->ps, st);
	int i, rc = cur_choice(&c, types, &i) ?: cur_end(&c);

	(void)d;
	/* "isochronous" (4) is "iso" spelled out, not 4 & 3 (control) */
	if (!rc)
		ep->bmAttributes = i == 4 ? USB_ENDPOINT_XFER_ISOC : (uint8_t)i;
	return rc;
}

static int kw_companion(struct blk *b, const struct stmt *st,
			const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct ep_ctx *ec = b->ctx;
	struct cur c = CUR(b->ps, st);
	struct blk cb = {
		.ps = b->ps, .def = &companion_block, .st = st, .model = &ep->ss,
	};
	int i = 1, rc;

	(void)d;
	if (!st->open) {
		rc = cur_choice(&c, ps_on_off, &i) ?: cur_end(&c);
		ep->ss.present = !rc && i == 0;
		return rc;
	}
	rc = cur_end(&c) ?: ps_run_block(&cb);
	ep->ss.present = true;
	ec->bpi_given = cb.seen[S_BPI] != NULL;
	return rc;
}

static int kw_epraw(struct blk *b, const struct stmt *st,
		    const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct cur c = CUR(b->ps, st);

	(void)d;
	return cur_bytes(&c, &ep->extra, true);
}

static int kw_loopback(struct blk *b, const struct stmt *st,
		       const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct ep_ctx *ec = b->ctx;
	struct cur c = CUR(b->ps, st);
	struct loop_ref *lr;
	uint32_t v;
	int rc = cur_num(&c, 8, &v) ?: cur_end(&c);

	(void)d;
	if (rc)
		return rc;
	if (!(v & USB_DIR_IN) || (v & 0x70) || !(v & USB_ENDPOINT_NUMBER_MASK))
		return ps_fail(b->ps, &st->args[0], "loopback: 0x%02x is not an IN endpoint address (0x81..0x8f)",
			       v);
	ep->beh.mode = GD_EP_LOOPBACK;
	ep->beh.loop_to = (uint8_t)v;
	lr = PUSH(ec->cc->loops, ec->cc->n_loops);
	if (!lr)
		return ps_oom(b->ps);
	lr->tok = &st->args[0];
	lr->addr = (uint8_t)v;
	return 0;
}

/* a quoted file name: no NUL, 1..PATH_MAX_BYTES bytes; *out owns a copy */
static int cur_path(struct cur *c, char **out)
{
	const struct tok *t = cur_peek(c);

	if (!t)
		return ps_fail(c->ps, c->st->kw, "%s: missing file name: expected a quoted string",
			       tok_text(c->st->kw).s);
	if (t->kind != T_STRING)
		return ps_fail(c->ps, t, "%s: expected the file name as a quoted string, found %s",
			       tok_text(c->st->kw).s, tok_desc(t).s);
	if (!t->len || t->len > PATH_MAX_BYTES || memchr(t->text, 0, t->len))
		return ps_fail(c->ps, t, "%s: a file name is 1 to %d bytes without NUL",
			       tok_text(c->st->kw).s, PATH_MAX_BYTES);
	*out = strndup(t->text, t->len);
	if (!*out)
		return ps_oom(c->ps);
	c->i++;
	return 0;
}

/* file "PATH" and the statement's end: a sink's or a sizes file */
static int cur_file_end(struct cur *c, char **out)
{
	static const char *const kinds[] = { "file", NULL };
	int i;

	return cur_choice(c, kinds, &i) ?: cur_path(c, out) ?: cur_end(c);
}

/* sink [file "PATH"] / nak */
static int kw_sink(struct blk *b, const struct stmt *st,
		   const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct cur c = CUR(b->ps, st);

	(void)d;
	if (!tok_is(st->kw, "sink")) {
		ep->beh.mode = GD_EP_NAK;
		return ps_no_args(b, st);
	}
	ep->beh.mode = GD_EP_SINK;
	if (!cur_peek(&c))
		return 0;
	return cur_file_end(&c, &ep->beh.path);
}

/* sizes file "PATH": an isochronous endpoint's packet lengths recorded */
static int kw_sizes(struct blk *b, const struct stmt *st,
		    const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct cur c = CUR(b->ps, st);

	(void)d;
	return cur_file_end(&c, &ep->beh.sizes_path);
}

/* source [pattern BYTES | count | sine HZ [PERCENT] | file "PATH" [repeat]] */
static int kw_source(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	static const char *const kinds[] = {
		"pattern", "count", "sine", "file", NULL,
	};
	struct gd_ep_behaviour *beh = &((struct gd_endpoint *)b->model)->beh;
	struct cur c = CUR(b->ps, st);
	const struct tok *t;
	uint32_t v;
	int i, rc;

	(void)d;
	beh->mode = GD_EP_SOURCE;
	if (!cur_peek(&c))
		return 0;
	rc = cur_choice(&c, kinds, &i);
	if (rc)
		return rc;
	switch (i) {
	case 0:
		return cur_bytes(&c, &beh->pattern, true);
	case 1:
		beh->src = GD_SRC_COUNT;
		return cur_end(&c);
	case 2:
		beh->src = GD_SRC_SINE;
		beh->sine_level = STREAM_SINE_LEVEL;
		rc = cur_num(&c, 32, &beh->sine_hz);
		if (!rc && !beh->sine_hz)
			return ps_fail(b->ps, &st->args[1], "source sine: the frequency must be at least 1 Hz");
		t = cur_peek(&c);
		if (rc || !t)
			return rc;
		rc = cur_num(&c, 8, &v);
		if (!rc && (v < 1 || v > 100))
			return ps_fail(b->ps, t, "source sine: level %u: expected 1..100 (%% of full scale)",
				       v);
		beh->sine_level = (uint8_t)v;
		return rc ?: cur_end(&c);
	default:
		beh->src = GD_SRC_FILE;
		rc = cur_path(&c, &beh->path);
		t = cur_peek(&c);
		if (rc || !t)
			return rc;
		if (!tok_is(t, "repeat"))
			return ps_fail(b->ps, t, "source file: expected 'repeat' or nothing after the file name, found %s",
				       tok_desc(t).s);
		beh->file_repeat = true;
		c.i++;
		return cur_end(&c);
	}
}

/* rate HZ | packet-size BYTES: how much each isochronous interval carries */
static int kw_rate(struct blk *b, const struct stmt *st,
		   const struct kw_def *d)
{
	struct gd_stream *s = &((struct gd_endpoint *)b->model)->beh.stream;
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int rc = cur_num(&c, 32, &v) ?: cur_end(&c);

	(void)d;
	if (rc)
		return rc;
	if (!v)
		return ps_fail(b->ps, &st->args[0], "%s: must be at least 1",
			       tok_text(st->kw).s);
	if (tok_is(st->kw, "rate"))
		s->rate = v;
	else
		s->packet_size = v;
	return 0;
}

/* channels 1..255, sample-bytes 1..4: the sample format */
static int kw_format(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_stream *s = &((struct gd_endpoint *)b->model)->beh.stream;
	struct cur c = CUR(b->ps, st);
	bool ch = tok_is(st->kw, "channels");
	uint32_t v, max = ch ? 255 : STREAM_MAX_SAMPLE_BYTES;
	int rc = cur_num(&c, 32, &v) ?: cur_end(&c);

	(void)d;
	if (rc)
		return rc;
	if (v < 1 || v > max)
		return ps_fail(b->ps, &st->args[0], "%s: %u: expected 1..%u",
			       tok_text(st->kw).s, v, max);
	if (ch)
		s->channels = (uint8_t)v;
	else
		s->sample_bytes = (uint8_t)v;
	return 0;
}

static int kw_sequence(struct blk *b, const struct stmt *st,
		       const struct kw_def *d)
{
	struct gd_endpoint *ep = b->model;
	struct cur c = CUR(b->ps, st);
	struct blk sb = {
		.ps = b->ps, .def = &sequence_block, .st = st, .model = &ep->beh,
	};
	int rc;

	(void)d;
	ep->beh.mode = GD_EP_SEQUENCE;
	if (cur_peek(&c) && tok_is(cur_peek(&c), "repeat")) {
		ep->beh.repeat = true;
		c.i++;
	}
	rc = cur_end(&c) ?: ps_run_block(&sb);
	if (!rc && !ep->beh.n_packets)
		return ps_fail(b->ps, st->kw, "sequence: needs at least one packet");
	return rc;
}

static const struct kw_def endpoint_kws[] = {
	KW("bEndpointAddress", kw_epaddr, NOBLK, E_ADDR, 0, 0),
	KW("type", kw_eptype, NOBLK, E_TYPE, 0, 0),
	NUM("bmAttributes", struct gd_endpoint, bmAttributes, 8, E_TYPE),
	NUM("wMaxPacketSize", struct gd_endpoint, wMaxPacketSize, 16, E_MPS),
	NUM("bInterval", struct gd_endpoint, bInterval, 8, E_INTERVAL),
	OVR("bLength", struct gd_endpoint, bLength_override, 8, E_BLEN),
	KW("companion", kw_companion, OPTBLK, E_COMP, 0, 0),
	KW("raw", kw_epraw, NOBLK, -1, 0, 0),
	KW("loopback", kw_loopback, NOBLK, E_MODE, 0, 0),
	KW("sink", kw_sink, NOBLK, E_MODE, 0, 0),
	KW("nak", kw_sink, NOBLK, E_MODE, 0, 0),
	KW("source", kw_source, NOBLK, E_MODE, 0, 0),
	KW("sequence", kw_sequence, NEEDBLK, E_MODE, 0, 0),
	NUM("delay", struct gd_endpoint, beh.delay_ms, 32, E_DELAY),
	KW("stall-nth", kw_nth, NOBLK, E_STALL, 0,
	   offsetof(struct gd_endpoint, beh.stall_nth)),
	KW("rate", kw_rate, NOBLK, E_RATE, 0, 0),
	KW("packet-size", kw_rate, NOBLK, E_RATE, 0, 0),
	KW("channels", kw_format, NOBLK, E_CHANNELS, 0, 0),
	KW("sample-bytes", kw_format, NOBLK, E_SBYTES, 0, 0),
	KW("sizes", kw_sizes, NOBLK, E_SIZES, 0, 0),
};

/* wMaxPacketSize when not given, [type][speed]; 0: no such endpoint */
static uint16_t default_mps(unsigned int xfer, enum usbip_speed speed)
{
	static const uint16_t table[4][4] = {
		/*			 low  full  high  super */
		[USB_ENDPOINT_XFER_CONTROL] = { 8, 64, 64, 512 },
		[USB_ENDPOINT_XFER_ISOC] = { 0, 1023, 1024, 1024 },
		[USB_ENDPOINT_XFER_BULK] = { 0, 64, 512, 1024 },
		[USB_ENDPOINT_XFER_INT] = { 8, 64, 64, 64 },
	};
	int col = speed == USBIP_SPEED_LOW ? 0 : speed == USBIP_SPEED_HIGH ? 2 :
		  speed == USBIP_SPEED_SUPER ? 3 : 1;

	return table[xfer][col];
}

static uint8_t default_interval(unsigned int xfer, enum usbip_speed speed)
{
	bool fast = speed == USBIP_SPEED_HIGH || speed == USBIP_SPEED_SUPER;

	if (xfer == USB_ENDPOINT_XFER_INT)
		return fast ? 4 : 10;	/* 2^(4-1) x 125 us = 1 ms; 10 frames */
	if (xfer == USB_ENDPOINT_XFER_ISOC)
		return 1;		/* every (micro)frame */
	return 0;
}

/* The stream keywords: what they need, and that wMaxPacketSize holds the
 * largest packet the rate gives. */
static int stream_finish(struct blk *b, struct gd_endpoint *ep,
			 unsigned int xfer, bool in)
{
	struct parser *ps = b->ps;
	struct gd_ep_behaviour *beh = &ep->beh;
	struct gd_stream *s = &beh->stream;
	const struct stmt *rate = b->seen[E_RATE];
	const struct stmt *sizes = b->seen[E_SIZES];
	const struct stmt *fmt[] = { b->seen[E_CHANNELS], b->seen[E_SBYTES] };
	uint32_t us = stream_interval_us(ps->dev->speed, ep->bInterval);
	uint64_t most, cap;
	size_t i;

	if (!b->seen[E_CHANNELS])
		s->channels = 2;
	if (!b->seen[E_SBYTES])
		s->sample_bytes = 2;
	if (rate && (xfer != USB_ENDPOINT_XFER_ISOC || !in))
		return ps_fail(ps, rate->kw, "%s: only for isochronous IN endpoints (the host sizes OUT packets), 0x%02x is %s %s",
			       tok_text(rate->kw).s, ep->bEndpointAddress,
			       ps_xfer_name(xfer), in ? "IN" : "OUT");
	if (sizes && xfer != USB_ENDPOINT_XFER_ISOC)
		return ps_fail(ps, sizes->kw, "sizes: only for isochronous endpoints (packets, one an interval), 0x%02x is %s",
			       ep->bEndpointAddress, ps_xfer_name(xfer));
	for (i = 0; i < 2; i++)
		if (fmt[i] && !in)
			return ps_fail(ps, fmt[i]->kw, "%s: the sample format is for IN endpoints (a source), 0x%02x is OUT",
				       tok_text(fmt[i]->kw).s,
				       ep->bEndpointAddress);
	if (beh->src == GD_SRC_SINE && !s->rate)
		return ps_fail(ps, b->seen[E_MODE]->kw, "source sine: needs the endpoint's rate (the sample rate in Hz)");
	if (beh->src == GD_SRC_SINE && beh->sine_hz > s->rate / 2)
		return ps_fail(ps, &b->seen[E_MODE]->args[1], "source sine: %u Hz is above half the rate (%u Hz)",
			       beh->sine_hz, s->rate);
	if (!rate)
		return 0;
	most = stream_max_packet(s, us);
	cap = stream_iso_capacity(ep, ps->dev->speed);
	if (most > cap) {
		if (s->rate)
			return ps_fail(ps, rate->kw, "rate: %u Hz x %u channels x %u bytes needs up to %llu bytes per %u us interval, wMaxPacketSize allows %llu",
				       s->rate, s->channels, s->sample_bytes,
				       (unsigned long long)most, us,
				       (unsigned long long)cap);
		return ps_fail(ps, rate->kw, "packet-size: %u bytes per interval, wMaxPacketSize allows %llu",
			       s->packet_size, (unsigned long long)cap);
	}
	return 0;
}

static int endpoint_finish(struct blk *b, struct gd_alt *alt, size_t ei)
{
	struct parser *ps = b->ps;
	struct gd_endpoint *ep = &alt->eps[ei];
	struct ep_ctx *ec = b->ctx;
	enum usbip_speed speed = ps->dev->speed;
	unsigned int xfer = ep->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK;
	bool in = ep->bEndpointAddress & USB_DIR_IN;
	const struct stmt *mode = b->seen[E_MODE];
	const struct stmt *beh[] = { mode, b->seen[E_DELAY], b->seen[E_STALL] };
	size_t i;

	if (!b->seen[E_ADDR])
		return ps_fail(ps, b->st->kw, "endpoint: missing bEndpointAddress (required)");
	if (!b->seen[E_TYPE])
		return ps_fail(ps, b->st->kw, "endpoint: missing type (or bmAttributes)");
	for (i = 0; i < ei; i++)
		if (alt->eps[i].bEndpointAddress == ep->bEndpointAddress)
			return ps_fail(ps, blk_seen_val(b, E_ADDR, b->st->kw),
				       "bEndpointAddress: 0x%02x is already used in this interface (line %d)",
				       ep->bEndpointAddress, alt->eps[i].line);
	if (speed == USBIP_SPEED_LOW && !default_mps(xfer, speed))
		return ps_fail(ps, blk_seen_val(b, E_TYPE, b->st->kw),
			       "%s: low-speed devices have no %s endpoints",
			       tok_text(b->seen[E_TYPE]->kw).s,
			       ps_xfer_name(xfer));

	if (!b->seen[E_MPS])
		ep->wMaxPacketSize = default_mps(xfer, speed);
	if (!b->seen[E_INTERVAL])
		ep->bInterval = default_interval(xfer, speed);

	if (!b->seen[E_COMP])
		ep->ss.present = speed == USBIP_SPEED_SUPER;
	if (ep->ss.present && !ec->bpi_given &&
	    (xfer == USB_ENDPOINT_XFER_INT || xfer == USB_ENDPOINT_XFER_ISOC)) {
		/* USB 3.2 9.6.7: what one service interval moves at most */
		uint32_t mult = xfer == USB_ENDPOINT_XFER_ISOC ?
				(ep->ss.bmAttributes & 3) + 1 : 1;
		uint32_t bpi = (uint32_t)(ep->wMaxPacketSize & 0x7ff) *
			       (ep->ss.bMaxBurst + 1u) * mult;

		ep->ss.wBytesPerInterval = bpi > 0xffff ? 0xffff : (uint16_t)bpi;
	}

	for (i = 0; i < sizeof(beh) / sizeof(beh[0]); i++) {
		if (!beh[i] || xfer == USB_ENDPOINT_XFER_BULK ||
		    xfer == USB_ENDPOINT_XFER_INT)
			continue;
		/* isochronous: a stream in or out, no handshake to fake */
		if (xfer == USB_ENDPOINT_XFER_ISOC && beh[i] == mode &&
		    (ep->beh.mode == GD_EP_SOURCE || ep->beh.mode == GD_EP_SINK))
			continue;
		return ps_fail(ps, beh[i]->kw, xfer == USB_ENDPOINT_XFER_ISOC ?
			       "%s: an %s endpoint takes only source (IN) or sink (OUT)" :
			       "%s: behaviours are for bulk and interrupt endpoints, this one is %s",
			       tok_text(beh[i]->kw).s, ps_xfer_name(xfer));
	}
	if (mode && in &&
	    (ep->beh.mode == GD_EP_LOOPBACK || ep->beh.mode == GD_EP_SINK))
		return ps_fail(ps, mode->kw, "%s: only for OUT endpoints, 0x%02x is IN",
			       tok_text(mode->kw).s, ep->bEndpointAddress);
	if (mode && !in && (ep->beh.mode == GD_EP_SOURCE ||
			    ep->beh.mode == GD_EP_SEQUENCE))
		return ps_fail(ps, mode->kw, "%s: only for IN endpoints, 0x%02x is OUT",
			       tok_text(mode->kw).s, ep->bEndpointAddress);
	return stream_finish(b, ep, xfer, in);
}

/* ---- interface { .. } ---- */

enum { I_NUM, I_ALT, I_CLASS, I_SUB, I_PROTO, I_STR, I_NUMEP, I_BLEN };

static int kw_endpoint(struct blk *b, const struct stmt *st,
		       const struct kw_def *d)
{
	struct gd_alt *alt = b->model;
	struct ep_ctx ec = { .cc = b->ctx };
	struct blk eb = {
		.ps = b->ps, .def = &endpoint_block, .st = st, .ctx = &ec,
	};
	struct gd_endpoint *ep;
	int rc;

	(void)d;
	rc = ps_no_args(b, st);
	if (rc)
		return rc;
	if (alt->n_eps >= GD_MAX_ENDPOINTS)
		return ps_fail(b->ps, st->kw, "more than %d endpoints in one interface descriptor",
			       GD_MAX_ENDPOINTS);
	ep = PUSH(alt->eps, alt->n_eps);
	if (!ep)
		return ps_oom(b->ps);
	ep->bLength_override = -1;
	ep->ss.bLength_override = -1;
	ep->line = st->kw->line;
	eb.model = ep;
	return ps_run_block(&eb) ?: endpoint_finish(&eb, alt, alt->n_eps - 1);
}

/* raw in an interface: before its first endpoint to the interface, after
 * one to that endpoint, so that the bytes land where they are written */
static int kw_altraw(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_alt *alt = b->model;
	struct cur c = CUR(b->ps, st);

	(void)d;
	return cur_bytes(&c, alt->n_eps ? &alt->eps[alt->n_eps - 1].extra :
			 &alt->extra, true);
}

static const struct kw_def interface_kws[] = {
	NUM("bInterfaceNumber", struct gd_alt, bInterfaceNumber, 8, I_NUM),
	NUM("bAlternateSetting", struct gd_alt, bAlternateSetting, 8, I_ALT),
	NUM("bInterfaceClass", struct gd_alt, bInterfaceClass, 8, I_CLASS),
	NUM("bInterfaceSubClass", struct gd_alt, bInterfaceSubClass, 8, I_SUB),
	NUM("bInterfaceProtocol", struct gd_alt, bInterfaceProtocol, 8, I_PROTO),
	TEXT("interface-name", struct gd_alt, iInterface, I_STR),
	SIDX("iInterface", struct gd_alt, iInterface, I_STR),
	OVR("bNumEndpoints", struct gd_alt, bNumEndpoints_override, 8, I_NUMEP),
	OVR("bLength", struct gd_alt, bLength_override, 8, I_BLEN),
	KW("raw", kw_altraw, NOBLK, -1, 0, 0),
	KW("endpoint", kw_endpoint, NEEDBLK, -1, 0, 0),
};

static int interface_finish(struct blk *b, struct gd_config *cfg, size_t ai)
{
	struct gd_alt *alt = &cfg->alts[ai];
	size_t i;

	if (!b->seen[I_NUM] && ai) {
		uint8_t prev = cfg->alts[ai - 1].bInterfaceNumber;

		if (!alt->bAlternateSetting && prev == 0xff)
			return ps_fail(b->ps, b->st->kw, "interface: no number left after 255: give bInterfaceNumber");
		if (alt->bAlternateSetting)
			alt->bInterfaceNumber = prev;
		else
			alt->bInterfaceNumber = prev + 1;
	}
	for (i = 0; i < ai; i++)
		if (cfg->alts[i].bInterfaceNumber == alt->bInterfaceNumber &&
		    cfg->alts[i].bAlternateSetting == alt->bAlternateSetting)
			return ps_fail(b->ps, blk_seen_val(b, I_ALT, blk_seen_val(b, I_NUM, b->st->kw)),
				       "interface %u alternate setting %u is already defined at line %d",
				       alt->bInterfaceNumber, alt->bAlternateSetting,
				       cfg->alts[i].line);
	if (gd_config_num_interfaces(cfg) > GD_MAX_INTERFACES)
		return ps_fail(b->ps, b->st->kw, "more than %d interfaces in one configuration",
			       GD_MAX_INTERFACES);
	return 0;
}

/* ---- iad { .. } ---- */

enum { A_FIRST, A_COUNT, A_CLASS, A_SUB, A_PROTO, A_STR, A_BLEN };

static const struct kw_def iad_kws[] = {
	NUM("bFirstInterface", struct gd_iad, bFirstInterface, 8, A_FIRST),
	NUM("bInterfaceCount", struct gd_iad, bInterfaceCount, 8, A_COUNT),
	NUM("bFunctionClass", struct gd_iad, bFunctionClass, 8, A_CLASS),
	NUM("bFunctionSubClass", struct gd_iad, bFunctionSubClass, 8, A_SUB),
	NUM("bFunctionProtocol", struct gd_iad, bFunctionProtocol, 8, A_PROTO),
	TEXT("function", struct gd_iad, iFunction, A_STR),
	SIDX("iFunction", struct gd_iad, iFunction, A_STR),
	OVR("bLength", struct gd_iad, bLength_override, 8, A_BLEN),
};

/* ---- config { .. } ---- */

enum { C_VALUE, C_ATTR, C_POWER, C_STR, C_TOTAL, C_NUMIF, C_BLEN };

static int kw_interface(struct blk *b, const struct stmt *st,
			const struct kw_def *d)
{
	struct gd_config *cfg = b->model;
	struct blk ib = {
		.ps = b->ps, .def = &interface_block, .st = st, .ctx = b->ctx,
		.level = LV_ALT, .ci = b->ci,
	};
	struct gd_alt *alt;
	int rc;

	(void)d;
	rc = ps_no_args(b, st);
	if (rc)
		return rc;
	if (cfg->n_alts >= GD_MAX_ALTS)
		return ps_fail(b->ps, st->kw, "more than %d interface descriptors in one configuration",
			       GD_MAX_ALTS);
	alt = PUSH(cfg->alts, cfg->n_alts);
	if (!alt)
		return ps_oom(b->ps);
	alt->bNumEndpoints_override = -1;
	alt->bLength_override = -1;
	alt->line = st->kw->line;
	ib.model = alt;
	ib.idx = cfg->n_alts - 1;
	return ps_run_block(&ib) ?: interface_finish(&ib, cfg, ib.idx);
}

static int kw_iad(struct blk *b, const struct stmt *st, const struct kw_def *d)
{
	struct gd_config *cfg = b->model;
	struct cfg_ctx *cc = b->ctx;
	struct blk ab = {
		.ps = b->ps, .def = &iad_block, .st = st, .level = LV_IAD, .ci = b->ci,
	};
	struct gd_iad *iad;
	int rc;

	(void)d;
	rc = ps_no_args(b, st);
	if (rc)
		return rc;
	if (cfg->n_iads >= GD_MAX_IADS)
		return ps_fail(b->ps, st->kw, "more than %d iad blocks in one configuration",
			       GD_MAX_IADS);
	iad = PUSH(cfg->iads, cfg->n_iads);
	if (!iad)
		return ps_oom(b->ps);
	iad->bLength_override = -1;
	ab.model = iad;
	ab.idx = cfg->n_iads - 1;
	rc = ps_run_block(&ab);
	if (rc)
		return rc;
	if (!ab.seen[A_COUNT])
		return ps_fail(b->ps, st->kw, "iad: missing bInterfaceCount (required)");
	/* bFirstInterface is settled once the interfaces that follow are read */
	cc->iads[ab.idx].st = ab.seen[A_FIRST] ? ab.seen[A_FIRST] : st;
	cc->iads[ab.idx].alts_before = cfg->n_alts;
	return 0;
}

/* raw in a config: before any interface right after the configuration
 * descriptor, else after the last descriptor written so far */
static int kw_cfgraw(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_config *cfg = b->model;
	struct cur c = CUR(b->ps, st);
	struct gd_blob *dst = &cfg->extra;

	(void)d;
	if (cfg->n_alts) {
		struct gd_alt *alt = &cfg->alts[cfg->n_alts - 1];

		dst = alt->n_eps ? &alt->eps[alt->n_eps - 1].extra : &alt->extra;
	}
	return cur_bytes(&c, dst, true);
}

static const struct kw_def config_kws[] = {
	NUM("bConfigurationValue", struct gd_config, bConfigurationValue, 8, C_VALUE),
	NUM("bmAttributes", struct gd_config, bmAttributes, 8, C_ATTR),
	NUM("bMaxPower", struct gd_config, bMaxPower, 8, C_POWER),
	TEXT("configuration", struct gd_config, iConfiguration, C_STR),
	SIDX("iConfiguration", struct gd_config, iConfiguration, C_STR),
	OVR("wTotalLength", struct gd_config, wTotalLength_override, 16, C_TOTAL),
	OVR("bNumInterfaces", struct gd_config, bNumInterfaces_override, 8, C_NUMIF),
	OVR("bLength", struct gd_config, bLength_override, 8, C_BLEN),
	KW("raw", kw_cfgraw, NOBLK, -1, 0, 0),
	KW("iad", kw_iad, NEEDBLK, -1, 0, 0),
	KW("interface", kw_interface, NEEDBLK, -1, 0, 0),
};

static size_t config_bytes(const struct gd_config *cfg)
{
	size_t n = USB_DT_CONFIG_SIZE + cfg->extra.len, i, j;

	n += cfg->n_iads * USB_DT_INTERFACE_ASSOCIATION_SIZE;
	for (i = 0; i < cfg->n_alts; i++) {
		const struct gd_alt *alt = &cfg->alts[i];

		n += USB_DT_INTERFACE_SIZE + alt->extra.len;
		for (j = 0; j < alt->n_eps; j++)
			n += USB_DT_ENDPOINT_SIZE + alt->eps[j].extra.len +
			     (alt->eps[j].ss.present ? USB_DT_SS_EP_COMP_SIZE : 0);
	}
	return n;
}

static int config_finish(struct blk *b, struct gd_config *cfg)
{
	struct parser *ps = b->ps;
	struct gd_device *dev = ps->dev;
	struct cfg_ctx *cc = b->ctx;
	size_t i, j, k, total;

	if (!cfg->bConfigurationValue)
		return ps_fail(ps, blk_seen_val(b, C_VALUE, b->st->kw),
			       "bConfigurationValue: 0 means \"not configured\" and cannot name a configuration");
	for (i = 0; i + 1 < dev->n_configs; i++)
		if (dev->configs[i].bConfigurationValue == cfg->bConfigurationValue)
			return ps_fail(ps, blk_seen_val(b, C_VALUE, b->st->kw),
				       "bConfigurationValue %u is already used by configuration %zu",
				       cfg->bConfigurationValue, i + 1);

	for (i = 0; i < cfg->n_iads; i++) {
		struct gd_iad *iad = &cfg->iads[i];
		const struct stmt *st = cc->iads[i].st;

		if (!tok_is(st->kw, "bFirstInterface")) {
			/* default: the interface written right after it */
			if (cc->iads[i].alts_before >= cfg->n_alts)
				return ps_fail(ps, st->kw, "iad: no interface follows it: give bFirstInterface");
			iad->bFirstInterface =
				cfg->alts[cc->iads[i].alts_before].bInterfaceNumber;
			continue;
		}
		for (j = 0; j < cfg->n_alts; j++)
			if (cfg->alts[j].bInterfaceNumber == iad->bFirstInterface)
				break;
		if (j == cfg->n_alts)
			return ps_fail(ps, &st->args[0], "bFirstInterface: no interface %u in this configuration",
				       iad->bFirstInterface);
	}

	for (i = 0; i < cc->n_loops; i++) {
		const struct loop_ref *lr = &cc->loops[i];
		bool found = false;

		for (j = 0; j < cfg->n_alts; j++) {
			for (k = 0; k < cfg->alts[j].n_eps; k++) {
				const struct gd_endpoint *t = &cfg->alts[j].eps[k];
				unsigned int xfer = t->bmAttributes &
						    USB_ENDPOINT_XFERTYPE_MASK;

				if (t->bEndpointAddress != lr->addr)
					continue;
				found = true;
				if (xfer != USB_ENDPOINT_XFER_BULK &&
				    xfer != USB_ENDPOINT_XFER_INT)
					return ps_fail(ps, lr->tok, "loopback: 0x%02x is a %s endpoint (line %d): expected bulk or interrupt",
						       lr->addr, ps_xfer_name(xfer), t->line);
				if (t->beh.mode != GD_EP_DEFAULT)
					return ps_fail(ps, lr->tok, "loopback: 0x%02x has a behaviour of its own (line %d)",
						       lr->addr, t->line);
			}
		}
		if (!found)
			return ps_fail(ps, lr->tok, "loopback: no endpoint 0x%02x in this configuration",
				       lr->addr);
	}

	total = config_bytes(cfg);
	if (total > GD_DESC_MAX)
		return ps_fail(ps, b->st->kw, "config: its descriptors add up to %zu bytes, more than wTotalLength can count (%d)",
			       total, GD_DESC_MAX);
	return 0;
}

/* ---- control { .. } ---- */

enum { R_TYPE, R_REQ, R_VALUE, R_INDEX, R_ACTION, R_SHORT, R_DELAY, R_STALL,
	R_TIMES };

static int kw_match(struct blk *b, const struct stmt *st,
		    const struct kw_def *d)
{
	struct cur c = CUR(b->ps, st);
	int v = -1, rc = cur_num_or_star(&c, d->bits, &v) ?: cur_end(&c);

	if (!rc)
		*(int *)((char *)b->model + d->off) = v;
	return rc;
}

static int kw_action(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_ctrl_rule *r = b->model;
	struct cur c = CUR(b->ps, st);

	(void)d;
	if (tok_is(st->kw, "reply")) {
		r->action = GD_CTRL_REPLY;
		return cur_bytes(&c, &r->data, true);
	}
	r->action = tok_is(st->kw, "ack") ? GD_CTRL_ACK : GD_CTRL_STALL;
	return cur_end(&c);
}

static const struct kw_def control_kws[] = {
	KW("bmRequestType", kw_match, NOBLK, R_TYPE, 8,
	   offsetof(struct gd_ctrl_rule, bmRequestType)),
	KW("bRequest", kw_match, NOBLK, R_REQ, 8,
	   offsetof(struct gd_ctrl_rule, bRequest)),
	KW("wValue", kw_match, NOBLK, R_VALUE, 16,
	   offsetof(struct gd_ctrl_rule, wValue)),
	KW("wIndex", kw_match, NOBLK, R_INDEX, 16,
	   offsetof(struct gd_ctrl_rule, wIndex)),
	KW("reply", kw_action, NOBLK, R_ACTION, 0, 0),
	KW("ack", kw_action, NOBLK, R_ACTION, 0, 0),
	KW("stall", kw_action, NOBLK, R_ACTION, 0, 0),
	OVR("short", struct gd_ctrl_rule, short_len, 16, R_SHORT),
	NUM("delay", struct gd_ctrl_rule, delay_ms, 32, R_DELAY),
	KW("stall-nth", kw_nth, NOBLK, R_STALL, 0,
	   offsetof(struct gd_ctrl_rule, stall_nth)),
	KW("times", kw_nth, NOBLK, R_TIMES, 0,
	   offsetof(struct gd_ctrl_rule, times)),
};

/* ---- bos { .. } ---- */

enum { B_GEN, B_TOTAL, B_NCAPS, B_BLEN, B_TYPE };

static int kw_bosraw(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_bos *bos = b->model;
	struct cur c = CUR(b->ps, st);

	(void)d;
	return cur_bytes(&c, &bos->extra, true);
}

static const struct kw_def bos_kws[] = {
	KW("generated", kw_onoff, NOBLK, B_GEN, 0,
	   offsetof(struct gd_bos, generated_caps)),
	KW("raw", kw_bosraw, NOBLK, -1, 0, 0),
	OVR("wTotalLength", struct gd_bos, wTotalLength_override, 16, B_TOTAL),
	OVR("bNumDeviceCaps", struct gd_bos, bNumDeviceCaps_override, 8, B_NCAPS),
	OVR("bLength", struct gd_bos, bLength_override, 8, B_BLEN),
	OVR("bDescriptorType", struct gd_bos, bDescriptorType_override, 8,
	    B_TYPE),
};

/* ---- device { .. } ---- */

enum { D_NAME, D_SPEED, D_BCDUSB, D_CLASS, D_SUB, D_PROTO, D_MPS0, D_VID,
	D_PID, D_BCDDEV, D_MANUF, D_PRODUCT, D_SERIAL, D_NUMCFG, D_BLEN,
	D_LANGIDS, D_QUAL, D_BOS, D_FUNC, D_NSLOTS };
_Static_assert(D_NSLOTS <= MAX_SLOTS, "MAX_SLOTS too small");

struct dev_ctx {
	const struct tok *faults[2];
};

static int kw_name(struct blk *b, const struct stmt *st,
		   const struct kw_def *d)
{
	struct gd_device *dev = b->model;
	struct cur c = CUR(b->ps, st);
	const struct tok *t;
	size_t i;
	int rc = cur_text(&c, &t) ?: cur_end(&c);

	(void)d;
	if (rc)
		return rc;
	if (!t->len || t->len > SCRIPT_MAX_NAME)
		return ps_fail(b->ps, t, "name: must be 1 to %d bytes long",
			       SCRIPT_MAX_NAME);
	for (i = 0; i < t->len; i++)
		if ((unsigned char)t->text[i] < ' ')
			return ps_fail(b->ps, t, "name: no control characters");
	dev->name = strndup(t->text, t->len);
	return dev->name ? 0 : ps_oom(b->ps);
}

static int kw_speed(struct blk *b, const struct stmt *st,
		    const struct kw_def *d)
{
	static const char *const names[] = {
		"low", "full", "high", "super", NULL,
	};
	static const enum usbip_speed speeds[] = {
		USBIP_SPEED_LOW, USBIP_SPEED_FULL, USBIP_SPEED_HIGH,
		USBIP_SPEED_SUPER,
	};
	struct gd_device *dev = b->model;
	struct cur c = CUR(b->ps, st);
	int i, rc = cur_choice(&c, names, &i) ?: cur_end(&c);

	(void)d;
	if (!rc)
		dev->speed = speeds[i];
	return rc;
}

static int kw_langids(struct blk *b, const struct stmt *st,
		      const struct kw_def *d)
{
	struct gd_device *dev = b->model;
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int rc;

	(void)d;
	do {
		if (dev->n_langids == GD_MAX_LANGIDS && cur_peek(&c))
			return ps_fail(b->ps, cur_peek(&c), "langids: more than %d LANGIDs",
				       GD_MAX_LANGIDS);
		rc = cur_num(&c, 16, &v);
		if (rc)
			return rc;
		dev->langids[dev->n_langids++] = (uint16_t)v;
	} while (cur_peek(&c));
	return 0;
}

static int kw_string(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct parser *ps = b->ps;
	struct gd_device *dev = b->model;
	struct cur c = CUR(ps, st);
	const struct tok *idx_tok = cur_peek(&c), *t;
	uint32_t idx;
	int rc;

	(void)d;
	rc = cur_num(&c, 8, &idx);
	if (rc)
		return rc;
	if (!idx)
		return ps_fail(ps, idx_tok, "string: index 0 is reserved for the LANGID table");
	if (ps->str_set[idx])
		return ps_fail(ps, idx_tok, "string: index %u is already used (line %d)",
			       idx, ps->str_set[idx]->line);
	ps->str_set[idx] = idx_tok;
	t = cur_peek(&c);
	if (t && tok_is(t, "raw")) {
		c.i++;
		return cur_bytes(&c, &dev->string_raw[idx], true);
	}
	if (t && t->kind != T_STRING)
		return ps_fail(ps, t, "string: expected a quoted string or 'raw' and hex bytes, found %s",
			       tok_desc(t).s);
	rc = cur_text(&c, &t) ?: cur_end(&c);
	if (rc)
		return rc;
	dev->strings[idx] = strndup(t->text, t->len);
	return dev->strings[idx] ? 0 : ps_oom(ps);
}

static int kw_bos(struct blk *b, const struct stmt *st, const struct kw_def *d)
{
	struct gd_device *dev = b->model;
	struct cur c = CUR(b->ps, st);
	struct blk bb = {
		.ps = b->ps, .def = &bos_block, .st = st, .model = &dev->bos,
	};
	int i = 1, rc;

	(void)d;
	if (st->open) {
		dev->bos.present = true;
		return cur_end(&c) ?: ps_run_block(&bb);
	}
	rc = cur_choice(&c, ps_on_off, &i) ?: cur_end(&c);
	dev->bos.present = i == 0;
	return rc;
}

static int kw_config(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct gd_device *dev = b->model;
	struct cfg_ctx cc = { .loops = NULL };
	struct blk cb = {
		.ps = b->ps, .def = &config_block, .st = st, .ctx = &cc,
		.level = LV_CONFIG, .ci = dev->n_configs,
	};
	struct gd_config *cfg;
	int rc;

	(void)d;
	rc = ps_no_args(b, st);
	if (rc)
		return rc;
	if (dev->n_configs >= GD_MAX_CONFIGS)
		return ps_fail(b->ps, st->kw, "more than %d configurations",
			       GD_MAX_CONFIGS);
	cfg = PUSH(dev->configs, dev->n_configs);
	if (!cfg)
		return ps_oom(b->ps);
	cfg->bConfigurationValue = (uint8_t)dev->n_configs;
	cfg->bmAttributes = USB_CONFIG_ATT_ONE;
	cfg->bMaxPower = 50;
	cfg->wTotalLength_override = -1;
	cfg->bNumInterfaces_override = -1;
	cfg->bLength_override = -1;
	cb.model = cfg;
	rc = ps_run_block(&cb) ?: config_finish(&cb, cfg);
	free(cc.loops);
	return rc;
}

static int kw_control(struct blk *b, const struct stmt *st,
		      const struct kw_def *d)
{
	struct gd_device *dev = b->model;
	struct blk rb = { .ps = b->ps, .def = &control_block, .st = st };
	struct gd_ctrl_rule *r;
	int rc;

	(void)d;
	rc = ps_no_args(b, st);
	if (rc)
		return rc;
	if (dev->n_rules >= GD_MAX_RULES)
		return ps_fail(b->ps, st->kw, "more than %d control rules",
			       GD_MAX_RULES);
	r = PUSH(dev->rules, dev->n_rules);
	if (!r)
		return ps_oom(b->ps);
	r->bmRequestType = -1;
	r->bRequest = -1;
	r->wValue = -1;
	r->wIndex = -1;
	r->short_len = -1;
	r->line = st->kw->line;
	rb.model = r;
	rc = ps_run_block(&rb);
	if (rc)
		return rc;
	if (!rb.seen[R_ACTION])
		return ps_fail(b->ps, st->kw, "control: needs an action: reply, ack or stall");
	if (rb.seen[R_SHORT] && r->action != GD_CTRL_REPLY)
		return ps_fail(b->ps, rb.seen[R_SHORT]->kw, "short: only applies to reply");
	return 0;
}

static int kw_fault(struct blk *b, const struct stmt *st,
		    const struct kw_def *d)
{
	static const char *const kinds[] = {
		"disconnect-after-urbs", "disconnect-after-ms", NULL,
	};
	struct gd_device *dev = b->model;
	struct dev_ctx *dc = b->ctx;
	struct cur c = CUR(b->ps, st);
	uint32_t v;
	int i, rc;

	(void)d;
	rc = cur_choice(&c, kinds, &i);
	if (rc)
		return rc;
	if (dc->faults[i])
		return ps_fail(b->ps, &st->args[0], "fault %s is set twice (first at line %d)",
			       kinds[i], dc->faults[i]->line);
	dc->faults[i] = &st->args[0];
	rc = cur_num(&c, 32, &v) ?: cur_end(&c);
	if (rc)
		return rc;
	if (!v)
		return ps_fail(b->ps, &st->args[1], "fault %s: must be at least 1",
			       kinds[i]);
	if (i == 0)
		dev->faults.disconnect_after_urbs = v;
	else
		dev->faults.disconnect_after_ms = v;
	return 0;
}

/* one `key value...` line of a function block; the value is the rest of
 * the statement as written (tokens joined by one space), or a lone quoted
 * string decoded; args are the tokens decoded (gd_fn_arg) */
static int function_opt(struct parser *ps, const struct stmt *s,
			struct gd_fn_opt *opt)
{
	const struct tok *first = s->n_args ? &s->args[0] : s->kw;
	size_t i, n = 0;

	opt->line = first->line;
	opt->col = first->col;
	opt->key = strndup(s->kw->text, s->kw->len);
	if (!opt->key)
		return ps_oom(ps);
	opt->args = calloc(s->n_args ? s->n_args : 1, sizeof(*opt->args));
	if (!opt->args)
		return ps_oom(ps);
	for (i = 0; i < s->n_args; i++) {
		struct gd_fn_arg *a = &opt->args[i];

		a->text = malloc(s->args[i].len + 1);
		if (!a->text)
			return ps_oom(ps);
		memcpy(a->text, s->args[i].text, s->args[i].len);
		a->text[s->args[i].len] = 0;
		a->len = s->args[i].len;
		a->quoted = s->args[i].kind == T_STRING;
		a->col = s->args[i].col;
		opt->n_args++;
	}
	if (s->n_args == 1 && first->kind == T_STRING) {
		if (memchr(first->text, 0, first->len))
			return ps_fail(ps, first, "%s: a NUL byte cannot be part of an option value",
				       tok_text(s->kw).s);
		opt->value = strndup(first->text, first->len);
		return opt->value ? 0 : ps_oom(ps);
	}
	for (i = 0; i < s->n_args; i++)
		n += s->args[i].src_len + 1;
	opt->value = malloc(n + 1);
	if (!opt->value)
		return ps_oom(ps);
	for (i = 0, n = 0; i < s->n_args; i++) {
		if (i)
			opt->value[n++] = ' ';
		memcpy(opt->value + n, s->args[i].src, s->args[i].src_len);
		n += s->args[i].src_len;
	}
	opt->value[n] = 0;
	return 0;
}

/* function NAME [{ key value... }]: a built-in device function
 * (function.h); its options are checked by the function itself */
static int kw_function(struct blk *b, const struct stmt *st,
		       const struct kw_def *d)
{
	struct parser *ps = b->ps;
	struct gd_device *dev = b->model;
	struct cur c = CUR(ps, st);
	const struct tok *name = cur_peek(&c);
	size_t i, j;
	int rc;

	(void)d;
	if (!name)
		return ps_fail(ps, st->kw, "function: missing value: expected the name of a device function");
	if (name->kind != T_WORD)
		return ps_fail(ps, name, "function: expected the name of a device function, found %s",
			       tok_desc(name).s);
	c.i++;
	rc = cur_end(&c);
	if (rc)
		return rc;
	dev->function = strndup(name->text, name->len);
	if (!dev->function)
		return ps_oom(ps);
	dev->function_line = name->line;
	dev->function_col = name->col;
	if (!fn_exists(dev->function)) {
		char list[200];

		return ps_fail(ps, name, "function: no device function '%s' (there are: %s)",
			       tok_text(name).s, fn_names(list, sizeof(list)));
	}
	if (!st->open)
		return 0;
	dev->function_opts = calloc(st->n_body ? st->n_body : 1,
				    sizeof(*dev->function_opts));
	if (!dev->function_opts)
		return ps_oom(ps);
	for (i = 0; i < st->n_body; i++) {
		const struct stmt *s = &st->body[i];

		if (s->open)
			return ps_fail(ps, s->open, "function options take no block");
		for (j = 0; j < i; j++)
			if (s->kw->len == st->body[j].kw->len &&
			    !memcmp(s->kw->text, st->body[j].kw->text, s->kw->len))
				return ps_fail(ps, s->kw, "%s is set twice (first at line %d)",
					       tok_text(s->kw).s,
					       st->body[j].kw->line);
		dev->n_function_opts++;
		rc = function_opt(ps, s, &dev->function_opts[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static const struct kw_def device_kws[] = {
	KW("name", kw_name, NOBLK, D_NAME, 0, 0),
	{ .name = "speed", .fn = kw_speed, .slot = D_SPEED, .early = true },
	NUM("bcdUSB", struct gd_device, bcdUSB, 16, D_BCDUSB),
	NUM("bDeviceClass", struct gd_device, bDeviceClass, 8, D_CLASS),
	NUM("bDeviceSubClass", struct gd_device, bDeviceSubClass, 8, D_SUB),
	NUM("bDeviceProtocol", struct gd_device, bDeviceProtocol, 8, D_PROTO),
	NUM("bMaxPacketSize0", struct gd_device, bMaxPacketSize0, 8, D_MPS0),
	NUM("idVendor", struct gd_device, idVendor, 16, D_VID),
	NUM("idProduct", struct gd_device, idProduct, 16, D_PID),
	NUM("bcdDevice", struct gd_device, bcdDevice, 16, D_BCDDEV),
	TEXT("manufacturer", struct gd_device, iManufacturer, D_MANUF),
	SIDX("iManufacturer", struct gd_device, iManufacturer, D_MANUF),
	TEXT("product", struct gd_device, iProduct, D_PRODUCT),
	SIDX("iProduct", struct gd_device, iProduct, D_PRODUCT),
	TEXT("serial", struct gd_device, iSerialNumber, D_SERIAL),
	SIDX("iSerialNumber", struct gd_device, iSerialNumber, D_SERIAL),
	OVR("bNumConfigurations", struct gd_device, bNumConfigurations_override, 8, D_NUMCFG),
	OVR("bLength", struct gd_device, bLength_override, 8, D_BLEN),
	KW("langids", kw_langids, NOBLK, D_LANGIDS, 0, 0),
	KW("string", kw_string, NOBLK, -1, 0, 0),
	KW("qualifier", kw_onoff, NOBLK, D_QUAL, 0,
	   offsetof(struct gd_device, qualifier)),
	KW("bos", kw_bos, OPTBLK, D_BOS, 0, 0),
	KW("config", kw_config, NEEDBLK, -1, 0, 0),
	KW("control", kw_control, NEEDBLK, -1, 0, 0),
	KW("fault", kw_fault, NOBLK, -1, 0, 0),
	KW("function", kw_function, OPTBLK, D_FUNC, 0, 0),
};

/* hand out string indices to text fields, in script order, skipping every
 * index the script names explicitly */
static int assign_strings(struct parser *ps)
{
	struct gd_device *dev = ps->dev;
	bool used[256];
	size_t i, next = 1;

	for (i = 0; i < 256; i++)
		used[i] = ps->str_set[i] || ps->str_named[i];
	for (i = 0; i < ps->n_pend; i++) {
		const struct pending_str *p = &ps->pend[i];
		char *base;

		while (next < 256 && used[next])
			next++;
		if (next == 256)
			return ps_fail(ps, p->tok, "no free string index left for this string (1..255 are taken)");
		used[next] = true;
		switch (p->level) {
		case LV_DEVICE:
			base = (char *)dev;
			break;
		case LV_CONFIG:
			base = (char *)&dev->configs[p->ci];
			break;
		case LV_ALT:
			base = (char *)&dev->configs[p->ci].alts[p->idx];
			break;
		default:
			base = (char *)&dev->configs[p->ci].iads[p->idx];
			break;
		}
		*(uint8_t *)(base + p->off) = (uint8_t)next;
		dev->strings[next] = strndup(p->tok->text, p->tok->len);
		if (!dev->strings[next])
			return ps_oom(ps);
	}
	return 0;
}

/* "dir/vendor-bulk.gadget" -> "vendor-bulk" */
static char *name_from_path(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > 7 && !strcmp(base + n - 7, ".gadget"))
		n -= 7;
	if (!n)
		return strdup("gadget");
	return strndup(base, n);
}

static int device_finish(struct blk *b)
{
	struct parser *ps = b->ps;
	struct gd_device *dev = ps->dev;
	size_t i;
	int rc;

	if (!b->seen[D_VID])
		return ps_fail(ps, b->st->kw, "device: missing idVendor (required)");
	if (!b->seen[D_PID])
		return ps_fail(ps, b->st->kw, "device: missing idProduct (required)");
	if (!dev->n_configs)
		return ps_fail(ps, b->st->kw, "device: needs at least one config block");

	if (!b->seen[D_BCDUSB])
		dev->bcdUSB = dev->speed == USBIP_SPEED_SUPER ? 0x0320 :
			      dev->speed == USBIP_SPEED_HIGH ? 0x0200 : 0x0110;
	if (!b->seen[D_MPS0])
		dev->bMaxPacketSize0 = dev->speed == USBIP_SPEED_SUPER ? 9 :
				       dev->speed == USBIP_SPEED_LOW ? 8 : 64;
	if (!b->seen[D_QUAL])
		dev->qualifier = dev->speed == USBIP_SPEED_HIGH;
	if (!b->seen[D_BOS])
		dev->bos.present = dev->bcdUSB >= 0x0201;

	rc = assign_strings(ps);
	if (rc)
		return rc;
	if (!b->seen[D_LANGIDS]) {
		for (i = 1; i < 256; i++)
			if (dev->strings[i] || dev->string_raw[i].len)
				break;
		if (i < 256) {
			dev->langids[0] = 0x0409;	/* English (United States) */
			dev->n_langids = 1;
		}
	}
	if (!dev->name) {
		dev->name = name_from_path(ps->name);
		if (!dev->name)
			return ps_oom(ps);
	}
	return 0;
}

static int kw_device(struct blk *b, const struct stmt *st,
		     const struct kw_def *d)
{
	struct dev_ctx dc = { .faults = { NULL } };
	struct blk db = {
		.ps = b->ps, .def = &device_block, .st = st, .model = b->ps->dev,
		.ctx = &dc, .level = LV_DEVICE,
	};

	(void)d;
	return ps_no_args(b, st) ?: ps_run_block(&db) ?: device_finish(&db);
}

static const struct kw_def top_kws[] = {
	KW("device", kw_device, NEEDBLK, 0, 0, 0),
};

const struct block_def script_top_block = BLOCK("the top level of the file, where only 'device' goes", top_kws);
static const struct block_def device_block = BLOCK("the device block", device_kws);
static const struct block_def config_block = BLOCK("a config block", config_kws);
static const struct block_def interface_block = BLOCK("an interface block", interface_kws);
static const struct block_def endpoint_block = BLOCK("an endpoint block", endpoint_kws);
static const struct block_def iad_block = BLOCK("an iad block", iad_kws);
static const struct block_def companion_block = BLOCK("a companion block", companion_kws);
static const struct block_def sequence_block = BLOCK("a sequence block", sequence_kws);
static const struct block_def control_block = BLOCK("a control block", control_kws);
static const struct block_def bos_block = BLOCK("a bos block", bos_kws);

/* for "X is a keyword of Y" */
static const struct block_def *const all_blocks[] = {
	&script_top_block, &device_block, &config_block, &interface_block,
	&endpoint_block, &iad_block, &companion_block, &sequence_block,
	&control_block, &bos_block,
};
static const size_t n_all_blocks = sizeof(all_blocks) / sizeof(all_blocks[0]);

/* edit distance, for "did you mean"; large when not worth computing */
static size_t edit_distance(const char *a, size_t na, const char *b)
{
	size_t row[48], nb = strlen(b), i, j;

	if (na >= 40 || nb >= 40)
		return 99;
	for (j = 0; j <= nb; j++)
		row[j] = j;
	for (i = 1; i <= na; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= nb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[nb];
}

int ps_unknown_keyword(struct blk *b, const struct stmt *st)
{
	const struct block_def *bd = b->def;
	const char *best = NULL;
	size_t i, dist = 3;

	for (i = 0; i < n_all_blocks; i++)
		if (all_blocks[i] != bd && kw_lookup(all_blocks[i], st->kw))
			return ps_fail(b->ps, st->kw, "'%s' does not belong in %s (it is a keyword of %s)",
				       tok_text(st->kw).s, bd->name,
				       all_blocks[i]->name);
	for (i = 0; i < bd->n; i++) {
		size_t d = edit_distance(st->kw->text, st->kw->len,
					 bd->kws[i].name);

		if (d < dist) {
			dist = d;
			best = bd->kws[i].name;
		}
	}
	if (best && st->kw->len > 3)
		return ps_fail(b->ps, st->kw, "unknown keyword '%s' in %s; did you mean '%s'?",
			       tok_text(st->kw).s, bd->name, best);
	return ps_fail(b->ps, st->kw, "unknown keyword '%s' in %s",
		       tok_text(st->kw).s, bd->name);
}
