// SPDX-License-Identifier: GPL-2.0
/*
 * urb.c - pairs the URB events of a capture and turns them into imp_dev
 * content; the contract is in urb.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urb.h"

/* Control submissions waiting for their completion.  A capture holds a
 * few in flight at a time; more than this is not a capture. */
#define URB_MAX_PENDING		65536

#define USB_REQ_GET_DESCRIPTOR	6
#define USB_DT_DEVICE		1
#define USB_DT_CONFIG		2
#define USB_DT_STRING		3
#define USB_DT_QUALIFIER	6
#define USB_DT_OTHER_SPEED	7
#define USB_DT_BOS		15

/* the descriptor blobs of an imp_dev, numbered for the bookkeeping below */
enum {
	BLOB_DEVICE = 0,
	BLOB_CONFIG = 1,			/* + configuration index */
	BLOB_BOS = BLOB_CONFIG + GD_MAX_CONFIGS,
	BLOB_QUALIFIER,
	BLOB_STRING,				/* + string index */
	BLOB_COUNT = BLOB_STRING + 256,
};

struct imp_urb_pending {
	uint64_t id;
	int busnum;
	int devnum;
	uint8_t ep;
	bool setup_valid;
	uint8_t setup[8];
	size_t pos;
};

struct imp_urb_devstate {
	struct imp_dev *d;
	/* the reply each descriptor blob holds: where, and how long the
	 * device said it was (more than the blob when the capture cut it) */
	size_t blob_pos[BLOB_COUNT];
	uint32_t blob_actual[BLOB_COUNT];
	size_t langid_len;		/* bytes of the string 0 reply used */
	size_t n_unpaired;		/* completions without a submission */
	size_t n_unfinished;		/* submissions never completed */
	size_t n_failed;		/* control transfers that failed */
	bool noted_ctrl_full;
	bool noted_seq_full;
	bool noted_in_cut;
	bool noted_no_setup;
};

static uint16_t le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static void where(const struct imp_urb_ctx *c, size_t pos, char *buf,
		  size_t len)
{
	if (c->frames)
		snprintf(buf, len, "%s: frame %zu", c->path, pos);
	else
		snprintf(buf, len, "%s:%zu", c->path, pos);
}

void imp_urb_init(struct imp_urb_ctx *c, struct imp_set *set,
		  const char *path, bool frames)
{
	memset(c, 0, sizeof(*c));
	c->set = set;
	c->path = path;
	c->frames = frames;
}

void imp_urb_free(struct imp_urb_ctx *c)
{
	size_t i;

	free(c->pend);
	c->pend = NULL;
	c->n_pend = c->cap_pend = 0;
	for (i = 0; i < c->n_ds; i++)
		free(c->ds[i]);
	c->n_ds = 0;
}

static int oom(const struct imp_urb_ctx *c, size_t pos, struct imp_error *err)
{
	char w[300];

	where(c, pos, w, sizeof(w));
	return imp_err(err, "%s: out of memory", w);
}

static struct imp_urb_devstate *dev_find(struct imp_urb_ctx *c, int busnum,
					 int devnum)
{
	size_t i;

	for (i = 0; i < c->n_ds; i++)
		if (c->ds[i]->d->busnum == busnum &&
		    c->ds[i]->d->devnum == devnum)
			return c->ds[i];
	return NULL;
}

static int dev_get(struct imp_urb_ctx *c, const struct imp_urb_ev *ev,
		   struct imp_urb_devstate **out, struct imp_error *err)
{
	struct imp_urb_devstate *s = dev_find(c, ev->busnum, ev->devnum);
	char w[300];

	if (s) {
		*out = s;
		return 0;
	}
	where(c, ev->pos, w, sizeof(w));
	if (c->n_ds >= IMP_MAX_DEVICES || c->set->n >= IMP_MAX_DEVICES)
		return imp_err(err, "%s: more than %d devices in one capture",
			       w, IMP_MAX_DEVICES);
	s = calloc(1, sizeof(*s));
	if (!s)
		return oom(c, ev->pos, err);
	s->d = imp_dev_new(c->set, w);
	if (!s->d) {
		free(s);
		return oom(c, ev->pos, err);
	}
	s->d->busnum = ev->busnum;
	s->d->devnum = ev->devnum;
	c->ds[c->n_ds++] = s;
	*out = s;
	return 0;
}

static int pend_add(struct imp_urb_ctx *c, const struct imp_urb_ev *ev,
		    struct imp_error *err)
{
	struct imp_urb_pending *p;
	char w[300];
	size_t i;

