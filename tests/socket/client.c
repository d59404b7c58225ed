// SPDX-License-Identifier: GPL-2.0
/*
 * client.c - blocking USB/IP test client and server-process helpers
 * (see client.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "util.h"

#define IO_TIMEOUT_S		10
#define START_TIMEOUT_MS	30000
#define STOP_TIMEOUT_MS		20000

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------------------
 * The server process
 * --------------------------------------------------------------------- */

const char *srv_binary(void)
{
	const char *b = getenv("USBRIG_GADGET");

	return b && *b ? b : "build/usbrig-gadget";
}

int srv_init(struct srv *s)
{
	const char *tmp = getenv("TMPDIR");

	memset(s, 0, sizeof(*s));
	s->pid = -1;
	s->port = -1;
	snprintf(s->dir, sizeof(s->dir), "%s/usbrig-sock-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(s->dir)) {
		perror("mkdtemp");
		return -1;
	}
	snprintf(s->log, sizeof(s->log), "%s/server.log", s->dir);
	return 0;
}

int srv_write_file(struct srv *s, const char *name, const char *text,
		   char *path)
{
	FILE *f;

	snprintf(path, PATH_MAX, "%s/%s", s->dir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return -1;
	}
	fputs(text, f);
	if (fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

static int read_port_file(const char *path)
{
	char buf[16];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 1 || buf[n - 1] != '\n')
		return -1;
	buf[n] = '\0';
	return atoi(buf);
}

int srv_start(struct srv *s, const char *const *args)
{
	const char *argv[64];
	char port_file[PATH_MAX];
	size_t n = 0;
	int waited, status;

	snprintf(port_file, sizeof(port_file), "%s/port", s->dir);
	unlink(port_file);
	argv[n++] = srv_binary();
	argv[n++] = "--port";
	argv[n++] = "0";
	argv[n++] = "--port-file";
	argv[n++] = port_file;
	while (*args && n < 63)
		argv[n++] = *args++;
	argv[n] = NULL;

	s->pid = fork();
	if (s->pid < 0) {
		perror("fork");
		return -1;
	}
	if (s->pid == 0) {
		int fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		/* a test that crashes must not leave its server behind */
		prctl(PR_SET_PDEATHSIG, SIGTERM);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	for (waited = 0; waited < START_TIMEOUT_MS; waited += 20) {
		s->port = read_port_file(port_file);
		if (s->port > 0)
			return 0;
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			fprintf(stderr, "server exited early (status %#x)\n",
				status);
			s->pid = -1;
			srv_print_log(s);
			return -1;
		}
		sleep_ms(20);
	}
	fprintf(stderr, "server wrote no port file in %d ms\n",
		START_TIMEOUT_MS);
	srv_stop(s);
	return -1;
}

int srv_start_scripts(struct srv *s, const struct srv_script *sc, size_t n,
		      const char *const *opts, const char *const *more)
{
	const char *args[64];
	size_t i, k = 0;

	if (srv_init(s) < 0)
		return -1;
	for (; opts && *opts && k < 63; opts++)
		args[k++] = *opts;
	for (i = 0; i < n && k < 63; i++) {
		if (srv_write_file(s, sc[i].name, sc[i].text, sc[i].path) < 0)
			return -1;
		args[k++] = sc[i].path;
	}
	for (; more && *more && k < 63; more++)
		args[k++] = *more;
	args[k] = NULL;
	return srv_start(s, args);
}

int srv_finish(struct srv *s, bool *failed)
{
	int ret = srv_stop(s);

	srv_cleanup(s);
	if (ret == 0)
		return 0;
	*failed = true;
	return -1;
}

bool srv_alive(struct srv *s)
{
	int status;

	if (s->pid <= 0)
		return false;
	if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
		fprintf(stderr, "server died (status %#x)\n", status);
		s->pid = -1;
		srv_print_log(s);
		return false;
	}
	return true;
}

