// SPDX-License-Identifier: GPL-2.0
/*
 * fn/ax88179.c - an ASIX AX88179 USB 3.0 gigabit Ethernet adapter as
 * Linux's ax88179_178a driver (6.1) drives it, with one host behind it that
 * answers ARP and ICMP echo (netstack.c), so that `ping` through the
 * guest's interface gets replies.
 *
 * The script gives the descriptors (gadgets/examples/ax88179.gadget): a
 * vendor-class interface (ff/ff/00, as the driver's id table wants) with an
 * interrupt IN, a bulk IN and a bulk OUT endpoint.  This file is the chip:
 *
 *  - vendor requests on ep0, bmRequestType 0xc0 (read) or 0x40 (write),
 *    to four stores: the MAC's 256 register bytes (AX_ACCESS_MAC: wValue
 *    the register, wIndex the byte count), the PHY's 16-bit registers at
 *    MDIO address 3, in pages (AX_ACCESS_PHY: wValue the address, wIndex
 *    the register), a 256-byte EEPROM (AX_ACCESS_EEPROM: wValue the word,
 *    wIndex the words; also through the MAC's SROM registers) and 64 bytes
 *    of eFuse (AX_ACCESS_EFUSE: wValue the offset, wIndex the bytes).
 *  - the link on the interrupt endpoint: 8 bytes whose first little-endian
 *    word has bit 16 set, once each time the host posts its interrupt URB
 *    afresh (usbnet at open); the driver's status() then reads the PHY
 *    and turns the carrier on.
 *  - the bulk framing of ax88179_tx_fixup and ax88179_rx_fixup:
 *
 *    bulk OUT, one frame a transfer:
 *      0  LE32 the frame's length
 *      4  LE32 the TSO MSS | 0x80008000 when usbnet pads the transfer
 *      8  the frame, then at most 7 bytes of padding (usbnet adds one
 *         byte when 8 + length is a multiple of wMaxPacketSize)
 *    bulk IN, the frames waiting, as many as fit:
 *      for each frame: 2 bytes 0 (the IP alignment header), the frame,
 *                      zeros to the next multiple of 8
 *      hdr_off:        for each frame: LE32 (2 + length) << 16 (no error
 *                      bits, no L3/L4 type: the stack checks the sums),
 *                      then LE32 0x80000000 (a dummy entry: length 0,
 *                      "drop", as the firmware adds one per frame)
 *      then            LE32 0 (padding), LE32 entries | hdr_off << 16
 *
 * Frames reach the host only while its receiver is on (RX_CTL START and
 * medium RECEIVE_EN, as the driver sets them) and pass the address filter
 * (the node id, broadcast with AB, multicast with AM or AMALL, all with
 * PRO).
 *
 * Options: mac and ip (the far host), node-id (the adapter's MAC, which
 * the driver reads from AX_NODE_ID), speed (10, 100 or 1000, full duplex:
 * what the PHY resolves), interface.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"
#include "netstack.h"

/* ---- the chip, as ax88179_178a.c (Linux 6.1) uses it ---- */

/* vendor requests (bRequest) */
#define AX_ACCESS_MAC		0x01
#define AX_ACCESS_PHY		0x02
#define AX_ACCESS_EEPROM	0x04
#define AX_ACCESS_EFUSE		0x05
#define AX_RELOAD_EEPROM_EFUSE	0x06
/* ax88179_link_reset() reads 4 bytes at wValue 0x8c and waits for bit 30
 * ("TX FIFO not empty") to clear; nothing else is known of it */
#define AX_USB_CTRL_READ	0x81
#define AX_USB_CTRL_LEN		4

/* MAC registers (AX_ACCESS_MAC wValue) */
#define AX_MAC_REGS		256
#define AX_PHYSICAL_LINK_STATUS	0x02	/* read only */
#define   AX_USB_SS		0x04
#define   AX_USB_HS		0x02
#define AX_GENERAL_STATUS	0x03	/* read only */
#define   AX_SECLD		0x04	/* revision UA2: no GPIO fix-up */
#define AX_SROM_ADDR		0x07	/* the EEPROM word to read */
#define AX_SROM_DATA_LOW	0x08
#define AX_SROM_DATA_HIGH	0x09
#define AX_SROM_CMD		0x0a
#define   AX_EEP_RD		0x04
#define   AX_EEP_BUSY		0x10
#define AX_RX_CTL		0x0b	/* LE16 */
#define   AX_RX_CTL_START	0x0080
#define   AX_RX_CTL_AM		0x0010
#define   AX_RX_CTL_AB		0x0008
#define   AX_RX_CTL_AMALL	0x0002
#define   AX_RX_CTL_PRO		0x0001
#define AX_NODE_ID		0x10	/* 6 bytes */
#define AX_MEDIUM_STATUS_MODE	0x22	/* LE16 */
#define   AX_MEDIUM_RECEIVE_EN	0x0100

