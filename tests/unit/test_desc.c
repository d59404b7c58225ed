// SPDX-License-Identifier: GPL-2.0
/*
 * test_desc.c - descriptor generator (gadgets/desc.c) against golden bytes.
 *
 * The models are built by hand here, not by the script parser, so a parser
 * bug cannot hide a generator bug.  Every golden vector is commented field
 * by field.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <linux/usb/ch9.h>

#include "desc.h"

#define BUF_SIZE	GD_DESC_MAX
#define BLOB(arr)	((struct gd_blob){ (uint8_t *)(arr), sizeof(arr) })

/* ---- model builders: calloc'ed arrays, every override off (-1) ---- */

static void cfg_init(struct gd_config *c, uint8_t value)
{
	c->bConfigurationValue = value;
	c->bmAttributes = 0x80;		/* bus powered */
	c->bMaxPower = 50;		/* 100 mA */
	c->wTotalLength_override = -1;
	c->bNumInterfaces_override = -1;
	c->bLength_override = -1;
}

static struct gd_device *dev_new(enum usbip_speed speed, uint16_t bcdUSB,
				 uint8_t mps0, size_t n_configs)
{
	struct gd_device *d = calloc(1, sizeof(*d));
	size_t i;

	assert_non_null(d);
	d->name = (char *)"test";
	d->speed = speed;
	d->bcdUSB = bcdUSB;
	d->bMaxPacketSize0 = mps0;
	d->idVendor = 0x1209;
	d->idProduct = 0x0001;
	d->bcdDevice = 0x0100;
	d->bNumConfigurations_override = -1;
	d->bLength_override = -1;
	d->bos.wTotalLength_override = -1;
	d->bos.bNumDeviceCaps_override = -1;
	d->bos.bLength_override = -1;
	d->bos.bDescriptorType_override = -1;
	d->configs = calloc(n_configs, sizeof(*d->configs));
	assert_true(d->configs || !n_configs);
	d->n_configs = n_configs;
	for (i = 0; i < n_configs; i++)
		cfg_init(&d->configs[i], i + 1);
	return d;
}

/* The returned pointer is valid until the next cfg_add_alt() on c. */
static struct gd_alt *cfg_add_alt(struct gd_config *c, uint8_t num,
				  uint8_t alt, uint8_t cls, uint8_t sub,
				  uint8_t proto)
{
	struct gd_alt *a;

	c->alts = realloc(c->alts, (c->n_alts + 1) * sizeof(*c->alts));
	assert_non_null(c->alts);
	a = &c->alts[c->n_alts++];
	memset(a, 0, sizeof(*a));
	a->bInterfaceNumber = num;
	a->bAlternateSetting = alt;
	a->bInterfaceClass = cls;
	a->bInterfaceSubClass = sub;
	a->bInterfaceProtocol = proto;
	a->bNumEndpoints_override = -1;
	a->bLength_override = -1;
	return a;
}

static struct gd_endpoint *alt_add_ep(struct gd_alt *a, uint8_t addr,
				      uint8_t attr, uint16_t mps,
				      uint8_t interval)
{
	struct gd_endpoint *e;

	a->eps = realloc(a->eps, (a->n_eps + 1) * sizeof(*a->eps));
	assert_non_null(a->eps);
	e = &a->eps[a->n_eps++];
	memset(e, 0, sizeof(*e));
	e->bEndpointAddress = addr;
	e->bmAttributes = attr;
	e->wMaxPacketSize = mps;
	e->bInterval = interval;
	e->bLength_override = -1;
	e->ss.bLength_override = -1;
	return e;
}

static struct gd_iad *cfg_add_iad(struct gd_config *c, uint8_t first,
				  uint8_t count, uint8_t cls, uint8_t sub,
				  uint8_t proto, uint8_t ifunc)
{
	struct gd_iad *i;

	c->iads = realloc(c->iads, (c->n_iads + 1) * sizeof(*c->iads));
	assert_non_null(c->iads);
	i = &c->iads[c->n_iads++];
	memset(i, 0, sizeof(*i));
	i->bFirstInterface = first;
	i->bInterfaceCount = count;
	i->bFunctionClass = cls;
	i->bFunctionSubClass = sub;
	i->bFunctionProtocol = proto;
	i->iFunction = ifunc;
	i->bLength_override = -1;
	return i;
}

/* Blobs and strings point at static data; only the arrays are freed. */
static void dev_free(struct gd_device *d)
{
	size_t i, j;

	for (i = 0; i < d->n_configs; i++) {
		for (j = 0; j < d->configs[i].n_alts; j++)
			free(d->configs[i].alts[j].eps);
		free(d->configs[i].alts);
		free(d->configs[i].iads);
	}
	free(d->configs);
	free(d);
}

/* ---- the devices under test ---- */

/* full speed, vendor class, one config: one interface, bulk IN/OUT */
static struct gd_device *build_fs_vendor(void)
{
	struct gd_device *d = dev_new(USBIP_SPEED_FULL, 0x0200, 64, 1);
	struct gd_alt *a;

	d->bDeviceClass = 0xff;
	d->iManufacturer = 1;
	d->iProduct = 2;
	d->iSerialNumber = 3;
	a = cfg_add_alt(&d->configs[0], 0, 0, 0xff, 0x00, 0x00);
	alt_add_ep(a, 0x81, USB_ENDPOINT_XFER_BULK, 64, 0);
	alt_add_ep(a, 0x02, USB_ENDPOINT_XFER_BULK, 64, 0);
	return d;
}

static const uint8_t otg_desc[] = { 0x03, 0x09, 0x03 };
static const uint8_t cdc_funcs[] = {
	0x05, 0x24, 0x00, 0x10, 0x01,	/* CDC header, bcdCDC 1.10 */
	0x05, 0x24, 0x06, 0x00, 0x01,	/* CDC union: master 0, slave 1 */
};
static const uint8_t cs_endpoint[] = { 0x04, 0x25, 0x01, 0x00 };

