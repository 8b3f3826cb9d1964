/*
 * fuzz-shape.c - arbitrary bytes as one event frame's object, through the
 * shaper's mapping (shape_event) from both the stream and the load fd,
 * with a configuration whose sections use every shaping path: projections,
 * id and index templates, routing, a filter, every transform, renames and
 * constants, fan-out, a join parent and child, an append-only table, two
 * tables sharing an index. Input the frame reader would refuse (invalid
 * JSON, not an object, no string "k") is skipped the same way, since
 * shape_event only ever sees what it accepted. Build and run with
 * `make fuzz` (tests/fuzz/run.sh); seeds: a row for each shaping path of
 * the configuration below, in tests/fuzz/corpus/fuzz-shape.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "jscan.h"
#include "log.h"
#include "sbuf.h"
#include "../../shaper/shaper.h"

static const char config_yaml[] =
"source:\n  url: postgres://f@127.0.0.1/f\n"
"target:\n  url: http://127.0.0.1:9200\n"
"sync:\n"
"  items:\n    table: public.items\n"
"  slim:\n    table: public.slim\n    columns: [id, title, body]\n"
"  users:\n    table: app.users\n    index: people\n"
"    exclude_columns: [secret, \"b\\\"ody\"]\n"
"  events:\n    table: public.events\n"
"    index: \"events-{tenant}\"\n    id: \"{tenant}-{id}\"\n"
"    routing: region\n    pipeline: p\n"
"    where: \"status IN ('on', 'new') AND (n >= 10 OR z IS NULL) AND NOT "
"x = 'y'\"\n"
"    transform:\n      email: hash\n      secret: redact\n"
"      prefs: json\n      tags: {split: \",\"}\n      n: number\n"
"      born: {date: \"DD/MM/YYYY\"}\n      seen: date\n"
"    fields:\n      email: mail\n      body: text\n"
"    constants:\n      origin: \"{schema}.{table}\"\n"
"  products:\n    table: shop.products\n"
"    fan_out: {column: tags, id: \"{id}-{tag}\", element: tag}\n"
"  questions:\n    table: qa.questions\n    index: qa\n"
"    id: \"q{id}\"\n    join: {field: j, name: question}\n"
"  answers:\n    table: qa.answers\n    index: qa\n"
"    id: \"a{id}\"\n"
"    join: {field: j, name: answer, parent: questions, column: qid}\n"
"  audit:\n    table: public.audit\n    append_only: true\n"
"  staff:\n    table: hr.staff\n    index: crowd\n    id: \"s{id}\"\n"
"  clients:\n    table: crm.clients\n    index: crowd\n"
"    id: \"c{id}\"\n    primary_key: [code]\n";

static struct config cfg;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[512];

	log_init("fuzz-shape");
	log_set_level(LOG_LVL_ERROR);	/* drift warnings would flood */
	if (config_load_mem("fuzz-shape.yaml", config_yaml,
	    sizeof(config_yaml) - 1, &cfg, err, sizeof(err)) == -1) {
		fprintf(stderr, "fuzz-shape: %s\n", err);
		abort();
	}
	return 0;
}

static void
check_output(const struct sbuf *out, size_t before)
{
	size_t off;
	const char *why;
	char *p, *end, *lim;
	unsigned long n;

	/* every operation frame the shaper writes must be valid JSON */
	p = out->buf + before;
	lim = out->buf + out->len;
	while (p < lim) {
		n = strtoul(p, &end, 10);
		if (*end != ' ' || n < 3 || (size_t)(lim - end - 1) < n ||
		    end[n] != '\n')
			__builtin_trap();
		if (jscan_validate(end + 1, n - 1, &off, &why) == -1)
			__builtin_trap();
		p = end + 1 + n;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct shaper sh;
	static int ready;
	struct sbuf out = SBUF_INIT;
	struct jspan obj = { (const char *)data, size }, kind;
	struct jtop top;
	const char *why;
	char err[512];
	size_t off, before;
	int rc;

	if (!ready) {
		shaper_init(&sh, &cfg);
		ready = 1;
	}
	if (memchr(data, '\n', size) != NULL ||
	    jscan_validate_top(obj.p, size, &top, &off, &why) == -1)
		return 0;
	/* the frame reader's span is the value without whitespace around */
	while (obj.n > 0 && strchr(" \t\r", obj.p[0]) != NULL)
		obj.p++, obj.n--;
	while (obj.n > 0 && strchr(" \t\r", obj.p[obj.n - 1]) != NULL)
		obj.n--;
	if (obj.n == 0 || jspan_type(obj) != J_OBJECT ||
	    !jobj_get(obj, "k", &kind) || jspan_type(kind) != J_STRING)
		return 0;

	sbuf_adds(&out, "x");	/* output before the event must survive */
	for (int src = SHAPE_STREAM; src <= SHAPE_LOAD; src++) {
		before = out.len;
		/* the members noted while validating, as the shaper reads
		 * them (fuzz-jscan checks they equal a walk of the object) */
		rc = shape_event(&sh, src, obj, kind, &top, &out, err,
		    sizeof(err));
		if (rc == -1 && out.len != before)
			__builtin_trap();
		if (rc == 0)
			check_output(&out, before);
	}
	if (out.buf[0] != 'x')
		__builtin_trap();
	sbuf_release(&out);
	return 0;
}
