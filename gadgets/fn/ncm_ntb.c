// SPDX-License-Identifier: GPL-2.0
/*
 * ncm_ntb.c - NTB16 parsing and building (ncm_ntb.h has the layout and the
 * contract).  Every offset and length comes from the host and is checked
 * against the block before it is followed (NCM 1.0 3.3: an NDP lies
 * within the NTB, its wLength is a multiple of 4 and at least 16,
 * wNdpIndex is a multiple of 4 past the NTH16).
 */
#include <errno.h>
#include <string.h>

#include "ncm_ntb.h"
#include "usbip_wire.h"

#define NDP16_HLEN	8
#define DPE16_LEN	4
#define ETH_HLEN_MIN	14	/* a datagram is an Ethernet frame */

static int bad(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return -EINVAL;
}

/* The datagrams of the NDP16 at ndp (index + 8 <= block checked); count
 * them into *n.  0 or -EINVAL. */
static int parse_ndp(const uint8_t *ntb, size_t block, size_t index,
		     void (*fn)(void *ctx, const uint8_t *dg, size_t dg_len),
		     void *ctx, int *n, const char **why)
{
	const uint8_t *ndp = ntb + index;
	size_t wlen = get_le16(ndp + 4), e, dgi, dgl;

	if (wlen < NTB_NDP16_MIN || wlen % 4)
		return bad(why, "NDP16 wLength not a multiple of 4 of at least 16");
	if (wlen > block - index)
		return bad(why, "NDP16 runs past the end of the block");
	if (get_le32(ndp) == NTB_NDP16_CRC_SIGN)
		return 0;	/* CRC mode: never negotiated, skipped */
	if (get_le32(ndp) != NTB_NDP16_SIGN)
		return bad(why, "NDP16 signature not NCM0");
	for (e = NDP16_HLEN; e + DPE16_LEN <= wlen; e += DPE16_LEN) {
		dgi = get_le16(ndp + e);
		dgl = get_le16(ndp + e + 2);
		if (!dgi || !dgl)
			return 0;	/* the terminator: the rest is ignored */
		if (dgi < NTB_NTH16_LEN || dgi > block || dgl > block - dgi)
			return bad(why, "datagram outside the block");
		if (dgl < ETH_HLEN_MIN)
			return bad(why, "datagram shorter than an Ethernet header");
		fn(ctx, ntb + dgi, dgl);
		(*n)++;
	}
	/* NCM 1.0 3.3.1: the table ends with a (0, 0) entry */
	return bad(why, "NDP16 without a terminating entry");
}

int ntb16_parse(const uint8_t *ntb, size_t len,
		void (*fn)(void *ctx, const uint8_t *dg, size_t dg_len),
		void *ctx, const char **why)
{
	size_t block, index;
	int n = 0, ndps, rc;

	if (len < NTB_NTH16_LEN)
		return bad(why, "shorter than an NTH16");
	if (get_le32(ntb) != NTB_NTH16_SIGN)
		return bad(why, "NTH16 signature not NCMH");
	if (get_le16(ntb + 4) != NTB_NTH16_LEN)
		return bad(why, "NTH16 wHeaderLength not 12");
	block = get_le16(ntb + 8);
	if (!block)
		block = len;
	if (block > len)
		return bad(why, "wBlockLength beyond the transfer");
	if (block < NTB_NTH16_LEN + NDP16_HLEN)
		return bad(why, "wBlockLength too short for an NTH16 and an NDP16");
	index = get_le16(ntb + 10);
	for (ndps = 0; index; ndps++) {
		if (ndps == NTB_MAX_NDPS)
			return bad(why, "too many NDP16s (a loop?)");
		if (index % 4 || index < NTB_NTH16_LEN ||
		    index > block - NDP16_HLEN)
			return bad(why, "NDP16 index outside the block or unaligned");
		rc = parse_ndp(ntb, block, index, fn, ctx, &n, why);
		if (rc)
			return rc;
		index = get_le16(ntb + index + 6);
	}
	if (!ndps)
		return bad(why, "NTH16 wNdpIndex is 0");
	return n;
}

int ntb16_build(uint16_t seq, const uint8_t *dg, size_t dg_len,
		uint8_t *out, size_t cap)
{
	size_t ndp = NTB_NTH16_LEN, at = NTB_BUILD_OVERHEAD;
	size_t total = at + dg_len;

	if (total > cap || total > 0xffff)
		return -ENOSPC;
	put_le32(out, NTB_NTH16_SIGN);
	put_le16(out + 4, NTB_NTH16_LEN);
	put_le16(out + 6, seq);
	put_le16(out + 8, total);
	put_le16(out + 10, ndp);
	put_le32(out + ndp, NTB_NDP16_SIGN);
	put_le16(out + ndp + 4, NTB_NDP16_MIN);
	put_le16(out + ndp + 6, 0);		/* the only NDP */
	put_le16(out + ndp + 8, at);
	put_le16(out + ndp + 10, dg_len);
	put_le32(out + ndp + 12, 0);		/* terminator */
	memcpy(out + at, dg, dg_len);
	return total;
}
