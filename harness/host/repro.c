// SPDX-License-Identifier: GPL-2.0
/*
 * repro.c - `usbrig repro DUMP`: what does the guest kernel bind to the
 * device of a bug report?
 *
 *  1. usbrig-import turns DUMP into a gadget script (WORK/NAME.gadget);
 *     `usbrig-gadget --dump` gives its descriptors back as bytes.
 *  2. The guest has no udev: the modules whose modules.alias patterns
 *     match an interface's modalias (what udev would load) are found here
 *     and loaded before the attach, so what binds is what the static id
 *     tables say.
 *  3. A scenario (WORK/NAME.scenario) attaches the device, writes new_id
 *     for --driver, and leaves every observation in one guest file, which
 *     a `save` step brings back: interface states after each phase,
 *     the new_id write's result, the usb drivers and their modules, dmesg.
 *     It is run by a child `usbrig`, so the run machinery (boots, crash
 *     watch, deadlines) is the suite's own.  Every step of it passes
 *     whatever the kernel does (`status any`, `attach no-wait`): a failed
 *     step would skip the save.
 *  4. The saved file and the child's KTAP (crash reports of a guest that
 *     died) become the report, the verdict against --expect, and with
 *     --out a scenario asserting what was seen (repro_report.c).
 *
 * Exit: 0 the --expect outcome (without --expect: it ran), 1 another
 * outcome, 125 could not test (any usage error too: `git bisect run`
 * skips such a commit instead of calling it bad).
 */
#define _GNU_SOURCE
#include "repro_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/plan.h"
#include "../common/fsutil.h"
#include "initramfs.h"
#include "modlist.h"
#include "scenario.h"


void repro_err(const char *fmt, ...)
{
	va_list ap;

	fputs("usbrig repro: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static double elapsed(const struct repro *rp)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - rp->t0.tv_sec) +
	       (double)(t.tv_nsec - rp->t0.tv_nsec) / 1e9;
}

bool repro_is_name(const char *s)
{
	if (!*s || strlen(s) >= 64)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

/* ---- child processes ---- */

int repro_copy_file(const char *from, const char *to)
{
	size_t len;
	char *buf = fs_read_file(from, REPRO_MAX_FILE, &len);
	FILE *f;
	int ret = 0;

	if (!buf)
		return -errno;
	f = fopen(to, "w");
	if (!f) {
		ret = -errno;
		free(buf);
		return ret;
	}
	if (fwrite(buf, 1, len, f) != len)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -EIO;
	free(buf);
	return ret;
}

/* ---- 1. import ---- */

static int hexbytes(const char *s, unsigned char *out, int max)
{
	int n = 0;

	while (*s && n < max) {
		char *end;
		unsigned long v;

		while (*s == ' ')
			s++;
		if (!isxdigit((unsigned char)*s))
			break;
		v = strtoul(s, &end, 16);
		if (end == s || v > 0xff)
			break;
		out[n++] = (unsigned char)v;
		s = end;
	}
	return n;
}

/* The first configuration's interfaces (alternate setting 0). */
static void parse_config(struct repro_dev *d, const unsigned char *b, int n)
{
	int off = 0;

	if (n < 9)
		return;
	d->cfg = b[5];
	while (off + 2 <= n && b[off] >= 2) {
		if (b[off + 1] == 4 && b[off] >= 9 && off + 9 <= n &&
		    b[off + 3] == 0 && d->n_intf < REPRO_INTF_MAX) {
			struct repro_intf *it = &d->intf[d->n_intf++];

			it->num = b[off + 2];
			it->cls = b[off + 5];
			it->sub = b[off + 6];
			it->proto = b[off + 7];
		}
		off += b[off];
	}
}

/* The descriptors of the imported gadget script, as it serves them. */
int repro_read_gadget(struct repro *rp)
{
	char out[PATH_MAX * 2], err[PATH_MAX * 2], gbin[PATH_MAX * 2];
	char *const argv[] = { gbin, "--dump", rp->gadget, NULL };
	unsigned char b[4096];
	struct repro_dev *d = &rp->dev;
	bool have_dev = false, have_cfg = false;
	char *text, *line, *save = NULL;
	int ret, i, n;

	snprintf(gbin, sizeof(gbin), "%s/usbrig-gadget", rp->bin_dir);
	snprintf(out, sizeof(out), "%s/gadget-dump.txt", rp->work);
	snprintf(err, sizeof(err), "%s/gadget-dump.err", rp->work);
	ret = fs_run_cmd(argv, out, err);
	if (ret) {
		char *e = fs_read_file(err, REPRO_MAX_FILE, NULL);

		repro_err("%s does not load in usbrig-gadget (%s): %s",
			rp->gadget, ret < 0 ? strerror(-ret) : "exit status",
			e ? e : "");
		free(e);
		return -EINVAL;
	}
	text = fs_read_file(out, REPRO_MAX_FILE, NULL);
	if (!text)
		return -errno;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "device: ", 8) && !have_dev) {
			n = hexbytes(line + 8, b, (int)sizeof(b));
			if (n < 18)
				continue;
			d->vid = (unsigned int)(b[8] | b[9] << 8);
			d->pid = (unsigned int)(b[10] | b[11] << 8);
			d->bcd = (unsigned int)(b[12] | b[13] << 8);
			d->cls = b[4];
			d->sub = b[5];
			d->proto = b[6];
			have_dev = true;
		} else if (!strncmp(line, "config 0: ", 10) && !have_cfg) {
			n = hexbytes(line + 10, b, (int)sizeof(b));
			parse_config(d, b, n);
			have_cfg = true;
		}
	}
	free(text);
	if (!have_dev) {
		repro_err("%s: no device descriptor in `usbrig-gadget --dump`",
			rp->gadget);
		return -EINVAL;
	}
	for (i = 0; i < d->n_intf; i++)
		snprintf(d->alias[i], sizeof(d->alias[i]),
			 "usb:v%04Xp%04Xd%04Xdc%02Xdsc%02Xdp%02Xic%02Xisc%02Xip%02Xin%02X",
			 d->vid, d->pid, d->bcd, d->cls,
			 d->sub, d->proto, d->intf[i].cls, d->intf[i].sub,
			 d->intf[i].proto, d->intf[i].num);
	return 0;
}

