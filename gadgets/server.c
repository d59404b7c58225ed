// SPDX-License-Identifier: GPL-2.0
/*
 * server.c - the USB/IP server loop (see server.h for the contract).
 *
 * libevent 2.1 in the shape of its samples: static *_cb callbacks, every
 * constructor checked, everything freed in reverse order.  Input is taken
 * item by item (op_common, import request, URB header, URB payload); a
 * step that lacks bytes records how many the item needs (c->need) and
 * waits for the next read.
 *
 * The socket is read and written here, not by a bufferevent: libevent
 * 2.1's bufferevent reads at most 4 KiB per wakeup (EVBUFFER_MAX_READ,
 * each after a FIONREAD) and writes 16 KiB, so a 64 KiB URB took some
 * twenty trips through epoll.  A read here asks for the rest of the item
 * awaited, and more while the peer keeps the socket full (conn_recv());
 * the replies a batch of input produced are sent at its end, in one
 * sendmsg() where the socket takes them (conn_push_output()), and only
 * what it does not take waits for write_ev.
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
#include <sys/uio.h>
#include <unistd.h>

#include <event2/buffer.h>
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

/*
 * A read asks for at least CONN_READ_MIN bytes, for twice as much after a
 * read that filled what it asked (a busy peer), and for the rest of the
 * item awaited, never for more than CONN_READ_MAX: a 64 KiB OUT payload
 * comes in one read, while a connection that sends little keeps small
 * buffers (an idle one keeps none: a drained evbuffer frees its chains).
 * CONN_CHAIN_HDR is what libevent adds to a chain it allocates (struct
 * evbuffer_chain, rounded up) before rounding to a power of two: asking
 * for a power of two less that fills the allocation, not half of one
 * twice as big.
 */
#define CONN_READ_MIN		1024
#define CONN_READ_MAX		(1024u * 1024)
#define CONN_CHAIN_HDR		64

/*
 * CMD_UNLINKs held until the CMD_SUBMIT they name arrives (conn_unlink()).
 * vhci-hcd overtakes only submits queued while it sends unlinks: a few.
 */
#define CONN_EARLY_UNLINKS	64

/* output chains handed to one sendmsg() */
#define CONN_WRITE_IOV		64

/* OUT data at least this long is read straight into the URB's buffer */
#define CONN_DIRECT_MIN		4096

/*
 * A buffer this short (a control transfer's, mostly) is allocated with
 * its URB, right after it: one allocation.  Never handed to the output
 * by reference, which conn_urb_free() relies on.
 */
#define CONN_INLINE_MAX		256
_Static_assert(CONN_INLINE_MAX < CONN_ZEROCOPY_MIN, "inline buffers are copied");

#define USB_ENDPOINT_XFERTYPE_MASK	0x03
#define USB_ENDPOINT_XFER_ISOC		1

struct conn;

/* A CMD_UNLINK that came before the CMD_SUBMIT it names. */
struct conn_early_unlink {
	uint32_t seqnum;		/* the CMD_UNLINK's own */
	uint32_t victim;		/* the CMD_SUBMIT still to come */
};

struct server_gadget {
	const struct gd_device *model;
	struct gdev *gdev;		/* run-time state, from import to release */
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
	STEP_WAIT,			/* need more bytes: c->need set */
	STEP_STOP,			/* closing, paused or unplugged */
	STEP_FREED,			/* the connection is gone: touch nothing */
};

struct conn {
	struct server *srv;
	struct conn *prev, *next;
	int fd;
	struct event *read_ev;		/* persistent, pending while reading */
	struct event *write_ev;		/* pending while output waits for room */
	struct event *timeout_ev;	/* CONN_OP, CONN_CLOSING: see conn_arm() */
	struct evbuffer *in, *out;
	size_t need;			/* STEP_WAIT: input bytes the item needs */
	size_t read_size;		/* the least the next read asks for */
	bool in_input;			/* in conn_process_input(): replies wait */
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
	struct urb *rx_urb;		/* hdr's OUT URB, its data being read */
	uint32_t rx_got;		/* bytes of rx_urb->buf read so far */

