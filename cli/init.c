/*
 * init.c - pg2osync init: a starter configuration from the live
 * catalogue (the source's, lib/source_ops.h). Table names are qualified
 * from it, a table without a key is declared append_only, and with
 * --mappings each index gets a mapping file derived from its columns'
 * types. The target node is asked which engine it is, as the writer asks
 * it, and the file names that flavour. Without a connection the file is
 * written from the names given, with a note.
 *
 * The source url is never written: the file names the environment
 * variable that holds it (source.url_env), whatever --source carried.
 * Reads the catalogue only; writes nothing but the files it names.
 */
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config_sections.h"
#include "config_set.h"
#include "log.h"
#include "p2o.h"
#include "source.h"
#include "source_cat.h"
#include "source_ops.h"
#include "target.h"

#define MAX_TABLES	256

enum { O_SOURCE = 0x100, O_URL_ENV, O_TARGET, O_TABLE, O_FORCE, O_MAPPINGS,
	O_DECIMAL, O_JSON, O_SLOT, O_PUBLICATION, O_SERVER_ID, O_FLAVOR,
	O_DIR, O_NAME };

static const struct cli_opt opts[] = {
	{ "config", 'c', "FILE", "the file to write (default "
	    CLI_DEFAULT_CONFIG ")" },
	{ "config-dir", O_DIR, "DIR", "write it into this directory of "
	    "configurations as NAME.yaml (--name), then check the directory "
	    "as one set" },
	{ "name", O_NAME, "NAME", "source.name, every metric's source label "
	    "(and, without --slot and --publication, theirs too)" },
	{ "source", O_SOURCE, "URL", "the source database (default: the "
	    "value of the --url-env variable); the file names the variable, "
	    "never the url" },
	{ "url-env", O_URL_ENV, "NAME", "the environment variable the file "
	    "reads the url from (default P2O_SOURCE_URL)" },
	{ "target", O_TARGET, "URL", "the search engine's url (default "
	    "http://127.0.0.1:9200): asked which engine it is, for "
	    "target.flavor" },
	{ "flavor", O_FLAVOR, "NAME", "target.flavor without asking the "
	    "node: opensearch, elasticsearch or meilisearch" },
	{ "table", O_TABLE, "TABLE", "a table to sync, repeatable; a name "
	    "without a schema or database is qualified from the catalogue "
	    "(default: every table the role can read)" },
	{ "mappings", O_MAPPINGS, NULL, "also write each index's "
	    "mapping_file, derived from the column types" },
	{ "decimal", O_DECIMAL, "KIND", "numeric and decimal columns as "
	    "'keyword' (exact, the default) or 'scaled_float'" },
	{ "json", O_JSON, "KIND", "JSON columns as 'object' (the default) or "
	    "'flat_object' (kept whole: 'flattened' on Elasticsearch)" },
	{ "slot", O_SLOT, "NAME", "PostgreSQL: source.slot_name (default "
	    "pg2osync)" },
	{ "publication", O_PUBLICATION, "NAME", "PostgreSQL: "
	    "source.publication (default pg2osync)" },
	{ "server-id", O_SERVER_ID, "N", "MySQL: source.server_id, our "
	    "replica id (default 4201)" },
	{ "force", O_FORCE, NULL, "overwrite files that exist" },
	CLI_OPT_HELP,
	{ NULL, 0, NULL, NULL }
};

struct init {
	const char *path, *source, *url_env, *target, *slot, *pub;
	const char *cfgdir, *name;	/* --config-dir, --name */
	int	 path_given, slot_given, pub_given;
	const char *tables[MAX_TABLES];
	int	 ntables, force, mappings;
	unsigned long server_id;
	struct mapping_opts mo;
	const struct source_module *src;
	/* the engine: --flavor, or what the node said it is; the default
	 * one, unconfirmed, when it could not be asked */
	const struct target_module *tmod;
	int	 flavor_known;
	const char *dir;	/* of path: where mappings/ goes */
};

/* one section to write */
struct section {
	char	*schema;	/* PostgreSQL schema or MySQL database */
	char	*name;
	char	*index;
	int	 keyless;
	char	*mapping;	/* the mapping file's body, or NULL */
	char	*mapping_rel;	/* "mappings/<index>.json" */
};

