# pg2osync - one Makefile for every tool.
#
#   make                 build every tool into build/bin
#   make SAN=1           the same with AddressSanitizer + UBSan, into build-san/
#   make check           every test (unit, golden, integration on real servers),
#                        plain and under ASan+UBSan, in two lanes at once,
#                        each with servers of its own (tests/check.sh)
#   make unit            unit tests only (no servers)
#   make bench           pg2osync beside raw _bulk, PGSync and Debezium
#                        (BENCH_ROWS=n: n narrow rows instead of 1,000,000)
#   make demo            a throwaway PostgreSQL + OpenSearch, synced live
#   make cluster         the search-cluster tests (961, 962) on three
#                        OpenSearch nodes, RUNS=n times in a row (default 1)
#   make chaos           kill -9, SIGTERM and database restarts at random
#                        moments under a continuous writer, the index compared
#                        with the table after each trial
#                        (TRIALS=n, SEED=s, DB=pg|mariadb|both; SHORT=1 the
#                        short trials of tests/chaos/chaos.t)
#   make soak            hours of pgbench (PostgreSQL) and sysbench (MariaDB)
#                        at a fixed rate through a pipeline each, faults on a
#                        schedule, sampled into build/soak/ (soak.csv, soak.png)
#                        and judged at the end (SOAK_MINUTES, default 60;
#                        SOAK_DB=pg|mariadb|both; tests/soak/soak.py)
#   make fuzz-long       every fuzz target for FUZZ_LONG_SECONDS (default
#                        3600), new inputs merged into tests/fuzz/corpus
#   make install PREFIX=/usr/local DESTDIR=   the programs and the man pages
#   make image           the container image, an OCI archive in build/
#   make deb             the Debian package, in build/
#   make dist            the release tarball and its SHA256SUMS, in build/
#                        (deploy/README.md; each installs what it needs)

# the first rule below is an archive; a bare `make` must build every tool
.DEFAULT_GOAL := all

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
CC	?= cc
SAN	?=

ifeq ($(FUZZ),1)
# libFuzzer: every object instrumented, the fuzzer's main() only at link
B	:= build-fuzz
CC	:= clang
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
OPT	:= -O1 -g
else ifeq ($(SAN),1)
B	:= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT	:= -O1 -g
else
B	:= build
SANFLAGS :=
OPT	:= -O2 -g
endif

PG_INC	:= $(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)
CPPFLAGS += -I lib -I $(PG_INC) -I /usr/include/mariadb -D_GNU_SOURCE
CFLAGS	+= -std=c11 $(OPT) -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter \
	   -Wno-missing-field-initializers $(SANFLAGS) -MMD -MP
LDFLAGS	+= $(SANFLAGS) -Wl,--as-needed
LDLIBS	:= -lpq -lcurl -ljansson -lyaml -lssl -lcrypto -lm
# capture-mysql: libmariadb for the connections, libzstd for MySQL's
# compressed transactions, zlib for MariaDB's compressed events (the
# format is zlib's own stream) - --as-needed drops them from the others
LDLIBS	+= -lmariadb -lzstd -lz

# tool directory -> installed program name. A tool folder whose main.c
# does not exist yet builds only its archive (unit tests link it).
TOOLS	:= capture-pg capture-mysql loader shaper writer ckpt supervisor cli
prog_capture-pg	:= capture-pg
prog_capture-mysql := capture-mysql
prog_loader	:= loader
prog_shaper	:= shaper
prog_writer	:= writer
prog_ckpt	:= ckpt
prog_supervisor	:= pg2osync-supervise
# the operator's command: one verb per file (cli/cli.h)
prog_cli	:= pg2osync
# code two tools share is in lib (lib/pg, lib/mysql: the source layer);
# no tool links another tool's archive (tests/integration/130-seams.t).
# An archive keeps members by their file name alone: no two files under
# lib may share one.
LIB_SRC	:= $(wildcard lib/*.c lib/*/*.c)
LIB_OBJ	:= $(LIB_SRC:%.c=$(B)/%.o)
LIB_A	:= $(B)/lib/libp2o.a

