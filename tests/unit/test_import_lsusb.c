// SPDX-License-Identifier: GPL-2.0
/*
 * test_import_lsusb.c - gadgets/import/lsusb.c: `lsusb -v` pastes in,
 * descriptor bytes out.
 *
 * The pastes are files in tests/data/import/lsusb/ (runs from the
 * repository root): real ones from linuxhw/LsUSB (usbutils 008 and 015
 * layouts) and written ones (007 and 017 layouts, a HID report lsusb could
 * read, a cut paste, errors).  Bytes are checked against what the devices
 * really hold where that is known (an FT232R, the kernel's own root hub
 * descriptors, the HID 1.11 boot reports), and every device read must go
 * through emit.c's round trip.  Small inline pastes cover the layout
 * quirks one at a time.
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

#include "import/import.h"

#define DATA	"tests/data/import/lsusb/"

static int read_file_set(const char *path, struct imp_set *set,
			 struct imp_error *err)
{
	uint8_t *buf;
	size_t len;
	int ret;

	memset(set, 0, sizeof(*set));
	set->format = strdup("lsusb");
	set->path = strdup(path);
	assert_int_equal(imp_read_file(path, &buf, &len, err), 0);
	ret = imp_reader_lsusb.read(path, buf, len, set, err);
	free(buf);
	return ret;
}

static int read_text(const char *text, struct imp_set *set,
		     struct imp_error *err)
{
	memset(set, 0, sizeof(*set));
	set->format = strdup("lsusb");
	set->path = strdup("paste");
	return imp_reader_lsusb.read("paste", (const uint8_t *)text,
				     strlen(text), set, err);
}

/* emit.c writes the script and proves it serves these bytes again */
static void assert_emits(const struct imp_set *set, const struct imp_dev *d)
{
	struct imp_error err = { "" };
	char *text = NULL;

	if (imp_emit(set, d, NULL, &text, &err)) {
		fprintf(stderr, "%s: %s\n", d->where, err.msg);
		fail();
	}
	free(text);
}

static bool has_note(const struct imp_dev *d, const char *what)
{
	size_t i;

	for (i = 0; i < d->n_notes; i++)
		if (strstr(d->notes[i], what))
			return true;
	return false;
}

/* the bLength chain of a configuration ends exactly at wTotalLength */
static void assert_chain(const struct imp_blob *c)
{
	size_t pos = 0;

	assert_true(c->len >= 9);
	assert_int_equal(c->data[2] | c->data[3] << 8, c->len);
	while (pos < c->len) {
		assert_true(c->data[pos] >= 2);
		assert_true(c->data[pos] <= c->len - pos);
		pos += c->data[pos];
	}
	assert_int_equal(pos, c->len);
}

/* a HID report descriptor: items whole, collections balanced */
static void assert_report(const struct imp_blob *r)
{
	size_t pos = 0;
	int depth = 0;

	while (pos < r->len) {
		uint8_t p = r->data[pos];
		size_t n = (p & 3) == 3 ? 4 : p & 3;

		assert_true(p != 0xfe);		/* no long items */
		if ((p & 0xfc) == 0xa0)
			depth++;
		if ((p & 0xfc) == 0xc0)
			depth--;
		assert_true(depth >= 0);
		pos += 1 + n;
	}
	assert_int_equal(pos, r->len);
	assert_int_equal(depth, 0);
}

static const struct imp_ctrl *report_ctrl(const struct imp_dev *d,
					  uint8_t intf)
{
	size_t i;

	for (i = 0; i < d->n_ctrls; i++)
		if (d->ctrls[i].setup[0] == 0x81 &&
		    d->ctrls[i].setup[1] == 0x06 &&
		    d->ctrls[i].setup[3] == 0x22 &&
		    d->ctrls[i].setup[4] == intf)
			return &d->ctrls[i];
	return NULL;
}

/* ---- usbutils 007: decimal wTotalLength; an FT232R's real bytes ---- */