/* a url that carries a password (user:pass@, password=) */
static int
has_password(const char *url)
{
	const char *a = strstr(url, "://"), *at, *end;

	if (a == NULL)
		return strstr(url, "password") != NULL;
	a += 3;
	end = a + strcspn(a, "/?#");
	at = memchr(a, '@', (size_t)(end - a));
	return (at && memchr(a, ':', (size_t)(at - a))) ||
	    strstr(url, "password=") != NULL;
}

/* a name as an index name: lowercase, what the engine refuses replaced */
static char *
index_of(const struct target_module *mod, const char *table)
{
	char *s = xstrdup(table), *p;
	char why[128];

	for (p = s; *p; p++) {
		*p = (char)tolower((unsigned char)*p);
		if (strchr("\\/*?\"<>| ,#:", *p) || (unsigned char)*p < 0x20)
			*p = '_';
	}
	while (s[0] == '_' || s[0] == '-' || s[0] == '+')
		memmove(s, s + 1, strlen(s));
	if (mod->ops->index_name != NULL &&
	    mod->ops->index_name(s, TNAME_WHOLE, why, sizeof(why)) == -1) {
		free(s);
		s = xstrdup("table");
	}
	return s;
}

/* a YAML scalar: plain when it is a simple word, else double-quoted */
static void
yaml_scalar(FILE *f, const char *s)
{
	const char *p;
	int plain = *s != '\0' && (isalpha((unsigned char)*s) || *s == '_');

	for (p = s; plain && *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.-/", *p))
			plain = 0;
	if (plain && strcmp(s, "true") && strcmp(s, "false") &&
	    strcmp(s, "null") && strcmp(s, "yes") && strcmp(s, "no") &&
	    strcmp(s, "on") && strcmp(s, "off")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (p = s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

/* the mapping file of fields in the target's words; heap, or NULL for
 * a target that takes none */
static char *
mapping_file(const struct target_module *mod, const struct target_field *f,
    int n)
{
	struct sbuf m = SBUF_INIT;

	if (mod->ops->mapping_file == NULL)
		return NULL;
	mod->ops->mapping_file(f, n, &m);
	return m.buf;
}

static void
note(const struct section *s, const char *col, const char *text)
{
	if (text[0])
		printf("note: %s.%s column '%s': %s\n", s->schema, s->name,
		    col, text);
}

/* the chosen tables of the source's catalogue as sections, with their
 * mapping files when asked */
static void
from_catalogue(struct init *in, const struct source_cat *cat,
    struct section *secs, int *n)
{
	const struct source_cat_table *t;
	int i, k;

	for (*n = 0, i = 0; i < cat->nchosen; i++) {
		t = &cat->t[cat->chosen[i]];
		secs[*n].schema = xstrdup(t->schema);
		secs[*n].name = xstrdup(t->name);
		secs[*n].keyless = !t->has_key;
		if (in->mappings) {
			for (k = 0; k < t->nfields; k++)
				note(&secs[*n], t->colnames[k], t->notes[k]);
			secs[*n].mapping = mapping_file(in->tmod, t->fields,
			    t->nfields);
		}
		(*n)++;
	}
}

/* no catalogue: the names as given, qualified by the defaults */
static int
offline(struct init *in, struct section *secs, int *n)
{
	const char *dot;
	int i;

	if (in->ntables == 0) {
		fprintf(stderr, "pg2osync init: without a connection to the "
		    "source, name the tables with --table\n");
		return CLI_EXIT_FAILED;
	}
	for (i = 0; i < in->ntables; i++) {
		dot = strchr(in->tables[i], '.');
		if (dot == NULL && in->src->default_schema == NULL) {
			fprintf(stderr, "pg2osync init: without a connection, "
			    "name %s tables as '%s.table' ('%s')\n",
			    in->src->title, in->src->schema_word, in->tables[i]);
			return CLI_EXIT_FAILED;
		}
		secs[i].schema = dot ? xstrndup(in->tables[i],
		    (size_t)(dot - in->tables[i])) :
		    xstrdup(in->src->default_schema);
		secs[i].name = xstrdup(dot ? dot + 1 : in->tables[i]);
	}
	*n = in->ntables;
	return 0;
}

/* the index of each section, distinct: schema_table when two tables
 * share a name */
static void
name_indices(const struct init *in, struct section *secs, int n)
{
	char buf[600];
	int i, k;

	for (i = 0; i < n; i++) {
		secs[i].index = index_of(in->tmod, secs[i].name);
		for (k = 0; k < i; k++)
			if (strcmp(secs[k].index, secs[i].index) == 0) {
				free(secs[i].index);
				snprintf(buf, sizeof(buf), "%s_%s",
				    secs[i].schema, secs[i].name);
				secs[i].index = index_of(in->tmod, buf);
				break;
			}
	}
}

/* a file that may not be replaced without --force: 0 or the exit code */
static int
may_write(const struct init *in, const char *path)
{
	if (!in->force && access(path, F_OK) == 0) {
		fprintf(stderr, "pg2osync init: '%s' exists; --force replaces "
		    "it\n", path);
		return CLI_EXIT_FAILED;
	}
	return 0;
}

static int
write_mappings(const struct init *in, struct section *secs, int n)
{
	char path[8192], dir[4096];
	FILE *f;
	int i, rc;

	snprintf(dir, sizeof(dir), "%s/mappings", in->dir);
	for (i = 0; i < n; i++) {
		if (secs[i].mapping == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s.json", dir, secs[i].index);
		if ((rc = may_write(in, path)) != 0)
			return rc;
	}
	if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
		fprintf(stderr, "pg2osync init: could not create '%s': %s\n",
		    dir, strerror(errno));
		return CLI_EXIT_FAILED;
	}
	for (i = 0; i < n; i++) {
		if (secs[i].mapping == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s.json", dir, secs[i].index);
		if ((f = fopen(path, "w")) == NULL ||
		    fputs(secs[i].mapping, f) == EOF || fclose(f) == EOF) {
			fprintf(stderr, "pg2osync init: could not write '%s': "
			    "%s\n", path, strerror(errno));
			return CLI_EXIT_FAILED;
		}
		snprintf(path, sizeof(path), "mappings/%s.json",
		    secs[i].index);
		secs[i].mapping_rel = xstrdup(path);
	}
	return 0;
}

/* one of the source kind's own keys (lib/source.h), from its option: the
 * stream's names and the replica id; the kind's optional keys
 * (admin_url_env, slot_failover) keep their defaults, unwritten */
static void
source_key(FILE *f, const struct init *in, const char *key)
{
	const char *v;

	if (strcmp(key, "server_id") == 0) {
		fprintf(f, "  server_id: %lu    # our replica id: unique among "
		    "the server's replicas\n", in->server_id);
		return;
	}
	if (strcmp(key, "slot_name") == 0)
		v = in->slot;
	else if (strcmp(key, "publication") == 0)
		v = in->pub;
	else
		return;
	fprintf(f, "  %s: ", key);
	yaml_scalar(f, v);
	fputc('\n', f);
}

static int
write_config(const struct init *in, const struct section *secs, int n,
    const char *from)
{
	char stamp[32];
	time_t now = time(NULL);
	FILE *f;
	int i;

	strftime(stamp, sizeof(stamp), "%Y-%m-%d", gmtime(&now));
	if ((f = fopen(in->path, "w")) == NULL) {
		fprintf(stderr, "pg2osync init: could not write '%s': %s\n",
		    in->path, strerror(errno));
		return CLI_EXIT_FAILED;
	}
	fprintf(f, "# written by pg2osync init on %s %s\n"
	    "# every key: man 5 pg2osync.yaml\n", stamp, from);
	fprintf(f, "source:\n  url_env: ");
	yaml_scalar(f, in->url_env);
	fprintf(f, "    # the connection string stays in the environment\n");
	if (in->name != NULL) {
		fprintf(f, "  name: ");
		yaml_scalar(f, in->name);
		fprintf(f, "    # every metric's source label; --source of "
		    "the verbs\n");
	}
	for (i = 0; in->src->own_keys[i] != NULL; i++)
		source_key(f, in, in->src->own_keys[i]);
	fprintf(f, "target:\n  url: ");
	yaml_scalar(f, in->target);
	fprintf(f, "\n  flavor: %s", in->tmod->name);
	if (!in->flavor_known)
		fprintf(f, "    # not confirmed by the node: check it");
	/* a target that keeps no documents of ours keeps the checkpoint
	 * in files: the configuration refuses it without the directory */
	if (!target_can(in->tmod, TCAP_STATE_DOCS))
		fprintf(f, "\n  state_dir: /var/lib/pg2osync    # the "
		    "checkpoint: %s keeps no state of ours", in->tmod->name);
	fprintf(f, "\nsync:\n");
	for (i = 0; i < n; i++) {
		fprintf(f, "  ");
		yaml_scalar(f, secs[i].index);
		fprintf(f, ":\n    table: ");
		{
			char rel[600];

			snprintf(rel, sizeof(rel), "%s.%s", secs[i].schema,
			    secs[i].name);
			yaml_scalar(f, rel);
		}
		fprintf(f, "\n    index: ");
		yaml_scalar(f, secs[i].index);
		fputc('\n', f);
		if (secs[i].keyless)
			fprintf(f, "    append_only: true    # no primary key: "
			    "insert-only, each row filed under the hash of "
			    "its content\n");
		if (secs[i].mapping_rel)
			fprintf(f, "    mapping_file: %s\n",
			    secs[i].mapping_rel);
	}
	if (fclose(f) == EOF) {
		fprintf(stderr, "pg2osync init: could not write '%s': %s\n",
		    in->path, strerror(errno));
		return CLI_EXIT_FAILED;
	}
	return 0;
}

static int
option(struct init *in, const struct verb *v, int ch, const char *arg)
{
	long long id;

	switch (ch) {
	case 'c': in->path = arg; in->path_given = 1; break;
	case O_DIR: in->cfgdir = arg; break;
	case O_NAME: in->name = arg; break;
	case O_SOURCE: in->source = arg; break;
	case O_URL_ENV: in->url_env = arg; break;
	case O_TARGET: in->target = arg; break;
	case O_TABLE:
		if (in->ntables == MAX_TABLES)
			return cli_usage(v, "at most %d --table", MAX_TABLES);
		in->tables[in->ntables++] = arg;
		break;
	case O_FORCE: in->force = 1; break;
	case O_MAPPINGS: in->mappings = 1; break;
	case O_DECIMAL:
		if (strcmp(arg, "keyword") && strcmp(arg, "scaled_float"))
			return cli_usage(v, "--decimal takes 'keyword' or "
			    "'scaled_float'");
		in->mo.decimal_scaled = strcmp(arg, "scaled_float") == 0;
		break;
	case O_JSON:
		if (strcmp(arg, "object") && strcmp(arg, "flat_object"))
			return cli_usage(v, "--json takes 'object' or "
			    "'flat_object'");
		in->mo.json_flat = strcmp(arg, "flat_object") == 0;
		break;
	case O_SLOT: in->slot = arg; in->slot_given = 1; break;
	case O_PUBLICATION: in->pub = arg; in->pub_given = 1; break;
	case O_FLAVOR:
		if ((in->tmod = target_module_find(arg)) == NULL)
			return cli_usage(v, "--flavor takes opensearch, "
			    "elasticsearch or meilisearch");
		in->flavor_known = 1;
		break;
	case O_SERVER_ID:
		if ((id = cli_number(v, "server-id", arg)) < 1 ||
		    id > 4294967295LL)
			return id < 0 ? P2O_EXIT_USAGE : cli_usage(v,
			    "--server-id is 1 to 4294967295");
		in->server_id = (unsigned long)id;
		break;
	default:
		return P2O_EXIT_USAGE;
	}
	return 0;
}

/* connect and read the catalogue: 0, -1 when the source is not reachable
 * (offline, *why says so), or an exit code */
static int
catalogue(struct init *in, const char *url, struct section *secs, int *n,
    char *from, size_t fromlen, char *why, size_t whylen)
{
	struct config cfg;
	struct source_cat cat;
	struct p2o_err e;
	int rc, i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.path = (char *)"--source";
	cfg.source_url = (char *)url;
	cfg.source = in->src;
	source_cat_init(&cat);
	p2o_err_clear(&e);
	rc = source_ops_of(&cfg)->catalogue(&cfg, in->tables, in->ntables,
	    in->mappings ? &in->mo : NULL, &cat, &e);
	if (rc == -1) {
		snprintf(why, whylen, "%s", e.msg);
		/* unreachable: offline; refused: say so */
		rc = e.code == P2O_EXIT_TEMPFAIL ? -1 : cli_fail(&e);
	} else if (rc == 1) {
		fprintf(stderr, "pg2osync init: %s\n", e.msg);
		for (i = 0; i < cat.n; i++)
			fprintf(stderr, "  %s.%s%s\n", cat.t[i].schema,
			    cat.t[i].name, cat.t[i].has_key ? "" :
			    " (no key: append_only)");
		if (cat.n == 0)
			fprintf(stderr, "  (none)\n");
		rc = CLI_EXIT_FAILED;
	} else {
		snprintf(from, fromlen, "from %s", cat.from);
		from_catalogue(in, &cat, secs, n);
	}
	source_cat_release(&cat);
	return rc;
}

/* the engine at in->target, as the writer would find it, unless --flavor
 * said it: the default one, with a note, when the node did not say */
static void
target_flavor(struct init *in)
{
	struct config cfg;
	struct p2o_err e;
	char node[128], why[P2O_ERR_MAX];

	if (in->flavor_known)
		return;
	memset(&cfg, 0, sizeof(cfg));
	cfg.path = (char *)"--target";
	cfg.target_url = (char *)in->target;
	cfg.target_tls_verify = 1;
	in->tmod = target_module_find(NULL);
	p2o_err_clear(&e);
	if (target_identify(&cfg, &in->tmod, node, sizeof(node), why,
	    sizeof(why), &e) == -1)
		snprintf(why, sizeof(why), "%s", e.msg);
	if (in->tmod != NULL) {
		in->flavor_known = 1;
		return;
	}
	in->tmod = target_module_find(NULL);
	printf("note: %s did not say which engine it is (%s): the file "
	    "names target.flavor %s; set it if the node is another engine "
	    "(or give --flavor)\n", in->target, why, in->tmod->name);
}

/* without a url, the kind whose required key an option gave (--server-id
 * names MySQL), else the first */
static const struct source_module *
kind_of_options(const struct init *in)
{
	const struct source_module *const *m;

	for (m = source_modules; in->server_id && *m != NULL; m++)
		if ((*m)->required_key != NULL &&
		    strcmp((*m)->required_key, "server_id") == 0)
			return *m;
	return source_modules[0];
}

/* --server-id is its own key's; its default where the kind requires it */
static int
check_kind_options(struct init *in, const struct verb *v)
{
	int i, takes_id = 0;

	for (i = 0; in->src->own_keys[i] != NULL; i++)
		takes_id |= strcmp(in->src->own_keys[i], "server_id") == 0;
	if (!takes_id && in->server_id)
		return cli_usage(v, "--server-id does not apply to a %s source",
		    in->src->title);
	if (takes_id && in->server_id == 0)
		in->server_id = 4201;
	return 0;
}

/* --config-dir DIR --name NAME: the file is DIR/NAME.yaml, and the
 * slot and publication take NAME (as a slot may be spelt) unless given,
 * so that a second source does not take the first one's */
static int
into_dir(struct init *in, const struct verb *v, char **pathbuf)
{
	static char slot[64];
	struct sbuf p = SBUF_INIT;
	size_t i, n;

	if (in->name != NULL && (in->name[0] == '\0' || strlen(in->name) > 128
	    || in->name[strspn(in->name, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-/")] != '\0'))
		return cli_usage(v, "--name takes 1 to 128 characters from a-z, "
		    "A-Z, 0-9 and _ . : - /");
	if (in->cfgdir == NULL)
		return 0;
	if (in->path_given)
		return cli_usage(v, "-c and --config-dir both name the file: "
		    "give one");
	if (in->name == NULL || strchr(in->name, '/') != NULL ||
	    in->name[0] == '.')
		return cli_usage(v, "--config-dir needs --name NAME (no '/', "
		    "not starting with '.'): the file written is DIR/NAME.yaml");
	sbuf_addf(&p, "%s/%s.yaml", in->cfgdir, in->name);
	*pathbuf = p.buf;
	in->path = p.buf;
	n = strlen(in->name);
	for (i = 0; i < n && i < sizeof(slot) - 1; i++)
		slot[i] = isalnum((unsigned char)in->name[i]) ?
		    (char)tolower((unsigned char)in->name[i]) : '_';
	slot[i] = '\0';
	if (!in->slot_given)
		in->slot = slot;
	if (!in->pub_given)
		in->pub = slot;
	return 0;
}

/* the directory written into, checked as one set: every rule the new
 * file breaks with the others named (78; the file stays, to be fixed) */
static int
check_dir(const struct init *in)
{
	struct config_set set;
	struct sbuf why = SBUF_INIT;
	struct p2o_err e;
	const char *p, *nl;
	int rc = 0;

	if (in->cfgdir == NULL)
		return 0;
	p2o_err_clear(&e);
	if (config_set_load(in->cfgdir, CONFIG_SECRETS_NONE, &set, &why,
	    &e) == -1) {
		for (p = why.buf; p != NULL && *p; p = nl + 1) {
			nl = strchr(p, '\n');
			fprintf(stderr, "pg2osync init: %.*s\n", (int)(nl - p), p);
		}
		fprintf(stderr, "pg2osync init: wrote %s, but %s\n", in->path,
		    e.msg);
		rc = e.code;
	}
	config_set_release(&set);
	sbuf_release(&why);
	return rc;
}

static int
run(const struct verb *v, int argc, char **argv)
{
	struct init in = { .path = CLI_DEFAULT_CONFIG,
	    .url_env = "P2O_SOURCE_URL", .target = "http://127.0.0.1:9200",
	    .slot = "pg2osync", .pub = "pg2osync", .server_id = 0 };
	struct section secs[MAX_TABLES + 1];
	struct config check;
	char from[600] = "without the catalogue", why[1200] = "", *dirbuf;
	char *pathbuf = NULL;
	const char *arg, *url;
	int ch, rc, n = 0, i, nmap = 0, nkeyless = 0, online = 0;

	memset(secs, 0, sizeof(secs));
	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0)
		if ((rc = option(&in, v, ch, arg)) != 0)
			return rc;
	if (ch < 0)
		return cli_opt_exit(ch);
	if (config_check_envname(in.url_env, why, sizeof(why)) == -1)
		return cli_usage(v, "--url-env '%s' %s", in.url_env, why);
	if (strstr(in.target, "@") != NULL)
		return cli_usage(v, "--target must not carry credentials: the "
		    "file takes target.username and target.password_env");
	url = in.source ? in.source : getenv(in.url_env);
	if (url != NULL && url[0] != '\0') {
		if ((in.src = source_for_url(url)) == NULL)
			return cli_usage(v, "the source url must be a %s",
			    source_url_forms());
	} else
		in.src = kind_of_options(&in);
	if ((rc = check_kind_options(&in, v)) != 0)
		return rc;
	if ((rc = into_dir(&in, v, &pathbuf)) != 0)
		return rc;
	if (in.source && has_password(in.source))
		log_warnx("the password in --source is not written to '%s'; "
		    "put the url in %s (an argv can be read by every user of "
		    "the machine)", in.path, in.url_env);
	if ((rc = may_write(&in, in.path)) != 0)
		return rc;
	dirbuf = xstrdup(in.path);
	in.dir = dirname(dirbuf);

	/* the engine first: its names and its mapping files */
	target_flavor(&in);
	if (url != NULL && url[0] != '\0') {
		rc = catalogue(&in, url, secs, &n, from, sizeof(from), why,
		    sizeof(why));
		if (rc > 0)
			goto out;
		online = rc == 0;
	} else
		snprintf(why, sizeof(why), "%s is not set and --source was "
		    "not given", in.url_env);
	if (!online) {
		printf("note: %s; writing the file without the catalogue: "
		    "the tables are taken as named%s\n", why, in.mappings ?
		    ", and no mapping file is written (it needs the column "
		    "types)" : "");
		if ((rc = offline(&in, secs, &n)) != 0)
			goto out;
	}
	if (n == 0) {
		fprintf(stderr, "pg2osync init: the role can read no table to "
		    "sync\n");
		rc = CLI_EXIT_FAILED;
		goto out;
	}
	name_indices(&in, secs, n);
	if (online && in.mappings && (rc = write_mappings(&in, secs, n)) != 0)
		goto out;
	if ((rc = write_config(&in, secs, n, from)) != 0)
		goto out;
	/* what was written must load: a mistake here is ours */
	if ((rc = cli_config(in.path, CONFIG_SECRETS_NONE, &check)) != 0)
		goto out;
	config_release(&check);
	if ((rc = check_dir(&in)) != 0)
		goto out;

	for (i = 0; i < n; i++) {
		nmap += secs[i].mapping_rel != NULL;
		nkeyless += secs[i].keyless;
	}
	printf("wrote %s: %d sync section(s)", in.path, n);
	if (nkeyless)
		printf(", %d append-only (no primary key)", nkeyless);
	if (nmap)
		printf(", %d mapping file(s) in %s/mappings", nmap, in.dir);
	printf("\nnext:\n");
	if (getenv(in.url_env) == NULL)
		printf("  export %s='%sUSER:PASSWORD@HOST/DB'\n", in.url_env,
		    in.src->schemes[0]);
	if (in.cfgdir != NULL)
		snprintf(why, sizeof(why), "--config-dir %s --source %s",
		    in.cfgdir, in.name);
	else
		snprintf(why, sizeof(why), "-c %s", in.path);
	printf("  pg2osync validate %s     # every prerequisite, nothing "
	    "changed\n", why);
	printf("  pg2osync setup-sql %s    # the SQL a DBA runs when "
	    "validate asks for it\n", why);
	printf("  pg2osync bootstrap %s    # what the source needs, and "
	    "the indices\n", why);
	if (in.cfgdir != NULL)
		printf("  pg2osync run --config-dir %s    # every source of "
		    "the directory, one process\n", in.cfgdir);
	else
		printf("  pg2osync run %s\n", why);
	rc = 0;
out:
	for (i = 0; i < n; i++) {
		free(secs[i].schema);
		free(secs[i].name);
		free(secs[i].index);
		free(secs[i].mapping);
		free(secs[i].mapping_rel);
	}
	free(dirbuf);
	free(pathbuf);
	return rc;
}

const struct verb verb_init = {
	.name = "init",
	.summary = "write a starter configuration from the live catalogue",
	.synopsis = "[-c FILE | --config-dir DIR --name NAME] [--source URL] "
	    "[--table TABLE]... [--mappings] [options]",
	.about = "Writes a configuration for the tables named (or every "
	    "table the role can read), qualified from the source's "
	    "catalogue: a table without a primary key is declared "
	    "append_only. With --mappings each index gets a mapping_file "
	    "derived from the column types (an unsigned 64-bit column as "
	    "unsigned_long, numeric as keyword or scaled_float, timestamps "
	    "as date or date_nanos by their precision, JSON as object or "
	    "kept whole - flat_object, flattened on Elasticsearch -, text as "
	    "text with a keyword sub-field). The url is read from --source or "
	    "the --url-env variable and never written: the file names the "
	    "variable. With --config-dir the file is DIR/NAME.yaml, its "
	    "source named NAME (its slot and publication too unless given), "
	    "and the directory is checked as one set once it is written. "
	    "The --target node is asked which engine it is, for "
	    "target.flavor (--flavor names it without asking). Without a "
	    "connection the file is written from the names given, with a "
	    "note. Prints the commands that come next.",
	.opts = opts,
	.exits = "  0   written\n  1   a file exists (without --force), a "
	    "table is not in the catalogue,\n      or a file could not be "
	    "written\n  64  bad command line\n  77  authentication failed\n"
	    "  78  the url cannot be used, or the directory written into "
	    "breaks a rule of a\n      set (the file is written)\n",
	.run = run,
	.dir = CLI_DIR_OWN,
};
