// SPDX-License-Identifier: GPL-2.0
/*
 * test_wire.c - the USB/IP wire codec (gadgets/usbip_wire.c) against golden
 * byte vectors written out by hand, one commented line per field
 * ("offset  field  value"), plus round trips and every rejection.
 *
 * Every unpack call reads from a heap copy of exactly len bytes, so an
 * over-read shows up under ASan (make BUILD=build/asan SAN=1 ...).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "usbip_wire.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ---------------------------------------------------------- */

/* A heap copy of exactly len bytes (len 0 still gives a valid pointer). */
static uint8_t *dup_exact(const uint8_t *src, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	assert_non_null(p);
	if (len)
		memcpy(p, src, len);
	return p;
}

/* Overwrite one be32 field of a copied vector, to build a bad input. */
static void poke_be32(uint8_t *buf, size_t off, uint32_t v)
{
	put_be32(buf + off, v);
}

/* Every unpack function behind one signature, for the truncation loops. */
static int unpack_op_common(const uint8_t *src, size_t len)
{
	struct usbip_op_common op;

	return usbip_op_common_unpack(&op, src, len);
}

static int unpack_device(const uint8_t *src, size_t len)
{
	struct usbip_usb_device d;

	return usbip_usb_device_unpack(&d, src, len);
}

static int unpack_interface(const uint8_t *src, size_t len)
{
	struct usbip_usb_interface i;

	return usbip_usb_interface_unpack(&i, src, len);
}

static int unpack_import_req(const uint8_t *src, size_t len)
{
	char busid[USBIP_BUSID_SIZE];

	return usbip_import_req_unpack(busid, src, len);
}

static int unpack_cmd(const uint8_t *src, size_t len)
{
	struct usbip_hdr h;

	return usbip_hdr_unpack_cmd(&h, src, len);
}

static int unpack_ret(const uint8_t *src, size_t len)
{
	struct usbip_hdr h;

	return usbip_hdr_unpack_ret(&h, src, len);
}

static int unpack_iso(const uint8_t *src, size_t len)
{
	struct usbip_iso_desc d;

	return usbip_iso_desc_unpack(&d, src, len);
}

/*
 * Every prefix 0..size-1 of a valid vector asks for more bytes, and the
 * whole vector (also with a trailing byte) is consumed to exactly size.
 */
static void check_truncation(int (*fn)(const uint8_t *src, size_t len),
			     const uint8_t *vec, size_t size)
{
	uint8_t *p;
	size_t len;

	for (len = 0; len < size; len++) {
		p = dup_exact(vec, len);
		assert_int_equal(fn(p, len), -EAGAIN);
		free(p);
	}
	p = dup_exact(vec, size);
	assert_int_equal(fn(p, size), (int)size);
	free(p);

	p = malloc(size + 1);
	assert_non_null(p);
	memcpy(p, vec, size);
	p[size] = 0xa5;
	assert_int_equal(fn(p, size + 1), (int)size);
	free(p);
}

/* Unpack a whole command header from an exact heap copy. */
static int cmd_from(struct usbip_hdr *h, const uint8_t *vec, size_t len)
{
	uint8_t *p = dup_exact(vec, len);
	int ret = usbip_hdr_unpack_cmd(h, p, len);

	free(p);
	return ret;
}

static int ret_from(struct usbip_hdr *h, const uint8_t *vec, size_t len)
{
	uint8_t *p = dup_exact(vec, len);
	int ret = usbip_hdr_unpack_ret(h, p, len);

	free(p);
	return ret;
}

/* ---- golden vectors ---------------------------------------------------- */

/* OP_REQ_DEVLIST: op_common only */
static const uint8_t req_devlist[USBIP_OP_COMMON_SIZE] = {
	0x01, 0x11,		/* 0x00 version    0x0111 */
	0x80, 0x05,		/* 0x02 code       OP_REQ_DEVLIST */
	0x00, 0x00, 0x00, 0x00,	/* 0x04 status     0 */
};

/* OP_REP_IMPORT failing: op_common with status ST_NODEV, nothing after */
static const uint8_t rep_import_nodev[USBIP_OP_COMMON_SIZE] = {
	0x01, 0x11,		/* 0x00 version    0x0111 */
	0x00, 0x03,		/* 0x02 code       OP_REP_IMPORT */
	0x00, 0x00, 0x00, 0x04,	/* 0x04 status     ST_NODEV */
};

#define DEV_PATH_STR	"/sys/devices/platform/usbrig/usb1/1-1"
#define DEV_BUSID_STR	"1-1"

/* The usb_device record after the two strings, offsets 0x120..0x137. */
static const uint8_t device_tail[] = {
	0x00, 0x00, 0x00, 0x01,	/* 0x120 busnum              1 */
	0x00, 0x00, 0x00, 0x02,	/* 0x124 devnum              2 */
	0x00, 0x00, 0x00, 0x03,	/* 0x128 speed               3 (high) */
	0x12, 0x09,		/* 0x12c idVendor            0x1209 */
	0x00, 0x01,		/* 0x12e idProduct           0x0001 */
	0x01, 0x00,		/* 0x130 bcdDevice           0x0100 */
	0xef,			/* 0x132 bDeviceClass        0xef (misc) */
	0x02,			/* 0x133 bDeviceSubClass     0x02 */
	0x01,			/* 0x134 bDeviceProtocol     0x01 (IAD) */
	0x01,			/* 0x135 bConfigurationValue 1 */
	0x01,			/* 0x136 bNumConfigurations  1 */
	0x02,			/* 0x137 bNumInterfaces      2 */
};

/*
 * The whole 312-byte record: path[256] at 0x000 and busid[32] at 0x100,
 * each the string then zeros to the end of the field, then device_tail.
 */
static void build_device_vector(uint8_t v[USBIP_USB_DEVICE_SIZE])
{
	_Static_assert(0x120 + sizeof(device_tail) == USBIP_USB_DEVICE_SIZE,
		       "tail fills the record");
	memset(v, 0, USBIP_USB_DEVICE_SIZE);
	memcpy(v + 0x000, DEV_PATH_STR, strlen(DEV_PATH_STR));	/* path */
	memcpy(v + 0x100, DEV_BUSID_STR, strlen(DEV_BUSID_STR));	/* busid */
	memcpy(v + 0x120, device_tail, sizeof(device_tail));
}

static const struct usbip_usb_device device_struct = {
	.path = DEV_PATH_STR,
	.busid = DEV_BUSID_STR,
	.busnum = 1,
	.devnum = 2,
	.speed = USBIP_SPEED_HIGH,
	.idVendor = 0x1209,
	.idProduct = 0x0001,
	.bcdDevice = 0x0100,
	.bDeviceClass = 0xef,
	.bDeviceSubClass = 0x02,
	.bDeviceProtocol = 0x01,
	.bConfigurationValue = 1,
	.bNumConfigurations = 1,
	.bNumInterfaces = 2,
};

/* usb_interface record: CDC ACM control interface */
static const uint8_t interface_vec[USBIP_USB_INTERFACE_SIZE] = {
	0x02,			/* 0x00 bInterfaceClass    0x02 (CDC) */
	0x02,			/* 0x01 bInterfaceSubClass 0x02 (ACM) */
	0x01,			/* 0x02 bInterfaceProtocol 0x01 (AT) */
	0x00,			/* 0x03 padding            0 */
};

/* OP_REQ_IMPORT: op_common then busid[32] */
static const uint8_t req_import[USBIP_IMPORT_REQ_SIZE] = {
	0x01, 0x11,		/* 0x00 version    0x0111 */
	0x80, 0x03,		/* 0x02 code       OP_REQ_IMPORT */
	0x00, 0x00, 0x00, 0x00,	/* 0x04 status     0 */
	'1', '-', '1', 0x00,	/* 0x08 busid      "1-1", then zeros */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,	/* 0x0c */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,	/* 0x1a */
	/* 0x28 end */
};

