use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use tollgate::config::Settings;
use tollgate::startup::Application;
use tollgate::telemetry::write_stderr;
use tollgate_storage::StoreHealth;

/// Exit code when the store failed and the process must be restarted to reopen it
/// (EX_TEMPFAIL: a supervisor should restart the service).
const EXIT_RESTART: u8 = 75;

/// Tollgate: sells software through Polar's /v1 API.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// Configuration file (missing is fine when it is the default).
    #[arg(long, short, global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service (the default).
    Serve,
    /// Copy the running service's store into DIR (a consistent snapshot, over HTTP).
    Backup {
        /// Directory to write `tollgate.snapshot` into (created if missing).
        #[arg(long)]
        to: PathBuf,
        /// The running service (default: server.public_url, else http://server.bind).
        #[arg(long)]
        url: Option<String>,
        /// File holding an admin's personal access token (default: the bootstrap token,
        /// <data_dir>/bootstrap-token).
        #[arg(long)]
        token_file: Option<PathBuf>,
    },
    /// Load a backup into an empty data directory (storage.data_dir; the service stopped).
    Restore {
        /// Directory a backup wrote.
        #[arg(long)]
        from: PathBuf,
    },
    /// Verify every index against its records (the service stopped); exit 1 if damaged.
    Check {
        /// Rebuild the indexes that are wrong.
        #[arg(long)]
        repair: bool,
    },
    /// Rewrite the embedded store (the service stopped) so that it holds its content once,
    /// with storage.compression; safe to interrupt.
    Compact,
    /// Fill the store with a generated shop of N sales spread over months (benchmarks;
    /// the service stopped; benches/bigshop.sh).
    #[command(hide = true)]
    BenchFill {
        #[arg(long)]
        sales: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value_t = 12)]
        months: u32,
        #[arg(long, default_value_t = 1)]
        organizations: u32,
        /// Webhook endpoints per organization (at most 2).
        #[arg(long, default_value_t = 2)]
        endpoints: u32,
        /// Sales per transaction.
        #[arg(long, default_value_t = 1000)]
        chunk: usize,
        /// Give the bootstrap admin this password (to sign in to the dashboard).
        #[arg(long)]
        dashboard_password: Option<String>,
    },
    /// Move the store between engines.
    Storage {
        #[command(subcommand)]
        action: StorageCommand,
    },
}

#[derive(Subcommand)]
enum StorageCommand {
    /// Copy the embedded store (storage.data_dir, the service stopped) into an empty
    /// PostgreSQL schema, revisions kept, then verify every index there; exit 1 if a
    /// check fails.
    Copy {
        /// The database: postgres://user:password@host:port/database
        #[arg(long)]
        to: String,
        /// The schema to create the tables in (must hold no records yet).
        #[arg(long, default_value = "tollgate")]
        schema: String,
    },
    /// What the store holds, by size (the service stopped): per tree or table, and per
    /// collection and index name, keys and bytes; the size on disk; the data directory's
    /// other folders; and bytes per order.
    Stats,
}

