#!/usr/bin/env python3
"""Runs the README's quick start as written, so that it cannot go stale silently.

    quickstart.py README.md --base http://127.0.0.1:PORT --python VENV_PYTHON

Takes the section "## Your first sale in five minutes" of README.md and runs, in order and
in one bash session started in the current directory (where the server's `data/` is), every
fenced block marked `sh`, then hands every block marked `python` to VENV_PYTHON (with the
variables the shell exported). `http://127.0.0.1:8000` in the text is replaced by `--base`.

What a command must print is written under it as a comment, `# → expected`: the command's
output (trimmed) must match it, `…` standing for any text. A block's commands without such
a line must merely succeed (`set -euo pipefail`). In a python block, the `# → ` lines are
the block's expected output lines, in order.

A `pip install NAME==VERSION` line is not run: the version it pins must be the one
installed in VENV_PYTHON (the test installs the SDK from tests/clients/python-1.0/).

It prints one line per check and ends with `N passed, 0 failed` (exit 0), or stops at the
first failure with `N passed, 1 failed` (exit 1).
"""

import argparse
import re
import subprocess
import sys

SECTION = "## Your first sale in five minutes"
DEFAULT_BASE = "http://127.0.0.1:8000"
EXPECT = "# → "
# A whole quick start takes seconds; this only stops a hung one.
TIMEOUT_SECS = 240


def section(readme):
    lines = readme.splitlines()
    try:
        start = lines.index(SECTION)
    except ValueError:
        sys.exit(f"README.md has no section {SECTION!r}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    return lines[start + 1:end]


def blocks(lines):
    """(language, lines) of each fenced block."""
    out, lang, body = [], None, []
    for line in lines:
        if lang is None:
            m = re.match(r"^```(\w*)\s*$", line)
            if m:
                lang, body = m.group(1) or "text", []
        elif line.startswith("```"):
            out.append((lang, body))
            lang = None
        else:
            body.append(line)
    if lang is not None:
        sys.exit("an unclosed code block in the quick start")
    return out


def complete(lines):
    """Whether `lines` make a whole shell command: no quote or `$(`/`(` left open and no
    trailing backslash (a JSON body may span lines inside its quotes)."""
    single = double = False
    depth = 0
    text = "\n".join(lines)
    i = 0
    while i < len(text):
        c = text[i]
        if single:
            single = c != "'"
        elif c == "\\" and not single:
            i += 1
        elif double:
            double = c != '"'
        elif c == "'":
            single = True
        elif c == '"':
            double = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1
    return not single and not double and depth <= 0 and not text.endswith("\\")


def commands(body):
    """(command lines, expected output or None) of a shell block."""
    out, current = [], []
    for line in body:
        if line.startswith(EXPECT):
            if not out or out[-1][1] is not None or current:
                sys.exit(f"an expected output that follows no command: {line!r}")
            out[-1] = (out[-1][0], line[len(EXPECT):])
            continue
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current.append(line)
        if complete(current):
            out.append((current, None))
            current = []
    if current:
        sys.exit(f"an unfinished command in the quick start: {current!r}")
    return out


def glob(expected):
    """A bash pattern: the expected text literally, `…` matching anything."""
    parts = expected.split("…")
    return "*".join("'" + p.replace("'", "'\\''") + "'" for p in parts)


def quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def script(blks, base, python):
    out = [
        "set -euo pipefail",
        "__passed=0",
        "trap 'echo \"FAILED: a command exited with $? (script line $LINENO)\"; "
        "echo \"$__passed passed, 1 failed\"' ERR",
        "__check() {  # label, output, matched (0/1), expected",
        '  if [[ $3 == 1 ]]; then __passed=$((__passed + 1)); echo "ok: $1";',
        '  else echo "FAILED: $1"; echo "  expected: $4"; echo "  got: $2";',
        '       echo "$__passed passed, 1 failed"; exit 1; fi',
        "}",
    ]
    for lang, body in blks:
        text = [line.replace(DEFAULT_BASE, base) for line in body]
        if lang == "sh":
            for cmd, expected in commands(text):
                first = cmd[0].strip()
                m = re.match(r"^pip install (\S+)==(\S+)$", first)
                if m:
                    name, version = m.groups()
                    out.append(
                        f"__v=$({quote(python)} -m pip show {quote(name)} 2>/dev/null"
                        " | sed -n 's/^Version: //p')")
                    out.append(
                        f"[[ $__v == {quote(version)} ]] && __m=1 || __m=0; "
                        f"__check {quote('pinned: ' + first)} \"$__v\" $__m {quote(version)}")
                    continue
                joined = "\n".join(cmd)
                if expected is None:
                    out.append(joined)
                    out.append(f"__passed=$((__passed + 1)); echo {quote('ok: ' + first)}")
                else:
                    out.append(f"__out=$({joined}\n)")
                    out.append(
                        f"__out=$(printf '%s' \"$__out\" | sed -e 's/[[:space:]]*$//'); "
                        f"[[ $__out == {glob(expected)} ]] && __m=1 || __m=0; "
                        f"__check {quote(first)} \"$__out\" $__m {quote(expected)}")
        elif lang == "python":
            expected = [l[len(EXPECT):] for l in text if l.lstrip().startswith(EXPECT)]
            code = "\n".join(text)
            out.append(f"__out=$({quote(python)} - <<'__PYTHON__'\n{code}\n__PYTHON__\n)")
            for i, exp in enumerate(expected, 1):
                label = f"python block, output line {i}"
                out.append(
                    f"__line=$(printf '%s\\n' \"$__out\" | sed -n '{i}p' | sed -e 's/[[:space:]]*$//'); "
                    f"[[ $__line == {glob(exp)} ]] && __m=1 || __m=0; "
                    f"__check {quote(label)} \"$__line\" $__m {quote(exp)}")
    out.append('echo "$__passed passed, 0 failed"')
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("readme")
    p.add_argument("--base", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--print", action="store_true", help="print the script, run nothing")
    args = p.parse_args()
    with open(args.readme, encoding="utf-8") as f:
        blks = [b for b in blocks(section(f.read())) if b[0] in ("sh", "python")]
    if not blks:
        sys.exit("the quick start has no sh or python block")
    text = script(blks, args.base.rstrip("/"), args.python)
    if args.print:
        print(text)
        return 0
    try:
        run = subprocess.run(["bash", "-c", text], timeout=TIMEOUT_SECS)
    except subprocess.TimeoutExpired:
        print(f"the quick start did not finish within {TIMEOUT_SECS} s")
        print("0 passed, 1 failed")
        return 1
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
