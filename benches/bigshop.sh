#!/usr/bin/env bash
# A shop that grew to BENCH_SALES sales (issue 52; benches/README.md, section "bigshop.sh"):
# what the store costs and how fast it reads at that size. One command:
#
#     benches/bigshop.sh
#
# Builds the release binary (or runs BENCH_BIN), fills a fresh store with the hidden
# generator (`tollgate bench-fill`: BENCH_SALES sales over BENCH_MONTHS months, written
# through the store's write path, with the service's own fan-out: events, deliveries,
# e-mails, day counters; see src/bench_fill.rs), then prints:
#   fill      sales/s of the generator
#   stats     `tollgate storage stats` (per tree or table, per collection and index), the
#             disk per order (orders include renewals), the data directory's other folders
#   start     time to /readyz after a graceful stop and after kill -9
#   memory    idle resident memory (after start and BENCH_IDLE_SECS), peak (VmHWM) at the end
#   reads     p50/p99 (wrk, BENCH_CONNECTIONS connections, BENCH_SECS s, the median of
#             BENCH_ROUNDS runs) of: the API lists of customers, orders, license keys and
#             subscriptions at their first, middle and last page (limit 100); customer
#             search (a rare and a common needle); BENCH_SEARCH_PATHS (more API paths, e.g.
#             the search helper's `?query=` on orders and license keys); the dashboard's
#             overview and lists (signed in with a session cookie)
#   validate  POST /v1/customer-portal/license-keys/validate as a ratio of GET /healthz in
#             the same round: batched counters (the default), then strict (the service
#             restarted with license_keys.stats_flush_ms = 0)
#   sale      the sale path with the big store underneath: confirms/s and p50/p99 of
#             POST /v1/checkouts/custom/client/{secret}/confirm, BENCH_VALIDATE_CONNECTIONS
#             buyers at once, each confirm a checkout of its own (created beforehand, not
#             timed: BENCH_SALE_RATE per second of each run's warm-up and measure)
#   admin     `tollgate backup` (and its size), `restore` into an empty store, `check`; on the
#             embedded store, `tollgate compact` and the size after it
#
# Environment (defaults in brackets):
#   BENCH_SALES [1000000]  BENCH_MONTHS [12]  BENCH_ORGS [1]  BENCH_CHUNK [1000]
#   BENCH_ENDPOINTS [2] (webhook endpoints per organization: the first takes every event,
#   the second the order events)
#   BENCH_SECS [10]  BENCH_WARMUP_SECS [2]  BENCH_CONNECTIONS [8]  BENCH_THREADS [2]
#   BENCH_ROUNDS [3]  BENCH_IDLE_SECS [10]  BENCH_SEARCH_PATHS [""] (space-separated API
#   paths; {org} is replaced by the organization's id)
#   BENCH_VALIDATE_CONNECTIONS [64]  BENCH_SALE_RATE [1500]
#   BENCH_KEEP [unset: remove the work directory]
#   BENCH_REUSE [unset: a work directory BENCH_KEEP kept: measure its store, no fill]
#   BENCH_BIN [unset: cargo build --release, then $CARGO_TARGET_DIR or target/release/tollgate]
#   BENCH_BACKEND [embedded] (embedded|postgres)  BENCH_DATABASE_URL [from PG* variables;
#   with neither, the script runs itself again under `pg_virtualenv -v $BENCH_PG_VERSION
#   -o fsync=on`]  BENCH_PG_VERSION [15]. Each run works in fresh schemas (the shop and the
#   restored copy), dropped at exit.
set -euo pipefail