/* CMD_SUBMIT, control IN on ep 0: GET_DESCRIPTOR(DEVICE), 64 bytes */
static const uint8_t cmd_submit_ctrl_in[USBIP_HDR_SIZE] = {
	0x00, 0x00, 0x00, 0x01,	/* 0x00 command       CMD_SUBMIT */
	0x00, 0x00, 0x00, 0x01,	/* 0x04 seqnum        1 */
	0x00, 0x01, 0x00, 0x02,	/* 0x08 devid         bus 1, dev 2 */
	0x00, 0x00, 0x00, 0x01,	/* 0x0c direction     IN */
	0x00, 0x00, 0x00, 0x00,	/* 0x10 ep            0 */
	0x00, 0x00, 0x02, 0x00,	/* 0x14 transfer_flags USBIP_URB_DIR_IN */
	0x00, 0x00, 0x00, 0x40,	/* 0x18 transfer_buffer_length 64 */
	0x00, 0x00, 0x00, 0x00,	/* 0x1c start_frame   0 */
	0xff, 0xff, 0xff, 0xff,	/* 0x20 number_of_packets -1 (not ISO) */
	0x00, 0x00, 0x00, 0x00,	/* 0x24 interval      0 */
	0x80,			/* 0x28 bmRequestType 0x80 (IN, std, device) */
	0x06,			/* 0x29 bRequest      GET_DESCRIPTOR */
	0x00, 0x01,		/* 0x2a wValue        0x0100 (DEVICE, index 0) */
	0x00, 0x00,		/* 0x2c wIndex        0 */
	0x40, 0x00,		/* 0x2e wLength       64 */
};

/* CMD_SUBMIT, bulk OUT on ep 2, 512 bytes of data follow */
static const uint8_t cmd_submit_bulk_out[USBIP_HDR_SIZE] = {
	0x00, 0x00, 0x00, 0x01,	/* 0x00 command       CMD_SUBMIT */
	0x00, 0x00, 0x00, 0x02,	/* 0x04 seqnum        2 */
	0x00, 0x01, 0x00, 0x02,	/* 0x08 devid         bus 1, dev 2 */
	0x00, 0x00, 0x00, 0x00,	/* 0x0c direction     OUT */
	0x00, 0x00, 0x00, 0x02,	/* 0x10 ep            2 */
	0x00, 0x00, 0x00, 0x00,	/* 0x14 transfer_flags 0 */
	0x00, 0x00, 0x02, 0x00,	/* 0x18 transfer_buffer_length 512 */
	0x00, 0x00, 0x00, 0x00,	/* 0x1c start_frame   0 */
	0x00, 0x00, 0x00, 0x00,	/* 0x20 number_of_packets 0 */
	0x00, 0x00, 0x00, 0x00,	/* 0x24 interval      0 */
	0, 0, 0, 0, 0, 0, 0, 0,	/* 0x28 setup         unused, zeros */
};

/* CMD_SUBMIT, isochronous IN on ep 3: 3 packets of 192 bytes */
static const uint8_t cmd_submit_iso_in[USBIP_HDR_SIZE] = {
	0x00, 0x00, 0x00, 0x01,	/* 0x00 command       CMD_SUBMIT */
	0x00, 0x00, 0x00, 0x03,	/* 0x04 seqnum        3 */
	0x00, 0x01, 0x00, 0x02,	/* 0x08 devid         bus 1, dev 2 */
	0x00, 0x00, 0x00, 0x01,	/* 0x0c direction     IN */
	0x00, 0x00, 0x00, 0x03,	/* 0x10 ep            3 */
	0x00, 0x00, 0x02, 0x02,	/* 0x14 transfer_flags DIR_IN | ISO_ASAP */
	0x00, 0x00, 0x02, 0x40,	/* 0x18 transfer_buffer_length 576 */
	0x00, 0x00, 0x00, 0x10,	/* 0x1c start_frame   16 */
	0x00, 0x00, 0x00, 0x03,	/* 0x20 number_of_packets 3 */
	0x00, 0x00, 0x00, 0x01,	/* 0x24 interval      1 */
	0, 0, 0, 0, 0, 0, 0, 0,	/* 0x28 setup         unused, zeros */
};

/* CMD_SUBMIT, isochronous OUT on ep 4: 576 data bytes, 3 descriptors */
static const uint8_t cmd_submit_iso_out[USBIP_HDR_SIZE] = {
	0x00, 0x00, 0x00, 0x01,	/* 0x00 command       CMD_SUBMIT */
	0x00, 0x00, 0x00, 0x04,	/* 0x04 seqnum        4 */
	0x00, 0x01, 0x00, 0x02,	/* 0x08 devid         bus 1, dev 2 */
	0x00, 0x00, 0x00, 0x00,	/* 0x0c direction     OUT */
	0x00, 0x00, 0x00, 0x04,	/* 0x10 ep            4 */
	0x00, 0x00, 0x00, 0x02,	/* 0x14 transfer_flags ISO_ASAP */
	0x00, 0x00, 0x02, 0x40,	/* 0x18 transfer_buffer_length 576 */
	0x00, 0x00, 0x00, 0x20,	/* 0x1c start_frame   32 */
	0x00, 0x00, 0x00, 0x03,	/* 0x20 number_of_packets 3 */
	0x00, 0x00, 0x00, 0x01,	/* 0x24 interval      1 */
	0, 0, 0, 0, 0, 0, 0, 0,	/* 0x28 setup         unused, zeros */
};

/* CMD_UNLINK of seqnum 4 */
static const uint8_t cmd_unlink[USBIP_HDR_SIZE] = {
	0x00, 0x00, 0x00, 0x02,	/* 0x00 command       CMD_UNLINK */
	0x00, 0x00, 0x00, 0x05,	/* 0x04 seqnum        5 */
	0x00, 0x01, 0x00, 0x02,	/* 0x08 devid         bus 1, dev 2 */
	0x00, 0x00, 0x00, 0x00,	/* 0x0c direction     0 */
	0x00, 0x00, 0x00, 0x00,	/* 0x10 ep            0 */
	0x00, 0x00, 0x00, 0x04,	/* 0x14 unlink seqnum 4 */
	0, 0, 0, 0, 0, 0, 0, 0,	/* 0x18 padding       24 zero bytes */
	0, 0, 0, 0, 0, 0, 0, 0,	/* 0x20 */
	0, 0, 0, 0, 0, 0, 0, 0,	/* 0x28 */
};

/* RET_SUBMIT for seqnum 1: 18 bytes (a device descriptor) follow */
static const uint8_t ret_submit_data[USBIP_HDR_SIZE] = {
	0x00, 0x00, 0x00, 0x03,	/* 0x00 command       RET_SUBMIT */
	0x00, 0x00, 0x00, 0x01,	/* 0x04 seqnum        1 */
	0x00, 0x00, 0x00, 0x00,	/* 0x08 devid         0 (server side) */
	0x00, 0x00, 0x00, 0x00,	/* 0x0c direction     0 (server side) */
	0x00, 0x00, 0x00, 0x00,	/* 0x10 ep            0 (server side) */
	0x00, 0x00, 0x00, 0x00,	/* 0x14 status        0 */
	0x00, 0x00, 0x00, 0x12,	/* 0x18 actual_length 18 */
	0x00, 0x00, 0x00, 0x00,	/* 0x1c start_frame   0 */
	0x00, 0x00, 0x00, 0x00,	/* 0x20 number_of_packets 0 */
	0x00, 0x00, 0x00, 0x00,	/* 0x24 error_count   0 */
	0, 0, 0, 0, 0, 0, 0, 0,	/* 0x28 padding       zeros */
};