/* What the reporter saw bound, from `usbrig-import --list` (informative). */
static void read_reporter(struct repro *rp, const char *imp)
{
	char out[PATH_MAX * 2], err[PATH_MAX * 2], id[16];
	char *const argv[] = { (char *)imp, "--list", (char *)rp->o.dump, NULL };
	char *text, *line, *save = NULL;

	snprintf(out, sizeof(out), "%s/import-list.txt", rp->work);
	snprintf(err, sizeof(err), "%s/import-list.err", rp->work);
	if (fs_run_cmd(argv, out, err))
		return;
	text = fs_read_file(out, REPRO_MAX_FILE, NULL);
	if (!text)
		return;
	snprintf(id, sizeof(id), " %04x:%04x ", rp->dev.vid, rp->dev.pid);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, " drivers=");

		if (!strstr(line, id) || !p)
			continue;
		p += 9;
		snprintf(rp->reporter, sizeof(rp->reporter), "%.*s",
			 (int)strcspn(p, " "), p);
		while (*rp->reporter &&
		       rp->reporter[strlen(rp->reporter) - 1] == ',')
			rp->reporter[strlen(rp->reporter) - 1] = '\0';
		break;
	}
	free(text);
}

static int import_dump(struct repro *rp)
{
	char imp[PATH_MAX * 2], tmp[PATH_MAX * 2], err[PATH_MAX * 2];
	char *argv[8];
	int argc = 0, ret;
	char *e;

	snprintf(imp, sizeof(imp), "%s/usbrig-import", rp->bin_dir);
	snprintf(tmp, sizeof(tmp), "%s/import.gadget", rp->work);
	snprintf(err, sizeof(err), "%s/import.err", rp->work);
	argv[argc++] = imp;
	argv[argc++] = (char *)rp->o.dump;
	if (rp->o.select) {
		argv[argc++] = "--select";
		argv[argc++] = (char *)rp->o.select;
	}
	argv[argc++] = "-o";
	argv[argc++] = tmp;
	argv[argc] = NULL;
	if (ends_with(rp->o.dump, ".gadget")) {
		/* a gadget script already (an import edited by hand) */
		ret = repro_copy_file(rp->o.dump, tmp);
		if (ret) {
			repro_err("%s: %s", rp->o.dump, strerror(-ret));
			return ret;
		}
		goto imported;
	}
	ret = fs_run_cmd(argv, NULL, err);
	e = fs_read_file(err, REPRO_MAX_FILE, NULL);
	if (ret) {
		/* its own `file:line: what` first, as it said it */
		if (e && *e)
			fputs(e, stderr);
		if (ret < 0)
			repro_err("cannot run %s: %s (`make %s` builds it)",
				imp, ret == -ENOEXEC ? "missing or not a "
				"program" : strerror(-ret),
				"build/usbrig-import");
		else
			repro_err("usbrig-import could not read %s (exit %d)",
				rp->o.dump, ret);
		free(e);
		return -EINVAL;
	}
	free(e);
imported:
	snprintf(rp->gadget, sizeof(rp->gadget), "%s", tmp);
	ret = repro_read_gadget(rp);
	if (ret)
		return ret;
	if (rp->o.name)
		snprintf(rp->name, sizeof(rp->name), "%s", rp->o.name);
	else
		snprintf(rp->name, sizeof(rp->name), "repro-%04x-%04x%s%.40s",
			 rp->dev.vid, rp->dev.pid, rp->o.driver ? "-" : "",
			 rp->o.driver ? rp->o.driver : "");
	/* the guest names gadget files by basename: make it ours */
	snprintf(rp->gadget, sizeof(rp->gadget), "%s/%s.gadget", rp->work,
		 rp->name);
	if (rename(tmp, rp->gadget)) {
		repro_err("%s: %s", rp->gadget, strerror(errno));
		return -errno;
	}
	read_reporter(rp, imp);
	return 0;
}

