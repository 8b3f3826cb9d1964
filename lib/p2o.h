/*
 * p2o.h - constants every pg2osync tool shares: file descriptor roles, the
 * control protocol version and the exit codes documented in framing.md §8.
 */
#ifndef P2O_H
#define P2O_H

#define P2O_VERSION		"0.1.0"
#define P2O_PROTO		2	/* control/frame protocol, sent in hello */

#define P2O_FD_IN		0
#define P2O_FD_OUT		1
#define P2O_FD_LOG		2
#define P2O_FD_CTL		3	/* supervisor control channel, optional */

/* exit codes: framing.md §8; "permanent" ones stop the supervisor */
#define P2O_EXIT_OK		0
#define P2O_EXIT_INTERNAL	1	/* temporary */
#define P2O_EXIT_USAGE		64	/* permanent */
#define P2O_EXIT_DATA		65	/* permanent: malformed input frame/event */
#define P2O_EXIT_CHECKPOINT	66	/* permanent: foreign or stale checkpoint */
#define P2O_EXIT_LOST		67	/* permanent: the position is gone */
#define P2O_EXIT_REFUSED	69	/* permanent: server setting/privilege/table */
#define P2O_EXIT_TEMPFAIL	75	/* temporary: connection lost, target down */
#define P2O_EXIT_AUTH		77	/* permanent: authentication failed */
#define P2O_EXIT_CONFIG		78	/* permanent: invalid configuration */

/* 1 if the exit code means "do not restart" */
int	p2o_exit_permanent(int code);
const char *p2o_exit_name(int code);

#endif
