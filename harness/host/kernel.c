// SPDX-License-Identifier: GPL-2.0
/*
 * kernel.c - which guest kernel a run boots (kernel.h).
 *
 * `--kernel` is a bzImage path, one of the words naming a build of
 * kernel-patch/build.sh, or `debian:VERSION`: a kernel image package of
 * the host's apt sources, downloaded and unpacked into a cache without
 * installing it.  Its modules come from `--modules`, the build's or the
 * package's own (or a bzImage's in build.sh's output layout: its folder's
 * modules/), or the host's /lib/modules.  The release is read from
 * the bzImage's header, and the .config is looked for next to it.
 */
#define _GNU_SOURCE
#include "kernel.h"

#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/fsutil.h"
#include "initramfs.h"

/* The folder that holds the kernels usbrig builds or fetches
 * (build/kernel-VER for another source version's builds). */
static int kernel_cache_ver(const char *root, const char *ver,
			    const char *sub, char *buf, size_t size)
{
	const char *env = getenv("USBRIG_KERNEL_DIR");
	int n;

	if (env && *env)
		n = snprintf(buf, size, "%s%s", env, sub);
	else
		n = snprintf(buf, size, "%s/build/kernel%s%s%s", root,
			     *ver ? "-" : "", ver, sub);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int kernel_cache(const char *root, const char *sub, char *buf,
			size_t size)
{
	return kernel_cache_ver(root, "", sub, buf, size);
}

/*
 * `--kernel patched[-VER][-kasan]`: the outputs of kernel-patch/build.sh
 * (`make kernel`, `make kernel-kasan`, with KVER=VER for another source
 * version), in $USBRIG_KERNEL_DIR or ROOT/build/kernel[-VER] (the
 * Makefile's KERNEL_OUT), the KASAN flavour in its kasan/ folder.  1 when
 * name is not such a word, 0 when resolved, -errno (message printed) when
 * the build is missing.
 */
static int resolve_patched(const char *prog, const char *name,
			   const char *root, struct guest_kernel *k)
{
	const char *flavour_dir = "", *rest = name + 7;
	char dir[PATH_MAX], probe[PATH_MAX], ver[16] = "", target[64];
	struct stat st;
	size_t n;

	if (strncmp(name, "patched", 7))
		return 1;
	if (rest[0] == '-' && rest[1] >= '0' && rest[1] <= '9') {
		n = strspn(rest + 1, "0123456789.");
		if (n >= sizeof(ver))
			return 1;
		memcpy(ver, rest + 1, n);
		ver[n] = '\0';
		rest += 1 + n;
	}
	if (!strcmp(rest, "-kasan"))
		flavour_dir = "/kasan";
	else if (*rest)
		return 1;
	snprintf(target, sizeof(target), "make kernel%s%s%s", *flavour_dir ?
		 "-kasan" : "", *ver ? " KVER=" : "", ver);
	if (kernel_cache_ver(root, ver, flavour_dir, dir, sizeof(dir)) ||
	    snprintf(k->bzimage, sizeof(k->bzimage), "%s/bzImage", dir) >=
	    (int)sizeof(k->bzimage) ||
	    snprintf(k->mods_root, sizeof(k->mods_root), "%s/modules", dir) >=
	    (int)sizeof(k->mods_root) ||
	    snprintf(probe, sizeof(probe), "%s/lib/modules", k->mods_root) >=
	    (int)sizeof(probe)) {
		fprintf(stderr, "%s: --kernel %s: path too long\n", prog, name);
		return -ENAMETOOLONG;
	}
	if (stat(k->bzimage, &st) || !S_ISREG(st.st_mode) ||
	    stat(probe, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: --kernel %s: %s is not built (no %s): run `%s` first\n",
			prog, name, dir, access(k->bzimage, F_OK) ?
			"bzImage" : "modules/lib/modules", target);
		return -ENOENT;
	}
	k->patched = true;
	return 0;
}

/* ---- debian:VERSION ---- */

#define DEB_MAX_IMAGES	512
#define DEB_MAX_OUT	(4u << 20)
#define DEB_CACHE_MAX	2048	/* leaves room for package names */

/*
 * An image package is linux-image-V-amd64 or linux-image-V-amd64-unsigned,
 * V an ABI name ("6.1.0-57", "6.12.113+deb12"; not a metapackage's "6.12").
 * The other flavours (cloud, rt) and the debug packages are not guest
 * kernels here.
 */
bool kernel_deb_image_version(const char *pkg, char *ver, size_t size)
{
	static const char *const tails[] = { "-amd64-unsigned", "-amd64" };
	size_t len, i;
	const char *v;

	if (strncmp(pkg, "linux-image-", 12))
		return false;
	v = pkg + 12;
	len = strlen(v);
	for (i = 0; i < 2; i++) {
		size_t t = strlen(tails[i]);

		if (len <= t || strcmp(v + len - t, tails[i]) ||
		    len - t >= size)
			continue;
		snprintf(ver, len - t + 1, "%s", v);
		return strpbrk(ver, "-+") && !strstr(ver, "-cloud") &&
		       !strstr(ver, "-rt") && *ver >= '0' && *ver <= '9';
	}
	return false;
}

/* "6.1" is 6.1.0-57, not 6.12 */
bool kernel_deb_version_matches(const char *v, const char *spec)
{
	size_t n = strlen(spec);

	return !strncmp(v, spec, n) && strchr(".-+", v[n]);
}

static int cmp_version_desc(const void *a, const void *b)
{
	return strverscmp(*(char *const *)b, *(char *const *)a);
}

/* Run argv, its stdout into *out (malloc'd); its exit status or -errno. */
static int deb_capture(const char *const argv[], const char *tmp,
		       char **out)
{
	int ret = fs_run_cmd((char *const *)argv, tmp, "/dev/null");

	*out = ret < 0 ? NULL : fs_read_file(tmp, DEB_MAX_OUT, NULL);
	unlink(tmp);
	if (ret >= 0 && !*out)
		return -errno;
	return ret;
}

/*
 * The newest image package of spec that apt can download: its name and
 * package version.  0, or -errno with the reason printed.
 */
static int deb_pick(const char *prog, const char *spec, const char *tmp,
		    char *pkg, size_t psize, char *pver, size_t vsize)
{
	const char *const names_argv[] = { "/usr/bin/apt-cache", "pkgnames",
					   "linux-image-", NULL };
	char *vers[DEB_MAX_IMAGES], *out, *line, *save;
	int n = 0, i, ret;

	ret = deb_capture(names_argv, tmp, &out);
	if (ret) {
		free(out);
		fprintf(stderr, "%s: --kernel debian:%s: apt-cache pkgnames failed (%s)\n",
			prog, spec, ret < 0 ? strerror(-ret) : "exit status");
		return ret < 0 ? ret : -EIO;
	}
	for (line = strtok_r(out, "\n", &save); line && n < DEB_MAX_IMAGES;
	     line = strtok_r(NULL, "\n", &save)) {
		char v[128];

		if (!kernel_deb_image_version(line, v, sizeof(v)) ||
		    !kernel_deb_version_matches(v, spec))
			continue;
		for (i = 0; i < n && strcmp(vers[i], v); i++)
			;
		if (i < n)
			continue;
		vers[n] = strdup(v);
		if (vers[n])
			n++;
	}
	free(out);
	qsort(vers, (size_t)n, sizeof(*vers), cmp_version_desc);
	ret = -ENOENT;
	for (i = 0; i < n && ret; i++) {
		static const char *const tails[] = { "-amd64-unsigned",
						     "-amd64" };

		for (size_t t = 0; t < 2 && ret; t++) {
			const char *const show_argv[] = {
				"/usr/bin/apt-cache", "show",
				"--no-all-versions", pkg, NULL };
			char *p;

			snprintf(pkg, psize, "linux-image-%s%s", vers[i],
				 tails[t]);
			if (deb_capture(show_argv, tmp, &out) || !out) {
				free(out);
				continue;
			}
			p = strstr(out, "\nVersion: ");
			if (p && sscanf(p + 10, "%63s", pver) == 1 &&
			    vsize > 63)
				ret = 0;
			free(out);
		}
	}
	for (i = 0; i < n; i++)
		free(vers[i]);
	if (ret)
		fprintf(stderr, "%s: --kernel debian:%s: apt knows no linux-image-%s*-amd64 package (apt-cache search linux-image-%s; apt-get update?)\n",
			prog, spec, spec, spec);
	return ret;
}

/* Download pkg=pver and unpack it into dir, all of it or nothing. */
static int deb_fetch(const char *prog, const char *cache, const char *pkg,
		     const char *pver, const char *dir)
{
	char tmp[DEB_CACHE_MAX + 16], log[sizeof(tmp) + 8], arg[300];
	char unpacked[sizeof(tmp) + 8];
	char deb[sizeof(tmp) + 256];
	const char *const get_argv[] = { "/bin/sh", "-c",
		"cd \"$1\" && exec apt-get download -q \"$2\"",
		"sh", tmp, arg, NULL };
	const char *const x_argv[] = { "/usr/bin/dpkg-deb", "-x", deb,
				       unpacked, NULL };
	const char *const prep_argv[] = { "/bin/sh", "-ec",
		"cd \"$1\"/lib/modules; for v in *; do\n"
		"  find \"$v\" -name '*.ko.xz' -print0 | xargs -0 -r xz -d\n"
		"  find \"$v\" -name '*.ko.zst' -print0 | xargs -0 -r zstd -qd --rm\n"
		"  /sbin/depmod -b \"$1\" \"$v\"\n"
		"done", "sh", unpacked, NULL };
	struct dirent *e;
	DIR *d;
	int ret;

	snprintf(tmp, sizeof(tmp), "%s/.fetch-XXXXXX", cache);
	if (!mkdtemp(tmp))
		return -errno;
	snprintf(log, sizeof(log), "%s/log", tmp);
	snprintf(arg, sizeof(arg), "%s=%s", pkg, pver);
	snprintf(unpacked, sizeof(unpacked), "%s/root", tmp);
	fprintf(stderr, "%s: fetching %s %s into %s\n", prog, pkg, pver, dir);
	ret = fs_run_cmd((char *const *)get_argv, log, log);
	deb[0] = '\0';
	d = ret ? NULL : opendir(tmp);
	while (d && (e = readdir(d)))
		if (strstr(e->d_name, ".deb"))
			snprintf(deb, sizeof(deb), "%s/%s", tmp, e->d_name);
	if (d)
		closedir(d);
	if (!deb[0]) {
		char *l = fs_read_file(log, 4096, NULL);

		fprintf(stderr, "%s: apt-get download %s failed: %s\n", prog,
			arg, l ? l : "no output");
		free(l);
		fs_rm_rf(tmp);
		return -EIO;
	}
	ret = fs_run_cmd((char *const *)x_argv, log, log);
	/* what the package's postinst would do: the guest's busybox modprobe
	 * loads plain .ko files, and modprobe needs modules.dep */
	if (!ret)
		ret = fs_run_cmd((char *const *)prep_argv, log, log);
	if (ret || rename(unpacked, dir)) {
		char *l = fs_read_file(log, 4096, NULL);

		fprintf(stderr, "%s: unpacking %s failed: %s\n", prog, deb,
			ret ? (l ? l : "no output") : strerror(errno));
		free(l);
		fs_rm_rf(tmp);
		return -EIO;
	}
	fs_rm_rf(tmp);
	return 0;
}

/*
 * `--kernel debian:VERSION`: VERSION is a kernel version (6.12), an ABI
 * name (6.1.0-57) or a whole one (6.12.113+deb12).  The package is
 * unpacked once into CACHE/debian/PACKAGE_VERSION (its boot/vmlinuz-* and
 * lib/modules/); the host's /boot and boot loader are not touched and no
 * root is needed.  1 when name is not debian:..., 0 when resolved, -errno
 * (message printed) else.
 */
static int resolve_debian(const char *prog, const char *name,
			  const char *root, struct guest_kernel *k)
{
	const char *spec = name + 7;
	char cache[DEB_CACHE_MAX], tmp[DEB_CACHE_MAX + 16];
	char pkg[200], pver[64], dir[DEB_CACHE_MAX + 300], boot[sizeof(dir) + 8];
	struct dirent *e;
	DIR *d;
	int ret;

	if (strncmp(name, "debian:", 7))
		return 1;
	if (!*spec || spec[strspn(spec, "0123456789abcdefghijklmnopqrstuvwxyz.+~-")] ||
	    strlen(spec) > 64) {
		fprintf(stderr, "%s: --kernel %s: expected debian:VERSION, VERSION like 6.12, 6.1.0-57 or 6.12.113+deb12\n",
			prog, name);
		return -EINVAL;
	}
	ret = kernel_cache(root, "/debian", tmp, sizeof(tmp));
	if (!ret && fs_mkdir_p(tmp, 0755))
		ret = -errno;
	/* absolute: the unpacking runs in the cache's folders */
	if (!ret && (!realpath(tmp, dir) || strlen(dir) >= sizeof(cache)))
		ret = errno ? -errno : -ENAMETOOLONG;
	if (!ret)
		snprintf(cache, sizeof(cache), "%s", dir);
	if (ret) {
		fprintf(stderr, "%s: --kernel %s: cache %s: %s\n", prog, name,
			cache, strerror(-ret));
		return ret;
	}
	snprintf(tmp, sizeof(tmp), "%s/.apt-out", cache);
	ret = deb_pick(prog, spec, tmp, pkg, sizeof(pkg), pver, sizeof(pver));
	if (ret)
		return ret;
	snprintf(dir, sizeof(dir), "%s/%s_%s", cache, pkg, pver);
	if (access(dir, F_OK)) {
		ret = deb_fetch(prog, cache, pkg, pver, dir);
		if (ret)
			return ret;
	}
	snprintf(boot, sizeof(boot), "%s/boot", dir);
	d = opendir(boot);
	k->bzimage[0] = '\0';
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "vmlinuz-", 8))
			snprintf(k->bzimage, sizeof(k->bzimage), "%s/%s", boot,
				 e->d_name);
	if (d)
		closedir(d);
	if (!k->bzimage[0]) {
		fprintf(stderr, "%s: --kernel %s: %s has no vmlinuz-*\n", prog,
			name, boot);
		return -ENOENT;
	}
	snprintf(k->mods_root, sizeof(k->mods_root), "%s", dir);
	return 0;
}