	unsigned int n_urbs;		/* URBs the device holds for us */
	size_t urb_bytes;		/* their buffer bytes */

	bool have_submit;		/* last_submit is set */
	uint32_t last_submit;		/* seqnum of the latest CMD_SUBMIT */
	struct conn_early_unlink early[CONN_EARLY_UNLINKS];
	unsigned int n_early;
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
static enum conn_step conn_process_input(struct conn *c);

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
	if (urb->buf != (uint8_t *)(urb + 1))
		free(urb->buf);
	free(urb);
}

/*
 * Give the gadget back: pending URBs are freed unanswered, and its run-time
 * state with them (the next import starts from a new one).  Never called
 * from inside the device (its callbacks only queue output or defer).
 */
static void conn_release_gadget(struct conn *c)
{
	struct server_gadget *g = c->gadget;

	if (!g)
		return;
	gdev_detach(g->gdev, conn_urb_free);
	gdev_free(g->gdev);
	g->gdev = NULL;
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
	if (c->rx_urb)
		conn_urb_free(c->rx_urb);
	event_free(c->kill_ev);
	event_free(c->timeout_ev);
	event_free(c->write_ev);
	event_free(c->read_ev);
	/* the output's cleanup callbacks free the IN buffers it references */
	evbuffer_free(c->out);
	evbuffer_free(c->in);
	evutil_closesocket(c->fd);
	free(c);
}

/* Close now, dropping unsent output.  Always returns STEP_FREED. */
static enum conn_step conn_drop(struct conn *c, const char *why)
{
	log_info("%s: closed: %s", c->peer, why);
	conn_free(c);
	return STEP_FREED;
}

/*
 * (Re)start the connection's timeout: in CONN_OP, CONN_OP_TIMEOUT from
 * the last read; in CONN_CLOSING, CONN_FLUSH_TIMEOUT from the last byte
 * sent.  An imported connection has none.  A timer of its own, not the
 * I/O events' timeouts: libevent keeps a persistent event's timeout
 * even after event_add() without one.
 */
static void conn_arm(struct conn *c)
{
	struct timeval tv = { CONN_OP_TIMEOUT, 0 };

	if (c->phase == CONN_CLOSING)
		tv.tv_sec = CONN_FLUSH_TIMEOUT;
	evtimer_add(c->timeout_ev, &tv);
}

/* Send what the socket takes now: 0, or -1 with errno set. */
static int conn_send(struct conn *c)
{
	struct evbuffer_iovec v[CONN_WRITE_IOV];
	struct iovec iov[CONN_WRITE_IOV];
	struct msghdr msg = { .msg_iov = iov };
	size_t total;
	ssize_t n;
	int nv, i;

	while (evbuffer_get_length(c->out)) {
		nv = evbuffer_peek(c->out, -1, NULL, v, CONN_WRITE_IOV);
		if (nv > CONN_WRITE_IOV)
			nv = CONN_WRITE_IOV;
		total = 0;
		for (i = 0; i < nv; i++) {
			iov[i].iov_base = v[i].iov_base;
			iov[i].iov_len = v[i].iov_len;
			total += v[i].iov_len;
		}
		msg.msg_iovlen = (size_t)nv;
		/* MSG_NOSIGNAL: a peer gone is an EPIPE, not a SIGPIPE */
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		}
		evbuffer_drain(c->out, (size_t)n);
		if ((size_t)n < total)
			break;		/* the socket is full */
	}
	return 0;
}

/*
 * Send the output now; what the socket does not take goes from write_cb
 * when it has room.  write_cb also does what may not happen here: drop
 * the connection on a send error, resume reading once the output is
 * below CONN_OUT_LOW (it runs at once when the socket has room).  The
 * caller may be the device, which must not see its host vanish or new
 * URBs come in under it.
 */
