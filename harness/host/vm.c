// SPDX-License-Identifier: GPL-2.0
/*
 * vm.c - boot one guest in QEMU and stream the agent's result lines back.
 *
 * Channels:
 *   - results: a virtio-serial port named usbrig.0 whose chardev is a
 *     client socket connecting to a unix socket vm.c listens on before
 *     QEMU starts, so nothing the agent writes can be lost;
 *   - console: ttyS0 into work_dir/console.log (chardev file), which vm.c
 *     tails for crash reports and the agent's scenario markers
 *     (console.c);
 *   - QEMU's own stdout/stderr: work_dir/qemu.log.
 *
 * Accelerator: KVM only when /dev/kvm opens and a probe boot of the same
 * kernel prints "Linux version" under KVM within a few seconds (on nested
 * setups KVM can open fine and then abort on the first MSR write); the
 * answer is cached in cache_dir/accel-probe keyed by host boot id, QEMU and
 * kernel.  USBRIG_ACCEL=kvm|tcg overrides the probe.
 */
#define _GNU_SOURCE
#include "vm.h"
#include "console.h"
#include "initramfs.h"
#include "../common/fsutil.h"
#include "server.h"		/* SERVER_MAX_GADGETS: what one server serves */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <alloca.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define QEMU		"qemu-system-x86_64"
#define LINE_MAX_VM	65536		/* longest result line passed on */
#define PROBE_TIMEOUT_MS 8000
#define EXIT_WAIT_MS	10000		/* after the results channel closes */
/* Two vCPUs: the last is the device's (harness/agent/devcpu.c); under TCG
 * each vCPU is a host thread.  docs/harness-design.md, "Where the device
 * runs". */
#define VM_SMP		"2"
/* --panic-on-oops: an oops, or a task stuck for a minute (a driver hung
 * in probe or disconnect, which would stall every later scenario), ends
 * the boot at once */
#define VM_PANIC_ON_OOPS \
	"oops=panic hung_task_panic=1 sysctl.kernel.hung_task_timeout_secs=60"
