// SPDX-License-Identifier: GPL-2.0
/*
 * test_fn_ax88179.c - the `ax88179` device function (gadgets/fn/ax88179.c)
 * in process with the shipped example, driven with the requests and
 * transfers Linux's ax88179_178a sends: the register reads of its probe
 * (MAC, SROM and EEPROM, eFuse, PHY and its clause 45 window), the link
 * report, the bulk framing against golden bytes written out by hand, and
 * hostile lengths in requests and transfers.
 *
 * Runs from the repository root (it reads gadgets/examples/).
 *
 * The IPv4 header checksums of the golden frames were computed outside
 * this code (Python's struct and its own sum).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>
#include <linux/usb/ch9.h>

#include "device.h"
#include "fixture.h"
#include "log.h"
#include "model.h"

#define AX	"gadgets/examples/ax88179.gadget"

#define RD	0xc0	/* vendor, device, IN */
#define WR	0x40	/* vendor, device, OUT */
#define MAC	0x01
#define PHY	0x02
#define EEPROM	0x04
#define EFUSE	0x05
#define RELOAD	0x06

#define EP_INT	0x81
#define EP_IN	0x82
#define EP_OUT	0x03

/* ARP who-has 192.168.79.2 tell 192.168.79.1, from the node id */
static const uint8_t arp_req[42] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff,	/* dst: broadcast */
	0x02, 0, 0, 0, 0x79, 0x01,		/* src: the adapter */
	0x08, 0x06,				/* EtherType ARP */
	0x00, 0x01, 0x08, 0x00, 6, 4,		/* Ethernet, IPv4, 6, 4 */
	0x00, 0x01,				/* request */
	0x02, 0, 0, 0, 0x79, 0x01, 192, 168, 79, 1,	/* sha, spa */
	0, 0, 0, 0, 0, 0, 192, 168, 79, 2,	/* tha, tpa */
};

static const uint8_t arp_rep[42] = {
	0x02, 0, 0, 0, 0x79, 0x01,		/* to the asker */
	0x02, 0, 0, 0, 0x79, 0x02,		/* from the far host */
	0x08, 0x06,
	0x00, 0x01, 0x08, 0x00, 6, 4,
	0x00, 0x02,				/* reply */
	0x02, 0, 0, 0, 0x79, 0x02, 192, 168, 79, 2,
	0x02, 0, 0, 0, 0x79, 0x01, 192, 168, 79, 1,
};

/* echo request id 0x1234 seq 1, 8 data bytes, DF, TTL 64 */
static const uint8_t echo_req[50] = {
	0x02, 0, 0, 0, 0x79, 0x02, 0x02, 0, 0, 0, 0x79, 0x01, 0x08, 0x00,
	0x45, 0x00, 0x00, 0x24, 0xab, 0xcd, 0x40, 0x00,
	0x40, 0x01, 0x6f, 0xb7,			/* TTL, ICMP, checksum */
	192, 168, 79, 1, 192, 168, 79, 2,
	0x08, 0x00, 0xd9, 0xba, 0x12, 0x34, 0x00, 0x01,
	0, 1, 2, 3, 4, 5, 6, 7,
};

static const uint8_t echo_rep[50] = {
	0x02, 0, 0, 0, 0x79, 0x01, 0x02, 0, 0, 0, 0x79, 0x02, 0x08, 0x00,
	0x45, 0x00, 0x00, 0x24, 0xab, 0xcd, 0x00, 0x00,
	0x40, 0x01, 0xaf, 0xb7,
	192, 168, 79, 2, 192, 168, 79, 1,
	0x00, 0x00, 0xe1, 0xba, 0x12, 0x34, 0x00, 0x01,
	0, 1, 2, 3, 4, 5, 6, 7,
};

static void start(struct fx *fx)
{
	fx_start_file(fx, AX, NULL, NULL);
}

/* A read the driver's way: the byte count in wIndex and wLength. */
static struct urb *rd(struct fx *fx, uint8_t req, uint16_t value,
		      uint16_t index, uint16_t len)
{
	struct urb *u = fx_ctrl(fx, RD, req, value, index, len, NULL);

	fx_expect_ok(fx, u, len);
	return u;
}

