/*
 * pg2osync-supervise - run pg2osync streams: for each source of the
 * configuration (one file, or every file of a --config-dir), 'ckpt serve'
 * for the checkpoint and the pipeline of stages the stage table
 * (stages.c) describes, each with fd 3 back to us.
 *
 * This file is the command line: the options, the configuration (every
 * file, and as one set, every secret a stage reads checked before any
 * starts), the listeners. Then proc.c runs the pipelines until they
 * stop, and its exit code is the program's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_set.h"
#include "log.h"
#include "p2o.h"
#include "source.h"
#include "stage.h"
#include "supervisor.h"
#include "xio.h"

static const char usage_text[] =
"usage: pg2osync-supervise -c config.yaml [--stage STAGE=PROGRAM]...\n"
"                          [--tap POINT=FILE]... [--tap-max BYTES]\n"
"       pg2osync-supervise --config-dir DIR [--source NAME]\n"
"                          [--stage STAGE=PROGRAM]...\n"
"\n"
"Runs the stream the configuration describes: 'ckpt serve' for the\n"
"checkpoint and the pipeline capture | shaper | writer (capture-pg or\n"
"capture-mysql by the source url), found next to this program or else on\n"
"$PATH. Children inherit the environment, which is how the *_env secrets\n"
"reach them; their argv carries the configuration path and the start\n"
"position only.\n"
"\n"
"With --config-dir, every *.yaml file directly in DIR is one source, all\n"
"run by this one process (each its own stages, back-channel and\n"
"checkpoint), the files loaded and checked as one set first. A source\n"
"that stops for good is halted (logged, /ready/NAME says why) while the\n"
"others stream; the process ends when every source has. SIGHUP reads the\n"
"directory again: a file added starts its source, a file removed drains\n"
"and stops its source, a file changed is reloaded, a halted source starts\n"
"again. --source NAME runs that source of the directory alone.\n"
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
"GET /ready (200 while every source is loading or streaming and making\n"
"progress, else 503 with the reason), GET /ready/NAME (one source's).\n"
"With api.bind: GET /synced[?source=NAME] (read-your-writes).\n"
"\n"
"options:\n"
"  -c, --config FILE      the pg2osync configuration\n"
"  --config-dir DIR       a directory of configurations, one source each\n"
"                         (every *.yaml in it, in name order); exclusive\n"
"                         with -c, one of them required\n"
"  --source NAME          with --config-dir: run that source alone (its\n"
"                         source.name, else its stream's identity)\n"
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
"it stopped the pipeline (with several sources: when every one stopped,\n"
"the first one's). A capture's 67 (the position is gone: a lost\n"
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

/* what the command line names, beside the process it sets up */
struct args {
	struct sv_proc	*p;
	const char	*only;		/* --source */
	int		 taps;		/* --tap given */
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
		a->p->program[s] = val + (value - name);
		break;
	case 'T':
		if (split_assign(name, &value) == -1 ||
		    (s = sv_stage_by_tap(name, &fd4)) == -1) {
			free(name);
			return p2o_fail(e, P2O_EXIT_USAGE, "--tap takes POINT=FILE "
			    "with a point of events, loads, ops");
		}
		t = fd4 ? &a->p->tap4[s] : &a->p->tap[s];
		a->taps = 1;
		t->point = fd4 ? sv_stages[s].fd4_tap : sv_stages[s].tap;
		free(t->path);
		t->path = xstrdup(value);
		break;
	case 'O':
		a->only = val;
		break;
	case 'M':
		if (parse_bytes(val, &a->p->tap_max) == -1) {
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
	{ "source",	required_argument,	NULL, 'O' },
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
	.config_dir = 1,
};

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

/*
 * GnuTLS is loaded into every stage without being used: libldap (through
 * libpq) and librtmp (through libcurl) link it, while libpq and libcurl
 * speak TLS through OpenSSL. Its constructor still builds its ASN.1 trees
 * and opens p11-kit at load, some 140 kB of private pages in each of the
 * four processes of every source (docs/benchmarks.md, "sources in one
 * process"). GNUTLS_NO_IMPLICIT_INIT skips that; the libraries that do
 * use GnuTLS call gnutls_global_init themselves first (libldap for an
 * ldaps:// service lookup, librtmp for rtmps://). The operator's own
 * setting, either way, is kept. Set before any stage starts: it acts
 * when a program is loaded.
 */
static void
gnutls_lazy(void)
{
	if (setenv("GNUTLS_NO_IMPLICIT_INIT", "1", 0) == -1)
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

/* section.bind's listener, when a file has one; only main.c exits */
static void
listen_on(struct sv_proc *p, struct sv_httpd *h, const char *section,
    sv_http_handler fn, int metrics)
{
	const struct config *cf;
	char err[1024];
	int i;

	for (i = 0; i < p->npipes; i++) {
		cf = &p->pipes[i]->cf;
		if ((metrics ? cf->metrics_bind : cf->api_bind) == NULL)
			continue;
		if (metrics)
			p->metrics_bind = xstrdup(cf->metrics_bind);
		else
			p->api_bind = xstrdup(cf->api_bind);
		if (sv_httpd_open(h, metrics ? cf->metrics_bind : cf->api_bind,
		    fn, p, err, sizeof(err)) == -1)
			fatalx(P2O_EXIT_CONFIG, "%s: %s.bind: %s", cf->path,
			    section, err);
		warn_open(section, metrics ? cf->metrics_bind : cf->api_bind,
		    metrics ? cf->metrics_token : cf->api_token, metrics ?
		    "/metrics" : "the source's position through /synced");
		return;
	}
}

/* the pipelines: one file's, or every file's of the directory (checked
 * as one set), or the one --source names; only main.c exits */
static void
set_up(struct sv_proc *p, const struct stage *st, const struct args *a)
{
	struct config_set set;
	struct config cf;
	struct sbuf why = SBUF_INIT, names = SBUF_INIT;
	struct p2o_err e;
	const char *s, *nl;
	struct sv *sv;
	unsigned secrets = sv_stage_secrets() | CONFIG_SECRET_LISTEN;
	int i, k;

	p2o_err_clear(&e);
	if (st->cfgdir == NULL) {
		if (a->only != NULL)
			fatalx(P2O_EXIT_USAGE, "--source names a source of "
			    "--config-dir");
		quiet_log_config(st->cfgpath);
		/* the stages inherit the environment: a secret one of them
		 * needs and cannot resolve stops everything here, before
		 * any starts */
		if (config_load_with(st->cfgpath, secrets, &cf, &e) == -1)
			exit(stage_report(&e));
		if ((sv = sv_pipe_new(p, st->cfgpath, &cf, &e)) == NULL)
			exit(stage_report(&e));
		p->pipes = xcalloc(1, sizeof(*p->pipes));
		p->pipes[p->npipes++] = sv;
		return;
	}
	/* the form of the lines of the first file, before the set's
	 * errors are said in it */
	if (config_dir_files(st->cfgdir, &set.paths, &set.n, &e) == 0) {
		quiet_log_config(set.paths[0]);
		config_paths_free(set.paths, set.n);
	}
	if (config_set_load(st->cfgdir, secrets, &set, &why, &e) == -1) {
		for (s = why.buf; s != NULL && *s; s = nl + 1) {
			nl = strchr(s, '\n');
			log_error("%.*s", (int)(nl - s), s);
		}
		exit(stage_report(&e));
	}
	if (a->only != NULL && config_set_find(&set, a->only) == -1) {
		config_set_names(&set, &names);
		fatalx(P2O_EXIT_USAGE, "--source: no source named '%s' in '%s' "
		    "(its sources: %s)", a->only, st->cfgdir, names.buf);
	}
	/* one source of the directory: as if its file were named (its
	 * reload reads that file alone) */
	if (a->only != NULL) {
		k = config_set_find(&set, a->only);
		if ((sv = sv_pipe_new(p, set.paths[k], &set.cf[k], &e)) == NULL)
			exit(stage_report(&e));
		p->pipes = xcalloc(1, sizeof(*p->pipes));
		p->pipes[p->npipes++] = sv;
		config_set_release(&set);
		return;
	}
	if (set.n > 1 && a->taps)
		fatalx(P2O_EXIT_USAGE, "--tap copies one pipeline's frames: "
		    "name its source with --source (%d sources in '%s')",
		    set.n, st->cfgdir);
	p->cfgdir = st->cfgdir;
	p->pipes = xcalloc((size_t)set.n, sizeof(*p->pipes));
	for (i = 0; i < set.n; i++) {
		if ((sv = sv_pipe_new(p, set.paths[i], &set.cf[i], &e)) == NULL)
			exit(stage_report(&e));
		p->pipes[p->npipes++] = sv;
	}
	log_info("%d source%s in '%s': %s", set.n, set.n == 1 ? "" : "s",
	    st->cfgdir, (config_set_names(&set, &names), names.buf));
	config_set_release(&set);
	sbuf_release(&why);
	sbuf_release(&names);
}

int
main(int argc, char *argv[])
{
	static struct sv_proc p;
	struct args a = { .p = &p };
	struct stage st;
	struct p2o_err e;
	const char *env;
	int k, code;

	/* first: nothing opened below may land on a closed fd 0, 1 or 2 */
	sanitize_fds();
	p.tap_max = SV_TAP_MAX_DEFAULT;
	if (stage_begin(&st, &spec, &a, argc, argv, &e) != STAGE_RUN)
		exit(stage_report(&e));
	name_instance();
	gnutls_lazy();
	if ((env = getenv("P2O_HELLO_TIMEOUT_S")) != NULL &&
	    (p.hello_timeout_s = atoi(env)) <= 0)
		fatalx(P2O_EXIT_USAGE, "P2O_HELLO_TIMEOUT_S='%s' is not a "
		    "number of seconds", env);
	/* the form of the lines first, so that what loading the file says
	 * (a warning, an error with its file:line) is in it: a quiet load
	 * for log.format and log.level only, else the supervisor's default */
	if (getenv("P2O_LOG_FORMAT") == NULL)
		log_set_format(LOG_FMT_TEXT);
	set_up(&p, &st, &a);
	for (k = 0; k < SV_NSTAGES; k++)
		if (p.program[k] != NULL)
			log_info("stage '%s' runs '%s'", sv_stages[k].role,
			    p.pipes[0]->kid[k].path);
	sv_apply_log(&p.pipes[0]->cf);
	/* one span exporter a process, set by the first source's file */
	if (config_traces_start(&p.pipes[0]->cf, "pg2osync-supervise", &e) ==
	    -1)
		exit(stage_report(&e));
	p.httpd.fd = p.api.fd = -1;
	for (k = 0; k < SV_HTTP_CONNS; k++)
		p.httpd.conns[k].fd = p.api.conns[k].fd = -1;
	listen_on(&p, &p.httpd, "metrics", sv_route, 1);
	listen_on(&p, &p.api, "api", sv_route_api, 0);
	sv_proc_tokens(&p);
	code = sv_proc_run(&p);
	sv_httpd_close(&p.httpd);
	sv_httpd_close(&p.api);
	sv_proc_release(&p);
	trace_stop(TRACE_STOP_MS);
	return code;
}
