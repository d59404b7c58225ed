// SPDX-License-Identifier: GPL-2.0
/*
 * pcm-io.c - play and record a counting pattern through an ALSA PCM device
 * in the guest, with the kernel's PCM ioctls (<sound/asound.h>) and no
 * alsa-lib, so it is one static binary the audio scenarios copy in with
 * `file ${build}/tools/pcm-io /usr/bin/pcm-io`.
 *
 *   pcm-io play DEV RATE CHANNELS FRAMES
 *	plays FRAMES frames of S16_LE where sample k (frames interleaved)
 *	is k mod 65536, then a quarter second of silence, and drains: a
 *	USB audio driver counts a frame played when it queues it, so the
 *	drain ends, and stops the stream, with the last URBs still on the
 *	way; the silence goes down with them instead of the data
 *   pcm-io capture DEV RATE CHANNELS FRAMES
 *	records FRAMES frames of S16_LE and checks that they count: sample
 *	j is (s0 + j) mod 65536 for the first sample s0, which starts a
 *	frame (s0 mod CHANNELS = 0); the stream may start anywhere, since
 *	what the device sent before the capture started is gone
 *   pcm-io check FILE CHANNELS FRAMES
 *	checks that FILE (what a gadget's `sink file` recorded) holds,
 *	after leading silence (all-zero frames), the FRAMES frames `play`
 *	sends, sample for sample; what follows them is not looked at
 *   pcm-io follows OUT-SIZES IN-SIZES PACKETS
 *	implicit feedback: OUT-SIZES and IN-SIZES are a gadget's `sizes
 *	file` of its isochronous OUT (playback) and IN (capture) endpoints,
 *	a packet's length a line.  Checks that the host sized its OUT
 *	packets after the IN packets it received: a run of at least PACKETS
 *	consecutive OUT packets equals, one for one, a run of IN packets,
 *	and holds at least two packets of another size than the usual one
 *	(else it says nothing: a host keeping its own clock sends one size
 *	too).  Packets before the run (sent before the feedback started)
 *	are not looked at.  Prints the run and its sizes.
 *
 * DEV is a PCM node, /dev/snd/pcmC0D0p or ...c.  Exit status 0 when the
 * data is right, 1 when it is not or an ioctl failed (said on stderr), 2
 * for usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sound/asound.h>

#define PERIOD_MIN	480	/* frames: 10 ms at 48 kHz */
#define PERIOD_MAX	4800
#define CHUNK		4800	/* frames per read or write call */
#define FRAMES_MAX	(10 * 1000 * 1000)

static int fail(const char *what)
{
	fprintf(stderr, "pcm-io: %s: %s\n", what, strerror(errno));
	return 1;
}

static struct snd_mask *hw_mask(struct snd_pcm_hw_params *p, int var)
{
	return &p->masks[var - SNDRV_PCM_HW_PARAM_FIRST_MASK];
}

static struct snd_interval *hw_interval(struct snd_pcm_hw_params *p, int var)
{
	return &p->intervals[var - SNDRV_PCM_HW_PARAM_FIRST_INTERVAL];
}

static void mask_only(struct snd_pcm_hw_params *p, int var, unsigned int bit)
{
	struct snd_mask *m = hw_mask(p, var);

	memset(m, 0, sizeof(*m));
	m->bits[bit / 32] = 1u << (bit % 32);
}

static void interval_range(struct snd_pcm_hw_params *p, int var,
			   unsigned int min, unsigned int max)
{
	struct snd_interval *i = hw_interval(p, var);

	memset(i, 0, sizeof(*i));
	i->min = min;
	i->max = max;
	i->integer = 1;
}

/* Open DEV and set interleaved S16_LE at rate and channels; the kernel
 * picks the rest (the smallest period in range, the largest buffer). */
