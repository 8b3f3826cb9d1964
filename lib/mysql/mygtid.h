/*
 * mygtid.h - MySQL and MariaDB GTID sets, and the position text a MySQL
 * checkpoint stores ("binlog.000004:1234;gtid=<set>") with the
 * coordinate it names: the one parser and printer of both, for
 * capture-mysql and the loader.
 */
#ifndef MYGTID_H
#define MYGTID_H

#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

/* mygtid.c */

struct gtid_iv {
	uint64_t start, end;	/* [start, end) */
};
struct gtid_sid {
	unsigned char uuid[16];
	int	 niv, capiv;
	struct gtid_iv *iv;
};
struct gtid_dom {
	uint32_t domain, server;
	uint64_t seq;
};

enum gtid_flavor { GTID_NONE, GTID_MYSQL, GTID_MARIADB };

struct gtid_set {
	enum gtid_flavor flavor;
	int	 nsid, capsid;
	struct gtid_sid *sid;	/* MySQL, sorted by uuid */
	int	 ndom, capdom;
	struct gtid_dom *dom;	/* MariaDB, sorted by domain */
};

void	gtid_set_init(struct gtid_set *);
void	gtid_set_release(struct gtid_set *);
void	gtid_set_copy(struct gtid_set *dst, const struct gtid_set *src);
int	gtid_set_empty(const struct gtid_set *);
void	gtid_set_add(struct gtid_set *, const unsigned char uuid[16],
	    uint64_t gno);
void	gtid_set_add_range(struct gtid_set *, const unsigned char uuid[16],
	    uint64_t start, uint64_t end);
/* MariaDB: the domain's last GTID becomes this one if it is later */
void	gtid_set_add_mdb(struct gtid_set *, uint32_t domain, uint32_t server,
	    uint64_t seq);
/* MySQL "uuid:1-5:7,uuid2:3", MariaDB "0-1-14,1-2-3" */
void	gtid_set_format(const struct gtid_set *, struct sbuf *out);
int	gtid_set_parse(struct gtid_set *, const char *s, size_t n);
/* COM_BINLOG_DUMP_GTID's set encoding (untagged) */
void	gtid_set_encode(const struct gtid_set *, struct sbuf *out);
/* PREVIOUS_GTIDS body -> set; 1 when it uses the tagged format (the
 * set then holds only what could be read), 0, -1 malformed */
int	gtid_prev_parse(struct gtid_set *, const unsigned char *body,
	    size_t len);
/* PREVIOUS_GTIDS body as text, tags included ("uuid:tag:1-3"); -1 bad */
int	gtid_prev_format(const unsigned char *body, size_t len,
	    struct sbuf *out);
/* GTID_LIST body -> set; -1 malformed */
int	gtid_list_parse(struct gtid_set *, const unsigned char *body,
	    size_t len);
void	uuid_format(const unsigned char uuid[16], char out[37]);
int	uuid_parse(const char *s, size_t n, unsigned char uuid[16]);

/* a position text "file:offset[;gtid=set]" */
#define MYPOS_FILE_MAX	512
struct mypos {
	char	 file[MYPOS_FILE_MAX];
	uint32_t offset;
	int	 has_gtid;
	struct gtid_set gtid;
};
/* 0, or -1 with err */
int	mypos_parse(struct mypos *, const char *text, char *err,
	    size_t errlen);
void	mypos_release(struct mypos *);
/* the number after the last '.' of a binlog file name; -1 none */
long long binlog_file_index(const char *name, size_t n);
/* (file index << 32) | offset */
uint64_t mypos_coord(uint64_t file_index, uint32_t offset);

#endif