static unsigned int mac8(struct fx *fx, uint16_t reg)
{
	return rd(fx, MAC, reg, 1, 1)->buf[0];
}

static unsigned int phy16(struct fx *fx, uint16_t reg)
{
	struct urb *u = rd(fx, PHY, 3, reg, 2);

	return u->buf[0] | u->buf[1] << 8;
}

static void mac_w(struct fx *fx, uint16_t reg, const void *data,
		  uint16_t n)
{
	fx_expect_ok(fx, fx_ctrl(fx, WR, MAC, reg, n, n, data), n);
}

static void phy_w(struct fx *fx, uint16_t reg, uint16_t v)
{
	uint8_t b[2] = { v & 0xff, v >> 8 };

	fx_expect_ok(fx, fx_ctrl(fx, WR, PHY, 3, reg, 2, b), 2);
}

/* ax88179_reset(): RX_CTL DROPCRCERR IPE START AP AMALL AB, medium
 * RECEIVE_EN, flow control both ways, full duplex, gigabit */
static void receiver_on(struct fx *fx)
{
	mac_w(fx, 0x0b, "\xaa\x03", 2);
	mac_w(fx, 0x22, "\x33\x01", 2);
}

/* ---- the registers probe reads ---- */

static void test_probe_reads(void **state)
{
	static const uint8_t node[6] = { 0x02, 0, 0, 0, 0x79, 0x01 };
	static const uint8_t other[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
	uint8_t rom[12], b;
	struct fx *fx = *state;
	unsigned int i, sum;
	struct urb *u;

	start(fx);
	assert_int_equal(mac8(fx, 0x02), 0x04);	/* on a SuperSpeed bus */
	assert_int_equal(mac8(fx, 0x03), 0x04);	/* UA2: no GPIO fix-up */
	/* ax88179_get_mac_addr(): AX_NODE_ID, then written back */
	u = rd(fx, MAC, 0x10, 6, 6);
	assert_memory_equal(u->buf, node, 6);
	mac_w(fx, 0x10, other, 6);
	assert_memory_equal(rd(fx, MAC, 0x10, 6, 6)->buf, other, 6);
	/* the status registers are read only */
	b = 0;
	mac_w(fx, 0x02, &b, 1);
	assert_int_equal(mac8(fx, 0x02), 0x04);
	/* WoL: one byte of AX_MONITOR_MOD */
	rd(fx, MAC, 0x24, 1, 1);

	/* ax88179_check_eeprom(): six words through the SROM registers */
	for (i = 0; i < 6; i++) {
		b = i;
		mac_w(fx, 0x07, &b, 1);
		b = 0x04;			/* EEP_RD */
		mac_w(fx, 0x0a, &b, 1);
		assert_int_equal(mac8(fx, 0x0a) & 0x10, 0);	/* not busy */
		memcpy(rom + 2 * i, rd(fx, MAC, 0x08, 2, 2)->buf, 2);
	}
	assert_memory_equal(rom, node, 6);		/* the power-on id */
	assert_int_equal(rom[6], 0x95);
	assert_int_equal(rom[9], 0x17);
	sum = rom[6] + rom[7] + rom[8] + rom[9];
	sum = (sum >> 8) + (sum & 0xff);
	assert_int_equal(sum + rom[10], 0xff);
	/* the LED word 0x42 is unset, by SROM and by AX_ACCESS_EEPROM */
	b = 0x42;
	mac_w(fx, 0x07, &b, 1);
	b = 0x04;
	mac_w(fx, 0x0a, &b, 1);
	assert_int_equal(mac8(fx, 0x09), 0xff);
	assert_int_equal(mac8(fx, 0x08), 0xff);
	u = rd(fx, EEPROM, 0x3c, 1, 2);	/* the old LED mode: default */
	assert_int_equal(u->buf[1], 0xff);
	u = rd(fx, EEPROM, 0x43, 1, 2);	/* no auto-detach */
	assert_int_equal(u->buf[0] & u->buf[1], 0xff);
	u = rd(fx, EEPROM, 0, 1, 2);
	assert_memory_equal(u->buf, node, 2);
	/* a blank eFuse */
	u = rd(fx, EFUSE, 0, 64, 64);
	for (i = 0; i < 64; i++)
		assert_int_equal(u->buf[i], 0xff);
	/* ethtool -E: a word written, then the reload */
	fx_expect_ok(fx, fx_ctrl(fx, WR, EEPROM, 0x50, 1, 2, "\x34\x12"), 2);
	assert_memory_equal(rd(fx, EEPROM, 0x50, 1, 2)->buf, "\x34\x12", 2);
	fx_expect_ok(fx, fx_ctrl(fx, WR, RELOAD, 0, 0, 0, NULL), 0);
	/* ax88179_link_reset(): the TX FIFO is empty (bit 30 clear) */
	u = rd(fx, 0x81, 0x8c, 0, 4);
	assert_memory_equal(u->buf, "\0\0\0\0", 4);
}

static void test_phy(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx);
	assert_int_equal(phy16(fx, 0x01), 0x796d);	/* link, autoneg done */
	/* GMII_PHY_PHYSR: 1000, full duplex, link */
	assert_int_equal(phy16(fx, 0x11), 0xa400);
	/* mii_ethtool_gset(): 1000BASE-T full both ways */
	assert_true(phy16(fx, 0x09) & 0x0200);
	assert_true(phy16(fx, 0x0a) & 0x0800);
	/* mii_nway_restart(): the restart bit is done at once */
	phy_w(fx, 0x00, 0x1340);
	assert_int_equal(phy16(fx, 0x00), 0x1140);
	/* read-only registers stay */
	phy_w(fx, 0x01, 0);
	phy_w(fx, 0x11, 0);
	assert_int_equal(phy16(fx, 0x01), 0x796d);
	assert_int_equal(phy16(fx, 0x11), 0xa400);

	/* ax88179_led_setting(): the extension page's LED registers */
	phy_w(fx, 0x1f, 0x0007);
	phy_w(fx, 0x1e, 0x002c);
	phy_w(fx, 0x1a, 0x0070);
	assert_int_equal(phy16(fx, 0x1a), 0x0070);
	assert_int_equal(phy16(fx, 0x1f), 0x0007);
	/* ax88179_enable_eee() writes 0x0680 to register 1 of page 5: not
	 * the BMSR of page 0 */
	phy_w(fx, 0x1f, 0x0005);
	phy_w(fx, 0x01, 0x0680);
	assert_int_equal(phy16(fx, 0x01), 0x0680);
	phy_w(fx, 0x1f, 0x0000);
	assert_int_equal(phy16(fx, 0x01), 0x796d);
	assert_int_equal(phy16(fx, 0x1a), 0);

	/* clause 45 through 22: PCS EEE ability 3.20 reads 0 (no EEE),
	 * the EEE advertisement 7.60 keeps what is written */
	phy_w(fx, 0x0d, 3);
	phy_w(fx, 0x0e, 20);
	phy_w(fx, 0x0d, 0x4003);
	assert_int_equal(phy16(fx, 0x0e), 0);
	phy_w(fx, 0x0d, 7);
	phy_w(fx, 0x0e, 60);
	phy_w(fx, 0x0d, 0x4007);
	phy_w(fx, 0x0e, 0x0006);
	assert_int_equal(phy16(fx, 0x0e), 0x0006);
	phy_w(fx, 0x0d, 7);			/* address mode: the address */
	assert_int_equal(phy16(fx, 0x0e), 60);

	/* no PHY at another MDIO address: all ones, writes go nowhere */
	u = rd(fx, PHY, 1, 0x01, 2);
	assert_int_equal(u->buf[0] & u->buf[1], 0xff);
	fx_expect_ok(fx, fx_ctrl(fx, WR, PHY, 1, 0x00, 2, "\0\0"), 2);
	assert_int_equal(phy16(fx, 0x00), 0x1140);
}

