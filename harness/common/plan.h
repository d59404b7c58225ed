/* SPDX-License-Identifier: GPL-2.0 */
/*
 * plan.h - the line codec shared by the host runner and the guest agent.
 *
 * Plan lines (host -> guest) and result lines (guest -> host) are words
 * separated by spaces (docs/harness-design.md).  A word is either bare
 * (any run of bytes other than space, tab, '"' and control characters) or
 * a double-quoted string with C escapes:
 *
 *	\"  \\  \n  \t  \r  \xHH (exactly two hex digits, not \x00)
 *
 * plan_quote() never emits anything else: bytes below 0x20, 0x7f and above
 * 0x7f are written as \xHH, so a quoted string is always printable ASCII
 * and never contains a newline.  plan_split() also takes raw bytes >= 0x80
 * (UTF-8) and rejects raw control characters; plan_split(plan_quote(s))
 * == s for every NUL-free s.
 */
#ifndef USBRIG_PLAN_H
#define USBRIG_PLAN_H

#include <stdbool.h>
#include <stddef.h>

/* Hard limits of one line; both ends use them. */
#define PLAN_LINE_MAX	4096	/* bytes of one line, newline excluded */
#define PLAN_TOKENS_MAX	32	/* words of one line */

struct plan_tok {
	const char *s;	/* NUL-terminated; quotes removed, escapes decoded */
	size_t len;	/* strlen(s) */
	bool quoted;	/* was written as "..." */
};

/*
 * Write s as a quoted string ("..." with escapes) into dst[size], NUL
 * terminated.  Returns the length written (without the NUL) or -ENOSPC
 * when it does not fit; dst is then an empty string (if size > 0).
 */
int plan_quote(char *dst, size_t size, const char *s);

/* Bytes plan_quote() needs for s, NUL included. */
size_t plan_quote_len(const char *s);

/*
 * Split line into at most max_toks words, decoding quoted strings in place
 * (line is modified; toks[i].s point into it).  A trailing '\n' or "\r\n"
 * is ignored.  No decoded word may be longer than max_len bytes (0: no
 * limit beyond the line).  Returns the number of words, or:
 *	-EINVAL		syntax: unterminated quote, bad escape, control
 *			character, a quote glued to a bare word
 *	-E2BIG		more than max_toks words
 *	-ENAMETOOLONG	a word longer than max_len
 * On error *err_col (if not NULL) is the 1-based column of the offending
 * byte in the original line.
 */
int plan_split(char *line, struct plan_tok *toks, size_t max_toks,
	       size_t max_len, size_t *err_col);

/*
 * Parse a decimal unsigned number that must fill the whole word.
 * Returns 0 or -EINVAL (not a number) / -ERANGE (> max).
 */
int plan_parse_uint(const char *s, unsigned long max, unsigned long *out);

/*
 * A `save` step's file travels as result lines (docs/harness-design.md,
 * "Results"):
 *
 *	data LINE OFFSET BASE64		one chunk, in file order
 *	ok LINE "..." bytes=N crc32=XXXXXXXX
 *
 * BASE64 is RFC 4648 with '=' padding (a bare word: no blank, no quote),
 * at most PLAN_DATA_CHUNK decoded bytes; OFFSET is the chunk's first byte
 * in the file.  The host checks that the chunks are contiguous and that
 * their count and CRC match the result before it writes the file.
 */
#define PLAN_SAVE_MAX	(16u << 20)	/* bytes of one saved file */
#define PLAN_DATA_CHUNK	2700		/* decoded bytes of one data line
					 * (3600 encoded: fits a line) */

/* Characters plan_b64_encode() writes for n bytes (NUL excluded). */
size_t plan_b64_len(size_t n);

/* Encode n bytes of src into dst, which holds plan_b64_len(n) + 1. */
void plan_b64_encode(char *dst, const void *src, size_t n);

/*
 * Decode the NUL-terminated s (whole groups of 4, padding only at the
 * end) into dst[size].  Returns the byte count, or -EINVAL (not base64)
 * or -ENOSPC (does not fit).
 */
long plan_b64_decode(void *dst, size_t size, const char *s);

/* CRC-32 (IEEE 802.3, as zlib's crc32()): start with crc 0. */
unsigned int plan_crc32(unsigned int crc, const void *p, size_t n);

/*
 * Console markers (docs/harness-design.md, "Which scenario a kernel
 * report belongs to"): the agent writes
 *
 *	PLAN_MARK_LEVEL PLAN_MARK_BEGIN NAME	before a scenario's first step
 *	PLAN_MARK_LEVEL PLAN_MARK_END NAME	after its cleanup
 *
 * into /dev/kmsg, so that the console, which lags behind the results
 * channel, itself says which scenario each kernel line after a marker
 * belongs to (harness/host/console.c reads them).  KERN_WARNING: the
 * console prints the levels below the command line's loglevel=5
 * (harness/host/vm.c).
 */
#define PLAN_MARK_LEVEL	"<4>"
#define PLAN_MARK_BEGIN	"usbrig: scenario begin "
#define PLAN_MARK_END	"usbrig: scenario end "

/*
 * The reason of a skipped `rmmod` of a driver built into the guest's
 * kernel (a developer's tree).  Where only teardown follows it (detach,
 * more rmmods) the step is skipped and the scenario is judged by the rest
 * (harness/host/report.c); where anything else follows, the agent skips
 * the rest of the scenario, which may need the module gone.
 */
#define PLAN_WHY_BUILTIN	"built into this kernel: it cannot be removed"

#endif /* USBRIG_PLAN_H */
