// SPDX-License-Identifier: GPL-2.0
/*
 * test_fn_ether.c - the `ether` device function: its ARP/ICMP responder
 * (gadgets/fn/netstack.c) and NTB16 framing (gadgets/fn/ncm_ntb.c) on
 * golden byte vectors and on frames and blocks whose lengths lie, then
 * gadgets/fn/ether.c in process with the shipped example scripts, driven
 * with the requests and URBs cdc_ether and cdc_ncm send.
 *
 * Runs from the repository root (it reads gadgets/examples/).
 *
 * The golden echo request and reply were computed outside this code (with
 * Python's struct and its own checksum), so a checksum bug here cannot
 * agree with itself.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>
#include <linux/usb/ch9.h>

#include "device.h"
#include "fixture.h"
#include "fn/ncm_ntb.h"
#include "fn/netstack.h"
#include "log.h"
#include "model.h"

static const struct net_self self = {
	.mac = { 0x02, 0, 0, 0, 0x77, 0x02 },
	.ip = { 192, 168, 77, 2 },
};

/* ARP who-has 192.168.77.2 tell 192.168.77.1 */
static const uint8_t arp_req[42] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff,	/* dst: broadcast */
	0x02, 0, 0, 0, 0x77, 0x01,		/* src: the host */
	0x08, 0x06,				/* EtherType ARP */
	0x00, 0x01, 0x08, 0x00, 6, 4,		/* Ethernet, IPv4, 6, 4 */
	0x00, 0x01,				/* request */
	0x02, 0, 0, 0, 0x77, 0x01, 192, 168, 77, 1,	/* sha, spa */
	0, 0, 0, 0, 0, 0, 192, 168, 77, 2,	/* tha, tpa */
};

static const uint8_t arp_rep[42] = {
	0x02, 0, 0, 0, 0x77, 0x01,		/* to the asker */
	0x02, 0, 0, 0, 0x77, 0x02,		/* from us */
	0x08, 0x06,
	0x00, 0x01, 0x08, 0x00, 6, 4,
	0x00, 0x02,				/* reply */
	0x02, 0, 0, 0, 0x77, 0x02, 192, 168, 77, 2,	/* sha, spa: us */
	0x02, 0, 0, 0, 0x77, 0x01, 192, 168, 77, 1,	/* tha, tpa */
};

/* echo request id 0x1234 seq 1, 8 data bytes, DF set, TTL 64, and one
 * byte of padding after the packet (as usbnet may add) */
static const uint8_t echo_req[51] = {
	0x02, 0, 0, 0, 0x77, 0x02, 0x02, 0, 0, 0, 0x77, 0x01, 0x08, 0x00,
	0x45, 0x00, 0x00, 0x24,			/* IPv4, 20 bytes; total 36 */
	0xab, 0xcd, 0x40, 0x00,			/* id, DF */
	0x40, 0x01, 0x73, 0xb7,			/* TTL 64, ICMP, checksum */
	192, 168, 77, 1, 192, 168, 77, 2,
	0x08, 0x00, 0xd9, 0xba,			/* echo request, checksum */
	0x12, 0x34, 0x00, 0x01,			/* id, sequence */
	0, 1, 2, 3, 4, 5, 6, 7,
	0x50,					/* padding, not the packet's */
};

static const uint8_t echo_rep[50] = {
	0x02, 0, 0, 0, 0x77, 0x01, 0x02, 0, 0, 0, 0x77, 0x02, 0x08, 0x00,
	0x45, 0x00, 0x00, 0x24,
	0xab, 0xcd, 0x00, 0x00,
	0x40, 0x01, 0xb3, 0xb7,
	192, 168, 77, 2, 192, 168, 77, 1,
	0x00, 0x00, 0xe1, 0xba,			/* echo reply, checksum */
	0x12, 0x34, 0x00, 0x01,
	0, 1, 2, 3, 4, 5, 6, 7,
};

