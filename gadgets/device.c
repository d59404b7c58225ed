// SPDX-License-Identifier: GPL-2.0
/*
 * device.c - one gadget at run time: URB dispatch, endpoint behaviours,
 * delayed completions and faults.  device.h has the contract.
 *
 * Rules this file keeps (NOTES.md, "USB/IP wire facts"):
 * - every endpoint has its own queue: a NAKing interrupt IN never holds up
 *   bulk, and nothing here handles URBs one at a time globally;
 * - an IN reply never exceeds urb->length;
 * - a URB is either in exactly one list (an endpoint queue, ep0_pending or
 *   delayed, linked through urb->next) or already given to host->complete,
 *   so gdev_unlink() and gdev_detach() find every URB the device still owns.
 *
 * Decisions:
 * - SET_CONFIGURATION and SET_INTERFACE disable the endpoints they replace:
 *   URBs still queued there complete with -ESHUTDOWN (Linux flushes and
 *   unlinks them before it sends either request, so this only answers a
 *   client that did not).  URBs already waiting on a delay timer complete
 *   as decided.  The endpoint's halt, fifo, sequence position, source
 *   offset and stall_nth count start over.
 * - A halt (SET_FEATURE(ENDPOINT_HALT) or stall_nth) fails the URBs
 *   submitted while it lasts with -EPIPE; URBs already queued stay queued
 *   (NAK) and are served again after CLEAR_FEATURE(ENDPOINT_HALT).
 *   CLEAR_FEATURE does not reset the stall_nth count: the fault fires once
 *   per configuration/alternate setting.
 * - Halt and stall_nth do not apply to isochronous endpoints (no handshake).
 * - Loopback: the IN endpoint named by loop_to serves its fifo when its own
 *   mode is DEFAULT or LOOPBACK.  An OUT URB is taken whole or not at all;
 *   into an empty fifo it is always taken (so one URB larger than
 *   GDEV_FIFO_MAX cannot deadlock; the fifo is then bounded by
 *   USBIP_MAX_TRANSFER).  A zero-length OUT adds nothing.  An OUT endpoint
 *   whose loop_to is not active sinks its data (logged).
 * - A rule's delay_ms delays whatever the rule answers, STALL included;
 *   an endpoint's delay_ms delays data completions, not -EPIPE ones.
 * - host->complete() must not call back into gdev_* (the device may be in
 *   the middle of walking a queue).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <event2/event.h>
#include <linux/usb/ch9.h>

#include "device.h"
#include "fn/function.h"
#include "log.h"
#include "stdreq.h"
#include "stream.h"

#define DIR_OUT	0
#define DIR_IN	1

static size_t min_sz(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* ---- URB lists ---- */

static struct urb *list_remove(struct urb **head, uint32_t seqnum)
{
	struct urb **pp, *urb;

	for (pp = head; (urb = *pp); pp = &urb->next) {
		if (urb->seqnum == seqnum) {
			*pp = urb->next;
			urb->next = NULL;
			return urb;
		}
	}
	return NULL;
}

static struct urb **delay_list(struct gdev *dev, const struct urb *urb)
{
	return urb->ep == 0 ? &dev->ep0_pending : &dev->delayed;
}

/* ---- completion ---- */

/* The server logs the one -v line per URB (with the busid); not here. */
static void urb_report(struct gdev *dev, struct urb *urb)
{
	urb->next = NULL;
	dev->host->complete(dev->host_ctx, urb);
}

static void delay_cb(evutil_socket_t fd, short what, void *arg)
{
	struct urb *urb = arg;
	struct gdev *dev = urb->dev;
	struct urb **pp;

	(void)fd;
	(void)what;
	/* by pointer: a confused client may reuse a seqnum */
	for (pp = delay_list(dev, urb); *pp; pp = &(*pp)->next) {
		if (*pp == urb) {
			*pp = urb->next;
			break;
		}
	}
	event_free(urb->timer);
	urb->timer = NULL;
	urb_report(dev, urb);
}

/* Set the outcome; report it now, or delay_ms later from the event loop. */
static void urb_finish(struct gdev *dev, struct urb *urb, int status,
		       uint32_t actual, uint32_t delay_ms)
{
	urb->status = status;
	urb->actual_length = actual;
	if (delay_ms) {
		struct timeval tv = {
			.tv_sec = delay_ms / 1000,
			.tv_usec = (delay_ms % 1000) * 1000,
		};
		struct urb **list = delay_list(dev, urb);

		urb->timer = evtimer_new(dev->base, delay_cb, urb);
		if (urb->timer && !evtimer_add(urb->timer, &tv)) {
			urb->next = *list;
			*list = urb;
			return;
		}
		if (urb->timer)
			event_free(urb->timer);
		urb->timer = NULL;
		log_warn("urb seq=%u: no timer, completing without the delay",
			 urb->seqnum);
	}
	urb_report(dev, urb);
}

