#!/usr/bin/env bash
# Capacity model on PostgreSQL (issue 53, item 4; docs/capacity.md, benches/README.md
# section "capacity.sh"): what each operation costs the Tollgate node and the database.
# One command:
#
#     benches/capacity.sh
#
# Builds the release binary (or runs BENCH_BIN), runs itself inside a throwaway PostgreSQL
# cluster (pg_virtualenv, fsync=on, synchronous_commit=on) unless a database is given, starts
# one node on a fresh schema, seeds BENCH_KEYS license keys through checkouts (as
# validate.sh does), then measures each operation BENCH_ROUNDS times at a moderate fixed
# load, the rounds interleaved:
#   idle        a quiet interval (the listener's pings, job polls, this script's poller):
#               its rates per second are subtracted from every run below
#   validate    POST .../license-keys/validate, batched counters (stats_flush_ms 1000), wrk
#               paced at BENCH_VALIDATE_RATE/s over BENCH_FEW_KEYS, then BENCH_MANY_KEYS
#               distinct keys (the database cost follows the distinct keys per interval)
#   increment   the same with "increment_usage": 1, paced at BENCH_INCREMENT_RATE/s over
#               BENCH_MANY_KEYS keys
#   activate    POST .../license-keys/activate, a new label each time, BENCH_ACTIVATIONS of them
#   purchase    POST /v1/checkouts/custom/client/{secret}/confirm (test processor, exactly
#               bigshop.sh's body), BENCH_SALES per run, checkouts created beforehand (untimed)
#   refund      POST /v1/refunds/ (the whole amount) of BENCH_REFUNDS orders bought
#               beforehand (untimed)
#   purchase+mail  purchases again with email.transport = smtp to a local aiosmtpd sink
#               (pinned: tests/clients/mail/requirements.txt) instead of none; the difference
#               per message received is the cost of sending an e-mail
#   purchase+mail+hook  purchases again with one webhook endpoint (every event type) to a
#               local receiver; the difference per delivery received is a webhook delivery
# A run's window is the load plus the settling after it (until the commit rate is back to
# idle, at most BENCH_SETTLE_MAX s), so work done after the answers (fan-out, counter
# flushes, deliveries, mail) is inside it. Per run: Tollgate CPU (utime+stime of the
# process, /proc/PID/stat), PostgreSQL CPU (the postmaster, its live children and its
# reaped children: backends, walwriter, checkpointer, background writer...), WAL bytes
# (pg_current_wal_lsn), commits (pg_stat_database.xact_commit), WAL full-page images and
# WAL fsyncs (pg_stat_wal), each minus the idle rate times the window. Prints a table per
# operation (the median of the rounds, each metric on its own, and every round) and the
# model derived from it for a primary of BENCH_CORES cores at BENCH_HEADROOM of its CPU.
#
# Environment (defaults in brackets):
#   BENCH_ROUNDS [3]  BENCH_KEYS [3000] (seeded keys)  BENCH_SEED_CLIENTS [16]  BENCH_SECS [10] (paced runs)
#   BENCH_VALIDATE_RATE [3000]  BENCH_FEW_KEYS [100]  BENCH_MANY_KEYS [2000]
#   BENCH_INCREMENT_RATE [1000]  BENCH_ACTIVATIONS [1000]  BENCH_SALES [600]
#   BENCH_REFUNDS [400]  BENCH_CONCURRENCY [16] (clients of the list-driven operations)
#   BENCH_WRK_CONNECTIONS [16]  BENCH_IDLE_SECS [30] (two job sweeps)  BENCH_SETTLE_MAX [30]
#   BENCH_CORES [8]  BENCH_HEADROOM [0.5]  BENCH_MIX ["1:100:1000"] (purchases :
#   increments : validations in the model's mix)  BENCH_MIX_DISTINCT [0.5] (distinct keys
#   per second in the mix, as a share of its validations per second)
#   BENCH_FSYNC_SECS [2] (pg_test_fsync per method on the cluster's disk; 0 skips it)
#   BENCH_TIMEOUT [3600] (the whole run, then it stops and cleans up)
#   BENCH_BIN [unset: cargo build --release, then $CARGO_TARGET_DIR or target/release/tollgate]
#   BENCH_DATABASE_URL [from PG* variables; with neither, pg_virtualenv -v $BENCH_PG_VERSION]
#   (PostgreSQL's CPU is measured only when the cluster runs on this machine and its
#   data directory is readable)  BENCH_PG_VERSION [15]  BENCH_KEEP [unset]
#   BENCH_VENV [~/.cache/tollgate-bench/venv-<hash of the requirements>] (aiosmtpd)
set -euo pipefail

ROUNDS=${BENCH_ROUNDS:-3}
KEYS=${BENCH_KEYS:-3000}
SEED_CLIENTS=${BENCH_SEED_CLIENTS:-16}
SECS=${BENCH_SECS:-10}
VRATE=${BENCH_VALIDATE_RATE:-3000}
FEW=${BENCH_FEW_KEYS:-100}
MANY=${BENCH_MANY_KEYS:-2000}
IRATE=${BENCH_INCREMENT_RATE:-1000}
ACTIVATIONS=${BENCH_ACTIVATIONS:-1000}
SALES=${BENCH_SALES:-600}
REFUNDS=${BENCH_REFUNDS:-400}
CONC=${BENCH_CONCURRENCY:-16}
WCONNS=${BENCH_WRK_CONNECTIONS:-16}
IDLE=${BENCH_IDLE_SECS:-30}
SETTLE_MAX=${BENCH_SETTLE_MAX:-30}
CORES=${BENCH_CORES:-8}
HEADROOM=${BENCH_HEADROOM:-0.5}
MIX=${BENCH_MIX:-1:100:1000}
MIX_DISTINCT=${BENCH_MIX_DISTINCT:-0.5}
FSYNC_SECS=${BENCH_FSYNC_SECS:-2}
TOTAL_TIMEOUT=${BENCH_TIMEOUT:-3600}
PG_VERSION=${BENCH_PG_VERSION:-15}
for n in ROUNDS KEYS SEED_CLIENTS SECS VRATE FEW MANY IRATE ACTIVATIONS SALES REFUNDS CONC WCONNS IDLE SETTLE_MAX CORES TOTAL_TIMEOUT; do
    [[ ${!n} =~ ^[0-9]+$ ]] && (( ${!n} > 0 )) || { echo "BENCH_$n must be a positive integer" >&2; exit 2; }