static void test_csum(void **state)
{
	/* RFC 1071 section 3's example: sum ddf2, checksum 220d */
	static const uint8_t rfc[8] = { 0x00, 0x01, 0xf2, 0x03,
					0xf4, 0xf5, 0xf6, 0xf7 };
	/* an IPv4 header whose checksum (b861) is right: sums to 0 */
	static const uint8_t hdr[20] = {
		0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
	};
	static const uint8_t odd[3] = { 0x01, 0x02, 0x03 };

	(void)state;
	assert_int_equal(net_csum(rfc, sizeof(rfc)), 0x220d);
	assert_int_equal(net_csum(hdr, sizeof(hdr)), 0);
	/* an odd byte counts as the high half: ~(0x0102 + 0x0300) */
	assert_int_equal(net_csum(odd, sizeof(odd)), (uint16_t)~0x0402);
}

static void test_arp(void **state)
{
	uint8_t f[64], out[NET_FRAME_MAX];
	const char *why = NULL;

	(void)state;
	assert_int_equal(net_answer(&self, arp_req, sizeof(arp_req), out,
				    sizeof(out), &why), 42);
	assert_memory_equal(out, arp_rep, 42);
	/* Ethernet pads to 60 bytes: the padding is not ARP's */
	memset(f, 0, sizeof(f));
	memcpy(f, arp_req, sizeof(arp_req));
	assert_int_equal(net_answer(&self, f, 60, out, sizeof(out), NULL), 42);
	assert_memory_equal(out, arp_rep, 42);
	/* for another address: not ours to answer */
	f[41] = 3;
	assert_int_equal(net_answer(&self, f, 42, out, sizeof(out), &why), 0);
	assert_string_equal(why, "ARP request for another address");
	/* a reply is not answered */
	memcpy(f, arp_req, sizeof(arp_req));
	f[21] = 2;
	assert_int_equal(net_answer(&self, f, 42, out, sizeof(out), NULL), 0);
	/* cut short */
	assert_int_equal(net_answer(&self, arp_req, 41, out, sizeof(out),
				    &why), -EINVAL);
	/* no room for the reply */
	assert_int_equal(net_answer(&self, arp_req, 42, out, 41, NULL),
			 -ENOSPC);
}

static void test_echo(void **state)
{
	uint8_t f[NET_FRAME_MAX], out[NET_FRAME_MAX];
	const char *why = NULL;
	size_t i;
	int n;

	(void)state;
	n = net_answer(&self, echo_req, sizeof(echo_req), out, sizeof(out),
		       &why);
	assert_int_equal(n, sizeof(echo_rep));
	assert_memory_equal(out, echo_rep, sizeof(echo_rep));

	/* a 1400-byte payload with IP options: the reply drops the options,
	 * keeps every data byte, and both checksums hold */
	memset(f, 0, sizeof(f));
	memcpy(f, echo_req, 14);
	f[14] = 0x46;			/* IHL 6: one word of options */
	f[16] = (24 + 8 + 1400) >> 8;
	f[17] = (uint8_t)(24 + 8 + 1400);
	f[22] = 64;
	f[23] = 1;
	memcpy(f + 26, echo_req + 26, 8);
	f[34] = 1;			/* a NOP option, padded */
	f[38] = 8;			/* echo request */
	for (i = 0; i < 1400; i++)
		f[46 + i] = (uint8_t)(i * 7);
	f[24] = f[25] = 0;
	i = net_csum(f + 14, 24);
	f[24] = i >> 8;
	f[25] = (uint8_t)i;
	i = net_csum(f + 38, 1408);
	f[40] = i >> 8;
	f[41] = (uint8_t)i;
	n = net_answer(&self, f, 14 + 24 + 1408, out, sizeof(out), &why);
	assert_int_equal(n, 14 + 20 + 1408);
	assert_int_equal(out[14], 0x45);
	assert_int_equal(out[16] << 8 | out[17], 20 + 1408);
	assert_int_equal(net_csum(out + 14, 20), 0);
	assert_int_equal(net_csum(out + 34, 1408), 0);
	assert_memory_equal(out + 34 + 4, f + 38 + 4, 1404);

	/* total length beyond the frame */
	assert_int_equal(net_answer(&self, echo_req, 49, out, sizeof(out),
				    &why), -EINVAL);
	assert_string_equal(why, "IPv4 total length beyond the frame");
	/* a bad header checksum, a bad ICMP checksum */
	memcpy(f, echo_req, sizeof(echo_req));
	f[25] ^= 1;
	assert_int_equal(net_answer(&self, f, 50, out, sizeof(out), &why),
			 -EINVAL);
	assert_string_equal(why, "IPv4 header checksum");
	memcpy(f, echo_req, sizeof(echo_req));
	f[49] ^= 1;
	assert_int_equal(net_answer(&self, f, 50, out, sizeof(out), &why),
			 -EINVAL);
	assert_string_equal(why, "ICMP checksum");
	/* IHL beyond the total length */
	memcpy(f, echo_req, sizeof(echo_req));
	f[14] = 0x4f;
	assert_int_equal(net_answer(&self, f, 50, out, sizeof(out), &why),
			 -EINVAL);
	/* to another IP, to another MAC: ignored */
	memcpy(f, echo_req, sizeof(echo_req));
	f[5] = 9;
	assert_int_equal(net_answer(&self, f, 50, out, sizeof(out), &why), 0);
	assert_int_equal(net_answer(&self, echo_req, 13, out, sizeof(out),
				    &why), -EINVAL);
}

