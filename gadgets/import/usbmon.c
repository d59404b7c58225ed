// SPDX-License-Identifier: GPL-2.0
/*
 * usbmon.c - the usbmon text trace (/sys/kernel/debug/usb/usbmon/Nu, and
 * the older Nt) as imp_devs.
 *
 * One event a line (Documentation/usb/usbmon.rst, drivers/usb/mon/
 * mon_text.c), words separated by blanks:
 *
 *   tag timestamp S|C|E Tt:bus:dev:ep status-or-setup length [= data...]
 *
 *   d5ea89a0 3575914555 S Ci:1:002:0 s 80 06 0100 0000 0012 18 <
 *   d5ea89a0 3575914560 C Ci:1:002:0 0 18 = 12010002 00000040 ...
 *
 * tag       URB id, hex
 * Tt        C Z I B (control, iso, interrupt, bulk), i or o
 * address   1u: bus:dev:ep; 1t: dev:ep (two colons: no bus)
 * setup     's' then bmRequestType bRequest wValue wIndex wLength in hex
 *           (control submissions); another letter and five filler words
 *           when the setup was not captured
 * status    status[:interval[:start frame[:error count]]]
 * iso       1u, Z: a descriptor count and up to 5 st:offset:len words
 * data      after '=', hex words of up to 4 bytes, at most 32 bytes an
 *           URB; another letter (< > Z D E ...) when not captured
 *
 * The pairing and what becomes of each transfer is urb.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "urb.h"

#define MON_MAX_LINE	4096	/* more than the kernel writes */
#define MON_MAX_WORDS	64
#define MON_MAX_DATA	1024	/* data bytes a line may carry */

struct mon_line {
	char text[MON_MAX_LINE + 1];
	char *w[MON_MAX_WORDS];
	size_t n;
	uint8_t data[MON_MAX_DATA];
};

/*
 * Splits the line into words.  Traces pasted into bug reports sometimes
 * lack the timestamp ("tag S Ci:1:006:0 ..."): it is put back as "0", so
 * that every later word has its place.
 */
static int split(struct mon_line *l)
{
	static const char no_time[] = "0";
	char *p = l->text;

	l->n = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (l->n >= MON_MAX_WORDS - 1)
			return -E2BIG;
		l->w[l->n++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = 0;
	}
	if (l->n >= 3 && strlen(l->w[1]) == 1 && strchr("SCE", l->w[1][0]) &&
	    strchr("CZIB", l->w[2][0])) {
		memmove(&l->w[2], &l->w[1], (l->n - 1) * sizeof(l->w[0]));
		l->w[1] = (char *)no_time;
		l->n++;
	}
	return 0;
}

/* a number of at most max_digits digits in base, the whole word */
static int word_num(const char *w, int base, size_t max_digits,
		    unsigned long long *v)
{
	size_t n = strlen(w), i;

	if (!n || n > max_digits)
		return -EINVAL;
	*v = 0;
	for (i = 0; i < n; i++) {
		int c = (unsigned char)w[i], d;

		if (isdigit(c))
			d = c - '0';
		else if (base == 16 && isxdigit(c))
			d = tolower(c) - 'a' + 10;
		else
			return -EINVAL;
		*v = *v * base + d;
	}
	return 0;
}

/* "-32", "0:8", "-115:1:1234": the leading signed status */
static int word_status(const char *w, int *status)
{
	unsigned long long v;
	bool neg = *w == '-';
	char buf[16];
	size_t n;

	if (neg)
		w++;
	n = strcspn(w, ":");
	if (!n || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, w, n);
	buf[n] = 0;
	if (word_num(buf, 10, 9, &v))
		return -EINVAL;
	for (w += n; *w; w++)
		if (*w != ':' && !isdigit((unsigned char)*w) && *w != '-')
			return -EINVAL;
	*status = neg ? -(int)v : (int)v;
	return 0;
}

static int hex_field(const char *w, size_t digits, uint8_t *out)
{
	unsigned long long v;

	if (strlen(w) != digits || word_num(w, 16, digits, &v))
		return -EINVAL;
	out[0] = v & 0xff;
	if (digits == 4)
		out[1] = v >> 8;
	return 0;
}

/*
 * Parses one event line into ev (ev->data points into l).  Returns 0, or
 * -EINVAL with what is wrong in why.
 */
