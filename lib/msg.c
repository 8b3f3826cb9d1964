/*
 * msg.c - the frame schema of framing.md §4-6: kinds, member names, typed
 * control frames, the event and operation builders, the counter table.
 * Every member name a frame carries is spelled here and nowhere else. It
 * neither reads nor writes a file descriptor and never logs: a decoder
 * says what is wrong in err and its caller decides what that means.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"
#include "p2o.h"
#include "trace.h"

static const char *const kind_names[MSG_NKINDS] = {
	[MSG_UNKNOWN] = "?",
	[MSG_ROW] = "row", [MSG_COMMIT] = "commit",
	[MSG_TRUNCATE] = "truncate", [MSG_POS] = "pos",
	[MSG_DRIFT] = "drift", [MSG_MARK] = "mark",
	[MSG_INDEX] = "index", [MSG_DELETE] = "delete",
	[MSG_CLEAR] = "clear", [MSG_CASCADE] = "cascade", [MSG_FILL] = "fill",
	[MSG_HELLO] = "hello", [MSG_DURABLE] = "durable",
	[MSG_MARKED] = "marked", [MSG_ACK] = "ack",
	[MSG_MARK_CONFIRM] = "confirm", [MSG_STATS] = "stats",
	[MSG_LOAD] = "load",
	[MSG_GET] = "get", [MSG_CHECKPOINT] = "checkpoint",
	[MSG_PUT] = "put", [MSG_STORED] = "stored", [MSG_SWEPT] = "swept",
	[MSG_GAP] = "gap",
};

enum msg_kind
msg_kind(const struct frame *f)
{
	return msg_kind_of(f->kind);
}

/* the lengths of kind_names, so that a kind is told by its first byte and
 * its length before any bytes are compared (t-frame checks they agree) */
static const unsigned char kind_lens[MSG_NKINDS] = {
	[MSG_UNKNOWN] = 1,
	[MSG_ROW] = 3, [MSG_COMMIT] = 6, [MSG_TRUNCATE] = 8, [MSG_POS] = 3,
	[MSG_DRIFT] = 5, [MSG_MARK] = 4, [MSG_INDEX] = 5, [MSG_DELETE] = 6,
	[MSG_CLEAR] = 5, [MSG_CASCADE] = 7, [MSG_FILL] = 4, [MSG_HELLO] = 5,
	[MSG_DURABLE] = 7, [MSG_MARKED] = 6, [MSG_ACK] = 3,
	[MSG_MARK_CONFIRM] = 7, [MSG_STATS] = 5, [MSG_LOAD] = 4, [MSG_GET] = 3,
	[MSG_CHECKPOINT] = 10, [MSG_PUT] = 3, [MSG_STORED] = 6,
	[MSG_SWEPT] = 5, [MSG_GAP] = 3,
};

/* the one kind the n bytes at p can name, told by their length and
 * first bytes; msg_kind_of then compares them all */
static enum msg_kind
kind_guess(const char *p, size_t n)
{
	switch (n) {
	case 3:
		switch (p[0]) {
		case 'r':	return MSG_ROW;
		case 'p':	return p[1] == 'o' ? MSG_POS : MSG_PUT;
		case 'a':	return MSG_ACK;
		case 'g':	return p[1] == 'e' ? MSG_GET : MSG_GAP;
		}
		break;
	case 4:
		switch (p[0]) {
		case 'm':	return MSG_MARK;
		case 'f':	return MSG_FILL;
		case 'l':	return MSG_LOAD;
		}
		break;
	case 5:
		switch (p[0]) {
		case 'i':	return MSG_INDEX;
		case 'd':	return MSG_DRIFT;
		case 'c':	return MSG_CLEAR;
		case 'h':	return MSG_HELLO;
		case 's':	return p[1] == 't' ? MSG_STATS : MSG_SWEPT;
		}
		break;
	case 6:
		switch (p[0]) {
		case 'c':	return MSG_COMMIT;
		case 'd':	return MSG_DELETE;
		case 'm':	return MSG_MARKED;
		case 's':	return MSG_STORED;
		}
		break;
	case 7:
		switch (p[0]) {
		case 'c':	return p[1] == 'a' ? MSG_CASCADE :
				    MSG_MARK_CONFIRM;
		case 'd':	return MSG_DURABLE;
		}
		break;
	case 8:
		if (p[0] == 't')
			return MSG_TRUNCATE;
		break;
	case 10:
		if (p[0] == 'c')
			return MSG_CHECKPOINT;
		break;
	}
	return MSG_UNKNOWN;
}

enum msg_kind
msg_kind_of(struct jspan kind)
{
	const char *p = kind.p + 1, *name;
	size_t n = kind.n - 2, i;
	enum msg_kind k;

	if (kind.n < 3 || kind.p[0] != '"')
		return MSG_UNKNOWN;
	/* kind names hold no escapes; an escaped spelling is not a kind.
	 * Every kind is asked of every frame (the writer asks an operation
	 * three times): one guess, then its bytes compared. */
	if ((k = kind_guess(p, n)) == MSG_UNKNOWN)
		return MSG_UNKNOWN;
	name = kind_names[k];
	for (i = 0; i < n && name[i] == p[i]; i++)
		;
	return i == n ? k : MSG_UNKNOWN;
}

size_t
msg_kind_len(enum msg_kind k)
{
	return k > MSG_UNKNOWN && k < MSG_NKINDS ? kind_lens[k] : 0;
}

const char *
msg_kind_name(enum msg_kind k)
{
	return k > MSG_UNKNOWN && k < MSG_NKINDS ? kind_names[k] : "?";
}

