// SPDX-License-Identifier: GPL-2.0
/*
 * fn/ch341.c - a WCH CH340/CH341 USB serial chip, as Linux's ch341 driver
 * drives it (drivers/usb/serial/ch341.c is the reference for every
 * request, register and bit used here).
 *
 * Vendor requests on ep0 (bmRequestType 0x40 / 0xc0):
 *   0x5f READ_VERSION  2 bytes: the chip version, 0
 *   0xa1 SERIAL_INIT   taken
 *   0x9a WRITE_REG     wValue = R2 << 8 | R1, wIndex = V2 << 8 | V1:
 *                      register R1 = V1, then R2 = V2
 *   0x95 READ_REG      wValue as above: 2 bytes, R1 then R2
 *   0xa4 MODEM_CTRL    wValue the inverted MCR: bit 5 low DTR, bit 6 low RTS
 * Anything else STALLs.
 *
 * The registers are a 256-byte file; those with a meaning here:
 *   0x05 break: bit 0 set while there is no break (1 at reset)
 *   0x06 the modem lines, inverted (read only): CTS 0x01, DSR 0x02,
 *        RI 0x04, DCD 0x08
 *   0x12 prescaler: bits 1:0 ps, bit 2 fact (bit 7 "send at once")
 *   0x13 divisor: 256 - div; the rate is
 *        48 MHz / (2^(12 - 3 ps - fact) * div), rounded to whole bits per
 *        second (so 9600 asked is 9615 run, as on the chip)
 *   0x18 LCR: bits 1:0 data bits - 5, 0x04 two stop bits, 0x08 parity,
 *        0x10 even, 0x20 mark/space (0x28 mark, 0x38 space), 0x40/0x80
 *        transmitter/receiver on
 * ch341 writes the LCR only to chips of version 0x30 and later; an older
 * version (option) keeps the 8N1 of reset whatever the host asks.
 *
 * Interrupt IN: ch341 submits one at open and reads the lines with
 * READ_REG; they never change here, so its URBs wait (until unlinked).
 *
 * Bulk IN/OUT: the serial peer of serial_core.c, bytes unframed.
 *
 * Options: `version N` (READ_VERSION, default 0x31), `modem-status N` (the
 * lines of register 0x06, not inverted, default 0x03: CTS and DSR) and the
 * common `echo`, `respond`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"
#include "serial_core.h"

/* requests (ch341.c) */
enum {
	CH_READ_VERSION = 0x5f,
	CH_WRITE_REG = 0x9a,
	CH_READ_REG = 0x95,
	CH_SERIAL_INIT = 0xa1,
	CH_MODEM_CTRL = 0xa4,
};

/* registers */
#define CH_REG_BREAK		0x05
#define CH_REG_MSR		0x06
#define CH_REG_PRESCALER	0x12
#define CH_REG_DIVISOR		0x13
#define CH_REG_LCR		0x18

#define CH_NBREAK		0x01
#define CH_LCR_STOP2		0x04
#define CH_LCR_PARITY		0x08
#define CH_LCR_EVEN		0x10
#define CH_LCR_MARK_SPACE	0x20
#define CH_LCR_RESET		0xc3	/* RX, TX, 8N1 */
#define CH_MCR_DTR		0x20
#define CH_MCR_RTS		0x40
#define CH_LINES		0x0f	/* CTS DSR RI DCD */

#define CH_CLOCK		48000000u

struct ch341 {
	uint8_t version;		/* option */
	uint8_t modem;			/* option, not inverted */
	uint8_t regs[256];
	struct ser_pipe pipe;		/* and the interrupt IN, idle */
};

static int ch341_opts(const struct gd_device *m, uint8_t *version,
		      uint8_t *modem, struct script_error *err)
{
	uint64_t ver, v;
	int rc;

	rc = fn_opt_u64(m, "version", 0x31, 0xff, 0, &ver, err) ?:
	     fn_opt_u64(m, "modem-status", 0x03, 0xff, 0, &v, err);
	if (rc)
		return rc;
	if (v & ~CH_LINES)
		return fn_opt_error(m, fn_opt(m, "modem-status"), err,
				    "modem-status: only the line bits 0x01 CTS, 0x02 DSR, 0x04 RI, 0x08 DCD");
	*version = ver;
	*modem = v;
	return 0;
}

static int ch341_validate(const struct gd_device *m, struct script_error *err)
{
	static const char *const keys[] = { "version", "modem-status",
					    SER_COMMON_KEYS, NULL };
	uint8_t version, modem;
	struct ser_eps e;
	int rc;

	rc = fn_opt_only(m, keys, err) ?: ser_opts_check(m, err) ?:
	     ch341_opts(m, &version, &modem, err);
	if (rc)
		return rc;
	if (ser_find_eps(m, true, &e))
		return fn_opt_error(m, NULL, err,
				    "needs an interface with an interrupt IN, a bulk IN and a bulk OUT endpoint (ch341's open submits the interrupt one)");
	return fn_ep_check_free(m, e.irq, "status endpoint", err) ?:
	       fn_ep_check_free(m, e.in, "data IN endpoint", err) ?:
	       fn_ep_check_free(m, e.out, "data OUT endpoint", err);
}

static void ch341_regs_init(struct ch341 *c)
{
	memset(c->regs, 0, sizeof(c->regs));
	c->regs[CH_REG_BREAK] = CH_NBREAK;
	c->regs[CH_REG_LCR] = CH_LCR_RESET;
}

