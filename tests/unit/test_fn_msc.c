// SPDX-License-Identifier: GPL-2.0
/*
 * test_fn_msc.c - the msc device function in process: a script parsed
 * from text, the device runtime, and a fake host that records
 * completions.  Each test drives Bulk-Only Transport by hand (CBW on
 * bulk OUT 0x02, data and CSW on bulk IN 0x81) the way usb-storage does,
 * plus the cases Linux only meets on broken devices.
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
#include <event2/event.h>
#include <linux/usb/ch9.h>

#include "device.h"
#include "fixture.h"
#include "fn/function.h"

#define EP_IN	0x81
#define EP_OUT	0x02

/* what a test keeps besides the fake host */
struct msc_fx {
	uint32_t tag;			/* of the last CBW */
	char image[64];		/* an image file to remove, or "" */
};

static struct msc_fx *msc_of(struct fx *fx)
{
	return fx->priv;
}

static const char script_fmt[] =
	"device {\n"
	"  speed high; idVendor 0x1209; idProduct 0x0051; serial \"SN42\"\n"
	"  config { interface {\n"
	"    bInterfaceClass 8; bInterfaceSubClass 6; bInterfaceProtocol 0x50\n"
	"    endpoint { bEndpointAddress 0x81; type bulk }\n"
	"    endpoint { bEndpointAddress 0x02; type bulk }\n"
	"  } }\n"
	"  function msc {\n%s  }\n"
	"}\n";

/* script_fmt with the option lines opts into text (size bytes). */
static const char *msc_text(char *text, size_t size, const char *opts)
{
	assert_true(snprintf(text, size, script_fmt, opts) < (int)size);
	return text;
}

static void start(struct fx *fx, const char *opts)
{
	char text[2048];

	fx_start_text(fx, "t.gadget", msc_text(text, sizeof(text), opts));
}

static int setup(void **state)
{
	struct fx *fx;

	fx_setup_flags(state, FX_POISON_OUT);
	fx = *state;
	fx->priv = calloc(1, sizeof(struct msc_fx));
	return fx->priv ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	struct msc_fx *mf = msc_of(fx);

	fx_destroy(fx);
	if (mf->image[0])
		unlink(mf->image);
	free(mf);
	return 0;
}