/// jemalloc instead of glibc's allocator: it returns the memory of evicted actors to the
/// OS within seconds (glibc kept the peak of every key ever live: ~2.2 KiB per idle key
/// against ~0.4 KiB; benches/README.md, "validate.sh").
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    tollgate::startup::owner_only_files();
    let cli = Cli::parse();
    let (path, required) = match cli.config {
        Some(p) => (p, true),
        None => (PathBuf::from("config.toml"), false),
    };
    let settings = match Settings::load(&path, required) {
        Ok(s) => s,
        Err(e) => {
            write_stderr(&format!("Error: {e:#}"));
            return ExitCode::FAILURE;
        }
    };
    tollgate::telemetry::init(&settings.log);
    let result = match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(settings),
        Command::Backup {
            to,
            url,
            token_file,
        } => backup(&settings, &to, url, token_file),
        Command::Restore { from } => {
            let config = settings.storage.store_config();
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(anyhow::Error::from)
                .and_then(|rt| rt.block_on(tollgate::admin::restore_from(&from, &config)))
                .map(|n| {
                    write_stdout(&format!(
                        "restored {n} records from {} into {}",
                        from.display(),
                        settings.storage.data_dir.display()
                    ));
                    ExitCode::SUCCESS
                })
        }
        Command::Check { repair } => check(&settings, repair),
        Command::Compact => compact(&settings),
        Command::BenchFill {
            sales,
            seed,
            months,
            organizations,
            endpoints,
            chunk,
            dashboard_password,
        } => {
            let options = tollgate::bench_fill::FillOptions {
                sales,
                seed,
                months,
                organizations,
                endpoints,
                chunk,
                dashboard_password,
                ..Default::default()
            };
            actix_web::rt::System::new()
                .block_on(tollgate::bench_fill::fill(settings, &options))
                .map(|report| {
                    write_stdout(&report.describe());
                    ExitCode::SUCCESS
                })
        }
        Command::Storage {
            action: StorageCommand::Copy { to, schema },
        } => copy_to_postgres(&settings, &to, &schema),
        Command::Storage {
            action: StorageCommand::Stats,
        } => storage_stats(&settings),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            tracing::error!(error = format!("{e:#}"), "exiting on error");
            write_stderr(&format!("Error: {e:#}"));
            ExitCode::FAILURE
        }
    }
}

fn write_stdout(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
}

fn backup(
    settings: &Settings,
    to: &std::path::Path,
    url: Option<String>,
    token_file: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    use anyhow::Context;
    let url = url.unwrap_or_else(|| tollgate::admin::default_url(settings));
    let token_file = token_file.unwrap_or_else(|| tollgate::admin::default_token_file(settings));
    let token = std::fs::read_to_string(&token_file)
        .with_context(|| format!("cannot read the admin token from {}", token_file.display()))?;
    let records = actix_web::rt::System::new().block_on(tollgate::admin::backup_to(
        &url,
        token.trim(),
        to,
    ))?;
    write_stdout(&format!(
        "backed up {records} records into {}",
        to.display()
    ));
    Ok(ExitCode::SUCCESS)
}

fn compact(settings: &Settings) -> anyhow::Result<ExitCode> {
    use anyhow::Context;
    let report =
        tollgate_storage::Store::compact(&settings.storage.store_config()).with_context(|| {
            "cannot compact the store (is the service still running? stop it first)"
        })?;
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    write_stdout(&format!(
        "compacted {} entries: {:.1} MiB -> {:.1} MiB ({})",
        report.entries,
        mib(report.before_bytes),
        mib(report.after_bytes),
        if report.compressed {
            "compressed"
        } else {
            "not compressed"
        }
    ));
    Ok(ExitCode::SUCCESS)
}

fn check(settings: &Settings, repair: bool) -> anyhow::Result<ExitCode> {
    use anyhow::Context;
    let store =
        tollgate_storage::Store::open(&settings.storage.store_config()).with_context(|| {
            "cannot open the store (is the service still running? stop it first)".to_string()
        })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let lines = runtime.block_on(tollgate::admin::check(&store, repair))?;
    let (text, clean) = tollgate::admin::describe(&lines);
    write_stdout(text.trim_end());
    let files = runtime.block_on(tollgate::admin::check_files_with(&store, settings))?;
    write_stdout(&format!("files: {} uploaded checked", files.checked));
    for m in &files.missing {
        write_stdout(&format!("files: missing or short object of {m}"));
    }
    for o in &files.orphans {
        write_stdout(&format!("files: orphan {o} (no record names it)"));
    }
    if !files.missing.is_empty() {
        write_stdout("uploaded files are missing: restore them from a backup");
        return Ok(ExitCode::FAILURE);
    }
    Ok(if clean {
        ExitCode::SUCCESS
    } else {
        write_stdout("indexes are damaged: run `tollgate check --repair`");
        ExitCode::FAILURE
    })
}

