/* SPDX-License-Identifier: GPL-2.0 */
/*
 * initramfs.h - build the guest's initramfs (newc cpio, uncompressed).
 *
 * The image is two concatenated newc archives (the kernel unpacks them in
 * order, init/initramfs.c):
 *
 *  1. the base, cached as cache_dir/base-<hash>.cpio, <hash> covering every
 *     input (the /init text, the kernel release, path/size/mtime/inode of
 *     busybox, usbip, usbipd, usb.ids, the agent, the gadget server, every
 *     shared library ldd reports for them and every module file staged):
 *     /init, busybox + applet links, usbip, usbipd (when installed),
 *     usb.ids, usbrig-agent, usbrig-gadget, their libraries and the
 *     dynamic loader, the requested modules with their dependencies
 *     (modprobe --show-depends) depmod'ed, and the guest tools the
 *     scenarios ask for (`requires tool`: lsusb with udev's hwdb, tcpdump)
 *     with their libraries, so a run without them keeps its small base;
 *  2. the tail, written fresh each time: /usbrig/plan and
 *     /usbrig/gadgets/<basename> for every gadget script, and the
 *     scenarios' `file` statements (each at its guest path, with the
 *     folders above it).
 *
 * The base is built under a temporary name and renamed into place, so
 * parallel builds of the same inputs are safe (the last rename wins, both
 * files are identical).
 */
#ifndef USBRIG_INITRAMFS_H
#define USBRIG_INITRAMFS_H

#include <stddef.h>

/* A host file put at an absolute guest path (a scenario's `file`). */
struct initramfs_file {
	const char *src;
	const char *dst;
};

#define INITRAMFS_FILES_MAX_BYTES	(256u << 20)	/* all files together */

struct initramfs_opts {
	const char *kver;		/* kernel release, e.g. 6.1.0-57-amd64 */
	const char *modules_dir;	/* holds lib/modules/KVER; NULL: "/" */
	const char *const *modules;	/* names, with '-' or '_' */
	size_t n_modules;
	const char *const *gadgets;	/* host paths of gadget scripts */
	size_t n_gadgets;
	const char *const *tools;	/* `requires tool` names (lsusb,
					 * tcpdump): into the base, with their
					 * libraries and data */
	size_t n_tools;
	const struct initramfs_file *files;	/* into the tail */
	size_t n_files;
	const char *plan_path;		/* NULL: no plan */
	const char *bin_dir;		/* usbrig-agent, usbrig-gadget */
	const char *cache_dir;
	const char *out_path;		/* the image to write */
	int verbose;
};

/* Always staged, whatever the plan asks: the results port, vhci, and the
 * NIC for --gadget-on-host. */
#define INITRAMFS_BASE_MODULES \
	"virtio_pci", "virtio_console", "virtio_net", "vhci-hcd"

/*
 * Staged with the plan's modules when it has any, one by one and optional:
 * modules the kernel asks modprobe for itself (request_module) when a
 * module needs what they provide, which no modules.dep line names, so the
 * plan's list never brings them; a real system's modprobe finds them on
 * disk.  The default RNG ("crypto-stdrng": drbg, the HMAC-SHA512 of its
 * default instance and the CTR mode of its AES ones, which its self-tests
 * try, and its seed source): without it ecc cannot make a key, so
 * ecdh_generic, which the Bluetooth core loads, fails its self-test with
 * -EFAULT and the kernel WARNs (crypto/testmgr.c), a report of the
 * guest's making for every Bluetooth device.
 */
#define INITRAMFS_ONDEMAND_MODULES \
	"drbg", "jitterentropy_rng", "sha512_generic", "ctr"

/*
 * The host program a guest tool comes from (for `requires tool NAME`):
 * its path, or NULL when the host has none (the scenario is skipped) or
 * the name is unknown.
 */
const char *initramfs_tool_path(const char *name);

/*
 * Build o->out_path.  Returns 0, or -errno with a message in err
 * ("initramfs: ...").
 */
int initramfs_build(const struct initramfs_opts *o, char *err, size_t errlen);

/*
 * The kernel release of a bzImage, read from its setup header
 * (kernel_version field, boot protocol >= 2.00).  Returns 0 or -errno.
 */
int initramfs_kernel_release(const char *bzimage, char *buf, size_t size);

/* The newest /boot/vmlinuz-* (by version order) into buf.  0 or -ENOENT. */
int initramfs_default_kernel(char *buf, size_t size);

#endif /* USBRIG_INITRAMFS_H */
