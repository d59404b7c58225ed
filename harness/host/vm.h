/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vm.h - boot one guest and stream the agent's result lines back.
 *
 * vm.c builds the initramfs (initramfs.c, cached by content hash), starts
 * QEMU (KVM when a quick probe shows it works, else TCG), keeps the kernel
 * console in work_dir/console.log, watches it for crash reports, and reads
 * the agent's result lines (docs/harness-design.md) from the virtio-serial
 * port as they arrive.  The scenario logic lives in the caller.
 */
#ifndef USBRIG_VM_H
#define USBRIG_VM_H

#include <stdbool.h>
#include <stddef.h>

struct initramfs_file;

struct vm_opts {
	const char *kernel;		/* bzImage; NULL: newest /boot/vmlinuz-* */
	const char *modules_dir;	/* holds lib/modules/KVER; NULL: "/" */
	const char *plan_path;		/* the serialized plan for the agent */
	const char *const *gadgets;	/* host paths of gadget scripts, copied
					 * to /usbrig/gadgets/<basename> */
	size_t n_gadgets;
	const struct initramfs_file *files;	/* scenarios' `file`s, put
						 * at their guest paths */
	size_t n_files;
	const char *const *tools;	/* `requires tool` names */
	size_t n_tools;
	const char *const *modules;	/* module names the plan may load
					 * (with deps); vhci-hcd always */
	size_t n_modules;
	const char *bin_dir;		/* where usbrig-agent, usbrig-gadget are */
	const char *cache_dir;		/* initramfs cache (build/cache) */
	const char *work_dir;		/* this boot's console.log etc. */
	unsigned int boot_timeout_s;	/* until the agent's first line */
	unsigned int idle_timeout_s;	/* max silence between result lines */
	bool gadget_on_host;		/* serve gadgets from the host */
	bool panic_on_oops;		/* oops=panic on the command line */
	const char *cmdline;		/* more parameters after usbrig's,
					 * NULL: none (--cmdline) */
	const char *const *served;	/* with it: the server's gadgets, in
					 * busid order (1-1, 1-2, ...) */
	size_t n_served;
	int verbose;
};

struct vm_cb {
	/* one result line, without the newline */
	void (*line)(void *ctx, const char *line);
	/* a crash pattern in the console: the matched line, an excerpt, and
	 * the scenario it belongs to (the last marker's before it, NULL
	 * before any: the boot); console.h says when it comes */
	void (*crash)(void *ctx, const char *what, const char *excerpt,
		      const char *scenario);
	/* a scenario's marker in the console, after every report before it:
	 * `end`, or `begin`; at and to: where its line starts in
	 * console.log and where the next one does */
	void (*mark)(void *ctx, bool end, const char *scenario, long long at,
		     long long to);
	void *ctx;
};

enum vm_end {
	VM_END_POWEROFF,	/* the agent finished and the guest went down */
	VM_END_TIMEOUT,		/* boot or idle timeout: QEMU was killed */
	VM_END_CRASH,		/* panic or a crash that stopped the guest */
	VM_END_ERROR,		/* could not build or start */
};

/* Boot, stream, return how it ended.  Never hangs: every wait has a
 * timeout, and QEMU is killed on the way out. */
enum vm_end vm_run(const struct vm_opts *o, const struct vm_cb *cb);

/* The console tail (last ~max bytes) of the last run, for reports. */
int vm_console_excerpt(const char *work_dir, char *buf, size_t max);

#endif /* USBRIG_VM_H */
