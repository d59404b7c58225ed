// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_pdu.c - the USB/IP byte stream into the gadget server, in process:
 * gadgets/server.c's state machine (op phase, URB phase, back-pressure,
 * closing), the wire codec (usbip_wire.c) and the device behind it
 * (device.c, urbq.c, stdreq.c, desc.c, fn/) for every built-in gadget,
 * exported as busids 1-1, 1-2, ... in FUZZ_GADGETS order.
 *
 * Each input runs a fresh event_base and server.  Clients are the other
 * ends of socketpairs given to server_add_connection(), up to four at
 * once.  The input is a list of records:
 *
 *	u8 ctl, u16 len (little-endian), len bytes
 *
 * ctl & 3 is the connection; bit 2: close it first and connect anew;
 * bit 3: shut down its writing side after the bytes (EOF to the server);
 * ctl >> 4, when not 0: then advance the clock by 2^(ctl >> 4) - 1 ms
 * (delayed replies, disconnect faults and timeouts fire).  The bytes go to
 * the server as the peer's stream (op_common, import request, CMD_SUBMIT
 * with its data, CMD_UNLINK, ...).  After each record the loop runs until
 * the server and the clients are quiet, the clients reading everything.
 * At the end the clients close and, a minute of clock later, the server
 * must have closed every connection.
 *
 * Oracle, besides the sanitizers: each client parses what it sent and
 * what it got back, and fails the run when the server answers a request
 * code other than the one asked, sends an import record for another busid,
 * answers a seqnum that is not pending, returns more than was asked for,
 * more iso packets than were sent, an unlink status other than 0 or
 * -ECONNRESET, or bytes after its last reply.  Reused seqnums make the
 * client stop checking that connection.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "fuzz.h"
#include "server.h"
#include "usbip_wire.h"

#define FZ_CONNS	4
#define FZ_PUMP_MAX	20000	/* loop rounds per pump, a hang guard */
#define FZ_IDLE_ROUNDS	3	/* rounds without I/O that mean quiet */

enum fz_reply {
	R_OP,			/* op_common */
	R_NDEV,			/* devlist: the device count */
	R_DEV,			/* devlist: a device record */
	R_INTF,			/* devlist: an interface record */
	R_IMPORT,		/* import: the device record */
	R_URB,			/* a RET_* header */
	R_DONE,			/* nothing more may come */
	R_LOST,			/* reused seqnums: no more checks */
};

struct fz_pend {
	uint32_t seqnum;
	bool dir_in;
	bool unlink;		/* a CMD_UNLINK: victim in len */
	uint32_t len;
	int32_t np;
};

struct fz_conn {
	int fd;			/* client end, -1 when not connected */
	bool eof;		/* the server closed its end */
	bool wr_shut;

	uint8_t *sent;		/* every byte written, in order */
	size_t n_sent, cap_sent;
	size_t sent_parsed;	/* URB phase: items parsed up to here */
	bool sent_dead;		/* a header the server drops us for */
	uint32_t devid;

	struct fz_pend *pend;	/* CMD_SUBMIT and CMD_UNLINK not answered */
	size_t n_pend, cap_pend;

	enum fz_reply state;
	uint8_t item[USBIP_USB_DEVICE_SIZE];
	size_t have;		/* bytes of the item collected */
	size_t skip;		/* payload bytes to pass over */
	uint32_t left;		/* devices, then interfaces, still due */
	uint32_t devs_left;
};

static struct event_base *base;
static struct server *srv;
static struct fz_conn conns[FZ_CONNS];
static uint8_t rdbuf[65536];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init();
	fz_gadget(0);
	return 0;
}

/* ---- what the client sent ---- */

static void pend_add(struct fz_conn *c, const struct fz_pend *p)
{
	if (c->n_pend == c->cap_pend) {
		struct fz_pend *n;

		c->cap_pend = c->cap_pend ? 2 * c->cap_pend : 64;
		n = realloc(c->pend, c->cap_pend * sizeof(*n));
		if (!n)
			fz_fail("out of memory");
		c->pend = n;
	}
	c->pend[c->n_pend++] = *p;
}

/* The one pending entry of that kind and seqnum: its index, -1 when none,
 * -2 when the seqnum is pending twice. */
