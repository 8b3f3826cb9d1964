/*
 * config.c - the YAML configuration. Reads one file (or buffer) with
 * libyaml's event API into struct config, checks every value against the
 * key table below, fills defaults and resolves the *_env secrets. Owns every
 * message about the file; each names file, line and key.
 *
 * It never exits and never logs or returns a value that may hold a secret:
 * errors quote key names, variable names and identifiers, never urls or
 * passwords. The only thing logged is the inline-secret warning, and only
 * once the whole file has loaded.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "config.h"
#include "log.h"
#include "sbuf.h"

enum section { S_SOURCE, S_TARGET, S_SYNC, S_ENGINE, S_METRICS, NSECTIONS };

static const char *const section_names[NSECTIONS] = {
	"source", "target", "sync", "engine", "metrics"
};

/*
 * V_STR: a non-empty string.   V_INT: an int in [min, max].
 * V_SIZE: a size_t byte count in [min, max], integer or "5MiB".
 * V_ENUM: one of choices.      V_LIST: a non-empty list of distinct strings.
 */
enum vtype { V_STR, V_INT, V_SIZE, V_ENUM, V_LIST };

struct ckey {
	enum section	 section;
	const char	*name;
	enum vtype	 type;
	long long	 min, max;
	const char	*def;		/* parsed like a value from the file */
	size_t		 off;		/* into struct config, or struct
					   sync_section for S_SYNC */
	size_t		 count_off;	/* V_LIST: the int element count */
	int		 required;	/* when its section is present */
	/* 0 if the string is acceptable, else -1 and why ("must ...") */
	int		(*check)(const char *, char *why, size_t);
	const char *const *choices;	/* V_ENUM, NULL-terminated */
};

static int check_slot(const char *, char *, size_t);
static int check_ident63(const char *, char *, size_t);
static int check_envname(const char *, char *, size_t);
static int check_table(const char *, char *, size_t);
static int check_index(const char *, char *, size_t);
static int check_bind(const char *, char *, size_t);

static const char *const sslmodes[] = {
	"disable", "allow", "prefer", "require", "verify-ca", "verify-full", NULL
};

#define CFG(f)	offsetof(struct config, f)
#define SYN(f)	offsetof(struct sync_section, f)
#define SIZE_LIMIT	(1LL << 30)

static const struct ckey keys[] = {
	{ S_SOURCE, "url", V_STR, .off = CFG(source_url) },
	{ S_SOURCE, "url_env", V_STR, .off = CFG(source_url_env),
	    .check = check_envname },
	{ S_SOURCE, "slot_name", V_STR, .def = "pg2osync",
	    .off = CFG(slot_name), .check = check_slot },
	{ S_SOURCE, "publication", V_STR, .def = "pg2osync",
	    .off = CFG(publication), .check = check_ident63 },
	{ S_SOURCE, "sslmode", V_ENUM, .off = CFG(sslmode),
	    .choices = sslmodes },
	{ S_SOURCE, "sslrootcert", V_STR, .off = CFG(sslrootcert) },
	{ S_SOURCE, "sslcert", V_STR, .off = CFG(sslcert) },
	{ S_SOURCE, "sslkey", V_STR, .off = CFG(sslkey) },
	{ S_SOURCE, "load_workers", V_INT, .min = 1, .max = 16,
	    .def = "1", .off = CFG(load_workers) },
	{ S_SOURCE, "reconnect_max", V_INT, .min = 0, .max = INT_MAX,
	    .def = "10", .off = CFG(reconnect_max) },

	{ S_TARGET, "url", V_STR, .off = CFG(target_url), .required = 1 },
	{ S_TARGET, "username", V_STR, .off = CFG(target_username) },
	{ S_TARGET, "password", V_STR, .off = CFG(target_password) },
	{ S_TARGET, "password_env", V_STR, .off = CFG(target_password_env),
	    .check = check_envname },

	/* table lands in rel as written; finish_sync() splits it */
	{ S_SYNC, "table", V_STR, .off = SYN(rel), .required = 1,
	    .check = check_table },
	{ S_SYNC, "index", V_STR, .off = SYN(index), .check = check_index },
	{ S_SYNC, "columns", V_LIST, .off = SYN(columns),
	    .count_off = SYN(ncolumns) },
	{ S_SYNC, "exclude_columns", V_LIST, .off = SYN(exclude_columns),
	    .count_off = SYN(nexclude_columns) },

	{ S_ENGINE, "batch_size", V_INT, .min = 1, .max = INT_MAX,
	    .def = "1000", .off = CFG(batch_size) },
	{ S_ENGINE, "batch_max_bytes", V_SIZE, .min = 1, .max = SIZE_LIMIT,
	    .def = "5MiB", .off = CFG(batch_max_bytes) },
	{ S_ENGINE, "write_concurrency", V_INT, .min = 1, .max = 64,
	    .def = "1", .off = CFG(write_concurrency) },
	{ S_ENGINE, "checkpoint_interval_ms", V_INT, .min = 10,
	    .max = 86400000, .def = "1000", .off = CFG(checkpoint_interval_ms) },

	{ S_METRICS, "bind", V_STR, .off = CFG(metrics_bind), .required = 1,
	    .check = check_bind },
};