static int
bad(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* {"k":"<kind>" into a reset j */
static inline void
open_kind(struct sbuf *j, enum msg_kind k)
{
	sbuf_reset(j);
	sbuf_adds(j, "{\"k\":\"");
	sbuf_adds(j, kind_names[k]);
	sbuf_addc(j, '"');
}

/* a comma unless the container in j was just opened */
static inline void
sep(struct sbuf *j)
{
	char last = j->len ? j->buf[j->len - 1] : '{';

	if (last != '{' && last != '[')
		sbuf_addc(j, ',');
}

/* inline wherever it is written, so that the name's length is the
 * literal's (a call measured strlen and copied it, each frame) */
static inline __attribute__((always_inline)) void
member(struct sbuf *j, const char *name)
{
	sep(j);
	sbuf_addc(j, '"');
	sbuf_adds(j, name);
	sbuf_adds(j, "\":");
}

static inline __attribute__((always_inline)) void
member_u64(struct sbuf *j, const char *name, uint64_t v)
{
	member(j, name);
	sbuf_add_u64(j, v);
}

static void
member_i64(struct sbuf *j, const char *name, long long v)
{
	member(j, name);
	sbuf_add_i64(j, v);
}

static inline __attribute__((always_inline)) void
member_str(struct sbuf *j, const char *name, const char *s, size_t n)
{
	member(j, name);
	sbuf_add_jstr(j, s, n);
}

void
msg_end(struct sbuf *out, struct sbuf *j)
{
	sbuf_addc(j, '}');
	frame_put(out, j->buf, j->len);
	sbuf_reset(j);
}

/* the digits of a frame's length prefix */
static unsigned
len_digits(size_t n)
{
	unsigned d = 1;

	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

/* a frame built in out itself: room for its prefix as long as the last
 * one's (a table's rows are much of a size), then {"k":"<kind>" */
static void
reserve_in(struct sbuf *out, struct msg_in *in)
{
	if (in->room < 2)
		in->room = 4;
	sbuf_grow(out, in->room + 16);
	in->at = out->len;
	out->len += in->room;
}

static void
open_in(struct sbuf *out, struct msg_in *in, enum msg_kind k)
{
	reserve_in(out, in);
	sbuf_adds(out, "{\"k\":\"");
	sbuf_add(out, kind_names[k], kind_lens[k]);
	sbuf_addc(out, '"');
}

void
msg_end_in(struct sbuf *out, struct msg_in *in)
{
	size_t json = in->at + in->room, len;
	unsigned room, i;

	sbuf_addc(out, '}');
	sbuf_addc(out, '\n');
	len = out->len - json;	/* the JSON and its LF */
	room = len_digits(len) + 1;
	if (room != in->room) {
		/* a frame of another size than the last: moved once */
		sbuf_grow(out, room);
		memmove(out->buf + in->at + room, out->buf + json, len);
		out->len = in->at + room + len;
		out->buf[out->len] = '\0';
		in->room = room;
	}
	/* the digits from the last, then the space */
	out->buf[in->at + room - 1] = ' ';
	for (i = room - 1; i > 0; i--, len /= 10)
		out->buf[in->at + i - 1] = (char)('0' + len % 10);
}

void
msg_abort_in(struct sbuf *out, const struct msg_in *in)
{
	out->len = in->at;
	if (out->cap)
		out->buf[out->len] = '\0';
}

/* the control frames are small and rare: each builds in its own buffer */
static void
end_small(struct sbuf *out, struct sbuf *j)
{
	msg_end(out, j);
	sbuf_release(j);
}

/* ---- reading members ---- */

static int
get_u64(struct jspan obj, const char *name, uint64_t *v, int required,
    const char *what, char *err, size_t errlen)
{
	struct jspan s;

	if (!jobj_get(obj, name, &s))
		return required ? bad(err, errlen, "%s has no \"%s\"", what,
		    name) : 0;
	if (jspan_type(s) != J_NUMBER || jnum_u64(s, v) == -1)
		return bad(err, errlen, "%s \"%s\" is not an unsigned 64-bit "
		    "integer", what, name);
	return 1;
}

static int
get_i64(struct jspan obj, const char *name, long long *v, const char *what,
    char *err, size_t errlen)
{
	struct jspan s;
	int64_t x;

	if (!jobj_get(obj, name, &s))
		return 0;
	if (jspan_type(s) != J_NUMBER || jnum_i64(s, &x) == -1)
		return bad(err, errlen, "%s \"%s\" is not an integer", what,
		    name);
	*v = x;
	return 1;
}

/* a non-empty string member as a heap copy; 0 when absent */
static int
get_str(struct jspan obj, const char *name, char **out, int required,
    const char *what, char *err, size_t errlen)
{
	struct jspan s;

	*out = NULL;
	if (!jobj_get(obj, name, &s))
		return required ? bad(err, errlen, "%s has no \"%s\"", what,
		    name) : 0;
	if (jspan_type(s) != J_STRING || s.n <= 2)
		return bad(err, errlen, "%s \"%s\" is not a non-empty string",
		    what, name);
	*out = jstr_dup(s);
	return 1;
}

/* a traceparent member into buf ("" when absent): one that is not a
 * string or not a W3C traceparent is dropped, for a trace is never worth
 * stopping a stream over */
_Static_assert(sizeof(((struct msg_pos *)0)->trace) == TRACE_PARENT_LEN,
    "msg_pos.trace holds a traceparent");

void
msg_get_trace(struct jspan obj, char *buf)
{
	struct trace_ctx c;
	struct jspan s;

	buf[0] = '\0';
	if (!jobj_get(obj, "trace", &s) || jspan_type(s) != J_STRING ||
	    jstr_copy(s, buf, TRACE_PARENT_LEN) == -1)
		goto drop;
	if (trace_ctx_parse(buf, strlen(buf), &c) == 0)
		return;
drop:
	buf[0] = '\0';
}

/* ---- hello ---- */

void
msg_put_hello(struct sbuf *out, const char *tool)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, MSG_HELLO);
	member_str(&j, "tool", tool, strlen(tool));
	member_i64(&j, "proto", P2O_PROTO);
	member_i64(&j, "pid", (long long)getpid());
	end_small(out, &j);
}

int
msg_read_hello(const struct frame *f, struct msg_hello *h, char *err,
    size_t errlen)
{
	struct jspan s;
	long long v = 0;

	memset(h, 0, sizeof(*h));
	if (!jobj_get(f->obj, "tool", &s) || jspan_type(s) != J_STRING ||
	    jstr_copy(s, h->tool, sizeof(h->tool)) == -1)
		return bad(err, errlen, "hello has no short string \"tool\"");
	if (get_i64(f->obj, "proto", &v, "hello", err, errlen) != 1)
		return bad(err, errlen, "hello has no integer \"proto\"");
	h->proto = v > 0 && v < 1000000 ? (int)v : -1;
	v = 0;
	if (get_i64(f->obj, "pid", &v, "hello", err, errlen) == -1)
		return -1;
	h->pid = (long)v;
	return 0;
}

/* ---- positions ---- */

void
msg_pos_release(struct msg_pos *p)
{
	free(p->text);
	memset(p, 0, sizeof(*p));
}

static void
pos_members(struct sbuf *j, uint64_t pos, const char *text)
{
	member_u64(j, "pos", pos);
	if (text != NULL && *text)
		member_str(j, "text", text, strlen(text));
}

void
msg_put_durable(struct sbuf *out, const struct msg_pos *p)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, MSG_DURABLE);
	pos_members(&j, p->pos, p->text);
	/* a bare pos frame has no commit time */
	if (p->ts > 0)
		member_i64(&j, "ts", p->ts);
	if (p->tx > 0)
		member_i64(&j, "tx", p->tx);
	if (p->rx > 0)
		member_i64(&j, "rx", p->rx);
	if (p->in > 0)
		member_i64(&j, "in", p->in);
	if (p->sent > 0)
		member_i64(&j, "sent", p->sent);
	member_i64(&j, "at", p->at);
	if (p->trace[0])
		member_str(&j, "trace", p->trace, strlen(p->trace));
	end_small(out, &j);
}

