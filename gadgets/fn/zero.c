// SPDX-License-Identifier: GPL-2.0
/*
 * fn/zero.c - Gadget Zero, the device the kernel's usbtest driver tests
 * against (g_zero, 0525:a4a0).
 *
 * The facts mirrored here come from the kernel's gadget side
 * (drivers/usb/gadget/legacy/zero.c, function/f_sourcesink.c,
 * function/f_loopback.c) and from what drivers/usb/misc/usbtest.c checks.
 * The script carries the descriptors (gadgets/examples/zero.gadget); this
 * file supplies the behaviour:
 *
 *  - source/sink configuration (bConfigurationValue 3 in g_zero): every
 *    bulk or interrupt IN URB is filled with the pattern, every OUT URB is
 *    taken and checked against it.  A mismatch is logged and halts the OUT
 *    endpoint after the URB (the data was already ACKed), as f_sourcesink
 *    does; the host sees -EPIPE from the next URB until it clears the halt.
 *    Isochronous endpoints (alternate setting 1) are left to the core.
 *  - the vendor control requests of Intel's USB 2.0 test device, answered
 *    in the source/sink configuration only (zero.c ss_config_setup()):
 *    0x5b (bmRequestType 0x40) stores the OUT data stage in a 4096-byte
 *    buffer, 0x5c (0xc0) reads it back; wValue or wIndex not 0, or a
 *    wLength over 4096 (USB_COMP_EP0_BUFSIZ), STALL.
 *  - loopback configuration (2 in g_zero): OUT data is queued and served
 *    to IN, in order.  The queue holds at most qlen * buflen bytes and
 *    qlen transfer ends (f_loopback keeps qlen requests of buflen bytes);
 *    an OUT URB that does not fit is taken as far as it fits and completes
 *    when the rest has gone in (the device NAKs the remaining packets).
 *    A transfer end is where an OUT transfer finished with a short packet
 *    or a zero-length packet: an IN URB completes when full or when it
 *    reaches one, so the host sees the same short transfers it wrote.
 *
 * Pattern (option `pattern`, g_zero's module parameter): 0 all zeros, 1
 * "mod63" - byte i of each transfer is (i % wMaxPacketSize) % 63, which is
 * what usbtest's pattern=1 writes and checks (it restarts with every
 * transfer), 2 no check (IN data is zeros).
 *
 * Halt, GET_STATUS, SET_INTERFACE and the descriptors are the core's
 * (stdreq.c), and so are the replies of usbtest's control queue (case
 * 10): a descriptor read longer than the descriptor comes back short,
 * which usbcore turns into -EREMOTEIO for URB_SHORT_NOT_OK.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"

#define ZERO_REQ_WRITE		0x5b	/* control OUT: fill the buffer */
#define ZERO_REQ_READ		0x5c	/* control IN: read it back */
#define ZERO_CTRL_BUFLEN	4096	/* USB_COMP_EP0_BUFSIZ */

#define ZERO_PAT_ZEROS		0
#define ZERO_PAT_MOD63		1
#define ZERO_PAT_NONE		2

#define ZERO_QUEUE_MAX		(16u << 20)	/* qlen * buflen */
#define ZERO_TMPL_MIN		8192	/* pattern template, >= this */

/* USB/IP transfer_flags (include/uapi/linux/usbip.h) */
#define ZERO_URB_ZERO_PACKET	0x0040

struct zero_opts {
	unsigned int pattern;
	uint8_t ss_config;		/* bConfigurationValue, 0: none */
	uint8_t lb_config;
	uint32_t qlen;
	uint32_t buflen;
};

/* A place in the loopback stream where an OUT transfer ended. */
struct zero_end {
	uint64_t at;			/* stream offset of the end */
	bool zlp;			/* ended by a zero-length packet */
};

struct zero_urbq {
	struct gdev_urbq q;
	uint32_t done;			/* bytes of q.head moved already */
};

struct zero_state {
	struct zero_opts o;
	uint8_t ctrl[ZERO_CTRL_BUFLEN];

	/* source/sink: one period-aligned run of the pattern */
	uint8_t *tmpl;
	size_t tmpl_len;
	unsigned int tmpl_mps;		/* 0: not built yet */

	/* loopback: a ring of cap bytes, stream offsets rd <= wr */
	uint8_t *ring;
	size_t cap;
	uint64_t rd, wr;
	struct zero_end *ends;		/* qlen slots, ring */
	uint32_t end_head, n_ends;
	struct zero_urbq out, in;
};

