// SPDX-License-Identifier: GPL-2.0
/*
 * server.c - the USB/IP server loop (see server.h for the contract).
 *
 * libevent 2.1 in the shape of its samples: static *_cb callbacks, every
 * constructor checked, everything freed in reverse order.  Input is taken
 * item by item (op_common, import request, URB header, URB payload); the
 * read low watermark is set to the size of the item being waited for, so
 * a callback only runs when a whole item can be decoded.
 *
 * Ownership: a struct urb belongs to the device between gdev_submit() and
 * host->complete() (or gdev_unlink()/gdev_detach()), and to this file
 * otherwise; every path that ends a URB goes through conn_urb_free() so
 * the per-connection accounting stays exact.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "device.h"
#include "log.h"
#include "server.h"
#include "usbip_wire.h"

/*
 * Back-pressure: once this much output waits for a peer that does not
 * read, stop reading its requests until the output drains to CONN_OUT_LOW.
 */
#define CONN_OUT_HIGH		(4u * 1024 * 1024)
#define CONN_OUT_LOW		(1u * 1024 * 1024)

/*
 * URBs a connection may leave with the device (NAKed IN, delayed replies)
 * and the buffer bytes they hold.  vhci-hcd keeps far fewer in flight; a
 * peer beyond this is flooding us and loses its connection.
 */
#define CONN_MAX_URBS		4096
#define CONN_MAX_URB_BYTES	((size_t)256 * 1024 * 1024)

/* The largest URB payload the wire codec lets through, rechecked here. */
#define CONN_MAX_PAYLOAD	((size_t)USBIP_MAX_TRANSFER + \
				 (size_t)USBIP_MAX_ISO_PACKETS * USBIP_ISO_DESC_SIZE)

/* Seconds a peer may sit in the op phase, and take to read a last reply. */
#define CONN_OP_TIMEOUT		30
#define CONN_FLUSH_TIMEOUT	10

/* IN data at least this long is handed to the output buffer by reference. */
#define CONN_ZEROCOPY_MIN	4096

#define USB_ENDPOINT_XFERTYPE_MASK	0x03
#define USB_ENDPOINT_XFER_ISOC		1

struct conn;

struct server_gadget {
	const struct gd_device *model;
	struct gdev *gdev;
	char busid[USBIP_BUSID_SIZE];
	uint32_t devnum;
	uint32_t devid;			/* busnum << 16 | devnum */
	struct conn *owner;		/* importing connection, NULL when free */
};

enum conn_phase {
	CONN_OP,			/* op_common (+ import busid) expected */
	CONN_URB,			/* imported: 48-byte URB headers */
	CONN_CLOSING,			/* last reply queued: flush, then close */
};

/* what an input step tells the loop in conn_process_input() */
enum conn_step {
	STEP_NEXT,			/* item consumed, look for the next */
	STEP_WAIT,			/* need more bytes; watermark set */
	STEP_STOP,			/* closing or freed: touch nothing */
};

struct conn {
	struct server *srv;
	struct conn *prev, *next;
	struct bufferevent *bev;
	struct event *kill_ev;		/* deferred close for host->disconnect */
	enum conn_phase phase;
	unsigned long id;
	char peer[72];			/* "#id addr:port", for logs */

	struct server_gadget *gadget;		/* CONN_URB: the imported gadget */
	bool paused;			/* reading stopped for back-pressure */
	bool unplugged;			/* disconnect fault: closing soon */
	bool have_hdr;			/* hdr decoded, payload awaited */
	struct usbip_hdr hdr;
	size_t payload_len;

	unsigned int n_urbs;		/* URBs the device holds for us */
	size_t urb_bytes;		/* their buffer bytes */
};

struct server {
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *retry_ev;		/* re-enable accept after EMFILE */
	int port;
	struct server_gadget *gadgets[SERVER_MAX_GADGETS];
	unsigned int n_gadgets;
	struct conn *conns;
	unsigned int n_conns;
	unsigned long next_conn_id;
};

static void conn_complete_cb(void *ctx, struct urb *urb);
static void conn_disconnect_cb(void *ctx, const char *why);
static void conn_process_input(struct conn *c);

static const struct gdev_host conn_host_ops = {
	.complete = conn_complete_cb,
	.disconnect = conn_disconnect_cb,
};

/* ---------------------------------------------------------------------
 * URB and connection lifetime
 * --------------------------------------------------------------------- */

/* Every URB ends here, whatever ended it (completion, unlink, detach). */
static void conn_urb_free(struct urb *urb)
{
	struct conn *c = urb->owner;

	if (c) {
		c->n_urbs--;
		c->urb_bytes -= urb->length;
	}
	free(urb->iso);
	free(urb->buf);
	free(urb);
}

