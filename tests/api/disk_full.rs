//! A full disk, for real: the release or debug binary runs with its data directory *and*
//! its log on a small tmpfs, which a filler file then fills up. Requests must answer 503
//! (never hang), `/readyz` must say 503, and once space is back the service must exit
//! with its restart code (sled cannot recover in-process) and come back with everything
//! it acknowledged. Needs root (to mount); skips loudly otherwise.

use std::fs::File;
use std::io::Write;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;
use tollgate::bootstrap::TOKEN_FILE;

use crate::binary::Binary;

/// Every client call of this test has this timeout: a hang is a failure, not a stall.
const CALL_TIMEOUT: Duration = Duration::from_secs(20);
const READY_DEADLINE: Duration = Duration::from_secs(30);
const EXIT_DEADLINE: Duration = Duration::from_secs(30);
/// `tollgate serve`'s exit code when its store must be reopened.
const EXIT_RESTART: i32 = 75;

/// A tmpfs mounted on a temporary directory; unmounted (lazily, so a process still holding
/// a file cannot block it) when dropped.
pub(crate) struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Result<Tmpfs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .stdin(Stdio::null())
            .output();
    }
}

/// The binary over `root/data`, with its log under `root` too, and the calls these tests make
/// to it. Dereferences to the [`Binary`].
pub(crate) struct Server(Binary);

impl Deref for Server {
    type Target = Binary;

    fn deref(&self) -> &Binary {
        &self.0
    }
}

impl DerefMut for Server {
    fn deref_mut(&mut self) -> &mut Binary {
        &mut self.0
    }
}

impl Server {
    /// Starts the binary over `root/data`, logging to `root/<log_name>`, and waits until
    /// `/readyz` is 200.
    pub(crate) async fn start(root: &Path, log_name: &str) -> Server {
        Self::start_with(root, log_name, &[]).await
    }

    /// [`Server::start`] with more settings in the environment.
    pub(crate) async fn start_with(root: &Path, log_name: &str, env: &[(&str, &str)]) -> Server {
        let mut all = vec![("TOLLGATE__STORAGE__CACHE_CAPACITY_MB", "16")];
        all.extend_from_slice(env);
        Server(Binary::start(root, &root.join("data"), log_name, &all, READY_DEADLINE).await)
    }

    fn client() -> reqwest::Client {
        reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .connect_timeout(Duration::from_secs(5))
            .build()
            .expect("a client")
    }

    /// The status of a GET, `None` if the server did not answer (exited).
    pub(crate) async fn status(&self, path: &str) -> Option<u16> {
        Self::client()
            .get(format!("{}{path}", self.address))
            .send()
            .await
            .ok()
            .map(|r| r.status().as_u16())
    }

    /// POSTs an organization: (status, body), or `None` if the connection failed. A
    /// timeout fails the test: a request must never hang.
    pub(crate) async fn create(
        &self,
        token: &str,
        slug: &str,
    ) -> Option<(u16, serde_json::Value, String)> {
        let sent = Self::client()
            .post(format!("{}/v1/organizations/", self.address))
            .bearer_auth(token)
            .json(&json!({"name": format!("Org {slug}"), "slug": slug}))
            .send()
            .await;
        let resp = match sent {
            Ok(r) => r,
            Err(e) if e.is_timeout() => panic!("a write hung (no answer in {CALL_TIMEOUT:?})"),
            Err(_) => return None,
        };
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = resp.json().await.unwrap_or(serde_json::Value::Null);
        Some((status, body, retry_after))
    }

    pub(crate) async fn get_org(&self, token: &str, id: &str) -> Option<u16> {
        let sent = Self::client()
            .get(format!("{}/v1/organizations/{id}", self.address))
            .bearer_auth(token)
            .send()
            .await;
        match sent {
            Ok(r) => Some(r.status().as_u16()),
            Err(e) if e.is_timeout() => panic!("a read hung (no answer in {CALL_TIMEOUT:?})"),
            Err(_) => None,
        }
    }
}

/// Writes a filler file until the file system refuses more.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut f = File::create(&path).expect("creating the filler");
    let block = vec![0xa5u8; 64 * 1024];
    while f.write_all(&block).is_ok() {}
    // Whatever is left is smaller than a block: take it too.
    while f.write_all(&[0u8; 512]).is_ok() {}
    while f.write_all(&[0u8]).is_ok() {}
    path
}

