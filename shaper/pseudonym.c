/*
 * pseudonym.c - the pseudonym transform's cryptography: deterministic
 * authenticated encryption with AES-SIV (RFC 5297), through OpenSSL 3's
 * EVP ciphers "AES-128-SIV" (a 32-byte key, the RFC's examples) and
 * "AES-256-SIV" (the 64-byte key a pseudonym uses). A token is the
 * base64url, without padding, of SIV ‖ ciphertext: the same value under
 * the same key and scope (the associated data) is always the same token,
 * so two columns sharing a scope still join; a token can be opened only
 * with the key, which is how a value that is a token already is told
 * apart from one to seal.
 *
 * Owns no key: the configuration resolved it and wipes it. Never logs,
 * and never leaves a plaintext byte in a buffer it frees.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "shaper.h"

#define SIV_LEN	16

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* the cipher for a key of keylen bytes, fetched once */
static const EVP_CIPHER *
siv_cipher(size_t keylen)
{
	static EVP_CIPHER *c128, *c256;

	if (keylen == 32) {
		if (c128 == NULL)
			c128 = EVP_CIPHER_fetch(NULL, "AES-128-SIV", NULL);
		return c128;
	}
	if (keylen == 64) {
		if (c256 == NULL)
			c256 = EVP_CIPHER_fetch(NULL, "AES-256-SIV", NULL);
		return c256;
	}
	return NULL;
}

/* one CMAC of n bytes under k (klen bytes) into out; 0 or -1 */
static int
cmac(EVP_MAC *mac, const unsigned char *k, size_t klen, const void *p,
    size_t n, unsigned char out[SIV_LEN])
{
	EVP_MAC_CTX *ctx;
	OSSL_PARAM params[2];
	size_t len = 0;
	int rc = -1;

	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER,
	    klen == 16 ? "AES-128-CBC" : "AES-256-CBC", 0);
	params[1] = OSSL_PARAM_construct_end();
	if ((ctx = EVP_MAC_CTX_new(mac)) == NULL)
		return -1;
	if (EVP_MAC_init(ctx, k, klen, params) == 1 &&
	    EVP_MAC_update(ctx, p, n) == 1 &&
	    EVP_MAC_final(ctx, out, &len, SIV_LEN) == 1 && len == SIV_LEN)
		rc = 0;
	EVP_MAC_CTX_free(ctx);
	return rc;
}

/* doubling in GF(2^128), RFC 5297 section 2.3 */
static void
dbl(unsigned char b[SIV_LEN])
{
	int i, carry = b[0] >> 7;

	for (i = 0; i < SIV_LEN - 1; i++)
		b[i] = (unsigned char)(b[i] << 1 | b[i + 1] >> 7);
	b[SIV_LEN - 1] = (unsigned char)(b[SIV_LEN - 1] << 1 ^ (carry ?
	    0x87 : 0));
}

/*
 * The SIV of an empty plaintext, which OpenSSL 3.0's SIV cipher cannot
 * make (it ignores an empty update and then has no tag): S2V (RFC 5297
 * section 2.4) by hand, with the empty string padded as its last
 * component. The ciphertext is empty; the SIV is the whole token.
 */
static int
s2v_empty(const unsigned char *key, size_t keylen, const struct siv_ad *ad,
    int nad, unsigned char v[SIV_LEN])
{
	static const unsigned char zero[SIV_LEN];
	unsigned char d[SIV_LEN], m[SIV_LEN];
	EVP_MAC *mac;
	size_t k1 = keylen / 2;
	int i, j, rc = -1;

	if ((mac = EVP_MAC_fetch(NULL, "CMAC", NULL)) == NULL)
		return -1;
	if (cmac(mac, key, k1, zero, SIV_LEN, d) == -1)
		goto out;
	for (i = 0; i < nad; i++) {
		if (cmac(mac, key, k1, ad[i].p, ad[i].n, m) == -1)
			goto out;
		dbl(d);
		for (j = 0; j < SIV_LEN; j++)
			d[j] ^= m[j];
	}
	dbl(d);
	d[0] ^= 0x80;
	rc = cmac(mac, key, k1, d, SIV_LEN, v);
out:
	EVP_MAC_free(mac);
	return rc;
}

int
siv_seal(const unsigned char *key, size_t keylen, const struct siv_ad *ad,
    int nad, const unsigned char *pt, size_t ptlen, unsigned char *out)
{
	const EVP_CIPHER *c = siv_cipher(keylen);
	EVP_CIPHER_CTX *ctx;
	int i, n, rc = -1;

	if (c == NULL || ptlen > (size_t)INT_MAX - SIV_LEN)
		return -1;
	if (ptlen == 0)
		return s2v_empty(key, keylen, ad, nad, out);
	if ((ctx = EVP_CIPHER_CTX_new()) == NULL)
		return -1;
	if (EVP_EncryptInit_ex2(ctx, c, key, NULL, NULL) != 1)
		goto out;
	for (i = 0; i < nad; i++)
		if (EVP_EncryptUpdate(ctx, NULL, &n, ad[i].p,
		    (int)ad[i].n) != 1)
			goto out;
	/* S2V needs the whole plaintext: one update */
	if (EVP_EncryptUpdate(ctx, out + SIV_LEN, &n, pt, (int)ptlen) != 1 ||
	    EVP_EncryptFinal_ex(ctx, out + SIV_LEN + n, &n) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, SIV_LEN,
	    out) != 1)
		goto out;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(ctx);
	return rc;
}

