// SPDX-License-Identifier: GPL-2.0
/*
 * fn/printer.c - the printer device function: a USB printer (Printer
 * Class 1.1, bInterfaceClass 7) that takes print jobs on bulk OUT and
 * keeps them, byte for byte, in a file.  usblp binds it (subclass 1,
 * protocol 1 unidirectional or 2 bidirectional) and makes /dev/usb/lpN.
 *
 * Class requests (Printer Class 1.1 section 4.2), to the printer interface:
 *  - GET_DEVICE_ID (0xa1, 0): the IEEE 1284 device id, a 2-byte big-endian
 *    length that counts itself, then the text, cut to wLength.  wValue is
 *    the configuration index, wIndex the interface in the high byte and
 *    the alternate setting in the low byte (as usblp sends it); a wIndex
 *    of just the interface number (printer class 1.0 hosts) is taken too.
 *  - GET_PORT_STATUS (0xa1, 1): one byte, the 1284 status lines (0x08 not
 *    error, 0x10 selected, 0x20 paper empty).  usblp reads it at probe
 *    and after a failed write.
 *  - SOFT_RESET (0x21, 2): the bulk endpoints lose their halts.  Linux
 *    sends it with recipient "other" (0x23), which is taken as well.
 * Anything else for the interface STALLs.
 *
 * Bulk OUT: every byte is appended to the `output` file as it arrives
 * (or only counted without one), and logged at the end of the
 * connection.  Bulk IN (the back channel of protocols 2 and 3): the printer
 * has nothing to say, so IN URBs are held (a NAK) until the host unlinks
 * them; usblp keeps one pending whenever the device is open.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"

#define PRN_REQ_GET_DEVICE_ID	0x00
#define PRN_REQ_GET_PORT_STATUS	0x01
#define PRN_REQ_SOFT_RESET	0x02

/* 1284 status lines (IEEE 1284, Linux <linux/lp.h> LP_P*) */
#define PRN_ST_NOT_ERROR	0x08
#define PRN_ST_SELECTED		0x10

/* The length prefix is 16 bits; usblp reads at most 1023 bytes of it. */
#define PRN_ID_MAX		4094

struct printer_cfg {
	uint8_t intf;
	uint8_t ep_out;
	uint8_t ep_in;			/* 0: unidirectional */
	const char *device_id;		/* the model's option, or the default */
	uint8_t port_status;
	const char *output;		/* the model's option, or NULL */
};

struct printer_state {
	struct printer_cfg cfg;
	int fd;				/* output, -1: none */
	bool write_failed;		/* logged once */
	uint64_t received;		/* bulk OUT bytes this connection */
	uint32_t soft_resets;
	struct gdev_urbq in;		/* held back-channel URBs */
};

static const char *const printer_keys[] = {
	"interface", "device-id", "port-status", "output", NULL,
};

static const char printer_default_id[] =
	"MFG:usbrig;MDL:Virtual Printer;CMD:PCL,PJL;CLS:PRINTER;";

/* ---- options and descriptors ---- */

/* Options and descriptors into conf, a struct printer_cfg (void *: for
 * fn_state_new()); -EINVAL with err set on a problem. */
