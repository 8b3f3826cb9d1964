/*
 * t-supervisor-e2e - pg2osync-supervise end to end with stand-in stages
 * (tests/helper/fake-stage.sh linked as ckpt, capture-pg, shaper and
 * writer next to a copy of the supervisor, which finds its tools there).
 * No servers. Covers: the drain on SIGTERM and the acks it leaves, restart
 * from the stored checkpoint, permanent exit codes, giving up after
 * reconnect_max, a foreign protocol, exec failure, /metrics and /healthz.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xio.h"
#include "tap.h"
#include "free-port.h"

static char tmp[64], bin[128], state[128], cfg[128], logpath[128];
static char helper[PATH_MAX + 64], sv_exe[PATH_MAX + 64];
static int port;

static char *
slurp(const char *path)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd == -1 ? 0 : read_in_full(fd, buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (fd != -1)
		close(fd);
	return buf;
}

static void
spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

static char *
statefile(const char *name)
{
	static char p[256];

	snprintf(p, sizeof(p), "%s/%s", state, name);
	return p;
}

static int
sh(const char *fmt, const char *arg)
{
	char cmd[2 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), fmt, arg);
	return system(cmd);
}

/* source.reconnect_backoff_ms for the next setup (0: the default) */
static int backoff_ms;

static void
setup(int reconnect_max)
{
	static const char *const tools[] = { "ckpt", "capture-pg", "shaper",
	    "writer", "loader" };
	char p[256], text[2 * PATH_MAX + 256], backoff[64] = "";
	size_t i;

	if (backoff_ms > 0)
		snprintf(backoff, sizeof(backoff),
		    "  reconnect_backoff_ms: %d\n", backoff_ms);
	if (tmp[0])
		sh("rm -rf '%s'", tmp);
	snprintf(tmp, sizeof(tmp), "/tmp/t-supervisor-e2e.XXXXXX");
	if (mkdtemp(tmp) == NULL)
		exit(1);
	snprintf(bin, sizeof(bin), "%s/bin", tmp);
	snprintf(state, sizeof(state), "%s/state", tmp);
	snprintf(cfg, sizeof(cfg), "%s/cfg.yaml", tmp);
	snprintf(logpath, sizeof(logpath), "%s/sv.log", tmp);
	mkdir(bin, 0755);
	mkdir(state, 0755);
	snprintf(p, sizeof(p), "%s/pg2osync-supervise", bin);
	snprintf(text, sizeof(text), "cp '%s' '%s'", sv_exe, p);
	if (system(text) != 0)
		exit(1);
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", bin, tools[i]);
		symlink(helper, p);
	}
	snprintf(text, sizeof(text),
	    "source:\n  url: postgres://u@127.0.0.1:1/db\n"
	    "  reconnect_max: %d\n%s"
	    "target:\n  url: http://127.0.0.1:1\n"
	    "sync:\n  items:\n    table: public.items\n"
	    "engine:\n  checkpoint_interval_ms: 50\n"
	    "metrics:\n  bind: 127.0.0.1:%d\n", reconnect_max, backoff, port);
	spit(cfg, text);
}