	/* a URB is resubmitted under the same id once it completed; a
	 * second submission before that means the capture lost an event */
	for (i = 0; i < c->n_pend; i++) {
		p = &c->pend[i];
		if (p->id == ev->id && p->busnum == ev->busnum &&
		    p->devnum == ev->devnum)
			goto fill;
	}
	if (c->n_pend >= URB_MAX_PENDING) {
		where(c, ev->pos, w, sizeof(w));
		return imp_err(err, "%s: more than %d control transfers in flight",
			       w, URB_MAX_PENDING);
	}
	if (c->n_pend == c->cap_pend) {
		size_t cap = c->cap_pend ? c->cap_pend * 2 : 64;

		p = realloc(c->pend, cap * sizeof(*p));
		if (!p)
			return oom(c, ev->pos, err);
		c->pend = p;
		c->cap_pend = cap;
	}
	p = &c->pend[c->n_pend++];
fill:
	p->id = ev->id;
	p->busnum = ev->busnum;
	p->devnum = ev->devnum;
	p->ep = ev->ep;
	p->setup_valid = ev->setup_valid;
	memcpy(p->setup, ev->setup, 8);
	p->pos = ev->pos;
	return 0;
}

/* takes the submission ev completes out of the table into *out */
static bool pend_take(struct imp_urb_ctx *c, const struct imp_urb_ev *ev,
		      struct imp_urb_pending *out)
{
	size_t i;

	for (i = 0; i < c->n_pend; i++) {
		const struct imp_urb_pending *p = &c->pend[i];

		if (p->id != ev->id || p->busnum != ev->busnum ||
		    p->devnum != ev->devnum)
			continue;
		*out = *p;
		memmove(&c->pend[i], &c->pend[i + 1],
			(c->n_pend - i - 1) * sizeof(*p));
		c->n_pend--;
		return true;
	}
	return false;
}

/* the longest reply wins; the blob's bookkeeping follows the winner */
static int put_longest(struct imp_urb_devstate *s, struct imp_blob *b,
		       int idx, const struct imp_urb_ev *ev, size_t pos)
{
	int ret;

	if (ev->data_len <= b->len)
		return 0;
	b->len = 0;
	ret = imp_blob_put(b, ev->data, ev->data_len);
	if (ret)
		return ret;
	s->blob_pos[idx] = pos;
	s->blob_actual[idx] = ev->length;
	return 0;
}

static int put_langids(struct imp_urb_devstate *s,
		       const struct imp_urb_ev *ev)
{
	struct imp_dev *d = s->d;
	size_t len = ev->data_len, i;

	/* bLength may promise more than the capture kept: use what is here */
	if (len < 2 || ev->data[1] != USB_DT_STRING || len <= s->langid_len)
		return 0;
	if (ev->data[0] < len)
		len = ev->data[0];
	s->langid_len = ev->data_len;
	d->n_langids = 0;
	for (i = 2; i + 1 < len && d->n_langids < GD_MAX_LANGIDS; i += 2)
		d->langids[d->n_langids++] = le16(ev->data + i);
	return 0;
}

static const char *setup_text(const uint8_t *setup, char *buf, size_t len)
{
	snprintf(buf, len, "%02x %02x %04x %04x %04x", setup[0], setup[1],
		 le16(setup + 2), le16(setup + 4), le16(setup + 6));
	return buf;
}

static int add_ctrl(struct imp_urb_ctx *c, struct imp_urb_devstate *s,
		    const struct imp_urb_pending *p,
		    const struct imp_urb_ev *ev, bool stall,
		    struct imp_error *err)
{
	bool in = p->setup[0] & 0x80;
	const uint8_t *data = NULL;
	size_t len = 0;
	char w[300], st[40];
	int ret;

	where(c, p->pos, w, sizeof(w));
	if (in && !stall) {
		data = ev->data;
		len = ev->data_len;
		if (len < ev->length)
			imp_note(s->d, "%s: the reply to %s is %u bytes, the capture kept %zu: the rule replies with those",
				 w, setup_text(p->setup, st, sizeof(st)),
				 ev->length, len);
	}
	ret = imp_add_ctrl(s->d, p->setup, stall, data, len, w);
	if (ret == -E2BIG) {
		if (!s->noted_ctrl_full)
			imp_note(s->d, "%s: more than %d control transfers: the rest of the capture's are left out",
				 w, IMP_MAX_CTRLS);
		s->noted_ctrl_full = true;
		return 0;
	}
	return ret ? oom(c, ev->pos, err) : 0;
}