void gdev_complete(struct gdev *dev, struct urb *urb, int status,
		   uint32_t actual)
{
	urb_finish(dev, urb, status, actual, 0);
}

/* ---- endpoint state ---- */

static uint32_t ep_delay(const struct gdev_ep *ep)
{
	return ep->desc ? ep->desc->beh.delay_ms : 0;
}

static bool ep_is_in(const struct gdev_ep *ep)
{
	return ep->desc && (ep->desc->bEndpointAddress & USB_DIR_IN);
}

static int ep_type(const struct gdev_ep *ep)
{
	return ep->desc->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK;
}

/* Forget everything but the queue (which the caller has emptied). */
static void ep_reset(struct gdev_ep *ep, const struct gd_endpoint *desc)
{
	if (ep->iso_timer)
		event_free(ep->iso_timer);
	free(ep->fifo);
	memset(ep, 0, sizeof(*ep));
	gdev_urbq_init(&ep->pending);
	ep->desc = desc;
}

/* The endpoint leaves the active configuration: see "Decisions". */
static void ep_disable(struct gdev *dev, struct gdev_ep *ep)
{
	struct urb *urb;

	while ((urb = gdev_urbq_pop(&ep->pending)))
		urb_finish(dev, urb, -ESHUTDOWN, 0, 0);
	ep_reset(ep, NULL);
}

/* ---- SOURCE data, continued across URBs and iso packets ---- */

static void fill_pattern(struct gdev_ep *ep, uint8_t *dst, size_t n)
{
	const struct gd_blob *pat = &ep->desc->beh.pattern;
	size_t off, chunk;

	if (!n)
		return;
	if (!pat->len) {
		memset(dst, 0, n);
		return;
	}
	off = ep->source_off % pat->len;
	ep->source_off += n;
	while (n) {
		chunk = min_sz(n, pat->len - off);
		memcpy(dst, pat->data + off, chunk);
		dst += chunk;
		n -= chunk;
		off = 0;
	}
}

/* The next n bytes of the endpoint's source (GD_SRC_*), at source_off. */
static void fill_source(struct gdev *dev, struct gdev_ep *ep, uint8_t *dst,
			size_t n)
{
	const struct gd_ep_behaviour *beh = &ep->desc->beh;

	if (beh->mode != GD_EP_SOURCE || beh->src == GD_SRC_PATTERN) {
		fill_pattern(ep, dst, n);
		return;
	}
	if (beh->src == GD_SRC_FILE)
		gdev_file_read(gdev_file_of(dev, ep->desc), beh->file_repeat,
			       &ep->source_off, dst, n);
	else
		stream_fill(beh, &ep->source_off, dst, n);
}

/* A SINK endpoint's data goes to its file, if it has one. */
static void sink_data(struct gdev *dev, struct gdev_ep *ep,
		      const uint8_t *src, size_t n)
{
	if (ep->desc->beh.mode == GD_EP_SINK && ep->desc->beh.path && n)
		gdev_file_write(gdev_file_of(dev, ep->desc), src, n);
}

/* ---- loopback fifo (lives on the IN endpoint) ---- */

static bool fifo_fits(const struct gdev_ep *in, size_t n)
{
	return in->fifo_len == 0 || in->fifo_len + n <= GDEV_FIFO_MAX;
}

static int fifo_put(struct gdev_ep *in, const uint8_t *src, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (!n)
		return 0;
	if (in->fifo_head + in->fifo_len + n > in->fifo_cap) {
		if (in->fifo_head && in->fifo_len)
			memmove(in->fifo, in->fifo + in->fifo_head,
				in->fifo_len);
		in->fifo_head = 0;
	}
	if (in->fifo_len + n > in->fifo_cap) {
		/* bounded: fifo_fits() admits at most
		 * max(GDEV_FIFO_MAX, USBIP_MAX_TRANSFER) bytes */
		cap = in->fifo_cap ? in->fifo_cap : 4096;
		while (cap < in->fifo_len + n)
			cap *= 2;
		p = realloc(in->fifo, cap);
		if (!p)
			return -ENOMEM;
		in->fifo = p;
		in->fifo_cap = cap;
	}
	memcpy(in->fifo + in->fifo_head + in->fifo_len, src, n);
	in->fifo_len += n;
	return 0;
}

static size_t fifo_get(struct gdev_ep *in, uint8_t *dst, size_t n)
{
	n = min_sz(n, in->fifo_len);
	if (!n)
		return 0;
	memcpy(dst, in->fifo + in->fifo_head, n);
	in->fifo_head += n;
	in->fifo_len -= n;
	if (!in->fifo_len)
		in->fifo_head = 0;
	return n;
}

