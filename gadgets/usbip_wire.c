// SPDX-License-Identifier: GPL-2.0
/*
 * usbip_wire.c - pack/unpack for the USB/IP wire catalogue (usbip_wire.h).
 *
 * Each PDU's layout is an enum of byte offsets, every offset written as the
 * previous one plus that field's width, so that the _Static_asserts below
 * check the *_SIZE macros against the sum of the field widths.  The layouts
 * match the offset tables in docs/usbip-protocol.md.
 *
 * Unpack functions check len before reading a single byte; everything a peer
 * controls that later sizes an allocation or a loop (transfer_buffer_length,
 * number_of_packets) is range-checked here, at the socket edge, so no caller
 * sees an unchecked value.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "usbip_wire.h"

#define FIELD_SIZE(type, member) sizeof(((type *)0)->member)

/* ---- op_common: be16 version, be16 code, be32 status ---- */
enum {
	OPC_VERSION = 0,
	OPC_CODE = OPC_VERSION + 2,
	OPC_STATUS = OPC_CODE + 2,
	OPC_END = OPC_STATUS + 4,
};
_Static_assert(OPC_END == USBIP_OP_COMMON_SIZE, "op_common is 8 bytes");

/* ---- usb_device record (OP_REP_DEVLIST, OP_REP_IMPORT) ---- */
enum {
	DEV_PATH = 0,
	DEV_BUSID = DEV_PATH + USBIP_SYSFS_PATH_MAX,
	DEV_BUSNUM = DEV_BUSID + USBIP_BUSID_SIZE,	/* be32 */
	DEV_DEVNUM = DEV_BUSNUM + 4,			/* be32 */
	DEV_SPEED = DEV_DEVNUM + 4,			/* be32 */
	DEV_ID_VENDOR = DEV_SPEED + 4,			/* be16 */
	DEV_ID_PRODUCT = DEV_ID_VENDOR + 2,		/* be16 */
	DEV_BCD_DEVICE = DEV_ID_PRODUCT + 2,		/* be16 */
	DEV_CLASS = DEV_BCD_DEVICE + 2,
	DEV_SUBCLASS = DEV_CLASS + 1,
	DEV_PROTOCOL = DEV_SUBCLASS + 1,
	DEV_CONF_VALUE = DEV_PROTOCOL + 1,
	DEV_NUM_CONFS = DEV_CONF_VALUE + 1,
	DEV_NUM_INTFS = DEV_NUM_CONFS + 1,
	DEV_END = DEV_NUM_INTFS + 1,
};
_Static_assert(DEV_END == USBIP_USB_DEVICE_SIZE, "usb_device is 312 bytes");
_Static_assert(DEV_BUSID == 0x100 && DEV_BUSNUM == 0x120 &&
	       DEV_ID_VENDOR == 0x12c && DEV_CLASS == 0x132,
	       "usb_device offsets as in docs/usbip-protocol.md");
_Static_assert(FIELD_SIZE(struct usbip_usb_device, path) ==
	       USBIP_SYSFS_PATH_MAX, "path buffer is the wire width");
_Static_assert(FIELD_SIZE(struct usbip_usb_device, busid) ==
	       USBIP_BUSID_SIZE, "busid buffer is the wire width");

/* ---- usb_interface record: three class bytes and one pad byte ---- */
enum {
	INTF_CLASS = 0,
	INTF_SUBCLASS = INTF_CLASS + 1,
	INTF_PROTOCOL = INTF_SUBCLASS + 1,
	INTF_PAD = INTF_PROTOCOL + 1,
	INTF_END = INTF_PAD + 1,
};
_Static_assert(INTF_END == USBIP_USB_INTERFACE_SIZE, "usb_interface is 4");

_Static_assert(OPC_END + USBIP_BUSID_SIZE == USBIP_IMPORT_REQ_SIZE,
	       "OP_REQ_IMPORT is op_common + busid");

