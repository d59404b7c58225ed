// SPDX-License-Identifier: GPL-2.0
/*
 * fn/hid.c - the hid device function: a keyboard or a mouse that usbhid
 * binds and that types or moves as its script says.
 *
 * What it answers (HID 1.11, sections 7.1 and 7.2), on the HID interface:
 *  - GET_DESCRIPTOR(REPORT) from the `report-descriptor` option or the
 *    built-in boot keyboard/mouse descriptor (HID 1.11 appendix B), and
 *    GET_DESCRIPTOR(HID) from the HID descriptor the script places in the
 *    interface (`raw 09 21 ...`; usbhid reads it from the configuration);
 *  - GET_REPORT (input: the last report sent; output: the last output
 *    report), SET_REPORT (output: stored, for a keyboard the LEDs),
 *    GET_IDLE / SET_IDLE, GET_PROTOCOL / SET_PROTOCOL (stored);
 *  - output reports on an interrupt OUT endpoint if the interface has one.
 *
 * Interrupt IN: the script's reports (`type`, `move` or `reports`) go out
 * one per URB, the first `delay` ms after the start event, the next ones
 * `interval` ms after the previous was sent.  A report that is due waits
 * for an URB (none is lost); an URB with nothing due stays pending, which
 * is a NAK: an idle interrupt IN is never answered with zero bytes
 * (usbhid would resubmit at once and spin).
 *
 * Decisions:
 * - The schedule runs once per connection (optionally again every `repeat`
 *   ms); SET_CONFIGURATION / SET_INTERFACE fail the URBs held with
 *   -ESHUTDOWN but do not restart it.
 * - The idle rate is stored and returned, but reports are not repeated at
 *   it: only the script says when a report goes (Linux sets idle 0, i.e.
 *   "report on change only").  The protocol is stored; the reports are
 *   the same in both (the built-in descriptors are the boot formats).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <event2/event.h>
#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"
#include "util.h"

#define HID_DT_HID		0x21
#define HID_DT_REPORT		0x22

#define HID_REQ_GET_REPORT	0x01
#define HID_REQ_GET_IDLE	0x02
#define HID_REQ_GET_PROTOCOL	0x03
#define HID_REQ_SET_REPORT	0x09
#define HID_REQ_SET_IDLE	0x0a
#define HID_REQ_SET_PROTOCOL	0x0b

/* bmRequestType of the class requests (HID 1.11 7.2) */
#define HID_IN			(USB_DIR_IN | USB_TYPE_CLASS | USB_RECIP_INTERFACE)
#define HID_OUT			(USB_DIR_OUT | USB_TYPE_CLASS | USB_RECIP_INTERFACE)

#define HID_REPORT_INPUT	1
#define HID_REPORT_OUTPUT	2

#define HID_REPORT_MAX		64	/* one report; the full-speed packet */
#define HID_ITEMS_MAX		8192	/* reports in one script */
#define HID_WAIT_MAX		3600000	/* ms: an hour */

/* HID 1.11 appendix B.1: boot keyboard, 8-byte input, 1-byte LED output */
static const uint8_t boot_keyboard_rdesc[] = {
	0x05, 0x01,		/* Usage Page (Generic Desktop) */
	0x09, 0x06,		/* Usage (Keyboard) */
	0xa1, 0x01,		/* Collection (Application) */
	0x05, 0x07,		/*   Usage Page (Key Codes) */
	0x19, 0xe0,		/*   Usage Minimum (224: left control) */
	0x29, 0xe7,		/*   Usage Maximum (231: right GUI) */
	0x15, 0x00,		/*   Logical Minimum (0) */
	0x25, 0x01,		/*   Logical Maximum (1) */
	0x75, 0x01,		/*   Report Size (1) */
	0x95, 0x08,		/*   Report Count (8) */
	0x81, 0x02,		/*   Input (Data, Variable, Absolute): modifiers */
	0x95, 0x01,		/*   Report Count (1) */
	0x75, 0x08,		/*   Report Size (8) */
	0x81, 0x01,		/*   Input (Constant): reserved byte */
	0x95, 0x05,		/*   Report Count (5) */
	0x75, 0x01,		/*   Report Size (1) */
	0x05, 0x08,		/*   Usage Page (LEDs) */
	0x19, 0x01,		/*   Usage Minimum (1: num lock) */
	0x29, 0x05,		/*   Usage Maximum (5: kana) */
	0x91, 0x02,		/*   Output (Data, Variable, Absolute): LEDs */
	0x95, 0x01,		/*   Report Count (1) */
	0x75, 0x03,		/*   Report Size (3) */
	0x91, 0x01,		/*   Output (Constant): padding */
	0x95, 0x06,		/*   Report Count (6) */
	0x75, 0x08,		/*   Report Size (8) */
	0x15, 0x00,		/*   Logical Minimum (0) */
	0x25, 0x65,		/*   Logical Maximum (101) */
	0x05, 0x07,		/*   Usage Page (Key Codes) */
	0x19, 0x00,		/*   Usage Minimum (0) */
	0x29, 0x65,		/*   Usage Maximum (101) */
	0x81, 0x00,		/*   Input (Data, Array): 6 key codes */
	0xc0,			/* End Collection */
};