static void test_ftdi_007(void **state)
{
	static const uint8_t device[] = {
		0x12, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x08,
		0x03, 0x04, 0x01, 0x60, 0x00, 0x06, 0x01, 0x02, 0x03, 0x01,
	};
	static const uint8_t config[] = {
		0x09, 0x02, 0x20, 0x00, 0x01, 0x01, 0x00, 0xa0, 0x2d,
		0x09, 0x04, 0x00, 0x00, 0x02, 0xff, 0xff, 0xff, 0x02,
		0x07, 0x05, 0x81, 0x02, 0x40, 0x00, 0x00,
		0x07, 0x05, 0x02, 0x02, 0x40, 0x00, 0x00,
	};
	struct imp_error err = { "" };
	struct imp_set set;
	struct imp_dev *d;

	(void)state;
	assert_int_equal(read_file_set(DATA "ftdi-007.txt", &set, &err), 0);
	assert_int_equal(set.n, 1);
	d = set.devs[0];
	assert_string_equal(d->where, DATA "ftdi-007.txt:1");
	assert_int_equal(d->busnum, 3);
	assert_int_equal(d->devnum, 4);
	assert_int_equal(d->speed, USBIP_SPEED_UNKNOWN);
	assert_int_equal(d->device.len, sizeof(device));
	assert_memory_equal(d->device.data, device, sizeof(device));
	assert_int_equal(d->n_configs, 1);
	assert_int_equal(d->configs[0].len, sizeof(config));
	assert_memory_equal(d->configs[0].data, config, sizeof(config));
	assert_string_equal(d->strings[1], "FTDI");
	assert_string_equal(d->strings[2], "FT232R USB UART");
	assert_string_equal(d->strings[3], "A50285BI");
	assert_int_equal(d->n_langids, 0);
	assert_int_equal(d->n_ctrls, 0);
	assert_int_equal(d->n_notes, 0);	/* nothing guessed */
	assert_emits(&set, d);
	imp_set_free(&set);
}

/* ---- 017: hex wTotalLength, CDC functional descriptors, lsusb -t ---- */

static void test_cdc_acm_017(void **state)
{
	static const uint8_t config[] = {
		0x09, 0x02, 0x4b, 0x00, 0x02, 0x01, 0x00, 0x80, 0x7d,
		/* IAD: interfaces 0-1, CDC ACM */
		0x08, 0x0b, 0x00, 0x02, 0x02, 0x02, 0x00, 0x00,
		0x09, 0x04, 0x00, 0x00, 0x01, 0x02, 0x02, 0x00, 0x04,
		0x05, 0x24, 0x00, 0x20, 0x01,		/* header 1.20 */
		0x05, 0x24, 0x01, 0x00, 0x01,		/* call management */
		0x04, 0x24, 0x02, 0x02,			/* ACM */
		0x05, 0x24, 0x06, 0x00, 0x01,		/* union 0 -> 1 */
		0x07, 0x05, 0x81, 0x03, 0x08, 0x00, 0x10,
		0x09, 0x04, 0x01, 0x00, 0x02, 0x0a, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x02, 0x02, 0x40, 0x00, 0x00,
		0x07, 0x05, 0x82, 0x02, 0x40, 0x00, 0x00,
	};
	struct imp_error err = { "" };
	struct imp_set set;
	struct imp_dev *d;

	(void)state;
	assert_int_equal(read_file_set(DATA "cdc-acm-017.txt", &set, &err), 0);
	assert_int_equal(set.n, 1);
	d = set.devs[0];
	assert_int_equal(d->busnum, 1);
	assert_int_equal(d->devnum, 12);
	assert_int_equal(d->configs[0].len, sizeof(config));
	assert_memory_equal(d->configs[0].data, config, sizeof(config));
	assert_string_equal(d->strings[4], "Board CDC");
	/* from the `lsusb -t` lines after the dump */
	assert_int_equal(d->speed, USBIP_SPEED_FULL);
	assert_true(d->driver_known);
	assert_string_equal(d->driver[0], "cdc_acm");
	assert_string_equal(d->driver[1], "cdc_acm");
	assert_null(d->driver[2]);
	assert_emits(&set, d);
	imp_set_free(&set);
}

/* ---- UAC1's "tSamFreq[ 0]  48000": a field name holding a blank ---- */

static void test_uac1_samfreq(void **state)
{
	/* FORMAT_TYPE I: PCM, 2 channels, 2 bytes, 16 bits, one rate */
	static const uint8_t format[] = {
		0x0b, 0x24, 0x02, 0x01, 0x02, 0x02, 0x10, 0x01,
		0x80, 0xbb, 0x00,
	};
	struct imp_error err = { "" };
	const struct imp_blob *c;
	struct imp_set set;
	size_t pos, found = 0;

	(void)state;
	assert_int_equal(read_file_set(DATA "uac1-014.txt", &set, &err), 0);
	assert_int_equal(set.n, 1);
	c = &set.devs[0]->configs[0];
	assert_chain(c);
	for (pos = 0; pos + sizeof(format) <= c->len; pos += c->data[pos])
		if (!memcmp(c->data + pos, format, sizeof(format)))
			found++;
	assert_int_equal(found, 2);	/* the speaker's and the microphone's */
	assert_emits(&set, set.devs[0]);
	imp_set_free(&set);
}

/* ---- a report descriptor lsusb could read: rebuilt from its items ---- */