/* Give the gadget back: pending URBs are freed unanswered. */
static void conn_release_gadget(struct conn *c)
{
	struct server_gadget *g = c->gadget;

	if (!g)
		return;
	gdev_detach(g->gdev, conn_urb_free);
	g->owner = NULL;
	c->gadget = NULL;
	log_info("%s: %s released", c->peer, g->busid);
}

static void conn_free(struct conn *c)
{
	struct server *srv = c->srv;

	conn_release_gadget(c);
	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	srv->n_conns--;
	event_free(c->kill_ev);
	bufferevent_free(c->bev);
	free(c);
}

/* Close now, dropping unsent output.  Always returns STEP_STOP. */
static enum conn_step conn_drop(struct conn *c, const char *why)
{
	log_info("%s: closed: %s", c->peer, why);
	conn_free(c);
	return STEP_STOP;
}

/*
 * Stop reading, release the gadget at once (it is importable again while
 * the last bytes drain) and close when the output is empty or the peer
 * stops reading for CONN_FLUSH_TIMEOUT.  Returns STEP_STOP.
 */
static enum conn_step conn_close_after_flush(struct conn *c)
{
	struct timeval tv = { CONN_FLUSH_TIMEOUT, 0 };

	conn_release_gadget(c);
	c->phase = CONN_CLOSING;
	c->paused = false;
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
	bufferevent_set_timeouts(c->bev, NULL, &tv);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		conn_free(c);
	return STEP_STOP;
}

static enum conn_step conn_wait_for(struct conn *c, size_t need)
{
	bufferevent_setwatermark(c->bev, EV_READ, need, 0);
	return STEP_WAIT;
}

/* Output above CONN_OUT_HIGH: stop reading until it drains (write_cb). */
static void conn_check_backpressure(struct conn *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	if (c->paused || evbuffer_get_length(out) <= CONN_OUT_HIGH)
		return;
	c->paused = true;
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_setwatermark(c->bev, EV_WRITE, CONN_OUT_LOW, 0);
	log_dbg("%s: output %zu bytes, reading paused", c->peer,
		evbuffer_get_length(out));
}

/* ---------------------------------------------------------------------
 * Operation phase
 * --------------------------------------------------------------------- */

static struct server_gadget *server_find_gadget(struct server *srv,
					 const char *busid)
{
	unsigned int i;

	for (i = 0; i < srv->n_gadgets; i++)
		if (!strcmp(srv->gadgets[i]->busid, busid))
			return srv->gadgets[i];
	return NULL;
}

/*
 * The interfaces a DEVLIST shows: no configuration is active before the
 * host sets one, so take the first configuration, one record per distinct
 * bInterfaceNumber in ascending order (as usbipd walks sysfs), from its
 * alternate setting 0 (or its first alternate setting when 0 is missing).
 * Returns the count; recs must have room for 256.
 */
static unsigned int gadget_interfaces(const struct server_gadget *g,
				      struct usbip_usb_interface *recs)
{
	const struct gd_config *cfg;
	const struct gd_alt *pick[256] = { NULL };
	unsigned int n = 0, i;
	size_t k;

	if (!g->model->n_configs)
		return 0;
	cfg = &g->model->configs[0];
	for (k = 0; k < cfg->n_alts; k++) {
		const struct gd_alt *a = &cfg->alts[k];
		const struct gd_alt **p = &pick[a->bInterfaceNumber];

		if (!*p || ((*p)->bAlternateSetting && !a->bAlternateSetting))
			*p = a;
	}
	/* bNumInterfaces is 8 bits: the count and the records must agree */
	for (i = 0; i < 256 && n < 255; i++) {
		if (!pick[i])
			continue;
		recs[n].bInterfaceClass = pick[i]->bInterfaceClass;
		recs[n].bInterfaceSubClass = pick[i]->bInterfaceSubClass;
		recs[n].bInterfaceProtocol = pick[i]->bInterfaceProtocol;
		n++;
	}
	return n;
}

