// SPDX-License-Identifier: GPL-2.0
/*
 * test_script.c - the gadget script parser: models field by field, every
 * error kind at its exact line and column, the shipped examples, and a
 * fuzz-ish loop (truncations and random mutations) for the ASan run.
 *
 * Runs from the repository root (it reads gadgets/examples/).
 */
#include <errno.h>
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"
#include "script.h"

#define NAME "dir/t.gadget"

static struct gd_device *parse_ok(const char *text)
{
	struct script_error err;
	struct gd_device *dev = NULL;
	int rc = script_parse(NAME, text, strlen(text), &dev, &err);

	if (rc)
		fail_msg("unexpected parse error %d: %s", rc, err.msg);
	assert_non_null(dev);
	return dev;
}

/* error at line:col whose message contains what */
static void check_error(const char *text, int line, int col, const char *what)
{
	struct script_error err;
	struct gd_device *dev = (struct gd_device *)1;
	char prefix[64];
	int rc = script_parse(NAME, text, strlen(text), &dev, &err);

	if (rc != -EINVAL) {
		gd_model_free(rc ? NULL : dev);
		fail_msg("expected \"%s\" at %d:%d, got rc %d\n---\n%s---",
			 what, line, col, rc, text);
	}
	assert_null(dev);
	snprintf(prefix, sizeof(prefix), NAME ":%d:%d: ", line, col);
	if (err.line != line || err.col != col ||
	    strncmp(err.msg, prefix, strlen(prefix)) || !strstr(err.msg, what))
		fail_msg("expected %s...%s..., got %d:%d \"%s\"\n---\n%s---",
			 prefix, what, err.line, err.col, err.msg, text);
}

struct err_case {
	const char *text;
	int line;
	int col;
	const char *what;
};

