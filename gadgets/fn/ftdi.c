// SPDX-License-Identifier: GPL-2.0
/*
 * fn/ftdi.c - an FTDI FT232-style USB serial chip, as Linux's ftdi_sio
 * drives it (drivers/usb/serial/ftdi_sio.c and ftdi_sio.h are the
 * reference for every request and bit used here).
 *
 * The chip type follows the device's bcdDevice, as ftdi_sio decides it:
 * 0x0200 FT232A (AM), 0x0400 FT232B (BM), 0x0500 FT2232C, 0x0600 FT232R,
 * 0x0700/0x0800/0x0900 FT2232H/FT4232H/FT232H, 0x1000 FT-X, 0x2800..0x3600
 * the HP series.  It decides how the baud rate divisor is decoded and
 * whether wIndex carries a channel.  The SIO (bcdDevice below 0x0200, with
 * a length header on every OUT packet) is not modelled.
 *
 * Vendor requests on ep0 (bmRequestType 0x40 / 0xc0):
 *   0x00 RESET            wValue 0 reset (purges both ways), 1 purge RX,
 *                         2 purge TX
 *   0x01 MODEM_CTRL       wValue bits 0/1 DTR/RTS, bits 8/9 which to set
 *   0x02 SET_FLOW_CTRL    wIndex high byte: 1 RTS/CTS, 2 DTR/DSR, 4 XON/XOFF
 *   0x03 SET_BAUD_RATE    divisor in wValue (+ high bits in wIndex)
 *   0x04 SET_DATA         bits 0-7 data bits, 8-10 parity, 11-13 stop,
 *                         14 break
 *   0x05 GET_MODEM_STATUS the two status bytes (below)
 *   0x06/0x07 SET_EVENT_CHAR/SET_ERROR_CHAR, taken
 *   0x09/0x0a SET/GET_LATENCY_TIMER (ms, 1 byte)
 *   0x0b SET_BITMODE, 0x0c READ_PINS (the pins last set)
 *   0x90 READ_EEPROM      word wIndex of a 128-word image (VID, PID,
 *                         bcdDevice in words 1-3, the rest 0)
 * Anything else STALLs.
 *
 * Bulk IN: every packet (wMaxPacketSize of the IN endpoint, which the
 * script must give the OUT endpoint too: ftdi_sio splits by the last
 * endpoint's) starts with the two status bytes, B0 = 0x01 | modem lines
 * (CTS 0x10, DSR 0x20, RI 0x40, DCD 0x80) and B1 = line status (THRE 0x20
 * | TEMT 0x40: the transmitter is always empty), then up to
 * wMaxPacketSize - 2 data bytes.  A real chip also sends a status-only
 * packet every latency period; this one sends one after attach and after
 * each RESET (so an open sees the modem lines at once) and otherwise keeps
 * IN URBs pending until there is data, so an idle port costs nothing.
 *
 * Bulk OUT: plain data to the serial peer of serial_core.c.
 *
 * Options: `modem-status N` (the B0 modem lines, default 0x30: CTS and
 * DSR), `latency N` (the latency timer at reset, 1..255 ms, default 16),
 * and the common `echo`, `respond`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"
#include "serial_core.h"

/* requests (ftdi_sio.h) */
enum {
	FTDI_RESET = 0x00,
	FTDI_MODEM_CTRL = 0x01,
	FTDI_SET_FLOW_CTRL = 0x02,
	FTDI_SET_BAUD_RATE = 0x03,
	FTDI_SET_DATA = 0x04,
	FTDI_GET_MODEM_STATUS = 0x05,
	FTDI_SET_EVENT_CHAR = 0x06,
	FTDI_SET_ERROR_CHAR = 0x07,
	FTDI_SET_LATENCY_TIMER = 0x09,
	FTDI_GET_LATENCY_TIMER = 0x0a,
	FTDI_SET_BITMODE = 0x0b,
	FTDI_READ_PINS = 0x0c,
	FTDI_READ_EEPROM = 0x90,
};

