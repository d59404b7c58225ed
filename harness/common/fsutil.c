// SPDX-License-Identifier: GPL-2.0
/*
 * fsutil.c - file and folder helpers (see fsutil.h).
 */
#define _GNU_SOURCE
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int fs_mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	int n = snprintf(tmp, sizeof(tmp), "%s", path);

	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

int fs_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int rm_cb(const char *path, const struct stat *st, int flag,
		 struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void fs_rm_rf(const char *path)
{
	nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Read to end of file: one read() may return less than asked (a pipe, a
 * FIFO, a signal, a file that grows), and st_size is only a first guess
 * (0 for a FIFO).  The buffer grows by doubling, never past max + 1 bytes
 * of data, so a file of more than max bytes is seen as such.
 */
char *fs_read_file(const char *path, size_t max, size_t *len)
{
	struct stat st;
	size_t have = 0, cap;
	char *buf = NULL;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	cap = !fstat(fd, &st) && st.st_size > 0 &&
	      (unsigned long long)st.st_size <= max ? (size_t)st.st_size : 4096;
	for (;;) {
		ssize_t n;

		if (have == cap || !buf) {
			size_t ncap = !buf ? cap : cap > max / 2 ? max + 1 :
				      cap * 2;
			char *nb;

			if (buf && have > max) {
				err = EFBIG;
				goto err;
			}
			nb = realloc(buf, ncap + 1);	/* + the NUL */
			if (!nb) {
				err = ENOMEM;
				goto err;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			goto err;
		}
		if (!n)
			break;
		have += (size_t)n;
	}
	if (have > max) {
		err = EFBIG;
		goto err;
	}
	close(fd);
	buf[have] = '\0';
	if (len)
		*len = have;
	return buf;
err:
	free(buf);
	close(fd);
	errno = err;
	return NULL;
}

int fs_run_cmd(char *const argv[], const char *out_path,
	       const char *err_path)
{
	int status, fd;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (out_path) {
			fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
				_exit(127);
			close(fd);
		}
		if (err_path) {
			fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
				_exit(127);
			close(fd);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status))
		return WEXITSTATUS(status) == 127 ? -ENOEXEC :
		       WEXITSTATUS(status);
	return -EINTR;
}

int fs_read_small(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	buf[0] = '\0';
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (int)n;
}

int fs_write_small(const char *path, const char *val, int oflags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | oflags), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}
