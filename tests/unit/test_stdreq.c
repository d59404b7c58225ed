// SPDX-License-Identifier: GPL-2.0
/*
 * test_stdreq.c - the standard requests (gadgets/stdreq.c), sent as ep0
 * URBs through gdev_submit() like the server does, against a hand-built
 * model.  Descriptor replies are compared with desc.c's output for the
 * same model plus the fixed fields of USB 2.0 9.6.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>
#include <linux/usb/ch9.h>

#include "desc.h"
#include "device.h"
#include "fixture.h"
#include "log.h"
#include "model.h"
#include "stdreq.h"

/* ---- the model, built by hand ---- */

struct stdreq_model {
	struct gd_device m;
	struct gd_config cfg;
	struct gd_alt alt[3];
	struct gd_endpoint eps[4];
};

static struct stdreq_model *model_of(struct fx *fx)
{
	return fx->priv;
}

static void alt_init(struct gd_alt *a, uint8_t intf, uint8_t alt,
		     struct gd_endpoint *eps, size_t n)
{
	memset(a, 0, sizeof(*a));
	a->bInterfaceNumber = intf;
	a->bAlternateSetting = alt;
	a->bInterfaceClass = 0xff;
	a->bNumEndpoints_override = -1;
	a->bLength_override = -1;
	a->eps = eps;
	a->n_eps = n;
}

/*
 * A high-speed vendor device 1209:0001, bcdUSB 2.01 (BOS), self powered:
 * interface 0 alt 0 = bulk 0x81 (loopback IN) + 0x01 (sink),
 * interface 0 alt 1 = bulk 0x82 (source), interface 1 = interrupt 0x83.
 */
static void model_init(struct stdreq_model *sm)
{
	struct gd_device *m = &sm->m;

	fx_model_init(m, "stdreq");
	m->bcdUSB = 0x0201;
	m->bcdDevice = 0x0100;
	m->iManufacturer = 1;
	m->iProduct = 2;
	m->langids[0] = 0x0409;
	m->n_langids = 1;
	m->strings[1] = "usbrig";
	m->strings[2] = "Test";
	m->qualifier = true;
	m->bos.present = true;
	m->bos.generated_caps = true;

	fx_ep_init(&sm->eps[0], 0x81, USB_ENDPOINT_XFER_BULK, 512,
		   GD_EP_DEFAULT);
	fx_ep_init(&sm->eps[1], 0x01, USB_ENDPOINT_XFER_BULK, 512,
		   GD_EP_SINK);
	fx_ep_init(&sm->eps[2], 0x82, USB_ENDPOINT_XFER_BULK, 512,
		   GD_EP_SOURCE);
	fx_ep_init(&sm->eps[3], 0x83, USB_ENDPOINT_XFER_INT, 8, GD_EP_NAK);
	sm->eps[3].bInterval = 4;
	alt_init(&sm->alt[0], 0, 0, &sm->eps[0], 2);
	alt_init(&sm->alt[1], 0, 1, &sm->eps[2], 1);
	alt_init(&sm->alt[2], 1, 0, &sm->eps[3], 1);

	fx_config_init(&sm->cfg, sm->alt, 3);
	sm->cfg.bmAttributes = 0xc0;	/* self powered */
	m->configs = &sm->cfg;
	m->n_configs = 1;
}

static int setup(void **state)
{
	struct fx *fx = fx_create(FX_DISCONNECT_FAILS);
	struct stdreq_model *sm = calloc(1, sizeof(*sm));

	if (!sm)
		return -1;
	model_init(sm);
	fx->priv = sm;
	fx->m = &sm->m;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	struct stdreq_model *sm = fx->priv;

	fx_destroy(fx);
	free(sm);
	return 0;
}

static void start(struct fx *fx)
{
	fx_attach(fx);
}

/* One control transfer; the URB's buffer is wLength bytes. */
static struct urb *ctrl(struct fx *fx, uint8_t type, uint8_t req,
			uint16_t value, uint16_t index, uint16_t wlength)
{
	struct urb *urb = fx_ctrl_new(type, req, value, index, wlength,
				      wlength);

	gdev_submit(fx->dev, urb);
	assert_ptr_equal(fx->done[fx->n_done - 1], urb);
	return urb;
}

