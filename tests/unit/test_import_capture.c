// SPDX-License-Identifier: GPL-2.0
/*
 * test_import_capture.c - the capture and debugfs readers of usbrig-import:
 * gadgets/import/devices.c, usbmon.c, pcap.c and the pairing they share
 * (urb.c).
 *
 * The text inputs are files in tests/data/import/, written in the exact
 * format the kernel prints (runs from the repository root).  The pcap
 * inputs are written here, through libpcap itself (pcap_open_dead +
 * pcap_dump), from usbmon and USBPcap headers built field by field.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "import/import.h"

#define DATA		"tests/data/import/"
#define FTDI_1U		DATA "ftdi-probe.1u"
#define TWO_0U		DATA "two-devices.0u"
#define THREE_DEVICES	DATA "three.devices"

/* ---- the devices the inputs describe ---- */

/* FT232R device descriptor */
static const uint8_t ft_dev[18] = {
	0x12, 0x01, 0x00, 0x02,		/* bLength, DEVICE, bcdUSB 2.00 */
	0x00, 0x00, 0x00, 0x08,		/* class per interface, mps0 8 */
	0x03, 0x04, 0x01, 0x60,		/* 0403:6001 */
	0x00, 0x06, 0x01, 0x02,		/* bcdDevice 6.00, iManufacturer 1,
					 * iProduct 2 */
	0x03, 0x01,			/* iSerialNumber 3, 1 configuration */
};

/* its configuration, as the device sends it (iInterface 2) */
static const uint8_t ft_cfg[32] = {
	0x09, 0x02, 0x20, 0x00, 0x01, 0x01, 0x00, 0xa0, 0x2d,
					/* 32 bytes, 1 interface, value 1,
					 * remote wakeup, 90 mA */
	0x09, 0x04, 0x00, 0x00, 0x02, 0xff, 0xff, 0xff, 0x02,
					/* interface 0: 2 endpoints, vendor */
	0x07, 0x05, 0x81, 0x02, 0x40, 0x00, 0x00,	/* bulk IN 64 */
	0x07, 0x05, 0x02, 0x02, 0x40, 0x00, 0x00,	/* bulk OUT 64 */
};

/* a CDC ACM device: 67 bytes of configuration, more than usbmon text
 * keeps (32) */
static const uint8_t acm_dev[18] = {
	0x12, 0x01, 0x00, 0x02, 0x02, 0x00, 0x00, 0x40,	/* CDC, mps0 64 */
	0x09, 0x12, 0x02, 0x00,				/* 1209:0002 */
	0x00, 0x01, 0x01, 0x02, 0x00, 0x01,
};

static const uint8_t acm_cfg[67] = {
	0x09, 0x02, 0x43, 0x00, 0x02, 0x01, 0x00, 0x80, 0x32,
	0x09, 0x04, 0x00, 0x00, 0x01, 0x02, 0x02, 0x01, 0x00,	/* comm */
	0x05, 0x24, 0x00, 0x10, 0x01,		/* CDC header 1.10 */
	0x05, 0x24, 0x01, 0x00, 0x01,		/* call management */
	0x04, 0x24, 0x02, 0x02,			/* ACM */
	0x05, 0x24, 0x06, 0x00, 0x01,		/* union 0 -> 1 */
	0x07, 0x05, 0x83, 0x03, 0x10, 0x00, 0x0a,	/* interrupt IN 16 */
	0x09, 0x04, 0x01, 0x00, 0x02, 0x0a, 0x00, 0x00, 0x00,	/* data */
	0x07, 0x05, 0x81, 0x02, 0x40, 0x00, 0x00,
	0x07, 0x05, 0x02, 0x02, 0x40, 0x00, 0x00,
};

/* ---- helpers ---- */

static void set_clear(struct imp_set *set)
{
	imp_set_free(set);
}

static int read_file_with(const struct imp_reader *r, const char *path,
			  struct imp_set *set, struct imp_error *err)
{
	uint8_t *buf;
	size_t len;
	int ret;

	memset(set, 0, sizeof(*set));
	memset(err, 0, sizeof(*err));
	assert_int_equal(imp_read_file(path, &buf, &len, err), 0);
	ret = r->read(path, buf, len, set, err);
	free(buf);
	return ret;
}

static int read_text(const struct imp_reader *r, const char *path,
		     const char *text, struct imp_set *set,
		     struct imp_error *err)
{
	memset(set, 0, sizeof(*set));
	memset(err, 0, sizeof(*err));
	return r->read(path, (const uint8_t *)text, strlen(text), set, err);
}

static struct imp_dev *dev_at(struct imp_set *set, int bus, int dev)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (set->devs[i]->busnum == bus && set->devs[i]->devnum == dev)
			return set->devs[i];
	fail_msg("no device %d:%d among %zu", bus, dev, set->n);
	return NULL;
}

static void assert_blob(const struct imp_blob *b, const uint8_t *want,
			size_t len)
{
	assert_int_equal(b->len, len);
	assert_memory_equal(b->data, want, len);
}

static void assert_setup(const struct imp_ctrl *c, uint8_t rt, uint8_t req,
			 uint16_t value, uint16_t index, uint16_t length)
{
	const uint8_t want[8] = {
		rt, req, value & 0xff, value >> 8, index & 0xff, index >> 8,
		length & 0xff, length >> 8,
	};

	assert_memory_equal(c->setup, want, 8);
}

static bool has_note(const struct imp_dev *d, const char *a, const char *b)
{
	size_t i;

	for (i = 0; i < d->n_notes; i++)
		if (strstr(d->notes[i], a) && (!b || strstr(d->notes[i], b)))
			return true;
	return false;
}

/* ---- usbmon text ---- */

/* FTDI ftdi-probe.1u: the kernel enumerates, ftdi_sio probes with vendor
 * requests (one STALLs), the tty reads bulk IN. */
