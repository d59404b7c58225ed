// SPDX-License-Identifier: GPL-2.0
/*
 * usb.c - the gadget server, vhci ports, attach/detach, scenario cleanup.
 *
 * vhci-hcd's status files (drivers/usb/usbip/vhci_sysfs.c) list one port
 * per line after a header:
 *
 *	hub port sta spd dev      sockfd local_busid
 *	hs  0000 006 002 00040002 000005 3-1
 *
 * port is the global decimal port number `usbip detach -p` takes, sta 4 is
 * free (VDEV_ST_NULL) and 6 in use (VDEV_ST_USED); local_busid is "0-0"
 * until the device has a usb_device.  `usbip attach` records each
 * connection in /var/run/vhci_hcd/port<N> as "HOST PORT BUSID\n"; that is
 * how we learn which port an attach took.
 */
#define _GNU_SOURCE
#include "agent.h"
#include "fsutil.h"
#include "plan_words.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define VHCI_PORTS_MAX	256
#define SERVER_START_MS	10000
#define CLEANUP_MS	15000

struct scenario_ctx *cur;
const char *remote_host = "127.0.0.1";
int remote_port;

struct vhci_port {
	int port;
	int status;
	char busid[32];
};

/* Every vhci port; returns the count. */
static int vhci_ports(struct vhci_port *p, int max)
{
	glob_t gl;
	size_t i;
	int n = 0;

	if (glob("/sys/devices/platform/vhci_hcd.*/status*", 0, NULL, &gl))
		return 0;
	for (i = 0; i < gl.gl_pathc; i++) {
		FILE *f = fopen(gl.gl_pathv[i], "r");
		char line[256];

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f) && n < max) {
			char hub[8], busid[32];
			unsigned int port, sta;

			if (sscanf(line, "%7s %u %u %*u %*x %*u %31s", hub,
				   &port, &sta, busid) != 4)
				continue;	/* the header */
			p[n].port = (int)port;
			p[n].status = (int)sta;
			strfmt(p[n].busid, sizeof(p[n].busid), "%s", busid);
			n++;
		}
		fclose(f);
	}
	globfree(&gl);
	return n;
}

static const struct vhci_port *vhci_find(const struct vhci_port *p, int n,
					 int port)
{
	for (int i = 0; i < n; i++)
		if (p[i].port == port)
			return &p[i];
	return NULL;
}