static struct urb *get_desc(struct fx *fx, uint8_t type, uint8_t index,
			    uint16_t wlength)
{
	return ctrl(fx, USB_DIR_IN, USB_REQ_GET_DESCRIPTOR,
		    type << 8 | index, type == USB_DT_STRING ? 0x0409 : 0,
		    wlength);
}

static struct urb *bulk(struct fx *fx, uint8_t ep, uint32_t len)
{
	struct urb *urb = fx_urb_new(ep, len);

	gdev_submit(fx->dev, urb);
	return urb;
}

static uint16_t status_of(struct fx *fx, uint8_t recip, uint16_t index)
{
	struct urb *u = ctrl(fx, USB_DIR_IN | recip, USB_REQ_GET_STATUS, 0,
			     index, 2);

	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 2);
	return get_le16(u->buf);
}

#define assert_stall(u) do {						\
	assert_int_equal((u)->status, -EPIPE);				\
	assert_int_equal((u)->actual_length, 0);			\
} while (0)

/* ---- GET_DESCRIPTOR ---- */

static void test_get_device_descriptor(void **state)
{
	struct fx *fx = *state;
	uint8_t want[GD_DESC_MAX];
	struct urb *u;
	int n;

	start(fx);
	n = desc_device(fx->m, want, sizeof(want));
	assert_int_equal(n, USB_DT_DEVICE_SIZE);

	u = get_desc(fx, USB_DT_DEVICE, 0, 8);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 8);
	assert_memory_equal(u->buf, want, 8);
	assert_int_equal(u->buf[0], 18);		/* bLength */
	assert_int_equal(u->buf[1], USB_DT_DEVICE);	/* bDescriptorType */
	assert_int_equal(get_le16(u->buf + 2), 0x0201);	/* bcdUSB */
	assert_int_equal(u->buf[7], 64);		/* bMaxPacketSize0 */

	u = get_desc(fx, USB_DT_DEVICE, 0, 18);
	assert_int_equal(u->actual_length, 18);
	assert_memory_equal(u->buf, want, 18);
	assert_int_equal(get_le16(u->buf + 8), 0x1209);	/* idVendor */
	assert_int_equal(get_le16(u->buf + 10), 0x0001);	/* idProduct */
	assert_int_equal(get_le16(u->buf + 12), 0x0100);	/* bcdDevice */
	assert_int_equal(u->buf[14], 1);		/* iManufacturer */
	assert_int_equal(u->buf[15], 2);		/* iProduct */
	assert_int_equal(u->buf[16], 0);		/* iSerialNumber */
	assert_int_equal(u->buf[17], 1);		/* bNumConfigurations */

	/* the first request of every enumeration: wLength 64 */
	u = get_desc(fx, USB_DT_DEVICE, 0, 64);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 18);
	assert_memory_equal(u->buf, want, 18);
}

static void test_get_config_descriptor(void **state)
{
	struct fx *fx = *state;
	uint8_t want[GD_DESC_MAX];
	uint16_t total;
	struct urb *u;
	int n;

	start(fx);
	n = desc_config(fx->m, 0, USB_DT_CONFIG, want, sizeof(want));
	/* config + 3 interfaces + 4 endpoints */
	assert_int_equal(n, 9 + 3 * 9 + 4 * 7);

	u = get_desc(fx, USB_DT_CONFIG, 0, 9);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 9);
	assert_memory_equal(u->buf, want, 9);
	assert_int_equal(u->buf[0], 9);
	assert_int_equal(u->buf[1], USB_DT_CONFIG);
	total = get_le16(u->buf + 2);			/* wTotalLength */
	assert_int_equal(total, n);
	assert_int_equal(u->buf[4], 2);			/* bNumInterfaces */
	assert_int_equal(u->buf[5], 1);			/* bConfigurationValue */
	assert_int_equal(u->buf[7], 0xc0);		/* bmAttributes */

	u = get_desc(fx, USB_DT_CONFIG, 0, total);
	assert_int_equal(u->actual_length, total);
	assert_memory_equal(u->buf, want, total);
	assert_int_equal(desc_check_chain(u->buf, total), 0);

	/* index 1: no such configuration */
	assert_stall(get_desc(fx, USB_DT_CONFIG, 1, 9));
}

