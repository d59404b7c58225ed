// SPDX-License-Identifier: GPL-2.0
/*
 * serial_core.c - the line, the peer and the queue toward the host that the
 * serial device functions share.  serial_core.h has the contract.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/usb/cdc.h>
#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"
#include "serial_core.h"
#include "util.h"

/* ---- line ---- */

void ser_line_init(struct ser_line *l)
{
	memset(l, 0, sizeof(*l));
	l->baud = 9600;
	l->data_bits = 8;
}

void ser_line_framing(const struct ser_line *l, char *buf, size_t size)
{
	static const char parity[] = "NOEMS";
	static const char *const stop[] = { "1", "1.5", "2" };

	snprintf(buf, size, "%u%c%s", l->data_bits,
		 l->parity < 5 ? parity[l->parity] : '?',
		 l->stop < 3 ? stop[l->stop] : "?");
}

void ser_line_set_break(struct ser_line *l, bool on)
{
	if (on && !l->brk)
		l->breaks++;
	l->brk = on;
}

void ser_line_log(const char *who, const struct ser_line *l)
{
	char f[16];

	ser_line_framing(l, f, sizeof(f));
	log_info("%s: line %u %s, DTR %d RTS %d%s", who, l->baud, f, l->dtr,
		 l->rts, l->brk ? ", break" : "");
}

/* ---- options ---- */

/* The % templates a reply may hold: see ser_expand(). */
static bool template_ok(const uint8_t *r, size_t len, char *bad)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (r[i] != '%')
			continue;
		if (i + 1 == len || !strchr("bfdrk%", r[i + 1]) || !r[i + 1]) {
			*bad = i + 1 < len ? r[i + 1] : 0;
			return false;
		}
		i++;
	}
	return true;
}

/* One decoded string of `respond` into out (at most max bytes). */
static bool respond_str(const struct gd_fn_arg *a, uint8_t *out, size_t max,
			size_t *len)
{
	if (!a->quoted || a->len > max)
		return false;
	memcpy(out, a->text, a->len);
	*len = a->len;
	return true;
}

/* `respond "REQ" "REPLY" ...` into pairs (NULL: only check); the script
 * lexer decoded the strings already. */
static int parse_respond(const struct gd_device *m, const struct gd_fn_opt *opt,
			 struct ser_pair *pairs, size_t *n_pairs,
			 struct script_error *err)
{
	struct ser_pair tmp, *pr;
	size_t i, n = 0;
	char bad;

	if (opt->n_args < 2 || !opt->args[0].quoted)
		return fn_opt_error(m, opt, err,
				    "respond: expected \"REQUEST\" \"REPLY\" pairs of quoted strings");
	for (i = 0; i < opt->n_args; i += 2, n++) {
		if (n == SER_MAX_PAIRS)
			return fn_opt_error(m, opt, err,
					    "respond: at most %d pairs",
					    SER_MAX_PAIRS);
		pr = pairs ? &pairs[n] : &tmp;
		memset(pr, 0, sizeof(*pr));
		if (!respond_str(&opt->args[i], pr->req, SER_MAX_REQ,
				 &pr->req_len))
			return fn_opt_error(m, opt, err,
					    "respond: request %zu: %s (requests are quoted strings, at most %d bytes)",
					    n + 1, opt->args[i].quoted ?
					    "string too long" : "expected a quoted string",
					    SER_MAX_REQ);
		if (!pr->req_len)
			return fn_opt_error(m, opt, err,
					    "respond: request %zu is empty", n + 1);
		if (i + 1 == opt->n_args)
			return fn_opt_error(m, opt, err,
					    "respond: request %zu has no reply: give \"REQUEST\" \"REPLY\" pairs",
					    n + 1);
		if (!respond_str(&opt->args[i + 1], pr->reply, SER_MAX_REPLY,
				 &pr->reply_len))
			return fn_opt_error(m, opt, err,
					    "respond: reply %zu: %s (replies are quoted strings, at most %d bytes)",
					    n + 1, opt->args[i + 1].quoted ?
					    "string too long" : "expected a quoted string",
					    SER_MAX_REPLY);
		if (!template_ok(pr->reply, pr->reply_len, &bad))
			return fn_opt_error(m, opt, err,
					    "respond: reply %zu: '%%%c' is not a template (there are %%b %%f %%d %%r %%k %%%%)",
					    n + 1, bad ? bad : ' ');
	}
	*n_pairs = n;
	return 0;
}

