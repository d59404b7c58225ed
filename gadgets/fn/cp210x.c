// SPDX-License-Identifier: GPL-2.0
/*
 * fn/cp210x.c - a Silicon Labs CP2101/CP2102/CP2103 USB serial chip, as
 * Linux's cp210x driver drives it (drivers/usb/serial/cp210x.c and Silicon
 * Labs' AN571 are the reference for every request and bit used here).
 *
 * Interface requests (bmRequestType 0x41 / 0xc1, wIndex the interface):
 *   0x00 IFC_ENABLE      wValue 1 enable, 0 disable (and event mode off)
 *   0x01 SET_BAUDDIV     wValue = 3686400 / baud;  0x02 GET_BAUDDIV, 2 bytes
 *   0x03 SET_LINE_CTL    wValue bits 11:8 data bits (5..8), 7:4 parity
 *                        (0 N, 1 O, 2 E, 3 M, 4 S), 3:0 stop (0 1, 1 1.5,
 *                        2 2); anything else STALLs.  0x04 GET_LINE_CTL
 *   0x05 SET_BREAK       wValue 1 on, 0 off
 *   0x07 SET_MHS         bits 0/1 DTR/RTS, bits 8/9 which to set
 *   0x08 GET_MDMSTS      1 byte: DTR 0x01, RTS 0x02, CTS 0x10, DSR 0x20,
 *                        RI 0x40, DCD 0x80
 *   0x09/0x0a SET_XON/SET_XOFF, 0x11 RESET: taken
 *   0x0e GET_CHARS / 0x19 SET_CHARS      the 6 special characters
 *   0x10 GET_COMM_STATUS 19 bytes, bytes waiting for the host at offset 8
 *   0x12 PURGE           wValue bit 1 or 3: drop the bytes waiting for the
 *                        host (the chip's receive queue)
 *   0x13 SET_FLOW / 0x14 GET_FLOW        16 bytes; ulControlHandshake bits
 *                        1:0 drive DTR, ulFlowReplace bits 7:6 RTS (0 low,
 *                        1 high, 2 flow control: counted as high)
 *   0x15 EMBED_EVENTS    wValue low byte: the escape character, 0 off
 *   0x1d GET_BAUDRATE / 0x1e SET_BAUDRATE 4 bytes, LE32 bits per second
 * Device request 0xc0 0xff (VENDOR_SPECIFIC) wValue 0x370b GET_PARTNUM:
 * the part number, then zeros to wLength (a genuine CP2102 answers both
 * bytes of the two-byte read cp210x uses to tell counterfeits, which keeps
 * event mode allowed).  Anything else STALLs.
 *
 * Bulk IN/OUT: the serial peer of serial_core.c, bytes unframed, except
 * that in event-insertion mode (EMBED_EVENTS, which cp210x turns on with
 * INPCK) each escape character toward the host goes as ESC 0x00.
 *
 * Options: `part 1|2|3` (CP2101, CP2102 default, CP2103: the types whose
 * probe reads nothing more; cp210x picks its baud rate rules from it),
 * `modem-status N` (the input lines of GET_MDMSTS, default 0x30: CTS and
 * DSR) and the common `echo`, `respond`.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"
#include "serial_core.h"
#include "usbip_wire.h"	/* get_le32() and friends */

/* requests (cp210x.c, AN571) */
enum {
	CP_IFC_ENABLE = 0x00,
	CP_SET_BAUDDIV = 0x01,
	CP_GET_BAUDDIV = 0x02,
	CP_SET_LINE_CTL = 0x03,
	CP_GET_LINE_CTL = 0x04,
	CP_SET_BREAK = 0x05,
	CP_SET_MHS = 0x07,
	CP_GET_MDMSTS = 0x08,
	CP_SET_XON = 0x09,
	CP_SET_XOFF = 0x0a,
	CP_GET_CHARS = 0x0e,
	CP_GET_COMM_STATUS = 0x10,
	CP_RESET = 0x11,
	CP_PURGE = 0x12,
	CP_SET_FLOW = 0x13,
	CP_GET_FLOW = 0x14,
	CP_EMBED_EVENTS = 0x15,
	CP_SET_CHARS = 0x19,
	CP_GET_BAUDRATE = 0x1d,
	CP_SET_BAUDRATE = 0x1e,
	CP_VENDOR_SPECIFIC = 0xff,
};