/*
 * CDC ACM function (IAD over interfaces 0-1) + a vendor interface 2 with
 * its own IAD + an IAD naming interface 9, which does not exist; extras at
 * config, interface and endpoint level.
 */
static struct gd_device *build_composite(void)
{
	struct gd_device *d = dev_new(USBIP_SPEED_FULL, 0x0200, 64, 1);
	struct gd_config *c = &d->configs[0];
	struct gd_alt *a;
	struct gd_endpoint *e;

	d->bDeviceClass = 0xef;		/* misc / IAD */
	d->bDeviceSubClass = 0x02;
	d->bDeviceProtocol = 0x01;
	c->extra = BLOB(otg_desc);
	/* the IADs are declared in an order different from the output */
	cfg_add_iad(c, 9, 1, 0xff, 0xff, 0xff, 0);
	cfg_add_iad(c, 2, 1, 0xff, 0x00, 0x00, 0);
	cfg_add_iad(c, 0, 2, 0x02, 0x02, 0x01, 4);
	a = cfg_add_alt(c, 0, 0, 0x02, 0x02, 0x01);
	a->extra = BLOB(cdc_funcs);
	e = alt_add_ep(a, 0x83, USB_ENDPOINT_XFER_INT, 16, 10);
	e->extra = BLOB(cs_endpoint);
	a = cfg_add_alt(c, 1, 0, 0x0a, 0x00, 0x00);
	alt_add_ep(a, 0x81, USB_ENDPOINT_XFER_BULK, 64, 0);
	alt_add_ep(a, 0x02, USB_ENDPOINT_XFER_BULK, 64, 0);
	cfg_add_alt(c, 2, 0, 0xff, 0x00, 0x00);
	return d;
}

/* interface 0 with alternate settings 0 (no endpoints) and 1 (iso pair),
 * interface 1 with an interrupt endpoint; one IAD over both */
static struct gd_device *build_alts(void)
{
	struct gd_device *d = dev_new(USBIP_SPEED_FULL, 0x0200, 64, 1);
	struct gd_config *c = &d->configs[0];
	struct gd_alt *a;

	cfg_add_iad(c, 0, 2, 0xff, 0x00, 0x00, 0);
	cfg_add_alt(c, 0, 0, 0xff, 0x00, 0x00);
	a = cfg_add_alt(c, 0, 1, 0xff, 0x00, 0x00);
	alt_add_ep(a, 0x81, USB_ENDPOINT_XFER_ISOC | USB_ENDPOINT_SYNC_ASYNC,
		   192, 1);
	alt_add_ep(a, 0x02, USB_ENDPOINT_XFER_ISOC | USB_ENDPOINT_SYNC_ASYNC,
		   192, 1);
	a = cfg_add_alt(c, 1, 0, 0xff, 0x00, 0x00);
	alt_add_ep(a, 0x83, USB_ENDPOINT_XFER_INT, 8, 1);
	return d;
}

/* high speed with a qualifier: bulk 512, interrupt and iso to convert */
static struct gd_device *build_hs(void)
{
	struct gd_device *d = dev_new(USBIP_SPEED_HIGH, 0x0200, 64, 1);
	struct gd_alt *a;

	d->qualifier = true;
	a = cfg_add_alt(&d->configs[0], 0, 0, 0xff, 0x00, 0x00);
	alt_add_ep(a, 0x81, USB_ENDPOINT_XFER_BULK, 512, 0);
	alt_add_ep(a, 0x02, USB_ENDPOINT_XFER_BULK, 512, 0);
	alt_add_ep(a, 0x83, USB_ENDPOINT_XFER_INT, 8, 4);
	alt_add_ep(a, 0x84, USB_ENDPOINT_XFER_INT, 0x1400, 8);
	alt_add_ep(a, 0x85, USB_ENDPOINT_XFER_ISOC | USB_ENDPOINT_SYNC_ASYNC,
		   0x1400, 4);
	alt_add_ep(a, 0x87, USB_ENDPOINT_XFER_INT, 64, 16);
	return d;
}

static const uint8_t bos_extra[] = {
	0x05, 0x10, 0xff, 0x12, 0x34,	/* capability type ff, 2 data bytes */
	0x03, 0x10, 0xfe,		/* capability type fe, no data */
};

/* super speed: bulk 1024 + interrupt, each with a companion; BOS */
static struct gd_device *build_ss(void)
{
	struct gd_device *d = dev_new(USBIP_SPEED_SUPER, 0x0300, 9, 1);
	struct gd_endpoint *e;
	struct gd_alt *a;

	d->bos.present = true;
	d->bos.generated_caps = true;
	d->bos.extra = BLOB(bos_extra);
	a = cfg_add_alt(&d->configs[0], 0, 0, 0xff, 0x00, 0x00);
	e = alt_add_ep(a, 0x81, USB_ENDPOINT_XFER_BULK, 1024, 0);
	e->ss.present = true;
	e->ss.bMaxBurst = 15;
	e = alt_add_ep(a, 0x02, USB_ENDPOINT_XFER_BULK, 1024, 0);
	e->ss.present = true;
	e->ss.bMaxBurst = 15;
	e = alt_add_ep(a, 0x83, USB_ENDPOINT_XFER_INT, 8, 4);
	e->ss.present = true;
	e->ss.wBytesPerInterval = 8;
	return d;
}

static const uint8_t raw_string[] = { 0x05, 0x03, 0x41, 0x00, 0x42 };
static char long_a[201];	/* 200 'a' */
static char a125_emoji[130];	/* 125 'a' + U+1F600 */
static char a124_emoji[130];	/* 124 'a' + U+1F600 */

static struct gd_device *build_strings(void)
{
	struct gd_device *d = build_fs_vendor();

