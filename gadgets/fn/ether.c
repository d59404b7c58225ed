// SPDX-License-Identifier: GPL-2.0
/*
 * fn/ether.c - a USB Ethernet function, CDC-ECM (USB CDC ECM 1.2, Linux
 * cdc_ether) or CDC-NCM (USB CDC NCM 1.0, Linux cdc_ncm), with one host
 * behind it that answers ARP and ICMP echo (netstack.c), so that `ping`
 * through the guest's usb0 gets replies.
 *
 * The script gives the descriptors (gadgets/examples/cdc-ecm.gadget,
 * cdc-ncm.gadget): a communication interface with an interrupt IN
 * endpoint and the CDC header, union and Ethernet networking functional
 * descriptors (plus the NCM one for NCM) as `raw`, the iMACAddress string
 * (the host side's MAC), and a data interface whose alternate setting 1
 * has the bulk pair.  This file supplies the behaviour:
 *
 *  - framing `ecm`: one Ethernet frame per bulk transfer each way;
 *    `ncm`: NTB16 blocks (ncm_ntb.c), every datagram of a block taken,
 *    one frame per block toward the host;
 *  - the class requests to the communication interface: packet and
 *    multicast filters (ECM 6.2.2, 6.2.4), and for NCM the NTB parameters,
 *    format, input size, maximum datagram size and CRC mode (NCM 6.2);
 *  - the link: when the data interface's bulk alternate setting is
 *    selected, SPEED_CHANGE then NETWORK_CONNECTION(connected) go out on
 *    the interrupt endpoint (NCM 7.1 wants that order; cdc_ncm keeps the
 *    carrier off until it comes), back to alternate setting 0
 *    NETWORK_CONNECTION(disconnected) if the host had seen it up.  Back
 *    at alternate setting 0 the NCM parameters return to their defaults
 *    (NCM 7.2).
 *
 * Options: framing, mac and ip (the gadget's own addresses on the link),
 * speed (bit/s in SPEED_CHANGE), interface (the communication interface,
 * when it is not the first of class 2 with the framing's subclass),
 * ntb-in-max and ntb-out-max (NCM, GET_NTB_PARAMETERS).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/usb/cdc.h>
#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"
#include "ncm_ntb.h"
#include "netstack.h"

#define ETHER_NOTE_MAX		4
#define ETHER_NOTE_LEN		16	/* SPEED_CHANGE, the longest */
#define ETHER_NTB_PARAMS_LEN	0x1c	/* NCM 6.2.1, table 6-3 */
#define ETHER_DGRAM_DEFAULT	1514
#define ETHER_SPEED_DEFAULT	100000000u

struct ether_opts {
	bool ncm;
	struct net_self self;
	uint32_t speed;
	uint32_t ntb_in_max;
	uint32_t ntb_out_max;
};

/* Where the function lives in the script's descriptors. */
struct ether_eps {
	const struct gd_config *cfg;
	const struct gd_alt *comm;	/* alternate setting 0 */
	const struct gd_alt *data;	/* the one with the bulk pair */
	const struct gd_endpoint *notify, *in, *out;
};

/* beyond the responder's: frames to the host, NTBs and frames lost */
struct ether_counts {
	uint64_t tx_frames, malformed, dropped;
};

struct ether {
	struct ether_opts o;
	struct ether_eps e;
	struct gdev_urbq in, notify;

	struct net_frameq txq;	/* frames toward the host */

	/* notifications toward the host, a ring; note_off: bytes of the
	 * first already sent (a short URB takes it in pieces) */
	uint8_t note[ETHER_NOTE_MAX][ETHER_NOTE_LEN];
	uint8_t note_len[ETHER_NOTE_MAX];
	unsigned int note_first, note_n, note_off;
	bool up;		/* link state last queued */
	bool host_saw_up;	/* a connected notification went out */

	/* what the host set */
	uint16_t filter;
	uint16_t mc_filters;
	uint32_t ntb_in_size;
	uint16_t ntb_format;
	uint16_t max_dgram;
	uint16_t crc_mode;
	uint16_t seq;		/* NTH16 wSequence of the next block */

	struct net_counts net;
	struct ether_counts n;
	uint8_t scratch[NET_FRAME_MAX];
};

/* ---- options and descriptors ---- */

static int parse_opts(const struct gd_device *m, struct ether_opts *o,
		      struct script_error *err)
{
	static const char *const keys[] = {
		"framing", "mac", "ip", "speed", "interface", "ntb-in-max",
		"ntb-out-max", NULL,
	};
	const struct gd_fn_opt *opt;
	uint64_t v;
	int rc;

