/*
 * pg2osync - the operator's command: `pg2osync VERB [options]`, git-style.
 * Each verb is a file of its own holding a struct verb; this table lists
 * them. Reads top to bottom: the log, the verb, its run. The only exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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
	    ") and --help; man pg2osync-VERB\ndescribes each. "
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
	return cli_verbs[i]->run(cli_verbs[i], argc - 1, argv + 1);
}