void usb_driver_of(const char *name, char *buf, size_t size)
{
	char path[PATH_MAX], link[PATH_MAX];
	ssize_t n;

	buf[0] = '\0';
	strfmt(path, sizeof(path), "/sys/bus/usb/devices/%s/driver", name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = '\0';
	strfmt(buf, size, "%s", strrchr(link, '/') ? strrchr(link, '/') + 1 :
		 link);
}

const char *usb_gadget_dev(struct gadget *g)
{
	struct vhci_port ports[VHCI_PORTS_MAX];
	const struct vhci_port *p;
	int n;

	if (g->dev[0] || g->port < 0)
		return g->dev;
	n = vhci_ports(ports, VHCI_PORTS_MAX);
	p = vhci_find(ports, n, g->port);
	if (p && p->status == 6 && strcmp(p->busid, "0-0"))
		strfmt(g->dev, sizeof(g->dev), "%s", p->busid);
	return g->dev;
}

int usb_intf_name(struct gadget *g, int intf, char *buf, size_t size)
{
	char path[PATH_MAX], val[32];
	int n;

	if (!usb_gadget_dev(g)[0])
		return -ENODEV;
	strfmt(path, sizeof(path), "/sys/bus/usb/devices/%s/bConfigurationValue",
		 g->dev);
	n = fs_read_small(path, val, sizeof(val));
	if (n <= 0)
		return -ENODEV;	/* gone, or not configured */
	strfmt(buf, size, "%s:%s.%d", g->dev, val, intf);
	return 0;
}

/* ---- the gadget server ---- */

bool usb_server_check(struct scenario_ctx *s)
{
	int st;

	if (!s->server)
		return s->server_dead;
	if (waitpid(s->server, &st, WNOHANG) == s->server) {
		s->server = 0;
		s->server_dead = true;
		s->server_status = st;
	}
	return s->server_dead;
}

static void server_log_tail(const struct scenario_ctx *s, char *buf,
			    size_t size)
{
	char log[4096];

	if (fs_read_small(s->server_log, log, sizeof(log)) <= 0) {
		strfmt(buf, size, "(no output)");
		return;
	}
	strfmt(buf, size, "%s", tail_lines(log, 5));
}

int usb_server_start(struct scenario_ctx *s, char *saw, size_t size)
{
	static int serial;
	char port_file[64], val[32], log[1024];
	char *argv[4 + AG_GADGETS_MAX];
	uint64_t deadline;
	int i, ret, a = 0;
	pid_t pid;

	serial++;
	strfmt(port_file, sizeof(port_file), "/tmp/usbrig-port.%d", serial);
	strfmt(s->server_log, sizeof(s->server_log),
		 "/tmp/usbrig-gadget.%d.log", serial);
	unlink(port_file);
	argv[a++] = "/usr/bin/usbrig-gadget";
	argv[a++] = "--port-file";
	argv[a++] = port_file;
	for (i = 0; i < s->n_gadgets; i++)
		argv[a++] = s->g[i].script;
	argv[a] = NULL;

	pid = fork();
	if (pid < 0) {
		strfmt(saw, size, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int fd = open(s->server_log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int null = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		if (null >= 0)
			dup2(null, 0);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		ret = devcpu_claim(0);
		if (ret)
			fprintf(stderr, "usbrig-agent: the device's vCPU: %s\n",
				strerror(-ret));
		execv(argv[0], argv);
		_exit(127);
	}
	setpgid(pid, pid);
	s->server = pid;
	s->server_dead = false;

	deadline = now_us() + SERVER_START_MS * 1000ull;
	for (;;) {
		if (fs_read_small(port_file, val, sizeof(val)) > 0) {
			s->server_port = atoi(val);
			return 0;
		}
		if (usb_server_check(s)) {
			server_log_tail(s, log, sizeof(log));
			strfmt(saw, size, "usbrig-gadget exited (status %d) before listening: %s",
				 WIFEXITED(s->server_status) ?
				 WEXITSTATUS(s->server_status) :
				 128 + WTERMSIG(s->server_status), log);
			return -1;
		}
		if (now_us() > deadline) {
			strfmt(saw, size, "usbrig-gadget wrote no port file in %d ms",
				 SERVER_START_MS);
			return -1;
		}
		ev_pump(10);
	}
}

static void server_stop(struct scenario_ctx *s)
{
	pid_t pid = s->server;
	uint64_t deadline = now_us() + 2000000;
	int st;

	if (!pid)
		return;
	s->server = 0;	/* a planned exit, not a death */
	kill(pid, SIGTERM);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_us() > deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		ev_pump(10);
	}
}

/* ---- attach / detach ---- */

static int attach_port_from_records(const struct gadget *g,
				    const bool *used_before)
{
	glob_t gl;
	size_t i;
	int port = -1;

	if (glob("/var/run/vhci_hcd/port*", 0, NULL, &gl))
		return -1;
	for (i = 0; i < gl.gl_pathc; i++) {
		char rec[256], host[128], tport[32], busid[32];
		int p = atoi(strrchr(gl.gl_pathv[i], '/') + 5);

		if (p < 0 || p >= VHCI_PORTS_MAX || used_before[p])
			continue;
		if (fs_read_small(gl.gl_pathv[i], rec, sizeof(rec)) <= 0)
			continue;
		if (sscanf(rec, "%127s %31s %31s", host, tport, busid) != 3)
			continue;
		if (!strcmp(busid, g->busid) && !strcmp(host, remote_host))
			port = p;
	}
	globfree(&gl);
	return port;
}

/* A uevent at or after `since` for `name` with action (and driver). */
static const struct uevent *uev_find(const char *name, const char *action,
				     const char *devtype, const char *driver,
				     uint64_t since)
{
	for (size_t i = ev.n_uev; i > 0; i--) {
		const struct uevent *u = &ev.uev[i - 1];

		if (u->t_us < since)
			break;
		if (strcmp(u->name, name) || strcmp(u->action, action))
			continue;
		if (devtype && strcmp(u->devtype, devtype))
			continue;
		if (driver && strcmp(u->driver, driver))
			continue;
		return u;
	}
	return NULL;
}

/*
 * The usbip tools read every port's status before they attach or detach
 * (libsrc/vhci_driver.c, parse_status()), and a port in use whose device
 * is not in /sys/bus/usb/devices yet (from the SET_ADDRESS, which marks
 * the port used with its busid, to the device's registration, some 50 ms
 * later) fails them with "open vhci_driver" before they do anything.  Two
 * gadgets attached one after the other without waiting (the census's
 * device and its twin) meet that window.
 *
 * Is port (-1: any) in that state?  except_port is left out.
 */
static bool vhci_half_enumerated(int port, int except_port)
{
	struct vhci_port ports[VHCI_PORTS_MAX];
	int n = vhci_ports(ports, VHCI_PORTS_MAX);
	char path[PATH_MAX];

	for (int i = 0; i < n; i++) {
		if (ports[i].status != 6 ||	/* VDEV_ST_USED */
		    ports[i].port == except_port ||
		    (port >= 0 && ports[i].port != port))
			continue;
		strfmt(path, sizeof(path), "/sys/bus/usb/devices/%s",
		       ports[i].busid);
		if (access(path, F_OK))
			return true;
	}
	return false;
}

/*
 * Run a usbip command (argv) on port own_port (-1: attach, none yet)
 * outside that window: wait until no other port is half-enumerated (2 s
 * at most in all: an error state that lasts is the tool's to report), and
 * run it again, up to three times, when it failed in the window anyway
 * (one may open while the tool starts).  A port of a device that never
 * enumerates, the one being detached, stays half-enumerated: no waiting
 * and no retry for it, the tool's failure is reported at once and the
 * scenario's cleanup frees the port.  `usbip attach` has imported the
 * device from the server when it fails there and closes the connection;
 * the server offers the device again (it reads the closed connection
 * before the next one's import).
 */
static int usbip_run(char *const argv[], int own_port, uint64_t deadline_us,
		     struct proc_res *r)
{
	uint64_t until = now_us() + 2000000;
	int tries = 0, ret;

	if (until > deadline_us)
		until = deadline_us;
	for (;;) {
		while (vhci_half_enumerated(-1, own_port) && now_us() < until)
			ev_pump(10);
		ret = proc_run(argv, deadline_us, r);
		if (ret || r->status != 1 || !strstr(r->out, "open vhci_driver") ||
		    ++tries > 3 || now_us() >= deadline_us ||
		    (own_port >= 0 && vhci_half_enumerated(own_port, -1)))
			return ret;
		proc_res_free(r);
		ev_pump(20);
	}
}

static const char *status_str(int st, char *buf, size_t size)
{
	if (st < 0)
		strfmt(buf, size, "timed out");
	else
		strfmt(buf, size, "status %d", st);
	return buf;
}

int usb_attach(struct scenario_ctx *s, struct gadget *g, int mode,
	       uint64_t deadline_us, char *saw, size_t size)
{
	struct vhci_port ports[VHCI_PORTS_MAX];
	bool used_before[VHCI_PORTS_MAX] = { false };
	char tcp_port[16], st[32], log[1024], evs[1024];
	char *const argv[] = { "usbip", "--tcp-port", tcp_port, "attach", "-r",
			       (char *)remote_host, "-b", g->busid, NULL };
	struct proc_res r;
	uint64_t start = now_us();
	int n, i, ret;

	if (g->port >= 0) {
		strfmt(saw, size, "%s is already attached on port %d", g->id,
			 g->port);
		return -1;
	}
	if (usb_server_check(s)) {
		server_log_tail(s, log, sizeof(log));
		strfmt(saw, size, "the gadget server is dead: %s", log);
		return -1;
	}
	n = vhci_ports(ports, VHCI_PORTS_MAX);
	if (!n) {
		strfmt(saw, size, "no vhci_hcd ports in /sys/devices/platform (vhci-hcd not loaded?)");
		return -1;
	}
	for (i = 0; i < n; i++)
		if (ports[i].status != 4 && ports[i].port < VHCI_PORTS_MAX)
			used_before[ports[i].port] = true;

	strfmt(tcp_port, sizeof(tcp_port), "%d",
		 s->server_port ? s->server_port :
		 remote_port ? remote_port : 3240);
	ret = usbip_run(argv, -1, deadline_us, &r);
	if (ret) {
		strfmt(saw, size, "usbip: %s", strerror(-ret));
		return -1;
	}
	if (r.status) {
		server_log_tail(s, log, sizeof(log));
		strfmt(saw, size, "usbip attach -r %s -b %s: %s: %s; gadget server: %s",
			 remote_host, g->busid, status_str(r.status, st, sizeof(st)),
			 tail_lines(r.out, 3), log);
		proc_res_free(&r);
		return -1;
	}
	proc_res_free(&r);

	g->port = attach_port_from_records(g, used_before);
	if (g->port < 0) {
		/* no record: the one port that became used */
		n = vhci_ports(ports, VHCI_PORTS_MAX);
		for (i = 0; i < n; i++)
			if (ports[i].status != 4 &&
			    ports[i].port < VHCI_PORTS_MAX &&
			    !used_before[ports[i].port])
				g->port = ports[i].port;
	}
	if (g->port < 0) {
		strfmt(saw, size, "usbip attach exited 0 but no vhci port is in use for %s",
			 g->busid);
		return -1;
	}
	ret = devcpu_claim_vhci();
	if (ret)
		out_diag("%s: vhci_rx/vhci_tx stay where the scheduler puts them: %s",
			 g->id, strerror(-ret));
	if (mode == PLAN_NO_WAIT)
		return 0;

	/* the usb_device's own bind (DRIVER=usb) comes after
	 * usb_set_configuration() registered and probed its interfaces */
	for (;;) {
		ev_pump(0);
		if (usb_gadget_dev(g)[0] &&
		    uev_find(g->dev, "bind", "usb_device", "usb", start))
			break;
		if (s->server_dead || now_us() >= deadline_us) {
			ev_describe(g->dev[0] ? g->dev : NULL, evs,
				    sizeof(evs));
			ev_kmsg_tail(NULL, 4, log, sizeof(log));
			strfmt(saw, size, "%s on vhci port %d: device %s, no bind of the usb_device%s; uevents: %s; kernel: %s",
				 g->busid, g->port, g->dev[0] ? g->dev : "none",
				 s->server_dead ? " (gadget server died)" : "",
				 evs, log);
			return -1;
		}
		ev_pump(20);
	}
	if (mode == PLAN_VERIFY)
		return verify_descriptors(g, deadline_us, saw, size) ? -1 : 0;
	return 0;
}

static int detach_port(int port, uint64_t deadline_us, char *saw, size_t size)
{
	char pstr[16], st[32];
	char *const argv[] = { "usbip", "detach", "-p", pstr, NULL };
	struct proc_res r;
	int ret;

	strfmt(pstr, sizeof(pstr), "%d", port);
	ret = usbip_run(argv, port, deadline_us, &r);
	if (ret) {
		strfmt(saw, size, "usbip: %s", strerror(-ret));
		return -1;
	}
	if (r.status) {
		strfmt(saw, size, "usbip detach -p %d: %s: %s", port,
			 status_str(r.status, st, sizeof(st)),
			 tail_lines(r.out, 3));
		proc_res_free(&r);
		return -1;
	}
	proc_res_free(&r);
	return 0;
}

int usb_detach(struct scenario_ctx *s, struct gadget *g, uint64_t deadline_us,
	       char *saw, size_t size)
{
	struct vhci_port ports[VHCI_PORTS_MAX];
	uint64_t start = now_us();
	char evs[1024];

	(void)s;
	if (g->port < 0) {
		strfmt(saw, size, "%s is not attached", g->id);
		return -1;
	}
	if (detach_port(g->port, deadline_us, saw, size))
		return -1;
	for (;;) {
		const struct vhci_port *p;
		int n;

		ev_pump(0);
		n = vhci_ports(ports, VHCI_PORTS_MAX);
		p = vhci_find(ports, n, g->port);
		if (g->dev[0]) {
			if (uev_find(g->dev, "remove", "usb_device", NULL,
				     start))
				break;
		} else if (!p || p->status == 4) {
			break;	/* never enumerated: the port is free */
		}
		if (now_us() >= deadline_us) {
			ev_describe(g->dev[0] ? g->dev : NULL, evs,
				    sizeof(evs));
			strfmt(saw, size, "port %d: %s; no remove uevent for %s; uevents: %s",
				 g->port, p && p->status != 4 ? "still in use" :
				 "free", g->dev[0] ? g->dev : "(none)", evs);
			return -1;
		}
		ev_pump(20);
	}
	g->port = -1;
	g->dev[0] = '\0';
	return 0;
}

/* ---- modules ---- */

void modules_snapshot(char ***names, size_t *n)
{
	FILE *f = fopen("/proc/modules", "r");
	char line[512], name[128];
	char **v = NULL;
	size_t c = 0;

	*names = NULL;
	*n = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char **nv;

		if (sscanf(line, "%127s", name) != 1)
			continue;
		nv = realloc(v, (c + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[c] = strdup(name);
		if (v[c])
			c++;
	}
	fclose(f);
	*names = v;
	*n = c;
}

void modules_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static bool in_list(char **v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return true;
	return false;
}

/*
 * Unload every module that was not loaded when the scenario began.
 * /proc/modules lists the newest first, so one pass in file order is
 * reverse load order; users go before what they use, and a few passes
 * settle the rest.
 */
static void unload_new_modules(struct scenario_ctx *s)
{
	for (int pass = 0; pass < 8; pass++) {
		char **now;
		size_t n, i;
		int left = 0, done = 0;

		modules_snapshot(&now, &n);
		for (i = 0; i < n; i++) {
			if (in_list(s->mods_before, s->n_mods_before, now[i]))
				continue;
			left++;
			if (!syscall(SYS_delete_module, now[i], O_NONBLOCK))
				done++;
		}
		if (left && !done && pass == 7) {
			for (i = 0; i < n; i++)
				if (!in_list(s->mods_before, s->n_mods_before,
					     now[i]))
					out_diag("cleanup: module %s stays loaded",
						 now[i]);
		}
		modules_free(now, n);
		if (!left || !done)
			break;
	}
}

/* Dynamic ids left on drivers that stay loaded would leak into the next
 * scenario: remove every entry new_id lists. */
static void remove_dynamic_ids(void)
{
	glob_t gl;
	size_t i;

	if (glob("/sys/bus/usb/drivers/*/new_id", 0, NULL, &gl))
		return;
	for (i = 0; i < gl.gl_pathc; i++) {
		char ids[4096], rm[PATH_MAX], *line, *save = NULL;

		if (fs_read_small(gl.gl_pathv[i], ids, sizeof(ids)) <= 0)
			continue;
		strfmt(rm, sizeof(rm), "%s", gl.gl_pathv[i]);
		strcpy(strrchr(rm, '/') + 1, "remove_id");
		for (line = strtok_r(ids, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			int r = fs_write_small(rm, line, 0);

			if (r == -ENOENT)
				break;
			if (r)
				out_diag("cleanup: %s: %s: %s", rm, line,
					 strerror(-r));
		}
	}
	globfree(&gl);
}

static bool usb_devices_left(char *buf, size_t size)
{
	DIR *d = opendir("/sys/bus/usb/devices");
	struct dirent *e;
	bool left = false;

	buf[0] = '\0';
	if (!d)
		return false;
	while ((e = readdir(d))) {
		/* root hubs are usbN with interfaces N-0:1.0; devices are
		 * N-P[.P...], their interfaces N-P:C.I */
		if (e->d_name[0] == '.' || !strncmp(e->d_name, "usb", 3) ||
		    strstr(e->d_name, "-0:"))
			continue;
		if (!left)
			strfmt(buf, size, "%s", e->d_name);
		left = true;
	}
	closedir(d);
	return left;
}

void usb_cleanup(struct scenario_ctx *s)
{
	struct vhci_port ports[VHCI_PORTS_MAX];
	uint64_t deadline = now_us() + CLEANUP_MS * 1000ull;
	char saw[1024], name[256];
	int n, i;

	n = vhci_ports(ports, VHCI_PORTS_MAX);
	for (i = 0; i < n; i++) {
		if (ports[i].status == 4)
			continue;
		if (detach_port(ports[i].port, deadline, saw, sizeof(saw)))
			out_diag("cleanup: %s", saw);
	}
	for (;;) {
		ev_pump(0);
		if (!usb_devices_left(name, sizeof(name)))
			break;
		if (now_us() >= deadline) {
			out_diag("cleanup: USB device %s is still there", name);
			break;
		}
		ev_pump(20);
	}
	server_stop(s);
	remove_dynamic_ids();
	unload_new_modules(s);
	for (i = 0; i < s->n_gadgets; i++) {
		s->g[i].port = -1;
		s->g[i].dev[0] = '\0';
	}
}
