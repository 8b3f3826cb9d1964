/*
 * cli.h - pg2osync, the operator's command: one verb per file, each a
 * struct verb (its options as data, its --help, its exit codes and what
 * it runs), listed in main.c's table. Adding a verb is a file and a row.
 *
 * Modules:
 *   main.c        the verb table and the dispatch; the only exit
 *   opts.c        a verb's options as a table: getopt and --help from it
 *   tools.c       the other pg2osync programs: where they are, running
 *                 one for its output, exec
 *   init.c, validate.c, setup_sql.c, bootstrap.c, status.c,
 *   drop_slot.c, run.c, rejects.c,
 *   verify.c (+ verify_doc.c, verify_rows.c, verify_settle.c),
 *   resnapshot.c,
 *   reconcile.c, reindex.c, switch_alias.c: the verbs
 *   relay.c       rows written as a load writes them (resnapshot,
 *                 reindex)
 *   writes.c      the versioned writes and deletes verify --repair,
 *                 reconcile --delete and rejects --replay send, through
 *                 lib/target.c's one blocking write
 *
 * validate's report and checks are lib/validate's (validate/check.h),
 * which the supervisor's reload runs too. What a verb does to the source
 * server is the source's operation (source_ops.h: lib/pg, lib/mysql);
 * the verb parses its options and prints.
 *
 * No verb that looks (validate, status, setup-sql) writes to the source
 * or the target. No password reaches an argv, a log line or a file a
 * verb writes: URLs come from the environment variable the configuration
 * names.
 */
#ifndef CLI_H
#define CLI_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config.h"
#include "err.h"
#include "validate/check.h"
#include "msg.h"
#include "sbuf.h"
#include "target.h"

/* exit codes of the verbs beyond framing.md §8's */
#define CLI_EXIT_FAILED	1	/* a check failed, a limit was passed, a
				 * wait ran out */

/* one option of a verb */
struct cli_opt {
	const char *name;	/* the long name: "config" */
	int	 key;		/* its short letter, or a value above 255 */
	const char *arg;	/* the argument's name ("FILE"), NULL: a flag */
	const char *help;	/* one line (wrapped in --help) */
};

struct verb {
	const char *name;	/* "validate" */
	const char *summary;	/* one line for pg2osync --help */
	const char *synopsis;	/* "[-c FILE] [--json]" */
	const char *about;	/* what it does, for --help */
	const struct cli_opt *opts;	/* ends with { NULL } */
	const char *exits;	/* "0 …\n1 …\n", for --help */
	int	(*run)(const struct verb *, int argc, char **argv);
	/* with --config-dir (main.c): how it takes a directory of several
	 * sources and no --source */
	enum cli_dir {
		CLI_DIR_ONE,	/* refused, naming the sources */
		CLI_DIR_EACH,	/* run once per source, in name order */
		CLI_DIR_OWN,	/* the verb reads --config-dir itself (run
				 * hands it to the supervisor, init writes a
				 * file into it) */
	} dir;
};

/* main.c */
extern const struct verb *const cli_verbs[];

/* opts.c */

#define CLI_DEFAULT_CONFIG	"pg2osync.yaml"
/* the options every verb has: -c/--config, or --config-dir and
 * --source (main.c takes them off argv and hands the verb -c FILE), and
 * -h/--help */
#define CLI_OPT_CONFIG	{ "config", 'c', "FILE", "the configuration " \
	"(default " CLI_DEFAULT_CONFIG ")" }
#define CLI_OPT_CONFIG_DIR	0x7f01
#define CLI_OPT_SOURCE		0x7f02
#define CLI_OPTS_DIR	{ "config-dir", CLI_OPT_CONFIG_DIR, "DIR", \
	"a directory of configurations, one source each (*.yaml)" }, \
	{ "source", CLI_OPT_SOURCE, "NAME", "with --config-dir: the source " \
	"to act on (source.name, or the stream's identity)" }
#define CLI_OPT_HELP	{ "help", 'h', NULL, "this text" }

/*
 * The next option of argv by v's table: its key (> 0) with *arg (NULL
 * for a flag); CLI_OPT_END after the last; CLI_OPT_HELP_DONE once --help
 * was answered; CLI_OPT_BAD for a bad option or an operand (no verb takes
 * one), said on stderr with a pointer to --help. A verb's loop:
 *
 *	while ((ch = cli_getopt(v, argc, argv, &arg)) > 0)
 *		...;
 *	if (ch < 0)
 *		return cli_opt_exit(ch);
 */
