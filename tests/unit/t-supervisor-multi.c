/*
 * t-supervisor-multi - pg2osync-supervise --config-dir with stand-in
 * stages (tests/helper/fake-stage.sh, each source's state in a directory
 * of its own, named by the P2O_LOG_SOURCE the supervisor gives its
 * stages). No servers. Covers: three sources in one process, one halted
 * by a permanent failure while the other two stream (its log line, /ready
 * overall and /ready/<name>, /healthz, pg2osync_source_state, every
 * stage's lines labelled with its source); SIGTERM drains every one and
 * acknowledges each one's own positions; a directory whose every source
 * halts exits with the first one's code; a set that breaks a rule is
 * refused before anything starts (78, every file named); SIGHUP reads the
 * directory again: a file added starts its source, a file removed drains
 * and stops its source, a halted source starts again, and a broken file
 * changes nothing; --source runs one source alone.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
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

static char tmp[64], bin[128], state[128], conf[128], logpath[128];
static char helper[PATH_MAX + 64], sv_exe[PATH_MAX + 64];
static int port;

static char *
slurp(const char *path)
{
	static char buf[1 << 17];
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

	if (f == NULL)
		exit(1);
	fputs(text, f);
	fclose(f);
}

/* a source's state file */
static const char *
sfile(const char *source, const char *name)
{
	static char p[256];

	snprintf(p, sizeof(p), "%s/%s", state, source);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/%s/%s", state, source, name);
	return p;
}

/* conf/<f>.yaml: source src-<f>, its own slot, publication and index;
 * the metrics listener in a.yaml */
static void
source_file(const char *f)
{
	char path[256], text[1024];

	snprintf(path, sizeof(path), "%s/%s.yaml", conf, f);
	snprintf(text, sizeof(text),
	    "source:\n  url: postgres://u@127.0.0.1:1/db\n"
	    "  slot_name: s_%s\n  publication: p_%s\n  name: src-%s\n"
	    "  reconnect_max: 1\n"
	    "target:\n  url: http://127.0.0.1:1\n"
	    "sync:\n  items:\n    table: public.items\n    index: items_%s\n"
	    "engine:\n  checkpoint_interval_ms: 50\n%s", f, f, f, f,
	    strcmp(f, "a") == 0 ? "metrics:\n  bind: 127.0.0.1:" : "");
	if (strcmp(f, "a") == 0)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
		    "%d\n", port);
	spit(path, text);
}

static void
setup(void)
{
	static const char *const tools[] = { "ckpt", "capture-pg", "shaper",
	    "writer", "loader" };
	char p[256], cmd[2 * PATH_MAX + 64];
	size_t i;

	if (tmp[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			exit(1);
	}
	snprintf(tmp, sizeof(tmp), "/tmp/t-supervisor-multi.XXXXXX");
	if (mkdtemp(tmp) == NULL)
		exit(1);
	snprintf(bin, sizeof(bin), "%s/bin", tmp);
	snprintf(state, sizeof(state), "%s/state", tmp);
	snprintf(conf, sizeof(conf), "%s/conf.d", tmp);
	snprintf(logpath, sizeof(logpath), "%s/sv.log", tmp);
	mkdir(bin, 0755);
	mkdir(state, 0755);
	mkdir(conf, 0755);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/pg2osync-supervise'", sv_exe,
	    bin);
	if (system(cmd) != 0)
		exit(1);
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", bin, tools[i]);
		if (symlink(helper, p) == -1)
			exit(1);
	}
	source_file("a");
	source_file("b");
	source_file("c");
}

static pid_t
start_with(const char *extra1, const char *extra2)
{
	char exe[256];
	pid_t pid;
	int fd;

	snprintf(exe, sizeof(exe), "%s/pg2osync-supervise", bin);
	if ((pid = fork()) == 0) {
		fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		dup2(fd, 1);
		setenv("FAKE_DIR", state, 1);
		setenv("P2O_LOG_LEVEL", "info", 1);
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
		execl(exe, exe, "--config-dir", conf, extra1, extra2,
		    (char *)NULL);
		_exit(127);
	}
	return pid;
}

static pid_t
start(void)
{
	return start_with(NULL, NULL);
}

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
	static char buf[1 << 17];
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

/* the body of an answer */
static const char *
body(const char *answer)
{
	const char *b = strstr(answer, "\r\n\r\n");

	return b ? b + 4 : answer;
}

/* until GET path answers with text in its body, or limit_ms */
static int
wait_http(const char *path, const char *text, int limit_ms)
{
	int i;

	for (i = 0; i < limit_ms / 50; i++) {
		if (strstr(body(http_get(path)), text) != NULL)
			return 1;
		usleep(50000);
	}
	return 0;
}

