//! Outside tools the tests drive: Python packages in a virtual environment and npm packages
//! in a local folder, installed on first use from pinned lists in `tests/clients/`, and
//! child processes that can never hang a test.
//!
//! Installs go under `CARGO_TARGET_TMPDIR`, keyed by a hash of the pinned list, so a change
//! of pins installs afresh and an unchanged list is installed once per target directory.
//! A file lock serialises installs across test threads and processes (nextest).

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// Installing packages may take a while on a cold cache; it must still end.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(900);

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tools_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tollgate-tools")
}

fn digest(files: &[&Path]) -> String {
    let mut hasher = Sha256::new();
    for file in files {
        let bytes = fs::read(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        hasher.update(&bytes);
    }
    hasher
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs `f` under an exclusive lock on `<tools_dir>/<name>.lock`.
pub fn locked<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let dir = tools_dir();
    fs::create_dir_all(&dir).expect("creating the tools directory");
    let lock = File::create(dir.join(format!("{name}.lock"))).expect("creating a lock file");
    lock.lock().expect("locking the tools directory");
    let out = f();
    let _ = lock.unlock();
    out
}

/// A virtual environment with the packages of `requirements` (a path relative to the
/// repository root) installed; returns its `python` executable.
pub fn python_venv(requirements: &str) -> PathBuf {
    let requirements = repo_root().join(requirements);
    let venv = tools_dir().join(format!("venv-{}", digest(&[&requirements])));
    let python = venv.join("bin").join("python");
    locked("python", || {
        if venv.join(".ready").exists() {
            return;
        }
        let _ = fs::remove_dir_all(&venv);
        let python3 = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
        must_succeed(
            Command::new(&python3).arg("-m").arg("venv").arg(&venv),
            INSTALL_TIMEOUT,
            "creating a virtual environment",
        );
        must_succeed(
            Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--disable-pip-version-check",
                    "--no-input",
                    "--quiet",
                    "-r",
                ])
                .arg(&requirements),
            INSTALL_TIMEOUT,
            "pip install",
        );
        fs::write(venv.join(".ready"), b"").expect("marking the venv ready");
    });
    python
}

/// `npm ci` of `dir` (relative to the repository root, holding `package.json` and
/// `package-lock.json`) into a local folder; returns the folder, whose `node_modules`
/// resolves the packages for scripts placed in it (see [`node_script`]).
pub fn node_packages(dir: &str) -> PathBuf {
    let src = repo_root().join(dir);
    let manifest = src.join("package.json");
    let lockfile = src.join("package-lock.json");
    let dest = tools_dir().join(format!("node-{}", digest(&[&manifest, &lockfile])));
    locked("node", || {
        if dest.join(".ready").exists() {
            return;
        }
        let _ = fs::remove_dir_all(&dest);
        fs::create_dir_all(&dest).expect("creating the npm folder");
        fs::copy(&manifest, dest.join("package.json")).expect("copying package.json");
        fs::copy(&lockfile, dest.join("package-lock.json")).expect("copying the lockfile");
        must_succeed(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&dest),
            INSTALL_TIMEOUT,
            "npm ci",
        );
        fs::write(dest.join(".ready"), b"").expect("marking the npm folder ready");
    });
    dest
}

/// Copies the script at `script` (relative to the repository root) into the npm folder
/// `packages`, so its imports resolve there; returns the copy's path.
pub fn node_script(packages: &Path, script: &str) -> PathBuf {
    let src = repo_root().join(script);
    let name = src.file_name().expect("a script file name");
    let dest = packages.join(name);
    fs::copy(&src, &dest).expect("copying the node script");
    dest
}

/// Runs `cmd` to completion or kills it after `timeout`. Output is captured.
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
    // Drain the pipes on threads so a chatty child cannot block on a full pipe.
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait().expect("waiting for a child process") {
            Some(status) => break status,
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                let out = out_thread.join().unwrap_or_default();
                let err = err_thread.join().unwrap_or_default();
                panic!(
                    "{cmd:?} did not finish within {timeout:?}\nstdout:\n{}\nstderr:\n{}",
                    String::from_utf8_lossy(&out),
                    String::from_utf8_lossy(&err)
                );
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    Output {
        status,
        stdout: out_thread.join().unwrap_or_default(),
        stderr: err_thread.join().unwrap_or_default(),
    }
}

