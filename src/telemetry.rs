use tracing_subscriber::{fmt, EnvFilter};

use crate::config::{LogFormat, LogSettings};

/// Installs the global subscriber: `RUST_LOG` if set, else the configured level.
pub fn init(settings: &LogSettings) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&settings.level));
    let builder = fmt().with_env_filter(filter).with_target(false);
    let _ = match settings.format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
}