	memset(long_a, 'a', 200);
	memset(a125_emoji, 'a', 125);
	memcpy(a125_emoji + 125, "\xf0\x9f\x98\x80", 5);
	memset(a124_emoji, 'a', 124);
	memcpy(a124_emoji + 124, "\xf0\x9f\x98\x80", 5);

	d->langids[0] = 0x0409;
	d->n_langids = 1;
	d->strings[1] = (char *)"usbrig";
	/* U+00E9, U+20AC, U+1F600 */
	d->strings[2] = (char *)"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	/* bad byte, truncated 3-byte seq, UTF-8 surrogate, overlong '/' */
	d->strings[3] = (char *)"a\xff" "b\xe2\x82" "c\xed\xa0\x80" "d\xc0\xaf" "e";
	/* truncated 4-byte sequence at the end */
	d->strings[4] = (char *)"x\xf0\x9f\x98";
	d->string_raw[5] = BLOB(raw_string);
	d->strings[5] = (char *)"not served: raw wins";
	d->strings[7] = (char *)"";
	d->strings[8] = long_a;
	d->strings[9] = a125_emoji;
	d->strings[10] = a124_emoji;
	return d;
}

/* ---- helpers ---- */

static uint8_t buf[BUF_SIZE];

static void expect_bytes(int n, const uint8_t *want, size_t want_len)
{
	assert_int_equal(n, (int)want_len);
	assert_memory_equal(buf, want, want_len);
}

/* ---- device ---- */

static void test_device_fs_vendor(void **state)
{
	static const uint8_t want[] = {
		0x12,		/* bLength 18 */
		0x01,		/* bDescriptorType DEVICE */
		0x00, 0x02,	/* bcdUSB 2.00 */
		0xff,		/* bDeviceClass vendor */
		0x00,		/* bDeviceSubClass */
		0x00,		/* bDeviceProtocol */
		0x40,		/* bMaxPacketSize0 64 */
		0x09, 0x12,	/* idVendor 1209 */
		0x01, 0x00,	/* idProduct 0001 */
		0x00, 0x01,	/* bcdDevice 1.00 */
		0x01,		/* iManufacturer */
		0x02,		/* iProduct */
		0x03,		/* iSerialNumber */
		0x01,		/* bNumConfigurations */
	};
	struct gd_device *d = build_fs_vendor();

	(void)state;
	memset(buf, 0xa5, 64);
	expect_bytes(desc_device(d, buf, BUF_SIZE), want, sizeof(want));
	assert_int_equal(buf[18], 0xa5);	/* 18 bytes exactly */
	dev_free(d);
}

/* ---- configurations ---- */

static void test_config_bulk_pair(void **state)
{
	static const uint8_t want[] = {
		/* configuration */
		0x09, 0x02,	/* bLength, CONFIG */
		0x20, 0x00,	/* wTotalLength 32 */
		0x01,		/* bNumInterfaces */
		0x01,		/* bConfigurationValue */
		0x00,		/* iConfiguration */
		0x80,		/* bmAttributes: bus powered */
		0x32,		/* bMaxPower 100 mA */
		/* interface 0 alt 0 */
		0x09, 0x04,	/* bLength, INTERFACE */
		0x00, 0x00,	/* bInterfaceNumber, bAlternateSetting */
		0x02,		/* bNumEndpoints */
		0xff, 0x00, 0x00, /* vendor class/subclass/protocol */
		0x00,		/* iInterface */
		/* endpoint 0x81 */
		0x07, 0x05,	/* bLength, ENDPOINT */
		0x81,		/* bEndpointAddress: 1 IN */
		0x02,		/* bmAttributes: bulk */
		0x40, 0x00,	/* wMaxPacketSize 64 */
		0x00,		/* bInterval */
		/* endpoint 0x02 */
		0x07, 0x05, 0x02, 0x02, 0x40, 0x00, 0x00,
	};
	struct gd_device *d = build_fs_vendor();
	int n;

	(void)state;
	n = desc_config(d, 0, USB_DT_CONFIG, buf, BUF_SIZE);
	expect_bytes(n, want, sizeof(want));
	assert_int_equal(desc_check_chain(buf, n), 0);
	assert_int_equal(desc_config(d, 1, USB_DT_CONFIG, buf, BUF_SIZE),
			 -ENOENT);
	assert_int_equal(desc_config(d, 0, USB_DT_DEVICE, buf, BUF_SIZE),
			 -EINVAL);
	/* full speed: no other-speed configuration, no qualifier */
	assert_int_equal(desc_config(d, 0, USB_DT_OTHER_SPEED_CONFIG, buf,
				     BUF_SIZE), -ENOENT);
	assert_int_equal(desc_qualifier(d, buf, BUF_SIZE), -ENOENT);
	assert_int_equal(desc_bos(d, buf, BUF_SIZE), -ENOENT);
	dev_free(d);
}

