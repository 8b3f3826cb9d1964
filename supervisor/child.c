/*
 * child.c - one child process of the supervisor: finding its executable,
 * fork and exec with its fds wired, its control channel's buffers,
 * signalling, and what its wait status means. Exec failure comes back
 * through a close-on-exec pipe, so it is known, not guessed from an early
 * exit. Reaping (waitpid) is main.c's: it owns SIGCHLD. Never exits.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p2o.h"
#include "supervisor.h"
#include "xio.h"

static char *
exe_in(const char *dir, size_t dirlen, const char *name)
{
	struct sbuf p = SBUF_INIT;

	if (dirlen == 0)
		sbuf_adds(&p, ".");
	else
		sbuf_add(&p, dir, dirlen);
	sbuf_addc(&p, '/');
	sbuf_adds(&p, name);
	if (access(p.buf, X_OK) == 0)
		return p.buf;
	sbuf_release(&p);
	return NULL;
}

char *
sv_find_exe(const char *name)
{
	char self[PATH_MAX], *slash, *found;
	const char *path, *p, *colon;
	ssize_t n;

	/* the tools of one build or one installation belong together */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL &&
		    (found = exe_in(self, (size_t)(slash - self), name)) != NULL)
			return found;
	}
	if ((path = getenv("PATH")) == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = colon + 1) {
		colon = strchrnul(p, ':');
		if ((found = exe_in(p, (size_t)(colon - p), name)) != NULL)
			return found;
		if (*colon == '\0')
			return NULL;
	}
}

void
sv_child_init(struct sv_child *c, const char *name, char *path)
{
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->path = path;
	c->ctl_rfd = c->ctl_wfd = -1;
	c->log.fd = -1;
	c->rd.fd = -1;
}

/*
 * Between fork and exec: only async-signal-safe calls. fds[i] becomes fd i
 * (closed when fds[i] is -1). Each source is first copied above the
 * targets so that wiring one target cannot clobber another's source.
 */
static void __attribute__((noreturn))
child_exec(const char *path, char *const argv[], char *const envp[],
    const int fds[SV_CHILD_FDS], int errfd, pid_t parent)
{
	struct sigaction sa;
	sigset_t none;
	int hi[SV_CHILD_FDS], i, e;

	/* a terminal's ^C reaches the supervisor alone, which drains */
	setpgid(0, 0);
	/* a supervisor killed outright must not leave a pipeline behind */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1 || getppid() != parent)
		goto fail;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGPIPE, &sa, NULL);
	/* a SIGHUP is the supervisor's (reload): a stage, which would die
	 * of it, ignores it across the exec, whoever sends it */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (i = 0; i < SV_CHILD_FDS; i++) {
		hi[i] = -1;
		if (fds[i] != -1 &&
		    (hi[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 10)) == -1)
			goto fail;
	}
	for (i = 0; i < SV_CHILD_FDS; i++) {
		if (hi[i] != -1) {
			if (dup2(hi[i], i) == -1)
				goto fail;
		} else
			close(i);
	}
	if (envp != NULL)
		execve(path, argv, envp);
	else
		execv(path, argv);
fail:
	e = errno;
	(void)!write(errfd, &e, sizeof(e));
	_exit(127);
}

/* the label of the child's lines: "name", or "name[tag]" */
static void
log_name(const struct sv_child *c, char *buf, size_t len)
{
	if (c->tag != NULL)
		snprintf(buf, len, "%s[%s]", c->name, c->tag);
	else
		snprintf(buf, len, "%s", c->name);
}

/* the environment with P2O_LOG_SOURCE=tag in place of any it had: a heap
 * array of heap strings (env_free), built before the fork */
static char **
env_with_tag(const char *tag)
{
	extern char **environ;
	char **env;
	size_t n = 0, i, k = 0;

	while (environ[n] != NULL)
		n++;
	env = xcalloc(n + 2, sizeof(*env));
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "P2O_LOG_SOURCE=", 15) != 0)
			env[k++] = xstrdup(environ[i]);
	env[k] = xmalloc(strlen(tag) + 16);
	snprintf(env[k], strlen(tag) + 16, "P2O_LOG_SOURCE=%s", tag);
	env[k + 1] = NULL;
	return env;
}

