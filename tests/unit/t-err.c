/*
 * t-err - struct p2o_err: the code and message a failure carries to main.c.
 */
#include <string.h>

#include "err.h"
#include "p2o.h"
#include "tap.h"

int
main(void)
{
	struct p2o_err e;
	char big[2 * P2O_ERR_MAX];

	p2o_err_clear(&e);
	ok(e.code == 0 && e.msg[0] == '\0', "clear: no code, no message");
	ok(p2o_fail(&e, P2O_EXIT_REFUSED, "table '%s' has no key", "t") == -1,
	    "fail returns -1");
	is_int(e.code, P2O_EXIT_REFUSED, "with the code");
	is_str(e.msg, "table 't' has no key", "and the message");
	p2o_err_prefix(&e, "loading '%s'", "public.t");
	is_str(e.msg, "loading 'public.t': table 't' has no key",
	    "a prefix goes before the message");
	is_int(e.code, P2O_EXIT_REFUSED, "and keeps the code");

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	p2o_fail(&e, P2O_EXIT_TEMPFAIL, "%s", big);
	is_int(strlen(e.msg), P2O_ERR_MAX - 1, "a long message is cut");
	p2o_err_prefix(&e, "%s", big);
	is_int(strlen(e.msg), P2O_ERR_MAX - 1, "a long prefix is cut too");
	p2o_fail(&e, P2O_EXIT_TEMPFAIL, "lost");
	p2o_err_prefix(&e, "%.*s", P2O_ERR_MAX - 5, big);
	ok(strlen(e.msg) == P2O_ERR_MAX - 1 &&
	    strncmp(e.msg + P2O_ERR_MAX - 5, ": lo", 4) == 0,
	    "what fits of the old message stays after a long prefix");
	return done_testing();
}