static int get_descriptor(struct imp_urb_ctx *c, struct imp_urb_devstate *s,
			  const struct imp_urb_pending *p,
			  const struct imp_urb_ev *ev, struct imp_error *err)
{
	struct imp_dev *d = s->d;
	uint8_t type = le16(p->setup + 2) >> 8;
	uint8_t index = le16(p->setup + 2) & 0xff;
	char w[300];
	int ret = 0;

	switch (type) {
	case USB_DT_DEVICE:
		ret = put_longest(s, &d->device, BLOB_DEVICE, ev, p->pos);
		break;
	case USB_DT_CONFIG:
		if (index >= GD_MAX_CONFIGS) {
			where(c, p->pos, w, sizeof(w));
			imp_note(d, "%s: configuration index %u left out: a gadget has at most %d",
				 w, index, GD_MAX_CONFIGS);
			return 0;
		}
		ret = put_longest(s, &d->configs[index], BLOB_CONFIG + index,
				  ev, p->pos);
		if (!ret && d->configs[index].len && d->n_configs <= index)
			d->n_configs = index + 1;
		break;
	case USB_DT_STRING:
		if (!index)
			return put_langids(s, ev);
		ret = put_longest(s, &d->string_raw[index],
				  BLOB_STRING + index, ev, p->pos);
		break;
	case USB_DT_BOS:
		ret = put_longest(s, &d->bos, BLOB_BOS, ev, p->pos);
		break;
	case USB_DT_QUALIFIER:
		ret = put_longest(s, &d->qualifier, BLOB_QUALIFIER, ev, p->pos);
		break;
	case USB_DT_OTHER_SPEED:
		/* generated from the configurations by the gadget */
		return 0;
	default:
		/* not one the gadget builds from its model: replay it */
		return add_ctrl(c, s, p, ev, false, err);
	}
	return ret ? oom(c, ev->pos, err) : 0;
}

static int control_done(struct imp_urb_ctx *c, struct imp_urb_devstate *s,
			const struct imp_urb_pending *p,
			const struct imp_urb_ev *ev, struct imp_error *err)
{
	uint8_t rt = p->setup[0], req = p->setup[1];
	bool stall = ev->status == -EPIPE;
	char w[300], st[40];

	if (!p->setup_valid) {
		if (!s->noted_no_setup) {
			where(c, p->pos, w, sizeof(w));
			imp_note(s->d, "%s: a control transfer whose setup packet the capture did not keep is left out",
				 w);
		}
		s->noted_no_setup = true;
		return 0;
	}
	/* -EREMOTEIO: a short reply to a URB_SHORT_NOT_OK transfer; the data
	 * is good.  Anything else (unlinked, disconnected, protocol error)
	 * says nothing a gadget could reproduce. */
	if (ev->status && ev->status != -EREMOTEIO && !stall) {
		if (!s->n_failed++) {
			where(c, p->pos, w, sizeof(w));
			imp_note(s->d, "%s: control transfer %s ended with status %d: left out (as every failed one but STALL)",
				 w, setup_text(p->setup, st, sizeof(st)),
				 ev->status);
		}
		return 0;
	}
	if ((rt & 0x60) != 0)		/* class, vendor, reserved */
		return add_ctrl(c, s, p, ev, stall, err);
	if (req != USB_REQ_GET_DESCRIPTOR || !(rt & 0x80))
		return 0;			/* stdreq.c answers these */
	if ((rt & 0x1f) != 0)		/* to an interface/endpoint */
		return add_ctrl(c, s, p, ev, stall, err);
	if (stall)			/* the model has none: STALL */
		return 0;
	return get_descriptor(c, s, p, ev, err);
}

static int in_data(struct imp_urb_ctx *c, struct imp_urb_devstate *s,
		   const struct imp_urb_ev *ev, struct imp_error *err)
{
	char w[300];
	int ret;

	if ((ev->status && ev->status != -EREMOTEIO) || !ev->data_len)
		return 0;
	if (ev->data_len < ev->length && !s->noted_in_cut) {
		where(c, ev->pos, w, sizeof(w));
		imp_note(s->d, "%s: IN packets on endpoint 0x%02x are cut to what the capture kept (%zu of %u bytes here)",
			 w, ev->ep, ev->data_len, ev->length);
		s->noted_in_cut = true;
	}
	ret = imp_add_in_packet(s->d, ev->ep, ev->data, ev->data_len);
	if (ret == -E2BIG) {
		if (!s->noted_seq_full) {
			where(c, ev->pos, w, sizeof(w));
			imp_note(s->d, "%s: IN data on endpoint 0x%02x left out from here: at most %d endpoints and %d packets each",
				 w, ev->ep, IMP_MAX_SEQS, GD_MAX_SEQ_PACKETS);
		}
		s->noted_seq_full = true;
		return 0;
	}
	return ret ? oom(c, ev->pos, err) : 0;
}

int imp_urb_event(struct imp_urb_ctx *c, const struct imp_urb_ev *ev,
		  struct imp_error *err)
{
	struct imp_urb_devstate *s = NULL;
	struct imp_urb_pending p;
	int ret;