static void test_parse_addr(void **state)
{
	uint8_t mac[6], ip[4];
	static const uint8_t want[6] = { 0x02, 0xab, 0, 0, 0x77, 0xff };

	(void)state;
	assert_int_equal(net_parse_mac("02:ab:00:00:77:FF", mac), 0);
	assert_memory_equal(mac, want, 6);
	assert_int_equal(net_parse_mac("02-ab-00-00-77-ff", mac), 0);
	assert_int_equal(net_parse_mac("02:ab:00:00:77", mac), -EINVAL);
	assert_int_equal(net_parse_mac("02:ab:00:00:77:ff:", mac), -EINVAL);
	assert_int_equal(net_parse_mac("2:ab:00:00:77:ff", mac), -EINVAL);
	assert_int_equal(net_parse_ipv4("192.168.77.2", ip), 0);
	assert_int_equal(ip[0], 192);
	assert_int_equal(ip[3], 2);
	assert_int_equal(net_parse_ipv4("192.168.77.256", ip), -EINVAL);
	assert_int_equal(net_parse_ipv4("192.168.77", ip), -EINVAL);
	assert_int_equal(net_parse_ipv4("192.168.77.2.", ip), -EINVAL);
	assert_int_equal(net_parse_ipv4("0192.1.1.1", ip), -EINVAL);
}

/* ---- NTB16 ---- */

struct seen {
	size_t n;
	size_t len[8];
	const uint8_t *at[8];
};

static void take(void *ctx, const uint8_t *dg, size_t len)
{
	struct seen *s = ctx;

	if (s->n < 8) {
		s->at[s->n] = dg;
		s->len[s->n] = len;
	}
	s->n++;
}

static void test_ntb_build_parse(void **state)
{
	/* the NTB for ARP's reply as the function sends it */
	static const uint8_t head[28] = {
		'N', 'C', 'M', 'H', 12, 0,	/* signature, wHeaderLength */
		7, 0, 70, 0, 12, 0,		/* wSequence 7, 70 bytes, NDP */
		'N', 'C', 'M', '0', 16, 0,	/* signature, wLength */
		0, 0,				/* wNextNdpIndex */
		28, 0, 42, 0,			/* the datagram */
		0, 0, 0, 0,			/* terminator */
	};
	uint8_t b[128];
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(ntb16_build(7, arp_rep, 42, b, sizeof(b)), 70);
	assert_memory_equal(b, head, 28);
	assert_memory_equal(b + 28, arp_rep, 42);
	assert_int_equal(ntb16_build(7, arp_rep, 42, b, 69), -ENOSPC);
	assert_int_equal(ntb16_parse(b, 70, take, &s, NULL), 1);
	assert_int_equal(s.len[0], 42);
	assert_ptr_equal(s.at[0], b + 28);
	/* a longer transfer: the block length rules */
	s.n = 0;
	assert_int_equal(ntb16_parse(b, sizeof(b), take, &s, NULL), 1);
}