static void check_ftdi(struct imp_dev *d, const char *path, bool frames)
{
	char where[128];

	assert_int_equal(d->speed, USBIP_SPEED_UNKNOWN);
	assert_blob(&d->device, ft_dev, 18);
	assert_true(d->n_configs >= 1);
	assert_blob(&d->configs[0], ft_cfg, 32);
	assert_int_equal(d->n_langids, 1);
	assert_int_equal(d->langids[0], 0x0409);
	assert_int_equal(d->string_raw[1].len, 10);	/* "FTDI" */
	assert_memory_equal(d->string_raw[1].data,
			    "\x0a\x03" "F\0T\0D\0I\0", 10);
	assert_int_equal(d->string_raw[2].len, 32);	/* FT232R USB UART */
	assert_int_equal(d->string_raw[3].len, 18);	/* A50285BI */

	/* the vendor requests in capture order; SET_CONFIGURATION and the
	 * descriptors are not rules */
	assert_int_equal(d->n_ctrls, 4);
	assert_setup(&d->ctrls[0], 0xc0, 0x0a, 0, 0, 1);  /* latency timer */
	assert_false(d->ctrls[0].stall);
	assert_blob(&d->ctrls[0].data, (const uint8_t *)"\x10", 1);
	assert_setup(&d->ctrls[1], 0x40, 0x09, 1, 0, 0);  /* set latency */
	assert_false(d->ctrls[1].stall);
	assert_int_equal(d->ctrls[1].data.len, 0);
	assert_setup(&d->ctrls[2], 0xc0, 0x90, 0, 0x40, 2);	/* STALL */
	assert_true(d->ctrls[2].stall);
	assert_int_equal(d->ctrls[2].data.len, 0);
	assert_setup(&d->ctrls[3], 0xc0, 0x05, 0, 0, 2);  /* modem status */
	assert_blob(&d->ctrls[3].data, (const uint8_t *)"\x01\x60", 2);

	/* bulk IN: two packets with data; the killed URB is no packet */
	assert_int_equal(d->n_seqs, 1);
	assert_int_equal(d->seqs[0].ep, 0x81);
	assert_int_equal(d->seqs[0].n_packets, 2);
	assert_blob(&d->seqs[0].packets[0], (const uint8_t *)"\x01\x60", 2);
	assert_blob(&d->seqs[0].packets[1],
		    (const uint8_t *)"\x01\x60OK\r\n", 6);
	if (path) {
		if (frames)
			snprintf(where, sizeof(where), "%s: frame ", path);
		else
			snprintf(where, sizeof(where), "%s:17", path);
		assert_non_null(strstr(d->ctrls[0].where, where));
	}
}

static void test_usbmon_ftdi_probe(void **state)
{
	struct imp_set set;
	struct imp_error err;

	(void)state;
	assert_int_equal(read_file_with(&imp_reader_usbmon, FTDI_1U, &set,
					&err), 0);
	assert_int_equal(set.n, 1);
	assert_int_equal(set.devs[0]->busnum, 1);
	assert_int_equal(set.devs[0]->devnum, 5);
	assert_string_equal(set.devs[0]->where, FTDI_1U ":1");
	check_ftdi(set.devs[0], FTDI_1U, false);
	assert_false(set.devs[0]->truncated);
	set_clear(&set);
}

/* 0u: two buses, two devices, interleaved; the ACM configuration is read
 * as 9 bytes, then 67 of which usbmon text keeps 32 */
static void test_usbmon_two_devices(void **state)
{
	struct imp_set set;
	struct imp_error err;
	struct imp_dev *a;

	(void)state;
	assert_int_equal(read_file_with(&imp_reader_usbmon, TWO_0U, &set,
					&err), 0);
	assert_int_equal(set.n, 2);
	check_ftdi(dev_at(&set, 1, 5), NULL, false);
	assert_false(dev_at(&set, 1, 5)->truncated);

	a = dev_at(&set, 2, 3);
	assert_blob(&a->device, acm_dev, 18);
	assert_int_equal(a->n_configs, 1);
	assert_blob(&a->configs[0], acm_cfg, 32);	/* the longest reply */
	assert_true(a->truncated);
	assert_true(has_note(a, "configuration 1", "kept 32 of the 67"));
	/* class requests in order: OUT ones without data */
	assert_int_equal(a->n_ctrls, 3);
	assert_setup(&a->ctrls[0], 0x21, 0x22, 0, 0, 0);
	assert_setup(&a->ctrls[1], 0x21, 0x20, 0, 0, 7);
	assert_int_equal(a->ctrls[1].data.len, 0);
	assert_setup(&a->ctrls[2], 0xa1, 0x21, 0, 0, 7);
	assert_blob(&a->ctrls[2].data,
		    (const uint8_t *)"\x80\x25\0\0\0\0\x08", 7);
	/* interrupt IN */
	assert_int_equal(a->n_seqs, 1);
	assert_int_equal(a->seqs[0].ep, 0x83);
	assert_int_equal(a->seqs[0].n_packets, 1);
	assert_int_equal(a->seqs[0].packets[0].len, 10);
	set_clear(&set);
}

/* the older 1t address (no bus), a setup the kernel could not capture,
 * isochronous lines (skipped), a submission error, a cut reply */