#define NKEYS	(sizeof(keys) / sizeof(keys[0]))

struct parse {
	yaml_parser_t	 yp;
	yaml_event_t	 ev;		/* the current event, owned */
	int		 have_ev;
	const char	*name;
	const char	*buf;		/* the whole input, for reader errors */
	size_t		 len;
	struct config	*cfg;
	char		*err;
	size_t		 errlen;
	/* where each key was set (0 = absent); sync keys: current section */
	int		 key_line[NKEYS];
	int		 section_line[NSECTIONS];
};

static int
perr(struct parse *p, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
perr(struct parse *p, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->errlen == 0)
		return -1;
	if (line > 0)
		n = snprintf(p->err, p->errlen, "%s:%d: ", p->name, line);
	else
		n = snprintf(p->err, p->errlen, "%s: ", p->name);
	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

static int
ev_line(const yaml_event_t *ev)
{
	return (int)ev->start_mark.line + 1;
}

/* a reader error (bad encoding) has an offset but no mark */
static int
offset_line(const struct parse *p, size_t off)
{
	size_t i;
	int line = 1;

	for (i = 0; i < off && i < p->len; i++)
		if (p->buf[i] == '\n')
			line++;
	return line;
}

/* end of input after a final newline is "the line after the last":
 * name the last one instead */
static int
mark_line(const struct parse *p, const yaml_mark_t *m)
{
	if (m->index >= p->len && m->column == 0 && m->line > 0)
		return (int)m->line;
	return (int)m->line + 1;
}

static int
syntax_error(struct parse *p, const yaml_parser_t *yp)
{
	const char *problem = yp->problem ? yp->problem : "invalid yaml";
	int line, cline;

	if (yp->error == YAML_READER_ERROR)
		return perr(p, offset_line(p, yp->problem_offset), "%s",
		    problem);
	line = mark_line(p, &yp->problem_mark);
	cline = mark_line(p, &yp->context_mark);
	if (yp->context && cline != line)
		return perr(p, line, "%s (%s that started on line %d)",
		    problem, yp->context, cline);
	return perr(p, line, "%s", problem);
}

/* Fetch the next event; anchors, aliases and tags are refused here so that
 * nothing below has to think about shared nodes or retyped scalars. */
static int
next(struct parse *p)
{
	yaml_event_t *ev = &p->ev;
	const yaml_char_t *anchor = NULL, *tag = NULL;

	if (p->have_ev) {
		yaml_event_delete(ev);
		p->have_ev = 0;
	}
	if (!yaml_parser_parse(&p->yp, ev))
		return syntax_error(p, &p->yp);
	p->have_ev = 1;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return perr(p, ev_line(ev),
		    "anchors and aliases are not supported");
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	default:
		break;
	}
	if (anchor)
		return perr(p, ev_line(ev),
		    "anchors and aliases are not supported");
	if (tag)
		return perr(p, ev_line(ev), "tags are not supported");
	return 0;
}

static int
is_null(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;

	if (ev->type != YAML_SCALAR_EVENT ||
	    ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	return *s == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	    strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

/* the scalar as a C string, or NULL if it holds a NUL byte */
static const char *
scalar(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;

	if (strlen(s) != ev->data.scalar.length)
		return NULL;
	return s;
}

static int
parse_ll(const char *s, long long *out)
{
	char *end;

	if (!isdigit((unsigned char)s[0]) &&
	    !((s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1])))
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	return 0;
}

/* "5242880", "5MiB", "512 KiB", "5MB": KB/MB/GB are powers of 1000,
 * KiB/MiB/GiB powers of 1024, as their names say */
static int
parse_size(const char *s, unsigned long long *out)
{
	static const struct {
		const char *unit;
		unsigned long long mult;
	} units[] = {
		{ "", 1 }, { "b", 1 },
		{ "kb", 1000ULL }, { "mb", 1000ULL * 1000 },
		{ "gb", 1000ULL * 1000 * 1000 },
		{ "kib", 1ULL << 10 }, { "mib", 1ULL << 20 },
		{ "gib", 1ULL << 30 },
	};
	unsigned long long v = 0;
	size_t i;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (ULLONG_MAX - 9) / 10)
			return -1;
		v = v * 10 + (unsigned)(*s - '0');
	}
	while (*s == ' ')
		s++;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(s, units[i].unit) != 0)
			continue;
		if (v > ULLONG_MAX / units[i].mult)
			return -1;
		*out = v * units[i].mult;
		return 0;
	}
	return -1;
}