#define FTDI_RESET_SIO		0
#define FTDI_RESET_PURGE_RX	1
#define FTDI_RESET_PURGE_TX	2

#define FTDI_B0_RESERVED	0x01	/* low nibble of B0 reads 0001 */
#define FTDI_B0_LINES		0xf0	/* CTS DSR RI DCD */
#define FTDI_B1_THRE		0x20
#define FTDI_B1_TEMT		0x40
#define FTDI_B1_BI		0x10

#define FTDI_EEPROM_WORDS	128
#define FTDI_LATENCY_DEFAULT	16

enum ftdi_divisor { DIV_AM, DIV_BM, DIV_H };

struct ftdi_chip {
	uint16_t bcd;
	const char *name;
	enum ftdi_divisor div;
	bool channel;		/* wIndex low byte is the channel (1 + if) */
};

/* ftdi_determine_type() in ftdi_sio.c, for the types this models */
static const struct ftdi_chip ftdi_chips[] = {
	{ 0x0200, "FT232A", DIV_AM, false },
	{ 0x0400, "FT232B", DIV_BM, false },
	{ 0x0500, "FT2232C", DIV_BM, true },
	{ 0x0600, "FT232R", DIV_BM, false },
	{ 0x0700, "FT2232H", DIV_H, true },
	{ 0x0800, "FT4232H", DIV_H, true },
	{ 0x0900, "FT232H", DIV_H, true },
	{ 0x1000, "FT-X", DIV_BM, true },
	{ 0x2800, "FT2233HP", DIV_H, true },
	{ 0x2900, "FT4233HP", DIV_H, true },
	{ 0x3000, "FT2232HP", DIV_H, true },
	{ 0x3100, "FT4232HP", DIV_H, true },
	{ 0x3200, "FT233HP", DIV_H, true },
	{ 0x3300, "FT232HP", DIV_H, true },
	{ 0x3600, "FT4232HA", DIV_H, true },
};

struct ftdi {
	const struct ftdi_chip *chip;
	uint8_t ep_in, ep_out;		/* bEndpointAddress */
	uint16_t mps;			/* bytes per IN packet, header included */
	uint8_t modem;			/* B0 lines (option) */
	uint8_t latency_reset;		/* option */
	uint8_t latency;
	uint8_t flow;			/* SET_FLOW_CTRL wIndex high byte */
	uint16_t xon_xoff;		/* its wValue: XOFF << 8 | XON */
	uint8_t bitmode, pins;
	bool status_due;		/* send a status-only packet */
	uint16_t eeprom[FTDI_EEPROM_WORDS];
	struct ser_port port;
	struct gdev_urbq in;
};

static const struct ftdi_chip *ftdi_chip(uint16_t bcd)
{
	size_t i;

	for (i = 0; i < sizeof(ftdi_chips) / sizeof(ftdi_chips[0]); i++)
		if (ftdi_chips[i].bcd == bcd)
			return &ftdi_chips[i];
	return NULL;
}

