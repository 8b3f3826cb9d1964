/*
 * visible.c - the version a wave's rows carry: the WAL position read
 * before the wave, and the wait that makes that number true. Owns those
 * statements and the argument below; reads no table.
 *
 * A copied row carries position P, read before its range; a streamed
 * change carries its commit record's position. The target keeps the
 * higher. So a transaction T whose commit record lies below P must be in
 * the copy: otherwise the copy, older than T's change but numbered
 * higher, would win over it and T's change would be lost. A commit record
 * below P is written, but T is visible to a new snapshot only once it has
 * left the server's list of running transactions, which it does after
 * its commit record is flushed - and, under synchronous replication,
 * after a standby confirmed it, which can take long. Reading P and then
 * copying can therefore miss T.
 *
 * Hence, in this order:
 *   1. P = pg_current_wal_lsn().
 *   2. N = a fresh transaction id, and a snapshot S. T wrote its commit
 *      record below P, so it had its id before step 1: T < N. At S, T
 *      either had ended (visible to every later snapshot) or was running:
 *      listed in S's xip, or at or above S's xmax (a snapshot leaves out
 *      running ids at or above xmax, which is only the last completed id
 *      plus one - T waiting for its standby while no later one ended is
 *      exactly that case). So the candidates are xip and [xmax, N).
 *   3. Wait until no candidate is in progress (pg_xact_status).
 *   4. Then COPY, in a new statement: READ COMMITTED takes its snapshot
 *      when the statement starts, after every candidate has ended.
 * A transaction that takes its id after step 1 writes its first change
 * after P, so its commit record is above P: the copy may or may not see
 * it, and its streamed change wins either way.
 *
 * The cost: a transaction left open blocks the load until it ends. That
 * is logged after a second and then every 10 s, naming the transactions.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "log.h"
#include "lsn.h"
#include "p2o.h"
#include "pg/pgconn.h"
#include "xio.h"
#include "loader.h"

#define WAIT_LOG_MS		10000
#define WAIT_FIRST_LOG_MS	1000
#define WAIT_POLL_MIN_MS	20
#define WAIT_POLL_MAX_MS	500
/* transactions named in one log line */
#define WAIT_LOG_IDS		10

static int
parse_u64(const char **pp, uint64_t *v)
{
	char *end;

	if (**pp < '0' || **pp > '9')
		return -1;
	errno = 0;
	*v = strtoull(*pp, &end, 10);
	if (errno)
		return -1;
	*pp = end;
	return 0;
}

int
visible_wait_set(const char *snap, uint64_t next, uint64_t **xids,
    size_t *n)
{
	const char *p = snap;
	uint64_t xmin, xmax, x, *v = NULL;
	size_t cap = 0;

	*xids = NULL;
	*n = 0;
	if (parse_u64(&p, &xmin) == -1 || *p++ != ':' ||
	    parse_u64(&p, &xmax) == -1 || *p++ != ':' || xmin > xmax)
		return -1;
	while (*p != '\0') {
		if (parse_u64(&p, &x) == -1 || x < xmin || x >= xmax ||
		    (*p != ',' && *p != '\0'))
			goto bad;
		if (*p == ',' && *++p == '\0')
			goto bad;
		if (*n == cap)
			v = xrealloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
		v[(*n)++] = x;
	}
	/* next itself is ours, ended by now */
	for (x = xmax; x < next; x++) {
		if (*n == cap)
			v = xrealloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
		v[(*n)++] = x;
	}
	*xids = v;
	return 0;
bad:
	free(v);
	*n = 0;
	return -1;
}

/* "{1,2,3}": an array parameter */
static void
id_array(struct sbuf *b, const uint64_t *xids, size_t n)
{
	size_t i;

	sbuf_addc(b, '{');
	for (i = 0; i < n; i++) {
		if (i > 0)
			sbuf_addc(b, ',');
		sbuf_add_u64(b, xids[i]);
	}
	sbuf_addc(b, '}');
}

