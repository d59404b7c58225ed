// SPDX-License-Identifier: GPL-2.0
/*
 * fn/usbtmc.c - the usbtmc device function: a test and measurement
 * instrument (USBTMC 1.0, interface class 0xfe application specific,
 * subclass 3) that answers `*IDN?` and the queries a script lists.  The
 * Linux usbtmc driver binds it (drivers/usb/class/usbtmc.c) and makes
 * /dev/usbtmcN.
 *
 * Bulk OUT carries messages, each a 12-byte header (USBTMC 3.2, Table 1):
 *   0 MsgID  1 bTag  2 bTagInverse (~bTag)  3 reserved
 *   4..7 TransferSize (little endian)  8 bmTransferAttributes  9..11
 * then for DEV_DEP_MSG_OUT (MsgID 1) TransferSize bytes of the command and
 * 0 to 3 alignment bytes, so that header + data is a multiple of 4.  A
 * message may span several bulk transfers: the device reads the stream,
 * a header, its data, its alignment, the next header.  Linux sends the
 * first 4084 data bytes behind the header in one 4096-byte URB and the
 * rest in URBs of their own, aligned only at the end; a host that sends no
 * alignment bytes is taken too (they are expected in the same URB only).
 * bmTransferAttributes bit 0 (EOM) ends the command; without it the next
 * DEV_DEP_MSG_OUT continues it.  REQUEST_DEV_DEP_MSG_IN (MsgID 2) asks for
 * at most TransferSize bytes of the response on bulk IN.  A header with
 * bTagInverse not ~bTag, a bTag of 0, TransferSize 0 or another MsgID
 * (vendor specific, USB488 TRIGGER) halts bulk OUT (3.2.2.3); the host
 * clears the halt.
 *
 * A command (EOM seen) has its leading and trailing blanks and line ends
 * cut, then is compared, ignoring case as SCPI does, with `*IDN?` (the
 * `identity` option) and each query of `respond`; with `echo on` anything
 * else comes back as it came.  A reply is queued with a "\n" after it (the
 * IEEE 488.2 response terminator); a command without one is logged.
 *
 * Bulk IN: once a REQUEST_DEV_DEP_MSG_IN is in and a response is queued,
 * the device sends DEV_DEP_MSG_IN: the same 12-byte header (MsgID 2, the
 * request's bTag, TransferSize the bytes that follow, EOM when that is the
 * whole queued response), the data and alignment to a multiple of 4,
 * over as many IN URBs as it takes.  Until then IN URBs are held (a NAK),
 * as an instrument with nothing to say: Linux's read times out.  The
 * interrupt IN endpoint, if any, stays silent (no SRQ).
 *
 * Class requests (USBTMC 4.2), to the interface: GET_CAPABILITIES (24
 * bytes: USBTMC 1.00, INDICATOR_PULSE supported, no TermChar, no USB488
 * capabilities), INITIATE_CLEAR (empties the command, the queued response
 * and a transfer half sent; the bulk OUT parser waits for a header),
 * CHECK_CLEAR_STATUS (success, nothing left in a bulk IN FIFO),
 * INDICATOR_PULSE (logged).  The abort requests (to an endpoint) and the
 * USB488 ones STALL.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"

/* USBTMC 1.0 Table 2 (MsgID) and Table 15 (bRequest), Table 16 (status) */
#define TMC_MSG_DEV_DEP_OUT	1
#define TMC_MSG_REQ_DEV_DEP_IN	2
#define TMC_MSG_DEV_DEP_IN	2

#define TMC_REQ_INITIATE_CLEAR		5
#define TMC_REQ_CHECK_CLEAR_STATUS	6
#define TMC_REQ_GET_CAPABILITIES	7
#define TMC_REQ_INDICATOR_PULSE		64

#define TMC_STATUS_SUCCESS	0x01

#define TMC_SUBCLASS		3
#define TMC_HDR_LEN		12
#define TMC_ATTR_EOM		0x01
#define TMC_CAPS_LEN		0x18
#define TMC_CAP_INDICATOR_PULSE	0x04	/* interface capabilities bit 2 */

