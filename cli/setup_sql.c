/*
 * setup_sql.c - pg2osync setup-sql: the script a DBA runs for this
 * configuration, written offline (it connects nowhere). The script is the
 * source's own (its setup_sql operation, lib/pg/pgsource.c and
 * lib/mysql/mysource.c: on PostgreSQL the wal_level change, the role with
 * REPLICATION and its grants, REPLICA IDENTITY FULL where the
 * configuration reads columns a before-image must carry, the publications
 * by the capture's placement rule; on MySQL and MariaDB the my.cnf block,
 * the settings for the running server, the user and its grants). This
 * file picks the role and prints.
 *
 * Every statement can be run twice. No password is ever written: the
 * script says how to set one.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "p2o.h"
#include "source_ops.h"

enum { O_ROLE = 0x100 };

static const struct cli_opt opts[] = {
	CLI_OPT_CONFIG,
	CLI_OPTS_DIR,
	{ "role", O_ROLE, "NAME", "the role (user) pg2osync connects as "
	    "(default: the url's user when its variable is set, else "
	    "pg2osync)" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

static int
run(const struct verb *v, int argc, char **argv)
{
	const char *path = CLI_DEFAULT_CONFIG, *arg, *role = NULL;
	const struct source_ops *ops;
	struct config cfg;
	struct sbuf b = SBUF_INIT;
	char user[128];
	const char *p;
	int ch, rc;

	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0) {
		if (ch == 'c')
			path = arg;
		else
			role = arg;
	}
	if (ch < 0)
		return cli_opt_exit(ch);
	if ((rc = cli_config(path, CONFIG_SECRETS_NONE, &cfg)) != 0)
		return rc;
	ops = source_ops_of(&cfg);
	ops->url_user(&cfg, user, sizeof(user));
	if (role == NULL)
		role = user[0] ? user : "pg2osync";
	/* the role is written into SQL: a name, not an expression */
	for (p = role; *p; p++)
		if (!(*p == '_' || *p == '-' || *p == '.' ||
		    (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9'))) {
			config_release(&cfg);
			return cli_usage(v, "--role '%s': letters, digits, '_', "
			    "'-' and '.' only", role);
		}
	ops->setup_sql(&b, &cfg, role);
	fputs(b.buf, stdout);
	sbuf_release(&b);
	config_release(&cfg);
	return P2O_EXIT_OK;
}

const struct verb verb_setup_sql = {
	.name = "setup-sql",
	.summary = "print the SQL a DBA runs for this configuration "
	    "(offline)",
	.synopsis = "[-c FILE | --config-dir DIR [--source NAME]] "
	    "[--role NAME]",
	.about = "Prints the script that prepares the source for this "
	    "configuration, without connecting anywhere. PostgreSQL: "
	    "wal_level = logical (and its restart, with the managed services' "
	    "names for it), the role with LOGIN REPLICATION, CONNECT, USAGE "
	    "and SELECT grants, REPLICA IDENTITY FULL where a section reads "
	    "columns a before-image must carry and the key does not, the "
	    "publication with publish_via_partition_root and the tables "
	    "collections read (and <publication>_append for append-only tables "
	    "without a replica identity, theirs or a table's under them: the "
	    "capture's placement, decided on the server). MySQL and MariaDB: "
	    "the my.cnf block, the settings for "
	    "the running server, the user and its grants. No password is "
	    "written; the script says how to set one.",
	.opts = opts,
	.exits = "  0   printed\n  64  bad command line\n  78  invalid "
	    "configuration\n",
	.run = run,
	.dir = CLI_DIR_EACH,
};
