/*
 * trace-cost - the tracing work of one traced batch in every stage, done
 * N times in one process, for callgrind to count (instructions do not
 * move with the host's load as a wall clock does):
 *   valgrind --tool=callgrind build/tests/trace-cost ENDPOINT [N [ACK]]
 * Per batch: the capture's 100 messages and commit (root held, decode
 * span), the shaper's and the writer's spans read from the traceparent,
 * the supervisor's checkpoint span; an ack every ACK batches (default
 * 500: a checkpoint every 200 ms at a few thousand batches a second). The
 * spans go to ENDPOINT (a collector that answers 200), a batch a
 * millisecond. Exits 0, or 1 when
 * tracing would not start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "trace.h"

int
main(int argc, char **argv)
{
	struct p2o_err e = { 0 };
	struct trace_batch tb = { 0 };
	struct trace_ctx c;
	struct trace_span sp;
	char buf[TRACE_PARENT_LEN], text[32];
	const char *tp;
	long n, i, k, ack;

	if (argc < 2)
		return 64;
	n = argc > 2 ? atol(argv[2]) : 1000;
	ack = argc > 3 ? atol(argv[3]) : 500;
	if (n < 1 || ack < 1)
		return 64;
	if (trace_start(argv[1], 1, "trace-cost", &e) == -1) {
		fprintf(stderr, "trace-cost: %s\n", e.msg);
		return 1;
	}
	trace_batch_hold(1);
	for (i = 1; i <= n; i++) {
		for (k = 0; k < 100; k++)
			trace_batch_add(&tb, 60);
		snprintf(text, sizeof(text), "0/%lX", (unsigned long)i * 4096);
		if ((tp = trace_batch_commit(&tb, 100, (uint64_t)i, text,
		    buf)) == NULL)
			continue;
		/* the shaper, the writer and the supervisor each read it */
		for (k = 0; k < 3; k++) {
			if (trace_ctx_parse(tp, strlen(tp), &c) == -1 ||
			    trace_span_child(&sp, &c, "stage",
			    trace_now_ns()) == -1)
				continue;
			trace_attr_int(&sp, "rows", 100);
			trace_attr_str(&sp, "position", text, strlen(text));
			trace_emit(&sp, trace_now_ns());
		}
		if (i % ack == 0)
			trace_held_end((uint64_t)i);
		/* a batch a millisecond: the exporter keeps up */
		usleep(1000);
	}
	printf("dropped %llu\n", (unsigned long long)trace_dropped());
	trace_stop(TRACE_STOP_MS);
	return 0;
}