#define TMC_CMD_MAX		16384	/* one command, EOM to EOM */
#define TMC_QUEUE_MAX		65536	/* responses not yet asked for */
#define TMC_REPLY_MAX		1024	/* a `respond` reply, `identity` */
#define TMC_QUERY_MAX		256
#define TMC_MAX_PAIRS		32

struct tmc_pair {
	const char *query;		/* the model's strings */
	size_t query_len;
	const char *reply;
	size_t reply_len;
};

struct tmc_cfg {
	uint8_t intf;
	uint8_t ep_out;
	uint8_t ep_in;
	uint8_t ep_int;			/* 0: none */
	const char *identity;
	struct tmc_pair pairs[TMC_MAX_PAIRS];
	size_t n_pairs;
	bool echo;
};

enum tmc_rx { RX_HEADER, RX_DATA, RX_ALIGN };

struct tmc_state {
	struct tmc_cfg cfg;

	/* bulk OUT: where the parser is in the stream */
	enum tmc_rx rx;
	uint8_t hdr[TMC_HDR_LEN];
	size_t hdr_len;
	uint32_t data_left;		/* of the DEV_DEP_MSG_OUT */
	uint32_t align_left;
	bool eom;			/* the DEV_DEP_MSG_OUT ends the command */
	uint8_t cmd[TMC_CMD_MAX];
	size_t cmd_len;
	bool cmd_overflow;		/* dropped at EOM, logged */

	/* responses, oldest first, and the host's request for them */
	uint8_t queue[TMC_QUEUE_MAX];
	size_t queue_len;
	bool req;			/* a REQUEST_DEV_DEP_MSG_IN waits */
	uint8_t req_tag;
	uint32_t req_size;

	/* the DEV_DEP_MSG_IN being sent: header, data, alignment */
	uint8_t msg[TMC_HDR_LEN + TMC_QUEUE_MAX + 3];
	size_t msg_len;			/* 0: none */
	size_t msg_off;

	struct gdev_urbq in, intr;	/* held URBs */
	uint32_t commands, answered, unanswered, bad_headers;
};

static const char *const tmc_keys[] = {
	"interface", "identity", "respond", "echo", NULL,
};

static const char tmc_default_identity[] = "usbrig,Virtual Instrument,0,1.0";

/* ---- options and descriptors ---- */

static bool printable(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return true;
}

/* `respond "QUERY" "REPLY" ...`: pairs of quoted printable strings */
static int parse_respond(const struct gd_device *m, const struct gd_fn_opt *o,
			 struct tmc_cfg *c, struct script_error *err)
{
	size_t i;

	if (o->n_args < 2 || o->n_args % 2)
		return fn_opt_error(m, o, err, "respond: expected \"QUERY\" \"REPLY\" pairs of quoted strings");
	if (o->n_args / 2 > TMC_MAX_PAIRS)
		return fn_opt_error(m, o, err, "respond: at most %d pairs",
				    TMC_MAX_PAIRS);
	for (i = 0; i < o->n_args; i++) {
		const struct gd_fn_arg *a = &o->args[i];
		bool query = !(i % 2);
		size_t max = query ? TMC_QUERY_MAX : TMC_REPLY_MAX;

		if (!a->quoted)
			return fn_opt_error(m, o, err, "respond: %s %zu: expected a quoted string",
					    query ? "query" : "reply", i / 2 + 1);
		if ((query && !a->len) || a->len > max ||
		    !printable(a->text, a->len))
			return fn_opt_error(m, o, err, "respond: %s %zu: printable ASCII, %d to %zu bytes",
					    query ? "query" : "reply", i / 2 + 1,
					    query ? 1 : 0, max);
	}
	c->n_pairs = o->n_args / 2;
	for (i = 0; i < c->n_pairs; i++) {
		c->pairs[i].query = o->args[2 * i].text;
		c->pairs[i].query_len = o->args[2 * i].len;
		c->pairs[i].reply = o->args[2 * i + 1].text;
		c->pairs[i].reply_len = o->args[2 * i + 1].len;
	}
	return 0;
}