/* `speed 100`: the PHY resolves 100 full, the partner has no 1000. */
static void test_speed_100(void **state)
{
	struct fx *fx = *state;

	fx_start_file(fx, AX, "speed 1000", "speed 100 ");
	assert_int_equal(phy16(fx, 0x11), 0x6400);
	assert_int_equal(phy16(fx, 0x0a) & 0x0c00, 0);
}

static void test_hostile_requests(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx);
	/* MAC: past the 256 registers, no bytes, wLength not wIndex */
	fx_expect_stall(fx, fx_ctrl(fx, RD, MAC, 0xff, 2, 2, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, RD, MAC, 0x100, 1, 1, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, RD, MAC, 0x10, 0, 0, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, RD, MAC, 0x10, 6, 4, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, RD, MAC, 0x00, 0xffff, 0xffff, NULL));
	/* a write whose data stage the URB cuts short */
	u = fx_ctrl_new(WR, MAC, 0x10, 6, 6, 3);
	fx_expect_stall(fx, fx_submit(fx, u));
	assert_int_equal(mac8(fx, 0x10), 0x02);
	/* PHY: register 32, not 2 bytes */
	fx_expect_stall(fx, fx_ctrl(fx, RD, PHY, 3, 32, 2, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, RD, PHY, 3, 1, 4, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, WR, PHY, 3, 0, 1, "\0"));
	/* EEPROM: past word 127, no words, wLength not twice wIndex */
	fx_expect_stall(fx, fx_ctrl(fx, RD, EEPROM, 128, 1, 2, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, RD, EEPROM, 127, 2, 4, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, RD, EEPROM, 0, 0, 0, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, RD, EEPROM, 0, 1, 1, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, RD, EEPROM, 0xffff, 0xffff, 2, NULL));
	/* eFuse: past 64 bytes, written */
	fx_expect_stall(fx, fx_ctrl(fx, RD, EFUSE, 60, 8, 8, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, WR, EFUSE, 0, 1, 1, "\0"));
	/* reload with a data stage, 0x81 written or longer than 4 */
	fx_expect_stall(fx, fx_ctrl(fx, WR, RELOAD, 0, 0, 1, "\0"));
	fx_expect_stall(fx, fx_ctrl(fx, WR, 0x81, 0x8c, 0, 4, "\0\0\0\0"));
	fx_expect_stall(fx, fx_ctrl(fx, RD, 0x81, 0x8c, 0, 8, NULL));
	/* unknown vendor requests; class and interface requests are not
	 * the chip's */
	fx_expect_stall(fx, fx_ctrl(fx, RD, 0x03, 0, 0, 2, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, RD, 0x99, 0, 0, 2, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, MAC, 0x10, 6, 6, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xc1, MAC, 0x10, 6, 6, NULL));
	/* and a good request after all that */
	assert_int_equal(mac8(fx, 0x03), 0x04);
}