	memset(o, 0, sizeof(*o));
	rc = fn_opt_only(m, keys, err);
	if (rc)
		return rc;
	opt = fn_opt(m, "framing");
	if (opt && strcmp(opt->value, "ecm") && strcmp(opt->value, "ncm"))
		return fn_opt_error(m, opt, err,
				    "framing: expected ecm or ncm, got '%s'",
				    opt->value);
	o->ncm = opt && !strcmp(opt->value, "ncm");

	rc = fn_opt_mac(m, "mac", "02:00:00:00:77:02", true, o->self.mac,
			err) ?:
	     fn_opt_ipv4(m, "ip", "192.168.77.2", o->self.ip, err) ?:
	     fn_opt_u64(m, "speed", ETHER_SPEED_DEFAULT, 0xffffffffu, 0, &v,
			err);
	if (rc)
		return rc;
	o->speed = v;
	if (!o->ncm && (fn_opt(m, "ntb-in-max") || fn_opt(m, "ntb-out-max")))
		return fn_opt_error(m, fn_opt(m, "ntb-in-max") ?:
				    fn_opt(m, "ntb-out-max"), err,
				    "NTB sizes need framing ncm");
	/* NCM 6.2.1: both at least 2048; 16-bit offsets reach 65535 */
	rc = fn_opt_u64(m, "ntb-in-max", 16384, 65535, 0, &v, err);
	if (rc)
		return rc;
	if (v < USB_CDC_NCM_NTB_MIN_IN_SIZE)
		return fn_opt_error(m, fn_opt(m, "ntb-in-max"), err,
				    "ntb-in-max: at least %d",
				    USB_CDC_NCM_NTB_MIN_IN_SIZE);
	o->ntb_in_max = v;
	rc = fn_opt_u64(m, "ntb-out-max", 16384, 65535, 0, &v, err);
	if (rc)
		return rc;
	if (v < USB_CDC_NCM_NTB_MIN_OUT_SIZE)
		return fn_opt_error(m, fn_opt(m, "ntb-out-max"), err,
				    "ntb-out-max: at least %d",
				    USB_CDC_NCM_NTB_MIN_OUT_SIZE);
	o->ntb_out_max = v;
	return 0;
}

/* The union functional descriptor's bSlaveInterface0 (CDC 1.2 5.2.3.2),
 * or -1 when extra has none. */
static int union_slave(const struct gd_blob *extra)
{
	size_t i = 0, bl;

	while (i + 2 <= extra->len) {
		bl = extra->data[i];
		if (bl < 2 || bl > extra->len - i)
			break;		/* a script may bend descriptors */
		if (bl >= 5 && extra->data[i + 1] == USB_DT_CS_INTERFACE &&
		    extra->data[i + 2] == USB_CDC_UNION_TYPE)
			return extra->data[i + 4];
		i += bl;
	}
	return -1;
}

static const struct gd_alt *find_comm(const struct gd_device *m, bool ncm,
				      int intf, const struct gd_config **cfg)
{
	uint8_t sub = ncm ? USB_CDC_SUBCLASS_NCM : USB_CDC_SUBCLASS_ETHERNET;
	size_t c, i;

	for (c = 0; c < m->n_configs; c++) {
		for (i = 0; i < m->configs[c].n_alts; i++) {
			const struct gd_alt *a = &m->configs[c].alts[i];

			if (a->bAlternateSetting)
				continue;
			if (intf >= 0 ? a->bInterfaceNumber == intf :
			    a->bInterfaceClass == USB_CLASS_COMM &&
			    a->bInterfaceSubClass == sub) {
				*cfg = &m->configs[c];
				return a;
			}
		}
	}
	return NULL;
}

/*
 * The communication interface (`interface N`, else the first of class 2
 * with the framing's subclass), its interrupt IN endpoint, and the data
 * interface its union descriptor names (else the next number), at the
 * first alternate setting with a bulk IN and a bulk OUT endpoint.
 */
static int find_eps(const struct gd_device *m, const struct ether_opts *o,
		    struct ether_eps *e, struct script_error *err)
{
	const struct gd_fn_opt *iopt = fn_opt(m, "interface");
	uint64_t v = 0;
	int data_if;
	size_t i;