/* Two NDPs, the second at the end (as CDC_NCM_FLAG_NDP_TO_END puts it),
 * two datagrams in the first. */
static void test_ntb_two_ndps(void **state)
{
	uint8_t b[256] = { 'N', 'C', 'M', 'H', 12, 0, 0, 0, 200, 0, 12, 0 };
	static const uint8_t ndp1[20] = {
		'N', 'C', 'M', '0', 20, 0, 180, 0,
		40, 0, 20, 0, 60, 0, 30, 0, 0, 0, 0, 0,
	};
	static const uint8_t ndp2[16] = {
		'N', 'C', 'M', '0', 16, 0, 0, 0,
		100, 0, 14, 0, 0, 0, 0, 0,
	};
	struct seen s = { 0 };
	const char *why = NULL;

	(void)state;
	memcpy(b + 12, ndp1, sizeof(ndp1));
	memcpy(b + 180, ndp2, sizeof(ndp2));
	assert_int_equal(ntb16_parse(b, 200, take, &s, &why), 3);
	assert_int_equal(s.len[0], 20);
	assert_ptr_equal(s.at[1], b + 60);
	assert_int_equal(s.len[2], 14);
	/* the transfer is shorter than wBlockLength */
	assert_int_equal(ntb16_parse(b, 199, take, &s, &why), -EINVAL);
	assert_string_equal(why, "wBlockLength beyond the transfer");
	/* the second NDP points back at the first: a loop, bounded */
	b[180 + 6] = 12;
	s.n = 0;
	assert_int_equal(ntb16_parse(b, 200, take, &s, &why), -EINVAL);
	assert_string_equal(why, "too many NDP16s (a loop?)");
}

static void test_ntb_lies(void **state)
{
	uint8_t good[70], b[70];
	struct seen s = { 0 };
	const char *why = NULL;

	(void)state;
	assert_int_equal(ntb16_build(0, arp_rep, 42, good, sizeof(good)), 70);
#define LIE(off, val, reason) do {					\
		memcpy(b, good, sizeof(b));				\
		b[off] = (val);						\
		assert_int_equal(ntb16_parse(b, sizeof(b), take, &s, &why), \
				 -EINVAL);				\
		assert_string_equal(why, reason);			\
	} while (0)
	LIE(0, 'X', "NTH16 signature not NCMH");
	LIE(4, 16, "NTH16 wHeaderLength not 12");
	LIE(8, 71, "wBlockLength beyond the transfer");
	LIE(10, 14, "NDP16 index outside the block or unaligned");
	LIE(10, 64, "NDP16 index outside the block or unaligned");
	LIE(10, 0, "NTH16 wNdpIndex is 0");
	LIE(15, '1' + 1, "NDP16 signature not NCM0");
	LIE(16, 12, "NDP16 wLength not a multiple of 4 of at least 16");
	LIE(16, 18, "NDP16 wLength not a multiple of 4 of at least 16");
	LIE(16, 60, "NDP16 runs past the end of the block");
	LIE(20, 40, "datagram outside the block");
	LIE(22, 43, "datagram outside the block");
	LIE(22, 13, "datagram shorter than an Ethernet header");