/* A control request without data stage payload from the test. */
static struct urb *ctrl(struct fx *fx, uint8_t type, uint8_t req,
			uint16_t value, uint16_t index, uint16_t wlength)
{
	return fx_ctrl(fx, type, req, value, index, wlength, NULL);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A CBW on bulk OUT; it must be taken at once when the device waits. */
static struct urb *cbw(struct fx *fx, uint32_t h, bool in,
		       const uint8_t *cdb, uint8_t len)
{
	struct urb *urb = fx_urb_new(EP_OUT, 31);

	put32(urb->buf, 0x43425355);
	put32(urb->buf + 4, ++msc_of(fx)->tag);
	put32(urb->buf + 8, h);
	urb->buf[12] = in ? 0x80 : 0;
	urb->buf[14] = len;
	memcpy(urb->buf + 15, cdb, len);
	return fx_submit(fx, urb);
}

/* Read the CSW; returns bCSWStatus, checks signature, tag, residue. */
static int csw(struct fx *fx, uint32_t residue)
{
	struct urb *urb = fx_submit(fx, fx_urb_new(EP_IN, 13));

	assert_true(fx_is_done(fx, urb));
	assert_int_equal(urb->status, 0);
	assert_int_equal(urb->actual_length, 13);
	assert_int_equal(get32(urb->buf), 0x53425355);
	assert_int_equal(get32(urb->buf + 4), msc_of(fx)->tag);
	assert_int_equal(get32(urb->buf + 8), residue);
	return urb->buf[12];
}

/* A whole data-in command: CBW, one data URB of h bytes, CSW. */
static struct urb *cmd_in(struct fx *fx, const uint8_t *cdb, uint8_t len,
			  uint32_t h, uint32_t want, int status)
{
	struct urb *c = cbw(fx, h, true, cdb, len), *d;

	assert_true(fx_is_done(fx, c));
	assert_int_equal(c->actual_length, 31);
	d = fx_submit(fx, fx_urb_new(EP_IN, h));
	assert_true(fx_is_done(fx, d));
	assert_int_equal(d->status, 0);
	assert_int_equal(d->actual_length, want);
	if (want < h) {
		/* BOT 6.7.2 case 5: bulk IN halts after the short data */
		struct urb *s = fx_submit(fx, fx_urb_new(EP_IN, 13));

		assert_int_equal(s->status, -EPIPE);
		ctrl(fx, 0x02, USB_REQ_CLEAR_FEATURE, USB_ENDPOINT_HALT,
		     EP_IN, 0);
	}
	assert_int_equal(csw(fx, h - want), status);
	return d;
}

static void cmd_none(struct fx *fx, const uint8_t *cdb, uint8_t len,
		     int status)
{
	struct urb *c = cbw(fx, 0, false, cdb, len);

	assert_true(fx_is_done(fx, c));
	assert_int_equal(csw(fx, 0), status);
}

static void sense_is(struct fx *fx, uint8_t key, uint8_t asc, uint8_t ascq)
{
	static const uint8_t rs[6] = { 0x03, 0, 0, 0, 18, 0 };
	struct urb *d = cmd_in(fx, rs, 6, 18, 18, 0);

	assert_int_equal(d->buf[0] & 0x7f, 0x70);
	assert_int_equal(d->buf[2] & 0x0f, key);
	assert_int_equal(d->buf[12], asc);
	assert_int_equal(d->buf[13], ascq);
}

/* ---- tests ---- */

static void test_validate(void **state)
{
	static const char *const bad[] = {
		"",					/* no image, no size */
		"    size 100\n",			/* < one block */
		"    size 2G\n",			/* RAM > 1 GiB */
		"    size 1M; block-size 1000\n",
		"    size 1M; readonly maybe\n",
		"    size 1M; vendor \"123456789\"\n",
		"    size 1M; frobnicate 1\n",
		"    size 1M; interface 3\n",
	};
	char text[2048];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		fx_expect_script_error("t.gadget",
				       msc_text(text, sizeof(text), bad[i]),
				       0, 0, "function msc");
	fx_expect_script_ok("t.gadget",
			    msc_text(text, sizeof(text), "    size 64K\n"));
}

static void test_class_requests(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, "    size 1M\n");
	u = ctrl(fx, 0xa1, 0xfe, 0, 0, 1);	/* Get Max LUN */
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, 1);
	assert_int_equal(u->buf[0], 0);
	u = ctrl(fx, 0x21, 0xff, 0, 0, 0);	/* BOT reset */
	assert_int_equal(u->status, 0);
	u = ctrl(fx, 0x21, 0xff, 0, 1, 0);	/* another interface */
	assert_int_equal(u->status, -EPIPE);
	u = ctrl(fx, 0xa1, 0x42, 0, 0, 4);	/* unknown class request */
	assert_int_equal(u->status, -EPIPE);
}

static void test_inquiry_and_capacity(void **state)
{
	static const uint8_t inq[6] = { 0x12, 0, 0, 0, 36, 0 };
	static const uint8_t vpd80[6] = { 0x12, 1, 0x80, 0, 255, 0 };
	static const uint8_t rc10[10] = { 0x25 };
	static const uint8_t rc16[16] = { 0x9e, 0x10, [13] = 32 };
	static const uint8_t rfc[10] = { 0x23, [8] = 252 };
	static const uint8_t tur[6] = { 0 };
	struct fx *fx = *state;
	struct urb *d;

	start(fx, "    size 1M; block-size 4096; vendor \"ACME\"; product \"Disk\"\n");
	cmd_none(fx, tur, 6, 0);
	d = cmd_in(fx, inq, 6, 36, 36, 0);
	assert_int_equal(d->buf[0], 0x00);		/* disk, LUN there */
	assert_int_equal(d->buf[1], 0x80);		/* removable */
	assert_int_equal(d->buf[4], 31);
	assert_memory_equal(d->buf + 8, "ACME    Disk            0100", 28);
	/* Hi > D: short data, then bulk IN STALLs the first CSW read */
	d = cmd_in(fx, vpd80, 6, 255, 8, 0);
	assert_memory_equal(d->buf, "\x00\x80\x00\x04SN42", 8);
	d = cmd_in(fx, rc10, 10, 8, 8, 0);
	assert_memory_equal(d->buf, "\x00\x00\x00\xff\x00\x00\x10\x00", 8);
	d = cmd_in(fx, rc16, 16, 32, 32, 0);
	assert_memory_equal(d->buf, "\0\0\0\0\0\0\0\xff\x00\x00\x10\x00", 12);
	d = cmd_in(fx, rfc, 10, 252, 12, 0);
	assert_memory_equal(d->buf, "\0\0\0\x08\0\0\x01\0\x02\0\x10\0", 12);
}

