//! A real S3-speaking server for the S3 backend's tests: s3s-fs (the `s3s` project's
//! file-system store) in this process, on 127.0.0.1:0, on its own thread and runtime. It
//! checks SigV4 on every request, presigned URLs' signatures and expiry included
//! (`SimpleAuth`), so a URL Tollgate presigns wrongly is refused as it would be by S3.

use std::path::{Path, PathBuf};

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use tempfile::TempDir;

pub const ACCESS_KEY: &str = "AKTOLLGATETEST";
pub const SECRET_KEY: &str = "s3s-fs-secret-key-for-the-tests";
pub const REGION: &str = "us-east-1";

/// A running store; stopped when dropped.
pub struct S3Server {
    /// `http://127.0.0.1:<port>`
    pub endpoint: String,
    /// The store's root: bucket `b` is the directory `root/b`, object `k` the file `root/b/k`.
    pub root: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    _dir: TempDir,
}

impl S3Server {
    /// Starts a store with no bucket.
    pub fn start() -> S3Server {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s3");
        std::fs::create_dir_all(&root).unwrap();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let fs_root = root.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let fs = s3s_fs::FileSystem::new(&fs_root).unwrap();
                let mut b = S3ServiceBuilder::new(fs);
                b.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
                let service = b.build();
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                ready_tx.send(listener.local_addr().unwrap()).unwrap();
                let http = ConnBuilder::new(TokioExecutor::new());
                let mut stop_rx = stop_rx;
                loop {
                    let socket = tokio::select! {
                        accepted = listener.accept() => match accepted {
                            Ok((socket, _)) => socket,
                            Err(_) => continue,
                        },
                        _ = &mut stop_rx => break,
                    };
                    let conn = http
                        .serve_connection(TokioIo::new(socket), service.clone())
                        .into_owned();
                    tokio::spawn(async move {
                        let _ = conn.await;
                    });
                }
            });
            rt.shutdown_background();
        });
        let addr = ready_rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the S3 server's address");
        S3Server {
            endpoint: format!("http://{addr}"),
            root,
            stop: Some(stop_tx),
            thread: Some(thread),
            _dir: dir,
        }
    }

    /// Creates bucket `name` (a directory of the store's root, as s3s-fs keeps them).
    pub fn create_bucket(&self, name: &str) {
        std::fs::create_dir_all(self.root.join(name)).unwrap();
    }

    /// Where object `key` of `bucket` lives on disk.
    pub fn object_path(&self, bucket: &str, key: &str) -> PathBuf {
        self.root.join(bucket).join(key)
    }

    /// The files under bucket `bucket` (objects), relative to it, sorted.
    pub fn objects(&self, bucket: &str) -> Vec<String> {
        fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, base, out);
                } else {
                    out.push(p.strip_prefix(base).unwrap().display().to_string());
                }
            }
        }
        let base = self.root.join(bucket);
        let mut out = Vec::new();
        walk(&base, &base, &mut out);
        out.sort();
        out
    }

    /// `[files.s3]` for this store and `bucket`, as environment variables of the binary.
    pub fn env(&self, bucket: &str) -> Vec<(String, String)> {
        [
            ("ENDPOINT", self.endpoint.as_str()),
            ("REGION", REGION),
            ("BUCKET", bucket),
            ("ACCESS_KEY_ID", ACCESS_KEY),
            ("SECRET_ACCESS_KEY", SECRET_KEY),
            ("ALLOW_HTTP", "true"),
        ]
        .into_iter()
        .map(|(k, v)| (format!("TOLLGATE__FILES__S3__{k}"), v.to_string()))
        .collect()
    }

    /// `[files.s3]` for this store and `bucket`.
    pub fn settings(&self, bucket: &str) -> tollgate::config::S3Settings {
        tollgate::config::S3Settings {
            endpoint: self.endpoint.clone(),
            region: REGION.into(),
            bucket: bucket.into(),
            access_key_id: ACCESS_KEY.into(),
            secret_access_key: SECRET_KEY.into(),
            path_style: true,
            allow_http: true,
        }
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
