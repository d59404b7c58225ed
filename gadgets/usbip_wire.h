/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usbip_wire.h - the USB/IP wire catalogue (protocol version 1.1.1).
 *
 * Every byte that crosses the socket is described here, a section per
 * operation: op code, the host-order struct logic works with, and the
 * pack/unpack pair that converts at the edge.  Nothing outside usbip_wire.c
 * knows the byte order: USB/IP headers are big-endian, the 8-byte SETUP
 * packet travels verbatim (little-endian inside, see usb_setup_unpack()).
 * docs/usbip-protocol.md has the same layouts as offset tables.
 *
 * Conventions: pack functions write exactly the wire size into dst (the
 * caller provides that much room) and return it; unpack functions read from
 * a buffer of len bytes and return the bytes consumed, or a negative errno:
 * -EAGAIN when len is too short for the whole item (read more), -EPROTO or
 * -EMSGSIZE when the bytes can never be valid (drop the peer).
 */
#ifndef USBRIG_USBIP_WIRE_H
#define USBRIG_USBIP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define USBIP_VERSION		0x0111
#define USBIP_PORT		3240

/* Hard limits on what a peer may make us allocate or loop over. */
#define USBIP_MAX_TRANSFER	(8u * 1024 * 1024)	/* transfer_buffer_length */
#define USBIP_MAX_ISO_PACKETS	1024			/* number_of_packets */

/* ---- byte order helpers: the only place wire order is spelled out ---- */
static inline uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

/* for the device classes' own wire formats (SCSI is big-endian, BOT's
 * CBW/CSW little-endian) */
static inline uint64_t get_be64(const uint8_t *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

static inline void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, v);
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[1] << 8 | p[0];
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/* ======================================================================
 * Operation phase: op_common header (8 bytes) and the op payloads.
 * ====================================================================== */
#define USBIP_OP_COMMON_SIZE	8

#define OP_REQUEST		0x8000
#define OP_REPLY		0x0000
#define OP_DEVLIST		0x0005
#define OP_IMPORT		0x0003
#define OP_REQ_DEVLIST		(OP_REQUEST | OP_DEVLIST)	/* 0x8005 */
#define OP_REP_DEVLIST		(OP_REPLY | OP_DEVLIST)		/* 0x0005 */
#define OP_REQ_IMPORT		(OP_REQUEST | OP_IMPORT)	/* 0x8003 */
#define OP_REP_IMPORT		(OP_REPLY | OP_IMPORT)		/* 0x0003 */

/* op_common.status (tools/usb/usbip/src/usbip_network.h) */
#define ST_OK			0x00
#define ST_NA			0x01	/* device not available */
#define ST_DEV_BUSY		0x02	/* device busy (exported) */
#define ST_DEV_ERR		0x03	/* device in error state */
#define ST_NODEV		0x04	/* device not found */
#define ST_ERROR		0x05	/* unexpected response */

struct usbip_op_common {
	uint16_t version;
	uint16_t code;
	uint32_t status;
};

size_t usbip_op_common_pack(const struct usbip_op_common *op, uint8_t *dst);
/* Does not check version or code: the caller answers a bad one. */
int usbip_op_common_unpack(struct usbip_op_common *op, const uint8_t *src,
			   size_t len);

/* The exported device record, 312 bytes on the wire. */
#define USBIP_SYSFS_PATH_MAX	256
#define USBIP_BUSID_SIZE	32
#define USBIP_USB_DEVICE_SIZE	312
#define USBIP_USB_INTERFACE_SIZE 4

/* usb_device_speed values as vhci-hcd understands them */
enum usbip_speed {
	USBIP_SPEED_UNKNOWN = 0,
	USBIP_SPEED_LOW = 1,
	USBIP_SPEED_FULL = 2,
	USBIP_SPEED_HIGH = 3,
	USBIP_SPEED_WIRELESS = 4,
	USBIP_SPEED_SUPER = 5,
};

struct usbip_usb_device {
	char path[USBIP_SYSFS_PATH_MAX];	/* NUL-terminated */
	char busid[USBIP_BUSID_SIZE];		/* NUL-terminated */
	uint32_t busnum;
	uint32_t devnum;
	uint32_t speed;				/* enum usbip_speed */
	uint16_t idVendor;
	uint16_t idProduct;
	uint16_t bcdDevice;
	uint8_t bDeviceClass;
	uint8_t bDeviceSubClass;
	uint8_t bDeviceProtocol;
	uint8_t bConfigurationValue;
	uint8_t bNumConfigurations;
	uint8_t bNumInterfaces;
};

struct usbip_usb_interface {
	uint8_t bInterfaceClass;
	uint8_t bInterfaceSubClass;
	uint8_t bInterfaceProtocol;
};

size_t usbip_usb_device_pack(const struct usbip_usb_device *d, uint8_t *dst);
/* path and busid come back NUL-terminated whatever the peer sent. */
int usbip_usb_device_unpack(struct usbip_usb_device *d, const uint8_t *src,
			    size_t len);
size_t usbip_usb_interface_pack(const struct usbip_usb_interface *i,
				uint8_t *dst);
int usbip_usb_interface_unpack(struct usbip_usb_interface *i,
			       const uint8_t *src, size_t len);