/* Options and descriptors into conf, a struct tmc_cfg (void *: for
 * fn_state_new()); -EINVAL with err set on a problem. */
static int cfg_parse(const struct gd_device *m, void *conf,
		     struct script_error *err)
{
	struct tmc_cfg *c = conf;
	const struct gd_endpoint *in, *out, *intr;
	const struct gd_fn_opt *o;
	const struct gd_alt *alt;
	size_t i;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = fn_opt_only(m, tmc_keys, err) ?:
	      fn_opt_interface(m, USB_CLASS_APP_SPEC, "USBTMC", &alt, err);
	if (ret)
		return ret;
	o = fn_opt(m, "interface");	/* where descriptor errors point */
	c->intf = alt->bInterfaceNumber;
	/* 0xfe is shared (DFU is subclass 1, IrDA 2): found by class, it must
	 * be the USBTMC one; named, it may be anything (a new_id test) */
	if (!o && alt->bInterfaceSubClass != TMC_SUBCLASS)
		return fn_opt_error(m, NULL, err, "interface %u has bInterfaceSubClass 0x%02x, not 3 (USBTMC): fix it or name the interface with 'interface N'",
				    c->intf, alt->bInterfaceSubClass);
	in = fn_alt_ep(alt, USB_ENDPOINT_XFER_BULK, true);
	out = fn_alt_ep(alt, USB_ENDPOINT_XFER_BULK, false);
	intr = fn_alt_ep(alt, USB_ENDPOINT_XFER_INT, true);
	if (!in || !out)
		return fn_opt_error(m, o, err, "interface %u needs a bulk IN and a bulk OUT endpoint",
				    c->intf);
	c->ep_in = in->bEndpointAddress;
	c->ep_out = out->bEndpointAddress;
	c->ep_int = intr ? intr->bEndpointAddress : 0;
	for (i = 0; i < alt->n_eps; i++) {
		ret = fn_ep_check_free(m, &alt->eps[i],
				       "an endpoint of the USBTMC interface",
				       err);
		if (ret)
			return ret;
	}

	o = fn_opt(m, "identity");
	c->identity = o ? o->value : tmc_default_identity;
	if (o && (!*o->value || strlen(o->value) > TMC_REPLY_MAX ||
		  !printable(o->value, strlen(o->value))))
		return fn_opt_error(m, o, err, "identity: the *IDN? reply, printable ASCII, 1 to %d bytes (\"maker,model,serial,firmware\")",
				    TMC_REPLY_MAX);

	o = fn_opt(m, "respond");
	if (o) {
		ret = parse_respond(m, o, c, err);
		if (ret)
			return ret;
	}

	o = fn_opt(m, "echo");
	if (o && !strcmp(o->value, "on"))
		c->echo = true;
	else if (o && strcmp(o->value, "off"))
		return fn_opt_error(m, o, err, "echo: expected on or off, got '%s'",
				    o->value);
	return 0;
}

static int tmc_validate(const struct gd_device *m, struct script_error *err)
{
	struct tmc_cfg c;

	return cfg_parse(m, &c, err);
}

/* ---- life cycle ---- */

/* INITIATE_CLEAR, a new configuration: nothing in flight. */
static void clear_io(struct tmc_state *st)
{
	st->rx = RX_HEADER;
	st->hdr_len = 0;
	st->data_left = st->align_left = 0;
	st->cmd_len = 0;
	st->cmd_overflow = false;
	st->queue_len = 0;
	st->req = false;
	st->msg_len = st->msg_off = 0;
}

