// SPDX-License-Identifier: GPL-2.0
/*
 * pcap.c - USB captures in pcap or pcapng files as imp_devs, read through
 * libpcap (which knows both file formats, their byte orders and their
 * corner cases; nothing here parses the file format itself).
 *
 * Link types (https://www.tcpdump.org/linktypes.html):
 *
 * 189 LINKTYPE_USB_LINUX, 220 LINKTYPE_USB_LINUX_MMAPPED: the usbmon
 *     binary header (Documentation/usb/usbmon.rst, struct usbmon_packet),
 *     48 and 64 bytes, then the captured data.  Written in the capturing
 *     machine's byte order; libpcap converts the header to ours when the
 *     file comes from a machine of the other order (swap_pseudo_headers()
 *     in its pcap-common.c / pcap-util.c), so it is read in host order.
 *
 *      0 u64 id         URB id, the same in submission and completion
 *      8 u8  type       'S' 'C' 'E'
 *      9 u8  xfer       0 iso, 1 interrupt, 2 control, 3 bulk
 *     10 u8  epnum      endpoint number, bit 7 set for IN
 *     11 u8  devnum
 *     12 u16 busnum
 *     14 s8  flag_setup 0: setup[] holds the setup packet
 *     15 s8  flag_data  0: data follows the header
 *     16 s64 ts_sec     24 s32 ts_usec
 *     28 s32 status     URB status, negative errno
 *     32 u32 length     'S': requested, 'C': actual length
 *     36 u32 len_cap    data bytes that follow the header
 *     40 u8  setup[8]   (iso: error count, descriptor count)
 *     48 (220 only) interval, start_frame, xfer_flags, ndesc: 4 x 32 bits
 *
 * 249 LINKTYPE_USBPCAP: Windows USBPcap, packed little-endian header
 *     (USBPcapBuffer.h in USBPcap's source):
 *
 *      0 u16 headerLen  this header's length; the data follows it
 *      2 u64 irpId      the same in submission and completion
 *     10 u32 status     USBD_STATUS
 *     14 u16 function   URB function
 *     16 u8  info       bit 0: completion (PDO to FDO)
 *     17 u16 bus        root hub number
 *     19 u16 device     device address
 *     21 u8  endpoint   bit 7 set for IN
 *     22 u8  transfer   0 iso, 1 interrupt, 2 control, 3 bulk, 0xfe IRP info
 *     23 u32 dataLength
 *     27 u8  stage      control only: 0 setup, 1 data, 2 status, 3 complete
 *
 *     A control transfer is a SETUP packet (the setup, then OUT data), and
 *     on completion either a COMPLETE packet with the IN data (USBPcap
 *     1.5 and later) or a DATA packet with the IN data and a STATUS packet
 *     (earlier versions).
 *
 * Neither header says the device's speed: it stays unknown.  The pairing
 * and what becomes of each transfer is urb.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "import.h"
#include "urb.h"

#define LINKTYPE_USB_LINUX		189
#define LINKTYPE_USB_LINUX_MMAPPED	220
#define LINKTYPE_USBPCAP		249

#define MON_HDR_LEN		48
#define MON_MMAPPED_HDR_LEN	64
#define USBPCAP_HDR_LEN		27
#define USBPCAP_CTRL_HDR_LEN	28

#define USBPCAP_INFO_COMPLETION	0x01
#define USBPCAP_STAGE_SETUP	0
#define USBPCAP_STAGE_DATA	1
#define USBPCAP_STAGE_STATUS	2
#define USBPCAP_STAGE_COMPLETE	3

/* USBD_STATUS values (Windows usb.h) that map onto a URB status */
#define USBD_STATUS_SUCCESS		0x00000000u
#define USBD_STATUS_STALL_PID		0xc0000004u
#define USBD_STATUS_DATA_UNDERRUN	0xc0000012u
#define USBD_STATUS_ENDPOINT_HALTED	0xc0000030u

/* IRPs whose old-style DATA packet already completed them, so that their
 * STATUS packet is not a second completion */
#define USBPCAP_DONE_RING	16

struct pcap_state {
	const char *path;
	int linktype;
	size_t frame;
	struct imp_urb_ctx urb;
	uint64_t done[USBPCAP_DONE_RING];
	size_t n_done;
};

