/*
 * fuzz-config.c - libFuzzer target for the configuration loader: any bytes
 * through config_load_mem, which must return 0 or -1 with a message, never
 * crash, leak or read out of bounds. Two *_env variables are set so the
 * resolution paths are reachable. The same bytes then go through the
 * schema walker with a table of every nested kind (a map of mappings
 * holding a list of mappings, a map of strings, a list of strings), which
 * no real key uses yet.
 *
 *   make FUZZ=1 fuzz-bins && tests/fuzz/run.sh 60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "source.h"
#include "config_schema.h"
#include "log.h"

int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct f_pair {
	char	*name;
	char	*value;
	int	 line;
};

struct f_step {
	char	*op;
	int	 on;
	unsigned long n;
	int	 line;
};

struct f_fan {
	char	*column;
	size_t	 max;
};

struct f_entry {
	char	*name;
	int	 line;
	char	**keys;
	int	 nkeys;
	struct f_pair *consts;
	int	 nconsts;
	struct f_step *steps;
	int	 nsteps;
	struct f_fan fan;
};

struct f_doc {
	struct f_entry *e;
	int	 ne;
};

static const char *const f_ops[] = { "lower", "upper", "hash", NULL };

static const struct cs_node f_key = { NULL, CS_STR };
static const struct cs_node f_const = { NULL, CS_STR,
	offsetof(struct f_pair, value) };

static const struct cs_node f_step_keys[] = {
	{ "op", CS_ENUM, offsetof(struct f_step, op), .required = 1,
	    .choices = f_ops },
	{ "on", CS_BOOL, offsetof(struct f_step, on), .def = "false" },
	{ "n", CS_ULONG, offsetof(struct f_step, n), .min = 1,
	    .max = 4294967295LL },
	{ NULL }
};
static const struct cs_node f_step = { NULL, CS_STRUCT, .keys = f_step_keys };

static const struct cs_node f_fan_keys[] = {
	{ "column", CS_STR, offsetof(struct f_fan, column), .required = 1 },
	{ "max", CS_SIZE, offsetof(struct f_fan, max), .def = "1KiB",
	    .min = 1, .max = 1 << 20 },
	{ NULL }
};

static const struct cs_node f_entry_keys[] = {
	{ "primary_key", CS_LIST, offsetof(struct f_entry, keys),
	    .elem = &f_key, .elem_size = sizeof(char *),
	    .count_off = offsetof(struct f_entry, nkeys), .distinct = 1 },
	{ "constants", CS_MAP, offsetof(struct f_entry, consts),
	    .elem = &f_const, .elem_size = sizeof(struct f_pair),
	    .count_off = offsetof(struct f_entry, nconsts),
	    .name_off = offsetof(struct f_pair, name), .has_line = 1,
	    .line_off = offsetof(struct f_pair, line) },
	{ "steps", CS_LIST, offsetof(struct f_entry, steps), .elem = &f_step,
	    .elem_size = sizeof(struct f_step),
	    .count_off = offsetof(struct f_entry, nsteps), .has_line = 1,
	    .line_off = offsetof(struct f_step, line) },
	{ "fan_out", CS_STRUCT, offsetof(struct f_entry, fan),
	    .keys = f_fan_keys },
	{ NULL }
};
static const struct cs_node f_entry = { NULL, CS_STRUCT,
	.keys = f_entry_keys };

static const struct cs_node f_doc_keys[] = {
	{ "sync", CS_MAP, offsetof(struct f_doc, e), .required = 1,
	    .elem = &f_entry, .elem_size = sizeof(struct f_entry),
	    .count_off = offsetof(struct f_doc, ne),
	    .name_off = offsetof(struct f_entry, name), .has_line = 1,
	    .line_off = offsetof(struct f_entry, line) },
	{ NULL }
};
static const struct cs_node f_doc = { NULL, CS_STRUCT, .keys = f_doc_keys };

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init("fuzz-config");
	/* the inline-secret warnings would flood the fuzzer's output */
	log_set_level(LOG_LVL_ERROR);
	setenv("P2O_SOURCE_URL", "postgres://u:pw@db:5432/app", 1);
	setenv("P2O_MYSQL_URL", "mysql://u:pw@db:3306/app", 1);
	setenv("P2O_TARGET_PASSWORD", "pw", 1);
	setenv("P2O_EMPTY", "", 1);
	return 0;
}

static void
fuzz_config(const uint8_t *data, size_t size)
{
	struct config cfg;
	char err[256];
	int i, nurls;

	if (config_load_mem("fuzz.yaml", (const char *)data, size, &cfg, err,
	    sizeof(err)) == -1) {
		/* every error names the file */
		if (strncmp(err, "fuzz.yaml", 9) != 0)
			abort();
		return;
	}
	/* a loaded config keeps its promises: a url or nodes of the target */
	config_target_urls(&cfg, &nurls);
	if (cfg.source_url == NULL || nurls < 1 ||
	    cfg.nsyncs < 1 || cfg.batch_size < 1 ||
	    cfg.checkpoint_interval_ms < 10 || cfg.batch_max_bytes < 1 ||
	    cfg.write_concurrency < 1 || cfg.write_concurrency > 64)
		abort();
	if (cfg.source->required_key != NULL ? cfg.server_id < 1 ||
	    cfg.server_id > 4294967295UL || cfg.slot_name != NULL :
	    cfg.server_id != 0 || cfg.slot_name == NULL ||
	    cfg.publication == NULL)
		abort();
	for (i = 0; i < cfg.nsyncs; i++)
		if (config_find_rel(&cfg, cfg.syncs[i].rel) != &cfg.syncs[i] ||
		    cfg.syncs[i].index == NULL || cfg.syncs[i].schema == NULL ||
		    cfg.syncs[i].line < 1)
			abort();
	config_release(&cfg);
}

static void
fuzz_schema(const uint8_t *data, size_t size)
{
	struct f_doc d;
	const struct f_entry *e;
	char err[256];
	int i, j;

	memset(&d, 0, sizeof(d));
	if (cs_load(&f_doc, &d, "fuzz.yaml", (const char *)data, size, err,
	    sizeof(err)) == -1) {
		if (strncmp(err, "fuzz.yaml", 9) != 0)
			abort();
		cs_release(&f_doc, &d);
		return;
	}
	if (d.ne < 1)
		abort();
	for (i = 0; i < d.ne; i++) {
		e = &d.e[i];
		if (e->name == NULL || e->line < 1 || e->fan.max < 1 ||
		    (e->keys == NULL) != (e->nkeys == 0) ||
		    (e->consts == NULL) != (e->nconsts == 0))
			abort();
		for (j = 0; j < e->nconsts; j++)
			if (e->consts[j].value == NULL ||
			    e->consts[j].line < 1)
				abort();
		for (j = 0; j < e->nsteps; j++)
			if (e->steps[j].op == NULL || e->steps[j].line < 1)
				abort();
	}
	cs_release(&f_doc, &d);
	if (d.e != NULL || d.ne != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_config(data, size);
	fuzz_schema(data, size);
	return 0;
}
