/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stdreq.h - the USB standard requests on ep0 (USB 2.0 9.4), answered once,
 * for every gadget.
 */
#ifndef USBRIG_STDREQ_H
#define USBRIG_STDREQ_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "usbip_wire.h"

/*
 * Handle a standard request.  For IN requests data has room for len bytes
 * (len == wLength, already capped by the URB) and the reply is cut to it.
 * Returns the reply length (0 for a no-data request), -EPIPE to STALL, or
 * -ENOENT when the request is not a standard one this handler knows (the
 * caller then tries the device function, else STALLs).
 */
int stdreq_handle(struct gdev *dev, const struct usb_setup *s, uint8_t *data,
		  size_t len);

#endif /* USBRIG_STDREQ_H */