static void conn_push_output(struct conn *c)
{
	if (event_pending(c->write_ev, EV_WRITE, NULL))
		return;
	if (evbuffer_get_length(c->out) && conn_send(c) < 0)
		goto later;
	if (!evbuffer_get_length(c->out) && !c->paused)
		return;
later:
	event_add(c->write_ev, NULL);
}

/*
 * Stop reading, release the gadget at once (it is importable again while
 * the last bytes drain) and close when the output is empty or the peer
 * stops reading for CONN_FLUSH_TIMEOUT.  Returns STEP_STOP.
 */
static enum conn_step conn_close_after_flush(struct conn *c)
{
	conn_release_gadget(c);
	c->phase = CONN_CLOSING;
	c->paused = false;
	event_del(c->read_ev);
	conn_arm(c);
	/* write_cb sends what is left and frees; even with nothing left,
	 * so the caller may still touch c */
	event_add(c->write_ev, NULL);
	return STEP_STOP;
}

static enum conn_step conn_wait_for(struct conn *c, size_t need)
{
	c->need = need;
	return STEP_WAIT;
}

/* Output above CONN_OUT_HIGH: stop reading until it drains (write_cb). */
static void conn_check_backpressure(struct conn *c)
{
	if (c->paused || evbuffer_get_length(c->out) <= CONN_OUT_HIGH)
		return;
	c->paused = true;
	event_del(c->read_ev);
	log_dbg("%s: output %zu bytes, reading paused", c->peer,
		evbuffer_get_length(c->out));
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
	evbuffer_add(c->out, raw, sizeof(raw));
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
	evbuffer_add(c->out, raw, USBIP_USB_DEVICE_SIZE);
	if (!with_interfaces)
		return;
	for (i = 0; i < n; i++) {
		usbip_usb_interface_pack(&recs[i], raw);
		evbuffer_add(c->out, raw, USBIP_USB_INTERFACE_SIZE);
	}
}

static enum conn_step conn_devlist(struct conn *c)
{
	struct server *srv = c->srv;
	uint8_t ndev[USBIP_DEVLIST_NDEV_SIZE];
	unsigned int i;

	conn_send_op(c, OP_REP_DEVLIST, ST_OK);
	evbuffer_add(c->out, ndev, usbip_devlist_ndev_pack(srv->n_gadgets, ndev));
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
	g->gdev = gdev_new(g->model, c->srv->base);
	ret = g->gdev ? gdev_attach(g->gdev, &conn_host_ops, c) : -ENOMEM;
	if (ret < 0) {
		log_err("%s: import %s: attach: %s", c->peer, busid,
			strerror(-ret));
		gdev_free(g->gdev);
		g->gdev = NULL;
		conn_send_op(c, OP_REP_IMPORT, ST_DEV_ERR);
		return conn_close_after_flush(c);
	}
	g->owner = c;
	c->gadget = g;
	c->phase = CONN_URB;
	/* an imported device may idle for ever: no timeout any more */
	evtimer_del(c->timeout_ev);
	conn_send_op(c, OP_REP_IMPORT, ST_OK);
	/* the record echoes the requested busid: equal as a C string */
	conn_send_device(c, g, false);
	log_info("%s: imported %s (%04x:%04x)", c->peer, g->busid,
		 g->model->idVendor, g->model->idProduct);
	return STEP_NEXT;
}

static enum conn_step conn_do_op(struct conn *c)
{
	struct evbuffer *in = c->in;
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

/*
 * The URB of the CMD_SUBMIT in c->hdr, its buffer allocated, no data in
 * it yet; NULL when the connection was dropped (limits, memory).
 */
static struct urb *conn_urb_new(struct conn *c)
{
	const struct usbip_cmd_submit *cs = &c->hdr.u.cmd_submit;
	bool dir_in = c->hdr.base.direction == USBIP_DIR_IN;
	int32_t np = cs->number_of_packets;
	struct urb *urb;
	uint32_t len;

