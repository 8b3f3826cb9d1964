#!/usr/bin/env python3
"""header-index.py [TOP] - a header files its declarations under the source
file that defines them ("/* walstream.c */" opens a section); a function
declared in a section must be defined in that file, so a reader who
follows the header's index lands on the code. Inline functions defined
in the header itself are skipped. Prints each declaration filed under the
wrong file and exits 1 when there is one."""
import os
import re
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."
SKIP = ("build", "tests", ".git")
SECTION = re.compile(r"^/\* ([\w/.-]+\.c)\b")
DECL = re.compile(r"^(?:[A-Za-z_][\w \*]*?[\s\*])?\*?(\w+)\(")
KEYWORDS = {"if", "while", "return", "sizeof", "for", "switch"}


def find_source(hdir, name):
    for cand in (os.path.join(hdir, name), os.path.join(top, name)):
        if os.path.exists(cand):
            return cand
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith(SKIP)]
        if os.path.basename(name) in files:
            return os.path.join(root, os.path.basename(name))
    return None


bad = checked = 0
cache = {}
for root, dirs, files in os.walk(top):
    dirs[:] = [d for d in dirs if not d.startswith(SKIP)]
    for f in sorted(files):
        if not f.endswith(".h"):
            continue
        path = os.path.join(root, f)
        section = None
        inline = False
        for no, line in enumerate(open(path, encoding="utf-8"), 1):
            m = SECTION.match(line)
            if m:
                section = m.group(1)
                continue
            if line.startswith("static inline"):
                inline = True
                continue
            if section is None or line[:1] in ("#", " ", "\t", "/", "*", "{", "}"):
                continue
            m = DECL.match(line)
            if not m or m.group(1) in KEYWORDS:
                continue
            if inline:	# the name line of an inline definition
                inline = False
                continue
            name = m.group(1)
            src = find_source(root, section)
            if src is None:
                print(f"{path}:{no}: section '{section}' names no file")
                bad += 1
                section = None
                continue
            if src not in cache:
                cache[src] = open(src, encoding="utf-8").read()
            checked += 1
            if not re.search(r"(?m)^\*?" + re.escape(name) + r"\(", cache[src]):
                print(f"{path}:{no}: {name} is filed under {section}, "
                      "which does not define it")
                bad += 1
print(f"{checked} declarations checked, {bad} misfiled")
sys.exit(1 if bad or checked < 100 else 0)
