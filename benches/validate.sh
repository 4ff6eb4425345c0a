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
#   (e) validate asking for a signed answer (Accept-Signature with a fresh nonce each time:
#       RFC 9421, ed25519), spread over BENCH_DISTINCT keys (BENCH_SIGNED=0 leaves it out)
# at each of BENCH_CONNECTIONS, and prints requests/s, p50, p99 and the ratios (b)/(a) and
# (c)/(b). Before that, it reports the server's resident memory with every key loaded.
#
# Environment (defaults in brackets):
#   BENCH_KEYS [100000]  BENCH_DISTINCT [10000]  BENCH_SECS [10]  BENCH_WARMUP_SECS [2]
#   BENCH_CONNECTIONS ["64 256"]  BENCH_THREADS [2] (wrk threads)
#   BENCH_DURABILITY [process] (process|power: storage.durability; embedded store only)
#   BENCH_STATS_FLUSH_MS [config.toml's license_keys.stats_flush_ms, 1000] (0 = strict
#   validation counters, > 0 = batched; see docs/operating.md "Durability")
#   BENCH_IDLE_SECS [10] (actors.idle_timeout_secs, so eviction can be observed)
#   BENCH_SEED_CLIENTS [16]  BENCH_KEEP [unset: remove the temporary directory]
#   BENCH_PORT [a free port] (node A's; node B always gets a free port)
#   BENCH_CACHE_MB [config.toml's storage.cache_capacity_mb, 128] (the store's page cache)
#   BENCH_CASES ["a b c d e"] (the cases to run, e.g. "d"; (e) also needs BENCH_SIGNED != 0)
#   BENCH_BIN [unset: cargo build --release, then $CARGO_TARGET_DIR or target/release/tollgate]
#   (a tollgate binary to run instead; nothing is built)
#
# PostgreSQL and several nodes (benches/README.md, "PostgreSQL and several nodes"):
#   BENCH_BACKEND [embedded] (embedded|postgres: storage.backend)
#   BENCH_NODES [1] (1|2; 2 needs postgres: node A and node B on one schema. Seeding goes
#   through A; every load case runs against both nodes at once, two wrk processes with half
#   the connections each and the same key list; req/s is the sum, p50/p99 the worse node's)
#   BENCH_DATABASE_URL [built from PGHOST, PGPORT (5432), PGUSER (postgres), PGPASSWORD,
#   PGDATABASE (postgres), as pg_virtualenv exports them]. With neither, the script runs
#   itself again under `pg_virtualenv -v $BENCH_PG_VERSION -o fsync=on` (a throwaway cluster,
#   destroyed at the end), so `BENCH_BACKEND=postgres benches/validate.sh` needs no setup.
#   BENCH_PG_VERSION [15] (only for that pg_virtualenv)
#   BENCH_POOL_SIZE [storage.pool_size, 16] (connections per node)
#   BENCH_NOTIFY_WINDOW_MS [storage.notify_window_ms, 100] (the change listener's trust
#   window; 0 = no listener: every plain validation reads the key's revision)
#   BENCH_WORKERS [config.toml's server.workers, 0 = one per core] (each node's HTTP worker
#   threads; with BENCH_NODES=2 on this machine, 1 gives the two nodes one core's worth
#   each, as two machines would, instead of four workers on two cores)
#   Each run works in a fresh schema bench_<pid>_<unix time>, dropped at exit.
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
BACKEND=${BENCH_BACKEND:-embedded}
NODES=${BENCH_NODES:-1}
PG_VERSION=${BENCH_PG_VERSION:-15}
SIGNED=${BENCH_SIGNED:-1}
CASES=${BENCH_CASES:-"a b c d e"}
for case in $CASES; do
    [[ $case == [abcde] ]] || { echo "BENCH_CASES takes a b c d e, not '$case'" >&2; exit 2; }