void
msg_put_ack(struct sbuf *out, uint64_t pos)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, MSG_ACK);
	member_u64(&j, "pos", pos);
	end_small(out, &j);
}

void
msg_put_get(struct sbuf *out, int forget)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, MSG_GET);
	if (forget)
		sbuf_adds(&j, ",\"forget\":true");
	end_small(out, &j);
}

int
msg_get_forget(const struct frame *f)
{
	struct jspan v;

	return msg_kind(f) == MSG_GET && jobj_get(f->obj, "forget", &v) &&
	    jspan_type(v) == J_TRUE;
}

void
msg_put_checkpoint(struct sbuf *out, const struct msg_pos *p)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, MSG_CHECKPOINT);
	if (p->present)
		pos_members(&j, p->pos, p->text);
	end_small(out, &j);
}

void
msg_put_put(struct sbuf *out, uint64_t pos, const char *text)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, MSG_PUT);
	pos_members(&j, pos, text);
	end_small(out, &j);
}

void
msg_put_stored(struct sbuf *out, uint64_t pos)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, MSG_STORED);
	member_u64(&j, "pos", pos);
	end_small(out, &j);
}

void
msg_put_gap(struct sbuf *out, const struct msg_gap *g)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, MSG_GAP);
	member_u64(&j, "frames", g->frames);
	member_u64(&j, "bytes", g->bytes);
	end_small(out, &j);
}

int
msg_read_gap(const struct frame *f, struct msg_gap *g, char *err,
    size_t errlen)
{
	memset(g, 0, sizeof(*g));
	if (msg_kind(f) != MSG_GAP)
		return bad(err, errlen, "not a gap frame");
	if (get_u64(f->obj, "frames", &g->frames, 1, "gap", err, errlen) == -1 ||
	    get_u64(f->obj, "bytes", &g->bytes, 1, "gap", err, errlen) == -1)
		return -1;
	return 0;
}

const char *
msg_gap_describe(const struct msg_gap *g, char *buf, size_t len)
{
	snprintf(buf, len, "a gap: the tap that wrote this stream dropped "
	    "%llu frame%s (%llu bytes) here, so what follows is not the "
	    "stream; a replay stops at it", (unsigned long long)g->frames,
	    g->frames == 1 ? "" : "s", (unsigned long long)g->bytes);
	return buf;
}

void
msg_put_commit(struct sbuf *out, uint64_t pos, const char *text,
    long long ts_us, uint64_t n, long long tx_us, long long rx_us,
    const char *trace)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, MSG_COMMIT);
	pos_members(&j, pos, text);
	member_i64(&j, "ts", ts_us);
	member_u64(&j, "n", n);
	if (tx_us > 0)
		member_i64(&j, "tx", tx_us);
	if (rx_us > 0)
		member_i64(&j, "rx", rx_us);
	if (trace != NULL && *trace)
		member_str(&j, "trace", trace, strlen(trace));
	end_small(out, &j);
}

void
msg_put_pos(struct sbuf *out, uint64_t pos, const char *text)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, MSG_POS);
	pos_members(&j, pos, text);
	end_small(out, &j);
}

int
msg_read_pos(const struct frame *f, struct msg_pos *p, char *err,
    size_t errlen)
{
	enum msg_kind k = msg_kind(f);
	const char *what = msg_kind_name(k);
	int r;

	memset(p, 0, sizeof(*p));
	switch (k) {
	case MSG_COMMIT: case MSG_POS: case MSG_DURABLE: case MSG_ACK:
	case MSG_CHECKPOINT: case MSG_PUT: case MSG_STORED:
		break;
	default:
		return bad(err, errlen, "a '%s' frame carries no position",
		    what);
	}
	r = get_u64(f->obj, "pos", &p->pos, k != MSG_CHECKPOINT, what, err,
	    errlen);
	if (r == -1)
		return -1;
	p->present = r == 1;
	if (get_str(f->obj, "text", &p->text, 0, what, err, errlen) == -1)
		goto fail;
	if (k == MSG_CHECKPOINT && p->present && p->text == NULL) {
		bad(err, errlen, "checkpoint has a \"pos\" without a \"text\"");
		goto fail;
	}
	if ((k == MSG_COMMIT || k == MSG_DURABLE) &&
	    (get_i64(f->obj, "ts", &p->ts, what, err, errlen) == -1 ||
	    get_i64(f->obj, "tx", &p->tx, what, err, errlen) == -1 ||
	    get_i64(f->obj, "rx", &p->rx, what, err, errlen) == -1))
		goto fail;
	if (k == MSG_DURABLE &&
	    (get_i64(f->obj, "in", &p->in, what, err, errlen) == -1 ||
	    get_i64(f->obj, "sent", &p->sent, what, err, errlen) == -1 ||
	    get_i64(f->obj, "at", &p->at, what, err, errlen) == -1))
		goto fail;
	if (k == MSG_COMMIT &&
	    get_u64(f->obj, "n", &p->n, 0, what, err, errlen) == -1)
		goto fail;
	if (k == MSG_COMMIT || k == MSG_DURABLE)
		msg_get_trace(f->obj, p->trace);
	return 0;
fail:
	msg_pos_release(p);
	return -1;
}

/* ---- marks ---- */

void
msg_mark_release(struct msg_mark *m)
{
	free(m->id);
	free(m->table);
	memset(m, 0, sizeof(*m));
}

void
msg_put_mark(struct sbuf *out, enum msg_kind kind, const char *id,
    const char *table, struct jspan progress, int done)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, kind == MSG_MARKED ? MSG_MARKED : MSG_MARK);
	member_str(&j, "id", id, strlen(id));
	if (table != NULL)
		member_str(&j, "table", table, strlen(table));
	if (progress.p != NULL) {
		member(&j, "progress");
		sbuf_add(&j, progress.p, progress.n);
	}
	if (done) {
		member(&j, "done");
		sbuf_adds(&j, "true");
	}
	end_small(out, &j);
}

