// SPDX-License-Identifier: GPL-2.0
/*
 * urb-bench.c - URB throughput of a running usbrig-gadget on loopback,
 * each figure beside what a loopback TCP socket does with the same
 * traffic, measured in the same run (`make bench-urb`).
 *
 *   urb-bench --port PORT [--busid 1-1] [--config 1] [--ep-out 2]
 *             [--ep-in 1] [--seconds 1] [--rounds 5] [--bulk-len 65536]
 *             [--bulk-depth 4] [--ctrl-depth 32] [--server-pid PID]
 *             [--json FILE] [--only LOAD] [--cpu N]
 *
 * The gadget is imported over USB/IP (busid), configured (config), and
 * driven with three loads:
 *   control-1    GET_DESCRIPTOR(device, 18 bytes), one URB in flight
 *   control-N    the same with ctrl-depth URBs in flight
 *   bulk         OUT of bulk-len bytes to ep-out then IN of bulk-len from
 *                ep-in, bulk-depth such pairs in flight; the gadget must
 *                loop ep-out to ep-in (gadgets/examples/vendor-bulk.gadget
 *                does): each IN must bring back its OUT's data, checked by
 *                a tag at both ends of the buffer
 * Every reply is checked: in order, status 0, the length asked for, the
 * descriptor the gadget gave at the start.
 *
 * The reference ("loopback") is a process this program forks, as the
 * server is a process of its own: a single-threaded responder on a
 * loopback TCP socket that reads the same CMD_SUBMIT PDUs and answers each
 * with a RET_SUBMIT of the same size (48-byte header, then the IN data:
 * those 18 descriptor bytes, or the last OUT payload), so both sides move
 * the same bytes in the same pattern through the same client code.  It
 * does no USB work and copies no payload in user space (the OUT data is
 * sent back from where read() put it): it is what the socket allows.
 *
 * With --cpu N this client, the responder (it inherits it) and the
 * server (--server-pid) run on CPU N: the same placement for both sides,
 * each exchange a wakeup on the same CPU (pin_cpu() says why).
 *
 * Each round measures every load on both sides (which goes first
 * alternates); a sample is `seconds` long after a warm-up of a fifth of
 * that.  Printed: a line per round and sample on stderr, then per figure
 * "bench-urb: NAME (UNIT): usbrig X, loopback Y, ratio Z" on stdout: X
 * and Y the medians of the samples, Z the median of the rounds' ratios
 * (a round's two samples run back to back, so the machine's other work
 * weighs on both alike); the ranges and the CPU time each side spent
 * per URB or MB close stderr.  --json writes every sample, the medians,
 * the ratios, and the CPU each side used as a share of one CPU (the
 * server's from /proc/PID/stat with --server-pid, the responder's, this
 * client's) and per URB or MB.
 *
 * Exit status: 0, 1 on a transport or protocol error, 2 usage.
 */
#define _GNU_SOURCE		/* sched_setaffinity(), CPU_SET() */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../socket/client.h"
#include "usbip_wire.h"

#define BENCH_MAX_ROUNDS	32
#define BENCH_MAX_DEPTH		1024
#define BENCH_MAX_BULK		(4u * 1024 * 1024)
#define BENCH_IO_TIMEOUT_MS	10000
#define BENCH_READ_CHUNK	(1u << 20)
#define DESC_DEVICE_LEN		18
#define ARRAY_LEN(a)		(sizeof(a) / sizeof((a)[0]))

/* the least room the reference reads into */
#define REF_READ		(256u * 1024)

#define USB_REQ_GET_DESCRIPTOR	0x06
#define USB_DT_DEVICE		0x01

/* a growable byte buffer: data is p[off..len) */
struct bbuf {
	uint8_t *p;
	size_t off, len, cap;
};