/* HID 1.11 appendix B.2: boot mouse, 3-byte input (buttons, X, Y) */
static const uint8_t boot_mouse_rdesc[] = {
	0x05, 0x01,		/* Usage Page (Generic Desktop) */
	0x09, 0x02,		/* Usage (Mouse) */
	0xa1, 0x01,		/* Collection (Application) */
	0x09, 0x01,		/*   Usage (Pointer) */
	0xa1, 0x00,		/*   Collection (Physical) */
	0x05, 0x09,		/*     Usage Page (Buttons) */
	0x19, 0x01,		/*     Usage Minimum (1) */
	0x29, 0x03,		/*     Usage Maximum (3) */
	0x15, 0x00,		/*     Logical Minimum (0) */
	0x25, 0x01,		/*     Logical Maximum (1) */
	0x95, 0x03,		/*     Report Count (3) */
	0x75, 0x01,		/*     Report Size (1) */
	0x81, 0x02,		/*     Input (Data, Variable, Absolute) */
	0x95, 0x01,		/*     Report Count (1) */
	0x75, 0x05,		/*     Report Size (5) */
	0x81, 0x01,		/*     Input (Constant): padding */
	0x05, 0x01,		/*     Usage Page (Generic Desktop) */
	0x09, 0x30,		/*     Usage (X) */
	0x09, 0x31,		/*     Usage (Y) */
	0x15, 0x81,		/*     Logical Minimum (-127) */
	0x25, 0x7f,		/*     Logical Maximum (127) */
	0x75, 0x08,		/*     Report Size (8) */
	0x95, 0x02,		/*     Report Count (2) */
	0x81, 0x06,		/*     Input (Data, Variable, Relative) */
	0xc0,			/*   End Collection */
	0xc0,			/* End Collection */
};

#define KBD_REPORT_LEN		8
#define MOUSE_REPORT_LEN	3
#define KBD_MOD_LSHIFT		0x02

enum hid_kind { HID_OTHER, HID_KEYBOARD, HID_MOUSE };
enum hid_start { START_FIRST_IN, START_ATTACH, START_SET_IDLE };

/* one interrupt IN report of the schedule */
struct hid_item {
	uint32_t wait_ms;	/* after the previous report (or the start) */
	uint8_t len;
	uint8_t data[HID_REPORT_MAX];
};

/* the options, resolved against the descriptors */
struct hid_cfg {
	uint8_t intf;			/* bInterfaceNumber */
	uint8_t ep_in;			/* interrupt IN address */
	uint8_t ep_out;			/* interrupt OUT address, 0: none */
	uint16_t in_mps;
	enum hid_kind kind;
	const uint8_t *rdesc;		/* builtin, or rdesc_buf */
	size_t rdesc_len;
	uint8_t rdesc_buf[GD_MAX_BLOB];
	const uint8_t *hid_desc;	/* in the model's extra bytes */
	size_t hid_desc_len;
	enum hid_start start;
	uint32_t delay_ms;
	uint32_t interval_ms;
	uint32_t repeat_ms;		/* 0: once */
	size_t report_len;		/* for GET_REPORT before any report */
	struct hid_item *items;
	size_t n_items;
};

struct hid_state {
	struct hid_cfg cfg;
	struct gdev *dev;
	struct event *timer;
	struct gdev_urbq in;		/* held interrupt IN URBs */
	size_t pos;			/* next item */
	bool started;
	bool due;			/* items[pos] may go now */
	uint8_t protocol;		/* 0 boot, 1 report */
	uint8_t idle[256];		/* per report ID, 4 ms units */
	uint8_t last_in[HID_REPORT_MAX];
	size_t last_in_len;
	uint8_t out_report[HID_REPORT_MAX];
	size_t out_len;
};

/* ---- option parsing ---- */

struct pctx {
	const struct gd_device *m;
	const struct gd_fn_opt *opt;
	struct script_error *err;
};