/* what a key's value must be, for messages */
static const char *
expectation(const struct ckey *k, char *buf, size_t len)
{
	const char *const *c;
	size_t n;

	switch (k->type) {
	case V_STR:
		return "must be a non-empty string";
	case V_INT:
		if (k->max == INT_MAX)
			snprintf(buf, len, "must be an integer >= %lld",
			    k->min);
		else
			snprintf(buf, len,
			    "must be an integer between %lld and %lld",
			    k->min, k->max);
		return buf;
	case V_SIZE:
		snprintf(buf, len, "must be a byte count between %lld and "
		    "%lld, as an integer or a string such as \"5MiB\"",
		    k->min, k->max);
		return buf;
	case V_ENUM:
		n = (size_t)snprintf(buf, len, "must be one of");
		for (c = k->choices; *c && n < len; c++)
			n += (size_t)snprintf(buf + n, len - n, "%s %s",
			    c == k->choices ? "" : ",", *c);
		return buf;
	case V_LIST:
		return "must be a non-empty list of strings";
	}
	return "is invalid";
}

static void *
field(void *base, size_t off)
{
	return (char *)base + off;
}

/* store one scalar value s (from the file or a default) into base */
static int
store(struct parse *p, const struct ckey *k, void *base, const char *path,
    const char *s, int line)
{
	char why[256];
	const char *const *c;
	long long ll;
	unsigned long long ull;
	char **dst;

	switch (k->type) {
	case V_STR:
		if (*s == '\0')
			return perr(p, line, "'%s' %s", path,
			    expectation(k, why, sizeof(why)));
		if (k->check && k->check(s, why, sizeof(why)) == -1)
			return perr(p, line, "'%s' %s", path, why);
		dst = field(base, k->off);
		free(*dst);
		*dst = xstrdup(s);
		return 0;
	case V_ENUM:
		for (c = k->choices; *c; c++)
			if (strcmp(s, *c) == 0)
				break;
		if (*c == NULL)
			return perr(p, line, "'%s' %s", path,
			    expectation(k, why, sizeof(why)));
		dst = field(base, k->off);
		free(*dst);
		*dst = xstrdup(s);
		return 0;
	case V_INT:
		if (parse_ll(s, &ll) == -1 || ll < k->min || ll > k->max)
			return perr(p, line, "'%s' %s", path,
			    expectation(k, why, sizeof(why)));
		*(int *)field(base, k->off) = (int)ll;
		return 0;
	case V_SIZE:
		if (parse_size(s, &ull) == -1 ||
		    ull < (unsigned long long)k->min ||
		    ull > (unsigned long long)k->max)
			return perr(p, line, "'%s' %s", path,
			    expectation(k, why, sizeof(why)));
		*(size_t *)field(base, k->off) = (size_t)ull;
		return 0;
	case V_LIST:
		break;
	}
	return perr(p, line, "'%s' %s", path,
	    expectation(k, why, sizeof(why)));
}

