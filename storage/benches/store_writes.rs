//! Durable write throughput of the store, with and without group commit.
//!
//! Every write counts as done only once `Store::durable` resolved for it. Each case runs on
//! a fresh store in a fresh temporary directory, with a tokio multi-thread runtime of two
//! worker threads, for a short warm-up and then `BENCH_SECS` seconds (default 3).
//!
//! Strategies:
//! - `group`: every writer commits and awaits its own flush; the store's flusher thread
//!   serves all writers waiting at that moment with one flush (what the service does).
//! - `serial`: baseline, one flush per write. Writers take a shared `tokio::sync::Mutex`
//!   around commit + durable, so no two writes are ever in the same flush.
//! - `nowait`: ceiling, NOT durable. Writers commit and never wait for a flush; shows what
//!   the in-memory commit path alone sustains on this machine.
//!
//! Run: `cargo bench -p tollgate-storage --bench store_writes` (see `benches/README.md`).
//! Without `--bench` (e.g. `cargo test --all-targets`) it runs a short smoke pass instead.

use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Mutex;
use tollgate_storage::{
    DurabilityMode, Expect, IndexEntry, Record, StorageError, Store, StoreConfig, Tally,
};

type BoxError = Box<dyn Error + Send + Sync>;

/// Size of each record's payload.
const PAYLOAD_BYTES: usize = 100;

/// A small record: a 16-byte id, a tenant, a ~100-byte payload and one index entry.
struct BenchRecord {
    id: [u8; 16],
    tenant: u32,
    payload: [u8; PAYLOAD_BYTES],
}

impl Record for BenchRecord {
    const COLLECTION: &'static str = "bench_record";
    const VERSION: u16 = 1;
    const INDEXES: &'static [&'static str] = &["bench_by_id"];

    fn id_key(&self) -> Vec<u8> {
        self.id.to_vec()
    }

    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        let mut out = Vec::with_capacity(16 + 4 + PAYLOAD_BYTES);
        out.extend_from_slice(&self.id);
        out.extend_from_slice(&self.tenant.to_be_bytes());
        out.extend_from_slice(&self.payload);
        Ok(out)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        let bad = |reason: &str| StorageError::Codec {
            collection: Self::COLLECTION,
            version,
            reason: reason.into(),
        };
        let (id, rest) = payload.split_first_chunk::<16>().ok_or_else(|| bad("id"))?;
        let (tenant, rest) = rest.split_first_chunk::<4>().ok_or_else(|| bad("tenant"))?;
        let payload: [u8; PAYLOAD_BYTES] = rest.try_into().map_err(|_| bad("payload"))?;
        Ok(Self {
            id: *id,
            tenant: u32::from_be_bytes(*tenant),
            payload,
        })
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![IndexEntry::new(
            "bench_by_id",
            self.tenant.to_be_bytes(),
            self.id.to_vec(),
        )]
    }
}

/// Records each counter-writing writer cycles over.
const TALLIED_PER_WRITER: u64 = 156;

/// A tallied record about the size of a license key's: an id, a ~300-byte body and its
/// counters (encoded last).
struct Tallied {
    id: [u8; 16],
    body: Vec<u8>,
    tally: Tally,
    limit: Option<i64>,
}

impl Record for Tallied {
    const COLLECTION: &'static str = "bench_tallied";
    const VERSION: u16 = 1;
    const TALLIED: bool = true;

