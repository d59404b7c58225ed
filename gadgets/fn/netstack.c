// SPDX-License-Identifier: GPL-2.0
/*
 * netstack.c - an ARP and ICMP echo responder on Ethernet (netstack.h has
 * the contract).
 *
 * Frame layouts, offsets from the start of each header, network order:
 *
 * Ethernet II (IEEE 802.3 3.1.1)      ARP for IPv4 on Ethernet (RFC 826)
 *   0  destination MAC (6)              0  htype 1 (2)     2  ptype 0x0800
 *   6  source MAC (6)                   4  hlen 6          5  plen 4
 *  12  EtherType (2)                    6  oper 1 request, 2 reply (2)
 *                                       8  sha (6)        14  spa (4)
 *                                      18  tha (6)        24  tpa (4)
 * IPv4 (RFC 791)                      ICMP echo (RFC 792)
 *   0  version 4, IHL (words)           0  type 8 request, 0 reply
 *   1  TOS   2  total length (2)        1  code 0   2  checksum (2)
 *   4  id (2)  6  flags, frag. offset   4  identifier (2)
 *   8  TTL   9  protocol (1 ICMP)       6  sequence (2)
 *  10  header checksum (2)              8  data, echoed as it came
 *  12  source (4)  16  destination (4)
 *  20  options (IHL * 4 - 20 bytes)
 *
 * A frame may be longer than the packet it carries (Ethernet pads to 60
 * bytes; usbnet adds a byte to avoid a zero-length packet): the IPv4 total
 * length says where the packet ends, and it must fit in the frame.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "netstack.h"
#include "usbip_wire.h"
#include "util.h"

#define ARP_LEN			28
#define ARP_HTYPE_ETHER		1
#define ARP_OP_REQUEST		1
#define ARP_OP_REPLY		2

#define IP_HLEN_MIN		20
#define IP_PROTO_ICMP		1
#define IP_MF			0x2000	/* more fragments */
#define IP_OFFSET_MASK		0x1fff
#define IP_TTL			64

#define ICMP_HLEN		8
#define ICMP_ECHO_REPLY		0
#define ICMP_ECHO_REQUEST	8

static const uint8_t broadcast[NET_ETH_ALEN] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff
};

uint16_t net_csum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += get_be16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static int ignore(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return 0;
}

static int bad(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return -EINVAL;
}

static void eth_header(const struct net_self *self, const uint8_t *frame,
		       uint16_t type, uint8_t *out)
{
	memcpy(out, frame + NET_ETH_ALEN, NET_ETH_ALEN);	/* to the sender */
	memcpy(out + NET_ETH_ALEN, self->mac, NET_ETH_ALEN);
	put_be16(out + 12, type);
}

static int answer_arp(const struct net_self *self, const uint8_t *frame,
		      size_t len, uint8_t *out, size_t cap, const char **why)
{
	const uint8_t *a = frame + NET_ETH_HLEN;
	uint8_t *r = out + NET_ETH_HLEN;

	/* shorter than an ARP packet for IPv4 over Ethernet: not one */
	if (len - NET_ETH_HLEN < ARP_LEN)
		return bad(why, "ARP packet shorter than 28 bytes");
	if (get_be16(a) != ARP_HTYPE_ETHER ||
	    get_be16(a + 2) != NET_ETHERTYPE_IPV4 ||
	    a[4] != NET_ETH_ALEN || a[5] != 4)
		return ignore(why, "ARP not for IPv4 over Ethernet");
	if (get_be16(a + 6) != ARP_OP_REQUEST)
		return ignore(why, "ARP not a request");
	if (memcmp(a + 24, self->ip, 4))
		return ignore(why, "ARP request for another address");
	if (cap < NET_ETH_HLEN + ARP_LEN)
		return -ENOSPC;
	eth_header(self, frame, NET_ETHERTYPE_ARP, out);
	memcpy(r, a, 6);			/* htype, ptype, hlen, plen */
	put_be16(r + 6, ARP_OP_REPLY);
	memcpy(r + 8, self->mac, NET_ETH_ALEN);	/* sha: us */
	memcpy(r + 14, self->ip, 4);		/* spa */
	memcpy(r + 18, a + 8, NET_ETH_ALEN);	/* tha: the asker */
	memcpy(r + 24, a + 14, 4);		/* tpa */
	return NET_ETH_HLEN + ARP_LEN;
}