static int bbuf_room(struct bbuf *b, size_t need)
{
	uint8_t *p;
	size_t cap;

	if (b->off && b->off == b->len)
		b->off = b->len = 0;
	if (b->len + need <= b->cap)
		return 0;
	if (b->off) {
		memmove(b->p, b->p + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
	}
	if (b->len + need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

static size_t bbuf_used(const struct bbuf *b)
{
	return b->len - b->off;
}

/*
 * An output queue of byte ranges, sent in order with sendmsg(): headers
 * and payloads go out from where they lie, no copy.  An entry may hold a
 * reference on one of the reference's input buffers (buf >= 0), dropped
 * in refs[buf] once the entry is sent.
 */
#define OQ_MAX		4096

struct oq_ent {
	const uint8_t *p;
	size_t len;
	int buf;
};

struct oq {
	struct oq_ent e[OQ_MAX];	/* a ring */
	unsigned int head, n;
	size_t head_off;		/* bytes of e[head] already sent */
	unsigned int *refs;
};

static bool oq_room(const struct oq *q, unsigned int n)
{
	return q->n + n <= OQ_MAX;
}

static void oq_push(struct oq *q, const void *p, size_t len, int buf)
{
	struct oq_ent *e = &q->e[(q->head + q->n) % OQ_MAX];

	e->p = p;
	e->len = len;
	e->buf = buf;
	if (buf >= 0)
		q->refs[buf]++;
	q->n++;
}

/* Send what the socket takes now: 0, or -1 on an error. */
static int oq_send(int fd, struct oq *q)
{
	struct iovec iov[256];		/* Linux takes up to 1024 */
	struct msghdr msg = { .msg_iov = iov };
	struct oq_ent *e;
	unsigned int i, nv;
	size_t total, left;
	ssize_t n;

	while (q->n) {
		nv = q->n < ARRAY_LEN(iov) ? q->n : ARRAY_LEN(iov);
		total = 0;
		for (i = 0; i < nv; i++) {
			e = &q->e[(q->head + i) % OQ_MAX];
			iov[i].iov_base = (void *)(e->p + (i ? 0 : q->head_off));
			iov[i].iov_len = e->len - (i ? 0 : q->head_off);
			total += iov[i].iov_len;
		}
		msg.msg_iovlen = nv;
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -1;
		}
		for (left = (size_t)n; left && q->n;) {
			e = &q->e[q->head];
			if (left < e->len - q->head_off) {
				q->head_off += left;
				break;
			}
			left -= e->len - q->head_off;
			if (e->buf >= 0)
				q->refs[e->buf]--;
			q->head_off = 0;
			q->head = (q->head + 1) % OQ_MAX;
			q->n--;
		}
		if ((size_t)n < total)
			break;		/* the socket is full */
	}
	return 0;
}

/* Send, waiting for room, until the queue holds at most keep entries. */
static int oq_drain(int fd, struct oq *q, unsigned int keep)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };

	while (q->n > keep) {
		if (oq_send(fd, q))
			return -1;
		if (q->n > keep && poll(&pfd, 1, BENCH_IO_TIMEOUT_MS) <= 0)
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * Options and clocks
 * --------------------------------------------------------------------- */

struct opts {
	int port;
	const char *busid;
	unsigned int config;
	unsigned int ep_out, ep_in;
	double seconds;
	unsigned int rounds;
	uint32_t bulk_len;
	unsigned int bulk_depth;	/* OUT + IN pairs */
	unsigned int ctrl_depth;
	int server_pid;
	const char *json;
	const char *only;		/* one load: control-1, control-N, bulk */
	int cpu;			/* every process's CPU, -1: any */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds of this process (user + system) */
static double self_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* CPU seconds of a process (utime + stime), or -1 */
static double proc_cpu_s(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name may hold spaces: fields count from its ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* ---------------------------------------------------------------------
 * The reference: a loopback responder of the same framing
 * --------------------------------------------------------------------- */

struct ref {
	int listen_fd;
	int fd;
	pid_t pid;
	uint8_t desc[DESC_DEVICE_LEN];

	/*
	 * input: two buffers, parsed in place, replies point into them;
	 * each holds two frames and two reads, no more: a buffer that
	 * stays in the cache, as the server's recycled heap does
	 */
	uint8_t *buf[2];
	size_t size, frame_max;
	unsigned int refs[2];
	int cur;
	size_t off, len;		/* buf[cur]: parsed up to off, filled to len */
	const uint8_t *echo;		/* the last OUT payload, in buf[echo_buf] */
	uint32_t echo_len;
	int echo_buf;
	uint8_t (*hdrs)[USBIP_HDR_SIZE];	/* OQ_MAX reply headers, a ring */
	unsigned int next_hdr;
	struct oq q;
};

static int set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/*
 * Queue the RET_SUBMIT for one CMD_SUBMIT whose payload is at payload:
 * OUT data stays where it was read, and the next IN sends it from there.
 */
static int ref_answer(struct ref *r, const struct usbip_hdr *cmd,
		      const uint8_t *payload)
{
	uint32_t len = (uint32_t)cmd->u.cmd_submit.transfer_buffer_length;
	const uint8_t *data = NULL;
	struct usbip_hdr h;
	uint32_t actual = 0;
	uint8_t *raw;
	int buf = -1;

	if (!oq_room(&r->q, 2) && oq_drain(r->fd, &r->q, OQ_MAX - 2))
		return -1;
	if (cmd->base.direction == USBIP_DIR_OUT) {
		r->echo = payload;
		r->echo_len = len;
		r->echo_buf = r->cur;
		actual = len;
	} else if (cmd->base.ep == 0) {
		data = r->desc;
		actual = len < sizeof(r->desc) ? len : sizeof(r->desc);
	} else if (r->echo) {
		data = r->echo;
		buf = r->echo_buf;
		actual = len < r->echo_len ? len : r->echo_len;
	}
	memset(&h, 0, sizeof(h));
	h.base.command = USBIP_RET_SUBMIT;
	h.base.seqnum = cmd->base.seqnum;
	h.u.ret_submit.actual_length = (int32_t)actual;
	raw = r->hdrs[r->next_hdr++ % OQ_MAX];
	usbip_hdr_pack(&h, raw);
	oq_push(&r->q, raw, USBIP_HDR_SIZE, -1);
	if (data && actual)
		oq_push(&r->q, data, actual, buf);
	return 0;
}

/*
 * Room to read at least REF_READ: near the end of the buffer, move the
 * unparsed bytes to the other one, once no reply points into it.
 */
static int ref_room(struct ref *r)
{
	int other = !r->cur;

	if (r->size - r->len >= REF_READ)
		return 0;
	if (r->refs[other] && oq_drain(r->fd, &r->q, 0))
		return -1;
	if (r->echo_buf == other)
		r->echo = NULL;
	memcpy(r->buf[other], r->buf[r->cur] + r->off, r->len - r->off);
	r->len -= r->off;
	r->off = 0;
	r->cur = other;
	return 0;
}

/*
 * The responder's loop: read what is there, answer every whole PDU in
 * it, send the answers at once; no copy of any payload in user space.
 * Ends at EOF: 0, or 1 on an error.
 */
static int ref_main(struct ref *r)
{
	struct usbip_hdr h;
	struct pollfd pfd;
	uint8_t *p;
	size_t need;
	ssize_t n;

	r->fd = accept(r->listen_fd, NULL, NULL);
	if (r->fd < 0 || set_nonblock(r->fd, true))
		goto err;
	setsockopt(r->fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	for (;;) {
		pfd.fd = r->fd;
		pfd.events = POLLIN | (r->q.n ? POLLOUT : 0);
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			goto err;
		if (ref_room(r))
			goto err;
		p = r->buf[r->cur];
		n = read(r->fd, p + r->len, r->size - r->len);
		if (n == 0)
			break;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
		if (n > 0)
			r->len += (size_t)n;
		while (r->len - r->off >= USBIP_HDR_SIZE) {
			if (usbip_hdr_unpack_cmd(&h, p + r->off,
						 USBIP_HDR_SIZE) < 0 ||
			    h.base.command != USBIP_CMD_SUBMIT)
				goto err;
			need = USBIP_HDR_SIZE + usbip_cmd_payload_len(&h);
			if (need > r->frame_max)
				goto err;
			if (r->len - r->off < need)
				break;
			if (ref_answer(r, &h, p + r->off + USBIP_HDR_SIZE))
				goto err;
			r->off += need;
		}
		if (oq_send(r->fd, &r->q))
			break;
	}
	close(r->fd);
	return 0;
err:
	return 1;
}

/*
 * Listen on a free loopback port, start the responder, connect to it.
 * A process of its own, as the server is: a thread of the client's
 * process would switch with it without changing address space, which is
 * cheaper than what the server gets (much cheaper in a VM whose page
 * table switches trap).
 */
static int ref_start(struct ref *r)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int fd;

	r->size = 2 * (size_t)r->frame_max + 2 * REF_READ;
	r->buf[0] = malloc(r->size);
	r->buf[1] = malloc(r->size);
	r->hdrs = calloc(OQ_MAX, sizeof(*r->hdrs));
	r->q.refs = r->refs;
	if (!r->buf[0] || !r->buf[1] || !r->hdrs)
		return -1;
	r->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (r->listen_fd < 0 ||
	    bind(r->listen_fd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(r->listen_fd, 1) ||
	    getsockname(r->listen_fd, (struct sockaddr *)&sin, &len)) {
		perror("urb-bench: reference socket");
		return -1;
	}
	r->pid = fork();
	if (r->pid < 0) {
		perror("urb-bench: fork");
		return -1;
	}
	if (r->pid == 0) {
		/* the client's death ends the responder too */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		_exit(ref_main(r));
	}
	close(r->listen_fd);
	fd = uc_connect(ntohs(sin.sin_port));
	if (fd < 0)
		return -1;
	return fd;
}

/* ---------------------------------------------------------------------
 * The load: the same client code for both sides
 * --------------------------------------------------------------------- */

enum kind { K_CTRL, K_OUT, K_IN };

struct pend {
	uint32_t seqnum;
	enum kind kind;
	uint64_t tag;
	uint8_t hdr[USBIP_HDR_SIZE];	/* sent from here */
};

struct side {
	const char *name;
	int fd;
	uint32_t devid;
	uint32_t next_seq;
	struct bbuf in;
	struct oq q;
	uint8_t *slots;			/* OUT payloads, one per pair in flight */
	unsigned int n_slots;
	struct pend *pend;		/* a ring of BENCH_MAX_DEPTH */
	unsigned int head, n;
	uint64_t next_tag;
	const uint8_t *desc;		/* the device descriptor expected */
};

struct load {
	const char *name;		/* "control, 1 in flight" */
	bool bulk;
	unsigned int depth;		/* URBs in flight */
	uint32_t len;
	unsigned int ep_out, ep_in;
};

struct count {
	uint64_t urbs, out_bytes, in_bytes;
};

/* the loads, as --only names them */
static const char *const load_keys[3] = { "control-1", "control-N", "bulk" };

static bool load_wanted(const struct opts *o, unsigned int l)
{
	return !o->only || !strcmp(o->only, load_keys[l]);
}

static int side_submit(struct side *s, const struct load *ld, enum kind k,
		       const uint8_t *payload)
{
	struct pend *p = &s->pend[(s->head + s->n) % BENCH_MAX_DEPTH];
	uint8_t setup[8] = { 0 };
	uint32_t len = k == K_CTRL ? DESC_DEVICE_LEN : ld->len;
	bool out = k == K_OUT;
	unsigned int i;
	uint8_t *slot;

	if (!oq_room(&s->q, 2) && oq_drain(s->fd, &s->q, OQ_MAX - 2))
		return -1;
	if (k == K_CTRL) {
		struct usb_setup su = {
			.bmRequestType = 0x80,
			.bRequest = USB_REQ_GET_DESCRIPTOR,
			.wValue = USB_DT_DEVICE << 8,
			.wLength = DESC_DEVICE_LEN,
		};

		usb_setup_pack(&su, setup);
	}
	uc_make_submit(p->hdr, s->next_seq, s->devid,
		       out ? USBIP_DIR_OUT : USBIP_DIR_IN,
		       k == K_CTRL ? 0 : out ? ld->ep_out : ld->ep_in,
		       (int32_t)len, 0, setup);
	oq_push(&s->q, p->hdr, USBIP_HDR_SIZE, -1);
	p->seqnum = s->next_seq++;
	p->kind = k;
	p->tag = s->next_tag;
	if (out) {
		/*
		 * The tag at both ends: IN must bring this transfer back.
		 * One slot per URB in flight: a slot comes round again only
		 * after its OUT was answered, so sent whole.
		 */
		if (s->n_slots < ld->depth || !s->slots) {
			free(s->slots);
			s->n_slots = ld->depth;
			s->slots = malloc((size_t)s->n_slots * len);
			if (!s->slots)
				return -1;
			for (i = 0; i < s->n_slots; i++)
				memcpy(s->slots + (size_t)i * len, payload, len);
		}
		slot = s->slots + (size_t)(p->tag % s->n_slots) * len;
		memcpy(slot, &p->tag, sizeof(p->tag));
		memcpy(slot + len - sizeof(p->tag), &p->tag, sizeof(p->tag));
		oq_push(&s->q, slot, len, -1);
	} else if (k == K_IN) {
		s->next_tag++;
	}
	s->n++;
	return 0;
}

/* Take every whole reply out of s->in; -1 on a protocol error. */
static int side_replies(struct side *s, const struct load *ld,
			struct count *c)
{
	struct usbip_hdr h;
	const uint8_t *data;
	struct pend *p;
	uint32_t want;
	int32_t actual;
	size_t need;
	uint64_t t1, t2;

	while (bbuf_used(&s->in) >= USBIP_HDR_SIZE) {
		if (usbip_hdr_unpack_ret(&h, s->in.p + s->in.off,
					 USBIP_HDR_SIZE) < 0 ||
		    h.base.command != USBIP_RET_SUBMIT || !s->n) {
			fprintf(stderr, "urb-bench: %s: unexpected PDU\n",
				s->name);
			return -1;
		}
		p = &s->pend[s->head];
		actual = h.u.ret_submit.actual_length;
		need = USBIP_HDR_SIZE + (p->kind == K_OUT ? 0 : (size_t)actual);
		if (bbuf_used(&s->in) < need)
			break;
		want = p->kind == K_CTRL ? DESC_DEVICE_LEN : ld->len;
		if (h.base.seqnum != p->seqnum || h.u.ret_submit.status ||
		    actual != (int32_t)want) {
			fprintf(stderr,
				"urb-bench: %s: seq %u status %d actual %d, expected seq %u status 0 actual %u\n",
				s->name, h.base.seqnum, h.u.ret_submit.status,
				actual, p->seqnum, want);
			return -1;
		}
		data = s->in.p + s->in.off + USBIP_HDR_SIZE;
		if (p->kind == K_CTRL && memcmp(data, s->desc, want)) {
			fprintf(stderr, "urb-bench: %s: descriptor differs\n",
				s->name);
			return -1;
		}
		if (p->kind == K_IN) {
			memcpy(&t1, data, sizeof(t1));
			memcpy(&t2, data + want - sizeof(t2), sizeof(t2));
			if (t1 != p->tag || t2 != p->tag) {
				fprintf(stderr,
					"urb-bench: %s: IN seq %u brought back transfer %llu, expected %llu\n",
					s->name, p->seqnum,
					(unsigned long long)t1,
					(unsigned long long)p->tag);
				return -1;
			}
		}
		c->urbs++;
		if (p->kind == K_OUT)
			c->out_bytes += (uint32_t)actual;
		else if (p->kind == K_IN)
			c->in_bytes += (uint32_t)actual;
		s->in.off += need;
		s->head = (s->head + 1) % BENCH_MAX_DEPTH;
		s->n--;
	}
	return 0;
}

/*
 * Keep ld->depth URBs in flight for warm + secs seconds; what completes
 * in the last secs counts.  Drains before returning.
 */
static int side_run(struct side *s, const struct load *ld,
		    const uint8_t *payload, double warm, double secs,
		    struct count *res, double *elapsed)
{
	double t, t_start = 0, t_end = now_s() + warm + secs;
	double t_warm = t_end - secs;
	struct count c = { 0 }, at_start = { 0 };
	bool counting = false, stopped = false;
	struct pollfd pfd;
	ssize_t n;
	int ret;

	for (;;) {
		t = now_s();
		if (!counting && t >= t_warm) {
			counting = true;
			t_start = t;
			at_start = c;
		}
		if (counting && !stopped && t >= t_end) {
			stopped = true;
			*elapsed = t - t_start;
			res->urbs = c.urbs - at_start.urbs;
			res->out_bytes = c.out_bytes - at_start.out_bytes;
			res->in_bytes = c.in_bytes - at_start.in_bytes;
		}
		if (stopped && !s->n)
			return 0;
		while (!stopped && s->n + (ld->bulk ? 2 : 1) <= ld->depth) {
			if (ld->bulk)
				ret = side_submit(s, ld, K_OUT, payload) ?:
					side_submit(s, ld, K_IN, NULL);
			else
				ret = side_submit(s, ld, K_CTRL, NULL);
			if (ret)
				return -1;
		}
		if (oq_send(s->fd, &s->q)) {
			fprintf(stderr, "urb-bench: %s: send: %m\n", s->name);
			return -1;
		}
		pfd.fd = s->fd;
		pfd.events = POLLIN | (s->q.n ? POLLOUT : 0);
		ret = poll(&pfd, 1, BENCH_IO_TIMEOUT_MS);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			fprintf(stderr, "urb-bench: poll: %m\n");
			return -1;
		}
		if (ret == 0) {
			fprintf(stderr, "urb-bench: %s: no reply in %d ms\n",
				s->name, BENCH_IO_TIMEOUT_MS);
			return -1;
		}
		if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (bbuf_room(&s->in, BENCH_READ_CHUNK))
			return -1;
		n = read(s->fd, s->in.p + s->in.len, s->in.cap - s->in.len);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			fprintf(stderr, "urb-bench: %s: %s\n", s->name,
				n ? strerror(errno) : "connection closed");
			return -1;
		}
		if (n > 0)
			s->in.len += (size_t)n;
		if (side_replies(s, ld, &c))
			return -1;
	}
}

/* ---------------------------------------------------------------------
 * Figures
 * --------------------------------------------------------------------- */

struct figure {
	const char *name;		/* in the output line */
	const char *key;		/* in the JSON */
	const char *unit;
	unsigned int load;		/* index into the loads */
	int what;			/* 0 URB/s, 1 OUT MB/s, 2 IN MB/s */
	double v[2][BENCH_MAX_ROUNDS];	/* [usbrig, loopback][round] */
	double cpu[2][BENCH_MAX_ROUNDS];	/* the server, the responder */
	double client_cpu[2][BENCH_MAX_ROUNDS];
	double ratio[BENCH_MAX_ROUNDS];	/* usbrig / loopback, per round */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, unsigned int n)
{
	double s[BENCH_MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double minmax(const double *v, unsigned int n, bool max)
{
	double m = v[0];
	unsigned int i;

	for (i = 1; i < n; i++)
		if (max ? v[i] > m : v[i] < m)
			m = v[i];
	return m;
}

/*
 * The two sides of a round ran one after the other, so whatever else the
 * machine did weighs on both alike: their ratio, round by round, is
 * steadier than the ratio of the two medians.
 */
static double fig_ratio(struct figure *g, unsigned int rounds)
{
	unsigned int r;

	for (r = 0; r < rounds; r++)
		g->ratio[r] = g->v[1][r] > 0 ? g->v[0][r] / g->v[1][r] : 0;
	return median(g->ratio, rounds);
}

/*
 * CPU time a side spent per unit (per URB, per MB), the median over the
 * rounds: steadier than the rates on a shared machine, where neither
 * side gets a CPU of its own.  -1 when not measured.
 */
static double fig_cost(const struct figure *g, int sd, unsigned int rounds)
{
	double c[BENCH_MAX_ROUNDS];
	unsigned int r, n = 0;

	for (r = 0; r < rounds; r++)
		if (g->cpu[sd][r] >= 0 && g->v[sd][r] > 0)
			c[n++] = g->cpu[sd][r] / g->v[sd][r] * 1e6;
	return n ? median(c, n) : -1;
}

static void json_samples(FILE *f, const double *v, unsigned int n)
{
	unsigned int i;

	fputc('[', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%.3f", i ? ", " : "", v[i]);
	fputc(']', f);
}

static int write_json(const char *path, const struct opts *o,
		      struct figure *fig, unsigned int nfig)
{
	static const char *const sides[] = { "usbrig", "loopback" };
	const char *sep = "";
	unsigned int i, k;
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return -1;
	}
	fprintf(f, "{\n  \"tool\": \"urb-bench\",\n  \"seconds\": %.3f,\n"
		"  \"rounds\": %u,\n  \"busid\": \"%s\",\n"
		"  \"bulk_len\": %u,\n  \"bulk_pairs_in_flight\": %u,\n"
		"  \"control_in_flight\": %u,\n  \"figures\": [\n",
		o->seconds, o->rounds, o->busid, o->bulk_len, o->bulk_depth,
		o->ctrl_depth);
	for (i = 0; i < nfig; i++) {
		struct figure *g = &fig[i];

		if (!load_wanted(o, g->load))
			continue;
		fprintf(f, "%s    {\"name\": \"%s\", \"unit\": \"%s\"", sep,
			g->key, g->unit);
		sep = ",\n";
		for (k = 0; k < 2; k++) {
			fprintf(f, ",\n     \"%s\": %.3f, \"%s_samples\": ",
				sides[k], median(g->v[k], o->rounds),
				sides[k]);
			json_samples(f, g->v[k], o->rounds);
			fprintf(f, ", \"%s_cpu\": ", sides[k]);
			json_samples(f, g->cpu[k], o->rounds);
			fprintf(f, ", \"%s_client_cpu\": ", sides[k]);
			json_samples(f, g->client_cpu[k], o->rounds);
			fprintf(f, ", \"%s_cpu_us_per_unit\": %.3f", sides[k],
				fig_cost(g, k, o->rounds));
		}
		fprintf(f, ",\n     \"ratio\": %.4f, \"ratio_samples\": ",
			fig_ratio(g, o->rounds));
		json_samples(f, g->ratio, o->rounds);
		fputc('}', f);
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * Setup and main
 * --------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: urb-bench --port PORT [OPTION]...\n"
"Measure a running usbrig-gadget on 127.0.0.1:PORT beside a loopback TCP\n"
"responder of the same framing.\n"
"  --busid ID         the gadget to import (default 1-1)\n"
"  --config N         SET_CONFIGURATION value before the bulk load (1)\n"
"  --ep-out N, --ep-in N  the bulk endpoints the gadget loops (2, 1)\n"
"  --seconds S        length of one sample (1)\n"
"  --rounds N         samples per figure and side (5)\n"
"  --bulk-len N       bytes per bulk URB (65536)\n"
"  --bulk-depth N     OUT+IN pairs in flight (4)\n"
"  --ctrl-depth N     control URBs in flight for the pipelined figure (32)\n"
"  --server-pid PID   report the server's CPU time too\n"
"  --json FILE        write the figures as JSON\n"
"  --cpu N            run this client, the responder and the server\n"
"                     (--server-pid) on CPU N\n"
"  --only LOAD        run one load only: control-1, control-N or bulk (to\n"
"                     profile the server)\n");
}

static int parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 0);
	return errno || end == s || *end || *v > max || s[0] == '-' ? -1 : 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "busid", required_argument, NULL, 'b' },
		{ "config", required_argument, NULL, 'c' },
		{ "ep-out", required_argument, NULL, 'o' },
		{ "ep-in", required_argument, NULL, 'i' },
		{ "seconds", required_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "bulk-len", required_argument, NULL, 'l' },
		{ "bulk-depth", required_argument, NULL, 'd' },
		{ "ctrl-depth", required_argument, NULL, 'D' },
		{ "server-pid", required_argument, NULL, 'P' },
		{ "json", required_argument, NULL, 'j' },
		{ "only", required_argument, NULL, 'O' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	char *end;
	int c, bad = 0;

	*o = (struct opts){ .busid = "1-1", .config = 1, .ep_out = 2,
		.ep_in = 1, .seconds = 1, .rounds = 5, .bulk_len = 65536,
		.bulk_depth = 4, .ctrl_depth = 32, .cpu = -1 };
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			bad |= parse_uint(optarg, 65535, &v) || !v;
			o->port = (int)v;
			break;
		case 'b':
			o->busid = optarg;
			break;
		case 'c':
			bad |= parse_uint(optarg, 255, &v);
			o->config = v;
			break;
		case 'o':
		case 'i':
			bad |= parse_uint(optarg, 15, &v) || !v;
			*(c == 'o' ? &o->ep_out : &o->ep_in) = v;
			break;
		case 's':
			o->seconds = strtod(optarg, &end);
			bad |= *end || o->seconds <= 0 || o->seconds > 600;
			break;
		case 'r':
			bad |= parse_uint(optarg, BENCH_MAX_ROUNDS, &v) || !v;
			o->rounds = v;
			break;
		case 'l':
			bad |= parse_uint(optarg, BENCH_MAX_BULK, &v) || v < 16;
			o->bulk_len = v;
			break;
		case 'd':
			bad |= parse_uint(optarg, BENCH_MAX_DEPTH / 2, &v) || !v;
			o->bulk_depth = v;
			break;
		case 'D':
			bad |= parse_uint(optarg, BENCH_MAX_DEPTH, &v) || !v;
			o->ctrl_depth = v;
			break;
		case 'P':
			bad |= parse_uint(optarg, 1u << 22, &v) || !v;
			o->server_pid = (int)v;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'C':
			bad |= parse_uint(optarg, CPU_SETSIZE - 1, &v);
			o->cpu = (int)v;
			break;
		case 'O':
			o->only = optarg;
			bad |= strcmp(optarg, "control-1") &&
				strcmp(optarg, "control-N") &&
				strcmp(optarg, "bulk");
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			bad = 1;
		}
	}
	if (bad || optind != argc || !o->port) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* Import the gadget, read its device descriptor, set the configuration. */
static int usbrig_open(const struct opts *o, struct side *s, uint8_t *desc)
{
	struct uc u;
	int32_t st;
	int n;

	if (uc_import_retry(o->port, o->busid, &u, 5000))
		return -1;
	n = uc_get_descriptor(&u, USB_DT_DEVICE, 0, 0, desc, DESC_DEVICE_LEN,
			      &st);
	if (n != DESC_DEVICE_LEN || st) {
		fprintf(stderr, "urb-bench: GET_DESCRIPTOR: %d bytes, status %d\n",
			n, st);
		return -1;
	}
	n = uc_control(&u, 0x00, 0x09, (uint16_t)o->config, 0, NULL, 0, &st);
	if (n < 0 || st) {
		fprintf(stderr, "urb-bench: SET_CONFIGURATION %u: status %d\n",
			o->config, st);
		return -1;
	}
	s->fd = u.fd;
	s->devid = u.devid;
	s->next_seq = u.next_seq;
	return 0;
}

/*
 * This process (and so the responder it forks), and the server, on one
 * CPU: both sides then get the same placement.  Left to the scheduler,
 * the responder starts next to the client and the server wherever it
 * was, and on this rig's 2-vCPU VM a wakeup across CPUs costs several
 * times one on the same CPU: that, not the server, decided the figures.
 */
static int pin_cpu(int cpu, int server_pid)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    (server_pid && sched_setaffinity(server_pid, sizeof(set), &set))) {
		fprintf(stderr, "urb-bench: CPU %d: %m\n", cpu);
		return -1;
	}
	return 0;
}

