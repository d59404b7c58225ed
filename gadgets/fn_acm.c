// SPDX-License-Identifier: GPL-2.0
/*
 * fn_acm.c - CDC-ACM serial port (USB CDC 1.2 PSTN subclass, the "abstract
 * control model" Linux binds as cdc_acm and calls /dev/ttyACM*).
 *
 * The script gives the descriptors (a communication interface, class 2
 * subclass 2, with an interrupt IN endpoint, and a data interface, class
 * 0x0a, with a bulk pair); the function answers:
 *  - SET_LINE_CODING / GET_LINE_CODING (PSTN 6.3.10/6.3.11): the 7 bytes
 *    are stored and returned as they were set (9600 8N1 at first);
 *  - SET_CONTROL_LINE_STATE (6.3.12): DTR and RTS are stored; each time
 *    DTR goes from 0 to 1 a SERIAL_STATE notification (6.5.4) carrying the
 *    `serial-state` bitmap goes out on the interrupt endpoint (cdc_acm
 *    submits that URB when the tty opens, before it raises DTR);
 *  - SEND_BREAK (6.3.13): counted (%k in replies);
 *  - the data interface's bulk pair: the serial peer of serial_core.c
 *    (echo, scripted replies).
 * Requests go to the communication interface (wIndex); anything else
 * STALLs, as a device without those capabilities would.
 *
 * Options: `serial-state N|off` (default 0x0003: DCD and DSR), and the
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

#define ACM_SERIAL_STATE_DEFAULT \
	(USB_CDC_SERIAL_STATE_DCD | USB_CDC_SERIAL_STATE_DSR)

struct acm_eps {
	const struct gd_alt *comm;
	const struct gd_endpoint *notify;
	const struct gd_endpoint *in;
	const struct gd_endpoint *out;
};

struct acm {
	struct acm_eps eps;
	uint8_t comm_if;
	int serial_state;		/* -1: never sent */
	uint8_t coding[7];		/* struct usb_cdc_line_coding, as set */
	struct ser_port port;
	struct ser_notify notify;
	struct ser_urbq in;		/* bulk IN URBs waiting for data */
};

/* The first configuration with both interfaces the function needs. */
static int acm_find(const struct gd_device *m, struct acm_eps *e)
{
	const struct gd_config *cfg;
	const struct gd_alt *alt;
	size_t c, i;

	for (c = 0; c < m->n_configs; c++) {
		cfg = &m->configs[c];
		memset(e, 0, sizeof(*e));
		for (i = 0; i < cfg->n_alts; i++) {
			alt = &cfg->alts[i];
			if (alt->bAlternateSetting)
				continue;
			if (!e->comm && alt->bInterfaceClass == USB_CLASS_COMM &&
			    alt->bInterfaceSubClass == USB_CDC_SUBCLASS_ACM) {
				e->notify = ser_alt_ep(alt, USB_ENDPOINT_XFER_INT,
						       true);
				if (e->notify)
					e->comm = alt;
			}
			if (!e->in && alt->bInterfaceClass == USB_CLASS_CDC_DATA) {
				e->in = ser_alt_ep(alt, USB_ENDPOINT_XFER_BULK,
						   true);
				e->out = ser_alt_ep(alt, USB_ENDPOINT_XFER_BULK,
						    false);
				if (!e->in || !e->out)
					e->in = e->out = NULL;
			}
		}
		if (e->comm && e->in)
			return 0;
	}
	return e->comm ? -ENOENT : -ENODEV;
}

static int acm_serial_state_opt(const struct gd_device *m, int *state,
				struct script_error *err)
{
	const struct gd_fn_opt *opt = fn_opt(m, "serial-state");
	uint64_t v;
	int rc;

	if (opt && !strcmp(opt->value, "off")) {
		*state = -1;
		return 0;
	}
	rc = fn_opt_u64(m, "serial-state", ACM_SERIAL_STATE_DEFAULT, 0xffff, 0,
			&v, err);
	*state = v;
	return rc;
}

static int acm_validate(const struct gd_device *m, struct script_error *err)
{
	static const char *const keys[] = { "serial-state", SER_COMMON_KEYS,
					    NULL };
	struct acm_eps e;
	int state, rc;

	rc = fn_opt_only(m, keys, err) ?: ser_opts_check(m, err) ?:
	     acm_serial_state_opt(m, &state, err);
	if (rc)
		return rc;
	rc = acm_find(m, &e);
	if (rc == -ENODEV)
		return fn_opt_error(m, NULL, err,
				    "needs a communication interface (bInterfaceClass 2, bInterfaceSubClass 2) with an interrupt IN endpoint");
	if (rc)
		return fn_opt_error(m, NULL, err,
				    "needs a data interface (bInterfaceClass 0x0a) with a bulk IN and a bulk OUT endpoint, in the configuration of the communication interface");
	return ser_ep_check_free(m, e.notify, "notification endpoint", err) ?:
	       ser_ep_check_free(m, e.in, "data IN endpoint", err) ?:
	       ser_ep_check_free(m, e.out, "data OUT endpoint", err);
}

static void acm_coding_init(struct acm *a)
{
	/* 9600 baud, 1 stop bit, no parity, 8 data bits */
	static const uint8_t def[7] = { 0x80, 0x25, 0, 0, 0, 0, 8 };

	memcpy(a->coding, def, sizeof(def));
}