static struct gdev_ep *loop_target(struct gdev *dev, struct gdev_ep *out)
{
	uint8_t addr = out->desc->beh.loop_to;
	struct gdev_ep *in;

	if (!(addr & USB_DIR_IN) || !(addr & USB_ENDPOINT_NUMBER_MASK))
		return NULL;
	in = &dev->ep[DIR_IN][addr & USB_ENDPOINT_NUMBER_MASK];
	return in->desc ? in : NULL;
}

static bool is_fifo_consumer(const struct gdev_ep *in)
{
	return in->desc && (in->desc->beh.mode == GD_EP_DEFAULT ||
			    in->desc->beh.mode == GD_EP_LOOPBACK);
}

/* Move queued OUT URBs into the target's fifo while they fit. */
static bool loop_out_run(struct gdev *dev, struct gdev_ep *out,
			 struct gdev_ep *in)
{
	bool progress = false;
	struct urb *urb;

	while (!out->halted && (urb = out->pending.head) &&
	       fifo_fits(in, urb->length)) {
		gdev_urbq_pop(&out->pending);
		if (fifo_put(in, urb->buf, urb->length))
			urb_finish(dev, urb, -ENOMEM, 0, 0);
		else
			urb_finish(dev, urb, 0, urb->length, ep_delay(out));
		progress = true;
	}
	return progress;
}

/*
 * Serve queued IN URBs from the fifo, in order.  Each takes what is there
 * up to its length: a bulk/interrupt transfer ends on a short packet, so
 * a partial answer is a complete one.
 */
static bool in_drain(struct gdev *dev, struct gdev_ep *in)
{
	bool progress = false;
	struct urb *urb;
	size_t n;

	if (!is_fifo_consumer(in))
		return false;
	while (!in->halted && in->pending.head && in->fifo_len) {
		urb = gdev_urbq_pop(&in->pending);
		n = fifo_get(in, urb->buf, urb->length);
		urb_finish(dev, urb, 0, n, ep_delay(in));
		progress = true;
	}
	return progress;
}

/* Run the IN endpoint and every OUT endpoint feeding it until stuck. */
static void loop_pump(struct gdev *dev, struct gdev_ep *in)
{
	struct gdev_ep *out;
	bool progress;
	int i;

	do {
		progress = in_drain(dev, in);
		for (i = 1; i < 16; i++) {
			out = &dev->ep[DIR_OUT][i];
			if (out->desc && out->desc->beh.mode == GD_EP_LOOPBACK &&
			    loop_target(dev, out) == in)
				progress |= loop_out_run(dev, out, in);
		}
	} while (progress);
}

/* ---- SEQUENCE ---- */

static void seq_run(struct gdev *dev, struct gdev_ep *ep)
{
	const struct gd_ep_behaviour *beh = &ep->desc->beh;
	const struct gd_blob *pkt;
	struct urb *urb;
	size_t n;

	while (!ep->halted && ep->pending.head) {
		if (ep->seq_pos >= beh->n_packets) {
			if (!beh->repeat || !beh->n_packets)
				return;		/* NAK from now on */
			ep->seq_pos = 0;
		}
		pkt = &beh->packets[ep->seq_pos++];
		urb = gdev_urbq_pop(&ep->pending);
		n = min_sz(pkt->len, urb->length);
		if (n)
			memcpy(urb->buf, pkt->data, n);
		/* babble: the packet did not fit the buffer */
		urb_finish(dev, urb, pkt->len > urb->length ? -EOVERFLOW : 0,
			   n, ep_delay(ep));
	}
}

/* Serve whatever an endpoint's queue can take now. */
static void ep_kick(struct gdev *dev, struct gdev_ep *ep)
{
	struct gdev_ep *in;

	if (!ep->desc)
		return;
	if (ep_is_in(ep)) {
		if (ep->desc->beh.mode == GD_EP_SEQUENCE)
			seq_run(dev, ep);
		else if (is_fifo_consumer(ep))
			loop_pump(dev, ep);
	} else if (ep->desc->beh.mode == GD_EP_LOOPBACK) {
		in = loop_target(dev, ep);
		if (in)
			loop_pump(dev, in);
	}
}

static void kick_all(struct gdev *dev)
{
	int d, i;

	for (d = 0; d < 2; d++)
		for (i = 1; i < 16; i++)
			ep_kick(dev, &dev->ep[d][i]);
}