static void
test_halted_and_drain(void)
{
	pid_t pid;
	char *s;

	setup();
	spit(sfile("src-b", "behaviour.capture-pg"), "exit:69\n");
	pid = start();
	ok(wait_log("source src-b halted: capture-pg exited with 69 (refused)",
	    8000), "the source whose capture refuses is halted, and says so");
	ok(wait_http("/ready/src-a", "ready: streaming", 8000) &&
	    wait_http("/ready/src-c", "ready: streaming", 8000),
	    "while the two others stream (/ready/src-a, /ready/src-c)");
	s = http_get("/ready/src-b");
	ok(strncmp(s, "HTTP/1.1 503", 12) == 0 && strstr(body(s),
	    "not ready: halted: capture-pg exited with 69 (refused)"),
	    "/ready/src-b: 503, %.*s", (int)strcspn(body(s), "\n"), body(s));
	s = http_get("/ready");
	ok(strncmp(s, "HTTP/1.1 503", 12) == 0 &&
	    strstr(body(s), "ready: src-a: streaming\n") &&
	    strstr(body(s), "not ready: src-b: halted: ") &&
	    strstr(body(s), "ready: src-c: streaming\n"),
	    "/ready overall: 503, each source on its line");
	s = http_get("/ready/src-x");
	ok(strncmp(s, "HTTP/1.1 404", 12) == 0, "/ready of no source: 404");
	s = http_get("/healthz");
	ok(strncmp(s, "HTTP/1.1 200", 12) == 0 &&
	    strstr(body(s), "alive: src-b: halted\n"), "/healthz: alive, "
	    "src-b halted");
	s = http_get("/metrics");
	ok(strstr(s, "\npg2osync_source_state{source=\"src-b\",state=\"halted\"} 1\n") &&
	    strstr(s, "\npg2osync_source_state{source=\"src-a\",state=\"streaming\"} 1\n") &&
	    strstr(s, "\npg2osync_source_state{source=\"src-c\",state=\"streaming\"} 1\n"),
	    "pg2osync_source_state: src-b halted, the others streaming");
	ok(strstr(s, "# TYPE pg2osync_up gauge") == strrchr(s, '#') ||
	    (strstr(s, "# TYPE pg2osync_up gauge") != NULL &&
	    strstr(strstr(s, "# TYPE pg2osync_up gauge") + 1,
	    "# TYPE pg2osync_up gauge") == NULL),
	    "one /metrics: each metric's TYPE once for every source");
	/* streaming is said at the hello, the checkpoint stored a moment
	 * later: waited for, a loaded machine being slow to it */
	ok(wait_http("/metrics",
	    "\npg2osync_checkpoint_position{source=\"src-a\"} 300\n", 8000) &&
	    wait_http("/metrics",
	    "\npg2osync_checkpoint_position{source=\"src-c\"} 300\n", 8000),
	    "each streaming source stored its own checkpoint");
	s = slurp(logpath);
	ok(strstr(s, "capture-pg[src-b]: ") != NULL &&
	    strstr(s, "pg2osync-supervise[src-a]: info: pipeline up") != NULL,
	    "every line says which source it is about");
	kill(pid, SIGTERM);
	is_int(wait_exit(pid, 15000), 0, "SIGTERM drains the two that run: "
	    "exit 0 (one halted is no failure of the stop)");
	ok(strstr(slurp(sfile("src-a", "acks")), "300\n") &&
	    strstr(slurp(sfile("src-c", "acks")), "300\n"),
	    "each capture got its own pipeline's last ack");
	s = slurp(logpath);
	ok(strstr(s, "[src-a]: info: stopped after draining; checkpoint at "
	    "300") && strstr(s, "[src-c]: info: stopped after draining; "
	    "checkpoint at 300"), "both say where they stopped");
}

static void
test_all_halted(void)
{
	pid_t pid;

	setup();
	spit(sfile("src-a", "behaviour.ckpt"), "exit:66\n");
	spit(sfile("src-b", "behaviour.capture-pg"), "exit:69\n");
	spit(sfile("src-c", "behaviour.writer"), "exit:77\n");
	pid = start();
	is_int(wait_exit(pid, 15000), 66, "every source halted: the process "
	    "ends with the first one's code");
	ok(strstr(slurp(logpath), "source src-c halted: writer exited with 77")
	    != NULL, "each said it halted");
}