static void test_config_iad_composite(void **state)
{
	static const uint8_t want[] = {
		/* configuration */
		0x09, 0x02,
		0x62, 0x00,	/* wTotalLength 98 */
		0x03,		/* bNumInterfaces: 0, 1, 2 */
		0x01, 0x00, 0x80, 0x32,
		/* config.extra: OTG descriptor, right after the config */
		0x03, 0x09, 0x03,
		/* IAD for interface 0, before its interface descriptor */
		0x08, 0x0b,	/* bLength, INTERFACE_ASSOCIATION */
		0x00,		/* bFirstInterface */
		0x02,		/* bInterfaceCount */
		0x02, 0x02, 0x01, /* function: CDC ACM */
		0x04,		/* iFunction */
		/* interface 0: CDC communication */
		0x09, 0x04, 0x00, 0x00, 0x01, 0x02, 0x02, 0x01, 0x00,
		/* alt.extra: CDC functional descriptors, before endpoints */
		0x05, 0x24, 0x00, 0x10, 0x01,
		0x05, 0x24, 0x06, 0x00, 0x01,
		/* endpoint 0x83 interrupt, 16 bytes, every 10 ms */
		0x07, 0x05, 0x83, 0x03, 0x10, 0x00, 0x0a,
		/* endpoint.extra: class-specific endpoint */
		0x04, 0x25, 0x01, 0x00,
		/* interface 1: CDC data, two bulk endpoints */
		0x09, 0x04, 0x01, 0x00, 0x02, 0x0a, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x81, 0x02, 0x40, 0x00, 0x00,
		0x07, 0x05, 0x02, 0x02, 0x40, 0x00, 0x00,
		/* IAD for interface 2 */
		0x08, 0x0b, 0x02, 0x01, 0xff, 0x00, 0x00, 0x00,
		/* interface 2: vendor, no endpoints */
		0x09, 0x04, 0x02, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00,
		/* dangling IAD (interface 9 does not exist): last */
		0x08, 0x0b, 0x09, 0x01, 0xff, 0xff, 0xff, 0x00,
	};
	struct gd_device *d = build_composite();
	int n;

	(void)state;
	n = desc_config(d, 0, USB_DT_CONFIG, buf, BUF_SIZE);
	expect_bytes(n, want, sizeof(want));
	assert_int_equal(desc_check_chain(buf, n), 0);
	dev_free(d);
}

static void test_config_alt_settings(void **state)
{
	static const uint8_t want[] = {
		0x09, 0x02,
		0x41, 0x00,	/* wTotalLength 65 */
		0x02,		/* bNumInterfaces: numbers 0 and 1, 3 descs */
		0x01, 0x00, 0x80, 0x32,
		/* IAD once, before interface 0 alt 0 only */
		0x08, 0x0b, 0x00, 0x02, 0xff, 0x00, 0x00, 0x00,
		/* interface 0 alt 0: no endpoints */
		0x09, 0x04, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00,
		/* interface 0 alt 1: two iso endpoints */
		0x09, 0x04, 0x00, 0x01, 0x02, 0xff, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x81, 0x05, 0xc0, 0x00, 0x01, /* iso async 192 */
		0x07, 0x05, 0x02, 0x05, 0xc0, 0x00, 0x01,
		/* interface 1 alt 0 */
		0x09, 0x04, 0x01, 0x00, 0x01, 0xff, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x83, 0x03, 0x08, 0x00, 0x01,
	};
	struct gd_device *d = build_alts();
	int n;

	(void)state;
	n = desc_config(d, 0, USB_DT_CONFIG, buf, BUF_SIZE);
	expect_bytes(n, want, sizeof(want));
	assert_int_equal(desc_check_chain(buf, n), 0);
	dev_free(d);
}

/* ---- high speed: qualifier and other-speed configuration ---- */

static void test_high_speed_qualifier(void **state)
{
	static const uint8_t want_hs[] = {
		0x09, 0x02,
		0x3c, 0x00,	/* wTotalLength 60 */
		0x01, 0x01, 0x00, 0x80, 0x32,
		0x09, 0x04, 0x00, 0x00, 0x06, 0xff, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x81, 0x02, 0x00, 0x02, 0x00, /* bulk 512 */
		0x07, 0x05, 0x02, 0x02, 0x00, 0x02, 0x00, /* bulk 512 */
		0x07, 0x05, 0x83, 0x03, 0x08, 0x00, 0x04, /* int 8, 2^3 uf */
		0x07, 0x05, 0x84, 0x03, 0x00, 0x14, 0x08, /* int 3x1024, 2^7 uf */
		0x07, 0x05, 0x85, 0x05, 0x00, 0x14, 0x04, /* iso 3x1024, 2^3 uf */
		0x07, 0x05, 0x87, 0x03, 0x40, 0x00, 0x10, /* int 64, 2^15 uf */
	};
	static const uint8_t want_fs[] = {
		0x09,
		0x07,		/* OTHER_SPEED_CONFIGURATION */
		0x3c, 0x00,	/* same wTotalLength */
		0x01, 0x01, 0x00, 0x80, 0x32,
		0x09, 0x04, 0x00, 0x00, 0x06, 0xff, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x81, 0x02, 0x40, 0x00, 0x00, /* bulk 512 -> 64 */
		0x07, 0x05, 0x02, 0x02, 0x40, 0x00, 0x00, /* bulk 512 -> 64 */
		0x07, 0x05, 0x83, 0x03, 0x08, 0x00, 0x01, /* 1 ms -> 1 frame */
		0x07, 0x05, 0x84, 0x03, 0x40, 0x00, 0x10, /* 64, 16 frames */
		0x07, 0x05, 0x85, 0x05, 0xff, 0x03, 0x01, /* 1023, 2^0 frames */
		0x07, 0x05, 0x87, 0x03, 0x40, 0x00, 0xff, /* 4096 ms -> 255 */
	};
	static const uint8_t want_qual[] = {
		0x0a,		/* bLength 10 */
		0x06,		/* DEVICE_QUALIFIER */
		0x00, 0x02,	/* bcdUSB 2.00 */
		0x00, 0x00, 0x00, /* class/subclass/protocol */
		0x40,		/* bMaxPacketSize0 64 */
		0x01,		/* bNumConfigurations */
		0x00,		/* bReserved */
	};
	struct gd_device *d = build_hs();

	(void)state;
	expect_bytes(desc_config(d, 0, USB_DT_CONFIG, buf, BUF_SIZE),
		     want_hs, sizeof(want_hs));
	expect_bytes(desc_config(d, 0, USB_DT_OTHER_SPEED_CONFIG, buf,
				 BUF_SIZE), want_fs, sizeof(want_fs));
	expect_bytes(desc_qualifier(d, buf, BUF_SIZE), want_qual,
		     sizeof(want_qual));

	d->qualifier = false;
	assert_int_equal(desc_qualifier(d, buf, BUF_SIZE), -ENOENT);
	assert_int_equal(desc_config(d, 0, USB_DT_OTHER_SPEED_CONFIG, buf,
				     BUF_SIZE), -ENOENT);
	d->qualifier = true;
	d->speed = USBIP_SPEED_FULL;
	assert_int_equal(desc_qualifier(d, buf, BUF_SIZE), -ENOENT);
	assert_int_equal(desc_config(d, 0, USB_DT_OTHER_SPEED_CONFIG, buf,
				     BUF_SIZE), -ENOENT);
	dev_free(d);
}