/* ---- isochronous ---- */

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void iso_arm(struct gdev_ep *ep, uint64_t now)
{
	uint64_t us = ep->pending.head->due_us - now;
	struct timeval tv = { .tv_sec = us / 1000000, .tv_usec = us % 1000000 };

	if (evtimer_add(ep->iso_timer, &tv))
		log_err("ep 0x%02x: cannot arm the isochronous timer",
			ep->desc->bEndpointAddress);
}

/* Complete the URBs that are due, oldest first; wait for the next one. */
static void iso_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gdev_ep *ep = arg;
	uint64_t now = mono_us();
	struct urb *urb;

	(void)fd;
	(void)what;
	while (ep->pending.head && ep->pending.head->due_us <= now) {
		urb = gdev_urbq_pop(&ep->pending);
		urb_report(urb->dev, urb);
	}
	if (ep->pending.head)
		iso_arm(ep, now);
}

/*
 * An isochronous URB of n packets takes n service intervals, as on a real
 * bus: it completes when its last interval ends, counted from the end of
 * the URB queued before it.  A host that falls behind (nothing queued for
 * the current interval) starts the count again from now, as a device
 * cannot move data in intervals the host gave it no packet for.
 *
 * The URBs wait in the endpoint's queue (so unlink and a new alternate
 * setting find them) and one timer completes them in order: a timer per
 * URB would not keep the order, as libevent counts each one from the time
 * it cached for its loop iteration, and the data went out at submission.
 */
static void iso_finish(struct gdev *dev, struct gdev_ep *ep, struct urb *urb,
		       uint32_t actual, uint64_t span_us)
{
	uint64_t now = mono_us();

	urb->status = 0;
	urb->actual_length = actual;
	if (ep->iso_due_us < now)
		ep->iso_due_us = now;
	ep->iso_due_us += span_us;
	urb->due_us = ep->iso_due_us;
	if (!ep->iso_timer)
		ep->iso_timer = evtimer_new(dev->base, iso_timer_cb, ep);
	if (!ep->iso_timer) {
		log_warn("ep 0x%02x: no timer, completing at once",
			 ep->desc->bEndpointAddress);
		urb_report(dev, urb);
		return;
	}
	gdev_urbq_push(&ep->pending, urb);
	if (ep->pending.head == urb)
		iso_arm(ep, now);
}

/*
 * An isochronous endpoint's `sizes file`: each packet's actual length of
 * urb, one decimal a line, in order (whole, the length of an URB without
 * a packet list), written in as few writes as fit a buffer.  Called before
 * iso_finish(), which may complete (and free) the URB at once.
 */
static void iso_record_sizes(struct gdev *dev, struct gdev_ep *ep,
			     const struct urb *urb, uint32_t whole)
{
	struct gdev_file *f;
	char buf[4096];
	size_t len = 0;
	int i, n;

	if (!ep->desc->beh.sizes_path)
		return;
	f = gdev_sizes_of(dev, ep->desc);
	n = urb->number_of_packets > 0 && urb->iso ? urb->number_of_packets : 0;
	if (!n) {
		len = snprintf(buf, sizeof(buf), "%u\n", whole);
		gdev_file_write(f, (const uint8_t *)buf, len);
		return;
	}
	for (i = 0; i < n; i++) {
		/* a u32 and its newline take at most 11 bytes */
		if (len > sizeof(buf) - 12) {
			gdev_file_write(f, (const uint8_t *)buf, len);
			len = 0;
		}
		len += snprintf(buf + len, sizeof(buf) - len, "%u\n",
				urb->iso[i].actual_length);
	}
	gdev_file_write(f, (const uint8_t *)buf, len);
}

/*
 * USB/IP carries isochronous IN data packed: the RET_SUBMIT payload is the
 * packets' data back to back, actual_length is the sum of the packets'
 * actual_length (vhci_rx's usbip_recv_iso() drops the connection if they
 * differ), and vhci moves each packet back to its iso[i].offset
 * (usbip_pad_iso() in drivers/usb/usbip/usbip_common.c).  So packet i goes
 * to buf + (sum of the previous actual lengths) and offset is left as the
 * host sent it.  OUT data arrives unpacked, at each packet's offset.
 * Packet lengths come from the wire: clip them to the buffer.
 *
 * An IN packet is as long as the host asks, or, when the endpoint has a
 * rate or a packet-size, what the stream carries in that interval
 * (stream.h).  A packet the host asked shorter than that is babble: the
 * packet fails with -EOVERFLOW, the host gets what fit, and the rest of
 * that interval's data is lost, as on the bus.  OUT data goes to the
 * sink's file, packet by packet, in order.  Either way the packets'
 * lengths go to the endpoint's sizes file, if it has one.
 */