/* RET_SUBMIT for seqnum 7: STALL */
static const uint8_t ret_submit_stall[USBIP_HDR_SIZE] = {
	0x00, 0x00, 0x00, 0x03,	/* 0x00 command       RET_SUBMIT */
	0x00, 0x00, 0x00, 0x07,	/* 0x04 seqnum        7 */
	0x00, 0x00, 0x00, 0x00,	/* 0x08 devid         0 */
	0x00, 0x00, 0x00, 0x00,	/* 0x0c direction     0 */
	0x00, 0x00, 0x00, 0x00,	/* 0x10 ep            0 */
	0xff, 0xff, 0xff, 0xe0,	/* 0x14 status        -32 (-EPIPE) */
	0x00, 0x00, 0x00, 0x00,	/* 0x18 actual_length 0 */
	0x00, 0x00, 0x00, 0x00,	/* 0x1c start_frame   0 */
	0x00, 0x00, 0x00, 0x00,	/* 0x20 number_of_packets 0 */
	0x00, 0x00, 0x00, 0x00,	/* 0x24 error_count   0 */
	0, 0, 0, 0, 0, 0, 0, 0,	/* 0x28 padding       zeros */
};

/* RET_UNLINK for CMD_UNLINK seqnum 5: the URB was still pending */
static const uint8_t ret_unlink[USBIP_HDR_SIZE] = {
	0x00, 0x00, 0x00, 0x04,	/* 0x00 command       RET_UNLINK */
	0x00, 0x00, 0x00, 0x05,	/* 0x04 seqnum        5 (the UNLINK's) */
	0x00, 0x00, 0x00, 0x00,	/* 0x08 devid         0 */
	0x00, 0x00, 0x00, 0x00,	/* 0x0c direction     0 */
	0x00, 0x00, 0x00, 0x00,	/* 0x10 ep            0 */
	0xff, 0xff, 0xff, 0x98,	/* 0x14 status        -104 (-ECONNRESET) */
	0, 0, 0, 0, 0, 0, 0, 0,	/* 0x18 padding       24 zero bytes */
	0, 0, 0, 0, 0, 0, 0, 0,	/* 0x20 */
	0, 0, 0, 0, 0, 0, 0, 0,	/* 0x28 */
};

/* iso packet descriptor: second packet of an IN transfer, short, error */
static const uint8_t iso_desc_vec[USBIP_ISO_DESC_SIZE] = {
	0x00, 0x00, 0x00, 0xc0,	/* 0x00 offset        192 */
	0x00, 0x00, 0x00, 0xc0,	/* 0x04 length        192 */
	0x00, 0x00, 0x00, 0x64,	/* 0x08 actual_length 100 */
	0xff, 0xff, 0xff, 0xee,	/* 0x0c status        -18 (-EXDEV) */
};

/* ---- op phase ----------------------------------------------------------- */

static void test_op_common_golden(void **state)
{
	struct usbip_op_common op = {
		.version = USBIP_VERSION,
		.code = OP_REQ_DEVLIST,
		.status = 0,
	};
	uint8_t buf[USBIP_OP_COMMON_SIZE + 4];
	uint8_t *p;

	(void)state;
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(usbip_op_common_pack(&op, buf), USBIP_OP_COMMON_SIZE);
	assert_memory_equal(buf, req_devlist, sizeof(req_devlist));
	assert_int_equal(buf[USBIP_OP_COMMON_SIZE], 0xa5); /* wrote only 8 */

	op = (struct usbip_op_common){ .version = USBIP_VERSION,
				       .code = OP_REP_IMPORT,
				       .status = ST_NODEV };
	usbip_op_common_pack(&op, buf);
	assert_memory_equal(buf, rep_import_nodev, sizeof(rep_import_nodev));

	memset(&op, 0xff, sizeof(op));
	p = dup_exact(req_devlist, sizeof(req_devlist));
	assert_int_equal(usbip_op_common_unpack(&op, p, sizeof(req_devlist)),
			 USBIP_OP_COMMON_SIZE);
	free(p);
	assert_int_equal(op.version, 0x0111);
	assert_int_equal(op.code, 0x8005);
	assert_int_equal(op.status, 0);
}

/* Version and code are the caller's business: unpack takes any. */
static void test_op_common_any_code(void **state)
{
	static const uint8_t odd[USBIP_OP_COMMON_SIZE] = {
		0x01, 0x06,		/* 0x00 version  0x0106 (old) */
		0x12, 0x34,		/* 0x02 code     0x1234 (unknown) */
		0xde, 0xad, 0xbe, 0xef,	/* 0x04 status   0xdeadbeef */
	};
	struct usbip_op_common op;

	(void)state;
	assert_int_equal(unpack_op_common(odd, sizeof(odd)), 8);
	usbip_op_common_unpack(&op, odd, sizeof(odd));
	assert_int_equal(op.version, 0x0106);
	assert_int_equal(op.code, 0x1234);
	assert_int_equal(op.status, 0xdeadbeef);
}

static void test_device_golden(void **state)
{
	uint8_t expect[USBIP_USB_DEVICE_SIZE];
	uint8_t buf[USBIP_USB_DEVICE_SIZE + 1];

	(void)state;
	build_device_vector(expect);
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(usbip_usb_device_pack(&device_struct, buf),
			 USBIP_USB_DEVICE_SIZE);
	assert_memory_equal(buf, expect, sizeof(expect));
	assert_int_equal(buf[USBIP_USB_DEVICE_SIZE], 0xa5);
}

static void test_device_unpack(void **state)
{
	uint8_t vec[USBIP_USB_DEVICE_SIZE];
	struct usbip_usb_device d;
	uint8_t *p;

	(void)state;
	build_device_vector(vec);
	memset(&d, 0xff, sizeof(d));
	p = dup_exact(vec, sizeof(vec));
	assert_int_equal(usbip_usb_device_unpack(&d, p, sizeof(vec)),
			 USBIP_USB_DEVICE_SIZE);
	free(p);
	assert_string_equal(d.path, DEV_PATH_STR);
	assert_string_equal(d.busid, DEV_BUSID_STR);
	assert_int_equal(d.busnum, 1);
	assert_int_equal(d.devnum, 2);
	assert_int_equal(d.speed, USBIP_SPEED_HIGH);
	assert_int_equal(d.idVendor, 0x1209);
	assert_int_equal(d.idProduct, 0x0001);
	assert_int_equal(d.bcdDevice, 0x0100);
	assert_int_equal(d.bDeviceClass, 0xef);
	assert_int_equal(d.bDeviceSubClass, 0x02);
	assert_int_equal(d.bDeviceProtocol, 0x01);
	assert_int_equal(d.bConfigurationValue, 1);
	assert_int_equal(d.bNumConfigurations, 1);
	assert_int_equal(d.bNumInterfaces, 2);
	/* the whole struct, strings' zero tails included */
	assert_memory_equal(&d, &device_struct, sizeof(d));
}

/*
 * A peer that fills path and busid to the last byte gets them cut one
 * short, NUL-terminated; garbage behind a terminator is not kept.
 */
static void test_device_strings_terminated(void **state)
{
	uint8_t vec[USBIP_USB_DEVICE_SIZE];
	struct usbip_usb_device d;
	size_t i;

	(void)state;
	build_device_vector(vec);
	memset(vec + 0x000, 'p', USBIP_SYSFS_PATH_MAX);	/* path, no NUL */
	memset(vec + 0x100, 'b', USBIP_BUSID_SIZE);	/* busid, no NUL */
	assert_int_equal(unpack_device(vec, sizeof(vec)),
			 USBIP_USB_DEVICE_SIZE);
	usbip_usb_device_unpack(&d, vec, sizeof(vec));
	assert_int_equal(strlen(d.path), USBIP_SYSFS_PATH_MAX - 1);
	assert_int_equal(strlen(d.busid), USBIP_BUSID_SIZE - 1);
	assert_int_equal(d.busnum, 1);	/* the tail is untouched */

	build_device_vector(vec);
	memcpy(vec + 0x100 + 4, "junk", 4);	/* after "1-1\0" */
	usbip_usb_device_unpack(&d, vec, sizeof(vec));
	assert_string_equal(d.busid, "1-1");
	for (i = 4; i < USBIP_BUSID_SIZE; i++)
		assert_int_equal(d.busid[i], 0);
}

