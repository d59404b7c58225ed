// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - usbrig-gadget: serve gadget scripts over USB/IP, or check and
 * dump them.  Thin: options, script loading, the event loop; the work is in
 * script.c, desc.c and server.c.
 *
 * Exit status: 0 success, 1 a script or run-time error, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <event2/event.h>
#include <linux/usb/ch9.h>

#include "desc.h"
#include "log.h"
#include "model.h"
#include "script.h"
#include "server.h"
#include "usbip_wire.h"

/* the one definition is the VERSION file at the top, via the Makefile */
#ifndef USBRIG_VERSION
#error "USBRIG_VERSION is not defined: build with the Makefile"
#endif

#define EXIT_USAGE	2

enum mode { MODE_SERVE, MODE_CHECK, MODE_DUMP };

enum {
	OPT_PORT_FILE = 0x100,
	OPT_CHECK,
	OPT_DUMP,
};

static const struct option long_opts[] = {
	{ "listen", required_argument, NULL, 'a' },
	{ "port", required_argument, NULL, 'p' },
	{ "port-file", required_argument, NULL, OPT_PORT_FILE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "dump", no_argument, NULL, OPT_DUMP },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: usbrig-gadget [OPTION]... SCRIPT...     serve the gadgets over USB/IP\n"
"       usbrig-gadget --check SCRIPT...         validate scripts, serve nothing\n"
"       usbrig-gadget --dump SCRIPT             print the descriptors as hex\n"
"\n"
"Each SCRIPT describes one USB device (docs/gadget-format.md).  Devices are\n"
"exported as busid 1-1, 1-2, ... in command-line order, for the stock\n"
"`usbip list -r` / `usbip attach -r HOST -b 1-N` and vhci-hcd.  All scripts\n"
"are loaded before anything listens: one bad script and nothing is served.\n"
"\n"
"Options:\n"
"  -a, --listen ADDR     address to listen on (default " SERVER_DEFAULT_ADDR ")\n"
"  -p, --port PORT       TCP port (default %d; 0 = any free port)\n"
"      --port-file FILE  once listening, write the bound port and a newline\n"
"                        to FILE (atomically: temporary file + rename)\n"
"  -v, --verbose         log connections and one line per URB completion and\n"
"                        per unlink (debug level); USBRIG_LOG=error|warn|info|\n"
"                        debug sets the level too (default warn)\n"
"      --check           parse each SCRIPT and generate its descriptors;\n"
"                        prints \"SCRIPT: ok\" or the error, exit 1 if any failed\n"
"      --dump            print every descriptor of SCRIPT as commented hex\n"
"  -h, --help            this text\n"
"  -V, --version         print \"usbrig-gadget VERSION\" and exit\n"
"\n"
"Logs go to stderr as \"usbrig-gadget: LEVEL: FUNCTION: message\".\n"
"SIGINT or SIGTERM stops the server cleanly (exit 0).\n"
"Exit status: 0 ok, 1 script or run-time error, 2 usage error.\n",
		USBIP_PORT);
}

static int usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "usbrig-gadget: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'usbrig-gadget --help' for more information.\n");
	return EXIT_USAGE;
}

static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > 65535 || s[0] == '-')
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/*
 * Generate the device and every configuration descriptor once: a script
 * the parser accepts but the generator cannot serve (e.g. a set beyond
 * 65535 bytes) is rejected before anything listens.
 */
static int validate_model(const struct gd_device *dev)
{
	uint8_t *buf;
	size_t i;
	int ret;

	buf = malloc(GD_DESC_MAX);
	if (!buf)
		return -ENOMEM;
	ret = desc_device(dev, buf, GD_DESC_MAX);
	if (ret < 0) {
		fprintf(stderr, "%s: device descriptor: %s\n", dev->path,
			strerror(-ret));
		goto out;
	}
	for (i = 0; i < dev->n_configs; i++) {
		ret = desc_config(dev, i, USB_DT_CONFIG, buf, GD_DESC_MAX);
		if (ret < 0) {
			fprintf(stderr, "%s: configuration %zu: %s\n",
				dev->path, i, strerror(-ret));
			goto out;
		}
	}
	ret = 0;
out:
	free(buf);
	return ret;
}