/* the PHY (AX_ACCESS_PHY): MDIO address 3, IEEE 802.3 clause 22
 * registers on page 0, vendor pages behind register 0x1f */
#define AX_PHY_ADDR		3
#define AX_PHY_REGS		32
#define AX_PHY_PAGES		8
#define MII_BMCR		0x00
#define   BMCR_RESET		0x8000
#define   BMCR_ANRESTART	0x0200
#define MII_BMSR		0x01
#define MII_PHYSID1		0x02
#define MII_PHYSID2		0x03
#define MII_ADVERTISE		0x04
#define MII_LPA			0x05
#define MII_EXPANSION		0x06
#define MII_CTRL1000		0x09
#define MII_STAT1000		0x0a
#define MII_MMD_CTRL		0x0d	/* clause 45 registers through 22 */
#define   MMD_FUNC_SHIFT	14	/* 0 address, 1 data, 2-3 data +1 */
#define   MMD_DEVAD_MASK	0x001f
#define MII_MMD_DATA		0x0e
#define MII_ESTATUS		0x0f
#define GMII_PHY_PHYSR		0x11	/* read only: what autoneg resolved */
#define   PHYSR_1000		0x8000
#define   PHYSR_100		0x4000
#define   PHYSR_FULL		0x2000
#define   PHYSR_LINK		0x0400
#define GMII_PHY_PAGE_SELECT	0x1f
#define MMD_AN			7
#define MMD_AN_EEE_ADV		60

/* the EEPROM and eFuse */
#define AX_EEPROM_LEN		256	/* bytes, as the driver's ethtool says */
#define AX_EFUSE_LEN		64
#define AX_EEPROM_LED		0x42	/* word: LED mode, 0xffff unset */

/* the interrupt endpoint's report */
#define AX_INT_LEN		8
#define AX_INT_PPLS_LINK	0x00010000u

/* bulk framing */
#define AX_TX_HDR		8
#define AX_TX_PAD_MAX		7
#define AX_RX_ALIGN		2	/* the IP alignment header */
#define AX_RXHDR_DROP		0x80000000u
#define AX_RX_TRAILER		8	/* padding, then the counts */
#define AX_RX_BLOCK_MAX		0xffff	/* hdr_off is 16 bits */
#define AX_PAD8(n)		(((n) + 7) & ~(size_t)7)
/* one frame's block: frame, entry, dummy entry, trailer */
#define AX_RX_ONE_MAX		(AX_PAD8(AX_RX_ALIGN + NET_FRAME_MAX) + 16)

struct ax_opts {
	struct net_self self;
	uint8_t node_id[NET_ETH_ALEN];
	unsigned int speed;		/* Mbit/s: 10, 100 or 1000 */
};

struct ax_eps {
	const struct gd_alt *alt;
	const struct gd_endpoint *intr, *in, *out;
};

/* beyond the responder's: frames to the host, and those lost */
struct ax_counts {
	uint64_t rx_frames, malformed, dropped, rx_off, filtered;
};

struct ax88179 {
	struct ax_opts o;
	struct ax_eps e;
	struct gdev_urbq in, intr;
	bool link_told;		/* the interrupt URB the host has posted
				 * since (re)starting it got the link */

	uint8_t mac[AX_MAC_REGS];
	uint16_t phy[AX_PHY_PAGES][AX_PHY_REGS];
	uint16_t page;		/* GMII_PHY_PAGE_SELECT as written */
	uint16_t mmd_ctrl, mmd_addr, eee_adv;
	uint8_t eeprom[AX_EEPROM_LEN];
	uint8_t efuse[AX_EFUSE_LEN];

	struct net_frameq rxq;	/* frames toward the host */
	struct net_counts net;
	struct ax_counts n;
	uint8_t scratch[AX_RX_ONE_MAX];
};

/* ---- options and descriptors ---- */