/*
 * The .config of the guest kernel, for `requires config`: in the bzImage's
 * folder `config` (kernel-patch/build.sh), `config-KVER` (Debian's /boot)
 * or `.config`, or the `.config` of the kernel tree (or O= folder) whose
 * arch/x86/boot/bzImage it is.  "" when there is none.
 */
static void find_kconfig(struct guest_kernel *k)
{
	char dir[PATH_MAX], versioned[300];
	const char *const names[] = { "config", versioned, ".config",
				      "../../../.config" };
	char *slash;
	size_t i;

	snprintf(dir, sizeof(dir), "%s", k->bzimage);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	snprintf(versioned, sizeof(versioned), "config-%s", k->kver);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int n = snprintf(k->kconfig, sizeof(k->kconfig), "%s/%s", dir,
				 names[i]);

		if (n > 0 && (size_t)n < sizeof(k->kconfig) &&
		    !access(k->kconfig, R_OK))
			return;
	}
	k->kconfig[0] = '\0';
}

/*
 * A bzImage named by its path, in a folder laid out as kernel-patch/
 * build.sh leaves its output (bzImage, modules/lib/modules/KVER, stamp):
 * a regression mutant's build/regress/NNN-name/kernel/ or a copy of
 * build/kernel/.  Its own modules then, not the host's, and it is a
 * patched build, so that several such kernels in one run each bring
 * theirs.  Nothing changes for a bzImage without that layout.
 */