void
msg_put_confirm(struct sbuf *out, const char *id)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, MSG_MARK_CONFIRM);
	member_str(&j, "id", id, strlen(id));
	end_small(out, &j);
}

void
msg_put_marked_from(struct sbuf *out, struct jspan mark)
{
	struct sbuf j = SBUF_INIT;
	struct jiter it;
	struct jspan k, v;

	open_kind(&j, MSG_MARKED);
	jiter_init(&it, mark);
	while (jiter_member(&it, &k, &v)) {
		if (jkey_is(k, "k", 1))
			continue;
		sep(&j);
		sbuf_add(&j, k.p, k.n);
		sbuf_addc(&j, ':');
		sbuf_add(&j, v.p, v.n);
	}
	end_small(out, &j);
}

int
msg_read_mark(const struct frame *f, struct msg_mark *m, char *err,
    size_t errlen)
{
	enum msg_kind k = msg_kind(f);
	const char *what = msg_kind_name(k);
	struct jspan s;

	memset(m, 0, sizeof(*m));
	if (k != MSG_MARK && k != MSG_MARKED && k != MSG_MARK_CONFIRM)
		return bad(err, errlen, "a '%s' frame is not a mark", what);
	if (get_str(f->obj, "id", &m->id, 1, what, err, errlen) == -1)
		return -1;
	if (k == MSG_MARK_CONFIRM)
		return 0;
	if (get_str(f->obj, "table", &m->table, 0, what, err, errlen) == -1)
		goto fail;
	if (jobj_get(f->obj, "progress", &s)) {
		if (jspan_type(s) != J_OBJECT) {
			bad(err, errlen, "%s \"progress\" is not an object",
			    what);
			goto fail;
		}
		m->progress = s;
	}
	if (jobj_get(f->obj, "done", &s)) {
		if (jspan_type(s) != J_TRUE && jspan_type(s) != J_FALSE) {
			bad(err, errlen, "%s \"done\" is not a boolean", what);
			goto fail;
		}
		m->done = jspan_type(s) == J_TRUE;
	}
	return 0;
fail:
	msg_mark_release(m);
	return -1;
}

/* ---- load ---- */

void
msg_load_begin(struct sbuf *j, const struct msg_pos *cp)
{
	open_kind(j, MSG_LOAD);
	if (cp != NULL && cp->present) {
		member(j, "checkpoint");
		sbuf_addc(j, '{');
		pos_members(j, cp->pos, cp->text);
		sbuf_addc(j, '}');
	}
	member(j, "tables");
	sbuf_addc(j, '[');
}

void
msg_load_table(struct sbuf *j, const char *table, struct jspan progress)
{
	sep(j);
	sbuf_addc(j, '{');
	member_str(j, "table", table, strlen(table));
	if (progress.p != NULL) {
		member(j, "progress");
		sbuf_add(j, progress.p, progress.n);
	}
	sbuf_addc(j, '}');
}

void
msg_load_end(struct sbuf *out, struct sbuf *j, int sweep)
{
	sbuf_addc(j, ']');
	if (sweep)
		sbuf_adds(j, ",\"sweep\":true");
	msg_end(out, j);
}

int
msg_load_sweep(const struct frame *f)
{
	struct jspan v;

	return msg_kind(f) == MSG_LOAD && jobj_get(f->obj, "sweep", &v) &&
	    jspan_type(v) == J_TRUE;
}

void
msg_put_swept(struct sbuf *out)
{
	struct sbuf j = SBUF_INIT;

	open_kind(&j, MSG_SWEPT);
	end_small(out, &j);
}

int
msg_read_load(const struct frame *f, struct jspan *tables,
    struct msg_pos *cp, char *err, size_t errlen)
{
	struct jspan c;
	int r;

	memset(cp, 0, sizeof(*cp));
	if (msg_kind(f) != MSG_LOAD)
		return bad(err, errlen, "a '%s' frame is not a load",
		    msg_kind_name(msg_kind(f)));
	if (!jobj_get(f->obj, "tables", tables) ||
	    jspan_type(*tables) != J_ARRAY)
		return bad(err, errlen, "load has no \"tables\" array");
	if (!jobj_get(f->obj, "checkpoint", &c))
		return 0;
	if (jspan_type(c) != J_OBJECT)
		return bad(err, errlen, "load \"checkpoint\" is not an object");
	if ((r = get_u64(c, "pos", &cp->pos, 1, "load checkpoint", err,
	    errlen)) == -1 ||
	    get_str(c, "text", &cp->text, 1, "load checkpoint", err,
	    errlen) == -1)
		return -1;
	cp->present = 1;
	return 0;
}

int
msg_load_next(struct jiter *it, char **table, struct jspan *progress,
    char *err, size_t errlen)
{
	struct jspan t;

	*table = NULL;
	progress->p = NULL;
	progress->n = 0;
	if (!jiter_elem(it, &t))
		return 0;
	if (jspan_type(t) != J_OBJECT)
		return bad(err, errlen, "load \"tables\" holds a non-object");
	if (get_str(t, "table", table, 1, "load table", err, errlen) == -1)
		return -1;
	if (jobj_get(t, "progress", progress) &&
	    jspan_type(*progress) != J_OBJECT) {
		free(*table);
		*table = NULL;
		return bad(err, errlen, "load \"progress\" is not an object");
	}
	return 1;
}

/* ---- event builders ---- */

static const char *const list_names[] = {
	[ML_KEY] = "key", [ML_TOAST] = "toast", [ML_RELS] = "rels",
	[ML_ADDED] = "added", [ML_REMOVED] = "removed",
	[ML_RETYPED] = "retyped", [ML_CHILDREN] = "children",
};

static void
row_members(struct sbuf *j, char op, const char *rel, size_t rellen,
    uint64_t v)
{
	member(j, "op");
	sbuf_addc(j, '"');
	sbuf_addc(j, op);
	sbuf_addc(j, '"');
	member_str(j, "rel", rel, rellen);
	member_u64(j, "v", v);
}

void
msg_row_begin(struct sbuf *j, char op, const char *rel, size_t rellen,
    uint64_t v)
{
	open_kind(j, MSG_ROW);
	row_members(j, op, rel, rellen, v);
}

