// SPDX-License-Identifier: GPL-2.0
/*
 * v4l2-grab.c - grab frames from a V4L2 capture device in the guest and
 * compare each with the uvc function's test pattern, with the kernel's
 * V4L2 ioctls (<linux/videodev2.h>) and no libv4l, so it is one static
 * binary the video scenarios copy in with
 * `file ${build}/tools/v4l2-grab /usr/bin/v4l2-grab`.
 *
 *   v4l2-grab [-f FPS] [-t SECONDS] DEV WIDTH HEIGHT FRAMES PATTERN
 *
 * sets YUYV WIDTH x HEIGHT (and 1/FPS seconds a frame with -f), maps four
 * buffers, streams, and dequeues FRAMES frames, waiting at most SECONDS
 * (20) for each.  Every frame must be WIDTH x HEIGHT x 2 bytes without the
 * error flag, and equal, byte for byte, to frame n of PATTERN (bars or
 * count, gadgets/fn/uvc_pattern.h), n being the number the frame carries
 * in its first bytes; the numbers must rise from frame to frame (a frame
 * the driver dropped leaves a gap, which is counted, not failed).
 *
 * Prints a line per frame and a verdict, "v4l2-grab: PASS: N of N frames
 * equal to the pattern ..." or "v4l2-grab: FAIL: ...".  Exit status 0 when
 * every frame is right, 1 when one is not or an ioctl failed (said on
 * stderr), 2 for usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "uvc_pattern.h"

#define NBUF		4
#define FRAMES_MAX	100000

struct buf {
	void *mem;
	size_t len;
};

static int fail(const char *what)
{
	fprintf(stderr, "v4l2-grab: %s: %s\n", what, strerror(errno));
	return 1;
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do
		ret = ioctl(fd, req, arg);
	while (ret < 0 && errno == EINTR);
	return ret;
}

static int usage(void)
{
	fprintf(stderr, "usage: v4l2-grab [-f FPS] [-t SECONDS] DEV WIDTH HEIGHT FRAMES bars|count\n");
	return 2;
}

static long number(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > max)
		return -1;
	return v;
}

static int set_format(int fd, uint32_t w, uint32_t h, long fps)
{
	struct v4l2_format f;
	struct v4l2_streamparm p;

	memset(&f, 0, sizeof(f));
	f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	f.fmt.pix.width = w;
	f.fmt.pix.height = h;
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	if (xioctl(fd, VIDIOC_S_FMT, &f))
		return fail("VIDIOC_S_FMT");
	printf("format: %ux%u %.4s, %u bytes a line, %u a frame\n",
	       f.fmt.pix.width, f.fmt.pix.height,
	       (const char *)&f.fmt.pix.pixelformat, f.fmt.pix.bytesperline,
	       f.fmt.pix.sizeimage);
	if (f.fmt.pix.width != w || f.fmt.pix.height != h ||
	    f.fmt.pix.pixelformat != V4L2_PIX_FMT_YUYV ||
	    f.fmt.pix.sizeimage < 2 * w * h) {
		fprintf(stderr, "v4l2-grab: the driver gave another format than %ux%u YUYV\n",
			w, h);
		return 1;
	}
	memset(&p, 0, sizeof(p));
	p.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	if (fps) {
		p.parm.capture.timeperframe.numerator = 1;
		p.parm.capture.timeperframe.denominator = fps;
		if (xioctl(fd, VIDIOC_S_PARM, &p))
			return fail("VIDIOC_S_PARM");
	} else if (xioctl(fd, VIDIOC_G_PARM, &p)) {
		return fail("VIDIOC_G_PARM");
	}
	printf("frame interval: %u/%u s\n",
	       p.parm.capture.timeperframe.numerator,
	       p.parm.capture.timeperframe.denominator);
	return 0;
}

static int map_buffers(int fd, struct buf *bufs)
{
	struct v4l2_requestbuffers rb;
	struct v4l2_buffer b;
	unsigned int i;

	memset(&rb, 0, sizeof(rb));
	rb.count = NBUF;
	rb.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	rb.memory = V4L2_MEMORY_MMAP;
	if (xioctl(fd, VIDIOC_REQBUFS, &rb))
		return fail("VIDIOC_REQBUFS");
	if (rb.count < 2 || rb.count > NBUF) {
		fprintf(stderr, "v4l2-grab: the driver gave %u buffers\n",
			rb.count);
		return 1;
	}
	for (i = 0; i < rb.count; i++) {
		memset(&b, 0, sizeof(b));
		b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		b.memory = V4L2_MEMORY_MMAP;
		b.index = i;
		if (xioctl(fd, VIDIOC_QUERYBUF, &b))
			return fail("VIDIOC_QUERYBUF");
		bufs[i].len = b.length;
		bufs[i].mem = mmap(NULL, b.length, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, b.m.offset);
		if (bufs[i].mem == MAP_FAILED) {
			bufs[i].mem = NULL;
			return fail("mmap");
		}
		if (xioctl(fd, VIDIOC_QBUF, &b))
			return fail("VIDIOC_QBUF");
	}
	return 0;
}

struct tally {
	long good, bad, gaps;
	uint32_t first, last;
	int seen;
};

/* One dequeued frame against the pattern; 0 when it is right. */
static int check_frame(long i, const struct v4l2_buffer *b,
		       const uint8_t *mem, uint32_t w, uint32_t h,
		       enum uvc_pattern pat, struct tally *t)
{
	size_t size = 2u * w * h;
	uint32_t n;
	long at;