static void gadget_record(const struct server_gadget *g, struct usbip_usb_device *d,
			  unsigned int n_intf)
{
	const struct gd_device *m = g->model;

	memset(d, 0, sizeof(*d));
	snprintf(d->path, sizeof(d->path), "/sys/devices/usbrig/%s", g->busid);
	snprintf(d->busid, sizeof(d->busid), "%s", g->busid);
	d->busnum = g->devid >> 16;
	d->devnum = g->devnum;
	d->speed = m->speed;
	d->idVendor = m->idVendor;
	d->idProduct = m->idProduct;
	d->bcdDevice = m->bcdDevice;
	d->bDeviceClass = m->bDeviceClass;
	d->bDeviceSubClass = m->bDeviceSubClass;
	d->bDeviceProtocol = m->bDeviceProtocol;
	d->bConfigurationValue =
		m->n_configs ? m->configs[0].bConfigurationValue : 0;
	d->bNumConfigurations = m->bNumConfigurations_override >= 0 ?
		(uint8_t)m->bNumConfigurations_override : (uint8_t)m->n_configs;
	d->bNumInterfaces = (uint8_t)n_intf;
}

static void conn_send_op(struct conn *c, uint16_t code, uint32_t status)
{
	struct usbip_op_common op = {
		.version = USBIP_VERSION,
		.code = code,
		.status = status,
	};
	uint8_t raw[USBIP_OP_COMMON_SIZE];

	usbip_op_common_pack(&op, raw);
	bufferevent_write(c->bev, raw, sizeof(raw));
}

static void conn_send_device(struct conn *c, const struct server_gadget *g,
			     bool with_interfaces)
{
	struct usbip_usb_interface recs[256];
	struct usbip_usb_device d;
	uint8_t raw[USBIP_USB_DEVICE_SIZE];
	unsigned int n, i;

	n = gadget_interfaces(g, recs);
	gadget_record(g, &d, n);
	usbip_usb_device_pack(&d, raw);
	bufferevent_write(c->bev, raw, USBIP_USB_DEVICE_SIZE);
	if (!with_interfaces)
		return;
	for (i = 0; i < n; i++) {
		usbip_usb_interface_pack(&recs[i], raw);
		bufferevent_write(c->bev, raw, USBIP_USB_INTERFACE_SIZE);
	}
}

static enum conn_step conn_devlist(struct conn *c)
{
	struct server *srv = c->srv;
	uint8_t ndev[USBIP_DEVLIST_NDEV_SIZE];
	unsigned int i;

	conn_send_op(c, OP_REP_DEVLIST, ST_OK);
	bufferevent_write(c->bev, ndev,
			  usbip_devlist_ndev_pack(srv->n_gadgets, ndev));
	for (i = 0; i < srv->n_gadgets; i++)
		conn_send_device(c, srv->gadgets[i], true);
	log_info("%s: devlist: %u devices", c->peer, srv->n_gadgets);
	/* one request per connection, like usbipd */
	return conn_close_after_flush(c);
}

static enum conn_step conn_import(struct conn *c, const uint8_t *body)
{
	char busid[USBIP_BUSID_SIZE];
	struct server_gadget *g;
	int ret;

	usbip_import_req_unpack(busid, body, USBIP_BUSID_SIZE);
	g = server_find_gadget(c->srv, busid);
	if (!g) {
		log_info("%s: import %s: no such device", c->peer, busid);
		conn_send_op(c, OP_REP_IMPORT, ST_NODEV);
		return conn_close_after_flush(c);
	}
	if (g->owner) {
		log_info("%s: import %s: busy (%s)", c->peer, busid,
			 g->owner->peer);
		conn_send_op(c, OP_REP_IMPORT, ST_DEV_BUSY);
		return conn_close_after_flush(c);
	}
	ret = gdev_attach(g->gdev, &conn_host_ops, c);
	if (ret < 0) {
		log_err("%s: import %s: attach: %s", c->peer, busid,
			strerror(-ret));
		conn_send_op(c, OP_REP_IMPORT, ST_DEV_ERR);
		return conn_close_after_flush(c);
	}
	g->owner = c;
	c->gadget = g;
	c->phase = CONN_URB;
	/* an imported device may idle for ever: no read timeout any more */
	bufferevent_set_timeouts(c->bev, NULL, NULL);
	conn_send_op(c, OP_REP_IMPORT, ST_OK);
	/* the record echoes the requested busid: equal as a C string */
	conn_send_device(c, g, false);
	log_info("%s: imported %s (%04x:%04x)", c->peer, g->busid,
		 g->model->idVendor, g->model->idProduct);
	return STEP_NEXT;
}

