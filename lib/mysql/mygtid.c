/*
 * mygtid.c - GTID sets and the position text. A MySQL set is, per server
 * uuid, a list of half-open intervals of transaction numbers; a MariaDB
 * set is, per replication domain, the last GTID (domain-server-seq). The
 * position text "binlog.000004:1234;gtid=<set>" is what a checkpoint
 * stores and the only input this tool parses from outside the server.
 *
 * Owns the set's three spellings: text (checkpoints, SET
 * @slave_connect_state), the dump command's binary encoding, and the
 * PREVIOUS_GTIDS / GTID_LIST event bodies. Never decides when a set may
 * be written (txn.c does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mygtid.h"
#include "mybytes.h"
#include "hex.h"

void
gtid_set_init(struct gtid_set *s)
{
	memset(s, 0, sizeof(*s));
}

void
gtid_set_release(struct gtid_set *s)
{
	int i;

	for (i = 0; i < s->nsid; i++)
		free(s->sid[i].iv);
	free(s->sid);
	free(s->dom);
	memset(s, 0, sizeof(*s));
}

void
gtid_set_copy(struct gtid_set *dst, const struct gtid_set *src)
{
	int i;

	gtid_set_release(dst);
	dst->flavor = src->flavor;
	if (src->nsid > 0) {
		dst->sid = xcalloc(src->nsid, sizeof(*dst->sid));
		dst->nsid = dst->capsid = src->nsid;
		for (i = 0; i < src->nsid; i++) {
			dst->sid[i] = src->sid[i];
			dst->sid[i].capiv = src->sid[i].niv;
			dst->sid[i].iv = xcalloc(src->sid[i].niv ?
			    src->sid[i].niv : 1, sizeof(struct gtid_iv));
			memcpy(dst->sid[i].iv, src->sid[i].iv,
			    src->sid[i].niv * sizeof(struct gtid_iv));
		}
	}
	if (src->ndom > 0) {
		dst->dom = xcalloc(src->ndom, sizeof(*dst->dom));
		dst->ndom = dst->capdom = src->ndom;
		memcpy(dst->dom, src->dom, src->ndom * sizeof(*dst->dom));
	}
}

int
gtid_set_empty(const struct gtid_set *s)
{
	return s->nsid == 0 && s->ndom == 0;
}

static struct gtid_sid *
sid_get(struct gtid_set *s, const unsigned char uuid[16])
{
	int i, c;

	s->flavor = GTID_MYSQL;
	for (i = 0; i < s->nsid; i++) {
		c = memcmp(s->sid[i].uuid, uuid, 16);
		if (c == 0)
			return &s->sid[i];
		if (c > 0)
			break;
	}
	if (s->nsid == s->capsid) {
		s->capsid = s->capsid ? s->capsid * 2 : 4;
		s->sid = xrealloc(s->sid, s->capsid * sizeof(*s->sid));
	}
	memmove(&s->sid[i + 1], &s->sid[i], (s->nsid - i) * sizeof(*s->sid));
	memset(&s->sid[i], 0, sizeof(s->sid[i]));
	memcpy(s->sid[i].uuid, uuid, 16);
	s->nsid++;
	return &s->sid[i];
}

void
gtid_set_add_range(struct gtid_set *s, const unsigned char uuid[16],
    uint64_t start, uint64_t end)
{
	struct gtid_sid *d;
	int i, j;

	if (start >= end)
		return;
	d = sid_get(s, uuid);
	/* the first interval that ends at or after start */
	for (i = 0; i < d->niv && d->iv[i].end < start; i++)
		;
	/* every interval from i that touches [start, end) merges */
	for (j = i; j < d->niv && d->iv[j].start <= end; j++) {
		if (d->iv[j].start < start)
			start = d->iv[j].start;
		if (d->iv[j].end > end)
			end = d->iv[j].end;
	}
	if (j == i) {
		if (d->niv == d->capiv) {
			d->capiv = d->capiv ? d->capiv * 2 : 4;
			d->iv = xrealloc(d->iv, d->capiv * sizeof(*d->iv));
		}
		memmove(&d->iv[i + 1], &d->iv[i], (d->niv - i) *
		    sizeof(*d->iv));
		d->niv++;
	} else if (j > i + 1) {
		memmove(&d->iv[i + 1], &d->iv[j], (d->niv - j) *
		    sizeof(*d->iv));
		d->niv -= j - i - 1;
	}
	d->iv[i].start = start;
	d->iv[i].end = end;
}