static int cfg_parse(const struct gd_device *m, void *conf,
		     struct script_error *err)
{
	struct printer_cfg *c = conf;
	const struct gd_endpoint *in, *out;
	const struct gd_fn_opt *o;
	const struct gd_alt *alt;
	uint64_t v;
	size_t i;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = fn_opt_only(m, printer_keys, err) ?:
	      fn_opt_interface(m, USB_CLASS_PRINTER, "printer", &alt, err);
	if (ret)
		return ret;
	o = fn_opt(m, "interface");	/* where endpoint errors point */
	c->intf = alt->bInterfaceNumber;
	out = fn_alt_ep(alt, USB_ENDPOINT_XFER_BULK, false);
	in = fn_alt_ep(alt, USB_ENDPOINT_XFER_BULK, true);
	if (!out)
		return fn_opt_error(m, o, err, "interface %u needs a bulk OUT endpoint (the print data)",
				    c->intf);
	/* protocols 2 (bidirectional) and 3 (1284.4) have a back channel */
	if (alt->bInterfaceProtocol >= 2 && !in)
		return fn_opt_error(m, o, err, "interface %u: bInterfaceProtocol %u needs a bulk IN endpoint too",
				    c->intf, alt->bInterfaceProtocol);
	c->ep_out = out->bEndpointAddress;
	c->ep_in = in ? in->bEndpointAddress : 0;
	for (i = 0; i < alt->n_eps; i++) {
		ret = fn_ep_check_free(m, &alt->eps[i],
				       "an endpoint of the printer interface",
				       err);
		if (ret)
			return ret;
	}

	o = fn_opt(m, "device-id");
	c->device_id = o ? o->value : printer_default_id;
	if (o && !*o->value)
		return fn_opt_error(m, o, err, "device-id: expected the IEEE 1284 id, e.g. \"MFG:usbrig;MDL:P1;CMD:PCL;\"");
	if (strlen(c->device_id) > PRN_ID_MAX)
		return fn_opt_error(m, o, err, "device-id: at most %d bytes, got %zu",
				    PRN_ID_MAX, strlen(c->device_id));
	for (i = 0; c->device_id[i]; i++)
		if (c->device_id[i] < 0x20 || c->device_id[i] > 0x7e)
			return fn_opt_error(m, o, err, "device-id: only printable ASCII (byte %zu is 0x%02x)",
					    i + 1, (uint8_t)c->device_id[i]);

	ret = fn_opt_u64(m, "port-status", PRN_ST_NOT_ERROR | PRN_ST_SELECTED,
			 255, 0, &v, err);
	if (ret)
		return ret;
	c->port_status = v;

	o = fn_opt(m, "output");
	if (o && !*o->value)
		return fn_opt_error(m, o, err, "output: expected a file name");
	c->output = o ? o->value : NULL;
	return 0;
}

static int printer_validate(const struct gd_device *m,
			    struct script_error *err)
{
	struct printer_cfg c;

	return cfg_parse(m, &c, err);
}

/* ---- life cycle ---- */

static int printer_attach(struct gdev *dev)
{
	struct printer_state *st;
	int ret;

	st = fn_state_new(dev->model, sizeof(*st),
			  offsetof(struct printer_state, cfg), cfg_parse, &ret);
	if (!st)
		return ret;
	st->fd = -1;
	if (st->cfg.output) {
		/* one job file per connection, as the host sends it */
		st->fd = open(st->cfg.output,
			      O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
			      0644);
		if (st->fd < 0) {
			ret = -errno;
			log_err("output %s: %s", st->cfg.output, strerror(-ret));
			free(st);
			return ret;
		}
	}
	gdev_urbq_init(&st->in);
	log_info("interface %u: printer, %s, output %s", st->cfg.intf,
		 st->cfg.ep_in ? "bidirectional" : "unidirectional",
		 st->cfg.output ? st->cfg.output : "(counted only)");
	dev->function_state = st;
	return 0;
}

static void printer_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct printer_state *st = dev->function_state;

	if (!st)
		return;
	gdev_urbq_free(&st->in, free_urb);
	if (st->fd >= 0)
		close(st->fd);
	log_info("interface %u: %llu bytes received, %u soft resets",
		 st->cfg.intf, (unsigned long long)st->received,
		 st->soft_resets);
	free(st);
	dev->function_state = NULL;
}

static void printer_reset(struct gdev *dev)
{
	struct printer_state *st = dev->function_state;

	if (st)
		gdev_urbq_flush(dev, &st->in, -ESHUTDOWN);
}

static struct urb *printer_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct printer_state *st = dev->function_state;

	return st ? gdev_urbq_remove(&st->in, seqnum) : NULL;
}

