// SPDX-License-Identifier: GPL-2.0
/*
 * fn/msc.c - the msc device function: a SCSI disk behind Bulk-Only
 * Transport (USB Mass Storage Class, Bulk-Only Transport 1.0, "BOT"),
 * backed by a file image or by RAM.  usb-storage binds it (interface
 * class 08, subclass 06 SCSI transparent, protocol 50 bulk-only) and sd
 * makes a disk of it.
 *
 * Transport (BOT section 5 and 6): a 31-byte CBW on bulk OUT, then the
 * data stage the CBW announces (dCBWDataTransferLength, "H", in the
 * direction of bmCBWFlags), then a 13-byte CSW on bulk IN.  URBs of either
 * direction may arrive at any time: the function holds each until the
 * transfer it belongs to is due (an IN URB during the CBW stage is a NAK),
 * and never answers an IN URB with more than it asks.
 *
 * The thirteen cases of BOT 6.7, as this device resolves them ("D" is what
 * the command wants to move, from its CDB):
 *  - H equals D: the data moves; status from the command.
 *  - H > D, IN: the D bytes are sent (a short transfer), then bulk IN is
 *    halted, so the host's CSW read STALLs once; it clears the halt and
 *    reads the CSW (usb-storage's "2nd try", transport.c).  With D = 0 the
 *    first data URB itself STALLs.  Residue H - D.
 *  - H > D, OUT: all H bytes are accepted, the first D used, the rest
 *    dropped.  Residue H - D.
 *  - H < D, or H and D in opposite directions, or H = 0 < D: phase error
 *    (bCSWStatus 2) with no data moved (IN STALLs, OUT data dropped), and
 *    the command has no effect.  Linux answers with reset recovery.
 *  - A CBW that is not valid or not meaningful (6.2: not 31 bytes, bad
 *    signature, reserved flag bits, bCBWCBLength 0 or > 16): both bulk
 *    endpoints halt and every URB on them STALLs again, even after
 *    CLEAR_FEATURE, until a Bulk-Only Mass Storage Reset (6.6.1).
 *
 * Class requests: Bulk-Only Mass Storage Reset (0xff) puts the transport
 * back to "waiting for a CBW" (the host then clears both halts, 5.3.4);
 * Get Max LUN (0xfe) answers 0: one logical unit.
 *
 * SCSI (SPC-4, SBC-3): TEST UNIT READY, REQUEST SENSE (fixed format),
 * INQUIRY (standard data and VPD pages 00h, 80h), MODE SENSE(6)/(10)
 * (the caching page 08h; WP set when read-only), START STOP UNIT (load and
 * eject when removable), PREVENT ALLOW MEDIUM REMOVAL, READ FORMAT
 * CAPACITIES, READ CAPACITY(10) and (16), READ(6)/(10)/(16),
 * WRITE(6)/(10)/(16), VERIFY(10), SYNCHRONIZE CACHE(10)/(16), REPORT LUNS.
 * Anything else fails with CHECK CONDITION, sense ILLEGAL REQUEST /
 * INVALID COMMAND OPERATION CODE (05/20/00), and is logged at info level.
 * Sense data describe the last command and are cleared by the next one
 * (or by REQUEST SENSE).
 *
 * What Linux 6.1 sends at probe (usb-storage sets inquiry_len 36, no
 * REPORT LUNS, no VPD, no REPORT SUPPORTED OPERATION CODES, tries READ
 * CAPACITY(10) first; drivers/usb/storage/scsiglue.c): INQUIRY, TEST UNIT
 * READY, READ CAPACITY(10), READ(10) of block 0 (read_before_ms), MODE
 * SENSE(6) page 3Fh with 192 bytes (write protect, then the caching page),
 * and, since RMB is set, PREVENT ALLOW MEDIUM REMOVAL around every open.
 *
 * The medium: writes go to the image file (pwrite) or RAM as they arrive;
 * SYNCHRONIZE CACHE and the end of the connection fsync the file.  The
 * `write-cache` option only changes what the caching page says (WCE),
 * i.e. whether Linux sends SYNCHRONIZE CACHE.  RAM contents last one
 * connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"

#define BOT_REQ_RESET		0xff
#define BOT_REQ_GET_MAX_LUN	0xfe

#define CBW_LEN			31
#define CBW_SIGNATURE		0x43425355	/* "USBC", little endian */
#define CBW_FLAG_IN		0x80
#define CSW_LEN			13
#define CSW_SIGNATURE		0x53425355	/* "USBS" */

#define CSW_GOOD		0
#define CSW_FAILED		1
#define CSW_PHASE_ERROR		2

/* SCSI operation codes (SPC-4, SBC-3) */
#define TEST_UNIT_READY		0x00
#define REQUEST_SENSE		0x03
#define READ_6			0x08
#define WRITE_6			0x0a
#define INQUIRY			0x12
#define MODE_SENSE_6		0x1a
#define START_STOP_UNIT		0x1b
#define PREVENT_ALLOW		0x1e
#define READ_FORMAT_CAPACITIES	0x23
#define READ_CAPACITY_10	0x25
#define READ_10			0x28
#define WRITE_10		0x2a
#define VERIFY_10		0x2f
#define SYNCHRONIZE_CACHE_10	0x35
#define MODE_SENSE_10		0x5a
#define READ_16			0x88
#define WRITE_16		0x8a
#define SYNCHRONIZE_CACHE_16	0x91
#define SERVICE_ACTION_IN_16	0x9e
#define SAI_READ_CAPACITY_16	0x10
#define REPORT_LUNS		0xa0