#define CP_GET_PARTNUM		0x370b	/* wValue of VENDOR_SPECIFIC */
#define CP_BAUDDIV_CLOCK	0x384000
#define CP_MHS_DTR		0x0001
#define CP_MHS_RTS		0x0002
#define CP_MHS_WRITE_DTR	0x0100
#define CP_MHS_WRITE_RTS	0x0200
#define CP_MDM_LINES		0xf0	/* CTS DSR RI DCD */
#define CP_PURGE_RX		0x000a	/* bits 1 and 3 */
#define CP_CHARS_LEN		6
#define CP_FLOW_LEN		16
#define CP_COMM_STATUS_LEN	19

struct cp210x {
	uint8_t part;			/* option */
	uint8_t modem;			/* GET_MDMSTS lines (option) */
	uint8_t ifnum;			/* bInterfaceNumber */
	bool enabled;			/* IFC_ENABLE */
	uint16_t line_ctl;		/* as last set */
	uint8_t escape;			/* EMBED_EVENTS; 0: off */
	uint8_t chars[CP_CHARS_LEN];
	uint8_t flow[CP_FLOW_LEN];
	struct ser_pipe pipe;
};

static int cp210x_opts(const struct gd_device *m, uint8_t *part,
		       uint8_t *modem, struct script_error *err)
{
	uint64_t p, v;
	int rc;

	rc = fn_opt_u64(m, "part", 2, 0xff, 0, &p, err) ?:
	     fn_opt_u64(m, "modem-status", 0x30, 0xff, 0, &v, err);
	if (rc)
		return rc;
	if (p < 1 || p > 3)
		return fn_opt_error(m, fn_opt(m, "part"), err,
				    "part: 1 CP2101, 2 CP2102 or 3 CP2103 (the others need more than this function answers)");
	if (v & ~CP_MDM_LINES)
		return fn_opt_error(m, fn_opt(m, "modem-status"), err,
				    "modem-status: only the line bits 0x10 CTS, 0x20 DSR, 0x40 RI, 0x80 DCD");
	*part = p;
	*modem = v;
	return 0;
}

static int cp210x_validate(const struct gd_device *m,
			   struct script_error *err)
{
	static const char *const keys[] = { "part", "modem-status",
					    SER_COMMON_KEYS, NULL };
	struct ser_eps e;
	uint8_t part, modem;
	int rc;

	rc = fn_opt_only(m, keys, err) ?: ser_opts_check(m, err) ?:
	     cp210x_opts(m, &part, &modem, err);
	if (rc)
		return rc;
	if (ser_find_eps(m, false, &e))
		return fn_opt_error(m, NULL, err,
				    "needs an interface with a bulk IN and a bulk OUT endpoint");
	return fn_ep_check_free(m, e.in, "data IN endpoint", err) ?:
	       fn_ep_check_free(m, e.out, "data OUT endpoint", err);
}

/* As the chip after reset: 9600 8N1, disabled, no events. */
static void cp210x_state_init(struct cp210x *c)
{
	c->enabled = false;
	c->line_ctl = 0x0800;
	c->escape = 0;
	memset(c->chars, 0, sizeof(c->chars));
	memset(c->flow, 0, sizeof(c->flow));
}

/* Bulk IN in event-insertion mode: the escape character doubled as
 * ESC 0x00, never split across transfers. */
static size_t cp210x_fill(struct ser_pipe *sp, uint8_t *buf, size_t len)
{
	struct cp210x *c = (struct cp210x *)((char *)sp -
					     offsetof(struct cp210x, pipe));
	size_t n = 0;
	int b;

	if (!c->escape)
		return ser_port_take(&sp->port, buf, len);
	while (n < len && (b = ser_port_peek(&sp->port)) >= 0) {
		if (b == c->escape) {
			if (len - n < 2)
				break;
			buf[n + 1] = 0;
		}
		ser_port_take(&sp->port, buf + n, 1);
		n += b == c->escape ? 2 : 1;
	}
	return n;
}