/* ---- bulk ---- */

static void job_write(struct printer_state *st, const uint8_t *p, size_t n)
{
	ssize_t w;

	st->received += n;
	while (st->fd >= 0 && !st->write_failed && n) {
		w = write(st->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			log_err("output %s: %s: the rest of the job is dropped",
				st->cfg.output, w < 0 ? strerror(errno) : "short write");
			st->write_failed = true;
			break;
		}
		p += w;
		n -= w;
	}
}

static int printer_submit(struct gdev *dev, struct urb *urb)
{
	struct printer_state *st = dev->function_state;
	uint8_t addr = urb->ep | (urb->dir_in ? USB_DIR_IN : 0);

	if (!st)
		return -ENOENT;
	if (!urb->dir_in && addr == st->cfg.ep_out) {
		job_write(st, urb->buf, urb->length);
		gdev_complete(dev, urb, 0, urb->length);
		return 0;
	}
	if (urb->dir_in && addr == st->cfg.ep_in) {
		gdev_urbq_push(&st->in, urb);	/* nothing to say: NAK */
		return 0;
	}
	return -ENOENT;
}

/* ---- ep0 ---- */

static void clear_halt(struct gdev *dev, uint8_t addr)
{
	struct gdev_ep *ep = addr ? gdev_ep_by_addr(dev, addr) : NULL;

	if (ep)
		gdev_ep_set_halt(dev, ep, false);
}

static int printer_control(struct gdev *dev, const struct usb_setup *s,
			   uint8_t *data, size_t len)
{
	struct printer_state *st = dev->function_state;
	uint8_t type = s->bmRequestType & (USB_TYPE_MASK | USB_RECIP_MASK);
	const struct printer_cfg *c;
	size_t n, id_len;

	if (!st || (type != (USB_TYPE_CLASS | USB_RECIP_INTERFACE) &&
		    type != (USB_TYPE_CLASS | USB_RECIP_OTHER)))
		return -ENOENT;
	c = &st->cfg;
	switch (s->bRequest) {
	case PRN_REQ_GET_DEVICE_ID:
		if (s->wIndex >> 8 != c->intf && s->wIndex != c->intf)
			return -ENOENT;
		if (!(s->bmRequestType & USB_DIR_IN))
			return -EPIPE;
		id_len = strlen(c->device_id);
		/* the prefix counts itself (4.2.1); len is wLength, cut to
		 * the URB's buffer */
		n = 2 + id_len;
		if (len >= 1)
			data[0] = n >> 8;
		if (len >= 2)
			data[1] = n & 0xff;
		if (len > 2)
			memcpy(data + 2, c->device_id,
			       len - 2 < id_len ? len - 2 : id_len);
		return n < len ? n : len;
	case PRN_REQ_GET_PORT_STATUS:
		if (s->wIndex != c->intf)
			return -ENOENT;
		if (!(s->bmRequestType & USB_DIR_IN) || s->wValue)
			return -EPIPE;
		if (len)
			data[0] = c->port_status;
		return len ? 1 : 0;
	case PRN_REQ_SOFT_RESET:
		if (s->wIndex != c->intf)
			return -ENOENT;
		if ((s->bmRequestType & USB_DIR_IN) || s->wLength)
			return -EPIPE;
		st->soft_resets++;
		log_info("interface %u: soft reset", c->intf);
		clear_halt(dev, c->ep_out);
		clear_halt(dev, c->ep_in);
		return 0;
	default:
		return s->wIndex == c->intf ? -EPIPE : -ENOENT;
	}
}

const struct fn_ops fn_printer_ops = {
	.name = "printer",
	.validate = printer_validate,
	.attach = printer_attach,
	.detach = printer_detach,
	.control = printer_control,
	.submit = printer_submit,
	.unlink = printer_unlink,
	.reset = printer_reset,
};
