/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scripts.h - gadget scripts the socket tests own, with the descriptor
 * bytes they must produce written out by hand.
 */
#ifndef USBRIG_TEST_SCRIPTS_H
#define USBRIG_TEST_SCRIPTS_H

#include <stddef.h>
#include <stdint.h>

/*
 * 0557:2008, high speed, vendor class interface 0:
 *   0x81 bulk IN   - the loopback fifo of 0x02
 *   0x02 bulk OUT  - loopback to 0x81
 *   0x83 int IN    - NAKs for ever
 *   0x84 bulk IN   - source, BULK_PATTERN repeated
 * ep0 rules: c0/01 reply "hello usbrig"; 40/02 stall; c0/03 stall;
 *   c0/04 reply 4 bytes after 300 ms.
 */
extern const char script_bulk[];
extern const uint8_t bulk_device_desc[18];
extern const uint8_t bulk_config_desc[46];
extern const uint8_t bulk_string0[4];
extern const uint8_t bulk_string1[14];	/* "usbrig" */
#define BULK_EP_LOOP_IN		0x81
#define BULK_EP_LOOP_OUT	0x02
#define BULK_EP_NAK_INT		0x83
#define BULK_EP_SOURCE		0x84
extern const uint8_t bulk_pattern[7];
#define BULK_HELLO		"hello usbrig"
#define BULK_DELAY_MS		300

/* 1209:0003, full speed, disconnects after FAULT_URBS URBs */
extern const char script_faults[];
#define FAULT_URBS		3

/*
 * 1209:0009, high speed, interface 0: alt 0 without endpoints, alt 1 with
 * an isochronous IN 0x81 (1024 bytes, zeros) and an isochronous OUT 0x02.
 */
extern const char script_iso[];

#endif /* USBRIG_TEST_SCRIPTS_H */