static void
env_free(char **env)
{
	char **e;

	for (e = env; e != NULL && *e != NULL; e++)
		free(*e);
	free(env);
}

static void
close_fd(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

int
sv_child_spawn(struct sv_child *c, char *const argv[], enum sv_ctl mode,
    int in_fd, int out_fd, int fd4, int log_out, char *err, size_t errlen)
{
	int errp[2] = { -1, -1 }, logp[2] = { -1, -1 }, sp[2] = { -1, -1 };
	int inp[2] = { -1, -1 }, outp[2] = { -1, -1 }, fds[SV_CHILD_FDS];
	int e = 0;
	pid_t pid, parent = getpid();
	ssize_t n;
	char **envp = NULL, label[sizeof(c->log.name)];

	if (pipe2(errp, O_CLOEXEC) == -1 || pipe2(logp, O_CLOEXEC) == -1)
		goto syserr;
	if (mode == SV_CTL_FD3) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1)
			goto syserr;
	} else {
		if (pipe2(inp, O_CLOEXEC) == -1 || pipe2(outp, O_CLOEXEC) == -1)
			goto syserr;
		in_fd = inp[0];
		out_fd = outp[1];
	}
	fds[0] = in_fd;
	fds[1] = out_fd;
	fds[2] = logp[1];
	fds[3] = sp[1];
	fds[4] = fd4;
	/* the source its lines are about, when the process runs several */
	if (c->tag != NULL)
		envp = env_with_tag(c->tag);
	if ((pid = fork()) == -1)
		goto syserr;
	if (pid == 0)
		child_exec(c->path, argv, envp, fds, errp[1], parent);
	env_free(envp);
	envp = NULL;

	close_fd(&errp[1]);
	close_fd(&logp[1]);
	close_fd(&sp[1]);
	close_fd(&inp[0]);
	close_fd(&outp[1]);
	do
		n = read(errp[0], &e, sizeof(e));
	while (n == -1 && errno == EINTR);
	close_fd(&errp[0]);
	if (n > 0) {
		/* the child is gone already; collect it here, it was never
		 * a running stage */
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			;
		snprintf(err, errlen, "could not run '%s': %s", c->path,
		    strerror(e));
		goto fail;
	}

	c->pid = pid;
	c->state = SV_STARTING;
	c->exited = 0;
	c->exit_round = 0;
	c->signalled_ms = c->ctl_eof_ms = 0;
	if (mode == SV_CTL_FD3) {
		c->ctl_rfd = c->ctl_wfd = sp[0];
	} else {
		c->ctl_wfd = inp[1];
		c->ctl_rfd = outp[0];
	}
	set_nonblock(c->ctl_rfd, 1);
	set_nonblock(c->ctl_wfd, 1);
	set_nonblock(logp[0], 1);
	log_name(c, label, sizeof(label));
	sv_logpipe_init(&c->log, logp[0], log_out, label);
	frame_reader_init(&c->rd, c->ctl_rfd, mode == SV_CTL_FD3 ?
	    "control fd 3" : "ckpt stdout");
	/* control frames are small; a confused child gets no 64 MiB */
	c->rd.max = SV_CTL_FRAME_MAX;
	sbuf_init(&c->out);
	c->close_after = 0;
	return 0;

syserr:
	snprintf(err, errlen, "could not start '%s': %s", c->name,
	    strerror(errno));
	env_free(envp);
fail:
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	close_fd(&logp[0]);
	close_fd(&logp[1]);
	close_fd(&sp[0]);
	close_fd(&sp[1]);
	close_fd(&inp[0]);
	close_fd(&inp[1]);
	close_fd(&outp[0]);
	close_fd(&outp[1]);
	return -1;
}