/* Pack writes zeros after the string whatever the struct holds there. */
static void test_device_pack_zero_fills(void **state)
{
	struct usbip_usb_device d = device_struct;
	uint8_t expect[USBIP_USB_DEVICE_SIZE];
	uint8_t buf[USBIP_USB_DEVICE_SIZE];

	(void)state;
	memset(d.path + strlen(DEV_PATH_STR) + 1, 'x',
	       USBIP_SYSFS_PATH_MAX - strlen(DEV_PATH_STR) - 1);
	memset(d.busid + strlen(DEV_BUSID_STR) + 1, 'y',
	       USBIP_BUSID_SIZE - strlen(DEV_BUSID_STR) - 1);
	build_device_vector(expect);
	usbip_usb_device_pack(&d, buf);
	assert_memory_equal(buf, expect, sizeof(expect));

	/* an unterminated busid still goes out terminated */
	memset(d.busid, 'z', USBIP_BUSID_SIZE);
	usbip_usb_device_pack(&d, buf);
	assert_int_equal(buf[0x100 + USBIP_BUSID_SIZE - 1], 0);
	assert_int_equal(buf[0x100 + USBIP_BUSID_SIZE - 2], 'z');
}

static void test_interface_golden(void **state)
{
	struct usbip_usb_interface i = {
		.bInterfaceClass = 0x02,
		.bInterfaceSubClass = 0x02,
		.bInterfaceProtocol = 0x01,
	};
	uint8_t buf[USBIP_USB_INTERFACE_SIZE + 1];
	uint8_t odd[USBIP_USB_INTERFACE_SIZE];
	struct usbip_usb_interface out;

	(void)state;
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(usbip_usb_interface_pack(&i, buf),
			 USBIP_USB_INTERFACE_SIZE);
	assert_memory_equal(buf, interface_vec, sizeof(interface_vec));
	assert_int_equal(buf[USBIP_USB_INTERFACE_SIZE], 0xa5);

	memset(&out, 0xff, sizeof(out));
	assert_int_equal(usbip_usb_interface_unpack(&out, interface_vec, 4), 4);
	assert_memory_equal(&out, &i, sizeof(out));

	/* a non-zero pad byte is tolerated */
	memcpy(odd, interface_vec, sizeof(odd));
	odd[3] = 0x7f;
	assert_int_equal(usbip_usb_interface_unpack(&out, odd, 4), 4);
	assert_memory_equal(&out, &i, sizeof(out));
}

/* OP_REP_DEVLIST as a server builds it from the pieces. */
static void test_devlist_reply(void **state)
{
	static const uint8_t head[] = {
		0x01, 0x11,		/* 0x00 version   0x0111 */
		0x00, 0x05,		/* 0x02 code      OP_REP_DEVLIST */
		0x00, 0x00, 0x00, 0x00,	/* 0x04 status    ST_OK */
		0x00, 0x00, 0x00, 0x01,	/* 0x08 ndev      1 */
	};
	static const uint8_t intfs[] = {
		0x02, 0x02, 0x01, 0x00,	/* 0x144 interface 0: CDC ACM */
		0x0a, 0x00, 0x00, 0x00,	/* 0x148 interface 1: CDC data */
	};
	struct usbip_op_common op = { USBIP_VERSION, OP_REP_DEVLIST, ST_OK };
	struct usbip_usb_interface i0 = { 0x02, 0x02, 0x01 };
	struct usbip_usb_interface i1 = { 0x0a, 0x00, 0x00 };
	uint8_t expect[sizeof(head) + USBIP_USB_DEVICE_SIZE + sizeof(intfs)];
	uint8_t buf[sizeof(expect)];
	size_t n = 0;

	(void)state;
	memcpy(expect, head, sizeof(head));
	build_device_vector(expect + sizeof(head));
	memcpy(expect + sizeof(head) + USBIP_USB_DEVICE_SIZE, intfs,
	       sizeof(intfs));
	assert_int_equal(sizeof(expect), 0x14c);

	n += usbip_op_common_pack(&op, buf + n);
	put_be32(buf + n, 1);
	n += USBIP_DEVLIST_NDEV_SIZE;
	n += usbip_usb_device_pack(&device_struct, buf + n);
	n += usbip_usb_interface_pack(&i0, buf + n);
	n += usbip_usb_interface_pack(&i1, buf + n);
	assert_int_equal(n, sizeof(expect));
	assert_memory_equal(buf, expect, sizeof(expect));
}

static void test_import_req_golden(void **state)
{
	struct usbip_op_common op;
	char busid[USBIP_BUSID_SIZE];
	uint8_t *p;

	(void)state;
	p = dup_exact(req_import, sizeof(req_import));
	assert_int_equal(usbip_op_common_unpack(&op, p, sizeof(req_import)),
			 USBIP_OP_COMMON_SIZE);
	assert_int_equal(op.version, USBIP_VERSION);
	assert_int_equal(op.code, OP_REQ_IMPORT);
	assert_int_equal(op.status, 0);
	memset(busid, 0xff, sizeof(busid));
	assert_int_equal(usbip_import_req_unpack(busid,
						 p + USBIP_OP_COMMON_SIZE,
						 sizeof(req_import) -
						 USBIP_OP_COMMON_SIZE),
			 USBIP_BUSID_SIZE);
	free(p);
	assert_string_equal(busid, "1-1");

	/* and the request packs back to the same bytes */
	{
		struct usbip_op_common req = { USBIP_VERSION, OP_REQ_IMPORT, 0 };
		uint8_t buf[USBIP_IMPORT_REQ_SIZE] = { 0 };

		usbip_op_common_pack(&req, buf);
		memcpy(buf + USBIP_OP_COMMON_SIZE, "1-1", 3);
		assert_memory_equal(buf, req_import, sizeof(buf));
	}
}

/* 32 non-NUL busid bytes: the result is still a C string, 31 long. */
static void test_import_req_busid_terminated(void **state)
{
	uint8_t body[USBIP_BUSID_SIZE];
	char busid[USBIP_BUSID_SIZE];
	uint8_t *p;

	(void)state;
	memset(body, 'A', sizeof(body));
	p = dup_exact(body, sizeof(body));
	assert_int_equal(usbip_import_req_unpack(busid, p, sizeof(body)),
			 USBIP_BUSID_SIZE);
	free(p);
	assert_int_equal(busid[USBIP_BUSID_SIZE - 1], '\0');
	assert_int_equal(strlen(busid), USBIP_BUSID_SIZE - 1);
	assert_int_equal(busid[0], 'A');
	assert_int_equal(busid[USBIP_BUSID_SIZE - 2], 'A');
}

/* ---- URB phase: golden vectors ----------------------------------------- */

static void test_cmd_submit_ctrl_in(void **state)
{
	struct usbip_hdr h;
	struct usb_setup s;
	uint8_t buf[USBIP_HDR_SIZE];

	(void)state;
	memset(&h, 0xff, sizeof(h));
	assert_int_equal(cmd_from(&h, cmd_submit_ctrl_in, USBIP_HDR_SIZE),
			 USBIP_HDR_SIZE);
	assert_int_equal(h.base.command, USBIP_CMD_SUBMIT);
	assert_int_equal(h.base.seqnum, 1);
	assert_int_equal(h.base.devid, 1u << 16 | 2);
	assert_int_equal(h.base.direction, USBIP_DIR_IN);
	assert_int_equal(h.base.ep, 0);
	assert_int_equal(h.u.cmd_submit.transfer_flags, 0x200);
	assert_int_equal(h.u.cmd_submit.transfer_buffer_length, 64);
	assert_int_equal(h.u.cmd_submit.start_frame, 0);
	assert_int_equal(h.u.cmd_submit.number_of_packets, 0); /* -1 folded */
	assert_int_equal(h.u.cmd_submit.interval, 0);
	assert_memory_equal(h.u.cmd_submit.setup, cmd_submit_ctrl_in + 0x28, 8);
	assert_int_equal(usbip_cmd_payload_len(&h), 0);	/* IN: no data */

	usb_setup_unpack(&s, h.u.cmd_submit.setup);
	assert_int_equal(s.bmRequestType, 0x80);
	assert_int_equal(s.bRequest, 6);
	assert_int_equal(s.wValue, 0x0100);
	assert_int_equal(s.wIndex, 0);
	assert_int_equal(s.wLength, 64);

	/* packing with the wire's -1 gives back the exact bytes */
	h.u.cmd_submit.number_of_packets = -1;
	assert_int_equal(usbip_hdr_pack(&h, buf), USBIP_HDR_SIZE);
	assert_memory_equal(buf, cmd_submit_ctrl_in, USBIP_HDR_SIZE);
}