static void test_usbmon_forms(void **state)
{
	static const char text[] =
		"c7a3bfc0 0 C Ci:003:00 0 1 = 01\n"
		"c7a3c0c0 1 S Ci:003:00 s 80 06 0100 0000 0040 64 <\n"
		"c7a3c0c0 2 C Ci:003:00 0 18 = 12010002 00000008 03040160 00060102 0301\n"
		"\n"
		"c7a3c1c0 3 S Ci:003:00 Z __ __ ____ ____ ____ 2 <\n"
		"c7a3c1c0 4 C Ci:003:00 0 2 = 0160\n"
		"c7a3c2c0 5 S Zi:003:03 -115:1:100 1 -18:0:192 192 <\n"
		"c7a3c2c0 6 C Zi:003:03 0:1:100:0 1 0:0:192 192 = 00112233\n"
		"c7a3c3c0 7 S Ci:003:00 s c1 01 0000 0000 0040 64 <\n"
		"c7a3c3c0 8 E Ci:003:00 -19 0\n"
		"c7a3c4c0 9 S Ci:003:00 s c0 20 0000 0000 0040 64 <\n"
		"c7a3c4c0 10 C Ci:003:00 0 40 = 00010203 04050607 08090a0b 0c0d0e0f 10111213 14151617 18191a1b 1c1d1e1f\r\n"
		"c7a3c5c0 11 S Ci:003:00 s 81 06 2200 0000 0041 65 <\n"
		"c7a3c5c0 12 C Ci:003:00 0 4 = 05010902\n"
		"c7a3c6c0 13 S Ci:003:00 s 80 06 0300 0000 00ff 255 <\n";
	struct imp_set set;
	struct imp_error err;
	struct imp_dev *d;

	(void)state;
	assert_int_equal(read_text(&imp_reader_usbmon, "t.1t", text, &set,
				   &err), 0);
	assert_int_equal(set.n, 1);
	d = set.devs[0];
	assert_int_equal(d->busnum, -1);
	assert_int_equal(d->devnum, 3);
	assert_blob(&d->device, ft_dev, 18);
	assert_true(has_note(d, "t.1t:5", "setup packet"));
	/* the reply cut at 32 bytes is a rule with those 32, noted */
	assert_int_equal(d->n_ctrls, 2);
	assert_setup(&d->ctrls[0], 0xc0, 0x20, 0, 0, 0x40);
	assert_int_equal(d->ctrls[0].data.len, 32);
	assert_true(has_note(d, "t.1t:11", "40 bytes, the capture kept 32"));
	/* GET_DESCRIPTOR to an interface (a HID report descriptor) */
	assert_setup(&d->ctrls[1], 0x81, 0x06, 0x2200, 0, 0x41);
	assert_blob(&d->ctrls[1].data, (const uint8_t *)"\x05\x01\x09\x02", 4);
	assert_int_equal(d->n_seqs, 0);
	/* the capture started after one transfer and ended before another */
	assert_true(has_note(d, "1 control completion without", NULL));
	assert_true(has_note(d, "1 control transfer without", NULL));
	set_clear(&set);
}

/* the read fails with want in its message */
static void text_error(const struct imp_reader *r, const char *path,
		       const char *text, const char *want)
{
	struct imp_set set;
	struct imp_error err;

	assert_int_equal(read_text(r, path, text, &set, &err), -EINVAL);
	if (!strstr(err.msg, want))
		fail_msg("\"%s\" lacks \"%s\"", err.msg, want);
	set_clear(&set);
}

static void usbmon_error(const char *text, const char *want)
{
	text_error(&imp_reader_usbmon, "bad.1u", text, want);
}

static void test_usbmon_errors(void **state)
{
	(void)state;
	usbmon_error("c0 1 S Ci:1:002:0 s 80 06 0100 0000 0012 18 <\n"
		     "c0 2 C Ci:1:002:0 zz 0\n", "bad.1u:2: bad status word");
	usbmon_error("c0 1 S Ci:1:002:0 s 80 6 0100 0000 0012 18 <\n",
		     "bad.1u:1: bad setup packet");
	usbmon_error("c0 1 C Ci:1:002:0 0 2 = 010203\n",
		     "bad.1u:1: more data bytes than the data length");
	usbmon_error("c0 1 C Ci:1:002:0 0 2 = 012\n", "bad.1u:1: bad data word");
	usbmon_error("c0 1 C Ci:1:200:0 0 0\n", "device address above 127");
	usbmon_error("c0 1 C Xi:1:002:0 0 0\n", "bad address word");
	usbmon_error("\x7f" "ELF\x02\x01\x01\0\0\0", "bad.1u:1: binary data");
	usbmon_error("\nhello, world\n", "bad.1u:2: not a usbmon text event");
}

/* a shell prompt and a remark pasted around the events: skipped, noted;
 * events whose timestamp the reporter cut */
static void test_usbmon_pasted(void **state)
{
	static const char text[] =
		"# cat /sys/kernel/debug/usb/usbmon/2u\n"
		"  ffff8881 1 S Ci:2:004:0 s c0 05 0000 0000 0002 2 <\n"
		"<<< 6 seconds delay >>>\n"
		"  ffff8881 2 C Ci:2:004:0 0 2 = 0160\n"
		"ffff8882 S Co:2:004:0 s 40 9a 1312 b282 0000 0\n"	/* no time */
		"ffff8882 C Co:2:004:0 0 0\n";
	struct imp_set set;
	struct imp_error err;

	(void)state;
	assert_int_equal(read_text(&imp_reader_usbmon, "p.txt", text, &set,
				   &err), 0);
	assert_int_equal(set.n, 1);
	assert_true(imp_reader_usbmon.sniff("p.txt", (const uint8_t *)text,
					    strlen(text)));
	assert_int_equal(set.devs[0]->n_ctrls, 2);
	assert_setup(&set.devs[0]->ctrls[1], 0x40, 0x9a, 0x1312, 0xb282, 0);
	assert_true(has_note(set.devs[0], "p.txt:1: 2 lines", "skipped"));
	set_clear(&set);
}

/* ---- pcap: written through libpcap ---- */

struct cap {
	char path[64];
	pcap_t *dead;
	pcap_dumper_t *dump;
	int linktype;
	unsigned int n;
};

static void cap_open(struct cap *c, int linktype)
{
	int fd;

	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "/tmp/usbrig-capture-XXXXXX");
	fd = mkstemp(c->path);
	assert_true(fd >= 0);
	close(fd);
	c->linktype = linktype;
	c->dead = pcap_open_dead(linktype, 65535);
	assert_non_null(c->dead);
	c->dump = pcap_dump_open(c->dead, c->path);
	assert_non_null(c->dump);
}