void
msg_row_begin_in(struct sbuf *out, struct msg_in *in, char op,
    const char *rel, size_t rellen, uint64_t v)
{
	open_in(out, in, MSG_ROW);
	row_members(out, op, rel, rellen, v);
}

void
msg_truncate_begin(struct sbuf *j, uint64_t v)
{
	open_kind(j, MSG_TRUNCATE);
	member_u64(j, "v", v);
}

void
msg_drift_begin(struct sbuf *j, const char *rel, size_t rellen)
{
	open_kind(j, MSG_DRIFT);
	member_str(j, "rel", rel, rellen);
}

void
msg_list_begin(struct sbuf *j, enum msg_list l)
{
	member(j, list_names[l]);
	sbuf_addc(j, '[');
}

void
msg_list_item(struct sbuf *j, const char *s, size_t n)
{
	sep(j);
	sbuf_add_jstr(j, s, n);
}

void
msg_list_end(struct sbuf *j)
{
	sbuf_addc(j, ']');
}

void
msg_image_begin(struct sbuf *j, enum msg_image which)
{
	member(j, which == MI_NEW ? "new" : "old");
	sbuf_addc(j, '{');
}

void
msg_column(struct sbuf *j, const char *name, size_t n)
{
	sep(j);
	sbuf_add_jstr(j, name, n);
	sbuf_addc(j, ':');
}

void
msg_image_end(struct sbuf *j)
{
	sbuf_addc(j, '}');
}

void
msg_rowtpl_init(struct msg_rowtpl *t, char op, const char *rel,
    const char *const *keys, int nkeys, const char *const *cols, int ncols)
{
	struct sbuf j = SBUF_INIT;
	size_t at;
	int i;

	memset(t, 0, sizeof(*t));
	/* a row begun with version 0 is the head, then that 0, then what
	 * follows it: the builders' own bytes, cut around the digit */
	msg_row_begin(&j, op, rel, strlen(rel), 0);
	at = j.len - 1;
	msg_list_begin(&j, ML_KEY);
	for (i = 0; i < nkeys; i++)
		msg_list_item(&j, keys[i], strlen(keys[i]));
	msg_list_end(&j);
	msg_image_begin(&j, MI_NEW);
	sbuf_add(&t->head, j.buf, at);
	sbuf_add(&t->mid, j.buf + at + 1, j.len - at - 1);
	/* each name as it follows the image's opening brace (the first) or
	 * a value (the others: a digit stands for one) */
	t->off = xcalloc((size_t)ncols + 1, sizeof(*t->off));
	t->n = ncols;
	for (i = 0; i < ncols; i++) {
		t->off[i] = t->names.len;
		sbuf_reset(&j);
		sbuf_addc(&j, i == 0 ? '{' : '0');
		msg_column(&j, cols[i], strlen(cols[i]));
		sbuf_add(&t->names, j.buf + 1, j.len - 1);
	}
	t->off[ncols] = t->names.len;
	sbuf_release(&j);
}

void
msg_rowtpl_release(struct msg_rowtpl *t)
{
	sbuf_release(&t->head);
	sbuf_release(&t->mid);
	sbuf_release(&t->names);
	free(t->off);
	t->off = NULL;
	t->n = 0;
}

void
msg_rowtpl_begin(struct sbuf *j, const struct msg_rowtpl *t, uint64_t v)
{
	sbuf_reset(j);
	sbuf_add(j, t->head.buf, t->head.len);
	sbuf_add_u64(j, v);
	sbuf_add(j, t->mid.buf, t->mid.len);
}

void
msg_rowtpl_begin_in(struct sbuf *out, struct msg_in *in,
    const struct msg_rowtpl *t, uint64_t v)
{
	reserve_in(out, in);
	sbuf_add(out, t->head.buf, t->head.len);
	sbuf_add_u64(out, v);
	sbuf_add(out, t->mid.buf, t->mid.len);
}

void
msg_rowtpl_column(struct sbuf *j, const struct msg_rowtpl *t, int i)
{
	sbuf_add(j, t->names.buf + t->off[i], t->off[i + 1] - t->off[i]);
}

int
msg_read_row(struct jspan obj, const struct jtop *top, struct msg_row *r,
    char *err, size_t errlen)
{
	static const char *const names[] = { "op", "rel", "v", "key", "new",
	    "old", "toast" };
	static struct jnames nm = JNAMES(names);
	struct jspan m[7];

	memset(r, 0, sizeof(*r));
	jtop_pickn(top, obj, &nm, m);
	if (m[0].p == NULL || jspan_type(m[0]) != J_STRING || m[0].n != 3 ||
	    strchr("iudc", m[0].p[1]) == NULL)
		return bad(err, errlen, "row has no \"op\" of i, u, d or c");
	r->op = m[0].p[1];
	if (m[1].p == NULL || jspan_type(m[1]) != J_STRING)
		return bad(err, errlen, "row has no string \"rel\"");
	r->rel = m[1];
	if (m[2].p == NULL || jspan_type(m[2]) != J_NUMBER ||
	    jnum_u64(m[2], &r->v) == -1)
		return bad(err, errlen, "row has no unsigned 64-bit \"v\"");
	r->v_raw = m[2];
	if (m[3].p == NULL || jspan_type(m[3]) != J_ARRAY)
		return bad(err, errlen, "row has no \"key\" array");
	r->key = m[3];
	if ((m[4].p != NULL && jspan_type(m[4]) != J_OBJECT) ||
	    (m[5].p != NULL && jspan_type(m[5]) != J_OBJECT))
		return bad(err, errlen, "row image is not an object");
	r->new = m[4];
	r->old = m[5];
	if (m[6].p != NULL && jspan_type(m[6]) != J_ARRAY)
		return bad(err, errlen, "row \"toast\" is not an array");
	r->toast = m[6];
	return 0;
}

int
msg_read_truncate(struct jspan obj, struct jspan *rels, uint64_t *v,
    char *err, size_t errlen)
{
	struct jspan s;
	struct jiter it;

	if (!jobj_get(obj, "rels", rels) || jspan_type(*rels) != J_ARRAY)
		return bad(err, errlen, "truncate has no \"rels\" array");
	if (get_u64(obj, "v", v, 1, "truncate", err, errlen) == -1)
		return -1;
	jiter_init(&it, *rels);
	while (jiter_elem(&it, &s))
		if (jspan_type(s) != J_STRING)
			return bad(err, errlen, "truncate \"rels\" holds a "
			    "non-string");
	return 0;
}

/* ---- operations ---- */

