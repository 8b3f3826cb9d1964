/*
 * meilisearch_state.c - the checkpoint and load progress of a target that
 * keeps no documents of ours: one file per key under target.state_dir,
 * {"version":N,"doc":{...}}. A write never leaves a half-written or an
 * older file in place of the one acknowledged: the new content goes to a
 * temporary file, which is fsync'd, renamed over the old one (atomic on
 * POSIX), and the directory is fsync'd so the rename itself is durable
 * before the write is answered. A crash at any step leaves the old file
 * or the new one, whole; a temporary file left behind is ignored (and
 * replaced by the next write).
 *
 * P2O_TEST_STATE_KILL=<step> kills the process with SIGKILL at that step
 * of a write (tmp-open, tmp-half, tmp-written, tmp-synced, renamed,
 * dir-synced): the tests' way to crash between two exact steps, which no
 * timing of an outside kill -9 can aim at.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meilisearch.h"
#include "p2o.h"

static void
fault_point(const char *step)
{
	const char *at = getenv("P2O_TEST_STATE_KILL");

	if (at != NULL && strcmp(at, step) == 0)
		raise(SIGKILL);
}

/* dir/<key>, the key's bytes outside [A-Za-z0-9._-] as %XX, so that no
 * key names another directory */
static void
file_path(const struct target_conn *c, const char *key, const char *suffix,
    struct sbuf *out)
{
	const unsigned char *k;

	sbuf_reset(out);
	sbuf_adds(out, c->state_dir);
	sbuf_addc(out, '/');
	for (k = (const unsigned char *)key; *k; k++)
		if ((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		    (*k >= '0' && *k <= '9') || *k == '-' || *k == '_' ||
		    (*k == '.' && k != (const unsigned char *)key))
			sbuf_addc(out, (char)*k);
		else
			sbuf_addf(out, "%%%02X", *k);
	sbuf_adds(out, suffix);
}

/* the whole file into out: 1, 0 when there is none, -1 with err */
static int
read_file(const char *path, struct sbuf *out, struct p2o_err *err)
{
	char buf[8192];
	ssize_t n;
	int fd;

	sbuf_reset(out);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return 0;
		return p2o_fail(err, P2O_EXIT_TEMPFAIL, "reading '%s': %s",
		    path, strerror(errno));
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			p2o_fail(err, P2O_EXIT_TEMPFAIL, "reading '%s': %s",
			    path, strerror(errno));
			close(fd);
			return -1;
		}
		sbuf_add(out, buf, (size_t)n);
	}
	close(fd);
	return 1;
}

/* the stored version and document of a file's content; -1: not ours */
static int
parse(const struct sbuf *file, uint64_t *version, struct jspan *doc)
{
	struct jspan obj = { file->buf, file->len }, v;
	size_t off;

	while (obj.n && (obj.p[obj.n - 1] == '\n'))
		obj.n--;
	if (obj.n == 0 || jscan_validate(obj.p, obj.n, &off, NULL) == -1 ||
	    jspan_type(obj) != J_OBJECT || !jobj_get(obj, "version", &v) ||
	    jnum_u64(v, version) == -1 || !jobj_get(obj, "doc", doc) ||
	    jspan_type(*doc) != J_OBJECT)
		return -1;
	return 0;
}