#[actix_web::test]
async fn a_full_disk_answers_503_never_hangs_and_the_service_comes_back_with_all_acknowledged_data()
{
    let fs = match Tmpfs::mount("16m") {
        Ok(fs) => fs,
        Err(e) => {
            eprintln!(
                "\n\n*** SKIPPED disk_full: cannot mount a tmpfs ({}) — run the tests as root \
                 to test a full disk ***\n",
                e.trim()
            );
            return;
        }
    };
    let root = fs.path().to_path_buf();
    std::fs::create_dir_all(root.join("data")).unwrap();
    let mut server = Server::start(&root, "server-1.log").await;
    let token = std::fs::read_to_string(root.join("data").join(TOKEN_FILE))
        .unwrap()
        .trim()
        .to_string();

    // Acknowledged before the disk fills.
    let mut acknowledged: Vec<String> = Vec::new();
    for n in 0..20 {
        let (status, body, _) = server.create(&token, &format!("before-{n}")).await.unwrap();
        assert_eq!(status, 201, "{body}");
        acknowledged.push(body["id"].as_str().unwrap().to_string());
    }

    let filler = fill(&root);

    // Writes until the store notices: each one answers 201 (it still fit) or 503, at once.
    let mut refused = None;
    for n in 0..2000 {
        let (status, body, retry_after) = server
            .create(&token, &format!("during-{n}"))
            .await
            .expect("the server answers while the disk is full");
        match status {
            201 => acknowledged.push(body["id"].as_str().unwrap().to_string()),
            503 => {
                refused = Some((body, retry_after));
                break;
            }
            other => panic!("a write on a full disk answered {other}: {body}"),
        }
    }
    let (body, retry_after) = refused.expect("the full disk never refused a write");
    assert_eq!(body["error"], "ServiceUnavailable", "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("storage failure"),
        "{body}"
    );
    assert!(!retry_after.is_empty(), "503 without Retry-After");

    // From now on: writes 503 at once, not ready, reads answer (200 or 503), never hang.
    // A hundred of them: their request lines (~15 kB; the 503's own warning is logged
    // once per 10 s) overflow the log file's last block, so some line is lost and the
    // loss must be reported below.
    for n in 0..100 {
        let (status, body, retry_after) = server
            .create(&token, &format!("refused-{n}"))
            .await
            .expect("the server answers");
        assert_eq!(status, 503, "{body}");
        assert_eq!(body["error"], "ServiceUnavailable");
        assert!(!retry_after.is_empty());
    }
    assert_eq!(server.status("/readyz").await, Some(503));
    assert_eq!(server.status("/healthz").await, Some(200));
    for id in acknowledged.iter().take(3) {
        let status = server.get_org(&token, id).await.expect("an answer");
        assert!(matches!(status, 200 | 503), "a read answered {status}");
    }

    // Space is back: the service exits with its restart code (sled cannot reopen itself
    // in-process) and says why, in the log that lives on the same disk.
    std::fs::remove_file(&filler).unwrap();
    let mount = root.clone();
    let status = server
        .wait_exit_or(EXIT_DEADLINE, move || {
            let run = |cmd: &str, args: &[&str]| {
                std::process::Command::new(cmd)
                    .args(args)
                    .arg(&mount)
                    .output()
                    .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
                    .unwrap_or_default()
            };
            format!(
                "disk:\n{}\nfiles:\n{}",
                run("df", &["-k"]),
                run("du", &["-ak"])
            )
        })
        .await;
    let log = server.log_text();
    assert_eq!(
        status.code(),
        Some(EXIT_RESTART),
        "exit {status}; log:\n{log}"
    );
    assert!(
        log.contains("cannot recover in this process"),
        "no clear exit message in the log:\n{log}"
    );
    assert!(
        log.contains("log lines were lost"),
        "the lines lost while the disk was full are not reported:\n{log}"
    );
    drop(server);

    // A supervisor restarts it: everything acknowledged is there, and it works.
    let server = Server::start(&root, "server-2.log").await;
    for id in &acknowledged {
        assert_eq!(
            server.get_org(&token, id).await,
            Some(200),
            "acknowledged organization {id} was lost"
        );
    }
    let (status, body, _) = server.create(&token, "after").await.unwrap();
    assert_eq!(status, 201, "{body}");
    assert_eq!(server.status("/readyz").await, Some(200));
    println!(
        "disk_full: {} writes acknowledged before the refusal, all kept",
        acknowledged.len()
    );
}