static void test_get_string_descriptor(void **state)
{
	struct fx *fx = *state;
	static const uint8_t langids[] = { 4, USB_DT_STRING, 0x09, 0x04 };
	static const uint8_t usbrig[] = {
		14, USB_DT_STRING, 'u', 0, 's', 0, 'b', 0, 'r', 0, 'i', 0,
		'g', 0,
	};
	uint8_t want[GD_DESC_MAX];
	struct urb *u;

	start(fx);
	u = get_desc(fx, USB_DT_STRING, 0, 255);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 4);
	assert_memory_equal(u->buf, langids, 4);

	u = get_desc(fx, USB_DT_STRING, 1, 255);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, sizeof(usbrig));
	assert_memory_equal(u->buf, usbrig, sizeof(usbrig));
	assert_int_equal(desc_string(fx->m, 1, want, sizeof(want)),
			 sizeof(usbrig));
	assert_memory_equal(u->buf, want, sizeof(usbrig));

	/* the header first, as Linux asks: cut to 2 */
	u = get_desc(fx, USB_DT_STRING, 2, 2);
	assert_int_equal(u->actual_length, 2);
	assert_int_equal(u->buf[0], 2 + 2 * 4);

	assert_stall(get_desc(fx, USB_DT_STRING, 3, 255));
}

static void test_qualifier_other_speed(void **state)
{
	struct fx *fx = *state;
	uint8_t want[GD_DESC_MAX];
	struct urb *u;
	int n;

	start(fx);
	u = get_desc(fx, USB_DT_DEVICE_QUALIFIER, 0, 10);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 10);
	assert_int_equal(u->buf[0], 10);
	assert_int_equal(u->buf[1], USB_DT_DEVICE_QUALIFIER);
	assert_int_equal(get_le16(u->buf + 2), 0x0201);
	assert_int_equal(desc_qualifier(fx->m, want, sizeof(want)), 10);
	assert_memory_equal(u->buf, want, 10);

	n = desc_config(fx->m, 0, USB_DT_OTHER_SPEED_CONFIG, want,
			sizeof(want));
	assert_true(n > 9);
	u = get_desc(fx, USB_DT_OTHER_SPEED_CONFIG, 0, 4096);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, n);
	assert_int_equal(u->buf[1], USB_DT_OTHER_SPEED_CONFIG);
	assert_memory_equal(u->buf, want, n);
}

static void test_qualifier_full_speed_stalls(void **state)
{
	struct fx *fx = *state;

	fx->m->speed = USBIP_SPEED_FULL;
	fx->m->bcdUSB = 0x0200;
	fx->m->qualifier = false;
	fx->m->bos.present = false;
	model_of(fx)->eps[0].wMaxPacketSize = 64;
	model_of(fx)->eps[1].wMaxPacketSize = 64;
	model_of(fx)->eps[2].wMaxPacketSize = 64;
	start(fx);
	assert_stall(get_desc(fx, USB_DT_DEVICE_QUALIFIER, 0, 10));
	assert_stall(get_desc(fx, USB_DT_OTHER_SPEED_CONFIG, 0, 255));
	assert_stall(get_desc(fx, USB_DT_BOS, 0, 5));
	/* the device descriptor still answers */
	assert_int_equal(get_desc(fx, USB_DT_DEVICE, 0, 18)->actual_length,
			 18);
}

static void test_bos(void **state)
{
	struct fx *fx = *state;
	uint8_t want[GD_DESC_MAX];
	struct urb *u;
	int n;

	start(fx);
	n = desc_bos(fx->m, want, sizeof(want));
	assert_true(n >= USB_DT_BOS_SIZE);
	u = get_desc(fx, USB_DT_BOS, 0, USB_DT_BOS_SIZE);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, USB_DT_BOS_SIZE);
	assert_int_equal(u->buf[0], USB_DT_BOS_SIZE);
	assert_int_equal(u->buf[1], USB_DT_BOS);
	assert_int_equal(get_le16(u->buf + 2), n);	/* wTotalLength */
	u = get_desc(fx, USB_DT_BOS, 0, n);
	assert_int_equal(u->actual_length, n);
	assert_memory_equal(u->buf, want, n);
}