int srv_stop(struct srv *s)
{
	int waited, status, ret = -1;

	if (s->pid <= 0)
		return -1;
	kill(s->pid, SIGTERM);
	for (waited = 0; waited < STOP_TIMEOUT_MS; waited += 10) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid)
			break;
		sleep_ms(10);
	}
	if (waited >= STOP_TIMEOUT_MS) {
		fprintf(stderr, "server ignored SIGTERM, killing it\n");
		kill(s->pid, SIGKILL);
		waitpid(s->pid, &status, 0);
	} else if (WIFEXITED(status)) {
		ret = WEXITSTATUS(status);
	} else {
		fprintf(stderr, "server died of signal %d\n",
			WIFSIGNALED(status) ? WTERMSIG(status) : -1);
	}
	s->pid = -1;
	if (ret != 0) {
		fprintf(stderr, "server exit status %d\n", ret);
		srv_print_log(s);
	}
	return ret;
}

void srv_print_log(struct srv *s)
{
	char line[1024];
	FILE *f;

	f = fopen(s->log, "r");
	if (!f)
		return;
	fprintf(stderr, "---- %s ----\n", s->log);
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fprintf(stderr, "---- end of server log ----\n");
	fclose(f);
}

int srv_log_count(struct srv *s, const char *needle)
{
	char line[2048];
	int n = 0;
	FILE *f;

	f = fopen(s->log, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	fclose(f);
	return n;
}

void srv_cleanup(struct srv *s)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (s->pid > 0)
		srv_stop(s);
	if (!s->dir[0])
		return;
	d = opendir(s->dir);
	if (d) {
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(path, sizeof(path), "%s/%s", s->dir,
				 e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(s->dir);
	s->dir[0] = '\0';
}

int run_capture(const char *const *argv, char **out, size_t *out_len)
{
	size_t len = 0, cap = 4096;
	int pfd[2], status;
	char *buf;
	pid_t pid;
	ssize_t n;

	buf = malloc(cap);
	if (!buf || pipe(pfd) < 0) {
		free(buf);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		free(buf);
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(pfd[0], buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(pfd[0]);
	buf[len] = '\0';
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		free(buf);
		return -1;
	}
	*out = buf;
	if (out_len)
		*out_len = len;
	return WEXITSTATUS(status);
}

/* ---------------------------------------------------------------------
 * --dump output
 * --------------------------------------------------------------------- */

/* "LABEL: 12 01 ..." -> item; 0, or -1 when the line is not one. */
static int dump_parse_line(const char *line, struct dump_item *it)
{
	const char *colon = strchr(line, ':');
	const char *p;
	size_t n = 0, cap;

	if (!colon || colon == line || line[0] == '#' ||
	    (size_t)(colon - line) >= sizeof(it->label))
		return -1;
	/* the rest must be nothing but " hh" groups */
	for (p = colon + 1; *p && *p != '\n'; p += 3) {
		if (p[0] != ' ' || util_hexval(p[1]) < 0 || util_hexval(p[2]) < 0)
			return -1;
		n++;
	}
	memset(it, 0, sizeof(*it));
	memcpy(it->label, line, colon - line);
	cap = n ? n : 1;
	it->data = malloc(cap);
	if (!it->data)
		return -1;
	for (p = colon + 1, n = 0; *p && *p != '\n'; p += 3)
		it->data[n++] = (uint8_t)(util_hexval(p[1]) << 4 | util_hexval(p[2]));
	it->len = n;
	return 0;
}

int dump_load(const char *script, struct dump *d)
{
	const char *const argv[] = { srv_binary(), "--dump", script, NULL };
	char *out = NULL, *line, *save = NULL;
	int ret;

	memset(d, 0, sizeof(*d));
	ret = run_capture(argv, &out, NULL);
	if (ret != 0) {
		fprintf(stderr, "%s --dump %s: exit %d\n", argv[0], script,
			ret);
		free(out);
		return -1;
	}
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (d->n >= DUMP_MAX_ITEMS)
			break;
		if (dump_parse_line(line, &d->items[d->n]) == 0)
			d->n++;
	}
	free(out);
	return d->n ? 0 : -1;
}

const struct dump_item *dump_find(const struct dump *d, const char *label)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->items[i].label, label))
			return &d->items[i];
	return NULL;
}

void dump_free(struct dump *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->items[i].data);
	d->n = 0;
}

/* ---------------------------------------------------------------------
 * Raw sockets
 * --------------------------------------------------------------------- */

#define UC_MAX_FDS	2048

static int open_fds[UC_MAX_FDS];
static size_t n_open_fds;

static void fd_remember(int fd)
{
	if (n_open_fds < UC_MAX_FDS)
		open_fds[n_open_fds++] = fd;
}

