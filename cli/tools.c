/*
 * tools.c - the other pg2osync programs, seen from the command: where
 * they are (beside this executable first, as the supervisor looks for its
 * stages, then $PATH), running one for what it prints (ckpt get: the
 * checkpoint is ckpt's to read), and exec (run: the supervisor).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "p2o.h"
#include "xio.h"

char *
tool_path(const char *name)
{
	char self[PATH_MAX], *slash, *p;
	ssize_t n;
	size_t len;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			len = (size_t)(slash - self) + 1 + strlen(name) + 1;
			p = xmalloc(len);
			snprintf(p, len, "%.*s/%s", (int)(slash - self), self,
			    name);
			if (access(p, X_OK) == 0)
				return p;
			free(p);
		}
	}
	return xstrdup(name);
}

int
tool_output(char *const argv[], struct sbuf *out, struct p2o_err *err)
{
	char buf[4096], *path;
	int fds[2], st, null;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) == -1)
		return p2o_fail(err, P2O_EXIT_INTERNAL, "pipe: %s",
		    strerror(errno));
	path = tool_path(argv[0]);
	if ((pid = fork()) == -1) {
		free(path);
		close(fds[0]);
		close(fds[1]);
		return p2o_fail(err, P2O_EXIT_INTERNAL, "fork: %s",
		    strerror(errno));
	}
	if (pid == 0) {
		if ((null = open("/dev/null", O_RDONLY)) >= 0)
			dup2(null, 0);
		dup2(fds[1], 1);
		execvp(path, argv);
		_exit(127);
	}
	free(path);
	close(fds[1]);
	for (;;) {
		n = read(fds[0], buf, sizeof(buf));
		if (n > 0) {
			sbuf_add(out, buf, (size_t)n);
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		break;
	}
	close(fds[0]);
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return p2o_fail(err, P2O_EXIT_INTERNAL, "waitpid: %s",
			    strerror(errno));
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

int
tool_exec(char **argv, struct p2o_err *err)
{
	char *path = tool_path(argv[0]);

	execvp(path, argv);
	p2o_fail(err, P2O_EXIT_INTERNAL, "could not run '%s': %s", path,
	    strerror(errno));
	free(path);
	return -1;
}