static int answer_ipv4(const struct net_self *self, const uint8_t *frame,
		       size_t len, uint8_t *out, size_t cap, const char **why)
{
	const uint8_t *ip = frame + NET_ETH_HLEN;
	size_t room = len - NET_ETH_HLEN, hlen, total, icmp_len;
	const uint8_t *icmp;
	uint8_t *rip, *ricmp;

	if (memcmp(frame, self->mac, NET_ETH_ALEN))
		return ignore(why, "IPv4 to another MAC");
	if (room < IP_HLEN_MIN)
		return bad(why, "IPv4 header cut short");
	if (ip[0] >> 4 != 4)
		return bad(why, "IPv4 version not 4");
	hlen = (ip[0] & 0x0f) * 4u;
	total = get_be16(ip + 2);
	/* the header, then the packet, must fit in what arrived */
	if (hlen < IP_HLEN_MIN || hlen > total)
		return bad(why, "IPv4 header length out of range");
	if (total > room)
		return bad(why, "IPv4 total length beyond the frame");
	if (net_csum(ip, hlen))
		return bad(why, "IPv4 header checksum");
	if (memcmp(ip + 16, self->ip, 4))
		return ignore(why, "IPv4 to another address");
	if (get_be16(ip + 6) & (IP_MF | IP_OFFSET_MASK))
		return ignore(why, "IPv4 fragment");
	if (ip[9] != IP_PROTO_ICMP)
		return ignore(why, "IPv4 not ICMP");
	icmp = ip + hlen;
	icmp_len = total - hlen;
	if (icmp_len < ICMP_HLEN)
		return bad(why, "ICMP shorter than its header");
	if (net_csum(icmp, icmp_len))
		return bad(why, "ICMP checksum");
	if (icmp[0] != ICMP_ECHO_REQUEST || icmp[1] != 0)
		return ignore(why, "ICMP not an echo request");
	if (cap < NET_ETH_HLEN + IP_HLEN_MIN + icmp_len)
		return -ENOSPC;

	eth_header(self, frame, NET_ETHERTYPE_IPV4, out);
	rip = out + NET_ETH_HLEN;
	/* no options in the reply: RFC 1122 3.2.2.6 lets a host drop them */
	rip[0] = 0x45;
	rip[1] = ip[1];
	put_be16(rip + 2, IP_HLEN_MIN + icmp_len);
	memcpy(rip + 4, ip + 4, 2);		/* id */
	put_be16(rip + 6, 0);
	rip[8] = IP_TTL;
	rip[9] = IP_PROTO_ICMP;
	put_be16(rip + 10, 0);
	memcpy(rip + 12, self->ip, 4);
	memcpy(rip + 16, ip + 12, 4);
	put_be16(rip + 10, net_csum(rip, IP_HLEN_MIN));

	ricmp = rip + IP_HLEN_MIN;
	memcpy(ricmp, icmp, icmp_len);
	ricmp[0] = ICMP_ECHO_REPLY;
	put_be16(ricmp + 2, 0);
	put_be16(ricmp + 2, net_csum(ricmp, icmp_len));
	return NET_ETH_HLEN + IP_HLEN_MIN + icmp_len;
}

