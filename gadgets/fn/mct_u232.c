// SPDX-License-Identifier: GPL-2.0
/*
 * fn/mct_u232.c - a Magic Control Technology U232 USB serial adapter (and
 * its Sitecom and Belkin F5U109 relatives), as Linux's mct_u232 driver
 * drives it (drivers/usb/serial/mct_u232.c and mct_u232.h are the
 * reference for every request and bit used here).
 *
 * The chip has no bulk IN endpoint: data toward the host comes on a second
 * interrupt IN endpoint.  mct_u232 tells the two apart by their URB size,
 * so the status endpoint has wMaxPacketSize 2 (MSR, LSR) and the data one
 * more than 2.  Bulk OUT carries data to the chip.
 *
 * Vendor requests on ep0, each with a data stage of exactly its size:
 *   0x40 0x05 SET_BAUD_RATE   4 bytes LE32: 115200 / baud, or on the
 *                             Sitecom (idProduct 0x0230) and Belkin
 *                             (0x0109) a rate code 1..0x0c
 *   0x40 0x07 SET_LINE_CTRL   1 byte, the 16550 LCR: bits 1:0 data bits -
 *                             5, 0x04 two stop bits (1.5 with 5 data
 *                             bits), 0x08 parity, 0x10 even, 0x20 stick
 *                             (0x28 mark, 0x38 space), 0x40 break
 *   0xc0 0x06 GET_LINE_CTRL   1 byte, the LCR
 *   0x40 0x0a SET_MODEM_CTRL  1 byte, the MCR: DTR 0x01, RTS 0x02
 *   0xc0 0x02 GET_MODEM_STAT  1 byte, the MSR: CTS 0x10, DSR 0x20, RI 0x40,
 *                             DCD 0x80
 *   0x40 0x0b (unknown, always 0) and 0x0c (CTS flow control): taken
 * Anything else STALLs.  The status endpoint's URBs wait: the lines never
 * change here (mct_u232's open reads them with GET_MODEM_STAT).
 *
 * Options: `modem-status N` (the MSR lines, default 0x30: CTS and DSR) and
 * the common `echo`, `respond`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"
#include "serial_core.h"
#include "usbip_wire.h"

/* requests (mct_u232.h) */
enum {
	MCT_GET_MODEM_STAT = 2,
	MCT_SET_BAUD_RATE = 5,
	MCT_GET_LINE_CTRL = 6,
	MCT_SET_LINE_CTRL = 7,
	MCT_SET_MODEM_CTRL = 10,
	MCT_SET_UNKNOWN1 = 11,
	MCT_SET_CTS = 12,
};

#define MCT_SITECOM_PID		0x0230
#define MCT_BELKIN_PID		0x0109
#define MCT_LCR_STOP2		0x04
#define MCT_LCR_PARITY		0x08
#define MCT_LCR_EVEN		0x10
#define MCT_LCR_STICK		0x20
#define MCT_LCR_BREAK		0x40
#define MCT_LCR_RESET		0x03	/* 8N1 */
#define MCT_MCR_DTR		0x01
#define MCT_MCR_RTS		0x02
#define MCT_MSR_LINES		0xf0	/* CTS DSR RI DCD */

/* The Sitecom/Belkin rate codes (mct_u232_calculate_baud_rate()). */
static const struct {
	uint8_t code;
	uint32_t baud;
} mct_codes[] = {
	{ 0x01, 300 }, { 0x02, 600 }, { 0x03, 1200 }, { 0x04, 2400 },
	{ 0x06, 4800 }, { 0x08, 9600 }, { 0x09, 19200 }, { 0x0a, 38400 },
	{ 0x0b, 57600 }, { 0x0c, 115200 },
};

struct mct_eps {
	const struct gd_endpoint *status, *data_in, *out;
};

struct mct_u232 {
	bool codes;			/* the rate is a code, not a divisor */
	uint8_t modem;			/* MSR lines (option) */
	uint8_t lcr;
	struct ser_pipe pipe;		/* bulk OUT, interrupt IN; status idle */
};

