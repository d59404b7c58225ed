// SPDX-License-Identifier: GPL-2.0
/*
 * fn/pl2303.c - a Prolific PL2303 USB serial chip (HX family), as Linux's
 * pl2303 driver drives it (drivers/usb/serial/pl2303.c and pl2303.h are
 * the reference for every request and bit used here).
 *
 * The pl2303 driver needs an interrupt IN endpoint and a descriptor shape it
 * recognises to bind (pl2303_detect_type(): bMaxPacketSize0 64, bcdUSB
 * 0x0110 gives an HX), a one-byte answer to its vendor reads, CDC-style
 * line requests, and then plain bulk data.
 *
 * Requests on ep0:
 *   0xc0 0x01 (0x81 on HXN) VENDOR_READ   wValue register -> 1 byte
 *   0x40 0x01 (0x80 on HXN) VENDOR_WRITE  wValue register, wIndex value
 *   0x21 0x20 SET_LINE_REQUEST  7 bytes: baud (LE32, or a divisor when
 *             bit 31 is set), stop bits, parity, data bits (CDC layout)
 *   0xa1 0x21 GET_LINE_REQUEST  the 7 bytes as last set (9600 8N1 at first)
 *   0x21 0x22 SET_CONTROL_REQUEST  wValue bit 0 DTR, bit 1 RTS
 *   0x21 0x23 BREAK_REQUEST  wValue 0xffff on, 0 off
 * The registers are a 256-byte file, 0 at reset: a write stores wIndex's
 * low byte at register (wValue & 0xff), a read returns register
 * (wValue & 0x7f), so the driver's read of R | 0x80 (pl2303_update_reg())
 * sees what it wrote to R.  Anything else STALLs.
 *
 * Interrupt IN: the UART state, as 10 bytes shaped like a CDC SERIAL_STATE
 * notification with the state at offset 8 (DCD 0x01, DSR 0x02, BREAK
 * 0x04, RING 0x08, CTS 0x80), sent each time DTR goes from 0 to 1 (the
 * driver submits that URB at open, before it raises DTR).
 *
 * Bulk IN/OUT: the serial peer of serial_core.c (echo, scripted replies).
 *
 * Options: `serial-state N|off` (default 0x83: DCD, DSR, CTS) and the
 * common `echo`, `respond`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/usb/cdc.h>
#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"
#include "serial_core.h"

/* pl2303.h */
#define PL_VENDOR_RW		0x01
#define PL_VENDOR_WRITE_N	0x80	/* HXN */
#define PL_VENDOR_READ_N	0x81	/* HXN */
#define PL_SET_LINE		0x20
#define PL_GET_LINE		0x21
#define PL_SET_CONTROL		0x22
#define PL_BREAK		0x23
#define PL_CONTROL_DTR		0x01
#define PL_CONTROL_RTS		0x02
#define PL_BREAK_ON		0xffff

#define PL_UART_DCD		0x01
#define PL_UART_DSR		0x02
#define PL_UART_CTS		0x80
#define PL_SERIAL_STATE_DEFAULT	(PL_UART_DCD | PL_UART_DSR | PL_UART_CTS)

/* The line requests are CDC's (ser_cdc_control() serves them). */
_Static_assert(PL_SET_LINE == USB_CDC_REQ_SET_LINE_CODING, "pl2303 line requests");
_Static_assert(PL_GET_LINE == USB_CDC_REQ_GET_LINE_CODING, "pl2303 line requests");
_Static_assert(PL_SET_CONTROL == USB_CDC_REQ_SET_CONTROL_LINE_STATE,
	       "pl2303 line requests");
_Static_assert(PL_CONTROL_DTR == USB_CDC_CTRL_DTR, "pl2303 line requests");
_Static_assert(PL_CONTROL_RTS == USB_CDC_CTRL_RTS, "pl2303 line requests");


struct pl2303 {
	uint8_t regs[256];
	struct ser_cdc cdc;
};

static int pl2303_serial_state_opt(const struct gd_device *m, int *state,
				   struct script_error *err)
{
	return ser_serial_state_opt(m, PL_SERIAL_STATE_DEFAULT, 0xff, state,
				    err);
}

static int pl2303_validate(const struct gd_device *m,
			   struct script_error *err)
{
	static const char *const keys[] = { "serial-state", SER_COMMON_KEYS,
					    NULL };
	struct ser_eps e;
	int state, rc;

	rc = fn_opt_only(m, keys, err) ?: ser_opts_check(m, err) ?:
	     pl2303_serial_state_opt(m, &state, err);
	if (rc)
		return rc;
	if (ser_find_eps(m, true, &e))
		return fn_opt_error(m, NULL, err,
				    "needs an interface with an interrupt IN, a bulk IN and a bulk OUT endpoint (pl2303 insists on the interrupt one)");
	return fn_ep_check_free(m, e.irq, "status endpoint", err) ?:
	       fn_ep_check_free(m, e.in, "data IN endpoint", err) ?:
	       fn_ep_check_free(m, e.out, "data OUT endpoint", err);
}