	/*
	 * usbip_hdr_unpack_cmd() bounds both; checked again because a
	 * negative value here would become a huge allocation.
	 */
	if (cs->transfer_buffer_length < 0 ||
	    (uint32_t)cs->transfer_buffer_length > USBIP_MAX_TRANSFER ||
	    np < 0 || np > USBIP_MAX_ISO_PACKETS) {
		conn_drop(c, "URB lengths out of range");
		return NULL;
	}
	len = (uint32_t)cs->transfer_buffer_length;

	if (c->n_urbs >= CONN_MAX_URBS ||
	    c->urb_bytes + len > CONN_MAX_URB_BYTES) {
		log_warn("%s: %u URBs / %zu bytes pending, limit reached",
			 c->peer, c->n_urbs, c->urb_bytes);
		conn_drop(c, "too many pending URBs");
		return NULL;
	}

	/*
	 * At least one byte, so buf is never NULL even for length 0.  OUT
	 * data fills the buffer whole (the caller's job); an IN buffer
	 * starts zeroed, so no reply can carry stale heap bytes.
	 */
	if (len <= CONN_INLINE_MAX) {
		urb = calloc(1, sizeof(*urb) + (len ? len : 1));
		if (urb)
			urb->buf = (uint8_t *)(urb + 1);
	} else {
		urb = calloc(1, sizeof(*urb));
		if (urb)
			urb->buf = dir_in ? calloc(1, len) : malloc(len);
	}
	if (!urb) {
		conn_drop(c, "out of memory");
		return NULL;
	}
	if (np)
		urb->iso = calloc(np, sizeof(*urb->iso));
	if (!urb->buf || (np && !urb->iso)) {
		conn_urb_free(urb);
		conn_drop(c, "out of memory");
		return NULL;
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
	return urb;
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
	evbuffer_add(c->out, raw, sizeof(raw));
}

/* a comes before b in the client's numbering (serial arithmetic) */
static bool seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/*
 * The CMD_SUBMIT of seqnum has come whole: answer the early unlinks it
 * settles, in the order they came.  Its own victim's is cancelled
 * (RET_UNLINK -ECONNRESET, and true: the URB must not run); one whose
 * victim it has passed gets 0, as the submit is not coming (vhci sends
 * its submits in seqnum order).
 */
static bool conn_settle_early(struct conn *c, uint32_t seqnum)
{
	bool cancel = false;
	unsigned int i, k = 0;

	c->have_submit = true;
	c->last_submit = seqnum;
	for (i = 0; i < c->n_early; i++) {
		struct conn_early_unlink *e = &c->early[i];
		int32_t status = 0;

		if (e->victim == seqnum) {
			status = cancel ? 0 : -ECONNRESET;
			cancel = true;
		} else if (!seq_before(e->victim, seqnum)) {
			c->early[k++] = *e;
			continue;
		}
		log_dbg("%s seq=%u unlink victim=%u -> status=%d",
			c->gadget->busid, e->seqnum, e->victim, status);
		conn_send_ret_unlink(c, e->seqnum, status);
	}
	c->n_early = k;
	return cancel;
}

/*
 * The URB has its data: it counts against the limits, the device has it,
 * unless an unlink that overtook it cancelled it.
 */
static void conn_urb_start(struct conn *c, struct urb *urb)
{
	if (conn_settle_early(c, urb->seqnum)) {
		conn_urb_free(urb);
		conn_check_backpressure(c);
		return;
	}
	urb->owner = c;
	c->n_urbs++;
	c->urb_bytes += urb->length;
	gdev_submit(c->gadget->gdev, urb);
}

static enum conn_step conn_submit(struct conn *c)
{
	struct evbuffer *in = c->in;
	uint8_t raw[USBIP_ISO_DESC_SIZE];
	struct urb *urb;
	uint32_t len;
	int32_t np, i;

	urb = conn_urb_new(c);
	if (!urb)
		return STEP_FREED;
	len = urb->length;
	np = urb->number_of_packets;