#undef LIE
	/* the last entry of the table is a datagram, not (0, 0) */
	memcpy(b, good, sizeof(b));
	b[24] = 28;
	b[26] = 14;
	assert_int_equal(ntb16_parse(b, sizeof(b), take, &s, &why), -EINVAL);
	assert_string_equal(why, "NDP16 without a terminating entry");
	/* a CRC NDP is skipped, not an error */
	memcpy(b, good, sizeof(b));
	b[15] = '1';
	s.n = 0;
	assert_int_equal(ntb16_parse(b, sizeof(b), take, &s, &why), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(ntb16_parse(good, 11, take, &s, &why), -EINVAL);
}


/* ---- the function ---- */

#define ECM	"gadgets/examples/cdc-ecm.gadget"
#define NCM	"gadgets/examples/cdc-ncm.gadget"

/* what the examples' interrupt endpoint carries when the link comes up */
static const uint8_t note_speed[16] = {
	0xa1, 0x2a, 0, 0, 0, 0, 8, 0,		/* SPEED_CHANGE, interface 0 */
	0x00, 0xe1, 0xf5, 0x05,			/* downlink 100000000 bit/s */
	0x00, 0xe1, 0xf5, 0x05,			/* uplink */
};
static const uint8_t note_up[8] = { 0xa1, 0x00, 1, 0, 0, 0, 0, 0 };
static const uint8_t note_down[8] = { 0xa1, 0x00, 0, 0, 0, 0, 0, 0 };

static void set_alt(struct fx *fx, uint16_t intf, uint16_t alt)
{
	fx_expect_ok(fx, fx_ctrl(fx, 0x01, USB_REQ_SET_INTERFACE, alt, intf, 0,
			      NULL), 0);
}

static void start(struct fx *fx, const char *path)
{
	fx_start_file(fx, path, NULL, NULL);
}

static struct urb *bulk_out(struct fx *fx, const uint8_t *b, size_t len)
{
	struct urb *u = fx_urb_new(0x02, len);

	memcpy(u->buf, b, len);
	return fx_submit(fx, u);
}

/* The link comes up with the data interface's bulk alternate setting:
 * SPEED_CHANGE, then NETWORK_CONNECTION, on the interrupt endpoint. */
static void link_up(struct fx *fx)
{
	struct urb *irq;

	irq = fx_submit(fx, fx_urb_new(0x83, 16));
	assert_false(fx_is_done(fx, irq));	/* alternate setting 0: quiet */
	set_alt(fx, 1, 1);
	fx_expect_ok(fx, irq, 16);
	assert_memory_equal(irq->buf, note_speed, 16);
	irq = fx_submit(fx, fx_urb_new(0x83, 16));
	fx_expect_ok(fx, irq, 8);
	assert_memory_equal(irq->buf, note_up, 8);
}

static void test_ecm_ping(void **state)
{
	struct fx *fx = *state;
	struct urb *in, *out;

	start(fx, ECM);
	/* cdc_ether's usbnet_cdc_update_filter(): directed, broadcast,
	 * all-multicast... on the communication interface */
	fx_expect_ok(fx, fx_ctrl(fx, 0x21, 0x43, 0x000e, 0, 0, NULL), 0);
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, 0x43, 0x000e, 0, 2, "ab"));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, 0x44, 1, 0, 4, NULL));
	/* NCM's requests are not ECM's */
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, 0x80, 0, 0, 28, NULL));
	link_up(fx);

	in = fx_submit(fx, fx_urb_new(0x81, 1536));
	assert_false(fx_is_done(fx, in));
	out = bulk_out(fx, arp_req, sizeof(arp_req));
	fx_expect_ok(fx, out, sizeof(arp_req));
	fx_expect_ok(fx, in, sizeof(arp_rep));
	assert_memory_equal(in->buf, arp_rep, sizeof(arp_rep));

	/* the reply waits for an IN URB */
	bulk_out(fx, echo_req, sizeof(echo_req));
	in = fx_submit(fx, fx_urb_new(0x81, 1536));
	fx_expect_ok(fx, in, sizeof(echo_rep));
	assert_memory_equal(in->buf, echo_rep, sizeof(echo_rep));

	/* a host buffer too short for the frame: babble */
	bulk_out(fx, echo_req, sizeof(echo_req));
	in = fx_submit(fx, fx_urb_new(0x81, 32));
	assert_true(fx_is_done(fx, in));
	assert_int_equal(in->status, -EOVERFLOW);

	/* a malformed frame is taken and not answered */
	out = bulk_out(fx, echo_req, 40);
	fx_expect_ok(fx, out, 40);
	in = fx_submit(fx, fx_urb_new(0x81, 1536));
	assert_false(fx_is_done(fx, in));
}