    fn id_key(&self) -> Vec<u8> {
        self.id.to_vec()
    }

    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        let mut out = Vec::with_capacity(16 + 4 + self.body.len() + 40);
        out.extend_from_slice(&self.id);
        out.extend_from_slice(&u32::try_from(self.body.len()).unwrap_or(0).to_be_bytes());
        out.extend_from_slice(&self.body);
        for n in [
            self.tally.bounded,
            self.tally.hits,
            self.tally.last_hit_us.unwrap_or(-1),
            self.limit.unwrap_or(-1),
        ] {
            out.extend_from_slice(&n.to_be_bytes());
        }
        Ok(out)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        let bad = || StorageError::Codec {
            collection: Self::COLLECTION,
            version,
            reason: "short".into(),
        };
        let (id, rest) = payload.split_first_chunk::<16>().ok_or_else(bad)?;
        let (len, rest) = rest.split_first_chunk::<4>().ok_or_else(bad)?;
        let len = u32::from_be_bytes(*len) as usize;
        let body = rest.get(..len).ok_or_else(bad)?.to_vec();
        let mut ints = rest
            .get(len..)
            .ok_or_else(bad)?
            .chunks_exact(8)
            .map(|c| i64::from_be_bytes(c.try_into().unwrap_or([0; 8])));
        let mut next = || ints.next().ok_or_else(bad);
        let (bounded, hits, last, limit) = (next()?, next()?, next()?, next()?);
        Ok(Self {
            id: *id,
            body,
            tally: Tally {
                bounded,
                hits,
                last_hit_us: (last >= 0).then_some(last),
            },
            limit: (limit >= 0).then_some(limit),
        })
    }

    fn tally(&self) -> (Tally, Option<i64>) {
        (self.tally, self.limit)
    }

    fn set_tally(&mut self, t: &Tally) {
        self.tally = *t;
    }
}

/// One counter write of `record` (at `rev`) as `strategy` does it; its revision after.
async fn counter_write(
    store: &Store,
    strategy: Strategy,
    record: &mut Tallied,
    rev: u64,
) -> Result<u64, StorageError> {
    record.tally.bounded += 1;
    record.tally.hits += 1;
    let mut batch = tollgate_storage::Batch::new();
    if strategy == Strategy::CounterPut {
        batch.put_keeping_keys(&*record, Expect::Rev(rev))?;
        let done = store.commit_durable(&batch).await?;
        Ok(done.revs.first().copied().unwrap_or(rev))
    } else {
        batch.write_tally(&*record, rev);
        store.commit_durable(&batch).await?;
        Ok(rev)
    }
}