static void
op_members(struct sbuf *j, const char *index, size_t ilen, const char *id,
    size_t idlen, uint64_t v)
{
	member_str(j, "index", index, ilen);
	if (id != NULL)
		member_str(j, "id", id, idlen);
	member_u64(j, "v", v);
}

void
msg_op_begin(struct sbuf *j, enum msg_kind kind, const char *index,
    size_t ilen, const char *id, size_t idlen, uint64_t v)
{
	open_kind(j, kind);
	op_members(j, index, ilen, id, idlen, v);
}

void
msg_op_begin_in(struct sbuf *out, struct msg_in *in, enum msg_kind kind,
    const char *index, size_t ilen, const char *id, size_t idlen, uint64_t v)
{
	open_in(out, in, kind);
	op_members(out, index, ilen, id, idlen, v);
}

void
msg_op_begin_memo(struct sbuf *out, struct msg_in *in, struct msg_ophead *h,
    enum msg_kind kind, const char *index, size_t ilen, const char *id,
    size_t idlen, uint64_t v)
{
	if (h->kind != kind || h->index.len != ilen ||
	    (ilen > 0 && memcmp(h->index.buf, index, ilen) != 0)) {
		/* the bytes open_in and op_members write before the id */
		sbuf_reset(&h->text);
		sbuf_adds(&h->text, "{\"k\":\"");
		sbuf_add(&h->text, kind_names[kind], kind_lens[kind]);
		sbuf_addc(&h->text, '"');
		member_str(&h->text, "index", index, ilen);
		sbuf_reset(&h->index);
		sbuf_add(&h->index, index, ilen);
		h->kind = kind;
	}
	reserve_in(out, in);
	sbuf_add(out, h->text.buf, h->text.len);
	/* op_members' bytes after the index, each name's length known here */
	if (id != NULL) {
		sbuf_add(out, ",\"id\":", 6);
		sbuf_add_jstr(out, id, idlen);
	}
	sbuf_add(out, ",\"v\":", 5);
	sbuf_add_u64(out, v);
}

void
msg_ophead_release(struct msg_ophead *h)
{
	sbuf_release(&h->text);
	sbuf_release(&h->index);
	h->kind = MSG_UNKNOWN;
}

void
msg_op_routing(struct sbuf *j, const char *s, size_t n)
{
	member_str(j, "routing", s, n);
}

void
msg_op_pipeline(struct sbuf *j, const char *s, size_t n)
{
	member_str(j, "pipeline", s, n);
}

void
msg_op_rel(struct sbuf *j, const char *s, size_t n)
{
	member_str(j, "rel", s, n);
}

void
msg_op_toast_id(struct sbuf *j, const char *s, size_t n)
{
	member_str(j, "toast_id", s, n);
}

void
msg_op_toast_index(struct sbuf *j, const char *s, size_t n)
{
	member_str(j, "toast_index", s, n);
}

void
msg_op_toast_routing(struct sbuf *j, const char *s, size_t n)
{
	member_str(j, "toast_routing", s, n);
}

void
msg_op_clear_term(struct sbuf *j, const char *field, size_t flen,
    const char *value, size_t vlen)
{
	member_str(j, "field", field, flen);
	member_str(j, "value", value, vlen);
}

void
msg_op_doc(struct sbuf *j)
{
	sep(j);
	sbuf_add(j, "\"doc\":", 6);
}

static int
op_string(struct jspan s, const char *name, int required, const char *what,
    char *err, size_t errlen)
{
	if (s.p == NULL)
		return required ? bad(err, errlen, "%s has no \"%s\"", what,
		    name) : 0;
	if (jspan_type(s) != J_STRING || s.n <= 2)
		return bad(err, errlen, "%s \"%s\" is not a non-empty string",
		    what, name);
	return 0;
}

/* the field names a completion copies: each must be a string */
static int
string_array(struct jspan a)
{
	struct jiter it;
	struct jspan el;

	if (jspan_type(a) != J_ARRAY)
		return 0;
	jiter_init(&it, a);
	while (jiter_elem(&it, &el) == 1)
		if (jspan_type(el) != J_STRING)
			return 0;
	return 1;
}

int
msg_read_op(const struct frame *f, struct msg_op *op, char *err,
    size_t errlen)
{
	static const char *const names[] = { "index", "id", "v", "routing",
	    "pipeline", "rel", "toast", "toast_id", "toast_index",
	    "toast_routing", "field", "value", "children", "doc" };
	enum { I_INDEX, I_ID, I_V, I_ROUTING, I_PIPELINE, I_REL, I_TOAST,
	    I_TOAST_ID, I_TOAST_INDEX, I_TOAST_ROUTING, I_FIELD, I_VALUE,
	    I_CHILDREN, I_DOC, I_N };
	static struct jnames nm = JNAMES(names);
	struct jspan m[I_N];
	const char *what;

	memset(op, 0, sizeof(*op));
	op->kind = msg_kind(f);
	what = msg_kind_name(op->kind);
	if (op->kind != MSG_INDEX && op->kind != MSG_DELETE &&
	    op->kind != MSG_CLEAR && op->kind != MSG_CASCADE &&
	    op->kind != MSG_FILL)
		return bad(err, errlen, "a '%s' frame is not an operation",
		    what);
	jtop_pickn(&f->top, f->obj, &nm, m);
	if (op_string(m[I_INDEX], "index", 1, what, err, errlen) == -1 ||
	    op_string(m[I_ID], "id", op->kind != MSG_CLEAR, what, err,
	    errlen) == -1 ||
	    op_string(m[I_ROUTING], "routing", 0, what, err, errlen) == -1 ||
	    op_string(m[I_PIPELINE], "pipeline", 0, what, err, errlen) == -1 ||
	    op_string(m[I_REL], "rel", 0, what, err, errlen) == -1 ||
	    op_string(m[I_TOAST_ID], "toast_id", 0, what, err, errlen) == -1 ||
	    op_string(m[I_TOAST_INDEX], "toast_index", 0, what, err,
	    errlen) == -1 ||
	    op_string(m[I_TOAST_ROUTING], "toast_routing", 0, what, err,
	    errlen) == -1)
		return -1;
	if (m[I_V].p == NULL || jspan_type(m[I_V]) != J_NUMBER ||
	    jnum_u64(m[I_V], &op->v) == -1)
		return bad(err, errlen, "%s has no unsigned 64-bit \"v\"",
		    what);
	op->index = m[I_INDEX], op->id = m[I_ID], op->routing = m[I_ROUTING];
	op->pipeline = m[I_PIPELINE], op->rel = m[I_REL];
	switch (op->kind) {
	case MSG_CLEAR:
		/* a field and its value, or neither */
		if (op_string(m[I_FIELD], "field", m[I_VALUE].p != NULL, what,
		    err, errlen) == -1 || op_string(m[I_VALUE], "value",
		    m[I_FIELD].p != NULL, what, err, errlen) == -1)
			return -1;
		op->field = m[I_FIELD], op->value = m[I_VALUE];
		return 0;
	case MSG_CASCADE:
		if (m[I_CHILDREN].p == NULL || !string_array(m[I_CHILDREN]) ||
		    m[I_CHILDREN].n <= 2)
			return bad(err, errlen, "cascade \"children\" is not a "
			    "non-empty array of strings");
		op->children = m[I_CHILDREN];
		return 0;
	case MSG_FILL:
		/* the fields it fills, from the document it carries */
		if (m[I_TOAST].p == NULL || m[I_TOAST].n <= 2)
			return bad(err, errlen, "fill has no \"toast\" fields");
		break;
	case MSG_INDEX:
		break;
	default:
		return 0;
	}
	if (m[I_TOAST].p != NULL && !string_array(m[I_TOAST]))
		return bad(err, errlen, "%s \"toast\" is not an array of "
		    "strings", what);
	if (m[I_DOC].p == NULL || jspan_type(m[I_DOC]) != J_OBJECT)
		return bad(err, errlen, "%s has no \"doc\" object", what);
	op->toast = m[I_TOAST], op->toast_id = m[I_TOAST_ID];
	op->toast_index = m[I_TOAST_INDEX];
	op->toast_routing = m[I_TOAST_ROUTING];
	op->doc = m[I_DOC];
	return 0;
}

