#!/usr/bin/env bash
# The guides say only what exists: README.md is a front page under 8 kB,
# and in README.md and docs/*.md every relative link resolves (file and
# heading), every `pg2osync VERB --option` is a verb of `pg2osync --help`
# with an option its own --help names, and every configuration key (the
# yaml blocks, `section.key` in inline code) is a key of lib's key tables
# (as tests/helper/config-keys prints them where the build has it, else
# docs-check.py reads lib/config*.c). A copy of the
# tree with one wrong link, verb, option and key each must fail, so the
# checker cannot pass by seeing nothing. Runs without servers.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
P2O_BIN=${P2O_BIN:-$TOP/build/bin}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
_n=0 _fail=0
ok() { _n=$((_n + 1)); if [ "$1" -eq 0 ]; then echo "ok $_n - ${*:2}"; else echo "not ok $_n - ${*:2}"; _fail=$((_fail + 1)); fi; return "$1"; }
python3 -c 'import yaml' 2>/dev/null || python3 -m pip install -q --disable-pip-version-check pyyaml > /dev/null 2>&1

size=$(stat -c %s "$TOP/README.md")
ok $([ "$size" -lt 8192 ]; echo $?) "README.md is $size bytes (under 8192)"
# the key paths from tests/helper/config-keys when the build has it, else
# docs-check.py reads them from lib's source text
keys=()
[ -x "$P2O_BIN/../tests/config-keys" ] && keys=(--keys "$P2O_BIN/../tests/config-keys")
python3 "$TOP/tests/helper/docs-check.py" "${keys[@]}" "$TOP" "$P2O_BIN/pg2osync" > "$T/check" 2>&1
st=$?
ok $st "every link, command and key of README.md and docs/*.md exists ($(tail -n 1 "$T/check"))"
grep -E '^(FAIL|ok: .*(resolve|looked at|key paths|verbs))' "$T/check" | sed 's/^/#   /'

# the checker fails where it should
mkdir -p "$T/tree/docs" "$T/tree/lib"
cp "$TOP"/lib/config*.c "$T/tree/lib/"
printf '# A front page\n\nNothing here.\n' > "$T/tree/README.md"
cat > "$T/tree/docs/bad.md" <<'MD'
# Bad

[a guide](nowhere.md), [a heading](../README.md#no-such-heading).

```sh
pg2osync frobnicate -c x.yaml
pg2osync status --no-such-option
```

```yaml
source:
  url_env: P2O_SOURCE_URL
  slot: pg2osync
sync:
  items:
    table: public.items
    colums: [id]
```

The batch is `engine.batch_sise`.
MD
python3 "$TOP/tests/helper/docs-check.py" "$T/tree" "$P2O_BIN/pg2osync" > "$T/bad" 2>&1
n=$(grep -c '^FAIL' "$T/bad")
# two links (and their file's summary), the verb, the option, three keys
ok $([ "$n" = 8 ]; echo $?) "a guide with two bad links, a bad verb, a bad option and three bad keys fails 8 times ($n)"
[ "$n" = 8 ] || sed 's/^/#   /' "$T/bad"
echo "1..$_n"
[ "$_fail" -eq 0 ]