static void cap_frame(struct cap *c, const uint8_t *p, size_t len)
{
	struct pcap_pkthdr h = { .caplen = len, .len = len };

	h.ts.tv_sec = 1700000000;
	h.ts.tv_usec = ++c->n;
	pcap_dump((u_char *)c->dump, &h, p);
}

static void cap_close(struct cap *c)
{
	pcap_dump_close(c->dump);
	pcap_close(c->dead);
}

static int cap_read(struct cap *c, struct imp_set *set, struct imp_error *err)
{
	return read_file_with(&imp_reader_pcap, c->path, set, err);
}

/* one usbmon event, header in host order (struct usbmon_packet) */
static void mon_event(struct cap *c, uint64_t id, char type, uint8_t xfer,
		      uint8_t ep, uint8_t dev, uint16_t bus,
		      const uint8_t *setup, int32_t status, uint32_t length,
		      const uint8_t *data, uint32_t data_len)
{
	size_t hdr = c->linktype == 189 ? 48 : 64;
	uint8_t p[64 + 256] = { 0 };

	assert_true(data_len <= 256);
	memcpy(p + 0, &id, 8);
	p[8] = type;
	p[9] = xfer;
	p[10] = ep;
	p[11] = dev;
	memcpy(p + 12, &bus, 2);
	p[14] = setup ? 0 : '-';		/* flag_setup */
	p[15] = data_len ? 0 : (ep & 0x80 ? '<' : '>');	/* flag_data */
	memcpy(p + 28, &status, 4);
	memcpy(p + 32, &length, 4);
	memcpy(p + 36, &data_len, 4);		/* len_cap */
	if (setup)
		memcpy(p + 40, setup, 8);
	if (data_len)
		memcpy(p + hdr, data, data_len);
	cap_frame(c, p, hdr + data_len);
}

static uint64_t next_id = 0xffff888100000000ull;

static void mon_ctrl(struct cap *c, uint16_t bus, uint8_t dev,
		     const uint8_t setup[8], int32_t status,
		     const uint8_t *reply, uint32_t len)
{
	uint8_t ep = setup[0] & 0x80;
	uint32_t wlen = setup[6] | setup[7] << 8;

	next_id += 0x100;
	mon_event(c, next_id, 'S', 2, ep, dev, bus, setup, -115, wlen, NULL, 0);
	mon_event(c, next_id, 'C', 2, ep, dev, bus, NULL, status, len,
		  reply, len);
}

static void mon_bulk_in(struct cap *c, uint16_t bus, uint8_t dev,
			uint8_t ep, int32_t status, const uint8_t *data,
			uint32_t len)
{
	next_id += 0x100;
	mon_event(c, next_id, 'S', 3, ep, dev, bus, NULL, -115, 512, NULL, 0);
	mon_event(c, next_id, 'C', 3, ep, dev, bus, NULL, status, len, data,
		  len);
}

#define SETUP(rt, req, v, i, l) ((const uint8_t []){ rt, req, (v) & 0xff, \
	(v) >> 8, (i) & 0xff, (i) >> 8, (l) & 0xff, (l) >> 8 })

/* the FTDI of ftdi-probe.1u, as a binary capture */
static void mon_ftdi(struct cap *c, uint16_t bus, uint8_t dev)
{
	mon_ctrl(c, bus, dev, SETUP(0x80, 6, 0x0100, 0, 18), 0, ft_dev, 18);
	mon_ctrl(c, bus, dev, SETUP(0x80, 6, 0x0200, 0, 9), 0, ft_cfg, 9);
	mon_ctrl(c, bus, dev, SETUP(0x80, 6, 0x0200, 0, 32), 0, ft_cfg, 32);
	mon_ctrl(c, bus, dev, SETUP(0x80, 6, 0x0300, 0, 255), 0,
		 (const uint8_t *)"\x04\x03\x09\x04", 4);
	mon_ctrl(c, bus, dev, SETUP(0x80, 6, 0x0301, 0x409, 255), 0,
		 (const uint8_t *)"\x0a\x03" "F\0T\0D\0I\0", 10);
	mon_ctrl(c, bus, dev, SETUP(0x80, 6, 0x0302, 0x409, 255), 0,
		 (const uint8_t *)"\x20\x03" "F\0T\0" "2\0" "3\0" "2\0R\0 \0"
		 "U\0S\0B\0 \0U\0A\0R\0T\0", 32);
	mon_ctrl(c, bus, dev, SETUP(0x80, 6, 0x0303, 0x409, 255), 0,
		 (const uint8_t *)"\x12\x03" "A\0" "5\0" "0\0" "2\0" "8\0"
		 "5\0B\0I\0", 18);
	mon_ctrl(c, bus, dev, SETUP(0x00, 9, 1, 0, 0), 0, NULL, 0);
	mon_ctrl(c, bus, dev, SETUP(0xc0, 0x0a, 0, 0, 1), 0,
		 (const uint8_t *)"\x10", 1);
	mon_ctrl(c, bus, dev, SETUP(0x40, 0x09, 1, 0, 0), 0, NULL, 0);
	mon_ctrl(c, bus, dev, SETUP(0xc0, 0x90, 0, 0x40, 2), -EPIPE, NULL, 0);
	mon_ctrl(c, bus, dev, SETUP(0xc0, 0x05, 0, 0, 2), 0,
		 (const uint8_t *)"\x01\x60", 2);
	mon_bulk_in(c, bus, dev, 0x81, 0, (const uint8_t *)"\x01\x60", 2);
	mon_bulk_in(c, bus, dev, 0x81, 0,
		    (const uint8_t *)"\x01\x60OK\r\n", 6);
	mon_bulk_in(c, bus, dev, 0x81, -ENOENT, NULL, 0);
}

/* 220 (Wireshark, tcpdump -i usbmonN): the FTDI probe, and an ACM device
 * whose configuration is read as 9 bytes then all 67, kept whole */