void uc_disconnect(int fd)
{
	size_t i;

	if (fd < 0)
		return;
	for (i = 0; i < n_open_fds; i++) {
		if (open_fds[i] == fd) {
			open_fds[i] = open_fds[--n_open_fds];
			break;
		}
	}
	close(fd);
}

void uc_disconnect_all(void)
{
	while (n_open_fds)
		close(open_fds[--n_open_fds]);
}

int uc_teardown(void **state)
{
	(void)state;
	uc_disconnect_all();
	return 0;
}

int uc_connect(int port)
{
	struct timeval tv = { IO_TIMEOUT_S, 0 };
	struct sockaddr_in sin;
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("socket");
		return -1;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		perror("connect");
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fd_remember(fd);
	return fd;
}

int uc_send(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int uc_recv(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int uc_expect_eof(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint8_t b;
	ssize_t n;
	int ret;

	do
		ret = poll(&pfd, 1, timeout_ms);
	while (ret < 0 && errno == EINTR);
	if (ret <= 0) {
		fprintf(stderr, "uc_expect_eof: no EOF within %d ms\n",
			timeout_ms);
		return -1;
	}
	n = recv(fd, &b, 1, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE)))
		return 0;
	fprintf(stderr, "uc_expect_eof: got data (%zd) instead of EOF\n", n);
	return -1;
}

int uc_send_op(int fd, uint16_t version, uint16_t code, uint32_t status)
{
	struct usbip_op_common op = {
		.version = version,
		.code = code,
		.status = status,
	};
	uint8_t raw[USBIP_OP_COMMON_SIZE];

	usbip_op_common_pack(&op, raw);
	return uc_send(fd, raw, sizeof(raw));
}

int uc_recv_op(int fd, struct usbip_op_common *op)
{
	uint8_t raw[USBIP_OP_COMMON_SIZE];

	if (uc_recv(fd, raw, sizeof(raw)) < 0)
		return -1;
	return usbip_op_common_unpack(op, raw, sizeof(raw)) < 0 ? -1 : 0;
}

/* ---------------------------------------------------------------------
 * Operation phase
 * --------------------------------------------------------------------- */

int uc_devlist(int port, struct uc_devlist *out)
{
	uint8_t raw[USBIP_USB_DEVICE_SIZE];
	struct usbip_op_common op;
	uint32_t i, j;
	int fd;

	memset(out, 0, sizeof(*out));
	fd = uc_connect(port);
	if (fd < 0)
		return -1;
	if (uc_send_op(fd, USBIP_VERSION, OP_REQ_DEVLIST, 0) < 0 ||
	    uc_recv_op(fd, &op) < 0)
		goto err;
	if (op.version != USBIP_VERSION || op.code != OP_REP_DEVLIST ||
	    op.status != ST_OK) {
		fprintf(stderr, "devlist: reply %#x %#x %u\n", op.version,
			op.code, op.status);
		goto err;
	}
	if (uc_recv(fd, raw, USBIP_DEVLIST_NDEV_SIZE) < 0)
		goto err;
	out->ndev = get_be32(raw);
	if (out->ndev > UC_MAX_DEVS) {
		fprintf(stderr, "devlist: %u devices\n", out->ndev);
		goto err;
	}
	for (i = 0; i < out->ndev; i++) {
		struct usbip_usb_device *d = &out->d[i].dev;

		if (uc_recv(fd, raw, USBIP_USB_DEVICE_SIZE) < 0 ||
		    usbip_usb_device_unpack(d, raw, USBIP_USB_DEVICE_SIZE) < 0)
			goto err;
		if (d->bNumInterfaces > UC_MAX_INTFS)
			goto err;
		for (j = 0; j < d->bNumInterfaces; j++)
			if (uc_recv(fd, raw, USBIP_USB_INTERFACE_SIZE) < 0 ||
			    usbip_usb_interface_unpack(&out->d[i].intf[j], raw,
					USBIP_USB_INTERFACE_SIZE) < 0)
				goto err;
	}
	/* usbipd closes after a devlist: so must we */
	if (uc_expect_eof(fd, 5000) < 0)
		goto err;
	uc_disconnect(fd);
	return 0;
err:
	fprintf(stderr, "devlist failed\n");
	uc_disconnect(fd);
	return -1;
}

