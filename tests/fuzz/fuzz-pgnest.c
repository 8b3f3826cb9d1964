/*
 * fuzz-pgnest.c - arbitrary bytes as the server's answer to a collection
 * subquery (lib/pg/pgnest.c): split on NUL into a child's, a single
 * child's and an aggregate's value, each either read into members that
 * are valid JSON or refused with exit 65, never a crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "jscan.h"
#include "log.h"
#include "msg.h"
#include "pg/pgnest.h"

static const char cfg_text[] =
    "source:\n  url: postgres://u@db/app\n"
    "target:\n  url: http://127.0.0.1:9200\n"
    "sync:\n  p:\n    table: p\n    children:\n"
    "      - {table: c, field: c, foreign_key: pid, max_rows: 2}\n"
    "      - {table: s, field: s, foreign_key: pid, single: true}\n"
    "    aggregates:\n"
    "      - {field: n, table: t, foreign_key: pid, op: count}\n";

static struct config cfg;
static struct pgnest nest;

static void
cols(struct pgnest_coll *k, int n)
{
	static const char *const names[] = { "id", "pid", "v" };
	static const uint32_t types[] = { 23, 23, 1700 };
	int i;

	k->ncols = n;
	k->cols = calloc((size_t)n, sizeof(*k->cols));
	for (i = 0; i < n; i++) {
		k->cols[i].name = strdup(names[i]);
		k->cols[i].typoid = types[i];
		k->cols[i].key = i == 0;
	}
}

static int
setup(void)
{
	char err[256];
	struct p2o_err e;
	int i;

	log_init("fuzz-pgnest");
	if (config_load_mem("f.yaml", cfg_text, sizeof(cfg_text) - 1, &cfg,
	    err, sizeof(err)) == -1)
		abort();
	nest.sec = &cfg.syncs[0];
	nest.key = strdup("id");
	nest.n = 3;
	nest.coll = calloc(3, sizeof(*nest.coll));
	for (i = 0; i < 2; i++)
		nest.coll[i].child = &sync_more(&cfg.syncs[0])->children[i];
	nest.coll[2].agg = &sync_more(&cfg.syncs[0])->aggregates[0];
	for (i = 0; i < 3; i++)
		cols(&nest.coll[i], 3);
	if (pgnest_build(&nest, &e) == -1)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	const char *vals[3] = { "[0, null]", "[0, null]", "0" };
	size_t lens[3], i, start = 0, k = 0;
	struct sbuf img = SBUF_INIT;
	struct p2o_err e;
	char *buf, *obj;
	size_t off;
	const char *why;

	if (!ready)
		ready = setup() == 0;
	buf = malloc(size + 1);
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (i = 0; i < 3; i++)
		lens[i] = strlen(vals[i]);
	for (i = 0; i <= size && k < 3; i++)
		if (i == size || buf[i] == '\0') {
			vals[k] = buf + start;
			lens[k++] = i - start;
			start = i + 1;
		}
	msg_image_begin(&img, MI_NEW);
	if (pgnest_put(&nest, &img, vals, lens, "1", "public.p", &e) == 0) {
		msg_image_end(&img);
		/* the image is a frame's member: its object is valid JSON */
		obj = strchr(img.buf, '{');
		if (obj == NULL || jscan_validate(obj, img.len -
		    (size_t)(obj - img.buf), &off, &why) == -1)
			abort();
	} else if (e.code != 65)
		abort();
	pgnest_flush(&nest);
	sbuf_release(&img);
	free(buf);
	return 0;
}