/* ---- super speed: companions and BOS ---- */

static void test_super_speed_bos(void **state)
{
	static const uint8_t want_cfg[] = {
		0x09, 0x02,
		0x39, 0x00,	/* wTotalLength 57 */
		0x01, 0x01, 0x00, 0x80, 0x32,
		0x09, 0x04, 0x00, 0x00, 0x03, 0xff, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x81, 0x02, 0x00, 0x04, 0x00, /* bulk 1024 */
		0x06, 0x30,	/* bLength, SS_ENDPOINT_COMP */
		0x0f,		/* bMaxBurst 15 */
		0x00,		/* bmAttributes: no streams */
		0x00, 0x00,	/* wBytesPerInterval */
		0x07, 0x05, 0x02, 0x02, 0x00, 0x04, 0x00,
		0x06, 0x30, 0x0f, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x83, 0x03, 0x08, 0x00, 0x04, /* int 8 */
		0x06, 0x30, 0x00, 0x00, 0x08, 0x00, /* wBytesPerInterval 8 */
	};
	static const uint8_t want_bos[] = {
		0x05, 0x0f,	/* bLength, BOS */
		0x1e, 0x00,	/* wTotalLength 30 */
		0x04,		/* bNumDeviceCaps: 2 generated + 2 extra */
		/* USB 2.0 extension */
		0x07, 0x10, 0x02, /* bLength, DEVICE_CAPABILITY, USB 2.0 EXT */
		0x02, 0x00, 0x00, 0x00, /* bmAttributes: LPM */
		/* SuperSpeed USB device capability */
		0x0a, 0x10, 0x03, /* bLength, DEVICE_CAPABILITY, SS */
		0x00,		/* bmAttributes: no LTM */
		0x0e, 0x00,	/* wSpeedsSupported: full, high, 5 Gbps */
		0x01,		/* bFunctionalitySupport: full speed */
		0x0a,		/* bU1DevExitLat 10 us */
		0xff, 0x07,	/* wU2DevExitLat 2047 us */
		/* bos.extra verbatim */
		0x05, 0x10, 0xff, 0x12, 0x34,
		0x03, 0x10, 0xfe,
	};
	static const uint8_t want_dev[] = {
		0x12, 0x01, 0x00, 0x03,	/* bcdUSB 3.00 */
		0x00, 0x00, 0x00,
		0x09,			/* bMaxPacketSize0 2^9 */
		0x09, 0x12, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
	};
	struct gd_device *d = build_ss();
	int n;

	(void)state;
	expect_bytes(desc_device(d, buf, BUF_SIZE), want_dev,
		     sizeof(want_dev));
	n = desc_config(d, 0, USB_DT_CONFIG, buf, BUF_SIZE);
	expect_bytes(n, want_cfg, sizeof(want_cfg));
	assert_int_equal(desc_check_chain(buf, n), 0);
	n = desc_bos(d, buf, BUF_SIZE);
	expect_bytes(n, want_bos, sizeof(want_bos));
	assert_int_equal(desc_check_chain(buf, n), 0);
	/* super speed has no qualifier and no other speed */
	assert_int_equal(desc_qualifier(d, buf, BUF_SIZE), -ENOENT);
	dev_free(d);
}

static void test_bos_usb2(void **state)
{
	static const uint8_t want_lpm[] = {
		0x05, 0x0f, 0x0c, 0x00, 0x01,	/* 12 bytes, 1 cap */
		0x07, 0x10, 0x02, 0x02, 0x00, 0x00, 0x00, /* LPM */
	};
	static const uint8_t want_nolpm[] = {
		0x05, 0x0f, 0x0c, 0x00, 0x01,
		0x07, 0x10, 0x02, 0x00, 0x00, 0x00, 0x00, /* no LPM */
	};
	static const uint8_t want_empty[] = { 0x05, 0x0f, 0x05, 0x00, 0x00 };
	static const uint8_t bad_extra[] = {
		0x03, 0x10, 0xfe,	/* one whole capability */
		0x00, 0x10,		/* bLength 0: the count stops here */
	};
	static const uint8_t want_bad[] = {
		0x05, 0x0f, 0x0a, 0x00, 0x01,
		0x03, 0x10, 0xfe, 0x00, 0x10,
	};
	struct gd_device *d = build_hs();
	int n;

	(void)state;
	assert_int_equal(desc_bos(d, buf, BUF_SIZE), -ENOENT);
	d->bcdUSB = 0x0201;
	d->bos.present = true;
	d->bos.generated_caps = true;
	expect_bytes(desc_bos(d, buf, BUF_SIZE), want_lpm, sizeof(want_lpm));
	d->bcdUSB = 0x0200;
	expect_bytes(desc_bos(d, buf, BUF_SIZE), want_nolpm,
		     sizeof(want_nolpm));
	d->bos.generated_caps = false;
	expect_bytes(desc_bos(d, buf, BUF_SIZE), want_empty,
		     sizeof(want_empty));
	d->bos.extra = BLOB(bad_extra);
	expect_bytes(desc_bos(d, buf, BUF_SIZE), want_bad, sizeof(want_bad));

	/* a companion in the model of a high-speed device is not emitted */
	d->configs[0].alts[0].eps[0].ss.present = true;
	n = desc_config(d, 0, USB_DT_CONFIG, buf, BUF_SIZE);
	assert_int_equal(n, 60);
	assert_int_equal(desc_check_chain(buf, n), 0);
	dev_free(d);
}