static void test_cmd_submit_bulk_out(void **state)
{
	struct usbip_hdr h;
	uint8_t buf[USBIP_HDR_SIZE];

	(void)state;
	assert_int_equal(cmd_from(&h, cmd_submit_bulk_out, USBIP_HDR_SIZE),
			 USBIP_HDR_SIZE);
	assert_int_equal(h.base.command, USBIP_CMD_SUBMIT);
	assert_int_equal(h.base.seqnum, 2);
	assert_int_equal(h.base.direction, USBIP_DIR_OUT);
	assert_int_equal(h.base.ep, 2);
	assert_int_equal(h.u.cmd_submit.transfer_buffer_length, 512);
	assert_int_equal(h.u.cmd_submit.number_of_packets, 0);
	assert_int_equal(usbip_cmd_payload_len(&h), 512);	/* OUT data */

	usbip_hdr_pack(&h, buf);
	assert_memory_equal(buf, cmd_submit_bulk_out, USBIP_HDR_SIZE);
}

static void test_cmd_submit_iso(void **state)
{
	struct usbip_hdr h;
	uint8_t buf[USBIP_HDR_SIZE];

	(void)state;
	assert_int_equal(cmd_from(&h, cmd_submit_iso_in, USBIP_HDR_SIZE),
			 USBIP_HDR_SIZE);
	assert_int_equal(h.base.direction, USBIP_DIR_IN);
	assert_int_equal(h.base.ep, 3);
	assert_int_equal(h.u.cmd_submit.transfer_flags, 0x202);
	assert_int_equal(h.u.cmd_submit.transfer_buffer_length, 576);
	assert_int_equal(h.u.cmd_submit.start_frame, 16);
	assert_int_equal(h.u.cmd_submit.number_of_packets, 3);
	assert_int_equal(h.u.cmd_submit.interval, 1);
	/* IN: only the 3 descriptors follow, 3 * 16 */
	assert_int_equal(usbip_cmd_payload_len(&h), 48);
	usbip_hdr_pack(&h, buf);
	assert_memory_equal(buf, cmd_submit_iso_in, USBIP_HDR_SIZE);

	assert_int_equal(cmd_from(&h, cmd_submit_iso_out, USBIP_HDR_SIZE),
			 USBIP_HDR_SIZE);
	assert_int_equal(h.base.direction, USBIP_DIR_OUT);
	assert_int_equal(h.base.ep, 4);
	assert_int_equal(h.u.cmd_submit.start_frame, 32);
	assert_int_equal(h.u.cmd_submit.number_of_packets, 3);
	/* OUT: the whole buffer, then the descriptors: 576 + 48 */
	assert_int_equal(usbip_cmd_payload_len(&h), 624);
	usbip_hdr_pack(&h, buf);
	assert_memory_equal(buf, cmd_submit_iso_out, USBIP_HDR_SIZE);
}

static void test_cmd_unlink(void **state)
{
	struct usbip_hdr h;
	uint8_t buf[USBIP_HDR_SIZE];

	(void)state;
	memset(&h, 0xff, sizeof(h));
	assert_int_equal(cmd_from(&h, cmd_unlink, USBIP_HDR_SIZE),
			 USBIP_HDR_SIZE);
	assert_int_equal(h.base.command, USBIP_CMD_UNLINK);
	assert_int_equal(h.base.seqnum, 5);
	assert_int_equal(h.base.devid, 0x00010002);
	assert_int_equal(h.u.cmd_unlink.seqnum, 4);
	assert_int_equal(usbip_cmd_payload_len(&h), 0);

	memset(buf, 0xa5, sizeof(buf));
	usbip_hdr_pack(&h, buf);
	assert_memory_equal(buf, cmd_unlink, USBIP_HDR_SIZE);
}

static void test_ret_submit(void **state)
{
	struct usbip_hdr h = {
		.base = { .command = USBIP_RET_SUBMIT, .seqnum = 1 },
		.u.ret_submit = { .status = 0, .actual_length = 18 },
	};
	struct usbip_hdr out;
	uint8_t buf[USBIP_HDR_SIZE];

	(void)state;
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(usbip_hdr_pack(&h, buf), USBIP_HDR_SIZE);
	assert_memory_equal(buf, ret_submit_data, USBIP_HDR_SIZE);

	memset(&out, 0xff, sizeof(out));
	assert_int_equal(ret_from(&out, ret_submit_data, USBIP_HDR_SIZE),
			 USBIP_HDR_SIZE);
	assert_int_equal(out.base.command, USBIP_RET_SUBMIT);
	assert_int_equal(out.base.seqnum, 1);
	assert_int_equal(out.u.ret_submit.status, 0);
	assert_int_equal(out.u.ret_submit.actual_length, 18);
	assert_int_equal(out.u.ret_submit.number_of_packets, 0);
	assert_int_equal(out.u.ret_submit.error_count, 0);
}

static void test_ret_submit_stall(void **state)
{
	struct usbip_hdr h = {
		.base = { .command = USBIP_RET_SUBMIT, .seqnum = 7 },
		.u.ret_submit = { .status = -EPIPE },
	};
	struct usbip_hdr out;
	uint8_t buf[USBIP_HDR_SIZE];

	(void)state;
	usbip_hdr_pack(&h, buf);
	assert_memory_equal(buf, ret_submit_stall, USBIP_HDR_SIZE);
	assert_int_equal(ret_from(&out, ret_submit_stall, USBIP_HDR_SIZE),
			 USBIP_HDR_SIZE);
	assert_int_equal(out.u.ret_submit.status, -32);
	assert_int_equal(out.u.ret_submit.actual_length, 0);
}

static void test_ret_unlink(void **state)
{
	struct usbip_hdr h = {
		.base = { .command = USBIP_RET_UNLINK, .seqnum = 5 },
		.u.ret_unlink = { .status = -ECONNRESET },
	};
	struct usbip_hdr out;
	uint8_t buf[USBIP_HDR_SIZE];

	(void)state;
	memset(buf, 0xa5, sizeof(buf));
	usbip_hdr_pack(&h, buf);
	assert_memory_equal(buf, ret_unlink, USBIP_HDR_SIZE);
	assert_int_equal(ret_from(&out, ret_unlink, USBIP_HDR_SIZE),
			 USBIP_HDR_SIZE);
	assert_int_equal(out.base.command, USBIP_RET_UNLINK);
	assert_int_equal(out.base.seqnum, 5);
	assert_int_equal(out.u.ret_unlink.status, -104);
}

static void test_iso_desc(void **state)
{
	struct usbip_iso_desc d = {
		.offset = 192,
		.length = 192,
		.actual_length = 100,
		.status = -EXDEV,
	};
	struct usbip_iso_desc out;
	uint8_t buf[USBIP_ISO_DESC_SIZE + 1];
	uint8_t *p;

	(void)state;
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(usbip_iso_desc_pack(&d, buf), USBIP_ISO_DESC_SIZE);
	assert_memory_equal(buf, iso_desc_vec, USBIP_ISO_DESC_SIZE);
	assert_int_equal(buf[USBIP_ISO_DESC_SIZE], 0xa5);

	p = dup_exact(iso_desc_vec, sizeof(iso_desc_vec));
	assert_int_equal(usbip_iso_desc_unpack(&out, p, sizeof(iso_desc_vec)),
			 USBIP_ISO_DESC_SIZE);
	free(p);
	assert_memory_equal(&out, &d, sizeof(out));
}

