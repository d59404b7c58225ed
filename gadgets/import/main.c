// SPDX-License-Identifier: GPL-2.0
/*
 * usbrig-import - a bug report's dump in, a gadget script out.
 *
 *   usbrig-import [FORMAT:]FILE [--select VID:PID|BUS:DEV] [-o OUT.gadget]
 *   usbrig-import --list [FORMAT:]FILE
 *
 * Exit: 0 written, 1 the input is bad (file:line: what), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

const struct imp_reader *const imp_readers[] = {
	&imp_reader_lsusb,
	&imp_reader_sysfs,
	&imp_reader_devices,
	&imp_reader_usbmon,
	&imp_reader_pcap,
	NULL,
};

const struct imp_reader *imp_reader_find(const char *name)
{
	size_t i;

	for (i = 0; imp_readers[i]; i++)
		if (!strcmp(imp_readers[i]->name, name))
			return imp_readers[i];
	return NULL;
}

/* binary formats first: their magic numbers are certain */
const struct imp_reader *imp_reader_sniff(const char *path, const uint8_t *buf,
					  size_t len)
{
	static const struct imp_reader *const order[] = {
		&imp_reader_pcap, &imp_reader_sysfs, &imp_reader_devices,
		&imp_reader_usbmon, &imp_reader_lsusb, NULL,
	};
	size_t i;

	for (i = 0; order[i]; i++)
		if (order[i]->sniff && order[i]->sniff(path, buf, len))
			return order[i];
	return NULL;
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: usbrig-import [options] [FORMAT:]FILE\n"
		"Turns a USB device's dump into a gadget script for usbrig-gadget.\n\n"
		"  -s, --select VID:PID|BUS:DEV  the device, when the dump holds several\n"
		"  -o, --output FILE             write the script there (default: stdout)\n"
		"  -n, --name NAME               the script's device name\n"
		"  -l, --list                    list the devices in the dump, write nothing\n"
		"  -V, --version                 the version\n"
		"  -h, --help                    this text\n\n"
		"FORMAT (guessed from the contents when not given):\n");
	for (i = 0; imp_readers[i]; i++)
		fprintf(f, "  %-8s %s\n", imp_readers[i]->name,
			imp_readers[i]->summary);
	fprintf(f, "\nExit status: 0 written, 1 bad input, 2 usage.\n");
}

static const char *speed_label(enum usbip_speed s)
{
	switch (s) {
	case USBIP_SPEED_LOW: return "low";
	case USBIP_SPEED_FULL: return "full";
	case USBIP_SPEED_HIGH: return "high";
	case USBIP_SPEED_SUPER: return "super";
	default: return "unknown";
	}
}

static void list_devices(const struct imp_set *set)
{
	size_t i, k;

	for (i = 0; i < set->n; i++) {
		const struct imp_dev *d = set->devs[i];
		const uint8_t *dd = d->device.data;

		printf("%03d:%03d", d->busnum, d->devnum);
		if (d->device.len >= 12)
			printf(" %02x%02x:%02x%02x", dd[9], dd[8], dd[11], dd[10]);
		else
			printf(" ????:????");
		printf(" speed=%s configs=%zu", speed_label(d->speed),
		       d->n_configs);
		if (d->driver_known) {
			printf(" drivers=");
			for (k = 0; k < GD_MAX_INTERFACES; k++)
				if (d->driver[k])
					printf("%zu:%s,", k, d->driver[k]);
		}
		printf(" at %s\n", d->where);
	}
}

/* Write all or nothing: a temporary file renamed over OUT.  OUT that
 * exists and is not a regular file (/dev/null, a FIFO, a terminal) is
 * written to as it is: renaming over it would replace the device. */
static int write_out(const char *path, const char *text)
{
	size_t n = strlen(text);
	struct stat st;
	char *tmp;
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return fwrite(text, 1, n, stdout) == n && !fflush(stdout) ?
		       0 : -EIO;
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		f = fopen(path, "w");
		if (!f)
			return -errno;
		return fwrite(text, 1, n, f) == n && !fclose(f) ? 0 : -EIO;
	}
	if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0)
		return -ENOMEM;
	f = fopen(tmp, "w");
	if (!f) {
		free(tmp);
		return -errno;
	}
	if (fwrite(text, 1, n, f) != n || fclose(f)) {
		unlink(tmp);
		free(tmp);
		return -EIO;
	}
	if (rename(tmp, path)) {
		int e = -errno;

		unlink(tmp);
		free(tmp);
		return e;
	}
	free(tmp);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "select", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "name", required_argument, NULL, 'n' },
		{ "list", no_argument, NULL, 'l' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sel = NULL, *outp = NULL, *arg, *path, *colon;
	const struct imp_reader *rd = NULL;
	struct imp_emit_opts eo = { 0 };
	struct imp_set set = { 0 };
	struct imp_error err = { "" };
	struct imp_dev *d;
	bool list = false;
	uint8_t *buf;
	char *text;
	size_t len;
	int c, ret;

	while ((c = getopt_long(argc, argv, "s:o:n:lVh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sel = optarg;
			break;
		case 'o':
			outp = optarg;
			break;
		case 'n':
			eo.name = optarg;
			break;
		case 'l':
			list = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("usbrig-import %s\n", USBRIG_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usbrig-import: expected one [FORMAT:]FILE\n");
		usage(stderr);
		return 2;
	}
	arg = argv[optind];
	path = arg;
	/* FORMAT: only when it names a reader: paths may hold ':' */
	colon = strchr(arg, ':');
	if (colon) {
		char name[16];

		if ((size_t)(colon - arg) < sizeof(name)) {
			snprintf(name, sizeof(name), "%.*s", (int)(colon - arg),
				 arg);
			rd = imp_reader_find(name);
			if (rd)
				path = colon + 1;
		}
	}
	if (imp_read_file(path, &buf, &len, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	if (!rd)
		rd = imp_reader_sniff(path, buf, len);
	if (!rd) {
		fprintf(stderr, "%s:1: cannot tell what kind of dump this is; name it as FORMAT:%s (--help lists the formats)\n",
			path, path);
		free(buf);
		return 1;
	}
	set.format = strdup(rd->name);
	set.path = strdup(path);
	ret = rd->read(path, buf, len, &set, &err);
	free(buf);
	if (ret) {
		fprintf(stderr, "%s\n", err.msg);
		imp_set_free(&set);
		return 1;
	}
	if (list) {
		list_devices(&set);
		imp_set_free(&set);
		return 0;
	}
	if (imp_select(&set, sel, &d, &err) ||
	    imp_emit(&set, d, &eo, &text, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		imp_set_free(&set);
		return 1;
	}
	ret = write_out(outp, text);
	free(text);
	imp_set_free(&set);
	if (ret) {
		fprintf(stderr, "usbrig-import: %s: %s\n", outp, strerror(-ret));
		return 1;
	}
	return 0;
}
