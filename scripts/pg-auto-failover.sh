#!/usr/bin/env bash
# Two Tollgate nodes on a PostgreSQL pair run by pg_auto_failover, on loopback, under load
# through a planned switchover and two crashes (docs/failover.md). One command, as root:
#
#     BIN=/path/to/tollgate scripts/pg-auto-failover.sh
#
# What it does:
#   1. a pg_auto_failover monitor and two data nodes (node1, node2) of PostgreSQL
#      $PG_VERSION on 127.0.0.1, free ports, under a temporary directory owned by postgres
#      (pg_autoctl runs as the postgres user); replication quorum on both nodes, so the
#      primary commits with synchronous_standby_names = 'ANY 1 (standby)' and
#      synchronous_commit = on;
#   2. the role and database `tollgate`, and the connection string from
#      `pg_autoctl show uri --formation default` (both hosts, target_session_attrs=read-write);
#   3. two Tollgate nodes (A, B) on that URL, each with its own data directory;
#   4. load: LOAD_WORKERS clients per node, each alternating a purchase (a checkout of a
#      free product with a license-key benefit, then its confirm) and a validation with
#      increment_usage = 1 of one of KEYS keys bought beforehand;
#   5. three faults, each in its own phase with the load running:
#        switchover    `pg_autoctl perform switchover` (planned);
#        postmaster    kill -9 of the primary's postmaster (its keeper restarts it);
#        node          kill -9 of the primary's whole process group (keeper, postmaster,
#                      backends: the machine is gone); the monitor fails over, and the
#                      killed node's keeper is started again afterwards and rejoins;
#   6. the report: per phase, the answers by status (503s with and without Retry-After,
#      requests with no answer), when each Tollgate node failed its first and last write
#      and answered writes again, the slowest write; at the end, acknowledged purchases
#      against the orders and keys found, and acknowledged increments against each key's
#      usage as both nodes read it.
#
# Everything (processes, directories) is removed on exit, also on failure or Ctrl-C; the
# whole run is bounded by TIMEOUT seconds. The database is open to anyone on loopback
# (`--auth trust`, no TLS): a demonstration, not a deployment.
#
# Environment (defaults in brackets):
#   BIN [target/release/tollgate]  PG_VERSION [15]  TIMEOUT [1200]  LOAD_WORKERS [3]
#   KEYS [6]  WARMUP_SECS [5] (load before each fault)  AFTER_SECS [5] (load after both
#   nodes write again)  PHASE_TIMEOUT [150]  REJOIN_TIMEOUT [420] (for the killed node to
#   be a secondary again: when pg_rewind fails, pg_basebackup waits for a checkpoint)
#   FAULTS ["switchover postmaster node"]
#   KEEP [unset: remove the work directory]
set -euo pipefail

BIN=${BIN:-target/release/tollgate}
PG_VERSION=${PG_VERSION:-15}
TIMEOUT=${TIMEOUT:-1200}
export LOAD_WORKERS=${LOAD_WORKERS:-3} KEYS=${KEYS:-6} WARMUP_SECS=${WARMUP_SECS:-5}
export AFTER_SECS=${AFTER_SECS:-5} PHASE_TIMEOUT=${PHASE_TIMEOUT:-150} REJOIN_TIMEOUT=${REJOIN_TIMEOUT:-420}
export FAULTS=${FAULTS:-switchover postmaster node}
PGBIN=/usr/lib/postgresql/$PG_VERSION/bin