static int parse_opts(const struct gd_device *m, struct ax_opts *o,
		      struct script_error *err)
{
	static const char *const keys[] = {
		"mac", "ip", "node-id", "speed", "interface", NULL,
	};
	uint64_t v;
	int rc;

	memset(o, 0, sizeof(*o));
	/* node-id may be any: a multicast or zero one makes the driver pick a
	 * random MAC, which is worth testing too */
	rc = fn_opt_only(m, keys, err) ?:
	     fn_opt_mac(m, "mac", "02:00:00:00:79:02", true, o->self.mac,
			err) ?:
	     fn_opt_ipv4(m, "ip", "192.168.79.2", o->self.ip, err) ?:
	     fn_opt_mac(m, "node-id", "02:00:00:00:79:01", false, o->node_id,
			err) ?:
	     fn_opt_u64(m, "speed", 1000, 1000, 0, &v, err);
	if (rc)
		return rc;
	if (v != 10 && v != 100 && v != 1000)
		return fn_opt_error(m, fn_opt(m, "speed"), err,
				    "speed: 10, 100 or 1000 (Mbit/s), got %llu",
				    (unsigned long long)v);
	o->speed = v;
	return 0;
}

/* The vendor interface (`interface N`, else the first of class 0xff) and
 * its three endpoints. */
static int find_eps(const struct gd_device *m, struct ax_eps *e,
		    struct script_error *err)
{
	int rc;

	memset(e, 0, sizeof(*e));
	rc = fn_opt_interface(m, USB_CLASS_VENDOR_SPEC, "vendor", &e->alt,
			      err);
	if (rc)
		return rc;
	e->intr = fn_alt_ep(e->alt, USB_ENDPOINT_XFER_INT, true);
	e->in = fn_alt_ep(e->alt, USB_ENDPOINT_XFER_BULK, true);
	e->out = fn_alt_ep(e->alt, USB_ENDPOINT_XFER_BULK, false);
	if (!e->intr || !e->in || !e->out)
		return fn_error_at(m, e->alt->line, err,
				   "interface %u needs an interrupt IN, a bulk IN and a bulk OUT endpoint",
				   e->alt->bInterfaceNumber);
	/* usbnet's interrupt URB is wMaxPacketSize long; the driver takes
	 * reports of 8 bytes only */
	if ((e->intr->wMaxPacketSize & 0x7ff) < AX_INT_LEN)
		return fn_error_at(m, e->intr->line, err,
				   "endpoint 0x%02x: the link report takes 8 bytes: wMaxPacketSize at least 8",
				   e->intr->bEndpointAddress);
	return 0;
}

/* The options and endpoints of an attach: conf is its struct ax88179
 * (void *: for fn_state_new()). */
static int ax_parse(const struct gd_device *m, void *conf,
		    struct script_error *err)
{
	struct ax88179 *st = conf;

	return parse_opts(m, &st->o, err) ?: find_eps(m, &st->e, err);
}

static int ax_validate(const struct gd_device *m, struct script_error *err)
{
	struct ax_opts o;
	struct ax_eps e;
	int rc;

	rc = parse_opts(m, &o, err);
	if (!rc)
		rc = find_eps(m, &e, err);
	if (rc)
		return rc;
	return fn_ep_check_free(m, e.intr, "interrupt endpoint", err) ?:
	       fn_ep_check_free(m, e.in, "bulk IN endpoint", err) ?:
	       fn_ep_check_free(m, e.out, "bulk OUT endpoint", err);
}

/* ---- the register files at power-on ---- */

/*
 * The EEPROM: the node id in bytes 0-5 (our layout; the driver reads the
 * MAC from AX_NODE_ID only), 0x0b95 0x1790 in bytes 6-9 and in byte 10
 * the sum the driver checks (bytes 6-9 summed, the carry folded in, plus
 * byte 10 make 0xff); everything else unprogrammed (0xff), so the LED
 * word 0x42 is unset and the driver takes its default LED mode (word 0x3c
 * high byte 0xff), and word 0x43 turns no auto-detach on.
 */
