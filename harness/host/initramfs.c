// SPDX-License-Identifier: GPL-2.0
/*
 * initramfs.c - stage the guest's root, write it as newc cpio, cache it.
 *
 * The cpio writer is ours (the "newc" format of
 * Documentation/driver-api/early-userspace/buffer-format.rst): a 110-byte
 * ASCII header "070701" + 13 eight-digit hex fields, the NUL-terminated
 * name, padding to 4, the data, padding to 4; "TRAILER!!!" ends an
 * archive.  Writing it ourselves lets the image carry /dev/console (a
 * device node) without root.
 */
#define _GNU_SOURCE
#include "initramfs.h"
#include "../common/fsutil.h"
#include "cpio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Bump when the layout or /init changes: it is part of the cache key. */
#define INITRAMFS_FORMAT	"usbrig-initramfs-4"

#define CAPTURE_MAX	(1024 * 1024)	/* stdout of ldd/modprobe/busybox */
#define FILES_MAX	4096

static const char init_script[] =
	"#!/bin/sh\n"
	"# usbrig guest init: mount, load the results port and vhci, run the\n"
	"# agent, power off.  Written by harness/host/initramfs.c.\n"
	"export PATH=/usr/sbin:/usr/bin:/sbin:/bin\n"
	"mount -t proc proc /proc\n"
	"mount -t sysfs sysfs /sys\n"
	"# usbmon's text interface lives in debugfs (usb/usbmon/Nu)\n"
	"mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null\n"
	"mount -t devtmpfs devtmpfs /dev\n"
	"mount -t tmpfs tmpfs /tmp\n"
	"mount -t tmpfs tmpfs /run\n"
	"ip link set lo up\n"
	"modprobe virtio_pci\n"
	"modprobe virtio_console\n"
	"modprobe vhci-hcd\n"
	"for a in $(cat /proc/cmdline); do\n"
	"\tcase $a in\n"
	"\tusbrig.net=1)\n"
	"\t\tmodprobe virtio_net\n"
	"\t\tip addr add 10.0.2.15/24 dev eth0\n"
	"\t\tip link set eth0 up\n"
	"\t\t;;\n"
	"\tesac\n"
	"done\n"
	"/usr/bin/usbrig-agent /usbrig/plan\n"
	"echo \"usbrig-init: agent exited with status $?\"\n"
	"sync\n"
	"poweroff -f\n"
	"reboot -f\n";

struct entry {
	char *src;	/* host path */
	char *dst;	/* path in the image, no leading '/' */
};

struct build {
	const struct initramfs_opts *o;
	char *err;
	size_t errlen;
	struct entry *files;
	size_t n_files;
	char **mods;	/* module entries are also in files; names here */
	size_t n_mods;

	unsigned __int128 hash;
	char stage[PATH_MAX];
};

static int fail(struct build *b, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct build *b, int ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(b->err, b->errlen, "initramfs: ");
	if (n < 0 || (size_t)n >= b->errlen)
		return ret;
	va_start(ap, fmt);
	vsnprintf(b->err + n, b->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return ret;
}

/* ---- FNV-1a, 128 bit: a cache key, not a security boundary ---- */

#define FNV128_OFFSET	(((unsigned __int128)0x6c62272e07bb0142ULL << 64) | \
			 0x62b821756295c58dULL)
#define FNV128_PRIME	(((unsigned __int128)0x0000000001000000ULL << 64) | \
			 0x000000000000013bULL)

static void hash_bytes(unsigned __int128 *h, const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--) {
		*h ^= *c++;
		*h *= FNV128_PRIME;
	}
}

/* Strings are hashed with their NUL so "ab","c" differs from "a","bc". */
static void hash_str(unsigned __int128 *h, const char *s)
{
	hash_bytes(h, s, strlen(s) + 1);
}