/* the host's loopback as QEMU's user-mode network shows it to the guest */
#define VM_HOST_ADDR	"10.0.2.2"

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void strfmt(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* snprintf for texts that may be cut (the length is never wanted) */
static void strfmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static void vlog(const struct vm_opts *o, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void vlog(const struct vm_opts *o, int level, const char *fmt, ...)
{
	va_list ap;

	if (o->verbose < level)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "usbrig: vm: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* QEMU option values escape ',' as ",,". */
static int qemu_path(char *dst, size_t size, const char *prefix,
		     const char *path)
{
	size_t w = 0;

	for (const char *p = prefix; *p; p++) {
		if (w + 1 >= size)
			return -ENAMETOOLONG;
		dst[w++] = *p;
	}
	for (const char *p = path; *p; p++) {
		if (w + 2 >= size)
			return -ENAMETOOLONG;
		if (*p == ',')
			dst[w++] = ',';
		dst[w++] = *p;
	}
	dst[w] = '\0';
	return 0;
}

/* ---- children ---- */

/* Start argv with stdin /dev/null and stdout+stderr to log (or a pipe
 * when out_fd is not NULL).  The child dies with us (PDEATHSIG). */
static pid_t spawn(char *const argv[], const char *log, int *out_fd)
{
	int pfd[2] = { -1, -1 };
	pid_t pid;

	if (out_fd && pipe2(pfd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		if (out_fd) {
			close(pfd[0]);
			close(pfd[1]);
		}
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		int fd = out_fd ? pfd[1] :
			open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (null >= 0)
			dup2(null, 0);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (out_fd) {
		close(pfd[1]);
		*out_fd = pfd[0];
	}
	return pid;
}

static void kill_reap(pid_t pid, int *status)
{
	int st = 0;

	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (status)
		*status = st;
}

/* ---- an uncompressed kernel for PVH boot ---- */

/*
 * A bzImage spends ~3 s of TCG time decompressing itself before the first
 * printk.  When the kernel has CONFIG_PVH, QEMU boots the uncompressed ELF
 * directly through its PVH entry (the XEN_ELFNOTE_PHYS32_ENTRY note), so we
 * unpack the payload once into cache_dir.  The payload's place is in the
 * setup header (boot protocol 2.08+: payload_offset at 0x248,
 * payload_length at 0x24c, relative to the protected-mode code after
 * (setup_sects + 1) * 512 bytes); its magic names the compressor.
 */
struct decomp {
	const unsigned char magic[6];
	size_t mlen;
	const char *tool;	/* run as TOOL -dc, payload on stdin */
};

static const struct decomp decomps[] = {
	{ { 0xfd, '7', 'z', 'X', 'Z', 0x00 }, 6, "xz" },
	{ { 0x1f, 0x8b }, 2, "gzip" },
	{ { 0x28, 0xb5, 0x2f, 0xfd }, 4, "zstd" },
	{ { 0x02, 0x21, 0x4c, 0x18 }, 4, "lz4" },
	{ { 'B', 'Z', 'h' }, 3, "bzip2" },
	{ { 0x5d, 0x00, 0x00 }, 3, "lzma" },
};

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		(uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* true if path is an x86-64 ELF with a Xen PHYS32_ENTRY (18) note */
static bool elf_has_pvh(const char *path)
{
	unsigned char eh[64], ph[56], note[4096];
	uint64_t phoff;
	unsigned int phnum, phentsize, i;
	bool found = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (pread(fd, eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh, "\177ELF\2\1", 6) || eh[18] != 62 /* EM_X86_64 */)
		goto out;
	phoff = le64(eh + 32);
	phentsize = (unsigned int)(eh[54] | eh[55] << 8);
	phnum = (unsigned int)(eh[56] | eh[57] << 8);
	if (phentsize < sizeof(ph) || phnum > 64)
		goto out;
	for (i = 0; i < phnum && !found; i++) {
		uint64_t off, len, pos = 0;

		if (pread(fd, ph, sizeof(ph), (off_t)(phoff + i * phentsize)) !=
		    sizeof(ph) || le32(ph) != 4 /* PT_NOTE */)
			continue;
		off = le64(ph + 8);
		len = le64(ph + 32);
		if (len > sizeof(note))
			len = sizeof(note);
		if (pread(fd, note, len, (off_t)off) != (ssize_t)len)
			continue;
		/* walk the notes; every length is checked against len */
		while (pos + 12 <= len) {
			uint32_t nsz = le32(note + pos), dsz = le32(note + pos + 4);
			uint32_t type = le32(note + pos + 8);
			uint64_t next = pos + 12 + ((nsz + 3ull) & ~3ull) +
				((dsz + 3ull) & ~3ull);

			if (next > len)
				break;
			if (nsz == 4 && !memcmp(note + pos + 12, "Xen", 4) &&
			    type == 18)
				found = true;
			pos = next;
		}
	}
out:
	close(fd);
	return found;
}

static int pvh_kernel(const struct vm_opts *o, const char *bzimage,
		      char *out, size_t size)
{
	unsigned char hdr[0x250];
	char tmp[PATH_MAX], payload[PATH_MAX];
	const struct decomp *d = NULL;
	unsigned char *buf = NULL;
	struct stat st;
	uint32_t poff, plen;
	off_t start;
	pid_t pid;
	int fd, ret = -EINVAL, status;

	if (getenv("USBRIG_NO_PVH") || stat(bzimage, &st))
		return -ENOENT;
	strfmt(out, size, "%s/vmlinux-%llx-%llx-%llx", o->cache_dir,
	       (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
	       (unsigned long long)st.st_mtime);
	if (!access(out, R_OK))
		return elf_has_pvh(out) ? 0 : -ENOEXEC;

	fd = open(bzimage, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, hdr, sizeof(hdr), 0) != sizeof(hdr) ||
	    memcmp(hdr + 0x202, "HdrS", 4) || (hdr[0x206] | hdr[0x207] << 8) <
	    0x208)
		goto out;
	start = ((hdr[0x1f1] ? hdr[0x1f1] : 4) + 1) * 512;
	poff = le32(hdr + 0x248);
	plen = le32(hdr + 0x24c);
	if (!plen || start + poff + (off_t)plen > st.st_size)
		goto out;
	buf = malloc(plen);
	if (!buf || pread(fd, buf, plen, start + poff) != (ssize_t)plen)
		goto out;
	for (size_t i = 0; i < sizeof(decomps) / sizeof(decomps[0]); i++)
		if (plen > decomps[i].mlen &&
		    !memcmp(buf, decomps[i].magic, decomps[i].mlen))
			d = &decomps[i];
	if (!d)
		goto out;
	fs_mkdir_p(o->cache_dir, 0755);
	strfmt(payload, sizeof(payload), "%s.payload.%d", out, (int)getpid());
	strfmt(tmp, sizeof(tmp), "%s.tmp.%d", out, (int)getpid());
	close(fd);
	fd = open(payload, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, plen) != (ssize_t)plen) {
		ret = -EIO;
		goto out;
	}
	close(fd);
	fd = -1;
	pid = fork();
	if (pid == 0) {
		int in = open(payload, O_RDONLY);
		int o2 = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int null = open("/dev/null", O_WRONLY);

		if (in < 0 || o2 < 0)
			_exit(127);
		dup2(in, 0);
		dup2(o2, 1);
		if (null >= 0)
			dup2(null, 2);
		/* xz: stop at the end of the stream, the bzImage goes on */
		if (!strcmp(d->tool, "xz"))
			execlp("xz", "xz", "-dc", "--single-stream", NULL);
		else
			execlp(d->tool, d->tool, "-dc", NULL);
		_exit(127);
	}
	status = -1;
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	unlink(payload);
	/* gzip exits 2 for "trailing garbage ignored": judge the result */
	if (pid > 0 && elf_has_pvh(tmp) && !rename(tmp, out)) {
		vlog(o, 1, "unpacked %s (%s) into %s for PVH boot", bzimage,
		     d->tool, out);
		ret = 0;
	} else {
		vlog(o, 1, "%s: no PVH boot (%s -dc status %d): booting the bzImage",
		     bzimage, d->tool, status);
		unlink(tmp);
		ret = -ENOEXEC;
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

/* ---- accelerator ---- */

static bool kvm_probe_boot(const char *kernel)
{
	char *const argv[] = {
		QEMU, "-accel", "kvm", "-cpu", "host", "-nodefaults",
		"-no-reboot", "-display", "none", "-m", "128", "-kernel",
		(char *)kernel, "-append",
		"console=ttyS0 earlyprintk=serial,ttyS0 panic=-1 rdinit=/none",
		"-serial", "stdio", NULL,
	};
	uint64_t deadline = mono_ms() + PROBE_TIMEOUT_MS;
	char buf[8192];
	size_t len = 0;
	bool ok = false;
	int fd;
	pid_t pid;

	pid = spawn(argv, NULL, &fd);
	if (pid < 0)
		return false;
	while (!ok && mono_ms() < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		if (len == sizeof(buf) - 1)
			len = 0;	/* the text we want is early anyway */
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		ok = strstr(buf, "Linux version") != NULL;
	}
	close(fd);
	kill_reap(pid, NULL);
	return ok;
}

static const char *pick_accel(const struct vm_opts *o, const char *kernel)
{
	const char *env = getenv("USBRIG_ACCEL");
	char key[512], boot_id[64] = "", path[PATH_MAX], line[600];
	struct stat qs = { 0 }, ks = { 0 };
	const char *accel;
	FILE *f;
	int fd;

	if (env && (!strcmp(env, "kvm") || !strcmp(env, "tcg")))
		return env;
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return "tcg";
	close(fd);

	f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f) {
		if (!fgets(boot_id, sizeof(boot_id), f))
			boot_id[0] = '\0';
		boot_id[strcspn(boot_id, "\n")] = '\0';
		fclose(f);
	}
	stat("/usr/bin/" QEMU, &qs);
	stat(kernel, &ks);
	strfmt(key, sizeof(key), "%s %lld %lld %s %lld", boot_id,
		 (long long)qs.st_mtime, (long long)qs.st_size, kernel,
		 (long long)ks.st_mtime);
	strfmt(path, sizeof(path), "%s/accel-probe", o->cache_dir);
	f = fopen(path, "r");
	if (f) {
		bool hit = fgets(line, sizeof(line), f) != NULL;

		fclose(f);
		line[strcspn(line, "\n")] = '\0';
		if (hit && !strncmp(line + 4, key, sizeof(line) - 4) &&
		    (!strncmp(line, "kvm ", 4) || !strncmp(line, "tcg ", 4)))
			return !strncmp(line, "kvm", 3) ? "kvm" : "tcg";
	}
	accel = kvm_probe_boot(kernel) ? "kvm" : "tcg";
	vlog(o, 1, "KVM probe: %s", accel);
	fs_mkdir_p(o->cache_dir, 0755);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%s %s\n", accel, key);
		fclose(f);
	}
	return accel;
}

/* ---- results channel ---- */

struct results {
	char *buf;
	size_t len;
	bool eof;
	unsigned long lines;
};

static void results_read(struct results *r, int fd, const struct vm_cb *cb)
{
	for (;;) {
		ssize_t n;
		char *nl;

		if (r->len == LINE_MAX_VM - 1) {
			/* an overlong line: pass on its head */
			r->buf[r->len] = '\0';
			if (cb->line)
				cb->line(cb->ctx, r->buf);
			r->len = 0;
			r->lines++;
		}
		n = read(fd, r->buf + r->len, LINE_MAX_VM - 1 - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			r->eof = true;
		if (n <= 0)
			return;
		r->len += (size_t)n;
		while ((nl = memchr(r->buf, '\n', r->len))) {
			*nl = '\0';
			if (nl > r->buf && nl[-1] == '\r')
				nl[-1] = '\0';
			if (cb->line)
				cb->line(cb->ctx, r->buf);
			r->lines++;
			r->len -= (size_t)(nl + 1 - r->buf);
			memmove(r->buf, nl + 1, r->len);
		}
	}
}

/* ---- the run ---- */

static int listen_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1)) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static int read_port_file(const char *path, uint64_t deadline_ms)
{
	char buf[32];

	while (mono_ms() < deadline_ms) {
		FILE *f = fopen(path, "r");

		if (f) {
			int port = fgets(buf, sizeof(buf), f) ? atoi(buf) : 0;

			fclose(f);
			if (port > 0)
				return port;
		}
		usleep(20000);
	}
	return -ETIMEDOUT;
}

/*
 * --gadget-on-host: start usbrig-gadget on the host's loopback, serving
 * o->served (every gadget of every scenario of the boot, busids 1-1, 1-2,
 * ... in that order, which the plan's `gadget` lines name), and return
 * its port (or -1 after a message).
 */
static int host_server_start(const struct vm_opts *o, pid_t *pid)
{
	char gadget_bin[PATH_MAX], port_file[PATH_MAX], glog[PATH_MAX];
	char **gargv;
	size_t g = 0;
	int port;

	if (o->n_served > SERVER_MAX_GADGETS) {
		fprintf(stderr, "usbrig: --gadget-on-host: %zu gadgets in one boot, the server takes at most %d (run fewer scenarios, or --jobs)\n",
			o->n_served, SERVER_MAX_GADGETS);
		return -1;
	}
	gargv = calloc(o->n_served + 6, sizeof(*gargv));
	if (!gargv)
		return -1;
	strfmt(gadget_bin, sizeof(gadget_bin), "%s/usbrig-gadget", o->bin_dir);
	strfmt(port_file, sizeof(port_file), "%s/gadget.port", o->work_dir);
	strfmt(glog, sizeof(glog), "%s/gadget.log", o->work_dir);
	unlink(port_file);
	gargv[g++] = gadget_bin;
	gargv[g++] = "-p";
	gargv[g++] = "0";
	gargv[g++] = "--port-file";
	gargv[g++] = port_file;
	for (size_t i = 0; i < o->n_served; i++)
		gargv[g++] = (char *)o->served[i];
	gargv[g] = NULL;
	*pid = spawn(gargv, glog, NULL);
	free(gargv);
	port = *pid > 0 ? read_port_file(port_file, mono_ms() + 10000) :
		-ECHILD;
	if (port < 0)
		fprintf(stderr, "usbrig: the host gadget server did not start (see %s)\n",
			glog);
	return port < 0 ? -1 : port;
}

enum vm_end vm_run(const struct vm_opts *o, const struct vm_cb *cb)
{
	char kernel_buf[PATH_MAX], kver[128], err[1024];
	char initrd[PATH_MAX], sock[PATH_MAX], console_log[PATH_MAX];
	char qemu_log[PATH_MAX], con_opt[PATH_MAX + 64];
	char res_opt[PATH_MAX + 64], append[2048], nic[256];
	char kernel_abs[PATH_MAX];
	char boot_kernel[PATH_MAX];
	char sockdir[64] = "";
	const char *kernel = o->kernel, *accel;
	struct console con;
	struct results res = { 0 };
	struct initramfs_opts io;
	enum vm_end end = VM_END_ERROR;
	pid_t qemu = -1, gadget = -1;
	int lfd = -1, rfd = -1, ret, status = 0;
	uint64_t t_start, last_line_ms, eof_at = 0;
	bool exited = false;
	char *argv[64];
	int a = 0;

	console_log[0] = '\0';	/* filled below */
	console_init(&con, console_log);
	if (!o->boot_timeout_s || !o->idle_timeout_s) {
		struct vm_opts *oo = alloca(sizeof(*oo));

		*oo = *o;
		oo->boot_timeout_s = o->boot_timeout_s ? o->boot_timeout_s : 120;
		oo->idle_timeout_s = o->idle_timeout_s ? o->idle_timeout_s : 600;
		o = oo;
	}
	if (!kernel) {
		if (initramfs_default_kernel(kernel_buf, sizeof(kernel_buf))) {
			fprintf(stderr, "usbrig: no /boot/vmlinuz-* (apt-get install linux-image-amd64)\n");
			return VM_END_ERROR;
		}
		kernel = kernel_buf;
	}
	if (!realpath(kernel, kernel_abs)) {
		fprintf(stderr, "usbrig: %s: %s\n", kernel, strerror(errno));
		return VM_END_ERROR;
	}
	ret = initramfs_kernel_release(kernel_abs, kver, sizeof(kver));
	if (ret) {
		fprintf(stderr, "usbrig: %s: cannot read the kernel release: %s\n",
			kernel_abs, strerror(-ret));
		return VM_END_ERROR;
	}
	ret = fs_mkdir_p(o->work_dir, 0755);
	if (ret) {
		fprintf(stderr, "usbrig: %s: %s\n", o->work_dir, strerror(-ret));
		return VM_END_ERROR;
	}
	strfmt(initrd, sizeof(initrd), "%s/initramfs.cpio", o->work_dir);
	strfmt(console_log, sizeof(console_log), "%s/console.log", o->work_dir);
	strfmt(qemu_log, sizeof(qemu_log), "%s/qemu.log", o->work_dir);

	io = (struct initramfs_opts){
		.kver = kver, .modules_dir = o->modules_dir,
		.modules = o->modules, .n_modules = o->n_modules,
		.tools = o->tools, .n_tools = o->n_tools,
		.gadgets = o->gadgets, .n_gadgets = o->n_gadgets,
		.files = o->files, .n_files = o->n_files,
		.plan_path = o->plan_path, .bin_dir = o->bin_dir,
		.cache_dir = o->cache_dir, .out_path = initrd,
		.verbose = o->verbose,
	};
	t_start = mono_ms();
	ret = initramfs_build(&io, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "usbrig: %s\n", err);
		return VM_END_ERROR;
	}
	vlog(o, 1, "initramfs %s ready in %llu ms", initrd,
	     (unsigned long long)(mono_ms() - t_start));

	accel = pick_accel(o, kernel_abs);
	if (!pvh_kernel(o, kernel_abs, boot_kernel, sizeof(boot_kernel)))
		vlog(o, 1, "PVH boot of %s", boot_kernel);
	else
		strfmt(boot_kernel, sizeof(boot_kernel), "%s", kernel_abs);

	/* sun_path is 108 bytes: a deep work_dir gets a socket in /tmp */
	strfmt(sock, sizeof(sock), "%s/results.sock", o->work_dir);
	if (strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		strfmt(sockdir, sizeof(sockdir), "/tmp/usbrig-XXXXXX");
		if (!mkdtemp(sockdir)) {
			fprintf(stderr, "usbrig: mkdtemp: %s\n", strerror(errno));
			return VM_END_ERROR;
		}
		strfmt(sock, sizeof(sock), "%s/results.sock", sockdir);
	}
	lfd = listen_unix(sock);
	if (lfd < 0) {
		fprintf(stderr, "usbrig: %s: %s\n", sock, strerror(-lfd));
		goto out;
	}

	/* loglevel=5: the console prints KERN_WARNING and worse, which
	 * holds every crash pattern and the agent's markers (plan.h).
	 * no_timer_check: under TCG on a loaded host the IO-APIC timer
	 * check at boot can miss its ticks and panic ("IO-APIC + timer
	 * doesn't work!"), seen on this 2-core machine at load 8.
	 * init_on_alloc=1: fresh allocations are zeroed, as Debian's
	 * kernels do by default; kernels built without that default (the
	 * patched ones) would hand a driver leftover heap bytes where the
	 * device sent fewer than asked, and its outcome would depend on
	 * them (docs/census.md, lan78xx and smscufx) */
	strfmt(append, sizeof(append),
	       "console=ttyS0 panic=-1 loglevel=5 no_timer_check init_on_alloc=1%s%s%s",
	       o->panic_on_oops ? " " VM_PANIC_ON_OOPS : "",
	       o->cmdline ? " " : "", o->cmdline ? o->cmdline : "");
	strcpy(nic, "none");
	/* a boot whose scenarios have no gadget needs no server */
	if (o->gadget_on_host && o->n_served) {
		int port = host_server_start(o, &gadget);

		if (port < 0)
			goto out;
		/* user-mode networking: the guest's TCP connection to
		 * VM_HOST_ADDR:port is QEMU's own connection to the host's
		 * 127.0.0.1:port, no process between them (a guestfwd
		 * through a relay process per connection moved 1.4 MB/s) */
		strfmt(nic, sizeof(nic), "user,model=virtio-net-pci");
		strfmt(append + strlen(append), sizeof(append) - strlen(append),
		       " usbrig.net=1 usbrig.remote=" VM_HOST_ADDR ":%d", port);
	}
	qemu_path(con_opt, sizeof(con_opt), "file,id=con,path=", console_log);
	qemu_path(res_opt, sizeof(res_opt), "socket,id=res,path=", sock);

	argv[a++] = QEMU;
	argv[a++] = "-nodefaults";
	argv[a++] = "-no-reboot";
	argv[a++] = "-display";
	argv[a++] = "none";
	argv[a++] = "-monitor";
	argv[a++] = "none";
	argv[a++] = "-accel";
	argv[a++] = (char *)accel;
	if (!strcmp(accel, "kvm")) {
		argv[a++] = "-cpu";
		argv[a++] = "host";
	}
	argv[a++] = "-m";
	argv[a++] = "1024";
	argv[a++] = "-smp";
	argv[a++] = VM_SMP;
	argv[a++] = "-kernel";
	argv[a++] = boot_kernel;
	argv[a++] = "-initrd";
	argv[a++] = initrd;
	argv[a++] = "-append";
	argv[a++] = append;
	argv[a++] = "-chardev";
	argv[a++] = con_opt;
	argv[a++] = "-serial";
	argv[a++] = "chardev:con";
	argv[a++] = "-device";
	argv[a++] = "virtio-serial-pci,id=vs";
	argv[a++] = "-chardev";
	argv[a++] = res_opt;
	argv[a++] = "-device";
	argv[a++] = "virtserialport,bus=vs.0,chardev=res,name=usbrig.0";
	argv[a++] = "-nic";
	argv[a++] = nic;
	argv[a] = NULL;
	if (o->verbose >= 2) {
		fprintf(stderr, "usbrig: vm:");
		for (int i = 0; i < a; i++)
			fprintf(stderr, " %s", argv[i]);
		fputc('\n', stderr);
	}

	unlink(console_log);
	t_start = mono_ms();
	qemu = spawn(argv, qemu_log, NULL);
	if (qemu < 0) {
		fprintf(stderr, "usbrig: cannot start " QEMU ": %s\n",
			strerror(errno));
		goto out;
	}
	vlog(o, 1, "QEMU pid %d, accel %s, kernel %s (%s)", (int)qemu, accel,
	     kernel_abs, kver);

	res.buf = malloc(LINE_MAX_VM);
	if (!res.buf)
		goto out;
	last_line_ms = t_start;
	for (;;) {
		struct pollfd p = { .fd = rfd >= 0 ? rfd : lfd,
				    .events = POLLIN };
		uint64_t t = mono_ms(), limit;
		unsigned long before = res.lines;

		if (!exited && waitpid(qemu, &status, WNOHANG) == qemu)
			exited = true;
		console_poll(&con, mono_ms(), cb);
		if (exited) {
			/* whatever the agent wrote last is still queued */
			if (rfd >= 0 && !res.eof)
				results_read(&res, rfd, cb);
			break;
		}
		if (res.eof) {
			/* the agent is done; the guest powers off next */
			if (!eof_at)
				eof_at = t;
			if (t > eof_at + EXIT_WAIT_MS) {
				vlog(o, 0, "guest did not power off after the agent finished: killing QEMU");
				kill_reap(qemu, &status);
				exited = true;
				end = VM_END_TIMEOUT;
				break;
			}
			usleep(20000);
			continue;
		}
		/* the boot timeout runs until the first line, then the idle
		 * timeout between lines */
		limit = res.lines ? last_line_ms + o->idle_timeout_s * 1000ull :
			t_start + o->boot_timeout_s * 1000ull;
		if (t >= limit) {
			vlog(o, 0, "%s timeout after %llu ms: killing QEMU",
			     res.lines ? "idle" : "boot",
			     (unsigned long long)(t - t_start));
			kill_reap(qemu, &status);
			qemu = -1;
			console_poll(&con, mono_ms(), cb);
			console_flush(&con, mono_ms(), true, cb);
			end = VM_END_TIMEOUT;
			goto out;
		}
		if (poll(&p, 1, limit - t < 100 ? (int)(limit - t) : 100) > 0) {
			if (rfd < 0) {
				rfd = accept4(lfd, NULL, NULL,
					      SOCK_CLOEXEC | SOCK_NONBLOCK);
			} else {
				results_read(&res, rfd, cb);
			}
		}
		if (res.lines != before) {
			last_line_ms = mono_ms();
			if (!before)
				vlog(o, 1, "first result line after %llu ms",
				     (unsigned long long)(last_line_ms -
							  t_start));
		}
	}
	qemu = -1;	/* reaped */
	console_poll(&con, mono_ms(), cb);
	console_flush(&con, mono_ms(), true, cb);
	vlog(o, 1, "QEMU exited (%s %d) after %llu ms, %lu result lines",
	     WIFEXITED(status) ? "status" : "signal",
	     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
	     (unsigned long long)(mono_ms() - t_start), res.lines);
	if (end == VM_END_TIMEOUT)
		goto out;
	if (con.panic)
		end = VM_END_CRASH;
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		end = VM_END_POWEROFF;
	else {
		char tail[1024] = "";
		int fd = open(qemu_log, O_RDONLY);

		if (fd >= 0) {
			ssize_t n = read(fd, tail, sizeof(tail) - 1);

			tail[n > 0 ? n : 0] = '\0';
			close(fd);
		}
		fprintf(stderr, "usbrig: " QEMU " failed: %s\n", tail);
		end = VM_END_ERROR;
	}
out:
	if (qemu > 0)
		kill_reap(qemu, NULL);
	if (gadget > 0) {
		/* its own exit on SIGTERM, 100 ms at most, then SIGKILL */
		uint64_t until = mono_ms() + 100;
		pid_t got;

		kill(gadget, SIGTERM);
		while ((got = waitpid(gadget, NULL, WNOHANG)) == 0 &&
		       mono_ms() < until)
			usleep(2000);
		if (got != gadget)
			kill_reap(gadget, NULL);
	}
	if (rfd >= 0)
		close(rfd);
	if (lfd >= 0)
		close(lfd);
	console_close(&con);
	unlink(sock);
	if (sockdir[0])
		rmdir(sockdir);
	free(res.buf);
	return end;
}

int vm_console_excerpt(const char *work_dir, char *buf, size_t max)
{
	char path[PATH_MAX];
	struct stat st;
	off_t start;
	ssize_t n;
	char *nl;
	int fd;

	if (!max)
		return -EINVAL;
	buf[0] = '\0';
	strfmt(path, sizeof(path), "%s/console.log", work_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		close(fd);
		return -errno;
	}
	start = st.st_size > (off_t)(max - 1) ? st.st_size - (off_t)(max - 1) : 0;
	n = pread(fd, buf, max - 1, start);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	nl = start ? strchr(buf, '\n') : NULL;
	if (nl) {
		memmove(buf, nl + 1, strlen(nl + 1) + 1);
		n = (ssize_t)strlen(buf);
	}
	return (int)n;
}