static void test_pcap_mmapped(void **state)
{
	struct imp_set set;
	struct imp_error err;
	struct imp_dev *a;
	struct cap c;
	char where[96];

	(void)state;
	cap_open(&c, 220);
	mon_ftdi(&c, 1, 5);
	mon_ctrl(&c, 2, 3, SETUP(0x80, 6, 0x0100, 0, 64), 0, acm_dev, 18);
	mon_ctrl(&c, 2, 3, SETUP(0x80, 6, 0x0200, 0, 9), 0, acm_cfg, 9);
	mon_ctrl(&c, 2, 3, SETUP(0x80, 6, 0x0200, 0, 67), 0, acm_cfg, 67);
	cap_close(&c);

	assert_int_equal(cap_read(&c, &set, &err), 0);
	assert_int_equal(set.n, 2);
	check_ftdi(dev_at(&set, 1, 5), c.path, true);
	snprintf(where, sizeof(where), "%s: frame 17", c.path);
	assert_string_equal(dev_at(&set, 1, 5)->ctrls[0].where, where);
	a = dev_at(&set, 2, 3);
	assert_blob(&a->device, acm_dev, 18);
	assert_blob(&a->configs[0], acm_cfg, 67);
	assert_false(a->truncated);
	assert_int_equal(a->speed, USBIP_SPEED_UNKNOWN);
	set_clear(&set);
	unlink(c.path);
}

/* 189: the 48-byte header; a reply cut by the snap length */
static void test_pcap_linux_48(void **state)
{
	struct imp_set set;
	struct imp_error err;
	struct imp_dev *d;
	struct cap c;

	(void)state;
	cap_open(&c, 189);
	mon_ftdi(&c, 4, 9);
	/* a configuration reply of 67 bytes of which 40 were kept */
	next_id += 0x100;
	mon_event(&c, next_id, 'S', 2, 0x80, 9, 4, SETUP(0x80, 6, 0x0201, 0, 67),
		  -115, 67, NULL, 0);
	mon_event(&c, next_id, 'C', 2, 0x80, 9, 4, NULL, 0, 67, acm_cfg, 40);
	cap_close(&c);

	assert_int_equal(cap_read(&c, &set, &err), 0);
	assert_int_equal(set.n, 1);
	d = set.devs[0];
	assert_int_equal(d->busnum, 4);
	assert_int_equal(d->devnum, 9);
	check_ftdi(d, c.path, true);
	assert_int_equal(d->n_configs, 2);
	assert_blob(&d->configs[1], acm_cfg, 40);
	assert_true(d->truncated);
	assert_true(has_note(d, "configuration 2", "kept 40 of the 67"));
	set_clear(&set);
	unlink(c.path);
}

/* 249: Windows USBPcap, packed little-endian, control transfers in
 * stages */
static void usbpcap_event(struct cap *c, uint64_t irp, uint32_t status,
			  bool done, uint16_t dev, uint8_t ep, uint8_t xfer,
			  int stage, const uint8_t *data, uint32_t len)
{
	uint8_t p[28 + 256] = { 0 };
	size_t hdr = stage >= 0 ? 28 : 27;
	size_t i;

	assert_true(len <= 256);
	p[0] = hdr;				/* headerLen */
	for (i = 0; i < 8; i++)
		p[2 + i] = irp >> (8 * i);	/* irpId */
	for (i = 0; i < 4; i++)
		p[10 + i] = status >> (8 * i);	/* USBD_STATUS */
	p[14] = 0x08;				/* CONTROL_TRANSFER, unused */
	p[16] = done;				/* info: PDO -> FDO */
	p[17] = 1;				/* bus 1 */
	p[19] = dev;
	p[21] = ep;
	p[22] = xfer;
	for (i = 0; i < 4; i++)
		p[23 + i] = len >> (8 * i);	/* dataLength */
	if (stage >= 0)
		p[27] = stage;
	if (len)
		memcpy(p + hdr, data, len);
	cap_frame(c, p, hdr + len);
}

static void test_pcap_usbpcap(void **state)
{
	uint8_t setup_data[8 + 7];
	struct imp_set set;
	struct imp_error err;
	struct imp_dev *d;
	struct cap c;

	(void)state;
	cap_open(&c, 249);
	/* USBPcap 1.5+: SETUP (setup + OUT data), COMPLETE (IN data) */
	usbpcap_event(&c, 0x10, 0, false, 6, 0x80, 2, 0,
		      SETUP(0x80, 6, 0x0100, 0, 18), 8);
	usbpcap_event(&c, 0x10, 0, true, 6, 0x80, 2, 3, ft_dev, 18);
	/* before 1.5: SETUP, DATA (IN data), STATUS */
	usbpcap_event(&c, 0x20, 0, false, 6, 0x80, 2, 0,
		      SETUP(0x80, 6, 0x0200, 0, 32), 8);
	usbpcap_event(&c, 0x20, 0, true, 6, 0x80, 2, 1, ft_cfg, 32);
	usbpcap_event(&c, 0x20, 0, true, 6, 0x80, 2, 2, NULL, 0);
	/* a vendor OUT with data, then a STALL (USBD_STATUS_STALL_PID) */
	memcpy(setup_data, SETUP(0x40, 0x03, 0x4138, 0, 7), 8);
	memcpy(setup_data + 8, "\x01\x02\x03\x04\x05\x06\x07", 7);
	usbpcap_event(&c, 0x30, 0, false, 6, 0x00, 2, 0, setup_data, 15);
	usbpcap_event(&c, 0x30, 0, true, 6, 0x00, 2, 3, NULL, 0);
	usbpcap_event(&c, 0x40, 0, false, 6, 0x80, 2, 0,
		      SETUP(0xc0, 0x90, 0, 0x40, 2), 8);
	usbpcap_event(&c, 0x40, 0xc0000004, true, 6, 0x80, 2, 2, NULL, 0);
	/* IRP information: not a transfer */
	usbpcap_event(&c, 0x50, 0, false, 6, 0x00, 0xfe, -1, NULL, 0);
	/* bulk IN: submission, completion with the data */
	usbpcap_event(&c, 0x60, 0, false, 6, 0x81, 3, -1, NULL, 0);
	usbpcap_event(&c, 0x60, 0, true, 6, 0x81, 3, -1,
		      (const uint8_t *)"\x01\x60hi", 4);
	cap_close(&c);

	assert_int_equal(cap_read(&c, &set, &err), 0);
	assert_int_equal(set.n, 1);
	d = set.devs[0];
	assert_int_equal(d->busnum, 1);
	assert_int_equal(d->devnum, 6);
	assert_blob(&d->device, ft_dev, 18);
	assert_blob(&d->configs[0], ft_cfg, 32);
	assert_int_equal(d->n_ctrls, 2);
	assert_setup(&d->ctrls[0], 0x40, 0x03, 0x4138, 0, 7);
	assert_false(d->ctrls[0].stall);
	assert_setup(&d->ctrls[1], 0xc0, 0x90, 0, 0x40, 2);
	assert_true(d->ctrls[1].stall);
	assert_int_equal(d->n_seqs, 1);
	assert_blob(&d->seqs[0].packets[0], (const uint8_t *)"\x01\x60hi", 4);
	/* nothing left unpaired: the STATUS after DATA is no second
	 * completion */
	assert_false(has_note(d, "without a submission", NULL));
	set_clear(&set);
	unlink(c.path);
}