static int ftdi_validate(const struct gd_device *m, struct script_error *err)
{
	static const char *const keys[] = { "modem-status", "latency",
					    SER_COMMON_KEYS, NULL };
	const struct gd_endpoint *in, *out;
	struct ser_eps e;
	uint64_t v;
	int rc;

	rc = fn_opt_only(m, keys, err) ?: ser_opts_check(m, err) ?:
	     fn_opt_u64(m, "modem-status", 0x30, 0xff, 0, &v, err);
	if (rc)
		return rc;
	if (v & ~FTDI_B0_LINES)
		return fn_opt_error(m, fn_opt(m, "modem-status"), err,
				    "modem-status: only the line bits 0x10 CTS, 0x20 DSR, 0x40 RI, 0x80 DCD");
	rc = fn_opt_u64(m, "latency", FTDI_LATENCY_DEFAULT, 255, 0, &v, err);
	if (rc)
		return rc;
	if (!v)
		return fn_opt_error(m, fn_opt(m, "latency"), err,
				    "latency: 1..255 ms");
	if (!ftdi_chip(m->bcdDevice))
		return fn_opt_error(m, NULL, err,
				    "bcdDevice 0x%04x is no FTDI type this function models (ftdi_sio takes the type from it): use 0x0200 FT232A, 0x0400 FT232B, 0x0500 FT2232C, 0x0600 FT232R, 0x0700 FT2232H, 0x0800 FT4232H, 0x0900 FT232H, 0x1000 FT-X",
				    m->bcdDevice);
	if (ser_find_eps(m, false, &e))
		return fn_opt_error(m, NULL, err,
				    "needs an interface with a bulk IN and a bulk OUT endpoint");
	in = e.in;
	out = e.out;
	if ((in->wMaxPacketSize & 0x7ff) != (out->wMaxPacketSize & 0x7ff))
		return fn_opt_error(m, NULL, err,
				    "endpoints 0x%02x and 0x%02x: give both the same wMaxPacketSize (ftdi_sio frames IN data by the last endpoint's)",
				    in->bEndpointAddress, out->bEndpointAddress);
	if ((in->wMaxPacketSize & 0x7ff) < 8)
		return fn_opt_error(m, NULL, err,
				    "endpoint 0x%02x: wMaxPacketSize below 8",
				    in->bEndpointAddress);
	return fn_ep_check_free(m, in, "data IN endpoint", err) ?:
	       fn_ep_check_free(m, out, "data OUT endpoint", err);
}

static void ftdi_state_init(struct ftdi *f)
{
	f->latency = f->latency_reset;
	f->flow = 0;
	f->xon_xoff = 0;
	f->bitmode = 0;
	f->pins = 0;
	f->status_due = true;
}

static int ftdi_attach(struct gdev *dev)
{
	const struct gd_device *m = dev->model;
	struct script_error err;
	struct ser_eps e;
	struct ftdi *f;
	uint64_t v;
	int rc;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->chip = ftdi_chip(m->bcdDevice);
	if (!f->chip || ser_find_eps(m, false, &e)) {
		/* validate() accepted the script: cannot happen */
		free(f);
		return -EINVAL;
	}
	f->ep_in = e.in->bEndpointAddress;
	f->ep_out = e.out->bEndpointAddress;
	f->mps = e.in->wMaxPacketSize & 0x7ff;
	fn_opt_u64(m, "modem-status", 0x30, 0xff, 0, &v, &err);
	f->modem = v & FTDI_B0_LINES;
	fn_opt_u64(m, "latency", FTDI_LATENCY_DEFAULT, 255, 0, &v, &err);
	f->latency_reset = v;
	f->eeprom[1] = m->idVendor;
	f->eeprom[2] = m->idProduct;
	f->eeprom[3] = m->bcdDevice;
	rc = ser_port_init(&f->port, m);
	if (rc) {
		free(f);
		return rc;
	}
	gdev_urbq_init(&f->in);
	ftdi_state_init(f);
	dev->function_state = f;
	log_info("ftdi: an %s", f->chip->name);
	return 0;
}

static void ftdi_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct ftdi *f = dev->function_state;

	if (!f)
		return;
	gdev_urbq_free(&f->in, free_urb);
	ser_port_release(dev, &f->port, free_urb);
	free(f);
	dev->function_state = NULL;
}

static void ftdi_reset(struct gdev *dev)
{
	struct ftdi *f = dev->function_state;

	if (!f)
		return;
	gdev_urbq_flush(dev, &f->in, -ESHUTDOWN);
	ser_port_reset(dev, &f->port);
	ftdi_state_init(f);
}

static uint8_t ftdi_b0(const struct ftdi *f)
{
	return FTDI_B0_RESERVED | f->modem;
}