static int hash_stat(unsigned __int128 *h, const char *path)
{
	struct stat st;
	uint64_t v[5];

	if (stat(path, &st))
		return -errno;
	v[0] = (uint64_t)st.st_size;
	v[1] = (uint64_t)st.st_mtim.tv_sec;
	v[2] = (uint64_t)st.st_mtim.tv_nsec;
	v[3] = (uint64_t)st.st_ino;
	v[4] = (uint64_t)st.st_dev;
	hash_str(h, path);
	hash_bytes(h, v, sizeof(v));
	return 0;
}

/* ---- small helpers ---- */

/* Copy src's contents (following links) to dst, created with mode. */
static int copy_file(const char *src, const char *dst, mode_t mode)
{
	char buf[65536];
	int in, out, ret = 0;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (out < 0) {
		ret = -errno;
		close(in);
		return ret;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		ret = fs_write_all(out, buf, (size_t)n);
		if (ret)
			break;
	}
	if (close(out) && !ret)
		ret = -errno;
	close(in);
	return ret;
}

/*
 * Run argv[0] (a path) with stdout captured into a malloc'd NUL-terminated
 * buffer (*out, at most CAPTURE_MAX bytes); stderr is kept only when
 * verbose.  Returns the exit status (>= 0) or -errno.
 */