static void test_ecm_link_down_and_reset(void **state)
{
	struct fx *fx = *state;
	struct urb *irq, *in;

	start(fx, ECM);
	link_up(fx);
	in = fx_submit(fx, fx_urb_new(0x81, 1536));
	irq = fx_submit(fx, fx_urb_new(0x83, 16));
	assert_false(fx_is_done(fx, irq));
	/* back to alternate setting 0: the bulk URBs end, the host that
	 * saw the link up is told it is down */
	set_alt(fx, 1, 0);
	assert_true(fx_is_done(fx, in));
	assert_int_equal(in->status, -ESHUTDOWN);
	fx_expect_ok(fx, irq, 8);
	assert_memory_equal(irq->buf, note_down, 8);
	/* up again, told again */
	link_up(fx);
	/* a new configuration ends the interrupt URB too */
	irq = fx_submit(fx, fx_urb_new(0x83, 16));
	fx_set_config(fx, 0);
	assert_true(fx_is_done(fx, irq));
	assert_int_equal(irq->status, -ESHUTDOWN);
}

/* An 8-byte interrupt endpoint gets SPEED_CHANGE in two pieces, which
 * usbnet's EVENT_STS_SPLIT reassembles. */
static void test_ecm_short_notify_urbs(void **state)
{
	struct fx *fx = *state;
	struct urb *a, *b, *c;

	start(fx, ECM);
	a = fx_submit(fx, fx_urb_new(0x83, 8));
	set_alt(fx, 1, 1);
	b = fx_submit(fx, fx_urb_new(0x83, 8));
	c = fx_submit(fx, fx_urb_new(0x83, 8));
	fx_expect_ok(fx, a, 8);
	fx_expect_ok(fx, b, 8);
	fx_expect_ok(fx, c, 8);
	assert_memory_equal(a->buf, note_speed, 8);
	assert_memory_equal(b->buf, note_speed + 8, 8);
	assert_memory_equal(c->buf, note_up, 8);
}

