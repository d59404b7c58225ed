// SPDX-License-Identifier: GPL-2.0
/*
 * fn/acm.c - CDC-ACM serial port (USB CDC 1.2 PSTN subclass, the "abstract
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
	uint8_t comm_if;
	struct ser_cdc cdc;
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
				e->notify = fn_alt_ep(alt, USB_ENDPOINT_XFER_INT,
						      true);
				if (e->notify)
					e->comm = alt;
			}
			if (!e->in && alt->bInterfaceClass == USB_CLASS_CDC_DATA) {
				e->in = fn_alt_ep(alt, USB_ENDPOINT_XFER_BULK,
						  true);
				e->out = fn_alt_ep(alt, USB_ENDPOINT_XFER_BULK,
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
	return ser_serial_state_opt(m, ACM_SERIAL_STATE_DEFAULT, 0xffff, state,
				    err);
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
	return fn_ep_check_free(m, e.notify, "notification endpoint", err) ?:
	       fn_ep_check_free(m, e.in, "data IN endpoint", err) ?:
	       fn_ep_check_free(m, e.out, "data OUT endpoint", err);
}

static int acm_attach(struct gdev *dev)
{
	struct script_error err;
	struct acm_eps e;
	struct acm *a;
	int rc;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	if (acm_find(dev->model, &e) ||
	    acm_serial_state_opt(dev->model, &a->cdc.serial_state, &err)) {
		/* validate() accepted the script: cannot happen */
		free(a);
		return -EINVAL;
	}
	a->comm_if = e.comm->bInterfaceNumber;
	a->cdc.who = "acm";
	a->cdc.notify_ep = e.notify;
	a->cdc.in_ep = e.in;
	a->cdc.out_ep = e.out;
	a->cdc.notify_index = a->comm_if;
	rc = ser_cdc_init(&a->cdc, dev->model);
	if (rc) {
		free(a);
		return rc;
	}
	dev->function_state = a;
	return 0;
}

static void acm_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct acm *a = dev->function_state;

	if (!a)
		return;
	ser_cdc_release(dev, &a->cdc, free_urb);
	free(a);
	dev->function_state = NULL;
}

static void acm_reset(struct gdev *dev)
{
	struct acm *a = dev->function_state;

	if (!a)
		return;
	ser_cdc_reset(dev, &a->cdc);
}

static int acm_control(struct gdev *dev, const struct usb_setup *s,
		       uint8_t *data, size_t len)
{
	struct acm *a = dev->function_state;
	struct ser_line *l;

	if (!a || (s->bmRequestType & (USB_TYPE_MASK | USB_RECIP_MASK)) !=
		  (USB_TYPE_CLASS | USB_RECIP_INTERFACE) ||
	    (s->wIndex & 0xff) != a->comm_if)
		return -ENOENT;
	if (s->bRequest != USB_CDC_REQ_SEND_BREAK)
		return ser_cdc_control(dev, &a->cdc, s, data, len);

	if (s->bmRequestType & USB_DIR_IN)
		return -EPIPE;
	/* 0xffff: until SEND_BREAK 0; else wValue ms, taken as done */
	l = &a->cdc.pipe.port.line;
	ser_line_set_break(l, s->wValue != 0);
	if (s->wValue != 0xffff)
		l->brk = false;
	ser_line_log("acm", l);
	return 0;
}

static int acm_submit(struct gdev *dev, struct urb *urb)
{
	struct acm *a = dev->function_state;

	if (!a)
		return -ENOENT;
	return ser_cdc_submit(dev, &a->cdc, urb);
}

static struct urb *acm_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct acm *a = dev->function_state;

	if (!a)
		return NULL;
	return ser_cdc_unlink(&a->cdc, seqnum);
}

const struct fn_ops fn_acm_ops = {
	.name = "acm",
	.validate = acm_validate,
	.attach = acm_attach,
	.detach = acm_detach,
	.control = acm_control,
	.submit = acm_submit,
	.unlink = acm_unlink,
	.reset = acm_reset,
};