static int parse_event(struct mon_line *l, struct imp_urb_ev *ev,
		       const char **why)
{
	unsigned long long v, f[3];
	size_t i, k, nf = 0;
	char *a, *colon = NULL;

	memset(ev, 0, sizeof(*ev));
	*why = "expected: tag timestamp S|C|E address ...";
	if (l->n < 5)
		return -EINVAL;
	if (word_num(l->w[0], 16, 16, &v))
		return -EINVAL;
	ev->id = v;
	if (word_num(l->w[1], 10, 20, &v))
		return -EINVAL;
	if (strlen(l->w[2]) != 1 || !strchr("SCE", l->w[2][0]))
		return -EINVAL;
	ev->kind = l->w[2][0];

	*why = "bad address word (expected e.g. Ci:1:002:0)";
	a = l->w[3];
	switch (a[0]) {
	case 'C':
		ev->xfer = IMP_XFER_CTRL;
		break;
	case 'Z':
		ev->xfer = IMP_XFER_ISO;
		break;
	case 'I':
		ev->xfer = IMP_XFER_INT;
		break;
	case 'B':
		ev->xfer = IMP_XFER_BULK;
		break;
	default:
		return -EINVAL;
	}
	if ((a[1] != 'i' && a[1] != 'o') || a[2] != ':')
		return -EINVAL;
	for (a += 3; nf < 3; a = colon + 1) {
		colon = strchr(a, ':');
		if (colon)
			*colon = 0;
		if (word_num(a, 10, 5, &f[nf++]))
			return -EINVAL;
		if (!colon)
			break;
	}
	if (nf < 2 || colon)
		return -EINVAL;
	ev->busnum = nf == 3 ? (int)f[0] : -1;
	if (nf == 3 && f[0] > 0xffff)
		return -EINVAL;
	if (f[nf - 2] > 127 || f[nf - 1] > 15) {
		*why = "device address above 127 or endpoint above 15";
		return -EINVAL;
	}
	ev->devnum = f[nf - 2];
	ev->ep = f[nf - 1] | (l->w[3][1] == 'i' ? 0x80 : 0);
	if (ev->xfer == IMP_XFER_ISO)
		return 0;	/* not replayed: its words are not needed */

	k = 4;
	if (!strcmp(l->w[k], "s")) {
		*why = "bad setup packet (expected s bmRequestType bRequest wValue wIndex wLength in hex)";
		if (l->n < k + 6 || hex_field(l->w[k + 1], 2, ev->setup) ||
		    hex_field(l->w[k + 2], 2, ev->setup + 1) ||
		    hex_field(l->w[k + 3], 4, ev->setup + 2) ||
		    hex_field(l->w[k + 4], 4, ev->setup + 4) ||
		    hex_field(l->w[k + 5], 4, ev->setup + 6))
			return -EINVAL;
		ev->setup_valid = true;
		k += 6;
	} else if (strlen(l->w[k]) == 1 && isalpha((unsigned char)l->w[k][0])) {
		/* setup not captured: a flag letter and five filler words */
		*why = "a setup flag needs five filler words";
		if (l->n < k + 6)
			return -EINVAL;
		k += 6;
	} else {
		*why = "bad status word";
		if (word_status(l->w[k], &ev->status))
			return -EINVAL;
		k++;
	}
	*why = "bad or missing data length";
	if (k >= l->n || word_num(l->w[k], 10, 9, &v))
		return -EINVAL;
	ev->length = v;
	k++;
	if (k == l->n)
		return 0;
	if (strcmp(l->w[k], "=")) {
		/* a flag: the data was not captured */
		*why = "unexpected words after the data length";
		return strlen(l->w[k]) == 1 && k + 1 == l->n ? 0 : -EINVAL;
	}
	*why = "bad data word (expected up to 8 hex digits, an even count)";
	for (k++; k < l->n; k++) {
		const char *w = l->w[k];
		size_t n = strlen(w);

		if (!n || n > 8 || n % 2)
			return -EINVAL;
		for (i = 0; i < n; i += 2) {
			char b[3] = { w[i], w[i + 1], 0 };

			if (ev->data_len >= MON_MAX_DATA) {
				*why = "too many data bytes";
				return -EINVAL;
			}
			if (word_num(b, 16, 2, &v))
				return -EINVAL;
			l->data[ev->data_len++] = v;
		}
	}
	if (ev->data_len > ev->length) {
		*why = "more data bytes than the data length";
		return -EINVAL;
	}
	ev->data = l->data;
	return 0;
}