static enum conn_step conn_do_op(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	size_t avail = evbuffer_get_length(in);
	uint8_t raw[USBIP_IMPORT_REQ_SIZE];
	struct usbip_op_common op;
	uint16_t reply;

	if (avail < USBIP_OP_COMMON_SIZE)
		return conn_wait_for(c, USBIP_OP_COMMON_SIZE);
	evbuffer_copyout(in, raw, USBIP_OP_COMMON_SIZE);
	if (usbip_op_common_unpack(&op, raw, USBIP_OP_COMMON_SIZE) < 0)
		return conn_drop(c, "undecodable op_common");
	/* the reply to a request code is the code without OP_REQUEST */
	reply = op.code & ~OP_REQUEST;

	if (op.version != USBIP_VERSION) {
		log_warn("%s: %s with version %#06x, expected %#06x",
			 c->peer, usbip_op_name(op.code), op.version,
			 USBIP_VERSION);
		if (op.code != OP_REQ_DEVLIST && op.code != OP_REQ_IMPORT)
			return conn_drop(c, "bad version");
		conn_send_op(c, reply, ST_ERROR);
		return conn_close_after_flush(c);
	}

	switch (op.code) {
	case OP_REQ_DEVLIST:
		evbuffer_drain(in, USBIP_OP_COMMON_SIZE);
		return conn_devlist(c);
	case OP_REQ_IMPORT:
		if (avail < USBIP_IMPORT_REQ_SIZE)
			return conn_wait_for(c, USBIP_IMPORT_REQ_SIZE);
		evbuffer_remove(in, raw, USBIP_IMPORT_REQ_SIZE);
		return conn_import(c, raw + USBIP_OP_COMMON_SIZE);
	default:
		log_warn("%s: unknown op code %#06x", c->peer, op.code);
		conn_send_op(c, reply, ST_ERROR);
		return conn_close_after_flush(c);
	}
}

/* ---------------------------------------------------------------------
 * URB phase
 * --------------------------------------------------------------------- */

/*
 * Known not to be isochronous: ep0, or an endpoint of the active
 * configuration of another type.  An endpoint that is not active keeps
 * whatever the host sent (the device STALLs it with the packets intact).
 */
static bool conn_ep_not_iso(struct conn *c, bool dir_in, uint32_t ep)
{
	const struct gd_endpoint *d;

	if (ep == 0 || ep > 15)
		return true;
	d = c->gadget->gdev->ep[dir_in][ep].desc;
	return d && (d->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK) !=
		USB_ENDPOINT_XFER_ISOC;
}

static void urb_setup_hex(const struct urb *urb, char *dst, size_t len)
{
	unsigned int i;
	size_t n;

	dst[0] = '\0';
	if (urb->ep != 0 || len < sizeof(" setup=") + 2 * 8)
		return;
	n = (size_t)snprintf(dst, len, " setup=");
	for (i = 0; i < 8; i++, n += 2)
		snprintf(dst + n, len - n, "%02x", urb->setup[i]);
}

static enum conn_step conn_submit(struct conn *c)
{
	const struct usbip_cmd_submit *cs = &c->hdr.u.cmd_submit;
	struct evbuffer *in = bufferevent_get_input(c->bev);
	bool dir_in = c->hdr.base.direction == USBIP_DIR_IN;
	int32_t np = cs->number_of_packets;
	uint8_t raw[USBIP_ISO_DESC_SIZE];
	struct urb *urb;
	uint32_t len;
	int32_t i;

	/*
	 * usbip_hdr_unpack_cmd() bounds both; checked again because a
	 * negative value here would become a huge allocation.
	 */
	if (cs->transfer_buffer_length < 0 ||
	    (uint32_t)cs->transfer_buffer_length > USBIP_MAX_TRANSFER ||
	    np < 0 || np > USBIP_MAX_ISO_PACKETS)
		return conn_drop(c, "URB lengths out of range");
	len = (uint32_t)cs->transfer_buffer_length;

	if (c->n_urbs >= CONN_MAX_URBS ||
	    c->urb_bytes + len > CONN_MAX_URB_BYTES) {
		log_warn("%s: %u URBs / %zu bytes pending, limit reached",
			 c->peer, c->n_urbs, c->urb_bytes);
		return conn_drop(c, "too many pending URBs");
	}

	urb = calloc(1, sizeof(*urb));
	if (!urb)
		return conn_drop(c, "out of memory");
	/* at least one byte, so buf is never NULL even for length 0 */
	urb->buf = calloc(1, len ? len : 1);
	if (np)
		urb->iso = calloc(np, sizeof(*urb->iso));
	if (!urb->buf || (np && !urb->iso)) {
		conn_urb_free(urb);
		return conn_drop(c, "out of memory");
	}
	urb->seqnum = c->hdr.base.seqnum;
	urb->ep = (uint8_t)c->hdr.base.ep;
	urb->dir_in = dir_in;
	urb->transfer_flags = cs->transfer_flags;
	urb->length = len;
	urb->start_frame = cs->start_frame;
	urb->interval = cs->interval;
	urb->number_of_packets = np;
	memcpy(urb->setup, cs->setup, sizeof(urb->setup));