int
siv_open(const unsigned char *key, size_t keylen, const struct siv_ad *ad,
    int nad, const unsigned char *in, size_t len, unsigned char *out)
{
	const EVP_CIPHER *c = siv_cipher(keylen);
	EVP_CIPHER_CTX *ctx;
	unsigned char v[SIV_LEN];
	int i, n, rc = -1;

	if (c == NULL || len < SIV_LEN || len > (size_t)INT_MAX)
		return -1;
	if (len == SIV_LEN)
		return s2v_empty(key, keylen, ad, nad, v) == 0 &&
		    CRYPTO_memcmp(v, in, SIV_LEN) == 0 ? 0 : -1;
	if ((ctx = EVP_CIPHER_CTX_new()) == NULL)
		return -1;
	if (EVP_DecryptInit_ex2(ctx, c, key, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, SIV_LEN,
	    (void *)in) != 1)
		goto out;
	for (i = 0; i < nad; i++)
		if (EVP_DecryptUpdate(ctx, NULL, &n, ad[i].p,
		    (int)ad[i].n) != 1)
			goto out;
	if (EVP_DecryptUpdate(ctx, out, &n, in + SIV_LEN,
	    (int)(len - SIV_LEN)) != 1 ||
	    EVP_DecryptFinal_ex(ctx, out + n, &n) != 1)
		goto out;
	rc = 0;
out:
	if (rc == -1)
		OPENSSL_cleanse(out, len - (len >= SIV_LEN ? SIV_LEN : len));
	EVP_CIPHER_CTX_free(ctx);
	return rc;
}

static void
add_b64url(struct sbuf *out, const unsigned char *p, size_t n)
{
	uint32_t v;
	size_t i;

	for (i = 0; i + 3 <= n; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		sbuf_addc(out, b64url[v >> 18]);
		sbuf_addc(out, b64url[(v >> 12) & 63]);
		sbuf_addc(out, b64url[(v >> 6) & 63]);
		sbuf_addc(out, b64url[v & 63]);
	}
	if (n - i == 1) {
		v = (uint32_t)p[i] << 16;
		sbuf_addc(out, b64url[v >> 18]);
		sbuf_addc(out, b64url[(v >> 12) & 63]);
	} else if (n - i == 2) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		sbuf_addc(out, b64url[v >> 18]);
		sbuf_addc(out, b64url[(v >> 12) & 63]);
		sbuf_addc(out, b64url[(v >> 6) & 63]);
	}
}

static int
b64url_value(char c)
{
	const char *at;

	if (c == '\0' || (at = strchr(b64url, c)) == NULL)
		return -1;
	return (int)(at - b64url);
}

/* the bytes of unpadded base64url text (n chars) into out (room for
 * n * 3 / 4): their number, or -1 when it is not such text */
static long
b64url_decode(const char *s, size_t n, unsigned char *out)
{
	uint32_t v = 0;
	size_t i, o = 0;
	int d, bits = 0;

	if (n % 4 == 1)
		return -1;
	for (i = 0; i < n; i++) {
		if ((d = b64url_value(s[i])) < 0)
			return -1;
		v = v << 6 | (uint32_t)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(v >> bits);
		}
	}
	/* the bits left over must be zero, or two texts decode alike */
	if (bits > 0 && (v & ((1u << bits) - 1)) != 0)
		return -1;
	return (long)o;
}

int
pseudonym_seal(const struct sync_pseudonym *p, const char *text, size_t n,
    struct sbuf *out)
{
	struct siv_ad ad;
	unsigned char stack[256], *buf = stack;
	size_t len = SIV_LEN + n;
	int rc = 0;

	if (p->key == NULL || p->ad == NULL)
		return 0;
	if (len > sizeof(stack))
		buf = xmalloc(len);
	ad.p = (const unsigned char *)p->ad;
	ad.n = strlen(p->ad);
	if (siv_seal(p->key, 64, &ad, 1, (const unsigned char *)text, n,
	    buf) == 0) {
		sbuf_addc(out, '"');
		add_b64url(out, buf, len);
		sbuf_addc(out, '"');
		rc = 1;
	}
	/* the ciphertext is no secret; cleansed anyway, with the rest */
	OPENSSL_cleanse(buf, len);
	if (buf != stack)
		free(buf);
	return rc;
}

int
pseudonym_is_token(const struct sync_pseudonym *p, const char *text,
    size_t n)
{
	struct siv_ad ad;
	unsigned char stack[256], *buf = stack;
	long len;
	int rc = 0;

	/* shorter than a SIV, or not base64url: no token */
	if (p->key == NULL || p->ad == NULL || n < 22)
		return 0;
	if (n * 3 / 4 * 2 > sizeof(stack))
		buf = xmalloc(n * 3 / 4 * 2);
	if ((len = b64url_decode(text, n, buf)) >= SIV_LEN) {
		ad.p = (const unsigned char *)p->ad;
		ad.n = strlen(p->ad);
		rc = siv_open(p->key, 64, &ad, 1, buf, (size_t)len,
		    buf + len) == 0;
		OPENSSL_cleanse(buf, (size_t)len * 2);
	}
	if (buf != stack)
		free(buf);
	return rc;
}