static void iso_submit(struct gdev *dev, struct gdev_ep *ep, struct urb *urb)
{
	const struct gd_stream *stream = &ep->desc->beh.stream;
	uint32_t us = stream_interval_us(dev->model->speed,
					 ep->desc->bInterval);
	bool sized = urb->dir_in && stream_sized(stream);
	struct usbip_iso_desc *d;
	uint32_t total = 0, n, want;
	int i, errors = 0;

	if (urb->number_of_packets <= 0 || !urb->iso) {
		/* no packet list (some drivers): the whole buffer */
		if (urb->dir_in)
			fill_source(dev, ep, urb->buf, urb->length);
		else
			sink_data(dev, ep, urb->buf, urb->length);
		iso_record_sizes(dev, ep, urb, urb->length);
		iso_finish(dev, ep, urb, urb->length, us);
		return;
	}
	for (i = 0; i < urb->number_of_packets; i++) {
		d = &urb->iso[i];
		d->status = 0;
		if (urb->dir_in) {
			want = sized ? stream_packet_bytes(stream, us,
							   &ep->iso_acc) :
				       d->length;
			n = min_sz(min_sz(want, d->length),
				   urb->length - total);
			fill_source(dev, ep, urb->buf + total, n);
			if (want > n) {
				/* the interval's data went out all the same */
				ep->source_off += want - n;
				d->status = -EOVERFLOW;
				errors++;
			}
		} else {
			n = d->offset <= urb->length ?
				min_sz(d->length, urb->length - d->offset) : 0;
			/* overlapping packets cannot take more than sent */
			n = min_sz(n, urb->length - total);
			sink_data(dev, ep, urb->buf + d->offset, n);
		}
		d->actual_length = n;
		total += n;
	}
	urb->error_count = errors;
	iso_record_sizes(dev, ep, urb, total);
	iso_finish(dev, ep, urb, total,
		   (uint64_t)urb->number_of_packets * us);
}

void gdev_iso_complete(struct gdev *dev, struct urb *urb)
{
	struct gdev_ep *ep = &dev->ep[urb->dir_in][urb->ep];
	uint32_t us, total = 0;
	int i;

	if (!ep->desc || ep_type(ep) != USB_ENDPOINT_XFER_ISOC) {
		/* the function's bug: never an endpoint we cannot pace */
		log_err("urb seq=%u: ep %u is not isochronous", urb->seqnum,
			urb->ep);
		urb_finish(dev, urb, -EPIPE, 0, 0);
		return;
	}
	us = stream_interval_us(dev->model->speed, ep->desc->bInterval);
	if (urb->number_of_packets <= 0 || !urb->iso) {
		iso_record_sizes(dev, ep, urb, min_sz(urb->actual_length,
						      urb->length));
		iso_finish(dev, ep, urb, min_sz(urb->actual_length,
						urb->length), us);
		return;
	}
	for (i = 0; i < urb->number_of_packets; i++)
		total += urb->iso[i].actual_length;
	iso_record_sizes(dev, ep, urb, total);
	iso_finish(dev, ep, urb, min_sz(total, urb->length),
		   (uint64_t)urb->number_of_packets * us);
}

/* ---- bulk and interrupt ---- */

static void in_submit(struct gdev *dev, struct gdev_ep *ep, struct urb *urb)
{
	switch (ep->desc->beh.mode) {
	case GD_EP_SOURCE:
		fill_source(dev, ep, urb->buf, urb->length);
		urb_finish(dev, urb, 0, urb->length, ep_delay(ep));
		break;
	case GD_EP_SEQUENCE:
		gdev_urbq_push(&ep->pending, urb);
		seq_run(dev, ep);
		break;
	case GD_EP_NAK:
	case GD_EP_SINK:
		gdev_urbq_push(&ep->pending, urb);
		break;
	case GD_EP_DEFAULT:
	case GD_EP_LOOPBACK:
	default:
		/* NAK until a loopback OUT endpoint feeds the fifo */
		gdev_urbq_push(&ep->pending, urb);
		loop_pump(dev, ep);
		break;
	}
}

static void out_submit(struct gdev *dev, struct gdev_ep *ep, struct urb *urb)
{
	struct gdev_ep *in;

	switch (ep->desc->beh.mode) {
	case GD_EP_NAK:
		gdev_urbq_push(&ep->pending, urb);
		break;
	case GD_EP_LOOPBACK:
		in = loop_target(dev, ep);
		if (in) {
			gdev_urbq_push(&ep->pending, urb);
			loop_pump(dev, in);
			break;
		}
		log_warn("ep 0x%02x: loop_to 0x%02x is not active, data dropped",
			 ep->desc->bEndpointAddress, ep->desc->beh.loop_to);
		/* fall through */
	default:
		sink_data(dev, ep, urb->buf, urb->length);
		urb_finish(dev, urb, 0, urb->length, ep_delay(ep));
		break;
	}
}

