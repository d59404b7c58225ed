/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel.h - which guest kernel a run boots: the options every command
 * that boots guests takes (`usbrig`, `usbrig repro`, `usbrig census`,
 * `usbrig fuzz`), what they resolve to, and how a command passes them on
 * to the `usbrig` runs it starts.
 */
#ifndef USBRIG_KERNEL_H
#define USBRIG_KERNEL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * --cmdline ARGS: kernel parameters added to the guest's command line
 * (after usbrig's own, so they win), all of them GUEST_CMDLINE_MAX bytes
 * at most.  guest_cmdline_check(): 0 when ARGS is printable ASCII, words
 * separated by spaces; -EINVAL with the reason in why.
 * guest_cmdline_add(): ARGS checked, then added after what the
 * GUEST_CMDLINE_MAX bytes at cmdline hold; -EINVAL with the reason in
 * why, cmdline untouched.
 */
#define GUEST_CMDLINE_MAX	512
int guest_cmdline_check(const char *args, char *why, size_t size);
int guest_cmdline_add(char *cmdline, const char *args, char *why,
		      size_t size);
/*
 * guest_cmdline_quiet(): true when the parameters in cmdline leave the
 * console below loglevel 5 (the last of `quiet`, `debug` and
 * `loglevel=N` before any `--` wins, as in the kernel, and
 * `ignore_loglevel` prints everything), with that word in word.  The console then hides KERN_WARNING: the crash watch misses
 * WARNING reports and the agent's scenario markers.  A warning, not an
 * error: it may be what the user wants.
 */
bool guest_cmdline_quiet(const char *cmdline, char *word, size_t size);
void guest_cmdline_warn(const char *prog, const char *cmdline);

/* What the user said. */
struct guest_opts {
	const char *kernel;		/* --kernel: a bzImage, patched,
					 * patched-kasan; NULL: the newest
					 * /boot/vmlinuz-* */
	const char *tree;		/* --kernel-tree: a built kernel tree */
	const char *modules_dir;	/* --modules: holds lib/modules/KVER */
	const char *boot_timeout;	/* --boot-timeout S (passed on) */
	char cmdline[GUEST_CMDLINE_MAX];	/* every --cmdline, in order
					 * (passed on as one) */
	const char *cmdline_bad;	/* the first --cmdline refused ... */
	char cmdline_why[128];		/* ... and why, for the resolver */
	bool keep;			/* --keep (passed on) */
};

/* What it is. */
struct guest_kernel {
	char bzimage[PATH_MAX];
	char mods_root[PATH_MAX];	/* holds lib/modules/KVER; "": / */
	char kver[256];			/* the release, from the bzImage */
	char kconfig[PATH_MAX];		/* its .config, "" when not found */
	bool patched;			/* a kernel-patch/ build */
};

/*
 * Resolve o against the repository at root (`patched` is its
 * build/kernel/, or $USBRIG_KERNEL_DIR).  0, or -errno with the reason
 * printed as "PROG: ...".
 */
int guest_kernel_resolve(const char *prog, const struct guest_opts *o,
			 const char *root, struct guest_kernel *k);

/*
 * The options of struct guest_opts in a command's getopt_long table:
 * GUEST_LONG_OPTIONS among its entries, and guest_opt() before its own
 * cases.  The values are clear of any command's own.
 */
enum { GUEST_OPT_KERNEL = 0x4000, GUEST_OPT_MODULES, GUEST_OPT_BOOT_TIMEOUT,
	GUEST_OPT_KEEP, GUEST_OPT_TREE, GUEST_OPT_CMDLINE };
#define GUEST_LONG_OPTIONS \
	{ "kernel", required_argument, NULL, GUEST_OPT_KERNEL }, \
	{ "kernel-tree", required_argument, NULL, GUEST_OPT_TREE }, \
	{ "modules", required_argument, NULL, GUEST_OPT_MODULES }, \
	{ "boot-timeout", required_argument, NULL, GUEST_OPT_BOOT_TIMEOUT }, \
	{ "cmdline", required_argument, NULL, GUEST_OPT_CMDLINE }, \
	{ "keep", no_argument, NULL, GUEST_OPT_KEEP }

/*
 * getopt_long's c, when it is one of those: stored in o, true.  A bad
 * --cmdline is reported by guest_kernel_resolve(), before anything runs.
 */
bool guest_opt(int c, const char *arg, struct guest_opts *o);

/* The most argv entries guest_child_args adds. */
#define GUEST_CHILD_ARGS	11

/* Append o's options for a child `usbrig` run to argv at *argc. */
void guest_child_args(const struct guest_opts *o, char **argv, int *argc);

/*
 * debian:VERSION's matching (kernel.c, public for tests/unit/test_kernel):
 * the kernel version of an image package name ("6.1.0-57" of
 * linux-image-6.1.0-57-amd64-unsigned; false for metapackages, debug
 * packages, the cloud and rt flavours), and whether it is one of spec's.
 */
bool kernel_deb_image_version(const char *pkg, char *ver, size_t size);
bool kernel_deb_version_matches(const char *ver, const char *spec);

#endif /* USBRIG_KERNEL_H */