int
sv_child_fork(struct sv_child *c, int (*fn)(void *), void *arg, int in_fd,
    int out_fd, int log_out, char *err, size_t errlen)
{
	struct sigaction sa;
	sigset_t none;
	int logp[2], code;
	pid_t pid, parent = getpid();
	char label[sizeof(c->log.name)];

	if (pipe2(logp, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "could not start '%s': %s", c->name,
		    strerror(errno));
		return -1;
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "could not start '%s': %s", c->name,
		    strerror(errno));
		close(logp[0]);
		close(logp[1]);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1 ||
		    getppid() != parent)
			_exit(P2O_EXIT_INTERNAL);
		/* no exec follows: the supervisor's handlers and every
		 * descriptor it holds must not live on in here, or a pipe
		 * end held open would keep its reader from ever seeing EOF */
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGCHLD, &sa, NULL);
		sa.sa_handler = SIG_IGN;
		sigaction(SIGPIPE, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(in_fd, 0) == -1 || dup2(out_fd, 1) == -1 ||
		    dup2(logp[1], 2) == -1)
			_exit(P2O_EXIT_INTERNAL);
		close_range(3, ~0U, 0);
		code = fn(arg);
		_exit(code);
	}
	close(logp[1]);
	c->pid = pid;
	c->state = SV_UP;
	c->exited = 0;
	c->exit_round = 0;
	c->signalled_ms = c->ctl_eof_ms = 0;
	c->ctl_rfd = c->ctl_wfd = -1;
	set_nonblock(logp[0], 1);
	log_name(c, label, sizeof(label));
	sv_logpipe_init(&c->log, logp[0], log_out, label);
	sbuf_init(&c->out);
	c->close_after = 0;
	return 0;
}

void
sv_child_kill(struct sv_child *c, int sig, long long now_ms)
{
	siginfo_t si;

	if (!sv_child_running(c))
		return;
	/* one that has exited already (not reaped yet) ended on its own:
	 * it must not be counted among those we stopped */
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	    si.si_pid == c->pid)
		return;
	if (kill(c->pid, sig) == 0 && c->signalled_ms == 0)
		c->signalled_ms = now_ms > 0 ? now_ms : 1;
	if (c->state != SV_DOWN)
		c->state = SV_STOPPING;
}

struct sbuf *
sv_child_out(struct sv_child *c)
{
	static struct sbuf dropped = SBUF_INIT;

	/* a child that can no longer be told anything: what is queued for
	 * it goes nowhere rather than accumulating */
	if (c->ctl_wfd == -1 || c->close_after) {
		sbuf_reset(&dropped);
		return &dropped;
	}
	return &c->out;
}

void
sv_child_close_ctl(struct sv_child *c)
{
	if (c->ctl_rfd == c->ctl_wfd)
		c->ctl_wfd = -1;
	close_fd(&c->ctl_rfd);
	close_fd(&c->ctl_wfd);
	frame_reader_release(&c->rd);
	c->rd.fd = -1;
	sbuf_reset(&c->out);
}

/* no more frames to the child: EOF on its side, our reading side kept */
static void
end_writes(struct sv_child *c)
{
	if (c->ctl_wfd == -1)
		return;
	if (c->ctl_wfd == c->ctl_rfd)
		shutdown(c->ctl_wfd, SHUT_WR);
	else
		close(c->ctl_wfd);
	c->ctl_wfd = -1;
}

int
sv_child_flush(struct sv_child *c)
{
	ssize_t n;

	while (c->ctl_wfd != -1 && c->out.len > 0) {
		n = xwrite(c->ctl_wfd, c->out.buf, c->out.len);
		if (n == -1) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			sbuf_reset(&c->out);
			end_writes(c);
			return -1;
		}
		sbuf_consume(&c->out, (size_t)n);
	}
	if (c->close_after && c->out.len == 0)
		end_writes(c);
	return 0;
}

void
sv_child_release(struct sv_child *c)
{
	sv_child_close_ctl(c);
	sbuf_release(&c->out);
	sv_logpipe_close(&c->log);
	c->state = SV_DOWN;
	c->pid = 0;
	c->close_after = 0;
}

int
sv_child_running(const struct sv_child *c)
{
	return c->pid > 0 && !c->exited;
}

int
sv_child_code(const struct sv_child *c)
{
	if (WIFEXITED(c->wstatus))
		return WEXITSTATUS(c->wstatus);
	if (WIFSIGNALED(c->wstatus))
		return -WTERMSIG(c->wstatus);
	return -1;
}

const char *
sv_child_describe(const struct sv_child *c, char *buf, size_t len)
{
	int code = sv_child_code(c);

	if (code >= 0)
		snprintf(buf, len, "exited with %d (%s)", code,
		    p2o_exit_name(code));
	else
		snprintf(buf, len, "was killed by signal %d (%s)", -code,
		    strsignal(-code));
	return buf;
}