/* ---- files libpcap cannot write: built byte by byte ---- */

static void put_be(uint8_t *p, uint64_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = v >> (8 * (n - 1 - i));
}

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = v >> (8 * i);
}

static void write_file(const char *path, const uint8_t *p, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* a usbmon header as a machine of the given byte order wrote it */
static size_t mon_bytes(uint8_t *p, bool be, uint64_t id, char type,
			const uint8_t *setup, int32_t status, uint32_t length,
			const uint8_t *data, uint32_t data_len)
{
	void (*put)(uint8_t *, uint64_t, size_t) = be ? put_be : put_le;

	memset(p, 0, 64);
	put(p + 0, id, 8);
	p[8] = type;
	p[9] = 2;			/* control */
	p[10] = 0x80;			/* endpoint 0 IN */
	p[11] = 7;			/* device 7 */
	put(p + 12, 3, 2);		/* bus 3 */
	p[14] = setup ? 0 : '-';
	p[15] = data_len ? 0 : '<';
	put(p + 28, (uint32_t)status, 4);
	put(p + 32, length, 4);
	put(p + 36, data_len, 4);
	if (setup)
		memcpy(p + 40, setup, 8);	/* wire order, never swapped */
	if (data_len)
		memcpy(p + 64, data, data_len);
	return 64 + data_len;
}

/* 220 written on a big-endian machine: libpcap turns the usbmon header
 * into host order (swap_pseudo_headers()); the reader relies on that */
static void test_pcap_other_endian(void **state)
{
	uint8_t f[24 + 2 * (16 + 64) + 18] = { 0 }, *p = f;
	char path[] = "/tmp/usbrig-capture-XXXXXX";
	struct imp_set set;
	struct imp_error err;
	size_t n;
	int fd;

	(void)state;
	put_be(p, 0xa1b2c3d4, 4);		/* magic, big-endian */
	put_be(p + 4, 2, 2);
	put_be(p + 6, 4, 2);			/* version 2.4 */
	put_be(p + 16, 65535, 4);		/* snaplen */
	put_be(p + 20, 220, 4);			/* LINKTYPE_USB_LINUX_MMAPPED */
	p += 24;
	n = mon_bytes(p + 16, true, 0x1122334455667788ull, 'S',
		      SETUP(0x80, 6, 0x0100, 0, 18), -115, 18, NULL, 0);
	put_be(p + 8, n, 4);			/* caplen */
	put_be(p + 12, n, 4);			/* len */
	p += 16 + n;
	n = mon_bytes(p + 16, true, 0x1122334455667788ull, 'C', NULL, 0, 18,
		      ft_dev, 18);
	put_be(p + 8, n, 4);
	put_be(p + 12, n, 4);
	p += 16 + n;
	assert_int_equal(p - f, sizeof(f));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, f, sizeof(f));

	assert_int_equal(read_file_with(&imp_reader_pcap, path, &set, &err), 0);
	assert_int_equal(set.n, 1);
	assert_int_equal(set.devs[0]->busnum, 3);
	assert_int_equal(set.devs[0]->devnum, 7);
	assert_blob(&set.devs[0]->device, ft_dev, 18);
	set_clear(&set);
	unlink(path);
}

/* pcapng (Wireshark's default): section header, interface description,
 * enhanced packet blocks, little-endian */
static size_t ng_epb(uint8_t *p, const uint8_t *frame, size_t len)
{
	size_t pad = (len + 3) & ~(size_t)3, total = 32 + pad;

	memset(p, 0, total);
	put_le(p, 6, 4);			/* Enhanced Packet Block */
	put_le(p + 4, total, 4);
	put_le(p + 20, len, 4);			/* captured */
	put_le(p + 24, len, 4);			/* original */
	memcpy(p + 28, frame, len);
	put_le(p + 28 + pad, total, 4);
	return total;
}