/* Load one script; its error goes to stderr.  NULL on failure. */
static struct gd_device *load_one(const char *path)
{
	struct script_error err;
	struct gd_device *dev = NULL;
	int ret;

	memset(&err, 0, sizeof(err));
	ret = script_load(path, &dev, &err);
	if (ret < 0) {
		if (err.msg[0])
			fprintf(stderr, "%s\n", err.msg);
		else
			fprintf(stderr, "%s: %s\n", path, strerror(-ret));
		return NULL;
	}
	if (validate_model(dev) < 0) {
		gd_model_free(dev);
		return NULL;
	}
	return dev;
}

static void free_models(struct gd_device **models, int n)
{
	int i;

	for (i = n; i-- > 0;)
		gd_model_free(models[i]);
	free(models);
}

/* Load every script, reporting every failure; 0 only if all loaded. */
static int load_all(char **paths, int n, struct gd_device ***out)
{
	struct gd_device **models;
	int i, bad = 0;

	models = calloc(n, sizeof(*models));
	if (!models) {
		fprintf(stderr, "usbrig-gadget: out of memory\n");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		models[i] = load_one(paths[i]);
		if (!models[i])
			bad++;
	}
	if (bad) {
		free_models(models, n);
		return -EINVAL;
	}
	*out = models;
	return 0;
}