static void eeprom_init(struct ax88179 *st)
{
	unsigned int sum = 0, i;

	memset(st->eeprom, 0xff, sizeof(st->eeprom));
	memcpy(st->eeprom, st->o.node_id, NET_ETH_ALEN);
	put_le16(st->eeprom + 6, 0x0b95);
	put_le16(st->eeprom + 8, 0x1790);
	for (i = 6; i < 10; i++)
		sum += st->eeprom[i];
	sum = (sum >> 8) + (sum & 0xff);
	st->eeprom[10] = 0xff - sum;
	/* a blank eFuse: the driver does not read it while the EEPROM is
	 * good, and refuses it (byte 0 0xff) when asked */
	memset(st->efuse, 0xff, sizeof(st->efuse));
}

/* Register values at power-on: ours where the driver tells nothing. */
static void regs_init(struct ax88179 *st, enum usbip_speed bus)
{
	uint16_t *p = st->phy[0];

	memset(st->mac, 0, sizeof(st->mac));
	st->mac[AX_PHYSICAL_LINK_STATUS] = bus == USBIP_SPEED_SUPER ?
		AX_USB_SS : bus == USBIP_SPEED_HIGH ? AX_USB_HS : 0;
	st->mac[AX_GENERAL_STATUS] = AX_SECLD;
	memcpy(st->mac + AX_NODE_ID, st->o.node_id, NET_ETH_ALEN);

	memset(st->phy, 0, sizeof(st->phy));
	st->page = 0;
	st->mmd_ctrl = st->mmd_addr = st->eee_adv = 0;
	p[MII_BMCR] = 0x1140;		/* autoneg on, full duplex, 1000 */
	p[MII_BMSR] = 0x796d;		/* 10/100 abilities, extended status,
					 * autoneg complete, link up */
	p[MII_ADVERTISE] = 0x0de1;	/* 10/100 half and full, pause */
	p[MII_CTRL1000] = 0x0200;	/* 1000BASE-T full */
	p[MII_ESTATUS] = 0x3000;	/* 1000BASE-T full and half */
	/* the link partner, acknowledged, offers what `speed` resolves */
	switch (st->o.speed) {
	case 1000:
		p[MII_LPA] = 0x45e1;
		p[MII_STAT1000] = 0x3800;	/* receivers OK, 1000 full */
		p[GMII_PHY_PHYSR] = PHYSR_1000;
		break;
	case 100:
		p[MII_LPA] = 0x45e1;
		p[GMII_PHY_PHYSR] = PHYSR_100;
		break;
	default:
		p[MII_LPA] = 0x4461;		/* 10 half and full, pause */
		break;
	}
	p[GMII_PHY_PHYSR] |= PHYSR_FULL | PHYSR_LINK;
	eeprom_init(st);
}

/* ---- life cycle ---- */

static int ax_attach(struct gdev *dev)
{
	struct ax88179 *st;
	int ret;

	st = fn_state_new(dev->model, sizeof(*st), 0, ax_parse, &ret);
	if (!st)
		return ret;
	if (net_frameq_init(&st->rxq)) {
		free(st);
		return -ENOMEM;
	}
	gdev_urbq_init(&st->in);
	gdev_urbq_init(&st->intr);
	regs_init(st, dev->model->speed);
	dev->function_state = st;
	return 0;
}

static void log_counts(const struct ax88179 *st)
{
	log_info("ax88179: %llu frames in, %llu out: %llu ARP and %llu echo replies, %llu ignored, %llu malformed, %llu dropped (%llu queue full, %llu receiver off, %llu filtered)",
		 (unsigned long long)st->net.frames,
		 (unsigned long long)st->n.rx_frames,
		 (unsigned long long)st->net.arp,
		 (unsigned long long)st->net.echo,
		 (unsigned long long)st->net.ignored,
		 (unsigned long long)(st->net.malformed + st->n.malformed),
		 (unsigned long long)(st->n.dropped + st->n.rx_off +
				      st->n.filtered),
		 (unsigned long long)st->n.dropped,
		 (unsigned long long)st->n.rx_off,
		 (unsigned long long)st->n.filtered);
}

static void ax_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct ax88179 *st = dev->function_state;

	if (!st)
		return;
	log_counts(st);
	gdev_urbq_free(&st->in, free_urb);
	gdev_urbq_free(&st->intr, free_urb);
	net_frameq_free(&st->rxq);
	free(st);
	dev->function_state = NULL;
}

/* ---- the link report ---- */