	/* the payload is all there: conn_do_urb() waited for payload_len */
	if (!dir_in)
		evbuffer_remove(in, urb->buf, len);
	for (i = 0; i < np; i++) {
		struct usbip_iso_desc *d = &urb->iso[i];

		evbuffer_remove(in, raw, sizeof(raw));
		usbip_iso_desc_unpack(d, raw, sizeof(raw));
		/* a packet outside the buffer: probably malicious */
		if (d->offset > len || d->length > len - d->offset) {
			conn_urb_free(urb);
			return conn_drop(c, "iso packet outside the buffer");
		}
		d->actual_length = 0;
		d->status = 0;
	}
	/*
	 * Whether a URB is isochronous follows from the endpoint type, not
	 * from number_of_packets: descriptors sent for any other endpoint
	 * were consumed above and are ignored.
	 */
	if (np && conn_ep_not_iso(c, dir_in, urb->ep)) {
		log_dbg("%s: seq=%u: %d iso packets for a non-iso endpoint, ignored",
			c->peer, urb->seqnum, np);
		free(urb->iso);
		urb->iso = NULL;
		urb->number_of_packets = 0;
	}

	urb->owner = c;
	c->n_urbs++;
	c->urb_bytes += len;
	gdev_submit(c->gadget->gdev, urb);
	return STEP_NEXT;
}

static void conn_send_ret_unlink(struct conn *c, uint32_t seqnum,
				 int32_t status)
{
	struct usbip_hdr h;
	uint8_t raw[USBIP_HDR_SIZE];

	/* devid, direction and ep are 0 in replies, as usbip-host sends */
	memset(&h, 0, sizeof(h));
	h.base.command = USBIP_RET_UNLINK;
	h.base.seqnum = seqnum;
	h.u.ret_unlink.status = status;
	usbip_hdr_pack(&h, raw);
	bufferevent_write(c->bev, raw, sizeof(raw));
}

/*
 * A pending victim is cancelled and only RET_UNLINK -ECONNRESET is sent.
 * Otherwise its RET_SUBMIT is already in the output ahead of this
 * RET_UNLINK 0 (or it never existed), which is the order vhci expects.
 */
static enum conn_step conn_unlink(struct conn *c)
{
	uint32_t victim = c->hdr.u.cmd_unlink.seqnum;
	struct urb *urb;
	int32_t status = 0;

	urb = gdev_unlink(c->gadget->gdev, victim);
	if (urb) {
		status = -ECONNRESET;
		conn_urb_free(urb);
	}
	log_dbg("%s seq=%u unlink victim=%u -> status=%d", c->gadget->busid,
		c->hdr.base.seqnum, victim, status);
	conn_send_ret_unlink(c, c->hdr.base.seqnum, status);
	conn_check_backpressure(c);
	return STEP_NEXT;
}

static enum conn_step conn_do_urb(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	size_t avail = evbuffer_get_length(in);
	uint8_t raw[USBIP_HDR_SIZE];
	int ret;

	if (!c->have_hdr) {
		if (avail < USBIP_HDR_SIZE)
			return conn_wait_for(c, USBIP_HDR_SIZE);
		evbuffer_remove(in, raw, USBIP_HDR_SIZE);
		avail -= USBIP_HDR_SIZE;
		ret = usbip_hdr_unpack_cmd(&c->hdr, raw, USBIP_HDR_SIZE);
		if (ret < 0) {
			char why[128];

			log_warn("%s: bad URB header: %s", c->peer,
				 usbip_hdr_describe(raw, why, sizeof(why)));
			return conn_drop(c, "bad URB header");
		}
		/* usbip-host drops a connection on a foreign devid too */
		if (c->hdr.base.devid != c->gadget->devid) {
			log_warn("%s: %s devid %#x, imported %#x", c->peer,
				 usbip_cmd_name(c->hdr.base.command),
				 c->hdr.base.devid, c->gadget->devid);
			return conn_drop(c, "wrong devid");
		}
		c->payload_len = usbip_cmd_payload_len(&c->hdr);
		/* should not happen, the codec bounds both terms */
		if (c->payload_len > CONN_MAX_PAYLOAD)
			return conn_drop(c, "URB payload too long");
		c->have_hdr = true;
	}
	if (avail < c->payload_len)
		return conn_wait_for(c, c->payload_len);
	c->have_hdr = false;

	if (c->hdr.base.command == USBIP_CMD_UNLINK)
		return conn_unlink(c);
	return conn_submit(c);
}