/* ---- options ---- */

/* The options into conf, a struct zero_opts (void *: for
 * fn_state_new()); -EINVAL with err set on a problem. */
static int zero_parse(const struct gd_device *model, void *conf,
		      struct script_error *err)
{
	struct zero_opts *o = conf;
	static const char *const keys[] = {
		"pattern", "sourcesink-config", "loopback-config", "qlen",
		"buflen", NULL,
	};
	uint64_t v;
	int ret;

	ret = fn_opt_only(model, keys, err);
	if (!ret)
		ret = fn_opt_u64(model, "pattern", ZERO_PAT_ZEROS,
				 ZERO_PAT_NONE, 0, &v, err);
	if (ret)
		return ret;
	o->pattern = v;
	ret = fn_opt_u64(model, "sourcesink-config", 3, 255, 0, &v, err);
	if (ret)
		return ret;
	o->ss_config = v;
	ret = fn_opt_u64(model, "loopback-config", 2, 255, 0, &v, err);
	if (ret)
		return ret;
	o->lb_config = v;
	ret = fn_opt_u64(model, "qlen", 32, 1024, 0, &v, err);
	if (ret)
		return ret;
	if (!v)
		return fn_opt_error(model, fn_opt(model, "qlen"), err,
				    "qlen: must be at least 1");
	o->qlen = v;
	ret = fn_opt_u64(model, "buflen", 4096, 65536, 1, &v, err);
	if (ret)
		return ret;
	if (!v)
		return fn_opt_error(model, fn_opt(model, "buflen"), err,
				    "buflen: must be at least 1");
	o->buflen = v;
	if ((uint64_t)o->qlen * o->buflen > ZERO_QUEUE_MAX)
		return fn_opt_error(model, fn_opt(model, "qlen"), err,
				    "qlen x buflen is more than %u bytes",
				    ZERO_QUEUE_MAX);
	if (!o->ss_config && !o->lb_config)
		return fn_opt_error(model, NULL, err,
				    "sourcesink-config and loopback-config are both 0");
	if (o->ss_config == o->lb_config)
		return fn_opt_error(model, fn_opt(model, "loopback-config"), err,
				    "loopback-config: %u is the source/sink configuration too",
				    o->lb_config);
	return 0;
}

static bool ep_is_data(const struct gd_endpoint *e)
{
	int type = e->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK;

	return type == USB_ENDPOINT_XFER_BULK || type == USB_ENDPOINT_XFER_INT;
}

/*
 * A configuration the function serves needs a bulk IN and a bulk OUT
 * endpoint in interface 0, alternate setting 0 (where usbtest looks
 * first), and the endpoints it serves must carry no script behaviour:
 * the function answers them, so a `sink` or `stall-nth` there would be
 * silently ignored.
 */
static int zero_check_config(const struct gd_device *model, uint8_t value,
			     const char *key, bool loopback,
			     struct script_error *err)
{
	const struct gd_config *cfg = gd_config_by_value(model, value);
	const struct gd_fn_opt *opt = fn_opt(model, key);
	const struct gd_alt *alt;
	bool bulk_in = false, bulk_out = false;
	size_t i, k;