static void ep_submit(struct gdev *dev, struct urb *urb)
{
	struct gdev_ep *ep = &dev->ep[urb->dir_in][urb->ep];
	uint32_t stall_nth;

	if (!ep->desc) {
		urb_finish(dev, urb, -EPIPE, 0, 0);
		return;
	}
	if (ep_type(ep) == USB_ENDPOINT_XFER_ISOC) {
		/* a function that streams fills the packets itself and paces
		 * them through gdev_iso_complete() */
		if (dev->fops && dev->fops->submit &&
		    !dev->fops->submit(dev, urb))
			return;
		iso_submit(dev, ep, urb);
		return;
	}
	if (ep->halted) {
		urb_finish(dev, urb, -EPIPE, 0, 0);
		return;
	}
	if (dev->fops && dev->fops->submit && !dev->fops->submit(dev, urb))
		return;
	ep->urbs_seen++;
	stall_nth = ep->desc->beh.stall_nth;
	if (stall_nth && ep->urbs_seen == stall_nth) {
		/* a real STALL halts the endpoint until CLEAR_FEATURE */
		ep->halted = true;
		urb_finish(dev, urb, -EPIPE, 0, 0);
		return;
	}
	if (urb->dir_in)
		in_submit(dev, ep, urb);
	else
		out_submit(dev, ep, urb);
}

/* ---- ep0 ---- */

static bool rule_match(const struct gd_ctrl_rule *r, const struct usb_setup *s)
{
	if (r->bmRequestType < 0) {
		/* a wildcard never takes a standard request from stdreq.c */
		if ((s->bmRequestType & USB_TYPE_MASK) == USB_TYPE_STANDARD)
			return false;
	} else if (r->bmRequestType != s->bmRequestType) {
		return false;
	}
	return (r->bRequest < 0 || r->bRequest == s->bRequest) &&
	       (r->wValue < 0 || r->wValue == s->wValue) &&
	       (r->wIndex < 0 || r->wIndex == s->wIndex);
}

static void ctrl_rule(struct gdev *dev, struct urb *urb, size_t idx,
		      bool in, size_t len)
{
	const struct gd_ctrl_rule *r = &dev->model->rules[idx];
	uint32_t hits = ++dev->rule_hits[idx];
	int status = 0;
	size_t n = 0;

	if (r->stall_nth && hits == r->stall_nth) {
		status = -EPIPE;
	} else if (r->action == GD_CTRL_REPLY) {
		if (in) {
			n = min_sz(r->data.len, len);
			if (r->short_len >= 0)
				n = min_sz(n, (size_t)r->short_len);
			if (n)
				memcpy(urb->buf, r->data.data, n);
		} else {
			n = len;	/* OUT: take the data stage */
		}
	} else if (r->action == GD_CTRL_ACK) {
		n = in ? 0 : len;
	} else {
		status = -EPIPE;
	}
	urb_finish(dev, urb, status, status ? 0 : n, r->delay_ms);
}

static void ctrl_submit(struct gdev *dev, struct urb *urb)
{
	struct usb_setup s;
	size_t i, len;
	bool in;
	int ret;

	usb_setup_unpack(&s, urb->setup);
	in = s.bmRequestType & USB_DIR_IN;
	/* the data stage is wLength, never more than the buffer */
	len = min_sz(s.wLength, urb->length);

	for (i = 0; i < dev->model->n_rules; i++) {
		const struct gd_ctrl_rule *r = &dev->model->rules[i];

		/* a rule with `times N` is spent after N matches */
		if (r->times && dev->rule_hits[i] >= r->times)
			continue;
		if (rule_match(r, &s)) {
			ctrl_rule(dev, urb, i, in, len);
			return;
		}
	}

	ret = stdreq_handle(dev, &s, urb->buf, len);
	if (ret == -ENOENT && dev->fops && dev->fops->control)
		ret = dev->fops->control(dev, &s, urb->buf, len);
	if (ret < 0)
		urb_finish(dev, urb, -EPIPE, 0, 0);
	else
		urb_finish(dev, urb, 0, in ? min_sz(ret, len) : len, 0);
}

/* ---- faults ---- */

static void disconnect_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gdev *dev = arg;
	const struct gd_faults *f = &dev->model->faults;
	char why[64];

	(void)fd;
	(void)what;
	if (f->disconnect_after_urbs && dev->urbs >= f->disconnect_after_urbs)
		snprintf(why, sizeof(why), "fault disconnect_after_urbs=%u",
			 f->disconnect_after_urbs);
	else
		snprintf(why, sizeof(why), "fault disconnect_after_ms=%u",
			 f->disconnect_after_ms);
	log_info("%s: %s", dev->model->name ? dev->model->name : "gadget", why);
	/* last: the host may detach or free the device */
	if (dev->host && dev->host->disconnect)
		dev->host->disconnect(dev->host_ctx, why);
}