/* ---- URB phase header: 20-byte basic part, 28-byte command part ---- */
enum {
	HDR_COMMAND = 0,
	HDR_SEQNUM = HDR_COMMAND + 4,
	HDR_DEVID = HDR_SEQNUM + 4,
	HDR_DIRECTION = HDR_DEVID + 4,
	HDR_EP = HDR_DIRECTION + 4,
	HDR_BASIC_END = HDR_EP + 4,
};
_Static_assert(HDR_BASIC_END == 20, "usbip_header_basic is 20 bytes");

/* CMD_SUBMIT */
enum {
	CS_FLAGS = HDR_BASIC_END,
	CS_LENGTH = CS_FLAGS + 4,
	CS_START_FRAME = CS_LENGTH + 4,
	CS_NUM_PACKETS = CS_START_FRAME + 4,
	CS_INTERVAL = CS_NUM_PACKETS + 4,
	CS_SETUP = CS_INTERVAL + 4,
	CS_END = CS_SETUP + 8,
};
_Static_assert(CS_END == USBIP_HDR_SIZE, "CMD_SUBMIT header is 48 bytes");
_Static_assert(FIELD_SIZE(struct usbip_cmd_submit, setup) == 8,
	       "SETUP is 8 bytes");

/* RET_SUBMIT: same offsets as CMD_SUBMIT, 8 zero bytes where SETUP was */
enum {
	RS_STATUS = HDR_BASIC_END,
	RS_ACTUAL = RS_STATUS + 4,
	RS_START_FRAME = RS_ACTUAL + 4,
	RS_NUM_PACKETS = RS_START_FRAME + 4,
	RS_ERROR_COUNT = RS_NUM_PACKETS + 4,
	RS_PAD = RS_ERROR_COUNT + 4,
	RS_END = RS_PAD + 8,
};
_Static_assert(RS_END == USBIP_HDR_SIZE, "RET_SUBMIT header is 48 bytes");
_Static_assert((int)RS_NUM_PACKETS == (int)CS_NUM_PACKETS,
	       "number_of_packets shares its offset in both directions");

/* CMD_UNLINK and RET_UNLINK: one be32 then 24 zero bytes */
enum {
	UL_WORD = HDR_BASIC_END,	/* unlink seqnum, or status */
	UL_PAD = UL_WORD + 4,
	UL_END = UL_PAD + 24,
};
_Static_assert(UL_END == USBIP_HDR_SIZE, "UNLINK headers are 48 bytes");
_Static_assert((int)UL_WORD == (int)RS_STATUS,
	       "RET_UNLINK status shares RET_SUBMIT's status offset");

/* ---- iso packet descriptor: four be32 ---- */
enum {
	ISO_OFFSET = 0,
	ISO_LENGTH = ISO_OFFSET + 4,
	ISO_ACTUAL = ISO_LENGTH + 4,
	ISO_STATUS = ISO_ACTUAL + 4,
	ISO_END = ISO_STATUS + 4,
};
_Static_assert(ISO_END == USBIP_ISO_DESC_SIZE, "iso descriptor is 16 bytes");

/* ---- SETUP (USB 2.0 table 9-2), little-endian ---- */
enum {
	SETUP_REQUEST_TYPE = 0,
	SETUP_REQUEST = SETUP_REQUEST_TYPE + 1,
	SETUP_VALUE = SETUP_REQUEST + 1,
	SETUP_INDEX = SETUP_VALUE + 2,
	SETUP_LENGTH = SETUP_INDEX + 2,
	SETUP_END = SETUP_LENGTH + 2,
};
_Static_assert(SETUP_END == 8, "SETUP is 8 bytes");

/* The limits must fit the signed wire fields they bound. */
_Static_assert(USBIP_MAX_TRANSFER <= INT32_MAX, "limit fits an int32");
_Static_assert((uint64_t)USBIP_MAX_TRANSFER +
	       (uint64_t)USBIP_MAX_ISO_PACKETS * USBIP_ISO_DESC_SIZE <= SIZE_MAX,
	       "usbip_cmd_payload_len() cannot overflow");