void
gtid_set_add(struct gtid_set *s, const unsigned char uuid[16], uint64_t gno)
{
	if (gno == 0 || gno == UINT64_MAX)
		return;
	gtid_set_add_range(s, uuid, gno, gno + 1);
}

void
gtid_set_add_mdb(struct gtid_set *s, uint32_t domain, uint32_t server,
    uint64_t seq)
{
	int i;

	s->flavor = GTID_MARIADB;
	for (i = 0; i < s->ndom && s->dom[i].domain < domain; i++)
		;
	if (i < s->ndom && s->dom[i].domain == domain) {
		if (seq >= s->dom[i].seq) {
			s->dom[i].seq = seq;
			s->dom[i].server = server;
		}
		return;
	}
	if (s->ndom == s->capdom) {
		s->capdom = s->capdom ? s->capdom * 2 : 4;
		s->dom = xrealloc(s->dom, s->capdom * sizeof(*s->dom));
	}
	memmove(&s->dom[i + 1], &s->dom[i], (s->ndom - i) * sizeof(*s->dom));
	s->dom[i].domain = domain;
	s->dom[i].server = server;
	s->dom[i].seq = seq;
	s->ndom++;
}

void
uuid_format(const unsigned char u[16], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	int i, o = 0;

	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[u[i] >> 4];
		out[o++] = hex[u[i] & 15];
	}
	out[o] = '\0';
}

int
uuid_parse(const char *s, size_t n, unsigned char u[16])
{
	size_t i, k = 0;
	int hi, lo;

	if (n != 36)
		return -1;
	for (i = 0; i < n;) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i++] != '-')
				return -1;
			continue;
		}
		hi = hex_value(s[i]);
		lo = hex_value(s[i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		u[k++] = (unsigned char)(hi << 4 | lo);
		i += 2;
	}
	return k == 16 ? 0 : -1;
}

void
gtid_set_format(const struct gtid_set *s, struct sbuf *out)
{
	char u[37];
	int i, k;

	sbuf_grow(out, 1);
	for (i = 0; i < s->nsid; i++) {
		if (i > 0)
			sbuf_addc(out, ',');
		uuid_format(s->sid[i].uuid, u);
		sbuf_adds(out, u);
		for (k = 0; k < s->sid[i].niv; k++) {
			const struct gtid_iv *v = &s->sid[i].iv[k];

			if (v->end - v->start == 1)
				sbuf_addf(out, ":%llu",
				    (unsigned long long)v->start);
			else
				sbuf_addf(out, ":%llu-%llu",
				    (unsigned long long)v->start,
				    (unsigned long long)(v->end - 1));
		}
	}
	for (i = 0; i < s->ndom; i++)
		sbuf_addf(out, "%s%u-%u-%llu", i ? "," : "", s->dom[i].domain,
		    s->dom[i].server, (unsigned long long)s->dom[i].seq);
}

/* a decimal number of s[*i..n), at most max; -1 none */
static int
num(const char *s, size_t n, size_t *i, uint64_t max, uint64_t *v)
{
	size_t start = *i;

	*v = 0;
	while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
		if (*v > (max - (uint64_t)(s[*i] - '0')) / 10)
			return -1;
		*v = *v * 10 + (uint64_t)(s[(*i)++] - '0');
	}
	return *i > start ? 0 : -1;
}