static void test_hid_report_items(void **state)
{
	static const uint8_t report[] = {
		0x05, 0x01, 0x09, 0x02, 0xa1, 0x01, 0x09, 0x01, 0xa1, 0x00,
		0x05, 0x09, 0x19, 0x01, 0x29, 0x03, 0x15, 0x00, 0x25, 0x01,
		0x95, 0x03, 0x75, 0x01, 0x81, 0x02, 0x95, 0x01, 0x75, 0x05,
		0x81, 0x03, 0x05, 0x01, 0x09, 0x30, 0x09, 0x31, 0x15, 0x81,
		0x25, 0x7f, 0x75, 0x08, 0x95, 0x02, 0x81, 0x06, 0xc0, 0xc0,
	};
	static const uint8_t setup[8] = { 0x81, 0x06, 0x00, 0x22, 0x00, 0x00,
					  sizeof(report), 0x00 };
	struct imp_error err = { "" };
	const struct imp_ctrl *c;
	struct imp_set set;
	struct imp_dev *d;

	(void)state;
	assert_int_equal(read_file_set(DATA "hid-mouse-report.txt", &set, &err),
			 0);
	d = set.devs[0];
	assert_int_equal(d->n_ctrls, 1);
	c = &d->ctrls[0];
	assert_memory_equal(c->setup, setup, 8);
	assert_false(c->stall);
	assert_int_equal(c->data.len, sizeof(report));
	assert_memory_equal(c->data.data, report, sizeof(report));
	assert_string_equal(c->where, DATA "hid-mouse-report.txt:46");
	/* bcdDevice 72.00 */
	assert_int_equal(d->device.data[13], 0x72);
	assert_int_equal(d->n_notes, 0);
	assert_emits(&set, d);
	imp_set_free(&set);
}

/* ---- real, usbutils 015: SuperSpeed root hub, BOS, hubs, UNAVAILABLE ---- */

static void test_linuxhw_015(void **state)
{
	/* drivers/usb/core/hcd.c ss_rh_config_descriptor, with the remote
	 * wakeup bit the kernel sets; wBytesPerInterval there is 2, which
	 * lsusb does not print: the reader takes wMaxPacketSize (noted) */
	static const uint8_t ss_rh_config[] = {
		0x09, 0x02, 0x1f, 0x00, 0x01, 0x01, 0x00, 0xe0, 0x00,
		0x09, 0x04, 0x00, 0x00, 0x01, 0x09, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x81, 0x03, 0x04, 0x00, 0x0c,
		0x06, 0x30, 0x00, 0x00, 0x04, 0x00,
	};
	static const uint8_t bos[] = {
		0x05, 0x0f, 0x23, 0x00, 0x02,
		/* SuperSpeed: LTM, 5 Gbps, full speed and up */
		0x0a, 0x10, 0x03, 0x02, 0x08, 0x00, 0x01, 0x00, 0x00, 0x00,
		/* SuperSpeedPlus: its reserved fields are not printed */
		0x14, 0x10, 0x0a, 0x00, 0x01, 0x00, 0x00, 0x00, 0x04, 0x11,
		0x00, 0x00, 0x34, 0x00, 0x05, 0x00, 0xb4, 0x00, 0x05, 0x00,
	};
	static const uint8_t ss_hub[] = {
		0x0c, 0x2a, 0x02, 0x0a, 0x00, 0x32, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00,
	};
	/* usb2_rh_dev_descriptor and hs_rh_config_descriptor, Linux 6.2 */
	static const uint8_t hs_rh_device[] = {
		0x12, 0x01, 0x00, 0x02, 0x09, 0x00, 0x01, 0x40,
		0x6b, 0x1d, 0x02, 0x00, 0x02, 0x06, 0x03, 0x02, 0x01, 0x01,
	};
	static const uint8_t hs_rh_config[] = {
		0x09, 0x02, 0x19, 0x00, 0x01, 0x01, 0x00, 0xe0, 0x00,
		0x09, 0x04, 0x00, 0x00, 0x01, 0x09, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x81, 0x03, 0x04, 0x00, 0x0c,
	};
	struct imp_error err = { "" };
	const struct imp_ctrl *c;
	struct imp_set set;
	struct imp_dev *d;
	size_t i;

	(void)state;
	assert_int_equal(read_file_set(DATA "linuxhw-debian-015.txt", &set,
				       &err), 0);
	assert_int_equal(set.n, 3);

	d = set.devs[0];
	assert_int_equal(d->busnum, 4);
	assert_int_equal(d->devnum, 1);
	assert_memory_equal(d->configs[0].data, ss_rh_config,
			    sizeof(ss_rh_config));
	assert_int_equal(d->bos.len, sizeof(bos));
	assert_memory_equal(d->bos.data, bos, sizeof(bos));
	assert_true(has_note(d, "wBytesPerInterval"));
	assert_int_equal(d->n_ctrls, 1);	/* GET_DESCRIPTOR(hub, 0x2a) */
	c = &d->ctrls[0];
	assert_int_equal(c->setup[0], 0xa0);
	assert_int_equal(c->setup[3], 0x2a);
	assert_int_equal(c->data.len, sizeof(ss_hub));
	assert_memory_equal(c->data.data, ss_hub, sizeof(ss_hub));
	assert_string_equal(d->strings[3],
			    "Linux 6.2.9-4-liquorix-amd64 xhci-hcd");

	/* a keyboard + mouse whose reports lsusb could not read; linuxhw
	 * put "--" where bNumConfigurations was */
	d = set.devs[1];
	assert_int_equal(d->device.data[17], 1);
	assert_true(has_note(d, "bNumConfigurations"));
	assert_int_equal(d->n_ctrls, 2);
	c = report_ctrl(d, 0);
	assert_non_null(c);
	assert_int_equal(c->setup[6] | c->setup[7] << 8, 65);
	assert_int_equal(c->data.len, 65);
	assert_memory_equal(c->data.data, "\x05\x01\x09\x06\xa1\x01", 6);
	assert_report(&c->data);
	c = report_ctrl(d, 1);
	assert_non_null(c);
	assert_int_equal(c->data.len, 191);
	assert_memory_equal(c->data.data, "\x05\x01\x09\x02\xa1\x01", 6);
	assert_report(&c->data);
	assert_true(has_note(d, "UNAVAILABLE"));
	assert_true(has_note(d, "boot keyboard"));
	assert_true(has_note(d, "boot mouse"));
	/* the HID descriptors still announce what is served */
	assert_int_equal(d->configs[0].data[25] | d->configs[0].data[26] << 8,
			 65);

	d = set.devs[2];
	assert_memory_equal(d->device.data, hs_rh_device, sizeof(hs_rh_device));
	assert_memory_equal(d->configs[0].data, hs_rh_config,
			    sizeof(hs_rh_config));
	assert_int_equal(d->ctrls[0].setup[3], 0x29);
	assert_memory_equal(d->ctrls[0].data.data,
			    "\x09\x29\x04\x0a\x00\x0a\x00\x00\xff", 9);

	for (i = 0; i < set.n; i++) {
		assert_chain(&set.devs[i]->configs[0]);
		assert_emits(&set, set.devs[i]);
	}
	imp_set_free(&set);
}