/*
 * Fixed-width string fields: the wire bytes up to the first NUL, at most
 * size - 1 of them, then zeros to the end.  Both directions leave the
 * result NUL-terminated and free of bytes after the terminator, so a peer
 * that fills the whole field gets its string cut, not an unterminated one,
 * and garbage behind our own terminator never reaches the wire.
 */
static void str_field_copy(char *dst, const char *src, size_t size)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	memset(dst + n, 0, size - n);
}

static int32_t get_be32s(const uint8_t *p)
{
	return (int32_t)get_be32(p);
}

static void put_be32s(uint8_t *p, int32_t v)
{
	put_be32(p, (uint32_t)v);
}

/* ---------------------------------------------------------------------- */

size_t usbip_op_common_pack(const struct usbip_op_common *op, uint8_t *dst)
{
	put_be16(dst + OPC_VERSION, op->version);
	put_be16(dst + OPC_CODE, op->code);
	put_be32(dst + OPC_STATUS, op->status);
	return OPC_END;
}

int usbip_op_common_unpack(struct usbip_op_common *op, const uint8_t *src,
			   size_t len)
{
	if (len < OPC_END)
		return -EAGAIN;
	op->version = get_be16(src + OPC_VERSION);
	op->code = get_be16(src + OPC_CODE);
	op->status = get_be32(src + OPC_STATUS);
	return OPC_END;
}

size_t usbip_usb_device_pack(const struct usbip_usb_device *d, uint8_t *dst)
{
	str_field_copy((char *)dst + DEV_PATH, d->path, USBIP_SYSFS_PATH_MAX);
	str_field_copy((char *)dst + DEV_BUSID, d->busid, USBIP_BUSID_SIZE);
	put_be32(dst + DEV_BUSNUM, d->busnum);
	put_be32(dst + DEV_DEVNUM, d->devnum);
	put_be32(dst + DEV_SPEED, d->speed);
	put_be16(dst + DEV_ID_VENDOR, d->idVendor);
	put_be16(dst + DEV_ID_PRODUCT, d->idProduct);
	put_be16(dst + DEV_BCD_DEVICE, d->bcdDevice);
	dst[DEV_CLASS] = d->bDeviceClass;
	dst[DEV_SUBCLASS] = d->bDeviceSubClass;
	dst[DEV_PROTOCOL] = d->bDeviceProtocol;
	dst[DEV_CONF_VALUE] = d->bConfigurationValue;
	dst[DEV_NUM_CONFS] = d->bNumConfigurations;
	dst[DEV_NUM_INTFS] = d->bNumInterfaces;
	return DEV_END;
}

int usbip_usb_device_unpack(struct usbip_usb_device *d, const uint8_t *src,
			    size_t len)
{
	if (len < DEV_END)
		return -EAGAIN;
	/* strnlen() stops at size - 1: the peer's bytes need no NUL */
	str_field_copy(d->path, (const char *)src + DEV_PATH,
		       USBIP_SYSFS_PATH_MAX);
	str_field_copy(d->busid, (const char *)src + DEV_BUSID,
		       USBIP_BUSID_SIZE);
	d->busnum = get_be32(src + DEV_BUSNUM);
	d->devnum = get_be32(src + DEV_DEVNUM);
	d->speed = get_be32(src + DEV_SPEED);
	d->idVendor = get_be16(src + DEV_ID_VENDOR);
	d->idProduct = get_be16(src + DEV_ID_PRODUCT);
	d->bcdDevice = get_be16(src + DEV_BCD_DEVICE);
	d->bDeviceClass = src[DEV_CLASS];
	d->bDeviceSubClass = src[DEV_SUBCLASS];
	d->bDeviceProtocol = src[DEV_PROTOCOL];
	d->bConfigurationValue = src[DEV_CONF_VALUE];
	d->bNumConfigurations = src[DEV_NUM_CONFS];
	d->bNumInterfaces = src[DEV_NUM_INTFS];
	return DEV_END;
}

