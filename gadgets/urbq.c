// SPDX-License-Identifier: GPL-2.0
/* urbq.c - the FIFO of pending URBs (device.h, "pending URB queues"). */
#include <stddef.h>

#include "device.h"

void gdev_urbq_init(struct gdev_urbq *q)
{
	q->head = NULL;
	q->tail = &q->head;
}

void gdev_urbq_push(struct gdev_urbq *q, struct urb *urb)
{
	urb->next = NULL;
	*q->tail = urb;
	q->tail = &urb->next;
}

struct urb *gdev_urbq_pop(struct gdev_urbq *q)
{
	struct urb *urb = q->head;

	if (!urb)
		return NULL;
	q->head = urb->next;
	if (!q->head)
		q->tail = &q->head;
	urb->next = NULL;
	return urb;
}

struct urb *gdev_urbq_remove(struct gdev_urbq *q, uint32_t seqnum)
{
	struct urb **pp, *urb;

	for (pp = &q->head; (urb = *pp); pp = &urb->next) {
		if (urb->seqnum != seqnum)
			continue;
		*pp = urb->next;
		if (q->tail == &urb->next)
			q->tail = pp;
		urb->next = NULL;
		return urb;
	}
	return NULL;
}

void gdev_urbq_flush(struct gdev *dev, struct gdev_urbq *q, int status)
{
	struct urb *urb;

	while ((urb = gdev_urbq_pop(q)))
		gdev_complete(dev, urb, status, 0);
}

void gdev_urbq_free(struct gdev_urbq *q, void (*free_urb)(struct urb *urb))
{
	struct urb *urb;

	while ((urb = gdev_urbq_pop(q)))
		if (free_urb)
			free_urb(urb);
}
