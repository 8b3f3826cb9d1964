/*
 * mybytes.c - the bounded cursor of mybytes.h: every read checks what is
 * left, and a read past the end marks the cursor bad and returns zeros.
 * Never allocates, never logs.
 */
#include "mybytes.h"

void
bcur_init(struct bcur *c, const void *p, size_t n)
{
	c->p = p;
	c->n = n;
	c->off = 0;
	c->bad = 0;
}

size_t
bcur_left(const struct bcur *c)
{
	return c->bad ? 0 : c->n - c->off;
}

const unsigned char *
bcur_take(struct bcur *c, size_t k)
{
	const unsigned char *p;

	if (c->bad || k > c->n - c->off) {
		c->bad = 1;
		return NULL;
	}
	p = c->p + c->off;
	c->off += k;
	return p;
}

uint64_t
bcur_le(struct bcur *c, int k)
{
	const unsigned char *p = bcur_take(c, (size_t)k);

	return p ? le_n(p, k) : 0;
}

uint64_t
bcur_packed(struct bcur *c)
{
	const unsigned char *p = bcur_take(c, 1);

	if (p == NULL)
		return 0;
	switch (p[0]) {
	case 0xfc:
		return bcur_le(c, 2);
	case 0xfd:
		return bcur_le(c, 3);
	case 0xfe:
		return bcur_le(c, 8);
	case 0xfb:	/* NULL in a result set; never valid here */
	case 0xff:
		c->bad = 1;
		return 0;
	default:
		return p[0];
	}
}
