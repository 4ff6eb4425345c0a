//! A PostgreSQL 15 primary with a synchronous streaming standby, both on loopback and both
//! built by the test itself (`initdb`, `pg_basebackup -R`), for the tests that take the
//! database away from under the nodes: failover (`kill -9` of the primary's postmaster,
//! then `pg_ctl promote` of the standby), an outage without promotion
//! ([`PgPair::stop_primary`], [`PgPair::start_primary`]), connections cut from the
//! database's side ([`PgPair::terminate`]).
//!
//! The binaries are PostgreSQL 15's (`/usr/lib/postgresql/15/bin`, or
//! `TOLLGATE_TEST_PG_BIN`). Without them [`PgPair::start`] prints "skipped" and answers
//! `None` on a developer machine, and fails under `CI` (as
//! `tollgate_storage::testing::fresh_schema` does for the test database). `initdb`
//! refuses root: run as root (here and in CI), every PostgreSQL command runs as the
//! `postgres` user (`setpriv`, which executes the command itself, so a timeout kills the
//! command and not a wrapper), in a temporary directory given to that user.
//!
//! Every command has a deadline, so a test never hangs on the database. Dropping the pair
//! stops both servers (`pg_ctl stop -m immediate`, then SIGKILL to whatever process is
//! left working in their data directories), so a failing test never leaves PostgreSQL
//! running.
//!
//! The methods block the calling thread (each for at most its deadline); a test on a
//! single-threaded runtime that must keep its load running meanwhile calls them through
//! `spawn_blocking` on an `Arc<PgPair>`.

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// Where the PostgreSQL 15 binaries are, unless `TOLLGATE_TEST_PG_BIN` says otherwise.
const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
/// The database, user and superuser of both servers (authentication: trust on loopback).
const USER: &str = "postgres";
const DATABASE: &str = "postgres";

/// `initdb` and `pg_basebackup` of an empty cluster.
const BUILD_DEADLINE: Duration = Duration::from_secs(120);
/// `pg_ctl start`, `stop`, `promote` (the `-t` given to `pg_ctl`, which also bounds the
/// command itself with some slack).
const CTL_DEADLINE: Duration = Duration::from_secs(60);
/// One `psql` call (connect and statement; the statement itself is limited to 20 s).
const PSQL_DEADLINE: Duration = Duration::from_secs(30);
/// Until the standby is streaming in synchronous mode.
const SYNC_DEADLINE: Duration = Duration::from_secs(60);
/// Until the processes of a killed postmaster are gone.
const GONE_DEADLINE: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(50);

/// The primary (index 0) and the standby (index 1): their directories and ports.
const NAMES: [&str; 2] = ["primary", "standby"];

/// A primary and its synchronous standby. See the module's documentation.
pub(crate) struct PgPair {
    /// Owned by `postgres` when the test runs as root; holds both data directories, their
    /// server logs and the commands' log.
    dir: TempDir,
    bin: PathBuf,
    /// Run every PostgreSQL command as `postgres` (the test runs as root).
    as_postgres: bool,
    ports: [u16; 2],
    /// The standby was promoted: it is the primary now.
    promoted: AtomicBool,
    /// The postmaster pid of each server as last started, for the clean-up on drop.
    postmasters: Mutex<[Option<u32>; 2]>,
}

