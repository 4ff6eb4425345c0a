#!/usr/bin/env bash
# Load benchmark of usage billing (issue 51; see benches/README.md, section "usage.sh"):
# sustained ingestion and quantity reads over a month of events. One command:
#
#     benches/usage.sh
#
# Builds the release binary (or runs BENCH_BIN), starts it on a temporary data directory and
# a free port, creates through the public API an organization, an organization access token
# (every call after that uses it), BENCH_CUSTOMERS customers (external ids cust-0, cust-1, …)
# and two meters: "Calls", a count of every event (name like "api."), and "Tokens", the sum
# of metadata.tokens over the "api.chat" events. Then, with wrk:
#   (a) GET /healthz                                the HTTP ceiling
#   (b) POST /v1/events/ingest, batches of BENCH_BATCH (100) events, every event with its own
#       external_id (the wrk script builds each body): events/s = req/s x BENCH_BATCH
#   (c) seeding: BENCH_EVENTS (10,000,000) events through POST /v1/events/ingest, batches of
#       BENCH_SEED_BATCH (1000), from BENCH_SEED_CLIENTS processes, timestamps spread evenly
#       over the 30 days before the start, customers by external_customer_id, four names,
#       metadata {"tokens": <1..1000>, "endpoint": …}: seed events/s, then the server's
#       resident memory and the store's size (data directory, or the schema's relations)
#   (d) GET /v1/meters/{id}/quantities over the month: d1 "Calls" interval=day, d2 "Tokens"
#       interval=day, d3 "Calls" interval=hour over the last 7 days (Polar's limit for hour),
#       d4 "Calls" interval=day for one customer (external_customer_id)
#   (e) GET /v1/customer-meters/?limit=100 (the first page)
# at each of BENCH_CONNECTIONS, printing req/s, p50, p99, non-2xx and the ratios to (a).
# Before the reads, one quantities answer of each kind is checked (the month's total of
# "Calls" counts every seeded event).
#
# Environment (defaults in brackets):
#   BENCH_EVENTS [10000000]  BENCH_CUSTOMERS [100]  BENCH_BATCH [100] (events per request in (b))
#   BENCH_SEED_BATCH [1000] (events per request while seeding; at most 1000)
#   BENCH_SEED_CLIENTS [4] (seeding processes)  BENCH_SECS [10]  BENCH_WARMUP_SECS [2]
#   BENCH_CONNECTIONS ["64"]  BENCH_THREADS [2] (wrk threads)
#   BENCH_CASES ["a b c d e"] (c is needed by d and e to have a month to read)
#   BENCH_ROUNDS [3] (each load case a, b, d, e is run this many times in turn; the table
#   gives the median run's figures and every run's req/s; seeding (c) runs once)
#   BENCH_DURABILITY [process] (process|power: storage.durability; embedded store only)
#   BENCH_KEEP [unset: remove the temporary directory]  BENCH_PORT [a free port]
#   BENCH_MIN_FREE_MB [2048] (seeding stops, and the run fails, when the disk of the data
#   directory or of PostgreSQL's data has less free space than this)
#   BENCH_WORKERS [server.workers, 0 = one per core]
#   BENCH_BIN [unset: cargo build --release, then $CARGO_TARGET_DIR or target/release/tollgate]
#
# PostgreSQL and several nodes, as benches/validate.sh:
#   BENCH_BACKEND [embedded] (embedded|postgres)  BENCH_NODES [1] (1|2; 2 needs postgres:
#   seeding processes alternate between the nodes; every load case runs against both at
#   once, one wrk per node with half the connections; req/s summed, p50/p99 the worse node's)
#   BENCH_DATABASE_URL [from PG* variables; with neither, the script runs itself again under
#   `pg_virtualenv -v $BENCH_PG_VERSION -o fsync=on`]  BENCH_PG_VERSION [15]
#   BENCH_POOL_SIZE [storage.pool_size, 16]
#   Each run works in a fresh schema bench_<pid>_<unix time>, dropped at exit.
set -euo pipefail