static void find_own_build(struct guest_kernel *k)
{
	char dir[PATH_MAX], probe[PATH_MAX + 300];
	struct stat st;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", k->bzimage);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	if (snprintf(probe, sizeof(probe), "%s/modules/lib/modules/%s", dir,
		     k->kver) >= (int)sizeof(probe) ||
	    stat(probe, &st) || !S_ISDIR(st.st_mode) ||
	    snprintf(k->mods_root, sizeof(k->mods_root), "%s/modules", dir) >=
	    (int)sizeof(k->mods_root)) {
		k->mods_root[0] = '\0';
		return;
	}
	snprintf(probe, sizeof(probe), "%s/stamp", dir);
	k->patched = !access(probe, R_OK);
}

/* ---- --kernel-tree DIR ---- */

/*
 * A developer's built tree (or its O= folder): DIR/arch/x86/boot/bzImage,
 * and, when the tree has modules (DIR/modules.order), DIR's
 * `make modules_install INSTALL_MOD_PATH=` into
 * CACHE/tree/<DIR's path, / as _>/, redone when the bzImage or the
 * modules changed since (a stamp of their times and the release).  A tree
 * without modules gets an empty folder: everything it has is built in.
 * 0, or -errno with the reason printed.
 */
static int resolve_tree(const char *prog, const char *dir, const char *root,
			struct guest_kernel *k)
{
	char real[PATH_MAX], cache[DEB_CACHE_MAX], order[PATH_MAX + 16];
	char stamp_path[DEB_CACHE_MAX + 16], log[DEB_CACHE_MAX + 16];
	char tmp[DEB_CACHE_MAX + 16], stamp[512], *old;
	char mpath[sizeof(tmp) + 24];
	const char *const install_argv[] = { "/usr/bin/make", "-s", "-C", real,
		"INSTALL_MOD_STRIP=1", mpath, "modules_install", NULL };
	struct stat bz, mo;
	bool has_mods;
	int ret, fd;
	size_t i;

