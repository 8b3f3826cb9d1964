/*
 * pg2osync-supervise - run one pg2osync stream: 'ckpt serve' for the
 * checkpoint and the pipeline of stages the stage table (stages.c)
 * describes, each with fd 3 back to us.
 *
 * This file is the command line: the options, which program each stage
 * runs, the configuration (every secret a stage reads checked before any
 * starts), the metrics listener. Then loop.c runs the stream until it
 * stops, and its exit code is the program's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "source.h"
#include "stage.h"
#include "supervisor.h"
#include "xio.h"

static const char usage_text[] =
"usage: pg2osync-supervise -c config.yaml [--stage STAGE=PROGRAM]...\n"
"                          [--tap POINT=FILE]... [--tap-max BYTES]\n"
"\n"
"Runs the stream the configuration describes: 'ckpt serve' for the\n"
"checkpoint and the pipeline capture | shaper | writer (capture-pg or\n"
"capture-mysql by the source url), found next to this program or else on\n"
"$PATH. Children inherit the environment, which is how the *_env secrets\n"
"reach them; their argv carries the configuration path and the start\n"
"position only.\n"
"\n"
"A position is acknowledged to the capture only after ckpt stored it.\n"
"Any stage ending stops the whole pipeline; it restarts from the stored\n"
"checkpoint after 1 s, doubling to 30 s, reset once it ran 60 s, and\n"
"gives up after source.reconnect_max consecutive failures. SIGTERM or\n"
"SIGINT: the capture stops, the rest drain, the last durable position is\n"
"stored and acknowledged, exit 0.\n"
"\n"
"With metrics.bind: GET /metrics (Prometheus text; a bearer token with\n"
"metrics.token_env), GET /healthz (200 while the supervisor runs) and\n"
"GET /ready (200 while loading or streaming and making progress, else\n"
"503 with the reason). With api.bind: GET /synced (read-your-writes).\n"
"\n"
"options:\n"
"  -c, --config FILE      the pg2osync configuration (required)\n"
"  --stage STAGE=PROGRAM  run PROGRAM in place of a stage (capture,\n"
"                         loader, shaper, writer, ckpt); it gets the same\n"
"                         argv and descriptors. A replaced shaper need\n"
"                         not speak the control channel.\n"
"  --tap POINT=FILE       copy the frames crossing a boundary to FILE:\n"
"                         events (capture -> shaper), loads (loader ->\n"
"                         shaper) or ops (shaper -> writer). The copy\n"
"                         never holds the pipeline up; FILE is rotated to\n"
"                         FILE.1 at frame boundaries.\n"
"  --tap-max BYTES        rotate a tap file at this size (default 64M;\n"
"                         K, M, G suffixes)\n"
"  -h, --help             this text\n"
"  -V, --version          print the version\n"
"\n"
"environment: P2O_HELLO_TIMEOUT_S, seconds a stage may take to say hello\n"
"(default: 600 for the capture, 60 for the writer); PG2OSYNC_INSTANCE_ID,\n"
"recorded in every checkpoint as the writer's id (default: <host>:<pid>).\n"
"\n"
"exit codes: 0 stopped by a signal after draining; 1 internal error or a\n"
"tool's executable not found; 64 usage; 75 gave up after reconnect_max\n"
"failures, or a drain that could not store its checkpoint; 78 invalid\n"
"configuration; a stage's permanent exit code (65, 66, 67, 69, 77, 78) when\n"
"it stopped the pipeline. A capture's 67 (the position is gone: a lost\n"
"slot, a checkpoint behind the slot, a purged binlog) stops it only with\n"
"source.on_lost_position: halt; with reload (the default) a new stream\n"
"starts and every table is loaded again, then swept.\n";

/* stdin, stdout and stderr open, everything else closed on exec */
static void
sanitize_fds(void)
{
	struct dirent *de;
	DIR *d;
	int fd;

	for (fd = 0; fd < 3; fd++)
		if (!fd_is_open(fd) && open("/dev/null", O_RDWR) != fd)
			fatal(P2O_EXIT_INTERNAL, "/dev/null");
	if ((d = opendir("/proc/self/fd")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		if (fd > 2 && fd != dirfd(d))
			set_cloexec(fd, 1);
	}
	closedir(d);
}

/* "1048576", "64M", "2G" */
static int
parse_bytes(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	switch (*end) {
	case 'K': v <<= 10; end++; break;
	case 'M': v <<= 20; end++; break;
	case 'G': v <<= 30; end++; break;
	}
	if (*end != '\0' || v == 0)
		return -1;
	*out = v;
	return 0;
}

/* "NAME=VALUE": *value points past the '=' in arg (which is cut there) */
static int
split_assign(char *arg, char **value)
{
	char *eq = strchr(arg, '=');

	if (eq == NULL || eq == arg || eq[1] == '\0')
		return -1;
	*eq = '\0';
	*value = eq + 1;
	return 0;
}

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* what the command line names, until the children are set up */
struct args {
	struct sv	*sv;
	const char	*program[SV_NSTAGES];	/* --stage */
	uint64_t	 tap_max;
};

static int
option(void *arg, int ch, const char *val, struct p2o_err *e)
{
	struct args *a = arg;
	struct sv_tap *t;
	char *name, *value;
	int s, fd4;

	name = xstrdup(val);
	switch (ch) {
	case 'S':
		if (split_assign(name, &value) == -1 ||
		    (s = sv_stage_lookup(name)) == -1) {
			free(name);
			return p2o_fail(e, P2O_EXIT_USAGE, "--stage takes "
			    "STAGE=PROGRAM with a stage of ckpt, capture, "
			    "loader, shaper, writer");
		}
		a->program[s] = val + (value - name);
		break;
	case 'T':
		if (split_assign(name, &value) == -1 ||
		    (s = sv_stage_by_tap(name, &fd4)) == -1) {
			free(name);
			return p2o_fail(e, P2O_EXIT_USAGE, "--tap takes POINT=FILE "
			    "with a point of events, loads, ops");
		}
		t = fd4 ? &a->sv->tap4[s] : &a->sv->tap[s];
		t->point = fd4 ? sv_stages[s].fd4_tap : sv_stages[s].tap;
		free(t->path);
		t->path = xstrdup(value);
		break;
	case 'M':
		if (parse_bytes(val, &a->tap_max) == -1) {
			free(name);
			return p2o_fail(e, P2O_EXIT_USAGE, "--tap-max '%s' is not "
			    "a size like 1048576, 64M or 1G", val);
		}
		break;
	}
	free(name);
	return 0;
}

static const struct option longopts[] = {
	{ "stage",	required_argument,	NULL, 'S' },
	{ "tap",	required_argument,	NULL, 'T' },
	{ "tap-max",	required_argument,	NULL, 'M' },
	{ NULL, 0, NULL, 0 }
};

static const struct stage_spec spec = {
	.tool = "pg2osync-supervise",
	.usage = usage_text,
	.longopts = longopts,
	.option = option,
	.signals = STAGE_SIG(STAGE_TERM) | STAGE_SIG(STAGE_HUP) |
	    STAGE_SIG(STAGE_CHLD),
	/* it is the other end of every stage's fd 3 */
	.control = 0,
};

/* the program each stage runs, and the children's names: 0, or -1 */
static int
set_up_children(struct sv *sv, const struct args *a, struct p2o_err *e)
{
	char *path;
	int s;

	for (s = 0; s < SV_NSTAGES; s++) {
		sv->tap[s].max = sv->tap4[s].max = a->tap_max;
		sv->pending_out[s] = -1;
		if (a->program[s] != NULL) {
			/* a path the user named is run as named */
			path = strchr(a->program[s], '/') ?
			    xstrdup(a->program[s]) : sv_find_exe(a->program[s]);
			if (path == NULL || access(path, X_OK) == -1)
				return p2o_fail(e, P2O_EXIT_USAGE, "--stage %s: "
				    "'%s' is not an executable",
				    sv_stages[s].role, a->program[s]);
			log_info("stage '%s' runs '%s'", sv_stages[s].role,
			    path);
		} else if ((path = sv_find_exe(sv_stage_program(s,
		    sv->cf.source))) == NULL) {
			/* an optional stage is looked for when it is needed */
			if (!sv_stages[s].optional)
				return p2o_fail(e, P2O_EXIT_INTERNAL, "could not "
				    "find '%s' next to this program or on $PATH",
				    sv_stage_program(s, sv->cf.source));
			path = NULL;
		}
		snprintf(sv->kidname[s], sizeof(sv->kidname[s]), "%s",
		    base_name(path ? path : sv_stage_program(s,
		    sv->cf.source)));
		sv_child_init(&sv->kid[s], sv->kidname[s], path);
		snprintf(sv->kidname[SV_TAP_OF(s)], sizeof(sv->kidname[0]),
		    "tap %s", sv_stages[s].tap ? sv_stages[s].tap : "-");
		sv_child_init(&sv->kid[SV_TAP_OF(s)], sv->kidname[SV_TAP_OF(s)],
		    NULL);
		snprintf(sv->kidname[SV_TAP4_OF(s)], sizeof(sv->kidname[0]),
		    "tap %s", sv_stages[s].fd4_tap ? sv_stages[s].fd4_tap : "-");
		sv_child_init(&sv->kid[SV_TAP4_OF(s)],
		    sv->kidname[SV_TAP4_OF(s)], NULL);
	}
	return 0;
}

/* every series' source label: source.name, else the stream's identity
 * ("postgres:<slot>", "mysql:<server_id>") */
static int
name_source(struct sv *sv, struct p2o_err *e)
{
	struct source_ident id;
	char err[256];

	if (sv->cf.source_name != NULL) {
		snprintf(sv->source_name, sizeof(sv->source_name), "%s",
		    sv->cf.source_name);
		return 0;
	}
	if (source_ident_init(&id, &sv->cf, err, sizeof(err)) == -1)
		return p2o_fail(e, P2O_EXIT_CONFIG, "%s: %s", sv->cfgpath, err);
	snprintf(sv->source_name, sizeof(sv->source_name), "%s", id.doc_id);
	source_ident_release(&id);
	return 0;
}

/* the writer's id every checkpoint its ckpt children store records
 * (PG2OSYNC_INSTANCE_ID): the operator's, else this host and process, so
 * that two supervisors writing one stream show as two */
static void
name_instance(void)
{
	char host[128], id[160];

	if (getenv("PG2OSYNC_INSTANCE_ID") != NULL)
		return;
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	snprintf(id, sizeof(id), "%s:%ld", host, (long)getpid());
	if (setenv("PG2OSYNC_INSTANCE_ID", id, 1) == -1)
		fatal(P2O_EXIT_INTERNAL, "setenv");
}

/* log.format and log.level of the file, applied before it is loaded
 * for good (its errors are that load's to report) */
static void
quiet_log_config(const char *path)
{
	struct config cf;
	struct p2o_err e;
	enum log_level was = LOG_LVL_INFO;
	int i;

	for (i = LOG_LVL_DEBUG; i >= LOG_LVL_ERROR; i--)
		if (log_level_enabled(i)) {
			was = i;
			break;
		}
	log_set_level(LOG_LVL_ERROR);
	p2o_err_clear(&e);
	if (config_load_with(path, CONFIG_SECRETS_NONE, &cf, &e) == -1) {
		log_set_level(was);
		return;
	}
	log_set_level(was);
	sv_apply_log(&cf);
	config_release(&cf);
}

/* a listener other hosts can reach, without a token */
static void
warn_open(const char *section, const char *bind, const char *token,
    const char *paths)
{
	if (token != NULL || sv_bind_is_loopback(bind))
		return;
	log_warnx("%s.bind '%s' can be reached from other hosts and %s.token_env "
	    "is not set: anyone who can reach it can read %s; set %s.token_env "
	    "or bind to 127.0.0.1", section, bind, section, paths, section);
}

/* section.bind's listener, when the file has one; only main.c exits */
static void
listen_on(struct sv *sv, struct sv_httpd *h, const char *section,
    const char *bind, sv_http_handler fn, const char *token,
    const char *paths)
{
	char err[1024];

	if (bind == NULL)
		return;
	if (sv_httpd_open(h, bind, fn, sv, err, sizeof(err)) == -1)
		fatalx(P2O_EXIT_CONFIG, "%s: %s.bind: %s", sv->cfgpath, section,
		    err);
	warn_open(section, bind, token, paths);
}

int
main(int argc, char *argv[])
{
	static struct sv sv;
	struct args a = { .sv = &sv, .tap_max = SV_TAP_MAX_DEFAULT };
	struct stage st;
	struct p2o_err e;
	const char *env;
	int k, code;

	/* first: nothing opened below may land on a closed fd 0, 1 or 2 */
	sanitize_fds();
	if (stage_begin(&st, &spec, &a, argc, argv, &e) != STAGE_RUN)
		exit(stage_report(&e));
	sv.cfgpath = st.cfgpath;
	name_instance();
	if ((env = getenv("P2O_HELLO_TIMEOUT_S")) != NULL &&
	    (sv.hello_timeout_s = atoi(env)) <= 0)
		fatalx(P2O_EXIT_USAGE, "P2O_HELLO_TIMEOUT_S='%s' is not a "
		    "number of seconds", env);
	/* the form of the lines first, so that what loading the file says
	 * (a warning, an error with its file:line) is in it: a quiet load
	 * for log.format and log.level only, else the supervisor's default */
	if (getenv("P2O_LOG_FORMAT") == NULL)
		log_set_format(LOG_FMT_TEXT);
	quiet_log_config(sv.cfgpath);
	/* the stages inherit the environment: a secret one of them needs
	 * and cannot resolve stops everything here, before any starts */
	if (config_load_with(sv.cfgpath, sv_stage_secrets() |
	    CONFIG_SECRET_LISTEN, &sv.cf, &e) == -1 ||
	    set_up_children(&sv, &a, &e) == -1 ||
	    name_source(&sv, &e) == -1)
		exit(stage_report(&e));
	sv_apply_log(&sv.cf);
	sv_reload_remember(&sv);
	sv_metrics_init(&sv.m);
	sv.m.source = sv.source_name;
	sv_health_init(&sv.health, sv.cf.ready_stall_s);
	sv.backoff.first_ms = sv.cf.reconnect_backoff_ms;
	sv.httpd.fd = sv.api.fd = -1;
	for (k = 0; k < SV_HTTP_CONNS; k++)
		sv.httpd.conns[k].fd = sv.api.conns[k].fd = -1;
	listen_on(&sv, &sv.httpd, "metrics", sv.cf.metrics_bind, sv_route,
	    sv.cf.metrics_token, "/metrics");
	listen_on(&sv, &sv.api, "api", sv.cf.api_bind, sv_route_api,
	    sv.cf.api_token, "the source's position through /synced");
	code = sv_run(&sv);
	sv_httpd_close(&sv.httpd);
	sv_httpd_close(&sv.api);
	return code;
}