/* ---- 2. the guest kernel and its modules ---- */

static FILE *open_modlist(const struct repro *rp, const char *list)
{
	return modlist_open(rp->k.mods_root, rp->k.kver, list);
}

static int module_kind(const struct repro *rp, const char *name)
{
	return modlist_kind(rp->k.mods_root, rp->k.kver, name);
}

static void add_module(struct repro *rp, const char *m)
{
	int i;

	for (i = 0; i < rp->n_modules; i++)
		if (!strcmp(rp->modules[i], m))
			return;
	if (rp->n_modules < REPRO_MODULES_MAX)
		snprintf(rp->modules[rp->n_modules++], sizeof(rp->modules[0]),
			 "%s", m);
}

/* The modules udev would load for the interfaces: modules.alias. */
static int match_aliases(struct repro *rp)
{
	FILE *f = open_modlist(rp, "modules.alias");
	char line[1024];
	int i;

	if (!f) {
		repro_err("%s/lib/modules/%s/modules.alias: %s (--modules DIR?)",
			rp->k.mods_root, rp->k.kver, strerror(errno));
		return -ENOENT;
	}
	while (fgets(line, sizeof(line), f)) {
		char pat[512], mod[128];

		if (sscanf(line, "alias %511s %127s", pat, mod) != 2 ||
		    strncmp(pat, "usb:", 4))
			continue;
		for (i = 0; i < rp->dev.n_intf; i++)
			if (!fnmatch(pat, rp->dev.alias[i], 0) &&
			    module_kind(rp, mod) == 1)
				add_module(rp, mod);
	}
	fclose(f);
	rp->n_alias = rp->n_modules;
	return 0;
}

/*
 * The module of --driver NAME (--module overrides): NAME itself, `-` as
 * `_`; the usb-serial generic driver lives in usbserial; a usb-serial
 * driver named after its module plus a digit (option1) in that module.
 */
