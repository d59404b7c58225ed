// SPDX-License-Identifier: GPL-2.0
/* function.c - the registry of device functions and their option helpers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"
#include "netstack.h"

/* Every built-in function; a new one is added here and in its own file. */
const struct fn_ops *const fn_list[] = {
	&fn_null_ops,
	&fn_hid_ops,
	&fn_msc_ops,
	&fn_acm_ops,
	&fn_ftdi_ops,
	&fn_pl2303_ops,
	&fn_cp210x_ops,
	&fn_ch341_ops,
	&fn_mct_u232_ops,
	&fn_zero_ops,
	&fn_ether_ops,
	&fn_printer_ops,
	&fn_usbtmc_ops,
	&fn_uvc_ops,
	&fn_ax88179_ops,
	NULL,
};

const struct fn_ops *fn_find(const char *name)
{
	size_t i;

	for (i = 0; fn_list[i]; i++)
		if (!strcmp(fn_list[i]->name, name))
			return fn_list[i];
	return NULL;
}

void *fn_state_new(const struct gd_device *model, size_t size,
		   size_t cfg_off,
		   int (*parse)(const struct gd_device *model, void *cfg,
				struct script_error *err),
		   int *ret)
{
	struct script_error err;
	char *st = calloc(1, size);

	if (!st) {
		*ret = -ENOMEM;
		return NULL;
	}
	*ret = parse(model, st + cfg_off, &err);
	if (*ret) {
		log_err("%s", *ret == -EINVAL ? err.msg : strerror(-*ret));
		free(st);
		return NULL;
	}
	return st;
}

bool fn_exists(const char *name)
{
	return fn_find(name) != NULL;
}

const char *fn_names(char *buf, size_t size)
{
	size_t i, n = 0;

	buf[0] = 0;
	for (i = 0; fn_list[i] && n < size; i++)
		n += snprintf(buf + n, size - n, "%s%s", i ? ", " : "",
			      fn_list[i]->name);
	return buf;
}

int fn_validate(const struct gd_device *model, struct script_error *err)
{
	const struct fn_ops *ops;

	if (!model->function)
		return 0;
	ops = fn_find(model->function);
	if (!ops)
		return fn_opt_error(model, NULL, err, "no such device function");
	return ops->validate ? ops->validate(model, err) : 0;
}

const struct gd_fn_opt *fn_opt(const struct gd_device *model, const char *key)
{
	size_t i;

	for (i = 0; i < model->n_function_opts; i++)
		if (!strcmp(model->function_opts[i].key, key))
			return &model->function_opts[i];
	return NULL;
}