	memset(e, 0, sizeof(*e));
	if (fn_opt_u64(m, "interface", 0, 255, 0, &v, err))
		return -EINVAL;
	e->comm = find_comm(m, o->ncm, iopt ? (int)v : -1, &e->cfg);
	if (!e->comm && iopt)
		return fn_opt_error(m, iopt, err,
				    "no interface %u (alternate setting 0) in any configuration",
				    (unsigned int)v);
	if (!e->comm)
		return fn_opt_error(m, NULL, err,
				    "no communication interface (bInterfaceClass 2, bInterfaceSubClass 0x%02x for %s): add one or name it with 'interface N'",
				    o->ncm ? USB_CDC_SUBCLASS_NCM :
				    USB_CDC_SUBCLASS_ETHERNET,
				    o->ncm ? "ncm" : "ecm");
	e->notify = fn_alt_ep(e->comm, USB_ENDPOINT_XFER_INT, true);
	if (!e->notify)
		return fn_opt_error(m, iopt, err,
				    "interface %u needs an interrupt IN endpoint for the link notifications",
				    e->comm->bInterfaceNumber);
	data_if = union_slave(&e->comm->extra);
	if (data_if < 0)
		data_if = e->comm->bInterfaceNumber + 1;
	for (i = 0; i < e->cfg->n_alts; i++) {
		const struct gd_alt *a = &e->cfg->alts[i];

		if (a->bInterfaceNumber != data_if)
			continue;
		e->in = fn_alt_ep(a, USB_ENDPOINT_XFER_BULK, true);
		e->out = fn_alt_ep(a, USB_ENDPOINT_XFER_BULK, false);
		if (e->in && e->out) {
			e->data = a;
			break;
		}
	}
	if (!e->data)
		return fn_opt_error(m, iopt, err,
				    "data interface %d (the union descriptor's slave, else the next number) needs an alternate setting with a bulk IN and a bulk OUT endpoint",
				    data_if);
	if (e->data == e->comm)
		return fn_opt_error(m, iopt, err,
				    "the data interface's bulk pair must not be in the communication interface");
	return 0;
}

/* The options and endpoints of an attach: conf is its struct ether
 * (void *: for fn_state_new()). */
static int ether_parse(const struct gd_device *m, void *conf,
		       struct script_error *err)
{
	struct ether *st = conf;

	return parse_opts(m, &st->o, err) ?:
	       find_eps(m, &st->o, &st->e, err);
}

static int ether_validate(const struct gd_device *m, struct script_error *err)
{
	struct ether_opts o;
	struct ether_eps e;
	int rc;

	rc = parse_opts(m, &o, err);
	if (!rc)
		rc = find_eps(m, &o, &e, err);
	if (rc)
		return rc;
	return fn_ep_check_free(m, e.notify, "notification endpoint", err) ?:
	       fn_ep_check_free(m, e.in, "data IN endpoint", err) ?:
	       fn_ep_check_free(m, e.out, "data OUT endpoint", err);
}

/* ---- life cycle ---- */

static void ncm_defaults(struct ether *st)
{
	st->ntb_in_size = st->o.ntb_in_max;
	st->ntb_format = USB_CDC_NCM_NTB16_FORMAT;
	st->max_dgram = ETHER_DGRAM_DEFAULT;
	st->crc_mode = USB_CDC_NCM_CRC_NOT_APPENDED;
	st->seq = 0;
}

static int ether_attach(struct gdev *dev)
{
	struct ether *st;
	int ret;

	st = fn_state_new(dev->model, sizeof(*st), 0, ether_parse, &ret);
	if (!st)
		return ret;
	if (net_frameq_init(&st->txq)) {
		free(st);
		return -ENOMEM;
	}
	gdev_urbq_init(&st->in);
	gdev_urbq_init(&st->notify);
	ncm_defaults(st);
	dev->function_state = st;
	return 0;
}

static void log_counts(const struct ether *st)
{
	log_info("ether: %llu frames in, %llu out: %llu ARP and %llu echo replies, %llu ignored, %llu malformed, %llu dropped",
		 (unsigned long long)st->net.frames,
		 (unsigned long long)st->n.tx_frames,
		 (unsigned long long)st->net.arp,
		 (unsigned long long)st->net.echo,
		 (unsigned long long)st->net.ignored,
		 (unsigned long long)(st->net.malformed + st->n.malformed),
		 (unsigned long long)st->n.dropped);
}