static int pcm_open(const char *dev, unsigned int rate, unsigned int ch)
{
	struct snd_pcm_hw_params p;
	int fd, var;

	fd = open(dev, O_RDWR);
	if (fd < 0) {
		fail(dev);
		return -1;
	}
	memset(&p, 0, sizeof(p));
	for (var = SNDRV_PCM_HW_PARAM_FIRST_MASK;
	     var <= SNDRV_PCM_HW_PARAM_LAST_MASK; var++)
		memset(hw_mask(&p, var), 0xff, sizeof(struct snd_mask));
	for (var = SNDRV_PCM_HW_PARAM_FIRST_INTERVAL;
	     var <= SNDRV_PCM_HW_PARAM_LAST_INTERVAL; var++)
		interval_range(&p, var, 0, UINT_MAX);
	for (var = SNDRV_PCM_HW_PARAM_FIRST_INTERVAL;
	     var <= SNDRV_PCM_HW_PARAM_LAST_INTERVAL; var++)
		hw_interval(&p, var)->integer = 0;
	p.rmask = ~0u;
	mask_only(&p, SNDRV_PCM_HW_PARAM_ACCESS,
		  SNDRV_PCM_ACCESS_RW_INTERLEAVED);
	mask_only(&p, SNDRV_PCM_HW_PARAM_FORMAT, SNDRV_PCM_FORMAT_S16_LE);
	mask_only(&p, SNDRV_PCM_HW_PARAM_SUBFORMAT, SNDRV_PCM_SUBFORMAT_STD);
	interval_range(&p, SNDRV_PCM_HW_PARAM_CHANNELS, ch, ch);
	interval_range(&p, SNDRV_PCM_HW_PARAM_RATE, rate, rate);
	interval_range(&p, SNDRV_PCM_HW_PARAM_PERIOD_SIZE, PERIOD_MIN,
		       PERIOD_MAX);
	if (ioctl(fd, SNDRV_PCM_IOCTL_HW_PARAMS, &p) < 0) {
		fail("HW_PARAMS (S16_LE, that rate and channel count)");
		close(fd);
		return -1;
	}
	printf("pcm-io: %s: %u Hz, %u channels, period %u frames, buffer %u frames\n",
	       dev, rate, ch,
	       hw_interval(&p, SNDRV_PCM_HW_PARAM_PERIOD_SIZE)->min,
	       hw_interval(&p, SNDRV_PCM_HW_PARAM_BUFFER_SIZE)->min);
	if (ioctl(fd, SNDRV_PCM_IOCTL_PREPARE) < 0) {
		fail("PREPARE");
		close(fd);
		return -1;
	}
	return fd;
}

static int play(const char *dev, unsigned int rate, unsigned int ch,
		unsigned long frames)
{
	int16_t *buf = malloc((size_t)CHUNK * ch * sizeof(*buf));
	unsigned long done = 0, k = 0, n, i, total;
	struct snd_xferi x;
	int fd;

	if (!buf)
		return fail("malloc");
	fd = pcm_open(dev, rate, ch);
	if (fd < 0)
		return 1;
	total = frames + rate / 4;
	while (done < total) {
		n = total - done < CHUNK ? total - done : CHUNK;
		for (i = 0; i < n * ch; i++)
			buf[i] = k + i < frames * ch ?
				 (int16_t)(uint16_t)(k + i) : 0;
		x = (struct snd_xferi){ .buf = buf, .frames = n };
		if (ioctl(fd, SNDRV_PCM_IOCTL_WRITEI_FRAMES, &x) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "pcm-io: WRITEI_FRAMES after %lu frames: %s%s\n",
				done, strerror(errno),
				errno == EPIPE ? " (underrun)" : "");
			return 1;
		}
		/* a blocking write may still come back short */
		done += x.result;
		k += (unsigned long)x.result * ch;
	}
	if (ioctl(fd, SNDRV_PCM_IOCTL_DRAIN) < 0)
		return fail("DRAIN");
	close(fd);
	free(buf);
	printf("pcm-io: played %lu frames and %lu of silence\n", frames,
	       done - frames);
	return 0;
}