static int driver_module(struct repro *rp)
{
	char cand[64];
	int k;

	rp->drv_module[0] = '\0';
	if (rp->o.module) {
		snprintf(cand, sizeof(cand), "%s", rp->o.module);
	} else if (!strcmp(rp->o.driver, "generic") ||
		   !strcmp(rp->o.driver, "usbserial_generic")) {
		snprintf(cand, sizeof(cand), "usbserial");
	} else {
		snprintf(cand, sizeof(cand), "%s", rp->o.driver);
	}
	modlist_norm(cand);
	k = module_kind(rp, cand);
	if (k == 0 && !rp->o.module) {
		size_t n = strlen(cand);

		while (n && isdigit((unsigned char)cand[n - 1]))
			cand[--n] = '\0';
		k = n ? module_kind(rp, cand) : 0;
	}
	if (k < 0) {
		repro_err("%s/lib/modules/%s/modules.dep: cannot read it",
			rp->k.mods_root, rp->k.kver);
		return -ENOENT;
	}
	if (k == 0) {
		repro_err("--driver %s: no module %s for %s, neither loadable nor "
			"built in (name it with --module MOD)", rp->o.driver,
			cand, rp->k.kver);
		return -ENOENT;
	}
	if (k == 1) {
		snprintf(rp->drv_module, sizeof(rp->drv_module), "%s", cand);
		add_module(rp, cand);
	}
	return 0;
}

/*
 * The new_id line.  The class field rule:
 *  - --class HH or --class none decides;
 *  - a device vendor-specific at device level (bDeviceClass ff) gets no
 *    class: the vendor owns every interface, as the static tables'
 *    USB_DEVICE() entries say;
 *  - otherwise, when the configuration has interfaces of more than one
 *    class and some are vendor-specific, class ff: a driver taught a new
 *    id must take the vendor interfaces and leave the class ones (CDC,
 *    mass storage) to their class drivers, as USB_DEVICE_INTERFACE_CLASS(
 *    vid, pid, 0xff) does in option's table;
 *  - otherwise no class (one class only: nothing to choose; several
 *    standard classes: which one cannot be guessed, --class says it).
 */
static int newid_value(struct repro *rp)
{
	const struct repro_dev *d = &rp->dev;
	bool mixed = false, vendor = false;
	int cls = -1, i;

	for (i = 0; i < d->n_intf; i++) {
		if (d->intf[i].cls != d->intf[0].cls)
			mixed = true;
		if (d->intf[i].cls == 0xff)
			vendor = true;
	}
	if (rp->o.class_arg && !strcmp(rp->o.class_arg, "none")) {
		snprintf(rp->class_note, sizeof(rp->class_note),
			 "no class field (--class none)");
	} else if (rp->o.class_arg) {
		char *end;
		unsigned long v = strtoul(rp->o.class_arg, &end, 16);

		if (!*rp->o.class_arg || *end || v > 0xff) {
			repro_err("--class: expected a hex class 00..ff or none, "
				"got '%s'", rp->o.class_arg);
			return -EINVAL;
		}
		cls = (int)v;
		snprintf(rp->class_note, sizeof(rp->class_note),
			 "class field %02x (--class)", cls);
	} else if (d->cls == 0xff) {
		snprintf(rp->class_note, sizeof(rp->class_note),
			 "no class field: the device is vendor-specific at "
			 "device level");
	} else if (mixed && vendor) {
		cls = 0xff;
		snprintf(rp->class_note, sizeof(rp->class_note),
			 "class field ff: the vendor-specific interfaces only, "
			 "the class ones stay with their class drivers");
	} else if (mixed) {
		snprintf(rp->class_note, sizeof(rp->class_note),
			 "no class field: interfaces of several standard "
			 "classes (--class HH picks one)");
	} else {
		snprintf(rp->class_note, sizeof(rp->class_note),
			 "no class field: every interface has class %02x",
			 d->n_intf ? d->intf[0].cls : 0);
	}
	if (cls > 0)
		snprintf(rp->newid_value, sizeof(rp->newid_value),
			 "%04x %04x %02x", d->vid, d->pid, cls);
	else
		snprintf(rp->newid_value, sizeof(rp->newid_value), "%04x %04x",
			 d->vid, d->pid);
	return 0;
}

/* ---- 3. the scenario ---- */

/*
 * The guest side: busybox sh.  `probe mark WHAT` logs a marker in the
 * kernel log; `probe attach VID PID` waits for the device to enumerate
 * on vhci_hcd and records its interfaces once they settle; `probe newid
 * VID PID DRIVER MODULE VALUE` finds DRIVER's new_id (usb-serial bus
 * first, then usb, then the usb-serial driver of MODULE: option ->
 * option1), writes VALUE in one write(2) and records the result and the
 * interfaces again; `probe log` adds the usb drivers with their modules
 * and the kernel log.  Everything goes to REPRO_GUEST_REPORT.
 */