static void ether_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct ether *st = dev->function_state;

	if (!st)
		return;
	log_counts(st);
	gdev_urbq_free(&st->in, free_urb);
	gdev_urbq_free(&st->notify, free_urb);
	net_frameq_free(&st->txq);
	free(st);
	dev->function_state = NULL;
}

static struct urb *ether_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct ether *st = dev->function_state;
	struct urb *urb;

	if (!st)
		return NULL;
	/* a pending URB holds nothing yet: no piece of a notification or
	 * frame is lost with it */
	urb = gdev_urbq_remove(&st->in, seqnum);
	return urb ? urb : gdev_urbq_remove(&st->notify, seqnum);
}

/* ---- notifications ---- */

static void note_put(struct ether *st, uint8_t type, uint16_t value,
		     const uint8_t *data, uint16_t len)
{
	uint8_t *b;

	if (st->note_n == ETHER_NOTE_MAX) {
		log_warn("ether: notification 0x%02x dropped: the queue is full",
			 type);
		return;
	}
	b = st->note[(st->note_first + st->note_n) % ETHER_NOTE_MAX];
	st->note_len[(st->note_first + st->note_n) % ETHER_NOTE_MAX] = 8 + len;
	st->note_n++;
	b[0] = USB_DIR_IN | USB_TYPE_CLASS | USB_RECIP_INTERFACE;
	b[1] = type;
	put_le16(b + 2, value);
	put_le16(b + 4, st->e.comm->bInterfaceNumber);
	put_le16(b + 6, len);
	if (len)
		memcpy(b + 8, data, len);
}

/* Send what is queued to the interrupt URBs the host has posted, at most
 * wMaxPacketSize per URB (a longer notification goes in pieces, which
 * usbnet reassembles). */
static void note_serve(struct gdev *dev, struct ether *st)
{
	unsigned int mps = st->e.notify->wMaxPacketSize & 0x7ff;
	struct urb *urb;
	uint8_t *b;
	size_t n, len;

	while (st->note_n && st->notify.head) {
		urb = gdev_urbq_pop(&st->notify);
		b = st->note[st->note_first];
		len = st->note_len[st->note_first];
		n = len - st->note_off;
		if (n > urb->length)
			n = urb->length;
		if (mps && n > mps)
			n = mps;
		memcpy(urb->buf, b + st->note_off, n);
		st->note_off += n;
		if (st->note_off == len) {
			if (b[1] == USB_CDC_NOTIFY_NETWORK_CONNECTION)
				st->host_saw_up = b[2];
			st->note_first = (st->note_first + 1) % ETHER_NOTE_MAX;
			st->note_n--;
			st->note_off = 0;
		}
		gdev_complete(dev, urb, 0, n);
	}
}

static void note_link(struct ether *st, bool up)
{
	uint8_t speeds[8];

	st->note_first = st->note_n = st->note_off = 0;
	if (up) {
		/* downlink then uplink bit rate (CDC ECM 6.3.3) */
		put_le32(speeds, st->o.speed);
		put_le32(speeds + 4, st->o.speed);
		note_put(st, USB_CDC_NOTIFY_SPEED_CHANGE, 0, speeds, 8);
		note_put(st, USB_CDC_NOTIFY_NETWORK_CONNECTION, 1, NULL, 0);
	} else if (st->host_saw_up) {
		note_put(st, USB_CDC_NOTIFY_NETWORK_CONNECTION, 0, NULL, 0);
	}
	st->up = up;
}

/* ---- the data path ---- */

/* One frame from the host: answered into the queue toward it. */
static void rx_frame(void *ctx, const uint8_t *f, size_t len)
{
	struct ether *st = ctx;
	size_t n;

	n = net_respond(&st->o.self, f, len, st->scratch, sizeof(st->scratch),
			&st->net, "ether");
	if (n && net_frameq_put(&st->txq, st->scratch, n)) {
		st->n.dropped++;
		log_warn("ether: reply dropped: %d frames wait for the host already",
			 NET_FRAMEQ_MAX);
	}
}

static void rx_transfer(struct ether *st, const struct urb *urb)
{
	const char *why = "";

	if (!st->o.ncm) {
		rx_frame(st, urb->buf, urb->length);
		return;
	}
	if (ntb16_parse(urb->buf, urb->length, rx_frame, st, &why) < 0) {
		st->n.malformed++;
		log_warn("ether: %u-byte NTB dropped (from there on): %s",
			 urb->length, why);
	}
}

