/*
 * fuzz-config.c - libFuzzer target for the configuration loader: any bytes
 * through config_load_mem, which must return 0 or -1 with a message, never
 * crash, leak or read out of bounds. Two *_env variables are set so the
 * resolution paths are reachable.
 *
 *   clang -fsanitize=fuzzer,address,undefined -I lib -D_GNU_SOURCE \
 *       tests/fuzz/fuzz-config.c lib/config.c lib/log.c lib/sbuf.c \
 *       -lyaml -o build/fuzz-config
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"

int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init("fuzz-config");
	/* the inline-secret warnings would flood the fuzzer's output */
	log_set_level(LOG_LVL_ERROR);
	setenv("P2O_SOURCE_URL", "postgres://u:pw@db:5432/app", 1);
	setenv("P2O_TARGET_PASSWORD", "pw", 1);
	setenv("P2O_EMPTY", "", 1);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	char err[256];
	int i;

	if (config_load_mem("fuzz.yaml", (const char *)data, size, &cfg, err,
	    sizeof(err)) == -1) {
		/* every error names the file */
		if (strncmp(err, "fuzz.yaml", 9) != 0)
			abort();
		return 0;
	}
	/* a loaded config keeps its promises */
	if (cfg.source_url == NULL || cfg.target_url == NULL ||
	    cfg.nsyncs < 1 || cfg.batch_size < 1 ||
	    cfg.checkpoint_interval_ms < 10 || cfg.batch_max_bytes < 1)
		abort();
	for (i = 0; i < cfg.nsyncs; i++)
		if (config_find_rel(&cfg, cfg.syncs[i].rel) != &cfg.syncs[i] ||
		    cfg.syncs[i].index == NULL || cfg.syncs[i].schema == NULL)
			abort();
	config_release(&cfg);
	return 0;
}
