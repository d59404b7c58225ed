// SPDX-License-Identifier: GPL-2.0
/*
 * proc.c - run a command with a deadline, output captured, events pumped.
 */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void out_append(struct proc_res *r, const char *p, size_t n)
{
	if (n >= AG_OUT_MAX) {
		p += n - (AG_OUT_MAX - 1);
		n = AG_OUT_MAX - 1;
	}
	if (r->len + n >= AG_OUT_MAX) {
		/* keep the tail: the end of the output says what went wrong */
		size_t drop = r->len + n - (AG_OUT_MAX - 1);

		memmove(r->out, r->out + drop, r->len - drop);
		r->len -= drop;
	}
	memcpy(r->out + r->len, p, n);
	r->len += n;
	r->out[r->len] = '\0';
}

int proc_run(char *const argv[], uint64_t deadline_us, struct proc_res *r)
{
	int pfd[2], status = 0;
	bool exited = false, eof = false;
	uint64_t exit_at = 0, eof_at = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->out = malloc(AG_OUT_MAX);
	if (!r->out)
		return -ENOMEM;
	r->out[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC)) {
		free(r->out);
		r->out = NULL;
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(pfd[0]);
		close(pfd[1]);
		free(r->out);
		r->out = NULL;
		return -e;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		if (null >= 0)
			dup2(null, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		_exit(127);
	}
	setpgid(pid, pid);	/* both sides, so kill(-pid) works at once */
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);

	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		uint64_t t = now_us();
		int wait_ms = 20;
		char buf[4096];
		ssize_t n;

		if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
			exited = true;
			exit_at = t;
		}
		/* a background grandchild may hold the pipe open: after
		 * the child exits, take what comes within 100 ms */
		if (exited && (eof || t > exit_at + 100000))
			break;
		if (!exited && t >= deadline_us) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			r->status = -1;
			close(pfd[0]);
			return 0;
		}
		if (!eof && poll(&p, 1, wait_ms) > 0) {
			while ((n = read(pfd[0], buf, sizeof(buf))) > 0)
				out_append(r, buf, (size_t)n);
			if (n == 0)
				eof = true;
		} else if (eof) {
			/* the child closed its output: it is most often
			 * exiting, so look again soon (a step's command ends
			 * some 20 ms sooner) */
			if (!eof_at)
				eof_at = t;
			usleep(t < eof_at + 50000 ? 1000 : wait_ms * 1000);
		}
		ev_pump(0);
	}
	close(pfd[0]);
	/* whatever it left behind in its group goes too */
	kill(-pid, SIGKILL);
	if (WIFEXITED(status))
		r->status = WEXITSTATUS(status);
	else
		r->status = 128 + WTERMSIG(status);
	return 0;
}

void proc_res_free(struct proc_res *r)
{
	free(r->out);
	r->out = NULL;
	r->len = 0;
}

const char *tail_lines(const char *text, size_t max_lines)
{
	const char *p;
	size_t n = 0, len = strlen(text);

	/* ignore trailing newlines */
	while (len && text[len - 1] == '\n')
		len--;
	for (p = text + len; p > text; p--) {
		if (p[-1] == '\n' && ++n == max_lines)
			break;
	}
	return p;
}
