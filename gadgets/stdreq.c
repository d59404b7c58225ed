// SPDX-License-Identifier: GPL-2.0
/*
 * stdreq.c - the USB standard requests (USB 2.0 9.4), answered once for
 * every gadget from the model (descriptors via desc.c) and the run-time
 * state (device.c).
 *
 * -EPIPE means "Request Error" (9.4: the device STALLs); -ENOENT means the
 * request is not one of ours (not type standard, an unknown bRequest, a
 * recipient or feature selector we do not implement, GET_DESCRIPTOR to an
 * interface such as a HID report descriptor): script rules already had
 * their turn, the device function gets the next.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/usb/ch9.h>

#include "stdreq.h"
#include "desc.h"
#include "log.h"

static int reply(uint8_t *data, size_t len, const uint8_t *src, size_t n)
{
	if (n > len)
		n = len;
	if (n)
		memcpy(data, src, n);
	return n;
}

/* The whole descriptor (or set) into buf[0..size): its length or -errno. */
static int gen_descriptor(const struct gd_device *m, uint8_t type,
			  uint8_t index, uint8_t *buf, size_t size)
{
	switch (type) {
	case USB_DT_DEVICE:
		return desc_device(m, buf, size);
	case USB_DT_CONFIG:
	case USB_DT_OTHER_SPEED_CONFIG:
		return desc_config(m, index, type, buf, size);
	case USB_DT_STRING:
		/* the LANGID in wIndex is ignored: one set of strings */
		return desc_string(m, index, buf, size);
	case USB_DT_DEVICE_QUALIFIER:
		return desc_qualifier(m, buf, size);
	case USB_DT_BOS:
		return desc_bos(m, buf, size);
	default:
		return -ENOENT;
	}
}

/*
 * 9.4.3: device recipient only; the descriptor is cut to wLength.  It is
 * generated whole (a generator needs room for all of it) into a buffer on
 * the stack, which holds any device, string, qualifier or usual
 * configuration descriptor; only a bigger set costs a GD_DESC_MAX
 * allocation.  This runs for every GET_DESCRIPTOR of enumeration.
 */
static int get_descriptor(struct gdev *dev, const struct usb_setup *s,
			  uint8_t *data, size_t len)
{
	uint8_t type = s->wValue >> 8, index = s->wValue & 0xff;
	uint8_t small[512], *buf = small;
	int ret;

	ret = gen_descriptor(dev->model, type, index, small, sizeof(small));
	if (ret == -ENOSPC) {
		buf = malloc(GD_DESC_MAX);
		if (!buf)
			return -ENOMEM;
		ret = gen_descriptor(dev->model, type, index, buf, GD_DESC_MAX);
	}
	if (ret >= 0)
		ret = reply(data, len, buf, ret);
	else if (ret != -ENOENT)
		log_warn("descriptor %02x index %u: error %d", type, index, ret);
	if (buf != small)
		free(buf);
	/* no such descriptor (or a generator error): STALL */
	return ret < 0 ? -EPIPE : ret;
}

static bool intf_exists(const struct gdev *dev, uint16_t intf)
{
	const struct gd_config *cfg = dev->config;
	size_t i;

	if (!cfg || intf > 0xff)
		return false;
	for (i = 0; i < cfg->n_alts; i++)
		if (cfg->alts[i].bInterfaceNumber == intf)
			return true;
	return false;
}

static int get_status(struct gdev *dev, const struct usb_setup *s,
		      uint8_t *data, size_t len)
{
	const struct gd_config *cfg = dev->config;
	struct gdev_ep *ep;
	uint16_t status = 0;
	uint8_t raw[2];

	switch (s->bmRequestType & USB_RECIP_MASK) {
	case USB_RECIP_DEVICE:
		/* 9.4.5: self powered as the (current, else first)
		 * configuration says */
		if (!cfg && dev->model->n_configs)
			cfg = &dev->model->configs[0];
		if (cfg && (cfg->bmAttributes & USB_CONFIG_ATT_SELFPOWER))
			status |= 1 << USB_DEVICE_SELF_POWERED;
		if (dev->remote_wakeup)
			status |= 1 << USB_DEVICE_REMOTE_WAKEUP;
		break;
	case USB_RECIP_INTERFACE:
		if (!intf_exists(dev, s->wIndex))
			return -EPIPE;
		break;
	case USB_RECIP_ENDPOINT:
		if ((s->wIndex & USB_ENDPOINT_NUMBER_MASK) == 0 &&
		    !(s->wIndex & ~USB_DIR_IN))
			break;		/* ep0 never halts */
		ep = s->wIndex > 0xff ? NULL : gdev_ep_by_addr(dev, s->wIndex);
		if (!ep)
			return -EPIPE;
		if (ep->halted)
			status |= 1 << USB_ENDPOINT_HALT;
		break;
	default:
		return -ENOENT;
	}
	put_le16(raw, status);
	return reply(data, len, raw, sizeof(raw));
}