static uint8_t ftdi_b1(const struct ftdi *f)
{
	return FTDI_B1_THRE | FTDI_B1_TEMT | (f->port.line.brk ? FTDI_B1_BI : 0);
}

/*
 * One IN transfer: packets of [B0 B1 data...], each at most mps bytes,
 * while data lasts and the buffer has room for a header.  A packet shorter
 * than mps ends the transfer (USB 2.0 5.8.3).
 */
static size_t ftdi_fill(struct ftdi *f, uint8_t *buf, size_t len)
{
	size_t off = 0, pkt, n;

	while (len - off >= 2) {
		pkt = len - off < f->mps ? len - off : f->mps;
		buf[off] = ftdi_b0(f);
		buf[off + 1] = ftdi_b1(f);
		n = ser_port_take(&f->port, buf + off + 2, pkt - 2);
		off += 2 + n;
		if (2 + n < f->mps || !ser_port_pending(&f->port))
			break;
	}
	f->status_due = false;
	return off;
}

static void ftdi_kick(struct gdev *dev, struct ftdi *f)
{
	bool progress;
	struct urb *urb;

	do {
		progress = false;
		ser_port_pump(dev, &f->port);
		while (f->in.head &&
		       (ser_port_pending(&f->port) || f->status_due)) {
			urb = gdev_urbq_pop(&f->in);
			gdev_complete(dev, urb, 0, ftdi_fill(f, urb->buf,
							     urb->length));
			progress = true;
		}
	} while (progress);
}

/*
 * The baud rate a divisor selects (the inverse of get_ftdi_divisor() in
 * ftdi_sio.c): the divisor counts eighths; AM chips code the fraction in
 * bits 15:14, later ones in bits 16:14, and H chips with bit 17 set run
 * the 12 MHz clock instead of 3 MHz.  Wire values 0 and 1 mean 1.0 and
 * 1.5.
 */
static uint32_t ftdi_decode_baud(const struct ftdi *f, uint16_t wValue,
				 uint16_t wIndex)
{
	/* eighths for each fraction code */
	static const uint8_t am_frac[4] = { 0, 4, 2, 1 };
	static const uint8_t bm_frac[8] = { 0, 4, 2, 1, 3, 5, 6, 7 };
	uint32_t hi = f->chip->channel ? wIndex >> 8 : wIndex;
	uint32_t div, eighths, clock = 3000000;

	if (f->chip->div == DIV_AM) {
		div = wValue;
		eighths = (div & 0x3fff) * 8 + am_frac[div >> 14];
		if (div == 0)
			eighths = 8;
	} else {
		div = wValue | (hi & 3) << 16;
		if (f->chip->div == DIV_H && (div & 0x20000))
			clock = 12000000;
		div &= 0x1ffff;
		if (div == 0)
			eighths = 8;
		else if (div == 1)
			eighths = 12;
		else
			eighths = (div & 0x3fff) * 8 + bm_frac[div >> 14];
	}
	if (!eighths)
		return 0;
	return ((uint64_t)clock * 8 + eighths / 2) / eighths;
}

static void ftdi_set_data(struct ftdi *f, uint16_t v)
{
	struct ser_line *l = &f->port.line;

	l->data_bits = v & 0xff;
	l->parity = (v >> 8) & 7;
	l->stop = (v >> 11) & 7;
	ser_line_set_break(l, v & (1 << 14));
}