static const char guest_script[] =
"#!/bin/sh\n"
"# usbrig repro, guest side: written by harness/host/repro.c\n"
"out=" REPRO_GUEST_REPORT "\n"
"mkdir -p ${out%/*}\n"
"find_dev() {\n"
"	for d in /sys/bus/usb/devices/*; do\n"
"		[ -f $d/idVendor ] || continue\n"
"		[ \"$(cat $d/idVendor)\" = $1 ] || continue\n"
"		[ \"$(cat $d/idProduct)\" = $2 ] || continue\n"
"		case \"$(readlink -f $d)\" in\n"
"		*vhci_hcd*) echo ${d##*/}; return 0;;\n"
"		esac\n"
"	done\n"
"	return 1\n"
"}\n"
"snap() {\n"
"	for i in /sys/bus/usb/devices/$1/$1:*; do\n"
"		[ -f $i/bInterfaceNumber ] || continue\n"
"		drv=none\n"
"		[ -L $i/driver ] && drv=$(basename $(readlink $i/driver))\n"
"		echo \"$(cat $i/bInterfaceNumber) $(cat $i/bInterfaceClass) ${i##*/} $drv\"\n"
"	done\n"
"}\n"
"settle() {\n"
"	a=$(snap $1)\n"
"	n=0\n"
"	while [ $n -lt 20 ]; do\n"
"		sleep 0.5\n"
"		b=$(snap $1)\n"
"		[ \"$a\" = \"$b\" ] && break\n"
"		a=$b\n"
"		n=$((n + 1))\n"
"	done\n"
"	echo \"state $2 $1\"\n"
"	snap $1 | sed \"s/^/intf $2 /\"\n"
"}\n"
"case $1 in\n"
"mark)\n"
"	echo \"usbrig-repro: $2\" >/dev/kmsg\n"
"	;;\n"
"attach)\n"
"	n=0\n"
"	while [ $n -lt 80 ]; do\n"
"		dev=$(find_dev $2 $3) && [ -L /sys/bus/usb/devices/$dev/driver ] && break\n"
"		sleep 0.5\n"
"		n=$((n + 1))\n"
"	done\n"
"	if dev=$(find_dev $2 $3); then\n"
"		echo \"device $dev\" >>$out\n"
"		settle $dev attach >>$out\n"
"	else\n"
"		echo \"no-device\" >>$out\n"
"	fi\n"
"	;;\n"
"newid)\n"
"	dev=$(find_dev $2 $3)\n"
"	drv=$4 mod=$5 val=$6 p= many=\n"
"	if [ -e /sys/bus/usb-serial/drivers/$drv/new_id ]; then\n"
"		p=/sys/bus/usb-serial/drivers/$drv/new_id\n"
"	elif [ -e /sys/bus/usb/drivers/$drv/new_id ]; then\n"
"		p=/sys/bus/usb/drivers/$drv/new_id\n"
"	else\n"
"		for s in /sys/bus/usb-serial/drivers/*; do\n"
"			m=$(readlink $s/module)\n"
"			[ \"${m##*/}\" = \"$mod\" ] && [ -e $s/new_id ] || continue\n"
"			[ -n \"$p\" ] && many=\"$many ${s##*/}\"\n"
"			p=$s/new_id\n"
"		done\n"
"	fi\n"
"	if [ -z \"$p\" ]; then\n"
"		echo \"newid-none neither /sys/bus/usb-serial/drivers/$drv/new_id nor /sys/bus/usb/drivers/$drv/new_id exists\" >>$out\n"
"	elif [ -n \"$many\" ]; then\n"
"		echo \"newid-none module $mod has several usb-serial drivers:$many ${p%/new_id}: name one with --driver\" >>$out\n"
"	else\n"
"		echo \"usbrig-repro: new_id\" >/dev/kmsg\n"
"		err=$(printf '%s' \"$val\" 2>&1 >$p)\n"
"		echo \"newid $p $? $err\" >>$out\n"
"	fi\n"
"	[ -n \"$dev\" ] && settle $dev newid >>$out\n"
"	;;\n"
"log)\n"
"	for d in /sys/bus/usb/drivers/*; do\n"
"		m=$(readlink $d/module)\n"
"		echo \"usbdrv ${d##*/} ${m##*/}\"\n"
"	done >>$out\n"
"	echo dmesg >>$out\n"
"	dmesg >>$out\n"
"	;;\n"
"esac\n"
"exit 0\n";