static int do_check(char **paths, int n)
{
	struct gd_device *dev;
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		dev = load_one(paths[i]);
		if (!dev) {
			bad++;
			continue;
		}
		printf("%s: ok\n", paths[i]);
		gd_model_free(dev);
	}
	fflush(stdout);
	return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int do_dump(const char *path)
{
	struct gd_device *dev;
	int ret;

	dev = load_one(path);
	if (!dev)
		return EXIT_FAILURE;
	ret = desc_dump(dev, stdout);
	gd_model_free(dev);
	if (fflush(stdout) == EOF || ret < 0) {
		fprintf(stderr, "%s: dump: %s\n", path,
			strerror(ret < 0 ? -ret : errno));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

/* Room for SERVER_MAX_CONNS sockets plus a margin, if the hard limit allows. */
static void raise_fd_limit(void)
{
	const rlim_t want = SERVER_MAX_CONNS + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ?
		want : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct event_base *base = arg;

	(void)what;
	log_info("signal %d: stopping", (int)sig);
	event_base_loopbreak(base);
}

/*
 * Whether a gadget times anything in milliseconds: a `delay` (rule or
 * endpoint), `disconnect-after-ms`, or a device function (hid's report
 * interval).  Only then does the loop use libevent's precise timer,
 * which costs a timerfd_settime() at every turn of the loop, some 7% of
 * a control URB's time on the server (make bench-urb).
 */
static bool needs_precise_timer(struct gd_device **models, int n)
{
	const struct gd_device *m;
	const struct gd_alt *a;
	size_t c, k, e;
	int i;

	for (i = 0; i < n; i++) {
		m = models[i];
		if (m->function || m->faults.disconnect_after_ms)
			return true;
		for (k = 0; k < m->n_rules; k++)
			if (m->rules[k].delay_ms)
				return true;
		for (c = 0; c < m->n_configs; c++) {
			for (k = 0; k < m->configs[c].n_alts; k++) {
				a = &m->configs[c].alts[k];
				for (e = 0; e < a->n_eps; e++)
					if (a->eps[e].beh.delay_ms)
						return true;
			}
		}
	}
	return false;
}

static int do_serve(char **paths, int n, const char *addr, uint16_t port,
		    const char *port_file)
{
	struct event *sigint_ev = NULL, *sigterm_ev = NULL;
	struct gd_device **models;
	struct event_config *cfg;
	struct event_base *base;
	struct server *srv;
	int i, ret, status = EXIT_FAILURE;

	if (n > SERVER_MAX_GADGETS) {
		fprintf(stderr, "usbrig-gadget: at most %d gadgets\n",
			SERVER_MAX_GADGETS);
		return EXIT_FAILURE;
	}
	if (load_all(paths, n, &models) < 0)
		return EXIT_FAILURE;

	/* a peer that vanishes must cost an EPIPE, not the process */
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	/*
	 * Keep up to 8 MiB of freed heap: a busy connection allocates and
	 * frees input chains of up to 1 MiB and URB buffers at every read,
	 * and glibc's default (trim the heap past twice the largest chunk
	 * freed lately) gave the pages back and faulted them in again each
	 * time: some 7 page faults per 64 KiB bulk URB, a tenth of the
	 * throughput (make bench-urb).  Chunks of 4 MiB and more still come
	 * from mmap() and go back when freed.
	 */
	mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);
	mallopt(M_TRIM_THRESHOLD, 8 * 1024 * 1024);

	/* a device's `delay` is in ms: timerfd (precise) rather than
	 * epoll_wait's millisecond timeout, which rounds up */
	cfg = event_config_new();
	if (cfg && needs_precise_timer(models, n))
		event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	base = cfg ? event_base_new_with_config(cfg) : NULL;
	if (cfg)
		event_config_free(cfg);
	if (!base) {
		fprintf(stderr, "usbrig-gadget: cannot create an event base\n");
		goto err_models;
	}
	srv = server_new(base);
	if (!srv) {
		fprintf(stderr, "usbrig-gadget: out of memory\n");
		goto err_base;
	}
	for (i = 0; i < n; i++) {
		ret = server_add_gadget(srv, models[i]);
		if (ret < 0) {
			fprintf(stderr, "%s: cannot serve: %s\n", paths[i],
				strerror(-ret));
			goto err_server;
		}
	}
	sigint_ev = evsignal_new(base, SIGINT, signal_cb, base);
	if (!sigint_ev || event_add(sigint_ev, NULL) < 0) {
		fprintf(stderr, "usbrig-gadget: cannot watch SIGINT\n");
		goto err_sigint;
	}
	sigterm_ev = evsignal_new(base, SIGTERM, signal_cb, base);
	if (!sigterm_ev || event_add(sigterm_ev, NULL) < 0) {
		fprintf(stderr, "usbrig-gadget: cannot watch SIGTERM\n");
		goto err_sigterm;
	}
	/* listen last: the port file says everything is ready; errors
	 * are logged by server_listen() */
	if (server_listen(srv, addr, port, port_file) < 0)
		goto err_sigterm;
	if (event_base_dispatch(base) < 0)
		fprintf(stderr, "usbrig-gadget: event loop failed\n");
	else
		status = EXIT_SUCCESS;

err_sigterm:
	if (sigterm_ev)
		event_free(sigterm_ev);
err_sigint:
	if (sigint_ev)
		event_free(sigint_ev);
err_server:
	server_free(srv);
err_base:
	event_base_free(base);
err_models:
	free_models(models, n);
	return status;
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port_file = NULL;
	enum mode mode = MODE_SERVE;
	uint16_t port = USBIP_PORT;
	int verbose = 0, c, n;

	log_init_from_env();
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":a:p:vhV", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			if (parse_port(optarg, &port) < 0)
				return usage_error("invalid port '%s'", optarg);
			break;
		case OPT_PORT_FILE:
			port_file = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case OPT_CHECK:
			if (mode == MODE_DUMP)
				return usage_error("%s", "--check and --dump exclude each other");
			mode = MODE_CHECK;
			break;
		case OPT_DUMP:
			if (mode == MODE_CHECK)
				return usage_error("%s", "--check and --dump exclude each other");
			mode = MODE_DUMP;
			break;
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		case 'V':
			printf("usbrig-gadget %s\n", USBRIG_VERSION);
			return EXIT_SUCCESS;
		case ':':
			return usage_error("option '%s' needs an argument",
					   argv[optind - 1]);
		default:
			if (optopt) {
				char opt[3] = { '-', (char)optopt, '\0' };

				return usage_error("unknown option '%s'", opt);
			}
			return usage_error("unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (verbose)
		log_threshold = GLOG_DBG;

	n = argc - optind;
	if (n < 1)
		return usage_error("%s", "no SCRIPT given");
	switch (mode) {
	case MODE_CHECK:
		return do_check(argv + optind, n);
	case MODE_DUMP:
		if (n != 1)
			return usage_error("%s", "--dump takes exactly one SCRIPT");
		return do_dump(argv[optind]);
	case MODE_SERVE:
	default:
		return do_serve(argv + optind, n, addr, port, port_file);
	}
}