/* ---- the link report ---- */

static void test_link_report(void **state)
{
	static const uint8_t up[8] = { 0, 0, 0x01, 0, 0, 0, 0, 0 };
	struct fx *fx = *state;
	struct urb *a, *b;

	start(fx);
	/* usbnet_open() posts the interrupt URB: the link goes out */
	a = fx_submit(fx, fx_urb_new(EP_INT, 8));
	fx_expect_ok(fx, a, 8);
	assert_memory_equal(a->buf, up, 8);
	/* resubmitted by intr_complete(): nothing new to say */
	b = fx_submit(fx, fx_urb_new(EP_INT, 8));
	assert_false(fx_is_done(fx, b));
	/* usbnet_stop() kills it; the next open hears the link again */
	assert_ptr_equal(gdev_unlink(fx->dev, b->seqnum), b);
	fx_urb_free(b);
	a = fx_submit(fx, fx_urb_new(EP_INT, 8));
	fx_expect_ok(fx, a, 8);
	assert_memory_equal(a->buf, up, 8);
	/* a new configuration ends a pending one */
	b = fx_submit(fx, fx_urb_new(EP_INT, 8));
	fx_set_config(fx, 0);
	assert_true(fx_is_done(fx, b));
	assert_int_equal(b->status, -ESHUTDOWN);
	/* a host buffer of 4 bytes gets 4 (the driver would ignore it) */
	fx_set_config(fx, 1);
	a = fx_submit(fx, fx_urb_new(EP_INT, 4));
	fx_expect_ok(fx, a, 4);
}