/* host-order loads (usbmon headers, fixed by libpcap) */
static uint16_t h16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static uint32_t h32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t h64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* little-endian loads (USBPcap) */
static uint16_t le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int frame_err(struct pcap_state *st, struct imp_error *err,
		     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int frame_err(struct pcap_state *st, struct imp_error *err,
		     const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return imp_err(err, "%s: frame %zu: %s", st->path, st->frame, msg);
}

static int usbmon_frame(struct pcap_state *st, const uint8_t *p,
			size_t caplen, struct imp_error *err)
{
	size_t hdr = st->linktype == LINKTYPE_USB_LINUX ? MON_HDR_LEN :
			MON_MMAPPED_HDR_LEN;
	struct imp_urb_ev ev = { .pos = st->frame };
	size_t avail;

	if (caplen < hdr)
		return frame_err(st, err, "%zu bytes, shorter than the %zu-byte usbmon header",
				 caplen, hdr);
	ev.id = h64(p);
	ev.kind = p[8];
	if (ev.kind != 'S' && ev.kind != 'C' && ev.kind != 'E')
		return frame_err(st, err, "event type 0x%02x is not S, C or E",
				 p[8]);
	if (p[9] > IMP_XFER_BULK)
		return frame_err(st, err, "transfer type %u is not 0-3",
				 p[9]);
	ev.xfer = p[9];
	ev.ep = p[10];
	ev.devnum = p[11];
	ev.busnum = h16(p + 12);
	ev.status = (int32_t)h32(p + 28);
	ev.length = h32(p + 32);
	if (ev.kind == 'S' && ev.xfer == IMP_XFER_CTRL && p[14] == 0) {
		ev.setup_valid = true;
		memcpy(ev.setup, p + 40, 8);
	}
	if (p[15] == 0) {
		/* len_cap is what the kernel delivered; a snap length may have
		 * cut the frame shorter still */
		avail = caplen - hdr;
		ev.data_len = h32(p + 36);
		if (ev.data_len > avail)
			ev.data_len = avail;
		if (ev.data_len > ev.length)
			ev.data_len = ev.length;
		ev.data = p + hdr;
	}
	return imp_urb_event(&st->urb, &ev, err);
}

static int usbd_status(uint32_t s)
{
	switch (s) {
	case USBD_STATUS_SUCCESS:
		return 0;
	case USBD_STATUS_STALL_PID:
	case USBD_STATUS_ENDPOINT_HALTED:
		return -EPIPE;
	case USBD_STATUS_DATA_UNDERRUN:	/* a short reply: good data */
		return -EREMOTEIO;
	default:
		return -EPROTO;
	}
}

static bool usbpcap_done(struct pcap_state *st, uint64_t irp, bool add)
{
	size_t i;

	for (i = 0; i < USBPCAP_DONE_RING && i < st->n_done; i++)
		if (st->done[i] == irp)
			return true;
	if (add)
		st->done[st->n_done++ % USBPCAP_DONE_RING] = irp;
	return false;
}

static int usbpcap_frame(struct pcap_state *st, const uint8_t *p,
			 size_t caplen, struct imp_error *err)
{
	struct imp_urb_ev ev = { .pos = st->frame };
	size_t hdr, avail;
	uint8_t stage = 0;
	bool done;

	if (caplen < USBPCAP_HDR_LEN)
		return frame_err(st, err, "%zu bytes, shorter than the %d-byte USBPcap header",
				 caplen, USBPCAP_HDR_LEN);
	hdr = le16(p);
	if (hdr < USBPCAP_HDR_LEN || hdr > caplen)
		return frame_err(st, err, "USBPcap headerLen %zu out of range (%d to the frame's %zu bytes)",
				 hdr, USBPCAP_HDR_LEN, caplen);
	if (p[22] > IMP_XFER_BULK)
		return 0;	/* IRP information, unknown transfers */
	ev.id = le64(p + 2);
	ev.status = usbd_status(le32(p + 10));
	ev.busnum = le16(p + 17);
	ev.devnum = le16(p + 19);
	ev.ep = p[21];
	ev.xfer = p[22];
	ev.length = le32(p + 23);
	avail = caplen - hdr;
	ev.data = p + hdr;
	ev.data_len = ev.length < avail ? ev.length : avail;
	done = p[16] & USBPCAP_INFO_COMPLETION;
	ev.kind = done ? 'C' : 'S';
	if (ev.xfer != IMP_XFER_CTRL)
		return imp_urb_event(&st->urb, &ev, err);

	if (hdr < USBPCAP_CTRL_HDR_LEN)
		return frame_err(st, err, "control transfer with a %zu-byte USBPcap header, not %d",
				 hdr, USBPCAP_CTRL_HDR_LEN);
	stage = p[27];
	switch (stage) {
	case USBPCAP_STAGE_SETUP:
		if (done)
			return 0;
		if (ev.data_len < 8)
			return frame_err(st, err, "control SETUP stage with %zu bytes, fewer than 8",
					 ev.data_len);
		memcpy(ev.setup, ev.data, 8);
		ev.setup_valid = true;
		ev.data += 8;
		ev.data_len -= 8;
		ev.length -= 8;
		break;
	case USBPCAP_STAGE_DATA:
		if (!done)
			return 0;	/* OUT data, not needed */
		usbpcap_done(st, ev.id, true);
		break;
	case USBPCAP_STAGE_STATUS:
		if (!done || usbpcap_done(st, ev.id, false))
			return 0;
		ev.data_len = ev.length = 0;
		break;
	case USBPCAP_STAGE_COMPLETE:
		if (!done)
			return 0;
		break;
	default:
		return frame_err(st, err, "control stage %u is not 0-3", stage);
	}
	return imp_urb_event(&st->urb, &ev, err);
}

static int pcap_read(const char *path, const uint8_t *buf, size_t len,
		     struct imp_set *set, struct imp_error *err)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct pcap_state *st;
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc = NULL;
	FILE *f;
	int ret, r;

	if (!len)
		return imp_err(err, "%s: empty file, not a pcap or pcapng capture",
			       path);
	st = calloc(1, sizeof(*st));
	if (!st)
		return imp_err(err, "%s: out of memory", path);
	st->path = path;
	imp_urb_init(&st->urb, set, path, true);
	f = fmemopen((void *)buf, len, "rb");
	if (!f) {
		ret = imp_err(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	pc = pcap_fopen_offline(f, ebuf);
	if (!pc) {
		fclose(f);
		ret = imp_err(err, "%s: not a pcap or pcapng capture (libpcap: %s)",
			      path, ebuf);
		goto out;
	}
	st->linktype = pcap_datalink(pc);
	if (st->linktype != LINKTYPE_USB_LINUX &&
	    st->linktype != LINKTYPE_USB_LINUX_MMAPPED &&
	    st->linktype != LINKTYPE_USBPCAP) {
		ret = imp_err(err, "%s: link type %d is not a USB capture: usbrig reads %d, %d, %d",
			      path, st->linktype, LINKTYPE_USB_LINUX,
			      LINKTYPE_USB_LINUX_MMAPPED, LINKTYPE_USBPCAP);
		goto out;
	}
	for (;;) {
		st->frame++;
		r = pcap_next_ex(pc, &h, &data);
		if (r == PCAP_ERROR_BREAK)
			break;		/* the end of the file */
		if (r != 1) {
			ret = imp_err(err, "%s: frame %zu: %s", path, st->frame,
				      pcap_geterr(pc));
			goto out;
		}
		if (st->linktype == LINKTYPE_USBPCAP)
			ret = usbpcap_frame(st, data, h->caplen, err);
		else
			ret = usbmon_frame(st, data, h->caplen, err);
		if (ret)
			goto out;
	}
	imp_urb_finish(&st->urb);
	ret = 0;
out:
	if (pc)
		pcap_close(pc);		/* closes f */
	imp_urb_free(&st->urb);
	free(st);
	return ret;
}

static bool pcap_sniff(const char *path, const uint8_t *buf, size_t len)
{
	static const uint32_t magic[] = {
		0xa1b2c3d4, 0xd4c3b2a1,		/* pcap, microseconds */
		0xa1b23c4d, 0x4d3cb2a1,		/* pcap, nanoseconds */
		0x0a0d0d0a,			/* pcapng section header */
	};
	uint32_t m;
	size_t i;

	(void)path;
	if (len < 24)
		return false;
	m = le32(buf);
	for (i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if (m == magic[i])
			return true;
	return false;
}

const struct imp_reader imp_reader_pcap = {
	.name = "pcap",
	.summary = "pcap or pcapng USB capture: Linux usbmon (tcpdump -i usbmonN, Wireshark) or Windows USBPcap",
	.sniff = pcap_sniff,
	.read = pcap_read,
};