/* Frames waiting to bulk IN URBs waiting. */
static void tx_serve(struct gdev *dev, struct ether *st)
{
	const uint8_t *f;
	struct urb *urb;
	size_t len, cap;
	int n;

	while (st->txq.n && st->in.head) {
		f = net_frameq_at(&st->txq, 0, &len);
		urb = st->in.head;
		if (!st->o.ncm) {
			gdev_urbq_pop(&st->in);
			st->n.tx_frames++;
			/* babble when the host's buffer is shorter */
			n = len > urb->length ? urb->length : len;
			memcpy(urb->buf, f, n);
			net_frameq_drop(&st->txq, 1);
			gdev_complete(dev, urb,
				      len > urb->length ? -EOVERFLOW : 0, n);
			continue;
		}
		/* never more than the host said it takes (NCM 6.2.7) */
		cap = urb->length < st->ntb_in_size ? urb->length :
		      st->ntb_in_size;
		n = ntb16_build(st->seq, f, len, urb->buf, cap);
		net_frameq_drop(&st->txq, 1);
		if (n < 0) {
			st->n.dropped++;
			log_warn("ether: %zu-byte frame dropped: an NTB of %zu bytes at most fits",
				 len, cap);
			continue;
		}
		st->seq++;
		st->n.tx_frames++;
		gdev_urbq_pop(&st->in);
		gdev_complete(dev, urb, 0, n);
	}
}

static int ether_submit(struct gdev *dev, struct urb *urb)
{
	struct ether *st = dev->function_state;

	if (!st)
		return -ENOENT;
	if (fn_urb_for(dev, urb, st->e.out)) {
		rx_transfer(st, urb);
		gdev_complete(dev, urb, 0, urb->length);
		tx_serve(dev, st);
	} else if (fn_urb_for(dev, urb, st->e.in)) {
		gdev_urbq_push(&st->in, urb);
		tx_serve(dev, st);
	} else if (fn_urb_for(dev, urb, st->e.notify)) {
		gdev_urbq_push(&st->notify, urb);
		note_serve(dev, st);
	} else {
		return -ENOENT;
	}
	return 0;
}

/* The configuration or an alternate setting changed. */
static void ether_reset(struct gdev *dev)
{
	struct ether *st = dev->function_state;
	bool up;

	if (!st)
		return;
	up = fn_ep_live(dev, st->e.in) && fn_ep_live(dev, st->e.out);
	if (!up) {
		gdev_urbq_flush(dev, &st->in, -ESHUTDOWN);
		net_frameq_drop(&st->txq, st->txq.n);
		/* NCM 7.2: alternate setting 0 resets the function */
		ncm_defaults(st);
		st->filter = 0;
	}
	if (!fn_ep_live(dev, st->e.notify)) {
		gdev_urbq_flush(dev, &st->notify, -ESHUTDOWN);
		st->note_first = st->note_n = st->note_off = 0;
		st->host_saw_up = false;
	}
	if (up != st->up)
		note_link(st, up);
	note_serve(dev, st);
}

/* ---- class requests ---- */

static int ntb_params(const struct ether *st, uint8_t *data, size_t len)
{
	uint8_t p[ETHER_NTB_PARAMS_LEN] = { 0 };
	size_t n = len < sizeof(p) ? len : sizeof(p);

	put_le16(p, sizeof(p));			/* wLength */
	put_le16(p + 2, USB_CDC_NCM_NTB16_SUPPORTED);
	put_le32(p + 4, st->o.ntb_in_max);	/* dwNtbInMaxSize */
	put_le16(p + 8, 4);			/* wNdpInDivisor */
	put_le16(p + 10, 0);			/* wNdpInPayloadRemainder */
	put_le16(p + 12, 4);			/* wNdpInAlignment */
	put_le32(p + 16, st->o.ntb_out_max);	/* dwNtbOutMaxSize */
	put_le16(p + 20, 4);			/* wNdpOutDivisor */
	put_le16(p + 22, 0);			/* wNdpOutPayloadRemainder */
	put_le16(p + 24, 4);			/* wNdpOutAlignment */
	put_le16(p + 26, 0);			/* wNtbOutMaxDatagrams: any */
	memcpy(data, p, n);
	return n;
}

static int reply16(uint16_t v, uint8_t *data, size_t len)
{
	uint8_t b[2];
	size_t n = len < 2 ? len : 2;

	put_le16(b, v);
	memcpy(data, b, n);
	return n;
}