#define PERR(pc, ...) fn_opt_error((pc)->m, (pc)->opt, (pc)->err, __VA_ARGS__)

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The next word of *p (ended by a blank, a comma or the end) into w. */
static size_t next_word(const char **p, char *w, size_t size)
{
	size_t n = 0;

	while (is_blank(**p))
		(*p)++;
	while (**p && !is_blank(**p) && **p != ',') {
		if (n + 1 < size)
			w[n] = **p;
		n++;
		(*p)++;
	}
	w[n < size ? n : size - 1] = '\0';
	return n;
}

/* Skip blanks; true (and the comma skipped) when a comma comes next. */
static bool next_comma(const char **p)
{
	while (is_blank(**p))
		(*p)++;
	if (**p != ',')
		return false;
	(*p)++;
	return true;
}

/* A byte as in script byte lists: two hex digits, or 0x and one or two. */
static int parse_byte(const char *w, uint8_t *out)
{
	return util_hexbyte(w, strlen(w), out);
}

static int parse_long(const char *w, long min, long max, long *out)
{
	char *end;
	long v;

	if (!*w)
		return -EINVAL;
	errno = 0;
	v = strtol(w, &end, 0);
	if (*end || errno || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A byte list up to the next comma or the end; the length in *len. */
static int parse_bytes(struct pctx *pc, const char **p, uint8_t *dst,
		       size_t max, size_t *len)
{
	char w[32];

	*len = 0;
	for (;;) {
		const char *save = *p;

		if (!next_word(p, w, sizeof(w))) {
			*p = save;
			return 0;
		}
		if (*len == max)
			return PERR(pc, "%s: more than %zu bytes", pc->opt->key,
				    max);
		if (parse_byte(w, &dst[*len]))
			return PERR(pc, "%s: '%s' is not a byte (two hex digits, or 0x and one or two)",
				    pc->opt->key, w);
		(*len)++;
	}
}

static int add_item(struct pctx *pc, struct hid_cfg *c, uint32_t wait_ms,
		    const uint8_t *data, size_t len)
{
	struct hid_item *it, *items;

	if (len > c->in_mps)
		return PERR(pc, "%s: a %zu-byte report does not fit the interrupt IN endpoint (wMaxPacketSize %u)",
			    pc->opt->key, len, c->in_mps);
	if (c->n_items == HID_ITEMS_MAX)
		return PERR(pc, "%s: more than %d reports", pc->opt->key,
			    HID_ITEMS_MAX);
	if (!(c->n_items & (c->n_items - 1))) {
		items = realloc(c->items, (c->n_items ? 2 * c->n_items : 1) *
				sizeof(*items));
		if (!items)
			return -ENOMEM;
		c->items = items;
	}
	it = &c->items[c->n_items++];
	memset(it, 0, sizeof(*it));
	it->wait_ms = wait_ms;
	it->len = len;
	memcpy(it->data, data, len);
	return 0;
}

/* the wait before the next report: the start delay, then the interval */
static uint32_t next_wait(const struct hid_cfg *c)
{
	return c->n_items ? c->interval_ms : c->delay_ms;
}

/*
 * US layout: the usage (HID 1.11 Usage Tables, keyboard page 0x07) and
 * whether Shift is needed, for the printable ASCII characters and \n \t \b.
 */
static int key_of(unsigned char ch, uint8_t *usage, bool *shift)
{
	static const char plain[] = "-=[]\\;'`,./";
	static const uint8_t plain_usage[] = {
		0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x33, 0x34, 0x35, 0x36, 0x37,
		0x38,
	};
	static const char shifted[] = "_+{}|:\"~<>?";
	static const char shifted_digits[] = "!@#$%^&*()";
	const char *p = ch ? strchr(plain, ch) : NULL;
	const char *q = ch ? strchr(shifted, ch) : NULL;
	const char *d = ch ? strchr(shifted_digits, ch) : NULL;

	*shift = false;
	if (ch >= 'a' && ch <= 'z') {
		*usage = 0x04 + (ch - 'a');
	} else if (ch >= 'A' && ch <= 'Z') {
		*usage = 0x04 + (ch - 'A');
		*shift = true;
	} else if (ch >= '1' && ch <= '9') {
		*usage = 0x1e + (ch - '1');
	} else if (ch == '0') {
		*usage = 0x27;
	} else if (ch == '\n') {
		*usage = 0x28;		/* Enter */
	} else if (ch == '\b') {
		*usage = 0x2a;		/* Backspace */
	} else if (ch == '\t') {
		*usage = 0x2b;
	} else if (ch == ' ') {
		*usage = 0x2c;
	} else if (ch == 0x1b) {
		*usage = 0x29;		/* Escape */
	} else if (p) {
		*usage = plain_usage[p - plain];
	} else if (q) {
		*usage = plain_usage[q - shifted];	/* same keys, shifted */
		*shift = true;
	} else if (d) {
		*usage = 0x1e + (d - shifted_digits);	/* Shift + 1..0 */
		*shift = true;
	} else {
		return -EINVAL;
	}
	return 0;
}

/*
 * `type TEXT` or `type "a" "bc"...`: the strings are typed one after the
 * other, each character a press report and a release report.
 */
static int parse_type(struct pctx *pc, struct hid_cfg *c, const char *v)
{
	const struct gd_fn_opt *o = pc->opt;
	char text[GD_MAX_BLOB + 1];
	uint8_t rep[KBD_REPORT_LEN];
	size_t len = 0, i;
	bool shift;
	int ret;

	if (o->n_args && o->args[0].quoted) {
		/* strings, decoded by the script lexer */
		for (i = 0; i < o->n_args; i++) {
			if (!o->args[i].quoted)
				return PERR(pc, "type: expected a quoted string at '%s'",
					    o->args[i].text);
			if (o->args[i].len >= sizeof(text) - len)
				return PERR(pc, "type: the text is too long");
			memcpy(text + len, o->args[i].text, o->args[i].len);
			len += o->args[i].len;
		}
	} else {
		len = strlen(v);
		if (len >= sizeof(text))
			return PERR(pc, "type: the text is too long");
		memcpy(text, v, len);
	}
	if (!len)
		return PERR(pc, "type: expected the text to type");
	for (i = 0; i < len; i++) {
		memset(rep, 0, sizeof(rep));
		if (key_of(text[i], &rep[2], &shift))
			return PERR(pc, "type: no key for the character 0x%02x (the US layout's printable ASCII, \\n, \\t, \\b and \\x1b are known)",
				    (unsigned char)text[i]);
		rep[0] = shift ? KBD_MOD_LSHIFT : 0;
		ret = add_item(pc, c, next_wait(c), rep, sizeof(rep));
		if (ret)
			return ret;
		memset(rep, 0, sizeof(rep));
		ret = add_item(pc, c, c->interval_ms, rep, sizeof(rep));
		if (ret)
			return ret;
	}
	return 0;
}

/* `move DX DY [BUTTONS], ...`: one boot mouse report per item */
static int parse_move(struct pctx *pc, struct hid_cfg *c, const char *v)
{
	const char *p = v;
	uint8_t rep[MOUSE_REPORT_LEN];
	char w[32];
	long val[3];
	int i, ret;

	do {
		for (i = 0; i < 3; i++) {
			val[i] = 0;
			if (!next_word(&p, w, sizeof(w))) {
				if (i == 2)
					break;
				return PERR(pc, "move: expected DX DY [BUTTONS] (DX, DY -127..127, BUTTONS 0..7)");
			}
			if (parse_long(w, i < 2 ? -127 : 0, i < 2 ? 127 : 7,
				       &val[i]))
				return PERR(pc, "move: '%s' is not %s", w,
					    i < 2 ? "a number in -127..127" :
					    "a button mask 0..7");
		}
		rep[0] = val[2];
		rep[1] = (uint8_t)(int8_t)val[0];
		rep[2] = (uint8_t)(int8_t)val[1];
		ret = add_item(pc, c, next_wait(c), rep, sizeof(rep));
		if (ret)
			return ret;
		while (is_blank(*p))
			p++;
		if (*p && *p != ',')
			return PERR(pc, "move: unexpected '%s' (items are separated by commas)", p);
	} while (next_comma(&p));
	return 0;
}

/* `reports BYTES, wait MS, BYTES, ...` */
static int parse_reports(struct pctx *pc, struct hid_cfg *c, const char *v)
{
	uint8_t rep[HID_REPORT_MAX];
	const char *p = v, *save;
	uint32_t wait = 0;
	bool have_wait = false;
	char w[32];
	size_t len;
	long ms;
	int ret;

	do {
		save = p;
		next_word(&p, w, sizeof(w));
		if (!strcmp(w, "wait")) {
			next_word(&p, w, sizeof(w));
			if (parse_long(w, 0, HID_WAIT_MAX, &ms))
				return PERR(pc, "reports: wait: '%s' is not a number of ms (0..%d)",
					    w, HID_WAIT_MAX);
			wait += ms;
			have_wait = true;
		} else {
			p = save;
			ret = parse_bytes(pc, &p, rep, sizeof(rep), &len);
			if (ret)
				return ret;
			if (!len)
				return PERR(pc, "reports: an empty report (items are byte lists or 'wait MS', separated by commas)");
			ret = add_item(pc, c, have_wait ? wait : next_wait(c),
				       rep, len);
			if (ret)
				return ret;
			wait = 0;
			have_wait = false;
		}
		while (is_blank(*p))
			p++;
		if (*p && *p != ',')
			return PERR(pc, "reports: unexpected '%s'", p);
	} while (next_comma(&p));
	if (have_wait)
		return PERR(pc, "reports: a wait after the last report");
	return 0;
}

/* The HID descriptor (HID 1.11 6.2.1) in a run of class descriptors. */
static const uint8_t *find_hid_desc(const struct gd_blob *b, size_t *len)
{
	size_t off = 0;

	while (b->data && off + 2 <= b->len) {
		uint8_t bl = b->data[off];

		if (bl < 2 || off + bl > b->len)
			return NULL;	/* a malformed chain: not ours to fix */
		if (b->data[off + 1] == HID_DT_HID) {
			*len = bl;
			return b->data + off;
		}
		off += bl;
	}
	return NULL;
}

static const char *const hid_keys[] = {
	"interface", "kind", "report-descriptor", "type", "move", "reports",
	"start", "delay", "interval", "repeat", NULL,
};

static void cfg_free(struct hid_cfg *c)
{
	free(c->items);
	c->items = NULL;
	c->n_items = 0;
}

/* Options and descriptors into conf, a struct hid_cfg (void *: for
 * fn_state_new()); -EINVAL with err set on a problem. */
static int cfg_parse(const struct gd_device *m, void *conf,
		     struct script_error *err)
{
	struct hid_cfg *c = conf;
	struct pctx pc = { .m = m, .err = err };
	const struct gd_fn_opt *o;
	const struct gd_endpoint *in, *out;
	const struct gd_alt *alt;
	const char *sched = NULL;
	uint64_t v;
	size_t i;
	int ret, n;

	memset(c, 0, sizeof(*c));
	ret = fn_opt_only(m, hid_keys, err);
	if (ret)
		return ret;

	ret = fn_opt_interface(m, USB_CLASS_HID, "HID", &alt, err);
	if (ret)
		return ret;
	o = fn_opt(m, "interface");	/* where endpoint errors point */
	c->intf = alt->bInterfaceNumber;
	in = fn_alt_ep(alt, USB_ENDPOINT_XFER_INT, true);
	out = fn_alt_ep(alt, USB_ENDPOINT_XFER_INT, false);
	if (!in)
		return fn_opt_error(m, o, err, "interface %u has no interrupt IN endpoint",
				    c->intf);
	ret = fn_ep_check_free(m, in, "interrupt IN endpoint", err);
	if (!ret && out)
		ret = fn_ep_check_free(m, out, "interrupt OUT endpoint", err);
	if (ret)
		return ret;
	c->ep_in = in->bEndpointAddress;
	c->in_mps = in->wMaxPacketSize & 0x7ff;
	c->ep_out = out ? out->bEndpointAddress : 0;
	if (c->in_mps > HID_REPORT_MAX)
		c->in_mps = HID_REPORT_MAX;

	/* kind: the option, else the boot protocol the interface says */
	o = fn_opt(m, "kind");
	if (o) {
		pc.opt = o;
		if (!strcmp(o->value, "keyboard"))
			c->kind = HID_KEYBOARD;
		else if (!strcmp(o->value, "mouse"))
			c->kind = HID_MOUSE;
		else if (!strcmp(o->value, "other"))
			c->kind = HID_OTHER;
		else
			return PERR(&pc, "kind: expected keyboard, mouse or other, got '%s'",
				    o->value);
	} else if (alt->bInterfaceProtocol == 1) {
		c->kind = HID_KEYBOARD;
	} else if (alt->bInterfaceProtocol == 2) {
		c->kind = HID_MOUSE;
	}

	o = fn_opt(m, "report-descriptor");
	if (o) {
		const char *p = o->value;

		pc.opt = o;
		ret = parse_bytes(&pc, &p, c->rdesc_buf, sizeof(c->rdesc_buf),
				  &c->rdesc_len);
		if (ret)
			return ret;
		if (*p)
			return PERR(&pc, "report-descriptor: unexpected '%s'", p);
		if (!c->rdesc_len)
			return PERR(&pc, "report-descriptor: expected the bytes");
		c->rdesc = c->rdesc_buf;
	} else if (c->kind == HID_KEYBOARD) {
		c->rdesc = boot_keyboard_rdesc;
		c->rdesc_len = sizeof(boot_keyboard_rdesc);
	} else if (c->kind == HID_MOUSE) {
		c->rdesc = boot_mouse_rdesc;
		c->rdesc_len = sizeof(boot_mouse_rdesc);
	} else {
		return fn_opt_error(m, NULL, err, "interface %u is neither a boot keyboard nor a boot mouse: give 'kind keyboard|mouse' or 'report-descriptor BYTES'",
				    c->intf);
	}

	/* usbhid needs the HID descriptor, and reads exactly the length it
	 * announces (drivers/hid/usbhid/hid-core.c usbhid_parse) */
	c->hid_desc = find_hid_desc(&alt->extra, &c->hid_desc_len);
	if (!c->hid_desc && alt->n_eps)
		c->hid_desc = find_hid_desc(&alt->eps[0].extra,
					    &c->hid_desc_len);
	if (!c->hid_desc)
		return fn_opt_error(m, NULL, err, "interface %u has no HID descriptor: add 'raw 09 21 11 01 00 01 22 %02x %02x' before its first endpoint",
				    c->intf, (unsigned int)(c->rdesc_len & 0xff),
				    (unsigned int)(c->rdesc_len >> 8));
	if (c->hid_desc_len < 9 || c->hid_desc[6] != HID_DT_REPORT ||
	    get_le16(c->hid_desc + 7) != c->rdesc_len)
		return fn_opt_error(m, NULL, err, "interface %u: the HID descriptor must announce the %zu-byte report descriptor first (bytes 6..8: 22 %02x %02x)",
				    c->intf, c->rdesc_len,
				    (unsigned int)(c->rdesc_len & 0xff),
				    (unsigned int)(c->rdesc_len >> 8));

	o = fn_opt(m, "start");
	if (o) {
		pc.opt = o;
		if (!strcmp(o->value, "first-in"))
			c->start = START_FIRST_IN;
		else if (!strcmp(o->value, "attach"))
			c->start = START_ATTACH;
		else if (!strcmp(o->value, "set-idle"))
			c->start = START_SET_IDLE;
		else
			return PERR(&pc, "start: expected first-in, attach or set-idle, got '%s'",
				    o->value);
	}
	ret = fn_opt_u64(m, "delay", 100, HID_WAIT_MAX, 0, &v, err);
	if (ret)
		return ret;
	c->delay_ms = v;
	ret = fn_opt_u64(m, "interval", 20, HID_WAIT_MAX, 0, &v, err);
	if (ret)
		return ret;
	c->interval_ms = v;
	ret = fn_opt_u64(m, "repeat", 0, HID_WAIT_MAX, 0, &v, err);
	if (ret)
		return ret;
	c->repeat_ms = v;

	/* the schedule: one of type, move, reports */
	for (n = 0, i = 0; hid_keys[i]; i++) {
		if (strcmp(hid_keys[i], "type") && strcmp(hid_keys[i], "move") &&
		    strcmp(hid_keys[i], "reports"))
			continue;
		o = fn_opt(m, hid_keys[i]);
		if (!o)
			continue;
		if (n++)
			return fn_opt_error(m, o, err, "%s: only one of type, move and reports",
					    o->key);
		sched = hid_keys[i];
		pc.opt = o;
	}
	if (!sched) {
		if (c->repeat_ms)
			return fn_opt_error(m, fn_opt(m, "repeat"), err,
					    "repeat: there is nothing to repeat (no type, move or reports)");
	} else if (!strcmp(sched, "type")) {
		if (c->kind != HID_KEYBOARD || fn_opt(m, "report-descriptor"))
			return PERR(&pc, "type: needs the built-in keyboard (kind keyboard, no report-descriptor); use reports");
		ret = parse_type(&pc, c, pc.opt->value);
	} else if (!strcmp(sched, "move")) {
		if (c->kind != HID_MOUSE || fn_opt(m, "report-descriptor"))
			return PERR(&pc, "move: needs the built-in mouse (kind mouse, no report-descriptor); use reports");
		ret = parse_move(&pc, c, pc.opt->value);
	} else {
		ret = parse_reports(&pc, c, pc.opt->value);
	}
	if (ret) {
		cfg_free(c);
		return ret;
	}

	if (c->kind == HID_KEYBOARD && !fn_opt(m, "report-descriptor"))
		c->report_len = KBD_REPORT_LEN;
	else if (c->kind == HID_MOUSE && !fn_opt(m, "report-descriptor"))
		c->report_len = MOUSE_REPORT_LEN;
	else if (c->n_items)
		c->report_len = c->items[0].len;
	else
		c->report_len = c->in_mps;
	return 0;
}

/* ---- run time ---- */

static int hid_validate(const struct gd_device *m, struct script_error *err)
{
	struct hid_cfg *c = malloc(sizeof(*c));
	int ret;

	if (!c)
		return -ENOMEM;
	ret = cfg_parse(m, c, err);
	cfg_free(c);
	free(c);
	return ret;
}

/* Wait ms for items[pos]; 0: it is due now. */
static void arm(struct hid_state *st, uint32_t ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	st->due = false;
	if (!ms) {
		st->due = true;
		return;
	}
	if (evtimer_add(st->timer, &tv)) {
		log_warn("interface %u: no timer: the report goes now",
			 st->cfg.intf);
		st->due = true;
	}
}

/* Send what is due while URBs are waiting. */
static void pump(struct hid_state *st)
{
	const struct hid_item *it;
	struct urb *urb;
	size_t n;

	while (st->due && st->in.head) {
		it = &st->cfg.items[st->pos];
		urb = gdev_urbq_pop(&st->in);
		/* never more than the URB asks; usbhid's buffer holds its
		 * longest input report */
		n = it->len < urb->length ? it->len : urb->length;
		memcpy(urb->buf, it->data, n);
		memcpy(st->last_in, it->data, it->len);
		st->last_in_len = it->len;
		if (n < it->len)
			log_warn("interface %u: report %zu cut to the URB's %u bytes",
				 st->cfg.intf, st->pos, urb->length);
		log_dbg("interface %u: report %zu of %zu sent", st->cfg.intf,
			st->pos + 1, st->cfg.n_items);
		st->due = false;
		st->pos++;
		gdev_complete(st->dev, urb, 0, n);
		if (st->pos < st->cfg.n_items) {
			arm(st, st->cfg.items[st->pos].wait_ms);
		} else if (st->cfg.repeat_ms) {
			st->pos = 0;
			arm(st, st->cfg.repeat_ms);
		}
	}
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hid_state *st = arg;

	(void)fd;
	(void)what;
	st->due = true;
	pump(st);
}

static void start(struct hid_state *st)
{
	if (st->started || !st->cfg.n_items)
		return;
	st->started = true;
	arm(st, st->cfg.items[0].wait_ms);
	pump(st);
}

static int hid_attach(struct gdev *dev)
{
	struct hid_state *st;
	int ret;

	st = fn_state_new(dev->model, sizeof(*st),
			  offsetof(struct hid_state, cfg), cfg_parse, &ret);
	if (!st)
		return ret;
	st->timer = evtimer_new(dev->base, timer_cb, st);
	if (!st->timer) {
		cfg_free(&st->cfg);
		free(st);
		return -ENOMEM;
	}
	st->dev = dev;
	gdev_urbq_init(&st->in);
	st->protocol = 1;		/* HID 1.11 7.2.6: report after reset */
	/* HID 1.11 7.2.4: 500 ms recommended for keyboards, 0 for mice */
	if (st->cfg.kind == HID_KEYBOARD)
		memset(st->idle, 125, sizeof(st->idle));
	st->last_in_len = st->cfg.report_len;
	dev->function_state = st;
	if (st->cfg.start == START_ATTACH)
		start(st);
	return 0;
}

static void hid_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct hid_state *st = dev->function_state;

	if (!st)
		return;
	gdev_urbq_free(&st->in, free_urb);
	event_free(st->timer);
	cfg_free(&st->cfg);
	free(st);
	dev->function_state = NULL;
}

static void hid_reset(struct gdev *dev)
{
	struct hid_state *st = dev->function_state;

	if (!st)
		return;
	gdev_urbq_flush(dev, &st->in, -ESHUTDOWN);
}

static struct urb *hid_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct hid_state *st = dev->function_state;

	return gdev_urbq_remove(&st->in, seqnum);
}