/* the current event starts a list value */
static int
parse_list(struct parse *p, const struct ckey *k, void *base,
    const char *path)
{
	char why[64];
	char ***dst = field(base, k->off);
	int *count = field(base, k->count_off);
	const char *s;
	int i;

	if (p->ev.type != YAML_SEQUENCE_START_EVENT)
		return perr(p, ev_line(&p->ev), "'%s' %s", path,
		    expectation(k, why, sizeof(why)));
	for (;;) {
		if (next(p) == -1)
			return -1;
		if (p->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (p->ev.type != YAML_SCALAR_EVENT || is_null(&p->ev) ||
		    (s = scalar(&p->ev)) == NULL || *s == '\0')
			return perr(p, ev_line(&p->ev), "'%s' %s", path,
			    expectation(k, why, sizeof(why)));
		for (i = 0; i < *count; i++)
			if (strcmp((*dst)[i], s) == 0)
				return perr(p, ev_line(&p->ev),
				    "'%s' lists '%s' twice", path, s);
		*dst = xrealloc(*dst, sizeof(**dst) * (*count + 1));
		(*dst)[(*count)++] = xstrdup(s);
	}
	if (*count == 0)
		return perr(p, ev_line(&p->ev), "'%s' %s", path,
		    expectation(k, why, sizeof(why)));
	return 0;
}

static const struct ckey *
find_key(enum section sec, const char *name)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (keys[i].section == sec && strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/*
 * The current event starts the mapping of section sec (prefix "source" or
 * "sync.items"); read its keys into base. line is where the section's key
 * was, for missing-key messages.
 */
static int
parse_keys(struct parse *p, enum section sec, void *base, const char *prefix,
    int line)
{
	char path[512], why[256];
	const struct ckey *k;
	const char *name;
	size_t i;

	if (p->ev.type != YAML_MAPPING_START_EVENT)
		return perr(p, ev_line(&p->ev), "'%s' must be a mapping",
		    prefix);
	for (;;) {
		if (next(p) == -1)
			return -1;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (p->ev.type != YAML_SCALAR_EVENT ||
		    (name = scalar(&p->ev)) == NULL)
			return perr(p, ev_line(&p->ev),
			    "keys in '%s' must be strings", prefix);
		snprintf(path, sizeof(path), "%s.%s", prefix, name);
		if ((k = find_key(sec, name)) == NULL)
			return perr(p, ev_line(&p->ev), "unknown key '%s'",
			    path);
		if (p->key_line[k - keys])
			return perr(p, ev_line(&p->ev), "duplicate key '%s'",
			    path);
		p->key_line[k - keys] = ev_line(&p->ev);
		if (next(p) == -1)
			return -1;
		if (k->type == V_LIST) {
			if (parse_list(p, k, base, path) == -1)
				return -1;
			continue;
		}
		if (p->ev.type != YAML_SCALAR_EVENT || is_null(&p->ev))
			return perr(p, ev_line(&p->ev), "'%s' %s", path,
			    expectation(k, why, sizeof(why)));
		if ((name = scalar(&p->ev)) == NULL)
			return perr(p, ev_line(&p->ev),
			    "'%s' must not contain a NUL byte", path);
		if (store(p, k, base, path, name, ev_line(&p->ev)) == -1)
			return -1;
	}
	for (i = 0; i < NKEYS; i++)
		if (keys[i].section == sec && keys[i].required &&
		    !p->key_line[i])
			return perr(p, line, "missing required key '%s.%s'",
			    prefix, keys[i].name);
	return 0;
}

static int
key_line(const struct parse *p, enum section sec, const char *name)
{
	return p->key_line[find_key(sec, name) - keys];
}

/* a sync section's own rules, checked as soon as its mapping ends */
static int
finish_sync(struct parse *p, struct sync_section *s, const char *prefix)
{
	char why[256];
	int lc = key_line(p, S_SYNC, "columns");
	int lx = key_line(p, S_SYNC, "exclude_columns");
	const char *dot;

	if (lc && lx)
		return perr(p, lc > lx ? lc : lx, "'%s.%s' cannot be combined "
		    "with '%s.%s'", prefix, lc > lx ? "columns" :
		    "exclude_columns", prefix, lc > lx ? "exclude_columns" :
		    "columns");

	/* schema stays NULL when unqualified: finish_config() knows the
	 * source kind and so what the default is */
	if ((dot = strchr(s->rel, '.')) != NULL) {
		s->schema = xstrndup(s->rel, (size_t)(dot - s->rel));
		s->table = xstrdup(dot + 1);
	} else
		s->table = xstrdup(s->rel);

	if (s->index == NULL) {
		if (check_index(s->table, why, sizeof(why)) == -1)
			return perr(p, s->line, "'%s.index' is not set and the "
			    "table name '%s' is not a valid index name: it %s",
			    prefix, s->table, why);
		s->index = xstrdup(s->table);
	}
	return 0;
}

/* the current event starts the mapping under "sync:" */
static int
parse_sync(struct parse *p, int line)
{
	struct config *cfg = p->cfg;
	struct sync_section *s;
	char prefix[512];
	const char *name;
	size_t i;
	int j;

	if (p->ev.type != YAML_MAPPING_START_EVENT)
		return perr(p, ev_line(&p->ev),
		    "'sync' must be a mapping of sections, one per table");
	for (;;) {
		if (next(p) == -1)
			return -1;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (p->ev.type != YAML_SCALAR_EVENT ||
		    (name = scalar(&p->ev)) == NULL || *name == '\0')
			return perr(p, ev_line(&p->ev),
			    "section names in 'sync' must be non-empty strings");
		snprintf(prefix, sizeof(prefix), "sync.%s", name);
		for (j = 0; j < cfg->nsyncs; j++)
			if (strcmp(cfg->syncs[j].name, name) == 0)
				return perr(p, ev_line(&p->ev),
				    "duplicate key '%s'", prefix);
		cfg->syncs = xrealloc(cfg->syncs,
		    sizeof(*cfg->syncs) * (cfg->nsyncs + 1));
		s = &cfg->syncs[cfg->nsyncs++];
		memset(s, 0, sizeof(*s));
		s->name = xstrdup(name);
		s->line = ev_line(&p->ev);
		for (i = 0; i < NKEYS; i++)
			if (keys[i].section == S_SYNC)
				p->key_line[i] = 0;
		if (next(p) == -1 ||
		    parse_keys(p, S_SYNC, s, prefix, s->line) == -1 ||
		    finish_sync(p, s, prefix) == -1)
			return -1;
	}
	if (cfg->nsyncs == 0)
		return perr(p, line, "'sync' must hold at least one section");
	return 0;
}

static int
has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* 0 if url is none of the accepted forms */
static enum source_kind
source_kind_of(const char *url)
{
	if (has_prefix(url, "postgres://") || has_prefix(url, "postgresql://"))
		return SOURCE_POSTGRES;
	if (has_prefix(url, "mysql://") || has_prefix(url, "mariadb://"))
		return SOURCE_MYSQL;
	/* a libpq conninfo string: "host=db dbname=app user=sync" */
	if (strstr(url, "://") == NULL && strchr(url, '=') != NULL)
		return SOURCE_POSTGRES;
	return 0;
}

/* user:pass@ in the authority, ?password= in the query, or a conninfo
 * password keyword */
static int
has_inline_password(const char *url)
{
	const char *auth, *end, *at, *q, *s;

	if ((auth = strstr(url, "://")) != NULL) {
		auth += 3;
		end = auth + strcspn(auth, "/?#");
		for (at = NULL, s = auth; s < end; s++)
			if (*s == '@')
				at = s;
		if (at && memchr(auth, ':', (size_t)(at - auth)))
			return 1;
		for (q = strchr(end, '?'); q && *q && *q != '#';
		    q += strcspn(q + 1, "&#") + 1)
			if (has_prefix(q + 1, "password="))
				return 1;
		return 0;
	}
	for (s = url; (s = strstr(s, "password")) != NULL; s += 8) {
		const char *v = s + 8;

		if (s != url && !isspace((unsigned char)s[-1]))
			continue;
		while (isspace((unsigned char)*v))
			v++;
		if (*v == '=')
			return 1;
	}
	return 0;
}

/* checks target.url and strips trailing slashes in place */
static int
check_target_url(char *url, char *why, size_t len)
{
	const char *host, *end, *port;
	size_t n;

	if (has_prefix(url, "http://"))
		host = url + 7;
	else if (has_prefix(url, "https://"))
		host = url + 8;
	else {
		snprintf(why, len, "must start with http:// or https://");
		return -1;
	}
	end = host + strcspn(host, "/");
	if (end == host) {
		snprintf(why, len, "must name a host");
		return -1;
	}
	if (memchr(host, '@', (size_t)(end - host))) {
		snprintf(why, len, "must not hold credentials; use "
		    "'target.username' and 'target.password_env'");
		return -1;
	}
	if (strpbrk(url, "?# \t\r\n")) {
		snprintf(why, len, "must not hold a query, a fragment or "
		    "white space");
		return -1;
	}
	/* Serverless is refused: SigV4-only, and custom ids work on
	 * one collection type of three */
	port = memchr(host, ':', (size_t)(end - host));
	n = (size_t)((port ? port : end) - host);
	if (n >= 19 && strncasecmp(host + n - 19, ".aoss.amazonaws.com", 19)
	    == 0) {
		snprintf(why, len, "names Amazon OpenSearch Serverless, which "
		    "is not supported");
		return -1;
	}
	n = strlen(url);
	while (n > 0 && url[n - 1] == '/' && url + n - 1 >= end)
		url[--n] = '\0';
	return 0;
}

/* getenv for a *_env key; never quotes the value */
static int
resolve_env(struct parse *p, const char *path, int line, const char *var,
    char **dst)
{
	const char *v = getenv(var);

	if (v == NULL)
		return perr(p, line, "'%s' names '%s', which is not set",
		    path, var);
	if (*v == '\0')
		return perr(p, line, "'%s' names '%s', which is empty",
		    path, var);
	free(*dst);
	*dst = xstrdup(v);
	return 0;
}

static int
finish_source(struct parse *p)
{
	struct config *cfg = p->cfg;
	int lurl = key_line(p, S_SOURCE, "url");
	int lenv = key_line(p, S_SOURCE, "url_env");
	int lcert = key_line(p, S_SOURCE, "sslcert");
	int lkey = key_line(p, S_SOURCE, "sslkey");

	if (lurl && lenv)
		return perr(p, lurl > lenv ? lurl : lenv, "'source.url' and "
		    "'source.url_env' cannot both be set");
	if (!lurl && !lenv)
		return perr(p, p->section_line[S_SOURCE], "missing required "
		    "key 'source.url' (or 'source.url_env')");
	if (lenv && resolve_env(p, "source.url_env", lenv,
	    cfg->source_url_env, &cfg->source_url) == -1)
		return -1;
	if ((cfg->source_kind = source_kind_of(cfg->source_url)) == 0) {
		if (lenv)
			return perr(p, lenv, "'source.url_env': the value of "
			    "'%s' must be a postgres://, postgresql://, "
			    "mysql:// or mariadb:// url, or a key=value "
			    "conninfo string", cfg->source_url_env);
		return perr(p, lurl, "'source.url' must be a postgres://, "
		    "postgresql://, mysql:// or mariadb:// url, or a "
		    "key=value conninfo string");
	}
	if (!lcert != !lkey)
		return perr(p, lcert ? lcert : lkey, "'source.sslcert' and "
		    "'source.sslkey' must be set together");
	return 0;
}

static int
finish_target(struct parse *p)
{
	struct config *cfg = p->cfg;
	char why[256];
	int lurl = key_line(p, S_TARGET, "url");
	int lpw = key_line(p, S_TARGET, "password");
	int lenv = key_line(p, S_TARGET, "password_env");

	if (check_target_url(cfg->target_url, why, sizeof(why)) == -1)
		return perr(p, lurl, "'target.url' %s", why);
	if (lpw && lenv)
		return perr(p, lpw > lenv ? lpw : lenv, "'target.password' and "
		    "'target.password_env' cannot both be set");
	if ((lpw || lenv) && cfg->target_username == NULL)
		return perr(p, lpw ? lpw : lenv, "'target.%s' needs "
		    "'target.username'", lpw ? "password" : "password_env");
	if (lenv && resolve_env(p, "target.password_env", lenv,
	    cfg->target_password_env, &cfg->target_password) == -1)
		return -1;
	return 0;
}

static int
finish_syncs(struct parse *p)
{
	struct config *cfg = p->cfg;
	struct sync_section *s, *o;
	char *rel;
	int i, j;

	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		if (s->schema == NULL) {
			/* a MySQL table lives in a database the url need
			 * not name; guessing one would sync the wrong table */
			if (cfg->source_kind == SOURCE_MYSQL)
				return perr(p, s->line, "'sync.%s.table' must "
				    "be 'database.table' for a mysql source",
				    s->name);
			s->schema = xstrdup("public");
		}
		rel = xmalloc(strlen(s->schema) + strlen(s->table) + 2);
		sprintf(rel, "%s.%s", s->schema, s->table);
		free(s->rel);
		s->rel = rel;
		for (j = 0; j < i; j++) {
			o = &cfg->syncs[j];
			if (strcmp(o->rel, s->rel) == 0)
				return perr(p, s->line, "sync sections '%s' "
				    "and '%s' both sync table '%s'", o->name,
				    s->name, s->rel);
			/* without a per-section id both would file row 1
			 * under _id "1" (one index per table until
			 * ids are configurable) */
			if (strcmp(o->index, s->index) == 0)
				return perr(p, s->line, "sync sections '%s' "
				    "and '%s' both write index '%s'", o->name,
				    s->name, s->index);
		}
	}
	return 0;
}

/* warnings go out only for a file that loaded: one message per problem */
static void
warn_inline_secrets(struct parse *p)
{
	struct config *cfg = p->cfg;
	int lurl = key_line(p, S_SOURCE, "url");
	int lpw = key_line(p, S_TARGET, "password");

	if (lurl && has_inline_password(cfg->source_url))
		log_warnx("%s:%d: 'source.url' holds an inline password; "
		    "name an environment variable with 'source.url_env' "
		    "instead", p->name, lurl);
	if (lpw)
		log_warnx("%s:%d: 'target.password' is inline; name an "
		    "environment variable with 'target.password_env' "
		    "instead", p->name, lpw);
}

static int
finish_config(struct parse *p)
{
	static const enum section required[] = { S_SOURCE, S_TARGET, S_SYNC };
	size_t i;

	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!p->section_line[required[i]])
			return perr(p, 1, "missing required key '%s'",
			    section_names[required[i]]);
	if (finish_source(p) == -1 || finish_target(p) == -1 ||
	    finish_syncs(p) == -1)
		return -1;
	warn_inline_secrets(p);
	return 0;
}

