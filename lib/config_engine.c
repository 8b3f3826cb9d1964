/*
 * config_engine.c - the engine section: batching, bulk requests in flight,
 * checkpointing, the limits of the writer's retries, what a refused
 * document does and the read rate a load is held to. Owns its keys, their ranges and defaults; it has no rule
 * between keys.
 */
#include <limits.h>

#include "config_sections.h"

#define SIZE_LIMIT	(1LL << 30)

static const char *const on_rejection[] = { "halt", "quarantine", NULL };

const struct cs_node config_engine_keys[] = {
	{ "batch_size", CS_INT, CFG(batch_size), .def = "1000",
	    .min = 1, .max = INT_MAX },
	/* no default here: it depends on write_concurrency (config.c) */
	{ "batch_max_bytes", CS_SIZE, CFG(batch_max_bytes),
	    .min = 1, .max = SIZE_LIMIT },
	{ "write_concurrency", CS_INT, CFG(write_concurrency), .def = "1",
	    .min = 1, .max = 64 },
	{ "checkpoint_interval_ms", CS_INT, CFG(checkpoint_interval_ms),
	    .def = "1000", .min = 10, .max = 86400000 },
	/* the writer's retries of a request that fails: none of the limits
	 * by default, as before they existed */
	{ "retry_max", CS_INT, CFG(retry_max), .def = "0",
	    .min = 0, .max = INT_MAX },
	{ "retry_backoff_ms", CS_INT, CFG(retry_backoff_ms), .def = "100",
	    .min = 1, .max = 30000 },
	{ "retry_max_elapsed_ms", CS_INT, CFG(retry_max_elapsed_ms),
	    .def = "0", .min = 0, .max = INT_MAX },
	{ "on_permanent_rejection", CS_ENUM, CFG(on_permanent_rejection),
	    .def = "halt", .choices = on_rejection },
	{ "max_rejects", CS_INT, CFG(max_rejects), .def = "100",
	    .min = 1, .max = INT_MAX },
	/* unset: no cap. A cap of 0 would never load: refused */
	{ "load_max_rows_per_sec", CS_INT, CFG(load_max_rows_per_sec),
	    .min = 1, .max = INT_MAX },
	{ NULL }
};