int net_answer(const struct net_self *self, const uint8_t *frame, size_t len,
	       uint8_t *out, size_t cap, const char **why)
{
	bool to_us;

	if (len < NET_ETH_HLEN)
		return bad(why, "frame shorter than the Ethernet header");
	to_us = !memcmp(frame, self->mac, NET_ETH_ALEN) ||
		!memcmp(frame, broadcast, NET_ETH_ALEN);
	if (!to_us)
		return ignore(why, "frame to another MAC");
	switch (get_be16(frame + 12)) {
	case NET_ETHERTYPE_ARP:
		return answer_arp(self, frame, len, out, cap, why);
	case NET_ETHERTYPE_IPV4:
		return answer_ipv4(self, frame, len, out, cap, why);
	default:
		return ignore(why, "EtherType not ARP or IPv4");
	}
}

size_t net_respond(const struct net_self *self, const uint8_t *frame,
		   size_t len, uint8_t *out, size_t cap, struct net_counts *n,
		   const char *who)
{
	const char *why = "";
	int rc;

	n->frames++;
	rc = net_answer(self, frame, len, out, cap, &why);
	if (rc > 0) {
		if (get_be16(out + 12) == NET_ETHERTYPE_ARP)
			n->arp++;
		else
			n->echo++;
		log_dbg("%s: %zu-byte frame answered with %d bytes", who, len,
			rc);
		return rc;
	}
	if (rc == 0) {
		n->ignored++;
		log_dbg("%s: %zu-byte frame ignored: %s", who, len, why);
		return 0;
	}
	n->malformed++;
	log_warn("%s: %zu-byte frame dropped: %s", who, len,
		 rc == -ENOSPC ? "its reply would not fit" : why);
	return 0;
}

int net_frameq_init(struct net_frameq *q)
{
	memset(q, 0, sizeof(*q));
	q->f = calloc(NET_FRAMEQ_MAX, sizeof(*q->f));
	return q->f ? 0 : -ENOMEM;
}

void net_frameq_free(struct net_frameq *q)
{
	free(q->f);
	memset(q, 0, sizeof(*q));
}

int net_frameq_put(struct net_frameq *q, const uint8_t *f, size_t len)
{
	unsigned int slot;

	if (len > NET_FRAME_MAX)
		return -EINVAL;
	if (q->n == NET_FRAMEQ_MAX)
		return -ENOSPC;
	slot = (q->head + q->n++) % NET_FRAMEQ_MAX;
	memcpy(q->f[slot], f, len);
	q->len[slot] = len;
	return 0;
}

const uint8_t *net_frameq_at(const struct net_frameq *q, unsigned int i,
			     size_t *len)
{
	unsigned int slot = (q->head + i) % NET_FRAMEQ_MAX;

	*len = q->len[slot];
	return q->f[slot];
}

void net_frameq_drop(struct net_frameq *q, unsigned int n)
{
	q->head = (q->head + n) % NET_FRAMEQ_MAX;
	q->n -= n;
}

int net_parse_mac(const char *s, uint8_t mac[NET_ETH_ALEN])
{
	int i, hi, lo;

	for (i = 0; i < NET_ETH_ALEN; i++) {
		hi = util_hexval(s[0]);
		lo = hi < 0 ? -1 : util_hexval(s[1]);
		if (lo < 0)
			return -EINVAL;
		mac[i] = hi << 4 | lo;
		s += 2;
		if (i < NET_ETH_ALEN - 1) {
			if (*s != ':' && *s != '-')
				return -EINVAL;
			s++;
		}
	}
	return *s ? -EINVAL : 0;
}

int net_parse_ipv4(const char *s, uint8_t ip[4])
{
	unsigned int v;
	int i, digits;

	for (i = 0; i < 4; i++) {
		v = 0;
		for (digits = 0; *s >= '0' && *s <= '9'; digits++, s++) {
			v = v * 10 + (*s - '0');
			if (digits == 3 || v > 255)
				return -EINVAL;
		}
		if (!digits)
			return -EINVAL;
		ip[i] = v;
		if (i < 3 && *s++ != '.')
			return -EINVAL;
	}
	return *s ? -EINVAL : 0;
}
