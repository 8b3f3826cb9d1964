/*
 * opts.c - a verb's options as a table (struct cli_opt): getopt_long's
 * arrays and the --help text are both made from it, so that what a verb
 * takes and what it says it takes cannot differ. The man pages are
 * written by hand; tests/integration/116-cli-install.t compares them.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "log.h"
#include "p2o.h"

#define OPT_MAX	32

static const struct verb *built;

void
cli_getopt_reset(void)
{
	built = NULL;
}

int
cli_getopt(const struct verb *v, int argc, char **argv, const char **arg)
{
	static struct option longopts[OPT_MAX + 1];
	static char shortopts[OPT_MAX * 2 + 2];
	const struct cli_opt *o;
	int n = 0, s = 0, ch;

	if (built != v) {
		/* a new verb: a fresh scan of a fresh argv */
		built = v;
		optind = 1;
		shortopts[s++] = ':';
		for (o = v->opts; o->name != NULL && n < OPT_MAX; o++, n++) {
			longopts[n] = (struct option){ o->name, o->arg ?
			    required_argument : no_argument, NULL, o->key };
			if (o->key < 256) {
				shortopts[s++] = (char)o->key;
				if (o->arg)
					shortopts[s++] = ':';
			}
		}
		longopts[n] = (struct option){ NULL, 0, NULL, 0 };
		shortopts[s] = '\0';
	}
	opterr = 0;
	ch = getopt_long(argc, argv, shortopts, longopts, NULL);
	*arg = optarg;
	if (ch == -1) {
		/* no verb takes operands */
		if (optind != argc) {
			cli_usage(v, "unexpected argument '%s'", argv[optind]);
			return CLI_OPT_BAD;
		}
		return CLI_OPT_END;
	}
	if (ch == 'h') {
		cli_help(v, stdout);
		return CLI_OPT_HELP_DONE;
	}
	if (ch == '?' || ch == ':') {
		if (ch == ':')
			cli_usage(v, "option '%s' needs an argument",
			    argv[optind - 1]);
		else
			cli_usage(v, "unknown option '%s'", argv[optind - 1]);
		return CLI_OPT_BAD;
	}
	return ch;
}

int
cli_opt_exit(int ch)
{
	return ch == CLI_OPT_HELP_DONE ? P2O_EXIT_OK : P2O_EXIT_USAGE;
}

/* text wrapped at width, every line after the first indented by ind */
static void
wrap(FILE *f, const char *text, int col, int ind, int width)
{
	const char *p = text, *sp;
	int len;

	while (*p) {
		len = (int)strcspn(p, " \n");
		if (col + len > width && col > ind) {
			fprintf(f, "\n%*s", ind, "");
			col = ind;
		}
		fprintf(f, "%.*s", len, p);
		col += len;
		p += len;
		if (*p == '\n') {
			fprintf(f, "\n%*s", ind, "");
			col = ind;
			p++;
		} else if (*p == ' ') {
			sp = p++;
			(void)sp;
			if (col < width) {
				fputc(' ', f);
				col++;
			}
		}
	}
}

void
cli_help(const struct verb *v, FILE *f)
{
	const struct cli_opt *o;
	char head[96];

	fprintf(f, "usage: pg2osync %s %s\n\n", v->name, v->synopsis);
	fprintf(f, "%s\n\noptions:\n", v->about);
	for (o = v->opts; o->name != NULL; o++) {
		if (o->key < 256)
			snprintf(head, sizeof(head), "  -%c, --%s%s%s",
			    o->key, o->name, o->arg ? " " : "",
			    o->arg ? o->arg : "");
		else
			snprintf(head, sizeof(head), "      --%s%s%s", o->name,
			    o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(f, "%-28s", head);
		if (strlen(head) >= 28)
			fprintf(f, "\n%28s", "");
		wrap(f, o->help, 28, 28, 79);
		fputc('\n', f);
	}
	fprintf(f, "\nexit codes:\n%s", v->exits);
}

int
cli_usage(const struct verb *v, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pg2osync %s: ", v->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see 'pg2osync %s --help')\n", v->name);
	return P2O_EXIT_USAGE;
}

long long
cli_number(const struct verb *v, const char *opt, const char *s)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno || end == s || *end || n < 0) {
		cli_usage(v, "--%s '%s' is not a whole number >= 0", opt, s);
		return -1;
	}
	return n;
}

int
cli_config(const char *path, unsigned secrets, struct config *cfg)
{
	struct p2o_err e;

	p2o_err_clear(&e);
	if (config_load_with(path, secrets, cfg, &e) == -1)
		return cli_fail(&e);
	return 0;
}

int
cli_fail(const struct p2o_err *e)
{
	fprintf(stderr, "pg2osync: %s\n", e->msg);
	return e->code ? e->code : P2O_EXIT_INTERNAL;
}
