/*
 * t-lsn - the LSN text capture-pg and ckpt store and parse: "%X/%X", hi << 32 | lo.
 */
#include <stdint.h>
#include <string.h>

#include "lsn.h"
#include "tap.h"

int
main(void)
{
	static const char *const bad[] = {
		"", "/", "0/", "/0", "0//0", "0/0/0", "123456789/0",
		"0/123456789", "g/0", "0/0 ", " 0/0", "-1/0", "0x1/0", "0:0",
	};
	uint64_t pos = 0;
	char buf[32];
	size_t i;

	ok(lsn_parse("16/B374D848", &pos) == 0, "16/B374D848 parses");
	is_int(pos, 0x16B374D848ULL, "to hi << 32 | lo");
	ok(lsn_parse("0/15c2a48", &pos) == 0 && pos == 0x15C2A48,
	    "lower case hex");
	ok(lsn_parse("FFFFFFFF/FFFFFFFF", &pos) == 0 &&
	    pos == UINT64_MAX, "the largest");
	ok(lsn_parse("0/0", &pos) == 0 && pos == 0, "zero");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pos = 42;
		ok(lsn_parse(bad[i], &pos) == -1 && pos == 42,
		    "'%s' is refused and changes nothing", bad[i]);
	}
	ok(lsn_parse(NULL, &pos) == -1, "NULL is refused");

	lsn_format(0x16B374D848ULL, buf);
	is_str(buf, "16/B374D848", "format: upper case, no padding");
	lsn_format(22817480, buf);
	is_str(buf, "0/15C2AC8", "format of framing.md's example position");
	lsn_format(UINT64_MAX, buf);
	is_str(buf, "FFFFFFFF/FFFFFFFF", "format of the largest");
	ok(lsn_parse(buf, &pos) == 0 && pos == UINT64_MAX, "round trip");
	return done_testing();
}
