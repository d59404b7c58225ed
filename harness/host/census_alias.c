// SPDX-License-Identifier: GPL-2.0
/*
 * census_alias.c - modules.alias, read for the census: every `usb:` alias
 * parsed into its fields, each module's kinds of match with the first
 * alias of each kind, the device such an alias matches, and which
 * modules' aliases match a given device (what udev would load).
 *
 * The alias format is scripts/mod/file2alias.c's do_usb_entry():
 *   usb:vVVVVpPPPPdBCDdcDCdscSCdpPRicICiscISipIPinIN
 * every field four or two upper-case hex digits or `*`, the bcdDevice
 * field a pattern of digits and [a-b] ranges, and a `*` at the end.
 */
#define _GNU_SOURCE
#include "census_int.h"
#include "modlist.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

const char *const census_kind_names[CK_N] = {
	[CK_DEVICE] = "device-id",
	[CK_VENDOR] = "vendor",
	[CK_DEVCLASS] = "device-class",
	[CK_INTFCLASS] = "interface-class",
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A field of `digits` hex digits or `*` at *p, after the word `name`. */
static int field(const char **p, const char *name, int digits, int *out)
{
	size_t n = strlen(name);
	int v = 0;

	if (strncmp(*p, name, n))
		return -EINVAL;
	*p += n;
	if (**p == '*') {
		(*p)++;
		*out = -1;
		return 0;
	}
	for (int i = 0; i < digits; i++) {
		int h = hexval((*p)[i]);

		if (h < 0)
			return -EINVAL;
		v = v * 16 + h;
	}
	*p += digits;
	*out = v;
	return 0;
}

int census_alias_parse(const char *pattern, struct census_alias *a)
{
	const char *p = pattern, *dc;
	size_t n;

	memset(a, 0, sizeof(*a));
	if (strlen(pattern) >= sizeof(a->pattern) ||
	    strncmp(p, "usb:", 4))
		return -EINVAL;
	strcpy(a->pattern, pattern);
	p += 4;
	if (field(&p, "v", 4, &a->vid) || field(&p, "p", 4, &a->pid) ||
	    *p != 'd')
		return -EINVAL;
	p++;
	dc = strstr(p, "dc");
	if (!dc)
		return -EINVAL;
	n = (size_t)(dc - p);
	if (!n || n >= sizeof(a->bcd))
		return -EINVAL;
	memcpy(a->bcd, p, n);
	a->bcd[n] = '\0';
	p = dc;
	if (field(&p, "dc", 2, &a->dc) || field(&p, "dsc", 2, &a->dsc) ||
	    field(&p, "dp", 2, &a->dp) || field(&p, "ic", 2, &a->ic) ||
	    field(&p, "isc", 2, &a->isc) || field(&p, "ip", 2, &a->ip) ||
	    field(&p, "in", 2, &a->in))
		return -EINVAL;
	if (*p == '*')
		p++;
	return *p ? -EINVAL : 0;
}

enum census_kind census_alias_kind(const struct census_alias *a)
{
	if (a->vid >= 0)
		return a->pid >= 0 ? CK_DEVICE : CK_VENDOR;
	return a->dc >= 0 ? CK_DEVCLASS : CK_INTFCLASS;
}

/* The lowest bcdDevice the pattern allows: digits as written, the first
 * of each [a-b] range, zeros after a `*`. */
static int bcd_of(const char *pat)
{
	int v = 0, digits = 0;

	while (*pat && *pat != '*' && digits < 4) {
		int h;

		if (*pat == '[') {
			h = hexval(pat[1]);
			pat = strchr(pat, ']');
			if (!pat || h < 0)
				return -1;
		} else {
			h = hexval(*pat);
			if (h < 0)
				return -1;
		}
		v = v * 16 + h;
		digits++;
		pat++;
	}
	while (digits++ < 4)
		v *= 16;
	return v;
}

void census_dev_modalias(const struct census_dev *d, int i, char *buf,
			 size_t size)
{
	snprintf(buf, size,
		 "usb:v%04Xp%04Xd%04Xdc%02Xdsc%02Xdp%02Xic%02Xisc%02Xip%02Xin%02X",
		 d->vid, d->pid, d->bcd, d->dc, d->dsc, d->dp, d->ic, d->isc,
		 d->ip, i);
}

static int or_default(int v, int def)
{
	return v >= 0 ? v : def;
}

static int dev_of(const struct census_alias *a, int vid, int pid,
		  struct census_dev *d)
{
	memset(d, 0, sizeof(*d));
	d->vid = vid;
	d->pid = pid;
	d->bcd = bcd_of(a->bcd);
	if (d->bcd < 0)
		return -ERANGE;
	/* device class 0 unless the alias names one: the kernel does not
	 * match interface fields of a vendor-specific (ff) device for an
	 * entry without a vendor */
	d->dc = or_default(a->dc, 0);
	d->dsc = or_default(a->dsc, 0);
	d->dp = or_default(a->dp, 0);
	d->ic = or_default(a->ic, 0xff);
	d->isc = or_default(a->isc, a->ic >= 0 ? 0 : 0xff);
	d->ip = or_default(a->ip, a->ic >= 0 ? 0 : 0xff);
	d->n_intf = a->in >= 0 ? a->in + 1 : 1;
	if (d->n_intf > CENSUS_INTF_MAX)
		return -ERANGE;
	d->target = d->n_intf - 1;
	return 0;
}

int census_dev_of(const struct census_alias *a, int pid, struct census_dev *d)
{
	return dev_of(a, or_default(a->vid, CENSUS_VID), or_default(a->pid, pid),
		      d);
}

bool census_alias_matches(const struct census_alias *a,
			  const struct census_dev *d)
{
	char ma[96];

	census_dev_modalias(d, d->target, ma, sizeof(ma));
	return !fnmatch(a->pattern, ma, 0);
}

bool census_module_matches(const struct census_aliases *al, const char *mod,
			   const struct census_dev *d)
{
	for (int k = 0; k < al->n; k++)
		if (!strcmp(al->mod[k], mod) &&
		    census_alias_matches(&al->v[k], d))
			return true;
	return false;
}

/* A value of an 8-bit field that the alias's value v does not match. */
static int other_than(int v)
{
	return v == 0xff ? 0xfe : 0xff;
}

int census_twin_of(const struct census_alias *a, int pid,
		   struct census_dev *t)
{
	int ret = dev_of(a, CENSUS_VID, pid, t);

	if (ret)
		return ret;
	if (a->dc >= 0 && a->dsc >= 0)
		t->dsc = other_than(a->dsc);
	else if (a->dc >= 0 && a->dp >= 0)
		t->dp = other_than(a->dp);
	if (a->ic >= 0 && a->isc >= 0)
		t->isc = other_than(a->isc);
	else if (a->ic >= 0 && a->ip >= 0)
		t->ip = other_than(a->ip);
	return 0;
}

static bool may_match(const struct census_alias *a,
		      const struct census_dev *d)
{
	return (a->vid < 0 || a->vid == d->vid) &&
	       (a->pid < 0 || a->pid == d->pid) &&
	       (a->dc < 0 || a->dc == d->dc) &&
	       (a->ic < 0 || a->ic == d->ic);
}

int census_matching(const struct census_aliases *al,
		    const struct census_dev *d, struct census_name *mods,
		    int max)
{
	int n = 0;

	for (int k = 0; k < al->n; k++) {
		const struct census_alias *a = &al->v[k];
		bool hit = false;

		if (!may_match(a, d))
			continue;
		for (int i = 0; i < d->n_intf && !hit; i++) {
			char ma[96];

			census_dev_modalias(d, i, ma, sizeof(ma));
			hit = !fnmatch(a->pattern, ma, 0);
		}
		if (!hit)
			continue;
		for (int j = 0; j < n; j++)
			if (!strcmp(mods[j].s, al->mod[k]))
				hit = false;
		if (hit && n < max)
			snprintf(mods[n++].s, CENSUS_NAME_MAX, "%s", al->mod[k]);
	}
	return n;
}

static int cmp_module(const void *x, const void *y)
{
	return strcmp(((const struct census_module *)x)->name,
		      ((const struct census_module *)y)->name);
}

static struct census_module *find_module(struct census_aliases *al,
					 const char *name)
{
	for (int i = 0; i < al->n_mod; i++)
		if (!strcmp(al->m[i].name, name))
			return &al->m[i];
	return NULL;
}

static int add_alias(struct census_aliases *al, const char *pat,
		     const char *mod, bool builtin)
{
	struct census_alias a, *nv;
	struct census_module *m;
	char (*nm)[CENSUS_NAME_MAX];
	enum census_kind k;

	if (census_alias_parse(pat, &a))
		return 0;	/* not a usb: alias of this format */
	nv = realloc(al->v, sizeof(*nv) * (size_t)(al->n + 1));
	if (!nv)
		return -ENOMEM;
	al->v = nv;
	nm = realloc(al->mod, sizeof(*nm) * (size_t)(al->n + 1));
	if (!nm)
		return -ENOMEM;
	al->mod = nm;
	al->v[al->n] = a;
	snprintf(al->mod[al->n], CENSUS_NAME_MAX, "%s", mod);
	modlist_norm(al->mod[al->n]);
	al->n++;

	m = find_module(al, al->mod[al->n - 1]);
	if (!m) {
		struct census_module *mm = realloc(al->m, sizeof(*mm) *
						   (size_t)(al->n_mod + 1));

		if (!mm)
			return -ENOMEM;
		al->m = mm;
		m = &al->m[al->n_mod++];
		memset(m, 0, sizeof(*m));
		snprintf(m->name, sizeof(m->name), "%s", al->mod[al->n - 1]);
		m->builtin = builtin;
	}
	m->n_alias++;
	k = census_alias_kind(&a);
	if (!m->has[k]) {
		m->has[k] = true;
		m->kind[k] = a;
	}
	return 0;
}

static int read_list(const char *root, const char *kver, const char *list,
		     bool builtin, struct census_aliases *al)
{
	FILE *f = modlist_open(root, kver, list);
	char line[1024];
	int ret = 0;

	if (!f)
		return builtin ? 0 : -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		char pat[256], mod[CENSUS_NAME_MAX];

		if (sscanf(line, "alias %255s %63s", pat, mod) == 2 &&
		    !strncmp(pat, "usb:", 4))
			ret = add_alias(al, pat, mod, builtin);
	}
	fclose(f);
	return ret;
}

int census_aliases_read(const char *root, const char *kver,
			struct census_aliases *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = read_list(root, kver, "modules.alias", false, out);
	if (!ret)
		ret = read_list(root, kver, "modules.builtin.alias", true, out);
	if (ret) {
		census_aliases_free(out);
		return ret;
	}
	qsort(out->m, (size_t)out->n_mod, sizeof(*out->m), cmp_module);
	return 0;
}

void census_aliases_free(struct census_aliases *al)
{
	free(al->v);
	free(al->mod);
	free(al->m);
	memset(al, 0, sizeof(*al));
}