static int set_clear_feature(struct gdev *dev, const struct usb_setup *s,
			     bool set)
{
	struct gdev_ep *ep;

	switch (s->bmRequestType & USB_RECIP_MASK) {
	case USB_RECIP_DEVICE:
		if (s->wValue == USB_DEVICE_REMOTE_WAKEUP) {
			dev->remote_wakeup = set;
			return 0;
		}
		if (s->wValue == USB_DEVICE_TEST_MODE)
			return set ? 0 : -EPIPE;	/* 9.4.1: not clearable */
		return -ENOENT;
	case USB_RECIP_ENDPOINT:
		if (s->wValue != USB_ENDPOINT_HALT)
			return -ENOENT;
		if ((s->wIndex & ~USB_DIR_IN) == 0)
			return 0;	/* ep0: 9.4.5, halt not implemented */
		ep = s->wIndex > 0xff ? NULL : gdev_ep_by_addr(dev, s->wIndex);
		if (!ep)
			return -EPIPE;
		gdev_ep_set_halt(dev, ep, set);
		return 0;
	default:
		return -ENOENT;
	}
}

int stdreq_handle(struct gdev *dev, const struct usb_setup *s, uint8_t *data,
		  size_t len)
{
	uint8_t recip = s->bmRequestType & USB_RECIP_MASK;
	bool in = s->bmRequestType & USB_DIR_IN;
	uint8_t b;

	if ((s->bmRequestType & USB_TYPE_MASK) != USB_TYPE_STANDARD)
		return -ENOENT;

	switch (s->bRequest) {
	case USB_REQ_GET_DESCRIPTOR:
		if (!in || recip != USB_RECIP_DEVICE)
			return -ENOENT;
		return get_descriptor(dev, s, data, len);

	case USB_REQ_SET_ADDRESS:
		/* vhci-hcd answers it itself; harmless if it comes */
		return in ? -ENOENT : 0;

	case USB_REQ_SET_CONFIGURATION:
		if (in || recip != USB_RECIP_DEVICE)
			return -ENOENT;
		if (s->wValue > 0xff)
			return -EPIPE;
		return gdev_set_config(dev, s->wValue) ? -EPIPE : 0;

	case USB_REQ_GET_CONFIGURATION:
		if (!in || recip != USB_RECIP_DEVICE)
			return -ENOENT;
		b = dev->config ? dev->config->bConfigurationValue : 0;
		return reply(data, len, &b, 1);

	case USB_REQ_SET_INTERFACE:
		if (in || recip != USB_RECIP_INTERFACE)
			return -ENOENT;
		/* 9.4.10: Request Error in the Address state */
		if (!dev->config || s->wIndex > 0xff || s->wValue > 0xff)
			return -EPIPE;
		return gdev_set_interface(dev, s->wIndex, s->wValue) ? -EPIPE : 0;

	case USB_REQ_GET_INTERFACE:
		if (!in || recip != USB_RECIP_INTERFACE)
			return -ENOENT;
		if (!intf_exists(dev, s->wIndex))
			return -EPIPE;
		b = dev->alt[s->wIndex];
		return reply(data, len, &b, 1);

	case USB_REQ_GET_STATUS:
		if (!in)
			return -ENOENT;
		return get_status(dev, s, data, len);

	case USB_REQ_SET_FEATURE:
	case USB_REQ_CLEAR_FEATURE:
		if (in)
			return -ENOENT;
		return set_clear_feature(dev, s,
					 s->bRequest == USB_REQ_SET_FEATURE);

	default:
		/* SET_DESCRIPTOR, SYNCH_FRAME, USB 3 SET_SEL, ... */
		return -ENOENT;
	}
}
