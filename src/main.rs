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
}

fn main() -> ExitCode {
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
            // The final flush of a failed store fails too; that is expected here.
            return Ok(ExitCode::from(EXIT_RESTART));
        }
        served.map(|()| ExitCode::SUCCESS)
    })
}