fn copy_to_postgres(settings: &Settings, url: &str, schema: &str) -> anyhow::Result<ExitCode> {
    use anyhow::Context;
    let store =
        tollgate_storage::Store::open(&settings.storage.store_config()).with_context(|| {
            "cannot open the store (is the service still running? stop it first)".to_string()
        })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (records, lines) =
        runtime.block_on(tollgate::admin::copy_to_postgres(&store, url, schema))?;
    let (text, clean) = tollgate::admin::describe(&lines);
    write_stdout(text.trim_end());
    write_stdout(&format!(
        "copied {records} records into schema {schema}{}",
        if clean { "; every index verified" } else { "" }
    ));
    Ok(if clean {
        ExitCode::SUCCESS
    } else {
        write_stdout("the copy's indexes differ from its records: do not use it");
        ExitCode::FAILURE
    })
}

fn storage_stats(settings: &Settings) -> anyhow::Result<ExitCode> {
    use anyhow::Context;
    let config = settings.storage.store_config();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let stats = runtime.block_on(async {
        let store = tollgate_storage::Store::connect(&config)
            .await
            .with_context(|| {
                "cannot open the store (is the service still running? stop it first)".to_string()
            })?;
        anyhow::Ok(store.storage_stats().await?)
    })?;
    for line in stats.lines() {
        write_stdout(&line);
    }
    // The data directory's other contents (e-mail files, uploads): beside the store.
    let dir = &settings.storage.data_dir;
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    let mut total = 0;
    for entry in entries {
        let bytes = tollgate_storage::bytes_under(&entry.path());
        total += bytes;
        write_stdout(&format!(
            "data_dir {}: {bytes}",
            entry.file_name().to_string_lossy()
        ));
    }
    write_stdout(&format!("data_dir total: {total}"));
    let orders = stats.records_of("order");
    let per_order = |bytes: u64| bytes.checked_div(orders);
    if let (Some(disk), Some(logical), Some(dir)) = (
        per_order(stats.on_disk),
        per_order(stats.logical_bytes()),
        per_order(total),
    ) {
        write_stdout(&format!(
            "orders: {orders}; per order: on disk {disk} logical {logical} data_dir {dir}"
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs the service until it is stopped, or until its store fails and the data directory
/// accepts writes again: then it stops and exits with [`EXIT_RESTART`] so that a supervisor
/// restarts it and the store reopens (nothing acknowledged is lost).
fn serve(settings: Settings) -> anyhow::Result<ExitCode> {
    actix_web::rt::System::new().block_on(async move {
        let app = Application::build(settings).await?;
        let state = app.state();
        let handle = app.handle();
        let restart = Arc::new(AtomicBool::new(false));
        let flag = restart.clone();
        actix_web::rt::spawn(async move {
            loop {
                actix_web::rt::time::sleep(Duration::from_millis(250)).await;
                if let StoreHealth::NeedsRestart { error } = state.store.health() {
                    let message = format!(
                        "the store failed ({error}) and cannot recover in this process; the \
                         disk accepts writes again, so the service stops with exit code \
                         {EXIT_RESTART} for its supervisor to restart it (nothing acknowledged \
                         is lost)"
                    );
                    tracing::error!("{message}");
                    write_stderr(&format!("tollgate: {message}"));
                    flag.store(true, Ordering::SeqCst);
                    handle.stop(true).await;
                    return;
                }
            }
        });
        let served = app.run_until_stopped().await;
        if restart.load(Ordering::SeqCst) {
            // Exit now, without running destructors: a failed store's engine may never
            // finish flushing, and everything acknowledged is durable already.
            std::process::exit(i32::from(EXIT_RESTART));
        }
        served.map(|()| ExitCode::SUCCESS)
    })
}