static int run_capture(char *const argv[], char **out, int verbose)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int pfd[2], status;
	pid_t pid;

	if (!buf)
		return -ENOMEM;
	if (pipe2(pfd, O_CLOEXEC)) {
		free(buf);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		free(buf);
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(pfd[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			if (!verbose)
				dup2(null, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n;

		if (len + 1 == cap) {
			char *nb;

			if (cap >= CAPTURE_MAX)
				break;	/* drain below, keep what fits */
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(pfd[0], buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(pfd[0]);	/* a child still writing gets SIGPIPE */
	buf[len] = '\0';
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			free(buf);
			return -errno;
		}
	}
	*out = buf;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static const char *first_existing(const char *const *paths)
{
	for (; *paths; paths++)
		if (!access(*paths, R_OK))
			return *paths;
	return NULL;
}

/* ---- the file list ---- */

static int add_file(struct build *b, const char *src, const char *dst)
{
	size_t i;

	while (*dst == '/')
		dst++;
	for (i = 0; i < b->n_files; i++)
		if (!strcmp(b->files[i].dst, dst))
			return 0;
	if (b->n_files == FILES_MAX)
		return fail(b, -E2BIG, "more than %d files", FILES_MAX);
	if (!(b->n_files & 63)) {
		struct entry *n = realloc(b->files,
					  (b->n_files + 64) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		b->files = n;
	}
	b->files[b->n_files].src = strdup(src);
	b->files[b->n_files].dst = strdup(dst);
	if (!b->files[b->n_files].src || !b->files[b->n_files].dst)
		return -ENOMEM;
	b->n_files++;
	return hash_stat(&b->hash, src) ? fail(b, -ENOENT, "%s: %s", src,
						 strerror(ENOENT)) : 0;
}

/* Add bin and every library `ldd bin` names, the loader included. */
static int add_elf(struct build *b, const char *src, const char *dst)
{
	char *const argv[] = { "/usr/bin/ldd", (char *)src, NULL };
	char *out = NULL, *line, *save = NULL;
	int ret;

	ret = add_file(b, src, dst);
	if (ret)
		return ret;
	ret = run_capture(argv, &out, 0);
	if (ret < 0)
		return fail(b, ret, "ldd %s: %s", src, strerror(-ret));
	/* "not a dynamic executable" exits 1: nothing to add */
	for (line = strtok_r(out, "\n", &save); line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		char *arrow = strstr(line, "=> ");
		char *path, *end;

		if (strstr(line, "not found")) {
			ret = fail(b, -ENOENT, "%s: %s", src, line);
			break;
		}
		path = arrow ? arrow + 3 : line;
		while (*path == ' ' || *path == '\t')
			path++;
		if (*path != '/')
			continue;	/* linux-vdso.so.1 */
		end = strchr(path, ' ');
		if (end)
			*end = '\0';
		ret = add_file(b, path, path);
	}
	free(out);
	return ret;
}

/*
 * `modprobe -d ROOT -S KVER -a --show-depends NAME...` and add every .ko it
 * names (built-in ones print "builtin NAME" and need nothing).  strict: a
 * module modprobe does not know is an error, else it is skipped.
 */
static int show_depends(struct build *b, const char *root, const char *kver,
			const char *const *names, size_t n, bool strict)
{
	char **argv, *out = NULL, *line, *save = NULL;
	char prefix[PATH_MAX];
	size_t i = 0, plen;
	int ret;

	if (!n)
		return 0;
	argv = calloc(n + 8, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	argv[i++] = "/usr/sbin/modprobe";
	argv[i++] = "-d";
	argv[i++] = (char *)root;
	argv[i++] = "-S";
	argv[i++] = (char *)kver;
	argv[i++] = "-a";
	argv[i++] = "--show-depends";
	for (size_t k = 0; k < n; k++)
		argv[i++] = (char *)names[k];
	argv[i] = NULL;
	ret = run_capture(argv, &out, strict);
	free(argv);
	if (ret && strict) {
		free(out);
		return fail(b, ret < 0 ? ret : -ENOENT,
			    "modprobe --show-depends failed (status %d) for the modules in %s/lib/modules/%s (a module that does not exist? a --modules tree needs `depmod -b DIR %s`)",
			    ret, root, kver, kver);
	}
	if (ret < 0)
		return 0;	/* optional, and modprobe did not run */
	snprintf(prefix, sizeof(prefix), "%s/lib/modules/%s/",
		 strcmp(root, "/") ? root : "", kver);
	plen = strlen(prefix);
	ret = 0;
	for (line = strtok_r(out, "\n", &save); line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		char *path, *end, dst[PATH_MAX];

		if (strncmp(line, "insmod ", 7))
			continue;
		path = line + 7;
		end = strchr(path, ' ');
		if (end)
			*end = '\0';
		/* modprobe may print the path with a doubled slash */
		if (strncmp(path, prefix, plen)) {
			char *p = strstr(path, "/lib/modules/");

			if (!p) {
				ret = fail(b, -EINVAL, "odd modprobe path %s",
					   path);
				break;
			}
			p += strlen("/lib/modules/");
			snprintf(dst, sizeof(dst), "lib/modules/%s", p);
		} else {
			snprintf(dst, sizeof(dst), "lib/modules/%s/%s", kver,
				 path + plen);
		}
		ret = add_file(b, path, dst);
	}
	free(out);
	return ret;
}

/* names[0..n), each alone and optional (another kernel may have it built
 * in, or not at all) */
static int add_optional(struct build *b, const char *root, const char *kver,
			const char *const *names, size_t n)
{
	int ret = 0;

	for (size_t k = 0; k < n && !ret; k++)
		ret = show_depends(b, root, kver, &names[k], 1, false);
	return ret;
}

/*
 * The base modules, then the plan's modules strictly and, with them, the
 * ones the kernel loads on demand (INITRAMFS_ONDEMAND_MODULES).
 */
static int add_modules(struct build *b, const char *root, const char *kver)
{
	static const char *const base[] = { INITRAMFS_BASE_MODULES };
	static const char *const ondemand[] = { INITRAMFS_ONDEMAND_MODULES };
	const struct initramfs_opts *o = b->o;
	char dir[PATH_MAX];
	int ret;

	snprintf(dir, sizeof(dir), "%s/lib/modules/%s",
		 strcmp(root, "/") ? root : "", kver);
	if (access(dir, F_OK)) {
		/* a kernel with everything built in has no modules tree */
		if (o->verbose)
			fprintf(stderr, "initramfs: no %s: staging no modules\n",
				dir);
		hash_str(&b->hash, "no-modules");
		return o->n_modules ? fail(b, -ENOENT, "no %s for the modules the plan loads",
					   dir) : 0;
	}
	ret = add_optional(b, root, kver, base, sizeof(base) / sizeof(base[0]));
	if (ret)
		return ret;
	for (size_t k = 0; k < o->n_modules; k++)
		hash_str(&b->hash, o->modules[k]);
	ret = show_depends(b, root, kver, o->modules, o->n_modules, true);
	if (ret || !o->n_modules)
		return ret;
	return add_optional(b, root, kver, ondemand,
			    sizeof(ondemand) / sizeof(ondemand[0]));
}

/* ---- guest tools (`requires tool NAME`) ---- */

static const char *const lsusb_paths[] = {
	"/usr/bin/lsusb", "/usr/sbin/lsusb", "/bin/lsusb", NULL };
static const char *const tcpdump_paths[] = {
	"/usr/bin/tcpdump", "/usr/sbin/tcpdump", "/sbin/tcpdump", NULL };
/* lsusb names vendors and products from udev's hwdb, classes from usb.ids
 * (in the base) */
static const char *const hwdb_paths[] = {
	"/usr/lib/udev/hwdb.bin", "/lib/udev/hwdb.bin", "/etc/udev/hwdb.bin",
	NULL };

const char *initramfs_tool_path(const char *name)
{
	if (!strcmp(name, "lsusb"))
		return first_existing(lsusb_paths);
	if (!strcmp(name, "tcpdump"))
		return first_existing(tcpdump_paths);
	return NULL;
}

/*
 * Each tool with its libraries; lsusb with the hwdb.  tcpdump started as
 * root drops to the user `tcpdump` (Debian builds it --with-user), which
 * the /etc/passwd of stage_all() provides; its libpcap reads usbmon
 * through /dev/usbmonN (the usbmon module, `modprobe usbmon`).
 */
static int add_tools(struct build *b)
{
	const struct initramfs_opts *o = b->o;
	const char *src, *hwdb;
	char dst[PATH_MAX];
	int ret;

	for (size_t k = 0; k < o->n_tools; k++) {
		hash_str(&b->hash, o->tools[k]);
		src = initramfs_tool_path(o->tools[k]);
		if (!src)
			return fail(b, -ENOENT, "no guest tool %s on this host (apt-get install %s)",
				    o->tools[k], !strcmp(o->tools[k], "lsusb") ?
				    "usbutils" : o->tools[k]);
		snprintf(dst, sizeof(dst), "usr/bin/%s", o->tools[k]);
		ret = add_elf(b, src, dst);
		if (ret)
			return ret;
		if (strcmp(o->tools[k], "lsusb"))
			continue;
		hwdb = first_existing(hwdb_paths);
		if (hwdb) {
			ret = add_file(b, hwdb, "usr/lib/udev/hwdb.bin");
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* ---- staging ---- */

static int stage_path(struct build *b, const char *rel, char *out,
		      size_t size)
{
	if (snprintf(out, size, "%s/%s", b->stage, rel) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

static int stage_parent(struct build *b, const char *rel)
{
	char p[PATH_MAX], *slash;
	int ret;

	ret = stage_path(b, rel, p, sizeof(p));
	if (ret)
		return ret;
	slash = strrchr(p, '/');
	*slash = '\0';
	return fs_mkdir_p(p, 0755);
}

static int stage_busybox_links(struct build *b, const char *bb_dst)
{
	char *const argv[] = { (char *)b->files[0].src, "--list-full", NULL };
	char *out = NULL, *line, *save = NULL, target[PATH_MAX];
	int ret;

	ret = run_capture(argv, &out, 0);
	if (ret)
		return fail(b, ret < 0 ? ret : -EINVAL,
			    "%s --list-full failed", argv[0]);
	snprintf(target, sizeof(target), "/%s", bb_dst);
	for (line = strtok_r(out, "\n", &save); line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		char p[PATH_MAX];

		if (!*line || !strcmp(line, bb_dst))
			continue;
		ret = stage_parent(b, line);
		if (!ret)
			ret = stage_path(b, line, p, sizeof(p));
		if (ret)
			break;
		if (!access(p, F_OK))
			continue;	/* a real tool staged there wins */
		if (symlink(target, p))
			ret = -errno;
	}
	free(out);
	return ret;
}

static int stage_all(struct build *b, const char *root, const char *kver)
{
	static const char *const dirs[] = {
		"proc", "sys", "dev", "tmp", "run", "var", "etc", "root",
		"usbrig/gadgets",
	};
	static const char *const mod_meta[] = {
		"modules.order", "modules.builtin", "modules.builtin.modinfo",
	};
	char p[PATH_MAX], src[PATH_MAX];
	size_t i;
	int ret, fd;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		ret = stage_path(b, dirs[i], p, sizeof(p));
		if (!ret)
			ret = fs_mkdir_p(p, 0755);
		if (ret)
			return fail(b, ret, "mkdir %s: %s", p, strerror(-ret));
	}
	ret = stage_path(b, "var/run", p, sizeof(p));
	if (!ret && symlink("/run", p))
		ret = -errno;
	if (ret)
		return fail(b, ret, "var/run: %s", strerror(-ret));

	for (i = 0; i < b->n_files; i++) {
		struct stat st;

		ret = stage_parent(b, b->files[i].dst);
		if (!ret)
			ret = stage_path(b, b->files[i].dst, p, sizeof(p));
		if (!ret && stat(b->files[i].src, &st))
			ret = -errno;
		if (!ret)
			ret = copy_file(b->files[i].src, p,
					(st.st_mode & 0111) ? 0755 : 0644);
		if (ret)
			return fail(b, ret, "copy %s: %s", b->files[i].src,
				    strerror(-ret));
	}
	ret = stage_busybox_links(b, b->files[0].dst);
	if (ret)
		return ret;
	{
		static const char *const etc[][2] = {
			{ "etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"
			  "tcpdump:x:100:100:tcpdump:/tmp:/bin/false\n" },
			{ "etc/group", "root:x:0:\ntcpdump:x:100:\n" },
		};

		for (i = 0; i < sizeof(etc) / sizeof(etc[0]); i++) {
			ret = stage_path(b, etc[i][0], p, sizeof(p));
			if (ret)
				return ret;
			fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
				  0644);
			if (fd < 0)
				return fail(b, -errno, "%s: %s", p,
					    strerror(errno));
			ret = fs_write_all(fd, etc[i][1], strlen(etc[i][1]));
			close(fd);
			if (ret)
				return fail(b, ret, "%s: %s", p,
					    strerror(-ret));
		}
	}

	ret = stage_path(b, "init", p, sizeof(p));
	if (ret)
		return ret;
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0)
		return fail(b, -errno, "%s: %s", p, strerror(errno));
	ret = fs_write_all(fd, init_script, sizeof(init_script) - 1);
	close(fd);
	if (ret)
		return fail(b, ret, "%s: %s", p, strerror(-ret));

	for (i = 0; i < sizeof(mod_meta) / sizeof(mod_meta[0]); i++) {
		char rel[PATH_MAX];

		if (snprintf(rel, sizeof(rel), "lib/modules/%s/%s", kver,
			     mod_meta[i]) >= (int)sizeof(rel) ||
		    snprintf(src, sizeof(src), "%s/%s",
			     strcmp(root, "/") ? root : "", rel) >=
		    (int)sizeof(src))
			return fail(b, -ENAMETOOLONG, "%s: path too long",
				    root);
		if (access(src, R_OK))
			continue;
		ret = stage_parent(b, rel);
		if (!ret)
			ret = stage_path(b, rel, p, sizeof(p));
		if (!ret)
			ret = copy_file(src, p, 0644);
		if (ret)
			return fail(b, ret, "copy %s: %s", src,
				    strerror(-ret));
	}
	{
		char *const argv[] = { "/usr/sbin/depmod", "-b", b->stage,
				       (char *)kver, NULL };
		char *out = NULL;

		ret = run_capture(argv, &out, b->o->verbose);
		free(out);
		if (ret)
			return fail(b, ret < 0 ? ret : -EINVAL,
				    "depmod -b %s %s: status %d", b->stage,
				    kver, ret);
	}
	return 0;
}

/* Write the stage as an archive to path (via path.tmp.PID + rename). */
static int write_base(struct build *b, const char *path)
{
	char tmp[PATH_MAX];
	struct cpio c = { 0 };

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	c.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (c.fd < 0)
		return fail(b, -errno, "%s: %s", tmp, strerror(errno));
	/* the kernel opens /dev/console for init before /init mounts
	 * devtmpfs */
	cpio_header(&c, "dev", S_IFDIR | 0755, 0, 0, 0, 0);
	cpio_header(&c, "dev/console", S_IFCHR | 0600, 0, 0, 5, 1);
	cpio_tree(&c, b->stage, "");
	cpio_trailer(&c);
	if (!c.err && fsync(c.fd))
		c.err = -errno;
	if (close(c.fd) && !c.err)
		c.err = -errno;
	if (!c.err && rename(tmp, path))
		c.err = -errno;
	if (c.err) {
		unlink(tmp);
		return fail(b, c.err, "writing %s: %s", tmp, strerror(-c.err));
	}
	return 0;
}

/*
 * A scenario's `file` at its guest path.  The kernel's unpacker creates no
 * missing parents (init/initramfs.c do_name()), so every folder above it
 * gets a header first; one that exists already is left as it is but for
 * its mode (0755, as every folder of the base).
 */
static void cpio_guest_file(struct cpio *c, const struct initramfs_file *f)
{
	char dir[PATH_MAX];
	const char *p = f->dst;
	size_t n;

	while (*p == '/')
		p++;
	n = strlen(p);
	if (!n || n >= sizeof(dir)) {
		c->err = -ENAMETOOLONG;
		return;
	}
	for (size_t k = 0; k < n; k++)
		if (p[k] == '/') {
			memcpy(dir, p, k);
			dir[k] = '\0';
			cpio_header(c, dir, S_IFDIR | 0755, 0, 0, 0, 0);
		}
	cpio_file(c, p, f->src);
}

/* base + a second archive with the plan, the gadget scripts and the
 * scenarios' files. */
static int write_image(struct build *b, const char *base)
{
	const struct initramfs_opts *o = b->o;
	char tmp[PATH_MAX];
	struct cpio c = { 0 };
	unsigned long long total;
	size_t i, j;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", o->out_path,
		     (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (i = 0, total = 0; i < o->n_files; i++) {
		struct stat st;

		/* the whole image lives in guest RAM: keep it bounded */
		if (stat(o->files[i].src, &st))
			return fail(b, -errno, "%s: %s", o->files[i].src,
				    strerror(errno));
		total += (unsigned long long)st.st_size;
		if (total > INITRAMFS_FILES_MAX_BYTES)
			return fail(b, -EFBIG, "the scenarios' files exceed %u MiB (at %s)",
				    INITRAMFS_FILES_MAX_BYTES >> 20,
				    o->files[i].src);
	}
	c.err = copy_file(base, tmp, 0644);
	if (c.err)
		return fail(b, c.err, "copy %s: %s", base, strerror(-c.err));
	c.fd = open(tmp, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (c.fd < 0)
		return fail(b, -errno, "%s: %s", tmp, strerror(errno));
	c.ino = 1u << 24;	/* distinct from the base's inode numbers */
	cpio_header(&c, "usbrig", S_IFDIR | 0755, 0, 0, 0, 0);
	cpio_header(&c, "usbrig/gadgets", S_IFDIR | 0755, 0, 0, 0, 0);
	if (o->plan_path)
		cpio_file(&c, "usbrig/plan", o->plan_path);
	for (i = 0; i < o->n_gadgets && !c.err; i++) {
		const char *bn = strrchr(o->gadgets[i], '/');
		char name[PATH_MAX];

		bn = bn ? bn + 1 : o->gadgets[i];
		for (j = 0; j < i; j++) {
			const char *bj = strrchr(o->gadgets[j], '/');

			bj = bj ? bj + 1 : o->gadgets[j];
			if (!strcmp(bj, bn))
				break;
		}
		if (j < i)
			continue;	/* same basename: the plan names one */
		snprintf(name, sizeof(name), "usbrig/gadgets/%s", bn);
		cpio_file(&c, name, o->gadgets[i]);
	}
	for (i = 0; i < o->n_files && !c.err; i++)
		cpio_guest_file(&c, &o->files[i]);
	cpio_trailer(&c);
	if (close(c.fd) && !c.err)
		c.err = -errno;
	if (!c.err && rename(tmp, o->out_path))
		c.err = -errno;
	if (c.err) {
		unlink(tmp);
		return fail(b, c.err, "writing %s: %s", o->out_path,
			    strerror(-c.err));
	}
	return 0;
}

/*
 * Drop what no run will use again: base images unused for a week (a reuse
 * touches its mtime) and staging leftovers of builds that died over an
 * hour ago.  Files that young are never touched, so a parallel job never
 * loses the image it is about to copy.
 */
static void prune_cache(const char *dir)
{
	struct dirent **ents;
	time_t now = time(NULL);
	int n, i;

	n = scandir(dir, &ents, NULL, NULL);
	if (n < 0)
		return;
	for (i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		char p[PATH_MAX];
		struct stat st;
		bool base = !strncmp(d, "base-", 5);
		bool stage = !strncmp(d, "stage-", 6) || strstr(d, ".tmp.");

		if ((base || stage) &&
		    snprintf(p, sizeof(p), "%s/%s", dir, d) < (int)sizeof(p) &&
		    !lstat(p, &st) &&
		    now - st.st_mtime > (base ? 7 * 86400 : 3600)) {
			if (S_ISDIR(st.st_mode))
				fs_rm_rf(p);
			else
				unlink(p);
		}
		free(ents[i]);
	}
	free(ents);
}

int initramfs_build(const struct initramfs_opts *o, char *err, size_t errlen)
{
	static const char *const busybox[] = {
		"/usr/bin/busybox", "/bin/busybox", NULL };
	static const char *const usbip[] = {
		"/usr/sbin/usbip", "/usr/bin/usbip", "/sbin/usbip", NULL };
	static const char *const usbipd[] = {
		"/usr/sbin/usbipd", "/usr/bin/usbipd", "/sbin/usbipd", NULL };
	static const char *const usb_ids[] = {
		"/usr/share/misc/usb.ids", "/usr/share/hwdata/usb.ids",
		"/var/lib/usbutils/usb.ids", NULL };
	struct build b = {
		.o = o, .err = err, .errlen = errlen, .hash = FNV128_OFFSET,
	};
	const char *root = o->modules_dir ? o->modules_dir : "/";
	const char *src;
	char path[PATH_MAX], base[PATH_MAX];
	unsigned long long hi, lo;
	size_t i;
	int ret;

	if (errlen)
		err[0] = '\0';
	hash_str(&b.hash, INITRAMFS_FORMAT);
	hash_str(&b.hash, init_script);
	hash_str(&b.hash, o->kver);
	hash_str(&b.hash, root);

	/* files[0] is busybox: stage_busybox_links runs it */
	src = first_existing(busybox);
	if (!src)
		return fail(&b, -ENOENT, "no busybox (apt-get install busybox-static)");
	ret = add_file(&b, src, "bin/busybox");
	if (ret)
		goto out;
	src = first_existing(usbip);
	if (!src) {
		ret = fail(&b, -ENOENT, "no usbip tool (apt-get install usbip)");
		goto out;
	}
	ret = add_elf(&b, src, "usr/sbin/usbip");
	if (ret)
		goto out;
	/* optional: the kernel's own export path (usbip-host), for
	 * side-by-side benches; same package as usbip */
	src = first_existing(usbipd);
	if (src) {
		ret = add_elf(&b, src, "usr/sbin/usbipd");
		if (ret)
			goto out;
	}
	src = first_existing(usb_ids);
	if (!src) {
		ret = fail(&b, -ENOENT, "no usb.ids (apt-get install usb.ids)");
		goto out;
	}
	ret = add_file(&b, src, "usr/share/misc/usb.ids");
	if (!ret)
		ret = add_file(&b, src, "usr/share/hwdata/usb.ids");
	if (ret)
		goto out;
	snprintf(path, sizeof(path), "%s/usbrig-agent", o->bin_dir);
	ret = add_elf(&b, path, "usr/bin/usbrig-agent");
	if (ret)
		goto out;
	snprintf(path, sizeof(path), "%s/usbrig-gadget", o->bin_dir);
	if (!access(path, X_OK)) {
		ret = add_elf(&b, path, "usr/bin/usbrig-gadget");
		if (ret)
			goto out;
	} else if (o->verbose) {
		fprintf(stderr, "initramfs: no %s: the guest has no gadget server\n",
			path);
	}
	ret = add_modules(&b, root, o->kver);
	if (ret)
		goto out;
	ret = add_tools(&b);
	if (ret)
		goto out;

	hi = (unsigned long long)(b.hash >> 64);
	lo = (unsigned long long)b.hash;
	ret = fs_mkdir_p(o->cache_dir, 0755);
	if (ret) {
		fail(&b, ret, "%s: %s", o->cache_dir, strerror(-ret));
		goto out;
	}
	snprintf(base, sizeof(base), "%s/base-%016llx%016llx.cpio",
		 o->cache_dir, hi, lo);
	if (access(base, R_OK)) {
		if (snprintf(b.stage, sizeof(b.stage), "%s/stage-XXXXXX",
			     o->cache_dir) >= (int)sizeof(b.stage) ||
		    !mkdtemp(b.stage)) {
			ret = fail(&b, -errno, "mkdtemp in %s: %s",
				   o->cache_dir, strerror(errno));
			b.stage[0] = '\0';
			goto out;
		}
		if (o->verbose)
			fprintf(stderr, "initramfs: building %s (%zu files)\n",
				base, b.n_files);
		ret = stage_all(&b, root, o->kver);
		if (!ret)
			ret = write_base(&b, base);
		if (ret)
			goto out;
	} else {
		utimensat(AT_FDCWD, base, NULL, 0);	/* recently used */
		if (o->verbose)
			fprintf(stderr, "initramfs: reusing %s\n", base);
	}
	prune_cache(o->cache_dir);
	ret = write_image(&b, base);
out:
	if (b.stage[0])
		fs_rm_rf(b.stage);
	for (i = 0; i < b.n_files; i++) {
		free(b.files[i].src);
		free(b.files[i].dst);
	}
	free(b.files);
	if (ret && errlen && !err[0])
		fail(&b, ret, "%s", strerror(-ret));
	return ret;
}

int initramfs_kernel_release(const char *bzimage, char *buf, size_t size)
{
	unsigned char hdr[0x210];
	char ver[256];
	uint16_t off;
	ssize_t n;
	size_t i;
	int fd, ret = 0;

	fd = open(bzimage, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, hdr, sizeof(hdr), 0);
	/* "HdrS" at 0x202; kernel_version at 0x20e is an offset from 0x200 */
	if (n != (ssize_t)sizeof(hdr) || memcmp(hdr + 0x202, "HdrS", 4)) {
		ret = -ENOEXEC;
		goto out;
	}
	off = (uint16_t)(hdr[0x20e] | hdr[0x20f] << 8);
	if (!off) {
		ret = -ENOEXEC;
		goto out;
	}
	n = pread(fd, ver, sizeof(ver) - 1, (off_t)off + 0x200);
	if (n <= 0) {
		ret = -ENOEXEC;
		goto out;
	}
	ver[n] = '\0';
	for (i = 0; ver[i] && ver[i] != ' '; i++)
		;
	ver[i] = '\0';
	if (!i || i >= size) {
		ret = -ENOSPC;
		goto out;
	}
	memcpy(buf, ver, i + 1);
out:
	close(fd);
	return ret;
}

int initramfs_default_kernel(char *buf, size_t size)
{
	struct dirent **ents;
	int n, i, ret = -ENOENT;

	n = scandir("/boot", &ents, NULL, versionsort);
	if (n < 0)
		return -errno;
	for (i = n - 1; i >= 0; i--) {
		if (ret && !strncmp(ents[i]->d_name, "vmlinuz-", 8) &&
		    snprintf(buf, size, "/boot/%s", ents[i]->d_name) <
		    (int)size && !access(buf, R_OK))
			ret = 0;
	}
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return ret;
}
