/*
 * target.c - the table of target modules and what every module shares:
 * finding one by name, its capabilities, a blocking connection for the
 * state and administration operations, the buffers of a barrier
 * procedure, and the one blocking write of documents the operator's
 * commands use (target_batch, target_write_all), through the bulk
 * request or the write procedure as the module has one; and the readings
 * of an answer the modules share (its status's class, its body as one
 * JSON object). Knows no
 * engine's protocol: that is each module's (lib/target/). Never exits
 * and never quotes a credential.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "p2o.h"
#include "target.h"
#include "xio.h"

/* a retry's wait doubles up to this */
#define BACKOFF_MAX_MS	30000

extern const struct target_module target_opensearch;
extern const struct target_module target_elasticsearch;
extern const struct target_module target_meilisearch;
extern const struct target_module target_qdrant;
extern const struct target_module target_postgres;

/* the first is the default */
static const struct target_module *const modules[] = {
	&target_opensearch,
	&target_elasticsearch,
	&target_meilisearch,
	&target_qdrant,
	&target_postgres,
};

static const struct {
	unsigned cap;
	const char *name;
} cap_names[] = {
	{ TCAP_EXTERNAL_VERSIONS, "external versions" },
	{ TCAP_CONCURRENT_WRITES, "concurrent writes" },
	{ TCAP_ROUTING, "routing" },
	{ TCAP_JOIN, "join" },
	{ TCAP_PIPELINES, "ingest pipelines" },
	{ TCAP_MAPPINGS, "mappings" },
	{ TCAP_ASYNC_TASKS, "asynchronous tasks" },
	{ TCAP_STATE_DOCS, "state documents" },
	{ TCAP_ALIASES, "aliases" },
	{ TCAP_INDEX_SWAP, "index swaps" },
	{ TCAP_COMPLETE_DOCS, "completing a document from its stored copy" },
	{ TCAP_NODES, "several nodes" },
};