impl Drop for PgPair {
    fn drop(&mut self) {
        let postmasters = match self.postmasters.lock() {
            Ok(guard) => *guard,
            Err(poisoned) => *poisoned.into_inner(),
        };
        for (i, pid) in postmasters.iter().enumerate() {
            // Only a postmaster still running: the pid of a killed one may be another
            // process's by now.
            if pid.is_some_and(alive) {
                let mut stop = self.pg("pg_ctl");
                stop.arg("stop").arg("-D").arg(self.data_dir(i)).args([
                    "-m",
                    "immediate",
                    "-w",
                    "-t",
                    "20",
                ]);
                let _ = self.run_quietly(stop, Duration::from_secs(30));
            }
        }
        // Whatever is left of either server (the backends of a killed postmaster).
        for i in 0..2 {
            for pid in processes_in(&self.data_dir(i)) {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

impl PgPair {
    /// Builds and starts the pair: `initdb` of the primary (trust on loopback,
    /// `wal_level = replica`, `synchronous_standby_names = '*'`, `fsync` as asked), the
    /// primary on a free loopback port, `pg_basebackup -R` of the standby, the standby on
    /// another port, then waits until `pg_stat_replication` shows it `sync`. `None`:
    /// no PostgreSQL 15 binaries (skipped; a failure under `CI`).
    pub(crate) fn start(test: &str, fsync: bool) -> Option<PgPair> {
        let bin = std::env::var_os("TOLLGATE_TEST_PG_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(PG_BIN));
        let missing: Vec<&str> = ["initdb", "pg_ctl", "pg_basebackup", "psql", "postgres"]
            .into_iter()
            .filter(|b| !bin.join(b).is_file())
            .collect();
        if !missing.is_empty() {
            assert!(
                std::env::var("CI").is_err(),
                "CI=true but no PostgreSQL 15 binaries in {} (missing {missing:?}): install \
                 postgresql-15 or set TOLLGATE_TEST_PG_BIN",
                bin.display()
            );
            eprintln!(
                "skipped: {test} needs the PostgreSQL 15 binaries ({} or TOLLGATE_TEST_PG_BIN)",
                bin.display()
            );
            return None;
        }
        let as_postgres = effective_uid() == 0;
        let dir = tempfile::Builder::new()
            .prefix(&format!("pgpair-{test}-"))
            .tempdir()
            .expect("creating the pair's temporary directory");
        if as_postgres {
            traversable_by_others(dir.path());
            let status = Command::new("chown")
                .arg(format!("{USER}:"))
                .arg(dir.path())
                .status()
                .expect("running chown");
            assert!(
                status.success(),
                "chown {USER}: of the pair's directory failed"
            );
        }
        let pair = PgPair {
            dir,
            bin,
            as_postgres,
            ports: [free_port(), free_port()],
            promoted: AtomicBool::new(false),
            postmasters: Mutex::new([None, None]),
        };
        pair.build(fsync);
        Some(pair)
    }

    fn build(&self, fsync: bool) {
        let primary = self.data_dir(0);
        let mut initdb = self.pg("initdb");
        initdb
            .arg("-D")
            .arg(&primary)
            .args(["-U", USER, "--auth=trust", "--no-sync", "--no-instructions"])
            .args(["-E", "UTF8", "--locale=C"]);
        self.run(initdb, "initdb", BUILD_DEADLINE);
        let fsync = if fsync { "on" } else { "off" };
        self.append_conf(
            &primary,
            &format!(
                "listen_addresses = '127.0.0.1'\n\
                 port = {port}\n\
                 unix_socket_directories = ''\n\
                 wal_level = replica\n\
                 max_wal_senders = 4\n\
                 max_replication_slots = 4\n\
                 wal_keep_size = '128MB'\n\
                 synchronous_standby_names = '*'\n\
                 synchronous_commit = on\n\
                 fsync = {fsync}\n\
                 shared_buffers = '32MB'\n\
                 max_connections = 100\n\
                 log_line_prefix = '%m [%p] %q%a '\n",
                port = self.ports[0]
            ),
        );
        self.start_server(0);

        let mut backup = self.pg("pg_basebackup");
        backup
            .arg("-D")
            .arg(self.data_dir(1))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.ports[0].to_string(),
                "-U",
                USER,
            ])
            .args(["-R", "-X", "stream", "-c", "fast", "--no-sync", "-w"]);
        self.run(backup, "pg_basebackup", BUILD_DEADLINE);
        // The standby's own port; no standby of its own to wait for once promoted.
        self.append_conf(
            &self.data_dir(1),
            &format!(
                "port = {}\nsynchronous_standby_names = ''\nhot_standby = on\n",
                self.ports[1]
            ),
        );
        self.start_server(1);
        self.wait_sync();
    }

    /// The multi-host URL both servers answer on, in order, with
    /// `target_session_attrs=read-write` (a client connects to whichever is the primary)
    /// and `application_name` (letters, digits, `-` and `_`) to tell this client's
    /// connections apart in `pg_stat_activity`.
    pub(crate) fn url(&self, application_name: &str) -> String {
        assert!(
            application_name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "application_name {application_name:?}: letters, digits, - and _ only"
        );
        format!(
            "postgres://{USER}@127.0.0.1:{},127.0.0.1:{}/{DATABASE}\
             ?target_session_attrs=read-write&application_name={application_name}",
            self.ports[0], self.ports[1]
        )
    }

    /// The port of the server that is the primary now (the standby's once promoted).
    pub(crate) fn primary_port(&self) -> u16 {
        self.ports[self.primary()]
    }

    fn primary(&self) -> usize {
        usize::from(self.promoted.load(Ordering::SeqCst))
    }

    /// `kill -9` of the primary's postmaster (its pid from `postmaster.pid`), as a crash
    /// would: its listening socket is gone at once; its backends notice the postmaster's
    /// death on their own and end (whatever is left of them is killed on drop). Returns
    /// once the postmaster is dead.
    pub(crate) fn kill_primary(&self) {
        assert!(
            !self.promoted.load(Ordering::SeqCst),
            "the original primary was already replaced"
        );
        let pid = postmaster_pid(&self.data_dir(0));
        let status = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .expect("running kill -KILL");
        assert!(status.success(), "kill -KILL {pid} failed: {status}");
        let deadline = Instant::now() + GONE_DEADLINE;
        while alive(pid) {
            assert!(
                Instant::now() < deadline,
                "the postmaster {pid} outlived kill -9 by {GONE_DEADLINE:?}"
            );
            std::thread::sleep(POLL);
        }
    }

    /// Waits until every process of the killed primary (its backends included) is gone.
    pub(crate) fn wait_primary_gone(&self) {
        let deadline = Instant::now() + GONE_DEADLINE;
        loop {
            let left = processes_in(&self.data_dir(0));
            if left.is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "processes of the killed primary left after {GONE_DEADLINE:?}: {left:?}"
            );
            std::thread::sleep(POLL);
        }
    }

    /// Stops the original primary without a checkpoint (`pg_ctl stop -m immediate`), as an
    /// outage would, and does not promote the standby: writes wait for the primary (the
    /// standby refuses them) until [`PgPair::start_primary`].
    pub(crate) fn stop_primary(&self) {
        assert!(
            !self.promoted.load(Ordering::SeqCst),
            "the standby was promoted: the original primary is not the primary"
        );
        let mut stop = self.pg("pg_ctl");
        stop.arg("stop").arg("-D").arg(self.data_dir(0)).args([
            "-m",
            "immediate",
            "-w",
            "-t",
            "50",
        ]);
        self.run(stop, "pg_ctl stop of the primary", CTL_DEADLINE);
    }

    /// Starts the original primary again on its port after [`PgPair::stop_primary`] (it
    /// recovers from its WAL, and the standby reconnects), and waits until the standby is
    /// synchronous again.
    pub(crate) fn start_primary(&self) {
        assert!(
            !self.promoted.load(Ordering::SeqCst),
            "the standby was promoted: starting the old primary would make two"
        );
        self.start_server(0);
        self.wait_sync();
    }

    /// `pg_ctl promote` of the standby, waiting until it accepts writes.
    pub(crate) fn promote(&self) {
        let mut promote = self.pg("pg_ctl");
        promote
            .arg("promote")
            .arg("-D")
            .arg(self.data_dir(1))
            .args(["-w", "-t", "50"]);
        self.run(promote, "pg_ctl promote", CTL_DEADLINE);
        self.promoted.store(true, Ordering::SeqCst);
        let read_only = self.psql("SHOW transaction_read_only");
        assert_eq!(
            read_only, "off",
            "the promoted standby still refuses writes"
        );
    }

    /// `pg_terminate_backend` of every client backend on the primary whose
    /// `application_name` starts with `prefix`; returns how many were terminated.
    pub(crate) fn terminate(&self, prefix: &str) -> usize {
        self.terminate_where(&format!(
            "starts_with(application_name, {})",
            sql_literal(prefix)
        ))
        .len()
    }

    /// `pg_terminate_backend` of every client backend on the primary (other than the one
    /// asking) that `condition` (SQL over `pg_stat_activity`) selects; returns the
    /// `application_name` of each one terminated.
    pub(crate) fn terminate_where(&self, condition: &str) -> Vec<String> {
        // The backends are chosen first (OFFSET 0 keeps the planner from evaluating the
        // termination before the condition), then terminated.
        let out = self.psql(&format!(
            "SELECT '[' || application_name || ']' FROM (SELECT pid, application_name \
             FROM pg_stat_activity WHERE pid <> pg_backend_pid() \
             AND backend_type = 'client backend' AND ({condition}) OFFSET 0) chosen \
             WHERE pg_terminate_backend(pid)"
        ));
        out.lines()
            .filter_map(|l| Some(l.trim().strip_prefix('[')?.strip_suffix(']')?.to_string()))
            .collect()
    }

    /// Runs `sql` on the current primary with `psql` (unaligned, tuples only, stopping at
    /// the first error) and returns its output, trimmed. Panics, with the output and the
    /// server logs, if it fails or outlives its deadline.
    pub(crate) fn psql(&self, sql: &str) -> String {
        let mut psql = self.pg("psql");
        psql.args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", "127.0.0.1", "-p", &self.primary_port().to_string()])
            .args(["-U", USER, "-d", DATABASE, "-c", sql])
            .env("PGCONNECT_TIMEOUT", "10")
            .env("PGOPTIONS", "-c statement_timeout=20000");
        self.run(psql, &format!("psql {sql:?}"), PSQL_DEADLINE)
            .trim()
            .to_string()
    }

    /// Both servers' logs so far, for a failure message.
    pub(crate) fn log_text(&self) -> String {
        let mut text = String::new();
        for name in NAMES
            .iter()
            .map(|n| format!("{n}.log"))
            .chain(["commands.log".into()])
        {
            let log = std::fs::read_to_string(self.dir.path().join(&name)).unwrap_or_default();
            text.push_str(&format!("--- {name}\n{log}\n"));
        }
        text
    }

    fn data_dir(&self, i: usize) -> PathBuf {
        self.dir.path().join(NAMES[i])
    }

    fn append_conf(&self, data: &Path, lines: &str) {
        use std::io::Write;
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(data.join("postgresql.conf"))
            .expect("opening postgresql.conf");
        conf.write_all(format!("\n# pgpair\n{lines}").as_bytes())
            .expect("writing postgresql.conf");
    }

    /// `pg_ctl start -w` of server `i`, logging to `<name>.log`; notes its postmaster.
    fn start_server(&self, i: usize) {
        let mut start = self.pg("pg_ctl");
        start
            .arg("start")
            .arg("-D")
            .arg(self.data_dir(i))
            .arg("-l")
            .arg(self.dir.path().join(format!("{}.log", NAMES[i])))
            .args(["-w", "-t", "50"]);
        self.run(
            start,
            &format!("pg_ctl start of the {}", NAMES[i]),
            CTL_DEADLINE,
        );
        let pid = postmaster_pid(&self.data_dir(i));
        self.postmasters.lock().expect("postmaster pids")[i] = Some(pid);
    }

    /// Until the primary's `pg_stat_replication` shows the standby `sync`.
    fn wait_sync(&self) {
        let deadline = Instant::now() + SYNC_DEADLINE;
        loop {
            let state = self.psql("SELECT sync_state FROM pg_stat_replication");
            if state.lines().any(|l| l == "sync") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the standby was not synchronous within {SYNC_DEADLINE:?} ({state:?}); logs:\n{}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A command running PostgreSQL's `program`: as `postgres` when the test runs as root
    /// (`setpriv` executes it in its own place), in the pair's directory, without the
    /// caller's `PG*` variables (`pg_virtualenv` sets them for the test database).
    fn pg(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut cmd = Command::new("setpriv");
            cmd.args(["--reuid", USER, "--regid", USER, "--init-groups", "--"])
                .arg(path);
            cmd
        } else {
            Command::new(path)
        };
        cmd.current_dir(self.dir.path());
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("PG") {
                cmd.env_remove(name);
            }
        }
        cmd
    }

    /// Runs `cmd` to its end within `deadline` (killed past it) and returns its stdout.
    /// Panics, with its output and the server logs, if it fails or is killed.
    fn run(&self, cmd: Command, what: &str, deadline: Duration) -> String {
        match self.run_quietly(cmd, deadline) {
            Ok(out) => out,
            Err(why) => panic!("{what}: {why}\nlogs:\n{}", self.log_text()),
        }
    }

    fn run_quietly(&self, mut cmd: Command, deadline: Duration) -> Result<String, String> {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| format!("cannot start: {e}"))?;
        let out = reader(child.stdout.take());
        let err = reader(child.stderr.take());
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if started.elapsed() < deadline => std::thread::sleep(POLL / 2),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
            }
        };
        let read = |r: std::sync::mpsc::Receiver<String>| {
            r.recv_timeout(Duration::from_secs(5)).unwrap_or_default()
        };
        let (out, err) = (read(out), read(err));
        if let Ok(mut log) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("commands.log"))
        {
            use std::io::Write;
            let _ = writeln!(log, "$ {cmd:?}\n{out}{err}-> {status:?}");
        }
        match status {
            Some(status) if status.success() => Ok(out),
            Some(status) => Err(format!("{status}\n{out}{err}")),
            None => Err(format!("killed after {deadline:?}\n{out}{err}")),
        }
    }
}

