/* SPDX-License-Identifier: GPL-2.0 */
/*
 * function.h - built-in device functions: behaviour a script cannot say.
 *
 * A gadget script keeps describing the descriptors; `function NAME { ... }`
 * in its device block attaches a function that supplies what a class
 * driver needs beyond them: class/vendor requests on ep0, and the data on
 * the endpoints it claims (a SCSI target behind Bulk-Only Transport, a
 * serial line, key presses).  Each function lives in gadgets/fn/<name>.c
 * behind this small ops table; fn/null.c is the template.
 *
 * Contract of each member (all may be NULL unless said otherwise):
 *  - name: the word a script uses.  Required.
 *  - validate(model, err): called once when the script is loaded; checks
 *    options and the descriptors the function relies on (endpoint types,
 *    directions).  On a problem return -EINVAL with err->line/col/msg set
 *    (fn_opt_error() helps), so the script is rejected file:line:col.
 *  - attach(dev): the device was imported; allocate dev->function_state.
 *    Return 0 or a negative errno (the import then fails).
 *  - detach(dev, free_urb): the connection is gone; free every URB the
 *    function still holds with free_urb (without completing it) and the
 *    state.  Called before the core drops its own URBs.
 *  - control(dev, setup, data, len): ep0 requests that neither a script
 *    rule nor the standard handler took.  As stdreq_handle(): the reply
 *    length, -EPIPE to STALL, -ENOENT when not the function's (STALL).
 *  - submit(dev, urb): an URB for a non-zero endpoint of the active
 *    configuration that is not halted.  Return 0 when the function took it
 *    (it completes it now or later with gdev_complete()), -ENOENT to let
 *    the script's endpoint behaviour handle it.  Isochronous URBs come
 *    here too: one the function takes it fills at once and hands to
 *    gdev_iso_complete(), which keeps the bus's pace.
 *  - unlink(dev, seqnum): take back a pending URB the function holds, or
 *    NULL.  Required when submit can keep URBs pending.
 *  - reset(dev): the configuration or an alternate setting changed: complete the URBs it holds with -ESHUTDOWN (gdev_complete)
 *    and start over.
 */
#ifndef USBRIG_FUNCTION_H
#define USBRIG_FUNCTION_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "model.h"
#include "registry.h"
#include "script.h"

struct fn_ops {
	const char *name;
	int (*validate)(const struct gd_device *model, struct script_error *err);
	int (*attach)(struct gdev *dev);
	void (*detach)(struct gdev *dev, void (*free_urb)(struct urb *urb));
	int (*control)(struct gdev *dev, const struct usb_setup *s,
		       uint8_t *data, size_t len);
	int (*submit)(struct gdev *dev, struct urb *urb);
	struct urb *(*unlink)(struct gdev *dev, uint32_t seqnum);
	void (*reset)(struct gdev *dev);
};

/* The function a script names, or NULL. */
const struct fn_ops *fn_find(const char *name);
/* All functions, NULL-terminated, for messages and --help. */
extern const struct fn_ops *const fn_list[];

/* Each function's table, defined in its fn_<name>.c (which includes this
 * header, so the compiler checks the two agree). */
extern const struct fn_ops fn_null_ops;
extern const struct fn_ops fn_hid_ops;
extern const struct fn_ops fn_msc_ops;
extern const struct fn_ops fn_acm_ops;
extern const struct fn_ops fn_ftdi_ops;
extern const struct fn_ops fn_pl2303_ops;
extern const struct fn_ops fn_cp210x_ops;
extern const struct fn_ops fn_ch341_ops;
extern const struct fn_ops fn_mct_u232_ops;
extern const struct fn_ops fn_zero_ops;
extern const struct fn_ops fn_ether_ops;
extern const struct fn_ops fn_printer_ops;
extern const struct fn_ops fn_usbtmc_ops;
extern const struct fn_ops fn_uvc_ops;
extern const struct fn_ops fn_ax88179_ops;

/* ---- attach ---- */
/*
 * The opening of an attach(): a zeroed state of size bytes whose
 * configuration, cfg_off bytes into it, parse fills again from the model
 * (the function's option parser, as its validate() ran it: cfg is the
 * function's own configuration struct).  validate() accepted the model,
 * so only running out of memory is left; what fails is logged.  The
 * state, or NULL with *ret the negative errno.
 */
void *fn_state_new(const struct gd_device *model, size_t size,
		   size_t cfg_off,
		   int (*parse)(const struct gd_device *model, void *cfg,
				struct script_error *err),
		   int *ret);

/* ---- options: `key value...` lines of the script's function block ---- */
const struct gd_fn_opt *fn_opt(const struct gd_device *model,
			       const char *key);
/* Parse an unsigned number option (decimal, 0x hex; K/M/G suffixes when
 * allow_suffix).  Absent: *out = def, 0.  Bad: -EINVAL with err set. */
int fn_opt_u64(const struct gd_device *model, const char *key, uint64_t def,
	       uint64_t max, int allow_suffix, uint64_t *out,
	       struct script_error *err);
/* Set err to "path:line:col: <msg>" at opt (or at the function line). */
int fn_opt_error(const struct gd_device *model, const struct gd_fn_opt *opt,
		 struct script_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same at column 1 of a script line: for descriptors the function
 * rejects (an interface's or an endpoint's line). */
int fn_error_at(const struct gd_device *model, int line,
		struct script_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * The interface a function serves, alternate setting 0 in any
 * configuration: the one option `interface N` names, else the first whose
 * bInterfaceClass is class.  None: -EINVAL with err set ("no interface N
 * ..." at the option, or "no <what> interface (bInterfaceClass 0xCC) ...").
 */
int fn_opt_interface(const struct gd_device *model, uint8_t class,
		     const char *what, const struct gd_alt **alt,
		     struct script_error *err);
/* Reject options the function does not know (keys: NULL-terminated). */
int fn_opt_only(const struct gd_device *model, const char *const *keys,
		struct script_error *err);
/*
 * A MAC address option, six hex pairs with ':' or '-' between (absent:
 * def, which the error message also gives as the example); unicast: a
 * multicast address is rejected too.  0, or -EINVAL with err set.
 */
int fn_opt_mac(const struct gd_device *model, const char *key,
	       const char *def, bool unicast, uint8_t mac[6],
	       struct script_error *err);
/* A dotted-quad IPv4 address option, the same way. */
int fn_opt_ipv4(const struct gd_device *model, const char *key,
		const char *def, uint8_t ip[4], struct script_error *err);

/* ---- descriptor lookups for validate/attach ---- */
/* The first endpoint of alt with that transfer type and direction. */
const struct gd_endpoint *fn_alt_ep(const struct gd_alt *alt, int type,
				    bool in);
/* Reject an endpoint the function serves that also has a script behaviour
 * (the function would silently take it over). */
int fn_ep_check_free(const struct gd_device *model,
		     const struct gd_endpoint *ep, const char *what,
		     struct script_error *err);

/* ---- while serving ---- */
/* e is the endpoint of its address in the active configuration and
 * alternate settings (not one of another alternate setting). */
bool fn_ep_live(const struct gdev *dev, const struct gd_endpoint *e);
/* urb is for endpoint e, and e is live. */
bool fn_urb_for(const struct gdev *dev, const struct urb *urb,
		const struct gd_endpoint *e);

#endif /* USBRIG_FUNCTION_H */