/* The first interface with two interrupt IN endpoints (status, then
 * data, in descriptor order as usb-serial hands them to ports 0 and 1)
 * and a bulk OUT one. */
static int mct_find(const struct gd_device *m, struct mct_eps *e)
{
	const struct gd_endpoint *ep;
	const struct gd_alt *alt;
	size_t c, i, k;

	for (c = 0; c < m->n_configs; c++) {
		for (i = 0; i < m->configs[c].n_alts; i++) {
			alt = &m->configs[c].alts[i];
			if (alt->bAlternateSetting)
				continue;
			memset(e, 0, sizeof(*e));
			for (k = 0; k < alt->n_eps; k++) {
				ep = &alt->eps[k];
				if ((ep->bmAttributes & 3) !=
				    USB_ENDPOINT_XFER_INT ||
				    !(ep->bEndpointAddress & USB_DIR_IN))
					continue;
				if (!e->status)
					e->status = ep;
				else if (!e->data_in)
					e->data_in = ep;
			}
			e->out = fn_alt_ep(alt, USB_ENDPOINT_XFER_BULK, false);
			if (e->status && e->data_in && e->out)
				return 0;
		}
	}
	return -ENODEV;
}

static int mct_modem_opt(const struct gd_device *m, uint8_t *modem,
			 struct script_error *err)
{
	uint64_t v;
	int rc;

	rc = fn_opt_u64(m, "modem-status", 0x30, 0xff, 0, &v, err);
	if (rc)
		return rc;
	if (v & ~MCT_MSR_LINES)
		return fn_opt_error(m, fn_opt(m, "modem-status"), err,
				    "modem-status: only the line bits 0x10 CTS, 0x20 DSR, 0x40 RI, 0x80 DCD");
	*modem = v;
	return 0;
}

static int mct_validate(const struct gd_device *m, struct script_error *err)
{
	static const char *const keys[] = { "modem-status", SER_COMMON_KEYS,
					    NULL };
	struct mct_eps e;
	uint8_t modem;
	int rc;

	rc = fn_opt_only(m, keys, err) ?: ser_opts_check(m, err) ?:
	     mct_modem_opt(m, &modem, err);
	if (rc)
		return rc;
	if (mct_find(m, &e))
		return fn_opt_error(m, NULL, err,
				    "needs an interface with two interrupt IN endpoints (status, then data) and a bulk OUT endpoint");
	if ((e.status->wMaxPacketSize & 0x7ff) > 2 ||
	    (e.data_in->wMaxPacketSize & 0x7ff) <= 2)
		return fn_opt_error(m, NULL, err,
				    "endpoints 0x%02x and 0x%02x: the status one needs wMaxPacketSize 2 and the data one more (mct_u232 tells them apart by size)",
				    e.status->bEndpointAddress,
				    e.data_in->bEndpointAddress);
	return fn_ep_check_free(m, e.status, "status endpoint", err) ?:
	       fn_ep_check_free(m, e.data_in, "data IN endpoint", err) ?:
	       fn_ep_check_free(m, e.out, "data OUT endpoint", err);
}

static int mct_attach(struct gdev *dev)
{
	const struct gd_device *m = dev->model;
	struct script_error err;
	struct mct_u232 *c;
	struct mct_eps e;
	int rc;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (mct_find(m, &e) || mct_modem_opt(m, &c->modem, &err)) {
		/* validate() accepted the script: cannot happen */
		free(c);
		return -EINVAL;
	}
	/* as the driver decides it: by product id alone */
	c->codes = m->idProduct == MCT_SITECOM_PID ||
		   m->idProduct == MCT_BELKIN_PID;
	c->pipe.idle_addr = e.status->bEndpointAddress;
	rc = ser_pipe_init(&c->pipe, m, e.data_in, e.out);
	if (rc) {
		free(c);
		return rc;
	}
	c->lcr = MCT_LCR_RESET;
	dev->function_state = c;
	return 0;
}

static void mct_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct mct_u232 *c = dev->function_state;

	if (!c)
		return;
	ser_pipe_release(dev, &c->pipe, free_urb);
	free(c);
	dev->function_state = NULL;
}