static int tmc_attach(struct gdev *dev)
{
	struct tmc_state *st;
	int ret;

	st = fn_state_new(dev->model, sizeof(*st),
			  offsetof(struct tmc_state, cfg), cfg_parse, &ret);
	if (!st)
		return ret;
	gdev_urbq_init(&st->in);
	gdev_urbq_init(&st->intr);
	clear_io(st);
	log_info("interface %u: USBTMC instrument \"%s\", %zu more queries%s",
		 st->cfg.intf, st->cfg.identity, st->cfg.n_pairs,
		 st->cfg.echo ? ", echo" : "");
	dev->function_state = st;
	return 0;
}

static void tmc_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct tmc_state *st = dev->function_state;

	if (!st)
		return;
	gdev_urbq_free(&st->in, free_urb);
	gdev_urbq_free(&st->intr, free_urb);
	log_info("interface %u: %u commands, %u answered, %u unanswered, %u bad headers",
		 st->cfg.intf, st->commands, st->answered, st->unanswered,
		 st->bad_headers);
	free(st);
	dev->function_state = NULL;
}

static void tmc_reset(struct gdev *dev)
{
	struct tmc_state *st = dev->function_state;

	if (!st)
		return;
	gdev_urbq_flush(dev, &st->in, -ESHUTDOWN);
	gdev_urbq_flush(dev, &st->intr, -ESHUTDOWN);
	clear_io(st);
}

static struct urb *tmc_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct tmc_state *st = dev->function_state;
	struct urb *urb;

	if (!st)
		return NULL;
	urb = gdev_urbq_remove(&st->in, seqnum);
	return urb ? urb : gdev_urbq_remove(&st->intr, seqnum);
}

/* ---- commands and responses ---- */

static void queue_reply(struct tmc_state *st, const char *r, size_t n)
{
	/* the reply and its "\n" */
	if (n + 1 > TMC_QUEUE_MAX - st->queue_len) {
		log_warn("interface %u: %zu bytes of responses not read yet: reply dropped",
			 st->cfg.intf, st->queue_len);
		return;
	}
	memcpy(st->queue + st->queue_len, r, n);
	st->queue[st->queue_len + n] = '\n';
	st->queue_len += n + 1;
	st->answered++;
}