/* ---- stats ---- */

const struct msg_counter_def msg_counters[MC_N] = {
	[MC_EVENTS_INSERT] = { "events_insert", "capture",
	    "pg2osync_events_total", "type", "insert", 0,
	    "Change events read from the source, by type." },
	[MC_EVENTS_UPDATE] = { "events_update", "capture",
	    "pg2osync_events_total", "type", "update", 0, NULL },
	[MC_EVENTS_DELETE] = { "events_delete", "capture",
	    "pg2osync_events_total", "type", "delete", 0, NULL },
	[MC_EVENTS_TRUNCATE] = { "events_truncate", "capture",
	    "pg2osync_events_total", "type", "truncate", 0, NULL },
	[MC_COMMITS] = { "commits", "capture", "pg2osync_commits_total",
	    NULL, NULL, 0, "Source transactions read." },
	[MC_RECEIVED_POS] = { "received_pos", "capture",
	    "pg2osync_position_received", NULL, NULL, 1,
	    "Highest source position the capture has read." },
	[MC_CONFIRMED_POS] = { "confirmed_pos", "capture",
	    "pg2osync_position_source_confirmed", NULL, NULL, 1,
	    "Source position the capture last confirmed to the database "
	    "(never past the stored checkpoint)." },
	[MC_ROWS_IN] = { "rows_in", "shaper", "pg2osync_rows_total",
	    NULL, NULL, 0, "Row events the shaper read (stream and load)." },
	[MC_OPS_OUT] = { "ops_out", "shaper", "pg2osync_operations_total",
	    NULL, NULL, 0, "Operation frames the shaper wrote." },
	[MC_ROWS_UNMAPPED] = { "rows_unmapped", "shaper",
	    "pg2osync_rows_unmapped_total", NULL, NULL, 0,
	    "Row events of a table no sync section names." },
	[MC_DRIFT] = { "drift", "shaper", "pg2osync_schema_drift_total",
	    "table", NULL, 0,
	    "Table shape changes seen under the running pipeline." },
	[MC_COPIES_DROPPED] = { "copies_dropped", "shaper",
	    "pg2osync_load_rows_superseded_total", NULL, NULL, 0,
	    "Copied rows dropped because the change stream had deleted or "
	    "truncated them after they were read." },
	[MC_TRUNCATES_SKIPPED] = { "truncates_skipped", "shaper",
	    "pg2osync_truncates_skipped_total", "table", NULL, 0,
	    "Source TRUNCATEs not applied because the table's index is "
	    "shared with other tables; its documents stay until removed by "
	    "hand." },
	[MC_TRANSFORM_UNCONVERTED] = { "transform_unconverted", "shaper",
	    "pg2osync_transform_unconverted_total", "table", NULL, 0,
	    "Values a transform could not convert, indexed as they arrived "
	    "(a pseudonym's as a fixed marker), per table and column.",
	    "column" },
	[MC_LOOKUP_MISSES] = { "lookup_misses", "shaper",
	    "pg2osync_transform_lookup_misses_total", "table", NULL, 0,
	    "Values a lookup transform had no label for, indexed as they "
	    "arrived or as its default, per table and column.", "column" },
	[MC_DOCS_INDEXED] = { "docs_indexed", "writer",
	    "pg2osync_documents_total", "op", "index", 0,
	    "Documents written to the target, by operation." },
	[MC_DOCS_DELETED] = { "docs_deleted", "writer",
	    "pg2osync_documents_total", "op", "delete", 0, NULL },
	[MC_BATCHES] = { "batches", "writer", "pg2osync_batches_total",
	    NULL, NULL, 0, "Bulk requests the writer sent to the target." },
	[MC_BULK_BYTES] = { "bulk_bytes", "writer",
	    "pg2osync_bulk_bytes_total", NULL, NULL, 0,
	    "Bytes of bulk request bodies sent to the target." },
	[MC_SINK_ERRORS] = { "sink_errors", "writer",
	    "pg2osync_sink_errors_total", NULL, NULL, 0,
	    "Target requests or documents that failed." },
	[MC_VERSION_CONFLICTS] = { "version_conflicts", "writer",
	    "pg2osync_version_conflicts_total", NULL, NULL, 0,
	    "Writes the target skipped because it held a newer version "
	    "(replays after a restart, copies older than the stream)." },
	[MC_TOAST_COMPLETIONS] = { "toast_completions", "writer",
	    "pg2osync_toast_completions_total", NULL, NULL, 0,
	    "Unchanged out-of-line columns filled in from the stored "
	    "document." },
	[MC_TOAST_MISSING] = { "toast_missing", "writer",
	    "pg2osync_toast_missing_total", "table", NULL, 0,
	    "Documents written without their unchanged out-of-line columns "
	    "because no stored copy existed to complete them from." },
	[MC_CLEARS] = { "clears", "writer", "pg2osync_index_clears_total",
	    NULL, NULL, 0, "Indices cleared for a source TRUNCATE." },
	[MC_CASCADES] = { "cascades", "writer", "pg2osync_join_cascades_total",
	    NULL, NULL, 0, "Join parents whose deletion was carried to their "
	    "children." },
	[MC_INDICES_CREATED] = { "indices_created", "writer",
	    "pg2osync_indices_created_total", NULL, NULL, 0,
	    "Indices the writer created at their first use (templated "
	    "indices, indices with a mapping file)." },
	[MC_WRITER_HALTED] = { "halted", "writer", "pg2osync_writer_halted",
	    NULL, NULL, 1,
	    "1 while a write the target refuses (a document, an index "
	    "creation, a truncate) holds the pipeline: it is retried, and "
	    "nothing after it is acknowledged until the target accepts it." },
	[MC_DOC_REFUSALS] = { "doc_refusals", "writer",
	    "pg2osync_document_refusals_total", NULL, NULL, 0,
	    "Documents the target refused in a bulk answer (one refused "
	    "document counts at each attempt)." },
	[MC_REJECTED] = { "rejected", "writer", "pg2osync_rejected_total",
	    "table", NULL, 0,
	    "Documents the target refused that were kept aside in its rejects "
	    "store (engine.on_permanent_rejection: quarantine), per table." },
	[MC_LOAD_ROWS] = { "load_rows", "loader", "pg2osync_load_rows_total",
	    "table", NULL, 0, "Rows the initial load has read, per table." },
	[MC_LOAD_ROWS_ESTIMATE] = { "load_rows_estimate", "loader",
	    "pg2osync_load_rows_estimate", "table", NULL, 1,
	    "Rows the initial load expects to read, per table (the source's "
	    "estimate)." },
	[MC_LOAD_RANGES_DONE] = { "load_ranges_done", "loader",
	    "pg2osync_load_ranges_done", "table", NULL, 1,
	    "Ranges of the initial load read and marked, per table (the "
	    "next wave is read while a mark is stored, so the stored "
	    "progress may be one wave behind)." },
	[MC_LOAD_RANGES] = { "load_ranges", "loader", "pg2osync_load_ranges",
	    "table", NULL, 1,
	    "Ranges the initial load cut the table into, per table." },
	[MC_LOAD_WAL_PAUSED] = { "load_wal_paused", "loader",
	    "pg2osync_load_wal_paused", NULL, NULL, 1,
	    "1 while the initial load waits for the replication slot's WAL "
	    "to be reserved again." },
	[MC_SLOT_RETAINED] = { "slot_retained_bytes", "capture",
	    "pg2osync_slot_retained_bytes", "slot", NULL, 1,
	    "Bytes of WAL each logical replication slot on the source server "
	    "retains (from its restart_lsn to the WAL position now).", NULL,
	    1 },
	[MC_SLOT_SAFE_WAL] = { "slot_safe_wal_size_bytes", "capture",
	    "pg2osync_slot_safe_wal_size_bytes", "slot", NULL, 1,
	    "Bytes of WAL that can still be written before each slot would "
	    "be lost (max_slot_wal_keep_size); absent when that is "
	    "unlimited, 0 once the slot is past it.", NULL, 1 },
	[MC_SLOT_WAL_STATUS] = { "slot_wal_status", "capture",
	    "pg2osync_slot_wal_status", "slot", NULL, 1,
	    "1 for each slot's wal_status (reserved, extended, unreserved, "
	    "lost), 0 for the others.", "status", 1 },
	[MC_SLOT_ACTIVE] = { "slot_active", "capture",
	    "pg2osync_slot_active", "slot", NULL, 1,
	    "1 when a replication connection streams from the slot.", NULL,
	    1 },
	[MC_TRACE_DROPPED_CAPTURE] = { "trace_dropped_capture", "capture",
	    "pg2osync_trace_spans_dropped_total", "stage", "capture", 0,
	    "Spans a stage did not export because the collector failed or "
	    "its queue was full (traces.endpoint), per stage." },
	[MC_TRACE_DROPPED_SHAPER] = { "trace_dropped_shaper", "shaper",
	    "pg2osync_trace_spans_dropped_total", "stage", "shaper", 0,
	    NULL },
	[MC_TRACE_DROPPED_WRITER] = { "trace_dropped_writer", "writer",
	    "pg2osync_trace_spans_dropped_total", "stage", "writer", 0,
	    NULL },
	[MC_TRACE_DROPPED_SUPERVISOR] = { "trace_dropped_supervisor",
	    "supervisor", "pg2osync_trace_spans_dropped_total", "stage",
	    "supervisor", 0, NULL },
};