static void mct_reset(struct gdev *dev)
{
	struct mct_u232 *c = dev->function_state;

	if (!c)
		return;
	ser_pipe_reset(dev, &c->pipe);
	c->lcr = MCT_LCR_RESET;
}

/* SET_BAUD_RATE's value as bits per second; 0 for none. */
static uint32_t mct_baud(const struct mct_u232 *c, uint32_t v)
{
	size_t i;

	if (!c->codes)
		return v ? 115200 / v : 0;
	for (i = 0; i < sizeof(mct_codes) / sizeof(mct_codes[0]); i++)
		if (mct_codes[i].code == v)
			return mct_codes[i].baud;
	return 0;
}

static void mct_set_lcr(struct mct_u232 *c, uint8_t lcr)
{
	struct ser_line *l = &c->pipe.port.line;

	c->lcr = lcr;
	l->data_bits = 5 + (lcr & 3);
	if (!(lcr & MCT_LCR_STOP2))
		l->stop = 0;
	else
		l->stop = l->data_bits == 5 ? 1 : 2;	/* 1.5 : 2 */
	if (!(lcr & MCT_LCR_PARITY))
		l->parity = 0;
	else if (lcr & MCT_LCR_STICK)
		l->parity = lcr & MCT_LCR_EVEN ? 4 : 3;	/* S : M */
	else
		l->parity = lcr & MCT_LCR_EVEN ? 2 : 1;	/* E : O */
	ser_line_set_break(l, lcr & MCT_LCR_BREAK);
}

static int mct_control(struct gdev *dev, const struct usb_setup *s,
		       uint8_t *data, size_t len)
{
	struct mct_u232 *c = dev->function_state;
	bool in = s->bmRequestType & USB_DIR_IN;
	struct ser_line *l;
	size_t size = 1;
	uint32_t baud;

	if (!c || (s->bmRequestType & USB_TYPE_MASK) != USB_TYPE_VENDOR)
		return -ENOENT;
	l = &c->pipe.port.line;
	if (s->bRequest == MCT_SET_BAUD_RATE)
		size = 4;
	/* each request has its one size, and the core gives all of it */
	if (s->wLength != size || len < size)
		return -EPIPE;
	switch (s->bRequest) {
	case MCT_GET_MODEM_STAT:
	case MCT_GET_LINE_CTRL:
		if (!in)
			return -EPIPE;
		data[0] = s->bRequest == MCT_GET_LINE_CTRL ? c->lcr : c->modem;
		return 1;
	case MCT_SET_BAUD_RATE:
		baud = in ? 0 : mct_baud(c, get_le32(data));
		if (!baud)
			return -EPIPE;
		l->baud = baud;
		break;
	case MCT_SET_LINE_CTRL:
		if (in)
			return -EPIPE;
		mct_set_lcr(c, data[0]);
		break;
	case MCT_SET_MODEM_CTRL:
		if (in)
			return -EPIPE;
		l->dtr = data[0] & MCT_MCR_DTR;
		l->rts = data[0] & MCT_MCR_RTS;
		break;
	case MCT_SET_UNKNOWN1:
	case MCT_SET_CTS:
		return in ? -EPIPE : 0;
	default:
		return -EPIPE;
	}
	ser_line_log("mct_u232", l);
	return 0;
}

static int mct_submit(struct gdev *dev, struct urb *urb)
{
	struct mct_u232 *c = dev->function_state;

	if (!c)
		return -ENOENT;
	return ser_pipe_submit(dev, &c->pipe, urb);
}

static struct urb *mct_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct mct_u232 *c = dev->function_state;

	if (!c)
		return NULL;
	return ser_pipe_unlink(&c->pipe, seqnum);
}

const struct fn_ops fn_mct_u232_ops = {
	.name = "mct_u232",
	.validate = mct_validate,
	.attach = mct_attach,
	.detach = mct_detach,
	.control = mct_control,
	.submit = mct_submit,
	.unlink = mct_unlink,
	.reset = mct_reset,
};