/* ---- the bulk framing ---- */

/* A bulk OUT transfer as ax88179_tx_fixup() builds it: LE32 length,
 * LE32 MSS/padding word, the frame, pad bytes. */
static struct urb *tx(struct fx *fx, const uint8_t *f, uint32_t hdr_len,
		      size_t len, size_t pad)
{
	struct urb *u = fx_urb_new(EP_OUT, 8 + len + pad);

	u->buf[0] = hdr_len & 0xff;
	u->buf[1] = hdr_len >> 8 & 0xff;
	u->buf[2] = hdr_len >> 16 & 0xff;
	u->buf[3] = hdr_len >> 24;
	memcpy(u->buf + 8, f, len);
	fx_submit(fx, u);
	fx_expect_ok(fx, u, 8 + len + pad);	/* always taken whole */
	return u;
}

/* What the host gets for the ARP reply alone: 64 bytes. */
static const uint8_t arp_tail[20] = {
	0, 0, 0, 0,				/* 44: 2 + 42 padded to 48 */
	0x00, 0x00, 0x2c, 0x00,			/* 48: length 44 << 16 */
	0x00, 0x00, 0x00, 0x80,			/* 52: dummy, drop */
	0x00, 0x00, 0x00, 0x00,			/* 56: padding */
	0x02, 0x00, 0x30, 0x00,			/* 60: 2 entries at 48 */
};

static void test_ping(void **state)
{
	static const uint8_t two_tail[24] = {
		0x00, 0x00, 0x2c, 0x00,		/* 104: ARP, 44 bytes */
		0x00, 0x00, 0x00, 0x80,		/* 108: dummy */
		0x00, 0x00, 0x34, 0x00,		/* 112: echo, 52 bytes */
		0x00, 0x00, 0x00, 0x80,		/* 116: dummy */
		0x00, 0x00, 0x00, 0x00,		/* 120: padding */
		0x04, 0x00, 0x68, 0x00,		/* 124: 4 entries at 104 */
	};
	struct fx *fx = *state;
	struct urb *in;

	start(fx);
	receiver_on(fx);
	in = fx_submit(fx, fx_urb_new(EP_IN, 24576));
	assert_false(fx_is_done(fx, in));
	tx(fx, arp_req, 42, 42, 0);
	fx_expect_ok(fx, in, 64);
	assert_int_equal(in->buf[0] | in->buf[1], 0);	/* alignment */
	assert_memory_equal(in->buf + 2, arp_rep, 42);
	assert_memory_equal(in->buf + 44, arp_tail, sizeof(arp_tail));

	/* the echo reply alone: 2 + 50 -> 56, then 16 */
	tx(fx, echo_req, 50, 50, 0);
	in = fx_submit(fx, fx_urb_new(EP_IN, 24576));
	fx_expect_ok(fx, in, 72);
	assert_memory_equal(in->buf + 2, echo_rep, 50);
	assert_memory_equal(in->buf + 56,
			    "\x00\x00\x34\x00\x00\x00\x00\x80"
			    "\x00\x00\x00\x00\x02\x00\x38\x00", 16);

	/* two replies waiting go out in one transfer; usbnet's pad byte
	 * after the frame is not the frame's */
	tx(fx, arp_req, 42, 42, 1);
	tx(fx, echo_req, 50, 50, 0);
	in = fx_submit(fx, fx_urb_new(EP_IN, 24576));
	fx_expect_ok(fx, in, 128);
	assert_memory_equal(in->buf + 2, arp_rep, 42);
	assert_memory_equal(in->buf + 48, "\0\0", 2);
	assert_memory_equal(in->buf + 50, echo_rep, 50);
	assert_memory_equal(in->buf + 104, two_tail, sizeof(two_tail));

	/* a buffer that holds the first reply only takes it alone */
	tx(fx, arp_req, 42, 42, 0);
	tx(fx, echo_req, 50, 50, 0);
	in = fx_submit(fx, fx_urb_new(EP_IN, 100));
	fx_expect_ok(fx, in, 64);
	in = fx_submit(fx, fx_urb_new(EP_IN, 100));
	fx_expect_ok(fx, in, 72);
}

