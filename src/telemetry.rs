//! Logging that can never take a request or the store's flusher down.
//!
//! tracing-subscriber writes each event with one `write_all` and, when that fails (a full
//! disk under a redirected stdout, a closed pipe), reports it with `eprintln!`, which
//! panics when stderr fails too: the thread that logged dies. That killed the store's
//! flusher once. Here every line goes through [`SafeStdout`], which never fails: a line
//! the destination refuses is dropped and counted ([`lost_lines`]), and once writing works
//! again a line says how many were lost. Internal error reporting is off.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::{fmt, EnvFilter};

use crate::config::{LogFormat, LogSettings};

/// Log lines dropped because the destination refused them, since the start.
static LOST: AtomicU64 = AtomicU64::new(0);
/// The value of [`LOST`] when a line last reported it.
static REPORTED: AtomicU64 = AtomicU64::new(0);

/// How many log lines were dropped because stdout refused them.
pub fn lost_lines() -> u64 {
    LOST.load(Ordering::Relaxed)
}

/// Installs the global subscriber: `RUST_LOG` if set, else the configured level.
pub fn init(settings: &LogSettings) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&settings.level));
    let json = matches!(settings.format, LogFormat::Json);
    let builder = fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_writer(SafeStdout { json })
        .log_internal_errors(false);
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

/// Writes a line to stderr if it can; never panics (unlike `eprintln!`). For messages
/// that must be tried even without a subscriber (start-up errors, the exit message).
pub fn write_stderr(line: &str) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}

/// stdout for the log, losing (and counting) lines instead of failing.
#[derive(Debug, Clone, Copy)]
pub struct SafeStdout {
    /// Whether the report of lost lines is written as a JSON line.
    pub json: bool,
}

impl<'a> MakeWriter<'a> for SafeStdout {
    type Writer = SafeLine<io::Stdout>;

    fn make_writer(&'a self) -> Self::Writer {
        SafeLine {
            out: io::stdout(),
            json: self.json,
        }
    }
}

/// One event's writer: every write succeeds as far as the caller can tell.
pub struct SafeLine<W: Write> {
    out: W,
    json: bool,
}

impl<W: Write> SafeLine<W> {
    pub fn new(out: W, json: bool) -> Self {
        Self { out, json }
    }
}

impl<W: Write> Write for SafeLine<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let lost = LOST.load(Ordering::Relaxed);
        let reported = REPORTED.load(Ordering::Relaxed);
        if lost > reported {
            let n = lost - reported;
            let note = if self.json {
                // The newline ends a line the destination may have cut short.
                format!(
                    "\n{{\"level\":\"WARN\",\"fields\":{{\"message\":\"log lines were lost: \
                     the log destination refused them\",\"lost_lines\":{n},\"lost_lines_total\":{lost}}}}}\n"
                )
            } else {
                format!(
                    "\nWARN {n} log lines were lost: the log destination refused them \
                     (lost_lines_total={lost})\n"
                )
            };
            if self
                .out
                .write_all(note.as_bytes())
                .and_then(|()| self.out.flush())
                .is_ok()
            {
                REPORTED.fetch_max(lost, Ordering::Relaxed);
            }
        }
        if self
            .out
            .write_all(buf)
            .and_then(|()| self.out.flush())
            .is_err()
        {
            LOST.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        let _ = self.out.flush();
        Ok(())
    }
}

/// Failures in a row of one periodic task (a flush, a lock, while the database is
/// unreachable): which to log, so that an outage gives a line as it begins, one a minute,
/// and one as it ends, never one per attempt.
#[derive(Debug, Default)]
pub struct Failures {
    count: u64,
    logged: Option<std::time::Instant>,
}

/// How often a failure that goes on is logged again.
const FAILURE_LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

impl Failures {
    /// One more failure: `Some(n)` (the failures in a row so far) if it is to be logged.
    pub fn failed(&mut self) -> Option<u64> {
        self.count += 1;
        let due = self
            .logged
            .is_none_or(|at| at.elapsed() >= FAILURE_LOG_EVERY);
        if due {
            self.logged = Some(std::time::Instant::now());
        }
        due.then_some(self.count)
    }

    /// A success: `Some(n)` if it ends `n` failures in a row (to be logged).
    pub fn succeeded(&mut self) -> Option<u64> {
        let ended = std::mem::take(self).count;
        (ended > 0).then_some(ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_in_a_row_are_logged_first_then_once_a_minute_then_as_they_end() {
        let mut f = Failures::default();
        assert_eq!(f.succeeded(), None, "nothing to end");
        assert_eq!(f.failed(), Some(1), "the first is logged");
        assert_eq!(f.failed(), None);
        assert_eq!(f.failed(), None);
        assert_eq!(f.succeeded(), Some(3), "the end says how many");
        assert_eq!(f.failed(), Some(1), "a new run starts over");
        f.logged = Some(std::time::Instant::now() - FAILURE_LOG_EVERY);
        assert_eq!(f.failed(), Some(2), "a minute later, again");
    }

    /// A destination that refuses writes while `full` is set.
    struct Disk {
        full: bool,
        written: Vec<u8>,
    }

    impl Write for &mut Disk {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.full {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "no space"));
            }
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn refused_lines_are_counted_never_returned_as_errors_and_reported_later() {
        let mut disk = Disk {
            full: true,
            written: Vec::new(),
        };
        let before = lost_lines();
        for _ in 0..3 {
            SafeLine::new(&mut disk, false)
                .write_all(b"a line\n")
                .unwrap();
        }
        assert!(lost_lines() >= before + 3);
        disk.full = false;
        SafeLine::new(&mut disk, false)
            .write_all(b"back\n")
            .unwrap();
        let text = String::from_utf8(disk.written.clone()).unwrap();
        assert!(text.contains("log lines were lost"), "{text}");
        assert!(text.ends_with("back\n"), "{text}");
        // Reported once.
        SafeLine::new(&mut disk, true).write_all(b"x\n").unwrap();
        let text = String::from_utf8(disk.written).unwrap();
        assert_eq!(text.matches("were lost").count(), 1, "{text}");
    }
}