	if (b->bytesused != size || (b->flags & V4L2_BUF_FLAG_ERROR)) {
		printf("frame %ld: %u bytes%s, not %zu\n", i, b->bytesused,
		       b->flags & V4L2_BUF_FLAG_ERROR ? " (error flag)" : "",
		       size);
		return 1;
	}
	n = uvc_pattern_number(mem);
	at = uvc_pattern_check(pat, w, h, mem, size);
	if (at >= 0) {
		uint8_t want;

		uvc_pattern_fill(pat, n, w, h, (uint32_t)at, &want, 1);
		printf("frame %ld: number %u, sequence %u: byte %ld is 0x%02x, the pattern has 0x%02x\n",
		       i, n, b->sequence, at, mem[at], want);
		return 1;
	}
	if (t->seen && n <= t->last) {
		printf("frame %ld: number %u after %u: not rising\n", i, n,
		       t->last);
		return 1;
	}
	if (t->seen)
		t->gaps += n - t->last - 1;
	else
		t->first = n;
	t->seen = 1;
	t->last = n;
	printf("frame %ld: number %u, sequence %u, %zu bytes equal to the pattern\n",
	       i, n, b->sequence, size);
	return 0;
}

static int grab(int fd, long frames, int timeout_s, uint32_t w, uint32_t h,
		enum uvc_pattern pat, struct buf *bufs, struct tally *t)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct v4l2_buffer b;
	long i;
	int ret;

	for (i = 0; i < frames; i++) {
		ret = poll(&pfd, 1, timeout_s * 1000);
		if (ret < 0 && errno == EINTR) {
			i--;
			continue;
		}
		if (ret < 0)
			return fail("poll");
		if (!ret) {
			fprintf(stderr, "v4l2-grab: no frame in %d s (after %ld)\n",
				timeout_s, i);
			return 1;
		}
		memset(&b, 0, sizeof(b));
		b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		b.memory = V4L2_MEMORY_MMAP;
		if (xioctl(fd, VIDIOC_DQBUF, &b))
			return fail("VIDIOC_DQBUF");
		if (b.index >= NBUF || !bufs[b.index].mem ||
		    b.bytesused > bufs[b.index].len) {
			fprintf(stderr, "v4l2-grab: buffer %u: %u bytes used\n",
				b.index, b.bytesused);
			return 1;
		}
		if (check_frame(i, &b, bufs[b.index].mem, w, h, pat, t))
			t->bad++;
		else
			t->good++;
		if (xioctl(fd, VIDIOC_QBUF, &b))
			return fail("VIDIOC_QBUF");
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct buf bufs[NBUF] = { { NULL, 0 } };
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_capability cap;
	struct tally t = { 0 };
	long w, h, frames, fps = 0, timeout_s = 20;
	int opt, fd, pat, ret, i;

	while ((opt = getopt(argc, argv, "f:t:")) != -1) {
		if (opt == 'f')
			fps = number(optarg, 1000);
		else if (opt == 't')
			timeout_s = number(optarg, 3600);
		else
			return usage();
		if (fps < 0 || timeout_s < 0)
			return usage();
	}
	if (argc - optind != 5)
		return usage();
	w = number(argv[optind + 1], 8192);
	h = number(argv[optind + 2], 8192);
	frames = number(argv[optind + 3], FRAMES_MAX);
	pat = uvc_pattern_by_name(argv[optind + 4]);
	if (w < 0 || w % 2 || h < 0 || frames < 0 || pat < 0)
		return usage();

	fd = open(argv[optind], O_RDWR);
	if (fd < 0)
		return fail(argv[optind]);
	if (xioctl(fd, VIDIOC_QUERYCAP, &cap))
		return fail("VIDIOC_QUERYCAP");
	printf("device: %s, driver %s, card \"%s\"\n", argv[optind],
	       (const char *)cap.driver, (const char *)cap.card);
	if (!(cap.device_caps & V4L2_CAP_VIDEO_CAPTURE) ||
	    !(cap.device_caps & V4L2_CAP_STREAMING)) {
		fprintf(stderr, "v4l2-grab: %s does not capture by streaming\n",
			argv[optind]);
		return 1;
	}
	ret = set_format(fd, w, h, fps) ?: map_buffers(fd, bufs);
	if (!ret && xioctl(fd, VIDIOC_STREAMON, &type))
		ret = fail("VIDIOC_STREAMON");
	if (!ret) {
		ret = grab(fd, frames, timeout_s, w, h, pat, bufs, &t);
		if (xioctl(fd, VIDIOC_STREAMOFF, &type) && !ret)
			ret = fail("VIDIOC_STREAMOFF");
	}
	for (i = 0; i < NBUF; i++)
		if (bufs[i].mem)
			munmap(bufs[i].mem, bufs[i].len);
	close(fd);
	if (!ret && !t.bad && t.good == frames) {
		printf("v4l2-grab: PASS: %ld of %ld frames equal to the pattern %s (numbers %u..%u, %ld dropped between)\n",
		       t.good, frames, uvc_pattern_name(pat), t.first, t.last,
		       t.gaps);
		return 0;
	}
	printf("v4l2-grab: FAIL: %ld of %ld frames equal to the pattern %s, %ld not\n",
	       t.good, frames, uvc_pattern_name(pat), t.bad);
	return 1;
}
