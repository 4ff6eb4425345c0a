//! The real `tollgate` binary as a child process, for the tests that need a process to
//! kill: crash safety (`kill -9`, SIGTERM), start-up recovery, a full disk, backups.
//!
//! [`Binary::spawn`] starts `env!("CARGO_BIN_EXE_tollgate")` in a root directory (no
//! `config.toml` there: defaults, plus `TOLLGATE__*` environment variables, as deployed) on
//! a free loopback port, with its stdout and stderr in a log file under the root.
//! [`Binary::start`] also waits until `GET /readyz` answers 200. Dropping a [`Binary`]
//! kills and reaps the process, so a failing test never leaves a server behind.

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use actix_web::rt::time::sleep;
use tollgate::app::checkout::FAULT_AFTER_CONFIRM;

use crate::helpers::client;

/// How long one `/readyz` probe may take before it counts as "not ready yet".
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// How often readiness and exit are polled.
const POLL: Duration = Duration::from_millis(50);

/// A free loopback port: bind port 0, read the port, let it go.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binding a free port");
    listener.local_addr().expect("local address").port()
}

/// A running `tollgate` child process. Dropping it kills it and waits for it.
pub(crate) struct Binary {
    child: Child,
    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub(crate) address: String,
    log: PathBuf,
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Binary {
    /// Starts the binary in `root` over `data_dir`, logging to `root/<log_name>`, and does
    /// not wait for it to be ready.
    ///
    /// The environment: `RUST_LOG` and the test-only fault points removed, then
    /// `TOLLGATE__SERVER__BIND` (the free port), `TOLLGATE__SERVER__WORKERS=2`,
    /// `TOLLGATE__STORAGE__DATA_DIR`, `TOLLGATE__LOG__LEVEL=info` and
    /// `TOLLGATE__RATE_LIMITS__ENABLED=false` (these tests load the server on purpose;
    /// the limits have their own tests), then `extra_env`, which may override any of them.
    pub(crate) fn spawn(
        root: &Path,
        data_dir: &Path,
        log_name: &str,
        extra_env: &[(&str, &str)],
    ) -> Binary {
        let port = free_port();
        let log = root.join(log_name);
        let out = File::create(&log).expect("creating the log file");
        let err = out.try_clone().expect("cloning the log file handle");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tollgate"));
        cmd.current_dir(root)
            .env_remove("RUST_LOG")
            .env_remove(FAULT_AFTER_CONFIRM)
            .env("TOLLGATE__SERVER__BIND", format!("127.0.0.1:{port}"))
            .env("TOLLGATE__SERVER__WORKERS", "2")
            .env("TOLLGATE__STORAGE__DATA_DIR", data_dir)
            .env("TOLLGATE__LOG__LEVEL", "info")
            .env("TOLLGATE__RATE_LIMITS__ENABLED", "false")
            .envs(extra_env.iter().copied())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        let child = cmd.spawn().expect("starting the tollgate binary");
        Binary {
            child,
            address: format!("http://127.0.0.1:{port}"),
            log,
        }
    }

    /// [`Binary::spawn`], then [`Binary::wait_ready`] within `ready_deadline`.
    pub(crate) async fn start(
        root: &Path,
        data_dir: &Path,
        log_name: &str,
        extra_env: &[(&str, &str)],
        ready_deadline: Duration,
    ) -> Binary {
        let mut binary = Binary::spawn(root, data_dir, log_name, extra_env);
        binary.wait_ready(ready_deadline).await;
        binary
    }

    /// Everything the process has logged so far (empty if the log cannot be read).
    pub(crate) fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Polls `/readyz` until it answers 200. Panics, with the log, if the process exits
    /// first or `deadline` passes.
    pub(crate) async fn wait_ready(&mut self, deadline: Duration) {
        let client = client();
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("polling the child") {
                panic!(
                    "tollgate exited before it was ready ({status}); log:\n{}",
                    self.log_text()
                );
            }
            let ready = client
                .get(format!("{}/readyz", self.address))
                .timeout(PROBE_TIMEOUT)
                .send()
                .await
                .is_ok_and(|r| r.status() == 200);
            if ready {
                return;
            }
            assert!(
                started.elapsed() < deadline,
                "tollgate was not ready within {deadline:?}; log:\n{}",
                self.log_text()
            );
            sleep(POLL).await;
        }
    }

    /// SIGKILL (`kill -9`) without reaping: for a process other tasks still address
    /// (dropping the [`Binary`] reaps it).
    pub(crate) fn kill_9_now(&self) {
        let status = Command::new("kill")
            .arg("-KILL")
            .arg(self.child.id().to_string())
            .status()
            .expect("running kill -KILL");
        assert!(status.success(), "kill -KILL failed: {status}");
    }

    /// SIGKILL (`kill -9`), then reap the process.
    pub(crate) fn kill_9(&mut self) {
        self.child.kill().expect("killing the server");
        self.child.wait().expect("reaping the server");
    }

    /// Sends SIGTERM (`kill -TERM`) and returns at once; see [`Binary::wait_exit`].
    pub(crate) fn sigterm(&self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("running kill -TERM");
        assert!(status.success(), "kill -TERM failed: {status}");
    }

    /// Waits for the process to exit on its own. Panics, with the log, if `deadline` passes.
    pub(crate) async fn wait_exit(&mut self, deadline: Duration) -> ExitStatus {
        self.wait_exit_or(deadline, String::new).await
    }

    /// [`Binary::wait_exit`], adding `diagnose()` to the failure message.
    pub(crate) async fn wait_exit_or(
        &mut self,
        deadline: Duration,
        diagnose: impl Fn() -> String,
    ) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("polling the child") {
                return status;
            }
            assert!(
                started.elapsed() < deadline,
                "tollgate did not exit within {deadline:?}; {}\nlog:\n{}",
                diagnose(),
                self.log_text()
            );
            sleep(POLL).await;
        }
    }
}

// ------------------------------------------------------------ memory of a big transfer

/// A 5 MiB part.
pub(crate) const MIB5: usize = 5 * 1024 * 1024;

/// The pid of the `tollgate` child serving `data_dir` (found by its environment).
pub(crate) fn server_pid(data_dir: &std::path::Path) -> u32 {
    let needle = format!("TOLLGATE__STORAGE__DATA_DIR={}", data_dir.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
                .unwrap_or(false)
        })
        .expect("the server's process")
}

/// The peak resident memory (`VmHWM`) of process `pid`, in KiB.
pub(crate) fn vm_hwm_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/<pid>/status")
}

/// Part `i` (5 MiB) of the 200 MiB file: made on the fly, never held whole by the test.
pub(crate) fn big_part(i: usize) -> Vec<u8> {
    (0..MIB5)
        .map(|j| ((i * 131 + j * 7 + j / 4093) % 256) as u8)
        .collect()
}
