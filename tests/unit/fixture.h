/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fixture.h - what the in-process unit tests of gadgets/device.c and the
 * device functions share: a fake host on a real event_base that records
 * completions and disconnects, URB builders, hand-built model helpers and
 * event-loop runners.
 *
 * A test makes one struct fx per case (fx_create() in its cmocka setup,
 * fx_destroy() in teardown; fx_setup() and fx_teardown() do both for the
 * common case), points fx->m at its model (or has a gadget script parsed
 * into it: fx_parse(), fx_start_file() ...), attaches with fx_attach()
 * and drives the device with URBs from fx_urb_new() / fx_ctrl_new()
 * through fx_submit().  Every completed URB lands in fx->done, in order,
 * and is freed by fx_destroy(); what gdev_detach() takes back is freed
 * there too and counted in fx->freed.
 *
 * Unit tests are single-threaded and have one struct fx alive at a time
 * (the free_urb callback of gdev_detach() has no context pointer).
 */
#ifndef USBRIG_TEST_FIXTURE_H
#define USBRIG_TEST_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include "device.h"
#include "model.h"

/* fx->flags: how the fake host treats what it gets */
#define FX_POISON_OUT		0x1	/* fill a completed OUT URB's data
					 * with 0xa5: the server frees it */
#define FX_FORGET_DONE		0x2	/* clobber a completed URB's ep and
					 * seqnum: the function must not look
					 * at it again */
#define FX_DISCONNECT_FAILS	0x4	/* a disconnect fails the test */

struct fx {
	struct event_base *base;
	struct gd_device *m;		/* the model fx_attach() serves */
	bool own_model;			/* fx_destroy() gd_model_free()s m */
	struct gdev *dev;
	struct gdev_host host;		/* the fake host, ctx = this fx */
	unsigned int flags;		/* FX_* */

	struct urb **done;		/* completed URBs, in order */
	size_t n_done, cap_done;
	int disconnects;
	char why[128];			/* reason of the last disconnect */
	size_t freed;			/* URBs gdev_detach() handed back */

	void *priv;			/* the test's own state */
};

/* A fake host with flags; fails the test when out of memory. */
struct fx *fx_create(unsigned int flags);
/* Detach and free the device, the URBs, the model if owned, the fx. */
void fx_destroy(struct fx *fx);
/* gdev_new() + gdev_attach() on fx->m; asserts both. */
void fx_attach(struct fx *fx);
/* gdev_new() on fx->m, not attached (so no function state), then
 * SET_CONFIGURATION 1 and 0: a function's reset() must cope. */
void fx_config_unattached(struct fx *fx);
/* The free_urb of gdev_detach(): frees urb, counts it in fx->freed of the
 * fx alive. */
void fx_free_urb(struct urb *urb);

/* ---- cmocka setup and teardown ---- */
/* fx_create(flags) into *state, owning the model fx->m will hold. */
int fx_setup_flags(void **state, unsigned int flags);
/* The common case: FX_DISCONNECT_FAILS | FX_POISON_OUT, as above. */
int fx_setup(void **state);
/* fx_destroy(*state). */
int fx_teardown(void **state);

/* ---- URBs ---- */
/* An URB for endpoint address ep_addr (bit 7: IN) with a zeroed buffer of
 * len bytes; seqnums count from 1 in the test binary. */
struct urb *fx_urb_new(uint8_t ep_addr, uint32_t len);
void fx_urb_free(struct urb *urb);
/* An ep0 URB carrying SETUP (type, req, value, index, wlength) with a
 * buffer of len bytes; not submitted. */
struct urb *fx_ctrl_new(uint8_t type, uint8_t req, uint16_t value,
			uint16_t index, uint16_t wlength, uint32_t len);
/* fx_ctrl_new() with a wlength-byte buffer, filled from out when out is
 * not NULL, then submitted. */
struct urb *fx_ctrl(struct fx *fx, uint8_t type, uint8_t req,
		    uint16_t value, uint16_t index, uint16_t wlength,
		    const void *out);
/* gdev_submit(); returns urb for chaining. */
struct urb *fx_submit(struct fx *fx, struct urb *urb);
/* Has the host seen urb complete? */
bool fx_is_done(const struct fx *fx, const struct urb *urb);
/* Assert that urb completed with status 0 and actual bytes. */
void fx_expect_ok(struct fx *fx, const struct urb *u, uint32_t actual);
/* Assert that urb completed with a STALL (-EPIPE). */
void fx_expect_stall(struct fx *fx, const struct urb *u);
/* SET_CONFIGURATION value from the host; asserts it completed with 0. */
void fx_set_config(struct fx *fx, uint8_t value);

/* ---- the event loop ---- */
/* Run the loop until urb completes; fails the test after 2 s. */
void fx_run_until_done(struct fx *fx, const struct urb *urb);
/* Run the loop for ms milliseconds. */
void fx_run_for(struct fx *fx, unsigned int ms);
/* Milliseconds since t0 (gettimeofday). */
long fx_ms_since(const struct timeval *t0);

/* ---- hand-built models ---- */
/* A high-speed vendor device 1209:0001, bcdUSB 2.00, ep0 64 bytes, no
 * overrides; the test adds configurations and whatever else it needs. */
void fx_model_init(struct gd_device *m, char *name);
/* Configuration 1 over n alts, bus powered, 100 mA, no overrides. */
void fx_config_init(struct gd_config *cfg, struct gd_alt *alts,
		    size_t n_alts);
/* An endpoint with a behaviour mode; bInterval 0 for bulk, else 1. */
void fx_ep_init(struct gd_endpoint *e, uint8_t addr, uint8_t type,
		uint16_t mps, enum gd_ep_mode mode);

/* ---- gadget scripts ---- */
/* The file at path as a new string; when from is not NULL, its first
 * occurrence replaced by to (a from not in the file fails the test). */
char *fx_script_read(const char *path, const char *from, const char *to);
/* Parse text, labelled name, into fx->m, which fx then owns; a script
 * error fails the test. */
void fx_parse(struct fx *fx, const char *name, const char *text);
/* fx_parse() of fx_script_read(path, from, to), labelled path. */
void fx_parse_file(struct fx *fx, const char *path, const char *from,
		   const char *to);
/* fx_attach(), then fx_set_config(fx, 1). */
void fx_attach_configured(struct fx *fx);
/* fx_parse() + fx_attach_configured(). */
void fx_start_text(struct fx *fx, const char *name, const char *text);
/* fx_parse_file() + fx_attach_configured(). */
void fx_start_file(struct fx *fx, const char *path, const char *from,
		   const char *to);
/* Parse text, labelled name: it must succeed; the model is freed. */
void fx_expect_script_ok(const char *name, const char *text);
/* Parse text, labelled name: it must fail with -EINVAL and no model, at
 * line:col (0: any line, any column), with a message containing what.
 * Another outcome frees the model and fails the test, showing the text. */
void fx_expect_script_error(const char *name, const char *text, int line,
			    int col, const char *what);

#endif /* USBRIG_TEST_FIXTURE_H */