/* ---- strings ---- */

static void test_strings(void **state)
{
	static const uint8_t want_langid[] = {
		0x04, 0x03,	/* bLength, STRING */
		0x09, 0x04,	/* wLANGID[0] 0409 en-US */
	};
	static const uint8_t want_langid2[] = {
		0x06, 0x03, 0x09, 0x04,
		0x07, 0x04,	/* wLANGID[1] 0407 de-DE */
	};
	static const uint8_t want_ascii[] = {
		0x0e, 0x03,	/* 14 bytes: 6 units */
		'u', 0, 's', 0, 'b', 0, 'r', 0, 'i', 0, 'g', 0,
	};
	static const uint8_t want_utf8[] = {
		0x0a, 0x03,
		0xe9, 0x00,	/* U+00E9 */
		0xac, 0x20,	/* U+20AC */
		0x3d, 0xd8, 0x00, 0xde,	/* U+1F600 as D83D DE00 */
	};
	static const uint8_t want_bad[] = {
		0x1a, 0x03,	/* 12 units */
		'a', 0, 0xfd, 0xff,	/* FF */
		'b', 0, 0xfd, 0xff,	/* E2 82: one for the subpart */
		'c', 0, 0xfd, 0xff, 0xfd, 0xff, 0xfd, 0xff, /* ED A0 80 */
		'd', 0, 0xfd, 0xff, 0xfd, 0xff,	/* C0 AF */
		'e', 0,
	};
	static const uint8_t want_trunc[] = {
		0x06, 0x03, 'x', 0, 0xfd, 0xff,
	};
	static const uint8_t want_empty[] = { 0x02, 0x03 };
	struct gd_device *d = build_strings();
	int n, i;

	(void)state;
	expect_bytes(desc_string(d, 0, buf, BUF_SIZE), want_langid,
		     sizeof(want_langid));
	expect_bytes(desc_string(d, 1, buf, BUF_SIZE), want_ascii,
		     sizeof(want_ascii));
	expect_bytes(desc_string(d, 2, buf, BUF_SIZE), want_utf8,
		     sizeof(want_utf8));
	expect_bytes(desc_string(d, 3, buf, BUF_SIZE), want_bad,
		     sizeof(want_bad));
	expect_bytes(desc_string(d, 4, buf, BUF_SIZE), want_trunc,
		     sizeof(want_trunc));
	expect_bytes(desc_string(d, 5, buf, BUF_SIZE), raw_string,
		     sizeof(raw_string));
	assert_int_equal(desc_string(d, 6, buf, BUF_SIZE), -ENOENT);
	assert_int_equal(desc_string(d, 255, buf, BUF_SIZE), -ENOENT);
	expect_bytes(desc_string(d, 7, buf, BUF_SIZE), want_empty,
		     sizeof(want_empty));

	/* 200 ASCII characters: cut at 126 units, bLength 254 */
	n = desc_string(d, 8, buf, BUF_SIZE);
	assert_int_equal(n, 254);
	assert_int_equal(buf[0], 254);
	for (i = 2; i < n; i += 2)
		assert_int_equal(get_le16(buf + i), 'a');
	/* 125 + a pair: the pair would make 127 units, so it is dropped */
	n = desc_string(d, 9, buf, BUF_SIZE);
	assert_int_equal(n, 252);
	assert_int_equal(buf[0], 252);
	assert_int_equal(get_le16(buf + 250), 'a');
	/* 124 + a pair: exactly 126 units */
	n = desc_string(d, 10, buf, BUF_SIZE);
	assert_int_equal(n, 254);
	assert_int_equal(get_le16(buf + 250), 0xd83d);
	assert_int_equal(get_le16(buf + 252), 0xde00);

	d->langids[1] = 0x0407;
	d->n_langids = 2;
	expect_bytes(desc_string(d, 0, buf, BUF_SIZE), want_langid2,
		     sizeof(want_langid2));

	/* no LANGIDs: no string descriptors at all */
	d->n_langids = 0;
	assert_int_equal(desc_string(d, 0, buf, BUF_SIZE), -ENOENT);
	assert_int_equal(desc_string(d, 1, buf, BUF_SIZE), -ENOENT);
	assert_int_equal(desc_string(d, 5, buf, BUF_SIZE), -ENOENT);
	dev_free(d);
}

/* ---- overrides: emitted verbatim, byte count natural ---- */