static void check_errors(const struct err_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		check_error(c[i].text, c[i].line, c[i].col, c[i].what);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* the smallest valid device around a body */
#define DEV(body) "device {\n idVendor 0x1209\n idProduct 1\n" body "}\n"
#define CFG1 " config { }\n"
#define DIGITS40 "0123456789012345678901234567890123456789"

/* ------------------------------------------------------------------ */
/* models                                                              */

static void test_minimal_defaults(void **state)
{
	struct gd_device *dev;
	const struct gd_config *cfg;
	int i;

	(void)state;
	dev = parse_ok("device {\n idVendor 0x1209\n idProduct 0x0001\n config { }\n}\n");
	assert_string_equal(dev->name, "t");
	assert_string_equal(dev->path, NAME);
	assert_int_equal(dev->speed, USBIP_SPEED_FULL);
	assert_int_equal(dev->bcdUSB, 0x0110);
	assert_int_equal(dev->bDeviceClass, 0);
	assert_int_equal(dev->bDeviceSubClass, 0);
	assert_int_equal(dev->bDeviceProtocol, 0);
	assert_int_equal(dev->bMaxPacketSize0, 64);
	assert_int_equal(dev->idVendor, 0x1209);
	assert_int_equal(dev->idProduct, 1);
	assert_int_equal(dev->bcdDevice, 0x0100);
	assert_int_equal(dev->iManufacturer, 0);
	assert_int_equal(dev->iProduct, 0);
	assert_int_equal(dev->iSerialNumber, 0);
	assert_int_equal(dev->bNumConfigurations_override, -1);
	assert_int_equal(dev->bLength_override, -1);
	assert_int_equal(dev->n_langids, 0);
	for (i = 0; i < 256; i++) {
		assert_null(dev->strings[i]);
		assert_int_equal(dev->string_raw[i].len, 0);
	}
	assert_false(dev->qualifier);
	assert_false(dev->bos.present);
	assert_true(dev->bos.generated_caps);
	assert_int_equal(dev->bos.wTotalLength_override, -1);
	assert_int_equal(dev->bos.bNumDeviceCaps_override, -1);
	assert_int_equal(dev->n_rules, 0);
	assert_int_equal(dev->faults.disconnect_after_urbs, 0);
	assert_int_equal(dev->faults.disconnect_after_ms, 0);
	assert_null(dev->function);
	assert_int_equal(dev->n_configs, 1);
	cfg = &dev->configs[0];
	assert_int_equal(cfg->bConfigurationValue, 1);
	assert_int_equal(cfg->iConfiguration, 0);
	assert_int_equal(cfg->bmAttributes, 0x80);
	assert_int_equal(cfg->bMaxPower, 50);
	assert_int_equal(cfg->wTotalLength_override, -1);
	assert_int_equal(cfg->bNumInterfaces_override, -1);
	assert_int_equal(cfg->bLength_override, -1);
	assert_int_equal(cfg->extra.len, 0);
	assert_int_equal(cfg->n_iads, 0);
	assert_int_equal(cfg->n_alts, 0);
	assert_ptr_equal(gd_config_by_value(dev, 1), cfg);
	assert_null(gd_config_by_value(dev, 2));
	assert_int_equal(gd_config_num_interfaces(cfg), 0);
	gd_model_free(dev);
}

static void test_name(void **state)
{
	struct script_error err;
	struct gd_device *dev;
	const char *text = "device { idVendor 1; idProduct 2; config { } }";

	(void)state;
	assert_int_equal(script_parse("a/b/vendor-bulk.gadget", text,
				      strlen(text), &dev, &err), 0);
	assert_string_equal(dev->name, "vendor-bulk");
	gd_model_free(dev);
	assert_int_equal(script_parse("plain", text, strlen(text), &dev, &err), 0);
	assert_string_equal(dev->name, "plain");
	assert_string_equal(dev->path, "plain");
	gd_model_free(dev);
	/* no name at all: still a label */
	assert_int_equal(script_parse(NULL, text, strlen(text), &dev, &err), 0);
	assert_non_null(dev->name);
	gd_model_free(dev);

	dev = parse_ok(DEV(" name \"my gadget\"\n" CFG1));
	assert_string_equal(dev->name, "my gadget");
	gd_model_free(dev);
}

static void test_device_fields(void **state)
{
	struct gd_device *dev;

	(void)state;
	dev = parse_ok("device {\n"
		       "    speed high\n"
		       "    bcdUSB 0x0210\n"
		       "    bDeviceClass 0xef\n"
		       "    bDeviceSubClass 2\n"
		       "    bDeviceProtocol 0x01\n"
		       "    bMaxPacketSize0 32\n"
		       "    idVendor 0x0557\n"
		       "    idProduct 0x2008\n"
		       "    bcdDevice 0x1234\n"
		       "    bNumConfigurations 3\n"
		       "    bLength 17\n"
		       "    qualifier off\n"
		       "    bos off\n"
		       "    config { }\n"
		       "    config { bConfigurationValue 7 }\n"
		       "}\n");
	assert_int_equal(dev->speed, USBIP_SPEED_HIGH);
	assert_int_equal(dev->bcdUSB, 0x0210);
	assert_int_equal(dev->bDeviceClass, 0xef);
	assert_int_equal(dev->bDeviceSubClass, 2);
	assert_int_equal(dev->bDeviceProtocol, 1);
	assert_int_equal(dev->bMaxPacketSize0, 32);
	assert_int_equal(dev->idVendor, 0x0557);
	assert_int_equal(dev->idProduct, 0x2008);
	assert_int_equal(dev->bcdDevice, 0x1234);
	assert_int_equal(dev->bNumConfigurations_override, 3);
	assert_int_equal(dev->bLength_override, 17);
	assert_false(dev->qualifier);
	assert_false(dev->bos.present);
	assert_int_equal(dev->n_configs, 2);
	assert_int_equal(dev->configs[0].bConfigurationValue, 1);
	assert_int_equal(dev->configs[1].bConfigurationValue, 7);
	assert_ptr_equal(gd_config_by_value(dev, 7), &dev->configs[1]);
	gd_model_free(dev);
}

static void test_speed_defaults(void **state)
{
	static const struct {
		const char *speed;
		enum usbip_speed v;
		uint16_t bcd;
		uint8_t mps0;
		bool qual, bos, ss;
		uint16_t ctl, iso, bulk, intr;
		uint8_t int_interval;
	} t[] = {
		{ "low", USBIP_SPEED_LOW, 0x0110, 8, false, false, false, 8, 0, 0, 8, 10 },
		{ "full", USBIP_SPEED_FULL, 0x0110, 64, false, false, false, 64, 1023, 64, 64, 10 },
		{ "high", USBIP_SPEED_HIGH, 0x0200, 64, true, false, false, 64, 1024, 512, 64, 4 },
		{ "super", USBIP_SPEED_SUPER, 0x0320, 9, false, true, true, 512, 1024, 1024, 64, 4 },
	};
	char text[1024];
	size_t i;

	(void)state;
	for (i = 0; i < N(t); i++) {
		struct gd_device *dev;
		const struct gd_alt *alt;
		bool low = t[i].v == USBIP_SPEED_LOW;

		snprintf(text, sizeof(text),
			 "device {\n"
			 "  idVendor 1; idProduct 2\n"
			 "  config { interface {\n"
			 "    endpoint { bEndpointAddress 0x81; type interrupt }\n"
			 "    endpoint { bEndpointAddress 0x03; type control }\n"
			 "    %s\n"
			 "  } }\n"
			 "  speed %s\n"	/* after the configs: still applies */
			 "}\n",
			 low ? "" :
			 "endpoint { bEndpointAddress 0x82; type bulk }\n"
			 "endpoint { bEndpointAddress 0x84; type iso }",
			 t[i].speed);
		dev = parse_ok(text);
		assert_int_equal(dev->speed, t[i].v);
		assert_int_equal(dev->bcdUSB, t[i].bcd);
		assert_int_equal(dev->bMaxPacketSize0, t[i].mps0);
		assert_int_equal(dev->qualifier, t[i].qual);
		assert_int_equal(dev->bos.present, t[i].bos);
		alt = &dev->configs[0].alts[0];
		assert_int_equal(alt->n_eps, low ? 2 : 4);
		assert_int_equal(alt->eps[0].bmAttributes, 3);
		assert_int_equal(alt->eps[0].wMaxPacketSize, t[i].intr);
		assert_int_equal(alt->eps[0].bInterval, t[i].int_interval);
		assert_int_equal(alt->eps[0].ss.present, t[i].ss);
		assert_int_equal(alt->eps[1].bmAttributes, 0);
		assert_int_equal(alt->eps[1].wMaxPacketSize, t[i].ctl);
		assert_int_equal(alt->eps[1].bInterval, 0);
		if (!low) {
			assert_int_equal(alt->eps[2].bmAttributes, 2);
			assert_int_equal(alt->eps[2].wMaxPacketSize, t[i].bulk);
			assert_int_equal(alt->eps[2].bInterval, 0);
			assert_int_equal(alt->eps[3].bmAttributes, 1);
			assert_int_equal(alt->eps[3].wMaxPacketSize, t[i].iso);
			assert_int_equal(alt->eps[3].bInterval, 1);
			assert_int_equal(alt->eps[3].ss.present, t[i].ss);
		}
		gd_model_free(dev);
	}
}

static void test_strings(void **state)
{
	struct gd_device *dev;
	const struct gd_config *cfg;

	(void)state;
	dev = parse_ok("device {\n"
		       " idVendor 1; idProduct 2\n"
		       " manufacturer \"Maker\"\n"	/* 1 */
		       " string 2 \"explicit\"\n"	/* taken: skipped */
		       " product \"Thing\"\n"		/* 3 */
		       " iSerialNumber 4\n"		/* named: skipped */
		       " config {\n"
		       "  configuration \"cfg\"\n"	/* 5 */
		       "  iad { bInterfaceCount 1; function \"fn\" }\n"	/* 6 */
		       "  interface { interface-name \"if0\" }\n"	/* 7 */
		       "  interface { iInterface 9 }\n"
		       " }\n"
		       " string 8 raw 04 03 41 00\n"
		       " string 10 \"Gr\\xc3\\xbc\\303\\237e \\\"q\\\"\\t\\n\"\n"
		       "}\n");
	assert_int_equal(dev->iManufacturer, 1);
	assert_int_equal(dev->iProduct, 3);
	assert_int_equal(dev->iSerialNumber, 4);
	assert_string_equal(dev->strings[1], "Maker");
	assert_string_equal(dev->strings[2], "explicit");
	assert_string_equal(dev->strings[3], "Thing");
	assert_null(dev->strings[4]);
	assert_string_equal(dev->strings[5], "cfg");
	assert_string_equal(dev->strings[6], "fn");
	assert_string_equal(dev->strings[7], "if0");
	assert_null(dev->strings[8]);
	assert_int_equal(dev->string_raw[8].len, 4);
	assert_memory_equal(dev->string_raw[8].data, "\x04\x03\x41\x00", 4);
	assert_null(dev->strings[9]);
	assert_string_equal(dev->strings[10], "Gr\xc3\xbc\xc3\x9f" "e \"q\"\t\n");
	cfg = &dev->configs[0];
	assert_int_equal(cfg->iConfiguration, 5);
	assert_int_equal(cfg->iads[0].iFunction, 6);
	assert_int_equal(cfg->alts[0].iInterface, 7);
	assert_int_equal(cfg->alts[1].iInterface, 9);
	/* strings exist and no langids line: English (US) */
	assert_int_equal(dev->n_langids, 1);
	assert_int_equal(dev->langids[0], 0x0409);
	gd_model_free(dev);

	dev = parse_ok(DEV(" langids 0x0409 0x0407 7\n string 1 raw 02 03\n" CFG1));
	assert_int_equal(dev->n_langids, 3);
	assert_int_equal(dev->langids[0], 0x0409);
	assert_int_equal(dev->langids[1], 0x0407);
	assert_int_equal(dev->langids[2], 7);
	assert_int_equal(dev->string_raw[1].len, 2);
	gd_model_free(dev);

	/* a raw string alone is a string too */
	dev = parse_ok(DEV(" string 255 raw 02 03\n" CFG1));
	assert_int_equal(dev->n_langids, 1);
	gd_model_free(dev);

	/* 126 UTF-16 units fit; a character beyond U+FFFF counts two */
	dev = parse_ok(DEV(" product \"" DIGITS40 DIGITS40 DIGITS40 "12345\"\n"
			   " serial \"\xf0\x9f\x98\x80\"\n" CFG1));
	assert_int_equal(strlen(dev->strings[1]), 125);
	assert_string_equal(dev->strings[2], "\xf0\x9f\x98\x80");
	gd_model_free(dev);
}

static void test_raw_placement(void **state)
{
	struct gd_device *dev;
	const struct gd_config *cfg;
	const struct gd_alt *a0, *a1;

	(void)state;
	dev = parse_ok(DEV(
		" config {\n"
		"  raw 01 02\n"			/* -> config.extra */
		"  raw 0x03 0xA \"AB\"\n"	/* appended; 0x forms, a string */
		"  interface {\n"
		"   raw 10 11\n"		/* -> alt 0 extra */
		"   endpoint { bEndpointAddress 0x81; type bulk; raw 20 }\n"
		"   raw 21 22\n"		/* -> after ep 0x81 */
		"   endpoint {\n"
		"    raw 30\n"			/* endpoint's own */
		"    bEndpointAddress 0x02; type bulk\n"
		"   }\n"
		"  }\n"
		"  raw 31 \\\n"			/* config after an interface: */
		"      32   # comment after the continuation\n"
		"  interface { }\n"
		"  raw 40\n"			/* no endpoint: alt 1 extra */
		" }\n"));
	cfg = &dev->configs[0];
	assert_int_equal(cfg->extra.len, 6);
	assert_memory_equal(cfg->extra.data, "\x01\x02\x03\x0a" "AB", 6);
	assert_int_equal(cfg->n_alts, 2);
	a0 = &cfg->alts[0];
	a1 = &cfg->alts[1];
	assert_int_equal(a0->extra.len, 2);
	assert_memory_equal(a0->extra.data, "\x10\x11", 2);
	assert_int_equal(a0->eps[0].extra.len, 3);
	assert_memory_equal(a0->eps[0].extra.data, "\x20\x21\x22", 3);
	assert_int_equal(a0->eps[1].extra.len, 3);
	assert_memory_equal(a0->eps[1].extra.data, "\x30\x31\x32", 3);
	assert_int_equal(a1->extra.len, 1);
	assert_memory_equal(a1->extra.data, "\x40", 1);
	gd_model_free(dev);
}

static void test_interfaces(void **state)
{
	struct gd_device *dev;
	const struct gd_config *cfg;
	static const uint8_t want[][2] = {
		{ 0, 0 }, { 0, 1 }, { 0, 2 }, { 1, 0 }, { 5, 0 }, { 5, 3 },
		{ 6, 0 },
	};
	size_t i;

	(void)state;
	dev = parse_ok(DEV(
		" config {\n"
		"  interface { bInterfaceClass 0xff; bInterfaceSubClass 1; bInterfaceProtocol 2 }\n"
		"  interface { bAlternateSetting 1 }\n"
		"  interface { bAlternateSetting 2 }\n"
		"  interface { }\n"
		"  interface { bInterfaceNumber 5; bNumEndpoints 4; bLength 10 }\n"
		"  interface { bAlternateSetting 3 }\n"
		"  interface { }\n"
		" }\n"));
	cfg = &dev->configs[0];
	assert_int_equal(cfg->n_alts, N(want));
	for (i = 0; i < N(want); i++) {
		assert_int_equal(cfg->alts[i].bInterfaceNumber, want[i][0]);
		assert_int_equal(cfg->alts[i].bAlternateSetting, want[i][1]);
		assert_ptr_equal(gd_alt_find(cfg, want[i][0], want[i][1]),
				 &cfg->alts[i]);
		assert_int_equal(cfg->alts[i].line, 5 + i);
	}
	assert_null(gd_alt_find(cfg, 1, 1));
	assert_int_equal(gd_config_num_interfaces(cfg), 4);
	assert_int_equal(cfg->alts[0].bInterfaceClass, 0xff);
	assert_int_equal(cfg->alts[0].bInterfaceSubClass, 1);
	assert_int_equal(cfg->alts[0].bInterfaceProtocol, 2);
	assert_int_equal(cfg->alts[0].bNumEndpoints_override, -1);
	assert_int_equal(cfg->alts[0].bLength_override, -1);
	assert_int_equal(cfg->alts[4].bNumEndpoints_override, 4);
	assert_int_equal(cfg->alts[4].bLength_override, 10);
	gd_model_free(dev);
}

static void test_config_fields(void **state)
{
	struct gd_device *dev;
	const struct gd_config *cfg;

	(void)state;
	dev = parse_ok(DEV(
		" config {\n"
		"  bConfigurationValue 3\n"
		"  bmAttributes 0xc0\n"
		"  bMaxPower 0\n"
		"  iConfiguration 200\n"
		"  wTotalLength 9\n"
		"  bNumInterfaces 0x20\n"
		"  bLength 0\n"
		" }\n"));
	cfg = &dev->configs[0];
	assert_int_equal(cfg->bConfigurationValue, 3);
	assert_int_equal(cfg->bmAttributes, 0xc0);
	assert_int_equal(cfg->bMaxPower, 0);
	assert_int_equal(cfg->iConfiguration, 200);
	assert_int_equal(cfg->wTotalLength_override, 9);
	assert_int_equal(cfg->bNumInterfaces_override, 32);
	assert_int_equal(cfg->bLength_override, 0);
	assert_int_equal(dev->n_langids, 0);	/* an index alone is no string */
	gd_model_free(dev);
}

static void test_endpoint_fields(void **state)
{
	struct gd_device *dev;
	const struct gd_endpoint *ep;

	(void)state;
	dev = parse_ok(DEV(
		" config { interface {\n"
		"  endpoint {\n"
		"   bEndpointAddress 0x8f\n"
		"   bmAttributes 0x0d\n"
		"   wMaxPacketSize 0x1400\n"
		"   bInterval 0\n"
		"   bLength 9\n"
		"  }\n"
		" } }\n"));
	ep = &dev->configs[0].alts[0].eps[0];
	assert_int_equal(ep->bEndpointAddress, 0x8f);
	assert_int_equal(ep->bmAttributes, 0x0d);
	assert_int_equal(ep->wMaxPacketSize, 0x1400);
	assert_int_equal(ep->bInterval, 0);
	assert_int_equal(ep->bLength_override, 9);
	assert_false(ep->ss.present);
	assert_int_equal(ep->ss.bLength_override, -1);
	assert_int_equal(ep->beh.mode, GD_EP_DEFAULT);
	assert_int_equal(ep->line, 5);
	gd_model_free(dev);

	/* each `type` word sets its transfer type ("isochronous" was 4 & 3,
	 * control) */
	dev = parse_ok(DEV(
		" config { interface {\n"
		"  endpoint { bEndpointAddress 0x81; type control }\n"
		"  endpoint { bEndpointAddress 0x82; type iso }\n"
		"  endpoint { bEndpointAddress 0x83; type bulk }\n"
		"  endpoint { bEndpointAddress 0x84; type interrupt }\n"
		"  endpoint { bEndpointAddress 0x85; type isochronous }\n"
		" } }\n"));
	ep = dev->configs[0].alts[0].eps;
	assert_int_equal(ep[0].bmAttributes, 0);
	assert_int_equal(ep[1].bmAttributes, 1);
	assert_int_equal(ep[2].bmAttributes, 2);
	assert_int_equal(ep[3].bmAttributes, 3);
	assert_int_equal(ep[4].bmAttributes, 1);
	gd_model_free(dev);
}

static void test_behaviours(void **state)
{
	struct gd_device *dev;
	const struct gd_alt *alt;
	const struct gd_endpoint *ep;

	(void)state;
	dev = parse_ok(DEV(
		" config {\n"
		"  interface {\n"
		"   endpoint { bEndpointAddress 0x01; type bulk; loopback 0x83 }\n"
		"   endpoint { bEndpointAddress 0x02; type bulk; sink; delay 5 }\n"
		"   endpoint { bEndpointAddress 0x82; type interrupt; source pattern 55 aa; stall-nth 3 }\n"
		"   endpoint { bEndpointAddress 0x84; type bulk; nak }\n"
		"   endpoint { bEndpointAddress 0x85; type interrupt\n"
		"    sequence repeat { packet 01 02; packet; packet 03 }\n"
		"   }\n"
		"   endpoint { bEndpointAddress 0x86; type bulk; sequence {\n"
		"    packet 0x10\n"
		"   } }\n"
		"   endpoint { bEndpointAddress 0x87; type bulk; source }\n"
		"  }\n"
		"  interface {\n"	/* the target may be in another interface */
		"   endpoint { bEndpointAddress 0x83; type bulk }\n"
		"  }\n"
		" }\n"));
	alt = &dev->configs[0].alts[0];
	ep = &alt->eps[0];
	assert_int_equal(ep->beh.mode, GD_EP_LOOPBACK);
	assert_int_equal(ep->beh.loop_to, 0x83);
	ep = &alt->eps[1];
	assert_int_equal(ep->beh.mode, GD_EP_SINK);
	assert_int_equal(ep->beh.delay_ms, 5);
	assert_int_equal(ep->beh.stall_nth, 0);
	ep = &alt->eps[2];
	assert_int_equal(ep->beh.mode, GD_EP_SOURCE);
	assert_int_equal(ep->beh.pattern.len, 2);
	assert_memory_equal(ep->beh.pattern.data, "\x55\xaa", 2);
	assert_int_equal(ep->beh.stall_nth, 3);
	ep = &alt->eps[3];
	assert_int_equal(ep->beh.mode, GD_EP_NAK);
	ep = &alt->eps[4];
	assert_int_equal(ep->beh.mode, GD_EP_SEQUENCE);
	assert_true(ep->beh.repeat);
	assert_int_equal(ep->beh.n_packets, 3);
	assert_int_equal(ep->beh.packets[0].len, 2);
	assert_memory_equal(ep->beh.packets[0].data, "\x01\x02", 2);
	assert_int_equal(ep->beh.packets[1].len, 0);
	assert_int_equal(ep->beh.packets[2].len, 1);
	ep = &alt->eps[5];
	assert_int_equal(ep->beh.mode, GD_EP_SEQUENCE);
	assert_false(ep->beh.repeat);
	assert_int_equal(ep->beh.n_packets, 1);
	assert_int_equal(ep->beh.packets[0].data[0], 0x10);
	ep = &alt->eps[6];
	assert_int_equal(ep->beh.mode, GD_EP_SOURCE);
	assert_int_equal(ep->beh.pattern.len, 0);
	gd_model_free(dev);
}

static void test_companion(void **state)
{
	struct gd_device *dev;
	const struct gd_alt *alt;

	(void)state;
	dev = parse_ok(DEV(
		" speed super\n"
		" config { interface {\n"
		"  endpoint { bEndpointAddress 0x81; type bulk }\n"
		"  endpoint { bEndpointAddress 0x82; type interrupt; wMaxPacketSize 512\n"
		"   companion { bMaxBurst 2 } }\n"
		"  endpoint { bEndpointAddress 0x83; type iso\n"
		"   companion { bMaxBurst 1; bmAttributes 2 } }\n"
		"  endpoint { bEndpointAddress 0x84; type interrupt\n"
		"   companion { bMaxBurst 3; bmAttributes 0x80; wBytesPerInterval 7; bLength 5 } }\n"
		"  endpoint { bEndpointAddress 0x85; type bulk; companion off }\n"
		"  endpoint { bEndpointAddress 0x86; type interrupt }\n"
		" } }\n"));
	alt = &dev->configs[0].alts[0];
	assert_true(alt->eps[0].ss.present);
	assert_int_equal(alt->eps[0].ss.bMaxBurst, 0);
	assert_int_equal(alt->eps[0].ss.bmAttributes, 0);
	assert_int_equal(alt->eps[0].ss.wBytesPerInterval, 0);
	assert_int_equal(alt->eps[0].ss.bLength_override, -1);
	/* periodic: wMaxPacketSize x (bMaxBurst + 1) [x (Mult + 1)] */
	assert_int_equal(alt->eps[1].ss.bMaxBurst, 2);
	assert_int_equal(alt->eps[1].ss.wBytesPerInterval, 512 * 3);
	assert_int_equal(alt->eps[2].ss.wBytesPerInterval, 1024 * 2 * 3);
	assert_int_equal(alt->eps[3].ss.bMaxBurst, 3);
	assert_int_equal(alt->eps[3].ss.bmAttributes, 0x80);
	assert_int_equal(alt->eps[3].ss.wBytesPerInterval, 7);
	assert_int_equal(alt->eps[3].ss.bLength_override, 5);
	assert_false(alt->eps[4].ss.present);
	assert_true(alt->eps[5].ss.present);
	assert_int_equal(alt->eps[5].ss.wBytesPerInterval, 64);
	gd_model_free(dev);

	/* below super speed only on request (malformed on purpose) */
	dev = parse_ok(DEV(
		" speed high\n"
		" config { interface {\n"
		"  endpoint { bEndpointAddress 0x81; type bulk }\n"
		"  endpoint { bEndpointAddress 0x82; type bulk; companion on }\n"
		"  endpoint { bEndpointAddress 0x83; type bulk; companion { } }\n"
		" } }\n"));
	alt = &dev->configs[0].alts[0];
	assert_false(alt->eps[0].ss.present);
	assert_true(alt->eps[1].ss.present);
	assert_true(alt->eps[2].ss.present);
	gd_model_free(dev);
}

static void test_iad(void **state)
{
	struct gd_device *dev;
	const struct gd_config *cfg;

	(void)state;
	dev = parse_ok(DEV(
		" config {\n"
		"  interface { }\n"
		"  iad { bInterfaceCount 2; bFunctionClass 2; bFunctionSubClass 3\n"
		"        bFunctionProtocol 4; iFunction 9; bLength 7 }\n"
		"  interface { bInterfaceNumber 4 }\n"
		"  interface { }\n"
		"  iad { bFirstInterface 0; bInterfaceCount 1 }\n"
		" }\n"));
	cfg = &dev->configs[0];
	assert_int_equal(cfg->n_iads, 2);
	assert_int_equal(cfg->iads[0].bFirstInterface, 4);	/* the next one */
	assert_int_equal(cfg->iads[0].bInterfaceCount, 2);
	assert_int_equal(cfg->iads[0].bFunctionClass, 2);
	assert_int_equal(cfg->iads[0].bFunctionSubClass, 3);
	assert_int_equal(cfg->iads[0].bFunctionProtocol, 4);
	assert_int_equal(cfg->iads[0].iFunction, 9);
	assert_int_equal(cfg->iads[0].bLength_override, 7);
	assert_int_equal(cfg->iads[1].bFirstInterface, 0);
	assert_int_equal(cfg->iads[1].bInterfaceCount, 1);
	assert_int_equal(cfg->iads[1].iFunction, 0);
	assert_int_equal(cfg->iads[1].bLength_override, -1);
	gd_model_free(dev);
}

static void test_rules(void **state)
{
	struct gd_device *dev;
	const struct gd_ctrl_rule *r;

	(void)state;
	dev = parse_ok(DEV(CFG1
		" control {\n"
		"  bmRequestType 0xc0; bRequest 1; wValue 0x1234; wIndex *\n"
		"  reply 01 02 03\n"
		"  short 2; delay 10; stall-nth 3\n"
		" }\n"
		" control { ack }\n"
		" control { bmRequestType 0x40; bRequest *; stall }\n"
		" control { wIndex 0xffff; reply \"OK\" }\n"));
	assert_int_equal(dev->n_rules, 4);
	r = &dev->rules[0];
	assert_int_equal(r->bmRequestType, 0xc0);
	assert_int_equal(r->bRequest, 1);
	assert_int_equal(r->wValue, 0x1234);
	assert_int_equal(r->wIndex, -1);
	assert_int_equal(r->action, GD_CTRL_REPLY);
	assert_int_equal(r->data.len, 3);
	assert_memory_equal(r->data.data, "\x01\x02\x03", 3);
	assert_int_equal(r->short_len, 2);
	assert_int_equal(r->delay_ms, 10);
	assert_int_equal(r->stall_nth, 3);
	assert_int_equal(r->line, 5);
	r = &dev->rules[1];
	assert_int_equal(r->bmRequestType, -1);
	assert_int_equal(r->bRequest, -1);
	assert_int_equal(r->wValue, -1);
	assert_int_equal(r->wIndex, -1);
	assert_int_equal(r->action, GD_CTRL_ACK);
	assert_int_equal(r->data.len, 0);
	assert_int_equal(r->short_len, -1);
	assert_int_equal(r->delay_ms, 0);
	assert_int_equal(r->stall_nth, 0);
	assert_int_equal(r->line, 10);
	r = &dev->rules[2];
	assert_int_equal(r->bmRequestType, 0x40);
	assert_int_equal(r->bRequest, -1);
	assert_int_equal(r->action, GD_CTRL_STALL);
	r = &dev->rules[3];
	assert_int_equal(r->wIndex, 0xffff);
	assert_int_equal(r->data.len, 2);
	assert_memory_equal(r->data.data, "OK", 2);
	gd_model_free(dev);
}

static void test_faults_and_bos(void **state)
{
	struct gd_device *dev;

	(void)state;
	dev = parse_ok(DEV(CFG1
		" fault disconnect-after-urbs 100\n"
		" fault disconnect-after-ms 2000\n"
		" bos {\n"
		"  generated off\n"
		"  raw 07 10 02 02 00 00 00\n"
		"  raw 03 10 0a\n"
		"  wTotalLength 5\n"
		"  bNumDeviceCaps 0\n"
		"  bLength 9\n"
		"  bDescriptorType 0x02\n"
		" }\n"));
	assert_int_equal(dev->bos.bLength_override, 9);
	assert_int_equal(dev->bos.bDescriptorType_override, 2);
	assert_int_equal(dev->faults.disconnect_after_urbs, 100);
	assert_int_equal(dev->faults.disconnect_after_ms, 2000);
	assert_true(dev->bos.present);	/* a block asks for it at any bcdUSB */
	assert_false(dev->bos.generated_caps);
	assert_int_equal(dev->bos.extra.len, 10);
	assert_memory_equal(dev->bos.extra.data,
			    "\x07\x10\x02\x02\x00\x00\x00\x03\x10\x0a", 10);
	assert_int_equal(dev->bos.wTotalLength_override, 5);
	assert_int_equal(dev->bos.bNumDeviceCaps_override, 0);
	gd_model_free(dev);

	dev = parse_ok(DEV(" speed super\n bos off\n" CFG1));
	assert_false(dev->bos.present);
	gd_model_free(dev);
	dev = parse_ok(DEV(" bos on\n" CFG1));
	assert_true(dev->bos.present);
	assert_true(dev->bos.generated_caps);
	gd_model_free(dev);
	dev = parse_ok(DEV(" bcdUSB 0x0201\n" CFG1));
	assert_true(dev->bos.present);
	gd_model_free(dev);
	dev = parse_ok(DEV(" bcdUSB 0x0200\n speed high\n qualifier on\n" CFG1));
	assert_false(dev->bos.present);
	assert_true(dev->qualifier);
	gd_model_free(dev);
	dev = parse_ok(DEV(" qualifier on\n" CFG1));
	assert_true(dev->qualifier);	/* on request at full speed too */
	gd_model_free(dev);
}

static void test_lexical(void **state)
{
	struct gd_device *dev;

	(void)state;
	/* CRLF, tabs, comments everywhere, ';', one-line blocks, blank
	 * statements, keywords glued to braces */
	dev = parse_ok("# leading comment\r\n"
		       "\r\n"
		       "device{# after a brace\r\n"
		       "\tidVendor\t0X1209 ;; idProduct 0x000a;\r\n"
		       "\tproduct \"a#b;c{}*\" # not a comment inside a string\r\n"
		       "\tconfig{interface{endpoint{bEndpointAddress 0x81;type bulk}}}\r\n"
		       "}");
	assert_int_equal(dev->idVendor, 0x1209);
	assert_int_equal(dev->idProduct, 10);
	assert_string_equal(dev->strings[1], "a#b;c{}*");
	assert_int_equal(dev->configs[0].alts[0].eps[0].bEndpointAddress, 0x81);
	gd_model_free(dev);

	/* a text may contain any escape that is not NUL; bytes may be NUL */
	dev = parse_ok(DEV(" string 1 \"\\a\\b\\f\\v\\?\\'\\x7\\101\"\n"
			   CFG1 " control { reply \"\\0\\x00\" 00 }\n"));
	assert_string_equal(dev->strings[1], "\a\b\f\v?'\x07" "A");
	assert_int_equal(dev->rules[0].data.len, 3);
	assert_memory_equal(dev->rules[0].data.data, "\0\0\0", 3);
	gd_model_free(dev);

	/* a long byte list across lines, continuation right before EOF */
	dev = parse_ok("device { idVendor 1; idProduct 2; config {\n"
		       " raw 01 02 \\\n"
		       "\n"	/* an empty line ends the statement */
		       " raw 03 \\\n"
		       "     04 \\\n"
		       "     05\n"
		       "} }\\");
	assert_int_equal(dev->configs[0].extra.len, 5);
	assert_memory_equal(dev->configs[0].extra.data, "\1\2\3\4\5", 5);
	gd_model_free(dev);
}

static void test_limits_accepted(void **state)
{
	char *text = malloc(64 * 1024);
	struct gd_device *dev;
	size_t n = 0, i;

	(void)state;
	assert_non_null(text);
	n += sprintf(text + n, "device { idVendor 1; idProduct 2\n langids");
	for (i = 0; i < GD_MAX_LANGIDS; i++)
		n += sprintf(text + n, " %zu", i);
	n += sprintf(text + n, "\n");
	for (i = 0; i < GD_MAX_CONFIGS; i++)
		n += sprintf(text + n, " config { }\n");
	n += sprintf(text + n, " config { bConfigurationValue 9; interface {\n");
	for (i = 0; i < GD_MAX_ENDPOINTS; i++)
		n += sprintf(text + n, "  endpoint { bEndpointAddress 0x%02zx; type bulk }\n",
			     (i / 15 ? 0x80 : 0) | (i % 15 + 1));
	n += sprintf(text + n, " raw");
	for (i = 0; i < GD_MAX_BLOB; i++)
		n += sprintf(text + n, " %02zx", i & 0xff);
	n += sprintf(text + n, "\n } }\n}\n");
	/* one config too many: 9 of them */
	check_error(text, 3 + GD_MAX_CONFIGS, 2, "more than 8 configurations");
	/* drop the 1st config line: now exactly at every maximum */
	memmove(strstr(text, " config { }\n"),
		strstr(text, " config { }\n") + 12,
		strlen(strstr(text, " config { }\n") + 12) + 1);
	dev = parse_ok(text);
	assert_int_equal(dev->n_langids, GD_MAX_LANGIDS);
	assert_int_equal(dev->n_configs, GD_MAX_CONFIGS);
	assert_int_equal(dev->configs[7].alts[0].n_eps, GD_MAX_ENDPOINTS);
	assert_int_equal(dev->configs[7].alts[0].eps[29].extra.len, GD_MAX_BLOB);
	gd_model_free(dev);
	free(text);
}

static void test_limits_rejected(void **state)
{
	char *text = malloc(256 * 1024);
	size_t n, i;

	(void)state;
	assert_non_null(text);

	/* 17 LANGIDs: the 17th value */
	n = sprintf(text, "device {\n langids");
	for (i = 0; i <= GD_MAX_LANGIDS; i++)
		n += sprintf(text + n, " 1");
	sprintf(text + n, "\n}\n");
	check_error(text, 2, 10 + 2 * GD_MAX_LANGIDS, "more than 16 LANGIDs");

	/* 31 endpoints in one interface (the 31st cannot be unique anyway:
	 * the count is checked first) */
	n = sprintf(text, "device {\n config { interface {\n");
	for (i = 0; i <= GD_MAX_ENDPOINTS; i++)
		n += sprintf(text + n, "  endpoint { bEndpointAddress 0x%02zx; type bulk }\n",
			     (i / 15 % 2 ? 0x80 : 0) | (i % 15 + 1));
	sprintf(text + n, "} }\n}\n");
	check_error(text, 3 + GD_MAX_ENDPOINTS, 3, "more than 30 endpoints in one interface descriptor");

	/* 257 rules */
	n = sprintf(text, "device {\n");
	for (i = 0; i <= GD_MAX_RULES; i++)
		n += sprintf(text + n, " control { ack }\n");
	sprintf(text + n, "}\n");
	check_error(text, 2 + GD_MAX_RULES, 2, "more than 256 control rules");

	/* 4097 bytes in one run, split over two raw lines */
	n = sprintf(text, "device {\n config {\n  raw");
	for (i = 0; i < GD_MAX_BLOB - 1; i++)
		n += sprintf(text + n, " 00");
	n += sprintf(text + n, "\n  raw 01 02\n");
	sprintf(text + n, " }\n}\n");
	check_error(text, 4, 10, "more than 4096 bytes");

	/* 1025 packets */
	n = sprintf(text, "device {\n config { interface { endpoint {\n  sequence {\n");
	for (i = 0; i <= GD_MAX_SEQ_PACKETS; i++)
		n += sprintf(text + n, "packet 00\n");
	sprintf(text + n, "} } } }\n}\n");
	check_error(text, 4 + GD_MAX_SEQ_PACKETS, 1, "more than 1024 packets");

	/* 17 iads */
	n = sprintf(text, "device {\n config {\n");
	for (i = 0; i <= GD_MAX_IADS; i++)
		n += sprintf(text + n, "  iad { bInterfaceCount 1 }\n");
	sprintf(text + n, " }\n}\n");
	check_error(text, 3 + GD_MAX_IADS, 3, "more than 16 iad blocks");

	/* 33 interface numbers */
	n = sprintf(text, "device {\n config {\n");
	for (i = 0; i <= GD_MAX_INTERFACES; i++)
		n += sprintf(text + n, "  interface { }\n");
	sprintf(text + n, " }\n}\n");
	check_error(text, 3 + GD_MAX_INTERFACES, 3, "more than 32 interfaces");

	/* 257 interface descriptors (alternate settings of interface 0) */
	n = sprintf(text, "device {\n config {\n");
	for (i = 0; i <= GD_MAX_ALTS; i++)
		n += sprintf(text + n, "  interface { bInterfaceNumber 0; bAlternateSetting %zu }\n",
			     i & 0xff);
	sprintf(text + n, " }\n}\n");
	check_error(text, 3 + GD_MAX_ALTS, 3, "more than 256 interface descriptors");

	/* 64 KiB of descriptors do not fit wTotalLength */
	n = sprintf(text, "device { idVendor 1; idProduct 2\n config {\n");
	for (i = 0; i < 16; i++) {
		size_t j;

		n += sprintf(text + n, "  raw");
		for (j = 0; j < GD_MAX_BLOB; j++)
			n += sprintf(text + n, " 00");
		n += sprintf(text + n, "\n  interface { }\n");
	}
	sprintf(text + n, " }\n}\n");
	check_error(text, 2, 2, "add up to 65689 bytes");

	/* no string index left */
	n = sprintf(text, "device { idVendor 1; idProduct 2; config { }\n");
	for (i = 1; i < 256; i++)
		n += sprintf(text + n, " string %zu \"s\"\n", i);
	sprintf(text + n, " product \"p\"\n}\n");
	check_error(text, 257, 10, "no free string index");

	free(text);
}

/* ------------------------------------------------------------------ */
/* errors, each at its exact place                                     */

static void test_errors_lexical(void **state)
{
	static const struct err_case c[] = {
		{ "device {\n product \"abc\n}\n", 2, 10, "unterminated string" },
		{ "device {\n product \"abc\\\"\n}\n", 2, 10, "unterminated string" },
		{ "device { product \"a\\qb\" }", 1, 20, "unknown escape '\\q'" },
		{ "device { product \"a\\x\" }", 1, 20, "'\\x' needs one or two hex digits" },
		{ "device { product \"\\400\" }", 1, 19, "larger than 0377" },
		{ "device { product \"a\x01\" }", 1, 20, "control character 0x01 in a string" },
		{ "device {\n\x02}", 2, 1, "unexpected control character 0x02" },
		{ "device {\n  idVendor 1 \\ 2\n}", 2, 14, "must end its line" },
		{ "device {\n \"x\"\n}", 2, 2, "expected a keyword, found a quoted string" },
		{ "device {\n * 1\n}", 2, 2, "expected a keyword, found '*'" },
		{ "device {\n { }\n}", 2, 2, "expected a keyword, found '{'" },
		{ "device {\n config { }\n}\n}\n", 4, 1, "'}' without a matching '{'" },
		{ "device {\n config {\n", 2, 9, "this '{' is never closed" },
		{ "device {\n config { } x\n}", 2, 13, "unexpected 'x' after '}'" },
		{ "device {\n config { } \"x\"\n}", 2, 13, "unexpected a quoted string after '}'" },
		{ "device {\n config { } {\n}", 2, 13, "unexpected '{' after '}'" },
		{ "a{a{a{a{a{a{a{a{a{}}}}}}}}}", 1, 18, "nested more than 8 deep" },
		/* a tab is one column */
		{ "device {\n\tbcdUSB\tx\n}", 2, 9, "bcdUSB: expected a number" },
	};

	(void)state;
	check_errors(c, N(c));
}

static void test_errors_values(void **state)
{
	static const struct err_case c[] = {
		{ DEV(" bMaxPacketSize0 300\n" CFG1), 4, 18, "bMaxPacketSize0: 300 does not fit in 8 bits" },
		{ DEV(" idVendor2 1\n" CFG1), 4, 2, "unknown keyword 'idVendor2' in the device block; did you mean 'idVendor'?" },
		{ DEV(" bcdUSB 0x10000\n" CFG1), 4, 9, "0x10000 does not fit in 16 bits" },
		{ DEV(CFG1 " control { delay 4294967296; ack }\n"), 5, 18, "does not fit in 32 bits" },
		{ DEV(CFG1 " control { delay 99999999999999999999999; ack }\n"), 5, 18, "does not fit in 32 bits" },
		{ DEV(" bcdUSB\n" CFG1), 4, 2, "bcdUSB: missing value: expected a number" },
		{ DEV(" bcdUSB 12ab\n" CFG1), 4, 9, "expected a number (decimal or 0x hex), found '12ab'" },
		{ DEV(" bcdUSB 0x\n" CFG1), 4, 9, "found '0x'" },
		{ DEV(" bcdUSB -1\n" CFG1), 4, 9, "found '-1'" },
		{ DEV(" bcdUSB *\n" CFG1), 4, 9, "found '*'" },
		{ DEV(" bcdUSB \"1\"\n" CFG1), 4, 9, "found a quoted string" },
		{ DEV(" bcdUSB 0x200 0x300\n" CFG1), 4, 15, "bcdUSB: unexpected '0x300'" },
		{ DEV(" bcdUSB 0x200 bDeviceClass 2\n" CFG1), 4, 15, "unexpected 'bDeviceClass' (one statement per line; ';' also ends one)" },
		{ DEV(" speed ultra\n" CFG1), 4, 8, "speed: expected low, full, high or super, found 'ultra'" },
		{ DEV(" speed\n" CFG1), 4, 2, "speed: missing value: expected low, full, high or super" },
		{ DEV(" qualifier yes\n" CFG1), 4, 12, "qualifier: expected on or off, found 'yes'" },
		{ DEV(" product Thing\n" CFG1), 4, 10, "product: expected a quoted string, found 'Thing'" },
		{ DEV(" product\n" CFG1), 4, 2, "product: missing value: expected a quoted string" },
		{ DEV(" product \"a\\0b\"\n" CFG1), 4, 10, "a NUL byte cannot be part of this string" },
		{ DEV(" product \"\\xc3\\x28\"\n" CFG1), 4, 10, "product: not valid UTF-8" },
		{ DEV(" product \"\\xed\\xa0\\x80\"\n" CFG1), 4, 10, "not valid UTF-8" },	/* a surrogate */
		{ DEV(" product \"\\xc0\\xaf\"\n" CFG1), 4, 10, "not valid UTF-8" },	/* overlong */
		{ DEV(" product \"" DIGITS40 DIGITS40 DIGITS40 "1234567\"\n" CFG1),
		  4, 10, "127 characters (UTF-16 code units), a string descriptor holds at most 126" },
		{ DEV(" name \"\"\n" CFG1), 4, 7, "name: must be 1 to 64 bytes long" },
		{ DEV(" name \"a\\nb\"\n" CFG1), 4, 7, "name: no control characters" },
		{ DEV(CFG1 " control { reply 01 1 }\n"), 5, 21, "reply: expected a hex byte (two hex digits such as 0a, or 0x0a), found '1'" },
		{ DEV(CFG1 " control { reply 0x123 }\n"), 5, 18, "found '0x123'" },
		{ DEV(CFG1 " control { reply zz }\n"), 5, 18, "found 'zz'" },
		{ DEV(CFG1 " control { reply * }\n"), 5, 18, "found '*'" },
		{ DEV(CFG1 " control { reply }\n"), 5, 12, "reply: expected hex bytes" },
		{ DEV(CFG1 " control { bRequest x; ack }\n"), 5, 21, "bRequest: expected a number or '*', found 'x'" },
		{ DEV(CFG1 " control { wValue 0x10000; ack }\n"), 5, 19, "does not fit in 16 bits" },
		{ DEV(CFG1 " control { ack 1 }\n"), 5, 16, "ack: unexpected '1'" },
		{ DEV(CFG1 " fault explode 1\n"), 5, 8, "fault: expected disconnect-after-urbs or disconnect-after-ms, found 'explode'" },
		{ DEV(CFG1 " fault disconnect-after-urbs 0\n"), 5, 30, "fault disconnect-after-urbs: must be at least 1" },
		{ DEV(CFG1 " fault disconnect-after-ms\n"), 5, 2, "fault: missing value: expected a number" },
		{ DEV(CFG1 " fault disconnect-after-ms 1\n fault disconnect-after-ms 2\n"), 6, 8, "fault disconnect-after-ms is set twice (first at line 5)" },
		{ DEV(" langids\n" CFG1), 4, 2, "langids: missing value" },
		{ DEV(" string 1\n" CFG1), 4, 2, "string: missing value: expected a quoted string" },
		{ DEV(" string 1 x\n" CFG1), 4, 11, "string: expected a quoted string or 'raw' and hex bytes, found 'x'" },
		{ DEV(" string 1 raw\n" CFG1), 4, 2, "string: expected hex bytes" },
		{ DEV(" string 1 \"a\" \"b\"\n" CFG1), 4, 15, "string: unexpected a quoted string" },
		{ DEV(" string 256 \"a\"\n" CFG1), 4, 9, "256 does not fit in 8 bits" },
		{ DEV(" bos maybe\n" CFG1), 4, 6, "bos: expected on or off, found 'maybe'" },
		{ DEV(" bos off {\n }\n" CFG1), 4, 6, "bos: unexpected 'off'" },
		{ DEV(" bos { generated }\n" CFG1), 4, 8, "generated: missing value: expected on or off" },
		{ DEV(" config { interface { endpoint { bEndpointAddress 0x81; type bulk; source pattern } } }\n"),
		  4, 68, "source: expected hex bytes" },
		{ DEV(" config { interface { endpoint { bEndpointAddress 0x81; type bulk; source 55 } } }\n"),
		  4, 75, "source: expected pattern, count, sine or file, found '55'" },
		{ DEV(" config { interface { endpoint { bEndpointAddress 0x81; type bulk; sequence again { packet 00 } } } }\n"),
		  4, 77, "sequence: unexpected 'again'" },
		{ DEV(" config { interface { endpoint { bEndpointAddress 0x81; type bulky } } }\n"),
		  4, 62, "type: expected control, iso, bulk, interrupt or isochronous, found 'bulky'" },
		{ DEV(" config { interface { endpoint { bEndpointAddress 0x81; type bulk; stall-nth 0 } } }\n"),
		  4, 78, "stall-nth: counts from 1" },
		{ DEV(" config { interface { endpoint { bEndpointAddress 0x81; type bulk; companion maybe } } }\n"),
		  4, 78, "companion: expected on or off" },
		{ DEV(" config { interface { endpoint { bEndpointAddress 0x81; type bulk; companion off { } } } }\n"),
		  4, 78, "companion: unexpected 'off'" },
		{ DEV(" config x { }\n"), 4, 9, "config: unexpected 'x'" },
		{ "device 1 {\n}", 1, 8, "device: unexpected '1'" },
	};

	(void)state;
	check_errors(c, N(c));
}

static void test_errors_structure(void **state)
{
	static const struct err_case c[] = {
		{ "", 1, 1, "no device block" },
		{ "# only a comment\n\n", 3, 1, "no device block" },
		{ "foo { }\n", 1, 1, "unknown keyword 'foo' in the top level of the file, where only 'device' goes" },
		{ "config { }\n", 1, 1, "'config' does not belong in the top level" },
		{ "device\n", 1, 1, "'device' needs a block: device { ... }" },
		{ DEV(CFG1) "device {\n}\n", 6, 1, "only one 'device' block is allowed here (the first is at line 1)" },
		{ "device {\n idProduct 2\n" CFG1 "}\n", 1, 1, "device: missing idVendor (required)" },
		{ "device {\n idVendor 2\n" CFG1 "}\n", 1, 1, "device: missing idProduct (required)" },
		{ DEV(""), 1, 1, "device: needs at least one config block" },
		{ DEV(" idVendor 3\n" CFG1), 4, 2, "idVendor is set twice (first at line 2)" },
		{ DEV(" product \"a\"\n iProduct 3\n" CFG1), 5, 2, "'iProduct' conflicts with 'product' at line 4: give only one of them" },
		{ DEV(" bos off\n bos { }\n" CFG1), 5, 2, "bos is set twice (first at line 4)" },
		{ DEV(" speed high { }\n" CFG1), 4, 13, "'speed' takes no block" },
		{ DEV(" config\n"), 4, 2, "'config' needs a block: config { ... }" },
		{ DEV(" bEndpointAddress 1\n" CFG1), 4, 2, "'bEndpointAddress' does not belong in the device block (it is a keyword of an endpoint block)" },
		{ DEV(" config { speed high }\n"), 4, 11, "'speed' does not belong in a config block (it is a keyword of the device block)" },
		{ DEV(" config { interface { endpoint { bInterfaceClass 1 } } }\n"), 4, 34, "'bInterfaceClass' does not belong in an endpoint block" },
		{ DEV(" config { xyz 1 }\n"), 4, 11, "unknown keyword 'xyz' in a config block" },
		{ DEV(" config { bMaxPowr 1 }\n"), 4, 11, "did you mean 'bMaxPower'?" },
		{ DEV(" config { interface { endpoint { bEndpointAddress 0x81; type bulk; sequence { pakcet 00 } } } }\n"),
		  4, 79, "unknown keyword 'pakcet' in a sequence block; did you mean 'packet'?" },
		{ DEV(" config { interface { endpoint { type bulk } } }\n"), 4, 23, "endpoint: missing bEndpointAddress (required)" },
		{ DEV(" config { interface { endpoint { bEndpointAddress 1 } } }\n"), 4, 23, "endpoint: missing type (or bmAttributes)" },
		{ DEV(" config { interface { endpoint { bEndpointAddress 1; type bulk; bmAttributes 2 } } }\n"),
		  4, 65, "'bmAttributes' conflicts with 'type' at line 4" },
		{ DEV(" config { interface { endpoint { bEndpointAddress 1; type bulk; sink; nak } } }\n"),
		  4, 71, "'nak' conflicts with 'sink' at line 4" },
		{ DEV(" config { interface { endpoint { bEndpointAddress 1; type bulk; sequence } } }\n"),
		  4, 65, "'sequence' needs a block" },
		{ DEV(" config { iad { bFirstInterface 0 }\n interface { } }\n"), 4, 11, "iad: missing bInterfaceCount (required)" },
		{ DEV(" config { iad { bInterfaceCount 1 } }\n"), 4, 11, "iad: no interface follows it: give bFirstInterface" },
		{ DEV(" config { iad { bFirstInterface 3; bInterfaceCount 1 }\n interface { } }\n"),
		  4, 33, "bFirstInterface: no interface 3 in this configuration" },
		{ DEV(CFG1 " control { bRequest 1 }\n"), 5, 2, "control: needs an action: reply, ack or stall" },
		{ DEV(CFG1 " control { ack; stall }\n"), 5, 17, "'stall' conflicts with 'ack' at line 5" },
		{ DEV(CFG1 " control { reply 01\n reply 02 }\n"), 6, 2, "reply is set twice (first at line 5)" },
		{ DEV(CFG1 " control { stall\n short 1 }\n"), 6, 2, "short: only applies to reply" },
	};

	(void)state;
	check_errors(c, N(c));
}

static void test_errors_semantic(void **state)
{
#define EP(a, rest) "endpoint { bEndpointAddress " #a "; " rest " }\n"
#define ONE_INTF(eps) DEV(" config { interface {\n" eps " } }\n")
	static const struct err_case c[] = {
		{ ONE_INTF(EP(0x80, "type bulk")), 5, 29, "bEndpointAddress: 0x80 is not an endpoint address: expected 0x01..0x0f (OUT) or 0x81..0x8f (IN)" },
		{ ONE_INTF(EP(0, "type bulk")), 5, 29, "0x00 is not an endpoint address" },
		{ ONE_INTF(EP(0x10, "type bulk")), 5, 29, "0x10 is not an endpoint address" },
		{ ONE_INTF(EP(0x81, "type bulk") EP(0x02, "type bulk") EP(0x81, "type interrupt")),
		  7, 29, "bEndpointAddress: 0x81 is already used in this interface (line 5)" },
		{ DEV(" speed low\n config { interface {\n" EP(0x81, "type bulk") " } }\n"),
		  6, 40, "type: low-speed devices have no bulk endpoints" },
		{ DEV(" speed low\n config { interface {\n" EP(0x81, "type iso") " } }\n"),
		  6, 40, "low-speed devices have no isochronous endpoints" },
		{ DEV(" speed low\n config { interface {\n" EP(0x81, "bmAttributes 0x02") " } }\n"),
		  6, 48, "bmAttributes: low-speed devices have no bulk endpoints" },
		{ ONE_INTF(EP(0x81, "type bulk; loopback 0x82")), 5, 46, "loopback: only for OUT endpoints, 0x81 is IN" },
		{ ONE_INTF(EP(0x01, "type bulk; loopback 0x02")), 5, 55, "loopback: 0x02 is not an IN endpoint address (0x81..0x8f)" },
		{ ONE_INTF(EP(0x01, "type bulk; loopback 0x82")), 5, 55, "loopback: no endpoint 0x82 in this configuration" },
		{ ONE_INTF(EP(0x01, "type bulk; loopback 0x82") EP(0x82, "type iso")), 5, 55,
		  "loopback: 0x82 is a isochronous endpoint (line 6): expected bulk or interrupt" },
		{ ONE_INTF(EP(0x01, "type bulk; loopback 0x82") EP(0x82, "type bulk; source")), 5, 55,
		  "loopback: 0x82 has a behaviour of its own (line 6)" },
		/* a target in another configuration does not count */
		{ DEV(" config { interface { " EP(0x82, "type bulk") " } }\n"
		      " config { interface { " EP(0x01, "type bulk; loopback 0x82") " } }\n"),
		  6, 77, "loopback: no endpoint 0x82 in this configuration" },
		{ ONE_INTF(EP(0x81, "type bulk; sink")), 5, 46, "sink: only for OUT endpoints, 0x81 is IN" },
		{ ONE_INTF(EP(0x01, "type bulk; source")), 5, 46, "source: only for IN endpoints, 0x01 is OUT" },
		{ ONE_INTF(EP(0x01, "type bulk; sequence { packet 00 }")), 5, 46, "sequence: only for IN endpoints, 0x01 is OUT" },
		{ ONE_INTF(EP(0x81, "type iso; nak")), 5, 45, "nak: an isochronous endpoint takes only source (IN) or sink (OUT)" },
		{ ONE_INTF(EP(0x81, "type control; delay 1")), 5, 49, "delay: behaviours are for bulk and interrupt endpoints, this one is control" },
		{ ONE_INTF(EP(0x81, "bmAttributes 0x05; stall-nth 1")), 5, 54, "stall-nth: an isochronous endpoint takes only source" },
		{ ONE_INTF(EP(0x81, "type bulk; sequence { }")), 5, 46, "sequence: needs at least one packet" },
		{ DEV(" config { interface { }\n interface { bInterfaceNumber 0 } }\n"), 5, 31, "interface 0 alternate setting 0 is already defined at line 4" },
		{ DEV(" config { interface { bAlternateSetting 2 }\n interface { bInterfaceNumber 0; bAlternateSetting 2 } }\n"),
		  5, 52, "interface 0 alternate setting 2 is already defined at line 4" },
		{ DEV(" config { interface { bInterfaceNumber 255 }\n interface { } }\n"), 5, 2, "no number left after 255" },
		{ DEV(" config { bConfigurationValue 0 }\n"), 4, 31, "bConfigurationValue: 0 means \"not configured\"" },
		{ DEV(CFG1 " config { bConfigurationValue 1 }\n"), 5, 31, "bConfigurationValue 1 is already used by configuration 1" },
		{ DEV(" config { bConfigurationValue 2 }\n config { }\n"), 5, 2, "bConfigurationValue 2 is already used by configuration 1" },
		{ DEV(" string 0 \"x\"\n" CFG1), 4, 9, "string: index 0 is reserved for the LANGID table" },
		{ DEV(" string 3 \"x\"\n string 3 raw 02 03\n" CFG1), 5, 9, "string: index 3 is already used (line 4)" },
	};

	(void)state;
	check_errors(c, N(c));
#undef EP
#undef ONE_INTF
}

static void test_error_api(void **state)
{
	struct script_error err;
	struct gd_device *dev = (struct gd_device *)1;
	char big[64];

	(void)state;
	/* err may be NULL; *out is always written */
	assert_int_equal(script_parse("x", "nope", 4, &dev, NULL), -EINVAL);
	assert_null(dev);
	/* the text need not be NUL-terminated: only len bytes count */
	memcpy(big, "device { idVendor 1; idProduct 2; config { } }GARBAGE", 54);
	assert_int_equal(script_parse("x", big, 46, &dev, &err), 0);
	gd_model_free(dev);
	/* a NUL byte inside the text is a control character */
	assert_int_equal(script_parse("x", "device {\0}", 10, &dev, &err), -EINVAL);
	assert_string_equal(err.msg, "x:1:9: unexpected control character 0x00");
	/* files */
	assert_int_equal(script_load("tests/unit/no-such.gadget", &dev, &err), -ENOENT);
	assert_null(dev);
	assert_string_equal(err.msg, "tests/unit/no-such.gadget: cannot open: No such file or directory");
	assert_int_equal(err.line, 0);
	assert_int_equal(script_load("gadgets/examples", &dev, &err), -EINVAL);
	assert_string_equal(err.msg, "gadgets/examples: not a regular file");
	gd_model_free(NULL);
}

/* function NAME [{ key value... }]: the model, and the function's own
 * validation (the null function takes no options) at the option's place */
static void test_function(void **state)
{
	static const struct err_case c[] = {
		{ DEV(CFG1 " function null {\n  size 64M\n }\n"), 6, 8, "function null: unknown option 'size'" },
		{ DEV(CFG1 " function null {\n  verbose\n }\n"), 6, 3, "function null: unknown option 'verbose'" },
		{ DEV(CFG1 " function null { file \"/tmp/a b\" }\n"), 5, 23, "unknown option 'file'" },
		{ DEV(CFG1 " function nosuch\n"), 5, 11, "function: no device function 'nosuch' (there are: null" },
		{ DEV(CFG1 " function\n"), 5, 2, "function: missing value: expected the name of a device function" },
		{ DEV(CFG1 " function \"null\"\n"), 5, 11, "function: expected the name of a device function, found a quoted string" },
		{ DEV(CFG1 " function null x\n"), 5, 16, "function: unexpected 'x'" },
		{ DEV(CFG1 " function null\n function null\n"), 6, 2, "function is set twice (first at line 5)" },
		{ DEV(CFG1 " function null { a { } }\n"), 5, 20, "function options take no block" },
		{ DEV(CFG1 " function null { a 1; a 2 }\n"), 5, 23, "a is set twice (first at line 5)" },
		{ DEV(CFG1 " function null { a \"x\\0\" }\n"), 5, 20, "a: a NUL byte cannot be part of an option value" },
	};
	struct gd_device *dev;

	(void)state;
	dev = parse_ok(DEV(CFG1 " function null\n"));
	assert_string_equal(dev->function, "null");
	assert_int_equal(dev->function_line, 5);
	assert_int_equal(dev->function_col, 11);
	assert_int_equal(dev->n_function_opts, 0);
	gd_model_free(dev);
	dev = parse_ok(DEV(CFG1 " function null { }\n"));
	assert_int_equal(dev->n_function_opts, 0);
	gd_model_free(dev);
	check_errors(c, N(c));
}

/* A script of many tiny statements: the tree once grew its arrays one
 * element at a time, quadratic under ASan (minutes for this input). */
static void test_large_script(void **state)
{
	size_t len = 1024 * 1024, i;
	char *text = malloc(len + 1);

	(void)state;
	assert_non_null(text);
	for (i = 0; i < len; i += 2)
		memcpy(text + i, "a\n", 2);
	text[len] = 0;
	check_error(text, 1, 1, "unknown keyword 'a' in the top level");
	text[len] = '\n';	/* one byte over the limit */
	{
		struct script_error err;
		struct gd_device *dev;

		assert_int_equal(script_parse(NAME, text, len + 1, &dev, &err),
				 -EINVAL);
		assert_string_equal(err.msg, NAME ":1:1: script of 1048577 bytes, larger than the limit of 1048576");
	}
	free(text);
}

/* ------------------------------------------------------------------ */
/* the shipped examples                                                */

static void test_examples(void **state)
{
	glob_t g;
	size_t i;

	(void)state;
	assert_int_equal(glob("gadgets/examples/*.gadget", 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 8);
	for (i = 0; i < g.gl_pathc; i++) {
		struct script_error err;
		struct gd_device *dev;

		if (script_load(g.gl_pathv[i], &dev, &err))
			fail_msg("%s", err.msg);
		assert_true(dev->n_configs >= 1);
		if (strstr(g.gl_pathv[i], "/vendor-bulk.gadget")) {
			assert_int_equal(dev->idVendor, 0x0557);
			assert_int_equal(dev->idProduct, 0x2008);
			assert_int_equal(dev->speed, USBIP_SPEED_HIGH);
			assert_int_equal(dev->configs[0].alts[0].eps[1].beh.mode,
					 GD_EP_LOOPBACK);
		}
		if (strstr(g.gl_pathv[i], "/hid-keyboard.gadget")) {
			/* the reply is the report descriptor the HID
			 * descriptor announces (0x3f bytes) */
			assert_int_equal(dev->rules[0].data.len, 0x3f);
			assert_int_equal(dev->configs[0].alts[0].extra.data[7], 0x3f);
		}
		if (strstr(g.gl_pathv[i], "/malformed-total.gadget"))
			assert_int_equal(dev->configs[0].wTotalLength_override, 25);
		gd_model_free(dev);
	}
	globfree(&g);
}

/* ------------------------------------------------------------------ */
/* fuzz-ish: truncations and mutations never crash or leak              */

static const char fuzz_seed[] =
	"# seed\n"
	"device {\n"
	"    name \"fuzz\"\n"
	"    speed super\n"
	"    idVendor 0x1209; idProduct 0x0009\n"
	"    manufacturer \"m\"; product \"p\\x41\\n\"; iSerialNumber 9\n"
	"    langids 0x0409 0x0407\n"
	"    string 5 \"five\"\n"
	"    string 6 raw 04 03 41 00\n"
	"    bos { generated off; raw 07 10 02 02 00 00 00; wTotalLength 12 }\n"
	"    config {\n"
	"        configuration \"c\"\n"
	"        raw 09 04\n"
	"        iad { bInterfaceCount 2; function \"f\" }\n"
	"        interface {\n"
	"            bInterfaceClass 0xff; interface-name \"i\"\n"
	"            raw 05 24 00 10 01\n"
	"            endpoint { bEndpointAddress 0x81; type bulk; companion { bMaxBurst 3 } }\n"
	"            endpoint { bEndpointAddress 0x85; type bulk\n"
	"                sequence repeat { packet 01 02; packet \"x\" } }\n"
	"            endpoint { bEndpointAddress 0x02; type bulk; loopback 0x81 }\n"
	"            raw 01 \\\n"
	"                02\n"
	"        }\n"
	"        interface { bAlternateSetting 1\n"
	"            endpoint { bEndpointAddress 0x83; type interrupt; source pattern 55 aa; stall-nth 2; delay 1 }\n"
	"            endpoint { bEndpointAddress 0x84; type iso; companion off }\n"
	"        }\n"
	"        interface { endpoint { bEndpointAddress 0x03; type interrupt; sink } }\n"
	"        wTotalLength 9\n"
	"    }\n"
	"    config { bConfigurationValue 2 }\n"
	"    control { bmRequestType 0xc0; bRequest *; wValue 1; reply 01 02; short 1 }\n"
	"    control { stall; stall-nth 1 }\n"
	"    fault disconnect-after-urbs 100\n"
	"    function null\n"
	"}\n";

static void fuzz_one(const char *text, size_t len)
{
	struct script_error err;
	struct gd_device *dev;
	char *copy = malloc(len ? len : 1);
	int rc;

	/* an exact-size heap copy, so that ASan sees any read past len */
	assert_non_null(copy);
	memcpy(copy, text, len);
	rc = script_parse("fuzz.gadget", copy, len, &dev, &err);
	if (rc != 0 && rc != -EINVAL)
		fail_msg("rc %d on %.*s", rc, (int)len, text);
	if (rc) {
		assert_null(dev);
		assert_true(err.line >= 1 && err.col >= 1);
		assert_int_equal(strncmp(err.msg, "fuzz.gadget:", 12), 0);
	}
	gd_model_free(dev);
	free(copy);
}

static void test_fuzz_seed_parses(void **state)
{
	struct gd_device *dev;

	(void)state;
	dev = parse_ok(fuzz_seed);
	assert_int_equal(dev->n_configs, 2);
	assert_int_equal(dev->configs[0].n_alts, 3);
	gd_model_free(dev);
}

static void test_fuzz_truncate(void **state)
{
	size_t len = strlen(fuzz_seed), i;

	(void)state;
	for (i = 0; i <= len; i++)
		fuzz_one(fuzz_seed, i);
}

static uint32_t xorshift32(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static void test_fuzz_mutate(void **state)
{
	static const char interesting[] = "{}*;\"\\#\n \t0x9fFg-";
	size_t len = strlen(fuzz_seed);
	char *buf = malloc(len + 1);
	uint32_t seed = 0x5eed1234;
	int iter;

	(void)state;
	assert_non_null(buf);
	for (iter = 0; iter < 20000; iter++) {
		int k, n = 1 + xorshift32(&seed) % 4;

		memcpy(buf, fuzz_seed, len);
		for (k = 0; k < n; k++) {
			size_t at = xorshift32(&seed) % len;
			uint32_t r = xorshift32(&seed);

			if (r & 1)
				buf[at] = interesting[(r >> 1) % (sizeof(interesting) - 1)];
			else
				buf[at] = (char)(r >> 8);
		}
		fuzz_one(buf, len);
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal_defaults),
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_device_fields),
		cmocka_unit_test(test_speed_defaults),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_raw_placement),
		cmocka_unit_test(test_interfaces),
		cmocka_unit_test(test_config_fields),
		cmocka_unit_test(test_endpoint_fields),
		cmocka_unit_test(test_behaviours),
		cmocka_unit_test(test_companion),
		cmocka_unit_test(test_iad),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_faults_and_bos),
		cmocka_unit_test(test_lexical),
		cmocka_unit_test(test_limits_accepted),
		cmocka_unit_test(test_limits_rejected),
		cmocka_unit_test(test_errors_lexical),
		cmocka_unit_test(test_errors_values),
		cmocka_unit_test(test_errors_structure),
		cmocka_unit_test(test_errors_semantic),
		cmocka_unit_test(test_error_api),
		cmocka_unit_test(test_function),
		cmocka_unit_test(test_large_script),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_fuzz_seed_parses),
		cmocka_unit_test(test_fuzz_truncate),
		cmocka_unit_test(test_fuzz_mutate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