/* SETUP is little-endian: the byte order flips relative to USB/IP's. */
static void test_setup_le(void **state)
{
	static const uint8_t raw[8] = {
		0x21,		/* 0 bmRequestType 0x21 (OUT, class, iface) */
		0x20,		/* 1 bRequest      SET_LINE_CODING */
		0x34, 0x12,	/* 2 wValue        0x1234 */
		0x01, 0x00,	/* 4 wIndex        1 */
		0x07, 0x00,	/* 6 wLength       7 */
	};
	struct usb_setup s;
	uint8_t back[8];

	(void)state;
	usb_setup_unpack(&s, raw);
	assert_int_equal(s.bmRequestType, 0x21);
	assert_int_equal(s.bRequest, 0x20);
	assert_int_equal(s.wValue, 0x1234);
	assert_int_equal(s.wIndex, 1);
	assert_int_equal(s.wLength, 7);
	memset(back, 0xa5, sizeof(back));
	usb_setup_pack(&s, back);
	assert_memory_equal(back, raw, sizeof(raw));
}

/*
 * The interrupt IN pair captured in the kernel's usbip_protocol.rst
 * (EXAMPLE section), an independent check of the offsets above.
 */
static void test_kernel_doc_capture(void **state)
{
	static const uint8_t cmd[USBIP_HDR_SIZE] = {
		0x00, 0x00, 0x00, 0x01,	/* 0x00 command       CMD_SUBMIT */
		0x00, 0x00, 0x0d, 0x05,	/* 0x04 seqnum        0xd05 */
		0x00, 0x01, 0x00, 0x0f,	/* 0x08 devid         bus 1, dev 15 */
		0x00, 0x00, 0x00, 0x01,	/* 0x0c direction     IN */
		0x00, 0x00, 0x00, 0x01,	/* 0x10 ep            1 */
		0x00, 0x00, 0x02, 0x00,	/* 0x14 transfer_flags DIR_IN */
		0x00, 0x00, 0x00, 0x40,	/* 0x18 transfer_buffer_length 64 */
		0xff, 0xff, 0xff, 0xff,	/* 0x1c start_frame   -1 */
		0x00, 0x00, 0x00, 0x00,	/* 0x20 number_of_packets 0 */
		0x00, 0x00, 0x00, 0x04,	/* 0x24 interval      4 */
		0, 0, 0, 0, 0, 0, 0, 0,	/* 0x28 setup         zeros */
	};
	static const uint8_t ret[USBIP_HDR_SIZE] = {
		0x00, 0x00, 0x00, 0x03,	/* 0x00 command       RET_SUBMIT */
		0x00, 0x00, 0x0d, 0x05,	/* 0x04 seqnum        0xd05 */
		0x00, 0x00, 0x00, 0x00,	/* 0x08 devid         0 */
		0x00, 0x00, 0x00, 0x00,	/* 0x0c direction     0 */
		0x00, 0x00, 0x00, 0x00,	/* 0x10 ep            0 */
		0x00, 0x00, 0x00, 0x00,	/* 0x14 status        0 */
		0x00, 0x00, 0x00, 0x40,	/* 0x18 actual_length 64 */
		0xff, 0xff, 0xff, 0xff,	/* 0x1c start_frame   -1 */
		0x00, 0x00, 0x00, 0x00,	/* 0x20 number_of_packets 0 */
		0x00, 0x00, 0x00, 0x00,	/* 0x24 error_count   0 */
		0, 0, 0, 0, 0, 0, 0, 0,	/* 0x28 padding       zeros */
	};
	struct usbip_hdr h;
	uint8_t buf[USBIP_HDR_SIZE];

	(void)state;
	assert_int_equal(cmd_from(&h, cmd, sizeof(cmd)), USBIP_HDR_SIZE);
	assert_int_equal(h.base.seqnum, 0xd05);
	assert_int_equal(h.base.devid >> 16, 1);
	assert_int_equal(h.base.devid & 0xffff, 15);
	assert_int_equal(h.base.ep, 1);
	assert_int_equal(h.u.cmd_submit.transfer_buffer_length, 64);
	assert_int_equal(h.u.cmd_submit.start_frame, -1);
	assert_int_equal(h.u.cmd_submit.interval, 4);
	assert_int_equal(usbip_cmd_payload_len(&h), 0);
	usbip_hdr_pack(&h, buf);
	assert_memory_equal(buf, cmd, sizeof(cmd));

	assert_int_equal(ret_from(&h, ret, sizeof(ret)), USBIP_HDR_SIZE);
	assert_int_equal(h.u.ret_submit.actual_length, 64);
	assert_int_equal(h.u.ret_submit.start_frame, -1);
	usbip_hdr_pack(&h, buf);
	assert_memory_equal(buf, ret, sizeof(ret));
}

/* ---- round trips from structs ------------------------------------------- */

static void test_round_trips(void **state)
{
	struct usbip_hdr in = {
		.base = { .command = USBIP_CMD_SUBMIT, .seqnum = 0xfedcba98,
			  .devid = 0xffff00ff, .direction = USBIP_DIR_OUT,
			  .ep = 15 },
		.u.cmd_submit = {
			.transfer_flags = 0x80000001,
			.transfer_buffer_length = (int32_t)USBIP_MAX_TRANSFER,
			.start_frame = -5,
			.number_of_packets = USBIP_MAX_ISO_PACKETS,
			.interval = 0x7fffffff,
			.setup = { 1, 2, 3, 4, 5, 6, 7, 8 },
		},
	};
	struct usbip_hdr out;
	struct usbip_iso_desc iso = { 0xffffffff, 0, 0x80000000, INT32_MIN };
	struct usbip_iso_desc iso_out;
	struct usbip_usb_device dev_out;
	struct usb_setup s = { 0xc0, 0xff, 0xffff, 0x8000, 0x00ff }, s_out;
	uint8_t buf[USBIP_USB_DEVICE_SIZE];

	(void)state;
	/* CMD_SUBMIT at every limit */
	usbip_hdr_pack(&in, buf);
	memset(&out, 0xff, sizeof(out));
	assert_int_equal(usbip_hdr_unpack_cmd(&out, buf, USBIP_HDR_SIZE),
			 USBIP_HDR_SIZE);
	assert_memory_equal(&out.base, &in.base, sizeof(in.base));
	assert_memory_equal(&out.u.cmd_submit, &in.u.cmd_submit,
			    sizeof(in.u.cmd_submit));
	assert_int_equal(usbip_cmd_payload_len(&out),
			 USBIP_MAX_TRANSFER +
			 USBIP_MAX_ISO_PACKETS * USBIP_ISO_DESC_SIZE);

	/* CMD_UNLINK */
	in = (struct usbip_hdr){
		.base = { .command = USBIP_CMD_UNLINK, .seqnum = 9,
			  .direction = USBIP_DIR_IN, .ep = 1 },
		.u.cmd_unlink = { .seqnum = 0xffffffff },
	};
	usbip_hdr_pack(&in, buf);
	assert_int_equal(usbip_hdr_unpack_cmd(&out, buf, USBIP_HDR_SIZE),
			 USBIP_HDR_SIZE);
	assert_memory_equal(&out.base, &in.base, sizeof(in.base));
	assert_int_equal(out.u.cmd_unlink.seqnum, 0xffffffff);

	/* RET_SUBMIT with iso fields */
	in = (struct usbip_hdr){
		.base = { .command = USBIP_RET_SUBMIT, .seqnum = 3 },
		.u.ret_submit = { .status = -EXDEV, .actual_length = 300,
				  .start_frame = 17, .number_of_packets = 3,
				  .error_count = 1 },
	};
	usbip_hdr_pack(&in, buf);
	assert_int_equal(usbip_hdr_unpack_ret(&out, buf, USBIP_HDR_SIZE),
			 USBIP_HDR_SIZE);
	assert_memory_equal(&out.base, &in.base, sizeof(in.base));
	assert_memory_equal(&out.u.ret_submit, &in.u.ret_submit,
			    sizeof(in.u.ret_submit));

	/* RET_UNLINK status 0: the URB had already completed */
	in = (struct usbip_hdr){
		.base = { .command = USBIP_RET_UNLINK, .seqnum = 10 },
		.u.ret_unlink = { .status = 0 },
	};
	usbip_hdr_pack(&in, buf);
	assert_int_equal(usbip_hdr_unpack_ret(&out, buf, USBIP_HDR_SIZE),
			 USBIP_HDR_SIZE);
	assert_memory_equal(&out.base, &in.base, sizeof(in.base));
	assert_int_equal(out.u.ret_unlink.status, 0);

	/* iso descriptor with extreme values */
	usbip_iso_desc_pack(&iso, buf);
	usbip_iso_desc_unpack(&iso_out, buf, USBIP_ISO_DESC_SIZE);
	assert_memory_equal(&iso_out, &iso, sizeof(iso));

	/* device record */
	usbip_usb_device_pack(&device_struct, buf);
	usbip_usb_device_unpack(&dev_out, buf, USBIP_USB_DEVICE_SIZE);
	assert_memory_equal(&dev_out, &device_struct, sizeof(dev_out));

	/* SETUP */
	usb_setup_pack(&s, buf);
	usb_setup_unpack(&s_out, buf);
	assert_memory_equal(&s_out, &s, sizeof(s));
}