/* ---- real, usbutils 008: a UVC webcam, a hub with a qualifier ---- */

static void test_linuxhw_008(void **state)
{
	static const uint8_t uvc_status_ep[] = {
		0x07, 0x05, 0x83, 0x03, 0x10, 0x00, 0x06,
		0x05, 0x25, 0x03, 0x10, 0x00,	/* not printed by lsusb */
	};
	static const uint8_t qualifier[] = {
		0x0a, 0x06, 0x00, 0x02, 0xef, 0x02, 0x01, 0x40, 0x01, 0x00,
	};
	struct imp_error err = { "" };
	const struct imp_blob *c;
	const struct imp_ctrl *k;
	struct imp_set set;
	struct imp_dev *d;
	size_t i, pos;
	bool found = false;

	(void)state;
	assert_int_equal(read_file_set(DATA "linuxhw-rosa-008.txt", &set,
				       &err), 0);
	assert_int_equal(set.n, 3);

	d = set.devs[0];
	c = &d->configs[0];
	assert_int_equal(c->len, 790);		/* as printed */
	assert_chain(c);
	for (pos = 0; pos + sizeof(uvc_status_ep) <= c->len; pos++)
		if (!memcmp(c->data + pos, uvc_status_ep,
			    sizeof(uvc_status_ep)))
			found = true;
	assert_true(found);
	assert_true(has_note(d, "05 25 03"));
	/* the VideoControl header: bcdUVC 1.00, wTotalLength 78, 15 MHz */
	assert_memory_equal(c->data + 26,
			    "\x0d\x24\x01\x00\x01\x4e\x00\xc0\xe1\xe4\x00\x01\x01",
			    13);
	/* the extension unit's GUID, as lsusb prints it mixed-endian */
	assert_memory_equal(c->data + 81,
			    "\x12\x29\xa7\x8c\x47\xb4\x40\x94\xb0\xce", 10);
	assert_int_equal(d->qualifier.len, sizeof(qualifier));
	assert_memory_equal(d->qualifier.data, qualifier, sizeof(qualifier));
	assert_string_equal(d->strings[4], "USB Camera");

	d = set.devs[1];			/* Genesys hub */
	assert_int_equal(d->device.data[12], 0x37);	/* bcdDevice 85.37 */
	assert_int_equal(d->device.data[13], 0x85);
	assert_int_equal(d->qualifier.len, 10);
	assert_memory_equal(d->ctrls[0].data.data,
			    "\x09\x29\x04\xed\x00\x32\x64\x1e\xff", 9);

	d = set.devs[2];			/* Chicony: three HID interfaces */
	assert_int_equal(d->n_ctrls, 3);
	for (i = 0; i < 3; i++) {
		k = report_ctrl(d, i);
		assert_non_null(k);
		assert_report(&k->data);
	}
	assert_int_equal(report_ctrl(d, 1)->data.len, 351);
	k = report_ctrl(d, 2);			/* not boot: vendor-defined */
	assert_int_equal(k->data.len, 26);
	assert_memory_equal(k->data.data, "\x06\x00\xff", 3);
	assert_true(has_note(d, "vendor-defined"));

	for (i = 0; i < set.n; i++)
		assert_emits(&set, set.devs[i]);
	imp_set_free(&set);
}