int uc_import(int port, const char *busid, struct uc *u, uint32_t *status)
{
	uint8_t raw[USBIP_USB_DEVICE_SIZE];
	struct usbip_op_common op;
	uint8_t req[USBIP_IMPORT_REQ_SIZE];
	int fd;

	memset(u, 0, sizeof(*u));
	u->fd = -1;
	*status = UINT32_MAX;
	fd = uc_connect(port);
	if (fd < 0)
		return -1;
	op.version = USBIP_VERSION;
	op.code = OP_REQ_IMPORT;
	op.status = 0;
	usbip_op_common_pack(&op, req);
	memset(req + USBIP_OP_COMMON_SIZE, 0, USBIP_BUSID_SIZE);
	strncpy((char *)req + USBIP_OP_COMMON_SIZE, busid,
		USBIP_BUSID_SIZE - 1);
	if (uc_send(fd, req, sizeof(req)) < 0 || uc_recv_op(fd, &op) < 0)
		goto err;
	if (op.version != USBIP_VERSION || op.code != OP_REP_IMPORT) {
		fprintf(stderr, "import: reply %#x %#x\n", op.version,
			op.code);
		goto err;
	}
	*status = op.status;
	if (op.status != ST_OK)
		goto err;
	if (uc_recv(fd, raw, sizeof(raw)) < 0 ||
	    usbip_usb_device_unpack(&u->dev, raw, sizeof(raw)) < 0)
		goto err;
	if (strcmp(u->dev.busid, busid)) {
		fprintf(stderr, "import: busid %s, asked for %s\n",
			u->dev.busid, busid);
		goto err;
	}
	u->fd = fd;
	u->devid = u->dev.busnum << 16 | u->dev.devnum;
	u->next_seq = 1;
	return 0;
err:
	uc_disconnect(fd);
	return -1;
}

int uc_import_retry(int port, const char *busid, struct uc *u,
		    int timeout_ms)
{
	uint32_t status;
	int waited;

	for (waited = 0;; waited += 20) {
		if (uc_import(port, busid, u, &status) == 0)
			return 0;
		if (status != ST_DEV_BUSY || waited >= timeout_ms)
			break;
		sleep_ms(20);
	}
	fprintf(stderr, "import %s: status %u\n", busid, status);
	return -1;
}

void uc_close(struct uc *u)
{
	uc_disconnect(u->fd);
	u->fd = -1;
}

/* ---------------------------------------------------------------------
 * URB phase
 * --------------------------------------------------------------------- */

static struct uc_pending *uc_slot(struct uc *u, uint32_t seqnum)
{
	size_t i;

	for (i = 0; i < UC_MAX_PENDING; i++)
		if (u->pend[i].used && u->pend[i].seqnum == seqnum)
			return &u->pend[i];
	return NULL;
}

static struct uc_pending *uc_new_slot(struct uc *u)
{
	size_t i;

	for (i = 0; i < UC_MAX_PENDING; i++)
		if (!u->pend[i].used) {
			memset(&u->pend[i], 0, sizeof(u->pend[i]));
			u->pend[i].used = true;
			u->pend[i].seqnum = u->next_seq++;
			return &u->pend[i];
		}
	fprintf(stderr, "uc: too many requests in flight\n");
	return NULL;
}

void uc_make_submit(uint8_t raw[USBIP_HDR_SIZE], uint32_t seqnum,
		    uint32_t devid, uint32_t dir, uint32_t ep, int32_t len,
		    int32_t npackets, const uint8_t *setup)
{
	struct usbip_hdr h;

	memset(&h, 0, sizeof(h));
	h.base.command = USBIP_CMD_SUBMIT;
	h.base.seqnum = seqnum;
	h.base.devid = devid;
	h.base.direction = dir;
	h.base.ep = ep;
	/* URB_DIR_IN as vhci maps it (USBIP_URB_DIR_IN) */
	h.u.cmd_submit.transfer_flags = dir == USBIP_DIR_IN ? 0x200 : 0;
	h.u.cmd_submit.transfer_buffer_length = len;
	h.u.cmd_submit.number_of_packets = npackets;
	if (setup)
		memcpy(h.u.cmd_submit.setup, setup, 8);
	usbip_hdr_pack(&h, raw);
}