static int capture(const char *dev, unsigned int rate, unsigned int ch,
		   unsigned long frames)
{
	int16_t *buf = malloc((size_t)CHUNK * ch * sizeof(*buf));
	unsigned long done = 0, j = 0, n, i, bad = 0;
	uint16_t s0 = 0, first = 0, want, got;
	struct snd_xferi x;
	int fd;

	if (!buf)
		return fail("malloc");
	fd = pcm_open(dev, rate, ch);
	if (fd < 0)
		return 1;
	while (done < frames) {
		n = frames - done < CHUNK ? frames - done : CHUNK;
		x = (struct snd_xferi){ .buf = buf, .frames = n };
		if (ioctl(fd, SNDRV_PCM_IOCTL_READI_FRAMES, &x) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "pcm-io: READI_FRAMES after %lu frames: %s%s\n",
				done, strerror(errno),
				errno == EPIPE ? " (overrun)" : "");
			return 1;
		}
		if (!done && x.result) {
			s0 = (uint16_t)buf[0];
			first = s0;
			if (s0 % ch) {
				fprintf(stderr, "pcm-io: the first sample, %u, is not a frame's first (%u channels)\n",
					s0, ch);
				return 1;
			}
		}
		for (i = 0; i < (unsigned long)x.result * ch; i++, j++) {
			want = (uint16_t)(s0 + j);
			got = (uint16_t)buf[i];
			if (got != want) {
				/* say where the stream jumps, then count on
				 * from there: a lost packet shows as a jump
				 * of its size, a late one as two */
				if (++bad <= 10)
					fprintf(stderr, "pcm-io: sample %lu (frame %lu) is %u, expected %u (counting from %u)\n",
						j, j / ch, got, want, s0);
				s0 = (uint16_t)(got - j);
			}
		}
		done += x.result;
	}
	ioctl(fd, SNDRV_PCM_IOCTL_DROP);
	close(fd);
	free(buf);
	if (bad) {
		fprintf(stderr, "pcm-io: %lu frames captured, %lu jumps in the count\n",
			done, bad);
		return 1;
	}
	printf("pcm-io: captured %lu frames, counting from %u\n", done, first);
	return 0;
}

static int check(const char *path, unsigned int ch, unsigned long frames)
{
	size_t fb = ch * 2, off = 0, i, n, skipped;
	unsigned long need = frames * ch, s0;
	struct stat st;
	uint8_t *data;
	uint16_t v;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		return fail(path);
	data = malloc(st.st_size + 1);
	if (!data)
		return fail("malloc");
	n = 0;
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, data + n, st.st_size - n);

		if (r <= 0)
			break;
		n += r;
	}
	close(fd);
	/* leading silence: whole zero frames */
	while (off + fb <= n) {
		for (i = 0; i < fb && !data[off + i]; i++)
			;
		if (i < fb)
			break;
		off += fb;
	}
	skipped = off / fb;
	if (off + 2 > n) {
		fprintf(stderr, "pcm-io: %s: %zu bytes, all silence\n", path, n);
		return 1;
	}
	/* mono: the first sample, 0, went with the silence */
	s0 = (uint16_t)(data[off] | data[off + 1] << 8);
	if (s0 > 1 || (s0 == 1 && ch != 1)) {
		fprintf(stderr, "pcm-io: %s: after %zu frames of silence the first sample is %lu, expected 0\n",
			path, skipped, s0);
		return 1;
	}
	if ((n - off) / 2 < need - s0) {
		fprintf(stderr, "pcm-io: %s: %zu samples after %zu frames of silence, expected %lu\n",
			path, (n - off) / 2, skipped, need - s0);
		return 1;
	}
	for (i = s0; i < need; i++, off += 2) {
		v = (uint16_t)(data[off] | data[off + 1] << 8);
		if (v != (uint16_t)i) {
			fprintf(stderr, "pcm-io: %s: sample %zu (frame %zu) is %u, expected %u\n",
				path, i, i / ch, v, (uint16_t)i);
			return 1;
		}
	}
	printf("pcm-io: %s: %lu frames sample-exact after %zu frames of silence\n",
	       path, frames, skipped);
	free(data);
	return 0;
}