static int
parse_root(struct parse *p)
{
	const char *name;
	int sec, line;

	if (next(p) == -1)
		return -1;
	if (p->ev.type != YAML_STREAM_START_EVENT)
		return perr(p, ev_line(&p->ev), "invalid yaml stream");
	if (next(p) == -1)
		return -1;
	if (p->ev.type == YAML_STREAM_END_EVENT)
		return perr(p, 1, "the configuration is empty");
	if (next(p) == -1)
		return -1;
	if (is_null(&p->ev))
		return perr(p, ev_line(&p->ev), "the configuration is empty");
	if (p->ev.type != YAML_MAPPING_START_EVENT)
		return perr(p, ev_line(&p->ev), "the configuration must be a "
		    "mapping of sections (source, target, sync, ...)");
	for (;;) {
		if (next(p) == -1)
			return -1;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (p->ev.type != YAML_SCALAR_EVENT ||
		    (name = scalar(&p->ev)) == NULL)
			return perr(p, ev_line(&p->ev),
			    "section names must be strings");
		for (sec = 0; sec < NSECTIONS; sec++)
			if (strcmp(section_names[sec], name) == 0)
				break;
		line = ev_line(&p->ev);
		if (sec == NSECTIONS)
			return perr(p, line, "unknown key '%s'", name);
		if (p->section_line[sec])
			return perr(p, line, "duplicate key '%s'", name);
		p->section_line[sec] = line;
		if (next(p) == -1)
			return -1;
		if (sec == S_SYNC) {
			if (parse_sync(p, line) == -1)
				return -1;
		} else if (parse_keys(p, (enum section)sec, p->cfg,
		    section_names[sec], line) == -1)
			return -1;
	}
	if (next(p) == -1)
		return -1;
	/* DOCUMENT_END; a second document would be silently ignored */
	if (next(p) == -1)
		return -1;
	if (p->ev.type != YAML_STREAM_END_EVENT)
		return perr(p, ev_line(&p->ev),
		    "only one yaml document is allowed");
	return finish_config(p);
}