	/* the payload is all there: conn_do_urb() waited for payload_len */
	if (!urb->dir_in)
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
	if (np && conn_ep_not_iso(c, urb->dir_in, urb->ep)) {
		log_dbg("%s: seq=%u: %d iso packets for a non-iso endpoint, ignored",
			c->peer, urb->seqnum, np);
		free(urb->iso);
		urb->iso = NULL;
		urb->number_of_packets = 0;
	}
	conn_urb_start(c, urb);
	return STEP_NEXT;
}

/*
 * An OUT URB whose data has not all come yet: its buffer takes what the
 * input holds, and conn_recv() reads the rest straight into it, one copy
 * of the data fewer.  Only for CONN_DIRECT_MIN bytes or more with no
 * isochronous descriptors behind them.
 */
static enum conn_step conn_submit_direct(struct conn *c, size_t avail)
{
	struct urb *urb = conn_urb_new(c);

	if (!urb)
		return STEP_FREED;
	evbuffer_remove(c->in, urb->buf, avail);
	c->rx_got = (uint32_t)avail;
	c->rx_urb = urb;
	return STEP_WAIT;
}

static bool conn_direct_ok(const struct conn *c)
{
	const struct usbip_cmd_submit *cs = &c->hdr.u.cmd_submit;

	return c->hdr.base.command == USBIP_CMD_SUBMIT &&
	       c->hdr.base.direction == USBIP_DIR_OUT &&
	       cs->number_of_packets == 0 &&
	       cs->transfer_buffer_length >= CONN_DIRECT_MIN;
}

/*
 * Hold an unlink whose victim may still come: numbered before the unlink
 * and after the latest CMD_SUBMIT.  vhci-hcd sends every queued submit,
 * then every queued unlink, one after the other while it finds more
 * (vhci_tx_loop()); an URB queued and unlinked while it is sending
 * unlinks has its CMD_UNLINK sent before its CMD_SUBMIT.  Answered at
 * once, its RET_UNLINK would make vhci give the URB back, and the
 * RET_SUBMIT after it would make vhci drop the connection ("cannot find
 * a urb of seqnum").  False when it is not such an unlink, or when
 * CONN_EARLY_UNLINKS are held already.
 */
static bool conn_hold_unlink(struct conn *c, uint32_t seqnum, uint32_t victim)
{
	if (!seq_before(victim, seqnum) ||
	    (c->have_submit && !seq_before(c->last_submit, victim)))
		return false;
	if (c->n_early == CONN_EARLY_UNLINKS) {
		log_warn("%s: %u unlinks of URBs not submitted yet, answering seq=%u at once",
			 c->peer, c->n_early, seqnum);
		return false;
	}
	c->early[c->n_early].seqnum = seqnum;
	c->early[c->n_early].victim = victim;
	c->n_early++;
	return true;
}

/*
 * A pending victim is cancelled and only RET_UNLINK -ECONNRESET is sent.
 * A victim still to come is held for conn_settle_early().  Otherwise its
 * RET_SUBMIT is already in the output ahead of this RET_UNLINK 0 (or it
 * never existed), which is the order vhci expects.
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
	} else if (conn_hold_unlink(c, c->hdr.base.seqnum, victim)) {
		log_dbg("%s seq=%u unlink victim=%u: not submitted yet, held",
			c->gadget->busid, c->hdr.base.seqnum, victim);
		return STEP_NEXT;
	}
	log_dbg("%s seq=%u unlink victim=%u -> status=%d", c->gadget->busid,
		c->hdr.base.seqnum, victim, status);
	conn_send_ret_unlink(c, c->hdr.base.seqnum, status);
	conn_check_backpressure(c);
	return STEP_NEXT;
}

static enum conn_step conn_do_urb(struct conn *c)
{
	struct evbuffer *in = c->in;
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
	if (c->rx_urb) {
		struct urb *urb = c->rx_urb;

		if (c->rx_got < urb->length)
			return STEP_WAIT;
		c->rx_urb = NULL;
		c->have_hdr = false;
		conn_urb_start(c, urb);
		return STEP_NEXT;
	}
	if (avail < c->payload_len) {
		if (conn_direct_ok(c))
			return conn_submit_direct(c, avail);
		return conn_wait_for(c, c->payload_len);
	}
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
	uint8_t raw[USBIP_HDR_SIZE + CONN_INLINE_MAX];
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
	out = c->out;

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

	if (urb->dir_in && actual && actual <= CONN_INLINE_MAX) {
		/* a short reply (a descriptor) goes in one piece */
		memcpy(raw + USBIP_HDR_SIZE, urb->buf, actual);
		evbuffer_add(out, raw, USBIP_HDR_SIZE + actual);
	} else {
		evbuffer_add(out, raw, USBIP_HDR_SIZE);
	}
	if (urb->dir_in && actual >= CONN_ZEROCOPY_MIN) {
		/* the buffer now belongs to the output: freed once sent */
		if (evbuffer_add_reference(out, urb->buf, actual,
					   conn_zerocopy_cleanup_cb,
					   urb->buf) == 0)
			urb->buf = NULL;
		else
			evbuffer_add(out, urb->buf, actual);
	} else if (urb->dir_in && actual > CONN_INLINE_MAX) {
		evbuffer_add(out, urb->buf, actual);
	}
	for (i = 0; i < urb->number_of_packets; i++) {
		usbip_iso_desc_pack(&urb->iso[i], raw);
		evbuffer_add(out, raw, USBIP_ISO_DESC_SIZE);
	}

