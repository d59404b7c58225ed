/* SPDX-License-Identifier: GPL-2.0 */
/*
 * import.h - bug-report dumps in, gadget scripts out.
 *
 * Each format reader (one file each: lsusb.c, sysfs.c, devices.c,
 * usbmon.c, pcap.c) turns its input into a set of struct imp_dev: the
 * device's descriptors as the bytes the host saw, plus what the dump says
 * beyond them (string texts, class and vendor control transfers, IN data,
 * the driver the reporter saw bound).  emit.c turns one imp_dev into a
 * gadget script and proves, by parsing that script and generating its
 * descriptors, that the bytes come back equal.
 *
 * Readers do no guessing silently: every value not read from the dump is
 * recorded with imp_note(), and the note becomes a comment in the script.
 * Errors are "file:line: what is wrong" (line 0 for binary input: the
 * message names the byte offset or frame instead), returned as -EINVAL.
 */
#ifndef USBRIG_IMPORT_H
#define USBRIG_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "util.h"

#define IMP_MAX_DEVICES		128	/* devices in one dump */
#define IMP_MAX_CTRLS		1024	/* recorded control transfers per device */
#define IMP_MAX_NOTES		256
#define IMP_MAX_SEQS		30	/* IN endpoints with recorded data */
#define IMP_MAX_FILE		(64u << 20)	/* largest input read */

struct imp_error {
	char msg[512];		/* "file:line: what is wrong" */
};

/* a growable byte buffer; every append is bounded by a hard maximum */
struct imp_blob {
	uint8_t *data;
	size_t len;
	size_t cap;
};

/* One control transfer the device answered, in dump order.  For a
 * standard GET_DESCRIPTOR of the device's own descriptors, readers fill
 * struct imp_dev's descriptor blobs instead. */
struct imp_ctrl {
	uint8_t setup[8];	/* as on the wire: little-endian fields */
	bool stall;		/* the device answered STALL (-EPIPE) */
	struct imp_blob data;	/* IN: the bytes returned (may be short) */
	char *where;		/* "file:line" or "file: frame N" */
};

/* IN data recorded on one bulk or interrupt endpoint, one packet per URB */
struct imp_seq {
	uint8_t ep;			/* bEndpointAddress, bit 7 set */
	struct imp_blob *packets;
	size_t n_packets;
};

struct imp_dev {
	char *where;			/* "file:line" where the device starts */
	int busnum;			/* -1: unknown */
	int devnum;			/* -1: unknown */
	enum usbip_speed speed;		/* USBIP_SPEED_UNKNOWN: emit.c guesses */

	/* descriptors as the host read them; len 0 = not in the dump */
	struct imp_blob device;			/* 18 bytes */
	struct imp_blob configs[GD_MAX_CONFIGS];	/* each wTotalLength bytes */
	size_t n_configs;
	struct imp_blob bos;
	struct imp_blob qualifier;		/* DEVICE_QUALIFIER, 10 bytes */
	/* true where a reader knows a descriptor is cut short (usbmon text
	 * keeps 32 bytes per URB); emit.c then fills in from what it has */
	bool truncated;

	uint16_t langids[GD_MAX_LANGIDS];
	size_t n_langids;
	char *strings[256];		/* UTF-8 text by index, NULL: unknown */
	struct imp_blob string_raw[256];/* or the descriptor itself (captures) */

	struct imp_ctrl *ctrls;
	size_t n_ctrls;
	struct imp_seq seqs[IMP_MAX_SEQS];
	size_t n_seqs;

	/* the outcome the reporter saw: driver per interface number (debugfs
	 * Driver=, lsusb -t), NULL when the dump does not say */
	char *driver[GD_MAX_INTERFACES];
	bool driver_known;		/* the dump says, even "(none)" */

	char *notes[IMP_MAX_NOTES];	/* "file:line: what was guessed, why" */
	size_t n_notes;
};

struct imp_set {
	struct imp_dev *devs[IMP_MAX_DEVICES];
	size_t n;
	char *format;			/* the reader's name, for the header */
	char *path;			/* the input file */
};

/* ---- readers: 0 and *set filled, or -EINVAL and err ---- */
struct imp_reader {
	const char *name;		/* "lsusb", "sysfs", ... (FORMAT:FILE) */
	const char *summary;		/* one line for --help */
	/* does this look like the reader's format?  (auto-detection) */
	bool (*sniff)(const char *path, const uint8_t *buf, size_t len);
	int (*read)(const char *path, const uint8_t *buf, size_t len,
		    struct imp_set *set, struct imp_error *err);
};

extern const struct imp_reader imp_reader_lsusb;
extern const struct imp_reader imp_reader_sysfs;
extern const struct imp_reader imp_reader_devices;
extern const struct imp_reader imp_reader_usbmon;
extern const struct imp_reader imp_reader_pcap;

const struct imp_reader *imp_reader_find(const char *name);
const struct imp_reader *imp_reader_sniff(const char *path, const uint8_t *buf,
					  size_t len);
/* every reader, NULL-terminated, in --help order */
extern const struct imp_reader *const imp_readers[];

/* ---- helpers shared by the readers (util.c) ---- */
int imp_err(struct imp_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));	/* fills err, returns -EINVAL */
int imp_blob_put(struct imp_blob *b, const void *data, size_t len);
int imp_blob_put8(struct imp_blob *b, uint8_t v);
int imp_blob_put16(struct imp_blob *b, uint16_t v);	/* little-endian */
void imp_blob_free(struct imp_blob *b);
struct imp_dev *imp_dev_new(struct imp_set *set, const char *where);
/* note a guess: printf-style, recorded in order, becomes a comment */
void imp_note(struct imp_dev *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int imp_add_ctrl(struct imp_dev *d, const uint8_t setup[8], bool stall,
		 const uint8_t *data, size_t len, const char *where);
int imp_add_in_packet(struct imp_dev *d, uint8_t ep, const uint8_t *data,
		      size_t len);
int imp_set_string(struct imp_dev *d, uint8_t index, const char *utf8);
/* file contents, at most IMP_MAX_FILE bytes, NUL-terminated (not counted) */
int imp_read_file(const char *path, uint8_t **buf, size_t *len,
		  struct imp_error *err);
void imp_set_free(struct imp_set *set);
/* take d out of set and free it (a reader that finds it unusable) */
void imp_dev_drop(struct imp_set *set, struct imp_dev *d);

/* ---- selection: "VID:PID" or "BUS:DEV" (hex ids, decimal bus/dev) ---- */
/* Picks exactly one device; -EINVAL with err when none or several match
 * (the message lists them). */
int imp_select(const struct imp_set *set, const char *sel,
	       struct imp_dev **out, struct imp_error *err);

/* ---- emit.c: one device to a gadget script ---- */
struct imp_emit_opts {
	const char *name;		/* device name line; NULL: from ids */
};

/* Writes the script to *text (malloc'd, NUL-terminated).  Returns 0, or
 * -EINVAL with err when the dump holds no usable device descriptor, or
 * when the script would not reproduce the dump's descriptor bytes (a bug
 * here, reported as such). */
int imp_emit(const struct imp_set *set, const struct imp_dev *d,
	     const struct imp_emit_opts *opts, char **text,
	     struct imp_error *err);

#endif /* USBRIG_IMPORT_H */