static void test_pcapng(void **state)
{
	uint8_t f[28 + 20 + 2 * (32 + 64 + 20)] = { 0 }, *p = f;
	char path[] = "/tmp/usbrig-capture-XXXXXX";
	uint8_t frame[64 + 18];
	struct imp_set set;
	struct imp_error err;
	size_t n;
	int fd;

	(void)state;
	put_le(p, 0x0a0d0d0a, 4);		/* Section Header Block */
	put_le(p + 4, 28, 4);
	put_le(p + 8, 0x1a2b3c4d, 4);		/* byte-order magic */
	put_le(p + 12, 1, 2);			/* version 1.0 */
	put_le(p + 16, UINT64_MAX, 8);		/* section length unknown */
	put_le(p + 24, 28, 4);
	p += 28;
	put_le(p, 1, 4);			/* Interface Description Block */
	put_le(p + 4, 20, 4);
	put_le(p + 8, 220, 2);			/* LINKTYPE_USB_LINUX_MMAPPED */
	put_le(p + 16, 20, 4);
	p += 20;
	n = mon_bytes(frame, false, 0x42, 'S', SETUP(0x80, 6, 0x0100, 0, 18),
		      -115, 18, NULL, 0);
	p += ng_epb(p, frame, n);
	n = mon_bytes(frame, false, 0x42, 'C', NULL, 0, 18, ft_dev, 18);
	p += ng_epb(p, frame, n);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, f, p - f);

	assert_true(imp_reader_pcap.sniff(path, f, p - f));
	assert_int_equal(read_file_with(&imp_reader_pcap, path, &set, &err), 0);
	assert_int_equal(set.n, 1);
	assert_blob(&set.devs[0]->device, ft_dev, 18);
	set_clear(&set);
	unlink(path);
}

static void pcap_error(struct cap *c, const char *want)
{
	struct imp_set set;
	struct imp_error err;

	assert_int_equal(cap_read(c, &set, &err), -EINVAL);
	if (!strstr(err.msg, want))
		fail_msg("\"%s\" lacks \"%s\"", err.msg, want);
	assert_non_null(strstr(err.msg, c->path));
	set_clear(&set);
	unlink(c->path);
}