static long pend_find(const struct fz_conn *c, bool unlink, uint32_t seqnum)
{
	long hit = -1;
	size_t i;

	for (i = 0; i < c->n_pend; i++) {
		if (c->pend[i].unlink != unlink || c->pend[i].seqnum != seqnum)
			continue;
		if (hit >= 0)
			return -2;
		hit = (long)i;
	}
	return hit;
}

static void pend_del(struct fz_conn *c, long i)
{
	c->pend[i] = c->pend[--c->n_pend];
}

/* Parse the complete URB items sent so far, as the server will. */
static void sent_sync(struct fz_conn *c)
{
	struct usbip_hdr h;
	struct fz_pend p;
	size_t pay;

	while (!c->sent_dead && c->n_sent - c->sent_parsed >= USBIP_HDR_SIZE) {
		if (usbip_hdr_unpack_cmd(&h, c->sent + c->sent_parsed,
					 USBIP_HDR_SIZE) < 0 ||
		    h.base.devid != c->devid) {
			c->sent_dead = true;
			break;
		}
		pay = usbip_cmd_payload_len(&h);
		if (c->n_sent - c->sent_parsed - USBIP_HDR_SIZE < pay)
			break;
		c->sent_parsed += USBIP_HDR_SIZE + pay;
		memset(&p, 0, sizeof(p));
		p.seqnum = h.base.seqnum;
		if (h.base.command == USBIP_CMD_UNLINK) {
			p.unlink = true;
			p.len = h.u.cmd_unlink.seqnum;
		} else {
			p.dir_in = h.base.direction == USBIP_DIR_IN;
			p.len = (uint32_t)h.u.cmd_submit.transfer_buffer_length;
			p.np = h.u.cmd_submit.number_of_packets;
		}
		pend_add(c, &p);
	}
}

/* ---- what the server answered ---- */

static size_t item_size(const struct fz_conn *c)
{
	switch (c->state) {
	case R_OP:
		return USBIP_OP_COMMON_SIZE;
	case R_NDEV:
		return USBIP_DEVLIST_NDEV_SIZE;
	case R_INTF:
		return USBIP_USB_INTERFACE_SIZE;
	case R_URB:
		return USBIP_HDR_SIZE;
	default:
		return USBIP_USB_DEVICE_SIZE;
	}
}

static void reply_op(struct fz_conn *c)
{
	struct usbip_op_common req, rep;

	/* the server answers after reading a whole op_common of ours */
	if (c->n_sent < USBIP_OP_COMMON_SIZE)
		fz_fail("an op reply before the request");
	usbip_op_common_unpack(&req, c->sent, USBIP_OP_COMMON_SIZE);
	usbip_op_common_unpack(&rep, c->item, USBIP_OP_COMMON_SIZE);
	if (rep.version != USBIP_VERSION)
		fz_fail("op reply version %#x", rep.version);
	if (rep.code != (req.code & ~OP_REQUEST))
		fz_fail("op reply code %#x to request %#x", rep.code,
			req.code);
	c->state = R_DONE;
	if (rep.status != ST_OK)
		return;
	if (req.version != USBIP_VERSION)
		fz_fail("ST_OK to version %#x", req.version);
	if (req.code == OP_REQ_DEVLIST)
		c->state = R_NDEV;
	else if (req.code == OP_REQ_IMPORT)
		c->state = R_IMPORT;
	else
		fz_fail("ST_OK to op code %#x", req.code);
}

static void reply_device(struct fz_conn *c)
{
	struct usbip_usb_device d;

	usbip_usb_device_unpack(&d, c->item, USBIP_USB_DEVICE_SIZE);
	if (c->state == R_IMPORT) {
		char busid[USBIP_BUSID_SIZE];

		usbip_import_req_unpack(busid, c->sent + USBIP_OP_COMMON_SIZE,
					USBIP_BUSID_SIZE);
		if (strcmp(busid, d.busid))
			fz_fail("import of %s answered with %s", busid,
				d.busid);
		c->devid = d.busnum << 16 | d.devnum;
		c->sent_parsed = USBIP_IMPORT_REQ_SIZE;
		c->state = R_URB;
		return;
	}
	c->devs_left--;
	c->left = d.bNumInterfaces;
	if (c->left)
		c->state = R_INTF;
	else
		c->state = c->devs_left ? R_DEV : R_DONE;
}