/* ---- a paste cut inside an endpoint: completed, and said so ---- */

static void test_truncated(void **state)
{
	static const uint8_t config[] = {
		0x09, 0x02, 0x20, 0x00, 0x01, 0x01, 0x00, 0x80, 0xfa,
		/* bNumEndpoints 3 printed; 2 in the paste */
		0x09, 0x04, 0x00, 0x00, 0x02, 0xff, 0xff, 0xff, 0x02,
		0x07, 0x05, 0x81, 0x02, 0x00, 0x02, 0x00,
		/* cut after bEndpointAddress: as the endpoint before */
		0x07, 0x05, 0x02, 0x02, 0x00, 0x02, 0x00,
	};
	struct imp_error err = { "" };
	struct imp_set set;
	struct imp_dev *d;

	(void)state;
	assert_int_equal(read_file_set(DATA "truncated.txt", &set, &err), 0);
	assert_int_equal(set.n, 2);
	assert_int_equal(set.devs[0]->n_notes, 0);
	d = set.devs[1];
	assert_string_equal(d->where, DATA "truncated.txt:68");
	assert_int_equal(d->configs[0].len, sizeof(config));
	assert_memory_equal(d->configs[0].data, config, sizeof(config));
	assert_true(has_note(d, "truncated.txt:114: endpoint 0x02 cut short"));
	assert_true(has_note(d, "bNumEndpoints 3, but 2"));
	assert_true(has_note(d, "wTotalLength 39 printed, 32 bytes"));
	assert_emits(&set, set.devs[0]);
	assert_emits(&set, d);
	imp_set_free(&set);
}

/* ---- errors: file:line and what is wrong ---- */

static void assert_fails(const char *path, const char *text,
			 const char *where, const char *what)
{
	struct imp_error err = { "" };
	struct imp_set set;
	int ret;

	ret = path ? read_file_set(path, &set, &err) :
		     read_text(text, &set, &err);
	assert_int_equal(ret, -EINVAL);
	if (!strstr(err.msg, where) || !strstr(err.msg, what)) {
		fprintf(stderr, "unexpected: %s\n", err.msg);
		fail();
	}
	assert_int_equal(set.n, 0);
	imp_set_free(&set);
}

static void test_errors(void **state)
{
	(void)state;
	assert_fails(DATA "binary.bin", NULL, DATA "binary.bin:4:",
		     "binary data (byte 0x00");
	assert_fails(DATA "no-device.txt", NULL, DATA "no-device.txt:1:",
		     "lsusb -v");
	assert_fails(DATA "cut-in-device.txt", NULL, DATA "cut-in-device.txt:1:",
		     "cut short before idVendor/idProduct");
	assert_fails(NULL, "", "paste:1:", "no `Device Descriptor:`");
	assert_fails(NULL, "hello\nworld\n", "paste:1:", "not `lsusb -v`");
}

static void test_sniff(void **state)
{
	static const char *const yes[] = {
		DATA "ftdi-007.txt", DATA "cdc-acm-017.txt",
		DATA "linuxhw-rosa-008.txt", DATA "truncated.txt",
		/* plain lsusb: taken, so that the reader says -v is missing */
		DATA "no-device.txt",
	};
	static const char *const no[] = {
		DATA "binary.bin", DATA "../three.devices",
	};
	struct imp_error err;
	uint8_t *buf;
	size_t len, i;

	(void)state;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		assert_int_equal(imp_read_file(yes[i], &buf, &len, &err), 0);
		assert_true(imp_reader_lsusb.sniff(yes[i], buf, len));
		free(buf);
	}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		assert_int_equal(imp_read_file(no[i], &buf, &len, &err), 0);
		assert_false(imp_reader_lsusb.sniff(no[i], buf, len));
		free(buf);
	}
	assert_string_equal(imp_reader_lsusb.name, "lsusb");
}