/* A sizes file: one decimal a line.  Returns the count, or -1 (said). */
static long read_sizes(const char *path, uint32_t **out)
{
	size_t n = 0, cap = 0;
	unsigned long v;
	char line[32], *end;
	uint32_t *a = NULL, *na;
	FILE *f = fopen(path, "r");

	if (!f) {
		fail(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		errno = 0;
		v = strtoul(line, &end, 10);
		if (errno || end == line || (*end && *end != '\n') ||
		    v > UINT32_MAX) {
			fprintf(stderr, "pcm-io: %s:%zu: not a packet length: %s",
				path, n + 1, line);
			goto bad;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			na = realloc(a, cap * sizeof(*a));
			if (!na) {
				fail("realloc");
				goto bad;
			}
			a = na;
		}
		a[n++] = (uint32_t)v;
	}
	fclose(f);
	*out = a;
	return (long)n;
bad:
	fclose(f);
	free(a);
	return -1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The most frequent of n values (n > 0). */
static uint32_t most_common(const uint32_t *v, long n)
{
	uint32_t *c = malloc(n * sizeof(*c)), best;
	long i, run = 0, best_run = 0;

	if (!c)
		return v[0];
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_u32);
	best = c[0];
	for (i = 0; i < n; i++) {
		run = i && c[i] == c[i - 1] ? run + 1 : 1;
		if (run > best_run) {
			best_run = run;
			best = c[i];
		}
	}
	free(c);
	return best;
}

#define ANCHORS_MAX	16	/* OUT packets of another size tried */
#define RARE_MIN	2	/* such packets a run must hold */

/* The longest run of OUT packets o[j] equal to IN packets s[j + d]. */
static long run_at(const uint32_t *o, long m, const uint32_t *s, long n,
		   long d, long *best_j)
{
	long j, run = 0, best = 0, start = 0;

	for (j = d < 0 ? -d : 0; j < m && j + d < n; j++) {
		if (o[j] != s[j + d]) {
			run = 0;
			continue;
		}
		if (!run)
			start = j;
		if (++run > best) {
			best = run;
			*best_j = start;
		}
	}
	return best;
}

/*
 * The longest run of OUT packets equal to IN packets at one offset d (OUT
 * packet j is IN packet j + d).  The offsets tried put one of the first
 * ANCHORS_MAX OUT packets of another size than the usual one on an IN
 * packet of that size: the packets the host sent before the feedback
 * started may be of any size, and a run of one size only proves nothing,
 * so it must hold RARE_MIN packets of another size.
 */
static int follows(const char *out_path, const char *in_path,
		   unsigned long want)
{
	uint32_t *o = NULL, *s = NULL, usual;
	long m = read_sizes(out_path, &o), n = read_sizes(in_path, &s);
	long j, k, a = 0, run, run_j = 0, best = 0, best_j = 0, best_d = 0;
	unsigned long n_rare = 0;
	int ret = 1;

	if (m <= 0 || n <= 0) {
		if (m == 0 || n == 0)
			fprintf(stderr, "pcm-io: %s: no packets\n",
				m == 0 ? out_path : in_path);
		goto out;
	}
	usual = most_common(o, m);
	for (j = 0; j < m && a < ANCHORS_MAX; j++) {
		if (o[j] == usual)
			continue;
		a++;
		for (k = 0; k < n; k++) {
			if (s[k] != o[j])
				continue;
			run = run_at(o, m, s, n, k - j, &run_j);
			if (run > best) {
				best = run;
				best_j = run_j;
				best_d = k - j;
			}
		}
	}
	if (!a) {
		fprintf(stderr, "pcm-io: %s: %ld packets, all of %u bytes: the host kept its own clock\n",
			out_path, m, usual);
		goto out;
	}
	for (j = best_j; j < best_j + best; j++)
		n_rare += o[j] != usual;
	if ((unsigned long)best < want || n_rare < RARE_MIN) {
		fprintf(stderr, "pcm-io: the longest run of OUT packets equal to IN packets is %ld (OUT %ld.., IN %ld..), %lu of them not of %u bytes; expected at least %lu, %d of them\n",
			best, best_j, best_j + best_d, n_rare, usual, want,
			RARE_MIN);
		goto out;
	}
	printf("pcm-io: OUT packets %ld..%ld of %ld follow IN packets %ld..%ld of %ld one for one: %lu of them not of the usual %u bytes\n",
	       best_j, best_j + best - 1, m, best_j + best_d,
	       best_j + best_d + best - 1, n, n_rare, usual);
	ret = 0;
out:
	free(o);
	free(s);
	return ret;
}

static int number(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || !*out || *out > max ? -1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long rate, ch, frames;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "check") &&
	    !number(argv[3], 32, &ch) && !number(argv[4], FRAMES_MAX, &frames))
		return check(argv[2], ch, frames);
	if (argc == 5 && !strcmp(argv[1], "follows") &&
	    !number(argv[4], FRAMES_MAX, &frames))
		return follows(argv[2], argv[3], frames);
	if (argc != 6 || number(argv[3], 768000, &rate) ||
	    number(argv[4], 32, &ch) || number(argv[5], FRAMES_MAX, &frames))
		goto usage;
	if (!strcmp(argv[1], "play"))
		return play(argv[2], rate, ch, frames);
	if (!strcmp(argv[1], "capture"))
		return capture(argv[2], rate, ch, frames);
usage:
	fprintf(stderr, "usage: pcm-io play|capture DEV RATE CHANNELS FRAMES\n"
		"       pcm-io check FILE CHANNELS FRAMES\n"
		"       pcm-io follows OUT-SIZES IN-SIZES PACKETS\n");
	return 2;
}
