/*
 * stage.h - the skeleton every pg2osync program's main.c shares: the log
 * named for the tool, fd 3 held before anything opens a descriptor, SIGPIPE
 * ignored, the common options (-c, -h, -V) beside the program's own, the
 * signals it handles turned into flags and a byte on a self-pipe that its
 * one poll loop watches, the hello on fd 3, and the once-a-second stats
 * timer. What is left in a main.c is what the program does.
 *
 * A main.c reads:
 *
 *	if (stage_begin(&st, &spec, &args, argc, argv, &e) != STAGE_RUN)
 *		exit(stage_report(&e));
 *	... load the configuration (config_load_with), connect ...
 *	if (stage_hello(&st, &e) == -1)
 *		exit(stage_report(&e));
 *	for (;;) { poll(..., stage_sigfd() ...); stage_sigfd_drain();
 *		if (stage_signalled(STAGE_TERM)) ...; }
 *	stage_end(&st);
 *
 * Nothing here exits: errors come back as a struct p2o_err, and main.c
 * exits with the code stage_report hands it.
 */
#ifndef STAGE_H
#define STAGE_H

#include <getopt.h>
#include <signal.h>

#include "ctl.h"
#include "err.h"

/* the signals a program may ask for, each a flag of its own */
enum stage_sig {
	STAGE_TERM,	/* SIGTERM or SIGINT: stop (drain) */
	STAGE_HUP,	/* SIGHUP: reload */
	STAGE_CHLD,	/* SIGCHLD: a child ended (not when it stopped) */
	STAGE_NSIG
};
#define STAGE_SIG(s)	(1u << (s))

/* what stage_begin returns */
#define STAGE_RUN	0	/* go on: the program runs */
#define STAGE_EXIT	1	/* exit(stage_report(&e)) from main: --help or
				 * --version answered (code 0) or a bad command
				 * line (64), said already or in e's message */

struct stage_spec {
	const char *tool;	/* the log prefix, and the name in hello/stats */
	const char *usage;	/* the --help text; on stderr for a bad line */
	/* the program's own options, beside -c/--config, -h/--help and
	 * -V/--version; option() gets each (ch, val) and returns 0, or -1
	 * with e set (usually P2O_EXIT_USAGE and what is wrong) */
	const char *shortopts;
	const struct option *longopts;	/* ends with a zeroed entry */
	int	(*option)(void *arg, int ch, const char *val,
		    struct p2o_err *e);
	int	 operands;	/* arguments after the options it takes at most
				 * (ckpt's subcommand); more are a bad line */
	unsigned signals;	/* STAGE_SIG(STAGE_TERM) | ...: caught as flags;
				 * the others keep their disposition */
	int	 control;	/* 1: a stage of the pipeline, whose fd 3 may be
				 * the supervisor's channel (claimed at once,
				 * hello in stage_hello); 0: none (ckpt, which
				 * talks on stdin/stdout, and the supervisor) */
	int	 stats_ms;	/* the stats timer's period; 0: none */
	/* it also takes --config-dir DIR (st->cfgdir), a directory of
	 * configurations, instead of -c: one of the two is required */
	int	 config_dir;
};

struct stage {
	const struct stage_spec *spec;
	const char *cfgpath;	/* -c */
	const char *cfgdir;	/* --config-dir (spec->config_dir) */
	char	**operands;	/* the arguments after the options */
	int	 noperands;
	struct ctl ctl;		/* fd 3; inactive stand-alone */
	long long stats_at;	/* the next stats frame is due (now_ms) */
};

/*
 * log_init(tool), fd 3 claimed (spec->control), SIGPIPE ignored, the
 * command line read (arg is handed to spec->option), the handlers of
 * spec->signals installed. They do not restart interrupted calls: a stage
 * blocked in a client library's read sees the signal as EINTR, and a poll
 * is woken by the self-pipe either way. STAGE_RUN, or STAGE_EXIT with e.
 */
int	stage_begin(struct stage *, const struct stage_spec *, void *arg,
	    int argc, char **argv, struct p2o_err *e);
/* log e's message, if it has one, and return its code (main.c's exit) */
int	stage_report(const struct p2o_err *e);

/* the self-pipe's read end: poll it for POLLIN (-1 before stage_begin) */
int	stage_sigfd(void);
/* empty the self-pipe after a poll said it was readable */
void	stage_sigfd_drain(void);
/* 1 if the signal arrived since the last call, and forget it */
int	stage_signalled(enum stage_sig);
/* the flag itself, for a loop in a module that reads it (never cleared
 * by stage.c: the first delivery is what matters) */
volatile sig_atomic_t *stage_flag(enum stage_sig);

/* the hello on fd 3 (spec->control): 0, or -1 with e (75: the channel is
 * gone); stand-alone, 0 and nothing sent */
int	stage_hello(struct stage *, struct p2o_err *e);

/* the stats timer: stats_due says a stats frame may go now (spec->stats_ms
 * passed since the last, and a channel is there); stats_sent restarts the
 * period; stats_wait is the poll timeout until it is due (-1 without a
 * channel, or when nothing is waiting to be sent: changed is 0); a final
 * report goes out with stats_now, at once whatever the period */
int	stage_stats_due(const struct stage *, long long now_ms);
void	stage_stats_sent(struct stage *, long long now_ms);
int	stage_stats_wait(const struct stage *, long long now_ms, int changed);
void	stage_stats_now(struct stage *);

/* the control channel closed */
void	stage_end(struct stage *);

#endif