/* ---- layout quirks, one inline paste each ---- */

#define DEV_HEAD(bcd, mps)						\
	"Device Descriptor:\n"						\
	"  bLength                18\n"					\
	"  bDescriptorType         1\n"					\
	"  bcdUSB               " bcd "\n"				\
	"  bDeviceClass            0 \n"				\
	"  bDeviceSubClass         0 \n"				\
	"  bDeviceProtocol         0 \n"				\
	"  bMaxPacketSize0      " mps "\n"				\
	"  idVendor           0x1234 \n"				\
	"  idProduct          0x5678 \n"				\
	"  bcdDevice            f0.33\n"				\
	"  iManufacturer           0 \n"				\
	"  iProduct                0 \n"				\
	"  iSerial                 0 \n"				\
	"  bNumConfigurations      1\n"

#define CFG_HEAD(total, power)						\
	"  Configuration Descriptor:\n"					\
	"    bLength                 9\n"				\
	"    bDescriptorType         2\n"				\
	"    wTotalLength       " total "\n"				\
	"    bNumInterfaces          1\n"				\
	"    bConfigurationValue     1\n"				\
	"    iConfiguration          0 \n"				\
	"    bmAttributes         0x80\n"				\
	"      (Bus Powered)\n"						\
	"    MaxPower              " power "\n"

#define INTF(cls, neps)							\
	"    Interface Descriptor:\n"					\
	"      bLength                 9\n"				\
	"      bDescriptorType         4\n"				\
	"      bInterfaceNumber        0\n"				\
	"      bAlternateSetting       0\n"				\
	"      bNumEndpoints           " neps "\n"			\
	"      bInterfaceClass       " cls "\n"				\
	"      bInterfaceSubClass      0 \n"				\
	"      bInterfaceProtocol      0 \n"				\
	"      iInterface              0 \n"

#define EP(addr, attr, wmax)						\
	"      Endpoint Descriptor:\n"					\
	"        bLength                 7\n"				\
	"        bDescriptorType         5\n"				\
	"        bEndpointAddress     " addr "  EP 1 IN\n"		\
	"        bmAttributes            " attr "\n"			\
	"          Transfer Type            Bulk\n"			\
	"        wMaxPacketSize     " wmax "  1x 1024 bytes\n"		\
	"        bInterval               0\n"

/* UVC's status endpoint printed with 9 bytes (bRefresh, bSynchAddress):
 * the class-specific endpoint lsusb leaves out is put back after it, its
 * wMaxTransferSize the endpoint's wMaxPacketSize */
static void test_uvc_status_ep_9(void **state)
{
	static const char paste[] =
		DEV_HEAD("2.00", " 64")
		CFG_HEAD("0x0020", "100mA")
		"    Interface Descriptor:\n"
		"      bLength                 9\n"
		"      bDescriptorType         4\n"
		"      bInterfaceNumber        0\n"
		"      bAlternateSetting       0\n"
		"      bNumEndpoints           1\n"
		"      bInterfaceClass        14 Video\n"
		"      bInterfaceSubClass      1 Video Control\n"
		"      bInterfaceProtocol      0 \n"
		"      iInterface              0 \n"
		"      Endpoint Descriptor:\n"
		"        bLength                 9\n"
		"        bDescriptorType         5\n"
		"        bEndpointAddress     0x83  EP 3 IN\n"
		"        bmAttributes            3\n"
		"          Transfer Type            Interrupt\n"
		"        wMaxPacketSize     0x0010  1x 16 bytes\n"
		"        bInterval               6\n"
		"        bRefresh                0\n"
		"        bSynchAddress           0\n";
	static const uint8_t tail[] = {
		0x09, 0x05, 0x83, 0x03, 0x10, 0x00, 0x06, 0x00, 0x00,
		0x05, 0x25, 0x03, 0x10, 0x00,
	};
	struct imp_error err = { "" };
	const struct imp_blob *c;
	struct imp_set set;

	(void)state;
	assert_int_equal(read_text(paste, &set, &err), 0);
	c = &set.devs[0]->configs[0];
	assert_int_equal(c->len, 32);
	assert_memory_equal(c->data + 18, tail, sizeof(tail));
	assert_true(has_note(set.devs[0], "05 25 03"));
	imp_set_free(&set);
}