EVENTS=${BENCH_EVENTS:-10000000}
CUSTOMERS=${BENCH_CUSTOMERS:-100}
BATCH=${BENCH_BATCH:-100}
SEED_BATCH=${BENCH_SEED_BATCH:-1000}
SEED_CLIENTS=${BENCH_SEED_CLIENTS:-4}
SECS=${BENCH_SECS:-10}
WARMUP=${BENCH_WARMUP_SECS:-2}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
DURABILITY=${BENCH_DURABILITY:-process}
BACKEND=${BENCH_BACKEND:-embedded}
NODES=${BENCH_NODES:-1}
PG_VERSION=${BENCH_PG_VERSION:-15}
CASES=${BENCH_CASES:-"a b c d e"}
ROUNDS=${BENCH_ROUNDS:-3}
ROUND=1
for case in $CASES; do
    [[ $case == [abcde] ]] || { echo "BENCH_CASES takes a b c d e, not '$case'" >&2; exit 2; }
done
wanted() { [[ " $CASES " == *" $1 "* ]]; }
for n in EVENTS CUSTOMERS BATCH SEED_BATCH SEED_CLIENTS SECS WARMUP THREADS ROUNDS; do
    [[ ${!n} =~ ^[0-9]+$ ]] && (( ${!n} > 0 )) || { echo "BENCH_$n must be a positive integer" >&2; exit 2; }
done
(( BATCH <= 1000 && SEED_BATCH <= 1000 )) \
    || { echo "BENCH_BATCH and BENCH_SEED_BATCH are at most 1000 (the ingest limit)" >&2; exit 2; }
[[ $BACKEND == embedded || $BACKEND == postgres ]] \
    || { echo "BENCH_BACKEND must be embedded or postgres, not '$BACKEND'" >&2; exit 2; }