	if (!cfg)
		return fn_opt_error(model, opt, err,
				    "%s: the script has no configuration with bConfigurationValue %u",
				    key, value);
	alt = gd_alt_find(cfg, 0, 0);
	for (k = 0; alt && k < alt->n_eps; k++) {
		const struct gd_endpoint *e = &alt->eps[k];

		if ((e->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK) !=
		    USB_ENDPOINT_XFER_BULK)
			continue;
		if (e->bEndpointAddress & USB_DIR_IN)
			bulk_in = true;
		else
			bulk_out = true;
	}
	if (!bulk_in || !bulk_out)
		return fn_opt_error(model, opt, err,
				    "%s: configuration %u needs a bulk IN and a bulk OUT endpoint in interface 0, alternate setting 0",
				    key, value);
	for (i = 0; i < cfg->n_alts; i++) {
		for (k = 0; k < cfg->alts[i].n_eps; k++) {
			const struct gd_endpoint *e = &cfg->alts[i].eps[k];
			const struct gd_ep_behaviour *b = &e->beh;
			bool served = loopback ?
				(e->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK) ==
				USB_ENDPOINT_XFER_BULK : ep_is_data(e);

			if (served && (b->mode != GD_EP_DEFAULT ||
				       b->delay_ms || b->stall_nth)) {
				err->line = e->line;
				err->col = 1;
				snprintf(err->msg, sizeof(err->msg),
					 "%s:%d:1: function zero serves endpoint 0x%02x of configuration %u: remove its behaviour, delay and stall-nth",
					 model->path ? model->path : "<script>",
					 e->line, e->bEndpointAddress, value);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static int zero_validate(const struct gd_device *model,
			 struct script_error *err)
{
	struct zero_opts o;
	int ret;

	ret = zero_parse(model, &o, err);
	if (!ret && o.ss_config)
		ret = zero_check_config(model, o.ss_config,
					"sourcesink-config", false, err);
	if (!ret && o.lb_config)
		ret = zero_check_config(model, o.lb_config, "loopback-config",
					true, err);
	return ret;
}

/* ---- life cycle ---- */

/* gdev_urbq plus how far the oldest URB got */
static void urbq_init(struct zero_urbq *q)
{
	gdev_urbq_init(&q->q);
	q->done = 0;
}

static void urbq_push(struct zero_urbq *q, struct urb *urb)
{
	gdev_urbq_push(&q->q, urb);
}

static struct urb *urbq_pop(struct zero_urbq *q)
{
	q->done = 0;
	return gdev_urbq_pop(&q->q);
}

static struct urb *urbq_remove(struct zero_urbq *q, uint32_t seqnum)
{
	/* what moved already of the oldest URB stays moved */
	if (q->q.head && q->q.head->seqnum == seqnum)
		q->done = 0;
	return gdev_urbq_remove(&q->q, seqnum);
}

static int zero_attach(struct gdev *dev)
{
	struct zero_state *st;
	int ret;

	st = fn_state_new(dev->model, sizeof(*st),
			  offsetof(struct zero_state, o), zero_parse, &ret);
	if (!st)
		return ret;
	if (st->o.lb_config) {
		st->cap = (size_t)st->o.qlen * st->o.buflen;
		st->ring = malloc(st->cap);
		st->ends = calloc(st->o.qlen, sizeof(*st->ends));
		if (!st->ring || !st->ends) {
			free(st->ring);
			free(st->ends);
			free(st);
			return -ENOMEM;
		}
	}
	urbq_init(&st->out);
	urbq_init(&st->in);
	dev->function_state = st;
	return 0;
}

static void zero_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct zero_state *st = dev->function_state;

	if (!st)
		return;
	gdev_urbq_free(&st->out.q, free_urb);
	gdev_urbq_free(&st->in.q, free_urb);
	free(st->ring);
	free(st->ends);
	free(st->tmpl);
	free(st);
	dev->function_state = NULL;
}

/* The configuration or an alternate setting changed: start over. */
static void zero_reset(struct gdev *dev)
{
	struct zero_state *st = dev->function_state;

	if (!st)
		return;
	gdev_urbq_flush(dev, &st->out.q, -ESHUTDOWN);
	gdev_urbq_flush(dev, &st->in.q, -ESHUTDOWN);
	st->out.done = st->in.done = 0;
	st->rd = st->wr = 0;
	st->end_head = st->n_ends = 0;
}

static struct urb *zero_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct zero_state *st = dev->function_state;
	struct urb *urb;

	if (!st)
		return NULL;
	urb = urbq_remove(&st->out, seqnum);
	return urb ? urb : urbq_remove(&st->in, seqnum);
}

/* ---- ep0: the control-OUT test requests ---- */

static uint8_t active_config(const struct gdev *dev)
{
	return dev->config ? dev->config->bConfigurationValue : 0;
}

static int zero_control(struct gdev *dev, const struct usb_setup *s,
			uint8_t *data, size_t len)
{
	struct zero_state *st = dev->function_state;
	bool write = s->bRequest == ZERO_REQ_WRITE;

	if ((s->bRequest != ZERO_REQ_WRITE && s->bRequest != ZERO_REQ_READ) ||
	    s->bmRequestType != ((write ? USB_DIR_OUT : USB_DIR_IN) |
				 USB_TYPE_VENDOR | USB_RECIP_DEVICE))
		return -ENOENT;
	/* g_zero hands them to the source/sink configuration only */
	if (!st || !st->o.ss_config || active_config(dev) != st->o.ss_config)
		return -EPIPE;
	if (s->wValue || s->wIndex || s->wLength > ZERO_CTRL_BUFLEN)
		return -EPIPE;
	/* len is wLength cut to the URB's buffer: never more than we hold */
	if (write)
		memcpy(st->ctrl, data, len);
	else
		memcpy(data, st->ctrl, len);
	return len;
}

/* ---- source/sink ---- */

static unsigned int ep_mps(const struct gdev *dev, const struct urb *urb)
{
	const struct gd_endpoint *e = dev->ep[urb->dir_in][urb->ep].desc;
	unsigned int mps = e ? e->wMaxPacketSize & 0x7ff : 0;

	return mps ? mps : 64;
}

/* The pattern from a packet boundary on: a whole number of periods. */
static const uint8_t *zero_template(struct zero_state *st, unsigned int mps)
{
	size_t i, n;
	uint8_t *t;

	if (st->tmpl_mps == mps)
		return st->tmpl;
	n = ((ZERO_TMPL_MIN + mps - 1) / mps) * mps;
	t = realloc(st->tmpl, n);
	if (!t)
		return NULL;
	for (i = 0; i < n; i++)
		t[i] = st->o.pattern == ZERO_PAT_MOD63 ?
			(uint8_t)((i % mps) % 63) : 0;
	st->tmpl = t;
	st->tmpl_len = n;
	st->tmpl_mps = mps;
	return t;
}

static void source(struct gdev *dev, struct zero_state *st, struct urb *urb)
{
	const uint8_t *t;
	size_t off, n;

	if (st->o.pattern != ZERO_PAT_MOD63) {
		memset(urb->buf, 0, urb->length);
		gdev_complete(dev, urb, 0, urb->length);
		return;
	}
	t = zero_template(st, ep_mps(dev, urb));
	if (!t) {
		gdev_complete(dev, urb, -ENOMEM, 0);
		return;
	}
	for (off = 0; off < urb->length; off += n) {
		n = urb->length - off;
		if (n > st->tmpl_len)
			n = st->tmpl_len;
		memcpy(urb->buf + off, t, n);
	}
	gdev_complete(dev, urb, 0, urb->length);
}

/* The offset of the first byte that breaks the pattern, or -1. */
static long check_pattern(struct zero_state *st, const struct urb *urb,
			  unsigned int mps)
{
	const uint8_t *t = zero_template(st, mps);
	size_t off, n, i;

	if (!t)
		return -1;	/* no memory to check with: take it */
	for (off = 0; off < urb->length; off += n) {
		n = urb->length - off;
		if (n > st->tmpl_len)
			n = st->tmpl_len;
		if (!memcmp(urb->buf + off, t, n))
			continue;
		for (i = 0; i < n && urb->buf[off + i] == t[i]; i++)
			;
		return (long)(off + i);
	}
	return -1;
}

static void sink(struct gdev *dev, struct zero_state *st, struct urb *urb)
{
	unsigned int mps = ep_mps(dev, urb);
	struct gdev_ep *ep = NULL;
	long bad = -1;

	if (st->o.pattern != ZERO_PAT_NONE)
		bad = check_pattern(st, urb, mps);
	if (bad >= 0) {
		/* f_sourcesink check_read_data(): log, halt the endpoint */
		log_warn("ep 0x%02x: bad OUT byte, buf[%ld] = %u (pattern %u): halting",
			 urb->ep, bad, urb->buf[bad], st->o.pattern);
		ep = gdev_ep_by_addr(dev, urb->ep);
	}
	/* the data was taken (ACKed) before the check: the halt is for
	 * the URBs after it.  urb is gone once completed. */
	gdev_complete(dev, urb, 0, urb->length);
	if (ep)
		gdev_ep_set_halt(dev, ep, true);
}

/* ---- loopback ---- */

static size_t ring_copy_in(struct zero_state *st, const uint8_t *src,
			   size_t n)
{
	size_t pos = st->wr % st->cap, first = st->cap - pos;

	if (first > n)
		first = n;
	memcpy(st->ring + pos, src, first);
	memcpy(st->ring, src + first, n - first);
	st->wr += n;
	return n;
}

static size_t ring_copy_out(struct zero_state *st, uint8_t *dst, size_t n)
{
	size_t pos = st->rd % st->cap, first = st->cap - pos;

	if (first > n)
		first = n;
	memcpy(dst, st->ring + pos, first);
	memcpy(dst + first, st->ring, n - first);
	st->rd += n;
	return n;
}

static struct zero_end *first_end(struct zero_state *st)
{
	return st->n_ends ? &st->ends[st->end_head] : NULL;
}

static void pop_end(struct zero_state *st)
{
	st->end_head = (st->end_head + 1) % st->o.qlen;
	st->n_ends--;
}

/* Move OUT data into the ring; true if anything moved or completed. */
static bool lb_pump_out(struct gdev *dev, struct zero_state *st)
{
	bool progress = false;
	struct urb *urb;

	while ((urb = st->out.q.head)) {
		size_t left = urb->length - st->out.done;
		size_t room = st->cap - (size_t)(st->wr - st->rd);
		unsigned int mps = ep_mps(dev, urb);
		bool end_short, end_zlp;

		if (left && room) {
			size_t n = left < room ? left : room;

			ring_copy_in(st, urb->buf + st->out.done, n);
			st->out.done += n;
			progress = true;
		}
		if (st->out.done < urb->length)
			break;		/* NAK the rest until IN drains */
		end_short = urb->length % mps != 0;
		end_zlp = !end_short && (!urb->length ||
			  (urb->transfer_flags & ZERO_URB_ZERO_PACKET));
		if (end_short || end_zlp) {
			struct zero_end *e;

			if (st->n_ends == st->o.qlen)
				break;	/* every request holds a transfer */
			e = &st->ends[(st->end_head + st->n_ends) % st->o.qlen];
			e->at = st->wr;
			e->zlp = end_zlp;
			st->n_ends++;
		}
		urbq_pop(&st->out);
		gdev_complete(dev, urb, 0, urb->length);
		progress = true;
	}
	return progress;
}

/* Serve IN URBs from the ring; true if anything moved or completed. */
static bool lb_pump_in(struct gdev *dev, struct zero_state *st)
{
	bool progress = false;
	struct urb *urb;

	while ((urb = st->in.q.head)) {
		struct zero_end *e = first_end(st);
		size_t room = urb->length - st->in.done;
		size_t avail = e ? (size_t)(e->at - st->rd) :
				   (size_t)(st->wr - st->rd);
		size_t n = room < avail ? room : avail;

		if (n) {
			ring_copy_out(st, urb->buf + st->in.done, n);
			st->in.done += n;
			progress = true;
		}
		if (st->in.done < urb->length && !(e && e->at == st->rd))
			break;		/* NAK: wait for more data */
		/*
		 * Full, or at the end of a transfer.  A short packet that
		 * fits ends this URB with it; a zero-length packet after a
		 * full URB is the next URB's (it completes it empty).
		 */
		if (e && e->at == st->rd &&
		    (st->in.done < urb->length || !e->zlp || !n))
			pop_end(st);
		n = st->in.done;
		urbq_pop(&st->in);
		gdev_complete(dev, urb, 0, n);
		progress = true;
	}
	return progress;
}

static void loopback(struct gdev *dev, struct zero_state *st, struct urb *urb)
{
	bool moved;

	urbq_push(urb->dir_in ? &st->in : &st->out, urb);
	do {
		/* both pumps every round, as long as either moved */
		moved = lb_pump_out(dev, st);
		moved |= lb_pump_in(dev, st);
	} while (moved);
}

/* ---- data endpoints ---- */

static int zero_submit(struct gdev *dev, struct urb *urb)
{
	struct zero_state *st = dev->function_state;
	const struct gd_endpoint *e = dev->ep[urb->dir_in][urb->ep].desc;
	uint8_t cfg = active_config(dev);
	int type;

	if (!st || !e || !cfg)
		return -ENOENT;
	type = e->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK;
	if (cfg == st->o.ss_config && ep_is_data(e)) {
		if (urb->dir_in)
			source(dev, st, urb);
		else
			sink(dev, st, urb);
		return 0;
	}
	if (cfg == st->o.lb_config && type == USB_ENDPOINT_XFER_BULK) {
		loopback(dev, st, urb);
		return 0;
	}
	return -ENOENT;		/* iso, or a configuration not ours */
}

const struct fn_ops fn_zero_ops = {
	.name = "zero",
	.validate = zero_validate,
	.attach = zero_attach,
	.detach = zero_detach,
	.control = zero_control,
	.submit = zero_submit,
	.unlink = zero_unlink,
	.reset = zero_reset,
};
