// SPDX-License-Identifier: GPL-2.0
/*
 * script.c - gadget script parser: text -> tokens -> statement tree ->
 * struct gd_device.  docs/gadget-format.md is the language reference.
 *
 * Three small passes, a file each (script_int.h is what they share):
 *  1. ps_lex() (script_lex.c): bytes to tokens - words, "strings", { } *,
 *     end of statement (newline or ';') - each carrying its line and column;
 *  2. ps_tree() (script_tree.c): statements "keyword args... [{ block }]";
 *  3. ps_run_block() (script_kw.c): one table of keywords per block kind
 *     (script_blocks.c) fills the model; each block kind then checks what
 *     can only be checked once the block is complete (required fields,
 *     defaults, cross references).
 * This file holds the entry points.
 *
 * Arguments are read through a cursor (struct cur) whose primitives
 * return 0 or a negative errno and chain with ?:, e.g.
 *	return cur_num(&c, 8, &v) ?: cur_end(&c);
 * Every error goes through ps_fail(): it records "file:line:col: message"
 * and returns -EINVAL.  The first error stops the parse and everything
 * built so far is freed, so a caller never sees half a model.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fn/registry.h"
#include "script_int.h"

/* ------------------------------------------------------------------ */
/* entry points                                                        */

static void parser_free(struct parser *ps)
{
	size_t i;

	ps_tree_free(ps->top.body, ps->top.n_body);
	for (i = 0; i < ps->n_toks; i++)
		free(ps->toks[i].own);
	free(ps->toks);
	free(ps->pend);
}

int script_parse(const char *name, const char *text, size_t len,
		 struct gd_device **out, struct script_error *err)
{
	struct parser ps = {
		.name = name ? name : "<script>",
		.err = err,
	};
	struct blk top = { .ps = &ps, .def = &script_top_block, .st = &ps.top };
	struct gd_device *dev;
	size_t pos = 0;
	int rc;

	*out = NULL;
	if (err)
		memset(err, 0, sizeof(*err));
	if (len > SCRIPT_MAX_BYTES)
		return ps_fail_at(&ps, 1, 1, "script of %zu bytes, larger than the limit of %d",
				  len, SCRIPT_MAX_BYTES);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return ps_oom(&ps);
	ps.dev = dev;
	dev->speed = USBIP_SPEED_FULL;
	dev->bcdDevice = 0x0100;
	dev->bNumConfigurations_override = -1;
	dev->bLength_override = -1;
	dev->bos.generated_caps = true;
	dev->bos.wTotalLength_override = -1;
	dev->bos.bNumDeviceCaps_override = -1;
	dev->bos.bLength_override = -1;
	dev->bos.bDescriptorType_override = -1;
	dev->path = strdup(ps.name);
	if (!dev->path) {
		rc = ps_oom(&ps);
		goto out;
	}

	rc = ps_lex(&ps, text, len) ?:
	     ps_tree(&ps, &pos, 0, NULL, &ps.top) ?:
	     ps_run_block(&top);
	if (!rc && !top.seen[0])
		rc = ps_fail(&ps, &ps.toks[ps.n_toks - 1], "no device block: a script describes one device { ... }");
	if (!rc && dev->function) {
		/* the function checks its options and the descriptors it needs */
		struct script_error scratch;

		rc = fn_validate(dev, err ? err : &scratch);
	}
out:
	parser_free(&ps);
	if (rc) {
		gd_model_free(dev);
		return rc;
	}
	*out = dev;
	return 0;
}

/* an error that belongs to the file, not to a place in it */
static int __attribute__((format(printf, 4, 5)))
load_fail(struct script_error *err, const char *path, int rc,
	  const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err)
		return rc;
	err->line = 0;
	err->col = 0;
	n = snprintf(err->msg, sizeof(err->msg), "%s: ", path);
	if (n < 0 || (size_t)n >= sizeof(err->msg))
		return rc;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof(err->msg) - n, fmt, ap);
	va_end(ap);
	return rc;
}

int script_load(const char *path, struct gd_device **out,
		struct script_error *err)
{
	struct stat sb;
	size_t len = 0;
	char *buf;
	int fd, rc;

	*out = NULL;
	if (err)
		memset(err, 0, sizeof(*err));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return load_fail(err, path, -errno, "cannot open: %s",
				 strerror(errno));
	if (fstat(fd, &sb)) {
		rc = -errno;
		close(fd);
		return load_fail(err, path, rc, "cannot stat: %s", strerror(-rc));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return load_fail(err, path, -EINVAL, "not a regular file");
	}
	if (sb.st_size > SCRIPT_MAX_BYTES) {
		close(fd);
		return load_fail(err, path, -EINVAL, "larger than the limit of %d bytes",
				 SCRIPT_MAX_BYTES);
	}
	buf = malloc(sb.st_size ? sb.st_size : 1);
	if (!buf) {
		close(fd);
		return load_fail(err, path, -ENOMEM, "out of memory");
	}
	while (len < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + len, sb.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			close(fd);
			free(buf);
			return load_fail(err, path, rc, "cannot read: %s",
					 strerror(-rc));
		}
		if (!n)
			break;	/* it shrank meanwhile: parse what was there */
		len += n;
	}
	close(fd);
	rc = script_parse(path, buf, len, out, err);
	free(buf);
	return rc;
}