static int write_text(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	int ret = 0;

	if (!f)
		return -errno;
	if (fputs(text, f) < 0)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -EIO;
	if (!ret && chmod(path, mode))
		ret = -errno;
	return ret;
}

void repro_put_run(FILE *f, const char *cmd, int within_s)
{
	char q[1024];

	if (plan_quote(q, sizeof(q), cmd) < 0)
		q[0] = '\0';
	fprintf(f, "run %s status any within %ds\n", q, within_s);
}

static int write_probe_scenario(struct repro *rp)
{
	char script[PATH_MAX * 2], cmd[512];
	FILE *f;
	int i, ret;

	snprintf(script, sizeof(script), "%s/probe.sh", rp->work);
	ret = write_text(script, guest_script, 0755);
	if (ret)
		return ret;
	snprintf(rp->scenario, sizeof(rp->scenario), "%s/%s.scenario",
		 rp->work, rp->name);
	f = fopen(rp->scenario, "w");
	if (!f)
		return -errno;
	fprintf(f, "# usbrig repro of %s: what binds, what new_id does "
		"(generated)\nname %s\ntimeout 240\ngadget g %s\nfile %s %s\n\n",
		rp->o.dump, rp->name, rp->gadget, script, REPRO_GUEST_SCRIPT);
	for (i = 0; i < rp->n_modules; i++)
		fprintf(f, "modprobe %s\n", rp->modules[i]);
	repro_put_run(f, "sh " REPRO_GUEST_SCRIPT " mark attach", 10);
	/* no-wait: a device that does not enumerate is an outcome too */
	fprintf(f, "attach g no-wait within 30s\n");
	snprintf(cmd, sizeof(cmd), "sh %s attach %04x %04x",
		 REPRO_GUEST_SCRIPT, rp->dev.vid, rp->dev.pid);
	repro_put_run(f, cmd, 70);
	if (rp->o.driver) {
		snprintf(cmd, sizeof(cmd), "sh %s newid %04x %04x %s %s '%s'",
			 REPRO_GUEST_SCRIPT, rp->dev.vid, rp->dev.pid,
			 rp->o.driver, rp->drv_module[0] ? rp->drv_module :
			 rp->o.driver, rp->newid_value);
		repro_put_run(f, cmd, 30);
	}
	repro_put_run(f, "sh " REPRO_GUEST_SCRIPT " log", 20);
	fprintf(f, "save %s report.txt\n", REPRO_GUEST_REPORT);
	if (fclose(f))
		return -EIO;
	return 0;
}

static int run_guest(struct repro *rp)
{
	char usbrig[PATH_MAX * 2], save_dir[PATH_MAX * 2];
	char ktap[PATH_MAX * 2], log[PATH_MAX * 2], saved[PATH_MAX * 3];
	char *argv[GUEST_CHILD_ARGS + 5];
	int argc = 0, ret;

	snprintf(usbrig, sizeof(usbrig), "%s/usbrig", rp->bin_dir);
	snprintf(save_dir, sizeof(save_dir), "%s/saved", rp->work);
	snprintf(ktap, sizeof(ktap), "%s/run.ktap", rp->work);
	snprintf(log, sizeof(log), "%s/run.log", rp->work);
	argv[argc++] = usbrig;
	guest_child_args(&rp->o.guest, argv, &argc);
	argv[argc++] = "--save-dir";
	argv[argc++] = save_dir;
	argv[argc++] = rp->scenario;
	argv[argc] = NULL;
	if (rp->o.verbose)
		fprintf(stderr, "usbrig repro: running %s (log %s)\n",
			rp->scenario, log);
	ret = fs_run_cmd(argv, ktap, log);
	if (ret < 0) {
		repro_err("cannot run %s: %s", usbrig, strerror(-ret));
		return ret;
	}
	snprintf(saved, sizeof(saved), "%s/%s/report.txt", save_dir, rp->name);
	repro_read_results(rp, saved, ktap);
	if (!rp->r.ran && !rp->r.n_crash) {
		char *l = fs_read_file(log, REPRO_MAX_FILE, NULL);
		const char *tail = l ? l : "";
		size_t n = strlen(tail);

		/* the last lines of the child's log say why */
		if (n > 1500)
			tail += n - 1500;
		repro_err("the guest run gave no result (usbrig exit %d): %s%s"
			"%s", ret, rp->r.child_fail, *rp->r.child_fail ?
			"\n" : "", tail);
		free(l);
		return -EIO;
	}
	return 0;
}