/*
 * A syntax error anywhere is reported before any complaint about content:
 * an unclosed bracket on line 9 otherwise surfaces as a confusing type error
 * on line 6. libyaml's parser keeps its own stacks, so nesting costs heap,
 * never C stack.
 */
static int
check_syntax(struct parse *p)
{
	yaml_parser_t yp;
	yaml_event_t ev;
	int done = 0, rc = 0;

	if (!yaml_parser_initialize(&yp))
		return perr(p, 0, "cannot initialise the yaml parser");
	yaml_parser_set_input_string(&yp, (const unsigned char *)p->buf,
	    p->len);
	while (!done) {
		if (!yaml_parser_parse(&yp, &ev)) {
			rc = syntax_error(p, &yp);
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&yp);
	return rc;
}

static void
apply_defaults(struct parse *p)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (keys[i].def && keys[i].section != S_SYNC)
			(void)store(p, &keys[i], p->cfg, keys[i].name,
			    keys[i].def, 0);
}

int
config_load_mem(const char *name, const char *buf, size_t len,
    struct config *cfg, char *err, size_t errlen)
{
	struct parse p;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	memset(&p, 0, sizeof(p));
	p.name = name;
	p.buf = buf;
	p.len = len;
	p.cfg = cfg;
	p.err = err;
	p.errlen = errlen;
	if (errlen)
		err[0] = '\0';
	cfg->path = xstrdup(name);
	apply_defaults(&p);