static int ftdi_control(struct gdev *dev, const struct usb_setup *s,
			uint8_t *data, size_t len)
{
	struct ftdi *f = dev->function_state;
	bool in = s->bmRequestType & USB_DIR_IN;
	struct ser_line *l;
	uint8_t reply[2];
	size_t n = 0;

	if (!f || (s->bmRequestType & USB_TYPE_MASK) != USB_TYPE_VENDOR)
		return -ENOENT;
	l = &f->port.line;
	switch (s->bRequest) {
	case FTDI_RESET:
		if (in)
			return -EPIPE;
		if (s->wValue == FTDI_RESET_SIO ||
		    s->wValue == FTDI_RESET_PURGE_RX) {
			ser_port_purge_tx(&f->port);
			f->status_due = true;
		}
		ftdi_kick(dev, f);
		return 0;
	case FTDI_MODEM_CTRL:
		if (in)
			return -EPIPE;
		if (s->wValue & 0x100)
			l->dtr = s->wValue & 1;
		if (s->wValue & 0x200)
			l->rts = s->wValue & 2;
		ser_line_log("ftdi", l);
		return 0;
	case FTDI_SET_FLOW_CTRL:
		if (in)
			return -EPIPE;
		f->flow = s->wIndex >> 8;
		f->xon_xoff = s->wValue;
		log_info("ftdi: flow control 0x%02x", f->flow);
		return 0;
	case FTDI_SET_BAUD_RATE:
		if (in)
			return -EPIPE;
		l->baud = ftdi_decode_baud(f, s->wValue, s->wIndex);
		ser_line_log("ftdi", l);
		return 0;
	case FTDI_SET_DATA:
		if (in)
			return -EPIPE;
		ftdi_set_data(f, s->wValue);
		ser_line_log("ftdi", l);
		return 0;
	case FTDI_GET_MODEM_STATUS:
		if (!in)
			return -EPIPE;
		reply[0] = ftdi_b0(f);
		reply[1] = ftdi_b1(f);
		n = 2;
		break;
	case FTDI_SET_EVENT_CHAR:
	case FTDI_SET_ERROR_CHAR:
		return in ? -EPIPE : 0;
	case FTDI_SET_LATENCY_TIMER:
		if (in)
			return -EPIPE;
		f->latency = s->wValue & 0xff;
		log_info("ftdi: latency timer %u ms", f->latency);
		return 0;
	case FTDI_GET_LATENCY_TIMER:
		if (!in)
			return -EPIPE;
		reply[0] = f->latency;
		n = 1;
		break;
	case FTDI_SET_BITMODE:
		if (in)
			return -EPIPE;
		f->bitmode = s->wValue >> 8;
		f->pins = s->wValue & 0xff;
		return 0;
	case FTDI_READ_PINS:
		if (!in)
			return -EPIPE;
		reply[0] = f->pins;
		n = 1;
		break;
	case FTDI_READ_EEPROM:
		if (!in)
			return -EPIPE;
		/* addresses wrap, as in a small serial EEPROM */
		reply[0] = f->eeprom[s->wIndex % FTDI_EEPROM_WORDS] & 0xff;
		reply[1] = f->eeprom[s->wIndex % FTDI_EEPROM_WORDS] >> 8;
		n = 2;
		break;
	default:
		return -ENOENT;
	}
	if (n > len)
		n = len;
	memcpy(data, reply, n);
	return n;
}

static int ftdi_submit(struct gdev *dev, struct urb *urb)
{
	struct ftdi *f = dev->function_state;
	uint8_t addr;

	if (!f)
		return -ENOENT;
	addr = urb->ep | (urb->dir_in ? USB_DIR_IN : 0);
	if (addr == f->ep_out)
		ser_port_submit_out(dev, &f->port, urb);
	else if (addr == f->ep_in)
		gdev_urbq_push(&f->in, urb);
	else
		return -ENOENT;
	ftdi_kick(dev, f);
	return 0;
}

static struct urb *ftdi_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct ftdi *f = dev->function_state;
	struct urb *urb;

	if (!f)
		return NULL;
	urb = gdev_urbq_remove(&f->in, seqnum);
	if (!urb)
		urb = ser_port_unlink(&f->port, seqnum);
	return urb;
}

const struct fn_ops fn_ftdi_ops = {
	.name = "ftdi",
	.validate = ftdi_validate,
	.attach = ftdi_attach,
	.detach = ftdi_detach,
	.control = ftdi_control,
	.submit = ftdi_submit,
	.unlink = ftdi_unlink,
	.reset = ftdi_reset,
};