/*
 * OP_REQ_DEVLIST: op_common only.
 * OP_REP_DEVLIST: op_common, then be32 ndev, then per device one
 * usb_device record followed by bNumInterfaces usb_interface records.
 */
#define USBIP_DEVLIST_NDEV_SIZE	4

size_t usbip_devlist_ndev_pack(uint32_t ndev, uint8_t *dst);

/*
 * OP_REQ_IMPORT: op_common, then busid[32].
 * OP_REP_IMPORT: op_common; when status is ST_OK, one usb_device record
 * whose busid echoes the request (the client compares them).
 */
#define USBIP_IMPORT_REQ_SIZE	(USBIP_OP_COMMON_SIZE + USBIP_BUSID_SIZE)

/* busid from the request body; always NUL-terminated on return. */
int usbip_import_req_unpack(char busid[USBIP_BUSID_SIZE], const uint8_t *src,
			    size_t len);

/* ======================================================================
 * URB phase: a 48-byte header, then a payload that depends on it.
 * ====================================================================== */
#define USBIP_HDR_SIZE		48
#define USBIP_ISO_DESC_SIZE	16

#define USBIP_CMD_SUBMIT	0x00000001
#define USBIP_CMD_UNLINK	0x00000002
#define USBIP_RET_SUBMIT	0x00000003
#define USBIP_RET_UNLINK	0x00000004

#define USBIP_DIR_OUT		0
#define USBIP_DIR_IN		1

struct usbip_hdr_basic {
	uint32_t command;
	uint32_t seqnum;
	uint32_t devid;		/* busnum << 16 | devnum */
	uint32_t direction;	/* USBIP_DIR_* */
	uint32_t ep;		/* endpoint number, 0..15 */
};

struct usbip_cmd_submit {
	uint32_t transfer_flags;
	int32_t transfer_buffer_length;
	int32_t start_frame;
	int32_t number_of_packets;	/* 0 (or -1) unless isochronous */
	int32_t interval;
	uint8_t setup[8];		/* verbatim, little-endian inside */
};

struct usbip_ret_submit {
	int32_t status;			/* 0 or a negative errno (-EPIPE...) */
	int32_t actual_length;
	int32_t start_frame;
	int32_t number_of_packets;
	int32_t error_count;
};

struct usbip_cmd_unlink {
	uint32_t seqnum;		/* the URB to cancel */
};

struct usbip_ret_unlink {
	int32_t status;			/* -ECONNRESET if cancelled, else 0 */
};

struct usbip_hdr {
	struct usbip_hdr_basic base;
	union {
		struct usbip_cmd_submit cmd_submit;
		struct usbip_ret_submit ret_submit;
		struct usbip_cmd_unlink cmd_unlink;
		struct usbip_ret_unlink ret_unlink;
	} u;
};

struct usbip_iso_desc {
	uint32_t offset;
	uint32_t length;
	uint32_t actual_length;
	int32_t status;
};

size_t usbip_hdr_pack(const struct usbip_hdr *h, uint8_t *dst);

/*
 * Decode a header the client sent.  Accepts only CMD_SUBMIT and CMD_UNLINK;
 * checks direction (0/1), ep (< 16), transfer_buffer_length (0 ..
 * USBIP_MAX_TRANSFER) and number_of_packets (-1 .. USBIP_MAX_ISO_PACKETS;
 * -1 is folded to 0).  -EPROTO for anything else.
 */
int usbip_hdr_unpack_cmd(struct usbip_hdr *h, const uint8_t *src, size_t len);

/*
 * The fields of a header usbip_hdr_unpack_cmd() rejected, as they are on
 * the wire (no checks), into buf for a log line: "command 0x.. seq N dir N
 * ep N len N packets N".  src holds USBIP_HDR_SIZE bytes.  Returns buf.
 */
const char *usbip_hdr_describe(const uint8_t *src, char *buf, size_t size);

/* Decode a header the server sent (RET_*), for clients and tests. */
int usbip_hdr_unpack_ret(struct usbip_hdr *h, const uint8_t *src, size_t len);

/*
 * Bytes that follow a decoded CMD_SUBMIT header on the wire: the OUT data
 * (transfer_buffer_length when direction is OUT) plus number_of_packets
 * iso descriptors.  0 for CMD_UNLINK.
 */
size_t usbip_cmd_payload_len(const struct usbip_hdr *h);

size_t usbip_iso_desc_pack(const struct usbip_iso_desc *d, uint8_t *dst);
int usbip_iso_desc_unpack(struct usbip_iso_desc *d, const uint8_t *src,
			  size_t len);

/* ======================================================================
 * USB SETUP packet (USB 2.0 9.3): 8 bytes, little-endian.
 * ====================================================================== */
struct usb_setup {
	uint8_t bmRequestType;
	uint8_t bRequest;
	uint16_t wValue;
	uint16_t wIndex;
	uint16_t wLength;
};

void usb_setup_unpack(struct usb_setup *s, const uint8_t raw[8]);
void usb_setup_pack(const struct usb_setup *s, uint8_t raw[8]);

/* Names for logs: "OP_REQ_DEVLIST", "CMD_SUBMIT", ... or "unknown". */
const char *usbip_op_name(uint16_t code);
const char *usbip_cmd_name(uint32_t command);

#endif /* USBRIG_USBIP_WIRE_H */