/* sense keys and additional sense codes (SPC-4 4.5.6, annex D) */
#define NO_SENSE		0x0
#define NOT_READY		0x2
#define MEDIUM_ERROR		0x3
#define ILLEGAL_REQUEST		0x5
#define DATA_PROTECT		0x7
#define MISCOMPARE		0xe

#define ASC_WRITE_ERROR		0x0c
#define ASC_READ_ERROR		0x11
#define ASC_MISCOMPARE		0x1d
#define ASC_INVALID_OPCODE	0x20
#define ASC_LBA_OUT_OF_RANGE	0x21
#define ASC_INVALID_FIELD	0x24
#define ASC_LUN_NOT_SUPPORTED	0x25
#define ASC_WRITE_PROTECTED	0x27
#define ASC_SAVING_NOT_SUPP	0x39
#define ASC_MEDIUM_NOT_PRESENT	0x3a
#define ASC_REMOVAL_PREVENTED	0x53

#define MODE_PAGE_CACHING	0x08
#define MODE_PAGE_ALL		0x3f

#define MSC_RAM_MAX		(1ull << 30)	/* RAM disks up to 1 GiB */
#define MSC_IMAGE_MAX		(1ull << 42)	/* 4 TiB: past 32-bit LBAs */
#define MSC_CHUNK		65536		/* compare buffer for VERIFY */
#define MSC_RAM_SHIFT		16		/* RAM in 64 KiB pieces */
#define MSC_RAM_PIECE		(1u << MSC_RAM_SHIFT)

enum msc_phase { PH_CBW, PH_DATA_IN, PH_DATA_OUT, PH_CSW };

/* where the data stage's bytes come from or go */
enum msc_data {
	DATA_NONE,	/* nothing relevant: IN STALLs, OUT is dropped */
	DATA_BUF,	/* IN from resp[] */
	DATA_READ,	/* IN from the medium at off */
	DATA_WRITE,	/* OUT to the medium at off */
	DATA_VERIFY,	/* OUT compared with the medium at off */
};

struct msc_cfg {
	uint8_t intf;
	uint8_t ep_in;
	uint8_t ep_out;
	const char *image;		/* the model's option value, or NULL */
	uint64_t size;			/* 0: the image's size */
	uint32_t block_size;
	bool readonly;
	bool removable;
	bool write_cache;
	char vendor[8];			/* INQUIRY fields, blank padded */
	char product[16];
	char revision[4];
	const char *serial;		/* VPD page 80h */
};

struct msc_state {
	struct msc_cfg cfg;
	struct gdev *dev;
	int fd;				/* -1: RAM */
	uint8_t **ram;			/* RAM pieces, NULL until written */
	size_t ram_pieces;
	uint64_t blocks;
	bool medium;			/* not ejected */
	bool prevent;			/* PREVENT MEDIUM REMOVAL */

	struct gdev_urbq in, out;		/* held URBs, per direction */
	enum msc_phase phase;
	bool need_reset;		/* 6.6.1: STALL until a BOT reset */

	/* the command in progress */
	uint32_t tag;
	uint8_t opcode;
	uint32_t h_len;			/* dCBWDataTransferLength */
	bool h_in;
	uint8_t status;			/* bCSWStatus */
	enum msc_data data;
	uint32_t xfer;			/* relevant bytes of the data stage */
	uint32_t moved;			/* relevant bytes done */
	uint32_t taken;			/* OUT bytes accepted, relevant or not */
	uint64_t off;			/* medium offset of the next byte */
	uint8_t resp[256];		/* DATA_BUF */

	/* sense data of the last command (fixed format) */
	uint8_t key, asc, ascq;
	uint32_t info;
	bool info_valid;
};

/* ---- options ---- */

static const char *const msc_keys[] = {
	"interface", "image", "size", "readonly", "block-size", "removable",
	"write-cache", "vendor", "product", "revision", NULL,
};

static int opt_bool(const struct gd_device *m, const char *key, bool def,
		    bool *out, struct script_error *err)
{
	const struct gd_fn_opt *o = fn_opt(m, key);

	*out = def;
	if (!o)
		return 0;
	if (!*o->value || !strcmp(o->value, "on"))
		*out = true;
	else if (!strcmp(o->value, "off"))
		*out = false;
	else
		return fn_opt_error(m, o, err, "%s: expected on, off or nothing, got '%s'",
				    key, o->value);
	return 0;
}

/* An INQUIRY text field: printable ASCII, blank padded to size. */
static int opt_text(const struct gd_device *m, const char *key,
		    const char *def, char *dst, size_t size,
		    struct script_error *err)
{
	const struct gd_fn_opt *o = fn_opt(m, key);
	const char *v = o ? o->value : def;
	size_t i, n = strlen(v);

	if (n > size)
		return fn_opt_error(m, o, err, "%s: at most %zu characters, got %zu",
				    key, size, n);
	for (i = 0; i < n; i++)
		if (v[i] < 0x20 || v[i] > 0x7e)
			return fn_opt_error(m, o, err, "%s: only printable ASCII",
					    key);
	memset(dst, ' ', size);
	memcpy(dst, v, n);
	return 0;
}

/* Options and descriptors into conf, a struct msc_cfg (void *: for
 * fn_state_new()); -EINVAL with err set on a problem. */
static int cfg_parse(const struct gd_device *m, void *conf,
		     struct script_error *err)
{
	struct msc_cfg *c = conf;
	const struct gd_fn_opt *o;
	const struct gd_endpoint *in, *out;
	const struct gd_alt *alt;
	char rev[5];
	uint64_t v;
	size_t i;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = fn_opt_only(m, msc_keys, err);
	if (ret)
		return ret;