/* ---- public API ---- */

static void reset_state(struct gdev *dev)
{
	int d, i;

	dev->config = NULL;
	memset(dev->alt, 0, sizeof(dev->alt));
	dev->remote_wakeup = false;
	for (d = 0; d < 2; d++)
		for (i = 0; i < 16; i++)
			ep_reset(&dev->ep[d][i], NULL);
	if (dev->rule_hits)
		memset(dev->rule_hits, 0,
		       dev->model->n_rules * sizeof(*dev->rule_hits));
	dev->urbs = 0;
}

struct gdev *gdev_new(const struct gd_device *model, struct event_base *base)
{
	struct gdev *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	dev->model = model;
	dev->base = base;
	if (model->function) {
		/* the parser checked the name; a NULL here is a bug */
		dev->fops = fn_find(model->function);
		if (!dev->fops)
			goto err;
	}
	if (model->n_rules) {
		dev->rule_hits = calloc(model->n_rules, sizeof(*dev->rule_hits));
		if (!dev->rule_hits)
			goto err;
	}
	dev->disconnect_timer = evtimer_new(base, disconnect_cb, dev);
	if (!dev->disconnect_timer)
		goto err;
	reset_state(dev);
	return dev;
err:
	free(dev->rule_hits);
	free(dev);
	return NULL;
}

/* Drop every URB the device holds; free_urb NULL only forgets them. */
static size_t drop_all(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct urb **lists[] = { &dev->ep0_pending, &dev->delayed };
	struct urb *urb;
	size_t i, n = 0;
	int d, e;

	for (d = 0; d < 2; d++) {
		for (e = 0; e < 16; e++) {
			while ((urb = gdev_urbq_pop(&dev->ep[d][e].pending))) {
				n++;
				if (free_urb)
					free_urb(urb);
			}
		}
	}
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		while ((urb = *lists[i])) {
			*lists[i] = urb->next;
			event_free(urb->timer);
			urb->timer = NULL;
			urb->next = NULL;
			n++;
			if (free_urb)
				free_urb(urb);
		}
	}
	return n;
}

void gdev_free(struct gdev *dev)
{
	size_t n;

	if (!dev)
		return;
	n = drop_all(dev, NULL);
	if (n)
		log_err("%zu URBs still pending: call gdev_detach() first", n);
	reset_state(dev);
	gdev_files_close(dev);
	event_free(dev->disconnect_timer);
	free(dev->rule_hits);
	free(dev);
}

int gdev_attach(struct gdev *dev, const struct gdev_host *host, void *ctx)
{
	uint32_t ms = dev->model->faults.disconnect_after_ms;
	int ret;

	reset_state(dev);
	/*
	 * The timer first: it is the step that cannot be undone by the
	 * function.  Any failure leaves host unset, so nothing keeps a
	 * pointer to a connection the caller is about to free.
	 */
	if (ms) {
		struct timeval tv = {
			.tv_sec = ms / 1000,
			.tv_usec = (ms % 1000) * 1000,
		};

		if (evtimer_add(dev->disconnect_timer, &tv))
			return -ENOMEM;
	}
	dev->host = host;
	dev->host_ctx = ctx;
	ret = gdev_files_open(dev);
	if (ret)
		goto err;
	if (dev->fops && dev->fops->attach) {
		ret = dev->fops->attach(dev);
		if (ret)
			goto err;
	}
	return 0;

err:
	gdev_files_close(dev);
	evtimer_del(dev->disconnect_timer);
	dev->function_state = NULL;
	dev->host = NULL;
	dev->host_ctx = NULL;
	return ret;
}

void gdev_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	size_t n;

	evtimer_del(dev->disconnect_timer);
	if (dev->fops && dev->fops->detach)
		dev->fops->detach(dev, free_urb);
	dev->function_state = NULL;
	n = drop_all(dev, free_urb);
	if (n)
		log_dbg("%zu pending URBs dropped at detach", n);
	gdev_files_close(dev);
	reset_state(dev);
	dev->host = NULL;
	dev->host_ctx = NULL;
}