	/* formatted only when the line is printed: this runs per URB */
	if (log_enabled(GLOG_DBG)) {
		urb_setup_hex(urb, setup, sizeof(setup));
		log_dbg("%s seq=%u ep=%u %s len=%u%s -> status=%d actual=%u",
			c->gadget->busid, urb->seqnum, urb->ep,
			urb->dir_in ? "in" : "out", urb->length, setup,
			urb->status, actual);
	}
	conn_urb_free(urb);
	/* from a timer (or any time outside a batch of input): send now */
	if (!c->in_input)
		conn_push_output(c);
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
	event_del(c->read_ev);
	event_active(c->kill_ev, EV_TIMEOUT, 0);
}

/* ---------------------------------------------------------------------
 * Socket callbacks
 * --------------------------------------------------------------------- */

/*
 * Take every whole item the input holds.  Replies accumulate in the
 * output meanwhile; the caller sends them after, unless STEP_FREED.
 */
static enum conn_step conn_process_input(struct conn *c)
{
	enum conn_step step = STEP_NEXT;

	c->in_input = true;
	while (step == STEP_NEXT) {
		if (c->paused || c->unplugged || c->phase == CONN_CLOSING) {
			step = STEP_STOP;
			break;
		}
		c->need = 0;
		if (c->phase == CONN_OP)
			step = conn_do_op(c);
		else
			step = conn_do_urb(c);
	}
	/* c may be freed by a step: only STEP_FREED says so */
	if (step != STEP_FREED)
		c->in_input = false;
	return step;
}

/*
 * One read: first the rest of rx_urb's data, straight into its buffer,
 * then into the input the rest of the item awaited or read_size,
 * whichever is more, up to CONN_READ_MAX.  Returns what readv() did; the
 * next read asks for twice as much when this one came back full, and
 * for half when it brought less than a quarter.
 */