static void test_quirks(void **state)
{
	/* a SuperSpeed bulk endpoint with streams (its companion folded
	 * into the endpoint), MaxPower in 8 mA units, 018's negotiated
	 * speed line, bcd with a letter, CDC union with two slaves, raw
	 * bytes lsusb did not decode */
	static const char ss[] =
		"Bus 002 Device 003: ID 1234:5678 Foo\n"
		"Negotiated speed: SuperSpeed (5Gbps)\n"
		DEV_HEAD("3.20", "  9")
		CFG_HEAD("0x002a", "896mA")
		INTF("255 Vendor", "1")
		"      CDC Union:\n"
		"        bMasterInterface        0\n"
		"        bSlaveInterface         1 2 \n"
		"      ** UNRECOGNIZED:  05 24 ab 01 02\n"
		EP("0x81", "2", "0x0400")
		"        bMaxBurst              15\n"
		"        MaxStreams             32\n";
	static const uint8_t config[] = {
		0x09, 0x02, 0x2a, 0x00, 0x01, 0x01, 0x00, 0x80, 0x70,
		0x09, 0x04, 0x00, 0x00, 0x01, 0xff, 0x00, 0x00, 0x00,
		0x06, 0x24, 0x06, 0x00, 0x01, 0x02,
		0x05, 0x24, 0xab, 0x01, 0x02,
		0x07, 0x05, 0x81, 0x02, 0x00, 0x04, 0x00,
		0x06, 0x30, 0x0f, 0x05, 0x00, 0x00,
	};
	/* quoted-printable mail, and an old hex layout "0x 9" */
	static const char qp[] =
		"Bus 001 Device 009: ID 1234:5678 Foo=20\n"
		DEV_HEAD("2.00", " 64")
		CFG_HEAD("18", "100mA")
		"    Interface Descriptor:=\n"
		"\n"
		"      bLength                 9\n"
		"      bDescriptorType         4\n"
		"      bInterfaceNumber        0\n"
		"      bAlternateSetting       0\n"
		"      bNumEndpoints           0\n"
		"      bInterfaceClass       255 Vendor=20\n"
		"      bInterfaceSubClass      0=20\n"
		"      bInterfaceProtocol      0=20\n"
		"      iInterface              1 Caf=C3=A9 =3D bar\n";
	/* DFU's functional descriptor shares HID's type, 0x21 */
	static const char dfu[] =
		DEV_HEAD("1.10", " 64")
		CFG_HEAD("27", "100mA")
		INTF("254 Application Specific Interface", "0")
		"      Device Firmware Upgrade Interface Descriptor:\n"
		"        bLength                             9\n"
		"        bDescriptorType                    33\n"
		"        bmAttributes                        7\n"
		"          Will Not Detach\n"
		"          Manifestation Tolerant\n"
		"          Upload Supported\n"
		"          Download Supported\n"
		"        wDetachTimeout                    255 milliseconds\n"
		"        wTransferSize                    2048 bytes\n"
		"        bcdDFUVersion                   1.1a\n";
	static const char quoted[] =
		"> Bus 001 Device 002: ID 1234:5678 Foo\n"
		"> Device Descriptor:\n"
		">   bLength                18\n"
		">   bDescriptorType         1\n"
		">   bcdUSB               2.00\n"
		">   bMaxPacketSize0        64\n"
		">   idVendor           0x1234 \n"
		">   idProduct          0x5678 \n"
		">   bNumConfigurations      1\n"
		">   Configuration Descriptor:\n"
		">     bLength                 9\n"
		">     bDescriptorType         2\n"
		">     wTotalLength       0x0012\n"
		">     bNumInterfaces          1\n"
		">     bConfigurationValue     1\n"
		">     bmAttributes         0x80\n"
		">     MaxPower              100mA\n"
		"> " INTF("255 Vendor", "0");
	struct imp_error err = { "" };
	struct imp_set set;
	struct imp_dev *d;

	(void)state;
	assert_int_equal(read_text(dfu, &set, &err), 0);
	d = set.devs[0];
	assert_int_equal(d->configs[0].len, 27);
	assert_memory_equal(d->configs[0].data + 18,
			    "\x09\x21\x07\xff\x00\x00\x08\x1a\x01", 9);
	assert_int_equal(d->n_ctrls, 0);
	assert_int_equal(d->n_notes, 0);
	assert_emits(&set, d);
	imp_set_free(&set);

	assert_int_equal(read_text(ss, &set, &err), 0);
	d = set.devs[0];
	assert_int_equal(d->speed, USBIP_SPEED_SUPER);
	assert_int_equal(d->device.data[12], 0x33);
	assert_int_equal(d->device.data[13], 0xf0);
	assert_int_equal(d->configs[0].len, sizeof(config));
	assert_memory_equal(d->configs[0].data, config, sizeof(config));
	assert_emits(&set, d);
	imp_set_free(&set);

	assert_int_equal(read_text(qp, &set, &err), 0);
	d = set.devs[0];
	assert_int_equal(d->configs[0].len, 18);
	assert_int_equal(d->configs[0].data[8], 50);
	assert_string_equal(d->strings[1], "Caf\xc3\xa9 = bar");
	assert_true(has_note(d, "quoted-printable"));
	assert_emits(&set, d);
	imp_set_free(&set);

	/* quoted in a reply: "> " before every line */
	assert_int_equal(read_text(quoted, &set, &err), 0);
	assert_int_equal(set.n, 1);
	assert_int_equal(set.devs[0]->busnum, 1);
	assert_int_equal(set.devs[0]->configs[0].len, 18);
	imp_set_free(&set);
}