static pid_t
start_with(const char *const *extra)
{
	char exe[256];
	const char *argv[16];
	pid_t pid;
	int fd, n = 0;

	snprintf(exe, sizeof(exe), "%s/pg2osync-supervise", bin);
	if ((pid = fork()) == 0) {
		fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		dup2(fd, 1);
		setenv("FAKE_DIR", state, 1);
		setenv("P2O_LOG_LEVEL", "debug", 1);
		/* a sanitizer build ends with the memory it held at a fatal
		 * exit, which is no leak; what it reports changes the code */
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
		argv[n++] = exe;
		argv[n++] = "-c";
		argv[n++] = cfg;
		while (extra && *extra && n < 15)
			argv[n++] = *extra++;
		argv[n] = NULL;
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static pid_t
start(void)
{
	return start_with(NULL);
}

/* user + system CPU time of a process, in clock ticks */
static long
cpu_ticks(pid_t pid)
{
	char path[64], *p;
	long utime = 0, stime = 0;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	p = slurp(path);
	/* the command name may hold spaces: count fields after its ')' */
	if ((p = strrchr(p, ')')) == NULL)
		return -1;
	for (i = 0; i < 12 && p; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p + 1, "%ld %ld", &utime, &stime) != 2)
		return -1;
	return utime + stime;
}

/* exit code, or -1 if it had to be killed after limit_ms */
static int
wait_exit(pid_t pid, int limit_ms)
{
	int st, i;

	for (i = 0; i < limit_ms / 10; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 +
			    WTERMSIG(st);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* wait until the log holds text */
static int
wait_log(const char *text, int limit_ms)
{
	int i;

	for (i = 0; i < limit_ms / 10; i++) {
		if (strstr(slurp(logpath), text) != NULL)
			return 1;
		usleep(10000);
	}
	return 0;
}

static char *
http_get(const char *path)
{
	static char buf[1 << 17];	/* the whole /metrics page */
	struct sockaddr_in sin;
	char req[256];
	ssize_t n;
	size_t got = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	buf[0] = '\0';
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		close(fd);
		return buf;
	}
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n",
	    path);
	write_in_full(fd, req, strlen(req));
	while ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(fd);
	return buf;
}

/* each line of acks is a line of puts: nothing acked that was not stored */
static int
acks_were_stored(void)
{
	char acks[4096], puts[4096], line[64], *p, *nl;

	snprintf(acks, sizeof(acks), "%s", slurp(statefile("acks")));
	/* a leading newline makes every put line "\n<pos>\n" */
	snprintf(puts, sizeof(puts), "\n%s", slurp(statefile("puts")));
	if (acks[0] == '\0')
		return 0;
	for (p = acks; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		snprintf(line, sizeof(line), "\n%.*s\n", (int)(nl - p), p);
		if (strstr(puts, line) == NULL)
			return 0;
	}
	return 1;
}

static void
test_drain(void)
{
	pid_t pid;
	char *s;

	setup(3);
	pid = start();
	ok(wait_log("pipeline up", 5000), "drain: the pipeline comes up");
	ok(wait_log("checkpoint stored at 300", 5000),
	    "the three commits are stored");
	s = http_get("/healthz");
	ok(strncmp(s, "HTTP/1.1 200", 12) == 0 &&
	    strstr(s, "\r\n\r\nalive: streaming\n"),
	    "/healthz says alive while up");
	s = http_get("/ready");
	ok(strncmp(s, "HTTP/1.1 200", 12) == 0 &&
	    strstr(s, "\r\n\r\nready: streaming\n"), "and /ready ready");
	s = http_get("/metrics");
	ok(strstr(s, "\npg2osync_events_total{source=\"postgres:pg2osync\",type=\"insert\"} 3\n") != NULL,
	    "/metrics carries the capture's stats");
	ok(strstr(s, "\npg2osync_checkpoint_position{source=\"postgres:pg2osync\"} 300\n") != NULL,
	    "and the stored position");
	ok(strstr(s, "\npg2osync_up{source=\"postgres:pg2osync\"} 1\n") != NULL, "and up 1");
	ok(strstr(s, "\npg2osync_commit_to_indexed_seconds_count{source=\"postgres:pg2osync\"} 3\n") !=
	    NULL, "three latencies observed");
	kill(pid, SIGTERM);
	is_int(wait_exit(pid, 10000), 0, "SIGTERM: drained, exit 0");
	s = slurp(statefile("acks"));
	ok(strlen(s) > 0 && strcmp(s + strlen(s) - 4, "300\n") == 0,
	    "the capture's last ack is 300");
	is_str(slurp(statefile("ckpt.pos")), "300\n", "the checkpoint is 300");
	ok(acks_were_stored(), "every ack was a position ckpt had stored");
	is_str(slurp(statefile("pipe.writer")), "1048576\n",
	    "the pipe between two stages holds 1 MiB, not 64 KiB");
	s = slurp(logpath);
	ok(strstr(s, "capture-pg: info: fd 3 closed, exiting") != NULL,
	    "the capture saw fd 3 close after its ack");
	ok(strstr(s, "stopped after draining; checkpoint at 300") != NULL,
	    "the supervisor says where it stopped");
}

static void
test_restart_from_checkpoint(void)
{
	pid_t pid;
	char *s;

	/* a backoff long enough that /ready is asked inside it on a loaded
	 * machine */
	backoff_ms = 3000;
	setup(5);
	backoff_ms = 0;
	spit(statefile("ckpt.pos"), "4096\n");
	/* first start: the writer fails after its hello */
	spit(statefile("behaviour.writer"), "exit:75\n");
	pid = start();
	ok(wait_log("restarting the pipeline in 3.0 s (failure 1 of 5)",
	    5000), "a temporary failure restarts after the backoff");
	s = http_get("/healthz");
	ok(strncmp(s, "HTTP/1.1 200", 12) == 0 &&
	    strstr(s, "\r\n\r\nalive: backoff\n"),
	    "in the backoff /healthz says alive: a liveness probe lets it "
	    "recover");
	s = http_get("/ready");
	ok(strncmp(s, "HTTP/1.1 503", 12) == 0 &&
	    strstr(s, "not ready: backoff: starting again in ") &&
	    strstr(s, "writer exited with 75"), "and /ready says why not: %.*s",
	    (int)strcspn(strstr(s, "\r\n\r\n") ? strstr(s, "\r\n\r\n") + 4 : s,
	    "\n"), strstr(s, "\r\n\r\n") ? strstr(s, "\r\n\r\n") + 4 : s);
	ok(wait_log("pipeline up", 5000), "the second start comes up");
	ok(wait_log("checkpoint stored at 4396", 5000),
	    "and stores past the checkpoint it started from");
	s = http_get("/metrics");
	ok(strstr(s, "\npg2osync_reconnects_total{source=\"postgres:pg2osync\"} 1\n") != NULL,
	    "one reconnect counted");
	ok(strstr(s, "\npg2osync_events_total{source=\"postgres:pg2osync\",type=\"insert\"} 6\n") != NULL,
	    "events summed across the two incarnations");
	kill(pid, SIGTERM);
	is_int(wait_exit(pid, 10000), 0, "drained");
	s = slurp(statefile("argv.capture-pg"));
	ok(strstr(s, "--start-pos 0/1000 --start-token 4096\n") != NULL,
	    "the capture started from the stored LSN");
	ok(strstr(s, "--start-pos 0/") != NULL && strchr(s, '\n') &&
	    strchr(strchr(s, '\n') + 1, '\n') != NULL,
	    "twice");
	s = slurp(logpath);
	ok(strstr(s, "writer: error: told to exit 75") <
	    strstr(s, "stopping the pipeline: writer exited with 75"),
	    "the stage's own message comes before the supervisor's");
	ok(strstr(slurp(statefile("puts")), "4096\n") == NULL,
	    "the replayed position was never put again");
}

static void
test_permanent(const char *tool, const char *behaviour, int code,
    const char *msg)
{
	pid_t pid;
	char path[64];

	setup(5);
	snprintf(path, sizeof(path), "behaviour.%s", tool);
	spit(statefile(path), behaviour);
	pid = start();
	is_int(wait_exit(pid, 10000), code, "%s %.*s: the supervisor exits %d",
	    tool, (int)strcspn(behaviour, "\n"), behaviour, code);
	ok(strstr(slurp(logpath), msg) != NULL, "saying '%s'", msg);
	ok(strstr(slurp(logpath), "restarting") == NULL, "without a restart");
}

static void
test_give_up(void)
{
	pid_t pid;
	char *s;

	setup(3);
	spit(statefile("behaviour.capture-pg"), "exit:75\nexit:75\nexit:75\n");
	pid = start();
	is_int(wait_exit(pid, 15000), 75, "three failures: exit 75");
	s = slurp(logpath);
	ok(strstr(s, "(failure 1 of 3)") && strstr(s, "(failure 2 of 3)") &&
	    strstr(s, "restarting the pipeline in 2.0 s"),
	    "two restarts, the second after 2 s");
	ok(strstr(s, "giving up after 3 consecutive failures; the last: "
	    "capture-pg exited with 75 (tempfail)") != NULL, "then gives up");
}

/*
 * Waiting out restart backoffs costs nothing: over the 1 + 2 + 4 + 8 s of
 * four backoffs (and the three restarts between them) the supervisor
 * uses well under 0.1 s of CPU.
 */
static void
test_backoff_cpu(void)
{
	long t0, t1, hz = sysconf(_SC_CLK_TCK);
	pid_t pid;

	setup(5);
	spit(statefile("behaviour.capture-pg"),
	    "exit:75\nexit:75\nexit:75\nexit:75\nexit:75\n");
	pid = start();
	ok(wait_log("(failure 1 of 5)", 5000), "first failure");
	t0 = cpu_ticks(pid);
	ok(wait_log("(failure 4 of 5)", 15000), "fourth failure, 7 s later");
	usleep(7500 * 1000);	/* most of the 8 s backoff */
	t1 = cpu_ticks(pid);
	ok(t0 >= 0 && t1 >= 0 && (t1 - t0) * 10 < hz,
	    "CPU over 14.5 s of backoffs: %ld ticks of %ld a second, under "
	    "0.1 s", t1 - t0, hz);
	is_int(wait_exit(pid, 5000), 75, "then gives up");
}

static void
test_hello_timeout(void)
{
	pid_t pid;

	setup(3);
	spit(statefile("behaviour.capture-pg"), "nohello\n");
	setenv("P2O_HELLO_TIMEOUT_S", "1", 1);
	pid = start();
	unsetenv("P2O_HELLO_TIMEOUT_S");
	ok(wait_log("'capture-pg' did not say hello within 1 s", 5000),
	    "a capture that never says hello is timed out");
	ok(wait_log("restarting the pipeline in 1.0 s (failure 1 of 3)", 3000),
	    "and the pipeline restarted");
	ok(wait_log("pipeline up", 5000), "the next capture says hello");
	kill(pid, SIGTERM);
	is_int(wait_exit(pid, 10000), 0, "drained");
}

/*
 * A stage replaced by a program that knows nothing of the control channel
 * (a shell filter): the pipeline is up once it runs, and positions are
 * still acknowledged only after they were stored.
 */
static void
test_swapped_stage(void)
{
	const char *args[] = { "--stage", NULL, NULL };
	char p[256], arg[300];
	pid_t pid;

	setup(3);
	snprintf(p, sizeof(p), "%s/my-shaper", tmp);
	spit(p, "#!/bin/sh\nexec 3>&-\necho \"$@\" > \"$FAKE_DIR/argv.mine\"\n"
	    "exec cat\n");
	chmod(p, 0755);
	snprintf(arg, sizeof(arg), "shaper=%s", p);
	args[1] = arg;
	pid = start_with(args);
	ok(wait_log("stage 'shaper' runs '", 3000), "the replacement is named");
	ok(wait_log("pipeline up", 5000), "up without the replacement's hello");
	ok(wait_log("checkpoint stored at 300", 5000),
	    "the writer's positions are stored");
	kill(pid, SIGTERM);
	is_int(wait_exit(pid, 10000), 0, "drained");
	ok(acks_were_stored(), "every ack was stored first");
	ok(strstr(slurp(statefile("argv.mine")), "-c ") != NULL,
	    "the replacement got the stage's argv");
	args[1] = "shaper=/nonexistent/prog";
	pid = start_with(args);
	is_int(wait_exit(pid, 5000), 64, "a replacement that is not there: 64");
	args[1] = "nosuch=/bin/cat";
	pid = start_with(args);
	is_int(wait_exit(pid, 5000), 64, "an unknown stage: 64");
}

/*
 * A table to load: the loader starts once the capture streams, gets the
 * tables ckpt listed, and each of its marks reaches ckpt (through the
 * writer, once durable) before the confirm that lets the next wave start;
 * its exit 0 ends the load, not the pipeline.
 */
static void
test_load(void)
{
	pid_t pid;
	char *s;

	setup(3);
	spit(statefile("load.tables"), "[{\"table\":\"public.items\","
	    "\"progress\":{\"at\":\"public.items#4\"}}]");
	spit(statefile("behaviour.loader"), "waves:3\n");
	pid = start();
	ok(wait_log("1 table to load beside the stream", 5000),
	    "ckpt's load frame is read");
	ok(wait_log("'public.items' resumes its initial load", 5000),
	    "and says the table resumes");
	ok(wait_log("'loader' finished: every table is loaded", 10000),
	    "the loader ran its waves and finished");
	is_str(slurp(statefile("marked")),
	    "public.items#1\npublic.items#2\npublic.items#3\n",
	    "ckpt stored each mark, in order");
	ok(strstr(slurp(statefile("load.got")), "\"progress\":{\"at\":"
	    "\"public.items#4\"}") != NULL,
	    "the loader got the stored progress");
	ok(strstr(slurp(statefile("argv.shaper")), "--load-fd 4") != NULL,
	    "the shaper reads copy rows on fd 4");
	s = slurp(statefile("argv.capture-pg"));
	ok(strstr(s, "-c ") != NULL && strchr(s, '\n') == strrchr(s, '\n'),
	    "one incarnation: the loader's exit 0 did not restart anything");
	ok(wait_log("checkpoint stored at 300", 5000),
	    "the stream goes on after the load");
	kill(pid, SIGTERM);
	is_int(wait_exit(pid, 10000), 0, "drained");

	/* a loader that fails restarts the pipeline, as any stage does */
	setup(2);
	spit(statefile("load.tables"), "[{\"table\":\"public.items\"}]");
	spit(statefile("behaviour.loader"), "exit:75\nexit:75\n");
	pid = start();
	is_int(wait_exit(pid, 15000), 75, "a failing loader: restarts, gives up");
	ok(strstr(slurp(logpath), "the last: loader exited with 75") != NULL,
	    "named as the cause");

	/*
	 * A loader killed inside a frame: the shaper's 65 for its load
	 * descriptor is the loader's doing, not bad data to stop for.
	 */
	setup(3);
	spit(statefile("load.tables"), "[{\"table\":\"public.items\"}]");
	spit(statefile("behaviour.loader"), "torn\n");
	pid = start();
	ok(wait_log("restarting the pipeline in 1.0 s (failure 1 of 3): "
	    "loader was killed by signal 9", 10000),
	    "a loader killed mid-frame restarts the pipeline, named the cause");
	ok(wait_log("'loader' finished: every table is loaded", 15000),
	    "the next loader finishes");
	kill(pid, SIGTERM);
	is_int(wait_exit(pid, 10000), 0, "drained");
}

static void
test_exec_failure(void)
{
	char p[256];
	pid_t pid;

	setup(2);
	snprintf(p, sizeof(p), "%s/shaper", bin);
	unlink(p);
	spit(p, "#!/nonexistent/interpreter\n");
	chmod(p, 0755);
	pid = start();
	is_int(wait_exit(pid, 10000), 75, "an exec that fails twice: exit 75");
	ok(strstr(slurp(logpath), "could not run '") &&
	    strstr(slurp(logpath), "/shaper': No such file or directory"),
	    "the exec error is reported, not guessed");
}

static void
test_stop_while_waiting(void)
{
	pid_t pid;

	setup(5);
	spit(statefile("behaviour.capture-pg"), "exit:1\n");
	pid = start();
	ok(wait_log("restarting the pipeline in", 5000), "failed once");
	kill(pid, SIGINT);
	is_int(wait_exit(pid, 2000), 0, "SIGINT during the backoff: exit 0");
}

/* the children of pid, from /proc: up to max pids into kids */
static int
children_of(pid_t pid, pid_t *kids, int max)
{
	char path[64], *p;
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0, ppid;

	while (d && (de = readdir(d)) != NULL && n < max) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", atoi(de->d_name));
		if ((p = strrchr(slurp(path), ')')) == NULL ||
		    sscanf(p + 1, " %*c %d", &ppid) != 1)
			continue;
		if (ppid == pid)
			kids[n++] = atoi(de->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

/* SIGHUP (systemctl reload) ends nothing: not the supervisor, not a stage
 * it started, even sent to each stage's process group */
static void
test_hup(void)
{
	pid_t pid, kids[16], after[16];
	int n, m, i, alive;
	char *s;

	setup(3);
	pid = start();
	ok(wait_log("checkpoint stored at 300", 5000), "hup: the pipeline is "
	    "up and stores its checkpoints");
	n = children_of(pid, kids, 16);
	kill(pid, SIGHUP);
	for (i = 0; i < n; i++)
		kill(-kids[i], SIGHUP);
	ok(wait_log("SIGHUP: reloading", 5000), "the supervisor says a reload "
	    "is not supported yet");
	usleep(500000);
	ok(waitpid(pid, NULL, WNOHANG) == 0, "and runs on");
	m = children_of(pid, after, 16);
	for (alive = 0, i = 0; i < n; i++)
		alive += kill(kids[i], 0) == 0;
	ok(n >= 4 && m == n && alive == n, "every stage it started runs on, "
	    "the same processes (%d of %d, %d now)", alive, n, m);
	s = slurp(logpath);
	ok(strstr(s, "stopping the pipeline") == NULL &&
	    strstr(s, "restarting") == NULL, "nothing stopped or restarted");
	s = http_get("/healthz");
	ok(strncmp(s, "HTTP/1.1 200", 12) == 0, "/healthz still says ok");
	kill(pid, SIGTERM);
	is_int(wait_exit(pid, 10000), 0, "SIGTERM still drains: exit 0");
	is_str(slurp(statefile("ckpt.pos")), "300\n", "to the checkpoint 300");
}

/* the secrets its stages read are checked before any stage starts */
static void
test_secrets(void)
{
	char text[1024];
	pid_t pid;

	setup(1);
	unsetenv("P2O_T_E2E_UNSET");
	snprintf(text, sizeof(text),
	    "source:\n  url: postgres://u@127.0.0.1:1/db\n"
	    "target:\n  url: http://127.0.0.1:1\n  username: u\n"
	    "  password_env: P2O_T_E2E_UNSET\n"
	    "sync:\n  items:\n    table: public.items\n");
	spit(cfg, text);
	pid = start();
	is_int(wait_exit(pid, 5000), 78, "the target's password unresolvable: "
	    "exit 78");
	ok(strstr(slurp(logpath), "'target.password_env' names "
	    "'P2O_T_E2E_UNSET', which is not set") != NULL,
	    "naming the key and the variable");
	ok(access(statefile("argv.ckpt"), F_OK) == -1 &&
	    access(statefile("argv.capture-pg"), F_OK) == -1,
	    "before any stage started");
}

int
main(int argc, char *argv[])
{
	char self[PATH_MAX], *slash;
	ssize_t n;

	signal(SIGPIPE, SIG_IGN);
	/* build/tests/t-... -> build/bin and the source tree two up */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	snprintf(sv_exe, sizeof(sv_exe), "%s/../bin/pg2osync-supervise", self);
	snprintf(helper, sizeof(helper), "%s/../../tests/helper/fake-stage.sh",
	    self);
	if (realpath(helper, self) != NULL)
		snprintf(helper, sizeof(helper), "%s", self);
	if (access(sv_exe, X_OK) != 0 || access(helper, X_OK) != 0) {
		printf("1..0 # SKIP no %s or %s\n", sv_exe, helper);
		return 0;
	}
	if ((port = free_port()) == 0)
		BAIL_OUT("no free loopback port");

	test_drain();
	test_restart_from_checkpoint();
	test_permanent("capture-pg", "exit:69\n", 69,
	    "stopping: capture-pg exited with 69 (refused): see its message "
	    "above");
	test_permanent("writer", "exit:77\n", 77,
	    "stopping: writer exited with 77 (auth)");
	test_permanent("ckpt", "exit:66\n", 66,
	    "stopping: ckpt exited with 66 (checkpoint)");
	test_permanent("writer", "proto:1\n", 65,
	    "'writer' speaks control protocol 1, this supervisor 2");
	test_give_up();
	test_hello_timeout();
	test_swapped_stage();
	test_load();
	test_backoff_cpu();
	test_exec_failure();
	test_stop_while_waiting();
	test_hup();
	test_secrets();
	if (tmp[0])
		sh("rm -rf '%s'", tmp);
	return done_testing();
}