static int cp210x_attach(struct gdev *dev)
{
	struct script_error err;
	struct ser_eps e;
	struct cp210x *c;
	int rc;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (ser_find_eps(dev->model, false, &e) ||
	    cp210x_opts(dev->model, &c->part, &c->modem, &err)) {
		/* validate() accepted the script: cannot happen */
		free(c);
		return -EINVAL;
	}
	c->ifnum = e.alt->bInterfaceNumber;
	c->pipe.fill = cp210x_fill;
	rc = ser_pipe_init(&c->pipe, dev->model, e.in, e.out);
	if (rc) {
		free(c);
		return rc;
	}
	cp210x_state_init(c);
	dev->function_state = c;
	log_info("cp210x: a CP210%u", c->part);
	return 0;
}

static void cp210x_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct cp210x *c = dev->function_state;

	if (!c)
		return;
	ser_pipe_release(dev, &c->pipe, free_urb);
	free(c);
	dev->function_state = NULL;
}

static void cp210x_reset(struct gdev *dev)
{
	struct cp210x *c = dev->function_state;

	if (!c)
		return;
	ser_pipe_reset(dev, &c->pipe);
	cp210x_state_init(c);
}

/* SET_LINE_CTL: -EPIPE for a format the chip does not have. */
static int cp210x_set_line_ctl(struct cp210x *c, uint16_t v)
{
	struct ser_line *l = &c->pipe.port.line;
	unsigned int data = (v >> 8) & 0xf, parity = (v >> 4) & 0xf;
	unsigned int stop = v & 0xf;

	if (data < 5 || data > 8 || parity > 4 || stop > 2 || (v & 0xf000))
		return -EPIPE;
	c->line_ctl = v;
	l->data_bits = data;
	l->parity = parity;	/* the CDC codes, in the same order */
	l->stop = stop;
	return 0;
}

/* SET_FLOW: DTR and RTS as the handshake fields drive them. */
static void cp210x_set_flow(struct cp210x *c, const uint8_t *b)
{
	struct ser_line *l = &c->pipe.port.line;

	memcpy(c->flow, b, sizeof(c->flow));
	l->dtr = (get_le32(b) & 3) != 0;		/* ulControlHandshake */
	l->rts = ((get_le32(b + 4) >> 6) & 3) != 0;	/* ulFlowReplace */
}

/* Requests that carry data to the device: 0 or -EPIPE.  len >= wLength. */
static int cp210x_out(struct cp210x *c, const struct usb_setup *s,
		      const uint8_t *data)
{
	struct ser_line *l = &c->pipe.port.line;
	size_t want = 0;
	int rc = 0;

	switch (s->bRequest) {
	case CP_SET_CHARS:
		want = CP_CHARS_LEN;
		break;
	case CP_SET_FLOW:
		want = CP_FLOW_LEN;
		break;
	case CP_SET_BAUDRATE:
		want = 4;
		break;
	}
	/* a block request wants its exact block, the others none */
	if (s->wLength != want)
		return -EPIPE;

	switch (s->bRequest) {
	case CP_IFC_ENABLE:
		c->enabled = s->wValue & 1;
		if (!c->enabled)
			c->escape = 0;
		log_info("cp210x: UART %s", c->enabled ? "on" : "off");
		break;
	case CP_SET_BAUDDIV:
		if (!s->wValue)
			return -EPIPE;
		l->baud = CP_BAUDDIV_CLOCK / s->wValue;
		break;
	case CP_SET_BAUDRATE:
		l->baud = get_le32(data);
		break;
	case CP_SET_LINE_CTL:
		rc = cp210x_set_line_ctl(c, s->wValue);
		break;
	case CP_SET_BREAK:
		ser_line_set_break(l, s->wValue & 1);
		break;
	case CP_SET_MHS:
		if (s->wValue & CP_MHS_WRITE_DTR)
			l->dtr = s->wValue & CP_MHS_DTR;
		if (s->wValue & CP_MHS_WRITE_RTS)
			l->rts = s->wValue & CP_MHS_RTS;
		break;
	case CP_SET_FLOW:
		cp210x_set_flow(c, data);
		break;
	case CP_SET_CHARS:
		memcpy(c->chars, data, sizeof(c->chars));
		return 0;
	case CP_PURGE:
		if (s->wValue & CP_PURGE_RX)
			ser_port_purge_tx(&c->pipe.port);
		return 0;
	case CP_EMBED_EVENTS:
		c->escape = s->wValue & 0xff;
		log_info("cp210x: event insertion %s", c->escape ? "on" : "off");
		return 0;
	case CP_SET_XON:
	case CP_SET_XOFF:
	case CP_RESET:
		return 0;
	default:
		return -EPIPE;
	}
	if (!rc)
		ser_line_log("cp210x", l);
	return rc;
}

