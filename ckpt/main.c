/*
 * ckpt - read and write the checkpoint of the stream a configuration names.
 *
 *   ckpt -c config.yaml get            print the stored checkpoint as JSON
 *   ckpt -c config.yaml put --lsn X/Y  store one (never moves it back)
 *   ckpt -c config.yaml serve          frames on stdin/stdout for the
 *                                      supervisor (framing.md §6)
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt.h"
#include "config.h"
#include "frame.h"
#include "http.h"
#include "jscan.h"
#include "log.h"
#include "p2o.h"
#include "sbuf.h"

static void
usage(FILE *f)
{
	fprintf(f,
"usage: ckpt -c config.yaml get\n"
"       ckpt -c config.yaml put --lsn X/Y\n"
"       ckpt -c config.yaml serve\n"
"\n"
"The checkpoint of the configured stream lives in the target index\n"
"'" CKPT_INDEX "' as the document 'postgres:<slot_name>', bound to the\n"
"source kind, slot and publication.\n"
"\n"
"  get     print {\"pos\":N,\"lsn\":\"X/Y\",\"updated_at\":\"...\"} on stdout;\n"
"          when nothing is stored, print nothing, say 'no checkpoint' on\n"
"          stderr and exit 0\n"
"  put     store the position of the LSN X/Y; a checkpoint never moves\n"
"          back: if a later one is stored, it is kept (logged, exit 0)\n"
"  serve   answer {\"k\":\"get\"} with {\"k\":\"checkpoint\",...} and\n"
"          {\"k\":\"put\",\"pos\":N,\"lsn\":\"X/Y\"} with {\"k\":\"stored\",\"pos\":N}\n"
"          once the target acknowledged the write; ends at EOF on stdin.\n"
"          An unreachable or failing target is retried (1 s doubling to\n"
"          30 s) instead of ending serve: acknowledgements wait for it\n"
"\n"
"options:\n"
"  -c, --config FILE   the pg2osync configuration (required)\n"
"      --lsn X/Y       the position to store (put)\n"
"  -h, --help          this text\n"
"  -V, --version       print the version\n"
"\n"
"exit codes: 0 ok; 64 usage; 65 malformed frame on stdin (serve);\n"
"66 the stored checkpoint belongs to another stream or is unreadable;\n"
"75 target unreachable or failing, get/put only (temporary); 77 the\n"
"target refused the credentials; 78 invalid configuration.\n");
}

static void
print_value(const struct ckpt_value *v)
{
	struct sbuf out = SBUF_INIT;

	sbuf_adds(&out, "{\"pos\":");
	sbuf_add_u64(&out, v->pos);
	sbuf_adds(&out, ",\"lsn\":");
	sbuf_add_jstr(&out, v->lsn, strlen(v->lsn));
	if (v->updated_at[0]) {
		sbuf_adds(&out, ",\"updated_at\":");
		sbuf_add_jstr(&out, v->updated_at, strlen(v->updated_at));
	}
	sbuf_adds(&out, "}\n");
	fwrite(out.buf, 1, out.len, stdout);
	sbuf_release(&out);
	if (fflush(stdout) == EOF)
		fatal(P2O_EXIT_INTERNAL, "writing to stdout");
}

static void
reply(struct sbuf *json, struct sbuf *out)
{
	frame_put(out, json->buf, json->len);
	sbuf_reset(json);
	if (frame_flush(P2O_FD_OUT, out) == -1)
		fatal(P2O_EXIT_TEMPFAIL, "writing to stdout");
}

static void
logged_newer(struct ckpt_store *st, uint64_t pos)
{
	char lsn[32];

	lsn_format(pos, lsn);
	log_warnx("checkpoint '%s' already holds a position after %s (%"
	    PRIu64 "): kept it", st->id, lsn, pos);
}

/*
 * In serve mode a target outage is waited out here rather than ending the
 * process: the supervisor would otherwise tear the whole pipeline down on
 * every failed put and, after reconnect_max of them, give up, so a target
 * down for a few minutes would stop replication for good. Waiting only
 * delays the acknowledgement, which is the safe direction.
 */
static void
backoff(struct ckpt_store *st, const char *what, int *attempt)
{
	unsigned secs = 1u << (*attempt < 5 ? *attempt : 5);

	if (secs > 30)
		secs = 30;
	if (*attempt == 0)
		log_warnx("%s: %s; retrying until the target answers", what,
		    st->err);
	(*attempt)++;
	sleep(secs);
}

static void
recovered(const char *what, int attempt)
{
	if (attempt > 0)
		log_info("%s: the target answered after %d retries", what,
		    attempt);
}

