#!/usr/bin/env python3
"""The layering rules of docs/ARCHITECTURE.md, checked over the source's `crate::` paths.

Run from anywhere: `python3 scripts/check-layers.py` (`-v` also prints every module's
imports). It exits 1 and names each breach:

- the top-level modules of `src/`, `actors/src` and `storage/src` form a DAG: no module
  imports, directly or through others, a module that imports it back;
- in `src/`, imports point down the layers of `LAYERS` (or stay within a layer), so that
  `app` never reaches the HTTP side and the state never reaches a handler;
- nothing outside `src/routes/` and the route table (`src/startup.rs`) imports
  `crate::routes`;
- the HTML pages (`src/web/`) are typed: no `serde_json`;
- no caller asks which engine the store is (`is_embedded`);
- no source file outside tests is over 1,000 lines;
- `src/app` speaks the domain: no `ApiError`, `loc!`, `HttpResponse` or `serde_json::Value`;
- Stripe's event types and field names appear in `src/payments` only;
- no `"usd"` outside the currency type;
- `read_barrier` is taken under `src/app` only (the use cases' reads), never by adapters.

Test code is left out: every `#[cfg(test)]` item (a test module, a test-only function,
use or impl, to its end), files marked `#![cfg(test)]`, files named `tests.rs` or
`*_tests.rs`, and `tests/` directories. Comments are left out too.
"""

import collections
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The layers of the server crate, top down; a module may import its own layer's modules
# (without a circle) and those of the layers below.
LAYERS = [
    ("wiring", {"main", "startup", "bench_fill"}),
    ("adapters", {"routes", "web", "oauth2", "openapi", "admin", "jobs", "webhooks",
                  "middleware", "http_io", "cors", "mail"}),
    ("request", {"extract", "credentials", "idempotency", "retention"}),
    ("app", {"app"}),
    ("handles", {"state", "cache", "stats", "metrics", "egress", "ratelimit", "payments",
                 "auth", "bootstrap", "signature", "geoip", "files",
                 "updates"}),
    ("foundation", {"api", "validate", "error", "limits", "loc", "config", "client_ip",
                    "telemetry", "resource", "domain", "i18n"}),
]
RANK = {m: i for i, (_, mods) in enumerate(LAYERS) for m in mods}

MAX_LINES = 1000

# The application layer speaks the domain (issue 45): no HTTP error, location, response or
# free-form JSON in `src/app`.
APP_FORBIDDEN = [
    (r"\bApiError\b", "ApiError (answer an AppError with a Code)"),
    (r"\bloc!", "loc! (a 422's location is the adapter's; use field![..])"),
    (r"\bHttpResponse\b", "HttpResponse"),
    (r"serde_json::(Value\b|\{[^}]*\bValue\b)", "serde_json::Value (use a typed command or view)"),
]

# Stripe's vocabulary stays in `src/payments`: its event types and the fields of its
# objects, as string literals.
STRIPE_WORDS = re.compile(
    r'"(?:(?:payment_intent|charge|checkout\.session|invoice|customer\.subscription|'
    r'setup_intent)\.[a-z_.]+|evidence_details|due_by|latest_charge|payment_intent|'
    r'balance_transaction|failure_code|decline_code|last_payment_error|amount_refunded)"')

# Where a currency may be spelled out: the currency type.
CURRENCY_HOME = {"actors/src/domain/currency.rs", "actors/src/domain/currency_tables.rs", "actors/src/domain/money.rs"}

# Files that break a rule while a move goes on, by rule (reported on every run; the list
# only shrinks). Empty: every file keeps every rule.
PENDING = {}


def is_test_file(path):
    parts = path.split(os.sep)
    name = parts[-1]
    return "tests" in parts[:-1] or name == "tests.rs" or name.endswith("_tests.rs")


def masked(text):
    """`text` with comments, string and char literals blanked (same length, newlines kept),
    so that braces and attributes inside them do not count."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            j = n if end < 0 else end + 1 + len(m.group(1))
            blank(i, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            if m:
                blank(i, i + len(m.group(0)))
                i += len(m.group(0))
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def without_tests(text):
    """`text` without its `#[cfg(test)]` items (test modules, test-only functions, uses and
    impls): each is cut from the attribute to the end of the item (its matching `}` or its
    `;`). A file marked `#![cfg(test)]` is test code as a whole."""
    mask = masked(text)
    if "#![cfg(test)]" in mask:
        return ""
    spans = []
    for m in re.finditer(r"#\[cfg\(test\)\]", mask):
        if spans and m.start() < spans[-1][1]:
            continue
        j, depth = m.end(), 0
        while j < len(mask):
            ch = mask[j]
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    j += 1
                    break
            elif ch == ";" and depth == 0:
                j += 1
                break
            j += 1
        spans.append((m.start(), j))
    for a, b in reversed(spans):
        text = text[:a] + text[b:]
    return text


def code_of(path):
    """The non-test, non-comment code of a file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    text = without_tests(text)
    return "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))


