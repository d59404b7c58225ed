/* SPDX-License-Identifier: GPL-2.0 */
/*
 * client.h - a small blocking USB/IP client and server-process helpers for
 * the socket tests.  Every socket has 10 s send/receive timeouts, so a
 * server that stops answering fails a test instead of hanging it.
 *
 * The client keeps the seqnums it is waiting for and treats any reply to
 * another seqnum, or with more IN data than asked for, as a protocol
 * violation (vhci-hcd drops the connection for either).
 */
#ifndef USBRIG_TEST_CLIENT_H
#define USBRIG_TEST_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "usbip_wire.h"

/* ---- the server under test, as a child process ---- */

struct srv {
	pid_t pid;
	int port;
	char dir[256];		/* temporary: scripts, port file, server.log */
	char log[300];		/* dir/server.log: the server's stderr */
};

/* $USBRIG_GADGET, else build/usbrig-gadget */
const char *srv_binary(void);
/* Make the temporary directory; 0 or -1. */
int srv_init(struct srv *s);
/* Write text to dir/name; the path goes to path (PATH_MAX). 0 or -1. */
int srv_write_file(struct srv *s, const char *name, const char *text,
		   char *path);
/*
 * Start the server with "--port 0 --port-file DIR/port", then args (options
 * and scripts, NULL-terminated), and wait for the port file.  0 or -1 (the
 * server log is printed).
 */
int srv_start(struct srv *s, const char *const *args);
/* Still running? */
bool srv_alive(struct srv *s);
/* SIGTERM, wait; the exit status (0 expected), -1 if it had to be killed
 * or died of a signal.  The log is printed when the status is not 0. */
int srv_stop(struct srv *s);
/* Print the server log to stderr. */
void srv_print_log(struct srv *s);
/* Lines of the server log containing needle. */
int srv_log_count(struct srv *s, const char *needle);
/* Remove the temporary directory (after srv_stop). */
void srv_cleanup(struct srv *s);

/* A script a test writes into the server's directory before starting it. */
struct srv_script {
	const char *name;	/* file name in the directory */
	const char *text;
	char *path;		/* PATH_MAX bytes: where it was written */
};
/*
 * srv_init, write the n scripts, then srv_start with opts (NULL-terminated,
 * or NULL), the scripts' paths in order, then more (NULL-terminated, or
 * NULL).  A script listed twice is served as two devices.  0 or -1.
 */
int srv_start_scripts(struct srv *s, const struct srv_script *sc, size_t n,
		      const char *const *opts, const char *const *more);
/* srv_stop and srv_cleanup; 0, or -1 with *failed set. */
int srv_finish(struct srv *s, bool *failed);

/* Run argv, capture stdout (malloc'd, NUL-terminated); exit status or -1. */
int run_capture(const char *const *argv, char **out, size_t *out_len);

/* ---- `usbrig-gadget --dump` output: "LABEL: 12 01 ..." lines ---- */

#define DUMP_MAX_ITEMS	300

struct dump_item {
	char label[48];		/* "device", "config 0", "string 2", "bos" */
	uint8_t *data;
	size_t len;
};

struct dump {
	struct dump_item items[DUMP_MAX_ITEMS];
	size_t n;
};

int dump_load(const char *script, struct dump *d);
const struct dump_item *dump_find(const struct dump *d, const char *label);
void dump_free(struct dump *d);

/* ---- raw sockets ---- */

/*
 * Connect to 127.0.0.1:port.  Every socket from here is remembered until
 * uc_disconnect(), so a test that fails half way (cmocka longjmps out of
 * it) leaves nothing imported: its teardown calls uc_disconnect_all().
 */
int uc_connect(int port);
void uc_disconnect(int fd);
void uc_disconnect_all(void);
/* cmocka-style teardown: uc_disconnect_all(), returns 0 */
int uc_teardown(void **state);
int uc_send(int fd, const void *buf, size_t len);
/* Exactly len bytes: 0, or -1 on EOF, error or timeout. */
int uc_recv(int fd, void *buf, size_t len);
/* 0 when the peer closes (EOF or reset) within timeout_ms without sending
 * anything more; -1 on data or timeout. */
