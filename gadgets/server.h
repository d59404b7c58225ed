/* SPDX-License-Identifier: GPL-2.0 */
/*
 * server.h - the USB/IP server: one event loop, many gadgets, many
 * connections.
 *
 * Each gadget added with server_add_gadget() is exported under a stable
 * busid "1-N" (N = 1, 2, ... in the order of addition), busnum 1, devnum N,
 * devid = 1 << 16 | N, path "/sys/devices/usbrig/1-N".
 *
 * A connection starts in the operation phase (op_common + payload):
 * OP_REQ_DEVLIST is answered with every gadget and the connection closes
 * once the reply is flushed, like usbipd; OP_REQ_IMPORT of a free gadget
 * switches the connection to the URB phase (48-byte headers) and attaches
 * the gadget to it until the socket closes.  A gadget is owned by at most
 * one connection (others get ST_DEV_BUSY).  Anything malformed costs the
 * peer its own connection and nothing else; its gadget is detached and
 * becomes importable again.  A gadget's run-time state (device.h) exists
 * only while a connection holds it: each import starts from a new one.
 *
 * Logging (log.h): info = connections, imports, drops; debug = one line per
 * URB completion and one per unlink, "<busid> seq=N ep=N in|out len=N ...".
 */
#ifndef USBRIG_SERVER_H
#define USBRIG_SERVER_H

#include <stdint.h>

#include "model.h"

struct event_base;
struct server;

#define SERVER_DEFAULT_ADDR	"127.0.0.1"
#define SERVER_MAX_GADGETS	127	/* devnum is a USB address, 1..127 */
#define SERVER_MAX_CONNS	1024	/* beyond: accepted and closed at once */

/* Create a server on base; nothing listens yet. */
struct server *server_new(struct event_base *base);

/*
 * Export model (borrowed: it must outlive the server) as the next busid.
 * Returns the 1-based devnum (the N of "1-N"), or a negative errno:
 * -ENOSPC beyond SERVER_MAX_GADGETS, -ENOMEM.
 */
int server_add_gadget(struct server *srv, const struct gd_device *model);

/*
 * Listen on addr (NULL: SERVER_DEFAULT_ADDR; a numeric IPv4/IPv6 address
 * or a host name) and TCP port (0: any free port).  When port_file is not
 * NULL, the bound port and a newline are written to it once the socket
 * listens (via a temporary file and rename(), so a reader never sees a
 * partial file).  Returns 0 or a negative errno (logged).
 */
int server_listen(struct server *srv, const char *addr, uint16_t port,
		  const char *port_file);

/* The port server_listen() bound, or -1 when not listening. */
int server_port(const struct server *srv);

/*
 * Serve an already-connected stream socket (takes ownership of fd): the
 * accept path, also usable with a socketpair.  Returns 0 or a negative
 * errno (fd is closed then).
 */
int server_add_connection(struct server *srv, int fd);

/* Connections currently open (for tests and logs). */
unsigned int server_num_connections(const struct server *srv);

/* Close every connection, detach every gadget, stop listening, free. */
void server_free(struct server *srv);

#endif /* USBRIG_SERVER_H */