int
ms_state_get(struct target_conn *c, const char *key, struct sbuf *doc,
    int *found, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, file = SBUF_INIT;
	struct jspan d;
	uint64_t version;
	int rc;

	*found = 0;
	file_path(c, key, "", &path);
	rc = read_file(path.buf, &file, err);
	if (rc == 1 && parse(&file, &version, &d) == -1)
		rc = p2o_fail(err, P2O_EXIT_CHECKPOINT, "state file '%s' is "
		    "not one pg2osync wrote", path.buf);
	if (rc == 1) {
		sbuf_reset(doc);
		sbuf_add(doc, d.p, d.n);
		*found = 1;
	}
	sbuf_release(&path);
	sbuf_release(&file);
	return rc == -1 ? -1 : 0;
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
sync_dir(const char *dir)
{
	int fd, rc;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* content into path, through path.tmp: fsync'd, renamed, dir fsync'd */
static int
replace_file(const char *dir, const char *path, const char *tmp,
    const struct sbuf *content, struct p2o_err *err)
{
	size_t half = content->len / 2;
	int fd;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd == -1)
		return p2o_fail(err, P2O_EXIT_TEMPFAIL, "writing '%s': %s",
		    tmp, strerror(errno));
	fault_point("tmp-open");
	if (write_all(fd, content->buf, half) == 0) {
		fault_point("tmp-half");
		if (write_all(fd, content->buf + half,
		    content->len - half) == 0) {
			fault_point("tmp-written");
			if (fsync(fd) == 0) {
				fault_point("tmp-synced");
				if (close(fd) == 0)
					goto closed;
				fd = -1;
			}
		}
	}
	p2o_fail(err, P2O_EXIT_TEMPFAIL, "writing '%s': %s", tmp,
	    strerror(errno));
	if (fd != -1)
		close(fd);
	unlink(tmp);
	return -1;
closed:
	if (rename(tmp, path) == -1) {
		p2o_fail(err, P2O_EXIT_TEMPFAIL, "renaming '%s' to '%s': %s",
		    tmp, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	fault_point("renamed");
	if (sync_dir(dir) == -1)
		return p2o_fail(err, P2O_EXIT_TEMPFAIL, "syncing directory "
		    "'%s': %s", dir, strerror(errno));
	fault_point("dir-synced");
	return 0;
}

int
ms_state_put(struct target_conn *c, const char *key, const char *body,
    size_t len, uint64_t version, int *conflict, struct p2o_err *err)
{
	struct sbuf path = SBUF_INIT, tmp = SBUF_INIT, file = SBUF_INIT;
	struct jspan d;
	uint64_t have;
	int rc, created;

	*conflict = 0;
	if ((rc = ms_state_prepare(c, &created, err)) == 0) {
		file_path(c, key, "", &path);
		file_path(c, key, ".tmp", &tmp);
		rc = read_file(path.buf, &file, err);
	}
	/* a versioned write never replaces a higher version (two writers
	 * racing, or one restarted behind the other); one process at a
	 * time writes a stream's files (the supervisor runs one ckpt) */
	if (rc == 1 && version > 0 && parse(&file, &have, &d) == 0 &&
	    have > version) {
		*conflict = 1;
		rc = 0;
	} else if (rc != -1) {
		sbuf_reset(&file);
		sbuf_adds(&file, "{\"version\":");
		sbuf_add_u64(&file, version);
		sbuf_adds(&file, ",\"doc\":");
		sbuf_add(&file, body, len);
		sbuf_adds(&file, "}\n");
		rc = replace_file(c->state_dir, path.buf, tmp.buf, &file, err);
	}
	sbuf_release(&path);
	sbuf_release(&tmp);
	sbuf_release(&file);
	return rc == -1 ? -1 : 0;
}

int
ms_state_prepare(struct target_conn *c, int *created, struct p2o_err *err)
{
	struct stat sb;

	*created = 0;
	if (c->state_dir == NULL)
		return p2o_fail(err, P2O_EXIT_CONFIG, "target '%s' needs "
		    "target.state_dir", c->mod->name);
	if (c->state_ready)
		return 0;
	if (mkdir(c->state_dir, 0700) == 0) {
		*created = 1;
		/* the new directory's own entry, durable in its parent */
		char *parent = xstrdup(c->state_dir), *slash;

		slash = strrchr(parent, '/');
		if (slash == parent)
			slash[1] = '\0';
		else if (slash != NULL)
			*slash = '\0';
		sync_dir(slash ? parent : ".");
		free(parent);
	} else if (errno != EEXIST)
		return p2o_fail(err, P2O_EXIT_CONFIG, "target.state_dir '%s': "
		    "%s", c->state_dir, strerror(errno));
	if (stat(c->state_dir, &sb) == -1 || !S_ISDIR(sb.st_mode))
		return p2o_fail(err, P2O_EXIT_CONFIG, "target.state_dir '%s' "
		    "is not a directory", c->state_dir);
	c->state_ready = 1;
	return 0;
}