	/* address 0: a device being enumerated, read again at its address;
	 * isochronous data is not replayed; a gadget's control rules are
	 * endpoint 0's */
	if (ev->devnum <= 0 || ev->xfer == IMP_XFER_ISO ||
	    (ev->xfer == IMP_XFER_CTRL && (ev->ep & 0x7f)))
		return 0;
	if (ev->kind == 'S' && ev->xfer != IMP_XFER_CTRL)
		return 0;
	ret = dev_get(c, ev, &s, err);
	if (ret)
		return ret;
	if (ev->xfer != IMP_XFER_CTRL) {
		if (ev->kind == 'C' && (ev->ep & 0x80))
			return in_data(c, s, ev, err);
		return 0;
	}
	if (ev->kind == 'S')
		return pend_add(c, ev, err);
	if (!pend_take(c, ev, &p)) {
		s->n_unpaired++;
		return 0;
	}
	if (ev->kind != 'C')
		return 0;
	return control_done(c, s, &p, ev, err);
}

static const char *blob_name(int idx, char *buf, size_t len)
{
	if (idx == BLOB_DEVICE)
		snprintf(buf, len, "device descriptor");
	else if (idx < BLOB_BOS)
		snprintf(buf, len, "configuration %d", idx - BLOB_CONFIG + 1);
	else if (idx == BLOB_BOS)
		snprintf(buf, len, "BOS descriptor");
	else if (idx == BLOB_QUALIFIER)
		snprintf(buf, len, "device qualifier");
	else
		snprintf(buf, len, "string %d", idx - BLOB_STRING);
	return buf;
}

/* how long the descriptor in b says it is */
static size_t declared(int idx, const struct imp_blob *b)
{
	if (idx == BLOB_DEVICE)
		return 18;
	if (idx == BLOB_QUALIFIER)
		return 10;
	if (idx < BLOB_QUALIFIER)	/* configuration, BOS: wTotalLength */
		return b->len >= 4 ? le16(b->data + 2) : b->len + 1;
	return b->data[0];		/* string: bLength */
}

static struct imp_blob *blob_of(struct imp_dev *d, int idx)
{
	if (idx == BLOB_DEVICE)
		return &d->device;
	if (idx < BLOB_BOS)
		return &d->configs[idx - BLOB_CONFIG];
	if (idx == BLOB_BOS)
		return &d->bos;
	if (idx == BLOB_QUALIFIER)
		return &d->qualifier;
	return &d->string_raw[idx - BLOB_STRING];
}

static void finish_dev(struct imp_urb_ctx *c, struct imp_urb_devstate *s)
{
	struct imp_dev *d = s->d;
	char w[300], name[40];
	size_t want;
	int idx;

	for (idx = 0; idx < BLOB_COUNT; idx++) {
		struct imp_blob *b = blob_of(d, idx);

		if (!b->len)
			continue;
		want = declared(idx, b);
		if (b->len >= want)
			continue;
		d->truncated = true;
		where(c, s->blob_pos[idx], w, sizeof(w));
		blob_name(idx, name, sizeof(name));
		if (s->blob_actual[idx] > b->len)
			imp_note(d, "%s: %s: the device sent %u bytes, the capture kept %zu of the %zu it declares; the rest is rebuilt",
				 w, name, s->blob_actual[idx], b->len, want);
		else
			imp_note(d, "%s: %s: the host read %zu of the %zu bytes it declares; the rest is rebuilt",
				 w, name, b->len, want);
	}
	if (s->n_unpaired)
		imp_note(d, "%s: %zu control completion%s without a submission (the capture started during %s) left out",
			 d->where, s->n_unpaired, s->n_unpaired > 1 ? "s" : "",
			 s->n_unpaired > 1 ? "them" : "it");
	if (s->n_unfinished)
		imp_note(d, "%s: %zu control transfer%s without a completion (the capture ended during %s) left out",
			 d->where, s->n_unfinished, s->n_unfinished > 1 ? "s" : "",
			 s->n_unfinished > 1 ? "them" : "it");
	if (s->n_failed > 1)
		imp_note(d, "%s: %zu failed control transfers in all are left out",
			 d->where, s->n_failed);
}

void imp_urb_finish(struct imp_urb_ctx *c)
{
	struct imp_urb_devstate *s = NULL;
	size_t i;

	for (i = 0; i < c->n_pend; i++) {
		s = dev_find(c, c->pend[i].busnum, c->pend[i].devnum);
		if (s)
			s->n_unfinished++;
	}
	for (i = 0; i < c->n_ds; i++)
		finish_dev(c, c->ds[i]);
}