/// A counter-writing writer: creates its records, then writes their counters in turn.
async fn counter_writer(
    store: Store,
    strategy: Strategy,
    writer_no: u32,
    measure_from: Instant,
    measure_until: Instant,
) -> Result<WriterStats, StorageError> {
    let mut records = Vec::new();
    for n in 0..TALLIED_PER_WRITER {
        let mut id = [0u8; 16];
        id[..4].copy_from_slice(&writer_no.to_be_bytes());
        id[8..].copy_from_slice(&n.to_be_bytes());
        let record = Tallied {
            id,
            body: vec![(n as u8) ^ (writer_no as u8); 300],
            tally: Tally::default(),
            limit: None,
        };
        let mut batch = tollgate_storage::Batch::new();
        batch.put(&record, Expect::Absent)?;
        let rev = store.commit(&batch).await?.revs[0];
        records.push((record, rev));
    }
    let mut stats = WriterStats {
        writes: 0,
        latencies_us: Vec::new(),
    };
    let mut i = 0usize;
    loop {
        let started = Instant::now();
        if started >= measure_until {
            return Ok(stats);
        }
        let at = i % records.len();
        let (record, rev) = &mut records[at];
        i += 1;
        *rev = counter_write(&store, strategy, record, *rev).await?;
        let done = Instant::now();
        if done >= measure_from && done <= measure_until {
            stats.writes += 1;
            let us = done.duration_since(started).as_micros();
            stats
                .latencies_us
                .push(u32::try_from(us).unwrap_or(u32::MAX));
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Strategy {
    /// Concurrent writers share flushes through the store's flusher.
    Group,
    /// Writers serialize commit + durable behind a mutex: one flush per write.
    Serial,
    /// Commit only, never wait for durability (not durable: a ceiling for contrast).
    NoWait,
    /// Like `Group`, but each writer updates its own existing record again and again
    /// without changing its index entries: the hot path of an aggregate's counters, which
    /// the store commits as one compare-and-swap outside any transaction.
    Update,
    /// A counter write of a tallied record the way the embedded store's actors wrote them
    /// before the counters tree: the whole record put again, keeping its keys, at its
    /// revision (each writer cycles over `TALLIED_PER_WRITER` records of its own).
    CounterPut,
    /// The same counter write through the counters tree: `Batch::write_tally` at the
    /// record's revision, the record untouched.
    CounterTally,
}

impl Strategy {
    fn label(self) -> &'static str {
        match self {
            Strategy::Group => "group",
            Strategy::Serial => "serial",
            Strategy::NoWait => "nowait",
            Strategy::Update => "update",
            Strategy::CounterPut => "ctr-put",
            Strategy::CounterTally => "ctr-tally",
        }
    }
}

struct Case {
    mode: DurabilityMode,
    strategy: Strategy,
    writers: u32,
}

struct Timing {
    warmup: Duration,
    measure: Duration,
}

struct Outcome {
    writes: u64,
    flushes: u64,
    secs: f64,
    /// Latency of each measured durable write, in microseconds, sorted.
    latencies_us: Vec<u32>,
}

/// What one writer saw inside the measurement window.
struct WriterStats {
    writes: u64,
    latencies_us: Vec<u32>,
}

fn mode_label(mode: DurabilityMode) -> &'static str {
    match mode {
        DurabilityMode::Process => "process",
        DurabilityMode::Power => "power",
    }
}

async fn writer(
    store: Store,
    strategy: Strategy,
    serial: Arc<Mutex<()>>,
    writer_no: u32,
    measure_from: Instant,
    measure_until: Instant,
) -> Result<WriterStats, StorageError> {
    let mut stats = WriterStats {
        writes: 0,
        latencies_us: Vec::new(),
    };
    let mut payload = [0u8; PAYLOAD_BYTES];
    for (i, b) in payload.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(31) ^ (writer_no as u8);
    }
    let mut n: u64 = 0;
    loop {
        let started = Instant::now();
        if started >= measure_until {
            return Ok(stats);
        }
        n += 1;
        let mut id = [0u8; 16];
        id[..4].copy_from_slice(&writer_no.to_be_bytes());
        if strategy != Strategy::Update {
            id[8..].copy_from_slice(&n.to_be_bytes());
        }
        payload[0] = n as u8;
        let record = BenchRecord {
            id,
            tenant: writer_no,
            payload,
        };
        let mut batch = tollgate_storage::Batch::new();
        let expect = if strategy == Strategy::Update {
            Expect::Any
        } else {
            Expect::Absent
        };
        batch.put(&record, expect)?;
        match strategy {
            Strategy::Group | Strategy::Update | Strategy::CounterPut | Strategy::CounterTally => {
                store.commit_durable(&batch).await?;
            }
            Strategy::Serial => {
                let _one_at_a_time = serial.lock().await;
                store.commit_durable(&batch).await?;
            }
            Strategy::NoWait => {
                store.commit(&batch).await?;
                // No await point otherwise (the embedded commit is ready at once): let the
                // other writers run.
                tokio::task::yield_now().await;
            }
        }
        let done = Instant::now();
        // Count writes that completed inside the window, as the flush counter does.
        if done >= measure_from && done <= measure_until {
            stats.writes += 1;
            let us = done.duration_since(started).as_micros();
            stats
                .latencies_us
                .push(u32::try_from(us).unwrap_or(u32::MAX));
        }
    }
}

async fn run_case(store: &Store, case: &Case, timing: &Timing) -> Result<Outcome, BoxError> {
    let serial = Arc::new(Mutex::new(()));
    let measure_from = Instant::now() + timing.warmup;
    let measure_until = measure_from + timing.measure;
    let mut tasks = Vec::new();
    for w in 0..case.writers {
        if matches!(case.strategy, Strategy::CounterPut | Strategy::CounterTally) {
            tasks.push(tokio::spawn(counter_writer(
                store.clone(),
                case.strategy,
                w,
                measure_from,
                measure_until,
            )));
            continue;
        }
        tasks.push(tokio::spawn(writer(
            store.clone(),
            case.strategy,
            serial.clone(),
            w,
            measure_from,
            measure_until,
        )));
    }
    tokio::time::sleep_until(measure_from.into()).await;
    let flushes_before = store.flush_count();
    tokio::time::sleep_until(measure_until.into()).await;
    let flushes_after = store.flush_count();

    let mut writes = 0;
    let mut latencies_us = Vec::new();
    for task in tasks {
        let stats = task.await??;
        writes += stats.writes;
        latencies_us.extend(stats.latencies_us);
    }
    latencies_us.sort_unstable();
    Ok(Outcome {
        writes,
        flushes: flushes_after - flushes_before,
        secs: timing.measure.as_secs_f64(),
        latencies_us,
    })
}