static void store_output(struct hid_state *st, const uint8_t *data,
			 size_t len, const char *how)
{
	if (len > sizeof(st->out_report))
		len = sizeof(st->out_report);
	memcpy(st->out_report, data, len);
	st->out_len = len;
	if (st->cfg.kind == HID_KEYBOARD && len)
		log_info("interface %u: LEDs 0x%02x by %s (num %d, caps %d, scroll %d)",
			 st->cfg.intf, data[0], how, data[0] & 1,
			 !!(data[0] & 2), !!(data[0] & 4));
	else
		log_info("interface %u: output report of %zu bytes by %s",
			 st->cfg.intf, len, how);
}

static int hid_submit(struct gdev *dev, struct urb *urb)
{
	struct hid_state *st = dev->function_state;
	uint8_t addr = urb->ep | (urb->dir_in ? USB_DIR_IN : 0);

	if (addr == st->cfg.ep_in) {
		gdev_urbq_push(&st->in, urb);
		if (st->cfg.start == START_FIRST_IN)
			start(st);
		pump(st);
		return 0;
	}
	if (st->cfg.ep_out && addr == st->cfg.ep_out) {
		store_output(st, urb->buf, urb->length, "interrupt OUT");
		gdev_complete(dev, urb, 0, urb->length);
		return 0;
	}
	return -ENOENT;
}

