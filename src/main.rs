use std::path::PathBuf;

use clap::{Parser, Subcommand};
use tollgate::config::Settings;
use tollgate::startup::Application;

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

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let (path, required) = match cli.config {
        Some(p) => (p, true),
        None => (PathBuf::from("config.toml"), false),
    };
    let settings = Settings::load(&path, required)?;
    tollgate::telemetry::init(&settings.log);
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => actix_web::rt::System::new().block_on(async move {
            let app = Application::build(settings).await?;
            app.run_until_stopped().await
        }),
    }
}