	if (!realpath(dir, real)) {
		fprintf(stderr, "%s: --kernel-tree %s: %s\n", prog, dir,
			strerror(errno));
		return -errno;
	}
	if (snprintf(k->bzimage, sizeof(k->bzimage), "%s/arch/x86/boot/bzImage",
		     real) >= (int)sizeof(k->bzimage) ||
	    stat(k->bzimage, &bz)) {
		fprintf(stderr, "%s: --kernel-tree %s: no arch/x86/boot/bzImage (build it: make bzImage modules)\n",
			prog, dir);
		return -ENOENT;
	}
	if (initramfs_kernel_release(k->bzimage, k->kver, sizeof(k->kver))) {
		fprintf(stderr, "%s: %s: cannot read the kernel release\n",
			prog, k->bzimage);
		return -EINVAL;
	}
	snprintf(order, sizeof(order), "%s/modules.order", real);
	has_mods = !stat(order, &mo);
	ret = kernel_cache(root, "/tree/", cache, sizeof(cache) - 300);
	i = strlen(cache);
	if (!ret && i + strlen(real) >= sizeof(cache))
		ret = -ENAMETOOLONG;
	if (ret) {
		fprintf(stderr, "%s: --kernel-tree %s: cache path too long\n",
			prog, dir);
		return ret;
	}
	for (const char *p = real + 1; *p; p++)
		cache[i++] = *p == '/' ? '_' : *p;
	cache[i] = '\0';
	snprintf(stamp, sizeof(stamp), "%lld.%09ld %lld.%09ld %s\n",
		 (long long)bz.st_mtim.tv_sec, bz.st_mtim.tv_nsec,
		 has_mods ? (long long)mo.st_mtim.tv_sec : 0LL,
		 has_mods ? mo.st_mtim.tv_nsec : 0L, k->kver);
	snprintf(stamp_path, sizeof(stamp_path), "%s/stamp", cache);
	snprintf(k->mods_root, sizeof(k->mods_root), "%s/root", cache);
	old = fs_read_file(stamp_path, 4096, NULL);
	if (old && !strcmp(old, stamp)) {
		free(old);
		return 0;
	}
	free(old);
	/* (re)install: into root.tmp, then renamed, so a failed install
	 * leaves no half tree behind */
	fs_rm_rf(cache);
	snprintf(tmp, sizeof(tmp), "%s/root.tmp", cache);
	if (fs_mkdir_p(tmp, 0755))
		return -errno;
	snprintf(log, sizeof(log), "%s/install.log", cache);
	snprintf(mpath, sizeof(mpath), "INSTALL_MOD_PATH=%s", tmp);
	if (has_mods) {
		fprintf(stderr, "%s: installing the modules of %s into %s\n",
			prog, real, cache);
		ret = fs_run_cmd((char *const *)install_argv, log, log);
		if (ret) {
			char *l = fs_read_file(log, 4096, NULL);

			fprintf(stderr, "%s: --kernel-tree %s: make modules_install failed: %s\n",
				prog, dir, l ? l : "no output");
			free(l);
			fs_rm_rf(cache);
			return -EIO;
		}
	}
	if (rename(tmp, k->mods_root))
		return -errno;
	fd = open(stamp_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || fs_write_all(fd, stamp, strlen(stamp))) {
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

int guest_kernel_resolve(const char *prog, const struct guest_opts *o,
			 const char *root, struct guest_kernel *k)
{
	bool by_path = false;
	int ret;

	memset(k, 0, sizeof(*k));
	if (o->cmdline_bad) {
		fprintf(stderr, "%s: --cmdline '%s': %s\n", prog,
			o->cmdline_bad, o->cmdline_why);
		return -EINVAL;
	}
	guest_cmdline_warn(prog, o->cmdline);
	if (o->kernel && o->tree) {
		fprintf(stderr, "%s: --kernel and --kernel-tree name two kernels: give one\n",
			prog);
		return -EINVAL;
	}
	if (o->tree) {
		ret = resolve_tree(prog, o->tree, root, k);
		if (ret)
			return ret;
	} else if (o->kernel) {
		ret = resolve_patched(prog, o->kernel, root, k);
		if (ret == 1)
			ret = resolve_debian(prog, o->kernel, root, k);
		if (ret < 0)
			return ret;
		if (ret &&
		    snprintf(k->bzimage, sizeof(k->bzimage), "%s", o->kernel) >=
		    (int)sizeof(k->bzimage)) {
			fprintf(stderr, "%s: --kernel %s: path too long\n",
				prog, o->kernel);
			return -ENAMETOOLONG;
		}
		by_path = ret == 1;
	} else if (initramfs_default_kernel(k->bzimage, sizeof(k->bzimage))) {
		fprintf(stderr, "%s: no /boot/vmlinuz-*: install linux-image-amd64 (make deps) or pass --kernel\n",
			prog);
		return -ENOENT;
	}
	if (o->modules_dir)
		snprintf(k->mods_root, sizeof(k->mods_root), "%s",
			 o->modules_dir);
	if (!o->tree &&
	    initramfs_kernel_release(k->bzimage, k->kver, sizeof(k->kver))) {
		fprintf(stderr, "%s: %s: cannot read the kernel release (not a bzImage?)\n",
			prog, k->bzimage);
		return -EINVAL;
	}
	if (by_path && !o->modules_dir)
		find_own_build(k);
	find_kconfig(k);
	return 0;
}

bool guest_opt(int c, const char *arg, struct guest_opts *o)
{
	switch (c) {
	case GUEST_OPT_KERNEL:
		o->kernel = arg;
		return true;
	case GUEST_OPT_MODULES:
		o->modules_dir = arg;
		return true;
	case GUEST_OPT_BOOT_TIMEOUT:
		o->boot_timeout = arg;
		return true;
	case GUEST_OPT_KEEP:
		o->keep = true;
		return true;
	case GUEST_OPT_TREE:
		o->tree = arg;
		return true;
	case GUEST_OPT_CMDLINE:
		if (!o->cmdline_bad &&
		    guest_cmdline_add(o->cmdline, arg, o->cmdline_why,
				      sizeof(o->cmdline_why)))
			o->cmdline_bad = arg;
		return true;
	}
	return false;
}

int guest_cmdline_check(const char *args, char *why, size_t size)
{
	size_t i, n = strlen(args);

	if (n >= GUEST_CMDLINE_MAX) {
		snprintf(why, size, "%zu bytes; the most is %d", n,
			 GUEST_CMDLINE_MAX - 1);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)args[i];

		if (ch < 0x20 || ch > 0x7e) {
			snprintf(why, size, "column %zu: byte 0x%02x is not printable ASCII",
				 i + 1, ch);
			return -EINVAL;
		}
	}
	if (!n || strspn(args, " ") == n) {
		snprintf(why, size, "no parameter given");
		return -EINVAL;
	}
	return 0;
}

int guest_cmdline_add(char *cmdline, const char *args, char *why,
		      size_t size)
{
	size_t have = strlen(cmdline), n = strlen(args);
	int ret = guest_cmdline_check(args, why, size);

	if (ret)
		return ret;
	if (have + (have ? 1 : 0) + n >= GUEST_CMDLINE_MAX) {
		if (have <= 48)	/* a usbrig command's own, say */
			snprintf(why, size, "after '%s', more than %d bytes in all",
				 cmdline, GUEST_CMDLINE_MAX - 1);
		else
			snprintf(why, size, "after the %zu bytes before it, more than %d in all",
				 have, GUEST_CMDLINE_MAX - 1);
		return -EINVAL;
	}
	if (have)
		cmdline[have++] = ' ';
	memcpy(cmdline + have, args, n + 1);
	return 0;
}

/* the word w (n bytes) is NAME or NAME=anything */
static bool cmdline_word_is(const char *w, size_t n, const char *name)
{
	size_t k = strlen(name);

	return n >= k && !strncmp(w, name, k) && (n == k || w[k] == '=');
}

/*
 * loglevel=V as the kernel reads it (get_option()): an optional '-', then
 * digits in base 0 (0x.. hex, 0.. octal), whatever follows ignored, the
 * value cut to an int; no digit: the parameter is ignored
 */
static bool cmdline_loglevel(const char *v, long *level)
{
	bool neg = *v == '-';
	unsigned long long u;

	if (neg)
		v++;
	if (!isdigit((unsigned char)*v))
		return false;
	u = strtoull(v, NULL, 0);
	*level = (int)(neg ? -u : u);
	return true;
}

bool guest_cmdline_quiet(const char *cmdline, char *word, size_t size)
{
	const char *p = cmdline, *w, *at = NULL;
	long level = 5;		/* usbrig's own loglevel=5 comes first */
	bool ignore = false;
	size_t n, last = 0;

	for (;;) {
		p += strspn(p, " ");
		if (!*p)
			break;
		w = p;
		n = strcspn(p, " ");
		p += n;
		if (n == 2 && !strncmp(w, "--", 2))
			break;	/* the rest is init's */
		if (cmdline_word_is(w, n, "ignore_loglevel"))
			ignore = true;
		else if (cmdline_word_is(w, n, "quiet"))
			level = 4;
		else if (cmdline_word_is(w, n, "debug"))
			level = 10;
		else if (!(n > 9 && !strncmp(w, "loglevel=", 9) &&
			   cmdline_loglevel(w + 9, &level)))
			continue;
		at = w;
		last = n;
	}
	if (ignore || level >= 5 || !at)
		return false;
	snprintf(word, size, "%.*s", (int)last, at);
	return true;
}

/* a warning when the --cmdline parameters hide the kernel's warnings */
void guest_cmdline_warn(const char *prog, const char *cmdline)
{
	char word[64];

	if (guest_cmdline_quiet(cmdline, word, sizeof(word)))
		fprintf(stderr, "%s: warning: --cmdline '%s' leaves the console below loglevel 5: the kernel's WARNING reports and the scenario markers no longer reach the crash watch\n",
			prog, word);
}

void guest_child_args(const struct guest_opts *o, char **argv, int *argc)
{
	if (o->kernel) {
		argv[(*argc)++] = "--kernel";
		argv[(*argc)++] = (char *)o->kernel;
	}
	if (o->tree) {
		argv[(*argc)++] = "--kernel-tree";
		argv[(*argc)++] = (char *)o->tree;
	}
	if (o->modules_dir) {
		argv[(*argc)++] = "--modules";
		argv[(*argc)++] = (char *)o->modules_dir;
	}
	if (o->boot_timeout) {
		argv[(*argc)++] = "--boot-timeout";
		argv[(*argc)++] = (char *)o->boot_timeout;
	}
	if (o->cmdline[0]) {
		argv[(*argc)++] = "--cmdline";
		argv[(*argc)++] = (char *)o->cmdline;
	}
	if (o->keep)
		argv[(*argc)++] = "--keep";
}