int uc_expect_eof(int fd, int timeout_ms);
/* Send an op_common with any version/code/status. */
int uc_send_op(int fd, uint16_t version, uint16_t code, uint32_t status);
int uc_recv_op(int fd, struct usbip_op_common *op);

/* ---- operation phase ---- */

#define UC_MAX_DEVS	16
#define UC_MAX_INTFS	32

struct uc_devlist {
	uint32_t ndev;
	struct {
		struct usbip_usb_device dev;
		struct usbip_usb_interface intf[UC_MAX_INTFS];
	} d[UC_MAX_DEVS];
};

/* OP_REQ_DEVLIST on a new connection; checks the reply and the EOF. */
int uc_devlist(int port, struct uc_devlist *out);

/* ---- URB phase ---- */

#define UC_MAX_PENDING	256

struct uc_pending {
	bool used;
	uint32_t seqnum;
	bool in;
	uint32_t len;
	bool unlink;		/* a CMD_UNLINK waiting for RET_UNLINK */
	uint32_t victim;
	int32_t npackets;	/* isochronous: packets sent */
};

struct uc {
	int fd;
	uint32_t devid;
	uint32_t next_seq;
	struct usbip_usb_device dev;	/* from OP_REP_IMPORT */
	struct uc_pending pend[UC_MAX_PENDING];
};

/*
 * OP_REQ_IMPORT busid: 0 and u ready when the reply is ST_OK (the record
 * must echo the busid); otherwise -1, with the status in *status (or
 * UINT32_MAX when no reply came) and the socket closed.
 */
int uc_import(int port, const char *busid, struct uc *u, uint32_t *status);
/* uc_import, retried while the answer is ST_DEV_BUSY (a previous client's
 * close may still be in flight) for up to timeout_ms. */
int uc_import_retry(int port, const char *busid, struct uc *u,
		    int timeout_ms);
void uc_close(struct uc *u);

/* CMD_SUBMIT; returns its seqnum, 0 on failure.  setup may be NULL. */
uint32_t uc_submit(struct uc *u, uint8_t ep, bool in, const uint8_t *setup,
		   const void *out, uint32_t len);
/* CMD_SUBMIT of an isochronous URB with np packet descriptors. */
uint32_t uc_submit_iso(struct uc *u, uint8_t ep, bool in, const void *out,
		       uint32_t len, const struct usbip_iso_desc *iso,
		       int32_t np);
/* CMD_UNLINK of victim; returns the unlink's own seqnum, 0 on failure. */
uint32_t uc_unlink(struct uc *u, uint32_t victim);

struct uc_ret {
	uint32_t command;	/* USBIP_RET_SUBMIT or USBIP_RET_UNLINK */
	uint32_t seqnum;
	int32_t status;
	uint32_t actual;
	int32_t npackets;
	uint8_t *data;		/* IN data, actual bytes, malloc'd (or NULL) */
	struct usbip_iso_desc *iso;	/* npackets, malloc'd (or NULL) */
};

/* Read the next reply: 0, or -1 on EOF/timeout/protocol violation (a
 * message says which).  Free r->data and r->iso (uc_ret_free). */
int uc_read_ret(struct uc *u, struct uc_ret *r);
void uc_ret_free(struct uc_ret *r);

/* Synchronous transfers: actual length >= 0 with *status set, or -1 when
 * the transport failed. */
int uc_control(struct uc *u, uint8_t bmRequestType, uint8_t bRequest,
	       uint16_t wValue, uint16_t wIndex, void *data, uint16_t wLength,
	       int32_t *status);
int uc_get_descriptor(struct uc *u, uint8_t type, uint8_t index,
		      uint16_t langid, void *buf, uint16_t len,
		      int32_t *status);
int uc_transfer(struct uc *u, uint8_t ep, bool in, void *buf, uint32_t len,
		int32_t *status);

/* Fill a 48-byte CMD_SUBMIT header by hand (hostile tests patch it). */
void uc_make_submit(uint8_t raw[USBIP_HDR_SIZE], uint32_t seqnum,
		    uint32_t devid, uint32_t dir, uint32_t ep, int32_t len,
		    int32_t npackets, const uint8_t *setup);

#endif /* USBRIG_TEST_CLIENT_H */