/* a capture cut in the middle of its third frame */
static void test_pcap_truncated(void **state)
{
	struct cap c;
	long size;
	FILE *f;

	(void)state;
	cap_open(&c, 220);
	mon_ctrl(&c, 1, 5, SETUP(0x80, 6, 0x0100, 0, 18), 0, ft_dev, 18);
	mon_ctrl(&c, 1, 5, SETUP(0xc0, 0x05, 0, 0, 2), 0,
		 (const uint8_t *)"\x01\x60", 2);
	cap_close(&c);
	f = fopen(c.path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	fclose(f);
	/* 24 file header; frames of 16 + 64 (+ data): the third starts at
	 * 24 + 80 + 98 = 202 */
	assert_int_equal(size, 24 + 80 + 98 + 80 + 82);
	assert_int_equal(truncate(c.path, 202 + 16 + 30), 0);
	pcap_error(&c, ": frame 3: truncated");
}

static void test_pcap_unknown_linktype(void **state)
{
	static const uint8_t eth[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct cap c;

	(void)state;
	cap_open(&c, 1);		/* LINKTYPE_ETHERNET */
	cap_frame(&c, eth, sizeof(eth));
	cap_close(&c);
	pcap_error(&c, "link type 1 is not a USB capture: usbrig reads 189, 220, 249");
}

static void test_pcap_bad_frames(void **state)
{
	static const uint8_t junk[64] = "this is not a capture at all, just text";
	uint8_t shortp[20] = { 0 };
	struct cap c;
	FILE *f;

	(void)state;
	/* a frame shorter than its header */
	cap_open(&c, 220);
	mon_ctrl(&c, 1, 5, SETUP(0x80, 6, 0x0100, 0, 18), 0, ft_dev, 18);
	cap_frame(&c, shortp, sizeof(shortp));
	cap_close(&c);
	pcap_error(&c, ": frame 3: 20 bytes, shorter than the 64-byte usbmon header");

	cap_open(&c, 249);
	shortp[0] = 200;		/* headerLen beyond the frame */
	cap_frame(&c, shortp, sizeof(shortp));
	cap_close(&c);
	pcap_error(&c, ": frame 1: 20 bytes, shorter than the 27-byte USBPcap header");

	/* not a capture */
	cap_open(&c, 220);
	cap_close(&c);
	f = fopen(c.path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	fclose(f);
	pcap_error(&c, "not a pcap or pcapng capture");
}

/* ---- /sys/kernel/debug/usb/devices ---- */

static void test_devices(void **state)
{
	static const uint8_t ft_skeleton[32] = {
		0x09, 0x02, 0x20, 0x00, 0x01, 0x01, 0x00, 0xa0, 0x2d,
		0x09, 0x04, 0x00, 0x00, 0x02, 0xff, 0xff, 0xff, 0x00,
						/* iInterface: unknown, 0 */
		0x07, 0x05, 0x81, 0x02, 0x40, 0x00, 0x00,
		0x07, 0x05, 0x02, 0x02, 0x40, 0x00, 0x00,
	};
	static const uint8_t composite_dev[18] = {
		0x12, 0x01, 0x00, 0x02, 0xef, 0x02, 0x01, 0x40,
		0x09, 0x12, 0x03, 0x00, 0x00, 0x01,
		0x00, 0x02, 0x00, 0x01,		/* Product only: index 2 */
	};
	static const uint8_t composite_cfg[81] = {
		0x09, 0x02, 0x51, 0x00, 0x03, 0x01, 0x00, 0x80, 0xfa,
						/* 81 bytes, 500 mA */
		0x08, 0x0b, 0x00, 0x02, 0x02, 0x02, 0x01, 0x00,
						/* IAD before interface 0 */
		0x09, 0x04, 0x00, 0x00, 0x01, 0x02, 0x02, 0x01, 0x00,
		0x07, 0x05, 0x83, 0x03, 0x10, 0x00, 0x04,
						/* Ivl=1ms at high speed */
		0x09, 0x04, 0x01, 0x00, 0x02, 0x0a, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x81, 0x02, 0x00, 0x02, 0x00,
		0x07, 0x05, 0x02, 0x02, 0x00, 0x02, 0x00,
		0x09, 0x04, 0x02, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00,
		0x09, 0x04, 0x02, 0x01, 0x01, 0xff, 0x00, 0x00, 0x00,
		0x07, 0x05, 0x84, 0x05, 0x00, 0x14, 0x01,
						/* MxPS=3072: 3 x 1024 */
	};
	static const uint8_t hub_ep[7] = { 0x07, 0x05, 0x81, 0x03, 0x04, 0x00,
					   0x0c };	/* 256 ms: 2^11 uframes */
	struct imp_set set;
	struct imp_error err;
	struct imp_dev *d;

	(void)state;
	assert_int_equal(read_file_with(&imp_reader_devices, THREE_DEVICES,
					&set, &err), 0);
	assert_int_equal(set.n, 3);

	d = dev_at(&set, 1, 1);			/* the root hub */
	assert_string_equal(d->where, THREE_DEVICES ":2");
	assert_int_equal(d->speed, USBIP_SPEED_HIGH);
	assert_string_equal(d->strings[1], "Linux 6.1.0-13-amd64 ehci_hcd");
	assert_string_equal(d->driver[0], "hub");
	assert_int_equal(d->configs[0].len, 9 + 9 + 7);
	assert_memory_equal(d->configs[0].data + 18, hub_ep, 7);

	d = dev_at(&set, 1, 5);
	assert_int_equal(d->speed, USBIP_SPEED_FULL);
	assert_blob(&d->device, ft_dev, 18);
	assert_int_equal(d->n_configs, 1);
	assert_blob(&d->configs[0], ft_skeleton, 32);
	assert_string_equal(d->strings[1], "FTDI");
	assert_string_equal(d->strings[2], "FT232R USB UART");
	assert_string_equal(d->strings[3], "A50285BI");
	assert_true(d->driver_known);
	assert_string_equal(d->driver[0], "ftdi_sio");
	assert_null(d->driver[1]);
	assert_true(has_note(d, "1, 2, 3", NULL));
	assert_true(has_note(d, "skeleton", NULL));

	d = dev_at(&set, 1, 7);
	assert_blob(&d->device, composite_dev, 18);
	assert_blob(&d->configs[0], composite_cfg, 81);
	assert_true(d->driver_known);
	assert_null(d->driver[0]);		/* (none) */
	assert_null(d->driver[1]);
	assert_string_equal(d->driver[2], "usbtest");
	assert_true(has_note(d, "0x84", "3 transactions of 1024"));
	set_clear(&set);
}

static void devices_error(const char *text, const char *want)
{
	text_error(&imp_reader_devices, "d", text, want);
}

static void test_devices_errors(void **state)
{
#define T "T:  Bus=01 Lev=01 Prnt=01 Port=00 Cnt=01 Dev#=  5 Spd=12   MxCh= 0\n"
	(void)state;
	devices_error("D:  Ver= 2.00 Cls=00(>ifc ) Sub=00 Prot=00 MxPS= 8 #Cfgs=  1\n",
		      "d:1: a device line before the first T: line");
	devices_error("T:  Bus=01 Lev=01\n", "d:1: Dev#= missing");
	devices_error(T
		      "D:  Ver= 2.00 Cls=00(>ifc ) Sub=00 Prot=00 MxPS=999 #Cfgs=  1\n",
		      "d:2: MxPS= missing or not a decimal number up to 255");
	devices_error(T "I:* If#= 0 Alt= 0 #EPs= 2 Cls=ff(vend.) Sub=ff Prot=ff Driver=x\n",
		      "d:2: I: line outside a configuration");
	devices_error(T "Bus 001 Device 005: ID 0403:6001\n",
		      "d:2: not a devices line");
	devices_error(T "C:* #Ifs= 1 Cfg#= 1 Atr=a0 MxPwr= 90mA\n"
		      "E:  Ad=81(I) Atr=02(Bulk) MxPS=  64 Ivl=0ms\n",
		      "d:3: E: line outside an interface");
#undef T
}

/* each reader knows its own inputs and none of the others' */
static void test_sniff(void **state)
{
	static const char *const files[] = { FTDI_1U, THREE_DEVICES };
	const struct imp_reader *const readers[] = {
		&imp_reader_usbmon, &imp_reader_devices,
	};
	uint8_t *buf;
	size_t len, i, j;
	struct imp_error err;
	struct cap c;

	(void)state;
	for (i = 0; i < 2; i++) {
		assert_int_equal(imp_read_file(files[i], &buf, &len, &err), 0);
		for (j = 0; j < 2; j++)
			assert_int_equal(readers[j]->sniff(files[i], buf, len),
					 i == j);
		assert_false(imp_reader_pcap.sniff(files[i], buf, len));
		free(buf);
	}
	cap_open(&c, 220);
	mon_ctrl(&c, 1, 5, SETUP(0x80, 6, 0x0100, 0, 18), 0, ft_dev, 18);
	cap_close(&c);
	assert_int_equal(imp_read_file(c.path, &buf, &len, &err), 0);
	assert_true(imp_reader_pcap.sniff(c.path, buf, len));
	assert_false(imp_reader_usbmon.sniff(c.path, buf, len));
	assert_false(imp_reader_devices.sniff(c.path, buf, len));
	free(buf);
	unlink(c.path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usbmon_ftdi_probe),
		cmocka_unit_test(test_usbmon_two_devices),
		cmocka_unit_test(test_usbmon_forms),
		cmocka_unit_test(test_usbmon_errors),
		cmocka_unit_test(test_usbmon_pasted),
		cmocka_unit_test(test_pcap_mmapped),
		cmocka_unit_test(test_pcap_linux_48),
		cmocka_unit_test(test_pcap_usbpcap),
		cmocka_unit_test(test_pcap_other_endian),
		cmocka_unit_test(test_pcapng),
		cmocka_unit_test(test_pcap_truncated),
		cmocka_unit_test(test_pcap_unknown_linktype),
		cmocka_unit_test(test_pcap_bad_frames),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_devices_errors),
		cmocka_unit_test(test_sniff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