uint32_t uc_submit(struct uc *u, uint8_t ep, bool in, const uint8_t *setup,
		   const void *out, uint32_t len)
{
	uint8_t raw[USBIP_HDR_SIZE];
	struct uc_pending *p;

	p = uc_new_slot(u);
	if (!p)
		return 0;
	p->in = in;
	p->len = len;
	uc_make_submit(raw, p->seqnum, u->devid,
		       in ? USBIP_DIR_IN : USBIP_DIR_OUT, ep, (int32_t)len, 0,
		       setup);
	if (uc_send(u->fd, raw, sizeof(raw)) < 0 ||
	    (!in && len && uc_send(u->fd, out, len) < 0)) {
		p->used = false;
		return 0;
	}
	return p->seqnum;
}

uint32_t uc_submit_iso(struct uc *u, uint8_t ep, bool in, const void *out,
		       uint32_t len, const struct usbip_iso_desc *iso,
		       int32_t np)
{
	uint8_t raw[USBIP_HDR_SIZE], d[USBIP_ISO_DESC_SIZE];
	struct uc_pending *p;
	int32_t i;

	p = uc_new_slot(u);
	if (!p)
		return 0;
	p->in = in;
	p->len = len;
	p->npackets = np;
	uc_make_submit(raw, p->seqnum, u->devid,
		       in ? USBIP_DIR_IN : USBIP_DIR_OUT, ep, (int32_t)len, np,
		       NULL);
	if (uc_send(u->fd, raw, sizeof(raw)) < 0 ||
	    (!in && len && uc_send(u->fd, out, len) < 0))
		goto err;
	for (i = 0; i < np; i++) {
		usbip_iso_desc_pack(&iso[i], d);
		if (uc_send(u->fd, d, sizeof(d)) < 0)
			goto err;
	}
	return p->seqnum;
err:
	p->used = false;
	return 0;
}

uint32_t uc_unlink(struct uc *u, uint32_t victim)
{
	uint8_t raw[USBIP_HDR_SIZE];
	struct usbip_hdr h;
	struct uc_pending *p;

	p = uc_new_slot(u);
	if (!p)
		return 0;
	p->unlink = true;
	p->victim = victim;
	memset(&h, 0, sizeof(h));
	h.base.command = USBIP_CMD_UNLINK;
	h.base.seqnum = p->seqnum;
	h.base.devid = u->devid;
	h.u.cmd_unlink.seqnum = victim;
	usbip_hdr_pack(&h, raw);
	if (uc_send(u->fd, raw, sizeof(raw)) < 0) {
		p->used = false;
		return 0;
	}
	return p->seqnum;
}

