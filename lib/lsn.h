/*
 * lsn.h - PostgreSQL's textual WAL position ("16/B374D848") and the 64-bit
 * position it names (hi << 32 | lo). Only PostgreSQL's own tools use it:
 * capture-pg, and ckpt for `put --lsn` and checkpoints that stored only text.
 */
#ifndef LSN_H
#define LSN_H

#include <stdint.h>

#define LSN_TEXT_MAX	32

/* lsn.c */

/* "X/Y", 1 to 8 hex digits each, nothing around it: 0, else -1 and *pos
 * untouched */
int	lsn_parse(const char *text, uint64_t *pos);
/* "%X/%X" into buf (at least LSN_TEXT_MAX bytes) */
void	lsn_format(uint64_t pos, char buf[LSN_TEXT_MAX]);

#endif