static void intr_serve(struct gdev *dev, struct ax88179 *st)
{
	uint8_t b[AX_INT_LEN] = { 0 };
	struct urb *urb;
	size_t n;

	if (st->link_told || !st->intr.head)
		return;
	urb = gdev_urbq_pop(&st->intr);
	put_le32(b, AX_INT_PPLS_LINK);
	n = urb->length < sizeof(b) ? urb->length : sizeof(b);
	memcpy(urb->buf, b, n);
	st->link_told = true;
	gdev_complete(dev, urb, 0, n);
}

/* ---- frames toward the host ---- */

static bool rx_on(const struct ax88179 *st)
{
	return (get_le16(st->mac + AX_RX_CTL) & AX_RX_CTL_START) &&
	       (get_le16(st->mac + AX_MEDIUM_STATUS_MODE) &
		AX_MEDIUM_RECEIVE_EN);
}

/* The address filter RX_CTL and the node id set. */
static bool rx_accept(const struct ax88179 *st, const uint8_t *f)
{
	static const uint8_t bcast[NET_ETH_ALEN] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};
	uint16_t ctl = get_le16(st->mac + AX_RX_CTL);

	if (ctl & AX_RX_CTL_PRO)
		return true;
	if (!memcmp(f, bcast, NET_ETH_ALEN))
		return ctl & AX_RX_CTL_AB;
	if (f[0] & 1)
		return ctl & (AX_RX_CTL_AM | AX_RX_CTL_AMALL);
	return !memcmp(f, st->mac + AX_NODE_ID, NET_ETH_ALEN);
}

static void rx_put(struct ax88179 *st, const uint8_t *f, size_t len)
{
	if (!rx_on(st)) {
		st->n.rx_off++;
		log_dbg("ax88179: reply dropped: the receiver is off");
	} else if (!rx_accept(st, f)) {
		st->n.filtered++;
		log_dbg("ax88179: reply dropped by the address filter");
	} else if (net_frameq_put(&st->rxq, f, len)) {
		st->n.dropped++;
		log_warn("ax88179: reply dropped: %d frames wait for the host already",
			 NET_FRAMEQ_MAX);
	}
}

/* Lay the n oldest frames waiting out as one bulk IN transfer at dst
 * (the caller checked the room); its length. */
static size_t rx_build(const struct net_frameq *q, unsigned int n,
		       uint8_t *dst)
{
	size_t off = 0, hdr_off, len;
	const uint8_t *f;
	unsigned int i;

	for (i = 0; i < n; i++) {
		f = net_frameq_at(q, i, &len);
		memset(dst + off, 0, AX_PAD8(AX_RX_ALIGN + len));
		memcpy(dst + off + AX_RX_ALIGN, f, len);
		off += AX_PAD8(AX_RX_ALIGN + len);
	}
	hdr_off = off;
	for (i = 0; i < n; i++) {
		net_frameq_at(q, i, &len);
		put_le32(dst + off, (uint32_t)(AX_RX_ALIGN + len) << 16);
		put_le32(dst + off + 4, AX_RXHDR_DROP);
		off += 8;
	}
	put_le32(dst + off, 0);
	put_le32(dst + off + 4, (uint32_t)hdr_off << 16 | 2 * n);
	return off + AX_RX_TRAILER;
}

/* Frames waiting to bulk IN URBs waiting, as many a transfer as fit. */
static void rx_serve(struct gdev *dev, struct ax88179 *st)
{
	size_t cap, room, payload, len;
	unsigned int n;
	struct urb *urb;

	while (st->rxq.n && st->in.head) {
		urb = gdev_urbq_pop(&st->in);
		cap = urb->length < AX_RX_BLOCK_MAX ? urb->length :
		      AX_RX_BLOCK_MAX;
		payload = 0;
		for (n = 0; n < st->rxq.n; n++) {
			net_frameq_at(&st->rxq, n, &len);
			room = payload + AX_PAD8(AX_RX_ALIGN + len) +
			       8 * (n + 1) + AX_RX_TRAILER;
			if (room > cap)
				break;
			payload += AX_PAD8(AX_RX_ALIGN + len);
		}
		if (n) {
			len = rx_build(&st->rxq, n, urb->buf);
			net_frameq_drop(&st->rxq, n);
			st->n.rx_frames += n;
			gdev_complete(dev, urb, 0, len);
			continue;
		}
		/* not even one frame fits the host's buffer: babble (the
		 * buffer is shorter than AX_RX_ONE_MAX here) */
		rx_build(&st->rxq, 1, st->scratch);
		net_frameq_drop(&st->rxq, 1);
		st->n.rx_frames++;
		memcpy(urb->buf, st->scratch, urb->length);
		gdev_complete(dev, urb, -EOVERFLOW, urb->length);
	}
}

