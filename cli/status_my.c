/*
 * status_my.c - status on MySQL and MariaDB: the checkpoint's binlog
 * coordinate against SHOW MASTER STATUS, the bytes between them, and
 * whether the binlog file the checkpoint resumes from is still on the
 * server (a purged one is a stream that cannot resume). Reads only.
 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "mysql/myconn.h"
#include "mysql/mygtid.h"
#include "mysql/myserver.h"
#include "p2o.h"

struct at {
	char	 file[MYPOS_FILE_MAX];
	uint32_t off;
};

/* the checkpoint at or past the coordinate status was called at */
static int
reached(const struct ckpt_view *ck, void *arg)
{
	const struct at *want = arg;
	struct mypos p;
	char err[128];
	long long a, b;
	int r;

	if (mypos_parse(&p, ck->text, err, sizeof(err)) == -1)
		return 0;
	a = binlog_file_index(p.file, strlen(p.file));
	b = binlog_file_index(want->file, strlen(want->file));
	r = a > b || (a == b && p.offset >= want->off);
	mypos_release(&p);
	return r;
}

/* bytes from file:off to the server's end, from the files' sizes; -1
 * when the file is not among them */
static int64_t
behind(char **files, const uint64_t *sizes, int n, const char *file,
    uint32_t off, const struct at *now)
{
	int64_t b = 0;
	int i, k;

	for (k = 0; k < n && strcmp(files[k], file) != 0; k++)
		;
	if (k == n)
		return -1;
	if (strcmp(file, now->file) == 0)
		return now->off > off ? (int64_t)(now->off - off) : 0;
	b = (int64_t)sizes[k] - off;
	for (i = k + 1; i < n && strcmp(files[i], now->file) != 0; i++)
		b += (int64_t)sizes[i];
	return b + now->off;
}

int
status_my(const struct config *cfg, const struct status_opts *so)
{
	struct ckpt_view ck;
	struct mypos p;
	struct at now;
	struct p2o_err e;
	struct sbuf j = SBUF_INIT;
	char **files = NULL, err[256], mb[32];
	uint64_t *sizes = NULL;
	int64_t lag = -1;
	int n = 0, rc = 0, parsed = 0, gone = 0;
	void *m;

	p2o_err_clear(&e);
	if ((m = myconn_open(cfg, "catalogue", &e)) == NULL)
		return cli_fail(&e);
	if (myconn_binlog_now(m, now.file, sizeof(now.file), &now.off,
	    &e) == -1 || mysrv_binlogs(m, &files, &sizes, &n, &e) == -1) {
		rc = cli_fail(&e);
		goto out;
	}
	if (so->caught_up) {
		rc = status_wait(cfg, so->timeout_ms, reached, &now,
		    so->json ? NULL : stdout);
		if (!so->json)
			goto out;
	}
	status_checkpoint(cfg, &ck);
	if (ck.found && mypos_parse(&p, ck.text, err, sizeof(err)) == 0) {
		parsed = 1;
		lag = behind(files, sizes, n, p.file, p.offset, &now);
		gone = lag < 0;
	}
	if (so->json) {
		sbuf_addf(&j, "{\"source\":\"mysql\",\"position_text\":\"%s:%u\","
		    "\"checkpoint\":", now.file, now.off);
		if (ck.found) {
			sbuf_addf(&j, "{\"pos\":%" PRIu64 ",\"text\":", ck.pos);
			sbuf_add_jstr(&j, ck.text, strlen(ck.text));
			if (parsed)
				sbuf_addf(&j, ",\"file\":\"%s\",\"file_exists\":"
				    "%s", p.file, gone ? "false" : "true");
			if (lag >= 0)
				sbuf_addf(&j, ",\"lag_bytes\":%" PRId64, lag);
			sbuf_addc(&j, '}');
		} else
			sbuf_adds(&j, "null");
		sbuf_adds(&j, ",\"loads\":");
		if (status_loads(cfg, NULL, &j) == -1)
			sbuf_adds(&j, "null");
		if (so->caught_up)
			sbuf_addf(&j, ",\"caught_up\":%s", rc == 0 ? "true" :
			    "false");
		sbuf_adds(&j, "}\n");
		fputs(j.buf, stdout);
	} else {
		printf("source      %s, binlog at %s:%u (%d file(s), from "
		    "%s)\n", myconn_mariadb(m) ? "MariaDB" : "MySQL", now.file,
		    now.off, n, n ? files[0] : "-");
		if (!ck.known)
			printf("checkpoint  unknown: %s\n", ck.why);
		else if (!ck.found)
			printf("checkpoint  none stored (the pipeline has not "
			    "run)\n");
		else if (!parsed)
			printf("checkpoint  %s: not a binlog position\n",
			    ck.text);
		else if (gone)
			printf("checkpoint  %s: binlog file '%s' is no longer on "
			    "the server (purged): the stream cannot resume from "
			    "it; the tables must be loaded again into a fresh "
			    "index\n", ck.text, p.file);
		else
			printf("checkpoint  %s (stored %s): %s behind; binlog "
			    "file '%s' is still on the server\n", ck.text,
			    ck.updated_at, check_mb(lag, mb, sizeof(mb)),
			    p.file);
		status_loads(cfg, stdout, NULL);
	}
	if (gone)
		rc = CLI_EXIT_FAILED;
out:
	if (parsed)
		mypos_release(&p);
	sbuf_release(&j);
	mysrv_binlogs_free(files, sizes, n);
	myconn_close(m);
	return rc;
}
