// SPDX-License-Identifier: GPL-2.0
/* fixture.c - the fake host and helpers of the unit tests (fixture.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <cmocka.h>
#include <event2/event.h>
#include <linux/usb/ch9.h>

#include "fixture.h"
#include "script.h"

static struct fx *fx_current;	/* for the free_urb callback of gdev_detach */
static uint32_t fx_next_seq = 1;

static void fx_host_complete(void *ctx, struct urb *urb)
{
	struct fx *fx = ctx;

	if ((fx->flags & FX_POISON_OUT) && !urb->dir_in)
		memset(urb->buf, 0xa5, urb->length);
	if (fx->n_done == fx->cap_done) {
		fx->cap_done = fx->cap_done ? 2 * fx->cap_done : 16;
		fx->done = realloc(fx->done, fx->cap_done * sizeof(*fx->done));
		assert_non_null(fx->done);
	}
	fx->done[fx->n_done++] = urb;
	if (fx->flags & FX_FORGET_DONE) {
		urb->ep = 0x0f;
		urb->seqnum = 0;
	}
}

static void fx_host_disconnect(void *ctx, const char *why)
{
	struct fx *fx = ctx;

	if (fx->flags & FX_DISCONNECT_FAILS)
		fail_msg("unexpected disconnect: %s", why);
	fx->disconnects++;
	snprintf(fx->why, sizeof(fx->why), "%s", why);
	event_base_loopbreak(fx->base);
}

void fx_free_urb(struct urb *urb)
{
	fx_current->freed++;
	fx_urb_free(urb);
}

struct fx *fx_create(unsigned int flags)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	fx->base = event_base_new();
	assert_non_null(fx->base);
	fx->host.complete = fx_host_complete;
	fx->host.disconnect = fx_host_disconnect;
	fx->flags = flags;
	fx_current = fx;
	return fx;
}

void fx_destroy(struct fx *fx)
{
	size_t i;

	if (fx->dev) {
		gdev_detach(fx->dev, fx_free_urb);
		gdev_free(fx->dev);
	}
	if (fx->own_model)
		gd_model_free(fx->m);
	for (i = 0; i < fx->n_done; i++)
		fx_urb_free(fx->done[i]);
	free(fx->done);
	event_base_free(fx->base);
	if (fx_current == fx)
		fx_current = NULL;
	free(fx);
}

/* ---- cmocka setup and teardown ---- */

int fx_setup_flags(void **state, unsigned int flags)
{
	struct fx *fx = fx_create(flags);

	fx->own_model = true;
	*state = fx;
	return 0;
}

int fx_setup(void **state)
{
	return fx_setup_flags(state, FX_DISCONNECT_FAILS | FX_POISON_OUT);
}

int fx_teardown(void **state)
{
	fx_destroy(*state);
	return 0;
}

void fx_attach(struct fx *fx)
{
	fx->dev = gdev_new(fx->m, fx->base);
	assert_non_null(fx->dev);
	assert_int_equal(gdev_attach(fx->dev, &fx->host, fx), 0);
}

void fx_config_unattached(struct fx *fx)
{
	fx->dev = gdev_new(fx->m, fx->base);
	assert_non_null(fx->dev);
	assert_null(fx->dev->function_state);
	assert_int_equal(gdev_set_config(fx->dev, 1), 0);
	assert_int_equal(gdev_set_config(fx->dev, 0), 0);
}

/* ---- URBs ---- */

struct urb *fx_urb_new(uint8_t ep_addr, uint32_t len)
{
	struct urb *urb = calloc(1, sizeof(*urb));

	assert_non_null(urb);
	urb->seqnum = fx_next_seq++;
	urb->ep = ep_addr & 0x0f;
	urb->dir_in = ep_addr & USB_DIR_IN;
	urb->length = len;
	urb->buf = calloc(1, len ? len : 1);
	assert_non_null(urb->buf);
	return urb;
}

void fx_urb_free(struct urb *urb)
{
	if (!urb)
		return;
	free(urb->buf);
	free(urb->iso);
	free(urb);
}

struct urb *fx_ctrl_new(uint8_t type, uint8_t req, uint16_t value,
			uint16_t index, uint16_t wlength, uint32_t len)
{
	struct urb *urb = fx_urb_new(type & USB_DIR_IN, len);
	struct usb_setup s = { type, req, value, index, wlength };

	usb_setup_pack(&s, urb->setup);
	return urb;
}

struct urb *fx_ctrl(struct fx *fx, uint8_t type, uint8_t req,
		    uint16_t value, uint16_t index, uint16_t wlength,
		    const void *out)
{
	struct urb *urb = fx_ctrl_new(type, req, value, index, wlength,
				      wlength);

	if (out && wlength)
		memcpy(urb->buf, out, wlength);
	return fx_submit(fx, urb);
}

struct urb *fx_submit(struct fx *fx, struct urb *urb)
{
	gdev_submit(fx->dev, urb);
	return urb;
}

bool fx_is_done(const struct fx *fx, const struct urb *urb)
{
	size_t i;

	for (i = 0; i < fx->n_done; i++)
		if (fx->done[i] == urb)
			return true;
	return false;
}

void fx_expect_ok(struct fx *fx, const struct urb *u, uint32_t actual)
{
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->status, 0);
	assert_int_equal(u->actual_length, actual);
}