static void test_ncm_bind_requests(void **state)
{
	static const uint8_t params[28] = {
		28, 0, 1, 0,			/* wLength, NTB16 only */
		0x00, 0x80, 0, 0,		/* dwNtbInMaxSize 32768 */
		4, 0, 0, 0, 4, 0, 0, 0,		/* divisor, remainder, align */
		0x00, 0x40, 0, 0,		/* dwNtbOutMaxSize 16384 */
		4, 0, 0, 0, 4, 0, 0, 0,		/* ..., wNtbOutMaxDatagrams */
	};
	uint8_t size[4] = { 0x00, 0x40, 0, 0 };
	struct fx *fx = *state;
	struct urb *u;

	start(fx, NCM);
	/* cdc_ncm_init() at data alternate setting 0 */
	u = fx_ctrl(fx, 0xa1, 0x80, 0, 0, 28, NULL);
	fx_expect_ok(fx, u, 28);
	assert_memory_equal(u->buf, params, 28);
	fx_expect_ok(fx, fx_ctrl(fx, 0x21, 0x8a, 0, 0, 0, NULL), 0);
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, 0x8a, 1, 0, 0, NULL));
	fx_expect_ok(fx, fx_ctrl(fx, 0x21, 0x84, 0, 0, 0, NULL), 0);
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, 0x84, 1, 0, 0, NULL));
	u = fx_ctrl(fx, 0xa1, 0x83, 0, 0, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0] | u->buf[1], 0);
	link_up(fx);
	/* NTB format only at alternate setting 0 (NCM 6.2.5) */
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, 0x84, 0, 0, 0, NULL));
	/* cdc_ncm_update_rxtx_max(): 16384 of the 32768 offered */
	fx_expect_ok(fx, fx_ctrl(fx, 0x21, 0x86, 0, 0, 4, size), 4);
	u = fx_ctrl(fx, 0xa1, 0x85, 0, 0, 4, NULL);
	fx_expect_ok(fx, u, 4);
	assert_memory_equal(u->buf, size, 4);
	size[2] = 1;				/* 81920: more than offered */
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, 0x86, 0, 0, 4, size));
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, 0x86, 0, 0, 2, size));
	/* max datagram size, the packet filter */
	u = fx_ctrl(fx, 0xa1, 0x87, 0, 0, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0] | u->buf[1] << 8, 1514);
	fx_expect_ok(fx, fx_ctrl(fx, 0x21, 0x88, 0, 0, 2, "\x00\x05"), 2);
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, 0x88, 0, 0, 2, "\x00\x10"));
	fx_expect_ok(fx, fx_ctrl(fx, 0x21, 0x43, 0x000c, 0, 0, NULL), 0);
	/* another interface's requests are not the function's */
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, 0x80, 0, 1, 28, NULL));
	/* back at alternate setting 0 the sizes are the defaults again */
	set_alt(fx, 1, 0);
	u = fx_ctrl(fx, 0xa1, 0x85, 0, 0, 4, NULL);
	fx_expect_ok(fx, u, 4);
	assert_int_equal(u->buf[1], 0x80);
}

/* One NTB from the host with two datagrams, ARP and echo; one NTB back
 * for each reply, numbered. */
static void test_ncm_ping(void **state)
{
	uint8_t ntb[256] = { 'N', 'C', 'M', 'H', 12, 0, 0, 0, 0, 0, 12, 0 };
	static const uint8_t ndp[20] = {
		'N', 'C', 'M', '0', 20, 0, 0, 0,
		32, 0, 42, 0,			/* ARP at 32 */
		76, 0, 51, 0,			/* echo at 76 */
		0, 0, 0, 0,
	};
	size_t total = 76 + sizeof(echo_req);
	struct fx *fx = *state;
	struct urb *in, *out;
	struct seen s = { 0 };

	start(fx, NCM);
	link_up(fx);
	memcpy(ntb + 12, ndp, sizeof(ndp));
	memcpy(ntb + 32, arp_req, sizeof(arp_req));
	memcpy(ntb + 76, echo_req, sizeof(echo_req));
	ntb[8] = total;
	/* cdc_ncm pads the transfer past wBlockLength */
	out = bulk_out(fx, ntb, sizeof(ntb));
	fx_expect_ok(fx, out, sizeof(ntb));

	in = fx_submit(fx, fx_urb_new(0x81, 16384));
	fx_expect_ok(fx, in, 28 + sizeof(arp_rep));
	assert_int_equal(ntb16_parse(in->buf, in->actual_length, take, &s,
				     NULL), 1);
	assert_int_equal(s.len[0], sizeof(arp_rep));
	assert_memory_equal(s.at[0], arp_rep, sizeof(arp_rep));
	assert_int_equal(in->buf[6], 0);		/* wSequence 0 */

	in = fx_submit(fx, fx_urb_new(0x81, 16384));
	fx_expect_ok(fx, in, 28 + sizeof(echo_rep));
	assert_int_equal(in->buf[6], 1);		/* then 1 */
	assert_memory_equal(in->buf + 28, echo_rep, sizeof(echo_rep));

	/* a block that lies is taken whole and answers nothing */
	ntb[8] = 0xff;
	out = bulk_out(fx, ntb, sizeof(ntb) - 100);
	fx_expect_ok(fx, out, sizeof(ntb) - 100);
	in = fx_submit(fx, fx_urb_new(0x81, 16384));
	assert_false(fx_is_done(fx, in));
}