static int fn_verror(const struct gd_device *model, int line, int col,
		     struct script_error *err, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

static int fn_verror(const struct gd_device *model, int line, int col,
		     struct script_error *err, const char *fmt, va_list ap)
{
	char msg[384];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	err->line = line;
	err->col = col;
	snprintf(err->msg, sizeof(err->msg), "%s:%d:%d: function %s: %s",
		 model->path ? model->path : "<script>", err->line, err->col,
		 model->function, msg);
	return -EINVAL;
}

int fn_opt_error(const struct gd_device *model, const struct gd_fn_opt *opt,
		 struct script_error *err, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = fn_verror(model, opt ? opt->line : model->function_line,
			opt ? opt->col : model->function_col, err, fmt, ap);
	va_end(ap);
	return ret;
}

int fn_error_at(const struct gd_device *model, int line,
		struct script_error *err, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = fn_verror(model, line, 1, err, fmt, ap);
	va_end(ap);
	return ret;
}

int fn_opt_u64(const struct gd_device *model, const char *key, uint64_t def,
	       uint64_t max, int allow_suffix, uint64_t *out,
	       struct script_error *err)
{
	const struct gd_fn_opt *opt = fn_opt(model, key);
	unsigned long long v;
	char *end;

	*out = def;
	if (!opt)
		return 0;
	errno = 0;
	v = strtoull(opt->value, &end, 0);
	if (end == opt->value || errno || opt->value[0] == '-')
		return fn_opt_error(model, opt, err, "%s: expected a number, got '%s'",
				    key, opt->value);
	if (allow_suffix && *end) {
		unsigned int shift = 0;

		switch (*end) {
		case 'K': case 'k':
			shift = 10;
			break;
		case 'M': case 'm':
			shift = 20;
			break;
		case 'G': case 'g':
			shift = 30;
			break;
		}
		if (shift && v <= (~0ull >> shift)) {
			v <<= shift;
			end++;
		}
	}
	if (*end)
		return fn_opt_error(model, opt, err, "%s: junk after the number: '%s'",
				    key, end);
	if (v > max)
		return fn_opt_error(model, opt, err, "%s: %llu is more than %llu",
				    key, v, (unsigned long long)max);
	*out = v;
	return 0;
}

int fn_opt_only(const struct gd_device *model, const char *const *keys,
		struct script_error *err)
{
	size_t i, k;

	for (i = 0; i < model->n_function_opts; i++) {
		const struct gd_fn_opt *opt = &model->function_opts[i];

		for (k = 0; keys[k]; k++)
			if (!strcmp(opt->key, keys[k]))
				break;
		if (!keys[k]) {
			err->line = opt->line;
			err->col = opt->col;
			return fn_opt_error(model, opt, err, "unknown option '%s'",
					    opt->key);
		}
	}
	return 0;
}

int fn_opt_mac(const struct gd_device *model, const char *key,
	       const char *def, bool unicast, uint8_t mac[6],
	       struct script_error *err)
{
	const struct gd_fn_opt *opt = fn_opt(model, key);

	if (net_parse_mac(opt ? opt->value : def, mac))
		return fn_opt_error(model, opt, err,
				    "%s: expected six hex pairs such as %s, got '%s'",
				    key, def, opt ? opt->value : def);
	if (unicast && (mac[0] & 1))
		return fn_opt_error(model, opt, err,
				    "%s: %s is a multicast address", key,
				    opt ? opt->value : def);
	return 0;
}

int fn_opt_ipv4(const struct gd_device *model, const char *key,
		const char *def, uint8_t ip[4], struct script_error *err)
{
	const struct gd_fn_opt *opt = fn_opt(model, key);

	if (net_parse_ipv4(opt ? opt->value : def, ip))
		return fn_opt_error(model, opt, err,
				    "%s: expected an IPv4 address such as %s, got '%s'",
				    key, def, opt ? opt->value : def);
	return 0;
}

static const struct gd_alt *fn_find_alt(const struct gd_device *m, int intf,
				       uint8_t class)
{
	size_t i, k;

	for (i = 0; i < m->n_configs; i++) {
		const struct gd_config *cfg = &m->configs[i];

		for (k = 0; k < cfg->n_alts; k++) {
			const struct gd_alt *a = &cfg->alts[k];

			if (a->bAlternateSetting)
				continue;
			if (intf >= 0 ? a->bInterfaceNumber == intf :
			    a->bInterfaceClass == class)
				return a;
		}
	}
	return NULL;
}

int fn_opt_interface(const struct gd_device *model, uint8_t class,
		     const char *what, const struct gd_alt **alt,
		     struct script_error *err)
{
	const struct gd_fn_opt *o;
	uint64_t v;
	int ret;

	ret = fn_opt_u64(model, "interface", 0, 255, 0, &v, err);
	if (ret)
		return ret;
	o = fn_opt(model, "interface");
	*alt = fn_find_alt(model, o ? (int)v : -1, class);
	if (!*alt && o)
		return fn_opt_error(model, o, err, "no interface %u (alternate setting 0) in any configuration",
				    (unsigned int)v);
	if (!*alt)
		return fn_opt_error(model, NULL, err, "no %s interface (bInterfaceClass 0x%02x): add one or name it with 'interface N'",
				    what, class);
	return 0;
}

/* ---- pending URB queues ---- */

/* ---- descriptor lookups for validate/attach ---- */

const struct gd_endpoint *fn_alt_ep(const struct gd_alt *alt, int type,
				    bool in)
{
	const struct gd_endpoint *e;
	size_t i;

	for (i = 0; i < alt->n_eps; i++) {
		e = &alt->eps[i];
		if ((e->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK) == type &&
		    !!(e->bEndpointAddress & USB_DIR_IN) == in)
			return e;
	}
	return NULL;
}

int fn_ep_check_free(const struct gd_device *model,
		     const struct gd_endpoint *ep, const char *what,
		     struct script_error *err)
{
	if (ep->beh.mode == GD_EP_DEFAULT && !ep->beh.delay_ms &&
	    !ep->beh.stall_nth)
		return 0;
	return fn_opt_error(model, NULL, err,
			    "endpoint 0x%02x (line %d) is the %s, which the function serves: remove its behaviour, delay and stall-nth",
			    ep->bEndpointAddress, ep->line, what);
}

/* ---- while serving ---- */

bool fn_ep_live(const struct gdev *dev, const struct gd_endpoint *e)
{
	uint8_t a = e->bEndpointAddress;

	return dev->ep[!!(a & USB_DIR_IN)][a & USB_ENDPOINT_NUMBER_MASK].desc ==
	       e;
}

bool fn_urb_for(const struct gdev *dev, const struct urb *urb,
		const struct gd_endpoint *e)
{
	uint8_t addr = urb->ep | (urb->dir_in ? USB_DIR_IN : 0);

	return addr == e->bEndpointAddress && fn_ep_live(dev, e);
}