/* ---------------------------------------------------------------------
 * Completions from the device
 * --------------------------------------------------------------------- */

static void conn_zerocopy_cleanup_cb(const void *data, size_t len,
				     void *arg)
{
	(void)data;
	(void)len;
	free(arg);
}

/*
 * IN data: the first actual_length bytes of the buffer.  For an
 * isochronous URB the device has packed the packets' data back to back at
 * the start of the buffer (the padding between packets is not sent; vhci
 * moves each packet back to its offset, usbip_pad_iso()), and the reported
 * actual_length must be the sum of the packets' actual_length, which vhci
 * checks (usbip_recv_iso()): it is recomputed here from the descriptors.
 */
static void conn_complete_cb(void *ctx, struct urb *urb)
{
	struct conn *c = ctx;
	struct evbuffer *out;
	struct usbip_hdr h;
	uint8_t raw[USBIP_HDR_SIZE];
	uint32_t actual;
	char setup[32];
	int32_t i;

	if (c->phase != CONN_URB || c->gadget == NULL) {
		/* cannot happen: detach takes pending URBs back first */
		log_err("%s: completion of seq=%u after release", c->peer,
			urb->seqnum);
		conn_urb_free(urb);
		return;
	}
	out = bufferevent_get_output(c->bev);

	/* never more than the host asked for: vhci drops the link for it */
	actual = urb->actual_length <= urb->length ? urb->actual_length :
		urb->length;
	if (urb->number_of_packets > 0) {
		uint32_t room = urb->length;

		actual = 0;
		for (i = 0; i < urb->number_of_packets; i++) {
			struct usbip_iso_desc *d = &urb->iso[i];

			if (d->actual_length > d->length)
				d->actual_length = d->length;
			if (d->actual_length > room)
				d->actual_length = room;
			room -= d->actual_length;
			actual += d->actual_length;
		}
	}

	memset(&h, 0, sizeof(h));
	h.base.command = USBIP_RET_SUBMIT;
	h.base.seqnum = urb->seqnum;
	h.u.ret_submit.status = urb->status;
	h.u.ret_submit.actual_length = (int32_t)actual;
	h.u.ret_submit.start_frame = urb->start_frame;
	h.u.ret_submit.number_of_packets = urb->number_of_packets;
	h.u.ret_submit.error_count = urb->error_count;
	usbip_hdr_pack(&h, raw);
	evbuffer_add(out, raw, sizeof(raw));

	if (urb->dir_in && actual >= CONN_ZEROCOPY_MIN) {
		/* the buffer now belongs to the output: freed once sent */
		if (evbuffer_add_reference(out, urb->buf, actual,
					   conn_zerocopy_cleanup_cb,
					   urb->buf) == 0)
			urb->buf = NULL;
		else
			evbuffer_add(out, urb->buf, actual);
	} else if (urb->dir_in && actual) {
		evbuffer_add(out, urb->buf, actual);
	}
	for (i = 0; i < urb->number_of_packets; i++) {
		usbip_iso_desc_pack(&urb->iso[i], raw);
		evbuffer_add(out, raw, USBIP_ISO_DESC_SIZE);
	}

	urb_setup_hex(urb, setup, sizeof(setup));
	log_dbg("%s seq=%u ep=%u %s len=%u%s -> status=%d actual=%u",
		c->gadget->busid, urb->seqnum, urb->ep,
		urb->dir_in ? "in" : "out", urb->length, setup, urb->status,
		actual);
	conn_urb_free(urb);
	conn_check_backpressure(c);
}

static void conn_kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	conn_close_after_flush(c);
}

/*
 * A disconnect fault: completions already queued are still sent, pending
 * URBs are dropped unanswered, then the socket closes, as an unplug would.
 * Deferred to a callback of our own so the device is never detached from
 * inside its own timer callback.
 */
static void conn_disconnect_cb(void *ctx, const char *why)
{
	struct conn *c = ctx;

	log_info("%s: %s: device disconnects: %s", c->peer,
		 c->gadget ? c->gadget->busid : "-", why ? why : "fault");
	/* no request read after this point gets an answer */
	c->unplugged = true;
	bufferevent_disable(c->bev, EV_READ);
	event_active(c->kill_ev, EV_TIMEOUT, 0);
}

/* ---------------------------------------------------------------------
 * bufferevent callbacks
 * --------------------------------------------------------------------- */

static void conn_process_input(struct conn *c)
{
	enum conn_step step = STEP_NEXT;

	/* c may be freed by a step: only STEP_NEXT allows another look */
	while (step == STEP_NEXT) {
		if (c->paused || c->unplugged || c->phase == CONN_CLOSING)
			return;
		if (c->phase == CONN_OP)
			step = conn_do_op(c);
		else
			step = conn_do_urb(c);
	}
}

