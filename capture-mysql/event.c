/*
 * event.c - the binlog's event envelope and its fixed-layout events: the
 * 19-byte header, the CRC32 trailer, FORMAT_DESCRIPTION, ROTATE, QUERY,
 * the GTID events of both servers, TRANSACTION_PAYLOAD (zstd) and
 * MariaDB's compressed QUERY and rows events (zlib).
 *
 * Every function reads a buffer it is given and checks each length
 * before it reads; none of them keeps state, logs or decides what an
 * event means for the stream (txn.c does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>

#include "binlog.h"
#include "p2o.h"

/* zlib's CRC-32 (reflected 0xEDB88320), as the binlog uses it */
static uint32_t crc_table[256];

static void
crc_table_init(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t
bl_crc32(uint32_t crc, const void *buf, size_t n)
{
	const unsigned char *p = buf;

	if (crc_table[1] == 0)
		crc_table_init();
	crc = ~crc;
	while (n-- > 0)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

int
bl_header_parse(const unsigned char *p, size_t n, struct bl_header *h)
{
	if (n < BL_HEADER_LEN)
		return -1;
	h->ts = le32(p);
	h->type = p[4];
	h->server_id = le32(p + 5);
	h->size = le32(p + 9);
	h->log_pos = le32(p + 13);
	h->flags = (uint16_t)le16(p + 17);
	if (h->size < BL_HEADER_LEN)
		return -1;
	return 0;
}

/* the "x.y.z" of a server version, as one number x*10000+y*100+z */
static long
version_number(const char *v)
{
	long part[3] = { 0, 0, 0 };
	int i;

	for (i = 0; i < 3; i++) {
		if (*v < '0' || *v > '9')
			break;
		while (*v >= '0' && *v <= '9' && part[i] < 10000)
			part[i] = part[i] * 10 + (*v++ - '0');
		if (*v != '.')
			break;
		v++;
	}
	return part[0] * 10000 + part[1] * 100 + part[2];
}

/*
 * Servers from MySQL 5.6.1 and MariaDB 5.3 on end their FDE with a
 * checksum-algorithm byte and a CRC32, whatever the algorithm is.
 */
static int
checksum_aware(const char *version)
{
	return version_number(version) >= 50601 ||
	    (strstr(version, "MariaDB") != NULL &&
	    version_number(version) >= 50300);
}

int
bl_format_parse(struct bl_format *f, const unsigned char *body, size_t len,
    struct p2o_err *e)
{
	size_t fixed = 2 + 50 + 4 + 1, n;
	int alg = 0;

	if (len < fixed) {
		p2o_fail(e, P2O_EXIT_DATA, "FORMAT_DESCRIPTION of %zu bytes", len);
		return -1;
	}
	memset(f, 0, sizeof(*f));
	f->binlog_version = (uint16_t)le16(body);
	memcpy(f->server_version, body + 2, 50);
	f->server_version[50] = '\0';
	if (f->binlog_version != 4) {
		p2o_fail(e, P2O_EXIT_DATA, "binlog format version %u (only 4 is "
		    "read)", f->binlog_version);
		return -1;
	}
	if (body[56] != BL_HEADER_LEN) {
		p2o_fail(e, P2O_EXIT_DATA, "event header length %u (19 expected)",
		    body[56]);
		return -1;
	}
	n = len - fixed;
	if (checksum_aware(f->server_version)) {
		if (n < 1 + BL_CRC_LEN) {
			p2o_fail(e, P2O_EXIT_DATA, "FORMAT_DESCRIPTION without "
			    "its checksum trailer");
			return -1;
		}
		n -= 1 + BL_CRC_LEN;
		alg = body[fixed + n];
		if (alg != 0 && alg != 1) {
			p2o_fail(e, P2O_EXIT_DATA, "unknown binlog checksum "
			    "algorithm %d", alg);
			return -1;
		}
	}
	if (n > sizeof(f->post))
		n = sizeof(f->post);
	memcpy(f->post, body + fixed, n);
	f->npost = (int)n;
	f->crc = alg == 1;
	f->mariadb = strstr(f->server_version, "MariaDB") != NULL;
	f->have = 1;
	return 0;
}

/* the FDE's own trailer: present whenever the writer knew checksums */
static int
fde_has_trailer(const unsigned char *body, size_t len)
{
	char v[51];

	if (len < 2 + 50)
		return 0;
	memcpy(v, body + 2, 50);
	v[50] = '\0';
	return checksum_aware(v);
}

int
bl_event_body(const struct bl_format *fmt, int crc, const unsigned char *p,
    const struct bl_header *h, const unsigned char **body, size_t *len,
    struct p2o_err *e)
{
	size_t n = h->size - BL_HEADER_LEN;
	uint32_t want, got;
	int check = crc;

	if (h->type == BL_FDE) {
		/* the FDE decides for itself: its trailer is there when
		 * its writer knew checksums, valid when it says CRC32 */
		check = fde_has_trailer(p + BL_HEADER_LEN, n);
		if (check && n >= BL_CRC_LEN + 1 &&
		    p[BL_HEADER_LEN + n - BL_CRC_LEN - 1] == 0) {
			/* algorithm OFF: the bytes are there, unchecked */
			*body = p + BL_HEADER_LEN;
			*len = n;
			return 0;
		}
	} else if (fmt != NULL && fmt->have)
		check = crc && fmt->crc;
	if (check) {
		if (n < BL_CRC_LEN) {
			p2o_fail(e, P2O_EXIT_DATA, "%s event of %u bytes has no "
			    "room for its CRC32", bl_type_name(h->type),
			    h->size);
			return -1;
		}
		n -= BL_CRC_LEN;
		want = le32(p + BL_HEADER_LEN + n);
		got = bl_crc32(0, p, BL_HEADER_LEN + n);
		if (want != got) {
			p2o_fail(e, P2O_EXIT_DATA, "%s event fails its CRC32 check "
			    "(stored %08x, computed %08x)",
			    bl_type_name(h->type), want, got);
			return -1;
		}
	}
	*body = p + BL_HEADER_LEN;
	/* an FDE keeps its algorithm byte and CRC: bl_format_parse reads
	 * the algorithm from there */
	*len = h->type == BL_FDE ? h->size - BL_HEADER_LEN : n;
	return 0;
}

unsigned
bl_post_len(const struct bl_format *f, uint8_t type)
{
	if (type > 0 && f != NULL && f->have && type <= f->npost)
		return f->post[type - 1];
	switch (type) {
	case BL_QUERY: case BL_QUERY_COMPRESSED:
		return 13;
	case BL_ROTATE:
		return 8;
	case BL_TABLE_MAP:
	case BL_WRITE_V1: case BL_UPDATE_V1: case BL_DELETE_V1:
	case BL_WRITE_C_V1: case BL_UPDATE_C_V1: case BL_DELETE_C_V1:
		return 8;
	case BL_WRITE_V2: case BL_UPDATE_V2: case BL_DELETE_V2:
	case BL_PARTIAL_UPDATE:
	case BL_WRITE_C: case BL_UPDATE_C: case BL_DELETE_C:
		return 10;
	default:
		return 0;
	}
}

const char *
bl_type_name(uint8_t t)
{
	switch (t) {
	case BL_QUERY: return "QUERY";
	case BL_STOP: return "STOP";
	case BL_ROTATE: return "ROTATE";
	case BL_INTVAR: return "INTVAR";
	case BL_RAND: return "RAND";
	case BL_USER_VAR: return "USER_VAR";
	case BL_FDE: return "FORMAT_DESCRIPTION";
	case BL_XID: return "XID";
	case BL_TABLE_MAP: return "TABLE_MAP";
	case BL_WRITE_V1: case BL_WRITE_V2: return "WRITE_ROWS";
	case BL_UPDATE_V1: case BL_UPDATE_V2: return "UPDATE_ROWS";
	case BL_DELETE_V1: case BL_DELETE_V2: return "DELETE_ROWS";
	case BL_INCIDENT: return "INCIDENT";
	case BL_HEARTBEAT: return "HEARTBEAT";
	case BL_IGNORABLE: return "IGNORABLE";
	case BL_ROWS_QUERY: return "ROWS_QUERY";
	case BL_GTID: return "GTID";
	case BL_ANON_GTID: return "ANONYMOUS_GTID";
	case BL_PREV_GTIDS: return "PREVIOUS_GTIDS";
	case BL_XA_PREPARE: return "XA_PREPARE";
	case BL_PARTIAL_UPDATE: return "PARTIAL_UPDATE_ROWS";
	case BL_PAYLOAD: return "TRANSACTION_PAYLOAD";
	case BL_HEARTBEAT_V2: return "HEARTBEAT_V2";
	case BL_GTID_TAGGED: return "GTID_TAGGED";
	case BL_ANNOTATE_ROWS: return "ANNOTATE_ROWS";
	case BL_CHECKPOINT: return "BINLOG_CHECKPOINT";
	case BL_MDB_GTID: return "GTID (MariaDB)";
	case BL_MDB_GTID_LIST: return "GTID_LIST";
	case BL_START_ENCRYPTION: return "START_ENCRYPTION";
	case BL_QUERY_COMPRESSED: return "QUERY_COMPRESSED";
	case BL_WRITE_C_V1: case BL_WRITE_C: return "WRITE_ROWS_COMPRESSED";
	case BL_UPDATE_C_V1: case BL_UPDATE_C:
		return "UPDATE_ROWS_COMPRESSED";
	case BL_DELETE_C_V1: case BL_DELETE_C:
		return "DELETE_ROWS_COMPRESSED";
	default: return "unknown";
	}
}

int
bl_rotate_parse(const struct bl_format *f, const unsigned char *body,
    size_t len, struct bl_rotate *r)
{
	unsigned ph = bl_post_len(f, BL_ROTATE);

	if (ph < 8 || len < ph)
		return -1;
	r->pos = le64(body);
	r->name = (const char *)body + ph;
	r->namelen = len - ph;
	/* a name is never empty and holds no NUL */
	if (r->namelen == 0 || memchr(r->name, '\0', r->namelen) != NULL)
		return -1;
	return 0;
}

int
bl_query_parse(const struct bl_format *f, const unsigned char *body,
    size_t len, struct bl_query *q)
{
	unsigned ph = bl_post_len(f, BL_QUERY);
	size_t dblen, svlen, off;

	if (ph < 13 || len < ph)
		return -1;
	dblen = body[8];
	q->error_code = (uint16_t)le16(body + 9);
	svlen = le16(body + 11);
	off = ph + svlen;
	if (off > len || len - off < dblen + 1 || body[off + dblen] != 0)
		return -1;
	q->db = (const char *)body + off;
	q->dblen = dblen;
	off += dblen + 1;
	q->sql = (const char *)body + off;
	q->sqllen = len - off;
	return 0;
}

/* a 7-byte commit timestamp whose top bit says another one follows */
int
bl_gtid_parse(const unsigned char *body, size_t len, struct bl_gtid *g)
{
	struct bcur c;
	uint64_t ts;

	memset(g, 0, sizeof(*g));
	bcur_init(&c, body, len);
	bcur_take(&c, 1);			/* flags */
	if (bcur_left(&c) < 24)
		return -1;
	memcpy(g->uuid, bcur_take(&c, 16), 16);
	g->gno = bcur_le(&c, 8);
	if (bcur_left(&c) == 0)
		return 0;			/* before 5.7 */
	if (bcur_left(&c) < 17)
		return -1;
	bcur_take(&c, 1);			/* logical timestamp type */
	g->last_committed = (int64_t)bcur_le(&c, 8);
	g->sequence_number = (int64_t)bcur_le(&c, 8);
	if (bcur_left(&c) < 7)
		return 0;			/* 5.7 */
	ts = bcur_le(&c, 7);
	g->immediate_commit_us = ts & ~(1ULL << 55);
	g->original_commit_us = g->immediate_commit_us;
	if (ts & (1ULL << 55))
		g->original_commit_us = bcur_le(&c, 7);
	if (bcur_left(&c) == 0)
		return c.bad ? -1 : 0;
	g->transaction_length = bcur_packed(&c);
	if (bcur_left(&c) >= 4) {
		uint32_t v = (uint32_t)bcur_le(&c, 4);

		g->immediate_server_version = v & 0x7fffffffu;
		g->original_server_version = g->immediate_server_version;
		if (v & 0x80000000u)
			g->original_server_version = (uint32_t)bcur_le(&c, 4);
	}
	return c.bad ? -1 : 0;
}

int
bl_mdb_gtid_parse(const unsigned char *body, size_t len,
    struct bl_mdb_gtid *g)
{
	memset(g, 0, sizeof(*g));
	if (len < 13)
		return -1;
	g->seq = le64(body);
	g->domain = le32(body + 8);
	g->flags2 = body[12];
	if (g->flags2 & MDB_FL_GROUP_COMMIT_ID) {
		if (len < 21)
			return -1;
		g->commit_id = le64(body + 13);
	}
	return 0;
}

int
bl_payload_parse(const unsigned char *body, size_t len,
    struct bl_payload *pl, struct p2o_err *e)
{
	struct bcur c;
	uint64_t type, flen;
	const unsigned char *v;
	int have_size = 0;

	memset(pl, 0, sizeof(*pl));
	pl->compression = -1;
	bcur_init(&c, body, len);
	for (;;) {
		type = bcur_packed(&c);
		if (c.bad)
			break;
		if (type == 0)
			break;
		flen = bcur_packed(&c);
		if (c.bad || flen > 9 || (v = bcur_take(&c, flen)) == NULL) {
			c.bad = 1;
			break;
		}
		{
			struct bcur fc;
			uint64_t val;

			bcur_init(&fc, v, flen);
			val = bcur_packed(&fc);
			if (fc.bad) {
				c.bad = 1;
				break;
			}
			if (type == 1) {
				pl->compressed_size = val;
				have_size = 1;
			} else if (type == 2)
				pl->compression = val > 255 ? -1 : (int)val;
			else if (type == 3)
				pl->uncompressed_size = val;
			/* later fields are skipped by their length */
		}
	}
	if (c.bad) {
		p2o_fail(e, P2O_EXIT_DATA, "TRANSACTION_PAYLOAD header is "
		    "malformed");
		return -1;
	}
	pl->data = c.p + c.off;
	pl->datalen = bcur_left(&c);
	if (have_size && pl->compressed_size != pl->datalen) {
		p2o_fail(e, P2O_EXIT_DATA, "TRANSACTION_PAYLOAD says %llu "
		    "compressed bytes and holds %zu",
		    (unsigned long long)pl->compressed_size, pl->datalen);
		return -1;
	}
	if (pl->compression != 0 && pl->compression != 255) {
		p2o_fail(e, P2O_EXIT_DATA, "TRANSACTION_PAYLOAD compression type "
		    "%d is not known", pl->compression);
		return -1;
	}
	return 0;
}

int
bl_payload_inflate(const struct bl_payload *pl, struct sbuf *out,
    struct p2o_err *e)
{
	ZSTD_DStream *z = NULL;
	ZSTD_inBuffer in;
	ZSTD_outBuffer o;
	size_t start = out->len, rc = 1, limit = BL_PAYLOAD_MAX;
	int ret = -1;

	if (pl->uncompressed_size > 0 && pl->uncompressed_size < limit)
		limit = (size_t)pl->uncompressed_size;
	if (pl->compression == 255) {
		if (pl->datalen > limit)
			goto toolarge;
		sbuf_add(out, pl->data, pl->datalen);
		return 0;
	}
	if ((z = ZSTD_createDStream()) == NULL) {
		p2o_fail(e, P2O_EXIT_DATA, "out of memory");
		return -1;
	}
	ZSTD_initDStream(z);
	in.src = pl->data;
	in.size = pl->datalen;
	in.pos = 0;
	while (rc != 0) {
		if (out->len - start >= limit) {
			/* full: only the end of the frame may remain */
			char probe;

			o.dst = &probe;
			o.size = 1;
			o.pos = 0;
			rc = ZSTD_decompressStream(z, &o, &in);
			if (ZSTD_isError(rc))
				goto bad;
			if (o.pos > 0)
				goto toolarge;
			if (rc != 0 && in.pos == in.size)
				goto truncated;
			continue;
		}
		sbuf_grow(out, 65536);
		o.dst = out->buf + out->len;
		o.size = out->cap - out->len - 1;
		if (o.size > limit - (out->len - start))
			o.size = limit - (out->len - start);
		o.pos = 0;
		rc = ZSTD_decompressStream(z, &o, &in);
		if (ZSTD_isError(rc))
			goto bad;
		out->len += o.pos;
		out->buf[out->len] = '\0';
		if (rc != 0 && in.pos == in.size && o.pos < o.size)
			goto truncated;
	}
	if (in.pos != in.size) {
		p2o_fail(e, P2O_EXIT_DATA, "TRANSACTION_PAYLOAD has %zu bytes after "
		    "its zstd frame", in.size - in.pos);
		goto fail;
	}
	if (pl->uncompressed_size > 0 &&
	    out->len - start != pl->uncompressed_size) {
		p2o_fail(e, P2O_EXIT_DATA, "TRANSACTION_PAYLOAD inflates to %zu "
		    "bytes, not the %llu it states", out->len - start,
		    (unsigned long long)pl->uncompressed_size);
		goto fail;
	}
	ret = 0;
	goto done;
bad:
	p2o_fail(e, P2O_EXIT_DATA, "TRANSACTION_PAYLOAD does not decompress: %s",
	    ZSTD_getErrorName(rc));
	goto fail;
truncated:
	p2o_fail(e, P2O_EXIT_DATA, "TRANSACTION_PAYLOAD zstd frame is truncated");
	goto fail;
toolarge:
	p2o_fail(e, P2O_EXIT_DATA, "TRANSACTION_PAYLOAD inflates past %zu bytes",
	    limit);
fail:
	out->len = start;
	if (out->cap)
		out->buf[start] = '\0';
done:
	if (z != NULL)
		ZSTD_freeDStream(z);
	return ret;
}

/* ---- MariaDB's compressed events ---- */

/* where the compressed part of a compressed event starts, and the type
 * of the event it is compressed from; -1 when the body is too short */
static long
compressed_at(const struct bl_format *f, uint8_t type,
    const unsigned char *body, size_t len, uint8_t *plain)
{
	unsigned ph = bl_post_len(f, type);
	struct bcur c;
	uint64_t width, extra;

	if (type == BL_QUERY_COMPRESSED) {
		size_t off;

		*plain = BL_QUERY;
		if (ph < 13 || len < ph)
			return -1;
		off = ph + le16(body + 11);
		if (off > len || len - off < (size_t)body[8] + 1 ||
		    body[off + body[8]] != 0)
			return -1;
		return (long)(off + body[8] + 1);
	}
	*plain = type >= BL_WRITE_C ? type - BL_WRITE_C + BL_WRITE_V2 :
	    type - BL_WRITE_C_V1 + BL_WRITE_V1;
	if (ph != 6 && ph != 8 && ph != 10)
		return -1;
	bcur_init(&c, body, len);
	bcur_take(&c, ph == 6 ? 6 : 8);		/* table id, flags */
	if (ph == 10) {
		extra = bcur_le(&c, 2);
		if (extra < 2)
			return -1;
		bcur_take(&c, extra - 2);
	}
	width = bcur_packed(&c);
	if (c.bad || width > TM_MAX_COLS)
		return -1;
	bcur_take(&c, (width + 7) / 8);
	if (*plain == BL_UPDATE_V1 || *plain == BL_UPDATE_V2)
		bcur_take(&c, (width + 7) / 8);
	return c.bad ? -1 : (long)c.off;
}

int
bl_uncompress(const struct bl_format *f, uint8_t type,
    const unsigned char *body, size_t len, uint8_t *plain, struct sbuf *out,
    struct p2o_err *e)
{
	const char *name = bl_type_name(type);
	size_t start = out->len, want = 0;
	z_stream z;
	long off;
	int i, n, rc = Z_OK, ret = -1;

	if ((off = compressed_at(f, type, body, len, plain)) < 0 ||
	    (size_t)off >= len) {
		p2o_fail(e, P2O_EXIT_DATA, "a %s event is too short", name);
		return -1;
	}
	n = body[off] & 7;
	if (!(body[off] & 0x80) || (body[off] >> 4 & 7) != 0 || n < 1 ||
	    n > 4 || len - off < (size_t)n + 1) {
		p2o_fail(e, P2O_EXIT_DATA, "a %s event has an unknown compression "
		    "header (0x%02x)", name, body[off]);
		return -1;
	}
	for (i = 0; i < n; i++)
		want = want << 8 | body[off + 1 + i];
	if (want == 0 || want > BL_PAYLOAD_MAX) {
		p2o_fail(e, P2O_EXIT_DATA, "a %s event states %zu uncompressed "
		    "bytes", name, want);
		return -1;
	}
	/* the event's own head, as it is, then what it compressed */
	sbuf_add(out, body, off);
	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK) {
		p2o_fail(e, P2O_EXIT_DATA, "out of memory");
		goto fail;
	}
	z.next_in = (unsigned char *)body + off + 1 + n;
	z.avail_in = (unsigned)(len - off - 1 - n);
	while (rc != Z_STREAM_END) {
		size_t got = out->len - start - off;

		if (got >= want) {
			/* full: only the end of the stream may remain */
			unsigned char probe;

			z.next_out = &probe;
			z.avail_out = 1;
			rc = inflate(&z, Z_NO_FLUSH);
			if (z.avail_out == 0) {
				p2o_fail(e, P2O_EXIT_DATA, "a %s event inflates "
				    "past the %zu bytes it states", name, want);
				goto fail;
			}
		} else {
			sbuf_grow(out, want - got < 65536 ? want - got :
			    65536);
			z.next_out = (unsigned char *)out->buf + out->len;
			z.avail_out = (unsigned)(want - got < out->cap -
			    out->len - 1 ? want - got : out->cap - out->len -
			    1);
			rc = inflate(&z, Z_NO_FLUSH);
			out->len = (char *)z.next_out - out->buf;
			out->buf[out->len] = '\0';
		}
		if (rc == Z_BUF_ERROR && z.avail_in == 0) {
			p2o_fail(e, P2O_EXIT_DATA, "a %s event's zlib stream is "
			    "truncated", name);
			goto fail;
		}
		if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
			p2o_fail(e, P2O_EXIT_DATA, "a %s event does not inflate: %s",
			    name, z.msg ? z.msg : "zlib error");
			goto fail;
		}
	}
	if (z.avail_in != 0 || out->len - start - off != want) {
		p2o_fail(e, P2O_EXIT_DATA, "a %s event inflates to %zu bytes and "
		    "%u left over, not the %zu it states", name,
		    out->len - start - off, z.avail_in, want);
		goto fail;
	}
	ret = 0;
	goto done;
fail:
	out->len = start;
	if (out->cap)
		out->buf[start] = '\0';
done:
	inflateEnd(&z);
	return ret;
}