fn percentile_ms(sorted_us: &[u32], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted_us.len() as f64).ceil() as usize;
    let idx = rank.clamp(1, sorted_us.len()) - 1;
    sorted_us.get(idx).copied().map_or(f64::NAN, f64::from) / 1000.0
}

fn main() -> Result<(), BoxError> {
    let full = std::env::args().any(|a| a == "--bench");
    let timing = if full {
        let secs = match std::env::var("BENCH_SECS") {
            Ok(s) => s.parse::<f64>()?,
            Err(_) => 3.0,
        };
        Timing {
            warmup: Duration::from_millis(500),
            measure: Duration::from_secs_f64(secs),
        }
    } else {
        println!("store_writes: smoke run (use `cargo bench` for real numbers)");
        Timing {
            warmup: Duration::from_millis(20),
            measure: Duration::from_millis(100),
        }
    };
    let parent = std::env::var_os("BENCH_DIR").map(std::path::PathBuf::from);

    let mut cases = Vec::new();
    for mode in [DurabilityMode::Process, DurabilityMode::Power] {
        for writers in [1, 16, 64] {
            cases.push(Case {
                mode,
                strategy: Strategy::Group,
                writers,
            });
        }
        for writers in [1, 64] {
            cases.push(Case {
                mode,
                strategy: Strategy::Serial,
                writers,
            });
        }
    }
    for writers in [1, 16, 64] {
        cases.push(Case {
            mode: DurabilityMode::Process,
            strategy: Strategy::Update,
            writers,
        });
    }
    for strategy in [Strategy::CounterPut, Strategy::CounterTally] {
        for writers in [1, 64] {
            cases.push(Case {
                mode: DurabilityMode::Process,
                strategy,
                writers,
            });
        }
    }
    // The flusher never runs here, so the durability mode makes no difference.
    for writers in [1, 64] {
        cases.push(Case {
            mode: DurabilityMode::Process,
            strategy: Strategy::NoWait,
            writers,
        });
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;

    println!(
        "store writes (durable except flush=nowait), {} s per case after {} ms warm-up, {PAYLOAD_BYTES}-byte payload, 2 tokio workers",
        timing.measure.as_secs_f64(),
        timing.warmup.as_millis()
    );
    println!(
        "{:<8} {:<7} {:>7} {:>11} {:>12} {:>8} {:>8}",
        "mode", "flush", "writers", "writes/s", "writes/flush", "p50 ms", "p99 ms"
    );
    // BENCH_ONLY: the strategies to run, by label (e.g. "ctr-put ctr-tally"); all by default.
    let only = std::env::var("BENCH_ONLY").ok();
    for case in &cases {
        if only
            .as_deref()
            .is_some_and(|o| !o.split_whitespace().any(|l| l == case.strategy.label()))
        {
            continue;
        }
        let dir = match &parent {
            Some(p) => tempfile::tempdir_in(p)?,
            None => tempfile::tempdir()?,
        };
        let config = StoreConfig {
            durability: case.mode,
            cache_capacity_mb: 128,
            ..StoreConfig::new(dir.path().join("store"))
        };
        let store = Store::open(&config)?;
        let outcome = runtime.block_on(run_case(&store, case, &timing))?;
        drop(store);
        drop(dir);
        let (mode, per_flush) = match (case.strategy, outcome.flushes) {
            (Strategy::NoWait, _) => ("-", "-".to_string()),
            (_, 0) => (mode_label(case.mode), "-".to_string()),
            (_, f) => (
                mode_label(case.mode),
                format!("{:.2}", outcome.writes as f64 / f as f64),
            ),
        };
        println!(
            "{:<8} {:<7} {:>7} {:>11.0} {:>12} {:>8.3} {:>8.3}",
            mode,
            case.strategy.label(),
            case.writers,
            outcome.writes as f64 / outcome.secs,
            per_flush,
            percentile_ms(&outcome.latencies_us, 50.0),
            percentile_ms(&outcome.latencies_us, 99.0),
        );
    }
    Ok(())
}