int
msg_counter_lookup(struct jspan name)
{
	int i;

	for (i = 0; i < MC_N; i++)
		if (jstr_eq(name, msg_counters[i].name))
			return i;
	return -1;
}

void
msg_stats_begin(struct sbuf *j, const char *tool)
{
	open_kind(j, MSG_STATS);
	member_str(j, "tool", tool, strlen(tool));
	member(j, "counters");
	sbuf_addc(j, '{');
}

void
msg_stats_end(struct sbuf *out, struct sbuf *j)
{
	sbuf_addc(j, '}');
	msg_end(out, j);
}

void
msg_stats_add(struct sbuf *j, enum msg_counter c, uint64_t v)
{
	member_u64(j, msg_counters[c].name, v);
}

void
msg_stats_keyed_begin(struct sbuf *j, enum msg_counter c)
{
	member(j, msg_counters[c].name);
	sbuf_addc(j, '{');
}

void
msg_stats_keyed_add(struct sbuf *j, const char *key, size_t n, uint64_t v)
{
	sep(j);
	sbuf_add_jstr(j, key, n);
	sbuf_addc(j, ':');
	sbuf_add_u64(j, v);
}

void
msg_stats_keyed_end(struct sbuf *j)
{
	sbuf_addc(j, '}');
}

int
msg_read_stats(const struct frame *f, struct jspan *tool,
    struct jspan *counters, char *err, size_t errlen)
{
	if (!jobj_get(f->obj, "tool", tool) || jspan_type(*tool) != J_STRING)
		return bad(err, errlen, "stats has no string \"tool\"");
	if (!jobj_get(f->obj, "counters", counters) ||
	    jspan_type(*counters) != J_OBJECT)
		return bad(err, errlen, "stats has no \"counters\" object");
	return 0;
}
