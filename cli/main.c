/*
 * pg2osync - the operator's command: `pg2osync VERB [options]`, git-style.
 * Each verb is a file of its own holding a struct verb; this table lists
 * them. Reads top to bottom: the log, the verb, its run. The only exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config_set.h"
#include "http.h"
#include "log.h"
#include "p2o.h"

extern const struct verb verb_init, verb_validate, verb_setup_sql,
    verb_bootstrap, verb_status, verb_drop_slot, verb_run, verb_rejects,
    verb_verify, verb_resnapshot, verb_reconcile, verb_reindex,
    verb_switch_alias;

/* in the order pg2osync --help lists them: the order of first use */
const struct verb *const cli_verbs[] = {
	&verb_init,
	&verb_validate,
	&verb_setup_sql,
	&verb_bootstrap,
	&verb_run,
	&verb_status,
	&verb_drop_slot,
	&verb_rejects,
	&verb_verify,
	&verb_resnapshot,
	&verb_reconcile,
	&verb_reindex,
	&verb_switch_alias,
	NULL,
};

const struct cli_set_view *cli_set;

/* the value of option name at argv[*i] ("--name V" or "--name=V"), *i
 * moved past it; NULL when argv[*i] is not it */
static const char *
option_value(int argc, char **argv, int *i, const char *name, int *missing)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

/* -c FILE, -cFILE, --config FILE, --config=FILE */
static int
names_file(const char *a)
{
	return strncmp(a, "-c", 2) == 0 || strcmp(a, "--config") == 0 ||
	    strncmp(a, "--config=", 9) == 0;
}

/*
 * --config-dir DIR [--source NAME]: the directory loaded and checked as a
 * set (every failing file and broken rule said, 78), then the verb run
 * with -c FILE in their place: on the source --source names, on the only
 * one, or (a verb that acts on each) on every one in turn; a verb that
 * acts on one refuses several without --source, naming them (64). The
 * code is the first failing run's.
 */
static int
run_dir(const struct verb *v, int argc, char **argv)
{
	struct config_set set;
	struct cli_set_view view = { NULL };
	struct sbuf why = SBUF_INIT, names = SBUF_INIT;
	struct p2o_err e;
	const char *dir = NULL, *source = NULL, *val, *p, *nl;
	char **args = xcalloc((size_t)argc + 3, sizeof(*args));
	int i, k, n = 0, missing = 0, file = 0, first, last, rc = 0, r;

	args[n++] = argv[0];
	args[n++] = "-c";
	args[n++] = NULL;
	for (i = 1; i < argc; i++) {
		if ((val = option_value(argc, argv, &i, "--config-dir",
		    &missing)) != NULL)
			dir = val;
		else if ((val = option_value(argc, argv, &i, "--source",
		    &missing)) != NULL)
			source = val;
		else if (missing)
			break;
		else {
			file |= names_file(argv[i]);
			args[n++] = argv[i];
		}
	}
	args[n] = NULL;
	if (missing)
		rc = cli_usage(v, "option '%s' needs an argument", argv[i]);
	else if (dir == NULL)
		rc = cli_usage(v, "--source names a source of --config-dir");
	else if (file)
		rc = cli_usage(v, "-c and --config-dir both name the "
		    "configuration: give one");
	if (rc != 0)
		goto out;
	p2o_err_clear(&e);
	if (config_set_load(dir, CONFIG_SECRETS_NONE, &set, &why, &e) == -1) {
		for (p = why.buf; p != NULL && *p; p = nl + 1) {
			nl = strchr(p, '\n');
			fprintf(stderr, "pg2osync: %.*s\n", (int)(nl - p), p);
		}
		rc = cli_fail(&e);
		config_set_release(&set);
		goto out;
	}
	config_set_names(&set, &names);
	for (k = 0; k < set.n; k++)
		if (set.cf[k].metrics_bind != NULL)
			view.metrics_bind = set.cf[k].metrics_bind;
	cli_set = &view;
	first = 0;
	last = set.n - 1;
	if (source != NULL) {
		if ((first = last = config_set_find(&set, source)) == -1)
			rc = cli_usage(v, "no source named '%s' in '%s' (its "
			    "sources: %s)", source, dir, names.buf);
	} else if (set.n > 1 && v->dir == CLI_DIR_ONE)
		rc = cli_usage(v, "'%s' holds %d sources: name one with "
		    "--source NAME (%s)", dir, set.n, names.buf);
	if (rc != 0)
		last = first - 1;
	for (k = first; k <= last; k++) {
		if (last > first) {
			fflush(stdout);
			fprintf(stderr, "pg2osync %s: source '%s' (%s)\n",
			    v->name, set.names[k], set.paths[k]);
		}
		args[2] = set.paths[k];
		cli_getopt_reset();
		/* each source is run whatever the one before said */
		r = v->run(v, n, args);
		fflush(stdout);
		if (r != 0 && rc == 0)
			rc = r;
	}
	cli_set = NULL;
	config_set_release(&set);
out:
	sbuf_release(&why);
	sbuf_release(&names);
	free(args);
	return rc;
}