fn must_succeed(cmd: &mut Command, timeout: Duration, what: &str) {
    let out = run_with_timeout(cmd, timeout);
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A served page (`body`, self-contained: its HTML saved renders as served) drawn by
/// headless Chromium at a phone's and a desktop's width into `dir` under
/// `<CARGO_TARGET_TMPDIR>`, as `{name}-390.png` and `{name}-1280.png`, to be looked at;
/// panics when Chromium draws nothing.
pub fn render_page(dir: &str, name: &str, body: &str) {
    crate::browser::ensure_chromium();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join(format!("{name}.html"));
    std::fs::write(&html, body).unwrap();
    for (width, height) in [(390, 3000), (1280, 2000)] {
        let png = dir.join(format!("{name}-{width}.png"));
        let _ = std::fs::remove_file(&png);
        // A profile of its own (a Chromium started while another runs on the default
        // profile hands its work over and exits without drawing), and one at a time.
        let profile = dir.join(format!(".profile-{name}-{width}"));
        let out = locked("chromium-screenshot", || {
            run_with_timeout(
                Command::new("/usr/bin/chromium").args([
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--hide-scrollbars",
                    &format!("--user-data-dir={}", profile.display()),
                    &format!("--window-size={width},{height}"),
                    &format!("--screenshot={}", png.display()),
                    &format!("file://{}", html.display()),
                ]),
                Duration::from_secs(120),
            )
        });
        let _ = std::fs::remove_dir_all(&profile);
        let bytes = std::fs::read(&png).unwrap_or_else(|e| {
            panic!(
                "no screenshot {} ({e}): {}",
                png.display(),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert!(bytes.starts_with(b"\x89PNG"), "{}", png.display());
    }
}

/// Runs a child process from async test code without blocking the server's runtime.
pub async fn run_async(mut cmd: Command, timeout: Duration) -> Output {
    tokio::task::spawn_blocking(move || run_with_timeout(&mut cmd, timeout))
        .await
        .expect("the child-process thread")
}

/// The numbers of a suite's last line, `N passed, M failed`.
pub fn tally(stdout: &str) -> Option<(u32, u32)> {
    let line = stdout.lines().rev().find(|l| !l.trim().is_empty())?;
    let (passed, failed) = line.trim().split_once(", ")?;
    let passed = passed.strip_suffix(" passed")?.parse().ok()?;
    let failed = failed.strip_suffix(" failed")?.parse().ok()?;
    Some((passed, failed))
}

/// The port a child process announces as its first line of stdout, `PORT <n>` (the rest of
/// its stdout is drained); `Err` with what went wrong if it says nothing else in `deadline`.
pub fn announced_port(child: &mut std::process::Child, deadline: Duration) -> Result<u16, String> {
    use std::io::{BufRead, BufReader};
    let stdout = child
        .stdout
        .take()
        .ok_or("the child's stdout is not piped")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = tx.send(line);
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    let line = rx
        .recv_timeout(deadline)
        .map_err(|_| format!("no port announced within {deadline:?}"))?;
    line.trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| format!("unexpected first line {line:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_reads_the_last_line() {
        assert_eq!(tally("a\nb\n12 passed, 0 failed\n\n"), Some((12, 0)));
        assert_eq!(tally("3 passed, 2 failed"), Some((3, 2)));
        assert_eq!(tally("3 passed, 2 failed\ntrailing noise"), None);
        assert_eq!(tally(""), None);
    }

    #[test]
    fn a_child_that_overruns_is_killed() {
        let result = std::panic::catch_unwind(|| {
            run_with_timeout(Command::new("sleep").arg("30"), Duration::from_millis(200))
        });
        assert!(result.is_err(), "the sleeping child was not stopped");
        let out = run_with_timeout(Command::new("echo").arg("hi"), Duration::from_secs(10));
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
    }
}