static void reply_submit(struct fz_conn *c, const struct usbip_hdr *h)
{
	const struct usbip_ret_submit *r = &h->u.ret_submit;
	long i = pend_find(c, false, h->base.seqnum);
	struct fz_pend p;

	if (i == -2) {
		c->state = R_LOST;
		return;
	}
	if (i < 0)
		fz_fail("RET_SUBMIT seq=%u: not pending", h->base.seqnum);
	p = c->pend[i];
	pend_del(c, i);
	if (r->actual_length < 0 || (uint32_t)r->actual_length > p.len)
		fz_fail("RET_SUBMIT seq=%u: actual %d of %u", p.seqnum,
			r->actual_length, p.len);
	if (r->number_of_packets < 0 || r->number_of_packets > p.np)
		fz_fail("RET_SUBMIT seq=%u: %d iso packets of %d", p.seqnum,
			r->number_of_packets, p.np);
	c->skip = (p.dir_in ? (size_t)r->actual_length : 0) +
		  (size_t)r->number_of_packets * USBIP_ISO_DESC_SIZE;
}

static void reply_unlink(struct fz_conn *c, const struct usbip_hdr *h)
{
	long i = pend_find(c, true, h->base.seqnum), v;
	int32_t st = h->u.ret_unlink.status;

	if (i == -2) {
		c->state = R_LOST;
		return;
	}
	if (i < 0)
		fz_fail("RET_UNLINK seq=%u: not pending", h->base.seqnum);
	if (st != 0 && st != -ECONNRESET)
		fz_fail("RET_UNLINK seq=%u: status %d", h->base.seqnum, st);
	if (st) {
		v = pend_find(c, false, c->pend[i].len);
		if (v == -2) {
			c->state = R_LOST;
			return;
		}
		if (v < 0)
			fz_fail("RET_UNLINK seq=%u: victim %u was not pending",
				h->base.seqnum, c->pend[i].len);
		pend_del(c, v);
		/* pend_del moved the last entry: find the unlink again */
		i = pend_find(c, true, h->base.seqnum);
	}
	pend_del(c, i);
}

static void reply_urb(struct fz_conn *c)
{
	struct usbip_hdr h;

	if (usbip_hdr_unpack_ret(&h, c->item, USBIP_HDR_SIZE) < 0)
		fz_fail("undecodable RET header");
	sent_sync(c);
	if (h.base.command == USBIP_RET_SUBMIT)
		reply_submit(c, &h);
	else if (h.base.command == USBIP_RET_UNLINK)
		reply_unlink(c, &h);
	else
		fz_fail("reply command %#x", h.base.command);
}

static void reply_item(struct fz_conn *c)
{
	switch (c->state) {
	case R_OP:
		reply_op(c);
		break;
	case R_NDEV:
		c->devs_left = get_be32(c->item);
		if (c->devs_left != fz_num_gadgets())
			fz_fail("devlist of %u devices, %zu exported",
				c->devs_left, fz_num_gadgets());
		c->state = c->devs_left ? R_DEV : R_DONE;
		break;
	case R_DEV:
	case R_IMPORT:
		reply_device(c);
		break;
	case R_INTF:
		if (!--c->left)
			c->state = c->devs_left ? R_DEV : R_DONE;
		break;
	case R_URB:
		reply_urb(c);
		break;
	default:
		break;
	}
}

static void reply_bytes(struct fz_conn *c, const uint8_t *p, size_t n)
{
	size_t k, need;

	while (n) {
		if (c->skip) {
			k = n < c->skip ? n : c->skip;
			c->skip -= k;
			p += k;
			n -= k;
			continue;
		}
		if (c->state == R_LOST)
			return;
		if (c->state == R_DONE)
			fz_fail("%zu bytes after the last reply", n);
		need = item_size(c) - c->have;
		k = n < need ? n : need;
		memcpy(c->item + c->have, p, k);
		c->have += k;
		p += k;
		n -= k;
		if (c->have == item_size(c)) {
			c->have = 0;
			reply_item(c);
		}
	}
}

/* ---- clients ---- */