/*
 * The baud rate in a line request: direct (LE32), or with bit 31 set the
 * HX divisor pl2303_encode_baud_rate_divisor() writes,
 * 12 MHz * 32 / (mantissa * 4^exponent), mantissa in bits 8:0 and exponent
 * in bits 11:9.
 */
static uint32_t pl2303_decode_baud(const uint8_t *b)
{
	uint32_t mantissa, exponent;

	if (!(b[3] & 0x80))
		return b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
	mantissa = b[0] | (b[1] & 1) << 8;
	exponent = (b[1] >> 1) & 7;
	if (!mantissa)
		return 0;
	return (12000000u * 32 / mantissa) >> (2 * exponent);
}

static int pl2303_attach(struct gdev *dev)
{
	struct script_error err;
	struct ser_eps e;
	struct pl2303 *p;
	int rc;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (ser_find_eps(dev->model, true, &e) ||
	    pl2303_serial_state_opt(dev->model, &p->cdc.serial_state, &err)) {
		/* validate() accepted the script: cannot happen */
		free(p);
		return -EINVAL;
	}
	p->cdc.who = "pl2303";
	p->cdc.notify_ep = e.irq;
	p->cdc.in_ep = e.in;
	p->cdc.out_ep = e.out;
	p->cdc.notify_index = 0;
	p->cdc.decode_baud = pl2303_decode_baud;
	rc = ser_cdc_init(&p->cdc, dev->model);
	if (rc) {
		free(p);
		return rc;
	}
	dev->function_state = p;
	return 0;
}

static void pl2303_detach(struct gdev *dev,
			  void (*free_urb)(struct urb *urb))
{
	struct pl2303 *p = dev->function_state;

	if (!p)
		return;
	ser_cdc_release(dev, &p->cdc, free_urb);
	free(p);
	dev->function_state = NULL;
}

static void pl2303_reset(struct gdev *dev)
{
	struct pl2303 *p = dev->function_state;

	if (!p)
		return;
	ser_cdc_reset(dev, &p->cdc);
	memset(p->regs, 0, sizeof(p->regs));
}

static int pl2303_vendor(struct pl2303 *p, const struct usb_setup *s,
			 uint8_t *data, size_t len)
{
	bool in = s->bmRequestType & USB_DIR_IN;

	switch (s->bRequest) {
	case PL_VENDOR_RW:
		break;
	case PL_VENDOR_READ_N:
		if (!in)
			return -EPIPE;
		break;
	case PL_VENDOR_WRITE_N:
		if (in)
			return -EPIPE;
		break;
	default:
		return -ENOENT;
	}
	if (!in) {
		p->regs[s->wValue & 0xff] = s->wIndex & 0xff;
		log_dbg("pl2303: [%04x] = %02x", s->wValue, s->wIndex & 0xff);
		return 0;
	}
	if (!len)
		return 0;
	data[0] = p->regs[s->wValue & 0x7f];
	return 1;
}

static int pl2303_control(struct gdev *dev, const struct usb_setup *s,
			  uint8_t *data, size_t len)
{
	struct pl2303 *p = dev->function_state;

	if (!p)
		return -ENOENT;
	if ((s->bmRequestType & USB_TYPE_MASK) == USB_TYPE_VENDOR)
		return pl2303_vendor(p, s, data, len);
	if ((s->bmRequestType & USB_TYPE_MASK) != USB_TYPE_CLASS)
		return -ENOENT;
	if (s->bRequest != PL_BREAK)
		/* PL_SET_LINE, PL_GET_LINE, PL_SET_CONTROL: the CDC requests */
		return ser_cdc_control(dev, &p->cdc, s, data, len);

	if (s->bmRequestType & USB_DIR_IN)
		return -EPIPE;
	ser_line_set_break(&p->cdc.pipe.port.line, s->wValue == PL_BREAK_ON);
	ser_line_log("pl2303", &p->cdc.pipe.port.line);
	return 0;
}

static int pl2303_submit(struct gdev *dev, struct urb *urb)
{
	struct pl2303 *p = dev->function_state;

	if (!p)
		return -ENOENT;
	return ser_cdc_submit(dev, &p->cdc, urb);
}

static struct urb *pl2303_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct pl2303 *p = dev->function_state;

	if (!p)
		return NULL;
	return ser_cdc_unlink(&p->cdc, seqnum);
}

const struct fn_ops fn_pl2303_ops = {
	.name = "pl2303",
	.validate = pl2303_validate,
	.attach = pl2303_attach,
	.detach = pl2303_detach,
	.control = pl2303_control,
	.submit = pl2303_submit,
	.unlink = pl2303_unlink,
	.reset = pl2303_reset,
};