/* After a short data-in, the CSW read STALLs once, as usb-storage's
 * "2nd try" expects; CLEAR_FEATURE(HALT) lets the CSW through. */
static void test_short_data_stalls_then_csw(void **state)
{
	static const uint8_t ms6[6] = { 0x1a, 0, 0x3f, 0, 192, 0 };
	struct fx *fx = *state;
	struct urb *c, *d, *s;

	start(fx, "    size 1M; readonly\n");
	c = cbw(fx, 192, true, ms6, 6);
	d = fx_submit(fx, fx_urb_new(EP_IN, 192));
	assert_true(fx_is_done(fx, c) && fx_is_done(fx, d));
	assert_int_equal(d->actual_length, 24);	/* header + caching page */
	assert_int_equal(d->buf[0], 23);
	assert_int_equal(d->buf[2], 0x80);		/* WP */
	assert_int_equal(d->buf[4], 0x08);		/* caching page */
	assert_int_equal(d->buf[6], 0x04);		/* WCE */
	s = fx_submit(fx, fx_urb_new(EP_IN, 13));
	assert_int_equal(s->status, -EPIPE);
	ctrl(fx, 0x02, USB_REQ_CLEAR_FEATURE, USB_ENDPOINT_HALT, EP_IN, 0);
	assert_int_equal(csw(fx, 192 - 24), 0);
}

static void test_unsupported_opcode_sense(void **state)
{
	static const uint8_t odd[10] = { 0xc7, 1, 2, 3 };
	static const uint8_t ms_bad[6] = { 0x1a, 0, 0x1c, 0, 192, 0 };
	struct fx *fx = *state;
	struct urb *c, *d;

	start(fx, "    size 1M\n");
	/* no data, H 0: fails, sense says invalid opcode */
	cmd_none(fx, odd, 10, 1);
	sense_is(fx, 0x5, 0x20, 0x00);
	/* sense is cleared by REQUEST SENSE */
	sense_is(fx, 0x0, 0x00, 0x00);
	/* with Hi > 0 and nothing to send, the data stage STALLs */
	c = cbw(fx, 192, true, ms_bad, 6);
	d = fx_submit(fx, fx_urb_new(EP_IN, 192));
	assert_true(fx_is_done(fx, c));
	assert_int_equal(d->status, -EPIPE);
	ctrl(fx, 0x02, USB_REQ_CLEAR_FEATURE, USB_ENDPOINT_HALT, EP_IN, 0);
	assert_int_equal(csw(fx, 192), 1);
	sense_is(fx, 0x5, 0x24, 0x00);
}

/* A CDB shorter than its opcode's group (6, 10, 12 bytes) is refused
 * with INVALID FIELD IN CDB, not run with zeros for its missing bytes. */
