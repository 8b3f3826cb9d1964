#!/usr/bin/env python3
"""doc-keys.py KEYS MAN5 CONFIG_MD - the configuration's documentation
against its key tables. KEYS is what tests/helper/config-keys prints (one
path a line: source.url, sync.*.children[].table); MAN5 the roff source
of pg2osync.yaml(5); CONFIG_MD docs/config.md.

A key is named by its section, the key above it when it is nested (the
'sub'), and its own name: sync.*.children[].table is (sync, children,
table), source.url is (source, -, url).

In the man page a section is a .SH of its name in capitals, a sub a .SS
of its name inside it, and a key a bold word on the tag line of a .TP
there (.B, .BR's bold words, \\fB...\\fR); the DESCRIPTION names every
section in bold. In docs/config.md a section is a heading "## `name`", a
sub a heading "### `name`" inside it, and a key a `word` in the first
cell of a table row under that heading.

Prints one line per key a document lacks and per name a document gives
as a key that no table declares; exits 1 when there is one."""
import re
import sys


def parse_keys(path):
    """{(section, sub): {key, ...}}, the top sections in order"""
    scopes, tops = {}, []
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        # an element (sync.*, columns[]) is no key of its own
        if not line or line.endswith("*") or line.endswith("[]"):
            continue
        comps = [c.replace("[]", "") for c in line.split(".")
                 if c not in ("*", "")]
        if len(comps) == 1:
            tops.append(comps[0])
            scopes.setdefault((comps[0], None), set())
            continue
        sec = comps[0]
        sub = comps[-2] if len(comps) > 2 else None
        scopes.setdefault((sec, sub), set()).add(comps[-1])
    return scopes, tops


def roff_bold(line):
    """the bold words of one roff line"""
    words = []
    m = re.match(r'^\.(B|BR|BI|RB|IB)\s+(.*)$', line)
    if m:
        macro, rest = m.group(1), m.group(2)
        args = re.findall(r'"[^"]*"|\S+', rest)
        args = [a.strip('"') for a in args]
        if macro == "B":
            words += " ".join(args).split()
        else:
            first_bold = macro in ("BR", "BI")
            for i, a in enumerate(args):
                if (i % 2 == 0) == first_bold:
                    words += a.split()
    words += re.findall(r'\\fB(.*?)\\f[RPI]', line)
    words = [re.sub(r'\\-', '-', w) for w in words]
    return [w.strip(' ,;:') for w in words if w.strip(' ,;:')]


def parse_man(path, scopes, tops):
    found = {}
    desc = set()
    sec = sub = None
    in_desc = False
    lines = open(path, encoding="utf-8").read().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r'^\.SH\s+"?([^"]*)"?\s*$', line)
        if m:
            name = m.group(1).strip().lower()
            sec = name if (name, None) in scopes else None
            sub = None
            in_desc = name == "description"
            continue
        m = re.match(r'^\.SS\s+"?([^"]*)"?\s*$', line)
        if m:
            sub = m.group(1).strip()
            continue
        if in_desc:
            desc.update(roff_bold(line))
        if sec is None or line.strip() != ".TP" or i + 1 >= len(lines):
            continue
        for w in roff_bold(lines[i + 1]):
            found.setdefault((sec, sub), {})[w] = i + 2
    return found, desc


def parse_md(path, scopes):
    found = {}
    scope = None
    sec = None
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        m = re.match(r'^(#+)\s+(.*?)\s*$', line)
        if m:
            level, title = len(m.group(1)), m.group(2)
            t = re.fullmatch(r'`(\w+)`', title)
            if level == 2:
                sec = t.group(1) if t and (t.group(1), None) in scopes \
                    else None
                scope = (sec, None) if sec else None
            elif level == 3 and sec and t:
                scope = (sec, t.group(1))
            elif level >= 3:
                scope = None
            continue
        if scope is None or not line.startswith("|"):
            continue
        cells = line.strip().strip("|").split("|")
        if not cells or re.fullmatch(r'\s*:?-+:?\s*', cells[0]):
            continue
        for w in re.findall(r'`([^`]+)`', cells[0]):
            found.setdefault(scope, {})[w] = no
    return found


def compare(what, scopes, found, bad):
    for scope, want in sorted(scopes.items(), key=lambda x: (x[0][0],
                                                            x[0][1] or "")):
        have = found.get(scope, {})
        where = scope[0] + ("" if scope[1] is None else " / " + scope[1])
        for k in sorted(want - set(have)):
            print(f"{what}: key '{k}' of {where} is not documented there")
            bad.append(k)
    for scope, have in sorted(found.items(), key=lambda x: (x[0][0],
                                                           x[0][1] or "")):
        want = scopes.get(scope)
        where = scope[0] + ("" if scope[1] is None else " / " + scope[1])
        for k, line in sorted(have.items()):
            if want is None or k not in want:
                print(f"{what}:{line}: names '{k}' as a key of {where}, "
                      "which no key table declares")
                bad.append(k)


def main():
    if len(sys.argv) != 4:
        print(__doc__.splitlines()[0], file=sys.stderr)
        sys.exit(64)
    scopes, tops = parse_keys(sys.argv[1])
    # a section without keys of its own below it is no scope of tags
    scopes = {s: k for s, k in scopes.items() if k or s[1] is None}
    bad = []
    man, desc = parse_man(sys.argv[2], scopes, tops)
    compare(sys.argv[2], scopes, man, bad)
    for t in tops:
        if t not in desc:
            print(f"{sys.argv[2]}: the DESCRIPTION does not name section "
                  f"'{t}'")
            bad.append(t)
    compare(sys.argv[3], scopes, parse_md(sys.argv[3], scopes), bad)
    n = sum(len(k) for k in scopes.values())
    print(f"{n} keys in {len(scopes)} scopes; {len(bad)} problems")
    sys.exit(1 if bad else 0)


main()