/* ---- rejections --------------------------------------------------------- */

static void test_truncated(void **state)
{
	uint8_t dev[USBIP_USB_DEVICE_SIZE];

	(void)state;
	build_device_vector(dev);
	check_truncation(unpack_op_common, req_devlist, sizeof(req_devlist));
	check_truncation(unpack_device, dev, sizeof(dev));
	check_truncation(unpack_interface, interface_vec,
			 sizeof(interface_vec));
	check_truncation(unpack_import_req, req_import + USBIP_OP_COMMON_SIZE,
			 USBIP_BUSID_SIZE);
	check_truncation(unpack_cmd, cmd_submit_ctrl_in, USBIP_HDR_SIZE);
	check_truncation(unpack_cmd, cmd_submit_bulk_out, USBIP_HDR_SIZE);
	check_truncation(unpack_cmd, cmd_submit_iso_in, USBIP_HDR_SIZE);
	check_truncation(unpack_cmd, cmd_unlink, USBIP_HDR_SIZE);
	check_truncation(unpack_ret, ret_submit_data, USBIP_HDR_SIZE);
	check_truncation(unpack_ret, ret_unlink, USBIP_HDR_SIZE);
	check_truncation(unpack_iso, iso_desc_vec, sizeof(iso_desc_vec));
}

/* A short buffer is -EAGAIN even when the bytes present are invalid. */
static void test_truncated_before_invalid(void **state)
{
	uint8_t v[USBIP_HDR_SIZE];
	size_t len;

	(void)state;
	memset(v, 0xff, sizeof(v));	/* command, direction, ep all bad */
	for (len = 0; len < USBIP_HDR_SIZE; len++) {
		assert_int_equal(unpack_cmd(v, len), -EAGAIN);
		assert_int_equal(unpack_ret(v, len), -EAGAIN);
	}
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
	assert_int_equal(unpack_ret(v, sizeof(v)), -EPROTO);
}

static void test_unknown_command(void **state)
{
	static const uint32_t bad[] = {
		0, 5, 0x100, 0x80000001, 0xffffffff,
	};
	uint8_t v[USBIP_HDR_SIZE];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memcpy(v, cmd_submit_bulk_out, sizeof(v));
		poke_be32(v, 0x00, bad[i]);
		assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
		memcpy(v, ret_submit_data, sizeof(v));
		poke_be32(v, 0x00, bad[i]);
		assert_int_equal(unpack_ret(v, sizeof(v)), -EPROTO);
	}
}

/* Replies are not commands and commands are not replies. */
static void test_wrong_side(void **state)
{
	(void)state;
	assert_int_equal(unpack_cmd(ret_submit_data, USBIP_HDR_SIZE), -EPROTO);
	assert_int_equal(unpack_cmd(ret_submit_stall, USBIP_HDR_SIZE),
			 -EPROTO);
	assert_int_equal(unpack_cmd(ret_unlink, USBIP_HDR_SIZE), -EPROTO);
	assert_int_equal(unpack_ret(cmd_submit_bulk_out, USBIP_HDR_SIZE),
			 -EPROTO);
	assert_int_equal(unpack_ret(cmd_unlink, USBIP_HDR_SIZE), -EPROTO);
}

static void test_bad_direction(void **state)
{
	static const uint32_t bad[] = { 2, 0x100, 0x80000000, 0xffffffff };
	uint8_t v[USBIP_HDR_SIZE];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memcpy(v, cmd_submit_bulk_out, sizeof(v));
		poke_be32(v, 0x0c, bad[i]);
		assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
		memcpy(v, cmd_unlink, sizeof(v));
		poke_be32(v, 0x0c, bad[i]);
		assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
	}
}

static void test_bad_ep(void **state)
{
	uint8_t v[USBIP_HDR_SIZE];

	(void)state;
	memcpy(v, cmd_submit_bulk_out, sizeof(v));
	poke_be32(v, 0x10, 15);			/* the last valid one */
	assert_int_equal(unpack_cmd(v, sizeof(v)), USBIP_HDR_SIZE);
	poke_be32(v, 0x10, 16);
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
	poke_be32(v, 0x10, 0x81);		/* an address, not a number */
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
	poke_be32(v, 0x10, 0xffffffff);
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
}

static void test_bad_transfer_length(void **state)
{
	uint8_t v[USBIP_HDR_SIZE];
	struct usbip_hdr h;

	(void)state;
	memcpy(v, cmd_submit_bulk_out, sizeof(v));
	poke_be32(v, 0x18, 0);			/* zero-length OUT is fine */
	assert_int_equal(cmd_from(&h, v, sizeof(v)), USBIP_HDR_SIZE);
	assert_int_equal(usbip_cmd_payload_len(&h), 0);
	poke_be32(v, 0x18, USBIP_MAX_TRANSFER);	/* the limit itself */
	assert_int_equal(cmd_from(&h, v, sizeof(v)), USBIP_HDR_SIZE);
	assert_int_equal(usbip_cmd_payload_len(&h), USBIP_MAX_TRANSFER);
	poke_be32(v, 0x18, USBIP_MAX_TRANSFER + 1);
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
	poke_be32(v, 0x18, 0x7fffffff);
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
	poke_be32(v, 0x18, 0xffffffff);		/* -1 */
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
	poke_be32(v, 0x18, 0x80000000);		/* INT32_MIN */
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);

	/* the same bounds on an IN request, which carries no data */
	memcpy(v, cmd_submit_ctrl_in, sizeof(v));
	poke_be32(v, 0x18, 0xffffffff);
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
	poke_be32(v, 0x18, USBIP_MAX_TRANSFER + 1);
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);

	/* and on a reply's actual_length */
	memcpy(v, ret_submit_data, sizeof(v));
	poke_be32(v, 0x18, 0xffffffff);
	assert_int_equal(unpack_ret(v, sizeof(v)), -EPROTO);
	poke_be32(v, 0x18, USBIP_MAX_TRANSFER + 1);
	assert_int_equal(unpack_ret(v, sizeof(v)), -EPROTO);
}

static void test_bad_number_of_packets(void **state)
{
	uint8_t v[USBIP_HDR_SIZE];
	struct usbip_hdr h;

	(void)state;
	memcpy(v, cmd_submit_iso_out, sizeof(v));
	poke_be32(v, 0x20, 0xfffffffe);		/* -2 */
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
	poke_be32(v, 0x20, USBIP_MAX_ISO_PACKETS + 1);	/* 1025 */
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);
	poke_be32(v, 0x20, 0x80000000);		/* INT32_MIN */
	assert_int_equal(unpack_cmd(v, sizeof(v)), -EPROTO);

	poke_be32(v, 0x20, USBIP_MAX_ISO_PACKETS);	/* 1024 is fine */
	assert_int_equal(cmd_from(&h, v, sizeof(v)), USBIP_HDR_SIZE);
	assert_int_equal(h.u.cmd_submit.number_of_packets, 1024);
	assert_int_equal(usbip_cmd_payload_len(&h), 576 + 1024 * 16);

	poke_be32(v, 0x20, 0xffffffff);		/* -1 folds to 0 */
	assert_int_equal(cmd_from(&h, v, sizeof(v)), USBIP_HDR_SIZE);
	assert_int_equal(h.u.cmd_submit.number_of_packets, 0);
	assert_int_equal(usbip_cmd_payload_len(&h), 576);

	/* a reply gets the same bounds */
	memcpy(v, ret_submit_data, sizeof(v));
	poke_be32(v, 0x20, 0xfffffffe);
	assert_int_equal(unpack_ret(v, sizeof(v)), -EPROTO);
	poke_be32(v, 0x20, USBIP_MAX_ISO_PACKETS + 1);
	assert_int_equal(unpack_ret(v, sizeof(v)), -EPROTO);
	poke_be32(v, 0x20, 0xffffffff);
	assert_int_equal(ret_from(&h, v, sizeof(v)), USBIP_HDR_SIZE);
	assert_int_equal(h.u.ret_submit.number_of_packets, 0);
}