static void test_get_descriptor_unknown(void **state)
{
	struct fx *fx = *state;
	struct usb_setup s = {
		USB_DIR_IN | USB_RECIP_INTERFACE, USB_REQ_GET_DESCRIPTOR,
		0x22 << 8, 0, 64,
	};
	uint8_t buf[64];

	start(fx);
	assert_stall(get_desc(fx, 0x42, 0, 64));
	assert_stall(get_desc(fx, USB_DT_INTERFACE, 0, 64));
	/* interface recipient (a HID report descriptor): not standard's */
	assert_int_equal(stdreq_handle(fx->dev, &s, buf, sizeof(buf)),
			 -ENOENT);
	assert_stall(ctrl(fx, s.bmRequestType, s.bRequest, s.wValue, 0, 64));
	/* not type standard at all */
	s.bmRequestType = USB_DIR_IN | USB_TYPE_VENDOR;
	assert_int_equal(stdreq_handle(fx->dev, &s, buf, sizeof(buf)),
			 -ENOENT);
	/* SYNCH_FRAME is left to the device function */
	s.bmRequestType = USB_DIR_IN | USB_RECIP_ENDPOINT;
	s.bRequest = USB_REQ_SYNCH_FRAME;
	assert_int_equal(stdreq_handle(fx->dev, &s, buf, 2), -ENOENT);
}

/* ---- configuration and interfaces ---- */

static void test_set_get_configuration(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx);
	u = ctrl(fx, USB_DIR_IN, USB_REQ_GET_CONFIGURATION, 0, 0, 1);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 1);
	assert_int_equal(u->buf[0], 0);

	/* address state: no bulk endpoint yet */
	assert_stall(bulk(fx, 0x01, 8));

	u = ctrl(fx, 0, USB_REQ_SET_CONFIGURATION, 1, 0, 0);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 0);
	u = ctrl(fx, USB_DIR_IN, USB_REQ_GET_CONFIGURATION, 0, 0, 1);
	assert_int_equal(u->buf[0], 1);
	u = bulk(fx, 0x01, 8);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 8);

	assert_stall(ctrl(fx, 0, USB_REQ_SET_CONFIGURATION, 7, 0, 0));
	u = ctrl(fx, USB_DIR_IN, USB_REQ_GET_CONFIGURATION, 0, 0, 1);
	assert_int_equal(u->buf[0], 1);

	u = ctrl(fx, 0, USB_REQ_SET_CONFIGURATION, 0, 0, 0);
	assert_int_equal(u->status, 0);
	u = ctrl(fx, USB_DIR_IN, USB_REQ_GET_CONFIGURATION, 0, 0, 1);
	assert_int_equal(u->buf[0], 0);
	assert_stall(bulk(fx, 0x01, 8));

	/* SET_ADDRESS never comes through vhci, but is harmless */
	u = ctrl(fx, 0, USB_REQ_SET_ADDRESS, 5, 0, 0);
	assert_int_equal(u->status, 0);
}

