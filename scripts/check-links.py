#!/usr/bin/env python3
"""The documentation's links resolve: every relative link in README.md and docs/*.md must
name a file or directory in the repository, and no text may point outside it (`../shared`,
a path above the repository root). Run by `.ci/run`; exits 1 naming each broken link.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
OUTSIDE = re.compile(r"\.\./shared|/work/")


def documents():
    yield os.path.join(ROOT, "README.md")
    docs = os.path.join(ROOT, "docs")
    for r, _, files in os.walk(docs):
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(r, f)


def main():
    problems = []
    count = 0
    for path in documents():
        rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        # Code blocks hold commands and output, not links.
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                problems.append(f"{rel}:{n}: points outside the repository: {line.strip()}")
        for m in LINK.finditer(prose):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            count += 1
            file_part = target.split("#", 1)[0]
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            if not resolved.startswith(ROOT + os.sep) and resolved != ROOT:
                problems.append(f"{rel}: link outside the repository: {target}")
            elif not os.path.exists(resolved):
                problems.append(f"{rel}: broken link: {target}")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} documentation link problem(s)")
        return 1
    print(f"links: ok ({count} relative links in README.md and docs/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