/* copies line [p, end) into l; -EINVAL for binary or overlong input */
static int get_line(struct mon_line *l, const char *p, const char *end,
		    const char **why)
{
	size_t n = end - p;
	size_t i;

	if (n && p[n - 1] == '\r')
		n--;
	if (n > MON_MAX_LINE) {
		*why = "line too long for usbmon text";
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		unsigned char ch = p[i];

		if (ch != '\t' && (ch < 0x20 || ch == 0x7f)) {
			*why = "binary data, not usbmon text";
			return -EINVAL;
		}
	}
	memcpy(l->text, p, n);
	l->text[n] = 0;
	*why = "too many words for a usbmon line";
	return split(l);
}

/* tag, timestamp, event type: a usbmon event, well formed or not */
static bool looks_like_event(const struct mon_line *l)
{
	unsigned long long v;

	return l->n >= 3 && !word_num(l->w[0], 16, 16, &v) &&
	       !word_num(l->w[1], 10, 20, &v) && strlen(l->w[2]) == 1 &&
	       strchr("SCE", l->w[2][0]);
}

/*
 * Lines that are no event at all (a shell prompt, a remark pasted into a
 * bug report) are skipped and noted; an event line that does not parse
 * is an error, and so is a file without a single event.
 */
static int usbmon_read(const char *path, const uint8_t *buf, size_t len,
		       struct imp_set *set, struct imp_error *err)
{
	const char *p = (const char *)buf, *end = p + len, *nl, *why;
	size_t lineno = 0, n_events = 0, n_skipped = 0, first_skipped = 0;
	size_t first_dev = set->n, i;
	struct imp_urb_ctx c;
	struct imp_urb_ev ev;
	struct mon_line *l;
	int ret = 0;

	l = malloc(sizeof(*l));
	if (!l)
		return imp_err(err, "%s: out of memory", path);
	imp_urb_init(&c, set, path, false);
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		lineno++;
		if (get_line(l, p, nl, &why)) {
			ret = imp_err(err, "%s:%zu: %s", path, lineno, why);
			goto out;
		}
		if (!l->n)
			continue;
		if (!looks_like_event(l)) {
			if (!n_skipped++)
				first_skipped = lineno;
			continue;
		}
		if (parse_event(l, &ev, &why)) {
			ret = imp_err(err, "%s:%zu: %s", path, lineno, why);
			goto out;
		}
		n_events++;
		ev.pos = lineno;
		ret = imp_urb_event(&c, &ev, err);
		if (ret)
			goto out;
	}
	if (!n_events && n_skipped) {
		ret = imp_err(err, "%s:%zu: not a usbmon text event (expected e.g. ffff8881045a6c00 1000037 S Ci:1:005:0 s 80 06 0100 0000 0012 18 <)",
			      path, first_skipped);
		goto out;
	}
	imp_urb_finish(&c);
	for (i = first_dev; i < set->n && n_skipped; i++)
		imp_note(set->devs[i], "%s:%zu: %zu line%s that %s not usbmon events skipped",
			 path, first_skipped, n_skipped,
			 n_skipped == 1 ? "" : "s", n_skipped == 1 ? "is" : "are");
out:
	imp_urb_free(&c);
	free(l);
	return ret;
}

/* one of the first lines with words parses as an event (a pasted trace
 * may start with the command that made it) */
static bool usbmon_sniff(const char *path, const uint8_t *buf, size_t len)
{
	const char *p = (const char *)buf, *end = p + len, *nl, *why;
	struct imp_urb_ev ev;
	struct mon_line *l;
	bool ok = false;
	int tries = 8;

	(void)path;
	l = malloc(sizeof(*l));
	if (!l)
		return false;
	for (; p < end && tries; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		if (get_line(l, p, nl, &why))
			break;
		if (!l->n)
			continue;
		tries--;
		if (looks_like_event(l)) {
			ok = !parse_event(l, &ev, &why);
			break;
		}
	}
	free(l);
	return ok;
}

const struct imp_reader imp_reader_usbmon = {
	.name = "usbmon",
	.summary = "usbmon text trace (/sys/kernel/debug/usb/usbmon/0u, 1u or the older 1t)",
	.sniff = usbmon_sniff,
	.read = usbmon_read,
};