static void test_set_get_interface(void **state)
{
	struct fx *fx = *state;
	struct urb *u, *pending;

	start(fx);
	/* address state */
	assert_stall(ctrl(fx, USB_DIR_IN | USB_RECIP_INTERFACE,
			  USB_REQ_GET_INTERFACE, 0, 0, 1));
	assert_stall(ctrl(fx, USB_RECIP_INTERFACE, USB_REQ_SET_INTERFACE,
			  1, 0, 0));

	ctrl(fx, 0, USB_REQ_SET_CONFIGURATION, 1, 0, 0);
	u = ctrl(fx, USB_DIR_IN | USB_RECIP_INTERFACE, USB_REQ_GET_INTERFACE,
		 0, 0, 1);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 1);
	assert_int_equal(u->buf[0], 0);
	assert_stall(bulk(fx, 0x82, 8));
	pending = bulk(fx, 0x81, 8);		/* NAK */
	assert_false(fx_is_done(fx, pending));

	u = ctrl(fx, USB_RECIP_INTERFACE, USB_REQ_SET_INTERFACE, 1, 0, 0);
	assert_int_equal(u->status, 0);
	/* the old alternate setting's endpoints are gone */
	assert_true(fx_is_done(fx, pending));
	assert_int_equal(pending->status, -ESHUTDOWN);
	u = ctrl(fx, USB_DIR_IN | USB_RECIP_INTERFACE, USB_REQ_GET_INTERFACE,
		 0, 0, 1);
	assert_int_equal(u->buf[0], 1);
	u = bulk(fx, 0x82, 8);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 8);
	assert_stall(bulk(fx, 0x81, 8));
	assert_stall(bulk(fx, 0x01, 8));

	/* unknown alternate setting or interface */
	assert_stall(ctrl(fx, USB_RECIP_INTERFACE, USB_REQ_SET_INTERFACE,
			  5, 0, 0));
	assert_stall(ctrl(fx, USB_RECIP_INTERFACE, USB_REQ_SET_INTERFACE,
			  0, 7, 0));
	assert_stall(ctrl(fx, USB_DIR_IN | USB_RECIP_INTERFACE,
			  USB_REQ_GET_INTERFACE, 0, 7, 1));
	u = ctrl(fx, USB_DIR_IN | USB_RECIP_INTERFACE, USB_REQ_GET_INTERFACE,
		 0, 0, 1);
	assert_int_equal(u->buf[0], 1);

	/* interface 1 is unaffected, and back to alt 0 works */
	assert_false(fx_is_done(fx, bulk(fx, 0x83, 8)));
	u = ctrl(fx, USB_RECIP_INTERFACE, USB_REQ_SET_INTERFACE, 0, 0, 0);
	assert_int_equal(u->status, 0);
	assert_stall(bulk(fx, 0x82, 8));
	assert_int_equal(bulk(fx, 0x01, 8)->status, 0);
}

/* ---- GET_STATUS, SET/CLEAR_FEATURE ---- */

static void test_get_status(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx);
	/* self powered from the configuration's bmAttributes */
	assert_int_equal(status_of(fx, USB_RECIP_DEVICE, 0), 0x0001);
	u = ctrl(fx, USB_RECIP_DEVICE, USB_REQ_SET_FEATURE,
		 USB_DEVICE_REMOTE_WAKEUP, 0, 0);
	assert_int_equal(u->status, 0);
	assert_int_equal(status_of(fx, USB_RECIP_DEVICE, 0), 0x0003);
	ctrl(fx, USB_RECIP_DEVICE, USB_REQ_CLEAR_FEATURE,
	     USB_DEVICE_REMOTE_WAKEUP, 0, 0);
	assert_int_equal(status_of(fx, USB_RECIP_DEVICE, 0), 0x0001);

	/* interface and endpoint: only in the configured state */
	assert_stall(ctrl(fx, USB_DIR_IN | USB_RECIP_INTERFACE,
			  USB_REQ_GET_STATUS, 0, 0, 2));
	assert_stall(ctrl(fx, USB_DIR_IN | USB_RECIP_ENDPOINT,
			  USB_REQ_GET_STATUS, 0, 0x81, 2));
	ctrl(fx, 0, USB_REQ_SET_CONFIGURATION, 1, 0, 0);
	assert_int_equal(status_of(fx, USB_RECIP_INTERFACE, 0), 0);
	assert_int_equal(status_of(fx, USB_RECIP_INTERFACE, 1), 0);
	assert_stall(ctrl(fx, USB_DIR_IN | USB_RECIP_INTERFACE,
			  USB_REQ_GET_STATUS, 0, 9, 2));
	assert_int_equal(status_of(fx, USB_RECIP_ENDPOINT, 0x81), 0);
	assert_int_equal(status_of(fx, USB_RECIP_ENDPOINT, 0x00), 0);
	assert_int_equal(status_of(fx, USB_RECIP_ENDPOINT, 0x80), 0);
	assert_stall(ctrl(fx, USB_DIR_IN | USB_RECIP_ENDPOINT,
			  USB_REQ_GET_STATUS, 0, 0x8f, 2));
	assert_stall(ctrl(fx, USB_DIR_IN | USB_RECIP_ENDPOINT,
			  USB_REQ_GET_STATUS, 0, 0x82, 2));	/* alt 1 */

	/* cut to wLength */
	u = ctrl(fx, USB_DIR_IN, USB_REQ_GET_STATUS, 0, 0, 1);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 1);
	assert_int_equal(u->buf[0], 0x01);

	/* TEST_MODE is acknowledged (and cannot be cleared) */
	u = ctrl(fx, USB_RECIP_DEVICE, USB_REQ_SET_FEATURE,
		 USB_DEVICE_TEST_MODE, 4 << 8, 0);
	assert_int_equal(u->status, 0);
	assert_stall(ctrl(fx, USB_RECIP_DEVICE, USB_REQ_CLEAR_FEATURE,
			  USB_DEVICE_TEST_MODE, 0, 0));
}

