// SPDX-License-Identifier: GPL-2.0
/*
 * kernel.c - which guest kernel a run boots (kernel.h).
 *
 * `--kernel` is a bzImage path or one of the words naming a build of
 * kernel-patch/build.sh; its modules come from `--modules`, the build's own
 * modules/ folder, or the host's /lib/modules.  The release is read from
 * the bzImage's header, and the .config is looked for next to it.
 */
#include "kernel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "initramfs.h"

/*
 * `--kernel patched` and `--kernel patched-kasan`: the outputs of
 * kernel-patch/build.sh (`make kernel`, `make kernel-kasan`), in
 * $USBRIG_KERNEL_DIR or ROOT/build/kernel (the Makefile's KERNEL_OUT), the
 * KASAN flavour in its kasan/ folder.  1 when name is neither word, 0 when
 * resolved, -errno (message printed) when the build is missing.
 */
static int resolve_patched(const char *prog, const char *name,
			   const char *root, struct guest_kernel *k)
{
	const char *env = getenv("USBRIG_KERNEL_DIR");
	const char *flavour_dir, *target;
	char dir[PATH_MAX], probe[PATH_MAX];
	struct stat st;
	int n;

	if (!strcmp(name, "patched")) {
		flavour_dir = "";
		target = "make kernel";
	} else if (!strcmp(name, "patched-kasan")) {
		flavour_dir = "/kasan";
		target = "make kernel-kasan";
	} else {
		return 1;
	}
	if (env && *env)
		n = snprintf(dir, sizeof(dir), "%s%s", env, flavour_dir);
	else
		n = snprintf(dir, sizeof(dir), "%s/build/kernel%s", root,
			     flavour_dir);
	if (n < 0 || (size_t)n >= sizeof(dir) ||
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

int guest_kernel_resolve(const char *prog, const struct guest_opts *o,
			 const char *root, struct guest_kernel *k)
{
	int ret;

	memset(k, 0, sizeof(*k));
	if (o->kernel) {
		ret = resolve_patched(prog, o->kernel, root, k);
		if (ret < 0)
			return ret;
		if (ret &&
		    snprintf(k->bzimage, sizeof(k->bzimage), "%s", o->kernel) >=
		    (int)sizeof(k->bzimage)) {
			fprintf(stderr, "%s: --kernel %s: path too long\n",
				prog, o->kernel);
			return -ENAMETOOLONG;
		}
	} else if (initramfs_default_kernel(k->bzimage, sizeof(k->bzimage))) {
		fprintf(stderr, "%s: no /boot/vmlinuz-*: install linux-image-amd64 (make deps) or pass --kernel\n",
			prog);
		return -ENOENT;
	}
	if (o->modules_dir)
		snprintf(k->mods_root, sizeof(k->mods_root), "%s",
			 o->modules_dir);
	if (initramfs_kernel_release(k->bzimage, k->kver, sizeof(k->kver))) {
		fprintf(stderr, "%s: %s: cannot read the kernel release (not a bzImage?)\n",
			prog, k->bzimage);
		return -EINVAL;
	}
	find_kconfig(k);
	return 0;
}

void guest_child_args(const struct guest_opts *o, char **argv, int *argc)
{
	if (o->kernel) {
		argv[(*argc)++] = "--kernel";
		argv[(*argc)++] = (char *)o->kernel;
	}
	if (o->modules_dir) {
		argv[(*argc)++] = "--modules";
		argv[(*argc)++] = (char *)o->modules_dir;
	}
	if (o->boot_timeout) {
		argv[(*argc)++] = "--boot-timeout";
		argv[(*argc)++] = (char *)o->boot_timeout;
	}
	if (o->keep)
		argv[(*argc)++] = "--keep";
}