static int
serve(struct ckpt_store *st)
{
	struct frame_reader rd;
	struct frame f;
	struct sbuf json = SBUF_INIT, out = SBUF_INIT;
	struct ckpt_value val;
	struct jspan v;
	uint64_t pos;
	char lsn[64];
	int r, rc, newer, attempt;

	frame_reader_init(&rd, P2O_FD_IN, "stdin");
	while ((r = frame_read(&rd, &f)) == 1) {
		if (frame_is(&f, "get")) {
			attempt = 0;
			while ((rc = ckpt_store_get(st, &val)) ==
			    P2O_EXIT_TEMPFAIL)
				backoff(st, "reading the checkpoint", &attempt);
			if (rc != 0)
				fatalx(rc, "%s", st->err);
			recovered("reading the checkpoint", attempt);
			sbuf_adds(&json, "{\"k\":\"checkpoint\"");
			if (val.present) {
				sbuf_adds(&json, ",\"pos\":");
				sbuf_add_u64(&json, val.pos);
				sbuf_adds(&json, ",\"lsn\":");
				sbuf_add_jstr(&json, val.lsn, strlen(val.lsn));
			}
			sbuf_addc(&json, '}');
			reply(&json, &out);
		} else if (frame_is(&f, "put")) {
			if (!jobj_get(f.obj, "pos", &v) ||
			    jnum_u64(v, &pos) == -1)
				fatalx(P2O_EXIT_DATA, "stdin: offset %" PRIu64
				    ": put without an unsigned \"pos\"",
				    f.offset);
			lsn[0] = '\0';
			if (jobj_get(f.obj, "lsn", &v) &&
			    (jspan_type(v) != J_STRING ||
			    jstr_copy(v, lsn, sizeof(lsn)) == -1))
				fatalx(P2O_EXIT_DATA, "stdin: offset %" PRIu64
				    ": put with an unusable \"lsn\"", f.offset);
			attempt = 0;
			while ((rc = ckpt_store_put(st, pos, lsn, &newer)) ==
			    P2O_EXIT_TEMPFAIL)
				backoff(st, "storing the checkpoint", &attempt);
			if (rc != 0)
				fatalx(rc, "%s", st->err);
			recovered("storing the checkpoint", attempt);
			if (newer)
				logged_newer(st, pos);
			log_debug("stored checkpoint '%s' at %" PRIu64, st->id,
			    pos);
			sbuf_adds(&json, "{\"k\":\"stored\",\"pos\":");
			sbuf_add_u64(&json, pos);
			sbuf_addc(&json, '}');
			reply(&json, &out);
		} else
			log_warnx("stdin: offset %" PRIu64 ": ignoring a "
			    "frame of kind %.*s", f.offset, (int)f.kind.n,
			    f.kind.p);
	}
	if (r == -1)
		fatalx(P2O_EXIT_DATA, "%s", rd.err);
	frame_reader_release(&rd);
	sbuf_release(&json);
	sbuf_release(&out);
	return P2O_EXIT_OK;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config",	required_argument,	NULL, 'c' },
		{ "lsn",	required_argument,	NULL, 'L' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct config cf;
	struct ckpt_store st;
	struct ckpt_value val;
	const char *cfgpath = NULL, *lsn = NULL, *cmd;
	char err[1024];
	uint64_t pos;
	int ch, rc, newer;

	log_init("ckpt");
	signal(SIGPIPE, SIG_IGN);
	while ((ch = getopt_long(argc, argv, "c:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			cfgpath = optarg;
			break;
		case 'L':
			lsn = optarg;
			break;
		case 'h':
			usage(stdout);
			return P2O_EXIT_OK;
		case 'V':
			printf("ckpt %s\n", P2O_VERSION);
			return P2O_EXIT_OK;
		default:
			usage(stderr);
			return P2O_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || cfgpath == NULL) {
		usage(stderr);
		return P2O_EXIT_USAGE;
	}
	cmd = argv[optind];
	if (strcmp(cmd, "get") != 0 && strcmp(cmd, "put") != 0 &&
	    strcmp(cmd, "serve") != 0)
		fatalx(P2O_EXIT_USAGE, "unknown command '%s' (get, put, serve)",
		    cmd);
	if ((lsn != NULL) != (strcmp(cmd, "put") == 0))
		fatalx(P2O_EXIT_USAGE, "--lsn goes with put, and put needs it");
	if (lsn != NULL && lsn_parse(lsn, &pos) == -1)
		fatalx(P2O_EXIT_USAGE, "--lsn '%s' is not an LSN like 16/B374D848",
		    lsn);

	if (config_load(cfgpath, &cf, err, sizeof(err)) == -1)
		fatalx(P2O_EXIT_CONFIG, "%s", err);
	if (http_global_init() == -1)
		fatalx(P2O_EXIT_INTERNAL, "could not initialise libcurl");
	if ((rc = ckpt_store_init(&st, &cf)) != 0)
		fatalx(rc, "%s", st.err);

	if (strcmp(cmd, "serve") == 0)
		rc = serve(&st);
	else if (strcmp(cmd, "get") == 0) {
		if ((rc = ckpt_store_get(&st, &val)) != 0)
			fatalx(rc, "%s", st.err);
		if (val.present)
			print_value(&val);
		else
			log_info("no checkpoint '%s' stored", st.id);
	} else {
		/* stored in canonical form whatever case was typed */
		lsn_format(pos, err);
		if ((rc = ckpt_store_put(&st, pos, err, &newer)) != 0)
			fatalx(rc, "%s", st.err);
		if (newer)
			logged_newer(&st, pos);
		else
			log_info("stored checkpoint '%s' at %s (%" PRIu64 ")",
			    st.id, err, pos);
	}
	ckpt_store_release(&st);
	config_release(&cf);
	return rc;
}