/* ---- main ---- */

static const char usage[] =
"usage: usbrig repro DUMP [options]\n"
"Import a device dump (usbrig-import: lsusb -v, sysfs descriptors,\n"
"debugfs devices, usbmon, pcap), attach it to a guest kernel and report\n"
"what binds to each interface, probe errors, kernel warnings; with\n"
"--driver, what new_id on that driver does.\n"
"\n"
"  --select VID:PID|BUS:DEV  the device, when the dump holds several\n"
"  --driver NAME     write new_id on NAME after the attach (usb-serial\n"
"                    drivers on their own bus)\n"
"  --module MOD      the module of --driver (default: guessed from NAME)\n"
"  --class HH|none   the new_id interface-class field (default: ff when\n"
"                    the device mixes vendor and class interfaces)\n"
"  --expect OUTCOME  repeatable; all must hold for exit 0:\n"
"                    [N:]bound:DRIVER  [N:]unbound\n"
"                    [N:]probe-error:DRIVER|*:ERRNO  crash  no-crash\n"
"                    newid:ok|ERRNO   (N: interface number; the state\n"
"                    is the last one: after new_id when --driver)\n"
"  --out DIR         write DIR/NAME.gadget and DIR/NAME.scenario\n"
"                    asserting what was seen (a regression test)\n"
"  --name NAME       the scenario's name (default repro-VID-PID[-DRIVER])\n"
"  --kernel K, --kernel-tree DIR, --modules DIR, --boot-timeout S,\n"
"  --cmdline ARGS\n"
"                    as for usbrig\n"
"  --keep            keep the work folder (build/runs/repro-*)\n"
"  -v                say more\n"
"\n"
"Exit: 0 the expected outcome (without --expect: it ran), 1 another\n"
"outcome, 125 could not test (bad options too): fit for git bisect run.\n";

enum {
	RO_SELECT = 256, RO_DRIVER, RO_MODULE, RO_CLASS, RO_EXPECT, RO_OUT,
	RO_NAME, RO_HELP,
};

static const struct option repro_long_opts[] = {
	{ "select", required_argument, NULL, RO_SELECT },
	{ "driver", required_argument, NULL, RO_DRIVER },
	{ "module", required_argument, NULL, RO_MODULE },
	{ "class", required_argument, NULL, RO_CLASS },
	{ "expect", required_argument, NULL, RO_EXPECT },
	{ "out", required_argument, NULL, RO_OUT },
	{ "name", required_argument, NULL, RO_NAME },
	GUEST_LONG_OPTIONS,
	{ "help", no_argument, NULL, RO_HELP },
	{ NULL, 0, NULL, 0 },
};

static int parse_args(int argc, char **argv, struct repro_opts *o)
{
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "v", repro_long_opts, NULL)) != -1) {
		if (guest_opt(c, optarg, &o->guest))
			continue;
		switch (c) {
		case RO_SELECT:
			o->select = optarg;
			break;
		case RO_DRIVER:
			if (!repro_is_name(optarg)) {
				repro_err("--driver: '%s' is not a driver name",
					optarg);
				return -EINVAL;
			}
			o->driver = optarg;
			break;
		case RO_MODULE:
			if (!repro_is_name(optarg)) {
				repro_err("--module: '%s' is not a module name",
					optarg);
				return -EINVAL;
			}
			o->module = optarg;
			break;
		case RO_CLASS:
			o->class_arg = optarg;
			break;
		case RO_EXPECT:
			if (o->n_expect == REPRO_EXPECT_MAX) {
				repro_err("--expect: at most %d",
					REPRO_EXPECT_MAX);
				return -EINVAL;
			}
			if (repro_parse_expect(optarg, &o->expect[o->n_expect]))
				return -EINVAL;
			o->n_expect++;
			break;
		case RO_OUT:
			o->out_dir = optarg;
			break;
		case RO_NAME:
			if (!repro_is_name(optarg)) {
				repro_err("--name: letters, digits, _ and - only");
				return -EINVAL;
			}
			o->name = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case RO_HELP:
			fputs(usage, stdout);
			exit(0);
		default:
			fputs(usage, stderr);
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		repro_err("expected one DUMP (usbrig repro --help)");
		return -EINVAL;
	}
	o->dump = argv[optind];
	if ((o->module || o->class_arg) && !o->driver) {
		repro_err("--module and --class go with --driver");
		return -EINVAL;
	}
	return 0;
}