size_t usbip_usb_interface_pack(const struct usbip_usb_interface *i,
				uint8_t *dst)
{
	dst[INTF_CLASS] = i->bInterfaceClass;
	dst[INTF_SUBCLASS] = i->bInterfaceSubClass;
	dst[INTF_PROTOCOL] = i->bInterfaceProtocol;
	dst[INTF_PAD] = 0;
	return INTF_END;
}

int usbip_usb_interface_unpack(struct usbip_usb_interface *i,
			       const uint8_t *src, size_t len)
{
	if (len < INTF_END)
		return -EAGAIN;
	i->bInterfaceClass = src[INTF_CLASS];
	i->bInterfaceSubClass = src[INTF_SUBCLASS];
	i->bInterfaceProtocol = src[INTF_PROTOCOL];
	/* the pad byte is ignored, whatever its value */
	return INTF_END;
}

/* OP_REP_DEVLIST: the device count after op_common */
size_t usbip_devlist_ndev_pack(uint32_t ndev, uint8_t *dst)
{
	put_be32(dst, ndev);
	return USBIP_DEVLIST_NDEV_SIZE;
}

/* src is the request body, i.e. the 32 bytes after op_common. */
int usbip_import_req_unpack(char busid[USBIP_BUSID_SIZE], const uint8_t *src,
			    size_t len)
{
	if (len < USBIP_BUSID_SIZE)
		return -EAGAIN;
	str_field_copy(busid, (const char *)src, USBIP_BUSID_SIZE);
	return USBIP_BUSID_SIZE;
}

/* ---------------------------------------------------------------------- */

size_t usbip_hdr_pack(const struct usbip_hdr *h, uint8_t *dst)
{
	const struct usbip_hdr_basic *b = &h->base;

	/* padding and unused words go out as zeros */
	memset(dst, 0, USBIP_HDR_SIZE);
	put_be32(dst + HDR_COMMAND, b->command);
	put_be32(dst + HDR_SEQNUM, b->seqnum);
	put_be32(dst + HDR_DEVID, b->devid);
	put_be32(dst + HDR_DIRECTION, b->direction);
	put_be32(dst + HDR_EP, b->ep);

	switch (b->command) {
	case USBIP_CMD_SUBMIT: {
		const struct usbip_cmd_submit *c = &h->u.cmd_submit;

		put_be32(dst + CS_FLAGS, c->transfer_flags);
		put_be32s(dst + CS_LENGTH, c->transfer_buffer_length);
		put_be32s(dst + CS_START_FRAME, c->start_frame);
		put_be32s(dst + CS_NUM_PACKETS, c->number_of_packets);
		put_be32s(dst + CS_INTERVAL, c->interval);
		memcpy(dst + CS_SETUP, c->setup, sizeof(c->setup));
		break;
	}
	case USBIP_RET_SUBMIT: {
		const struct usbip_ret_submit *r = &h->u.ret_submit;

		put_be32s(dst + RS_STATUS, r->status);
		put_be32s(dst + RS_ACTUAL, r->actual_length);
		put_be32s(dst + RS_START_FRAME, r->start_frame);
		put_be32s(dst + RS_NUM_PACKETS, r->number_of_packets);
		put_be32s(dst + RS_ERROR_COUNT, r->error_count);
		break;
	}
	case USBIP_CMD_UNLINK:
		put_be32(dst + UL_WORD, h->u.cmd_unlink.seqnum);
		break;
	case USBIP_RET_UNLINK:
		put_be32s(dst + UL_WORD, h->u.ret_unlink.status);
		break;
	default:
		/* unknown command: basic part only, the rest stays zero */
		break;
	}
	return USBIP_HDR_SIZE;
}

/*
 * direction and ep index the device's endpoint table; a value outside it
 * means a broken or hostile peer (drop it, as vhci-hcd does).
 */
