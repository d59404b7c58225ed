/* SPDX-License-Identifier: GPL-2.0 */
/*
 * census_int.h - `usbrig census`: what every USB driver of a kernel does
 * with a device it claims, through its id table and through new_id.
 *
 *   census_alias.c   modules.alias -> each module's kinds of match, with
 *                    one alias of each kind to shape a device after
 *   census_gadget.c  a gadget script that such an alias matches
 *   census.c         the command: generate one scenario per module, run
 *                    them in guests (a child `usbrig`), read what came back
 *   census_report.c  the guest's records -> outcomes; Markdown, JSON,
 *                    JUnit; the comparison with a baseline
 *   census-probe.sh  the guest side (embedded at build time)
 *
 * docs/census.md says what the outcomes mean.
 */
#ifndef USBRIG_CENSUS_INT_H
#define USBRIG_CENSUS_INT_H

#include <stdbool.h>
#include <stdio.h>

#define CENSUS_NAME_MAX		64
#define CENSUS_INTF_MAX		5	/* interfaces 0..4: `in` up to 04 */
#define CENSUS_VID		0x1209	/* pid.codes: ids no table lists */
#define CENSUS_PID_BASE		0xce00
/*
 * What census-probe.sh's `reset` marks in the kernel log before it ends a
 * boot in which a device never enumerated (its NODEV_RESET): that crash is
 * the census's own, no kernel report of the module's.
 */
#define CENSUS_NODEV_RESET \
	"no device enumerated; ending this boot for a fresh guest"

/* The kinds of match an alias makes (one gadget each per module). */
enum census_kind {
	CK_DEVICE,	/* vendor and product (bcdDevice range, maybe class) */
	CK_VENDOR,	/* vendor only, with interface class fields */
	CK_DEVCLASS,	/* device class, any vendor */
	CK_INTFCLASS,	/* interface class (and number), any vendor */
	CK_N
};

/* One `alias usb:...` line, parsed; -1 for a wildcard field. */
struct census_alias {
	char pattern[192];
	int vid, pid;
	char bcd[24];		/* the d field as written ("*": any) */
	int dc, dsc, dp;
	int ic, isc, ip, in;
};

struct census_module {
	char name[CENSUS_NAME_MAX];
	bool builtin;
	bool has[CK_N];
	struct census_alias kind[CK_N];	/* the first alias of each kind */
	int n_alias;
};

struct census_aliases {
	struct census_alias *v;		/* every usb: alias, file order */
	char (*mod)[CENSUS_NAME_MAX];	/* the module of v[i] */
	int n;
	struct census_module *m;	/* sorted by name */
	int n_mod;
};

/* The device a census gadget shows (census_gadget.c builds it). */
struct census_dev {
	int vid, pid, bcd;
	int dc, dsc, dp;
	int n_intf;
	int ic, isc, ip;	/* of every interface */
	int target;		/* the interface the alias is about */
};

extern const char *const census_kind_names[CK_N];

/* ---- census_alias.c ---- */
/* Parse one alias pattern ("usb:v..."); 0 or -EINVAL. */
int census_alias_parse(const char *pattern, struct census_alias *a);
enum census_kind census_alias_kind(const struct census_alias *a);
/* Read ROOT/lib/modules/KVER/modules.alias and modules.builtin.alias. */
int census_aliases_read(const char *root, const char *kver,
			struct census_aliases *out);
void census_aliases_free(struct census_aliases *al);
/* The device of alias a: its ids, CENSUS_VID and pid where it leaves them
 * open.  0, or -ERANGE when the alias asks for what a census device
 * cannot be (an interface number past CENSUS_INTF_MAX). */
int census_dev_of(const struct census_alias *a, int pid, struct census_dev *d);
/*
 * The new_id twin of a's device: ids CENSUS_VID:pid, and for a class match the
 * class kept but what else the alias names (subclass or protocol)
 * changed, so that only new_id, whose class field is the interface
 * class, can match it.  When the alias names the class alone, the twin
 * still matches it (census_alias_matches() tells).
 */
int census_twin_of(const struct census_alias *a, int pid,
		   struct census_dev *t);
/* Does a match d's target interface? */
bool census_alias_matches(const struct census_alias *a,
			  const struct census_dev *d);
/* Does any alias of module mod match d's target interface?  (A twin may
 * escape its own alias and still be matched by another of the module's:
 * usbcore's hub entry for Genesys Logic hubs and its entry for any hub.) */
bool census_module_matches(const struct census_aliases *al, const char *mod,
			   const struct census_dev *d);
/* The modalias of interface i of d. */
void census_dev_modalias(const struct census_dev *d, int i, char *buf,
			 size_t size);
struct census_name {
	char s[CENSUS_NAME_MAX];
};

/* Does any alias of al match any interface of d?  The modules that match
 * (each once) go to mods[0..max-1]; returns how many. */
int census_matching(const struct census_aliases *al,
		    const struct census_dev *d, struct census_name *mods,
		    int max);

/* census-probe.sh, built in by the Makefile (build/gen/) */
extern const char census_probe_sh[];

/* ---- census_gadget.c ---- */
/* Write d as a gadget script; 0 or -errno. */
int census_gadget_write(FILE *f, const struct census_dev *d,
			const char *title);

#endif /* USBRIG_CENSUS_INT_H */