# every tool's modules except main.c go in an archive, so unit tests can
# link a tool's module without its main()
define tool_rules
$(1)_SRC := $$(filter-out $(1)/main.c,$$(wildcard $(1)/*.c))
$(1)_OBJ := $$($(1)_SRC:%.c=$(B)/%.o)
$(B)/$(1)/lib$(1).a: $$($(1)_OBJ)
	@mkdir -p $$(@D)
	rm -f $$@ && ar rcs $$@ $$^
$(B)/bin/$(prog_$(1)): $(B)/$(1)/main.o $(B)/$(1)/lib$(1).a $(LIB_A)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach t,$(TOOLS),$(eval $(call tool_rules,$(t))))

BINS	:= $(foreach t,$(TOOLS),$(if $(wildcard $(t)/main.c),$(B)/bin/$(prog_$(t))))
TOOL_A	:= $(foreach t,$(TOOLS),$(if $($(t)_SRC),$(B)/$(t)/lib$(t).a))

UNIT_SRC := $(wildcard tests/unit/t-*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
HELPER_SRC := $(wildcard tests/helper/*.c)
HELPER_BIN := $(HELPER_SRC:tests/helper/%.c=$(B)/tests/%)

all: $(BINS) $(UNIT_BIN) $(HELPER_BIN)

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIB_A): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# a unit test may call any tool's modules: a group resolves them in any
# order
TOOL_LINK = -Wl,--start-group $(TOOL_A) $(LIB_A) -Wl,--end-group

$(B)/tests/%: $(B)/tests/unit/%.o $(TOOL_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(TOOL_LINK) $(LDLIBS)

$(B)/tests/%: $(B)/tests/helper/%.o $(TOOL_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(TOOL_LINK) $(LDLIBS)

FUZZ_SRC := $(wildcard tests/fuzz/fuzz-*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
FUZZ_SECONDS ?= 30

$(B)/fuzz/%: $(B)/tests/fuzz/%.o $(TOOL_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $< $(TOOL_LINK) $(LDLIBS)

fuzz-bins: $(FUZZ_BIN)

# each target runs FUZZ_SECONDS from its saved corpus (tests/fuzz/corpus/NAME)
fuzz:
	$(MAKE) FUZZ=1 fuzz-bins
	tests/fuzz/run.sh $(FUZZ_SECONDS)

# every target for a long time; what adds coverage is merged into the
# committed corpus (tests/fuzz/long.sh)
fuzz-long:
	tests/install-deps.sh
	$(MAKE) FUZZ=1 fuzz-bins
	tests/fuzz/long.sh

TRIALS	?= 10
DB	?= both
chaos:
	tests/install-deps.sh
	$(MAKE) all
	tests/servers/run-with.sh --pg --mariadb --os -- python3 tests/chaos/chaos.py \
		--trials $(TRIALS) --db $(DB) $(if $(SEED),--seed $(SEED)) $(if $(SHORT),--short)

# 961 (a node killed -9 during a load) is too long for the test command,
# which runs 962 only; both here, on a cluster started once
RUNS	?= 1
cluster:
	tests/install-deps.sh
	$(MAKE) all
	tests/servers/run-with.sh --pg --os-cluster -- bash -c 'for i in $$(seq $(RUNS)); do \
		P2O_BIN=$$PWD/build/bin prove -v --timer tests/integration/96[12]-*.t || exit 1; done'

unit: all
	prove -e '' $(UNIT_BIN)

check:
	tests/check.sh

# both install what they need first: on a fresh machine the build itself
# needs the -dev packages
bench:
	tests/install-deps.sh
	$(MAKE) all
	tests/bench/run.sh $(BENCH_ROWS)

# tests/soak/run.sh installs its clients and builds first
soak:
	tests/soak/run.sh

demo:
	tests/install-deps.sh
	$(MAKE) all
	examples/demo.sh

# every program and its man pages, nothing else (tests/integration/116-cli-install.t)
MANDIR	?= $(PREFIX)/share/man
MAN1	:= $(wildcard man/*.1)
MAN5	:= $(wildcard man/*.5)
install: $(BINS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	install -m 755 $(BINS) $(DESTDIR)$(BINDIR)
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(MAN5) $(DESTDIR)$(MANDIR)/man5

# the deployment forms (deploy/README.md), always from the plain build;
# like bench, each installs what building it needs first; each script
# runs make install (+: a sub-make that shares the jobserver)
image:
	tests/install-deps.sh
	$(MAKE) all
	+deploy/image/build.sh build/pg2osync-image.tar

deb:
	tests/install-deps.sh
	$(MAKE) all
	+deploy/deb/build.sh build

dist:
	tests/install-deps.sh
	$(MAKE) all
	+deploy/dist/build.sh build

clean:
	rm -rf build build-san build-fuzz

.PHONY: all unit check bench soak demo install clean fuzz fuzz-bins fuzz-long chaos cluster image deb dist
.SECONDARY:

-include $(shell find $(B) -name '*.d' 2>/dev/null)