static bool blank(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void run_command(struct tmc_state *st)
{
	const struct tmc_cfg *c = &st->cfg;
	const char *p = (const char *)st->cmd;
	size_t n = st->cmd_len, i;

	st->commands++;
	if (st->cmd_overflow) {
		log_warn("interface %u: a command of more than %d bytes: dropped",
			 c->intf, TMC_CMD_MAX);
		st->unanswered++;
		goto done;
	}
	while (n && blank(*p)) {
		p++;
		n--;
	}
	while (n && blank(p[n - 1]))
		n--;
	if (n == 5 && !strncasecmp(p, "*IDN?", 5)) {
		queue_reply(st, c->identity, strlen(c->identity));
		goto done;
	}
	for (i = 0; i < c->n_pairs; i++) {
		if (n == c->pairs[i].query_len &&
		    !strncasecmp(p, c->pairs[i].query, n)) {
			queue_reply(st, c->pairs[i].reply, c->pairs[i].reply_len);
			goto done;
		}
	}
	if (c->echo) {
		queue_reply(st, p, n);
		goto done;
	}
	st->unanswered++;
	log_info("interface %u: no reply to \"%.*s\"", c->intf,
		 (int)(n > 64 ? 64 : n), p);
done:
	st->cmd_len = 0;
	st->cmd_overflow = false;
}

/* Serve held IN URBs: the message in progress, or a new one when the host
 * asked and a response is queued. */
static void pump_in(struct gdev *dev, struct tmc_state *st)
{
	struct urb *urb;
	size_t n;

	while (st->in.head) {
		if (!st->msg_len) {
			if (!st->req || !st->queue_len)
				return;		/* NAK */
			n = st->queue_len < st->req_size ? st->queue_len :
							   st->req_size;
			memset(st->msg, 0, TMC_HDR_LEN);
			st->msg[0] = TMC_MSG_DEV_DEP_IN;
			st->msg[1] = st->req_tag;
			st->msg[2] = ~st->req_tag;
			put_le32(st->msg + 4, n);
			st->msg[8] = n == st->queue_len ? TMC_ATTR_EOM : 0;
			memcpy(st->msg + TMC_HDR_LEN, st->queue, n);
			st->msg_len = TMC_HDR_LEN + n;
			while (st->msg_len % 4)
				st->msg[st->msg_len++] = 0;
			memmove(st->queue, st->queue + n, st->queue_len - n);
			st->queue_len -= n;
			st->msg_off = 0;
			st->req = false;
		}
		urb = gdev_urbq_pop(&st->in);
		n = st->msg_len - st->msg_off;
		if (n > urb->length)
			n = urb->length;
		memcpy(urb->buf, st->msg + st->msg_off, n);
		st->msg_off += n;
		if (st->msg_off == st->msg_len)
			st->msg_len = st->msg_off = 0;
		gdev_complete(dev, urb, 0, n);
	}
}

/* A whole header is in: 0, or -EPROTO for one to halt bulk OUT on. */
static int rx_header(struct tmc_state *st)
{
	const uint8_t *h = st->hdr;
	uint32_t size = get_le32(h + 4);

	st->hdr_len = 0;
	if (!h[1] || (h[1] ^ h[2]) != 0xff || !size)
		return -EPROTO;
	switch (h[0]) {
	case TMC_MSG_DEV_DEP_OUT:
		st->eom = h[8] & TMC_ATTR_EOM;
		st->data_left = size;
		st->align_left = (4 - size % 4) % 4;	/* TMC_HDR_LEN is 12 */
		st->rx = RX_DATA;
		return 0;
	case TMC_MSG_REQ_DEV_DEP_IN:
		/* TermChar (bit 1) is not offered in the capabilities */
		if (st->req)
			log_info("interface %u: request bTag %u replaces bTag %u",
				 st->cfg.intf, h[1], st->req_tag);
		st->req = true;
		st->req_tag = h[1];
		st->req_size = size;
		return 0;
	default:
		return -EPROTO;
	}
}

/* Feed one bulk OUT transfer to the parser; -EPROTO: a bad header. */
static int rx_bytes(struct tmc_state *st, const uint8_t *p, size_t n)
{
	size_t k;
	int ret;

	while (n) {
		switch (st->rx) {
		case RX_HEADER:
			k = TMC_HDR_LEN - st->hdr_len;
			k = k < n ? k : n;
			memcpy(st->hdr + st->hdr_len, p, k);
			st->hdr_len += k;
			if (st->hdr_len == TMC_HDR_LEN) {
				ret = rx_header(st);
				if (ret)
					return ret;
			}
			break;
		case RX_DATA:
			k = st->data_left < n ? st->data_left : n;
			if (k > TMC_CMD_MAX - st->cmd_len) {
				st->cmd_overflow = true;
			} else {
				memcpy(st->cmd + st->cmd_len, p, k);
				st->cmd_len += k;
			}
			st->data_left -= k;
			if (!st->data_left) {
				if (st->eom)
					run_command(st);
				st->rx = st->align_left ? RX_ALIGN : RX_HEADER;
			}
			break;
		default:	/* RX_ALIGN */
			k = st->align_left < n ? st->align_left : n;
			st->align_left -= k;
			if (!st->align_left)
				st->rx = RX_HEADER;
			break;
		}
		p += k;
		n -= k;
	}
	/* alignment bytes are expected in the transfer that ends the data */
	if (st->rx == RX_ALIGN)
		st->rx = RX_HEADER;
	return 0;
}

static int tmc_submit(struct gdev *dev, struct urb *urb)
{
	struct tmc_state *st = dev->function_state;
	uint8_t addr = urb->ep | (urb->dir_in ? USB_DIR_IN : 0);
	struct gdev_ep *ep;

	if (!st)
		return -ENOENT;
	if (addr == st->cfg.ep_out) {
		if (rx_bytes(st, urb->buf, urb->length)) {
			/* 3.2.2.3: halt Bulk-OUT; the rest of the URB is lost */
			st->bad_headers++;
			log_warn("interface %u: bad bulk OUT header (MsgID %u, bTag %u/%u): halting 0x%02x",
				 st->cfg.intf, st->hdr[0], st->hdr[1],
				 st->hdr[2], addr);
			st->rx = RX_HEADER;
			gdev_complete(dev, urb, -EPIPE, 0);
			ep = gdev_ep_by_addr(dev, addr);
			if (ep)
				gdev_ep_set_halt(dev, ep, true);
			return 0;
		}
		gdev_complete(dev, urb, 0, urb->length);
		pump_in(dev, st);
		return 0;
	}
	if (addr == st->cfg.ep_in) {
		gdev_urbq_push(&st->in, urb);
		pump_in(dev, st);
		return 0;
	}
	if (st->cfg.ep_int && addr == st->cfg.ep_int) {
		gdev_urbq_push(&st->intr, urb);	/* no SRQ: NAK */
		return 0;
	}
	return -ENOENT;
}

/* ---- ep0 ---- */

static int tmc_control(struct gdev *dev, const struct usb_setup *s,
		       uint8_t *data, size_t len)
{
	struct tmc_state *st = dev->function_state;
	uint8_t caps[TMC_CAPS_LEN] = { 0 };
	size_t n;

	if (!st || (s->bmRequestType & (USB_TYPE_MASK | USB_RECIP_MASK)) !=
	    (USB_TYPE_CLASS | USB_RECIP_INTERFACE) ||
	    s->wIndex != st->cfg.intf)
		return -ENOENT;
	/* every USBTMC request is device to host with wValue 0 (4.2.1) */
	if (!(s->bmRequestType & USB_DIR_IN) || s->wValue)
		return -EPIPE;
	switch (s->bRequest) {
	case TMC_REQ_GET_CAPABILITIES:
		/* Table 37: status, reserved, bcdUSBTMC 1.00, interface and
		 * device capabilities, 18 reserved (USB488's when subclassed) */
		if (s->wLength != TMC_CAPS_LEN)
			return -EPIPE;
		caps[0] = TMC_STATUS_SUCCESS;
		caps[2] = 0x00;
		caps[3] = 0x01;
		caps[4] = TMC_CAP_INDICATOR_PULSE;
		n = len < TMC_CAPS_LEN ? len : TMC_CAPS_LEN;
		memcpy(data, caps, n);
		return n;
	case TMC_REQ_INITIATE_CLEAR:
		if (s->wLength != 1)
			return -EPIPE;
		log_info("interface %u: clear (%zu bytes of responses, %zu of a command dropped)",
			 st->cfg.intf, st->queue_len, st->cmd_len);
		clear_io(st);
		if (len)
			data[0] = TMC_STATUS_SUCCESS;
		return len ? 1 : 0;
	case TMC_REQ_CHECK_CLEAR_STATUS:
		/* Table 33: done; bmClear 0, no bulk IN FIFO to read out */
		if (s->wLength != 2)
			return -EPIPE;
		n = len < 2 ? len : 2;
		if (n > 0)
			data[0] = TMC_STATUS_SUCCESS;
		if (n > 1)
			data[1] = 0;
		return n;
	case TMC_REQ_INDICATOR_PULSE:
		if (s->wLength != 1)
			return -EPIPE;
		log_info("interface %u: indicator pulse", st->cfg.intf);
		if (len)
			data[0] = TMC_STATUS_SUCCESS;
		return len ? 1 : 0;
	default:
		return -EPIPE;
	}
}

const struct fn_ops fn_usbtmc_ops = {
	.name = "usbtmc",
	.validate = tmc_validate,
	.attach = tmc_attach,
	.detach = tmc_detach,
	.control = tmc_control,
	.submit = tmc_submit,
	.unlink = tmc_unlink,
	.reset = tmc_reset,
};