/// Reads a child's pipe to its end on a thread of its own.
fn reader(pipe: Option<impl Read + Send + 'static>) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        let _ = tx.send(text);
    });
    rx
}

/// A free loopback port: bind port 0, read the port, let it go.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binding a free port");
    listener.local_addr().expect("local address").port()
}

/// The effective uid of this process (from `/proc/self/status`).
fn effective_uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .expect("reading /proc/self/status")
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1)?.parse().ok())
        .expect("the effective uid in /proc/self/status")
}

/// Asserts that every directory above `dir` can be traversed by another user (`postgres`
/// must reach its data directories).
fn traversable_by_others(dir: &Path) {
    for parent in dir.ancestors().skip(1) {
        let mode = std::fs::metadata(parent)
            .expect("reading a parent directory's mode")
            .permissions()
            .mode();
        assert!(
            mode & 0o001 != 0,
            "{} (mode {mode:o}) is not traversable by the postgres user: set TMPDIR to a \
             directory it can reach (such as /tmp)",
            parent.display()
        );
    }
}

/// The postmaster's pid: the first line of `postmaster.pid`.
fn postmaster_pid(data: &Path) -> u32 {
    let text = std::fs::read_to_string(data.join("postmaster.pid"))
        .unwrap_or_else(|e| panic!("reading {}/postmaster.pid: {e}", data.display()));
    text.lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in postmaster.pid: {text:?}"))
}

