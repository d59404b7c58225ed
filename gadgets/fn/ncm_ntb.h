/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ncm_ntb.h - NCM Transfer Blocks with 16-bit offsets (USB CDC NCM 1.0,
 * section 3): how Ethernet frames travel in the bulk transfers of a CDC-NCM
 * function.  No USB and no state here: bytes in, bytes out.
 *
 * NTH16, the block header (12 bytes, little-endian):
 *   0 dwSignature "NCMH"   4 wHeaderLength 12   6 wSequence
 *   8 wBlockLength         10 wNdpIndex (the first NDP16)
 * NDP16, a datagram pointer table (at least 16 bytes, 4-byte aligned):
 *   0 dwSignature "NCM0" (no CRC) or "NCM1" (CRC appended)
 *   4 wLength (8 + 4 per entry, a multiple of 4)   6 wNextNdpIndex (0: last)
 *   8 entries: wDatagramIndex, wDatagramLength; a (0, 0) entry ends the list
 */
#ifndef USBRIG_NCM_NTB_H
#define USBRIG_NCM_NTB_H

#include <stddef.h>
#include <stdint.h>

#define NTB_NTH16_LEN		12
#define NTB_NDP16_MIN		16	/* header, one entry, the terminator */
#define NTB_NTH16_SIGN		0x484d434e	/* "NCMH" */
#define NTB_NDP16_SIGN		0x304d434e	/* "NCM0" */
#define NTB_NDP16_CRC_SIGN	0x314d434e	/* "NCM1" */
#define NTB_MAX_NDPS		16	/* NDPs followed in one block */
/* 12 + 16 + a frame, 4-byte aligned: what ntb16_build() adds to a frame */
#define NTB_BUILD_OVERHEAD	(NTB_NTH16_LEN + NTB_NDP16_MIN)

/*
 * Every datagram of the NTB16 in ntb[0..len) is handed to fn(ctx, dg,
 * dg_len) in order.  len is the transfer's length; wBlockLength must fit in
 * it (0 stands for "to the end of the transfer"), and every NDP and
 * datagram must lie inside the block.  An NDP with the CRC signature is
 * skipped (CRC mode is never switched on).
 * Returns the number of datagrams handed over, or -EINVAL for a block that
 * breaks a rule (*why says which) - datagrams before the broken part were
 * handed over already, as a device would have received them.
 */
int ntb16_parse(const uint8_t *ntb, size_t len,
		void (*fn)(void *ctx, const uint8_t *dg, size_t dg_len),
		void *ctx, const char **why);

/*
 * One datagram dg[0..dg_len) as an NTB16 with sequence number seq into
 * out: the NTH16, one NDP16 right after it, the datagram at offset 28
 * (aligned for any wNdpInDivisor up to 4 with remainder 0).  Returns the
 * block's length, or -ENOSPC when it needs more than cap bytes.
 */
int ntb16_build(uint16_t seq, const uint8_t *dg, size_t dg_len,
		uint8_t *out, size_t cap);

#endif /* USBRIG_NCM_NTB_H */
