// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_net.c - what the network functions read from the host's network
 * stack: Ethernet frames into the ARP and ICMP echo responder
 * (gadgets/fn/netstack.c) and NCM Transfer Blocks into their datagrams
 * (gadgets/fn/ncm_ntb.c), without USB around them.  fuzz_pdu reaches the
 * same code through the ether and ax88179 gadgets, a few frames an input;
 * here every input is one frame or one block.
 *
 * Input: a mode byte, then the bytes.  Mode bit 0 clear: the bytes are one
 * Ethernet frame; set: they are one bulk OUT transfer of a CDC-NCM
 * function, an NTB16 whose every datagram is a frame.
 *
 * Oracle, besides the sanitizers: a frame net_answer() refuses says why
 * (and only a frame longer than NET_FRAME_MAX may have too long a reply);
 * a reply fits NET_FRAME_MAX, comes from our MAC, goes to the sender, is
 * an ARP reply carrying our address or an IPv4 ICMP echo reply whose
 * header and ICMP checksums hold; the reply as an NTB16 (ntb16_build())
 * parses back to exactly that one datagram.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "fn/ncm_ntb.h"
#include "fn/netstack.h"
#include "usbip_wire.h"

static const struct net_self self = {
	.mac = { 0x02, 0x00, 0x00, 0x00, 0x77, 0x02 },
	.ip = { 192, 168, 77, 2 },
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init();
	return 0;
}

struct back {
	const uint8_t *want;
	size_t want_len;
	unsigned int n;
};

/* ntb16_parse() of our own block: the one datagram must be the reply */
static void back_dg(void *ctx, const uint8_t *dg, size_t dg_len)
{
	struct back *b = ctx;

	if (b->n++ || dg_len != b->want_len || memcmp(dg, b->want, dg_len))
		fz_fail("ntb16: the reply's block gave back something else");
}

static void check_ipv4_reply(const uint8_t *r, size_t n)
{
	const uint8_t *ip = r + NET_ETH_HLEN;
	size_t ihl, total;

	if (n < NET_ETH_HLEN + 20 + 8)
		fz_fail("net: IPv4 reply of %zu bytes", n);
	ihl = (size_t)(ip[0] & 15) * 4;
	total = get_be16(ip + 2);
	if (ip[0] >> 4 != 4 || ihl < 20 || total < ihl + 8 ||
	    NET_ETH_HLEN + total > n)
		fz_fail("net: IPv4 reply header lengths");
	if (ip[9] != 1 || memcmp(ip + 12, self.ip, 4))
		fz_fail("net: IPv4 reply not ICMP from us");
	if (net_csum(ip, ihl))
		fz_fail("net: IPv4 reply header checksum");
	if (ip[ihl] != 0 || net_csum(ip + ihl, total - ihl))
		fz_fail("net: ICMP reply type or checksum");
}

static void answer(const uint8_t *frame, size_t len)
{
	uint8_t reply[NET_FRAME_MAX], ntb[NET_FRAME_MAX + NTB_BUILD_OVERHEAD];
	const char *why = NULL;
	struct back b = { reply, 0, 0 };
	int n, blen;

	n = net_answer(&self, frame, len, reply, sizeof(reply), &why);
	if (n <= 0) {
		/* a reply is never longer than its request */
		if (n == -ENOSPC && len > NET_FRAME_MAX)
			return;
		if (n != 0 && n != -EINVAL)
			fz_fail("net_answer: %d for a %zu-byte frame", n, len);
		if (!why || !*why)
			fz_fail("net_answer: %d without a reason", n);
		return;
	}
	if ((size_t)n > sizeof(reply) || n < NET_ETH_HLEN)
		fz_fail("net_answer: reply of %d bytes", n);
	if (memcmp(reply + 6, self.mac, NET_ETH_ALEN) ||
	    memcmp(reply, frame + 6, NET_ETH_ALEN))
		fz_fail("net_answer: reply not from us to the sender");
	switch (get_be16(reply + 12)) {
	case NET_ETHERTYPE_ARP:
		if (n < NET_ETH_HLEN + 28 || get_be16(reply + 20) != 2 ||
		    memcmp(reply + 22, self.mac, NET_ETH_ALEN) ||
		    memcmp(reply + 28, self.ip, 4))
			fz_fail("net_answer: ARP reply");
		break;
	case NET_ETHERTYPE_IPV4:
		check_ipv4_reply(reply, (size_t)n);
		break;
	default:
		fz_fail("net_answer: reply of EtherType %04x",
			get_be16(reply + 12));
	}

	b.want_len = (size_t)n;
	blen = ntb16_build(7, reply, (size_t)n, ntb, sizeof(ntb));
	if (blen < 0)
		fz_fail("ntb16_build: %d for %d bytes", blen, n);
	if (ntb16_parse(ntb, (size_t)blen, back_dg, &b, &why) != 1 || b.n != 1)
		fz_fail("ntb16_parse: our own block: %s", why ? why : "");
}

static void answer_dg(void *ctx, const uint8_t *dg, size_t dg_len)
{
	(void)ctx;
	answer(dg, dg_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why = NULL;
	int n;

	if (!size)
		return 0;
	if (!(data[0] & 1)) {
		answer(data + 1, size - 1);
		return 0;
	}
	n = ntb16_parse(data + 1, size - 1, answer_dg, NULL, &why);
	if (n < 0 && (n != -EINVAL || !why || !*why))
		fz_fail("ntb16_parse: %d without a reason", n);
	return 0;
}