	ret = fn_opt_interface(m, USB_CLASS_MASS_STORAGE, "mass storage", &alt,
			       err);
	if (ret)
		return ret;
	o = fn_opt(m, "interface");	/* where endpoint errors point */
	c->intf = alt->bInterfaceNumber;
	in = fn_alt_ep(alt, USB_ENDPOINT_XFER_BULK, true);
	out = fn_alt_ep(alt, USB_ENDPOINT_XFER_BULK, false);
	if (!in || !out)
		return fn_opt_error(m, o, err, "interface %u needs a bulk IN and a bulk OUT endpoint",
				    c->intf);
	c->ep_in = in->bEndpointAddress;
	c->ep_out = out->bEndpointAddress;
	/* the function drives the whole interface */
	for (i = 0; i < alt->n_eps; i++) {
		ret = fn_ep_check_free(m, &alt->eps[i],
				       "an endpoint of the mass storage interface",
				       err);
		if (ret)
			return ret;
	}

	o = fn_opt(m, "image");
	if (o) {
		if (!*o->value)
			return fn_opt_error(m, o, err, "image: expected a file name");
		c->image = o->value;
	}
	ret = fn_opt_u64(m, "size", 0, c->image ? MSC_IMAGE_MAX : MSC_RAM_MAX,
			 1, &c->size, err);
	if (ret)
		return ret;
	ret = fn_opt_u64(m, "block-size", 512, 4096, 0, &v, err);
	if (ret)
		return ret;
	if (v != 512 && v != 1024 && v != 2048 && v != 4096)
		return fn_opt_error(m, fn_opt(m, "block-size"), err,
				    "block-size: 512, 1024, 2048 or 4096");
	c->block_size = v;
	o = fn_opt(m, "size");
	if (!c->image && !o)
		return fn_opt_error(m, NULL, err, "give 'image PATH' (a file) or 'size N' (RAM), or both (the file is created or grown to N)");
	if (o && c->size < c->block_size)
		return fn_opt_error(m, o, err, "size: less than one block (%u bytes)",
				    c->block_size);

	ret = opt_bool(m, "readonly", false, &c->readonly, err) ?:
	      opt_bool(m, "removable", true, &c->removable, err) ?:
	      opt_bool(m, "write-cache", true, &c->write_cache, err);
	if (ret)
		return ret;
	snprintf(rev, sizeof(rev), "%04x", m->bcdDevice);
	ret = opt_text(m, "vendor", "usbrig", c->vendor, sizeof(c->vendor),
		       err) ?:
	      opt_text(m, "product", "Virtual Disk", c->product,
		       sizeof(c->product), err) ?:
	      opt_text(m, "revision", rev, c->revision, sizeof(c->revision),
		       err);
	if (ret)
		return ret;
	c->serial = m->iSerialNumber && m->strings[m->iSerialNumber] ?
		    m->strings[m->iSerialNumber] : "0";
	return 0;
}

static int msc_validate(const struct gd_device *m, struct script_error *err)
{
	struct msc_cfg c;

	return cfg_parse(m, &c, err);
}

/* ---- the medium ---- */

static int medium_open(struct msc_state *st)
{
	const struct msc_cfg *c = &st->cfg;
	uint64_t size = c->size;
	struct stat sb;
	int flags;

	if (!c->image) {
		st->fd = -1;
		st->ram_pieces = (size + MSC_RAM_PIECE - 1) >> MSC_RAM_SHIFT;
		st->ram = calloc(st->ram_pieces, sizeof(*st->ram));
		if (!st->ram) {
			log_err("size %llu: out of memory",
				(unsigned long long)size);
			return -ENOMEM;
		}
		st->blocks = size / c->block_size;
		return 0;
	}
	flags = c->readonly ? O_RDONLY : O_RDWR | (size ? O_CREAT : 0);
	st->fd = open(c->image, flags | O_CLOEXEC, 0644);
	if (st->fd < 0) {
		int e = errno;

		log_err("image %s: %s", c->image, strerror(e));
		return -e;
	}
	if (fstat(st->fd, &sb)) {
		int e = errno;

		log_err("image %s: %s", c->image, strerror(e));
		return -e;
	}
	if (!size)
		size = sb.st_size;
	else if ((uint64_t)sb.st_size < size && !c->readonly &&
		 ftruncate(st->fd, size)) {
		int e = errno;

		log_err("image %s: growing it to %llu bytes: %s", c->image,
			(unsigned long long)size, strerror(e));
		return -e;
	}
	st->blocks = size / c->block_size;
	if (!st->blocks) {
		log_err("image %s: smaller than one block (%u bytes)", c->image,
			c->block_size);
		return -EINVAL;
	}
	if (size % c->block_size)
		log_warn("image %s: the last %llu bytes are not a whole block: not served",
			 c->image, (unsigned long long)(size % c->block_size));
	return 0;
}

/* "image PATH" or "RAM disk", in two words for the log */
static const char *medium_kind(const struct msc_state *st)
{
	return st->fd < 0 ? "RAM" : "image";
}

static const char *medium_name(const struct msc_state *st)
{
	return st->fd < 0 ? "disk" : st->cfg.image;
}

/*
 * The RAM medium is sparse: a 64 KiB piece is allocated when something
 * other than zeros is first written to it, and a piece never written
 * reads as zeros.  A disk costs what the host wrote on it, not its size
 * (a 4 MiB disk that is only enumerated costs 512 bytes of pointers), and
 * each connection starts from zeros without clearing the whole size.
 */
