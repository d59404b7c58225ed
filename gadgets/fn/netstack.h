/* SPDX-License-Identifier: GPL-2.0 */
/*
 * netstack.h - the smallest network stack a USB network function needs
 * for `ping` to work through it: one host on an Ethernet segment that
 * answers ARP requests for its IPv4 address (RFC 826) and ICMP echo
 * requests to it (RFC 792), and ignores everything else.
 *
 * It knows nothing of USB: frames in, frames out (without FCS).  Every
 * length and checksum of a frame is checked before it is used: a frame is
 * untrusted input from the host's network stack (or from a test).
 */
#ifndef USBRIG_NETSTACK_H
#define USBRIG_NETSTACK_H

#include <stddef.h>
#include <stdint.h>

#define NET_ETH_ALEN		6
#define NET_ETH_HLEN		14	/* dst, src, EtherType */
#define NET_FRAME_MAX		1518	/* 1500-byte payload, 802.1Q tag */
#define NET_ETHERTYPE_IPV4	0x0800
#define NET_ETHERTYPE_ARP	0x0806

/* Who the stack is on the segment. */
struct net_self {
	uint8_t mac[NET_ETH_ALEN];
	uint8_t ip[4];
};

/*
 * One frame received from the host, answered.  The reply frame goes to
 * out (cap bytes; NET_FRAME_MAX is always enough).
 * Returns the reply's length (> 0), 0 when the frame needs no answer (not
 * ARP or ICMP echo, not for us), -EINVAL when it is malformed (a length
 * that does not fit, a bad checksum), -ENOSPC when cap is too small.  On
 * 0 and on errors *why (if why is not NULL) says which check decided.
 */
int net_answer(const struct net_self *self, const uint8_t *frame, size_t len,
	       uint8_t *out, size_t cap, const char **why);

/* The Internet checksum (RFC 1071) of p: the ones' complement of the
 * ones' complement sum of its 16-bit big-endian words (an odd last byte
 * is padded with zero).  Over data that carries its own checksum the
 * result is 0 when that checksum is right. */
uint16_t net_csum(const uint8_t *p, size_t len);

/* ---- for the USB functions that put this host behind an adapter ---- */

/* What net_respond() saw, for a function's log at detach. */
struct net_counts {
	uint64_t frames;	/* frames from the host */
	uint64_t arp, echo;	/* replies */
	uint64_t ignored, malformed;
};

/*
 * net_answer() on a frame from the host, counted in n and logged with the
 * prefix who (debug; a malformed frame, or a reply that would not fit in
 * cap, as a warning).  Returns the reply's length in out, or 0 when there
 * is none.
 */
size_t net_respond(const struct net_self *self, const uint8_t *frame,
		   size_t len, uint8_t *out, size_t cap, struct net_counts *n,
		   const char *who);

/* Frames waiting for the host: a ring of NET_FRAMEQ_MAX (a NIC whose
 * queue is full drops; the host retransmits). */
#define NET_FRAMEQ_MAX		64

struct net_frameq {
	uint8_t (*f)[NET_FRAME_MAX];
	uint16_t len[NET_FRAMEQ_MAX];
	unsigned int head, n;	/* the oldest, how many wait */
};

/* An empty queue; 0 or -ENOMEM. */
int net_frameq_init(struct net_frameq *q);
void net_frameq_free(struct net_frameq *q);
/* Append a copy of f: 0, -ENOSPC when full, -EINVAL when longer than
 * NET_FRAME_MAX. */
int net_frameq_put(struct net_frameq *q, const uint8_t *f, size_t len);
/* The i-th waiting frame (0: the oldest; i < q->n) and its length. */
const uint8_t *net_frameq_at(const struct net_frameq *q, unsigned int i,
			     size_t *len);
/* Forget the n oldest (n <= q->n). */
void net_frameq_drop(struct net_frameq *q, unsigned int n);

/* "02:00:00:00:77:02" (':' or '-' between six hex pairs) into mac; 0 or
 * -EINVAL. */
int net_parse_mac(const char *s, uint8_t mac[NET_ETH_ALEN]);
/* Dotted-quad "192.168.77.2" into ip; 0 or -EINVAL. */
int net_parse_ipv4(const char *s, uint8_t ip[4]);

#endif /* USBRIG_NETSTACK_H */
