/*
 * t-ckpt-lsn - the LSN text ckpt stores and parses: "%X/%X", hi << 32 | lo.
 */
#include <stdint.h>
#include <string.h>

#include "../../ckpt/ckpt.h"
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

	ok(ckpt_lsn_parse("16/B374D848", &pos) == 0, "16/B374D848 parses");
	is_int(pos, 0x16B374D848ULL, "to hi << 32 | lo");
	ok(ckpt_lsn_parse("0/15c2a48", &pos) == 0 && pos == 0x15C2A48,
	    "lower case hex");
	ok(ckpt_lsn_parse("FFFFFFFF/FFFFFFFF", &pos) == 0 &&
	    pos == UINT64_MAX, "the largest");
	ok(ckpt_lsn_parse("0/0", &pos) == 0 && pos == 0, "zero");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pos = 42;
		ok(ckpt_lsn_parse(bad[i], &pos) == -1 && pos == 42,
		    "'%s' is refused and changes nothing", bad[i]);
	}
	ok(ckpt_lsn_parse(NULL, &pos) == -1, "NULL is refused");

	ckpt_lsn_format(0x16B374D848ULL, buf, sizeof(buf));
	is_str(buf, "16/B374D848", "format: upper case, no padding");
	ckpt_lsn_format(22817480, buf, sizeof(buf));
	is_str(buf, "0/15C2AC8", "format of framing.md's example position");
	ckpt_lsn_format(UINT64_MAX, buf, sizeof(buf));
	is_str(buf, "FFFFFFFF/FFFFFFFF", "format of the largest");
	ok(ckpt_lsn_parse(buf, &pos) == 0 && pos == UINT64_MAX, "round trip");
	return done_testing();
}