static int side_init(struct side *s, const char *name, const uint8_t *desc)
{
	s->name = name;
	s->desc = desc;
	s->pend = calloc(BENCH_MAX_DEPTH, sizeof(*s->pend));
	if (!s->pend || set_nonblock(s->fd, true))
		return -1;
	return 0;
}

/* One sample of load l on side sd, into the figures of that load. */
static int sample(struct side *s, unsigned int sd, const struct load *ld,
		  unsigned int l, unsigned int r, const struct opts *o,
		  const uint8_t *payload, pid_t ref_pid,
		  struct figure *fig, unsigned int nfig)
{
	int pid = sd ? ref_pid : o->server_pid;
	double cpu0, cpu1, self0, self1, el = 0, v;
	struct count c;
	unsigned int f;

	cpu0 = pid ? proc_cpu_s(pid) : -1;
	self0 = self_cpu_s();
	if (side_run(s, ld, payload, o->seconds / 5, o->seconds, &c, &el))
		return -1;
	cpu1 = pid ? proc_cpu_s(pid) : -1;
	self1 = self_cpu_s();
	for (f = 0; f < nfig; f++) {
		if (fig[f].load != l)
			continue;
		v = fig[f].what == 0 ? c.urbs / el :
			(fig[f].what == 1 ? c.out_bytes : c.in_bytes) / el / 1e6;
		fig[f].v[sd][r] = v;
		fig[f].cpu[sd][r] = cpu0 >= 0 && cpu1 >= 0 ?
			(cpu1 - cpu0) / el : -1;
		fig[f].client_cpu[sd][r] = (self1 - self0) / el;
	}
	fprintf(stderr, "bench-urb: round %u: %s: %s %.0f URB/s", r + 1,
		ld->name, s->name, c.urbs / el);
	if (ld->bulk)
		fprintf(stderr, ", %.0f MB/s each way", c.out_bytes / el / 1e6);
	fputc('\n', stderr);
	return 0;
}