/* The common part of both unpackers: length, a zeroed h, the basic part. */
static int hdr_basic_unpack(struct usbip_hdr *h, const uint8_t *src,
			    size_t len)
{
	struct usbip_hdr_basic *b = &h->base;

	if (len < USBIP_HDR_SIZE)
		return -EAGAIN;
	memset(h, 0, sizeof(*h));
	b->command = get_be32(src + HDR_COMMAND);
	b->seqnum = get_be32(src + HDR_SEQNUM);
	b->devid = get_be32(src + HDR_DEVID);
	b->direction = get_be32(src + HDR_DIRECTION);
	b->ep = get_be32(src + HDR_EP);
	if (b->direction != USBIP_DIR_OUT && b->direction != USBIP_DIR_IN)
		return -EPROTO;
	if (b->ep >= 16)
		return -EPROTO;
	return 0;
}

/*
 * number_of_packets sizes the iso descriptor array that follows: -1
 * (0xffffffff, "not isochronous" in the kernel's encoding) folds to 0, any
 * other negative count or one above our limit is refused.
 */
static int num_packets_check(int32_t *np)
{
	if (*np == -1) {
		*np = 0;
		return 0;
	}
	if (*np < 0 || *np > USBIP_MAX_ISO_PACKETS)
		return -EPROTO;
	return 0;
}

/* A byte count the peer sends: sizes a buffer, so bounded. */
static int length_check(int32_t len)
{
	if (len < 0 || (uint32_t)len > USBIP_MAX_TRANSFER)
		return -EPROTO;
	return 0;
}

int usbip_hdr_unpack_cmd(struct usbip_hdr *h, const uint8_t *src, size_t len)
{
	int ret = hdr_basic_unpack(h, src, len);

	if (ret)
		return ret;

	switch (h->base.command) {
	case USBIP_CMD_SUBMIT: {
		struct usbip_cmd_submit *c = &h->u.cmd_submit;

		c->transfer_flags = get_be32(src + CS_FLAGS);
		c->transfer_buffer_length = get_be32s(src + CS_LENGTH);
		c->start_frame = get_be32s(src + CS_START_FRAME);
		c->number_of_packets = get_be32s(src + CS_NUM_PACKETS);
		c->interval = get_be32s(src + CS_INTERVAL);
		memcpy(c->setup, src + CS_SETUP, sizeof(c->setup));
		ret = length_check(c->transfer_buffer_length);
		if (ret)
			return ret;
		ret = num_packets_check(&c->number_of_packets);
		if (ret)
			return ret;
		break;
	}
	case USBIP_CMD_UNLINK:
		/* the 24 pad bytes are ignored, whatever their value */
		h->u.cmd_unlink.seqnum = get_be32(src + UL_WORD);
		break;
	default:
		/* RET_* from a client, or garbage */
		return -EPROTO;
	}
	return USBIP_HDR_SIZE;
}

/*
 * The mirror image for a client: actual_length sizes the IN data that
 * follows and number_of_packets the descriptors, so both get the same
 * bounds as their CMD_SUBMIT counterparts.
 */
int usbip_hdr_unpack_ret(struct usbip_hdr *h, const uint8_t *src, size_t len)
{
	int ret = hdr_basic_unpack(h, src, len);

	if (ret)
		return ret;

	switch (h->base.command) {
	case USBIP_RET_SUBMIT: {
		struct usbip_ret_submit *r = &h->u.ret_submit;

		r->status = get_be32s(src + RS_STATUS);
		r->actual_length = get_be32s(src + RS_ACTUAL);
		r->start_frame = get_be32s(src + RS_START_FRAME);
		r->number_of_packets = get_be32s(src + RS_NUM_PACKETS);
		r->error_count = get_be32s(src + RS_ERROR_COUNT);
		ret = length_check(r->actual_length);
		if (ret)
			return ret;
		ret = num_packets_check(&r->number_of_packets);
		if (ret)
			return ret;
		break;
	}
	case USBIP_RET_UNLINK:
		h->u.ret_unlink.status = get_be32s(src + UL_WORD);
		break;
	default:
		/* CMD_* from a server, or garbage */
		return -EPROTO;
	}
	return USBIP_HDR_SIZE;
}