static int reply(uint8_t *data, size_t len, const uint8_t *src, size_t n)
{
	if (n > len)
		n = len;
	memcpy(data, src, n);
	return n;
}

/*
 * GET_REPORT(input): the last report sent.  With report IDs (usbhid asks
 * for each at init unless the device is a boot one): the last sent with
 * that ID, else zeros after the ID, as long as the script's first report
 * of that ID; an ID the script never sends STALLs.
 */
static int get_input_report(struct hid_state *st, uint8_t id, uint8_t *data,
			    size_t len)
{
	uint8_t rep[HID_REPORT_MAX] = { id };
	size_t i;

	if (!id || (st->last_in_len && st->last_in[0] == id))
		return reply(data, len, st->last_in, st->last_in_len);
	for (i = 0; i < st->cfg.n_items; i++)
		if (st->cfg.items[i].len && st->cfg.items[i].data[0] == id)
			return reply(data, len, rep, st->cfg.items[i].len);
	return -EPIPE;
}

static int hid_control(struct gdev *dev, const struct usb_setup *s,
		       uint8_t *data, size_t len)
{
	struct hid_state *st = dev->function_state;
	uint8_t type = s->wValue >> 8, id = s->wValue & 0xff;

	if ((s->bmRequestType & USB_RECIP_MASK) != USB_RECIP_INTERFACE ||
	    s->wIndex != st->cfg.intf)
		return -ENOENT;

	if (s->bmRequestType == (USB_DIR_IN | USB_RECIP_INTERFACE) &&
	    s->bRequest == USB_REQ_GET_DESCRIPTOR) {
		if (type == HID_DT_REPORT && id == 0)
			return reply(data, len, st->cfg.rdesc,
				     st->cfg.rdesc_len);
		if (type == HID_DT_HID && id == 0)
			return reply(data, len, st->cfg.hid_desc,
				     st->cfg.hid_desc_len);
		return -EPIPE;
	}
	if ((s->bmRequestType & USB_TYPE_MASK) != USB_TYPE_CLASS)
		return -ENOENT;

	switch (s->bmRequestType << 8 | s->bRequest) {
	case HID_IN << 8 | HID_REQ_GET_REPORT:
		if (type == HID_REPORT_INPUT)
			return get_input_report(st, id, data, len);
		if (type == HID_REPORT_OUTPUT && st->out_len)
			return reply(data, len, st->out_report, st->out_len);
		if (type == HID_REPORT_OUTPUT && st->cfg.kind == HID_KEYBOARD)
			return reply(data, len, st->out_report, 1);
		return -EPIPE;		/* feature reports: none */
	case HID_IN << 8 | HID_REQ_GET_IDLE:
		return reply(data, len, &st->idle[id], 1);
	case HID_IN << 8 | HID_REQ_GET_PROTOCOL:
		return reply(data, len, &st->protocol, 1);
	case HID_OUT << 8 | HID_REQ_SET_REPORT:
		if (type != HID_REPORT_OUTPUT)
			return -EPIPE;
		store_output(st, data, len, "SET_REPORT");
		return 0;
	case HID_OUT << 8 | HID_REQ_SET_IDLE:
		/* 7.2.4: report ID 0 applies to all reports */
		if (id)
			st->idle[id] = type;
		else
			memset(st->idle, type, sizeof(st->idle));
		log_dbg("interface %u: idle %u ms for report %u",
			st->cfg.intf, type * 4u, id);
		if (st->cfg.start == START_SET_IDLE)
			start(st);
		return 0;
	case HID_OUT << 8 | HID_REQ_SET_PROTOCOL:
		if (s->wValue > 1)
			return -EPIPE;
		st->protocol = s->wValue;
		log_dbg("interface %u: %s protocol", st->cfg.intf,
			s->wValue ? "report" : "boot");
		return 0;
	default:
		return -EPIPE;
	}
}

const struct fn_ops fn_hid_ops = {
	.name = "hid",
	.validate = hid_validate,
	.attach = hid_attach,
	.detach = hid_detach,
	.control = hid_control,
	.submit = hid_submit,
	.unlink = hid_unlink,
	.reset = hid_reset,
};