/* ---- payload length ----------------------------------------------------- */

static void test_payload_len(void **state)
{
	struct usbip_hdr h = { .base = { .command = USBIP_CMD_SUBMIT } };

	(void)state;
	/* OUT, no iso: the data */
	h.base.direction = USBIP_DIR_OUT;
	h.u.cmd_submit.transfer_buffer_length = 31;
	h.u.cmd_submit.number_of_packets = 0;
	assert_int_equal(usbip_cmd_payload_len(&h), 31);
	/* IN, no iso: nothing */
	h.base.direction = USBIP_DIR_IN;
	assert_int_equal(usbip_cmd_payload_len(&h), 0);
	/* IN, 8 packets: descriptors only */
	h.u.cmd_submit.number_of_packets = 8;
	assert_int_equal(usbip_cmd_payload_len(&h), 128);
	/* OUT, 8 packets: data then descriptors */
	h.base.direction = USBIP_DIR_OUT;
	assert_int_equal(usbip_cmd_payload_len(&h), 31 + 128);
	/* a hand-built header with negatives counts them as nothing */
	h.u.cmd_submit.transfer_buffer_length = -1;
	h.u.cmd_submit.number_of_packets = -1;
	assert_int_equal(usbip_cmd_payload_len(&h), 0);
	/* UNLINK and replies carry no command payload */
	h = (struct usbip_hdr){ .base = { .command = USBIP_CMD_UNLINK } };
	assert_int_equal(usbip_cmd_payload_len(&h), 0);
	h = (struct usbip_hdr){ .base = { .command = USBIP_RET_SUBMIT },
				.u.ret_submit = { .actual_length = 64 } };
	assert_int_equal(usbip_cmd_payload_len(&h), 0);
}

/* An unknown command packs its basic part and zeros. */
static void test_pack_unknown_zeroes(void **state)
{
	static const uint8_t expect[USBIP_HDR_SIZE] = {
		0x00, 0x00, 0x00, 0x09,	/* 0x00 command   9 (unknown) */
		0x00, 0x00, 0x00, 0x01,	/* 0x04 seqnum    1 */
		0x00, 0x00, 0x00, 0x00,	/* 0x08 devid     0 */
		0x00, 0x00, 0x00, 0x01,	/* 0x0c direction 1 */
		0x00, 0x00, 0x00, 0x02,	/* 0x10 ep        2 */
		/* 0x14..0x2f zeros */
	};
	struct usbip_hdr h;
	uint8_t buf[USBIP_HDR_SIZE];

	(void)state;
	memset(&h, 0x5a, sizeof(h));
	h.base = (struct usbip_hdr_basic){ .command = 9, .seqnum = 1,
					   .direction = 1, .ep = 2 };
	memset(buf, 0xa5, sizeof(buf));
	usbip_hdr_pack(&h, buf);
	assert_memory_equal(buf, expect, sizeof(expect));
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(usbip_op_name(OP_REQ_DEVLIST), "OP_REQ_DEVLIST");
	assert_string_equal(usbip_op_name(OP_REP_DEVLIST), "OP_REP_DEVLIST");
	assert_string_equal(usbip_op_name(OP_REQ_IMPORT), "OP_REQ_IMPORT");
	assert_string_equal(usbip_op_name(OP_REP_IMPORT), "OP_REP_IMPORT");
	assert_string_equal(usbip_op_name(0x8004), "unknown");
	assert_string_equal(usbip_op_name(0xffff), "unknown");
	assert_string_equal(usbip_cmd_name(USBIP_CMD_SUBMIT), "CMD_SUBMIT");
	assert_string_equal(usbip_cmd_name(USBIP_CMD_UNLINK), "CMD_UNLINK");
	assert_string_equal(usbip_cmd_name(USBIP_RET_SUBMIT), "RET_SUBMIT");
	assert_string_equal(usbip_cmd_name(USBIP_RET_UNLINK), "RET_UNLINK");
	assert_string_equal(usbip_cmd_name(0), "unknown");
	assert_string_equal(usbip_cmd_name(5), "unknown");
}

/* A rejected header is logged with its fields as sent, unchecked. */
static void test_hdr_describe(void **state)
{
	static const uint8_t raw[USBIP_HDR_SIZE] = {
		0x00, 0x00, 0x00, 0x09,		/* command: not one of ours */
		0x00, 0x00, 0x01, 0x02,		/* seqnum 258 */
		0x00, 0x01, 0x00, 0x02,		/* devid 1-2 */
		0x00, 0x00, 0x00, 0x07,		/* direction 7: invalid */
		0x00, 0x00, 0x00, 0x20,		/* ep 32: invalid */
		0x00, 0x00, 0x00, 0x00,		/* transfer_flags */
		0xff, 0xff, 0xff, 0xff,		/* transfer_buffer_length -1 */
		0x00, 0x00, 0x00, 0x00,		/* start_frame */
		0x00, 0x00, 0x00, 0x03,		/* number_of_packets 3 */
	};
	char buf[128];

	(void)state;
	assert_string_equal(usbip_hdr_describe(raw, buf, sizeof(buf)),
			    "command 0x9 seq 258 dir 7 ep 32 len -1 packets 3");
}

/* OP_REP_DEVLIST's device count: be32 after op_common */
static void test_devlist_ndev(void **state)
{
	uint8_t b[USBIP_DEVLIST_NDEV_SIZE];

	(void)state;
	assert_int_equal(usbip_devlist_ndev_pack(0x01020304, b), 4);
	assert_memory_equal(b, "\x01\x02\x03\x04", 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_op_common_golden),
		cmocka_unit_test(test_op_common_any_code),
		cmocka_unit_test(test_device_golden),
		cmocka_unit_test(test_device_unpack),
		cmocka_unit_test(test_device_strings_terminated),
		cmocka_unit_test(test_device_pack_zero_fills),
		cmocka_unit_test(test_interface_golden),
		cmocka_unit_test(test_devlist_reply),
		cmocka_unit_test(test_import_req_golden),
		cmocka_unit_test(test_import_req_busid_terminated),
		cmocka_unit_test(test_cmd_submit_ctrl_in),
		cmocka_unit_test(test_cmd_submit_bulk_out),
		cmocka_unit_test(test_cmd_submit_iso),
		cmocka_unit_test(test_cmd_unlink),
		cmocka_unit_test(test_ret_submit),
		cmocka_unit_test(test_ret_submit_stall),
		cmocka_unit_test(test_ret_unlink),
		cmocka_unit_test(test_iso_desc),
		cmocka_unit_test(test_setup_le),
		cmocka_unit_test(test_kernel_doc_capture),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_truncated_before_invalid),
		cmocka_unit_test(test_unknown_command),
		cmocka_unit_test(test_wrong_side),
		cmocka_unit_test(test_bad_direction),
		cmocka_unit_test(test_bad_ep),
		cmocka_unit_test(test_bad_transfer_length),
		cmocka_unit_test(test_bad_number_of_packets),
		cmocka_unit_test(test_payload_len),
		cmocka_unit_test(test_pack_unknown_zeroes),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_hdr_describe),
		cmocka_unit_test(test_devlist_ndev),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