SALES=${BENCH_SALES:-1000000}
MONTHS=${BENCH_MONTHS:-12}
ORGS=${BENCH_ORGS:-1}
CHUNK=${BENCH_CHUNK:-1000}
SECS=${BENCH_SECS:-10}
WARMUP=${BENCH_WARMUP_SECS:-2}
CONNECTIONS=${BENCH_CONNECTIONS:-8}
VCONNECTIONS=${BENCH_VALIDATE_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
ROUNDS=${BENCH_ROUNDS:-3}
IDLE=${BENCH_IDLE_SECS:-10}
SALE_RATE=${BENCH_SALE_RATE:-1500}
ENDPOINTS=${BENCH_ENDPOINTS:-2}
BACKEND=${BENCH_BACKEND:-embedded}
PG_VERSION=${BENCH_PG_VERSION:-15}
for n in SALES MONTHS ORGS CHUNK SECS WARMUP CONNECTIONS VCONNECTIONS THREADS ROUNDS IDLE SALE_RATE; do
    [[ ${!n} =~ ^[0-9]+$ ]] && (( ${!n} > 0 )) || { echo "BENCH_$n must be a positive integer" >&2; exit 2; }
done
[[ $BACKEND == embedded || $BACKEND == postgres ]] \
    || { echo "BENCH_BACKEND must be embedded or postgres, not '$BACKEND'" >&2; exit 2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { printf '[bigshop.sh %s] %s\n' "$(date +%T)" "$*" >&2; }

# --- database (BENCH_BACKEND=postgres), as benches/usage.sh -------------------------------
if [[ $BACKEND == postgres && -z ${BENCH_DATABASE_URL:-} && -z ${PGHOST:-} ]]; then
    [[ -z ${BENCH_IN_PG_VIRTUALENV:-} ]] \
        || { echo "pg_virtualenv started no database (PGHOST unset)" >&2; exit 2; }
    command -v pg_virtualenv >/dev/null || {
        echo "BENCH_BACKEND=postgres needs BENCH_DATABASE_URL, the PG* variables of a database," \
             "or pg_virtualenv (Debian: postgresql-common and postgresql-$PG_VERSION)" >&2
        exit 2
    }
    PGV=(-v "$PG_VERSION" -o fsync=on)
    [[ $(id -u) -eq 0 && -e /etc/postgresql/$PG_VERSION/regress ]] && PGV+=(-t)
    log "no database given: running again under pg_virtualenv ${PGV[*]}"
    export BENCH_IN_PG_VIRTUALENV=1
    exec pg_virtualenv "${PGV[@]}" "$ROOT/benches/bigshop.sh" "$@"
fi
command -v python3 >/dev/null || { echo "python3 is required (parsing)" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl is required" >&2; exit 2; }
DB_URL=""
SCHEMA=""
SCHEMA2=""
if [[ $BACKEND == postgres ]]; then
    command -v psql >/dev/null || { echo "psql is required with BENCH_BACKEND=postgres" >&2; exit 2; }
    DB_URL=${BENCH_DATABASE_URL:-$(python3 -c '
import os, urllib.parse
q = lambda s: urllib.parse.quote(s, safe="")
e = os.environ.get
pw = e("PGPASSWORD")
print("postgres://%s%s@%s:%s/%s" % (q(e("PGUSER", "postgres")), ":" + q(pw) if pw else "",
      q(e("PGHOST")), e("PGPORT", "5432"), q(e("PGDATABASE", "postgres"))))')}
    psql "$DB_URL" -AtqX -c "SELECT 1" >/dev/null \
        || { echo "cannot reach the database (BENCH_DATABASE_URL or PG* variables)" >&2; exit 2; }
    SCHEMA="bench_$$_$(date +%s)"
    SCHEMA2="${SCHEMA}_restored"
    log "database schemas $SCHEMA and $SCHEMA2 (dropped at exit)"
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

WORK=$(mktemp -d -t tollgate-bigshop-XXXXXX)
PID=""
cleanup() {
    if [[ -n $PID ]]; then { kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; } || true; fi
    local s
    for s in $SCHEMA $SCHEMA2; do
        psql "$DB_URL" -qX -c "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1 \
            && log "dropped schema $s" || log "could not drop schema $s"
    done
    if [[ -n "${BENCH_KEEP:-}" ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=${BENCH_PORT:-$(free_port)}
BASE="http://127.0.0.1:$PORT"
DATA="$WORK/data"
PASSWORD="bigshop-$$-$RANDOM"
# env_for DATA_DIR SCHEMA: the service's settings for a store.
env_for() {
    local out=(TOLLGATE__SERVER__BIND="127.0.0.1:$PORT" TOLLGATE__STORAGE__DATA_DIR="$1"
               TOLLGATE__LOG__LEVEL=warn TOLLGATE__RATE_LIMITS__ENABLED=false)
    [[ $BACKEND == postgres ]] && out+=(TOLLGATE__STORAGE__BACKEND=postgres
                                        TOLLGATE__STORAGE__URL="$DB_URL" TOLLGATE__STORAGE__SCHEMA="$2")
    printf '%s\n' "${out[@]}"
}
mapfile -t ENV < <(env_for "$DATA" "$SCHEMA")
mapfile -t ENV2 < <(env_for "$WORK/restored" "$SCHEMA2")
now_ms() { date +%s%3N; }
rss_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
mib() { python3 -c "print(f'{int(\"$1\") / 1048576:.1f}')"; }

# --- fill -------------------------------------------------------------------------------
if [[ -n ${BENCH_REUSE:-} ]]; then
    # A work directory a run kept (BENCH_KEEP): its filled store is measured again, not
    # filled anew (embedded store only; its data and fill report are copied).
    [[ $BACKEND == embedded && -d $BENCH_REUSE/data && -f $BENCH_REUSE/password ]] \
        || { echo "BENCH_REUSE needs a kept embedded work directory (data/, password)" >&2; exit 2; }
    log "measuring the store of $BENCH_REUSE (BENCH_REUSE: not filling)"
    cp -a "$BENCH_REUSE/data" "$DATA"
    cp "$BENCH_REUSE/fill.txt" "$WORK/fill.txt"
    PASSWORD=$(cat "$BENCH_REUSE/password")
else
    log "filling $SALES sales over $MONTHS months ($ORGS organizations, $CHUNK per transaction)"
    mkdir -p "$DATA"
    T0=$(now_ms)
    env "${ENV[@]}" "$BIN" bench-fill --sales "$SALES" --months "$MONTHS" --organizations "$ORGS" \
        --chunk "$CHUNK" --endpoints "$ENDPOINTS" --dashboard-password "$PASSWORD" >"$WORK/fill.out" 2>"$WORK/fill.log" \
        || { cat "$WORK/fill.out" "$WORK/fill.log" >&2; exit 1; }
    grep '^generated ' "$WORK/fill.out" >"$WORK/fill.txt"
    echo "$PASSWORD" >"$WORK/password"
    FILL_S=$(( ($(now_ms) - T0) / 1000 ))
    log "$(cat "$WORK/fill.txt") (wall ${FILL_S}s)"
fi

log "storage stats"
env "${ENV[@]}" "$BIN" storage stats >"$WORK/stats.txt"
grep -E '^(engine|table |tree |rows of |logical|on disk|data_dir|orders)' "$WORK/stats.txt" >&2

# --- start-up ----------------------------------------------------------------------------
# start [ENV...]: starts the service (PID), sets READY_MS to the milliseconds to /readyz.
start() {
    local t0 logf="$WORK/server.log"
    t0=$(now_ms)
    env "$@" "$BIN" >>"$logf" 2>&1 &
    PID=$!
    for _ in $(seq 3000); do
        if curl -fs -m 2 "$BASE/readyz" >/dev/null 2>&1; then READY_MS=$(( $(now_ms) - t0 )); return; fi
        kill -0 "$PID" 2>/dev/null || { cat "$logf" >&2; exit 1; }
        sleep 0.05
    done
    echo "not ready after 150 s" >&2; exit 1
}
stop() { kill -TERM "$PID"; wait "$PID" 2>/dev/null || true; PID=""; }
start "${ENV[@]}"; FIRST_MS=$READY_MS
stop
start "${ENV[@]}"; GRACEFUL_MS=$READY_MS
kill -9 "$PID"; wait "$PID" 2>/dev/null || true; PID=""
start "${ENV[@]}"; KILLED_MS=$READY_MS
sleep "$IDLE"
IDLE_KIB=$(rss_kib "$PID" VmRSS)
log "ready in ${FIRST_MS} ms (first start after the fill), ${GRACEFUL_MS} ms after a graceful stop, ${KILLED_MS} ms after kill -9; idle RSS $(( IDLE_KIB / 1024 )) MiB"

# --- what to read ------------------------------------------------------------------------
TOKEN=$(cat "$DATA/bootstrap-token")
python3 - "$BASE" "$TOKEN" "$WORK" <<'PY'
import http.client, json, sys, urllib.parse
base, token, work = sys.argv[1:4]
u = urllib.parse.urlparse(base)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
def get(path):
    c.request("GET", path, headers={"authorization": "Bearer " + token})
    r = c.getresponse(); data = r.read()
    if r.status != 200:
        raise SystemExit(f"GET {path}: {r.status} {data[:300]!r}")
    return json.loads(data)
orgs = get("/v1/organizations/?limit=100")["items"]
org = next(o for o in orgs if o["slug"].startswith("bigshop-"))
paths = []
for name in ["customers", "orders", "license-keys", "subscriptions"]:
    first = get(f"/v1/{name}/?organization_id={org['id']}&limit=100")
    last = max(1, first["pagination"]["max_page"])
    for label, page in [("first", 1), ("middle", max(1, (last + 1) // 2)), ("last", last)]:
        paths.append((f"{name}:{label}", f"/v1/{name}/?organization_id={org['id']}&limit=100&page={page}"))
    if name == "customers":
        # A needle that finds one customer (the last one's address) and a common one.
        email = get(f"/v1/customers/?organization_id={org['id']}&limit=1&page={last * 100}")["items"]
        rare = (email[0]["email"] if email else first["items"][0]["email"]).split("@")[0]
        paths.append(("customers:search-rare", f"/v1/customers/?organization_id={org['id']}&limit=100&query={urllib.parse.quote(rare)}"))
        paths.append(("customers:search-common", f"/v1/customers/?organization_id={org['id']}&limit=100&query=lovelace"))
    if name == "license-keys":
        key = first["items"][0]["key"]
with open(f"{work}/paths.tsv", "w") as f:
    for label, path in paths:
        f.write(f"{label}\t{path}\n")
with open(f"{work}/org", "w") as f: f.write(org["id"])
with open(f"{work}/org_slug", "w") as f: f.write(org["slug"])
with open(f"{work}/key", "w") as f: f.write(key)
# The generator's endpoints pointed at its own receiver, gone with it: disabled, so that
# the measurements below do not race deliveries that can only fail (their events are
# still rendered and recorded, as skipped).
for e in get(f"/v1/webhooks/endpoints?organization_id={org['id']}&limit=100")["items"]:
    c.request("PATCH", f"/v1/webhooks/endpoints/{e['id']}", json.dumps({"enabled": False}),
              {"authorization": "Bearer " + token, "content-type": "application/json"})
    r = c.getresponse(); r.read()
    if r.status != 200:
        raise SystemExit(f"disabling endpoint {e['id']}: {r.status}")
products = get(f"/v1/products/?organization_id={org['id']}&limit=100")["items"]
one_time = next(p for p in products if not p.get("is_recurring"))
with open(f"{work}/price", "w") as f: f.write(one_time["prices"][0]["id"])
PY
ORG=$(cat "$WORK/org")
for p in ${BENCH_SEARCH_PATHS:-}; do
    printf 'search:%s\t%s\n' "$p" "${p//\{org\}/$ORG}" >>"$WORK/paths.tsv"
done

# The dashboard: signed in as the bootstrap admin (the generator gave it $PASSWORD).
JAR="$WORK/cookies"
CSRF=$(curl -s -c "$JAR" -b "$JAR" "$BASE/oauth2/login" | python3 -c '
import re, sys; m = re.search(r"name=\"csrf_token\" value=\"([^\"]+)\"", sys.stdin.read()); print(m.group(1) if m else "")')
curl -fs -o /dev/null -c "$JAR" -b "$JAR" --data-urlencode "csrf_token=$CSRF" \
    --data-urlencode "email=${BENCH_ADMIN_EMAIL:-admin@tollgate.localhost}" \
    --data-urlencode "password=$PASSWORD" --data-urlencode "next=/dashboard" "$BASE/oauth2/login" || true
# (curl writes HttpOnly cookies, the session's, behind a "#HttpOnly_" prefix.)
COOKIE=$(awk '{sub(/^#HttpOnly_/, "")} !/^#/ && NF >= 7 {printf "%s%s=%s", sep, $6, $7; sep="; "}' "$JAR")
DASH_ORG=""
for o in "$ORG" "$(cat "$WORK/org_slug")"; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $COOKIE" "$BASE/dashboard/$o")
    [[ $code == 200 ]] && { DASH_ORG=$o; break; }
done
if [[ -n $DASH_ORG ]]; then
    for section in "" /customers /orders /license-keys /subscriptions; do
        printf 'dashboard:%s\t/dashboard/%s%s\n' "${section:-/overview}" "$DASH_ORG" "$section" >>"$WORK/paths.tsv"
    done
else
    log "could not sign in to the dashboard (HTTP $code): its pages are not measured"
fi

# --- load --------------------------------------------------------------------------------
cat >"$WORK/validate.lua" <<'LUA'
function init(args)
    body = '{"key":"' .. args[1] .. '","organization_id":"' .. args[2] .. '"}'
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
end
function request() return wrk.format(nil, "/v1/customer-portal/license-keys/validate", nil, body) end
LUA
# The sale path: each wrk thread confirms the checkouts of its share of a file of client
# secrets (one per line), each once; one past its share repeats its last (a non-2xx,
# reported).
cat >"$WORK/confirm.lua" <<'LUA'
local threads, n = {}, 0
function setup(thread)
    thread:set("id", n); n = n + 1; table.insert(threads, thread)
end
function init(args)
    mine, next_one = {}, 0
    local i = 0
    for line in io.lines(args[1]) do
        if i % tonumber(args[2]) == id then table.insert(mine, line) end
        i = i + 1
    end
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
end
function request()
    next_one = math.min(next_one + 1, #mine)
    local secret = mine[next_one]
    local body = '{"customer_email":"' .. secret:sub(-12) .. '@sale.bench.example","customer_name":"Bench Buyer",'
        .. '"confirmation_token_id":"tok_bench","customer_billing_address":{"country":"US","state":"NY"}}'
    return wrk.format(nil, "/v1/checkouts/custom/client/" .. secret .. "/confirm", nil, body)
end
LUA
# checkouts COUNT FILE: creates COUNT checkouts of the one-time product (not timed), their
# client secrets in FILE.
checkouts() {
    python3 - "$BASE" "$TOKEN" "$(cat "$WORK/price")" "$1" "$2" <<'PY'
import http.client, json, sys, threading, urllib.parse
base, token, price, n, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
u = urllib.parse.urlparse(base)
secrets, errors = [], []
def make(k):
    try:
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        for _ in range(k):
            c.request("POST", "/v1/checkouts/custom/", json.dumps({"payment_processor": "stripe", "product_price_id": price}),
                      {"authorization": "Bearer " + token, "content-type": "application/json"})
            r = c.getresponse(); data = r.read()
            if r.status != 201:
                raise SystemExit(f"POST /v1/checkouts/custom/: {r.status} {data[:300]!r}")
            secrets.append(json.loads(data)["client_secret"])
    except BaseException as e:
        errors.append(repr(e))
ts = [threading.Thread(target=make, args=(n // 8 + (i < n % 8),)) for i in range(8)]
for t in ts: t.start()
for t in ts: t.join()
if errors: raise SystemExit("creating checkouts: " + errors[0])
open(out, "w").write("\n".join(secrets) + "\n")
PY
}
# measure_sale: a warm-up and a measured run of confirms, each on checkouts of its own.
measure_sale() {
    local out="$WORK/wrk.txt"
    checkouts $(( WARMUP * SALE_RATE )) "$WORK/secrets-warm"
    checkouts $(( SECS * SALE_RATE )) "$WORK/secrets"
    timeout $(( WARMUP + 60 )) wrk -t"$THREADS" -c"$VCONNECTIONS" -d"${WARMUP}s" --timeout 30s \
        -s "$WORK/confirm.lua" "$BASE" -- "$WORK/secrets-warm" "$THREADS" >/dev/null
    timeout $(( SECS + 60 )) wrk -t"$THREADS" -c"$VCONNECTIONS" -d"${SECS}s" --timeout 30s --latency \
        -s "$WORK/confirm.lua" "$BASE" -- "$WORK/secrets" "$THREADS" >"$out"
    row sale:confirm "$out"
}
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
# measure NAME CONNECTIONS HEADER PATH [lua args]: warm-up, then BENCH_SECS measured; one row.
measure() {
    local name=$1 conns=$2 header=$3 path=$4 out="$WORK/wrk.txt"; shift 4
    local target=(-H "$header" "$BASE$path")
    [[ $# -gt 0 ]] && target=(-s "$WORK/validate.lua" "$BASE" -- "$@")
    timeout $(( WARMUP + 60 )) wrk -t"$THREADS" -c"$conns" -d"${WARMUP}s" --timeout 30s "${target[@]}" >/dev/null
    timeout $(( SECS + 60 )) wrk -t"$THREADS" -c"$conns" -d"${SECS}s" --timeout 30s --latency "${target[@]}" >"$out"
    row "$name" "$out"
}
# row NAME WRK_OUTPUT: one result row (this round's).
row() {
    python3 - "$2" "$1" "$ROUND" >>"$RESULTS" <<'PY'
import re, sys
text, name, rnd = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
def ms(label):
    m = re.search(r"^\s*" + label + r"%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    v, unit = float(m.group(1)), m.group(2)
    return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
print(f"{name}\t{rnd}\t{rps}\t{ms('50')}\t{ms('99')}\t{bad.group(1) if bad else 0}")
PY
}
for ROUND in $(seq "$ROUNDS"); do
    log "round $ROUND of $ROUNDS: $(wc -l <"$WORK/paths.tsv") reads, then validation"
    while IFS=$'\t' read -r name path; do
        if [[ $name == dashboard:* ]]; then
            measure "$name" "$CONNECTIONS" "Cookie: $COOKIE" "$path"
        else
            measure "$name" "$CONNECTIONS" "Authorization: Bearer $TOKEN" "$path"
        fi
    done <"$WORK/paths.tsv"
    measure healthz "$VCONNECTIONS" "Accept: */*" /healthz
    measure validate "$VCONNECTIONS" "" "" "$(cat "$WORK/key")" "$ORG"
done
# The sale path after every read (its fan-out runs on after each run).
for ROUND in $(seq "$ROUNDS"); do
    log "round $ROUND of $ROUNDS: the sale path"
    measure_sale
done
PEAK_KIB=$(rss_kib "$PID" VmHWM)
# Strict validation: every validation's counter written before it answers.
stop
start "${ENV[@]}" TOLLGATE__LICENSE_KEYS__STATS_FLUSH_MS=0
for ROUND in $(seq "$ROUNDS"); do
    log "round $ROUND of $ROUNDS: strict validation"
    measure healthz-strict-run "$VCONNECTIONS" "Accept: */*" /healthz
    measure validate-strict "$VCONNECTIONS" "" "" "$(cat "$WORK/key")" "$ORG"
done
PEAK_KIB=$(( PEAK_KIB > $(rss_kib "$PID" VmHWM) ? PEAK_KIB : $(rss_kib "$PID" VmHWM) ))

# --- admin ------------------------------------------------------------------------------
# The embedded store: `tollgate backup` (over HTTP, while it runs) and `restore` into an
# empty data directory. PostgreSQL: pg_dump of the schema (custom format) and pg_restore
# of it into a fresh schema (the same dump, renamed), as docs/several-nodes.md says.
mkdir -p "$WORK/backup" "$WORK/restored"
T0=$(now_ms)
if [[ $BACKEND == postgres ]]; then
    pg_dump -Fc -n "$SCHEMA" -f "$WORK/backup/dump" "$DB_URL"
elif ! env "${ENV[@]}" "$BIN" backup --to "$WORK/backup" --url "$BASE" >"$WORK/backup.log" 2>&1; then
    # Reported, not fatal: the reads above are still worth their report.
    log "the backup failed: $(tail -1 "$WORK/backup.log")"
    BACKUP_FAILED=1
fi
BACKUP_MS=$(( $(now_ms) - T0 ))
BACKUP_BYTES=$(du -sb "$WORK/backup" | cut -f1)
stop
T0=$(now_ms)
if [[ $BACKEND == postgres ]]; then
    psql "$DB_URL" -qX -v ON_ERROR_STOP=1 -c "ALTER SCHEMA $SCHEMA RENAME TO ${SCHEMA}_moved" >/dev/null
    pg_restore -d "$DB_URL" "$WORK/backup/dump"
    psql "$DB_URL" -qX -v ON_ERROR_STOP=1 -c "ALTER SCHEMA $SCHEMA RENAME TO $SCHEMA2; ALTER SCHEMA ${SCHEMA}_moved RENAME TO $SCHEMA" >/dev/null
    RESTORED_BYTES=$(psql "$DB_URL" -AtqX -c "SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '$SCHEMA2' AND c.relkind = 'r'")
elif [[ -z ${BACKUP_FAILED:-} ]]; then
    env "${ENV2[@]}" "$BIN" restore --from "$WORK/backup" >/dev/null
    RESTORED_BYTES=$(du -sb "$WORK/restored" | cut -f1)
else
    RESTORED_BYTES=0
fi
RESTORE_MS=$(( $(now_ms) - T0 ))
T0=$(now_ms)
env "${ENV[@]}" "$BIN" check >"$WORK/check.txt" || { cat "$WORK/check.txt" >&2; echo "check failed" >&2; exit 1; }
CHECK_MS=$(( $(now_ms) - T0 ))
# The embedded store: `tollgate compact` (service stopped), its time and the size after it
# (sled's file keeps what rewrites replaced until segments are cleaned; a compaction
# writes only what is live).
COMPACT=""
if [[ $BACKEND == embedded ]]; then
    T0=$(now_ms)
    env "${ENV[@]}" "$BIN" compact >"$WORK/compact.txt" 2>&1 || { cat "$WORK/compact.txt" >&2; echo "compact failed" >&2; exit 1; }
    COMPACT="compact: $(( $(now_ms) - T0 )) ms: $(grep '^compacted' "$WORK/compact.txt" | tail -1)"
    env "${ENV[@]}" "$BIN" storage stats >"$WORK/stats-compacted.txt"
    COMPACT="$COMPACT; after it: $(grep -E '^orders' "$WORK/stats-compacted.txt")"
    log "$COMPACT"
fi

# --- report ------------------------------------------------------------------------------
python3 - "$RESULTS" "$WORK/stats.txt" <<PY
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
stats = open(sys.argv[2]).read()
by = {}
for name, rnd, rps, p50, p99, bad in rows:
    by.setdefault(name, []).append((float(p99), float(p50), float(rps), int(bad)))
print("")
print("bigshop.sh: backend $BACKEND, $ROUNDS rounds (median), "
      "$CONNECTIONS connections for reads, $VCONNECTIONS for validation")
print("$(cat "$WORK/fill.txt")")
for line in stats.splitlines():
    if line.startswith(("on disk", "logical", "data_dir total", "orders")):
        print(line)
print("backup: FAILED (see the log above)" if "${BACKUP_FAILED:-}" else "")
print(f"backup: {int('$BACKUP_BYTES') / 1048576:.1f} MiB in $BACKUP_MS ms; restore $RESTORE_MS ms "
      f"({int('$RESTORED_BYTES') / 1048576:.1f} MiB on disk after it); check $CHECK_MS ms")
print("$COMPACT")
print("ready: ${FIRST_MS} ms first start, ${GRACEFUL_MS} ms after a graceful stop, ${KILLED_MS} ms after kill -9")
print(f"memory: idle {int('$IDLE_KIB') // 1024} MiB, peak {int('$PEAK_KIB') // 1024} MiB")
print("")
print(f"{'read':40} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}")
for name, runs in by.items():
    runs.sort()
    p99, p50, rps, bad = runs[len(runs) // 2]
    print(f"{name:40} {rps:9.0f} {p50:8.2f} {p99:8.2f} {bad:8d}")
for mode, health, name in [("batched", "healthz", "validate"),
                           ("strict", "healthz-strict-run", "validate-strict")]:
    if health in by and name in by:
        h = statistics.median(r[2] for r in by[health])
        v = statistics.median(r[2] for r in by[name])
        print(f"validation ({mode}) / healthz: {v / h:.2f}")
PY