done
wanted() { [[ " $CASES " == *" $1 "* ]]; }
(( DISTINCT <= KEYS )) || { echo "BENCH_DISTINCT must not exceed BENCH_KEYS" >&2; exit 2; }
[[ $BACKEND == embedded || $BACKEND == postgres ]] \
    || { echo "BENCH_BACKEND must be embedded or postgres, not '$BACKEND'" >&2; exit 2; }
[[ $NODES == 1 || $NODES == 2 ]] || { echo "BENCH_NODES must be 1 or 2, not '$NODES'" >&2; exit 2; }
[[ $NODES == 1 || $BACKEND == postgres ]] \
    || { echo "BENCH_NODES=2 needs BENCH_BACKEND=postgres (the embedded store serves one node)" >&2; exit 2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { printf '[validate.sh] %s\n' "$*" >&2; }

# --- database (BENCH_BACKEND=postgres) ----------------------------------------------------
# No database given: run this script again inside a throwaway PostgreSQL cluster, with fsync
# on (pg_virtualenv turns it off by default, which would measure no durability at all).
if [[ $BACKEND == postgres && -z ${BENCH_DATABASE_URL:-} && -z ${PGHOST:-} ]]; then
    [[ -z ${BENCH_IN_PG_VIRTUALENV:-} ]] \
        || { echo "pg_virtualenv started no database (PGHOST unset)" >&2; exit 2; }
    command -v pg_virtualenv >/dev/null || {
        echo "BENCH_BACKEND=postgres needs BENCH_DATABASE_URL, the PG* variables of a database," \
             "or pg_virtualenv (Debian: postgresql-common and postgresql-$PG_VERSION)" >&2
        exit 2
    }
    PGV=(-v "$PG_VERSION" -o fsync=on)
    # As root, pg_virtualenv puts its cluster at /etc/postgresql/<version>/regress and refuses
    # to start if that exists (another pg_virtualenv is running): then use a temporary one.
    [[ $(id -u) -eq 0 && -e /etc/postgresql/$PG_VERSION/regress ]] && PGV+=(-t)
    log "no database given: running again under pg_virtualenv ${PGV[*]}"
    export BENCH_IN_PG_VIRTUALENV=1
    exec pg_virtualenv "${PGV[@]}" "$ROOT/benches/validate.sh" "$@"
fi
DB_URL=""
SCHEMA=""
PG_INFO=""
if [[ $BACKEND == postgres ]]; then
    command -v psql >/dev/null || { echo "psql is required with BENCH_BACKEND=postgres" >&2; exit 2; }
    command -v python3 >/dev/null || { echo "python3 is required (seeding and parsing)" >&2; exit 2; }
    # The URL the tests build from the PG* variables (percent-encoded; a socket directory as
    # PGHOST becomes %2F..., which both libpq and the server's driver accept).
    DB_URL=${BENCH_DATABASE_URL:-$(python3 -c '
import os, urllib.parse
q = lambda s: urllib.parse.quote(s, safe="")
e = os.environ.get
pw = e("PGPASSWORD")
print("postgres://%s%s@%s:%s/%s" % (q(e("PGUSER", "postgres")), ":" + q(pw) if pw else "",
      q(e("PGHOST")), e("PGPORT", "5432"), q(e("PGDATABASE", "postgres"))))')}
    PG_INFO=$(psql "$DB_URL" -AtqX -v ON_ERROR_STOP=1 -c "SELECT 'PostgreSQL ' || current_setting('server_version')
        || ', fsync=' || current_setting('fsync') || ', synchronous_commit=' || current_setting('synchronous_commit')
        || ', max_connections=' || current_setting('max_connections')") \
        || { echo "cannot reach the database (BENCH_DATABASE_URL or PG* variables)" >&2; exit 2; }
    SCHEMA="bench_$$_$(date +%s)"
    log "database: $PG_INFO; schema $SCHEMA (dropped at exit)"
fi

# --- tools ------------------------------------------------------------------------------
if ! command -v wrk >/dev/null; then
    log "installing wrk (Debian package)"
    SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO=sudo
    $SUDO apt-get install -y wrk >/dev/null || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y wrk >/dev/null; }
fi
command -v python3 >/dev/null || { echo "python3 is required (seeding and parsing)" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl is required" >&2; exit 2; }

if [[ -n ${BENCH_BIN:-} ]]; then
    BIN=$BENCH_BIN
    [[ -x $BIN ]] || { echo "BENCH_BIN=$BIN is not an executable" >&2; exit 2; }
    log "using $BIN (BENCH_BIN: not building)"
else
    log "building the release binary"
    (cd "$ROOT" && cargo build --release --quiet --bin tollgate)
    BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/tollgate"
fi

# --- servers ----------------------------------------------------------------------------
# Node A (index 0) always; node B (index 1) with BENCH_NODES=2, on the same schema. Each node
# has its own data directory (on PostgreSQL only the bootstrap token lives there, written by
# the first node to start: A).
WORK=$(mktemp -d -t tollgate-bench-XXXXXX)
NAMES=(A B)
PIDS=()
BASES=()
DATA_DIRS=("$WORK/data" "$WORK/data-b")
LOGS=("$WORK/server.log" "$WORK/server-b.log")
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        { kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; } || true
    done
    if [[ -n $SCHEMA ]]; then
        if psql "$DB_URL" -qX -v ON_ERROR_STOP=1 -c "DROP SCHEMA IF EXISTS $SCHEMA CASCADE" >/dev/null 2>&1; then
            log "dropped schema $SCHEMA"
        else
            log "could not drop schema $SCHEMA"
        fi
    fi
    if [[ -n "${BENCH_KEEP:-}" ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# /metrics for the validation paths (PostgreSQL) at the end.
METRICS_TOKEN=bench-metrics-token-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

BACKEND_ENV=()
if [[ $BACKEND == postgres ]]; then
    BACKEND_ENV=(TOLLGATE__STORAGE__BACKEND=postgres TOLLGATE__STORAGE__URL="$DB_URL"
                 TOLLGATE__STORAGE__SCHEMA="$SCHEMA")
    [[ -n ${BENCH_POOL_SIZE:-} ]] && BACKEND_ENV+=(TOLLGATE__STORAGE__POOL_SIZE="$BENCH_POOL_SIZE")
fi

# start_node INDEX PORT: starts the node and waits until it is ready.
start_node() {
    local i=$1 port=$2 base="http://127.0.0.1:$2"
    log "starting tollgate node ${NAMES[$i]} on $base, data in ${DATA_DIRS[$i]} (backend=$BACKEND, durability=$DURABILITY, idle eviction after ${IDLE}s)"
    mkdir -p "${DATA_DIRS[$i]}"  # the PostgreSQL backend does not create it
    # Log level warn: the per-request info line would measure the terminal, not the service.
    env TOLLGATE__SERVER__BIND="127.0.0.1:$port" \
        TOLLGATE__STORAGE__DATA_DIR="${DATA_DIRS[$i]}" \
        TOLLGATE__STORAGE__DURABILITY="$DURABILITY" \
        TOLLGATE__ACTORS__IDLE_TIMEOUT_SECS="$IDLE" \
        ${BENCH_CACHE_MB:+TOLLGATE__STORAGE__CACHE_CAPACITY_MB="$BENCH_CACHE_MB"} \
        ${BENCH_STATS_FLUSH_MS:+TOLLGATE__LICENSE_KEYS__STATS_FLUSH_MS="$BENCH_STATS_FLUSH_MS"} \
        ${BENCH_NOTIFY_WINDOW_MS:+TOLLGATE__STORAGE__NOTIFY_WINDOW_MS="$BENCH_NOTIFY_WINDOW_MS"} \
        ${BENCH_WORKERS:+TOLLGATE__SERVER__WORKERS="$BENCH_WORKERS"} \
        TOLLGATE__METRICS__TOKEN="$METRICS_TOKEN" \
        "${BACKEND_ENV[@]}" \
        TOLLGATE__LOG__LEVEL=warn \
        TOLLGATE__RATE_LIMITS__ENABLED=false \
        "$BIN" >"${LOGS[$i]}" 2>&1 &
    PIDS[i]=$!
    BASES[i]=$base
    for _ in $(seq 600); do
        curl -fs "$base/readyz" >/dev/null 2>&1 && break
        kill -0 "${PIDS[$i]}" 2>/dev/null || { cat "${LOGS[$i]}" >&2; exit 1; }
        sleep 0.1
    done
    curl -fs "$base/readyz" >/dev/null || { echo "node ${NAMES[$i]} not ready" >&2; cat "${LOGS[$i]}" >&2; exit 1; }
}
start_node 0 "${BENCH_PORT:-$(free_port)}"
if (( NODES == 2 )); then
    start_node 1 "$(free_port)"
fi
BASE=${BASES[0]}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# --- seeding through the public API -------------------------------------------------------
# Catalog: an organization, a license-key benefit (prefix "bench", no limits), a one-time
# product carrying it. Keys: one checkout per key (POST /v1/checkouts/custom/, then
# POST .../client/{secret}/confirm), which grants the key as a purchase does. Buyers are
# spread over KEYS/100 customers; the seller opens a session of each
# (POST /v1/customer-sessions/: a confirm's own session reaches that one purchase only),
# which lists the customer's keys through GET /v1/customer-portal/license-keys/: that is
# how the script learns the key values.
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
    session token). A 409 ("being confirmed concurrently; retry": an earlier attempt that
    answered 503 is still running, e.g. on PostgreSQL) is retried like a 503."""
    for attempt in range(30):
        status, data = raw(conn, "POST", f"/v1/checkouts/custom/client/{secret}/confirm", body, auth=False)
        if status == 200:
            return json.loads(data)
        if status in (403, 409, 429, 503):
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
                    sessions[email] = done["customer_id"]
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
# A session of the whole portal for each customer, opened by the seller (on a new
# connection: the first one sat idle through the seeding, past the server's keep-alive).
c = connect()
toks = [call(c, "POST", "/v1/customer-sessions/", {"customer_id": cid})["token"]
        for cid in sorted(set(sessions.values()))]
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
# With two nodes, each node reads and validates every key (both nodes at once), and each
# node's memory is reported.
read_all() {
    python3 - "$1" "$WORK/sessions.txt" "$SEED_CLIENTS" <<'PY'
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
}
validate_all() {
    python3 - "$1" "$ORG" "$WORK/keys.txt" "$SEED_CLIENTS" <<'PY'
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
# on_nodes FUNCTION: FUNCTION BASE_URL for every node, all at once; fails if one fails.
on_nodes() {
    local jobs=() i job
    for i in "${!BASES[@]}"; do "$1" "${BASES[$i]}" & jobs+=("$!"); done
    for job in "${jobs[@]}"; do wait "$job"; done
}
# MEM[i]: node i's VmRSS samples R0..R4, comma-separated.
MEM=()
sample_rss() {
    local i
    for i in "${!PIDS[@]}"; do MEM[i]="${MEM[i]:-}${MEM[i]:+,}$(rss_kib "${PIDS[$i]}")"; done
}
WAIT=$(( IDLE * 5 / 2 + 2 ))
on_nodes read_all
sleep 1
sample_rss
on_nodes validate_all
sample_rss
log "validated every key once; waiting ${WAIT}s for idle eviction"
sleep "$WAIT"
sample_rss
on_nodes validate_all
sample_rss
log "validated every key again; waiting ${WAIT}s for idle eviction"
sleep "$WAIT"
sample_rss

# --- load -------------------------------------------------------------------------------
cat >"$WORK/validate.lua" <<'LUA'
-- args: organization id, key file, extra JSON members (e.g. ,"increment_usage":1),
-- this node's index and the node count (each node's wrk starts its threads that share of
-- the key list further on: every node cycles over the same keys, not in step)
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
    local node, nodes = tonumber(args[4]) or 0, tonumber(args[5]) or 1
    -- Threads start at different places in the key list.
    i = (offset * 7919 + math.floor(node * #keys / nodes)) % #keys
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
end
function request()
    i = i % #keys + 1
    return wrk.format(nil, "/v1/customer-portal/license-keys/validate", nil,
        '{"key":"' .. keys[i] .. '","organization_id":"' .. org .. '"' .. extra .. '}')
end
LUA
# (e): the same, each request asking for a signature with its own nonce.
sed -e 's|^function request()|n = 0\nfunction request()\n    n = n + 1\n    wrk.headers["Accept-Signature"] = \x27sig1=("@status" "content-digest" "@method";req "@path";req);nonce="\x27 .. offset .. "-" .. n .. \x27"\x27|' \
    "$WORK/validate.lua" >"$WORK/validate_signed.lua"
SCRIPT=validate.lua

RESULTS="$WORK/results.tsv"
: >"$RESULTS"
HZ=$(getconf CLK_TCK)
# wrk threads per node: BENCH_THREADS in all, shared by the nodes' wrk processes.
WRK_THREADS=$(( THREADS / NODES > 0 ? THREADS / NODES : 1 ))
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
LOG_LINES_BEFORE_LOAD=()
for i in "${!PIDS[@]}"; do LOG_LINES_BEFORE_LOAD[i]=$(grep -c . "${LOGS[$i]}" || true); done
# A server's CPU time so far (user + system, in clock ticks), from /proc/<pid>/stat.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# wrk_node I CONNECTIONS SECONDS OUTPUT PATH [wrk script args...]: one wrk against node I;
# with script args, the validate script (PATH unused), else GET PATH.
wrk_node() {
    local i=$1 conns=$2 secs=$3 out=$4 path=$5; shift 5
    local target=("${BASES[$i]}$path") latency=()
    [[ $# -gt 0 ]] && target=(-s "$WORK/$SCRIPT" "${BASES[$i]}" -- "$@" "$i" "$NODES")
    [[ $out == /dev/null ]] || latency=(--latency)
    wrk -t"$WRK_THREADS" -c"$conns" -d"${secs}s" "${latency[@]}" "${target[@]}" >"$out"
}
# run NAME CONNECTIONS PATH [wrk script args...]: warm-up, then the measured run, against
# every node at once (CONNECTIONS shared by the nodes); one results row per node.
run() {
    local name=$1 conns=$2; shift 2
    local i job jobs=() share=() out=() before=() after=()
    for i in "${!BASES[@]}"; do
        share[i]=$(( conns / NODES + (i < conns % NODES ? 1 : 0) ))
        out[i]="$WORK/wrk-$name-$conns.txt"
        (( NODES == 1 )) || out[i]="$WORK/wrk-$name-$conns-${NAMES[$i]}.txt"
    done
    for i in "${!BASES[@]}"; do wrk_node "$i" "${share[$i]}" "$WARMUP" /dev/null "$@" & jobs+=("$!"); done
    for job in "${jobs[@]}"; do wait "$job"; done
    jobs=()
    for i in "${!PIDS[@]}"; do before[i]=$(cpu_ticks "${PIDS[$i]}"); done
    for i in "${!BASES[@]}"; do wrk_node "$i" "${share[$i]}" "$SECS" "${out[$i]}" "$@" & jobs+=("$!"); done
    for job in "${jobs[@]}"; do wait "$job"; done
    for i in "${!PIDS[@]}"; do after[i]=$(cpu_ticks "${PIDS[$i]}"); done
    for i in "${!BASES[@]}"; do
        python3 - "${out[$i]}" "$name" "$conns" "${NAMES[$i]}" "$(( after[i] - before[i] ))" >>"$RESULTS" <<'PY'
import re, sys
text, name, conns, node, ticks = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
done = int(re.search(r"(\d+) requests in", text).group(1))
def ms(label):
    m = re.search(r"^\s*" + label + r"%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    v, unit = float(m.group(1)), m.group(2)
    return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
errs = re.search(r"Socket errors:.*", text)
print(f"{name}\t{conns}\t{node}\t{rps}\t{ms('50')}\t{ms('99')}\t{ticks}\t{done}\t{bad.group(1) if bad else 0}\t{errs.group(0) if errs else ''}")
PY
    done
}

for c in $CONNECTIONS; do
    if wanted a; then
        log "connections=$c: (a) healthz"
        run a "$c" /healthz
    fi
    if wanted b; then
        log "connections=$c: (b) validate over $DISTINCT keys"
        run b "$c" "" "$ORG" "$WORK/distinct.txt" ""
    fi
    if wanted c; then
        log "connections=$c: (c) validate one key"
        run c "$c" "" "$ORG" "$WORK/one.txt" ""
    fi
    if wanted d; then
        log "connections=$c: (d) validate with increment_usage over $DISTINCT keys"
        run d "$c" "" "$ORG" "$WORK/distinct.txt" ',"increment_usage":1'
    fi
    if [[ $SIGNED != 0 ]] && wanted e; then
        log "connections=$c: (e) validate, signed, over $DISTINCT keys"
        SCRIPT=validate_signed.lua run e "$c" "" "$ORG" "$WORK/distinct.txt" ""
    fi
done

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report -----------------------------------------------------------------------------
if [[ $BACKEND == postgres ]]; then
    SETUP="backend=postgres ($PG_INFO; schema $SCHEMA, pool_size=${BENCH_POOL_SIZE:-16} per node)"
else
    SETUP="backend=embedded, durability=$DURABILITY"
fi
if (( NODES == 1 )); then SETUP+=", 1 node"; else SETUP+=", $NODES nodes"; fi
SETUP+=", stats_flush_ms=${BENCH_STATS_FLUSH_MS:-1000}"
[[ $BACKEND == postgres ]] && SETUP+=", notify_window_ms=${BENCH_NOTIFY_WINDOW_MS:-100}"
[[ -n ${BENCH_WORKERS:-} ]] && SETUP+=", workers=$BENCH_WORKERS per node"
if [[ $BACKEND == postgres ]]; then
    # How each node answered its validations over the whole run (seeding included):
    # memory = its copy, trusted through the listener; checked = after reading the key's
    # revision; counted = one conditional statement (increments, strict mode).
    for i in "${!PIDS[@]}"; do
        PATHS=$(curl -fs -H "Authorization: Bearer $METRICS_TOKEN" "${BASES[$i]}/metrics" \
            | awk -F'[{}" ]+' '/^tollgate_license_validation_paths_total/ {printf "%s=%s ", $3, $NF}')
        echo "node ${NAMES[$i]} validation paths: ${PATHS:-unknown}"
    done
fi
MEM_ARGS=()
for i in "${!PIDS[@]}"; do MEM_ARGS+=("${NAMES[$i]}:${MEM[$i]}"); done
echo
echo "machine: $(nproc) cores; load average before the load runs: $LOAD_BEFORE, after: $LOAD_AFTER"
python3 - "$RESULTS" "$KEYS" "$SETUP" "$DISTINCT" "$HZ" "$WRK_THREADS" "${MEM_ARGS[@]}" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
keys, setup, distinct, hz, wrk_threads = int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
mems = [(a.split(":", 1)[0], [int(x) for x in a.split(":", 1)[1].split(",")]) for a in sys.argv[7:]]
nodes = len(mems)
label = {"a": "(a) GET /healthz", "b": f"(b) validate, {distinct} keys", "c": "(c) validate, one key",
         "d": f"(d) validate +usage, {distinct} keys", "e": f"(e) validate signed, {distinct} keys"}
print(f"\nlicense-key validation, {setup}")
if nodes > 1:
    print(f"each case ran against the {nodes} nodes at once: one wrk per node ({wrk_threads} thread(s), "
          f"its share of the connections, the same keys), seeded through node {mems[0][0]}.")
    print("req/s = sum over the nodes; p50/p99 = the WORSE node's; cpu us/req = all servers' CPU / all "
          "requests; non-2xx = sum. Per node below.")
head = f"{'case':<32}{'conns':>6}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'cpu us/req':>11}{'non-2xx':>9}"
print(head)
cases = {}
for name, conns, node, rps, p50, p99, ticks, done, bad, errs in rows:
    cases.setdefault((name, conns), []).append(
        (node, float(rps), float(p50), float(p99), int(ticks), int(done), int(bad), errs))
def cpu_us(ticks, done):
    return ticks / hz * 1e6 / done if done else 0.0
by = {}
for (name, conns), per in cases.items():
    rps = sum(r[1] for r in per)
    by[(name, conns)] = rps
    errs = "; ".join((f"{r[0]}: {r[7]}" if nodes > 1 else r[7]) for r in per if r[7])
    print(f"{label[name]:<32}{conns:>6}{rps:>10.0f}{max(r[2] for r in per):>9.2f}{max(r[3] for r in per):>9.2f}"
          f"{cpu_us(sum(r[4] for r in per), sum(r[5] for r in per)):>11.1f}{sum(r[6] for r in per):>9}  {errs}")
if nodes > 1:
    print("\nper node:")
    print(f"{'case':<32}{'conns':>6}{'node':>5}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'cpu us/req':>11}{'non-2xx':>9}")
    for (name, conns), per in cases.items():
        for node, rps, p50, p99, ticks, done, bad, errs in per:
            print(f"{label[name]:<32}{conns:>6}{node:>5}{rps:>10.0f}{p50:>9.2f}{p99:>9.2f}{cpu_us(ticks, done):>11.1f}{bad:>9}  {errs}")
print()
for conns in sorted({c for _, c in by}, key=int):
    a, b, c = by.get(("a", conns)), by.get(("b", conns)), by.get(("c", conns))
    if a and b and c:
        note = "  (req/s summed over the nodes)" if nodes > 1 else ""
        print(f"ratios at {conns:>3} connections: (b)/(a) = {b / a:.2f}   (c)/(b) = {c / b:.2f}{note}")
for node, (r0, r1, r2, r3, r4) in mems:
    print()
    if nodes == 1:
        print(f"resident memory, {keys} keys (VmRSS; B/key = growth over R0 / keys):")
    else:
        print(f"resident memory of node {node}, {keys} keys, each read and validated through every node "
              "(VmRSS; B/key = growth over R0 / keys):")
    for title, r in [("R0 store warm, no key loaded", r0), ("R1 every key validated (live actors)", r1),
                     ("R2 idle actors evicted", r2), ("R3 every key validated again", r3),
                     ("R4 evicted again", r4)]:
        print(f"  {title:<38}{r / 1024:9.1f} MiB  {(r - r0) * 1024 / keys:+7.0f} B/key")
PY
echo
# The servers' log lines (level warn and up), grouped by message; how many came during the
# load runs (the rest: seeding and the memory phase).
for i in "${!PIDS[@]}"; do
    python3 - "${NAMES[$i]}" "${LOGS[$i]}" "${LOG_LINES_BEFORE_LOAD[$i]}" "${BENCH_KEEP:+${LOGS[$i]}}" <<'PY'
import collections, re, sys
name, path, before, kept = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lines = [re.sub(r"\x1b\[[0-9;]*m", "", l).rstrip() for l in open(path, errors="replace")]
lines = [l for l in lines if l.strip()]
where = f" ({kept})" if kept else ""
print(f"server log of node {name}: {len(lines)} line(s) at warn or error level, "
      f"{max(0, len(lines) - before)} during the load runs{where}")
kinds = collections.Counter()
for l in lines:
    m = re.match(r"\S+\s+(ERROR|WARN|INFO|DEBUG|TRACE)\s+(.*?)(?=\s+[\w.]+=|$)", l)
    kinds[f"{m.group(1)} {m.group(2)}" if m else l[:160]] += 1
for kind, n in kinds.most_common(8):
    print(f"  {n:>7}  {kind}")
PY
done