static void
test_set_refused(void)
{
	char path[256];
	pid_t pid;
	char *s;

	setup();
	/* b takes a's slot and publication, c is not a configuration */
	snprintf(path, sizeof(path), "%s/b.yaml", conf);
	spit(path, "source:\n  url: postgres://u@127.0.0.1:1/db\n"
	    "  slot_name: s_a\n  publication: p_a\n  name: src-b\n"
	    "target:\n  url: http://127.0.0.1:1\n"
	    "sync:\n  items:\n    table: public.items\n    index: items_b\n");
	snprintf(path, sizeof(path), "%s/c.yaml", conf);
	spit(path, "source: [\n");
	pid = start();
	is_int(wait_exit(pid, 10000), 78, "a directory with a broken file: "
	    "78 before anything starts");
	s = slurp(logpath);
	ok(strstr(s, "c.yaml:") != NULL && strstr(s, "1 of 3 files") != NULL,
	    "the broken file is named with its line");
	spit(path, "source:\n  url: postgres://u@127.0.0.1:1/db\n"
	    "  slot_name: s_c\n  publication: p_c\n  name: src-c\n"
	    "target:\n  url: http://127.0.0.1:1\n"
	    "sync:\n  items:\n    table: public.items\n    index: items_c\n");
	pid = start();
	is_int(wait_exit(pid, 10000), 78, "two files taking one slot: 78");
	s = slurp(logpath);
	ok(strstr(s, "a.yaml, b.yaml: both would take slot 's_a' on server "
	    "localhost:1") != NULL, "the rule is said, with both files");
	ok(strstr(s, "starting the pipeline") == NULL, "nothing started");
}

static void
test_reload_dir(void)
{
	char path[256], path2[256];
	pid_t pid;
	char *s;

	setup();
	spit(sfile("src-b", "behaviour.capture-pg"), "exit:69\n");
	pid = start();
	ok(wait_log("source src-b halted", 8000) &&
	    wait_http("/ready/src-c", "ready: streaming", 8000),
	    "reload: three sources, one halted");
	/* a file added, a file removed, the halted one tried again */
	source_file("d");
	snprintf(path, sizeof(path), "%s/c.yaml", conf);
	snprintf(path2, sizeof(path2), "%s/c.yaml.off", conf);
	rename(path, path2);
	kill(pid, SIGHUP);
	ok(wait_log("reload: '", 5000) && wait_log("/d.yaml' is new: starting "
	    "source src-d", 5000), "SIGHUP: the new file starts its source");
	ok(wait_log("/c.yaml' is gone: source src-c drains and stops", 5000),
	    "the removed file's source drains");
	ok(wait_log("source src-c stopped: its file", 8000),
	    "and stops");
	ok(wait_log("reload: source src-b was halted: starting it again",
	    5000), "the halted source is started again");
	ok(wait_http("/ready/src-d", "ready: streaming", 8000) &&
	    wait_http("/ready/src-b", "ready: streaming", 8000),
	    "src-d and src-b stream");
	s = http_get("/ready/src-c");
	ok(strncmp(s, "HTTP/1.1 404", 12) == 0, "src-c is no more: 404");
	ok(strstr(slurp(sfile("src-c", "acks")), "300\n") != NULL,
	    "its drain acknowledged its last position");
	ok(wait_http("/ready/src-a", "ready: streaming", 3000),
	    "src-a streamed on through it all");
	ok(strstr(slurp(logpath), "[src-a]: info: reload unchanged") != NULL,
	    "its unchanged file was reloaded as unchanged");
	/* a broken file: nothing changes */
	snprintf(path, sizeof(path), "%s/e.yaml", conf);
	spit(path, "source: [\n");
	kill(pid, SIGHUP);
	ok(wait_log("reload refused: ", 5000) && wait_log("e.yaml:", 5000),
	    "a broken file refuses the reload, named");
	ok(strstr(slurp(logpath), "is new: starting source src-e") == NULL &&
	    wait_http("/ready", "ready: src-d: streaming", 3000),
	    "and nothing changed");
	s = http_get("/metrics");
	ok(strstr(s, "pg2osync_config_reloads_total{source=\"src-a\","
	    "result=\"refused\"} 1\n") != NULL, "counted as refused");
	unlink(path);
	kill(pid, SIGTERM);
	is_int(wait_exit(pid, 15000), 0, "SIGTERM: every source drained");
}

static void
test_one_source(void)
{
	pid_t pid;
	char *s;

	setup();
	pid = start_with("--source", "src-c");
	ok(wait_log("pipeline up", 8000), "--source: one source of the "
	    "directory runs");
	kill(pid, SIGTERM);
	is_int(wait_exit(pid, 15000), 0, "and drains");
	s = slurp(logpath);
	ok(strstr(s, "[src-a]") == NULL && access(sfile("src-a", "acks"),
	    F_OK) == -1, "the others did not run");
	pid = start_with("--source", "nope");
	is_int(wait_exit(pid, 10000), 64, "--source of no source: 64");
	ok(strstr(slurp(logpath), "its sources: src-a, src-b, src-c") != NULL,
	    "naming the sources there are");
}

int
main(int argc, char *argv[])
{
	char self[PATH_MAX], *slash;
	ssize_t n;

	(void)argc;
	(void)argv;
	signal(SIGPIPE, SIG_IGN);
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

	test_halted_and_drain();
	test_all_halted();
	test_set_refused();
	test_reload_dir();
	test_one_source();
	if (tmp[0] && tap_failed == 0) {
		snprintf(self, sizeof(self), "rm -rf '%s'", tmp);
		if (system(self) != 0)
			return 1;
	}
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