static void conn_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_process_input(arg);
}

static void conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	size_t left = evbuffer_get_length(bufferevent_get_output(bev));

	if (c->phase == CONN_CLOSING) {
		if (left == 0) {
			log_info("%s: closed after the last reply", c->peer);
			conn_free(c);
		}
		return;
	}
	if (c->paused && left <= CONN_OUT_LOW) {
		c->paused = false;
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		if (c->unplugged)
			return;
		bufferevent_enable(bev, EV_READ);
		log_dbg("%s: output drained, reading resumed", c->peer);
		/* whole items may already wait in the input buffer */
		conn_process_input(c);
	}
}

static void conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	const char *why = "error";

	(void)bev;
	if (what & BEV_EVENT_EOF)
		why = c->have_hdr || evbuffer_get_length(
			bufferevent_get_input(bev)) ? "EOF inside a PDU" :
			"peer closed";
	else if (what & BEV_EVENT_TIMEOUT)
		why = "timeout";
	else if (what & BEV_EVENT_ERROR)
		why = evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR());
	conn_drop(c, why);
}

/* ---------------------------------------------------------------------
 * Accepting connections
 * --------------------------------------------------------------------- */

static void format_peer(struct conn *c, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	memset(&ss, 0, sizeof(ss));
	if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

			evutil_inet_ntop(AF_INET, &s4->sin_addr, host,
					 sizeof(host));
			port = ntohs(s4->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

			evutil_inet_ntop(AF_INET6, &s6->sin6_addr, host,
					 sizeof(host));
			port = ntohs(s6->sin6_port);
		} else if (ss.ss_family == AF_UNIX) {
			snprintf(host, sizeof(host), "local");
		}
	}
	snprintf(c->peer, sizeof(c->peer),
		 ss.ss_family == AF_INET6 ? "#%lu [%s]:%u" : "#%lu %s:%u",
		 c->id, host, port);
}

int server_add_connection(struct server *srv, int fd)
{
	struct timeval tv = { CONN_OP_TIMEOUT, 0 };
	int one = 1;
	struct conn *c;

	if (srv->n_conns >= SERVER_MAX_CONNS) {
		log_warn("%u connections open, refusing another",
			 srv->n_conns);
		evutil_closesocket(fd);
		return -EMFILE;
	}
	if (evutil_make_socket_nonblocking(fd) < 0) {
		evutil_closesocket(fd);
		return -errno;
	}
	/* small replies must not wait for Nagle; fails harmlessly on AF_UNIX */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));

	c = calloc(1, sizeof(*c));
	if (!c)
		goto err_close;
	c->srv = srv;
	c->id = ++srv->next_conn_id;
	c->phase = CONN_OP;
	format_peer(c, fd);

	c->bev = bufferevent_socket_new(srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev)
		goto err_free;
	c->kill_ev = event_new(srv->base, -1, 0, conn_kill_cb, c);
	if (!c->kill_ev)
		goto err_bev;
	bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb, conn_event_cb,
			  c);
	bufferevent_setwatermark(c->bev, EV_READ, USBIP_OP_COMMON_SIZE, 0);
	bufferevent_set_timeouts(c->bev, &tv, NULL);
	if (bufferevent_enable(c->bev, EV_READ | EV_WRITE) < 0)
		goto err_kill;

	c->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = c;
	srv->conns = c;
	srv->n_conns++;
	log_info("%s: connected", c->peer);
	return 0;

err_kill:
	event_free(c->kill_ev);
err_bev:
	/* BEV_OPT_CLOSE_ON_FREE closes fd */
	bufferevent_free(c->bev);
	free(c);
	return -ENOMEM;
err_free:
	free(c);
err_close:
	evutil_closesocket(fd);
	return -ENOMEM;
}

static void server_accept_cb(struct evconnlistener *listener,
			     evutil_socket_t fd, struct sockaddr *sa,
			     int socklen, void *arg)
{
	(void)listener;
	(void)sa;
	(void)socklen;
	server_add_connection(arg, fd);
}

static void server_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;

	(void)fd;
	(void)what;
	if (srv->listener)
		evconnlistener_enable(srv->listener);
}

/*
 * accept() failed for a reason that does not go away by retrying at once
 * (EMFILE, ENFILE, ENOBUFS): the listener would spin on the pending
 * connection, so pause it briefly.
 */