int uc_read_ret(struct uc *u, struct uc_ret *r)
{
	uint8_t raw[USBIP_HDR_SIZE];
	struct uc_pending *p, *v;
	struct usbip_hdr h;

	memset(r, 0, sizeof(*r));
	if (uc_recv(u->fd, raw, sizeof(raw)) < 0) {
		fprintf(stderr, "uc_read_ret: EOF or timeout\n");
		return -1;
	}
	if (usbip_hdr_unpack_ret(&h, raw, sizeof(raw)) < 0) {
		fprintf(stderr, "uc_read_ret: undecodable header\n");
		return -1;
	}
	r->command = h.base.command;
	r->seqnum = h.base.seqnum;
	p = uc_slot(u, h.base.seqnum);
	if (!p) {
		fprintf(stderr, "uc_read_ret: %s for seqnum %u nobody waits for\n",
			usbip_cmd_name(h.base.command), h.base.seqnum);
		return -1;
	}
	if (h.base.command == USBIP_RET_UNLINK) {
		if (!p->unlink) {
			fprintf(stderr, "uc_read_ret: RET_UNLINK for a submit\n");
			return -1;
		}
		r->status = h.u.ret_unlink.status;
		v = uc_slot(u, p->victim);
		if (r->status == -ECONNRESET && v) {
			/* cancelled: its RET_SUBMIT must never come */
			v->used = false;
		} else if (r->status == 0 && v && !v->unlink) {
			fprintf(stderr, "uc_read_ret: RET_UNLINK 0 while seq %u is still pending\n",
				p->victim);
			return -1;
		}
		p->used = false;
		return 0;
	}
	if (h.base.command != USBIP_RET_SUBMIT || p->unlink) {
		fprintf(stderr, "uc_read_ret: %s for seq %u\n",
			usbip_cmd_name(h.base.command), h.base.seqnum);
		return -1;
	}
	r->status = h.u.ret_submit.status;
	r->npackets = h.u.ret_submit.number_of_packets;
	if (h.u.ret_submit.actual_length < 0 ||
	    (uint32_t)h.u.ret_submit.actual_length > p->len) {
		fprintf(stderr, "uc_read_ret: seq %u actual %d > length %u\n",
			p->seqnum, h.u.ret_submit.actual_length, p->len);
		return -1;
	}
	/* vhci sizes the packet array from its own URB */
	if (r->npackets != p->npackets) {
		fprintf(stderr, "uc_read_ret: seq %u: %d iso packets, sent %d\n",
			p->seqnum, r->npackets, p->npackets);
		return -1;
	}
	r->actual = (uint32_t)h.u.ret_submit.actual_length;
	if (p->in && r->actual) {
		r->data = malloc(r->actual);
		if (!r->data || uc_recv(u->fd, r->data, r->actual) < 0) {
			fprintf(stderr, "uc_read_ret: seq %u: short IN data\n",
				p->seqnum);
			uc_ret_free(r);
			return -1;
		}
	}
	if (r->npackets > 0) {
		uint8_t d[USBIP_ISO_DESC_SIZE];
		uint32_t sum = 0;
		int32_t i;

		r->iso = calloc((size_t)r->npackets, sizeof(*r->iso));
		if (!r->iso)
			return -1;
		for (i = 0; i < r->npackets; i++) {
			if (uc_recv(u->fd, d, sizeof(d)) < 0) {
				uc_ret_free(r);
				return -1;
			}
			usbip_iso_desc_unpack(&r->iso[i], d, sizeof(d));
			sum += r->iso[i].actual_length;
		}
		/* usbip_recv_iso() drops the link when these differ */
		if (sum != r->actual) {
			fprintf(stderr, "uc_read_ret: seq %u: packets sum %u, actual %u\n",
				p->seqnum, sum, r->actual);
			uc_ret_free(r);
			return -1;
		}
	}
	p->used = false;
	return 0;
}

void uc_ret_free(struct uc_ret *r)
{
	free(r->data);
	free(r->iso);
	r->data = NULL;
	r->iso = NULL;
}

int uc_control(struct uc *u, uint8_t bmRequestType, uint8_t bRequest,
	       uint16_t wValue, uint16_t wIndex, void *data, uint16_t wLength,
	       int32_t *status)
{
	struct usb_setup s = {
		.bmRequestType = bmRequestType,
		.bRequest = bRequest,
		.wValue = wValue,
		.wIndex = wIndex,
		.wLength = wLength,
	};
	bool in = bmRequestType & 0x80;
	uint8_t setup[8];
	struct uc_ret r;
	uint32_t seq;

	usb_setup_pack(&s, setup);
	seq = uc_submit(u, 0, in, setup, data, wLength);
	if (!seq || uc_read_ret(u, &r) < 0)
		return -1;
	if (r.seqnum != seq || r.command != USBIP_RET_SUBMIT) {
		fprintf(stderr, "uc_control: reply to seq %u, expected %u\n",
			r.seqnum, seq);
		free(r.data);
		return -1;
	}
	if (in && r.actual)
		memcpy(data, r.data, r.actual);
	free(r.data);
	*status = r.status;
	return (int)r.actual;
}

int uc_get_descriptor(struct uc *u, uint8_t type, uint8_t index,
		      uint16_t langid, void *buf, uint16_t len,
		      int32_t *status)
{
	return uc_control(u, 0x80, 0x06, (uint16_t)(type << 8 | index),
			  langid, buf, len, status);
}

int uc_transfer(struct uc *u, uint8_t ep, bool in, void *buf, uint32_t len,
		int32_t *status)
{
	struct uc_ret r;
	uint32_t seq;

	seq = uc_submit(u, ep, in, NULL, buf, len);
	if (!seq || uc_read_ret(u, &r) < 0)
		return -1;
	if (r.seqnum != seq || r.command != USBIP_RET_SUBMIT) {
		fprintf(stderr, "uc_transfer: reply to seq %u, expected %u\n",
			r.seqnum, seq);
		free(r.data);
		return -1;
	}
	if (in && r.actual)
		memcpy(buf, r.data, r.actual);
	free(r.data);
	*status = r.status;
	return (int)r.actual;
}