log() { printf '[pg-auto-failover.sh %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "$*"; exit 1; }

[[ $(id -u) -eq 0 ]] || die "run as root (pg_autoctl runs as the postgres user through runuser)"
[[ -x $BIN ]] || die "BIN=$BIN is not an executable (cargo build --release, or set BIN)"
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
for c in python3 curl psql runuser setsid timeout; do
    command -v $c >/dev/null || die "$c is required"
done
if ! command -v pg_autoctl >/dev/null || [[ ! -x $PGBIN/pg_ctl ]]; then
    log "installing postgresql-$PG_VERSION and pg_auto_failover (Debian packages)"
    apt-get install -y "postgresql-$PG_VERSION" "postgresql-$PG_VERSION-auto-failover" \
        pg-auto-failover-cli >/dev/null \
        || die "could not install postgresql-$PG_VERSION-auto-failover and pg-auto-failover-cli"
fi

WORK=$(mktemp -d -t tollgate-pgaf-XXXXXX)
chmod 755 "$WORK"
mkdir -p "$WORK/pg" "$WORK/logs" "$WORK/pids" "$WORK/tg-a" "$WORK/tg-b"
chown postgres: "$WORK/pg"
chmod 700 "$WORK/pg"
PG=$WORK/pg
TG_PIDS=()
WATCHDOG=""

# The postmaster of each data directory, the process groups of the keepers, the Tollgate
# nodes: every one was started by this script and is ended by its id.
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    [[ -n $WATCHDOG ]] && kill "$WATCHDOG" 2>/dev/null || true
    local p f
    for p in "${TG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${TG_PIDS[@]}"; do timeout 15 tail --pid="$p" -f /dev/null 2>/dev/null || kill -9 "$p" 2>/dev/null || true; done
    for f in node2 node1 monitor; do
        [[ -d $PG/$f ]] && timeout 20 "$WORK/ac" stop --pgdata "$PG/$f" --fast >/dev/null 2>&1 || true
    done
    sleep 2
    for f in "$WORK"/pids/*.pid; do
        [[ -e $f ]] || continue
        p=$(cat "$f")
        kill -TERM -- "-$p" 2>/dev/null || true
    done
    sleep 1
    for f in "$WORK"/pids/*.pid; do
        [[ -e $f ]] || continue
        p=$(cat "$f")
        kill -KILL -- "-$p" 2>/dev/null || true
    done
    for f in node1 node2 monitor; do
        if [[ -s $PG/$f/postmaster.pid ]]; then
            p=$(head -1 "$PG/$f/postmaster.pid")
            kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null || true
        fi
    done
    sleep 1
    if [[ -n ${KEEP:-} ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
( sleep "$TIMEOUT"; log "TIMEOUT ($TIMEOUT s): giving up"; kill -TERM $$ ) &
WATCHDOG=$!

# pg_autoctl as postgres, with its configuration and state under the work directory.
cat >"$WORK/ac" <<EOF
#!/bin/sh
cd "$PG" && exec runuser -u postgres -- env -i PATH=$PGBIN:/usr/bin:/bin HOME=$PG \
    XDG_CONFIG_HOME=$PG/config XDG_DATA_HOME=$PG/share XDG_RUNTIME_DIR=$PG/run \
    PG_CONFIG=$PGBIN/pg_config pg_autoctl "\$@"
EOF
# keeper NAME: starts `pg_autoctl run` for $PG/NAME in a process group of its own.
cat >"$WORK/keeper" <<EOF
#!/bin/sh
setsid "$WORK/ac" run --pgdata "$PG/\$1" >>"$WORK/logs/\$1.log" 2>&1 </dev/null &
echo \$! >"$WORK/pids/\$1.pid"
EOF
chmod 755 "$WORK/ac" "$WORK/keeper"
AC="$WORK/ac"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
MON_PORT=$(free_port); P1=$(free_port); P2=$(free_port); HA=$(free_port); HB=$(free_port)

# until SECONDS WHAT CMD...: runs CMD every half second until it succeeds.
until_ok() {
    local secs=$1 what=$2; shift 2
    local end=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        (( SECONDS < end )) || die "$what: not within $secs s"
        sleep 0.5
    done
}
state_json() { timeout 20 "$AC" show state --pgdata "$PG/monitor" --json; }
# stable: one primary and one secondary, each in the state the monitor assigned.
stable() {
    state_json | python3 -c '
import json, sys
nodes = json.load(sys.stdin)
states = sorted(n["current_group_state"] for n in nodes if n["current_group_state"] == n["assigned_group_state"])
sys.exit(0 if states == ["primary", "secondary"] else 1)'
}

log "pg_autoctl $(pg_autoctl --version | head -1 | awk '{print $3}'); work directory $WORK"
log "monitor on port $MON_PORT"
timeout 120 "$AC" create monitor --pgdata "$PG/monitor" --pgport "$MON_PORT" \
    --hostname 127.0.0.1 --auth trust --no-ssl --pgctl "$PGBIN/pg_ctl" \
    >"$WORK/logs/create-monitor.log" 2>&1 || { tail -20 "$WORK/logs/create-monitor.log" >&2; die "pg_autoctl create monitor failed"; }
"$WORK/keeper" monitor
until_ok 60 "the monitor" "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$MON_PORT"
MONITOR_URI="postgres://autoctl_node@127.0.0.1:$MON_PORT/pg_auto_failover?sslmode=disable"

n=0
for port in "$P1" "$P2"; do
    n=$((n + 1))
    log "data node node$n on port $port"
    timeout 300 "$AC" create postgres --pgdata "$PG/node$n" --pgport "$port" --name "node$n" \
        --hostname 127.0.0.1 --auth trust --no-ssl --ssl-mode disable --dbname tollgate \
        --monitor "$MONITOR_URI" --pgctl "$PGBIN/pg_ctl" --replication-quorum true \
        >"$WORK/logs/create-node$n.log" 2>&1 || { tail -20 "$WORK/logs/create-node$n.log" >&2; die "pg_autoctl create postgres node$n failed"; }
    "$WORK/keeper" "node$n"
    if [[ $n -eq 1 ]]; then
        until_ok 120 "node1 primary" bash -c "'$AC' show state --pgdata '$PG/monitor' | grep -q 'single *| *single'"
    fi
done
until_ok 300 "a primary and a secondary" stable
# Two data nodes: one standby, which must be in the replication quorum. number_sync_standbys
# stays at its default, 0, the only value allowed with one standby (1 would need two; and
# pg_autoctl 2.0's `set formation number-sync-standbys 0` refuses the 0 it already has).
timeout 30 "$AC" set node replication-quorum true --pgdata "$PG/monitor" --name node1 >>"$WORK/logs/settings.log" 2>&1
timeout 30 "$AC" set node replication-quorum true --pgdata "$PG/monitor" --name node2 >>"$WORK/logs/settings.log" 2>&1
until_ok 120 "a primary and a secondary" stable

URI=$(timeout 20 "$AC" show uri --pgdata "$PG/monitor" --formation default)
log "formation URI: $URI"
[[ $URI == postgres://* ]] || die "unexpected URI from pg_autoctl show uri: $URI"
ADMIN_URL=${URI/postgres:\/\//postgres://postgres@}
psql "$ADMIN_URL" -qAtX -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'tollgate') THEN
        CREATE ROLE tollgate LOGIN PASSWORD 'tollgate';
    END IF;
END $$;
ALTER DATABASE tollgate OWNER TO tollgate;
SQL
STORE_URL=${URI/postgres:\/\//postgres://tollgate:tollgate@}
log "storage.url: $STORE_URL"
{
    echo "pg_autoctl: $(pg_autoctl --version | head -1)"
    timeout 20 "$AC" show state --pgdata "$PG/monitor"
    timeout 20 "$AC" show settings --pgdata "$PG/monitor"
    echo "on the primary: $(psql "$ADMIN_URL" -qAtX -c "SELECT 'synchronous_commit = ' || current_setting('synchronous_commit') || ', synchronous_standby_names = ' || current_setting('synchronous_standby_names')")"
} | tee "$WORK/setup.txt"

# --- the Tollgate nodes ------------------------------------------------------------------
start_node() { # name port data_dir
    env TOLLGATE__STORAGE__BACKEND=postgres TOLLGATE__STORAGE__URL="$STORE_URL" \
        TOLLGATE__STORAGE__SCHEMA=tollgate TOLLGATE__STORAGE__POOL_SIZE=8 \
        TOLLGATE__STORAGE__DATA_DIR="$3" TOLLGATE__SERVER__BIND="127.0.0.1:$2" \
        TOLLGATE__SERVER__WORKERS=2 TOLLGATE__LOG__LEVEL=info \
        TOLLGATE__RATE_LIMITS__ENABLED=false \
        TOLLGATE__JOBS__SWEEP_INTERVAL_SECS=5 TOLLGATE__JOBS__CONFIRMED_GRACE_SECS=5 \
        "$BIN" >"$WORK/logs/tollgate-$1.log" 2>&1 </dev/null &
    TG_PIDS+=($!)
}
log "Tollgate A on $HA, B on $HB ($BIN)"
start_node a "$HA" "$WORK/tg-a"
until_ok 60 "Tollgate A ready" curl -sf "http://127.0.0.1:$HA/readyz"
start_node b "$HB" "$WORK/tg-b"
until_ok 60 "Tollgate B ready" curl -sf "http://127.0.0.1:$HB/readyz"

# --- load, faults, report ----------------------------------------------------------------
export WORK PG NODE_A="http://127.0.0.1:$HA" NODE_B="http://127.0.0.1:$HB"
export TOKEN_FILE="$WORK/tg-a/bootstrap-token" ADMIN_URL
cat >"$WORK/drive.py" <<'PY'
"""Load, faults and the report (run by scripts/pg-auto-failover.sh)."""
import collections, json, os, random, subprocess, sys, threading, time
import urllib.error, urllib.request

E = os.environ
WORK, PG = E["WORK"], E["PG"]
AC = os.path.join(WORK, "ac")
NODES = {"A": E["NODE_A"], "B": E["NODE_B"]}
TOKEN = open(E["TOKEN_FILE"]).read().strip()
WORKERS, KEYS = int(E["LOAD_WORKERS"]), int(E["KEYS"])
WARMUP, AFTER = float(E["WARMUP_SECS"]), float(E["AFTER_SECS"])
PHASE_TIMEOUT = float(E["PHASE_TIMEOUT"])
REJOIN_TIMEOUT = float(E["REJOIN_TIMEOUT"])
VALIDATE = "/v1/customer-portal/license-keys/validate"
T0 = time.monotonic()


def now():
    return time.monotonic() - T0


def say(*a):
    print(time.strftime("%H:%M:%S"), *a, flush=True)


def call(node, method, path, body=None, auth=True, timeout=30):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(NODES[node] + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if auth:
        req.add_header("Authorization", "Bearer " + TOKEN)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers.get("Retry-After"), json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            b = json.loads(raw)
        except ValueError:
            b = raw.decode(errors="replace")
        return e.code, e.headers.get("Retry-After"), b
    except Exception as e:  # refused, reset, timed out: no answer
        return None, None, repr(e)


def must(r, want, what):
    if r[0] != want:
        sys.exit(f"{what}: {r[0]} {r[2]}")
    return r[2]


def ac(*args, timeout=120):
    return subprocess.run([AC, *args], capture_output=True, text=True, timeout=timeout)


def state():
    r = ac("show", "state", "--pgdata", f"{PG}/monitor", "--json", timeout=20)
    return json.loads(r.stdout)


def primary():
    for n in state():
        if n["current_group_state"] in ("primary", "wait_primary", "single"):
            return n["nodename"]
    raise RuntimeError("no primary")


def stable(timeout=240):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            s = sorted(n["current_group_state"] for n in state() if n["current_group_state"] == n["assigned_group_state"])
            if s == ["primary", "secondary"]:
                return True
        except Exception:
            pass
        time.sleep(0.5)
    return False


# --- the shop ---------------------------------------------------------------------------
slug = f"failover-{int(time.time())}"
org = must(call("A", "POST", "/v1/organizations/", {"name": "Failover", "slug": slug}), 201, "organization")["id"]
benefit = must(call("A", "POST", "/v1/benefits/", {"type": "license_keys", "description": "License",
                                                    "organization_id": org, "properties": {}}), 201, "benefit")["id"]
product = must(call("A", "POST", "/v1/products/", {"name": "App", "organization_id": org,
                                                    "prices": [{"type": "one_time", "amount_type": "free"}]}), 201, "product")["id"]
must(call("A", "POST", f"/v1/products/{product}/benefits", {"benefits": [benefit]}), 200, "product benefits")

lock = threading.Lock()
events = []  # (sent, answered, node, kind, status, retry_after, detail)
acked_purchases, unknown_purchases = [], []
acked_incr = collections.Counter()
unknown_incr = collections.Counter()
buyer = [0]


def record(t0, node, kind, r):
    with lock:
        events.append((t0, now(), node, kind, r[0], r[1], "" if r[0] in (200, 201) else str(r[2])[:160]))


def purchase(node):
    with lock:
        buyer[0] += 1
        n = buyer[0]
    t0 = now()
    r = call(node, "POST", "/v1/checkouts/custom/", {"payment_processor": "stripe", "product_id": product})
    record(t0, node, "checkout", r)
    if r[0] != 201:
        return False
    cid, secret = r[2]["id"], r[2]["client_secret"]
    t0 = now()
    r = call(node, "POST", f"/v1/checkouts/custom/client/{secret}/confirm",
             {"customer_name": f"Buyer {n}", "customer_email": f"buyer{n}@example.com",
              "customer_billing_address": {"country": "FR"}}, auth=False)
    record(t0, node, "confirm", r)
    with lock:
        (acked_purchases if r[0] == 200 else unknown_purchases).append(cid)
    return r[0] == 200


for i in range(KEYS):
    if not purchase("A" if i % 2 == 0 else "B"):
        sys.exit("could not buy the keys to validate")
keys = must(call("A", "GET", f"/v1/license-keys/?organization_id={org}&limit=100"), 200, "keys")["items"]
keys = keys[:KEYS]


def increment(node, rng):
    k = rng.choice(keys)
    t0 = now()
    r = call(node, "POST", VALIDATE, {"key": k["key"], "organization_id": org, "increment_usage": 1}, auth=False)
    record(t0, node, "increment", r)
    with lock:
        if r[0] == 200:
            acked_incr[k["id"]] += 1
        elif r[0] is None or r[0] >= 500:
            unknown_incr[k["id"]] += 1
    return r[0] == 200


def worker(node, stop, seed):
    rng = random.Random(seed)
    i = 0
    while not stop.is_set():
        i += 1
        ok = purchase(node) if i % 2 else increment(node, rng)
        if not ok:
            time.sleep(0.2)


def failed(e):
    return e[4] is None or e[4] >= 500


# --- the faults ---------------------------------------------------------------------------
def pgdata(name):
    return f"{PG}/{name}"


def fault_switchover():
    r = ac("perform", "switchover", "--pgdata", pgdata("monitor"), "--formation", "default", timeout=180)
    return f"pg_autoctl perform switchover: exit {r.returncode}"


def fault_postmaster():
    p = primary()
    pid = int(open(f"{pgdata(p)}/postmaster.pid").readline())
    os.kill(pid, 9)
    return f"kill -9 {pid} (postmaster of {p}, the primary)"


killed = []


def fault_node():
    p = primary()
    pgid = int(open(f"{WORK}/pids/{p}.pid").read())
    pid = int(open(f"{pgdata(p)}/postmaster.pid").readline())
    os.killpg(pgid, 9)
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    killed.append(p)
    return f"kill -9 of {p}'s process group {pgid} (keeper, postmaster {pid}, backends)"


FAULTS = {"switchover": fault_switchover, "postmaster": fault_postmaster, "node": fault_node}


def recovered(since):
    """Both nodes answered every write of the last 5 s, at least one each, 5 s after since."""
    t = now()
    if t - since < 5:
        return False
    with lock:
        recent = [e for e in events if e[0] >= t - 5]
    for node in NODES:
        mine = [e for e in recent if e[2] == node]
        if not mine or any(failed(e) for e in mine):
            return False
    return True


results = []


def phase(name):
    say(f"phase {name}: primary is {primary()}")
    stop = threading.Event()
    threads = [threading.Thread(target=worker, args=(node, stop, hash((name, node, w))), daemon=True)
               for node in NODES for w in range(WORKERS)]
    for t in threads:
        t.start()
    time.sleep(WARMUP)
    start = now()
    what = FAULTS[name]()
    done = now()
    say(f"phase {name}: {what} ({done - start:.1f} s)")
    end = start + PHASE_TIMEOUT
    while now() < end and not recovered(done):
        time.sleep(0.5)
    ok = recovered(done)
    time.sleep(AFTER)
    stop.set()
    for t in threads:
        t.join(timeout=40)
    with lock:
        mine = [e for e in events if e[0] >= start - WARMUP]
    res = {"phase": name, "fault": what, "fault_cmd_secs": round(done - start, 1), "recovered": ok}
    by = collections.defaultdict(collections.Counter)
    for e in mine:
        by[e[3]][str(e[4]) if e[4] is not None else "no answer"] += 1
    res["answers"] = {k: dict(v) for k, v in by.items()}
    s503 = [e for e in mine if e[4] == 503]
    res["503"] = len(s503)
    res["503_with_retry_after"] = sum(1 for e in s503 if e[5])
    res["retry_after_values"] = dict(collections.Counter(e[5] for e in s503))
    samples = collections.Counter((e[4], e[6][:120]) for e in mine if failed(e))
    res["failure_samples"] = [f"{n} x {s}: {d}" for (s, d), n in samples.most_common(6)]
    per = {}
    for node in NODES:
        w = [e for e in mine if e[2] == node and e[0] >= start - 30]
        fails = [e for e in w if failed(e)]
        after = [e for e in w if e[0] >= start]
        slow = max((e[1] - e[0] for e in after), default=0)
        if fails:
            last = max(e[1] for e in fails)
            back = min((e[1] for e in w if not failed(e) and e[0] >= last), default=None)
            per[node] = {"first_failure": round(min(e[0] for e in fails) - start, 2),
                         "last_failure": round(last - start, 2),
                         "writes_again": None if back is None else round(back - start, 2),
                         "failed": len(fails), "slowest_answer": round(slow, 2)}
        else:
            per[node] = {"failed": 0, "slowest_answer": round(slow, 2)}
    res["nodes"] = per
    agains = [v.get("writes_again") for v in per.values() if v["failed"]]
    res["both_write_again_after"] = max(agains) if agains and None not in agains else (0 if not agains else None)
    say(f"phase {name}: " + json.dumps(res))
    results.append(res)
    if name == "node":
        for p in killed:
            t = time.monotonic()
            log = f"{WORK}/logs/{p}.log"
            before = os.path.getsize(log)
            subprocess.run([f"{WORK}/keeper", p], check=True)
            ok = stable(REJOIN_TIMEOUT)
            took = time.monotonic() - t
            with open(log, "rb") as f:  # what this start of the keeper logged
                f.seek(before)
                how = "pg_basebackup (pg_rewind failed)" if b"Failed to rewind" in f.read() else "pg_rewind"
            say(f"phase node: {p}'s keeper started again; {'rejoined as secondary' if ok else 'NOT a secondary'} "
                f"after {took:.1f} s, through {how}")
            res["rejoin_secs"] = round(took, 1) if ok else None
            res["rejoin_through"] = how
    elif not stable():
        say(f"phase {name}: the pair is not stable after the phase")
    ev = ac("show", "events", "--pgdata", pgdata("monitor"), "--count", "14", timeout=20)
    with open(f"{WORK}/events-{name}.txt", "w") as f:
        f.write(ev.stdout)
    print(ev.stdout, flush=True)


for name in E["FAULTS"].split():
    phase(name)

# --- what is stored ---------------------------------------------------------------------------
say("waiting 15 s for the sweep (jobs.confirmed_grace_secs = 5, sweep every 5 s)")
time.sleep(15)
orders, page = [], 1
while True:
    b = must(call("A", "GET", f"/v1/orders/?organization_id={org}&limit=100&page={page}"), 200, "orders")
    orders += b["items"]
    if page >= b["pagination"]["max_page"]:
        break
    page += 1
by_checkout = collections.Counter(o.get("checkout_id") for o in orders)
nkeys = {}
for node in NODES:
    nkeys[node] = must(call(node, "GET", f"/v1/license-keys/?organization_id={org}&limit=1"), 200, "keys")["pagination"]["total_count"]
found = sum(1 for c in acked_purchases if by_checkout[c] >= 1)
unknown_found = sum(1 for c in unknown_purchases if by_checkout[c] >= 1)
twice = sum(1 for c, n in by_checkout.items() if n > 1)
usage_ok, usage_lines = True, []
for k in keys:
    reads = {node: must(call(node, "GET", f"/v1/license-keys/{k['id']}"), 200, "key")["usage"] for node in NODES}
    a, u = acked_incr[k["id"]], unknown_incr[k["id"]]
    ok = all(a <= r <= a + u for r in reads.values())
    usage_ok &= ok
    usage_lines.append(f"key {k['id'][:8]}: acknowledged {a}, unanswered/5xx {u}, usage A {reads['A']} B {reads['B']} {'ok' if ok else 'WRONG'}")
summary = {
    "purchases_acknowledged": len(acked_purchases),
    "acknowledged_found_as_orders": found,
    "purchases_unanswered_or_5xx": len(unknown_purchases),
    "of_which_found_as_orders": unknown_found,
    "orders": len(orders),
    "checkouts_with_two_orders": twice,
    "license_keys_A": nkeys["A"], "license_keys_B": nkeys["B"],
    "increments_acknowledged": sum(acked_incr.values()),
    "increments_unanswered_or_5xx": sum(unknown_incr.values()),
    "usage_within_bounds": usage_ok,
}
print("\n".join(usage_lines))
say("summary " + json.dumps(summary))
print("RESULTS " + json.dumps({"phases": results, "summary": summary}), flush=True)
lost = len(acked_purchases) - found
if lost or not usage_ok or twice or nkeys["A"] != len(orders):
    sys.exit("FAILED: acknowledged writes missing or counts wrong (above)")
PY
timeout $((TIMEOUT - SECONDS > 30 ? TIMEOUT - SECONDS - 30 : 30)) python3 "$WORK/drive.py"
log "done; warnings and errors of the Tollgate nodes:"
for n in a b; do
    sed -E 's/\x1b\[[0-9;]*m//g' "$WORK/logs/tollgate-$n.log" | grep -E '^[^ ]+ +(WARN|ERROR) ' \
        | sed -E 's/^[^ ]+ +/'"$n"': /; s/[0-9a-f]{8}-[0-9a-f-]{27}/<id>/g; s/[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+:[0-9]+/<addr>/g' \
        | cut -c1-220 | sort | uniq -c | sort -rn | head -12 >&2 || true
done