static int ch341_attach(struct gdev *dev)
{
	struct script_error err;
	struct ser_eps e;
	struct ch341 *c;
	int rc;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (ser_find_eps(dev->model, true, &e) ||
	    ch341_opts(dev->model, &c->version, &c->modem, &err)) {
		/* validate() accepted the script: cannot happen */
		free(c);
		return -EINVAL;
	}
	c->pipe.idle_addr = e.irq->bEndpointAddress;
	rc = ser_pipe_init(&c->pipe, dev->model, e.in, e.out);
	if (rc) {
		free(c);
		return rc;
	}
	ch341_regs_init(c);
	dev->function_state = c;
	log_info("ch341: version 0x%02x", c->version);
	return 0;
}

static void ch341_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct ch341 *c = dev->function_state;

	if (!c)
		return;
	ser_pipe_release(dev, &c->pipe, free_urb);
	free(c);
	dev->function_state = NULL;
}

static void ch341_reset(struct gdev *dev)
{
	struct ch341 *c = dev->function_state;

	if (!c)
		return;
	ser_pipe_reset(dev, &c->pipe);
	ch341_regs_init(c);
}

/* The rate registers 0x12 and 0x13 select (see the top of the file). */
static uint32_t ch341_baud(const struct ch341 *c)
{
	unsigned int ps = c->regs[CH_REG_PRESCALER] & 3;
	unsigned int fact = (c->regs[CH_REG_PRESCALER] >> 2) & 1;
	uint32_t div = 0x100 - c->regs[CH_REG_DIVISOR];
	uint32_t clocks = (1u << (12 - 3 * ps - fact)) * div;

	return (CH_CLOCK + clocks / 2) / clocks;
}

static void ch341_set_lcr(struct ser_line *l, uint8_t lcr)
{
	l->data_bits = 5 + (lcr & 3);
	l->stop = lcr & CH_LCR_STOP2 ? 2 : 0;
	if (!(lcr & CH_LCR_PARITY))
		l->parity = 0;			/* N */
	else if (lcr & CH_LCR_MARK_SPACE)
		l->parity = lcr & CH_LCR_EVEN ? 4 : 3;	/* S : M */
	else
		l->parity = lcr & CH_LCR_EVEN ? 2 : 1;	/* E : O */
}

/* One register written: what it means for the line. */
static void ch341_write_reg(struct ch341 *c, uint8_t reg, uint8_t val)
{
	struct ser_line *l = &c->pipe.port.line;

	if (reg == CH_REG_MSR)
		return;				/* read only */
	c->regs[reg] = val;
	switch (reg) {
	case CH_REG_PRESCALER:
	case CH_REG_DIVISOR:
		l->baud = ch341_baud(c);
		break;
	case CH_REG_LCR:
		if (c->version >= 0x30)
			ch341_set_lcr(l, val);
		break;
	case CH_REG_BREAK:
		ser_line_set_break(l, !(val & CH_NBREAK));
		break;
	}
}

static uint8_t ch341_read_reg(const struct ch341 *c, uint8_t reg)
{
	return reg == CH_REG_MSR ? (uint8_t)~c->modem : c->regs[reg];
}

static int ch341_control(struct gdev *dev, const struct usb_setup *s,
			 uint8_t *data, size_t len)
{
	struct ch341 *c = dev->function_state;
	bool in = s->bmRequestType & USB_DIR_IN;
	struct ser_line *l;
	uint8_t reply[2];
	size_t n;

	if (!c || (s->bmRequestType & USB_TYPE_MASK) != USB_TYPE_VENDOR)
		return -ENOENT;
	l = &c->pipe.port.line;
	switch (s->bRequest) {
	case CH_READ_VERSION:
		if (!in)
			return -EPIPE;
		reply[0] = c->version;
		reply[1] = 0;
		break;
	case CH_READ_REG:
		if (!in)
			return -EPIPE;
		reply[0] = ch341_read_reg(c, s->wValue & 0xff);
		reply[1] = ch341_read_reg(c, s->wValue >> 8);
		break;
	case CH_WRITE_REG:
		if (in)
			return -EPIPE;
		ch341_write_reg(c, s->wValue & 0xff, s->wIndex & 0xff);
		ch341_write_reg(c, s->wValue >> 8, s->wIndex >> 8);
		ser_line_log("ch341", l);
		return 0;
	case CH_SERIAL_INIT:
		return in ? -EPIPE : 0;
	case CH_MODEM_CTRL:
		if (in)
			return -EPIPE;
		l->dtr = !(s->wValue & CH_MCR_DTR);
		l->rts = !(s->wValue & CH_MCR_RTS);
		ser_line_log("ch341", l);
		return 0;
	default:
		return -EPIPE;
	}
	n = len < sizeof(reply) ? len : sizeof(reply);
	memcpy(data, reply, n);
	return n;
}

static int ch341_submit(struct gdev *dev, struct urb *urb)
{
	struct ch341 *c = dev->function_state;

	if (!c)
		return -ENOENT;
	return ser_pipe_submit(dev, &c->pipe, urb);
}

static struct urb *ch341_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct ch341 *c = dev->function_state;

	if (!c)
		return NULL;
	return ser_pipe_unlink(&c->pipe, seqnum);
}

const struct fn_ops fn_ch341_ops = {
	.name = "ch341",
	.validate = ch341_validate,
	.attach = ch341_attach,
	.detach = ch341_detach,
	.control = ch341_control,
	.submit = ch341_submit,
	.unlink = ch341_unlink,
	.reset = ch341_reset,
};