/* ---- frames from the host ---- */

/*
 * The frame in one bulk OUT transfer (the layout at the top): 0 with
 * *flen set, or -EINVAL with *why.  Every length is the host's word: it
 * must fit in what arrived.
 */
static int tx_frame(const uint8_t *b, size_t len, size_t *flen,
		    const char **why)
{
	uint32_t n;

	if (len < AX_TX_HDR) {
		*why = "shorter than the 8-byte header";
		return -EINVAL;
	}
	n = get_le32(b);
	if (n > len - AX_TX_HDR) {
		*why = "frame length beyond the transfer";
		return -EINVAL;
	}
	if (n < NET_ETH_HLEN) {
		*why = "frame shorter than an Ethernet header";
		return -EINVAL;
	}
	if (len - AX_TX_HDR - n > AX_TX_PAD_MAX) {
		*why = "more than 7 bytes after the frame";
		return -EINVAL;
	}
	*flen = n;
	return 0;
}

/* One bulk OUT transfer: its frame answered into the queue toward the
 * host.  The second header word (MSS, padding) needs no action: only
 * TCP is segmented, and the responder ignores TCP. */
static void tx_transfer(struct ax88179 *st, const struct urb *urb)
{
	const char *why = "";
	size_t flen, n;

	if (tx_frame(urb->buf, urb->length, &flen, &why)) {
		st->n.malformed++;
		log_warn("ax88179: %u-byte transfer dropped: %s", urb->length,
			 why);
		return;
	}
	n = net_respond(&st->o.self, urb->buf + AX_TX_HDR, flen, st->scratch,
			NET_FRAME_MAX, &st->net, "ax88179");
	if (n)
		rx_put(st, st->scratch, n);
}

/* ---- the data path ---- */

static int ax_submit(struct gdev *dev, struct urb *urb)
{
	struct ax88179 *st = dev->function_state;

	if (!st)
		return -ENOENT;
	if (fn_urb_for(dev, urb, st->e.out)) {
		tx_transfer(st, urb);
		gdev_complete(dev, urb, 0, urb->length);
		rx_serve(dev, st);
	} else if (fn_urb_for(dev, urb, st->e.in)) {
		gdev_urbq_push(&st->in, urb);
		rx_serve(dev, st);
	} else if (fn_urb_for(dev, urb, st->e.intr)) {
		gdev_urbq_push(&st->intr, urb);
		intr_serve(dev, st);
	} else {
		return -ENOENT;
	}
	return 0;
}

static struct urb *ax_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct ax88179 *st = dev->function_state;
	struct urb *urb;

	if (!st)
		return NULL;
	urb = gdev_urbq_remove(&st->in, seqnum);
	if (urb)
		return urb;
	urb = gdev_urbq_remove(&st->intr, seqnum);
	/* usbnet kills its interrupt URB at stop: the next open is told
	 * the link again */
	if (urb)
		st->link_told = false;
	return urb;
}

/* The configuration or an alternate setting changed: the URBs end, the
 * registers stay (the chip is not reset by it). */
static void ax_reset(struct gdev *dev)
{
	struct ax88179 *st = dev->function_state;

	if (!st)
		return;
	gdev_urbq_flush(dev, &st->in, -ESHUTDOWN);
	gdev_urbq_flush(dev, &st->intr, -ESHUTDOWN);
	net_frameq_drop(&st->rxq, st->rxq.n);
	st->link_told = false;
}

/* ---- the MAC's registers ---- */