static void test_cdb_shorter_than_its_group(void **state)
{
	static const uint8_t rd6[6] = { 0x08, 0, 0, 0, 1, 0 };
	static const uint8_t rd10[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	static const uint8_t luns[12] = { 0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 16 };
	static const uint8_t rc16[16] = { 0x9e, 0x10, 0, 0, 0, 0, 0, 0,
					  0, 0, 0, 0, 0, 32 };
	static const uint8_t vendor[1] = { 0xc0 };
	struct fx *fx = *state;

	start(fx, "    size 1M\n");
	cmd_none(fx, rd6, 1, 1);
	sense_is(fx, 0x5, 0x24, 0x00);
	cmd_none(fx, rd10, 6, 1);
	sense_is(fx, 0x5, 0x24, 0x00);
	cmd_none(fx, luns, 10, 1);
	sense_is(fx, 0x5, 0x24, 0x00);
	cmd_none(fx, rc16, 12, 1);
	sense_is(fx, 0x5, 0x24, 0x00);
	/* a vendor group's opcode has no known length: unsupported */
	cmd_none(fx, vendor, 1, 1);
	sense_is(fx, 0x5, 0x20, 0x00);
	/* the same REPORT LUNS whole: one LUN, 8 bytes of header + 8 */
	cmd_in(fx, luns, 12, 16, 16, 0);
}

static void test_write_read_image(void **state)
{
	struct fx *fx = *state;
	uint8_t w10[10] = { 0x2a, 0, 0, 0, 0, 3, 0, 0, 2, 0 };
	uint8_t r10[10] = { 0x28, 0, 0, 0, 0, 3, 0, 0, 2, 0 };
	uint8_t sync10[10] = { 0x35 };
	uint8_t vfy[10] = { 0x2f, 0x02, 0, 0, 0, 3, 0, 0, 2, 0 };
	uint8_t file[1024], opts[128];
	struct urb *c, *o, *i1, *i2;
	FILE *f;
	int fd, k;

	strcpy(msc_of(fx)->image, "/tmp/usbrig-test-msc.XXXXXX");
	fd = mkstemp(msc_of(fx)->image);
	assert_true(fd >= 0);
	close(fd);
	snprintf((char *)opts, sizeof(opts), "    image \"%s\"; size 64K\n",
		 msc_of(fx)->image);
	start(fx, (const char *)opts);

	/* WRITE(10) of blocks 3..4: the data comes in two OUT URBs */
	c = cbw(fx, 1024, false, w10, 10);
	assert_true(fx_is_done(fx, c));
	o = fx_urb_new(EP_OUT, 600);
	for (k = 0; k < 600; k++)
		o->buf[k] = k * 7;
	fx_submit(fx, o);
	assert_int_equal(o->actual_length, 600);
	o = fx_urb_new(EP_OUT, 424);
	for (k = 600; k < 1024; k++)
		o->buf[k - 600] = k * 7;
	fx_submit(fx, o);
	assert_int_equal(o->actual_length, 424);
	assert_int_equal(csw(fx, 0), 0);
	cmd_none(fx, sync10, 10, 0);

	/* the image holds it, at 3 * 512 */
	f = fopen(msc_of(fx)->image, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	assert_int_equal(ftell(f), 65536);	/* grown to size */
	assert_int_equal(fseek(f, 1536, SEEK_SET), 0);
	assert_int_equal(fread(file, 1, 1024, f), 1024);
	fclose(f);
	for (k = 0; k < 1024; k++)
		assert_int_equal(file[k], (uint8_t)(k * 7));

	/* READ(10) back with two IN URBs submitted before the CBW: they
	 * wait (NAK), then take 512 bytes each, never more than asked */
	i1 = fx_submit(fx, fx_urb_new(EP_IN, 512));
	i2 = fx_submit(fx, fx_urb_new(EP_IN, 512));
	assert_false(fx_is_done(fx, i1));
	c = cbw(fx, 1024, true, r10, 10);
	assert_true(fx_is_done(fx, c) && fx_is_done(fx, i1) &&
		    fx_is_done(fx, i2));
	assert_int_equal(i1->actual_length, 512);
	assert_int_equal(i2->actual_length, 512);
	assert_memory_equal(i1->buf, file, 512);
	assert_memory_equal(i2->buf, file + 512, 512);
	assert_int_equal(csw(fx, 0), 0);

	/* VERIFY(10) BYTCHK 1: equal passes, different is a MISCOMPARE */
	c = cbw(fx, 1024, false, vfy, 10);
	assert_true(fx_is_done(fx, c));
	o = fx_urb_new(EP_OUT, 1024);
	memcpy(o->buf, file, 1024);
	fx_submit(fx, o);
	assert_int_equal(csw(fx, 0), 0);
	c = cbw(fx, 1024, false, vfy, 10);
	o = fx_urb_new(EP_OUT, 1024);
	memcpy(o->buf, file, 1024);
	o->buf[700] ^= 1;
	fx_submit(fx, o);
	assert_int_equal(csw(fx, 1024), 1);	/* the URB was not used */
	sense_is(fx, 0xe, 0x1d, 0x00);
}

/* A whole data-out command: CBW, one data URB of the n bytes at buf, CSW. */
static void cmd_out(struct fx *fx, const uint8_t *cdb, uint8_t len,
		    const uint8_t *buf, uint32_t n)
{
	struct urb *c = cbw(fx, n, false, cdb, len), *o;

	assert_true(fx_is_done(fx, c));
	o = fx_urb_new(EP_OUT, n);
	memcpy(o->buf, buf, n);
	fx_submit(fx, o);
	assert_int_equal(o->actual_length, n);
	assert_int_equal(csw(fx, 0), 0);
}

/* A 10-byte CDB (READ(10) 0x28, WRITE(10) 0x2a, VERIFY(10) 0x2f) in cdb */
static const uint8_t *cdb10(uint8_t *cdb, uint8_t op, uint8_t flags,
			    uint32_t lba, uint16_t count)
{
	memset(cdb, 0, 10);
	cdb[0] = op;
	cdb[1] = flags;
	cdb[2] = lba >> 24;
	cdb[3] = lba >> 16;
	cdb[4] = lba >> 8;
	cdb[5] = lba;
	cdb[7] = count >> 8;
	cdb[8] = count;
	return cdb;
}

/* VERIFY(10) BYTCHK 1 of count blocks at lba against buf: the CSW says
 * good (residue 0) or failed (a MISCOMPARE: the data not used) */
static void verify_ram(struct fx *fx, uint32_t lba, uint16_t count,
		       const uint8_t *buf, bool same)
{
	uint32_t n = count * 512u;
	uint8_t cdb[10];
	struct urb *c, *o;

	c = cbw(fx, n, false, cdb10(cdb, 0x2f, 0x02, lba, count), 10);
	assert_true(fx_is_done(fx, c));
	o = fx_urb_new(EP_OUT, n);
	memcpy(o->buf, buf, n);
	fx_submit(fx, o);
	assert_int_equal(o->actual_length, n);
	assert_int_equal(csw(fx, same ? 0 : n), same ? 0 : 1);
}

/*
 * The RAM disk is kept in 64 KiB pieces, made when first written: blocks
 * 127 and 128 of 512 bytes straddle the first two.  What is read is what
 * was written, across the seam; what was never written reads as zeros,
 * and zeros written over data replace it.
 */
static void test_write_read_ram(void **state)
{
	static const uint8_t zero[1024];
	struct fx *fx = *state;
	uint8_t data[1024], cdb[10];
	struct urb *d;
	int k;

	start(fx, "    size 1M\n");
	d = cmd_in(fx, cdb10(cdb, 0x28, 0, 127, 2), 10, 1024, 1024, 0);
	assert_memory_equal(d->buf, zero, 1024);

	for (k = 0; k < 1024; k++)
		data[k] = k * 7 + 1;
	cmd_out(fx, cdb10(cdb, 0x2a, 0, 127, 2), 10, data, 1024);
	d = cmd_in(fx, cdb10(cdb, 0x28, 0, 127, 2), 10, 1024, 1024, 0);
	assert_memory_equal(d->buf, data, 1024);
	d = cmd_in(fx, cdb10(cdb, 0x28, 0, 0, 2), 10, 1024, 1024, 0);
	assert_memory_equal(d->buf, zero, 1024);

	cmd_out(fx, cdb10(cdb, 0x2a, 0, 127, 1), 10, zero, 512);
	d = cmd_in(fx, cdb10(cdb, 0x28, 0, 127, 2), 10, 1024, 1024, 0);
	assert_memory_equal(d->buf, zero, 512);
	assert_memory_equal(d->buf + 512, data + 512, 512);
}

/*
 * A RAM disk whose size is not a whole number of pieces: 100,000 bytes,
 * 195 blocks, the last (194, at 99,328) in the second piece, which the
 * disk only partly covers.  VERIFY compares with pieces never written
 * (zeros) and with written ones, across the seam.
 */
static void test_ram_last_piece_and_verify(void **state)
{
	uint8_t data[1024], buf[1024] = { 0 }, cdb[10];
	struct fx *fx = *state;
	struct urb *d;
	int k;

	start(fx, "    size 100000\n");
	for (k = 0; k < 1024; k++)
		data[k] = k * 5 + 3;
	cmd_out(fx, cdb10(cdb, 0x2a, 0, 194, 1), 10, data, 512);
	d = cmd_in(fx, cdb10(cdb, 0x28, 0, 194, 1), 10, 512, 512, 0);
	assert_memory_equal(d->buf, data, 512);

	/* blocks 127..128 never written: zeros verify, anything else not */
	verify_ram(fx, 127, 2, buf, true);
	buf[900] = 1;
	verify_ram(fx, 127, 2, buf, false);
	sense_is(fx, 0xe, 0x1d, 0x00);

	/* block 127 written (first piece), 128 not (second): both compared */
	cmd_out(fx, cdb10(cdb, 0x2a, 0, 127, 1), 10, data, 512);
	memcpy(buf, data, 512);
	memset(buf + 512, 0, 512);
	verify_ram(fx, 127, 2, buf, true);
}

static void test_range_and_readonly(void **state)
{
	static const uint8_t r10[10] = { 0x28, 0, 0, 0, 0x07, 0xff, 0, 0, 2, 0 };
	static const uint8_t w10[10] = { 0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	struct fx *fx = *state;
	struct urb *c, *d, *o;

	start(fx, "    size 1M; readonly\n");	/* 2048 blocks */
	c = cbw(fx, 1024, true, r10, 10);	/* 2047 + 2 > 2048 */
	d = fx_submit(fx, fx_urb_new(EP_IN, 1024));
	assert_true(fx_is_done(fx, c));
	assert_int_equal(d->status, -EPIPE);
	ctrl(fx, 0x02, USB_REQ_CLEAR_FEATURE, USB_ENDPOINT_HALT, EP_IN, 0);
	assert_int_equal(csw(fx, 1024), 1);
	sense_is(fx, 0x5, 0x21, 0x00);

	/* a write to a read-only disk: the data is taken and dropped */
	c = cbw(fx, 512, false, w10, 10);
	o = fx_submit(fx, fx_urb_new(EP_OUT, 512));
	assert_int_equal(o->actual_length, 512);
	assert_int_equal(csw(fx, 512), 1);
	sense_is(fx, 0x7, 0x27, 0x00);
}

/* BOT 6.7: Hi < Di and Ho <> Di are phase errors with nothing moved. */
static void test_phase_errors(void **state)
{
	static const uint8_t r10[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 2, 0 };
	static const uint8_t inq[6] = { 0x12, 0, 0, 0, 36, 0 };
	struct fx *fx = *state;
	struct urb *c, *d;

	start(fx, "    size 1M\n");
	c = cbw(fx, 512, true, r10, 10);	/* H 512 < D 1024 */
	d = fx_submit(fx, fx_urb_new(EP_IN, 512));
	assert_true(fx_is_done(fx, c));
	assert_int_equal(d->status, -EPIPE);
	ctrl(fx, 0x02, USB_REQ_CLEAR_FEATURE, USB_ENDPOINT_HALT, EP_IN, 0);
	assert_int_equal(csw(fx, 512), 2);

	c = cbw(fx, 36, false, inq, 6);		/* Ho, but D is in */
	d = fx_submit(fx, fx_urb_new(EP_OUT, 36));
	assert_int_equal(d->actual_length, 36);
	assert_int_equal(csw(fx, 36), 2);

	c = cbw(fx, 0, false, inq, 6);		/* Hn < Di */
	assert_int_equal(csw(fx, 0), 2);
}

/* BOT 6.6.1: an invalid CBW halts both pipes until a reset. */
static void test_invalid_cbw_until_reset(void **state)
{
	static const uint8_t tur[6] = { 0 };
	struct fx *fx = *state;
	struct urb *bad, *u;

	start(fx, "    size 1M\n");
	bad = fx_urb_new(EP_OUT, 31);
	memcpy(bad->buf, "garbage", 7);
	fx_submit(fx, bad);
	assert_true(fx_is_done(fx, bad));
	u = fx_submit(fx, fx_urb_new(EP_IN, 13));
	assert_int_equal(u->status, -EPIPE);
	/* clearing the halt alone does not help */
	ctrl(fx, 0x02, USB_REQ_CLEAR_FEATURE, USB_ENDPOINT_HALT, EP_IN, 0);
	ctrl(fx, 0x02, USB_REQ_CLEAR_FEATURE, USB_ENDPOINT_HALT, EP_OUT, 0);
	u = cbw(fx, 0, false, tur, 6);
	assert_int_equal(u->status, -EPIPE);
	/* reset recovery: BOT reset, then both halts cleared */
	ctrl(fx, 0x21, 0xff, 0, 0, 0);
	ctrl(fx, 0x02, USB_REQ_CLEAR_FEATURE, USB_ENDPOINT_HALT, EP_IN, 0);
	ctrl(fx, 0x02, USB_REQ_CLEAR_FEATURE, USB_ENDPOINT_HALT, EP_OUT, 0);
	cmd_none(fx, tur, 6, 0);
}

static void test_eject_and_prevent(void **state)
{
	static const uint8_t tur[6] = { 0 };
	static const uint8_t prevent[6] = { 0x1e, 0, 0, 0, 1, 0 };
	static const uint8_t allow[6] = { 0x1e, 0, 0, 0, 0, 0 };
	static const uint8_t eject[6] = { 0x1b, 0, 0, 0, 0x02, 0 };
	static const uint8_t load[6] = { 0x1b, 0, 0, 0, 0x03, 0 };
	struct fx *fx = *state;

	start(fx, "    size 1M\n");
	cmd_none(fx, prevent, 6, 0);
	cmd_none(fx, eject, 6, 1);
	sense_is(fx, 0x5, 0x53, 0x02);
	cmd_none(fx, allow, 6, 0);
	cmd_none(fx, eject, 6, 0);
	cmd_none(fx, tur, 6, 1);
	sense_is(fx, 0x2, 0x3a, 0x00);
	cmd_none(fx, load, 6, 0);
	cmd_none(fx, tur, 6, 0);
}

/* A held URB can be unlinked; a configuration change fails the rest. */
static void test_unlink_and_reset(void **state)
{
	struct fx *fx = *state;
	struct urb *a, *b;

	start(fx, "    size 1M\n");
	a = fx_submit(fx, fx_urb_new(EP_IN, 13));
	b = fx_submit(fx, fx_urb_new(EP_IN, 13));
	assert_false(fx_is_done(fx, a) || fx_is_done(fx, b));
	assert_ptr_equal(gdev_unlink(fx->dev, a->seqnum), a);
	fx_urb_free(a);
	assert_int_equal(gdev_set_config(fx->dev, 1), 0);
	assert_true(fx_is_done(fx, b));
	assert_int_equal(b->status, -ESHUTDOWN);
}

/* Not attached (no state yet): a configuration change is harmless. */
static void test_reset_unattached(void **state)
{
	struct fx *fx = *state;
	char text[2048];

	fx_parse(fx, "t.gadget", msc_text(text, sizeof(text), "    size 1M\n"));
	fx_config_unattached(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_validate),
		T(test_class_requests),
		T(test_inquiry_and_capacity),
		T(test_short_data_stalls_then_csw),
		T(test_unsupported_opcode_sense),
		T(test_cdb_shorter_than_its_group),
		T(test_write_read_image),
		T(test_write_read_ram),
		T(test_ram_last_piece_and_verify),
		T(test_range_and_readonly),
		T(test_phase_errors),
		T(test_invalid_cbw_until_reset),
		T(test_eject_and_prevent),
		T(test_unlink_and_reset),
		T(test_reset_unattached),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
