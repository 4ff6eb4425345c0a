#!/usr/bin/env bash
# Load benchmark of license-key validation, the hot path (see benches/README.md, section
# "validate.sh"). One command:
#
#     benches/validate.sh
#
# Builds the release binary, starts it on a temporary data directory and a free port, seeds
# BENCH_KEYS license keys through the public API (one checkout per key: create, then confirm
# with the test payment processor, exactly as a buyer gets a key), then measures with wrk:
#   (a) GET /healthz                       the HTTP ceiling
#   (b) validate, spread over BENCH_DISTINCT distinct keys
#   (c) validate, every request on one key
#   (d) validate with increment_usage=1, spread over BENCH_DISTINCT keys
# at each of BENCH_CONNECTIONS, and prints requests/s, p50, p99 and the ratios (b)/(a) and
# (c)/(b). Before that, it reports the server's resident memory with every key loaded.
#
# Environment (defaults in brackets):
#   BENCH_KEYS [100000]  BENCH_DISTINCT [10000]  BENCH_SECS [10]  BENCH_WARMUP_SECS [2]
#   BENCH_CONNECTIONS ["64 256"]  BENCH_THREADS [2] (wrk threads)
#   BENCH_DURABILITY [process] (process|power: storage.durability)
#   BENCH_STATS_FLUSH_MS [config.toml's license_keys.stats_flush_ms, 1000] (0 = strict
#   validation counters, > 0 = batched; see README "Durability")
#   BENCH_IDLE_SECS [10] (actors.idle_timeout_secs, so eviction can be observed)
#   BENCH_SEED_CLIENTS [16]  BENCH_KEEP [unset: remove the temporary directory]
#   BENCH_PORT [a free port]
#   BENCH_CACHE_MB [config.toml's storage.cache_capacity_mb, 128] (the store's page cache)
set -euo pipefail

KEYS=${BENCH_KEYS:-100000}
DISTINCT=${BENCH_DISTINCT:-10000}
SECS=${BENCH_SECS:-10}
WARMUP=${BENCH_WARMUP_SECS:-2}
CONNECTIONS=${BENCH_CONNECTIONS:-"64 256"}
THREADS=${BENCH_THREADS:-2}
DURABILITY=${BENCH_DURABILITY:-process}
IDLE=${BENCH_IDLE_SECS:-10}
SEED_CLIENTS=${BENCH_SEED_CLIENTS:-16}
(( DISTINCT <= KEYS )) || { echo "BENCH_DISTINCT must not exceed BENCH_KEYS" >&2; exit 2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { printf '[validate.sh] %s\n' "$*" >&2; }

# --- tools ------------------------------------------------------------------------------
if ! command -v wrk >/dev/null; then
    log "installing wrk (Debian package)"
    SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO=sudo
    $SUDO apt-get install -y wrk >/dev/null || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y wrk >/dev/null; }