int main(int argc, char **argv)
{
	static uint8_t desc[DESC_DEVICE_LEN];
	struct ref ref = { .listen_fd = -1, .fd = -1 };
	static struct side sides[2];
	char names[3][64], fnames[2][64];
	struct load loads[3];
	struct figure fig[4] = {
		{ .name = "control, 1 in flight", .key = "control-1",
		  .unit = "URB/s", .load = 0, .what = 0 },
		{ .name = names[1], .key = "control-pipelined",
		  .unit = "URB/s", .load = 1, .what = 0 },
		{ .name = fnames[0], .key = "bulk-out", .unit = "MB/s",
		  .load = 2, .what = 1 },
		{ .name = fnames[1], .key = "bulk-in", .unit = "MB/s",
		  .load = 2, .what = 2 },
	};
	unsigned int r, l, k, i, f;
	uint8_t *payload;
	struct opts o;
	int st = 0;

	if (parse_opts(argc, argv, &o))
		return 2;
	snprintf(names[0], sizeof(names[0]), "control, 1 in flight");
	snprintf(names[1], sizeof(names[1]), "control, %u in flight",
		 o.ctrl_depth);
	snprintf(names[2], sizeof(names[2]),
		 "bulk %u KiB, %u OUT+IN pairs in flight", o.bulk_len / 1024,
		 o.bulk_depth);
	snprintf(fnames[0], sizeof(fnames[0]),
		 "bulk %u KiB OUT, %u pairs in flight", o.bulk_len / 1024,
		 o.bulk_depth);
	snprintf(fnames[1], sizeof(fnames[1]),
		 "bulk %u KiB IN, %u pairs in flight", o.bulk_len / 1024,
		 o.bulk_depth);
	loads[0] = (struct load){ .name = names[0], .depth = 1 };
	loads[1] = (struct load){ .name = names[1], .depth = o.ctrl_depth };
	loads[2] = (struct load){ .name = names[2], .bulk = true,
		.depth = 2 * o.bulk_depth, .len = o.bulk_len,
		.ep_out = o.ep_out, .ep_in = o.ep_in };

	payload = malloc(o.bulk_len);
	if (!payload)
		return 1;
	for (i = 0; i < o.bulk_len; i++)
		payload[i] = (uint8_t)(i * 7 + 1);

	if (o.cpu >= 0 && pin_cpu(o.cpu, o.server_pid))
		return 1;
	if (usbrig_open(&o, &sides[0], desc))
		return 1;
	memcpy(ref.desc, desc, sizeof(desc));
	ref.frame_max = USBIP_HDR_SIZE + o.bulk_len;
	sides[1].fd = ref_start(&ref);
	if (sides[1].fd < 0)
		return 1;
	if (side_init(&sides[0], "usbrig", desc) ||
	    side_init(&sides[1], "loopback", desc))
		return 1;

	for (r = 0; r < o.rounds; r++)
		for (l = 0; l < 3; l++)
			for (k = 0; k < 2; k++) {
				/* which side goes first alternates */
				unsigned int sd = (k + r + l) % 2;

				if (!load_wanted(&o, l))
					continue;
				if (sample(&sides[sd], sd, &loads[l], l, r, &o,
					   payload, ref.pid, fig, 4))
					return 1;
			}

	for (f = 0; f < 4; f++) {
		struct figure *g = &fig[f];

		if (!load_wanted(&o, g->load))
			continue;
		printf("bench-urb: %s (%s): usbrig %.0f, loopback %.0f, ratio %.2f\n",
		       g->name, g->unit, median(g->v[0], o.rounds),
		       median(g->v[1], o.rounds), fig_ratio(g, o.rounds));
		fprintf(stderr,
			"bench-urb: %s: usbrig %.0f..%.0f, loopback %.0f..%.0f, ratio %.2f..%.2f over %u rounds; CPU us per %s: server %.3f, responder %.3f\n",
			g->name, minmax(g->v[0], o.rounds, false),
			minmax(g->v[0], o.rounds, true),
			minmax(g->v[1], o.rounds, false),
			minmax(g->v[1], o.rounds, true),
			minmax(g->ratio, o.rounds, false),
			minmax(g->ratio, o.rounds, true), o.rounds,
			g->what ? "MB" : "URB", fig_cost(g, 0, o.rounds),
			fig_cost(g, 1, o.rounds));
	}
	if (o.json && write_json(o.json, &o, fig, 4))
		return 1;

	uc_disconnect(sides[0].fd);
	shutdown(sides[1].fd, SHUT_RDWR);
	close(sides[1].fd);
	free(payload);
	if (waitpid(ref.pid, &st, 0) != ref.pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		fprintf(stderr, "urb-bench: the reference failed (%#x)\n", st);
		return 1;
	}
	return 0;
}