static void server_accept_error_cb(struct evconnlistener *listener,
				   void *arg)
{
	struct server *srv = arg;
	struct timeval tv = { 0, 200 * 1000 };
	int err = EVUTIL_SOCKET_ERROR();

	log_warn("accept: %s", evutil_socket_error_to_string(err));
	evconnlistener_disable(listener);
	evtimer_add(srv->retry_ev, &tv);
}

/* ---------------------------------------------------------------------
 * Public API
 * --------------------------------------------------------------------- */

struct server *server_new(struct event_base *base)
{
	struct server *srv;

	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return NULL;
	srv->base = base;
	srv->port = -1;
	srv->retry_ev = evtimer_new(base, server_retry_cb, srv);
	if (!srv->retry_ev) {
		free(srv);
		return NULL;
	}
	return srv;
}

int server_add_gadget(struct server *srv, const struct gd_device *model)
{
	struct server_gadget *g;

	if (srv->n_gadgets >= SERVER_MAX_GADGETS)
		return -ENOSPC;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->model = model;
	g->devnum = srv->n_gadgets + 1;
	g->devid = 1u << 16 | g->devnum;
	snprintf(g->busid, sizeof(g->busid), "1-%u", g->devnum);
	g->gdev = gdev_new(model, srv->base);
	if (!g->gdev) {
		free(g);
		return -ENOMEM;
	}
	srv->gadgets[srv->n_gadgets++] = g;
	log_info("%s: %04x:%04x %s", g->busid, model->idVendor,
		 model->idProduct, model->path ? model->path : "");
	return (int)g->devnum;
}

static int write_port_file(const char *path, int port)
{
	char tmp[4096];
	FILE *f;
	int ret;

	ret = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if (ret < 0 || (size_t)ret >= sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "%d\n", port);
	if (ferror(f) | fclose(f)) {
		ret = -errno;
		unlink(tmp);
		return ret ? ret : -EIO;
	}
	if (rename(tmp, path) < 0) {
		ret = -errno;
		unlink(tmp);
		return ret;
	}
	return 0;
}

static int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return -EAFNOSUPPORT;
}

int server_listen(struct server *srv, const char *addr, uint16_t port,
		  const char *port_file)
{
	const unsigned int flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
		LEV_OPT_CLOSE_ON_EXEC;
	struct addrinfo hints, *res, *ai;
	char portstr[8];
	int ret, err = 0;

	if (srv->listener)
		return -EALREADY;
	if (!addr)
		addr = SERVER_DEFAULT_ADDR;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(portstr, sizeof(portstr), "%u", port);
	ret = getaddrinfo(addr, portstr, &hints, &res);
	if (ret) {
		log_err("%s: %s", addr, gai_strerror(ret));
		return -EADDRNOTAVAIL;
	}
	for (ai = res; ai && !srv->listener; ai = ai->ai_next) {
		srv->listener = evconnlistener_new_bind(srv->base,
				server_accept_cb, srv, flags, 128,
				ai->ai_addr, (int)ai->ai_addrlen);
		if (!srv->listener)
			err = errno;
	}
	freeaddrinfo(res);
	if (!srv->listener) {
		log_err("listen on %s port %u: %s", addr, port,
			strerror(err ? err : EADDRNOTAVAIL));
		return -(err ? err : EADDRNOTAVAIL);
	}
	evconnlistener_set_error_cb(srv->listener, server_accept_error_cb);

	ret = bound_port(evconnlistener_get_fd(srv->listener));
	if (ret < 0) {
		log_err("getsockname: %s", strerror(-ret));
		goto err_listener;
	}
	srv->port = ret;
	if (port_file) {
		ret = write_port_file(port_file, srv->port);
		if (ret < 0) {
			log_err("%s: %s", port_file, strerror(-ret));
			goto err_listener;
		}
	}
	log_info("listening on %s port %d, %u gadgets", addr, srv->port,
		 srv->n_gadgets);
	return 0;

err_listener:
	evconnlistener_free(srv->listener);
	srv->listener = NULL;
	srv->port = -1;
	return ret;
}

int server_port(const struct server *srv)
{
	return srv->port;
}

unsigned int server_num_connections(const struct server *srv)
{
	return srv->n_conns;
}

void server_free(struct server *srv)
{
	unsigned int i;

	if (!srv)
		return;
	while (srv->conns)
		conn_free(srv->conns);
	if (srv->listener)
		evconnlistener_free(srv->listener);
	for (i = srv->n_gadgets; i-- > 0;) {
		gdev_free(srv->gadgets[i]->gdev);
		free(srv->gadgets[i]);
	}
	event_free(srv->retry_ev);
	free(srv);
}