static void test_overrides(void **state)
{
	static const uint8_t want_dev[] = {
		0x11,		/* bLength override 17; still 18 bytes */
		0x01, 0x00, 0x02, 0xff, 0x00, 0x00, 0x40,
		0x09, 0x12, 0x01, 0x00, 0x00, 0x01, 0x01, 0x02, 0x03,
		0x03,		/* bNumConfigurations override 3 (model: 1) */
	};
	static const uint8_t want_cfg[] = {
		0x0a,		/* bLength override 10; 9 bytes emitted */
		0x02,
		0x34, 0x12,	/* wTotalLength override 0x1234 (really 42) */
		0x07,		/* bNumInterfaces override 7 (really 1) */
		0x01, 0x00, 0x80, 0x32,
		0x00, 0x0b,	/* IAD bLength override 0; 8 bytes emitted */
		0x00, 0x01, 0xff, 0x00, 0x00, 0x00,
		0x08, 0x04,	/* interface bLength override 8 */
		0x00, 0x00,
		0x05,		/* bNumEndpoints override 5 (really 2) */
		0xff, 0x00, 0x00, 0x00,
		0x06, 0x05,	/* endpoint bLength override 6; 7 bytes */
		0x81, 0x02, 0x40, 0x00, 0x00,
		0x09, 0x05,	/* bLength 9: the 9-byte audio form */
		0x02, 0x02, 0x40, 0x00, 0x00,
		0x00,		/* bRefresh */
		0x00,		/* bSynchAddress */
	};
	static const uint8_t want_qual[] = {
		0x0a, 0x06, 0x00, 0x02, 0xff, 0x00, 0x00, 0x40,
		0x03,		/* bNumConfigurations follows the override */
		0x00,
	};
	static const uint8_t want_ss_cfg[] = {
		0x09, 0x02, 0x1f, 0x00, 0x01, 0x01, 0x00, 0x80, 0x32,
		0x09, 0x04, 0x00, 0x00, 0x01, 0xff, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x81, 0x02, 0x00, 0x04, 0x00,
		0xff, 0x30,	/* companion bLength override 255; 6 bytes */
		0x0f, 0x00, 0x00, 0x00,
	};
	static const uint8_t want_bos[] = {
		0x09, 0x02,	/* bLength 9, bDescriptorType 2 overrides */
		0xff, 0xff,	/* wTotalLength override 65535 */
		0x09,		/* bNumDeviceCaps override 9 */
		0x07, 0x10, 0x02, 0x02, 0x00, 0x00, 0x00,
		0x0a, 0x10, 0x03, 0x00, 0x0e, 0x00, 0x01, 0x0a, 0xff, 0x07,
	};
	struct gd_device *d = build_fs_vendor();
	struct gd_config *c = &d->configs[0];
	struct gd_alt *a = &c->alts[0];

	(void)state;
	d->bLength_override = 0x11;
	d->bNumConfigurations_override = 3;
	expect_bytes(desc_device(d, buf, BUF_SIZE), want_dev,
		     sizeof(want_dev));

	c->bLength_override = 0x0a;
	c->wTotalLength_override = 0x1234;
	c->bNumInterfaces_override = 7;
	cfg_add_iad(c, 0, 1, 0xff, 0, 0, 0)->bLength_override = 0;
	a = &c->alts[0];
	a->bLength_override = 8;
	a->bNumEndpoints_override = 5;
	a->eps[0].bLength_override = 6;
	a->eps[1].bLength_override = 9;
	expect_bytes(desc_config(d, 0, USB_DT_CONFIG, buf, BUF_SIZE),
		     want_cfg, sizeof(want_cfg));

	d->speed = USBIP_SPEED_HIGH;
	d->qualifier = true;
	expect_bytes(desc_qualifier(d, buf, BUF_SIZE), want_qual,
		     sizeof(want_qual));
	dev_free(d);

	d = build_ss();
	a = &d->configs[0].alts[0];
	a->n_eps = 1;		/* keep the first endpoint only */
	a->eps[0].ss.bLength_override = 255;
	expect_bytes(desc_config(d, 0, USB_DT_CONFIG, buf, BUF_SIZE),
		     want_ss_cfg, sizeof(want_ss_cfg));
	d->bos.extra.len = 0;
	d->bos.wTotalLength_override = 0xffff;
	d->bos.bNumDeviceCaps_override = 9;
	d->bos.bLength_override = 9;
	d->bos.bDescriptorType_override = USB_DT_CONFIG;
	expect_bytes(desc_bos(d, buf, BUF_SIZE), want_bos, sizeof(want_bos));
	dev_free(d);
}

/* ---- -ENOSPC: every length short of the whole, nothing written past ---- */

enum which { W_DEVICE, W_CONFIG, W_OTHER, W_QUALIFIER, W_BOS, W_STRING };

static int gen(const struct gd_device *d, enum which w, unsigned int idx,
	       uint8_t *dst, size_t len)
{
	switch (w) {
	case W_DEVICE:
		return desc_device(d, dst, len);
	case W_CONFIG:
		return desc_config(d, idx, USB_DT_CONFIG, dst, len);
	case W_OTHER:
		return desc_config(d, idx, USB_DT_OTHER_SPEED_CONFIG, dst,
				   len);
	case W_QUALIFIER:
		return desc_qualifier(d, dst, len);
	case W_BOS:
		return desc_bos(d, dst, len);
	case W_STRING:
		return desc_string(d, idx, dst, len);
	}
	return -EINVAL;
}

#define GUARD	32

/* returns how many short lengths were tried */
static int check_enospc(const struct gd_device *d, enum which w,
			unsigned int idx)
{
	uint8_t *exact;
	size_t len, i;
	int n, ret;

	n = gen(d, w, idx, buf, BUF_SIZE);
	if (n == -ENOENT)
		return 0;
	assert_true(n > 0);
	for (len = 0; len < (size_t)n; len++) {
		/* a guard area after len in a big buffer */
		memset(buf, 0xa5, n + GUARD);
		ret = gen(d, w, idx, buf, len);
		assert_int_equal(ret, -ENOSPC);
		for (i = len; i < (size_t)n + GUARD; i++)
			assert_int_equal(buf[i], 0xa5);
		/* and a heap block of exactly len, for ASan */
		exact = malloc(len ? len : 1);
		assert_non_null(exact);
		assert_int_equal(gen(d, w, idx, exact, len), -ENOSPC);
		free(exact);
	}
	/* exactly n fits */
	exact = malloc(n);
	assert_non_null(exact);
	assert_int_equal(gen(d, w, idx, exact, n), n);
	free(exact);
	return n;
}

static void test_enospc(void **state)
{
	struct gd_device *(*const builders[])(void) = {
		build_fs_vendor, build_composite, build_alts, build_hs,
		build_ss, build_strings,
	};
	int tried = 0;
	size_t b;
	unsigned int i;

	(void)state;
	for (b = 0; b < sizeof(builders) / sizeof(builders[0]); b++) {
		struct gd_device *d = builders[b]();

		tried += check_enospc(d, W_DEVICE, 0);
		tried += check_enospc(d, W_CONFIG, 0);
		tried += check_enospc(d, W_OTHER, 0);
		tried += check_enospc(d, W_QUALIFIER, 0);
		tried += check_enospc(d, W_BOS, 0);
		for (i = 0; i < 256; i++)
			tried += check_enospc(d, W_STRING, i);
		dev_free(d);
	}
	/* every kind above was reached at least once */
	assert_true(tried > 1000);
}