static void test_endpoint_halt(void **state)
{
	struct fx *fx = *state;
	struct urb *u, *nak;

	start(fx);
	/* address state: no such endpoint */
	assert_stall(ctrl(fx, USB_RECIP_ENDPOINT, USB_REQ_SET_FEATURE,
			  USB_ENDPOINT_HALT, 0x01, 0));
	ctrl(fx, 0, USB_REQ_SET_CONFIGURATION, 1, 0, 0);

	u = bulk(fx, 0x01, 8);
	assert_int_equal(u->status, 0);
	u = ctrl(fx, USB_RECIP_ENDPOINT, USB_REQ_SET_FEATURE,
		 USB_ENDPOINT_HALT, 0x01, 0);
	assert_int_equal(u->status, 0);
	assert_int_equal(status_of(fx, USB_RECIP_ENDPOINT, 0x01), 1);
	assert_stall(bulk(fx, 0x01, 8));
	assert_stall(bulk(fx, 0x01, 8));
	/* other endpoints carry on */
	assert_int_equal(status_of(fx, USB_RECIP_ENDPOINT, 0x81), 0);

	u = ctrl(fx, USB_RECIP_ENDPOINT, USB_REQ_CLEAR_FEATURE,
		 USB_ENDPOINT_HALT, 0x01, 0);
	assert_int_equal(u->status, 0);
	assert_int_equal(status_of(fx, USB_RECIP_ENDPOINT, 0x01), 0);
	u = bulk(fx, 0x01, 8);
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 8);

	/* a NAKed URB stays pending across halt and clear */
	nak = bulk(fx, 0x83, 8);
	ctrl(fx, USB_RECIP_ENDPOINT, USB_REQ_SET_FEATURE, USB_ENDPOINT_HALT,
	     0x83, 0);
	assert_stall(bulk(fx, 0x83, 8));
	ctrl(fx, USB_RECIP_ENDPOINT, USB_REQ_CLEAR_FEATURE, USB_ENDPOINT_HALT,
	     0x83, 0);
	assert_false(fx_is_done(fx, nak));
	assert_ptr_equal(gdev_unlink(fx->dev, nak->seqnum), nak);
	fx_urb_free(nak);

	/* ep0 accepts it and never halts; unknown endpoints STALL */
	u = ctrl(fx, USB_RECIP_ENDPOINT, USB_REQ_SET_FEATURE,
		 USB_ENDPOINT_HALT, 0x80, 0);
	assert_int_equal(u->status, 0);
	assert_int_equal(status_of(fx, USB_RECIP_ENDPOINT, 0x80), 0);
	assert_stall(ctrl(fx, USB_RECIP_ENDPOINT, USB_REQ_CLEAR_FEATURE,
			  USB_ENDPOINT_HALT, 0x8e, 0));

	/* SET_CONFIGURATION clears a halt */
	ctrl(fx, USB_RECIP_ENDPOINT, USB_REQ_SET_FEATURE, USB_ENDPOINT_HALT,
	     0x01, 0);
	ctrl(fx, 0, USB_REQ_SET_CONFIGURATION, 1, 0, 0);
	assert_int_equal(status_of(fx, USB_RECIP_ENDPOINT, 0x01), 0);
	assert_int_equal(bulk(fx, 0x01, 8)->status, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_get_device_descriptor),
		T(test_get_config_descriptor),
		T(test_get_string_descriptor),
		T(test_qualifier_other_speed),
		T(test_qualifier_full_speed_stalls),
		T(test_bos),
		T(test_get_descriptor_unknown),
		T(test_set_get_configuration),
		T(test_set_get_interface),
		T(test_get_status),
		T(test_endpoint_halt),
#undef T
	};

	log_init_from_env();	/* USBRIG_LOG=debug shows every URB */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
