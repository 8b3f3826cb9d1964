/*
 * target-write - the verbs' blocking write of documents (lib/target.c,
 * target_write_all) driven from a file, for the tests that run it against
 * a real node or the Meilisearch contract server, where no verb reaches
 * it (verify, reconcile and rejects need a target that reads documents
 * back or keeps refused ones).
 *
 *   target-write -c config.yaml < writes
 *
 * Each line of stdin is a write, its fields apart by tabs: "INDEX ID
 * VERSION DOCUMENT", or "INDEX ID VERSION -" for a delete (INDEX and ID
 * plain text, DOCUMENT a JSON object). Prints a line per write, "INDEX/ID: VERDICT TYPE:
 * REASON", then "requests N". Exits 0, or the code of the failure with its
 * message (75, 69, 77, 78).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "p2o.h"
#include "target.h"
#include "xio.h"

#define MAXW	1000

static const char *const verdicts[] = {
	"ok", "conflict", "notfound", "retry", "reject"
};

int
main(int argc, char **argv)
{
	static struct target_write w[MAXW];
	static struct item_result items[MAXW];
	struct sbuf raw[MAXW];
	struct target_retry retry = { 100, 0, 30000 };
	struct target_conn tc;
	struct config cfg;
	struct p2o_err e;
	char line[8192], *index, *id, *ver, *doc;
	size_t at[MAXW][3];
	uint64_t requests = 0;
	int i, n = 0;

	if (argc != 3 || strcmp(argv[1], "-c") != 0) {
		fprintf(stderr, "usage: target-write -c config.yaml < writes\n");
		return P2O_EXIT_USAGE;
	}
	if (config_load_with(argv[2], CONFIG_SECRET_TARGET, &cfg, &e) == -1 ||
	    target_conn_open(&tc, &cfg, &e) == -1) {
		fprintf(stderr, "target-write: %s\n", e.msg);
		return e.code;
	}
	while (n < MAXW && fgets(line, sizeof(line), stdin) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((index = strtok(line, "\t")) == NULL ||
		    (id = strtok(NULL, "\t")) == NULL ||
		    (ver = strtok(NULL, "\t")) == NULL ||
		    (doc = strtok(NULL, "")) == NULL) {
			fprintf(stderr, "target-write: a line is not INDEX ID "
			    "VERSION DOCUMENT\n");
			return P2O_EXIT_USAGE;
		}
		/* the raw JSON of each part, kept apart: spans point in */
		sbuf_init(&raw[n]);
		sbuf_add_jstr(&raw[n], index, strlen(index));
		at[n][0] = raw[n].len;
		sbuf_add_jstr(&raw[n], id, strlen(id));
		at[n][1] = raw[n].len;
		w[n].del = strcmp(doc, "-") == 0;
		if (!w[n].del)
			sbuf_adds(&raw[n], doc);
		at[n][2] = raw[n].len;
		w[n].version = strtoull(ver, NULL, 10);
		n++;
	}
	for (i = 0; i < n; i++) {
		w[i].index.p = raw[i].buf;
		w[i].index.n = at[i][0];
		w[i].id.p = raw[i].buf + at[i][0];
		w[i].id.n = at[i][1] - at[i][0];
		w[i].doc.p = raw[i].buf + at[i][1];
		w[i].doc.n = at[i][2] - at[i][1];
	}
	p2o_err_clear(&e);
	if (target_write_all(&tc, w, n, items, &retry, &requests, &e) == -1) {
		fprintf(stderr, "target-write: %s\n", e.msg);
		return e.code;
	}
	for (i = 0; i < n; i++) {
		fwrite(w[i].index.p + 1, 1, w[i].index.n - 2, stdout);
		putchar('/');
		fwrite(w[i].id.p + 1, 1, w[i].id.n - 2, stdout);
		printf(": %s %s: %s\n", verdicts[items[i].verdict],
		    items[i].type[0] ? items[i].type : "-", items[i].reason);
		sbuf_release(&raw[i]);
	}
	printf("requests %llu\n", (unsigned long long)requests);
	target_conn_release(&tc);
	config_release(&cfg);
	return 0;
}