done
(( MANY <= KEYS && FEW <= KEYS )) || { echo "BENCH_MANY_KEYS and BENCH_FEW_KEYS must not exceed BENCH_KEYS" >&2; exit 2; }
(( ACTIVATIONS * ROUNDS <= KEYS * 50 )) || { echo "BENCH_ACTIVATIONS x BENCH_ROUNDS must not exceed 50 per key" >&2; exit 2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { printf '[capacity.sh %s] %s\n' "$(date +%T)" "$*" >&2; }

# report WORK: prints the tables and the model from WORK/results.tsv and WORK/meta (the
# run's header and settings); BENCH_CORES, BENCH_HEADROOM, BENCH_MIX and
# BENCH_MIX_DISTINCT may differ from the run's.
report() {
    local work=$1 FSYNC="" FEW_R="" MANY_R="" HZ_R=""
    # meta: header lines, then "settings FEW MANY HZ FSYNC"
    grep -v '^settings ' "$work/meta"
    read -r _ FEW_R MANY_R HZ_R FSYNC < <(grep '^settings ' "$work/meta")
    python3 - "$work/results.tsv" "$HZ_R" "$CORES" "$HEADROOM" "$MIX" "$MIX_DISTINCT" "${FSYNC:-}" "$FEW_R" "$MANY_R" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
hz, cores, headroom = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
mix = [float(x) for x in sys.argv[5].split(":")]
mix_distinct, fsync = float(sys.argv[6]), sys.argv[7]
few, many = int(sys.argv[8]), int(sys.argv[9])
# sample fields: ns, tg ticks, pg ticks, wal bytes, commits, wal records, fpi, wal syncs, mails, hooks
def deltas(b, a):
    b, a = [int(x) for x in b.split()], [int(x) for x in a.split()]
    d = [y - x for x, y in zip(b, a)]
    d[0] /= 1e9
    return d
idle = {}
runs = {}
for name, rnd, ops, bad, load_ms, before, after in rows:
    d = deltas(before, after)
    if name.startswith("idle"):
        idle[(name, rnd)] = [x / d[0] for x in d]  # per second
    else:
        runs.setdefault(name, []).append((rnd, int(ops), int(bad), int(load_ms) / 1e3, d))
def per_op(name, rnd, ops, load, d):
    """Per operation, minus the idle rates of the round (and e-mail transport) times the window."""
    i = idle[("idle_smtp" if name.startswith("purchase_mail") else "idle", rnd)]
    sub = [d[k] - i[k] * d[0] for k in range(len(d))]
    return {"secs": d[0], "ops/s": ops / load, "tg_ms": sub[1] / hz * 1e3 / ops, "pg_ms": sub[2] / hz * 1e3 / ops,
            "wal": sub[3] / ops, "commits": sub[4] / ops, "fpi": sub[6] / ops, "syncs": sub[7] / ops,
            "mails": d[8] / ops, "hooks": d[9] / ops,
            "memory": 100 * d[10] / max(1, d[10] + d[11] + d[12]) if d[10] + d[11] + d[12] else float("nan"),
            "raw_tg_ms": d[1] / hz * 1e3 / ops, "raw_pg_ms": d[2] / hz * 1e3 / ops}
label = {"validate_few": f"validate, {few} distinct keys", "validate_many": f"validate, {many} distinct keys",
         "increment": "increment_usage", "activate": "activation", "purchase": "purchase (confirm)",
         "refund": "refund", "purchase_mail": "purchase + e-mail (SMTP)", "purchase_mail_hook": "purchase + e-mail + 1 endpoint"}
print()
print("idle, per second (subtracted from each run of its round, times the run's window):")
for (n, r), v in sorted(idle.items(), key=lambda x: (x[0][1], x[0][0])):
    print(f"  round {r}, {'e-mail through SMTP' if n == 'idle_smtp' else 'e-mail none'}: tollgate {v[1] / hz * 1e3:.1f} ms/s, "
          f"postgres {v[2] / hz * 1e3:.1f} ms/s, WAL {v[3]:.0f} B/s, {v[4]:.1f} commits/s, {v[7]:.1f} WAL fsyncs/s")
print()
cols = ["ops", "ops/s", "tg ms/op", "pg ms/op", "WAL B/op", "commits/op", "FPI/op", "fsyncs/op", "memory %"]
print("ops/s: over the load only; every other column over the whole window (load and settling), minus idle;")
print("commits = xact_commit, every transaction (reads too); fsyncs = pg_stat_wal.wal_sync; memory % = validations")
print("answered from the node's copy (the rest read the key's revision, or were counted by a statement)")
print(f"{'operation':<34}" + "".join(f"{c:>11}" for c in cols) + "   (runs: tg ms/op | pg ms/op | WAL B/op)")
med = {}
for name in label:
    if name not in runs: continue
    ps = [(ops, bad, per_op(name, rnd, ops, load, d)) for rnd, ops, bad, load, d in runs[name] if ops > 0]
    if not ps: continue
    m = {k: statistics.median(p[k] for _, _, p in ps) for k in ps[0][2]}
    m["ops"] = statistics.median(o for o, _, _ in ps)
    m["bad"] = sum(b for _, b, _ in ps)
    med[name] = m
    runs_s = " ".join(f"{p['tg_ms']:.3f}|{p['pg_ms']:.3f}|{p['wal']:.0f}" for _, _, p in ps)
    print(f"{label[name]:<34}{m['ops']:>11.0f}{m['ops/s']:>11.1f}{m['tg_ms']:>11.3f}{m['pg_ms']:>11.3f}"
          f"{m['wal']:>11.0f}{m['commits']:>11.2f}{m['fpi']:>11.2f}{m['syncs']:>11.2f}{'-' if m['memory'] != m['memory'] else format(m['memory'], '.1f'):>11}   ({runs_s})"
          + (f"  {m['bad']} failed" if m["bad"] else ""))
# Derived rows: e-mail and webhook delivery by difference, per message / delivery received.
derived = {}
def diff(a, b, per):
    if a in med and b in med and med[a][per] > 0:
        return {k: (med[a][k] - med[b][k]) / med[a][per] for k in ("tg_ms", "pg_ms", "wal", "commits", "syncs")}, med[a][per]
    return None, 0
mail, mails_per = diff("purchase_mail", "purchase", "mails")
hook, hooks_per = diff("purchase_mail_hook", "purchase_mail", "hooks")
print()
if mail:
    derived["mail"] = mail
    print(f"e-mail, per message sent ({mails_per:.2f} per purchase): tollgate {mail['tg_ms']:.3f} ms, postgres {mail['pg_ms']:.3f} ms, "
          f"WAL {mail['wal']:.0f} B, {mail['commits']:.2f} commits (medians' difference, purchase + e-mail - purchase)")
if hook:
    derived["hook"] = hook
    print(f"webhook delivery, per delivery ({hooks_per:.2f} per purchase): tollgate {hook['tg_ms']:.3f} ms, postgres {hook['pg_ms']:.3f} ms, "
          f"WAL {hook['wal']:.0f} B, {hook['commits']:.2f} commits (medians' difference, + 1 endpoint - without)")
# Plain validations: the database cost per second is a fixed part plus one per distinct key
# per flush interval (1 s): from the two runs.
vk = None
if "validate_few" in med and "validate_many" in med:
    f, g = med["validate_few"], med["validate_many"]
    per_s = lambda m, k: m[k] * m["ops/s"]
    # Distinct keys counted per second: every key of the list, unless fewer requests came.
    dk = min(g["ops/s"], many) - min(f["ops/s"], few)
    vk = {k: (per_s(g, k) - per_s(f, k)) / dk for k in ("pg_ms", "wal", "commits", "tg_ms", "syncs")}
    print(f"plain validation, per distinct key per second (the {many}-key run minus the {few}-key one, {dk:.0f} keys/s apart): "
          f"postgres {vk['pg_ms']:.4f} ms, WAL {vk['wal']:.1f} B, {vk['commits']:.3f} commits; "
          f"tollgate per validation {g['tg_ms']:.4f} ms")
print()
print(f"model: a primary of {cores} cores at {headroom:.0%} of its CPU ({cores * headroom * 1000:.0f} ms of CPU per second), "
      "the nodes scaled out; each operation alone:")
budget = cores * headroom * 1000
node_budget = budget
alone = {}
for name, what in [("purchase", "purchases/s"), ("increment", "increments/s"), ("activate", "activations/s"),
                   ("refund", "refunds/s")]:
    if name in med and med[name]["pg_ms"] > 0:
        alone[name] = budget / med[name]["pg_ms"]
        print(f"  {alone[name]:>10.0f} {what:<14} (postgres {med[name]['pg_ms']:.3f} ms each; WAL {med[name]['wal'] * alone[name] * 86400 / 1e9:.0f} GB/day at that rate;"
              f" {med[name]['commits'] * alone[name]:.0f} commits/s); a tollgate node of {cores} cores: {node_budget / med[name]['tg_ms']:.0f}/s")
if mail: print(f"  {budget / mail['pg_ms']:>10.0f} e-mails/s       (postgres {mail['pg_ms']:.3f} ms each beyond a purchase's); tollgate node: {node_budget / mail['tg_ms']:.0f}/s" if mail['pg_ms'] > 0 else "  e-mail: no postgres cost above noise")
if hook: print(f"  {budget / hook['pg_ms']:>10.0f} deliveries/s   (postgres {hook['pg_ms']:.3f} ms each); tollgate node: {node_budget / hook['tg_ms']:.0f}/s" if hook['pg_ms'] > 0 else "  webhook delivery: no postgres cost above noise")
if vk and vk["pg_ms"] > 0:
    print(f"  {budget / vk['pg_ms']:>10.0f} distinct keys validated per second (plain validations at any rate over them); "
          f"a tollgate node: {node_budget / med['validate_many']['tg_ms']:.0f} validations/s")
# The mix: purchases : increments : validations; each purchase with its e-mail and deliveries.
if all(k in med for k in ("purchase", "increment")) and vk:
    p, i, v = mix
    unit_pg = p * (med["purchase"]["pg_ms"] + (mail["pg_ms"] * mails_per if mail else 0) + (hook["pg_ms"] * hooks_per if hook else 0)) \
        + i * med["increment"]["pg_ms"] + v * mix_distinct * vk["pg_ms"]
    unit_tg = p * (med["purchase"]["tg_ms"] + (mail["tg_ms"] * mails_per if mail else 0) + (hook["tg_ms"] * hooks_per if hook else 0)) \
        + i * med["increment"]["tg_ms"] + v * med["validate_many"]["tg_ms"]
    unit_wal = p * (med["purchase"]["wal"] + (mail["wal"] * mails_per if mail else 0) + (hook["wal"] * hooks_per if hook else 0)) \
        + i * med["increment"]["wal"] + v * mix_distinct * vk["wal"]
    unit_commits = p * (med["purchase"]["commits"] + (mail["commits"] * mails_per if mail else 0) + (hook["commits"] * hooks_per if hook else 0)) \
        + i * med["increment"]["commits"] + v * mix_distinct * vk["commits"]
    unit_syncs = max(0.0, p * (med["purchase"]["syncs"] + (mail["syncs"] * mails_per if mail else 0) + (hook["syncs"] * hooks_per if hook else 0)) \
        + i * med["increment"]["syncs"] + v * mix_distinct * vk["syncs"])
    units = budget / unit_pg
    print()
    print(f"mix {p:g} purchase (with its e-mail and one endpoint's deliveries) : {i:g} increments : {v:g} validations "
          f"({mix_distinct:g} distinct keys per validation per second): per unit postgres {unit_pg:.2f} ms, tollgate {unit_tg:.2f} ms, "
          f"WAL {unit_wal / 1e3:.1f} kB, {unit_commits:.1f} commits")
    print(f"  the primary's CPU carries {units:.0f} units/s: {units * p:.0f} purchases/s, {units * i:.0f} increments/s, "
          f"{units * v:.0f} validations/s; then WAL {unit_wal * units / 1e6:.1f} MB/s ({unit_wal * units * 86400 / 1e9:.0f} GB/day), "
          f"{unit_commits * units:.0f} commits/s; tollgate CPU {unit_tg * units / 1000:.1f} cores "
          f"({unit_tg * units / 1000 / (cores * headroom):.1f} nodes of {cores} cores at {headroom:.0%})")
    if fsync and unit_syncs > 0:
        f = float(fsync)
        print(f"  WAL flushes: {unit_syncs:.1f} per unit at the grouping measured here; this disk's {f:.0f} fdatasyncs/s carry "
              f"{f / unit_syncs:.0f} units/s at that grouping, against {units:.0f} units/s for the CPU: "
              + ("the disk's flush rate binds first unless commits group more (they do as load grows)" if f / unit_syncs < units
                 else "the primary's CPU binds first"))
if fsync:
    f = float(fsync)
    print()
    print(f"this disk: pg_test_fsync, one 8 kB fdatasync write at a time: {f:.0f} ops/s (WAL flushes/s without grouping)")
    print("WAL-flush bound at the grouping measured here (fsyncs/op of the table; more concurrency groups more):")
    for name in ("purchase", "increment", "activate", "refund"):
        if name in med and med[name]["syncs"] > 0:
            print(f"  {label[name]:<22} {med[name]['syncs']:.2f} fsyncs/op: {f / med[name]['syncs']:.0f} ops/s on this disk")
PY
}
# BENCH_REPORT=<a work directory BENCH_KEEP kept>: the report of that run again, nothing run.
if [[ -n ${BENCH_REPORT:-} ]]; then
    [[ -f $BENCH_REPORT/results.tsv && -f $BENCH_REPORT/meta ]] \
        || { echo "BENCH_REPORT needs a work directory of a run (results.tsv, meta)" >&2; exit 2; }
    report "$BENCH_REPORT"
    exit 0
fi

# --- database -----------------------------------------------------------------------------
# No database given: run again inside a throwaway cluster (destroyed when this ends), with
# fsync and synchronous_commit on (pg_virtualenv turns fsync off by default).
if [[ -z ${BENCH_DATABASE_URL:-} && -z ${PGHOST:-} ]]; then
    [[ -z ${BENCH_IN_PG_VIRTUALENV:-} ]] || { echo "pg_virtualenv started no database (PGHOST unset)" >&2; exit 2; }
    command -v pg_virtualenv >/dev/null || {
        echo "capacity.sh needs BENCH_DATABASE_URL, the PG* variables of a database, or pg_virtualenv" \
             "(Debian: postgresql-common and postgresql-$PG_VERSION)" >&2
        exit 2
    }
    PGV=(-v "$PG_VERSION" -o fsync=on -o synchronous_commit=on)
    # As root, pg_virtualenv's cluster lives at /etc/postgresql/<version>/regress unless -t.
    [[ $(id -u) -eq 0 ]] && PGV+=(-t)
    log "no database given: running again under pg_virtualenv ${PGV[*]}"
    export BENCH_IN_PG_VIRTUALENV=1
    exec pg_virtualenv "${PGV[@]}" "$ROOT/benches/capacity.sh" "$@"
fi
for tool in psql python3 curl; do
    command -v "$tool" >/dev/null || { echo "$tool is required" >&2; exit 2; }
done
DB_URL=${BENCH_DATABASE_URL:-$(python3 -c '
import os, urllib.parse
q = lambda s: urllib.parse.quote(s, safe="")
e = os.environ.get
pw = e("PGPASSWORD")
print("postgres://%s%s@%s:%s/%s" % (q(e("PGUSER", "postgres")), ":" + q(pw) if pw else "",
      q(e("PGHOST")), e("PGPORT", "5432"), q(e("PGDATABASE", "postgres"))))')}
pgq() { psql "$DB_URL" -AtqX -v ON_ERROR_STOP=1 -F ' ' -c "$1"; }
PG_INFO=$(pgq "SELECT 'PostgreSQL ' || current_setting('server_version') || ', fsync=' || current_setting('fsync')
    || ', synchronous_commit=' || current_setting('synchronous_commit') || ', wal_sync_method='
    || current_setting('wal_sync_method') || ', checkpoint_timeout=' || current_setting('checkpoint_timeout')
    || ', max_wal_size=' || current_setting('max_wal_size') || ', shared_buffers=' || current_setting('shared_buffers')") \
    || { echo "cannot reach the database (BENCH_DATABASE_URL or PG* variables)" >&2; exit 2; }
PG_DATA=$(pgq "SHOW data_directory" 2>/dev/null || true)
PM=""
[[ -n $PG_DATA && -r $PG_DATA/postmaster.pid ]] && PM=$(head -n1 "$PG_DATA/postmaster.pid")
[[ -n $PM && -r /proc/$PM/stat ]] || { PM=""; log "the cluster's postmaster is not on this machine (or not readable): PostgreSQL CPU is not measured"; }
SCHEMA="cap_$$_$(date +%s)"
log "database: $PG_INFO; schema $SCHEMA (dropped at exit)"

# --- tools ------------------------------------------------------------------------------
if ! command -v wrk >/dev/null; then
    log "installing wrk (Debian package)"
    SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO=sudo
    $SUDO apt-get install -y wrk >/dev/null || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y wrk >/dev/null; }
fi
# aiosmtpd, pinned as the tests pin it, in a virtual environment of its own.
REQS="$ROOT/tests/clients/mail/requirements.txt"
VENV=${BENCH_VENV:-$HOME/.cache/tollgate-bench/venv-$(sha256sum "$REQS" | cut -c1-16)}
if [[ ! -e $VENV/.ready ]]; then
    log "installing aiosmtpd into $VENV (pip, $REQS)"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    timeout 600 "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --quiet -r "$REQS"
    touch "$VENV/.ready"
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

# --- clean-up and the overall timeout ------------------------------------------------------
WORK=$(mktemp -d -t tollgate-capacity-XXXXXX)
TG_PID=""
HELPERS=()
cleanup() {
    local pid
    if [[ -n $TG_PID ]]; then { kill "$TG_PID" 2>/dev/null && wait "$TG_PID" 2>/dev/null; } || true; fi
    for pid in "${HELPERS[@]}"; do { kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; } || true; done
    psql "$DB_URL" -qX -c "DROP SCHEMA IF EXISTS $SCHEMA CASCADE" >/dev/null 2>&1 \
        && log "dropped schema $SCHEMA" || log "could not drop schema $SCHEMA"
    if [[ -n "${BENCH_KEEP:-}" ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
( sleep "$TOTAL_TIMEOUT"; echo "capacity.sh: BENCH_TIMEOUT=$TOTAL_TIMEOUT s reached, stopping" >&2; kill -TERM $$ ) &
HELPERS+=("$!")

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
HZ=$(getconf CLK_TCK)

# --- the SMTP sink and the webhook receiver -------------------------------------------------
# Each counts what it received by appending one byte per message to a file (its size).
cat >"$WORK/sink.py" <<'PY'
import asyncio, sys
from aiosmtpd.controller import Controller
port, count = int(sys.argv[1]), sys.argv[2]
class Handler:
    async def handle_DATA(self, server, session, envelope):
        with open(count, "ab") as f: f.write(b".")
        return "250 2.0.0 Ok"
c = Controller(Handler(), hostname="127.0.0.1", port=port)
c.start()
print("ready", flush=True)
try:
    sys.stdin.read()  # until the script closes it (or is gone)
finally:
    c.stop()
PY
cat >"$WORK/receiver.py" <<'PY'
import http.server, sys
port, count = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real receiver
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        with open(count, "ab") as f: f.write(b".")
        self.send_response(200); self.send_header("content-length", "0"); self.end_headers()
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
PY
SMTP_PORT=$(free_port)
HOOK_PORT=$(free_port)
: >"$WORK/mails"; : >"$WORK/hooks"
mkfifo "$WORK/sink.in"
"$VENV/bin/python" "$WORK/sink.py" "$SMTP_PORT" "$WORK/mails" <"$WORK/sink.in" >"$WORK/sink.out" 2>"$WORK/sink.log" &
HELPERS+=("$!")
exec 9>"$WORK/sink.in"  # held open: the sink stops when this script's descriptor closes
python3 "$WORK/receiver.py" "$HOOK_PORT" "$WORK/hooks" 2>"$WORK/receiver.log" &
HELPERS+=("$!")
for _ in $(seq 100); do grep -q ready "$WORK/sink.out" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$WORK/sink.out" || { cat "$WORK/sink.log" >&2; echo "the SMTP sink did not start" >&2; exit 1; }
count_of() { stat -c %s "$WORK/$1"; }

# --- the service --------------------------------------------------------------------------
PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"
METRICS_TOKEN=cap-metrics-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
mkdir -p "$WORK/data"
# start_tg MAIL_TRANSPORT: (re)starts the node, e-mail through "none" or "smtp" (the sink).
start_tg() {
    stop_tg
    env TOLLGATE__SERVER__BIND="127.0.0.1:$PORT" TOLLGATE__STORAGE__DATA_DIR="$WORK/data" \
        TOLLGATE__STORAGE__BACKEND=postgres TOLLGATE__STORAGE__URL="$DB_URL" TOLLGATE__STORAGE__SCHEMA="$SCHEMA" \
        TOLLGATE__LOG__LEVEL=warn TOLLGATE__RATE_LIMITS__ENABLED=false \
        TOLLGATE__WEBHOOKS__ALLOW_PRIVATE_TARGETS=true \
        TOLLGATE__EMAIL__TRANSPORT="$1" TOLLGATE__EMAIL__SMTP_URL="smtp://127.0.0.1:$SMTP_PORT" \
        TOLLGATE__METRICS__TOKEN="$METRICS_TOKEN" \
        "$BIN" >>"$WORK/server.log" 2>&1 &
    TG_PID=$!
    for _ in $(seq 600); do
        curl -fs -m 2 "$BASE/readyz" >/dev/null 2>&1 && return
        kill -0 "$TG_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
        sleep 0.1
    done
    echo "tollgate not ready after 60 s" >&2; exit 1
}
stop_tg() {
    if [[ -n $TG_PID ]]; then kill -TERM "$TG_PID" 2>/dev/null || true; wait "$TG_PID" 2>/dev/null || true; TG_PID=""; fi
}
log "starting tollgate on $BASE (postgres schema $SCHEMA)"
start_tg none
TOKEN=$(cat "$WORK/data/bootstrap-token")

# --- the driver of list operations ----------------------------------------------------------
# drive.py JOBS OUT: sends each request of JOBS (JSON lines [method, path, body, auth]) once,
# BENCH_CONCURRENCY at a time on keep-alive connections; a busy answer (429, 503; 409 for a
# confirm still running) is retried after a pause, as a client would (a confirm first asks
# whether the busy attempt went through); writes to OUT the count of 2xx answers, then the
# count of others, then (with SAVE set) the 2xx bodies, one per line. The retries go to
# stderr.
cat >"$WORK/drive.py" <<'PY'
import http.client, json, os, sys, threading, time, urllib.parse
base, token, conc, jobs_path, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
save = os.environ.get("SAVE") == "1"
u = urllib.parse.urlparse(base)
jobs = [json.loads(l) for l in open(jobs_path) if l.strip()]
ok, bad, bodies, first_bad, lock = [0], [0], [None] * len(jobs), [], threading.Lock()
retries = [0]
def run(w):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    for i in range(w, len(jobs), conc):
        method, path, body, auth = jobs[i]
        h = {"content-type": "application/json"}
        if auth: h["authorization"] = "Bearer " + token
        def once(m, p, b):
            nonlocal c
            for attempt in range(3):
                try:
                    c.request(m, p, body=json.dumps(b) if b is not None else None, headers=h)
                    r = c.getresponse(); return r.status, r.read()
                except (OSError, http.client.HTTPException):
                    c.close(); c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
            return None, b""
        for attempt in range(30):
            status, data = once(method, path, body)
            if status not in (409, 429, 503) or (status == 409 and not path.endswith("/confirm")):
                break
            with lock: retries[0] += 1
            if path.endswith("/confirm"):
                s2, d2 = once("GET", path[: -len("/confirm")], None)
                if s2 == 200 and json.loads(d2)["status"] in ("confirmed", "succeeded"):
                    status, data = 200, d2
                    break
            time.sleep(0.1 * (attempt + 1))
        r = type("R", (), {"status": status})() if status is not None else None
        with lock:
            if r is not None and 200 <= r.status < 300:
                ok[0] += 1
                if save: bodies[i] = data.decode()
            else:
                bad[0] += 1
                if not first_bad: first_bad.append(f"{method} {path}: {r.status if r else 'no answer'} {data[:300]!r}")
ts = [threading.Thread(target=run, args=(w,)) for w in range(conc)]
for t in ts: t.start()
for t in ts: t.join()
with open(out, "w") as f:
    f.write(f"{ok[0]}\n{bad[0]}\n")
    if save:
        for b in bodies: f.write((b or "null").replace("\n", " ") + "\n")
if first_bad: print("first failure: " + first_bad[0], file=sys.stderr)
if retries[0]: print(f"{retries[0]} busy answers retried ({jobs_path})", file=sys.stderr)
PY
# drive JOBS OUT [SAVE]: the driver with a timeout.
drive() { SAVE=${3:-} timeout 900 python3 "$WORK/drive.py" "$BASE" "$TOKEN" "${CLIENTS:-$CONC}" "$1" "$2"; }
ops_of() { head -n1 "$1"; }
bad_of() { sed -n 2p "$1"; }

# --- seeding --------------------------------------------------------------------------------
# An organization, a license-key benefit (prefix "cap", up to 50 activations per key), a
# one-time product carrying it; then KEYS keys, one checkout each (create, then confirm with
# the test processor), as validate.sh seeds, each by a buyer of its own; the keys are then
# read from the seller's key list.
log "seeding $KEYS keys through checkouts"
T0=$(date +%s)
python3 - "$BASE" "$TOKEN" "$WORK" <<'PY'
import http.client, json, sys, urllib.parse
base, token, work = sys.argv[1:4]
u = urllib.parse.urlparse(base)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
def call(method, path, body=None):
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"authorization": "Bearer " + token, "content-type": "application/json"})
    r = c.getresponse(); data = r.read()
    if r.status not in (200, 201): raise SystemExit(f"{method} {path}: {r.status} {data[:300]!r}")
    return json.loads(data) if data else None
org = call("POST", "/v1/organizations/", {"name": "Capacity", "slug": "capacity"})["id"]
benefit = call("POST", "/v1/benefits/", {"type": "license_keys", "description": "Capacity license", "organization_id": org,
               "properties": {"prefix": "cap", "activations": {"limit": 50, "enable_customer_admin": False}}})["id"]
product = call("POST", "/v1/products/", {"name": "Capacity app", "organization_id": org,
               "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 1000, "price_currency": "usd"}]})
call("POST", f"/v1/products/{product['id']}/benefits", {"benefits": [benefit]})
open(f"{work}/org", "w").write(org)
open(f"{work}/price", "w").write(product["prices"][0]["id"])
PY
ORG=$(cat "$WORK/org")
PRICE=$(cat "$WORK/price")
# checkouts N PREFIX: creates N checkouts (untimed) and writes PREFIX.confirm (the confirms,
# driver jobs, bigshop.sh's body: the buyer's address from the secret, so each buyer is
# new) and PREFIX.ids (the checkout ids).
checkouts() {
    local n=$1 prefix=$2
    python3 -c 'import json, sys
for _ in range(int(sys.argv[1])):
    print(json.dumps(["POST", "/v1/checkouts/custom/", {"payment_processor": "stripe", "product_price_id": sys.argv[2]}, True]))' \
        "$n" "$PRICE" >"$prefix.create"
    drive "$prefix.create" "$prefix.created" 1
    [[ $(bad_of "$prefix.created") == 0 ]] || { echo "creating checkouts failed" >&2; exit 1; }
    python3 - "$prefix" <<'PY'
import json, sys
prefix = sys.argv[1]
rows = [json.loads(l) for l in open(prefix + ".created").read().splitlines()[2:]]
with open(prefix + ".confirm", "w") as f, open(prefix + ".ids", "w") as g:
    for i, co in enumerate(rows):
        s = co["client_secret"]
        email = f"{s[-12:].lower()}@sale.bench.example"
        f.write(json.dumps(["POST", f"/v1/checkouts/custom/client/{s}/confirm",
                {"customer_email": email, "customer_name": "Bench Buyer", "confirmation_token_id": "tok_bench",
                 "customer_billing_address": {"country": "US", "state": "NY"}}, False]) + "\n")
        g.write(co["id"] + "\n")
PY
}
CLIENTS=$SEED_CLIENTS checkouts "$KEYS" "$WORK/seed"
CLIENTS=$SEED_CLIENTS drive "$WORK/seed.confirm" "$WORK/seed.confirmed"
[[ $(bad_of "$WORK/seed.confirmed") == 0 ]] || { echo "seeding confirms failed" >&2; exit 1; }
python3 - "$BASE" "$TOKEN" "$ORG" "$KEYS" "$WORK" "$(( MANY > FEW ? MANY : FEW ))" <<'PY'
import http.client, json, sys, urllib.parse
base, token, org, n, work, need = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], int(sys.argv[6])
u = urllib.parse.urlparse(base)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
keys, page = [], 1
while True:
    c.request("GET", f"/v1/license-keys?organization_id={org}&limit=100&page={page}", headers={"authorization": "Bearer " + token})
    r = c.getresponse(); body = json.loads(r.read())
    if r.status != 200: raise SystemExit(f"key list: {r.status} {body}")
    keys += [k["key"] for k in body["items"]]
    if page >= body["pagination"]["max_page"]: break
    page += 1
# A confirm whose answer was busy may be completed later (jobs.confirmed_grace_secs): a few
# keys may be missing yet; the runs need BENCH_MANY_KEYS of them.
if len(keys) < n: print(f"[capacity.sh] {n - len(keys)} of {n} keys not granted yet; going on with {len(keys)}", file=sys.stderr)
if len(keys) < need: raise SystemExit(f"expected {n} keys, found {len(keys)}")
open(f"{work}/keys.txt", "w").write("\n".join(keys) + "\n")
PY
log "seeded $KEYS keys in $(( $(date +%s) - T0 ))s"
head -n "$FEW" "$WORK/keys.txt" >"$WORK/few.txt"
head -n "$MANY" "$WORK/keys.txt" >"$WORK/many.txt"

# --- wrk, paced -----------------------------------------------------------------------------
# Each connection waits DELAY ms before each request (wrk's delay()), so the load is about
# BENCH_WRK_CONNECTIONS x 1000 / (DELAY + latency) requests/s: a fixed, moderate load.
cat >"$WORK/validate.lua" <<'LUA'
-- args: organization id, key file, extra JSON members, delay in ms
local counter = 0
function setup(thread) counter = counter + 1; thread:set("offset", counter) end
function init(args)
    org, extra, pause = args[1], args[3] or "", tonumber(args[4])
    keys = {}
    for line in io.lines(args[2]) do if #line > 0 then keys[#keys + 1] = line end end
    i = (offset * 7919) % #keys
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
end
function delay() return pause end
function request()
    i = i % #keys + 1
    return wrk.format(nil, "/v1/customer-portal/license-keys/validate", nil,
        '{"key":"' .. keys[i] .. '","organization_id":"' .. org .. '"' .. extra .. '}')
end
LUA
# paced RATE SECS KEYFILE EXTRA OUT: wrk at about RATE/s; OUT gets the 2xx count and the rest.
paced() {
    local rate=$1 secs=$2 keys=$3 extra=$4 out=$5 delay
    delay=$(( WCONNS * 1000 / rate ))
    timeout $(( secs + 60 )) wrk -t2 -c"$WCONNS" -d"${secs}s" --timeout 10s -s "$WORK/validate.lua" "$BASE" \
        -- "$ORG" "$keys" "$extra" "$delay" >"$out.wrk"
    python3 - "$out.wrk" "$out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
done = int(re.search(r"(\d+) requests in", text).group(1))
m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
bad = int(m.group(1)) if m else 0
e = re.search(r"Socket errors:.*", text)
open(sys.argv[2], "w").write(f"{done - bad}\n{bad + (1 if e else 0)}\n")
PY
}

# --- measuring ---------------------------------------------------------------------------
# The poller: every 0.5 s, the commit count (one psql each time, in idle windows and runs
# alike, so that its own cost is in the idle rate and subtracted with it).
(
    while :; do
        v=$(psql "$DB_URL" -AtqX -c "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()" 2>/dev/null || echo "")
        [[ -n $v ]] && echo "$(date +%s%N) $v" >>"$WORK/commits.log"
        sleep 0.5
    done
) &
HELPERS+=("$!")
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# PostgreSQL's CPU ticks: the postmaster (with its reaped children's) and its live children.
pg_ticks() {
    [[ -n $PM ]] || { echo 0; return; }
    # (cat, not awk on the files: awk stops at a process that ended meanwhile)
    cat /proc/[0-9]*/stat 2>/dev/null \
        | awk -v pm="$PM" '$1 == pm {s += $14 + $15 + $16 + $17} $4 == pm {s += $14 + $15} END {print s + 0}' || true
}
# sample: nanoseconds, Tollgate ticks, PostgreSQL ticks, WAL position (bytes), commits, WAL
# records, full-page images, WAL fsyncs, mails received, deliveries received, and how the
# node answered validations so far (/metrics: from its copy, after reading the key's
# revision, through the conditional statement).
sample() {
    local q paths
    q=$(pgq "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint,
        (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()), wal_records, wal_fpi, wal_sync
        FROM pg_stat_wal")
    paths=$(curl -fs -m 10 -H "Authorization: Bearer $METRICS_TOKEN" "$BASE/metrics" \
        | awk -F'[{}" ]+' '/^tollgate_license_validation_paths_total/ {v[$3] = $NF} END {print v["memory"] + 0, v["checked"] + 0, v["counted"] + 0}')
    echo "$(date +%s%N) $(cpu_ticks "$TG_PID") $(pg_ticks) $q $(count_of mails) $(count_of hooks) ${paths:-0 0 0}"
}
# commit_rate N: commits/s over the poller's last N samples (N/2 s).
commit_rate() {
    tail -n "$1" "$WORK/commits.log" | awk 'NR == 1 {t = $1; c = $2} {T = $1; C = $2} END {print (T > t) ? (C - c) / ((T - t) / 1e9) : 1e9}'
}
# settle: waits until the commit rate over the last 2 s is back near idle (IDLE_CPS) and no
# e-mail or delivery arrived for 2 s, at most BENCH_SETTLE_MAX s; then 2 s more for the
# backends' statistics to be reported.
IDLE_CPS=""
settle() {
    local t0=$SECONDS seen="" now
    sleep 2
    while (( SECONDS - t0 < SETTLE_MAX )); do
        now="$(count_of mails) $(count_of hooks)"
        if [[ $now == "$seen" ]] && python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) * 1.5 + 20 else 1)" \
            "$(commit_rate 5)" "${IDLE_CPS:-0}"; then
            break
        fi
        seen=$now
        sleep 2
    done
    sleep 2
}
# quiet: before an idle window, waits (at most 120 s) until the commit rate of two
# consecutive 4 s windows is within a fifth (+10/s) of the lowest 4 s rate seen meanwhile
# (after a start the rate falls for a while: start-up work, the leftovers of the seeding).
quiet() {
    local t0=$SECONDS low="" prev="" cur
    while (( SECONDS - t0 < 120 )); do
        sleep 4
        cur=$(tail -n 1 "$WORK/commits.log" | cut -d' ' -f2)
        if [[ -n $prev ]]; then
            local rate=$(( (cur - prev) / 4 ))
            [[ -z $low || $rate -lt $low ]] && low=$rate
            RATES+=("$rate")
            local n=${#RATES[@]}
            if (( n >= 3 )) && (( RATES[n - 1] * 5 <= low * 6 + 50 && RATES[n - 2] * 5 <= low * 6 + 50 )); then
                RATES=(); return
            fi
        fi
        prev=$cur
    done
    RATES=()
    log "the commit rate did not settle in 120 s: the idle window may include leftover work"
}
RATES=()
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
# measure NAME ROUND OUT COMMAND...: settles, samples, runs COMMAND (which writes the op
# count to OUT), settles, samples; one row of deltas.
measure() {
    local name=$1 round=$2 out=$3 before after; shift 3
    settle
    before=$(sample)
    local t0 t1
    t0=$(date +%s%N)
    "$@"
    t1=$(date +%s%N)
    settle
    after=$(sample)
    echo -e "$name\t$round\t$(ops_of "$out")\t$(bad_of "$out")\t$(( (t1 - t0) / 1000000 ))\t$before\t$after" >>"$RESULTS"
    log "$name (round $round): $(ops_of "$out") ops, $(bad_of "$out") failed"
}
# measure_idle NAME ROUND: a quiet interval of BENCH_IDLE_SECS (once the node settled).
measure_idle() {
    local before after
    quiet
    before=$(sample); sleep "$IDLE"; after=$(sample)
    echo -e "$1\t$2\t0\t0\t$(( IDLE * 1000 ))\t$before\t$after" >>"$RESULTS"
    IDLE_CPS=$(python3 -c "import sys; b, a = sys.argv[1].split(), sys.argv[2].split(); print(round((int(a[4]) - int(b[4])) / ((int(a[0]) - int(b[0])) / 1e9), 1))" "$before" "$after")
    log "$1 (round $2): $IDLE_CPS commits/s"
}

# --- the runs ------------------------------------------------------------------------------
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
START_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
T_START=$SECONDS
BOUGHT=0  # orders made, for the next checkouts' files
for (( r = 1; r <= ROUNDS; r++ )); do
    log "round $r of $ROUNDS"
    start_tg none
    measure_idle idle "$r"
    # Warm: every key once (the node's copies), not measured.
    paced "$VRATE" 3 "$WORK/many.txt" "" "$WORK/warm.out"
    measure validate_few "$r" "$WORK/v1.out" paced "$VRATE" "$SECS" "$WORK/few.txt" "" "$WORK/v1.out"
    measure validate_many "$r" "$WORK/v2.out" paced "$VRATE" "$SECS" "$WORK/many.txt" "" "$WORK/v2.out"
    measure increment "$r" "$WORK/inc.out" paced "$IRATE" "$SECS" "$WORK/many.txt" ',"increment_usage":1' "$WORK/inc.out"
    python3 - "$WORK/keys.txt" "$ORG" "$ACTIVATIONS" "$r" >"$WORK/act.jobs" <<'PY'
import json, sys
keys = open(sys.argv[1]).read().split(); org, n, r = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for i in range(n):
    j = (r - 1) * n + i
    print(json.dumps(["POST", "/v1/customer-portal/license-keys/activate",
                      {"key": keys[j % len(keys)], "organization_id": org, "label": f"machine-{r}-{i}"}, False]))
PY
    measure activate "$r" "$WORK/act.out" drive "$WORK/act.jobs" "$WORK/act.out"
    checkouts "$SALES" "$WORK/p$r"
    measure purchase "$r" "$WORK/p$r.out" drive "$WORK/p$r.confirm" "$WORK/p$r.out"
    # Refunds: orders bought beforehand (untimed), refunded in full.
    checkouts "$REFUNDS" "$WORK/r$r"
    drive "$WORK/r$r.confirm" "$WORK/r$r.bought"
    python3 -c 'import json, sys
for cid in open(sys.argv[1]).read().split():
    print(json.dumps(["GET", f"/v1/orders/?checkout_id={cid}", None, True]))' "$WORK/r$r.ids" >"$WORK/r$r.find"
    drive "$WORK/r$r.find" "$WORK/r$r.found" 1
    python3 -c 'import json, sys
for l in open(sys.argv[1]).read().splitlines()[2:]:
    for o in json.loads(l)["items"]:
        print(json.dumps(["POST", "/v1/refunds/", {"order_id": o["id"], "reason": "customer_request", "amount": o["net_amount"] if "net_amount" in o else o["total_amount"]}, True]))' \
        "$WORK/r$r.found" >"$WORK/r$r.refund"
    measure refund "$r" "$WORK/r$r.out" drive "$WORK/r$r.refund" "$WORK/r$r.out"
    # E-mail through SMTP (the sink), then one webhook endpoint to the receiver.
    start_tg smtp
    measure_idle idle_smtp "$r"
    checkouts "$SALES" "$WORK/m$r"
    measure purchase_mail "$r" "$WORK/m$r.out" drive "$WORK/m$r.confirm" "$WORK/m$r.out"
    curl -fs -o "$WORK/endpoint.json" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        -d "{\"url\":\"http://127.0.0.1:$HOOK_PORT/hook\",\"format\":\"raw\",\"organization_id\":\"$ORG\",\"events\":$(python3 -c 'import json; print(json.dumps("checkout.created checkout.updated checkout.expired order.created order.paid order.updated order.refunded refund.created refund.updated subscription.created subscription.updated subscription.active subscription.canceled subscription.uncanceled subscription.revoked subscription.past_due subscription.cycled product.created product.updated benefit.created benefit.updated benefit_grant.created benefit_grant.updated benefit_grant.cycled benefit_grant.revoked customer.created customer.updated customer.deleted customer.state_changed organization.updated discount.created discount.updated discount.deleted license_key.created license_key.updated license_key.revoked license_key.activated license_key.deactivated license_key.limit_reached".split()))')}" \
        "$BASE/v1/webhooks/endpoints" || { echo "creating the webhook endpoint failed" >&2; exit 1; }
    ENDPOINT=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["id"])' "$WORK/endpoint.json")
    checkouts "$SALES" "$WORK/h$r"
    measure purchase_mail_hook "$r" "$WORK/h$r.out" drive "$WORK/h$r.confirm" "$WORK/h$r.out"
    curl -fs -o /dev/null -X DELETE -H "Authorization: Bearer $TOKEN" "$BASE/v1/webhooks/endpoints/$ENDPOINT" \
        || log "could not delete the webhook endpoint"
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
ELAPSED=$(( SECONDS - T_START ))
stop_tg

# --- the disk's fsync rate (the bound of commits without grouping) ----------------------------
FSYNC=""
if [[ $FSYNC_SECS != 0 && -n $PG_DATA ]]; then
    PGBIN=$(dirname "$(readlink -f "$(command -v pg_config 2>/dev/null || echo /usr/lib/postgresql/$PG_VERSION/bin/pg_config)")")
    [[ -x $PGBIN/pg_test_fsync ]] || PGBIN=/usr/lib/postgresql/$PG_VERSION/bin
    if [[ -x $PGBIN/pg_test_fsync ]]; then
        FSYNC_FILE="$(dirname "$PG_DATA")/cap_fsync_test.$$"
        [[ -w $(dirname "$PG_DATA") ]] || FSYNC_FILE="$WORK/fsync_test"
        FSYNC=$(timeout 120 "$PGBIN/pg_test_fsync" -s "$FSYNC_SECS" -f "$FSYNC_FILE" 2>/dev/null \
            | awk '/fdatasync/ && /ops\/sec/ {print $2; exit}' || true)
        rm -f "$FSYNC_FILE"
    fi
fi

# --- report -------------------------------------------------------------------------------
{
    echo
    echo "capacity.sh, $START_DATE, ${ELAPSED}s; machine: $(nproc) cores, load average before: $LOAD_BEFORE, after: $LOAD_AFTER"
    echo "$PG_INFO; one tollgate node ($BIN); $ROUNDS rounds, medians"
    echo "settings $FEW $MANY $HZ ${FSYNC:-}"
} >"$WORK/meta"
report "$WORK"