static ssize_t conn_recv(struct conn *c)
{
	size_t have = evbuffer_get_length(c->in);
	size_t want = c->read_size - CONN_CHAIN_HDR, rx = 0, left;
	struct evbuffer_iovec v[2];
	struct iovec iov[3];
	int nv, k = 0, i;
	ssize_t n;

	if (c->rx_urb) {
		rx = c->rx_urb->length - c->rx_got;
		iov[0].iov_base = c->rx_urb->buf + c->rx_got;
		iov[0].iov_len = rx;
		k = 1;
	}
	if (c->need > have && c->need - have > want)
		want = c->need - have;
	if (want > CONN_READ_MAX)
		want = CONN_READ_MAX;
	nv = evbuffer_reserve_space(c->in, (ev_ssize_t)want, v, 2);
	if (nv <= 0) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < nv; i++) {
		iov[k + i].iov_base = v[i].iov_base;
		iov[k + i].iov_len = v[i].iov_len;
	}
	do
		n = readv(c->fd, iov, k + nv);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n;	/* nothing committed: the space stays free */
	left = (size_t)n;
	if (rx) {
		rx = left < rx ? left : rx;
		c->rx_got += (uint32_t)rx;
		left -= rx;
	}
	for (i = 0; i < nv && left; i++) {
		if (v[i].iov_len > left)
			v[i].iov_len = left;
		left -= v[i].iov_len;
	}
	evbuffer_commit_space(c->in, v, i);
	n -= (ssize_t)rx;	/* what the input got, for the sizing */
	if (!n)
		return (ssize_t)rx;
	if ((size_t)n >= want && c->read_size < CONN_READ_MAX)
		c->read_size *= 2;
	else if ((size_t)n < c->read_size / 4 && c->read_size > CONN_READ_MIN)
		c->read_size /= 2;
	return n + (ssize_t)rx;
}

static void conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	ssize_t n;

	(void)fd;
	(void)what;
	n = conn_recv(c);
	if (n == 0) {
		conn_drop(c, c->have_hdr || evbuffer_get_length(c->in) ?
			  "EOF inside a PDU" : "peer closed");
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			conn_drop(c, strerror(errno));
		return;
	}
	if (c->phase == CONN_OP)
		conn_arm(c);
	if (conn_process_input(c) != STEP_FREED)
		conn_push_output(c);
}

static void conn_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_drop(arg, "timeout");
}

static void conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	size_t before = evbuffer_get_length(c->out), left;

	(void)fd;
	(void)what;
	if (conn_send(c) < 0) {
		conn_drop(c, strerror(errno));
		return;
	}
	left = evbuffer_get_length(c->out);
	if (left == 0)
		event_del(c->write_ev);
	if (c->phase == CONN_CLOSING) {
		if (left < before)
			conn_arm(c);
		if (left == 0) {
			log_info("%s: closed after the last reply", c->peer);
			conn_free(c);
		}
		return;
	}
	if (c->paused && left <= CONN_OUT_LOW) {
		c->paused = false;
		if (c->unplugged)
			return;
		event_add(c->read_ev, NULL);
		log_dbg("%s: output drained, reading resumed", c->peer);
		/* whole items may already wait in the input buffer */
		if (conn_process_input(c) != STEP_FREED)
			conn_push_output(c);
	}
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
	c->fd = fd;
	c->id = ++srv->next_conn_id;
	c->phase = CONN_OP;
	c->read_size = CONN_READ_MIN;
	format_peer(c, fd);

	c->in = evbuffer_new();
	if (!c->in)
		goto err_free;
	c->out = evbuffer_new();
	if (!c->out)
		goto err_in;
	c->read_ev = event_new(srv->base, fd, EV_READ | EV_PERSIST,
			       conn_read_cb, c);
	if (!c->read_ev)
		goto err_out;
	c->write_ev = event_new(srv->base, fd, EV_WRITE | EV_PERSIST,
				conn_write_cb, c);
	if (!c->write_ev)
		goto err_read;
	c->timeout_ev = evtimer_new(srv->base, conn_timeout_cb, c);
	if (!c->timeout_ev)
		goto err_write;
	c->kill_ev = event_new(srv->base, -1, 0, conn_kill_cb, c);
	if (!c->kill_ev)
		goto err_timeout;
	event_add(c->read_ev, NULL);
	conn_arm(c);

	c->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = c;
	srv->conns = c;
	srv->n_conns++;
	log_info("%s: connected", c->peer);
	return 0;

err_timeout:
	event_free(c->timeout_ev);
err_write:
	event_free(c->write_ev);
err_read:
	event_free(c->read_ev);
err_out:
	evbuffer_free(c->out);
err_in:
	evbuffer_free(c->in);
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
	/* the connections released their gadgets' run-time state */
	for (i = srv->n_gadgets; i-- > 0;)
		free(srv->gadgets[i]);
	event_free(srv->retry_ev);
	free(srv);
}