/// Field 3 (the state) of `/proc/<pid>/stat`.
fn state(pid: u32) -> Option<char> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields follow the last ')'.
    text.get(text.rfind(')')? + 1..)?
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// `pid` is running (not gone, not a zombie nobody reaped).
fn alive(pid: u32) -> bool {
    state(pid).is_some_and(|s| s != 'Z')
}

/// The live processes working in `dir`: a server's postmaster and every child of it (each
/// child leads a process group of its own, and a killed postmaster's children are
/// re-parented, but all of them keep the data directory as their working directory).
fn processes_in(dir: &Path) -> Vec<u32> {
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == dir)
                && alive(*pid)
        })
        .collect()
}

/// `text` as an SQL string literal.
fn sql_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The port of the server `client` is connected to.
async fn server_port(client: &tokio_postgres::Client) -> u16 {
    let row = client
        .query_one("SELECT inet_server_port()", &[])
        .await
        .expect("asking the server's port");
    u16::try_from(row.get::<_, i32>(0)).expect("a port")
}

#[actix_web::test]
async fn a_pair_streams_synchronously_and_its_standby_takes_over() {
    let Some(pair) = PgPair::start("pgpair", false) else {
        return;
    };
    let connect = || async {
        let (client, connection) =
            tokio_postgres::connect(&pair.url("pgpair-test"), tokio_postgres::NoTls)
                .await
                .expect("connecting through the pair's URL");
        actix_web::rt::spawn(connection);
        client
    };
    // The URL reaches the primary (the standby refuses the read-write session).
    let client = connect().await;
    assert_eq!(server_port(&client).await, pair.ports[0]);
    client
        .batch_execute("CREATE TABLE t (n int PRIMARY KEY); INSERT INTO t VALUES (1)")
        .await
        .expect("writing on the primary");
    assert_eq!(pair.terminate("pgpair-"), 1);
    assert!(client.simple_query("SELECT 1").await.is_err());
    // An outage without promotion: the same primary comes back on its port, with its data,
    // and the standby is synchronous again.
    pair.stop_primary();
    pair.start_primary();
    assert_eq!(pair.primary_port(), pair.ports[0]);
    pair.psql("INSERT INTO t VALUES (2)");
    // Committed on the primary means flushed on the standby: after a kill -9 and the
    // promotion, the standby has it, and the same URL leads there.
    pair.kill_primary();
    pair.wait_primary_gone();
    pair.promote();
    assert_eq!(pair.primary_port(), pair.ports[1]);
    assert_eq!(pair.psql("SELECT sum(n) FROM t"), "3");
    let client = connect().await;
    assert_eq!(server_port(&client).await, pair.ports[1]);
    client
        .batch_execute("INSERT INTO t VALUES (3)")
        .await
        .expect("writing on the promoted standby");
    assert_eq!(pair.psql("SELECT count(*) FROM t"), "3");
    assert_eq!(pair.terminate("nobody-"), 0);
}