	if (check_syntax(&p) == -1) {
		config_release(cfg);
		return -1;
	}
	if (!yaml_parser_initialize(&p.yp)) {
		perr(&p, 0, "cannot initialise the yaml parser");
		config_release(cfg);
		return -1;
	}
	yaml_parser_set_input_string(&p.yp, (const unsigned char *)buf, len);
	rc = parse_root(&p);
	if (p.have_ev)
		yaml_event_delete(&p.ev);
	yaml_parser_delete(&p.yp);
	if (rc == -1)
		config_release(cfg);
	return rc;
}

int
config_load(const char *path, struct config *cfg, char *err, size_t errlen)
{
	FILE *fp;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int rc, saved;

	memset(cfg, 0, sizeof(*cfg));
	if ((fp = fopen(path, "r")) == NULL)
		goto fail;
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = xrealloc(buf, cap);
		}
		n = fread(buf + len, 1, cap - len, fp);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(fp)) {
		saved = errno;
		fclose(fp);
		errno = saved;
		goto fail;
	}
	fclose(fp);
	rc = config_load_mem(path, buf, len, cfg, err, errlen);
	free(buf);
	return rc;

fail:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	free(buf);
	return -1;
}

static void
free_list(char **v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
config_release(struct config *cfg)
{
	struct sync_section *s;
	int i;

	free(cfg->path);
	free(cfg->source_url);
	free(cfg->source_url_env);
	free(cfg->slot_name);
	free(cfg->publication);
	free(cfg->sslmode);
	free(cfg->sslrootcert);
	free(cfg->sslcert);
	free(cfg->sslkey);
	free(cfg->target_url);
	free(cfg->target_username);
	free(cfg->target_password);
	free(cfg->target_password_env);
	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		free(s->name);
		free(s->schema);
		free(s->table);
		free(s->rel);
		free(s->index);
		free_list(s->columns, s->ncolumns);
		free_list(s->exclude_columns, s->nexclude_columns);
	}
	free(cfg->syncs);
	free(cfg->metrics_bind);
	memset(cfg, 0, sizeof(*cfg));
}