/* HID reports made up to any announced length stay valid */
static void test_synthesized_reports(void **state)
{
	static const char head[] =
		DEV_HEAD("1.10", "  8")
		CFG_HEAD("34", "100mA")
		"    Interface Descriptor:\n"
		"      bLength                 9\n"
		"      bDescriptorType         4\n"
		"      bInterfaceNumber        0\n"
		"      bAlternateSetting       0\n"
		"      bNumEndpoints           1\n"
		"      bInterfaceClass         3 Human Interface Device\n"
		"      bInterfaceSubClass      %u \n"
		"      bInterfaceProtocol      %u \n"
		"      iInterface              0 \n"
		"        HID Device Descriptor:\n"
		"          bLength                 9\n"
		"          bDescriptorType        33\n"
		"          bcdHID               1.11\n"
		"          bCountryCode            0 Not supported\n"
		"          bNumDescriptors         1\n"
		"          bDescriptorType        34 Report\n"
		"          wDescriptorLength     %u\n"
		"         Report Descriptors: \n"
		"           ** UNAVAILABLE **\n"
		EP("0x81", "3", "0x0008");
	static const unsigned int lens[] = { 1, 5, 8, 20, 21, 22, 49, 50, 51,
					     52, 62, 63, 64, 65, 66, 300 };
	struct imp_error err = { "" };
	const struct imp_ctrl *c;
	struct imp_set set;
	unsigned int p, i, want;
	char text[4096];

	(void)state;
	for (p = 0; p <= 2; p++) {
		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			snprintf(text, sizeof(text), head, p ? 1 : 0, p,
				 lens[i]);
			assert_int_equal(read_text(text, &set, &err), 0);
			c = report_ctrl(set.devs[0], 0);
			assert_non_null(c);
			assert_report(&c->data);
			/* at least the smallest valid report */
			want = lens[i] < 8 ? 8 : lens[i];
			assert_int_equal(c->data.len, want);
			assert_int_equal(c->setup[6] | c->setup[7] << 8, want);
			/* wDescriptorLength announces what is served */
			assert_int_equal(set.devs[0]->configs[0].data[25] |
					 set.devs[0]->configs[0].data[26] << 8,
					 want);
			assert_emits(&set, set.devs[0]);
			imp_set_free(&set);
		}
	}
}

/* every collected real dump reads and goes through emit.c's round trip */
static void test_device_corpus(void **state)
{
	struct imp_error err = { "" };
	struct imp_set set;
	glob_t g;
	size_t i, j;

	(void)state;
	if (glob("tests/data/devices/*.lsusb", 0, NULL, &g)) {
		skip();
		return;
	}
	for (i = 0; i < g.gl_pathc; i++) {
		if (read_file_set(g.gl_pathv[i], &set, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			fail();
		}
		assert_true(set.n >= 1);
		for (j = 0; j < set.n; j++) {
			size_t k;

			for (k = 0; k < set.devs[j]->n_configs; k++)
				assert_chain(&set.devs[j]->configs[k]);
			assert_emits(&set, set.devs[j]);
		}
		imp_set_free(&set);
	}
	globfree(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ftdi_007),
		cmocka_unit_test(test_cdc_acm_017),
		cmocka_unit_test(test_uac1_samfreq),
		cmocka_unit_test(test_hid_report_items),
		cmocka_unit_test(test_linuxhw_015),
		cmocka_unit_test(test_linuxhw_008),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_sniff),
		cmocka_unit_test(test_uvc_status_ep_9),
		cmocka_unit_test(test_quirks),
		cmocka_unit_test(test_synthesized_reports),
		cmocka_unit_test(test_device_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