static void test_detach_frees(void **state)
{
	struct fx *fx = *state;

	start(fx, NCM);
	fx_submit(fx, fx_urb_new(0x83, 16));
	set_alt(fx, 1, 1);
	fx_submit(fx, fx_urb_new(0x83, 16));
	fx_submit(fx, fx_urb_new(0x83, 16));
	fx_submit(fx, fx_urb_new(0x81, 2048));
	fx_submit(fx, fx_urb_new(0x81, 2048));
	gdev_detach(fx->dev, fx_free_urb);
	assert_int_equal(fx->freed, 3);
}

static void check_error(const char *comm, const char *fn_block, int line,
			int col, const char *what)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "device {\n"
		 "  idVendor 0x1209; idProduct 0x7e58\n"
		 "  config {\n"
		 "    interface {\n"
		 "      %s\n"
		 "      endpoint { bEndpointAddress 0x83; type interrupt }\n"
		 "    }\n"
		 "    interface {\n"
		 "      bInterfaceClass 0x0a\n"
		 "      endpoint { bEndpointAddress 0x81; type bulk }\n"
		 "      endpoint { bEndpointAddress 0x02; type bulk }\n"
		 "    }\n"
		 "  }\n"
		 "%s"
		 "}\n", comm, fn_block);
	fx_expect_script_error("t.gadget", text, line, col, what);
}

static void test_options(void **state)
{
	static const char ecm[] = "bInterfaceClass 2; bInterfaceSubClass 6";
	char text[1024];

	(void)state;
	/* line 14 is the function line */
	check_error(ecm, "  function ether {\n    framing ppp\n  }\n", 15, 13,
		    "framing: expected ecm or ncm");
	check_error(ecm, "  function ether {\n    ip 10.0.0\n  }\n", 15, 8,
		    "ip: expected an IPv4 address");
	check_error(ecm, "  function ether {\n    mac 03:00:00:00:00:01\n  }\n",
		    15, 9, "multicast");
	check_error(ecm, "  function ether {\n    ntb-in-max 4096\n  }\n", 15,
		    16, "NTB sizes need framing ncm");
	check_error(ecm, "  function ether {\n    framing ncm\n    ntb-in-max 1024\n  }\n",
		    16, 16, "at least 2048");
	check_error(ecm, "  function ether {\n    framing ncm\n  }\n", 14, 12,
		    "bInterfaceSubClass 0x0d");
	check_error(ecm, "  function ether {\n    interface 1\n  }\n", 15, 15,
		    "interrupt IN");
	check_error("bInterfaceClass 0xff", "  function ether\n", 14, 12,
		    "no communication interface");
	/* the vendor class is fine when named */
	snprintf(text, sizeof(text),
		 "device {\n  idVendor 1; idProduct 2\n  config {\n"
		 "    interface {\n      bInterfaceClass 0xff\n"
		 "      endpoint { bEndpointAddress 0x83; type interrupt }\n"
		 "    }\n    interface {\n      bInterfaceClass 0x0a\n"
		 "      endpoint { bEndpointAddress 0x81; type bulk }\n"
		 "      endpoint { bEndpointAddress 0x02; type bulk }\n"
		 "    }\n  }\n  function ether { interface 0 }\n}\n");
	fx_expect_script_ok("t.gadget", text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csum),
		cmocka_unit_test(test_arp),
		cmocka_unit_test(test_echo),
		cmocka_unit_test(test_parse_addr),
		cmocka_unit_test(test_ntb_build_parse),
		cmocka_unit_test(test_ntb_two_ndps),
		cmocka_unit_test(test_ntb_lies),
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
		T(test_ecm_ping),
		T(test_ecm_link_down_and_reset),
		T(test_ecm_short_notify_urbs),
		T(test_ncm_bind_requests),
		T(test_ncm_ping),
		T(test_detach_frees),
#undef T
		cmocka_unit_test(test_options),
	};

	log_init_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