const struct target_module *
target_module_find(const char *name)
{
	size_t i;

	if (name == NULL)
		return modules[0];
	for (i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
		if (strcmp(modules[i]->name, name) == 0)
			return modules[i];
	return NULL;
}

int
target_can(const struct target_module *m, unsigned caps)
{
	return (m->caps & caps) == caps;
}

const char *
target_cap_name(unsigned cap)
{
	size_t i;

	for (i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		if (cap_names[i].cap == cap)
			return cap_names[i].name;
	return "";
}

void
target_http_opts(const struct config *cf, struct http_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->username = cf->target_username;
	o->password = cf->target_password;
	o->api_key = cf->target_api_key;
	o->api_key_scheme = cf->target_module ?
	    cf->target_module->api_key_scheme : NULL;
	o->ca_file = cf->target_ca_file;
	o->no_verify = !cf->target_tls_verify;
	o->local = cf->target_module ? cf->target_module->transport : NULL;
}

int
target_conn_open(struct target_conn *c, const struct config *cf,
    struct p2o_err *err)
{
	const char *const *urls;
	struct http_opts o;
	int n;

	memset(c, 0, sizeof(*c));
	c->mod = cf->target_module ? cf->target_module :
	    target_module_find(NULL);
	urls = config_target_urls(cf, &n);
	if (n == 0)
		return p2o_fail(err, P2O_EXIT_CONFIG, "%s: target.url: missing",
		    cf->path);
	c->state_dir = cf->target_state_dir;
	target_http_opts(cf, &o);
	if (http_init(&c->http, urls, n, &o) == -1)
		return p2o_fail(err, P2O_EXIT_CONFIG, "target: %s",
		    c->http.err);
	return 0;
}

void
target_conn_release(struct target_conn *c)
{
	http_release(&c->http);
	memset(c, 0, sizeof(*c));
}

int
target_request(struct target_conn *c, const struct http_call *call,
    struct sbuf *resp, long *status, struct p2o_err *err)
{
	sbuf_reset(resp);
	if (http_call_do(&c->http, call, resp, status) == -1)
		return p2o_fail(err, c->http.tls_failed ? P2O_EXIT_REFUSED :
		    P2O_EXIT_TEMPFAIL, "%s", c->http.err);
	return 0;
}

int
target_identify(const struct config *cf, const struct target_module **found,
    char *node, size_t nodelen, char *why, size_t whylen,
    struct p2o_err *err)
{
	struct target_conn c;
	struct http_call call;
	struct sbuf resp = SBUF_INIT;
	enum target_answer a;
	char w[512];
	long status;
	size_t i;
	int rc = -1, auth = 0;

	*found = NULL;
	snprintf(why, whylen, "no engine this program writes to answered as "
	    "itself");
	if (target_conn_open(&c, cf, err) == -1)
		return -1;
	/* each module asks its own question: the answer a node gives to
	 * another engine's question is refused by that module's reading */
	for (i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
		/* a target that is no HTTP server never answers over it */
		if (modules[i]->transport != NULL)
			continue;
		memset(&call, 0, sizeof(call));
		modules[i]->ops->probe_call(&call);
		if (target_request(&c, &call, &resp, &status, err) == -1)
			goto out;
		a = modules[i]->ops->probe_answer(status, &resp, node, nodelen,
		    w, sizeof(w));
		if (a == TA_OK) {
			*found = modules[i];
			break;
		}
		auth |= a == TA_AUTH;
	}
	if (*found == NULL && auth)
		snprintf(why, whylen, "the node asks for credentials before it "
		    "says what it is");
	rc = 0;
out:
	sbuf_release(&resp);
	target_conn_release(&c);
	return rc;
}

void
target_proc_init(struct target_proc *p)
{
	memset(p, 0, sizeof(*p));
	sbuf_init(&p->path);
	sbuf_init(&p->body);
	sbuf_init(&p->query);
	sbuf_init(&p->scroll);
	sbuf_init(&p->plan);
}

void
target_proc_reset(struct target_proc *p)
{
	p->kind = 0;
	p->index = p->parent = NULL;
	p->field.p = p->value.p = p->children.p = p->parent_id.p = NULL;
	p->field.n = p->value.n = p->children.n = p->parent_id.n = 0;
	p->gone = 0;
	p->version = 0;
	p->step = 0;
	p->npage = 0;
	p->task = 0;
	p->task_open = 0;
	p->at = p->next_at = 0;
	p->done = 0;
	p->poll_ms = 0;
	p->sent_all = 0;
	p->page_done = 0;
	p->page_bytes = 0;
	p->deleted = p->newer = 0;
	/* a procedure's verdicts are its own: none carries over */
	free(p->items);
	p->items = NULL;
	sbuf_reset(&p->path);
	sbuf_reset(&p->body);
	sbuf_reset(&p->query);
	sbuf_reset(&p->scroll);
	sbuf_reset(&p->plan);
}

void
target_proc_release(struct target_proc *p)
{
	sbuf_release(&p->path);
	sbuf_release(&p->body);
	sbuf_release(&p->query);
	sbuf_release(&p->scroll);
	sbuf_release(&p->plan);
	free(p->items);
	memset(p, 0, sizeof(*p));
}

void
target_rejects_release(struct target_rejects *set)
{
	int i;

	for (i = 0; i < set->nmem; i++)
		free(set->mem[i]);
	free(set->mem);
	free(set->r);
	free(set->key);
	memset(set, 0, sizeof(*set));
}

char *
target_rejects_keep(struct target_rejects *set, char *p)
{
	if (set->nmem == set->capmem) {
		set->capmem = set->capmem ? set->capmem * 2 : 16;
		set->mem = xrealloc(set->mem, (size_t)set->capmem *
		    sizeof(*set->mem));
	}
	set->mem[set->nmem++] = p;
	return p;
}

const char *
target_rejects_str(struct target_rejects *set, struct jspan obj,
    const char *name)
{
	struct jspan v;

	if (!jobj_get(obj, name, &v) || jspan_type(v) != J_STRING)
		return NULL;
	return target_rejects_keep(set, jstr_dup(v));
}

static struct jspan
member(struct jspan obj, const char *name)
{
	struct jspan v = { NULL, 0 };

	if (!jobj_get(obj, name, &v) || jspan_type(v) == J_NULL)
		v.p = NULL, v.n = 0;
	return v;
}

struct target_reject *
target_rejects_add(struct target_rejects *set, struct jspan src,
    const char *key)
{
	struct target_reject *r;
	struct jspan v;
	const char *op;

	if (jspan_type(src) != J_OBJECT ||
	    (op = target_rejects_str(set, src, "op")) == NULL)
		return NULL;
	if (set->n == set->cap) {
		set->cap = set->cap ? set->cap * 2 : 64;
		set->r = xrealloc(set->r, (size_t)set->cap * sizeof(*set->r));
		set->key = xrealloc(set->key, (size_t)set->cap *
		    sizeof(*set->key));
	}
	r = &set->r[set->n];
	memset(r, 0, sizeof(*r));
	r->del = strcmp(op, "delete") == 0;
	r->index = member(src, "index");
	r->id = member(src, "id");
	r->routing = member(src, "routing");
	r->pipeline = member(src, "pipeline");
	r->doc = member(src, "doc");
	if (r->index.p == NULL || jspan_type(r->index) != J_STRING ||
	    r->id.p == NULL || jspan_type(r->id) != J_STRING ||
	    (!r->del && (r->doc.p == NULL || jspan_type(r->doc) != J_OBJECT)) ||
	    !jobj_get(src, "version", &v) || jnum_u64(v, &r->version) == -1)
		return NULL;
	r->position = target_rejects_str(set, src, "position");
	r->table = target_rejects_str(set, src, "table");
	r->reason = target_rejects_str(set, src, "reason");
	set->key[set->n++] = (char *)key;
	return r;
}

static void
add_str(struct sbuf *b, const char *name, const char *s)
{
	if (s == NULL)
		return;
	sbuf_addf(b, ",\"%s\":", name);
	sbuf_add_jstr(b, s, strlen(s));
}

static void
add_raw(struct sbuf *b, const char *name, struct jspan v)
{
	if (v.p == NULL)
		return;
	sbuf_addf(b, ",\"%s\":", name);
	sbuf_add(b, v.p, v.n);
}

void
target_reject_put(struct sbuf *b, const struct target_reject *r,
    const char *nostream)
{
	add_raw(b, "index", r->index);
	add_raw(b, "id", r->id);
	add_raw(b, "routing", r->routing);
	add_raw(b, "pipeline", r->pipeline);
	sbuf_adds(b, ",\"version\":");
	sbuf_add_u64(b, r->version);
	add_str(b, "stream", r->stream ? r->stream : nostream);
	add_str(b, "position", r->position);
	add_str(b, "table", r->table);
	add_str(b, "reason", r->reason ? r->reason : "");
	if (!r->del)
		add_raw(b, "doc", r->doc);
	sbuf_adds(b, "}\n");
}

long long
target_backoff(long long *cur_ms, long long first_ms)
{
	long long d;

	if (*cur_ms <= 0)
		*cur_ms = first_ms > 0 ? first_ms : 100;
	else if (*cur_ms < BACKOFF_MAX_MS)
		*cur_ms = *cur_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
		    *cur_ms * 2;
	d = *cur_ms;
	/* jitter: somewhere in the upper half, so that retries (of
	 * restarted writers, of commands) do not align */
	return d / 2 + random() % (d / 2 + 1);
}

void
target_batch_init(struct target_batch *b, const struct target_module *mod,
    const struct target_write *w, int n, struct item_result *items)
{
	int chunk = n < TARGET_WRITE_CHUNK ? n : TARGET_WRITE_CHUNK;

	memset(b, 0, sizeof(*b));
	b->mod = mod;
	b->w = w;
	b->n = n;
	b->items = items;
	b->final = xcalloc(n > 0 ? (size_t)n : 1, 1);
	b->sent = xcalloc(chunk > 0 ? (size_t)chunk : 1, sizeof(*b->sent));
	b->got = xcalloc(chunk > 0 ? (size_t)chunk : 1, sizeof(*b->got));
	sbuf_init(&b->body);
	target_proc_init(&b->proc);
	if (n > 0)
		memset(items, 0, (size_t)n * sizeof(*items));
}

void
target_batch_release(struct target_batch *b)
{
	free(b->final);
	free(b->sent);
	free(b->got);
	sbuf_release(&b->body);
	target_proc_release(&b->proc);
	memset(b, 0, sizeof(*b));
}

int
target_batch_next(struct target_batch *b, struct http_call *call,
    struct p2o_err *err)
{
	const struct target_ops *ops = b->mod->ops;
	struct target_entry te;
	int i;

	b->wait_ms = 0;
	b->item_retry = 0;
	if (b->tasking) {
		/* a procedure goes on where it stands, over the same body */
		ops->write_call(&b->proc, b->body.buf, b->body.len, call);
		return 1;
	}
	if (ops->write_call == NULL && ops->bulk_call == NULL)
		return p2o_fail(err, P2O_EXIT_CONFIG, "target '%s' has no "
		    "request that writes documents", b->mod->name);
	sbuf_reset(&b->body);
	b->nsent = 0;
	for (i = 0; i < b->n && b->nsent < TARGET_WRITE_CHUNK; i++) {
		if (b->final[i])
			continue;
		if (ops->encode(&b->body, &b->w[i], &te, err) == -1)
			return -1;
		b->sent[b->nsent++] = i;
	}
	if (b->nsent == 0)
		return 0;
	memset(b->got, 0, (size_t)b->nsent * sizeof(*b->got));
	if (ops->write_call != NULL) {
		target_proc_reset(&b->proc);
		b->tasking = 1;
		ops->write_call(&b->proc, b->body.buf, b->body.len, call);
		return 1;
	}
	ops->bulk_call(b->body.buf, b->body.len, call);
	return 1;
}

static int
same_span(struct jspan a, struct jspan b)
{
	if (a.p == NULL || b.p == NULL)
		return a.p == b.p;
	return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

/* a later write of the same document (index, id, routing) in the set is
 * settled: sending write i again could put back an older state on a
 * target that keeps no versions */
static int
superseded(const struct target_batch *b, int i)
{
	const struct target_write *w = &b->w[i], *l;
	int j;

	for (j = b->n - 1; j > i; j--) {
		l = &b->w[j];
		if (!b->final[j] || (b->items[j].verdict != ITEM_OK &&
		    b->items[j].verdict != ITEM_CONFLICT &&
		    b->items[j].verdict != ITEM_NOTFOUND))
			continue;
		if (same_span(w->index, l->index) && same_span(w->id, l->id) &&
		    same_span(w->routing, l->routing))
			return 1;
	}
	return 0;
}

enum target_answer
target_batch_answer(struct target_batch *b, long status,
    const struct sbuf *resp, char *why, size_t whylen)
{
	const struct target_ops *ops = b->mod->ops;
	const struct item_result *it;
	enum target_answer a;
	int i, k, nretry = 0, first = 0;

	b->wait_ms = 0;
	b->item_retry = 0;
	if (b->tasking) {
		a = ops->write_answer(&b->proc, status, resp, b->body.buf,
		    b->body.len, b->nsent, b->got, why, whylen);
		if (a == TA_NEXT) {
			b->wait_ms = b->proc.poll_ms;
			return TA_NEXT;
		}
		/* a failed request is asked again where the procedure
		 * stands; an ended one is read, and what is left starts a
		 * procedure afresh */
		if (a != TA_OK)
			return a;
		b->tasking = 0;
	} else if ((a = ops->bulk_answer(status, resp->buf, resp->len,
	    b->nsent, b->got, why, whylen)) != TA_OK)
		return a;
	for (k = 0; k < b->nsent; k++) {
		i = b->sent[k];
		b->items[i] = b->got[k];
		if (b->got[k].verdict != ITEM_RETRY)
			b->final[i] = 1;
	}
	for (k = 0; k < b->nsent; k++) {
		i = b->sent[k];
		if (b->final[i])
			continue;
		if (superseded(b, i)) {
			b->items[i].verdict = ITEM_CONFLICT;
			snprintf(b->items[i].type, sizeof(b->items[i].type),
			    "superseded");
			snprintf(b->items[i].reason,
			    sizeof(b->items[i].reason), "a later write of the "
			    "same document was taken");
			b->final[i] = 1;
			continue;
		}
		if (nretry++ == 0)
			first = k;
	}
	if (nretry == 0)
		return TA_OK;
	it = &b->got[first];
	b->item_retry = 1;
	snprintf(why, whylen, "%d of %d writes not accepted yet (HTTP %d): "
	    "%s: %s", nretry, b->nsent, it->status, it->type[0] ? it->type :
	    "error", it->reason);
	return TA_RETRY;
}

void
target_batch_give_up(struct target_batch *b)
{
	int k;

	for (k = 0; k < b->nsent; k++)
		b->final[b->sent[k]] = 1;
}

static void
nap(long long ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

static int
limit_reached(const struct target_retry *lim, int attempts, long long spent)
{
	return (lim->max > 0 && attempts >= lim->max) ||
	    (lim->max_elapsed_ms > 0 && spent >= lim->max_elapsed_ms);
}

int
target_write_all(struct target_conn *c, const struct target_write *w, int n,
    struct item_result *items, const struct target_retry *lim,
    uint64_t *requests, struct p2o_err *err)
{
	struct target_batch b;
	struct http_call call;
	struct sbuf resp = SBUF_INIT;
	enum target_answer a;
	char why[P2O_ERR_MAX];
	long long cur = 0, since = 0, now, wait;
	long status;
	int attempts = 0, r, rc = -1;

	target_batch_init(&b, c->mod, w, n, items);
	for (;;) {
		if ((r = target_batch_next(&b, &call, err)) <= 0) {
			rc = r;
			break;
		}
		if (requests != NULL)
			(*requests)++;
		status = 0;
		if (target_request(c, &call, &resp, &status, err) == -1) {
			/* unreachable is transient; a certificate is not */
			if (err->code != P2O_EXIT_TEMPFAIL)
				break;
			snprintf(why, sizeof(why), "%s", err->msg);
			a = TA_RETRY;
		} else {
			sbuf_grow(&resp, 1);
			a = target_batch_answer(&b, status, &resp, why,
			    sizeof(why));
		}
		if (a == TA_OK || a == TA_NEXT || a == TA_EXISTS) {
			attempts = 0;
			cur = 0;
			nap(b.wait_ms);
			continue;
		}
		if (a == TA_AUTH) {
			p2o_fail(err, P2O_EXIT_AUTH, "target refused our "
			    "credentials (HTTP %ld): %s", status, why);
			break;
		}
		if (a == TA_REFUSED) {
			p2o_fail(err, P2O_EXIT_REFUSED, "the target refused a "
			    "write request (HTTP %ld): %s", status, why);
			break;
		}
		now = now_ms();
		if (attempts++ == 0)
			since = now;
		if (limit_reached(lim, attempts, now - since)) {
			if (b.item_retry) {
				/* those writes keep their verdict; the
				 * others are still owed theirs */
				target_batch_give_up(&b);
				attempts = 0;
				cur = 0;
				continue;
			}
			p2o_fail(err, P2O_EXIT_TEMPFAIL, "giving up on a write "
			    "request after %d attempt%s in %lld ms: %s",
			    attempts, attempts == 1 ? "" : "s", now - since,
			    why);
			break;
		}
		wait = target_backoff(&cur, lim->first_ms);
		/* never past the time limit by a whole backoff */
		if (lim->max_elapsed_ms > 0 &&
		    since + lim->max_elapsed_ms - now < wait)
			wait = since + lim->max_elapsed_ms - now;
		nap(wait);
	}
	/* a failure retried past leaves no word behind */
	if (rc == 0)
		p2o_err_clear(err);
	target_batch_release(&b);
	sbuf_release(&resp);
	return rc;
}

enum target_answer
target_status_class(long status)
{
	if (status >= 200 && status < 300)
		return TA_OK;
	if (status == 401 || status == 403)
		return TA_AUTH;
	if (status == 429 || status >= 500 || status < 100 || status == 408)
		return TA_RETRY;
	return TA_REFUSED;
}

void
target_span_add(struct sbuf *out, struct jspan s, struct aspan *at)
{
	at->off = out->len;
	at->len = s.n;
	sbuf_add(out, s.p, s.n);
}

static int
is_space(char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

int
target_body_object(const char *body, size_t len, struct jspan *obj)
{
	const char *why;
	size_t off;

	if (body == NULL)
		return -1;
	/* jscan spans exclude surrounding white space */
	while (len && is_space(*body))
		body++, len--;
	while (len && is_space(body[len - 1]))
		len--;
	if (len == 0 || jscan_validate(body, len, &off, &why) == -1)
		return -1;
	obj->p = body;
	obj->n = len;
	return jspan_type(*obj) == J_OBJECT ? 0 : -1;
}

void
target_copy_cut(struct jspan s, char *buf, size_t cap)
{
	if (jspan_type(s) == J_STRING && jstr_copy(s, buf, cap) == 0)
		return;
	snprintf(buf, cap, "%.*s", (int)(s.n < cap ? s.n : cap - 1), s.p);
}

enum target_answer
target_node_major(struct jspan v, int major, const char *flavor,
    const char *product, char *node, size_t nodelen, char *why,
    size_t whylen)
{
	char num[32] = "";
	int got = -1;

	target_copy_cut(v, num, sizeof(num));
	if (num[0] >= '0' && num[0] <= '9')
		sscanf(num, "%d", &got);
	if (got != major) {
		snprintf(why, whylen, "target.flavor is %s but the node runs "
		    "%s %s; supported: %d.x", flavor, product, num, major);
		return TA_REFUSED;
	}
	snprintf(node, nodelen, "%s %s", flavor, num);
	return TA_OK;
}

int
target_name_chars(const char *text, enum target_name_part part, size_t max,
    const char *punct, const char *what, char *why, size_t whylen)
{
	char set[80];
	size_t n = strlen(text);

	if (part == TNAME_WHOLE && n == 0) {
		snprintf(why, whylen, "must not be empty");
		return -1;
	}
	if (n > max) {
		snprintf(why, whylen, "must be at most %zu bytes", max);
		return -1;
	}
	snprintf(set, sizeof(set), "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789%s", punct);
	if (strspn(text, set) != n) {
		snprintf(why, whylen, "must hold only letters, digits, %s",
		    what);
		return -1;
	}
	return 0;
}