/* a --config-dir or --source among a verb's arguments */
static int
names_dir(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strncmp(argv[i], "--config-dir", 12) == 0 ||
		    strcmp(argv[i], "--source") == 0 ||
		    strncmp(argv[i], "--source=", 9) == 0)
			return 1;
	return 0;
}

static void
usage(FILE *f)
{
	int i;

	fputs("usage: pg2osync VERB [options]\n"
	    "       pg2osync VERB --help\n\n"
	    "Keeps OpenSearch indices in sync with PostgreSQL, MySQL and "
	    "MariaDB tables.\nThe verbs:\n\n", f);
	for (i = 0; cli_verbs[i] != NULL; i++)
		fprintf(f, "  %-12s %s\n", cli_verbs[i]->name,
		    cli_verbs[i]->summary);
	fputs("\nEvery verb takes -c FILE (default " CLI_DEFAULT_CONFIG
	    "), or --config-dir DIR (one\nsource a file, *.yaml) with "
	    "--source NAME, and --help; man pg2osync-VERB\ndescribes each. "
	    "The source url is read from the environment variable the\n"
	    "configuration names (source.url_env), never from the command "
	    "line.\n\n"
	    "exit codes: 0 ok; 1 a check failed or a limit was passed; 64 "
	    "bad command line;\n69 the server refused; 75 unreachable "
	    "(temporary); 77 authentication failed;\n78 invalid "
	    "configuration.\n", f);
}

int
main(int argc, char **argv)
{
	const char *name;
	int i;

	log_init("pg2osync");
	/* a command's output is its answer: the libraries' progress lines
	 * only when asked for (P2O_LOG_LEVEL=info) */
	if (getenv("P2O_LOG_LEVEL") == NULL)
		log_set_level(LOG_LVL_WARN);
	if (argc < 2) {
		usage(stderr);
		return P2O_EXIT_USAGE;
	}
	name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 ||
	    strcmp(name, "help") == 0) {
		if (strcmp(name, "help") == 0 && argc > 2)
			name = argv[2];
		else {
			usage(stdout);
			return P2O_EXIT_OK;
		}
		for (i = 0; cli_verbs[i] != NULL; i++)
			if (strcmp(cli_verbs[i]->name, name) == 0) {
				cli_help(cli_verbs[i], stdout);
				return P2O_EXIT_OK;
			}
	} else if (strcmp(name, "-V") == 0 || strcmp(name, "--version") == 0) {
		printf("pg2osync %s\n", P2O_VERSION);
		return P2O_EXIT_OK;
	}
	for (i = 0; cli_verbs[i] != NULL; i++)
		if (strcmp(cli_verbs[i]->name, name) == 0)
			break;
	if (cli_verbs[i] == NULL) {
		fprintf(stderr, "pg2osync: '%s' is not a verb; see "
		    "'pg2osync --help'\n", name);
		return P2O_EXIT_USAGE;
	}
	if (http_global_init() == -1) {
		fprintf(stderr, "pg2osync: could not initialise libcurl\n");
		return P2O_EXIT_INTERNAL;
	}
	/* the verb sees its own name as argv[0] */
	if (cli_verbs[i]->dir != CLI_DIR_OWN && names_dir(argc - 1, argv + 1))
		return run_dir(cli_verbs[i], argc - 1, argv + 1);
	return cli_verbs[i]->run(cli_verbs[i], argc - 1, argv + 1);
}