[[ $NODES == 1 || $NODES == 2 ]] || { echo "BENCH_NODES must be 1 or 2, not '$NODES'" >&2; exit 2; }
[[ $NODES == 1 || $BACKEND == postgres ]] \
    || { echo "BENCH_NODES=2 needs BENCH_BACKEND=postgres (the embedded store serves one node)" >&2; exit 2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { printf '[usage.sh %s] %s\n' "$(date +%T)" "$*" >&2; }

# --- database (BENCH_BACKEND=postgres) ----------------------------------------------------
# No database given: run this script again inside a throwaway PostgreSQL cluster, with fsync
# on (pg_virtualenv turns it off by default).
if [[ $BACKEND == postgres && -z ${BENCH_DATABASE_URL:-} && -z ${PGHOST:-} ]]; then
    [[ -z ${BENCH_IN_PG_VIRTUALENV:-} ]] \
        || { echo "pg_virtualenv started no database (PGHOST unset)" >&2; exit 2; }
    command -v pg_virtualenv >/dev/null || {
        echo "BENCH_BACKEND=postgres needs BENCH_DATABASE_URL, the PG* variables of a database," \
             "or pg_virtualenv (Debian: postgresql-common and postgresql-$PG_VERSION)" >&2
        exit 2
    }
    PGV=(-v "$PG_VERSION" -o fsync=on)
    # As root, pg_virtualenv refuses to start if /etc/postgresql/<version>/regress exists
    # (another pg_virtualenv is running): then use a temporary one.
    [[ $(id -u) -eq 0 && -e /etc/postgresql/$PG_VERSION/regress ]] && PGV+=(-t)
    log "no database given: running again under pg_virtualenv ${PGV[*]}"
    export BENCH_IN_PG_VIRTUALENV=1
    exec pg_virtualenv "${PGV[@]}" "$ROOT/benches/usage.sh" "$@"
fi
command -v python3 >/dev/null || { echo "python3 is required (seeding and parsing)" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl is required" >&2; exit 2; }
DB_URL=""
SCHEMA=""
PG_INFO=""
if [[ $BACKEND == postgres ]]; then
    command -v psql >/dev/null || { echo "psql is required with BENCH_BACKEND=postgres" >&2; exit 2; }
    DB_URL=${BENCH_DATABASE_URL:-$(python3 -c '
import os, urllib.parse
q = lambda s: urllib.parse.quote(s, safe="")
e = os.environ.get
pw = e("PGPASSWORD")
print("postgres://%s%s@%s:%s/%s" % (q(e("PGUSER", "postgres")), ":" + q(pw) if pw else "",
      q(e("PGHOST")), e("PGPORT", "5432"), q(e("PGDATABASE", "postgres"))))')}
    PG_INFO=$(psql "$DB_URL" -AtqX -v ON_ERROR_STOP=1 -c "SELECT 'PostgreSQL ' || current_setting('server_version')
        || ', fsync=' || current_setting('fsync') || ', synchronous_commit=' || current_setting('synchronous_commit')") \
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
WORK=$(mktemp -d -t tollgate-usage-bench-XXXXXX)
NAMES=(A B)
PIDS=()
BASES=()
DATA_DIRS=("$WORK/data" "$WORK/data-b")
LOGS=("$WORK/server.log" "$WORK/server-b.log")
SEED_PIDS=()
cleanup() {
    local pid
    for pid in "${SEED_PIDS[@]}" "${PIDS[@]}"; do
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

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
BACKEND_ENV=()
if [[ $BACKEND == postgres ]]; then
    BACKEND_ENV=(TOLLGATE__STORAGE__BACKEND=postgres TOLLGATE__STORAGE__URL="$DB_URL"
                 TOLLGATE__STORAGE__SCHEMA="$SCHEMA")
    [[ -n ${BENCH_POOL_SIZE:-} ]] && BACKEND_ENV+=(TOLLGATE__STORAGE__POOL_SIZE="$BENCH_POOL_SIZE")
fi
# start_node INDEX PORT: starts the node and waits (60 s at most) until it is ready.
start_node() {
    local i=$1 port=$2 base="http://127.0.0.1:$2"
    log "starting tollgate node ${NAMES[$i]} on $base, data in ${DATA_DIRS[$i]} (backend=$BACKEND, durability=$DURABILITY)"
    mkdir -p "${DATA_DIRS[$i]}"
    # Log level warn: the per-request info line would measure the terminal, not the service.
    env TOLLGATE__SERVER__BIND="127.0.0.1:$port" \
        TOLLGATE__STORAGE__DATA_DIR="${DATA_DIRS[$i]}" \
        TOLLGATE__STORAGE__DURABILITY="$DURABILITY" \
        ${BENCH_WORKERS:+TOLLGATE__SERVER__WORKERS="$BENCH_WORKERS"} \
        "${BACKEND_ENV[@]}" \
        TOLLGATE__LOG__LEVEL=warn \
        TOLLGATE__RATE_LIMITS__ENABLED=false \
        "$BIN" >"${LOGS[$i]}" 2>&1 &
    PIDS[i]=$!
    BASES[i]=$base
    for _ in $(seq 600); do
        curl -fs -m 2 "$base/readyz" >/dev/null 2>&1 && break
        kill -0 "${PIDS[$i]}" 2>/dev/null || { cat "${LOGS[$i]}" >&2; exit 1; }
        sleep 0.1
    done
    curl -fs -m 5 "$base/readyz" >/dev/null || { echo "node ${NAMES[$i]} not ready" >&2; cat "${LOGS[$i]}" >&2; exit 1; }
}
start_node 0 "${BENCH_PORT:-$(free_port)}"
if (( NODES == 2 )); then
    start_node 1 "$(free_port)"
fi
BASE=${BASES[0]}
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# --- set-up through the public API ------------------------------------------------------
# The bootstrap token (every scope) creates the organization and its access token; the rest
# runs as that organization token, as a seller's backend would (so events carry no
# organization_id).
log "creating the organization, its access token, $CUSTOMERS customers and two meters"
python3 - "$BASE" "$(cat "$WORK/data/bootstrap-token")" "$CUSTOMERS" "$WORK" <<'PY'
import http.client, json, sys, urllib.parse
base, admin, customers, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
u = urllib.parse.urlparse(base)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
def call(method, path, token, body=None, expect=(200, 201)):
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"content-type": "application/json", "authorization": "Bearer " + token})
    r = c.getresponse(); data = r.read()
    if r.status not in expect:
        raise SystemExit(f"{method} {path}: {r.status} {data[:400]!r}")
    return json.loads(data) if data else None
org = call("POST", "/v1/organizations/", admin, {"name": "Usage bench", "slug": "usage-bench"})["id"]
token = call("POST", "/v1/organization-access-tokens/", admin, {
    "organization_id": org, "comment": "usage bench", "expires_in": None,
    "scopes": ["events:read", "events:write", "meters:read", "meters:write",
               "customer_meters:read", "customers:read", "customers:write"]})["token"]
for i in range(customers):
    call("POST", "/v1/customers/", token, {"email": f"cust{i}@bench.example", "name": f"Customer {i}",
                                            "external_id": f"cust-{i}"})
calls = call("POST", "/v1/meters/", token, {
    "name": "Calls", "aggregation": {"func": "count"},
    "filter": {"conjunction": "and", "clauses": [{"property": "name", "operator": "like", "value": "api."}]}})["id"]
tokens = call("POST", "/v1/meters/", token, {
    "name": "Tokens", "aggregation": {"func": "sum", "property": "tokens"},
    "filter": {"conjunction": "and", "clauses": [{"property": "name", "operator": "eq", "value": "api.chat"}]}})["id"]
for name, value in [("org", org), ("token", token), ("calls", calls), ("tokens", tokens)]:
    with open(f"{work}/{name}", "w") as f: f.write(value)
PY
TOKEN=$(cat "$WORK/token")
CALLS=$(cat "$WORK/calls")
TOKENS=$(cat "$WORK/tokens")
RSS_START=()
for i in "${!PIDS[@]}"; do RSS_START[i]=$(rss_kib "${PIDS[$i]}"); done

# --- load machinery (as benches/validate.sh) ---------------------------------------------
# The ingest script: each request is a batch of events, each with an external id unique to
# this run (args: prefix, customers, events per request, token).
cat >"$WORK/ingest.lua" <<'LUA'
local counter = 0
function setup(thread)
    counter = counter + 1
    thread:set("tid", counter)
end
function init(args)
    prefix = args[1]
    customers = tonumber(args[2])
    batch = tonumber(args[3])
    names = {"api.search", "api.embed", "api.upload", "api.chat"}
    n = 0
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
    wrk.headers["Authorization"] = "Bearer " .. args[4]
end
function request()
    n = n + 1
    local parts = {}
    for k = 1, batch do
        local i = n * batch + k
        parts[k] = '{"name":"' .. names[i % 4 + 1] .. '","external_customer_id":"cust-' .. ((i * 7919 + tid) % customers)
            .. '","external_id":"' .. prefix .. '-' .. tid .. '-' .. n .. '-' .. k
            .. '","metadata":{"tokens":' .. (i % 1000 + 1) .. ',"endpoint":"/v1/search"}}'
    end
    return wrk.format(nil, "/v1/events/ingest", nil, '{"events":[' .. table.concat(parts, ",") .. ']}')
end
LUA
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
HZ=$(getconf CLK_TCK)
WRK_THREADS=$(( THREADS / NODES > 0 ? THREADS / NODES : 1 ))
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# wrk_node I CONNECTIONS SECONDS OUTPUT PATH [ingest script args...]: one wrk against node
# I: with script args, the ingest script (PATH unused), else GET PATH with the token.
wrk_node() {
    local i=$1 conns=$2 secs=$3 out=$4 path=$5; shift 5
    local target=(-H "Authorization: Bearer $TOKEN" "${BASES[$i]}$path") latency=()
    [[ $# -gt 0 ]] && target=(-s "$WORK/ingest.lua" "${BASES[$i]}" -- "$1-${NAMES[$i]}" "${@:2}")
    [[ $out == /dev/null ]] || latency=(--latency)
    # wrk ends by itself after the duration; the timeout only guards against a hang.
    timeout $(( secs + 60 )) wrk -t"$WRK_THREADS" -c"$conns" -d"${secs}s" --timeout 30s \
        "${latency[@]}" "${target[@]}" >"$out"
}
# run NAME CONNECTIONS PATH [ingest script args...]: warm-up, then the measured run, against
# every node at once (CONNECTIONS shared by the nodes); one results row per node.
run() {
    local name=$1 conns=$2; shift 2
    local i job jobs=() share=() out=() before=() after=() args=("$@")
    for i in "${!BASES[@]}"; do
        share[i]=$(( conns / NODES + (i < conns % NODES ? 1 : 0) ))
        out[i]="$WORK/wrk-$name-$conns-$ROUND-${NAMES[$i]}.txt"
    done
    # The warm-up's events get external ids of their own (prefix w…).
    [[ ${#args[@]} -gt 1 ]] && args[1]="w${args[1]}"
    for i in "${!BASES[@]}"; do wrk_node "$i" "${share[$i]}" "$WARMUP" /dev/null "${args[@]}" & jobs+=("$!"); done
    for job in "${jobs[@]}"; do wait "$job"; done
    jobs=()
    for i in "${!PIDS[@]}"; do before[i]=$(cpu_ticks "${PIDS[$i]}"); done
    for i in "${!BASES[@]}"; do wrk_node "$i" "${share[$i]}" "$SECS" "${out[$i]}" "$@" & jobs+=("$!"); done
    for job in "${jobs[@]}"; do wait "$job"; done
    for i in "${!PIDS[@]}"; do after[i]=$(cpu_ticks "${PIDS[$i]}"); done
    for i in "${!BASES[@]}"; do
        python3 - "${out[$i]}" "$name" "$conns" "${NAMES[$i]}" "$(( after[i] - before[i] ))" "$ROUND" >>"$RESULTS" <<'PY'
import re, sys
text, name, conns, node, ticks, rnd = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
done = int(re.search(r"(\d+) requests in", text).group(1))
def ms(label):
    m = re.search(r"^\s*" + label + r"%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    v, unit = float(m.group(1)), m.group(2)
    return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
errs = re.search(r"Socket errors:.*", text)
print(f"{name}\t{conns}\t{rnd}\t{node}\t{rps}\t{ms('50')}\t{ms('99')}\t{ticks}\t{done}\t{bad.group(1) if bad else 0}\t{errs.group(0) if errs else ''}")
PY
    done
}
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# --- (a), (b) ---------------------------------------------------------------------------
RUN_ID=$$
for c in $CONNECTIONS; do
    for (( ROUND = 1; ROUND <= ROUNDS; ROUND++ )); do
        if wanted a; then
            log "connections=$c, round $ROUND/$ROUNDS: (a) healthz"
            run a "$c" /healthz
        fi
        if wanted b; then
            log "connections=$c, round $ROUND/$ROUNDS: (b) ingest, $BATCH events per request"
            run b "$c" "" "b$RUN_ID-$c-$ROUND" "$CUSTOMERS" "$BATCH" "$TOKEN"
        fi
    done
done

# --- (c) seeding a month ------------------------------------------------------------------
# Timestamps: event i of N at start - 30 days + i x (30 days - 1 min) / N, so the month ends
# a minute before the start (every timestamp in the past). Each process takes a contiguous
# share of the indices in batches; a busy answer (429/503) is retried after a pause.
MONTH_END=$(date -u +%s)
MIN_FREE_MB=${BENCH_MIN_FREE_MB:-2048}
DISK_PATHS=("$WORK")
if [[ $BACKEND == postgres ]]; then
    PG_DATA=$(psql "$DB_URL" -AtqX -c "SHOW data_directory" 2>/dev/null || true)
    [[ -n $PG_DATA && -d $PG_DATA ]] && DISK_PATHS+=("$PG_DATA")
fi
SEED_SECS=0
SEED_RATE=0
if wanted c; then
    log "seeding $EVENTS events over the 30 days before now ($SEED_CLIENTS processes, $SEED_BATCH per request)"
    SEED_START=$(date +%s.%N)
    for (( w = 0; w < SEED_CLIENTS; w++ )); do
        python3 - "${BASES[$(( w % NODES ))]}" "$TOKEN" "$EVENTS" "$CUSTOMERS" "$SEED_BATCH" "$SEED_CLIENTS" "$w" "$MONTH_END" <<'PY' &
import datetime, http.client, json, sys, time, urllib.parse
base, token, n, customers, batch, clients, w, end = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
u = urllib.parse.urlparse(base)
lo, hi = n * w // clients, n * (w + 1) // clients
start, span = end - 30 * 86400, 30 * 86400 - 60
names = ["api.search", "api.embed", "api.upload", "api.chat"]
utc = datetime.timezone.utc
c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
headers = {"content-type": "application/json", "authorization": "Bearer " + token}
step = max(batch, (hi - lo) // 10)
next_report, t0 = lo + step, time.time()
for first in range(lo, hi, batch):
    parts = []
    for i in range(first, min(first + batch, hi)):
        ts = datetime.datetime.fromtimestamp(start + i * span / n, utc).isoformat().replace("+00:00", "Z")
        parts.append('{"name":"%s","external_customer_id":"cust-%d","external_id":"seed-%d","timestamp":"%s",'
                     '"metadata":{"tokens":%d,"endpoint":"/v1/search"}}'
                     % (names[i % 4], i % customers, i, ts, i * 7919 % 1000 + 1))
    body = '{"events":[' + ",".join(parts) + "]}"
    for attempt in range(60):
        try:
            c.request("POST", "/v1/events/ingest", body=body, headers=headers)
            r = c.getresponse(); data = r.read()
        except (OSError, http.client.HTTPException):
            # The connection dropped (keep-alive closed): reconnect; the external ids make
            # a repeated batch count as duplicates, not twice.
            c.close(); c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
            time.sleep(0.2)
            continue
        if r.status in (429, 503):
            time.sleep(0.1 * (attempt + 1))
            continue
        break
    else:
        raise SystemExit(f"seeding process {w}: the server stayed busy")
    if r.status != 200:
        raise SystemExit(f"seeding process {w}: {r.status} {data[:400]!r}")
    if first >= next_report and w == 0:
        done = first - lo
        print(f"[usage.sh] seeding: process 0 at {done}/{hi - lo} ({done / (time.time() - t0):.0f} events/s per process)",
              file=sys.stderr, flush=True)
        next_report += step
PY
        SEED_PIDS+=("$!")
    done
    # While they run: stop (and fail) before the disk fills up (other work shares it).
    while :; do
        alive=0
        for pid in "${SEED_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        (( alive )) || break
        for path in "${DISK_PATHS[@]}"; do
            free_mb=$(( $(df -Pk "$path" | awk 'NR == 2 {print $4}') / 1024 ))
            if (( free_mb < MIN_FREE_MB )); then
                echo "only ${free_mb} MiB left on the disk of $path (BENCH_MIN_FREE_MB=$MIN_FREE_MB): seeding stopped" >&2
                exit 1
            fi
        done
        sleep 2
    done
    for pid in "${SEED_PIDS[@]}"; do
        wait "$pid" || { echo "seeding failed" >&2; exit 1; }
    done
    SEED_PIDS=()
    SEED_END=$(date +%s.%N)
    read -r SEED_SECS SEED_RATE < <(python3 -c "import sys; s = float(sys.argv[2]) - float(sys.argv[1]); print(f'{s:.1f} {int(sys.argv[3]) / s:.0f}')" "$SEED_START" "$SEED_END" "$EVENTS")
    log "seeded $EVENTS events in ${SEED_SECS}s ($SEED_RATE events/s)"
fi
sleep 1
RSS_SEEDED=()
for i in "${!PIDS[@]}"; do RSS_SEEDED[i]=$(rss_kib "${PIDS[$i]}"); done
if [[ $BACKEND == postgres ]]; then
    STORE_BYTES=$(psql "$DB_URL" -AtqX -v ON_ERROR_STOP=1 -c "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '$SCHEMA' AND c.relkind IN ('r', 'm')")
    STORE_WHAT="schema $SCHEMA (tables with their indexes and TOAST)"
else
    STORE_BYTES=$(( $(du -sk "${DATA_DIRS[0]}" | cut -f1) * 1024 ))
    STORE_WHAT="data directory"
fi

# --- (d), (e) reads -----------------------------------------------------------------------
# The month: [MONTH_END - 30 days, now]; now includes (b)'s events, ingested at "now".
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
READ_END=$(( $(date -u +%s) + 60 ))
FROM=$(iso $(( MONTH_END - 30 * 86400 )))
TO=$(iso "$READ_END")
WEEK=$(iso $(( READ_END - 7 * 86400 + 3600 )))  # within Polar's 7 days for hour
Q_CALLS_DAY="/v1/meters/$CALLS/quantities?start_timestamp=$FROM&end_timestamp=$TO&interval=day"
Q_TOKENS_DAY="/v1/meters/$TOKENS/quantities?start_timestamp=$FROM&end_timestamp=$TO&interval=day"
Q_CALLS_HOUR="/v1/meters/$CALLS/quantities?start_timestamp=$WEEK&end_timestamp=$TO&interval=hour"
Q_CALLS_CUST="/v1/meters/$CALLS/quantities?start_timestamp=$FROM&end_timestamp=$TO&interval=day&external_customer_id=cust-1"
CUSTOMER_METERS="/v1/customer-meters/?page=1&limit=100"
CHECK=""
if wanted d || wanted e; then
    # One answer of each, checked: the number of buckets, and, when only the seeding
    # ingested (no (b)), the exact totals of the seeded events.
    CHECK=$(python3 - "$BASE" "$TOKEN" "$EVENTS" "$CUSTOMERS" "$(wanted b && echo 1 || echo 0)" "$(wanted c && echo 1 || echo 0)" \
        "$Q_CALLS_DAY" "$Q_TOKENS_DAY" "$Q_CALLS_HOUR" "$Q_CALLS_CUST" "$CUSTOMER_METERS" <<'PY'
import http.client, json, sys, time, urllib.parse
base, token, n, customers, with_b, with_c = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1", sys.argv[6] == "1"
calls_day, tokens_day, calls_hour, calls_cust, cms = sys.argv[7:12]
u = urllib.parse.urlparse(base)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
def get(path):
    t = time.time()
    c.request("GET", path, headers={"authorization": "Bearer " + token})
    r = c.getresponse(); data = r.read()
    if r.status != 200:
        raise SystemExit(f"GET {path}: {r.status} {data[:400]!r}")
    return json.loads(data), (time.time() - t) * 1000
out = []
day, ms = get(calls_day)
out.append(f"Calls by day: {len(day['quantities'])} buckets, total {day['total']:.0f} (first answer {ms:.1f} ms)")
tok, ms = get(tokens_day)
out.append(f"Tokens by day: {len(tok['quantities'])} buckets, total {tok['total']:.0f} (first answer {ms:.1f} ms)")
hour, ms = get(calls_hour)
out.append(f"Calls by hour, 7 days less an hour: {len(hour['quantities'])} buckets, total {hour['total']:.0f} (first answer {ms:.1f} ms)")
cust, ms = get(calls_cust)
out.append(f"Calls by day for cust-1: {len(cust['quantities'])} buckets, total {cust['total']:.0f} (first answer {ms:.1f} ms)")
page, ms = get(cms)
out.append(f"customer meters: {len(page['items'])} on the first page, total_count {page['pagination']['total_count']} (first answer {ms:.1f} ms)")
assert 31 <= len(day["quantities"]) <= 32, day["quantities"][:3]
assert 7 * 24 - 1 <= len(hour["quantities"]) <= 7 * 24 + 1, len(hour["quantities"])
if with_c and not with_b:
    # Exactly the seeded events: every one is "api.*"; a quarter are "api.chat" (i % 4 == 3).
    want_tokens = sum(i * 7919 % 1000 + 1 for i in range(3, n, 4))
    want_cust = len(range(1, n, customers)) if customers > 1 else 0
    assert day["total"] == n, (day["total"], n)
    assert tok["total"] == want_tokens, (tok["total"], want_tokens)
    assert cust["total"] == want_cust, (cust["total"], want_cust)
    out.append("checked: the totals are exactly the seeded events'")
elif with_c:
    assert day["total"] >= n, (day["total"], n)
    out.append("checked: the month's count covers the seeded events (and (b)'s)")
print("\n".join(out))
PY
    ) || { echo "the quantities check failed:" >&2; echo "$CHECK" >&2; exit 1; }
    log "$CHECK"
fi
for c in $CONNECTIONS; do
    for (( ROUND = 1; ROUND <= ROUNDS; ROUND++ )); do
        if wanted d; then
            log "connections=$c, round $ROUND/$ROUNDS: (d) quantities"
            run d1 "$c" "$Q_CALLS_DAY"
            run d2 "$c" "$Q_TOKENS_DAY"
            run d3 "$c" "$Q_CALLS_HOUR"
            run d4 "$c" "$Q_CALLS_CUST"
        fi
        if wanted e; then
            log "connections=$c, round $ROUND/$ROUNDS: (e) customer meters"
            run e "$c" "$CUSTOMER_METERS"
        fi
    done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
RSS_END=()
for i in "${!PIDS[@]}"; do RSS_END[i]=$(rss_kib "${PIDS[$i]}"); done

# --- report -----------------------------------------------------------------------------
if [[ $BACKEND == postgres ]]; then
    SETUP="backend=postgres ($PG_INFO; schema $SCHEMA, pool_size=${BENCH_POOL_SIZE:-16} per node)"
else
    SETUP="backend=embedded, durability=$DURABILITY"
fi
if (( NODES == 1 )); then SETUP+=", 1 node"; else SETUP+=", $NODES nodes"; fi
[[ -n ${BENCH_WORKERS:-} ]] && SETUP+=", workers=$BENCH_WORKERS per node"
echo
echo "machine: $(nproc) cores; load average before the runs: $LOAD_BEFORE, after: $LOAD_AFTER"
echo "usage billing, $SETUP; $CUSTOMERS customers, meters Calls (count) and Tokens (sum)"
if wanted c; then
    echo "(c) seeded $EVENTS events over 30 days in ${SEED_SECS}s: $SEED_RATE events/s ($SEED_CLIENTS processes, $SEED_BATCH events per request)"
fi
[[ -n $CHECK ]] && echo "$CHECK"
python3 - "$RESULTS" "$BATCH" "$HZ" "$NODES" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
batch, hz, nodes = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
label = {"a": "(a) GET /healthz", "b": f"(b) ingest, {batch} events/request",
         "d1": "(d1) Calls, month by day", "d2": "(d2) Tokens, month by day",
         "d3": "(d3) Calls, 7 days by hour", "d4": "(d4) Calls, month by day, 1 customer",
         "e": "(e) customer meters, 100/page"}
if nodes > 1:
    print("req/s = sum over the nodes; p50/p99 = the WORSE node's; cpu us/req = all servers' CPU / all requests")
print("each case: the figures of its median run (by req/s) of the rounds; every run's req/s in brackets")
print(f"{'case':<40}{'conns':>6}{'req/s':>10}{'events/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'cpu us/req':>11}{'non-2xx':>9}{'/ (a)':>7}  runs")
runs = {}
for name, conns, rnd, node, rps, p50, p99, ticks, done, bad, errs in rows:
    runs.setdefault((name, conns), {}).setdefault(rnd, []).append(
        (float(rps), float(p50), float(p99), int(ticks), int(done), int(bad), errs))
def summed(per):
    """One run over every node: req/s summed, the worse node's latencies."""
    done = sum(r[4] for r in per)
    return {"rps": sum(r[0] for r in per), "p50": max(r[1] for r in per), "p99": max(r[2] for r in per),
            "cpu": sum(r[3] for r in per) / hz * 1e6 / done if done else 0.0,
            "bad": sum(r[5] for r in per), "errs": "; ".join(r[6] for r in per if r[6])}
def median(case):
    ordered = sorted((summed(per) for per in runs[case].values()), key=lambda r: r["rps"])
    return ordered[len(ordered) // 2], [r["rps"] for r in ordered]
for (name, conns) in runs:
    m, all_rps = median((name, conns))
    a = median(("a", conns))[0]["rps"] if ("a", conns) in runs else 0
    events = f"{m['rps'] * batch:>10.0f}" if name == "b" else f"{'':>10}"
    ratio = f"{m['rps'] / a:>7.3f}" if a else f"{'':>7}"
    bad = sum(summed(per)["bad"] for per in runs[(name, conns)].values())
    spread = ", ".join(f"{r:.0f}" for r in all_rps)
    print(f"{label[name]:<40}{conns:>6}{m['rps']:>10.0f}{events}{m['p50']:>9.2f}{m['p99']:>9.2f}"
          f"{m['cpu']:>11.1f}{bad:>9}{ratio}  ({spread}) {m['errs']}")
PY
echo
for i in "${!PIDS[@]}"; do
    echo "resident memory of node ${NAMES[$i]} (VmRSS): $(( RSS_START[i] / 1024 )) MiB after set-up," \
         "$(( RSS_SEEDED[i] / 1024 )) MiB after (b) and the seeding, $(( RSS_END[i] / 1024 )) MiB after the reads"
done
python3 -c "import sys; b, n = int(sys.argv[1]), int(sys.argv[2]); print(f'store size after the seeding ({sys.argv[3]}): {b / 2**20:.0f} MiB' + (f', {b / n:.0f} B per seeded event' if n else ''))" \
    "$STORE_BYTES" "$(wanted c && echo "$EVENTS" || echo 0)" "$STORE_WHAT"
for i in "${!PIDS[@]}"; do
    WARNS=$(grep -c . "${LOGS[$i]}" || true)
    echo "server log of node ${NAMES[$i]}: $WARNS line(s) at warn or error level${BENCH_KEEP:+ (${LOGS[$i]})}"
    grep -m 5 . "${LOGS[$i]}" | cut -c1-200 | sed 's/^/  /' || true
done
