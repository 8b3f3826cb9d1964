/*
 * t-capture-start.c - the rule every capture applies to its start on the
 * command line (lib/capture.c, capture_start_token): --start-token is a
 * number without a sign and only beside --start-pos (64), defaults to
 * the position's own coordinate, and must equal it (an LSN) or be at
 * least it (a MySQL generation base); anything else is a checkpoint that
 * disagrees with itself (66).
 */
#include <stdint.h>
#include <string.h>

#include "capture.h"
#include "p2o.h"
#include "tap.h"

/* the rule's verdict on pos and token: the exit code (0 accepted), with
 * the token it settled on into *token */
static int
verdict(const char *pos, const char *token, uint64_t coord, int exact,
    uint64_t *out, char *msg, size_t msglen)
{
	struct capture_args a;
	struct p2o_err e;

	memset(&a, 0, sizeof(a));
	a.pos = pos;
	a.token = token;
	p2o_err_clear(&e);
	*out = 12345;
	if (capture_start_token(&a, coord, exact, out, &e) == 0)
		return 0;
	snprintf(msg, msglen, "%s", e.msg);
	return e.code;
}

int
main(void)
{
	char msg[P2O_ERR_MAX] = "";
	uint64_t t;

	is_int(verdict(NULL, NULL, 0, 1, &t, msg, sizeof(msg)), 0,
	    "no start at all: accepted");
	is_int(t, 0, "... and the token is 0");
	is_int(verdict("0/16B3748", NULL, 0x16B3748, 1, &t, msg, sizeof(msg)),
	    0, "a position alone: accepted");
	is_int(t, 0x16B3748, "... its token is its own coordinate");
	is_int(verdict("0/10", "16", 16, 1, &t, msg, sizeof(msg)), 0,
	    "an exact rule: the token equal to the position is taken");
	is_int(verdict("0/10", "17", 16, 1, &t, msg, sizeof(msg)),
	    P2O_EXIT_CHECKPOINT, "an exact rule: another token is refused "
	    "(66)");
	ok(strstr(msg, "disagrees with itself") != NULL &&
	    strstr(msg, "is not the position") != NULL, "... saying so: %s",
	    msg);
	is_int(verdict("b.000004:400", "3", 4000, 0, &t, msg, sizeof(msg)),
	    P2O_EXIT_CHECKPOINT, "an at-least rule: a token below the "
	    "coordinate is refused (66)");
	ok(strstr(msg, "is below the position") != NULL, "... saying so: %s",
	    msg);
	is_int(verdict("b.000004:400", "4000", 4000, 0, &t, msg, sizeof(msg)),
	    0, "an at-least rule: the coordinate itself is taken");
	is_int(verdict("b.000004:400", "1099511631776", 4000, 0, &t, msg,
	    sizeof(msg)), 0, "an at-least rule: a token above it is taken");
	is_int(t, 1099511631776ULL, "... and is the number positions "
	    "continue from");
	is_int(verdict(NULL, "5", 0, 0, &t, msg, sizeof(msg)), P2O_EXIT_USAGE,
	    "a token without --start-pos is a bad command line (64)");
	ok(strstr(msg, "needs --start-pos") != NULL, "... saying so: %s", msg);
	is_int(verdict(NULL, "5", 0, 1, &t, msg, sizeof(msg)), P2O_EXIT_USAGE,
	    "... by the exact rule too");
	is_int(verdict("0/10", "-5", 16, 1, &t, msg, sizeof(msg)),
	    P2O_EXIT_USAGE, "a signed token is no number (64), not a huge "
	    "one that disagrees");
	is_int(verdict("0/10", "+16", 16, 1, &t, msg, sizeof(msg)),
	    P2O_EXIT_USAGE, "a plus sign neither");
	is_int(verdict("0/10", " 16", 16, 1, &t, msg, sizeof(msg)),
	    P2O_EXIT_USAGE, "nor a blank before it");
	is_int(verdict("0/10", "16x", 16, 1, &t, msg, sizeof(msg)),
	    P2O_EXIT_USAGE, "nor trailing text");
	is_int(verdict("0/10", "", 16, 1, &t, msg, sizeof(msg)),
	    P2O_EXIT_USAGE, "nor an empty token");
	is_int(verdict("0/10", "99999999999999999999", 16, 0, &t, msg,
	    sizeof(msg)), P2O_EXIT_USAGE, "nor one past 64 bits");
	return done_testing();
}
