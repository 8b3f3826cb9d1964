/*
 * t-nestread.c - the commit-time re-read driver (lib/nestread.c) over a
 * source that records what it is asked: which rows are forwarded and
 * which parent keys they leave, a child moving between parents, a
 * parent's own change (its key changed or not, deleted), a junction's
 * rows and a child read through it, the order at a commit (visible, then
 * the junction, then the parents), nothing read twice, the bounds of a
 * held burst, the truncate warning's hint, no reader without
 * collections, and the reader freed on a failure at open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "keyset.h"
#include "log.h"
#include "nestread.h"
#include "p2o.h"
#include "tap.h"

static const char cfg_text[] =
    "source:\n  url: postgres://sync@db/app\n"
    "target:\n  url: http://127.0.0.1:9200\n"
    "sync:\n  customers:\n    table: customers\n"
    "    children:\n"
    "      - {table: orders, field: orders, foreign_key: customer_id}\n"
    "      - {table: tags, field: tags, foreign_key: customer_id,\n"
    "         through: customer_tags, through_key: tag_id}\n"
    "    aggregates:\n"
    "      - {field: open_tickets, table: tickets, foreign_key: "
    "customer_id,\n         op: count}\n"
    "  orders:\n    table: orders\n";

static const char plain_text[] =
    "source:\n  url: postgres://sync@db/app\n"
    "target:\n  url: http://127.0.0.1:9200\n"
    "sync:\n  customers:\n    table: customers\n";

/* what the fake source was asked, in order */
static struct sbuf calls = SBUF_INIT;
static int fail_open;
static int fail_collection = -1;	/* the collection open refuses */
static int fail_read;
static int parents_freed, closed;

static int
f_open(void *src, const struct config *cfg, struct p2o_err *e)
{
	sbuf_adds(&calls, "open;");
	return fail_open ? p2o_fail(e, P2O_EXIT_TEMPFAIL, "no server") : 0;
}

static int
f_parent(void *src, int si, const struct sync_section *sec, void **parent,
    const char **key, struct p2o_err *e)
{
	sbuf_addf(&calls, "parent %d %s;", si, sec->rel);
	*parent = xstrdup(sec->rel);
	*key = "id";
	return 0;
}

static int
f_collection(void *src, void *parent, int k, struct sbuf *via_col,
    struct p2o_err *e)
{
	sbuf_addf(&calls, "collection %d;", k);
	if (k == fail_collection)
		return p2o_fail(e, P2O_EXIT_REFUSED, "collection %d refused",
		    k);
	if (k == 1)
		sbuf_adds(via_col, "id");
	return 0;
}