const struct sync_section *
config_find_rel(const struct config *cfg, const char *rel)
{
	int i;

	for (i = 0; i < cfg->nsyncs; i++)
		if (strcmp(cfg->syncs[i].rel, rel) == 0)
			return &cfg->syncs[i];
	return NULL;
}

/* --- value checks: 0 if fine, else -1 and why ("must ...") --- */

static int
check_slot(const char *s, char *why, size_t len)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");

	if (s[n] != '\0' || n > 63) {
		snprintf(why, len, "must be 1 to 63 characters from a-z, 0-9 "
		    "and _");
		return -1;
	}
	return 0;
}

/* PostgreSQL truncates longer names, which then would not match */
static int
check_ident63(const char *s, char *why, size_t len)
{
	if (strlen(s) > 63) {
		snprintf(why, len, "must be at most 63 bytes long");
		return -1;
	}
	return 0;
}

static int
check_envname(const char *s, char *why, size_t len)
{
	const char *c;

	for (c = s; *c; c++)
		if (!(*c == '_' || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= 'a' && *c <= 'z') ||
		    (c != s && *c >= '0' && *c <= '9')))
			break;
	if (*c != '\0') {
		snprintf(why, len, "must be the name of an environment "
		    "variable ([A-Za-z_][A-Za-z0-9_]*)");
		return -1;
	}
	return 0;
}

static int
check_table(const char *s, char *why, size_t len)
{
	const char *dot = strchr(s, '.');

	if (s[strcspn(s, " \t\r\n\"`")] != '\0' || dot == s ||
	    (dot && (dot[1] == '\0' || strchr(dot + 1, '.')))) {
		snprintf(why, len, "must be 'schema.table' or 'table'");
		return -1;
	}
	return 0;
}

/* OpenSearch's index name rules */
static int
check_index(const char *s, char *why, size_t len)
{
	const char *c;

	if (strlen(s) > 255) {
		snprintf(why, len, "must be at most 255 bytes long");
		return -1;
	}
	if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0) {
		snprintf(why, len, "must not be '.' or '..'");
		return -1;
	}
	if (*s == '_' || *s == '-' || *s == '+') {
		snprintf(why, len, "must not start with '%c'", *s);
		return -1;
	}
	for (c = s; *c; c++) {
		if (isupper((unsigned char)*c)) {
			snprintf(why, len, "must be lowercase");
			return -1;
		}
		if (strchr("\\/*?\"<>|,#: ", *c) ||
		    iscntrl((unsigned char)*c)) {
			if (isprint((unsigned char)*c))
				snprintf(why, len, "must not contain '%c'", *c);
			else
				snprintf(why, len, "must not contain control "
				    "characters");
			return -1;
		}
	}
	return 0;
}

static int
check_bind(const char *s, char *why, size_t len)
{
	const char *colon = strrchr(s, ':');
	size_t hlen;
	long long port;

	if (colon == NULL)
		goto bad;
	hlen = (size_t)(colon - s);
	if (hlen == 0)
		goto bad;
	if (s[0] == '[') {
		if (hlen < 3 || s[hlen - 1] != ']')
			goto bad;
	} else if (memchr(s, ':', hlen))
		goto bad;
	if (!isdigit((unsigned char)colon[1]) ||
	    parse_ll(colon + 1, &port) == -1 || port < 1 || port > 65535)
		goto bad;
	return 0;
bad:
	snprintf(why, len, "must be host:port with a port from 1 to 65535 "
	    "(e.g. 127.0.0.1:9187 or [::1]:9187)");
	return -1;
}