static int acm_attach(struct gdev *dev)
{
	struct script_error err;
	struct acm *a;
	int rc;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	if (acm_find(dev->model, &a->eps) ||
	    acm_serial_state_opt(dev->model, &a->serial_state, &err)) {
		/* validate() accepted the script: cannot happen */
		free(a);
		return -EINVAL;
	}
	rc = ser_port_init(&a->port, dev->model);
	if (rc) {
		free(a);
		return rc;
	}
	a->comm_if = a->eps.comm->bInterfaceNumber;
	acm_coding_init(a);
	ser_notify_init(&a->notify, a->eps.notify->wMaxPacketSize);
	ser_urbq_init(&a->in);
	dev->function_state = a;
	return 0;
}

static void acm_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct acm *a = dev->function_state;

	if (!a)
		return;
	ser_urbq_free(&a->in, free_urb);
	ser_notify_clear(dev, &a->notify, 0, free_urb);
	ser_port_release(dev, &a->port, free_urb);
	free(a);
	dev->function_state = NULL;
}

static void acm_reset(struct gdev *dev)
{
	struct acm *a = dev->function_state;

	if (!a)
		return;
	ser_urbq_flush(dev, &a->in, -ESHUTDOWN);
	ser_notify_clear(dev, &a->notify, -ESHUTDOWN, NULL);
	ser_port_reset(dev, &a->port);
	acm_coding_init(a);
}

/* Serve the data IN URBs from the queue, refilling it from OUT data. */
static void acm_kick(struct gdev *dev, struct acm *a)
{
	bool progress;
	struct urb *urb;
	size_t n;

	do {
		progress = false;
		ser_port_pump(dev, &a->port);
		while (a->in.head && ser_port_pending(&a->port)) {
			urb = ser_urbq_pop(&a->in);
			n = ser_port_take(&a->port, urb->buf, urb->length);
			gdev_complete(dev, urb, 0, n);
			progress = true;
		}
	} while (progress);
}

static void acm_set_coding(struct acm *a, const uint8_t *b)
{
	struct ser_line *l = &a->port.line;

	memcpy(a->coding, b, sizeof(a->coding));
	l->baud = b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
	l->stop = b[4];
	l->parity = b[5];
	l->data_bits = b[6];
	ser_line_log("acm", l);
}

static void acm_set_lines(struct acm *a, uint16_t wValue)
{
	struct ser_line *l = &a->port.line;
	bool raised = !l->dtr && (wValue & USB_CDC_CTRL_DTR);

	l->dtr = wValue & USB_CDC_CTRL_DTR;
	l->rts = wValue & USB_CDC_CTRL_RTS;
	ser_line_log("acm", l);
	if (raised && a->serial_state >= 0)
		ser_notify_serial_state(&a->notify, a->comm_if,
					a->serial_state);
}

static int acm_control(struct gdev *dev, const struct usb_setup *s,
		       uint8_t *data, size_t len)
{
	struct acm *a = dev->function_state;
	bool in = s->bmRequestType & USB_DIR_IN;
	size_t n;

	if (!a || (s->bmRequestType & (USB_TYPE_MASK | USB_RECIP_MASK)) !=
		  (USB_TYPE_CLASS | USB_RECIP_INTERFACE) ||
	    (s->wIndex & 0xff) != a->comm_if)
		return -ENOENT;

	switch (s->bRequest) {
	case USB_CDC_REQ_SET_LINE_CODING:
		/* exactly the 7-byte structure, or a Request Error */
		if (in || s->wLength != sizeof(a->coding) ||
		    len < sizeof(a->coding))
			return -EPIPE;
		acm_set_coding(a, data);
		return 0;
	case USB_CDC_REQ_GET_LINE_CODING:
		if (!in)
			return -EPIPE;
		n = len < sizeof(a->coding) ? len : sizeof(a->coding);
		memcpy(data, a->coding, n);
		return n;
	case USB_CDC_REQ_SET_CONTROL_LINE_STATE:
		if (in)
			return -EPIPE;
		acm_set_lines(a, s->wValue);
		ser_notify_serve(dev, &a->notify);
		return 0;
	case USB_CDC_REQ_SEND_BREAK:
		if (in)
			return -EPIPE;
		/* 0xffff: until SEND_BREAK 0; else wValue ms, taken as done */
		ser_line_set_break(&a->port.line, s->wValue != 0);
		if (s->wValue != 0xffff)
			a->port.line.brk = false;
		ser_line_log("acm", &a->port.line);
		return 0;
	default:
		return -ENOENT;
	}
}

static int acm_submit(struct gdev *dev, struct urb *urb)
{
	struct acm *a = dev->function_state;
	uint8_t addr;

	if (!a)
		return -ENOENT;
	addr = urb->ep | (urb->dir_in ? USB_DIR_IN : 0);
	if (addr == a->eps.out->bEndpointAddress) {
		ser_port_submit_out(dev, &a->port, urb);
		acm_kick(dev, a);
	} else if (addr == a->eps.in->bEndpointAddress) {
		ser_urbq_push(&a->in, urb);
		acm_kick(dev, a);
	} else if (addr == a->eps.notify->bEndpointAddress) {
		ser_urbq_push(&a->notify.urbs, urb);
		ser_notify_serve(dev, &a->notify);
	} else {
		return -ENOENT;
	}
	return 0;
}

static struct urb *acm_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct acm *a = dev->function_state;
	struct urb *urb;

	if (!a)
		return NULL;
	urb = ser_urbq_remove(&a->in, seqnum);
	if (!urb)
		urb = ser_urbq_remove(&a->notify.urbs, seqnum);
	if (!urb)
		urb = ser_port_unlink(&a->port, seqnum);
	return urb;
}

const struct gd_function_ops fn_acm_ops = {
	.name = "acm",
	.validate = acm_validate,
	.attach = acm_attach,
	.detach = acm_detach,
	.control = acm_control,
	.submit = acm_submit,
	.unlink = acm_unlink,
	.reset = acm_reset,
};