fi
command -v python3 >/dev/null || { echo "python3 is required (seeding and parsing)" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl is required" >&2; exit 2; }

log "building the release binary"
(cd "$ROOT" && cargo build --release --quiet --bin tollgate)
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/tollgate"

# --- server -----------------------------------------------------------------------------
WORK=$(mktemp -d -t tollgate-bench-XXXXXX)
SERVER_PID=""
cleanup() {
    [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    if [[ -n "${BENCH_KEEP:-}" ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

PORT=${BENCH_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
BASE="http://127.0.0.1:$PORT"
log "starting tollgate on $BASE, data in $WORK/data (durability=$DURABILITY, idle eviction after ${IDLE}s)"
# Log level warn: the per-request info line would measure the terminal, not the service.
env TOLLGATE__SERVER__BIND="127.0.0.1:$PORT" \
    TOLLGATE__STORAGE__DATA_DIR="$WORK/data" \
    TOLLGATE__STORAGE__DURABILITY="$DURABILITY" \
    TOLLGATE__ACTORS__IDLE_TIMEOUT_SECS="$IDLE" \
    ${BENCH_CACHE_MB:+TOLLGATE__STORAGE__CACHE_CAPACITY_MB="$BENCH_CACHE_MB"} \
    ${BENCH_STATS_FLUSH_MS:+TOLLGATE__LICENSE_KEYS__STATS_FLUSH_MS="$BENCH_STATS_FLUSH_MS"} \
    TOLLGATE__LOG__LEVEL=warn \
    TOLLGATE__RATE_LIMITS__ENABLED=false \
    "$BIN" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 200); do
    curl -fs "$BASE/readyz" >/dev/null 2>&1 && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
    sleep 0.1
done
curl -fs "$BASE/readyz" >/dev/null || { echo "server not ready" >&2; exit 1; }

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$SERVER_PID/status"; }

# --- seeding through the public API -------------------------------------------------------
# Catalog: an organization, a license-key benefit (prefix "bench", no limits), a one-time
# product carrying it. Keys: one checkout per key (POST /v1/checkouts/custom/, then
# POST .../client/{secret}/confirm), which grants the key as a purchase does. Buyers are
# spread over KEYS/100 customers, whose session tokens (from confirm) then list their keys
# through GET /v1/customer-portal/license-keys/: that is how the script learns the key values.
log "seeding $KEYS keys through checkouts ($SEED_CLIENTS clients)"
SEED_START=$(date +%s)
python3 - "$BASE" "$(cat "$WORK/data/bootstrap-token")" "$KEYS" "$SEED_CLIENTS" "$WORK" <<'PY'
import http.client, json, sys, threading, time, urllib.parse

base, token, n, clients, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
host = urllib.parse.urlparse(base)

def connect():
    return http.client.HTTPConnection(host.hostname, host.port, timeout=60)

def raw(conn, method, path, body=None, auth=True):
    headers = {"content-type": "application/json"}
    if auth:
        headers["authorization"] = "Bearer " + token
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    r = conn.getresponse()
    return r.status, r.read()

def call(conn, method, path, body=None, auth=True, expect=(200, 201)):
    # A busy server answers 503/429 with Retry-After: back off and retry, as a client would.
    for attempt in range(30):
        status, data = raw(conn, method, path, body, auth)
        if status in (429, 503) and attempt < 29:
            time.sleep(0.1 * (attempt + 1))
            continue
        if status not in expect:
            raise SystemExit(f"{method} {path}: {status} {data[:300]!r}")
        return json.loads(data) if data else None

def confirm(conn, secret, body):
    """The confirm's answer, or None when a retried confirm found the checkout already
    confirmed by an attempt whose answer was a 503 (the buyer's other purchases give the
    session token)."""
    for attempt in range(30):
        status, data = raw(conn, "POST", f"/v1/checkouts/custom/client/{secret}/confirm", body, auth=False)
        if status == 200:
            return json.loads(data)
        if status in (403, 429, 503):
            state = call(conn, "GET", f"/v1/checkouts/custom/client/{secret}", auth=False)["status"]
            if state in ("confirmed", "succeeded"):
                return None
            if status == 403:
                raise SystemExit(f"confirm {secret}: 403 in state {state}: {data[:300]!r}")
            time.sleep(0.1 * (attempt + 1))
            continue
        raise SystemExit(f"confirm {secret}: {status} {data[:300]!r}")
    raise SystemExit(f"confirm {secret}: still busy")

c = connect()
org = call(c, "POST", "/v1/organizations/", {"name": "Bench", "slug": "bench"})["id"]
benefit = call(c, "POST", "/v1/benefits/", {"type": "license_keys", "description": "Bench license",
               "organization_id": org, "properties": {"prefix": "bench"}})["id"]
product = call(c, "POST", "/v1/products/", {"name": "Bench app", "organization_id": org,
               "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 1000, "price_currency": "usd"}]})
call(c, "POST", f"/v1/products/{product['id']}/benefits", {"benefits": [benefit]})
price = product["prices"][0]["id"]

customers = max(1, n // 100)
sessions = {}
errors = []
lock = threading.Lock()

def buy(worker):
    try:
        conn = connect()
        for i in range(worker, n, clients):
            co = call(conn, "POST", "/v1/checkouts/custom/", {"payment_processor": "stripe", "product_price_id": price})
            email = f"buyer{i % customers}@bench.example"
            done = confirm(conn, co['client_secret'],
                           {"customer_email": email, "customer_name": "Bench Buyer",
                            "confirmation_token_id": "tok_bench",
                            "customer_billing_address": {"country": "US", "state": "NY"}})
            if done is not None:
                with lock:
                    sessions[email] = done["customer_session_token"]
    except BaseException as e:  # report from the main thread
        errors.append(repr(e))

threads = [threading.Thread(target=buy, args=(w,)) for w in range(clients)]
for t in threads: t.start()
for t in threads: t.join()
if errors:
    raise SystemExit("seeding failed: " + errors[0])

keys = []
def fetch(tokens):
    conn = connect()
    for tok in tokens:
        page = 1
        while True:
            conn.request("GET", f"/v1/customer-portal/license-keys/?limit=100&page={page}",
                         headers={"authorization": "Bearer " + tok})
            r = conn.getresponse(); body = json.loads(r.read())
            if r.status != 200:
                raise SystemExit(f"portal list: {r.status} {body}")
            with lock:
                keys.extend(k["key"] for k in body["items"])
            if page >= body["pagination"]["max_page"]:
                break
            page += 1
toks = list(sessions.values())
ts = [threading.Thread(target=fetch, args=(toks[w::clients],)) for w in range(clients)]
for t in ts: t.start()
for t in ts: t.join()
if len(keys) != n:
    raise SystemExit(f"expected {n} keys, found {len(keys)}")
with open(f"{work}/org", "w") as f: f.write(org)
with open(f"{work}/keys.txt", "w") as f: f.write("\n".join(keys) + "\n")
with open(f"{work}/sessions.txt", "w") as f: f.write("\n".join(toks) + "\n")
PY
ORG=$(cat "$WORK/org")
log "seeded $KEYS keys in $(( $(date +%s) - SEED_START ))s"
head -n "$DISTINCT" "$WORK/keys.txt" >"$WORK/distinct.txt"
head -n 1 "$WORK/keys.txt" >"$WORK/one.txt"

# --- resident memory with every key loaded -----------------------------------------------
# R0: every key record and customer read once through the portal list (store cache warm),
# no key actor and no directory entry yet. R1: after one validation of every key (each key
# has a live actor and a directory entry). R2: after the idle actors were evicted. R3, R4:
# the same again, which shows whether the memory of evicted actors is reused (the allocator
# keeps freed memory, so RSS does not fall after an eviction; it must not grow either).
python3 - "$BASE" "$WORK/sessions.txt" "$SEED_CLIENTS" <<'PY'
import http.client, json, sys, threading, urllib.parse
base, path, clients = sys.argv[1], sys.argv[2], int(sys.argv[3])
u = urllib.parse.urlparse(base)
toks = [t for t in open(path).read().split() if t]
def run(part):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    for tok in part:
        page = 1
        while True:
            c.request("GET", f"/v1/customer-portal/license-keys/?limit=100&page={page}", headers={"authorization": "Bearer " + tok})
            r = c.getresponse(); body = json.loads(r.read())
            if r.status != 200: raise SystemExit(r.status)
            if page >= body["pagination"]["max_page"]: break
            page += 1
ts = [threading.Thread(target=run, args=(toks[w::clients],)) for w in range(clients)]
[t.start() for t in ts]; [t.join() for t in ts]
PY
validate_all() {
    python3 - "$BASE" "$ORG" "$WORK/keys.txt" "$SEED_CLIENTS" <<'PY'
import http.client, json, sys, threading, time, urllib.parse
base, org, path, clients = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
u = urllib.parse.urlparse(base)
keys = [k for k in open(path).read().split() if k]
bad = []
def run(part):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    for k in part:
        for attempt in range(30):
            c.request("POST", "/v1/customer-portal/license-keys/validate",
                      body=json.dumps({"key": k, "organization_id": org}), headers={"content-type": "application/json"})
            r = c.getresponse(); r.read()
            if r.status not in (429, 503): break
            time.sleep(0.1 * (attempt + 1))  # busy: back off and retry, as a client would
        if r.status != 200: bad.append(r.status)
ts = [threading.Thread(target=run, args=(keys[w::clients],)) for w in range(clients)]
[t.start() for t in ts]; [t.join() for t in ts]
if bad: raise SystemExit(f"{len(bad)} validations failed: {bad[:5]}")
PY
}
WAIT=$(( IDLE * 5 / 2 + 2 ))
sleep 1
R0=$(rss_kib)
validate_all
R1=$(rss_kib)
log "validated every key once; waiting ${WAIT}s for idle eviction"
sleep "$WAIT"
R2=$(rss_kib)
validate_all
R3=$(rss_kib)
log "validated every key again; waiting ${WAIT}s for idle eviction"
sleep "$WAIT"
R4=$(rss_kib)

# --- load -------------------------------------------------------------------------------
cat >"$WORK/validate.lua" <<'LUA'
-- args: organization id, key file, extra JSON members (e.g. ,"increment_usage":1)
local counter = 0
function setup(thread)
    counter = counter + 1
    thread:set("offset", counter)
end
function init(args)
    org = args[1]
    extra = args[3] or ""
    keys = {}
    for line in io.lines(args[2]) do
        if #line > 0 then keys[#keys + 1] = line end
    end
    -- Threads start at different places in the key list.
    i = (offset * 7919) % #keys
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
end
function request()
    i = i % #keys + 1
    return wrk.format(nil, "/v1/customer-portal/license-keys/validate", nil,
        '{"key":"' .. keys[i] .. '","organization_id":"' .. org .. '"' .. extra .. '}')
end
LUA

RESULTS="$WORK/results.tsv"
: >"$RESULTS"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
# The server's CPU time so far (user + system, in clock ticks), from /proc/<pid>/stat.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
# run NAME CONNECTIONS URL [wrk script args...]
run() {
    local name=$1 conns=$2 url=$3; shift 3
    local script=()
    [[ $# -gt 0 ]] && script=(-s "$WORK/validate.lua" "$url" -- "$@") || script=("$url")
    wrk -t"$THREADS" -c"$conns" -d"${WARMUP}s" "${script[@]}" >/dev/null
    local cpu_before cpu_after
    cpu_before=$(cpu_ticks)
    wrk -t"$THREADS" -c"$conns" -d"${SECS}s" --latency "${script[@]}" >"$WORK/wrk-$name-$conns.txt"
    cpu_after=$(cpu_ticks)
    python3 - "$WORK/wrk-$name-$conns.txt" "$name" "$conns" "$((cpu_after - cpu_before))" "$(getconf CLK_TCK)" >>"$RESULTS" <<'PY'
import re, sys
text, name, conns = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
ticks, hz = int(sys.argv[4]), int(sys.argv[5])
done = int(re.search(r"(\d+) requests in", text).group(1))
cpu_us = ticks / hz * 1e6 / done if done else 0.0
def ms(label):
    m = re.search(r"^\s*" + label + r"%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    v, unit = float(m.group(1)), m.group(2)
    return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
errs = re.search(r"Socket errors:.*", text)
print(f"{name}\t{conns}\t{rps:.0f}\t{ms('50'):.2f}\t{ms('99'):.2f}\t{cpu_us:.1f}\t{bad.group(1) if bad else 0}\t{errs.group(0) if errs else ''}")
PY
}

for c in $CONNECTIONS; do
    log "connections=$c: (a) healthz"
    run a "$c" "$BASE/healthz"
    log "connections=$c: (b) validate over $DISTINCT keys"
    run b "$c" "$BASE" "$ORG" "$WORK/distinct.txt" ""
    log "connections=$c: (c) validate one key"
    run c "$c" "$BASE" "$ORG" "$WORK/one.txt" ""
    log "connections=$c: (d) validate with increment_usage over $DISTINCT keys"
    run d "$c" "$BASE" "$ORG" "$WORK/distinct.txt" ',"increment_usage":1'
done

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report -----------------------------------------------------------------------------
echo
echo "machine: $(nproc) cores; load average before the load runs: $LOAD_BEFORE, after: $LOAD_AFTER"
python3 - "$RESULTS" "$KEYS" "$DURABILITY, stats_flush_ms=${BENCH_STATS_FLUSH_MS:-1000}" "$DISTINCT" "$R0" "$R1" "$R2" "$R3" "$R4" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
keys, durability, distinct = int(sys.argv[2]), sys.argv[3], sys.argv[4]
r0, r1, r2, r3, r4 = (int(x) for x in sys.argv[5:10])
label = {"a": "(a) GET /healthz", "b": f"(b) validate, {distinct} keys", "c": "(c) validate, one key",
         "d": f"(d) validate +usage, {distinct} keys"}
print(f"\nlicense-key validation, durability={durability}")
print(f"{'case':<32}{'conns':>6}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'cpu us/req':>11}{'non-2xx':>9}")
by = {}
for name, conns, rps, p50, p99, cpu, bad, errs in rows:
    by[(name, conns)] = float(rps)
    print(f"{label[name]:<32}{conns:>6}{float(rps):>10.0f}{float(p50):>9.2f}{float(p99):>9.2f}{float(cpu):>11.1f}{bad:>9}  {errs}")
print()
for conns in sorted({c for _, c in by}, key=int):
    a, b, c = by.get(("a", conns)), by.get(("b", conns)), by.get(("c", conns))
    if a and b and c:
        print(f"ratios at {conns:>3} connections: (b)/(a) = {b / a:.2f}   (c)/(b) = {c / b:.2f}")
print()
print(f"resident memory, {keys} keys (VmRSS; B/key = growth over R0 / keys):")
for label, r in [("R0 store warm, no key loaded", r0), ("R1 every key validated (live actors)", r1),
                 ("R2 idle actors evicted", r2), ("R3 every key validated again", r3),
                 ("R4 evicted again", r4)]:
    print(f"  {label:<38}{r / 1024:9.1f} MiB  {(r - r0) * 1024 / keys:+7.0f} B/key")
PY