void fx_expect_stall(struct fx *fx, const struct urb *u)
{
	assert_true(fx_is_done(fx, u));
	assert_int_equal(u->status, -EPIPE);
}

void fx_set_config(struct fx *fx, uint8_t value)
{
	fx_expect_ok(fx, fx_ctrl(fx, 0x00, USB_REQ_SET_CONFIGURATION, value, 0,
				 0, NULL), 0);
}

/* ---- the event loop ---- */

void fx_run_until_done(struct fx *fx, const struct urb *urb)
{
	struct timeval t0;

	gettimeofday(&t0, NULL);
	while (!fx_is_done(fx, urb)) {
		event_base_loop(fx->base, EVLOOP_ONCE);
		assert_true(fx_ms_since(&t0) < 2000);
	}
}

void fx_run_for(struct fx *fx, unsigned int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(fx->base, &tv);
	event_base_dispatch(fx->base);
}

long fx_ms_since(const struct timeval *t0)
{
	struct timeval now;

	gettimeofday(&now, NULL);
	return (now.tv_sec - t0->tv_sec) * 1000 +
	       (now.tv_usec - t0->tv_usec) / 1000;
}

/* ---- hand-built models ---- */

void fx_model_init(struct gd_device *m, char *name)
{
	m->name = name;
	m->speed = USBIP_SPEED_HIGH;
	m->bcdUSB = 0x0200;
	m->bMaxPacketSize0 = 64;
	m->idVendor = 0x1209;
	m->idProduct = 0x0001;
	m->bNumConfigurations_override = -1;
	m->bLength_override = -1;
	m->bos.wTotalLength_override = -1;
	m->bos.bNumDeviceCaps_override = -1;
	m->bos.bLength_override = -1;
	m->bos.bDescriptorType_override = -1;
}

void fx_config_init(struct gd_config *cfg, struct gd_alt *alts,
		    size_t n_alts)
{
	cfg->bConfigurationValue = 1;
	cfg->bmAttributes = 0x80;
	cfg->bMaxPower = 50;
	cfg->wTotalLength_override = -1;
	cfg->bNumInterfaces_override = -1;
	cfg->bLength_override = -1;
	cfg->alts = alts;
	cfg->n_alts = n_alts;
}

void fx_ep_init(struct gd_endpoint *e, uint8_t addr, uint8_t type,
		uint16_t mps, enum gd_ep_mode mode)
{
	memset(e, 0, sizeof(*e));
	e->bEndpointAddress = addr;
	e->bmAttributes = type;
	e->wMaxPacketSize = mps;
	e->bInterval = type == USB_ENDPOINT_XFER_BULK ? 0 : 1;
	e->bLength_override = -1;
	e->ss.bLength_override = -1;
	e->beh.mode = mode;
}

/* ---- gadget scripts ---- */

char *fx_script_read(const char *path, const char *from, const char *to)
{
	FILE *f = fopen(path, "r");
	char *text, *out, *at;
	long n;

	if (!f)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	text = malloc((size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	text[n] = '\0';
	if (!from)
		return text;
	at = strstr(text, from);
	if (!at)
		fail_msg("'%s' not in %s", from, path);
	out = malloc((size_t)n - strlen(from) + strlen(to) + 1);
	assert_non_null(out);
	sprintf(out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	free(text);
	return out;
}

void fx_parse(struct fx *fx, const char *name, const char *text)
{
	struct script_error err;

	if (script_parse(name, text, strlen(text), &fx->m, &err))
		fail_msg("%s", err.msg);
	fx->own_model = true;
}

void fx_parse_file(struct fx *fx, const char *path, const char *from,
		   const char *to)
{
	char *text = fx_script_read(path, from, to);

	fx_parse(fx, path, text);
	free(text);
}

void fx_attach_configured(struct fx *fx)
{
	fx_attach(fx);
	fx_set_config(fx, 1);
}

void fx_start_text(struct fx *fx, const char *name, const char *text)
{
	fx_parse(fx, name, text);
	fx_attach_configured(fx);
}

void fx_start_file(struct fx *fx, const char *path, const char *from,
		   const char *to)
{
	fx_parse_file(fx, path, from, to);
	fx_attach_configured(fx);
}

void fx_expect_script_ok(const char *name, const char *text)
{
	struct gd_device *dev = NULL;
	struct script_error err;

	if (script_parse(name, text, strlen(text), &dev, &err))
		fail_msg("%s\n---\n%s---", err.msg, text);
	assert_non_null(dev);
	gd_model_free(dev);
}

void fx_expect_script_error(const char *name, const char *text, int line,
			    int col, const char *what)
{
	struct gd_device *dev = NULL;
	struct script_error err;
	int rc;

	rc = script_parse(name, text, strlen(text), &dev, &err);
	if (rc != -EINVAL) {
		gd_model_free(dev);
		fail_msg("expected \"%s\" at %d:%d, got rc %d\n---\n%s---",
			 what, line, col, rc, text);
	}
	assert_null(dev);
	if ((line && err.line != line) || (col && err.col != col) ||
	    !strstr(err.msg, what))
		fail_msg("expected %d:%d \"%s\", got %d:%d \"%s\"\n---\n%s---",
			 line, col, what, err.line, err.col, err.msg, text);
}