/* ---- desc_check_chain ---- */

static void test_check_chain(void **state)
{
	static const uint8_t good[] = {
		0x09, 0x02, 0x12, 0x00, 0x01, 0x01, 0x00, 0x80, 0x32,
		0x09, 0x04, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00,
	};
	static const uint8_t zero[] = { 0x02, 0x24, 0x00, 0x24 };
	static const uint8_t one[] = { 0x02, 0x24, 0x01, 0x24 };
	static const uint8_t overrun[] = { 0x02, 0x24, 0x05, 0x24, 0x00 };
	static const uint8_t tail[] = { 0x03, 0x24, 0x00, 0x05 };

	(void)state;
	assert_int_equal(desc_check_chain(good, sizeof(good)), 0);
	assert_int_equal(desc_check_chain(good, 0), 0);	/* empty chain */
	assert_int_equal(desc_check_chain(NULL, 0), 0);
	/* a whole descriptor cut short */
	assert_int_equal(desc_check_chain(good, sizeof(good) - 1), -EINVAL);
	assert_int_equal(desc_check_chain(good, 10), -EINVAL);
	assert_int_equal(desc_check_chain(zero, sizeof(zero)), -EINVAL);
	assert_int_equal(desc_check_chain(one, sizeof(one)), -EINVAL);
	assert_int_equal(desc_check_chain(overrun, sizeof(overrun)), -EINVAL);
	/* a lone trailing byte that claims more than is left */
	assert_int_equal(desc_check_chain(tail, sizeof(tail)), -EINVAL);
	assert_int_equal(desc_check_chain(tail, 3), 0);
}

/* ---- desc_dump ---- */

static char *dump_to_string(const struct gd_device *d, int *ret)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	assert_non_null(f);
	*ret = desc_dump(d, f);
	assert_int_equal(fclose(f), 0);
	assert_non_null(text);
	return text;
}

static void test_dump_small(void **state)
{
	static const char want[] =
		"# tiny: 1209:0001 full\n"
		"# device: bLength 18 bcdUSB 0200 class ff/00/00 bMaxPacketSize0 64 idVendor 1209 idProduct 0001 bcdDevice 0100 iManufacturer 1 iProduct 0 iSerialNumber 0 bNumConfigurations 1\n"
		"device: 12 01 00 02 ff 00 00 40 09 12 01 00 00 01 01 00 00 01\n"
		"# config 0: wTotalLength 25 bNumInterfaces 1 bConfigurationValue 1 iConfiguration 0 bmAttributes 80 bMaxPower 50\n"
		"#   interface 0 alt 0: bNumEndpoints 1 class ff/00/00 iInterface 0\n"
		"#   endpoint 81 in bulk: wMaxPacketSize 64 bInterval 0\n"
		"config 0: 09 02 19 00 01 01 00 80 32 09 04 00 00 01 ff 00 00 00 07 05 81 02 40 00 00\n"
		"# string 0: langids 0409\n"
		"string 0: 04 03 09 04\n"
		"# string 1: \"Ab\\u00e9\"\n"
		"string 1: 08 03 41 00 62 00 e9 00\n";
	struct gd_device *d = dev_new(USBIP_SPEED_FULL, 0x0200, 64, 1);
	struct gd_alt *a;
	char *text;
	int ret;

	(void)state;
	d->name = (char *)"tiny";
	d->bDeviceClass = 0xff;
	d->iManufacturer = 1;
	d->langids[0] = 0x0409;
	d->n_langids = 1;
	d->strings[1] = (char *)"Ab\xc3\xa9";
	a = cfg_add_alt(&d->configs[0], 0, 0, 0xff, 0x00, 0x00);
	alt_add_ep(a, 0x81, USB_ENDPOINT_XFER_BULK, 64, 0);

	text = dump_to_string(d, &ret);
	assert_int_equal(ret, 0);
	assert_string_equal(text, want);
	free(text);
	dev_free(d);
}

/* the optional lines appear, in order, and a broken chain is reported */
static void test_dump_hs_bos(void **state)
{
	struct gd_device *d = build_hs();
	const char *p;
	char *text;
	int ret;

	(void)state;
	d->bcdUSB = 0x0201;
	d->bos.present = true;
	d->bos.generated_caps = true;
	d->configs[0].alts[0].bLength_override = 0;
	text = dump_to_string(d, &ret);
	assert_int_equal(ret, 0);
	p = strstr(text, "\nconfig 0: 09 02 3c 00 ");
	assert_non_null(p);
	p = strstr(p, "\nother-speed-config 0: 09 07 3c 00 ");
	assert_non_null(p);
	p = strstr(p, "\nqualifier: 0a 06 01 02 00 00 00 40 01 00\n");
	assert_non_null(p);
	p = strstr(p, "\nbos: 05 0f 0c 00 01 07 10 02 02 00 00 00\n");
	assert_non_null(p);
	assert_null(strstr(text, "\nstring"));
	assert_non_null(strstr(text,
		"#   bLength 0 at offset 9 breaks the chain (51 bytes left)\n"));
	free(text);
	dev_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_fs_vendor),
		cmocka_unit_test(test_config_bulk_pair),
		cmocka_unit_test(test_config_iad_composite),
		cmocka_unit_test(test_config_alt_settings),
		cmocka_unit_test(test_high_speed_qualifier),
		cmocka_unit_test(test_super_speed_bos),
		cmocka_unit_test(test_bos_usb2),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_enospc),
		cmocka_unit_test(test_check_chain),
		cmocka_unit_test(test_dump_small),
		cmocka_unit_test(test_dump_hs_bos),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