void gdev_submit(struct gdev *dev, struct urb *urb)
{
	uint32_t after = dev->model->faults.disconnect_after_urbs;

	urb->dev = dev;
	urb->next = NULL;
	urb->timer = NULL;
	urb->status = 0;
	urb->actual_length = 0;
	urb->error_count = 0;
	urb->ep &= USB_ENDPOINT_NUMBER_MASK;	/* the codec checked < 16 */

	if (urb->ep == 0)
		ctrl_submit(dev, urb);
	else
		ep_submit(dev, urb);

	/* Not from here (the caller is in the middle of decoding): from the
	 * loop, right after this URB's completion has gone out. */
	if (++dev->urbs == after) {
		struct timeval now = { 0, 0 };

		if (evtimer_add(dev->disconnect_timer, &now))
			log_err("cannot arm the disconnect fault");
	}
}

struct urb *gdev_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct urb *urb = NULL;
	int d, e;

	if (dev->fops && dev->fops->unlink)
		urb = dev->fops->unlink(dev, seqnum);
	for (d = 0; d < 2 && !urb; d++)
		for (e = 0; e < 16 && !urb; e++)
			urb = gdev_urbq_remove(&dev->ep[d][e].pending, seqnum);
	if (!urb)
		urb = list_remove(&dev->ep0_pending, seqnum);
	if (!urb)
		urb = list_remove(&dev->delayed, seqnum);
	if (!urb)
		return NULL;
	if (urb->timer) {
		event_free(urb->timer);
		urb->timer = NULL;
	}
	return urb;
}

static void alt_enable(struct gdev *dev, const struct gd_alt *alt)
{
	const struct gd_endpoint *e;
	struct gdev_ep *ep;
	size_t i;

	for (i = 0; i < alt->n_eps; i++) {
		e = &alt->eps[i];
		if (!(e->bEndpointAddress & USB_ENDPOINT_NUMBER_MASK))
			continue;
		ep = &dev->ep[!!(e->bEndpointAddress & USB_DIR_IN)]
			     [e->bEndpointAddress & USB_ENDPOINT_NUMBER_MASK];
		if (ep->desc)
			log_warn("ep 0x%02x declared twice in configuration %u",
				 e->bEndpointAddress,
				 dev->config->bConfigurationValue);
		ep_disable(dev, ep);
		ep_reset(ep, e);
	}
}

int gdev_set_config(struct gdev *dev, uint8_t value)
{
	const struct gd_config *cfg = NULL;
	size_t i;
	int d, e;

	if (value) {
		cfg = gd_config_by_value(dev->model, value);
		if (!cfg)
			return -EINVAL;
	}
	for (d = 0; d < 2; d++)
		for (e = 1; e < 16; e++)
			ep_disable(dev, &dev->ep[d][e]);
	memset(dev->alt, 0, sizeof(dev->alt));
	dev->config = cfg;
	if (cfg)
		for (i = 0; i < cfg->n_alts; i++)
			if (cfg->alts[i].bAlternateSetting == 0)
				alt_enable(dev, &cfg->alts[i]);
	if (dev->fops && dev->fops->reset)
		dev->fops->reset(dev);
	return 0;
}

int gdev_set_interface(struct gdev *dev, uint8_t intf, uint8_t alt)
{
	const struct gd_alt *old, *new;
	struct gdev_ep *ep;
	size_t i;
	int d, e;

	if (!dev->config)
		return -EINVAL;
	new = gd_alt_find(dev->config, intf, alt);
	if (!new)
		return -EINVAL;
	old = gd_alt_find(dev->config, intf, dev->alt[intf]);
	if (old) {
		for (i = 0; i < old->n_eps; i++) {
			for (d = 0; d < 2; d++) {
				for (e = 1; e < 16; e++) {
					ep = &dev->ep[d][e];
					if (ep->desc == &old->eps[i])
						ep_disable(dev, ep);
				}
			}
		}
	}
	dev->alt[intf] = alt;
	alt_enable(dev, new);
	if (dev->fops && dev->fops->reset)
		dev->fops->reset(dev);
	/* OUT endpoints elsewhere may have waited on a fifo just dropped */
	kick_all(dev);
	return 0;
}

/* NULL for ep0, a malformed address, or an endpoint not active now. */
struct gdev_ep *gdev_ep_by_addr(struct gdev *dev, uint8_t addr)
{
	struct gdev_ep *ep;

	if (addr & ~(USB_DIR_IN | USB_ENDPOINT_NUMBER_MASK))
		return NULL;
	if (!(addr & USB_ENDPOINT_NUMBER_MASK))
		return NULL;
	ep = &dev->ep[!!(addr & USB_DIR_IN)][addr & USB_ENDPOINT_NUMBER_MASK];
	return ep->desc ? ep : NULL;
}

void gdev_ep_set_halt(struct gdev *dev, struct gdev_ep *ep, bool halt)
{
	ep->halted = halt;
	if (!halt)
		ep_kick(dev, ep);
}
