/*
 * t-config-poll.c - poll mode's keys (source.mode: poll): their values and
 * defaults, the stream's identity of a poll (a checkpoint document of its
 * own), and every refusal with its file:line - the mode on a source whose
 * module offers none (MySQL), a poll key outside the mode, a section
 * without a poll column, what a poll cannot read again (append_only,
 * children), /synced.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "source.h"
#include "tap.h"

static char dir[64];
static char path[128];

static int
load(const char *text, struct config *cfg, char *err, size_t errlen)
{
	struct p2o_err e;
	FILE *fp = fopen(path, "w");

	if (fp == NULL || fputs(text, fp) == EOF || fclose(fp) == EOF) {
		perror(path);
		exit(2);
	}
	if (config_load_with(path, CONFIG_SECRETS_ALL, cfg, &e) == 0)
		return 0;
	snprintf(err, errlen, "%.1000s", e.msg);
	return -1;
}

static void
expect_err(const char *what, const char *text, int line, const char *msg)
{
	struct config cfg;
	char err[1100], want[1100];

	snprintf(want, sizeof(want), "%s:%d: %s", path, line, msg);
	if (load(text, &cfg, err, sizeof(err)) == 0) {
		ok(0, "%s: refused", what);
		config_release(&cfg);
		return;
	}
	is_str(err, want, "%s", what);
}

#define PG	"source:\n  url: postgres://sync@db:5432/app\n"
#define TGT	"target:\n  url: http://127.0.0.1:9200\n"
#define SYNC	"sync:\n  items:\n    table: public.items\n"

static void
test_values(void)
{
	struct config cfg;
	struct source_ident id;
	char err[512];

	if (!ok(load(PG TGT SYNC, &cfg, err, sizeof(err)) == 0,
	    "a file without the mode loads: %s", err))
		return;
	ok(!cfg.poll && strcmp(cfg.source_mode, "stream") == 0 &&
	    cfg.poll_interval_secs == 5 && cfg.poll_page_size == 1000,
	    "the mode is stream by default; the poll keys' defaults 5 s, "
	    "1000 rows");
	config_release(&cfg);

	if (!ok(load(PG "  mode: poll\n  poll_column: updated_at\n"
	    "  poll_interval_secs: 30\n  poll_page_size: 200\n" TGT SYNC
	    "    soft_delete: \"deleted = true\"\n"
	    "  other:\n    table: b\n    poll_column: rev\n",
	    &cfg, err, sizeof(err)) == 0, "poll mode loads: %s", err))
		return;
	ok(cfg.poll && cfg.poll_interval_secs == 30 &&
	    cfg.poll_page_size == 200, "mode, interval and page size read");
	is_str(config_poll_column(&cfg, &cfg.syncs[0]), "updated_at",
	    "a section without its own takes source.poll_column");
	is_str(config_poll_column(&cfg, &cfg.syncs[1]), "rev",
	    "a section's own poll_column wins");
	ok(sync_more(&cfg.syncs[0])->soft_delete_expr != NULL &&
	    sync_more(&cfg.syncs[1])->soft_delete_expr == NULL,
	    "soft_delete is parsed as a filter");
	if (ok(source_ident_init(&id, &cfg, err, sizeof(err)) == 0,
	    "a poll has an identity")) {
		is_str(id.doc_id, "postgres-poll:pg2osync", "in a checkpoint "
		    "document of its own, never the slot's");
		source_ident_release(&id);
	}
	config_release(&cfg);
}

static void
test_errors(void)
{
	expect_err("MySQL has no poll mode",
	    "source:\n  url: mysql://u@h/db\n  server_id: 7\n  mode: poll\n"
	    TGT "sync:\n  items:\n    table: db.items\n", 4,
	    "'source.mode: poll' applies only to a postgresql source (a mysql "
	    "source streams its log)");
	expect_err("an unknown mode", PG "  mode: trigger\n" TGT SYNC, 3,
	    "'source.mode' must be one of stream, poll");
	expect_err("poll_column outside poll mode",
	    PG "  poll_column: rev\n" TGT SYNC, 3,
	    "'source.poll_column' applies only in poll mode (source.mode: "
	    "poll)");
	expect_err("poll_page_size outside poll mode",
	    PG "  poll_page_size: 10\n" TGT SYNC, 3,
	    "'source.poll_page_size' applies only in poll mode (source.mode: "
	    "poll)");
	expect_err("soft_delete outside poll mode",
	    PG TGT SYNC "    soft_delete: \"deleted = true\"\n", 8,
	    "'sync.items.soft_delete' applies only in poll mode (source.mode: "
	    "poll)");
	expect_err("a section's poll_column outside poll mode",
	    PG TGT SYNC "    poll_column: rev\n", 8,
	    "'sync.items.poll_column' applies only in poll mode (source.mode: "
	    "poll)");
	expect_err("a polled section needs a poll column",
	    PG "  mode: poll\n" TGT SYNC, 7,
	    "'sync.items' has no poll column: set 'source.poll_column' or "
	    "'sync.items.poll_column'");
	expect_err("an append-only table cannot be polled",
	    PG "  mode: poll\n  poll_column: rev\n" TGT SYNC
	    "    append_only: true\n", 10,
	    "'sync.items.append_only' cannot be polled: a page resumes after "
	    "the key of its last row");
	expect_err("a bad soft_delete", PG "  mode: poll\n  poll_column: rev\n"
	    TGT SYNC "    soft_delete: \"deleted = \"\n", 10,
	    "'sync.items.soft_delete' is not supported: the end of the "
	    "expression where a column name or a literal belongs at byte 11; "
	    "'where' takes comparisons (= <> != < <= > >=) between column "
	    "names and string, number or boolean (TRUE, FALSE) literals, AND, "
	    "OR, NOT, IN (...), IS [NOT] NULL");
	expect_err("/synced needs a log",
	    PG "  mode: poll\n  poll_column: rev\n" TGT SYNC
	    "api:\n  bind: 127.0.0.1:9300\n", 11,
	    "'api.bind' (/synced) needs a position in the source's log, which "
	    "poll mode does not read");
	expect_err("poll_page_size 0", PG "  mode: poll\n  poll_column: rev\n"
	    "  poll_page_size: 0\n" TGT SYNC, 5,
	    "'source.poll_page_size' must be an integer between 1 and "
	    "100000");
}

int
main(void)
{
	log_init("t-config-poll");
	snprintf(dir, sizeof(dir), "/tmp/t-config-poll.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/cfg.yaml", dir);
	test_values();
	test_errors();
	unlink(path);
	rmdir(dir);
	return done_testing();
}