static int make_work(struct repro *rp)
{
	char self[PATH_MAX];
	time_t tt = time(NULL);
	struct tm tm;
	ssize_t len;
	char *slash;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return -errno;
	self[len] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(rp->bin_dir, sizeof(rp->bin_dir), "%s", slash ? self : ".");
	find_root(rp->bin_dir, rp->root, sizeof(rp->root));
	localtime_r(&tt, &tm);
	snprintf(rp->work, sizeof(rp->work), "%s/runs/repro-%04d%02d%02d-"
		 "%02d%02d%02d-%d", rp->bin_dir, tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)getpid());
	return fs_mkdir_p(rp->work, 0755);
}

int repro_main(int argc, char **argv)
{
	struct repro *rp = calloc(1, sizeof(*rp));
	int ret = REPRO_EXIT_UNTESTED, i, bad = 0;

	if (!rp)
		return REPRO_EXIT_UNTESTED;
	clock_gettime(CLOCK_MONOTONIC, &rp->t0);
	if (parse_args(argc, argv, &rp->o))
		goto out_free;
	if (access(rp->o.dump, R_OK) &&
	    !(strchr(rp->o.dump, ':') &&
	      !access(strchr(rp->o.dump, ':') + 1, R_OK))) {
		repro_err("%s: %s", rp->o.dump, strerror(errno));
		goto out_free;
	}
	if (make_work(rp)) {
		repro_err("%s: %s", rp->work, strerror(errno));
		goto out_free;
	}
	if (import_dump(rp) ||
	    guest_kernel_resolve("usbrig repro", &rp->o.guest, rp->root,
				 &rp->k) ||
	    match_aliases(rp) ||
	    (rp->o.driver && (driver_module(rp) || newid_value(rp))))
		goto out;
	if (write_probe_scenario(rp)) {
		repro_err("%s: %s", rp->scenario, strerror(errno));
		goto out;
	}
	if (rp->o.verbose)
		fprintf(stderr, "usbrig repro: import and plan took %.1fs\n",
			elapsed(rp));
	if (run_guest(rp))
		goto out;
	repro_print_report(rp);
	if (rp->o.out_dir && repro_write_out(rp))
		goto out;
	for (i = 0; i < rp->o.n_expect; i++) {
		bool ok = repro_expect_holds(rp, &rp->o.expect[i]);

		printf("expect %s: %s\n", rp->o.expect[i].text,
		       ok ? "holds" : "does NOT hold");
		bad += !ok;
	}
	ret = bad ? REPRO_EXIT_BAD : REPRO_EXIT_GOOD;
	printf("verdict: %s (exit %d) after %.1fs\n", !rp->o.n_expect ?
	       "ran" : bad ? "not the expected outcome" : "the expected outcome",
	       ret, elapsed(rp));
out:
	if (ret != REPRO_EXIT_UNTESTED && !rp->o.guest.keep)
		fs_rm_rf(rp->work);
	else if (rp->work[0])
		fprintf(stderr, "usbrig repro: work folder %s\n", rp->work);
	if (ret == REPRO_EXIT_UNTESTED)
		fprintf(stderr, "usbrig repro: could not test (exit 125)\n");
	for (i = 0; i < rp->r.n_crash; i++)
		free(rp->r.crash[i]);
	free(rp->r.usbdrv);
out_free:
	if (ret == REPRO_EXIT_UNTESTED && !rp->work[0])
		fprintf(stderr, "usbrig repro: could not test (exit 125)\n");
	free(rp);
	return ret;
}