/* The receiver and the address filter decide what reaches the host. */
static void test_receiver(void **state)
{
	uint8_t f[42];
	struct fx *fx = *state;
	struct urb *in;

	start(fx);
	/* at power-on the receiver is off: the reply is lost */
	tx(fx, arp_req, 42, 42, 0);
	in = fx_submit(fx, fx_urb_new(EP_IN, 24576));
	assert_false(fx_is_done(fx, in));
	/* RX_CTL START without medium RECEIVE_EN is still off */
	mac_w(fx, 0x0b, "\xaa\x03", 2);
	tx(fx, arp_req, 42, 42, 0);
	assert_false(fx_is_done(fx, in));
	mac_w(fx, 0x22, "\x33\x01", 2);
	tx(fx, arp_req, 42, 42, 0);
	fx_expect_ok(fx, in, 64);
	/* a question from another MAC: its answer is not for the node id */
	memcpy(f, arp_req, sizeof(f));
	f[11] = 0x09;
	f[27] = 0x09;
	in = fx_submit(fx, fx_urb_new(EP_IN, 24576));
	tx(fx, f, 42, 42, 0);
	assert_false(fx_is_done(fx, in));
	/* promiscuous (RX_CTL PRO): it is */
	mac_w(fx, 0x0b, "\xab\x03", 2);
	tx(fx, f, 42, 42, 0);
	fx_expect_ok(fx, in, 64);
	assert_int_equal(in->buf[2 + 5], 0x09);
}

static void test_hostile_transfers(void **state)
{
	uint8_t big[64] = { 0 };
	struct fx *fx = *state;
	struct urb *in, *u;

	start(fx);
	receiver_on(fx);
	in = fx_submit(fx, fx_urb_new(EP_IN, 24576));
	/* shorter than the header */
	u = fx_submit(fx, fx_urb_new(EP_OUT, 7));
	fx_expect_ok(fx, u, 7);
	u = fx_submit(fx, fx_urb_new(EP_OUT, 0));
	fx_expect_ok(fx, u, 0);
	/* a length beyond the transfer, at 32 bits */
	tx(fx, arp_req, 43, 42, 0);
	tx(fx, arp_req, 0xffffffffu, 42, 0);
	tx(fx, arp_req, 0x0001002a, 42, 0);
	/* shorter than an Ethernet header */
	tx(fx, arp_req, 13, 42, 0);
	tx(fx, arp_req, 0, 42, 0);
	/* more than padding after the frame */
	tx(fx, arp_req, 42, 42, 8);
	/* a frame whose ARP is cut short by its own length */
	tx(fx, arp_req, 41, 42, 0);
	assert_false(fx_is_done(fx, in));
	/* up to 7 bytes of padding are fine */
	tx(fx, arp_req, 42, 42, 7);
	fx_expect_ok(fx, in, 64);
	assert_memory_equal(in->buf + 2, arp_rep, 42);

	/* a host buffer shorter than one reply's transfer: babble, as much
	 * as fits, and the reply is gone */
	tx(fx, arp_req, 42, 42, 0);
	in = fx_submit(fx, fx_urb_new(EP_IN, 32));
	assert_true(fx_is_done(fx, in));
	assert_int_equal(in->status, -EOVERFLOW);
	assert_int_equal(in->actual_length, 32);
	assert_memory_equal(in->buf + 2, arp_rep, 30);
	in = fx_submit(fx, fx_urb_new(EP_IN, 24576));
	assert_false(fx_is_done(fx, in));
	/* and a good exchange after all that */
	memcpy(big, arp_req, 42);
	tx(fx, big, 60, 60, 0);			/* padded to 60 */
	fx_expect_ok(fx, in, 64);
}

static void test_detach_frees(void **state)
{
	struct fx *fx = *state;

	start(fx);
	fx_submit(fx, fx_urb_new(EP_INT, 8));	/* completes: the link */
	fx_submit(fx, fx_urb_new(EP_INT, 8));
	fx_submit(fx, fx_urb_new(EP_IN, 24576));
	fx_submit(fx, fx_urb_new(EP_IN, 24576));
	gdev_detach(fx->dev, fx_free_urb);
	assert_int_equal(fx->freed, 3);
}