static void mac_write(struct ax88179 *st, unsigned int reg,
		      const uint8_t *data, unsigned int n)
{
	uint16_t rx_ctl = get_le16(st->mac + AX_RX_CTL);
	uint16_t medium = get_le16(st->mac + AX_MEDIUM_STATUS_MODE);
	uint16_t w;
	unsigned int i, r;

	for (i = 0; i < n; i++) {
		r = reg + i;
		if (r == AX_PHYSICAL_LINK_STATUS || r == AX_GENERAL_STATUS)
			continue;	/* read only */
		st->mac[r] = data[i];
	}
	/* an EEPROM read through the SROM registers is done at once: BUSY
	 * never reads 1 */
	if (reg <= AX_SROM_CMD && AX_SROM_CMD < reg + n) {
		if (st->mac[AX_SROM_CMD] & AX_EEP_RD) {
			r = st->mac[AX_SROM_ADDR];
			w = 2 * r < AX_EEPROM_LEN ?
			    get_le16(st->eeprom + 2 * r) : 0xffff;
			st->mac[AX_SROM_DATA_LOW] = w & 0xff;
			st->mac[AX_SROM_DATA_HIGH] = w >> 8;
		}
		st->mac[AX_SROM_CMD] &= ~AX_EEP_BUSY;
	}
	if (rx_ctl != get_le16(st->mac + AX_RX_CTL))
		log_info("ax88179: RX_CTL 0x%04x", get_le16(st->mac + AX_RX_CTL));
	if (medium != get_le16(st->mac + AX_MEDIUM_STATUS_MODE))
		log_info("ax88179: medium mode 0x%04x",
			 get_le16(st->mac + AX_MEDIUM_STATUS_MODE));
	if (reg < AX_NODE_ID + NET_ETH_ALEN && AX_NODE_ID < reg + n)
		log_info("ax88179: node id %02x:%02x:%02x:%02x:%02x:%02x",
			 st->mac[AX_NODE_ID], st->mac[AX_NODE_ID + 1],
			 st->mac[AX_NODE_ID + 2], st->mac[AX_NODE_ID + 3],
			 st->mac[AX_NODE_ID + 4], st->mac[AX_NODE_ID + 5]);
}

/* wValue the register, wIndex the byte count, which wLength repeats. */
static int mac_access(struct ax88179 *st, const struct usb_setup *s,
		      bool in, uint8_t *data, size_t len)
{
	unsigned int reg = s->wValue, n = s->wIndex;

	if (reg >= AX_MAC_REGS || !n || n > AX_MAC_REGS - reg ||
	    s->wLength != n)
		return -EPIPE;
	if (in) {
		n = len < n ? len : n;
		memcpy(data, st->mac + reg, n);
		return n;
	}
	if (len < n)
		return -EPIPE;		/* the data stage is cut short */
	mac_write(st, reg, data, n);
	return 0;
}

/* ---- the PHY ---- */

static uint16_t *mmd_reg(struct ax88179 *st)
{
	/* EEE advertisement (802.3 45.2.7.13); every other clause 45
	 * register reads 0: no EEE ability, no partner */
	if ((st->mmd_ctrl & MMD_DEVAD_MASK) == MMD_AN &&
	    st->mmd_addr == MMD_AN_EEE_ADV)
		return &st->eee_adv;
	return NULL;
}

static uint16_t mmd_data(struct ax88179 *st, bool write, uint16_t v)
{
	unsigned int func = st->mmd_ctrl >> MMD_FUNC_SHIFT;
	uint16_t *r;

	if (!func) {
		if (write)
			st->mmd_addr = v;
		return st->mmd_addr;
	}
	r = mmd_reg(st);
	if (write && r)
		*r = v;
	v = r ? *r : 0;
	if (func >= 2)
		st->mmd_addr++;		/* post-increment */
	return v;
}

static uint16_t phy_read(struct ax88179 *st, unsigned int reg)
{
	unsigned int page = st->page % AX_PHY_PAGES;

	if (reg == GMII_PHY_PAGE_SELECT)
		return st->page;
	if (!page && reg == MII_MMD_DATA)
		return mmd_data(st, false, 0);
	return st->phy[page][reg];
}

static void phy_write(struct ax88179 *st, unsigned int reg, uint16_t v)
{
	unsigned int page = st->page % AX_PHY_PAGES;

	if (reg == GMII_PHY_PAGE_SELECT) {
		st->page = v;
		return;
	}
	if (page) {
		st->phy[page][reg] = v;	/* vendor pages: kept as written */
		return;
	}
	switch (reg) {
	case MII_BMCR:
		/* reset and autoneg restart are done at once */
		st->phy[0][reg] = v & ~(BMCR_RESET | BMCR_ANRESTART);
		break;
	case MII_BMSR: case MII_PHYSID1: case MII_PHYSID2: case MII_LPA:
	case MII_EXPANSION: case MII_STAT1000: case MII_ESTATUS:
	case GMII_PHY_PHYSR:
		break;			/* read only */
	case MII_MMD_CTRL:
		st->mmd_ctrl = v;
		break;
	case MII_MMD_DATA:
		mmd_data(st, true, v);
		break;
	default:
		st->phy[0][reg] = v;
	}
}