static int parse_echo(const struct gd_device *m, const struct gd_fn_opt *opt,
		      bool *echo, struct script_error *err)
{
	if (!strcmp(opt->value, "on"))
		*echo = true;
	else if (!strcmp(opt->value, "off"))
		*echo = false;
	else
		return fn_opt_error(m, opt, err, "echo: expected on or off, got '%s'",
				    opt->value);
	return 0;
}

int ser_opts_check(const struct gd_device *model, struct script_error *err)
{
	const struct gd_fn_opt *opt;
	size_t n;
	bool echo;
	int rc;

	opt = fn_opt(model, "echo");
	if (opt) {
		rc = parse_echo(model, opt, &echo, err);
		if (rc)
			return rc;
	}
	opt = fn_opt(model, "respond");
	if (opt) {
		rc = parse_respond(model, opt, NULL, &n, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- the port ---- */

int ser_port_init(struct ser_port *p, const struct gd_device *model)
{
	struct script_error err;
	const struct gd_fn_opt *opt;
	size_t i;

	memset(p, 0, sizeof(*p));
	p->echo = true;
	ser_line_init(&p->line);
	gdev_urbq_init(&p->out);
	/* validate() accepted these: errors here would be a bug */
	opt = fn_opt(model, "echo");
	if (opt && parse_echo(model, opt, &p->echo, &err))
		log_err("%s", err.msg);
	opt = fn_opt(model, "respond");
	if (opt && parse_respond(model, opt, p->pairs, &p->n_pairs, &err)) {
		log_err("%s", err.msg);
		p->n_pairs = 0;
	}
	for (i = 0; i < p->n_pairs; i++)
		if (p->pairs[i].req_len > p->win_max)
			p->win_max = p->pairs[i].req_len;
	p->tx = malloc(SER_TX_CAP);
	return p->tx ? 0 : -ENOMEM;
}

void ser_port_release(struct gdev *dev, struct ser_port *p,
		      void (*free_urb)(struct urb *urb))
{
	if (free_urb)
		gdev_urbq_free(&p->out, free_urb);
	else
		gdev_urbq_flush(dev, &p->out, -ESHUTDOWN);
	p->out_off = 0;
	free(p->tx);
	p->tx = NULL;
	p->tx_len = 0;
	p->tx_head = 0;
}

void ser_port_reset(struct gdev *dev, struct ser_port *p)
{
	gdev_urbq_flush(dev, &p->out, -ESHUTDOWN);
	p->out_off = 0;
	ser_port_purge_tx(p);
	p->win_len = 0;
	ser_line_init(&p->line);
}

void ser_port_purge_tx(struct ser_port *p)
{
	p->tx_head = 0;
	p->tx_len = 0;
}

/* Room is checked by the caller (see ser_port_pump()). */
static void tx_put(struct ser_port *p, const uint8_t *src, size_t n)
{
	if (!n)
		return;
	if (p->tx_head + p->tx_len + n > SER_TX_CAP) {
		memmove(p->tx, p->tx + p->tx_head, p->tx_len);
		p->tx_head = 0;
	}
	memcpy(p->tx + p->tx_head + p->tx_len, src, n);
	p->tx_len += n;
}

size_t ser_port_inject(struct ser_port *p, const uint8_t *src, size_t n)
{
	if (n > SER_TX_CAP - p->tx_len)
		n = SER_TX_CAP - p->tx_len;
	tx_put(p, src, n);
	return n;
}

size_t ser_port_take(struct ser_port *p, uint8_t *dst, size_t n)
{
	if (n > p->tx_len)
		n = p->tx_len;
	if (!n)
		return 0;
	memcpy(dst, p->tx + p->tx_head, n);
	p->tx_head += n;
	p->tx_len -= n;
	if (!p->tx_len)
		p->tx_head = 0;
	return n;
}

/*
 * A reply with its templates filled in: %b baud, %f framing ("8N1"),
 * %d DTR and %r RTS (0 or 1), %k breaks so far, %% a percent sign.
 * dst has SER_MAX_EXPAND bytes; each template gives at most 10.
 */
static size_t ser_expand(const struct ser_port *p, const struct ser_pair *pr,
			 uint8_t *dst)
{
	const struct ser_line *l = &p->line;
	char tmp[16];
	size_t i, n = 0, k;

	for (i = 0; i < pr->reply_len; i++) {
		if (pr->reply[i] != '%' || i + 1 == pr->reply_len) {
			dst[n++] = pr->reply[i];
			continue;
		}
		switch (pr->reply[++i]) {
		case 'b':
			snprintf(tmp, sizeof(tmp), "%u", l->baud);
			break;
		case 'f':
			ser_line_framing(l, tmp, sizeof(tmp));
			break;
		case 'd':
			snprintf(tmp, sizeof(tmp), "%d", l->dtr);
			break;
		case 'r':
			snprintf(tmp, sizeof(tmp), "%d", l->rts);
			break;
		case 'k':
			snprintf(tmp, sizeof(tmp), "%u", l->breaks);
			break;
		default:
			snprintf(tmp, sizeof(tmp), "%c", pr->reply[i]);
			break;
		}
		k = strlen(tmp);
		if (n + k > SER_MAX_EXPAND)	/* cannot happen: see above */
			break;
		memcpy(dst + n, tmp, k);
		n += k;
	}
	return n;
}

/* One byte from the host: echo, then the reply whose request it ends. */
static void feed_byte(struct ser_port *p, uint8_t c)
{
	uint8_t out[SER_MAX_EXPAND];
	const struct ser_pair *pr;
	size_t i;

	p->rx_bytes++;
	if (p->echo)
		tx_put(p, &c, 1);
	if (!p->n_pairs)
		return;
	if (p->win_len == p->win_max) {
		memmove(p->win, p->win + 1, p->win_len - 1);
		p->win_len--;
	}
	p->win[p->win_len++] = c;
	for (i = 0; i < p->n_pairs; i++) {
		pr = &p->pairs[i];
		if (pr->req_len > p->win_len ||
		    memcmp(p->win + p->win_len - pr->req_len, pr->req,
			   pr->req_len))
			continue;
		tx_put(p, out, ser_expand(p, pr, out));
		/* a request is answered once: the next starts afresh */
		p->win_len = 0;
		break;
	}
}

bool ser_port_pump(struct gdev *dev, struct ser_port *p)
{
	/* the worst case one byte can add to the queue */
	size_t worst = 1 + (p->n_pairs ? SER_MAX_EXPAND : 0);
	bool progress = false;
	struct urb *urb;

	while ((urb = p->out.head)) {
		while (p->out_off < urb->length) {
			if (p->tx_len + worst > SER_TX_CAP)
				return progress;	/* NAK until drained */
			feed_byte(p, urb->buf[p->out_off++]);
			progress = true;
		}
		gdev_urbq_pop(&p->out);
		p->out_off = 0;
		gdev_complete(dev, urb, 0, urb->length);
		progress = true;
	}
	return progress;
}

void ser_port_submit_out(struct gdev *dev, struct ser_port *p,
			 struct urb *urb)
{
	gdev_urbq_push(&p->out, urb);
	ser_port_pump(dev, p);
}

struct urb *ser_port_unlink(struct ser_port *p, uint32_t seqnum)
{
	struct urb *urb;

	if (p->out.head && p->out.head->seqnum == seqnum) {
		/* the bytes taken so far stay taken: the host gave up on the
		 * URB, as it would on a real chip mid-transfer */
		p->out_off = 0;
	}
	urb = gdev_urbq_remove(&p->out, seqnum);
	return urb;
}

/* ---- endpoints ---- */

int ser_find_eps(const struct gd_device *m, bool irq, struct ser_eps *e)
{
	const struct gd_alt *alt;
	size_t c, i;

	for (c = 0; c < m->n_configs; c++) {
		for (i = 0; i < m->configs[c].n_alts; i++) {
			alt = &m->configs[c].alts[i];
			if (alt->bAlternateSetting)
				continue;
			e->alt = alt;
			e->irq = irq ? fn_alt_ep(alt, USB_ENDPOINT_XFER_INT,
						 true) : NULL;
			e->in = fn_alt_ep(alt, USB_ENDPOINT_XFER_BULK, true);
			e->out = fn_alt_ep(alt, USB_ENDPOINT_XFER_BULK, false);
			if ((e->irq || !irq) && e->in && e->out)
				return 0;
		}
	}
	return -ENODEV;
}

/* ---- the bulk pair ---- */

int ser_pipe_init(struct ser_pipe *sp, const struct gd_device *model,
		  const struct gd_endpoint *in, const struct gd_endpoint *out)
{
	sp->in_addr = in->bEndpointAddress;
	sp->out_addr = out->bEndpointAddress;
	gdev_urbq_init(&sp->in);
	gdev_urbq_init(&sp->idle);
	return ser_port_init(&sp->port, model);
}

void ser_pipe_release(struct gdev *dev, struct ser_pipe *sp,
		      void (*free_urb)(struct urb *urb))
{
	gdev_urbq_free(&sp->in, free_urb);
	gdev_urbq_free(&sp->idle, free_urb);
	ser_port_release(dev, &sp->port, free_urb);
}

void ser_pipe_reset(struct gdev *dev, struct ser_pipe *sp)
{
	gdev_urbq_flush(dev, &sp->in, -ESHUTDOWN);
	gdev_urbq_flush(dev, &sp->idle, -ESHUTDOWN);
	ser_port_reset(dev, &sp->port);
}

void ser_pipe_kick(struct gdev *dev, struct ser_pipe *sp)
{
	bool progress;
	struct urb *urb;
	size_t n;

	do {
		progress = false;
		ser_port_pump(dev, &sp->port);
		while (sp->in.head && ser_port_pending(&sp->port)) {
			urb = gdev_urbq_pop(&sp->in);
			n = sp->fill ? sp->fill(sp, urb->buf, urb->length) :
			    ser_port_take(&sp->port, urb->buf, urb->length);
			gdev_complete(dev, urb, 0, n);
			progress = true;
		}
	} while (progress);
}

int ser_pipe_submit(struct gdev *dev, struct ser_pipe *sp, struct urb *urb)
{
	uint8_t addr = urb->ep | (urb->dir_in ? USB_DIR_IN : 0);

	if (addr == sp->out_addr) {
		ser_port_submit_out(dev, &sp->port, urb);
	} else if (addr == sp->in_addr) {
		gdev_urbq_push(&sp->in, urb);
	} else if (sp->idle_addr && addr == sp->idle_addr) {
		gdev_urbq_push(&sp->idle, urb);
		return 0;
	} else {
		return -ENOENT;
	}
	ser_pipe_kick(dev, sp);
	return 0;
}

struct urb *ser_pipe_unlink(struct ser_pipe *sp, uint32_t seqnum)
{
	struct urb *urb = gdev_urbq_remove(&sp->in, seqnum);

	if (!urb)
		urb = gdev_urbq_remove(&sp->idle, seqnum);
	return urb ? urb : ser_port_unlink(&sp->port, seqnum);
}

/* ---- notifications ---- */

void ser_notify_init(struct ser_notify *nq, uint16_t mps)
{
	memset(nq, 0, sizeof(*nq));
	nq->mps = mps & 0x7ff;	/* bits 12:11 are the high-bandwidth count */
	gdev_urbq_init(&nq->urbs);
}

void ser_notify_serial_state(struct ser_notify *nq, uint16_t wIndex,
			     uint16_t state)
{
	uint8_t *b;

	if (nq->n == SER_NOTIFY_MAX) {
		log_warn("serial state 0x%04x dropped: %d notifications wait already",
			 state, SER_NOTIFY_MAX);
		return;
	}
	b = nq->q[(nq->first + nq->n++) % SER_NOTIFY_MAX];
	b[0] = USB_DIR_IN | USB_TYPE_CLASS | USB_RECIP_INTERFACE;
	b[1] = USB_CDC_NOTIFY_SERIAL_STATE;
	b[2] = 0;			/* wValue */
	b[3] = 0;
	b[4] = wIndex & 0xff;		/* wIndex: the interface */
	b[5] = wIndex >> 8;
	b[6] = 2;			/* wLength */
	b[7] = 0;
	b[8] = state & 0xff;		/* UART state bitmap, little-endian */
	b[9] = state >> 8;
}

void ser_notify_serve(struct gdev *dev, struct ser_notify *nq)
{
	struct urb *urb;
	size_t n;

	while (nq->n && nq->urbs.head) {
		urb = gdev_urbq_pop(&nq->urbs);
		n = SER_NOTIFY_LEN - nq->off;
		if (n > urb->length)
			n = urb->length;
		if (nq->mps && n > nq->mps)
			n = nq->mps;
		memcpy(urb->buf, nq->q[nq->first] + nq->off, n);
		nq->off += n;
		if (nq->off == SER_NOTIFY_LEN) {
			nq->first = (nq->first + 1) % SER_NOTIFY_MAX;
			nq->n--;
			nq->off = 0;
		}
		gdev_complete(dev, urb, 0, n);
	}
}

void ser_notify_clear(struct gdev *dev, struct ser_notify *nq, int status,
		      void (*free_urb)(struct urb *urb))
{
	if (free_urb)
		gdev_urbq_free(&nq->urbs, free_urb);
	else
		gdev_urbq_flush(dev, &nq->urbs, status);
	nq->first = 0;
	nq->n = 0;
	nq->off = 0;
}

/* ---- CDC-style serial functions ---- */

int ser_serial_state_opt(const struct gd_device *model, uint64_t def,
			 uint64_t max, int *state, struct script_error *err)
{
	const struct gd_fn_opt *opt = fn_opt(model, "serial-state");
	uint64_t v;
	int rc;

	if (opt && !strcmp(opt->value, "off")) {
		*state = -1;
		return 0;
	}
	rc = fn_opt_u64(model, "serial-state", def, max, 0, &v, err);
	*state = v;
	return rc;
}

static void ser_cdc_coding_init(struct ser_cdc *c)
{
	/* 9600 baud, 1 stop bit, no parity, 8 data bits */
	static const uint8_t def[SER_CODING_LEN] = {
		0x80, 0x25, 0, 0, 0, 0, 8
	};

	memcpy(c->coding, def, sizeof(def));
}

int ser_cdc_init(struct ser_cdc *c, const struct gd_device *model)
{
	int rc;

	rc = ser_pipe_init(&c->pipe, model, c->in_ep, c->out_ep);
	if (rc)
		return rc;
	ser_cdc_coding_init(c);
	ser_notify_init(&c->notify, c->notify_ep->wMaxPacketSize);
	return 0;
}

void ser_cdc_release(struct gdev *dev, struct ser_cdc *c,
		     void (*free_urb)(struct urb *urb))
{
	ser_notify_clear(dev, &c->notify, 0, free_urb);
	ser_pipe_release(dev, &c->pipe, free_urb);
}

void ser_cdc_reset(struct gdev *dev, struct ser_cdc *c)
{
	ser_notify_clear(dev, &c->notify, -ESHUTDOWN, NULL);
	ser_pipe_reset(dev, &c->pipe);
	ser_cdc_coding_init(c);
}

int ser_cdc_submit(struct gdev *dev, struct ser_cdc *c, struct urb *urb)
{
	uint8_t addr = urb->ep | (urb->dir_in ? USB_DIR_IN : 0);

	if (addr != c->notify_ep->bEndpointAddress)
		return ser_pipe_submit(dev, &c->pipe, urb);
	gdev_urbq_push(&c->notify.urbs, urb);
	ser_notify_serve(dev, &c->notify);
	return 0;
}

struct urb *ser_cdc_unlink(struct ser_cdc *c, uint32_t seqnum)
{
	struct urb *urb;

	urb = gdev_urbq_remove(&c->notify.urbs, seqnum);
	return urb ? urb : ser_pipe_unlink(&c->pipe, seqnum);
}

static void ser_cdc_set_coding(struct ser_cdc *c, const uint8_t *b)
{
	struct ser_line *l = &c->pipe.port.line;

	memcpy(c->coding, b, sizeof(c->coding));
	l->baud = c->decode_baud ? c->decode_baud(b) :
		  b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
	l->stop = b[4];
	l->parity = b[5];
	l->data_bits = b[6];
	ser_line_log(c->who, l);
}

static void ser_cdc_set_lines(struct ser_cdc *c, uint16_t wValue)
{
	struct ser_line *l = &c->pipe.port.line;
	bool raised = !l->dtr && (wValue & USB_CDC_CTRL_DTR);

	l->dtr = wValue & USB_CDC_CTRL_DTR;
	l->rts = wValue & USB_CDC_CTRL_RTS;
	ser_line_log(c->who, l);
	if (raised && c->serial_state >= 0)
		ser_notify_serial_state(&c->notify, c->notify_index,
					c->serial_state);
}

int ser_cdc_control(struct gdev *dev, struct ser_cdc *c,
		    const struct usb_setup *s, uint8_t *data, size_t len)
{
	bool in = s->bmRequestType & USB_DIR_IN;
	size_t n;

	switch (s->bRequest) {
	case USB_CDC_REQ_SET_LINE_CODING:
		/* exactly the 7-byte structure, or a Request Error */
		if (in || s->wLength != sizeof(c->coding) ||
		    len < sizeof(c->coding))
			return -EPIPE;
		ser_cdc_set_coding(c, data);
		return 0;
	case USB_CDC_REQ_GET_LINE_CODING:
		if (!in)
			return -EPIPE;
		n = len < sizeof(c->coding) ? len : sizeof(c->coding);
		memcpy(data, c->coding, n);
		return n;
	case USB_CDC_REQ_SET_CONTROL_LINE_STATE:
		if (in)
			return -EPIPE;
		ser_cdc_set_lines(c, s->wValue);
		ser_notify_serve(dev, &c->notify);
		return 0;
	default:
		return -ENOENT;
	}
}