def rust_files(root):
    for r, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "target"]
        for f in sorted(files):
            if f.endswith(".rs"):
                yield os.path.join(r, f)


def module_of(root, path):
    rel = os.path.relpath(path, root).split(os.sep)
    return rel[0][:-3] if len(rel) == 1 else rel[0]


def imports(root):
    edges = collections.defaultdict(set)
    for path in rust_files(root):
        if is_test_file(path):
            continue
        mod = module_of(root, path)
        if mod == "lib":
            continue
        for m in re.finditer(r"\bcrate::([a-z_][a-z0-9_]*)", code_of(path)):
            if m.group(1) != mod:
                edges[mod].add(m.group(1))
    return edges


def circles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    sys.setrecursionlimit(10000)
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return comps


def main():
    verbose = "-v" in sys.argv
    problems = []
    for crate in ["src", "actors/src", "storage/src"]:
        root = os.path.join(ROOT, crate)
        edges = imports(root)
        for comp in circles(edges):
            problems.append(f"{crate}: import circle: {' -> '.join(comp)}")
        if verbose:
            print(f"== {crate}")
            for m in sorted(edges):
                print(f"  {m} -> {' '.join(sorted(edges[m]))}")
        if crate != "src":
            continue
        modules = {module_of(root, p) for p in rust_files(root)
                   if not is_test_file(p)} - {"lib"}
        for m in sorted(modules - set(RANK)):
            problems.append(f"src/{m}: in no layer (add it to LAYERS in {sys.argv[0]})")
        for a in sorted(edges):
            for b in sorted(edges[a]):
                if a in RANK and b in RANK and RANK[b] < RANK[a]:
                    problems.append(
                        f"src/{a} ({LAYERS[RANK[a]][0]}) imports {b} ({LAYERS[RANK[b]][0]}),"
                        " a layer above it")

    pending = []
    for crate in ["src", "actors/src", "storage/src"]:
        for path in rust_files(os.path.join(ROOT, crate)):
            rel = os.path.relpath(path, ROOT)
            test = is_test_file(path)
            code = code_of(path)
            if not test:
                with open(path, encoding="utf-8", errors="replace") as f:
                    n = sum(1 for _ in f)
                if n > MAX_LINES:
                    problems.append(f"{rel}: {n} lines (at most {MAX_LINES} outside tests)")
            if re.search(r"\bis_embedded\b", code):
                problems.append(f"{rel}: asks is_embedded (ask a capability: is_shared)")
            if (crate == "src" and re.search(r"\bcrate::routes\b", code)
                    and not rel.startswith("src/routes/") and rel != "src/startup.rs"):
                problems.append(f"{rel}: imports crate::routes")
            if rel.startswith("src/web/") and re.search(r"\bserde_json\b", code):
                problems.append(f"{rel}: serde_json in a page (pages are typed)")
            found = []
            if test:
                pass
            elif rel.startswith("src/app/"):
                found += [("app", f"{rel}: {what} in the application layer")
                          for pattern, what in APP_FORBIDDEN if re.search(pattern, code)]
            if not test and not rel.startswith("src/payments/") and crate != "storage/src" \
                    and STRIPE_WORDS.search(code):
                word = STRIPE_WORDS.search(code).group(0)
                found.append(("stripe", f"{rel}: Stripe's event type or field {word} outside "
                                        "src/payments"))
            if not test and rel not in CURRENCY_HOME and re.search(r'"usd"', code, re.I):
                found.append(("usd", f'{rel}: "usd" outside the currency type'))
            if (not test and crate == "src" and not rel.startswith("src/app/")
                    and re.search(r"\bread_barrier\b", code)):
                found.append(("barrier", f"{rel}: read_barrier outside src/app (the use case "
                                         "takes it)"))
            for rule, problem in found:
                if rule in PENDING.get(rel, ()):
                    pending.append(problem)
                else:
                    problems.append(problem)

    if pending:
        print(f"{len(pending)} known breach(es) still pending (PENDING in {sys.argv[0]}):")
        for p in pending:
            print(f"  pending: {p}")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layering problem(s)")
        return 1
    print("layers: ok (no circles in src, actors, storage; imports point down; "
          "no file over 1,000 lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