/* NCM 6.2: the requests beyond ECM's, or -ENOENT. */
static int ncm_control(struct gdev *dev, struct ether *st,
		       const struct usb_setup *s, uint8_t *data, size_t len)
{
	bool in = s->bmRequestType & USB_DIR_IN;
	uint8_t b[4];
	uint32_t v;

	switch (s->bRequest) {
	case USB_CDC_GET_NTB_PARAMETERS:
		return in ? ntb_params(st, data, len) : -EPIPE;
	case USB_CDC_GET_NTB_FORMAT:
		return in ? reply16(st->ntb_format, data, len) : -EPIPE;
	case USB_CDC_SET_NTB_FORMAT:
		/* NTB32 is not in bmNtbFormatsSupported; NCM 6.2.5: only
		 * while the data interface is at alternate setting 0 */
		if (in || s->wValue != USB_CDC_NCM_NTB16_FORMAT ||
		    fn_ep_live(dev, st->e.in))
			return -EPIPE;
		st->ntb_format = s->wValue;
		return 0;
	case USB_CDC_GET_NTB_INPUT_SIZE:
		if (!in)
			return -EPIPE;
		put_le32(b, st->ntb_in_size);
		memcpy(data, b, len < 4 ? len : 4);
		return len < 4 ? len : 4;
	case USB_CDC_SET_NTB_INPUT_SIZE:
		/* 4 bytes, or 8 with wNtbInMaxDatagrams (NCM 6.2.7) */
		if (in || (s->wLength != 4 && s->wLength != 8) || len < 4)
			return -EPIPE;
		v = get_le32(data);
		if (v < USB_CDC_NCM_NTB_MIN_IN_SIZE || v > st->o.ntb_in_max)
			return -EPIPE;
		st->ntb_in_size = v;
		log_info("ether: NTB input size %u", v);
		return 0;
	case USB_CDC_GET_MAX_DATAGRAM_SIZE:
		return in ? reply16(st->max_dgram, data, len) : -EPIPE;
	case USB_CDC_SET_MAX_DATAGRAM_SIZE:
		if (in || s->wLength != 2 || len < 2)
			return -EPIPE;
		v = get_le16(data);
		if (v < NET_ETH_HLEN || v > NET_FRAME_MAX)
			return -EPIPE;
		st->max_dgram = v;
		return 0;
	case USB_CDC_GET_CRC_MODE:
		return in ? reply16(st->crc_mode, data, len) : -EPIPE;
	case USB_CDC_SET_CRC_MODE:
		/* the function never appends a CRC */
		if (in || s->wValue != USB_CDC_NCM_CRC_NOT_APPENDED)
			return -EPIPE;
		st->crc_mode = s->wValue;
		return 0;
	default:
		return -ENOENT;
	}
}

static int ether_control(struct gdev *dev, const struct usb_setup *s,
			 uint8_t *data, size_t len)
{
	struct ether *st = dev->function_state;
	bool in = s->bmRequestType & USB_DIR_IN;
	int rc;

	if (!st || (s->bmRequestType & (USB_TYPE_MASK | USB_RECIP_MASK)) !=
		   (USB_TYPE_CLASS | USB_RECIP_INTERFACE) ||
	    (s->wIndex & 0xff) != st->e.comm->bInterfaceNumber)
		return -ENOENT;
	switch (s->bRequest) {
	case USB_CDC_SET_ETHERNET_PACKET_FILTER:
		/* ECM 6.2.4: the bitmap in wValue, no data stage */
		if (in || s->wLength)
			return -EPIPE;
		if (st->filter != s->wValue)
			log_info("ether: packet filter 0x%04x", s->wValue);
		st->filter = s->wValue;
		return 0;
	case USB_CDC_SET_ETHERNET_MULTICAST_FILTERS:
		/* ECM 6.2.2: wValue addresses of 6 bytes each */
		if (in || s->wLength != 6u * s->wValue || len < s->wLength)
			return -EPIPE;
		st->mc_filters = s->wValue;
		return 0;
	}
	if (st->o.ncm) {
		rc = ncm_control(dev, st, s, data, len);
		if (rc != -ENOENT)
			return rc;
	}
	/* no power management patterns, no statistics (bmEthernetStatistics
	 * is 0 in the examples), no encapsulated commands */
	return -EPIPE;
}

const struct fn_ops fn_ether_ops = {
	.name = "ether",
	.validate = ether_validate,
	.attach = ether_attach,
	.detach = ether_detach,
	.control = ether_control,
	.submit = ether_submit,
	.unlink = ether_unlink,
	.reset = ether_reset,
};