const char *usbip_hdr_describe(const uint8_t *src, char *buf, size_t size)
{
	snprintf(buf, size, "command %#x seq %u dir %u ep %u len %d packets %d",
		 get_be32(src + HDR_COMMAND), get_be32(src + HDR_SEQNUM),
		 get_be32(src + HDR_DIRECTION), get_be32(src + HDR_EP),
		 get_be32s(src + CS_LENGTH), get_be32s(src + CS_NUM_PACKETS));
	return buf;
}

/*
 * Negative fields cannot come out of usbip_hdr_unpack_cmd(); a header built
 * by hand with them counts them as 0 rather than as a huge size_t.
 */
size_t usbip_cmd_payload_len(const struct usbip_hdr *h)
{
	const struct usbip_cmd_submit *c = &h->u.cmd_submit;
	size_t n = 0;

	if (h->base.command != USBIP_CMD_SUBMIT)
		return 0;
	if (h->base.direction == USBIP_DIR_OUT && c->transfer_buffer_length > 0)
		n += (size_t)c->transfer_buffer_length;
	if (c->number_of_packets > 0)
		n += (size_t)c->number_of_packets * USBIP_ISO_DESC_SIZE;
	return n;
}

size_t usbip_iso_desc_pack(const struct usbip_iso_desc *d, uint8_t *dst)
{
	put_be32(dst + ISO_OFFSET, d->offset);
	put_be32(dst + ISO_LENGTH, d->length);
	put_be32(dst + ISO_ACTUAL, d->actual_length);
	put_be32s(dst + ISO_STATUS, d->status);
	return ISO_END;
}

int usbip_iso_desc_unpack(struct usbip_iso_desc *d, const uint8_t *src,
			  size_t len)
{
	if (len < ISO_END)
		return -EAGAIN;
	d->offset = get_be32(src + ISO_OFFSET);
	d->length = get_be32(src + ISO_LENGTH);
	d->actual_length = get_be32(src + ISO_ACTUAL);
	d->status = get_be32s(src + ISO_STATUS);
	return ISO_END;
}

/* ---------------------------------------------------------------------- */

void usb_setup_unpack(struct usb_setup *s, const uint8_t raw[8])
{
	s->bmRequestType = raw[SETUP_REQUEST_TYPE];
	s->bRequest = raw[SETUP_REQUEST];
	s->wValue = get_le16(raw + SETUP_VALUE);
	s->wIndex = get_le16(raw + SETUP_INDEX);
	s->wLength = get_le16(raw + SETUP_LENGTH);
}

void usb_setup_pack(const struct usb_setup *s, uint8_t raw[8])
{
	raw[SETUP_REQUEST_TYPE] = s->bmRequestType;
	raw[SETUP_REQUEST] = s->bRequest;
	put_le16(raw + SETUP_VALUE, s->wValue);
	put_le16(raw + SETUP_INDEX, s->wIndex);
	put_le16(raw + SETUP_LENGTH, s->wLength);
}

const char *usbip_op_name(uint16_t code)
{
	switch (code) {
	case OP_REQ_DEVLIST:
		return "OP_REQ_DEVLIST";
	case OP_REP_DEVLIST:
		return "OP_REP_DEVLIST";
	case OP_REQ_IMPORT:
		return "OP_REQ_IMPORT";
	case OP_REP_IMPORT:
		return "OP_REP_IMPORT";
	default:
		return "unknown";
	}
}

const char *usbip_cmd_name(uint32_t command)
{
	switch (command) {
	case USBIP_CMD_SUBMIT:
		return "CMD_SUBMIT";
	case USBIP_CMD_UNLINK:
		return "CMD_UNLINK";
	case USBIP_RET_SUBMIT:
		return "RET_SUBMIT";
	case USBIP_RET_UNLINK:
		return "RET_UNLINK";
	default:
		return "unknown";
	}
}