/* wValue the MDIO address (only 3 answers: elsewhere reads are all ones,
 * as with no PHY on the bus), wIndex the register, 2 bytes. */
static int phy_access(struct ax88179 *st, const struct usb_setup *s,
		      bool in, uint8_t *data, size_t len)
{
	bool here = s->wValue == AX_PHY_ADDR;
	uint8_t b[2];
	size_t n;

	if (s->wIndex >= AX_PHY_REGS || s->wLength != 2)
		return -EPIPE;
	if (in) {
		put_le16(b, here ? phy_read(st, s->wIndex) : 0xffff);
		n = len < 2 ? len : 2;
		memcpy(data, b, n);
		return n;
	}
	if (len < 2)
		return -EPIPE;
	if (here)
		phy_write(st, s->wIndex, get_le16(data));
	return 0;
}

/* ---- EEPROM and eFuse ---- */

/* AX_ACCESS_EEPROM: wValue the first word, wIndex the words, wLength
 * twice that; AX_ACCESS_EFUSE (read only): wValue the first byte, wIndex
 * the bytes, wLength the same. */
static int rom_access(struct ax88179 *st, const struct usb_setup *s,
		      bool in, uint8_t *data, size_t len)
{
	bool eeprom = s->bRequest == AX_ACCESS_EEPROM;
	unsigned int unit = eeprom ? 2 : 1;
	size_t size = eeprom ? sizeof(st->eeprom) : sizeof(st->efuse);
	uint8_t *rom = eeprom ? st->eeprom : st->efuse;
	size_t off = (size_t)s->wValue * unit, n = (size_t)s->wIndex * unit;

	if (!n || off > size || n > size - off || s->wLength != n)
		return -EPIPE;
	if (in) {
		n = len < n ? len : n;
		memcpy(data, rom + off, n);
		return n;
	}
	if (!eeprom || len < n)
		return -EPIPE;
	memcpy(rom + off, data, n);
	log_info("ax88179: EEPROM words 0x%02x..0x%02x written",
		 s->wValue, (unsigned int)(s->wValue + s->wIndex - 1));
	return 0;
}

static int ax_control(struct gdev *dev, const struct usb_setup *s,
		      uint8_t *data, size_t len)
{
	struct ax88179 *st = dev->function_state;
	bool in = s->bmRequestType & USB_DIR_IN;
	int rc;

	if (!st || (s->bmRequestType & (USB_TYPE_MASK | USB_RECIP_MASK)) !=
		   (USB_TYPE_VENDOR | USB_RECIP_DEVICE))
		return -ENOENT;
	switch (s->bRequest) {
	case AX_ACCESS_MAC:
		rc = mac_access(st, s, in, data, len);
		break;
	case AX_ACCESS_PHY:
		rc = phy_access(st, s, in, data, len);
		break;
	case AX_ACCESS_EEPROM:
	case AX_ACCESS_EFUSE:
		rc = rom_access(st, s, in, data, len);
		break;
	case AX_RELOAD_EEPROM_EFUSE:
		/* nothing the EEPROM sets is cached apart from it */
		rc = in || s->wLength ? -EPIPE : 0;
		break;
	case AX_USB_CTRL_READ:
		if (!in || s->wLength > AX_USB_CTRL_LEN)
			return -EPIPE;
		memset(data, 0, len);	/* the TX FIFO is always empty */
		return len;
	default:
		log_warn("ax88179: vendor request 0x%02x (0x%02x, wValue 0x%04x, wIndex 0x%04x, wLength %u) not known: STALL",
			 s->bRequest, s->bmRequestType, s->wValue, s->wIndex,
			 s->wLength);
		return -EPIPE;
	}
	if (rc < 0)
		log_warn("ax88179: request 0x%02x 0x%02x wValue 0x%04x wIndex 0x%04x wLength %u out of range: STALL",
			 s->bmRequestType, s->bRequest, s->wValue, s->wIndex,
			 s->wLength);
	return rc;
}

const struct fn_ops fn_ax88179_ops = {
	.name = "ax88179",
	.validate = ax_validate,
	.attach = ax_attach,
	.detach = ax_detach,
	.control = ax_control,
	.submit = ax_submit,
	.unlink = ax_unlink,
	.reset = ax_reset,
};