/* the candidates still in progress, in place; -1 with err */
static int
still_running(struct loader *ld, uint64_t *xids, size_t *n)
{
	struct pgload *pg = ld->src;
	struct pg_conn *c = pg->conns[0];
	struct sbuf arr = SBUF_INIT;
	const char *params[1];
	PGresult *res;
	int i;

	id_array(&arr, xids, *n);
	params[0] = arr.buf;
	res = pgconn_query(c, "waiting for open transactions", pg->version >=
	    130000 ?
	    "SELECT x::pg_catalog.text FROM pg_catalog.unnest("
	    "$1::pg_catalog.xid8[]) AS x "
	    "WHERE pg_catalog.pg_xact_status(x) = 'in progress'" :
	    "SELECT x FROM pg_catalog.unnest($1::pg_catalog.int8[]) AS x "
	    "WHERE pg_catalog.txid_status(x) = 'in progress'",
	    1, params, &ld->err);
	sbuf_release(&arr);
	if (res == NULL)
		return -1;
	*n = PQntuples(res);
	for (i = 0; i < (int)*n; i++)
		xids[i] = strtoull(PQgetvalue(res, i, 0), NULL, 10);
	PQclear(res);
	return 0;
}

static void
log_waiting(struct loader *ld, const char *rel, int range,
    const char *pos, const uint64_t *xids, size_t n, long long waited)
{
	struct sbuf ids = SBUF_INIT;
	size_t i;

	for (i = 0; i < n && i < WAIT_LOG_IDS; i++) {
		if (i > 0)
			sbuf_adds(&ids, ", ");
		sbuf_add_u64(&ids, xids[i]);
	}
	if (n > WAIT_LOG_IDS)
		sbuf_addf(&ids, " and %zu more", n - WAIT_LOG_IDS);
	meter_break(&ld->meter);
	log_info("table '%s': range %d waits for %zu transaction%s open "
	    "at %s to end (%lld s so far): %s", rel, range + 1, n,
	    n > 1 ? "s" : "", pos, waited / 1000, ids.buf);
	sbuf_release(&ids);
}

int
visible_position(struct loader *ld, const char *rel, int range,
    uint64_t *v)
{
	struct pgload *pg = ld->src;
	struct pg_conn *c = pg->conns[0];
	PGresult *res;
	char pos[LSN_TEXT_MAX];
	uint64_t *xids = NULL, next;
	size_t n;
	long long t0, logged;
	int wait = WAIT_POLL_MIN_MS, rc = -1;

	/* 1: P, in a statement of its own, before the id is taken */
	if ((res = pgconn_query(c, "reading the WAL position",
	    "SELECT pg_catalog.pg_current_wal_lsn()", 0, NULL,
	    &ld->err)) == NULL)
		return -1;
	snprintf(pos, sizeof(pos), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	if (lsn_parse(pos, v) == -1)
		return p2o_fail(&ld->err, P2O_EXIT_TEMPFAIL, "the server "
		    "gave the WAL position '%s'", pos);

	/* 2: N and S; their order between themselves does not matter */
	if ((res = pgconn_query(c, "reading a snapshot", pg->version >= 130000 ?
	    "SELECT pg_catalog.pg_current_xact_id()::pg_catalog.text, "
	    "pg_catalog.pg_current_snapshot()::pg_catalog.text" :
	    "SELECT pg_catalog.txid_current(), "
	    "pg_catalog.txid_current_snapshot()", 0, NULL, &ld->err)) == NULL)
		return -1;
	next = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
	if (visible_wait_set(PQgetvalue(res, 0, 1), next, &xids, &n) == -1) {
		p2o_fail(&ld->err, P2O_EXIT_TEMPFAIL, "the server gave the "
		    "snapshot '%s'", PQgetvalue(res, 0, 1));
		PQclear(res);
		return -1;
	}
	PQclear(res);

	/* 3 */
	t0 = now_ms();
	logged = t0 - WAIT_LOG_MS + WAIT_FIRST_LOG_MS;
	while (n > 0) {
		if (still_running(ld, xids, &n) == -1)
			goto out;
		if (n == 0)
			break;
		if (now_ms() - logged >= WAIT_LOG_MS) {
			logged = now_ms();
			log_waiting(ld, rel, range, pos, xids, n, logged - t0);
		}
		if (control_idle(ld, wait) == -1)
			goto out;
		if ((wait *= 2) > WAIT_POLL_MAX_MS)
			wait = WAIT_POLL_MAX_MS;
	}
	if (now_ms() - t0 >= WAIT_LOG_MS) {
		meter_break(&ld->meter);
		log_info("table '%s': the transactions range %d waited for "
		    "have ended", rel, range + 1);
	}
	log_debug("table '%s': range %d is versioned %s (%" PRIu64 ")", rel,
	    range + 1, pos, *v);
	rc = 0;
out:
	free(xids);
	return rc;
}
