#!/usr/bin/env python3
"""docs-check.py TOP PG2OSYNC-BINARY - every guide's links, commands and
configuration keys exist. Prints "ok: ..." or "FAIL: ..." lines and a last
line "N failed"; exits 1 when anything failed.

Files checked: README.md and docs/*.md.
- links: every relative link names a file that exists, and its #anchor a
  heading of that file (GitHub's rule: lowercased, punctuation but - and _
  dropped, spaces to -); a bare #anchor names a heading of the same file.
- commands: every `pg2osync VERB ...` in a code block or inline code: VERB is
  one `pg2osync --help` lists, and every --option on it is one that
  `pg2osync VERB --help` names.
- keys: every key of a ```yaml block whose top level is a section of the
  configuration (source, target, sync, ...), and every dotted key written
  in inline code (`engine.batch_size`, `sync.<name>.where`), is a key of
  lib's key tables: a path such as sync.*.children[].table, as
  `--keys tests/helper/config-keys` prints them; without that helper they
  are read from the source text of lib/config*.c (the sections table, each
  cs_node array, the .keys, .elem and .alt links).

  docs-check.py [--keys CONFIG-KEYS-BINARY] TOP PG2OSYNC-BINARY
"""
import os
import re
import subprocess
import sys

import yaml

args = sys.argv[1:]
keys_cmd = None
if len(args) == 4 and args[0] == "--keys":
    keys_cmd, args = args[1], args[2:]
top, binary = args[0], args[1]
fails = 0


def check(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        fails += 1


# --- the key tables, from lib/config*.c ------------------------------------
src = ""
for f in sorted(os.listdir(os.path.join(top, "lib"))):
    if f.startswith("config") and f.endswith(".c"):
        src += open(os.path.join(top, "lib", f)).read() + "\n"
src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
arrays, singles = {}, {}
for m in re.finditer(r"struct cs_node (\w+)\[\] = \{(.*?)\n\};", src, re.S):
    entries = []
    for e in re.finditer(r"\{\s*\"(\w+)\",\s*(CS_\w+)(.*?)\}(?=,\s*(?:\{|$))", m.group(2) + ",", re.S):
        entries.append((e.group(1), e.group(2), e.group(3)))
    arrays[m.group(1)] = entries
for m in re.finditer(r"struct cs_node (\w+) = \{\s*NULL,\s*(CS_\w+)(.*?)\};", src, re.S):
    singles[m.group(1)] = (m.group(2), m.group(3))


def link(body, what):
    r = re.search(r"\." + what + r"\s*=\s*&?(\w+)", body)
    return r.group(1) if r else None


keys = set()


def walk_node(prefix, kind, body, stack):
    """the node at prefix (its own key already in keys)"""
    k = link(body, "keys")
    if kind == "CS_STRUCT" and k in arrays:
        walk_array(prefix, k, stack)
    elem = link(body, "elem")
    if kind in ("CS_MAP", "CS_LIST") and elem in singles:
        ek, eb = singles[elem]
        sub = prefix + (".*" if kind == "CS_MAP" else "[]")
        keys.add(sub)
        walk_node(sub, ek, eb, stack)
    alt = link(body, "alt")
    if alt in singles:
        walk_node(prefix, *singles[alt], stack)


def walk_array(prefix, name, stack=()):
    # a table met again inside itself (a child's children, there to be
    # refused by name) is listed, not entered
    if name in stack:
        return
    for key, kind, body in arrays[name]:
        path = f"{prefix}.{key}" if prefix else key
        keys.add(path)
        walk_node(path, kind, body, stack + (name,))


if keys_cmd:
    # tests/helper/config-keys walks the tables themselves, in C
    keys = set(subprocess.run([keys_cmd], capture_output=True, text=True, check=True).stdout.split())
    origin = keys_cmd
else:
    walk_array("", "sections")
    origin = "the source text of lib/config*.c"
check(len(keys) > 80 and "sync.*.children[].table" in keys and "engine.batch_size" in keys,
      f"the key tables, from {origin}: {len(keys)} key paths")


def key_ok(path):
    """path: a.b.c as a document writes it, names of map entries included"""
    parts = path.split(".")

    def rec(prefix, rest):
        if not rest:
            return prefix in keys
        head = rest[0]
        for cand in (head, "*"):
            p = f"{prefix}.{cand}" if prefix else cand
            if p in keys and rec(p, rest[1:]):
                return True
            if p + "[]" in keys and rec(p + "[]", rest[1:]):
                return True
        return False
    return rec("", parts)


# --- the verbs ----------------------------------------------------------------
def run(*a):
    r = subprocess.run([binary, *a], capture_output=True, text=True)
    return r.stdout + r.stderr


top_help = run("--help")
verbs = set(re.findall(r"^\s{2,}([a-z][a-z-]+)\s", top_help, re.M))
check(len(verbs) >= 10, f"pg2osync --help lists {len(verbs)} verbs")
verb_help = {}


def flags_of(verb):
    if verb not in verb_help:
        verb_help[verb] = set(re.findall(r"(--[a-z][a-z-]*)", run(verb, "--help")))
    return verb_help[verb]


# --- the documents ------------------------------------------------------------
docs = ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(top, "docs"))
                              if f.endswith(".md"))