#define CLI_OPT_END		0
#define CLI_OPT_HELP_DONE	(-1)
#define CLI_OPT_BAD		(-2)
int	cli_getopt(const struct verb *, int argc, char **argv,
	    const char **arg);
/* the next cli_getopt starts a fresh scan (a verb run again, once per
 * source of a directory) */
void	cli_getopt_reset(void);
/* what main returns after a loop ended by ch < 0: 0 after --help, 64 */
int	cli_opt_exit(int ch);
void	cli_help(const struct verb *, FILE *);
/* a usage error: the message and the pointer to --help on stderr;
 * returns 64 */
int	cli_usage(const struct verb *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* a whole non-negative number of an option, or -1 with a usage message */
long long cli_number(const struct verb *, const char *opt, const char *s);
/* the configuration, its secrets resolved as asked: 0, or the exit code
 * after saying why (78, the loader's file:line message) */
int	cli_config(const char *path, unsigned secrets, struct config *);
/* the error as one line on stderr; returns its code */
int	cli_fail(const struct p2o_err *);

/* main.c: with --config-dir, what the set says beyond the file a verb
 * is given (NULL otherwise): the listener one file of it holds */
struct cli_set_view {
	const char *metrics_bind;
};
extern const struct cli_set_view *cli_set;

/* tools.c */

/* the path of a pg2osync program: beside this executable if it is there,
 * else the bare name for $PATH; heap */
char	*tool_path(const char *name);
/* run argv, its stdout into out (stdin /dev/null, stderr inherited): the
 * exit status (a signal: 128 + signo), or -1 with err */
int	tool_output(char *const argv[], struct sbuf *out, struct p2o_err *);
/* exec argv[0] as found by tool_path; returns only on failure (err) */
int	tool_exec(char **argv, struct p2o_err *);

/* status.c: the stored checkpoint, which status shows and other verbs
 * wait on */
struct ckpt_view {
	int	 known;		/* ckpt answered */
	int	 found;		/* a checkpoint is stored */
	uint64_t pos;
	char	*text;		/* on the heap, "" none: ckpt_view_release */
	char	 updated_at[64];
	char	 instance[160];	/* the process that wrote it, "" unknown */
	char	 why[P2O_ERR_MAX];	/* when it is not known */
};
/* what the supervisor running a source answers at its metrics
 * listener's /ready/<name> (metrics.bind, the file's or the set's) */
enum sup_view {
	SUP_NONE,	/* no listener configured: nobody to ask */
	SUP_UNASKED,	/* the request could not be made */
	SUP_DOWN,	/* nothing answers there: none runs */
	SUP_OTHER,	/* one runs there, not this source */
	SUP_RUNS,	/* it runs this source (halted, backing off or
			 * streaming: its answer) */
};
/* status.c: the answer, or why there is none, in buf */
enum sup_view supervisor_ask(const struct config *, char *buf, size_t len);
/* the stored checkpoint, through `ckpt get` */
void	status_checkpoint(const struct config *, struct ckpt_view *);
void	ckpt_view_release(struct ckpt_view *);

/* verify_doc.c: documents compared by content */

/* a digest of a document's content: members in any order, strings
 * however escaped, numbers as written or (by_value, for a target that
 * gives numbers back as it parsed them) by their value */
uint64_t vdoc_digest(struct jspan doc, int by_value);

/* one document the rows render, by index and id */
struct ventry {
	uint64_t h;		/* of the key */
	uint64_t digest;
	size_t	 koff;		/* its key in keys: "index\0id" */
	uint32_t klen;
	int	 seen;		/* a stored document has its key */
	int	 repair;	/* to be written again */
	size_t	 rec;		/* its write in recs, (size_t)-1: none kept */
};

struct vtab {
	int	 numbers_by_value;	/* digests compare numbers by value
					 * (the target's scan says so) */
	struct ventry *e;
	int	 n, cap;
	int	*slot;		/* open addressing, -1 empty */
	int	 nslot;
	struct sbuf keys, recs;
};

void	vtab_init(struct vtab *);
void	vtab_release(struct vtab *);
/* the document of an index operation: 0, or -1 when its index or id is
 * not a string that fits */
int	vtab_add(struct vtab *, const struct msg_op *);
/* and what a repair of entry e writes (the last rendering kept) */
void	vtab_keep(struct vtab *, struct ventry *e, const struct msg_op *);
/* the entry of a stored document, or NULL */
struct ventry *vtab_get(struct vtab *, struct jspan index, struct jspan id);
/* "index/id" for messages */
void	vtab_name(const struct vtab *, const struct ventry *, char *buf,
	    size_t len);
/* the write of a kept entry (spans into the table, version unset): 0, or
 * -1 when none was kept */
int	vtab_write(const struct vtab *, const struct ventry *,
	    struct target_write *);

/* a stored document no row renders (verify's and reconcile's orphans):
 * its index, id and routing kept raw */
struct orphan {
	size_t	 off;		/* index, id, routing raw in the buffer */
	size_t	 ilen, idlen, rlen;
};
struct olist {
	struct orphan *o;
	int	 n, cap;
	struct sbuf buf;
};
struct target_doc;
void	olist_init(struct olist *);
void	olist_release(struct olist *);
void	olist_add(struct olist *, const struct target_doc *);
/* the delete of orphan i, its routing kept (spans into the list, version
 * unset) */
void	olist_delete(const struct olist *, int i, struct target_write *);

/* every stored document of the indices (or globs) of the sections want
 * flags, each index once, to fn through the target's scan: 0, or -1 */
int	docs_scan(const struct config *, const unsigned char *want,
	    struct target_conn *, int (*fn)(void *, const struct target_doc *),
	    void *arg, uint64_t *requests, struct p2o_err *);

/* relay.c: rows written as a load writes them */

/* section s's table (with where: only the rows matching it) through the
 * loader, the shaper and the writer; into: the index to write to instead
 * of the section's (NULL: its own). Deletes are left out. *written counts
 * the documents sent, *dropped the deletes left out. 0, or -1 with err */
int	relay_rows(const struct config *, const struct sync_section *s,
	    const char *where, const char *into, uint64_t *written,
	    uint64_t *dropped, struct p2o_err *);

/* writes.c: the writes of verify's repairs, reconcile's deletes and
 * rejects' replays */

/* how long a verb's writes retry a failing request when the engine's
 * retry_max and retry_max_elapsed_ms set no limit */
#define CLI_WRITE_RETRY_MS	30000

/* "index/id" of raw JSON strings, for messages */
void	cli_doc_name(struct jspan index, struct jspan id, char *buf,
	    size_t len);
/* how a verb's writes retry: the engine's retry_backoff_ms, retry_max
 * and retry_max_elapsed_ms, bounded by CLI_WRITE_RETRY_MS without one */
void	cli_write_retry(const struct config *, struct target_retry *);
/* the n writes (each with its version) through the target's blocking
 * write, its requests counted in *requests; a line per key: "<done>:
 * index/id", or "not <done>: ..." with the target's reason (a newer
 * version held, a refusal, not taken in the retries); *fixed counts
 * those done. 0, or -1 with err when a request failed past the retries,
 * was refused, or the credentials were */
int	cli_send_writes(struct target_conn *, const struct config *,
	    const struct target_write *w, int n, const char *done, int *fixed,
	    uint64_t *requests, struct p2o_err *);

/* verify_settle.c: on a target without versions, the n documents a
 * repair wrote (w) compared with their rows read again, and written again
 * (at version) until they stand still, a few rounds at most; *moved: how
 * many still moved after the last. 0, or -1 with err */
int	verify_settle(const struct config *, struct target_conn *,
	    const struct target_write *w, int n, uint64_t version, int *moved,
	    uint64_t *requests, struct p2o_err *);

/* verify_rows.c: the rows as the pipeline renders them */

/* every row of cfg's tables read by the loader and shaped by the shaper
 * (the programs themselves, so the documents are the pipeline's own),
 * each index operation to fn (0, or -1 to stop); *rows counts them. 0,
 * or -1 with err (a program that failed: its exit) */
int	verify_rows(const struct config *,
	    int (*fn)(void *arg, const struct msg_op *), void *arg,
	    uint64_t *rows, struct p2o_err *);
/* the same with the loader's own arguments after its -c (lextra, NULL
 * ended, at most 12: a table, a scope), every index and delete operation
 * to fn with its frame; *rows counts the index operations */
struct frame;
int	shape_rows(const struct config *, char *const *lextra,
	    int (*fn)(void *arg, const struct frame *, const struct msg_op *),
	    void *arg, uint64_t *rows, struct p2o_err *);
/* which sections --table T names (all for NULL), and every one sharing
 * their index: a heap flag per section, or NULL when none is T */
unsigned char *rows_choose(const struct config *, const char *table);
/* argv with stdin from in (-1: /dev/null), stdout to out, fd 4 from load
 * (-1: none), every other descriptor closed: its pid, or -1 */
pid_t	rows_spawn(char *const argv[], int in, int out, int load);
/* its end: 0 when it exited 0, else -1 with err carrying its exit code */
int	rows_reap(pid_t pid, const char *name, struct p2o_err *);

#endif