/* ---- script checks ---- */

static void check_error(const char *eps, const char *fn_block, int line,
			int col, const char *what)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "device {\n"
		 "  speed high\n"
		 "  idVendor 0x0b95; idProduct 0x1790\n"
		 "  config {\n"
		 "    interface {\n"
		 "      bInterfaceClass 0xff; bInterfaceSubClass 0xff\n"
		 "%s"
		 "    }\n"
		 "  }\n"
		 "%s"
		 "}\n", eps, fn_block);
	fx_expect_script_error("t.gadget", text, line, col, what);
}

static void test_options(void **state)
{
	static const char eps[] =
		"      endpoint { bEndpointAddress 0x81; type interrupt; wMaxPacketSize 8 }\n"
		"      endpoint { bEndpointAddress 0x82; type bulk }\n"
		"      endpoint { bEndpointAddress 0x03; type bulk }\n";
	static const char cdc[] =
		"device {\n  idVendor 1; idProduct 2\n  config {\n"
		"    interface { bInterfaceClass 2 }\n  }\n"
		"  function ax88179\n}\n";

	(void)state;
	/* line 12 is the function line, 13 its first option */
	check_error(eps, "  function ax88179 {\n    framing ecm\n  }\n", 13, 13,
		    "unknown option 'framing'");
	check_error(eps, "  function ax88179 {\n    mac 02:00:00:00:79\n  }\n",
		    13, 9, "mac: expected six hex pairs");
	check_error(eps, "  function ax88179 {\n    mac 01:00:5e:00:00:01\n  }\n",
		    13, 9, "multicast");
	check_error(eps, "  function ax88179 {\n    ip 192.168.79\n  }\n", 13, 8,
		    "ip: expected an IPv4 address");
	check_error(eps, "  function ax88179 {\n    node-id 02-00-00\n  }\n", 13,
		    13, "node-id: expected six hex pairs");
	check_error(eps, "  function ax88179 {\n    speed 42\n  }\n", 13, 11,
		    "speed: 10, 100 or 1000");
	check_error(eps, "  function ax88179 {\n    speed 10000\n  }\n", 13, 11,
		    "more than 1000");
	check_error(eps, "  function ax88179 {\n    speed fast\n  }\n", 13, 11,
		    "expected a number");
	check_error(eps, "  function ax88179 {\n    interface 3\n  }\n", 13, 15,
		    "no interface 3");
	/* the endpoints, at the line of what is wrong */
	check_error("      endpoint { bEndpointAddress 0x81; type interrupt }\n"
		    "      endpoint { bEndpointAddress 0x82; type bulk }\n",
		    "  function ax88179\n", 5, 1,
		    "needs an interrupt IN, a bulk IN and a bulk OUT");
	check_error("      endpoint { bEndpointAddress 0x81; type interrupt; wMaxPacketSize 4 }\n"
		    "      endpoint { bEndpointAddress 0x82; type bulk }\n"
		    "      endpoint { bEndpointAddress 0x03; type bulk }\n",
		    "  function ax88179\n", 7, 1,
		    "wMaxPacketSize at least 8");
	check_error("      endpoint { bEndpointAddress 0x81; type interrupt; wMaxPacketSize 8 }\n"
		    "      endpoint { bEndpointAddress 0x82; type bulk; source }\n"
		    "      endpoint { bEndpointAddress 0x03; type bulk }\n",
		    "  function ax88179\n", 12, 12,
		    "endpoint 0x82 (line 8) is the bulk IN endpoint");
	/* no vendor interface at all */
	fx_expect_script_error("t.gadget", cdc, 6, 0, "no vendor interface");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
		T(test_probe_reads),
		T(test_phy),
		T(test_speed_100),
		T(test_hostile_requests),
		T(test_link_report),
		T(test_ping),
		T(test_receiver),
		T(test_hostile_transfers),
		T(test_detach_frees),
#undef T
		cmocka_unit_test(test_options),
	};

	log_init_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