def slug(h):
    h = re.sub(r"<[^>]+>", "", h).strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    text = open(path).read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    seen, out = {}, set()
    for h in re.findall(r"^#{1,6}\s+(.*)$", text, re.M):
        s = slug(h)
        n = seen.get(s, 0)
        out.add(s if n == 0 else f"{s}-{n}")
        seen[s] = n + 1
    return out


def blocks(text):
    """the fenced code blocks of a Markdown text: (language, body)"""
    out, lang, body = [], None, []
    for line in text.splitlines():
        m = re.match(r"^\s*```\s*([\w-]*)\s*$", line)
        if m and lang is None:
            lang, body = m.group(1), []
        elif m and not m.group(1):
            out.append((lang, "\n".join(body) + "\n"))
            lang = None
        elif lang is not None:
            body.append(line)
    return out


SECTIONS = {"source", "target", "sync", "engine", "metrics", "api", "log"}
for doc in docs:
    path = os.path.join(top, doc)
    text = open(path).read()
    nolinks = re.sub(r"```.*?```", "", text, flags=re.S)
    nlinks = bad_links = 0
    for target in re.findall(r"\]\(([^)\s]+)\)", nolinks):
        if re.match(r"(https?|mailto):", target):
            continue
        nlinks += 1
        file, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            check(False, f"{doc}: link {target}: no file {os.path.relpath(dest, top)}")
            bad_links += 1
            continue
        if anchor and dest.endswith(".md") and anchor not in anchors(dest):
            check(False, f"{doc}: link {target}: no heading '#{anchor}' in {os.path.relpath(dest, top)}")
            bad_links += 1
    check(bad_links == 0, f"{doc}: {nlinks} links resolve")

    # commands: code blocks and inline code
    code = [b for lang, b in blocks(text) if lang in ("sh", "bash", "shell", "console")]
    # inline spans may wrap a line; tables hold them too
    code += [c.replace("\n", " ") for c in re.findall(r"`([^`]+)`", re.sub(r"```.*?```", "", text, flags=re.S))]
    ncmd = 0
    for chunk in code:
        for line in chunk.replace("\\\n", " ").splitlines():
            # a command starts a line, follows a pipe, ;, &&, $( or --, or
            # is run by its path (bin/pg2osync, /usr/bin/pg2osync)
            for m in re.finditer(r"(?:^\s*(?:\$\s+)?|[|;]\s*|&&\s*|\$\(\s*|--\s+|/)pg2osync\s+([a-z][a-z-]*)([^|;#&)]*)", line):
                verb, rest = m.group(1), m.group(2)
                if verb in ("yaml",):
                    continue
                ncmd += 1
                if verb not in verbs:
                    check(False, f"{doc}: 'pg2osync {verb}' is not a verb ({line.strip()[:80]})")
                    continue
                for flag in re.findall(r"(?:^|\s)(--[a-z][a-z-]*)", rest):
                    if flag not in flags_of(verb) and flag not in ("--help",):
                        check(False, f"{doc}: 'pg2osync {verb} {flag}': no such option in its --help")
    check(True, f"{doc}: {ncmd} pg2osync commands looked at")

    # keys: yaml blocks whose top level is the configuration's
    nkeys = 0
    for block in [b for lang, b in blocks(text) if lang == "yaml"]:
        try:
            doc_yaml = yaml.safe_load(re.sub(r"…", "x", block))
        except yaml.YAMLError as e:
            check(False, f"{doc}: a yaml block does not parse: {e}")
            continue
        if not isinstance(doc_yaml, dict):
            continue
        # a fragment of one section (its keys indented under a section
        # name elsewhere) is checked under that section when it is one
        roots = [(k, v) for k, v in doc_yaml.items()]
        if not all(k in SECTIONS for k, _ in roots):
            first = list(doc_yaml)[0]
            if isinstance(doc_yaml.get(first), dict) and all(
                    isinstance(v, dict) and "table" in v for v in doc_yaml.values()):
                roots = [("sync", doc_yaml)]
            else:
                continue

        def walk(prefix, v):
            global nkeys
            if isinstance(v, dict):
                for k, sub in v.items():
                    p = f"{prefix}.{k}"
                    nkeys += 1
                    if not key_ok(p):
                        check(False, f"{doc}: key {p} is in no key table")
                    else:
                        walk(p, sub)
            elif isinstance(v, list):
                for e in v:
                    if isinstance(e, dict):
                        walk(prefix, e)
        for k, v in roots:
            nkeys += 1
            if not key_ok(k):
                check(False, f"{doc}: section {k} is not one")
            walk(k, v)
    # dotted keys in inline code
    for ref in re.findall(r"`((?:source|target|sync|engine|metrics|api|log)\.[a-z_<>.*]+)`", nolinks):
        ref = re.sub(r"<[^>]+>", "x", ref).rstrip(".")
        nkeys += 1
        if "*" in ref:
            # a family of keys (source.reconnect_*): one must exist
            pat = re.compile(re.escape(ref).replace(r"\*", "[a-z_]*") + "$")
            if not any(pat.match(re.sub(r"\.\*(?=\.|$)", ".x", k).replace("[]", "")) for k in keys):
                check(False, f"{doc}: no key matches `{ref}`")
            continue
        if not key_ok(ref):
            check(False, f"{doc}: key `{ref}` is in no key table")
    check(True, f"{doc}: {nkeys} configuration keys looked at")

print(f"{fails} failed")
sys.exit(1 if fails else 0)