static void conn_reset(struct fz_conn *c)
{
	free(c->sent);
	free(c->pend);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void conn_close(struct fz_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	conn_reset(c);
}

static void conn_open(struct fz_conn *c)
{
	int sv[2];

	conn_close(c);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
		       sv))
		fz_fail("socketpair: %m");
	if (server_add_connection(srv, sv[1]) < 0)
		fz_fail("server_add_connection");
	c->fd = sv[0];
}

/* Read what the server sent; true when anything came (or EOF). */
static bool conn_read(struct fz_conn *c)
{
	bool any = false;
	ssize_t n;

	while (c->fd >= 0 && !c->eof) {
		n = read(c->fd, rdbuf, sizeof(rdbuf));
		if (n > 0) {
			reply_bytes(c, rdbuf, (size_t)n);
			any = true;
		} else if (n == 0 || errno != EAGAIN) {
			c->eof = true;
			any = true;
		} else {
			break;
		}
	}
	return any;
}

/* Write what fits of p[n]; the bytes written. */
static size_t conn_write(struct fz_conn *c, const uint8_t *p, size_t n)
{
	ssize_t w;

	if (c->fd < 0 || c->wr_shut || !n)
		return 0;
	w = send(c->fd, p, n, MSG_NOSIGNAL);
	if (w <= 0)
		return 0;
	if (c->n_sent + (size_t)w > c->cap_sent) {
		size_t cap = c->cap_sent ? c->cap_sent : 4096;
		uint8_t *s;

		while (cap < c->n_sent + (size_t)w)
			cap *= 2;
		s = realloc(c->sent, cap);
		if (!s)
			fz_fail("out of memory");
		c->sent = s;
		c->cap_sent = cap;
	}
	memcpy(c->sent + c->n_sent, p, (size_t)w);
	c->n_sent += (size_t)w;
	return (size_t)w;
}

/*
 * Run the loop, write what is left of p[n] to conn w (if any), read every
 * client, until nothing moves for FZ_IDLE_ROUNDS rounds.
 */
static void pump(struct fz_conn *w, const uint8_t *p, size_t n)
{
	int round, idle = 0, i;
	bool moved;
	size_t k;

	for (round = 0; round < FZ_PUMP_MAX && idle < FZ_IDLE_ROUNDS; round++) {
		moved = false;
		if (w && n) {
			k = conn_write(w, p, n);
			p += k;
			n -= k;
			moved = k > 0;
		}
		event_base_loop(base, EVLOOP_NONBLOCK);
		for (i = 0; i < FZ_CONNS; i++)
			moved |= conn_read(&conns[i]);
		idle = moved ? 0 : idle + 1;
	}
}

static void run_record(struct fz_in *in)
{
	uint8_t ctl = fz_u8(in);
	struct fz_conn *c = &conns[ctl & 3];
	size_t n = fz_u16(in);
	const uint8_t *p = fz_bytes(in, &n);

	if ((ctl & 4) && c->fd >= 0) {
		conn_close(c);
		pump(NULL, NULL, 0);
	}
	if (c->fd < 0)
		conn_open(c);
	pump(c, p, n);
	if ((ctl & 8) && !c->wr_shut) {
		shutdown(c->fd, SHUT_WR);
		c->wr_shut = true;
		pump(NULL, NULL, 0);
	}
	if (ctl >> 4) {
		fz_clock_advance_ms((1u << (ctl >> 4)) - 1);
		pump(NULL, NULL, 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	size_t i;

	base = event_base_new();
	if (!base)
		fz_fail("event_base_new");
	srv = server_new(base);
	if (!srv)
		fz_fail("server_new");
	for (i = 0; i < fz_num_gadgets(); i++)
		if (server_add_gadget(srv, fz_gadget(i)) < 0)
			fz_fail("server_add_gadget");
	for (i = 0; i < FZ_CONNS; i++)
		conn_reset(&conns[i]);

	while (in.left)
		run_record(&in);

	for (i = 0; i < FZ_CONNS; i++)
		conn_close(&conns[i]);
	pump(NULL, NULL, 0);
	fz_clock_advance_ms(60 * 1000);
	pump(NULL, NULL, 0);
	if (server_num_connections(srv))
		fz_fail("%u connections still open after their peers closed",
			server_num_connections(srv));
	server_free(srv);
	event_base_free(base);
	return 0;
}