static bool all_zero(const uint8_t *p, size_t n)
{
	return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

/* n bytes at off of the RAM into dst, or from src (off + n within the size:
 * the CDB was checked) */
static int ram_rw(struct msc_state *st, uint64_t off, uint8_t *dst,
		  const uint8_t *src, size_t n)
{
	uint8_t **piece;
	size_t at, k;

	while (n) {
		piece = &st->ram[off >> MSC_RAM_SHIFT];
		at = off & (MSC_RAM_PIECE - 1);
		k = MSC_RAM_PIECE - at < n ? MSC_RAM_PIECE - at : n;
		if (dst && *piece)
			memcpy(dst, *piece + at, k);
		else if (dst)
			memset(dst, 0, k);
		else if (*piece || !all_zero(src, k)) {
			if (!*piece)
				*piece = calloc(1, MSC_RAM_PIECE);
			if (!*piece)
				return -ENOMEM;
			memcpy(*piece + at, src, k);
		}
		if (dst)
			dst += k;
		else
			src += k;
		off += k;
		n -= k;
	}
	return 0;
}

/* n bytes at off; beyond the end of a short (read-only) image: zeros */
static int medium_read(struct msc_state *st, uint64_t off, uint8_t *dst,
		       size_t n)
{
	ssize_t r;

	if (st->fd < 0)
		return ram_rw(st, off, dst, NULL, n);
	while (n) {
		r = pread(st->fd, dst, n, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0) {
			memset(dst, 0, n);
			return 0;
		}
		dst += r;
		off += r;
		n -= r;
	}
	return 0;
}

static int medium_write(struct msc_state *st, uint64_t off,
			const uint8_t *src, size_t n)
{
	ssize_t r;

	if (st->fd < 0)
		return ram_rw(st, off, NULL, src, n);
	while (n) {
		r = pwrite(st->fd, src, n, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r ? -errno : -EIO;
		src += r;
		off += r;
		n -= r;
	}
	return 0;
}

static int medium_sync(struct msc_state *st)
{
	if (st->fd >= 0 && fsync(st->fd))
		return -errno;
	return 0;
}

/* STALL: halt the endpoint and fail what is held on it (-EPIPE). */
static void halt(struct msc_state *st, bool in)
{
	struct gdev_ep *ep = gdev_ep_by_addr(st->dev, in ? st->cfg.ep_in :
					     st->cfg.ep_out);

	if (ep)
		gdev_ep_set_halt(st->dev, ep, true);
	gdev_urbq_flush(st->dev, in ? &st->in : &st->out, -EPIPE);
}

/* ---- SCSI ---- */

static void set_sense(struct msc_state *st, uint8_t key, uint8_t asc,
		      uint8_t ascq)
{
	st->key = key;
	st->asc = asc;
	st->ascq = ascq;
	st->info_valid = false;
	st->status = CSW_FAILED;
}

static void clear_sense(struct msc_state *st)
{
	st->key = NO_SENSE;
	st->asc = 0;
	st->ascq = 0;
	st->info_valid = false;
}

/* What a command wants to move in its data stage ("D" of BOT 6.7). */
struct cmd {
	bool dir_in;		/* the command's direction, when dlen > 0 */
	uint64_t dlen;		/* D: what the command wants to move */
};

/* The command answers n bytes of resp, cut to its allocation length. */
static void reply_buf(struct msc_state *st, struct cmd *cmd, size_t n,
		      size_t alloc)
{
	st->data = DATA_BUF;
	cmd->dir_in = true;
	cmd->dlen = n < alloc ? n : alloc;
}

static bool check_medium(struct msc_state *st)
{
	if (st->medium)
		return true;
	set_sense(st, NOT_READY, ASC_MEDIUM_NOT_PRESENT, 0);
	return false;
}

static void cmd_inquiry(struct msc_state *st, const uint8_t *cdb,
			struct cmd *cmd, bool lun_ok)
{
	uint8_t *r = st->resp;
	size_t alloc = get_be16(cdb + 3), len;

	memset(r, 0, 36);
	if (cdb[1] & 0x01) {		/* EVPD */
		if (!lun_ok) {
			set_sense(st, ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED, 0);
			return;
		}
		r[1] = cdb[2];
		switch (cdb[2]) {
		case 0x00:		/* supported VPD pages */
			r[3] = 2;
			r[4] = 0x00;
			r[5] = 0x80;
			reply_buf(st, cmd, 6, alloc);
			return;
		case 0x80:		/* unit serial number */
			len = strlen(st->cfg.serial);
			if (len > sizeof(st->resp) - 4)
				len = sizeof(st->resp) - 4;
			r[3] = len;
			memcpy(r + 4, st->cfg.serial, len);
			reply_buf(st, cmd, 4 + len, alloc);
			return;
		default:
			set_sense(st, ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
			return;
		}
	}
	if (cdb[2]) {			/* a page code without EVPD */
		set_sense(st, ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
		return;
	}
	/* SPC-4 6.4.2: a LUN that is not there: qualifier 3, type 1Fh */
	r[0] = lun_ok ? 0x00 : 0x7f;	/* direct access block device */
	r[1] = st->cfg.removable ? 0x80 : 0;	/* RMB */
	r[2] = 0x06;			/* SPC-4 */
	r[3] = 0x02;			/* response data format 2 */
	r[4] = 36 - 5;			/* additional length */
	memcpy(r + 8, st->cfg.vendor, 8);
	memcpy(r + 16, st->cfg.product, 16);
	memcpy(r + 32, st->cfg.revision, 4);
	reply_buf(st, cmd, 36, alloc);
}

static void cmd_request_sense(struct msc_state *st, const uint8_t *cdb,
			      struct cmd *cmd, bool lun_ok)
{
	uint8_t *r = st->resp;

	/* SPC-4 4.5.3 fixed format; descriptor format is not offered */
	if (!lun_ok)
		set_sense(st, ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED, 0);
	memset(r, 0, 18);
	r[0] = 0x70 | (st->info_valid ? 0x80 : 0);	/* current error */
	r[2] = st->key;
	put_be32(r + 3, st->info);
	r[7] = 18 - 8;			/* additional sense length */
	r[12] = st->asc;
	r[13] = st->ascq;
	clear_sense(st);
	st->status = CSW_GOOD;		/* REQUEST SENSE itself succeeds */
	reply_buf(st, cmd, 18, cdb[4]);
}

/* The caching page (SBC-3 6.4.5), current or changeable values. */
static size_t caching_page(const struct msc_state *st, uint8_t *p,
			   bool changeable)
{
	memset(p, 0, 20);
	p[0] = MODE_PAGE_CACHING;
	p[1] = 20 - 2;
	if (!changeable && st->cfg.write_cache)
		p[2] = 0x04;		/* WCE */
	return 20;
}

static void cmd_mode_sense(struct msc_state *st, const uint8_t *cdb,
			   struct cmd *cmd, bool ten)
{
	uint8_t pc = cdb[2] >> 6, page = cdb[2] & 0x3f, sub = cdb[3];
	size_t hdr = ten ? 8 : 4, n;
	size_t alloc = ten ? get_be16(cdb + 7) : cdb[4];
	uint8_t *r = st->resp;

	if (pc == 3) {			/* saved values */
		set_sense(st, ILLEGAL_REQUEST, ASC_SAVING_NOT_SUPP, 0);
		return;
	}
	if ((page != MODE_PAGE_CACHING && page != MODE_PAGE_ALL) ||
	    (sub && !(page == MODE_PAGE_ALL && sub == 0xff))) {
		set_sense(st, ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
		return;
	}
	memset(r, 0, hdr);
	n = hdr + caching_page(st, r + hdr, pc == 1);
	/* SPC-4 7.5.5: mode data length excludes itself; medium type 0;
	 * device-specific parameter bit 7 WP; no block descriptors */
	if (ten) {
		put_be16(r, n - 2);
		r[3] = st->cfg.readonly ? 0x80 : 0;
	} else {
		r[0] = n - 1;
		r[2] = st->cfg.readonly ? 0x80 : 0;
	}
	reply_buf(st, cmd, n, alloc);
}

static void cmd_start_stop(struct msc_state *st, const uint8_t *cdb)
{
	bool loej = cdb[4] & 0x02, start = cdb[4] & 0x01;

	if ((cdb[4] & 0xf0) || !loej)
		return;			/* power conditions, spin: nothing to do */
	if (!st->cfg.removable) {
		set_sense(st, ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
		return;
	}
	if (!start && st->prevent) {
		set_sense(st, ILLEGAL_REQUEST, ASC_REMOVAL_PREVENTED, 0x02);
		return;
	}
	st->medium = start;
	log_info("interface %u: medium %s", st->cfg.intf,
		 start ? "loaded" : "ejected");
}

static void cmd_read_capacity(struct msc_state *st, const uint8_t *cdb,
			      struct cmd *cmd, bool sixteen)
{
	uint64_t last = st->blocks - 1;
	uint8_t *r = st->resp;

	if (!check_medium(st))
		return;
	if (!sixteen) {
		/* SBC-3 5.16: FFFFFFFFh means "ask READ CAPACITY(16)" */
		put_be32(r, last > 0xffffffff ? 0xffffffff : last);
		put_be32(r + 4, st->cfg.block_size);
		reply_buf(st, cmd, 8, 8);
		return;
	}
	memset(r, 0, 32);
	put_be64(r, last);
	put_be32(r + 8, st->cfg.block_size);
	reply_buf(st, cmd, 32, get_be32(cdb + 10));
}

static void cmd_read_format_capacities(struct msc_state *st,
				       const uint8_t *cdb, struct cmd *cmd)
{
	uint8_t *r = st->resp;
	uint32_t bs = st->cfg.block_size;

	/* MMC-2/UFI: a capacity list of one "current/maximum" descriptor */
	memset(r, 0, 12);
	r[3] = 8;
	put_be32(r + 4, st->blocks > 0xffffffff ? 0xffffffff : st->blocks);
	r[8] = st->medium ? 0x02 : 0x03;	/* formatted / no medium */
	r[9] = bs >> 16;
	r[10] = bs >> 8;
	r[11] = bs;
	reply_buf(st, cmd, 12, get_be16(cdb + 7));
}

static void cmd_report_luns(struct msc_state *st, const uint8_t *cdb,
			    struct cmd *cmd)
{
	uint8_t *r = st->resp;

	memset(r, 0, 16);
	put_be32(r, 8);			/* one LUN: 0 */
	reply_buf(st, cmd, 16, get_be32(cdb + 6));
}

/* READ, WRITE, VERIFY: the range, then the data stage that moves it */
static void cmd_rw(struct msc_state *st, struct cmd *cmd, uint64_t lba,
		   uint64_t count, enum msc_data data)
{
	if (!check_medium(st))
		return;
	if (lba > st->blocks || count > st->blocks - lba) {
		set_sense(st, ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE, 0);
		return;
	}
	if (data == DATA_WRITE && st->cfg.readonly) {
		set_sense(st, DATA_PROTECT, ASC_WRITE_PROTECTED, 0);
		return;
	}
	st->data = data;
	st->off = lba * st->cfg.block_size;
	cmd->dir_in = data == DATA_READ;
	cmd->dlen = count * st->cfg.block_size;
}

/* The length a CDB of this opcode has: its group code says (SPC-4
 * 4.2.5.1); 1 for the reserved and vendor groups, whose length we do not
 * know (no command of ours is in them). */
static uint8_t cdb_group_len(uint8_t opcode)
{
	switch (opcode >> 5) {
	case 0:
		return 6;
	case 1:
	case 2:
		return 10;
	case 4:
		return 16;
	case 5:
		return 12;
	default:
		return 1;
	}
}

/* Run the CDB up to its data stage: status, sense, what is to move. */
static void scsi_command(struct msc_state *st, const uint8_t *cdb,
			 uint8_t cdb_len, uint8_t lun, struct cmd *cmd)
{
	bool lun_ok = lun == 0;
	int ret;

	memset(cmd, 0, sizeof(*cmd));
	st->data = DATA_NONE;
	st->status = CSW_GOOD;
	if (cdb[0] != REQUEST_SENSE)
		clear_sense(st);
	if (!lun_ok && cdb[0] != INQUIRY && cdb[0] != REQUEST_SENSE) {
		set_sense(st, ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED, 0);
		return;
	}

	if (cdb_len < cdb_group_len(cdb[0])) {
		/* shorter than its opcode's group says */
		set_sense(st, ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
		return;
	}
	switch (cdb[0]) {
	case TEST_UNIT_READY:
		check_medium(st);
		break;
	case REQUEST_SENSE:
		cmd_request_sense(st, cdb, cmd, lun_ok);
		break;
	case INQUIRY:
		cmd_inquiry(st, cdb, cmd, lun_ok);
		break;
	case MODE_SENSE_6:
		cmd_mode_sense(st, cdb, cmd, false);
		break;
	case MODE_SENSE_10:
		cmd_mode_sense(st, cdb, cmd, true);
		break;
	case START_STOP_UNIT:
		cmd_start_stop(st, cdb);
		break;
	case PREVENT_ALLOW:
		st->prevent = cdb[4] & 0x01;
		break;
	case READ_FORMAT_CAPACITIES:
		cmd_read_format_capacities(st, cdb, cmd);
		break;
	case READ_CAPACITY_10:
		cmd_read_capacity(st, cdb, cmd, false);
		break;
	case SERVICE_ACTION_IN_16:
		if ((cdb[1] & 0x1f) != SAI_READ_CAPACITY_16) {
			set_sense(st, ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
			break;
		}
		cmd_read_capacity(st, cdb, cmd, true);
		break;
	case READ_6:
	case WRITE_6:
		/* SBC-3 5.8: a transfer length of 0 means 256 blocks */
		cmd_rw(st, cmd, (cdb[1] & 0x1f) << 16 | cdb[2] << 8 | cdb[3],
		       cdb[4] ? cdb[4] : 256,
		       cdb[0] == READ_6 ? DATA_READ : DATA_WRITE);
		break;
	case READ_10:
	case WRITE_10:
		cmd_rw(st, cmd, get_be32(cdb + 2), get_be16(cdb + 7),
		       cdb[0] == READ_10 ? DATA_READ : DATA_WRITE);
		break;
	case READ_16:
	case WRITE_16:
		cmd_rw(st, cmd, get_be64(cdb + 2), get_be32(cdb + 10),
		       cdb[0] == READ_16 ? DATA_READ : DATA_WRITE);
		break;
	case VERIFY_10:
		/* SBC-3 5.29: BYTCHK 0 checks the medium, 1 compares the
		 * data sent; 3 (one block for all) is not offered */
		switch ((cdb[1] >> 1) & 3) {
		case 0:
			cmd_rw(st, cmd, get_be32(cdb + 2), get_be16(cdb + 7),
			       DATA_NONE);
			cmd->dlen = 0;
			break;
		case 1:
			cmd_rw(st, cmd, get_be32(cdb + 2), get_be16(cdb + 7),
			       DATA_VERIFY);
			break;
		default:
			set_sense(st, ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
			break;
		}
		break;
	case SYNCHRONIZE_CACHE_10:
	case SYNCHRONIZE_CACHE_16:
		if (!check_medium(st))
			break;
		ret = medium_sync(st);
		if (ret) {
			log_warn("image %s: fsync: %s", st->cfg.image,
				 strerror(-ret));
			set_sense(st, MEDIUM_ERROR, ASC_WRITE_ERROR, 0);
		}
		break;
	case REPORT_LUNS:
		cmd_report_luns(st, cdb, cmd);
		break;
	default:
		log_info("interface %u: SCSI opcode 0x%02x not supported: ILLEGAL REQUEST",
			 st->cfg.intf, cdb[0]);
		set_sense(st, ILLEGAL_REQUEST, ASC_INVALID_OPCODE, 0);
		break;
	}
}

/* ---- Bulk-Only Transport ---- */

/* BOT 6.7: the thirteen cases, decided once the command knows D. */
static void plan_data(struct msc_state *st, const struct cmd *cmd)
{
	bool phase_error = false;

	st->moved = 0;
	st->taken = 0;
	st->xfer = 0;
	if (cmd->dlen && (!st->h_len || cmd->dir_in != st->h_in ||
			  cmd->dlen > st->h_len))
		phase_error = true;	/* Hn<D, Hi<>Do, Ho<>Di, H<D */
	if (phase_error) {
		log_info("interface %u: opcode 0x%02x: phase error (H %u %s, D %llu %s)",
			 st->cfg.intf, st->opcode, st->h_len,
			 st->h_in ? "in" : "out",
			 (unsigned long long)cmd->dlen,
			 cmd->dir_in ? "in" : "out");
		st->status = CSW_PHASE_ERROR;
		st->data = DATA_NONE;
	} else if (!cmd->dlen) {
		st->data = DATA_NONE;
	} else {
		st->xfer = cmd->dlen;
	}
	if (!st->h_len)
		st->phase = PH_CSW;
	else
		st->phase = st->h_in ? PH_DATA_IN : PH_DATA_OUT;
}

static bool cbw_valid(const struct urb *urb)
{
	const uint8_t *b = urb->buf;

	/* BOT 6.2.1 valid, 6.2.2 meaningful (reserved bits, CB length) */
	return urb->length == CBW_LEN && get_le32(b) == CBW_SIGNATURE &&
	       !(b[12] & ~CBW_FLAG_IN) && !(b[13] & 0xf0) &&
	       b[14] >= 1 && b[14] <= 16;
}

static void do_cbw(struct msc_state *st, struct urb *urb)
{
	uint8_t cdb[16] = { 0 }, cdb_len, lun;
	struct cmd cmd;
	const uint8_t *b = urb->buf;

	if (!cbw_valid(urb)) {
		log_warn("interface %u: invalid CBW (%u bytes, signature 0x%08x): both bulk endpoints STALL until a reset",
			 st->cfg.intf, urb->length,
			 urb->length >= 4 ? get_le32(b) : 0);
		gdev_complete(st->dev, urb, 0, urb->length);
		st->need_reset = true;
		halt(st, true);
		halt(st, false);
		return;
	}
	st->tag = get_le32(b + 4);
	st->h_len = get_le32(b + 8);
	st->h_in = b[12] & CBW_FLAG_IN;
	lun = b[13] & 0x0f;
	cdb_len = b[14];
	memcpy(cdb, b + 15, cdb_len);
	st->opcode = cdb[0];
	/* the URB and its buffer are gone once completed */
	gdev_complete(st->dev, urb, 0, CBW_LEN);

	scsi_command(st, cdb, cdb_len, lun, &cmd);
	log_dbg("interface %u: tag 0x%08x opcode 0x%02x H %u %s D %llu: status %u sense %x/%02x/%02x",
		st->cfg.intf, st->tag, cdb[0], st->h_len,
		st->h_in ? "in" : "out", (unsigned long long)cmd.dlen,
		st->status, st->key, st->asc, st->ascq);
	plan_data(st, &cmd);
}

static void do_data_in(struct msc_state *st, struct urb *urb)
{
	uint32_t n = st->xfer - st->moved;
	int ret;

	if (!n) {
		/* nothing (more) to send: STALL the data stage (case 4) */
		st->phase = PH_CSW;
		gdev_urbq_push(&st->in, urb);	/* halt() fails it */
		halt(st, true);
		return;
	}
	if (n > urb->length)
		n = urb->length;
	if (st->data == DATA_BUF) {
		memcpy(urb->buf, st->resp + st->moved, n);
	} else {
		ret = medium_read(st, st->off, urb->buf, n);
		if (ret) {
			log_warn("%s %s: read at %llu: %s", medium_kind(st),
				 medium_name(st),
				 (unsigned long long)st->off, strerror(-ret));
			memset(urb->buf, 0, n);
			if (st->status == CSW_GOOD) {
				set_sense(st, MEDIUM_ERROR, ASC_READ_ERROR, 0);
				st->info = st->off / st->cfg.block_size;
				st->info_valid = true;
			}
		}
		st->off += n;
	}
	st->moved += n;
	gdev_complete(st->dev, urb, 0, n);
	if (st->moved < st->xfer)
		return;
	st->phase = PH_CSW;
	/* case 5 (H > D): the short transfer ended the data, and the
	 * device STALLs bulk IN (BOT 6.7.2) */
	if (st->xfer < st->h_len)
		halt(st, true);
}

static void do_data_out(struct msc_state *st, struct urb *urb)
{
	uint32_t want = st->xfer - st->moved, n = urb->length;
	uint8_t cmp[MSC_CHUNK];
	uint32_t k, c;
	int ret = 0;

	if (n > want)
		n = want;		/* the rest is dropped (case 11) */
	if (n && st->data == DATA_WRITE) {
		ret = medium_write(st, st->off, urb->buf, n);
		if (ret) {
			log_warn("%s %s: write at %llu: %s", medium_kind(st),
				 medium_name(st),
				 (unsigned long long)st->off, strerror(-ret));
			set_sense(st, MEDIUM_ERROR, ASC_WRITE_ERROR, 0);
		}
	} else if (n && st->data == DATA_VERIFY) {
		for (k = 0; k < n && !ret; k += c) {
			c = n - k < sizeof(cmp) ? n - k : sizeof(cmp);
			ret = medium_read(st, st->off + k, cmp, c);
			if (ret) {
				set_sense(st, MEDIUM_ERROR, ASC_READ_ERROR, 0);
			} else if (memcmp(cmp, urb->buf + k, c)) {
				set_sense(st, MISCOMPARE, ASC_MISCOMPARE, 0);
				ret = -EIO;
			}
		}
	}
	if (ret) {
		/* stop using the data; the stage still completes */
		st->data = DATA_NONE;
		st->xfer = st->moved;
	} else {
		st->off += n;
		st->moved += n;
	}
	st->taken += urb->length;
	gdev_complete(st->dev, urb, 0, urb->length);
	if (st->taken >= st->h_len)
		st->phase = PH_CSW;
}

static void do_csw(struct msc_state *st, struct urb *urb)
{
	uint8_t csw[CSW_LEN];
	uint32_t n = CSW_LEN;

	put_le32(csw, CSW_SIGNATURE);
	put_le32(csw + 4, st->tag);
	put_le32(csw + 8, st->h_len - st->moved);	/* dCSWDataResidue */
	csw[12] = st->status;
	if (n > urb->length)
		n = urb->length;
	memcpy(urb->buf, csw, n);
	gdev_complete(st->dev, urb, 0, n);
	st->phase = PH_CBW;
}

/* Move the transport on while a held URB can be served. */
static void pump(struct msc_state *st)
{
	struct urb *urb;

	for (;;) {
		/* the stage decides which direction may move */
		if (st->phase == PH_CBW || st->phase == PH_DATA_OUT)
			urb = gdev_urbq_pop(&st->out);
		else
			urb = gdev_urbq_pop(&st->in);
		if (!urb)
			break;
		switch (st->phase) {
		case PH_CBW:
			do_cbw(st, urb);
			break;
		case PH_DATA_OUT:
			do_data_out(st, urb);
			break;
		case PH_DATA_IN:
			do_data_in(st, urb);
			break;
		case PH_CSW:
			do_csw(st, urb);
			break;
		}
	}
}

/* ---- the ops ---- */

static int msc_attach(struct gdev *dev)
{
	struct msc_state *st;
	int ret;

	st = fn_state_new(dev->model, sizeof(*st),
			  offsetof(struct msc_state, cfg), cfg_parse, &ret);
	if (!st)
		return ret;
	st->fd = -1;
	ret = medium_open(st);
	if (ret) {
		if (st->fd >= 0)
			close(st->fd);
		free(st);
		return ret;
	}
	st->dev = dev;
	st->medium = true;
	gdev_urbq_init(&st->in);
	gdev_urbq_init(&st->out);
	st->phase = PH_CBW;
	log_info("interface %u: %llu blocks of %u bytes (%s%s)", st->cfg.intf,
		 (unsigned long long)st->blocks, st->cfg.block_size,
		 st->fd < 0 ? "RAM" : st->cfg.image,
		 st->cfg.readonly ? ", read-only" : "");
	dev->function_state = st;
	return 0;
}

static void msc_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct msc_state *st = dev->function_state;
	size_t i;

	if (!st)
		return;
	gdev_urbq_free(&st->in, free_urb);
	gdev_urbq_free(&st->out, free_urb);
	if (st->fd >= 0) {
		int ret = medium_sync(st);

		if (ret)
			log_warn("image %s: fsync: %s", st->cfg.image,
				 strerror(-ret));
		close(st->fd);
	}
	for (i = 0; i < st->ram_pieces; i++)
		free(st->ram[i]);
	free(st->ram);
	free(st);
	dev->function_state = NULL;
}

static void msc_reset(struct gdev *dev)
{
	struct msc_state *st = dev->function_state;

	if (!st)
		return;
	gdev_urbq_flush(dev, &st->in, -ESHUTDOWN);
	gdev_urbq_flush(dev, &st->out, -ESHUTDOWN);
	st->phase = PH_CBW;
	st->need_reset = false;
}

static struct urb *msc_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct msc_state *st = dev->function_state;
	struct urb *urb;

	urb = gdev_urbq_remove(&st->in, seqnum);
	if (!urb)
		urb = gdev_urbq_remove(&st->out, seqnum);
	return urb;
}

static int msc_submit(struct gdev *dev, struct urb *urb)
{
	struct msc_state *st = dev->function_state;
	uint8_t addr = urb->ep | (urb->dir_in ? USB_DIR_IN : 0);

	if (addr != st->cfg.ep_in && addr != st->cfg.ep_out)
		return -ENOENT;
	if (st->need_reset) {
		/* 6.6.1: a cleared halt comes back until the reset */
		bool in = urb->dir_in;

		gdev_complete(dev, urb, -EPIPE, 0);
		halt(st, in);
		return 0;
	}
	if (urb->dir_in)
		gdev_urbq_push(&st->in, urb);
	else
		gdev_urbq_push(&st->out, urb);
	pump(st);
	return 0;
}

static int msc_control(struct gdev *dev, const struct usb_setup *s,
		       uint8_t *data, size_t len)
{
	struct msc_state *st = dev->function_state;

	if ((s->bmRequestType & (USB_TYPE_MASK | USB_RECIP_MASK)) !=
	    (USB_TYPE_CLASS | USB_RECIP_INTERFACE) ||
	    s->wIndex != st->cfg.intf)
		return -ENOENT;
	switch (s->bRequest) {
	case BOT_REQ_RESET:
		/* 3.1: host to device, wValue 0, wLength 0 */
		if ((s->bmRequestType & USB_DIR_IN) || s->wValue || s->wLength)
			return -EPIPE;
		log_info("interface %u: Bulk-Only Mass Storage Reset",
			 st->cfg.intf);
		st->phase = PH_CBW;
		st->need_reset = false;
		/* URBs still held stay queued: the next OUT one is a CBW */
		pump(st);
		return 0;
	case BOT_REQ_GET_MAX_LUN:
		/* 3.2: device to host, wValue 0, wLength 1 */
		if (!(s->bmRequestType & USB_DIR_IN) || s->wValue ||
		    s->wLength != 1)
			return -EPIPE;
		if (len)
			data[0] = 0;	/* one LUN */
		return len ? 1 : 0;
	default:
		return -EPIPE;
	}
}

const struct fn_ops fn_msc_ops = {
	.name = "msc",
	.validate = msc_validate,
	.attach = msc_attach,
	.detach = msc_detach,
	.control = msc_control,
	.submit = msc_submit,
	.unlink = msc_unlink,
	.reset = msc_reset,
};