int
gtid_set_parse(struct gtid_set *s, const char *t, size_t n)
{
	size_t i = 0, e;
	uint64_t a, b, c;
	unsigned char u[16];

	gtid_set_release(s);
	while (i < n) {
		while (i < n && (t[i] == ' ' || t[i] == '\n'))
			i++;
		for (e = i; e < n && t[e] != ','; e++)
			;
		if (e == i)
			goto bad;
		if (e - i > 36 && t[i + 36] == ':') {
			if (s->flavor == GTID_MARIADB ||
			    uuid_parse(t + i, 36, u) == -1)
				goto bad;
			i += 36;
			while (i < e) {
				if (t[i++] != ':' ||
				    num(t, e, &i, UINT64_MAX - 1, &a) == -1 ||
				    a == 0)
					goto bad;
				b = a;
				if (i < e && t[i] == '-') {
					i++;
					if (num(t, e, &i, UINT64_MAX - 1,
					    &b) == -1 || b < a)
						goto bad;
				}
				gtid_set_add_range(s, u, a, b + 1);
			}
		} else {
			if (s->flavor == GTID_MYSQL ||
			    num(t, e, &i, UINT32_MAX, &a) == -1 ||
			    i >= e || t[i++] != '-' ||
			    num(t, e, &i, UINT32_MAX, &b) == -1 ||
			    i >= e || t[i++] != '-' ||
			    num(t, e, &i, UINT64_MAX, &c) == -1 || i != e)
				goto bad;
			gtid_set_add_mdb(s, (uint32_t)a, (uint32_t)b, c);
		}
		i = e + (e < n);
		if (e < n && i == n)
			goto bad;	/* a trailing comma */
	}
	return 0;
bad:
	gtid_set_release(s);
	return -1;
}

static void
put_le(struct sbuf *out, uint64_t v, int n)
{
	while (n-- > 0) {
		sbuf_addc(out, (char)(v & 0xff));
		v >>= 8;
	}
}

void
gtid_set_encode(const struct gtid_set *s, struct sbuf *out)
{
	int i, k;

	put_le(out, (uint64_t)s->nsid, 8);
	for (i = 0; i < s->nsid; i++) {
		sbuf_add(out, s->sid[i].uuid, 16);
		put_le(out, (uint64_t)s->sid[i].niv, 8);
		for (k = 0; k < s->sid[i].niv; k++) {
			put_le(out, s->sid[i].iv[k].start, 8);
			put_le(out, s->sid[i].iv[k].end, 8);
		}
	}
}

/* the tagged encoding's tag length: MySQL's serialization varint */
static int
tag_len(struct bcur *c, uint64_t *len)
{
	const unsigned char *p = bcur_take(c, 1);

	if (p == NULL)
		return -1;
	if ((p[0] & 1) == 0) {
		*len = p[0] >> 1;
		return 0;
	}
	if ((p[0] & 3) == 1) {
		const unsigned char *q = bcur_take(c, 1);

		if (q == NULL)
			return -1;
		*len = (uint64_t)(p[0] | q[0] << 8) >> 2;
		return 0;
	}
	return -1;
}

/* walk a PREVIOUS_GTIDS body; per sid the callback gets its tag */
static int
prev_walk(const unsigned char *body, size_t len,
    void (*each)(void *, const unsigned char *, const char *, size_t,
    uint64_t, uint64_t), void *arg, int *tagged)
{
	struct bcur c;
	uint64_t nsid, i, niv, k, tl, a, b;
	const unsigned char *u, *tag;

	bcur_init(&c, body, len);
	if (len < 8)
		return -1;
	*tagged = body[7] != 0;
	if (*tagged) {
		if (body[0] != 1)
			return -1;
		bcur_take(&c, 1);
		nsid = bcur_le(&c, 6);
		bcur_take(&c, 1);
	} else
		nsid = bcur_le(&c, 8);
	if (nsid > len / 24)
		return -1;
	for (i = 0; i < nsid; i++) {
		u = bcur_take(&c, 16);
		tag = NULL;
		tl = 0;
		if (*tagged) {
			if (tag_len(&c, &tl) == -1 || tl > 32)
				return -1;
			tag = bcur_take(&c, tl);
		}
		niv = bcur_le(&c, 8);
		if (c.bad || niv > bcur_left(&c) / 16)
			return -1;
		for (k = 0; k < niv; k++) {
			a = bcur_le(&c, 8);
			b = bcur_le(&c, 8);
			if (a == 0 || b <= a)
				return -1;
			each(arg, u, (const char *)tag, tl, a, b);
		}
	}
	return c.bad || bcur_left(&c) != 0 ? -1 : 0;
}

static void
prev_add(void *arg, const unsigned char *u, const char *tag, size_t tl,
    uint64_t a, uint64_t b)
{
	(void)tag;
	if (tl == 0)
		gtid_set_add_range(arg, u, a, b);
}

int
gtid_prev_parse(struct gtid_set *s, const unsigned char *body, size_t len)
{
	struct gtid_set t;
	int tagged;

	gtid_set_init(&t);
	t.flavor = GTID_MYSQL;
	if (prev_walk(body, len, prev_add, &t, &tagged) == -1) {
		gtid_set_release(&t);
		return -1;
	}
	gtid_set_release(s);
	*s = t;
	return tagged;
}