/* Requests that read: the reply in buf (at least 32 bytes), its length. */
static int cp210x_in(struct cp210x *c, const struct usb_setup *s,
		     uint8_t *buf)
{
	const struct ser_line *l = &c->pipe.port.line;
	uint32_t div;

	switch (s->bRequest) {
	case CP_GET_BAUDDIV:
		div = l->baud ? CP_BAUDDIV_CLOCK / l->baud : 0;
		put_le16(buf, div);
		return 2;
	case CP_GET_BAUDRATE:
		put_le32(buf, l->baud);
		return 4;
	case CP_GET_LINE_CTL:
		put_le16(buf, c->line_ctl);
		return 2;
	case CP_GET_MDMSTS:
		buf[0] = c->modem | (l->dtr ? CP_MHS_DTR : 0) |
			 (l->rts ? CP_MHS_RTS : 0);
		return 1;
	case CP_GET_CHARS:
		memcpy(buf, c->chars, sizeof(c->chars));
		return sizeof(c->chars);
	case CP_GET_FLOW:
		memcpy(buf, c->flow, sizeof(c->flow));
		return sizeof(c->flow);
	case CP_GET_COMM_STATUS:
		/* ulErrors, ulHoldReasons 0; the queues; nothing else */
		memset(buf, 0, CP_COMM_STATUS_LEN);
		put_le32(buf + 8, ser_port_pending(&c->pipe.port));
		return CP_COMM_STATUS_LEN;
	default:
		return -EPIPE;
	}
}

static int cp210x_control(struct gdev *dev, const struct usb_setup *s,
			  uint8_t *data, size_t len)
{
	struct cp210x *c = dev->function_state;
	bool in = s->bmRequestType & USB_DIR_IN;
	uint8_t reply[32];
	int n;

	if (!c || (s->bmRequestType & USB_TYPE_MASK) != USB_TYPE_VENDOR)
		return -ENOENT;
	if ((s->bmRequestType & USB_RECIP_MASK) == USB_RECIP_DEVICE) {
		if (s->bRequest != CP_VENDOR_SPECIFIC || !in ||
		    s->wValue != CP_GET_PARTNUM)
			return -EPIPE;
		/* the part number, then zeros (see the top of the file) */
		n = len < 2 ? len : 2;
		memset(data, 0, n);
		if (n)
			data[0] = c->part;
		return n;
	}
	if ((s->bmRequestType & USB_RECIP_MASK) != USB_RECIP_INTERFACE ||
	    (s->wIndex & 0xff) != c->ifnum)
		return -EPIPE;
	if (!in) {
		if (len < s->wLength)	/* the core gives all of it */
			return -EPIPE;
		n = cp210x_out(c, s, data);
		ser_pipe_kick(dev, &c->pipe);
		return n;
	}
	n = cp210x_in(c, s, reply);
	if (n < 0)
		return n;
	if ((size_t)n > len)
		n = len;
	memcpy(data, reply, n);
	return n;
}

static int cp210x_submit(struct gdev *dev, struct urb *urb)
{
	struct cp210x *c = dev->function_state;

	if (!c)
		return -ENOENT;
	return ser_pipe_submit(dev, &c->pipe, urb);
}

static struct urb *cp210x_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct cp210x *c = dev->function_state;

	if (!c)
		return NULL;
	return ser_pipe_unlink(&c->pipe, seqnum);
}

const struct fn_ops fn_cp210x_ops = {
	.name = "cp210x",
	.validate = cp210x_validate,
	.attach = cp210x_attach,
	.detach = cp210x_detach,
	.control = cp210x_control,
	.submit = cp210x_submit,
	.unlink = cp210x_unlink,
	.reset = cp210x_reset,
};
