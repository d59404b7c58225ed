/* SPDX-License-Identifier: GPL-2.0 */
/*
 * function.h - built-in device functions: behaviour a script cannot say.
 *
 * A gadget script keeps describing the descriptors; `function NAME { ... }`
 * in its device block attaches a function that supplies what a class
 * driver needs beyond them: class/vendor requests on ep0, and the data on
 * the endpoints it claims (a SCSI target behind Bulk-Only Transport, a
 * serial line, key presses).  Each function lives in gadgets/fn_<name>.c
 * behind this small ops table; fn_null.c is the template.
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
 *    the script's endpoint behaviour handle it.
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
#include "script.h"

struct gd_function_ops {
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
const struct gd_function_ops *gd_function_find(const char *name);
/* Names of all functions, NULL-terminated, for messages and --help. */
extern const struct gd_function_ops *const gd_functions[];

/* Complete an URB the function holds (status 0 or negative errno). */
void gdev_complete(struct gdev *dev, struct urb *urb, int status,
		   uint32_t actual);

/*
 * ---- pending URB queues ----
 * A FIFO of URBs a function holds without completing them (a pending URB is
 * a NAK to the host).  The queue links URBs through urb->next, so an URB is
 * in at most one queue and its owner must not touch urb->next meanwhile;
 * push, pop and remove leave urb->next NULL on the URB that leaves.  What
 * the function still holds at reset() goes through fn_urbq_flush(), at
 * detach() through fn_urbq_free(), and unlink() asks fn_urbq_remove().
 */
struct fn_urbq {
	struct urb *head;
	struct urb **tail;
};

/* Empty queue; required before any other call. */
void fn_urbq_init(struct fn_urbq *q);
void fn_urbq_push(struct fn_urbq *q, struct urb *urb);
/* The oldest URB, taken out of the queue, or NULL. */
struct urb *fn_urbq_pop(struct fn_urbq *q);
/* The URB with that seqnum, taken out of the queue, or NULL. */
struct urb *fn_urbq_remove(struct fn_urbq *q, uint32_t seqnum);
/* Complete every queued URB with status and actual 0 (reset: -ESHUTDOWN). */
void fn_urbq_flush(struct gdev *dev, struct fn_urbq *q, int status);
/* Free every queued URB with free_urb without completing it (detach); a
 * NULL free_urb just empties the queue. */
void fn_urbq_free(struct fn_urbq *q, void (*free_urb)(struct urb *urb));

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

#endif /* USBRIG_FUNCTION_H */