static int
f_visible(void *src, const uint64_t *txns, size_t n, struct p2o_err *e)
{
	size_t i;

	sbuf_adds(&calls, "visible");
	for (i = 0; i < n; i++)
		sbuf_addf(&calls, " %llu", (unsigned long long)txns[i]);
	sbuf_addc(&calls, ';');
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the keys taken, sorted, as "a,b,c" */
struct taken {
	char	*k[64];
	int	 n;
};

static void
take_one(void *arg, const char *s, size_t n)
{
	struct taken *t = arg;

	if (t->n < 64)
		t->k[t->n++] = xstrndup(s, n);
}

static void
put_keys(struct keyset *keys, struct sbuf *out, struct taken *t)
{
	int i;

	t->n = 0;
	keyset_take(keys, take_one, t);
	qsort(t->k, (size_t)t->n, sizeof(t->k[0]), cmp_str);
	for (i = 0; i < t->n; i++)
		sbuf_addf(out, "%s%s", i ? "," : "", t->k[i]);
}

static void
taken_free(struct taken *t)
{
	int i;

	for (i = 0; i < t->n; i++)
		free(t->k[i]);
}

/* a junction: tag 5 is on customers 1 and 2, every other on none */
static int
f_resolve(void *src, void *parent, int k, struct keyset *keys,
    struct keyset *parents, uint64_t *queries, struct p2o_err *e)
{
	struct taken t;
	int i;

	sbuf_addf(&calls, "resolve %d ", k);
	put_keys(keys, &calls, &t);
	sbuf_addc(&calls, ';');
	for (i = 0; i < t.n; i++)
		if (strcmp(t.k[i], "5") == 0) {
			keyset_add(parents, "1", 1);
			keyset_add(parents, "2", 1);
		}
	taken_free(&t);
	(*queries)++;
	return 0;
}

static int
f_read(void *src, void *parent, struct keyset *keys, uint64_t v,
    struct sbuf *out, uint64_t *docs, uint64_t *queries, struct p2o_err *e)
{
	struct taken t;
	int i;

	if (fail_read)
		return p2o_fail(e, P2O_EXIT_TEMPFAIL, "read failed");
	sbuf_addf(&calls, "read %s@%llu ", (char *)parent,
	    (unsigned long long)v);
	put_keys(keys, &calls, &t);
	sbuf_addc(&calls, ';');
	for (i = 0; i < t.n; i++) {
		sbuf_addf(out, "u %s;", t.k[i]);
		(*docs)++;
	}
	taken_free(&t);
	(*queries)++;
	return 0;
}

static void
f_hint(void *parent, struct sbuf *out)
{
	sbuf_addf(&calls, "hint %s;", (char *)parent);
	sbuf_adds(out, "rebuild them");
}

static void
f_parent_free(void *parent)
{
	parents_freed++;
	free(parent);
}

static void
f_close(void *src)
{
	closed++;
}

static const struct nestread_ops fake_ops = {
	.open = f_open,
	.parent = f_parent,
	.collection = f_collection,
	.visible = f_visible,
	.resolve = f_resolve,
	.read = f_read,
	.rewrite_hint = f_hint,
	.parent_free = f_parent_free,
	.close = f_close,
};

/* an image: "col=val,col=val" */
static int
f_text(const void *img, const char *col, struct sbuf *out)
{
	const char *s = img, *p, *end;
	size_t n = strlen(col);

	for (p = s; p != NULL && *p != '\0'; p = strchr(p, ',') ?
	    strchr(p, ',') + 1 : NULL)
		if (strncmp(p, col, n) == 0 && p[n] == '=') {
			p += n + 1;
			end = strchr(p, ',');
			sbuf_add(out, p, end ? (size_t)(end - p) : strlen(p));
			return 1;
		}
	return 0;
}

static int
row(struct nestread *nr, const char *rel, const char *newi, const char *oldi)
{
	struct nest_image n = { f_text, newi }, o = { f_text, oldi };

	return nestread_row(nr, rel, newi ? &n : NULL, oldi ? &o : NULL);
}

static const char *
called(void)
{
	return calls.buf ? calls.buf : "";
}

int
main(void)
{
	struct config cfg, plain;
	struct nestread *nr;
	struct p2o_err e;
	struct sbuf out = SBUF_INIT;
	uint64_t nrows = 0;
	char err[512];
	int i, rc;

	log_init("t-nestread");
	if (!ok(config_load_mem("t.yaml", cfg_text, sizeof(cfg_text) - 1,
	    &cfg, err, sizeof(err)) == 0 && config_load_mem("p.yaml",
	    plain_text, sizeof(plain_text) - 1, &plain, err,
	    sizeof(err)) == 0, "the configs load")) {
		printf("# %s\n", err);
		return done_testing();
	}
	e.code = 99;
	nr = nestread_open(&plain, &fake_ops, &cfg, &e);
	ok(nr == NULL && e.code == 0 && closed == 1 && calls.len == 0,
	    "no section with collections: no reader, no error, nothing "
	    "opened, the source closed");
	closed = 0;
	fail_open = 1;
	nr = nestread_open(&cfg, &fake_ops, &cfg, &e);
	ok(nr == NULL && e.code == P2O_EXIT_TEMPFAIL && closed == 1,
	    "a source that cannot open: its error, the source closed");
	closed = fail_open = 0;
	sbuf_reset(&calls);

	nr = nestread_open(&cfg, &fake_ops, &cfg, &e);
	if (!ok(nr != NULL, "opens"))
		return done_testing();
	is_str(called(), "open;parent 0 public.customers;collection 0;"
	    "collection 1;collection 2;", "the source opened, then the "
	    "section with collections, each collection in order: children, "
	    "then aggregates");
	ok(nestread_source(nr) == &cfg, "the source state is the one given");
	sbuf_reset(&calls);

	/* rows */
	is_int(row(nr, "public.tickets", "id=1,customer_id=3", NULL), 0,
	    "a counted table's row is kept back");
	ok(nestread_pending(nr), "and leaves a parent pending");
	is_int(row(nr, "public.orders", "id=9,customer_id=4",
	    "id=9,customer_id=5"), 1, "a child that is a section of its own "
	    "goes out too");
	is_int(row(nr, "public.customers", "id=7,name=x", "id=7,name=y"), 0,
	    "a parent's own update is kept back: its document is read whole");
	is_int(row(nr, "public.customers", "id=8,name=x", "id=6,name=x"), 1,
	    "a parent whose key changed goes out, so the old document goes");
	is_int(row(nr, "public.customers", NULL, "id=20,name=x"), 1,
	    "a parent's delete goes out and names nothing");
	is_int(row(nr, "public.customer_tags", NULL,
	    "customer_id=10,tag_id=5"), 0, "a junction's delete is kept back");
	is_int(row(nr, "public.tags", "id=5,name=t", NULL), 0,
	    "a child read through a junction is kept back");
	is_int(row(nr, "public.tags", "name=t", NULL), 0,
	    "a row without the key names nothing, still kept back");
	is_int(row(nr, "public.other", "id=1,customer_id=3", NULL), 1,
	    "another table's row goes out");
	is_int(nestread_counts(nr)->child_rows, 5, "the images that named a "
	    "parent are counted (a moved child twice)");
	is_str(called(), "", "no statement before the commit");

	ok(nestread_hold(nr, 11) == 0 && nestread_hold(nr, 12) == 0,
	    "two commits held, under the bounds");
	rc = nestread_commit(nr, 77, &out, &nrows, &e);
	ok(rc == 0, "the commit reads");
	is_str(called(), "visible 11 12;resolve 1 5;read public.customers@77 "
	    "1,10,2,3,4,5,7,8;", "visible first, then the junction, then "
	    "every parent once at the commit's version");
	is_str(out.buf, "u 1;u 10;u 2;u 3;u 4;u 5;u 7;u 8;",
	    "each parent written");
	is_int(nrows, 8, "the commit's row count grows by them");
	ok(!nestread_pending(nr), "nothing pending after");
	ok(nestread_counts(nr)->documents == 8 &&
	    nestread_counts(nr)->queries == 2, "documents and queries counted");

	sbuf_reset(&calls);
	sbuf_reset(&out);
	ok(nestread_commit(nr, 78, &out, &nrows, &e) == 0 &&
	    strcmp(called(), "") == 0 && out.len == 0, "a commit with "
	    "nothing pending reads nothing");

	row(nr, "public.orders", "id=1,customer_id=30", NULL);
	nestread_hold(nr, 13);
	ok(nestread_commit(nr, 79, &out, &nrows, &e) == 0, "the next commit");
	is_str(called(), "visible 13;read public.customers@79 30;",
	    "only its own transaction waited for, its own parent read");

	/* the bounds of a held burst */
	for (rc = 0, i = 1; i <= 2000 && rc == 0; i++) {
		row(nr, "public.orders", "id=1,customer_id=1", NULL);
		rc = nestread_hold(nr, (uint64_t)i);
	}
	is_int(i - 1, 1000, "a burst is read by the 1,000th commit");
	ok(nestread_commit(nr, 80, &out, &nrows, &e) == 0, "read");
	{
		char k[32];

		for (rc = 0, i = 0; i < 10000; i++) {
			snprintf(k, sizeof(k), "customer_id=%d", i);
			row(nr, "public.tickets", k, NULL);
			if (i % 1000 == 999)
				rc = nestread_hold(nr, (uint64_t)i);
		}
		ok(rc == 1, "or once 10,000 keys wait");
	}
	fail_read = 1;
	p2o_err_clear(&e);
	ok(nestread_commit(nr, 81, &out, &nrows, &e) == -1 &&
	    e.code == P2O_EXIT_TEMPFAIL, "a failed read fails the commit");
	fail_read = 0;

	sbuf_reset(&calls);
	nestread_truncate(nr, "public.tickets");
	nestread_truncate(nr, "public.other");
	is_str(called(), "hint public.customers;", "a truncate of a "
	    "collection's table is said with the source's hint, another's "
	    "not");

	nestread_close(nr);
	ok(parents_freed == 1 && closed == 1, "closed: the reader and the "
	    "source released");

	/* a refusal at open releases what was opened */
	parents_freed = closed = 0;
	fail_collection = 1;
	sbuf_reset(&calls);
	p2o_err_clear(&e);
	nr = nestread_open(&cfg, &fake_ops, &cfg, &e);
	ok(nr == NULL && e.code == P2O_EXIT_REFUSED &&
	    strstr(e.msg, "collection 1 refused") != NULL, "a collection "
	    "refused fails the open with its error");
	ok(parents_freed == 1 && closed == 1, "and releases the reader and "
	    "the source");

	sbuf_release(&out);
	sbuf_release(&calls);
	config_release(&cfg);
	config_release(&plain);
	return done_testing();
}