struct prev_text {
	struct sbuf *out;
	unsigned char last[16];
	char	 tag[33];
	int	 any;
};

static void
prev_text_add(void *arg, const unsigned char *u, const char *tag, size_t tl,
    uint64_t a, uint64_t b)
{
	struct prev_text *pt = arg;
	char us[37];

	if (!pt->any || memcmp(pt->last, u, 16) != 0) {
		if (pt->any)
			sbuf_addc(pt->out, ',');
		uuid_format(u, us);
		sbuf_adds(pt->out, us);
		memcpy(pt->last, u, 16);
		pt->tag[0] = '\0';
	}
	if (tl != strlen(pt->tag) || memcmp(pt->tag, tag, tl) != 0) {
		sbuf_addc(pt->out, ':');
		sbuf_add(pt->out, tag, tl);
		memcpy(pt->tag, tag, tl);
		pt->tag[tl] = '\0';
	}
	pt->any = 1;
	if (b - a == 1)
		sbuf_addf(pt->out, ":%llu", (unsigned long long)a);
	else
		sbuf_addf(pt->out, ":%llu-%llu", (unsigned long long)a,
		    (unsigned long long)(b - 1));
}

int
gtid_prev_format(const unsigned char *body, size_t len, struct sbuf *out)
{
	struct prev_text pt;
	size_t start = out->len;
	int tagged;

	memset(&pt, 0, sizeof(pt));
	pt.out = out;
	sbuf_grow(out, 1);
	if (prev_walk(body, len, prev_text_add, &pt, &tagged) == -1) {
		out->len = start;
		out->buf[start] = '\0';
		return -1;
	}
	return 0;
}

int
gtid_list_parse(struct gtid_set *s, const unsigned char *body, size_t len)
{
	uint32_t count, i;

	if (len < 4)
		return -1;
	count = le32(body) & 0x0fffffff;
	/* MariaDB 10.11 writes bytes after the list; they are skipped */
	if (count > (len - 4) / 16)
		return -1;
	gtid_set_release(s);
	s->flavor = GTID_MARIADB;
	for (i = 0; i < count; i++) {
		const unsigned char *e = body + 4 + (size_t)i * 16;

		gtid_set_add_mdb(s, le32(e), le32(e + 4), le64(e + 8));
	}
	return 0;
}

long long
binlog_file_index(const char *name, size_t n)
{
	size_t i = n;
	long long v = 0;

	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	if (i == n || i == 0 || name[i - 1] != '.' || n - i > 9)
		return -1;
	for (; i < n; i++)
		v = v * 10 + (name[i] - '0');
	return v;
}

uint64_t
mypos_coord(uint64_t file_index, uint32_t offset)
{
	return file_index << 32 | offset;
}

int
mypos_parse(struct mypos *p, const char *text, char *err, size_t errlen)
{
	const char *g = strstr(text, ";gtid="), *colon = NULL, *s;
	size_t flen;
	uint64_t off;
	size_t i;

	memset(p, 0, sizeof(*p));
	gtid_set_init(&p->gtid);
	for (s = text; *s && (g == NULL || s < g); s++)
		if (*s == ':')
			colon = s;
	if (colon == NULL || colon == text)
		goto bad;
	flen = (size_t)(colon - text);
	if (flen >= sizeof(p->file) ||
	    binlog_file_index(text, flen) < 0)
		goto bad;
	memcpy(p->file, text, flen);
	p->file[flen] = '\0';
	i = 0;
	s = colon + 1;
	if (num(s, g ? (size_t)(g - s) : strlen(s), &i, UINT32_MAX, &off) ==
	    -1 || s[i] != (g ? ';' : '\0') || off < 4)
		goto bad;
	p->offset = (uint32_t)off;
	if (g != NULL) {
		g += 6;
		if (*g == '\0' || gtid_set_parse(&p->gtid, g, strlen(g)) == -1)
			goto bad;
		p->has_gtid = 1;
	}
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not a position this tool wrote "
	    "(binlog.000004:1234 or binlog.000004:1234;gtid=<set>)", text);
	return -1;
}

void
mypos_release(struct mypos *p)
{
	gtid_set_release(&p->gtid);
}
