//! The usage store's contract (`store::usage`) on both engines: each test is an
//! `async fn(Store)` run on the embedded store and on a fresh PostgreSQL schema
//! (`crate::testing`: skipped without a database, failed under `CI=true`).

use std::sync::Arc;

use super::{
    decode_agg, decode_window_row, encode_agg, encode_window_row, escape_key, member_key,
    unescape_key, window_member_key, Agg, Delta, Guard, Guarded, IngestEvent, WindowRow,
    WindowState,
};
use crate::store::reads::Direction;
use crate::Store;

/// Runs `async fn $test(store: Store)` on both engines: `mod $test { embedded, postgres }`.
macro_rules! both_engines {
    ($test:ident) => {
        mod $test {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn embedded() {
                super::$test(crate::Store::temporary().unwrap()).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let Some((store, _schema)) = crate::testing::store(stringify!($test)).await else {
                    return;
                };
                super::$test(store).await;
            }
        }
    };
}

pub(crate) fn event(key: &str, deltas: Vec<Delta>) -> IngestEvent {
    IngestEvent {
        key: format!("e/{key}").into_bytes(),
        value: format!("value of {key}").into_bytes(),
        index: vec![format!("i/{key}").into_bytes()],
        deltas,
    }
}

pub(crate) fn add(key: &str, value: f64) -> Delta {
    Delta::Add {
        key: key.as_bytes().to_vec(),
        agg: Agg::one(value),
    }
}

pub(crate) fn distinct(key: &str, member: &str) -> Delta {
    Delta::Distinct {
        key: key.as_bytes().to_vec(),
        member: member.as_bytes().to_vec(),
    }
}

pub(crate) fn window(key: &str, value: f64, credit: i64, member: Option<&str>) -> Delta {
    Delta::Window {
        key: key.as_bytes().to_vec(),
        agg: Agg::one(value),
        credit,
        rollover_credit: credit / 2,
        member: member.map(|m| m.as_bytes().to_vec()),
    }
}

pub(crate) async fn agg(store: &Store, key: &str) -> Option<Agg> {
    let mut end = key.as_bytes().to_vec();
    end.push(0);
    let rows = store.aggregates(key.as_bytes(), &end).await.unwrap();
    assert!(rows.len() <= 1);
    rows.into_iter().next().map(|(_, a)| a)
}

pub(crate) async fn window_of(store: &Store, key: &str) -> Option<WindowState> {
    let mut end = key.as_bytes().to_vec();
    end.push(0);
    let rows = store.windows(key.as_bytes(), &end).await.unwrap();
    rows.into_iter().next().map(|(_, w)| w)
}

#[test]
fn the_layout_round_trips_and_escaped_keys_sort_as_keys_do() {
    for a in [
        Agg::EMPTY,
        Agg::one(-2.5),
        Agg {
            n: 3,
            sum: 1e300,
            min: f64::NEG_INFINITY,
            max: 7.0,
        },
    ] {
        assert_eq!(decode_agg(&encode_agg(&a)).unwrap(), a);
    }
    let state = WindowState {
        window: 4,
        consumed: Agg::one(3.0),
        distinct: 2,
        credited: 10,
        rollover_credited: 4,
        created_us: 11,
        modified_us: 12,
    };
    for row in [
        WindowRow {
            state,
            last_close: None,
        },
        WindowRow {
            state,
            last_close: Some((b"tok\0en".to_vec(), WindowState::empty(3, 9))),
        },
        WindowRow {
            state,
            last_close: Some((Vec::new(), state)),
        },
    ] {
        assert_eq!(decode_window_row(&encode_window_row(&row)).unwrap(), row);
    }
    let keys: Vec<&[u8]> = vec![
        b"", b"\0", b"\0\0", b"\0\x01", b"a", b"a\0", b"a\0b", b"a\x01", b"ab", b"\xff",
    ];
    for x in &keys {
        for y in &keys {
            let (mut ex, mut ey) = (Vec::new(), Vec::new());
            escape_key(&mut ex, x);
            escape_key(&mut ey, y);
            assert_eq!(ex.cmp(&ey), x.cmp(y), "{x:?} {y:?}");
            if x != y {
                assert!(!ey.starts_with(&ex), "{x:?} is a prefix of {y:?} escaped");
            }
        }
        let mk = member_key(x, b"m\0");
        let (k, rest) = unescape_key(&mk).unwrap();
        assert_eq!((k.as_slice(), rest), (*x, &b"m\0"[..]));
        let wk = window_member_key(x, 7, b"z");
        let (k, rest) = unescape_key(&wk).unwrap();
        assert_eq!(
            (k.as_slice(), rest),
            (*x, &[0, 0, 0, 0, 0, 0, 0, 7, b'z'][..])
        );
    }
    assert!(decode_agg(&[0; 31]).is_err());
    assert!(decode_window_row(&[1, 2, 3]).is_err());
    assert!(unescape_key(b"ab\0").is_err());
}

both_engines!(duplicates_are_skipped_within_and_across_calls);
async fn duplicates_are_skipped_within_and_across_calls(store: Store) {
    let got = store
        .ingest(
            vec![
                event("a", vec![add("agg/x", 1.0)]),
                event("b", vec![add("agg/x", 2.0)]),
                event("a", vec![add("agg/x", 100.0)]),
            ],
            10,
        )
        .await
        .unwrap();
    assert_eq!(got, vec![true, true, false]);
    let got = store
        .ingest(
            vec![
                event("b", vec![add("agg/x", 1000.0)]),
                event("c", vec![add("agg/x", -4.0)]),
            ],
            11,
        )
        .await
        .unwrap();
    assert_eq!(got, vec![false, true]);
    assert_eq!(
        store.ingest(Vec::new(), 12).await.unwrap(),
        Vec::<bool>::new()
    );
    // Deltas of the inserted ones only; the first value of a repeated key is the stored one.
    assert_eq!(
        agg(&store, "agg/x").await,
        Some(Agg {
            n: 3,
            sum: -1.0,
            min: -4.0,
            max: 2.0
        })
    );
    assert_eq!(
        store.usage_event(b"e/a").await.unwrap(),
        Some(b"value of a".to_vec())
    );
    assert_eq!(
        store
            .usage_events(&[b"e/c".to_vec(), b"e/zz".to_vec(), b"e/b".to_vec()])
            .await
            .unwrap(),
        vec![
            Some(b"value of c".to_vec()),
            None,
            Some(b"value of b".to_vec())
        ]
    );
    assert_eq!(store.usage_event(b"e/none").await.unwrap(), None);
}

both_engines!(aggregates_merge_and_keep_their_extremes);
async fn aggregates_merge_and_keep_their_extremes(store: Store) {
    let empty = Delta::Add {
        key: b"agg/empty".to_vec(),
        agg: Agg::EMPTY,
    };
    let big = Delta::Add {
        key: b"agg/m".to_vec(),
        agg: Agg {
            n: 5,
            sum: 50.0,
            min: -1.5,
            max: 30.0,
        },
    };
    store
        .ingest(
            vec![
                event("1", vec![empty, big, add("agg/m", 2.0), add("agg/n", 0.25)]),
                event("2", vec![add("agg/m", 40.0), add("agg/m", -3.0)]),
            ],
            1,
        )
        .await
        .unwrap();
    assert_eq!(agg(&store, "agg/empty").await, Some(Agg::EMPTY));
    assert_eq!(
        agg(&store, "agg/m").await,
        Some(Agg {
            n: 8,
            sum: 89.0,
            min: -3.0,
            max: 40.0
        })
    );
    let rows = store.aggregates(b"agg/", b"agg0").await.unwrap();
    let keys: Vec<&[u8]> = rows.iter().map(|(k, _)| k.as_slice()).collect();
    assert_eq!(keys, vec![&b"agg/empty"[..], b"agg/m", b"agg/n"]);
    assert_eq!(store.aggregates(b"agg/m", b"agg/n").await.unwrap().len(), 1);
    assert!(store
        .aggregates(b"agg/z", b"agg/a")
        .await
        .unwrap()
        .is_empty());
}

both_engines!(distinct_counts_members_once_and_lists_them_by_range);
async fn distinct_counts_members_once_and_lists_them_by_range(store: Store) {
    store
        .ingest(
            vec![
                event(
                    "1",
                    vec![distinct("d/1", "alice"), distinct("d/2", "alice")],
                ),
                event("2", vec![distinct("d/1", "bob"), distinct("d/1", "alice")]),
            ],
            1,
        )
        .await
        .unwrap();
    store
        .ingest(
            vec![event(
                "3",
                vec![distinct("d/1", "bob"), distinct("d/1", "carol")],
            )],
            2,
        )
        .await
        .unwrap();
    // A repeated event adds no member.
    store
        .ingest(vec![event("3", vec![distinct("d/1", "dave")])], 3)
        .await
        .unwrap();
    let d1 = agg(&store, "d/1").await.unwrap();
    assert_eq!((d1.n, d1.sum), (3, 0.0));
    assert_eq!(agg(&store, "d/2").await.unwrap().n, 1);
    let text = |v: Vec<Vec<u8>>| -> Vec<String> {
        v.into_iter()
            .map(|m| String::from_utf8(m).unwrap())
            .collect()
    };
    assert_eq!(
        text(store.members(b"d/", b"d0").await.unwrap()),
        vec!["d/1alice", "d/1bob", "d/1carol", "d/2alice"]
    );
    assert_eq!(
        text(store.members(b"d/2", b"d/3").await.unwrap()),
        vec!["d/2alice"]
    );
    // The range is over the aggregate keys: d/1's members sort past "d/1b" but are in.
    assert_eq!(store.members(b"d/1", b"d/1b").await.unwrap().len(), 3);
    assert!(store.members(b"d/1\0", b"d/2").await.unwrap().is_empty());
}

both_engines!(index_keys_read_by_range_direction_and_limit);
async fn index_keys_read_by_range_direction_and_limit(store: Store) {
    let events = (0..10u8)
        .map(|i| IngestEvent {
            key: vec![b'e', i],
            value: vec![i],
            index: vec![vec![b'x', i], vec![b'y', 9 - i]],
            deltas: Vec::new(),
        })
        .collect();
    store.ingest(events, 1).await.unwrap();
    // A duplicate's index keys are not written.
    let dup = IngestEvent {
        key: vec![b'e', 3],
        value: vec![],
        index: vec![vec![b'x', 200]],
        deltas: vec![],
    };
    assert_eq!(store.ingest(vec![dup], 2).await.unwrap(), vec![false]);
    let asc = store
        .usage_index(b"x", b"y", Direction::Asc, 100)
        .await
        .unwrap();
    assert_eq!(asc, (0..10u8).map(|i| vec![b'x', i]).collect::<Vec<_>>());
    let desc = store
        .usage_index(&[b'x', 2], &[b'x', 8], Direction::Desc, 3)
        .await
        .unwrap();
    assert_eq!(desc, vec![vec![b'x', 7], vec![b'x', 6], vec![b'x', 5]]);
    assert_eq!(
        store
            .usage_index(b"y", b"z", Direction::Asc, 2)
            .await
            .unwrap(),
        vec![vec![b'y', 0], vec![b'y', 1]]
    );
    assert!(store
        .usage_index(b"y", b"x", Direction::Asc, 2)
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .usage_index(b"x", b"y", Direction::Asc, 0)
        .await
        .unwrap()
        .is_empty());
}

both_engines!(windows_accumulate_close_idempotently_and_start_anew);
async fn windows_accumulate_close_idempotently_and_start_anew(store: Store) {
    store
        .ingest(
            vec![
                event("1", vec![window("w/a", 2.0, 10, Some("m1"))]),
                event("2", vec![window("w/a", 5.0, 0, Some("m1"))]),
                event("1", vec![window("w/a", 1000.0, 1000, Some("m9"))]),
            ],
            100,
        )
        .await
        .unwrap();
    store
        .ingest(
            vec![event("3", vec![window("w/a", -1.0, 4, Some("m2"))])],
            150,
        )
        .await
        .unwrap();
    let open = window_of(&store, "w/a").await.unwrap();
    let expected = WindowState {
        window: 0,
        consumed: Agg {
            n: 3,
            sum: 6.0,
            min: -1.0,
            max: 5.0,
        },
        distinct: 2,
        credited: 14,
        rollover_credited: 7,
        created_us: 100,
        modified_us: 150,
    };
    assert_eq!(open, expected);
    let closed = store.close_window(b"w/a", b"t1", 200).await.unwrap();
    assert_eq!(closed, expected);
    // The same token again: the same answer, nothing closed.
    assert_eq!(
        store.close_window(b"w/a", b"t1", 300).await.unwrap(),
        expected
    );
    assert_eq!(
        window_of(&store, "w/a").await.unwrap(),
        WindowState::empty(1, 200)
    );
    // The new window counts its members afresh.
    store
        .ingest(
            vec![event("4", vec![window("w/a", 3.0, 0, Some("m1"))])],
            250,
        )
        .await
        .unwrap();
    let second = window_of(&store, "w/a").await.unwrap();
    assert_eq!(
        (second.window, second.distinct, second.consumed),
        (1, 1, Agg::one(3.0))
    );
    assert_eq!((second.created_us, second.modified_us), (200, 250));
    // Another token closes it; the first token is no longer the last close's.
    assert_eq!(
        store.close_window(b"w/a", b"t2", 400).await.unwrap(),
        second
    );
    let third = store.close_window(b"w/a", b"t1", 500).await.unwrap();
    assert_eq!(third, WindowState::empty(2, 400));
    assert_eq!(window_of(&store, "w/a").await.unwrap().window, 3);
    // A key never written closes an empty window 0 and starts window 1.
    assert_eq!(
        store.close_window(b"w/new", b"t", 600).await.unwrap(),
        WindowState::empty(0, 600)
    );
    assert_eq!(
        store.close_window(b"w/new", b"t", 700).await.unwrap(),
        WindowState::empty(0, 600)
    );
    assert_eq!(
        window_of(&store, "w/new").await.unwrap(),
        WindowState::empty(1, 600)
    );
    let all = store.windows(b"w/", b"w0").await.unwrap();
    assert_eq!(
        all.iter().map(|(k, _)| k.as_slice()).collect::<Vec<_>>(),
        vec![&b"w/a"[..], b"w/new"]
    );
}

both_engines!(concurrent_calls_are_gathered_and_answered_each);
async fn concurrent_calls_are_gathered_and_answered_each(store: Store) {
    // 64 calls at once, each of 20 events of which 10 are shared with its neighbour: every
    // key is inserted once, by whichever call came first, and each call learns which.
    let store = Arc::new(store);
    let mut tasks = Vec::new();
    for call in 0..64u32 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let events: Vec<IngestEvent> = (call * 10..call * 10 + 20)
                .map(|k| {
                    event(
                        &format!("{k:05}"),
                        vec![
                            add("c/sum", f64::from(k)),
                            distinct("c/d", &format!("{}", k % 7)),
                        ],
                    )
                })
                .collect();
            let keys: Vec<u32> = (call * 10..call * 10 + 20).collect();
            (keys, store.ingest(events, 1).await.unwrap())
        }));
    }
    let mut inserted = std::collections::BTreeMap::new();
    for t in tasks {
        let (keys, got) = t.await.unwrap();
        assert_eq!(keys.len(), got.len());
        for (k, new) in keys.into_iter().zip(got) {
            if new {
                assert!(inserted.insert(k, ()).is_none(), "{k} inserted twice");
            }
        }
    }
    assert_eq!(inserted.len(), 650);
    assert_eq!(
        inserted.keys().copied().collect::<Vec<_>>(),
        (0..650).collect::<Vec<_>>()
    );
    let sum = agg(&store, "c/sum").await.unwrap();
    assert_eq!(
        (sum.n, sum.sum, sum.min, sum.max),
        (650, f64::from(649 * 650 / 2), 0.0, 649.0)
    );
    assert_eq!(agg(&store, "c/d").await.unwrap().n, 7);
}

both_engines!(closes_and_ingests_at_once_put_each_event_in_one_window);
async fn closes_and_ingests_at_once_put_each_event_in_one_window(store: Store) {
    let store = Arc::new(store);
    let mut tasks = Vec::new();
    for call in 0..20u32 {
        let s = store.clone();
        tasks.push(tokio::spawn(async move {
            let store = s;
            let events = (0..25u32)
                .map(|i| event(&format!("{call}-{i}"), vec![window("cw", 1.0, 1, None)]))
                .collect();
            store.ingest(events, 1).await.unwrap();
            None
        }));
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            Some(
                store
                    .close_window(b"cw", format!("close {call}").as_bytes(), 2)
                    .await
                    .unwrap(),
            )
        }));
    }
    let mut counted = 0;
    let mut numbers = Vec::new();
    for t in tasks {
        if let Some(closed) = t.await.unwrap() {
            assert_eq!(closed.consumed.n, closed.credited);
            counted += closed.consumed.n;
            numbers.push(closed.window);
        }
    }
    numbers.sort_unstable();
    assert_eq!(numbers, (0..20).collect::<Vec<_>>());
    let open = window_of(&store, "cw").await.unwrap();
    assert_eq!(open.window, 20);
    assert_eq!(counted + open.consumed.n, 500);
}

both_engines!(a_snapshot_carries_the_usage_data);
async fn a_snapshot_carries_the_usage_data(store: Store) {
    let source = Store::temporary().unwrap();
    source
        .ingest(
            vec![
                event(
                    "1",
                    vec![
                        add("s/a", 1.5),
                        distinct("s/d", "m\0x"),
                        window("s/w", 2.0, 3, Some("p")),
                    ],
                ),
                event(
                    "2",
                    vec![Delta::Add {
                        key: b"s/e".to_vec(),
                        agg: Agg::EMPTY,
                    }],
                ),
            ],
            7,
        )
        .await
        .unwrap();
    source.close_window(b"s/w", b"tok", 8).await.unwrap();
    source
        .ingest(vec![event("3", vec![window("s/w", 1.0, 0, Some("p"))])], 9)
        .await
        .unwrap();
    let mut file = Vec::new();
    source.snapshot().unwrap().write_to(&mut file).unwrap();
    let snapshot = crate::Snapshot::read_from(&mut file.as_slice()).unwrap();
    store.restore(&snapshot).await.unwrap();
    for key in [b"e/1".to_vec(), b"e/2".to_vec(), b"e/3".to_vec()] {
        assert_eq!(
            store.usage_event(&key).await.unwrap(),
            source.usage_event(&key).await.unwrap()
        );
    }
    assert_eq!(
        store
            .usage_index(b"", b"\xff", Direction::Asc, 10)
            .await
            .unwrap(),
        source
            .usage_index(b"", b"\xff", Direction::Asc, 10)
            .await
            .unwrap()
    );
    assert_eq!(
        store.aggregates(b"", b"\xff").await.unwrap(),
        source.aggregates(b"", b"\xff").await.unwrap()
    );
    assert_eq!(agg(&store, "s/e").await, Some(Agg::EMPTY));
    assert_eq!(
        store.members(b"", b"\xff").await.unwrap(),
        vec![b"s/dm\0x".to_vec()]
    );
    assert_eq!(
        store.windows(b"", b"\xff").await.unwrap(),
        source.windows(b"", b"\xff").await.unwrap()
    );
    // The copy goes on where the source was: its close token, its members, its events.
    assert_eq!(
        store.close_window(b"s/w", b"tok", 10).await.unwrap().window,
        0
    );
    let got = store
        .ingest(
            vec![
                event("3", vec![]),
                event("4", vec![window("s/w", 1.0, 0, Some("p"))]),
            ],
            11,
        )
        .await
        .unwrap();
    assert_eq!(got, vec![false, true]);
    assert_eq!(window_of(&store, "s/w").await.unwrap().distinct, 1);
    // A copy of the copy (embedded) holds the same.
    if let Ok(snapshot) = store.snapshot() {
        let again = Store::temporary().unwrap();
        again.restore(&snapshot).await.unwrap();
        assert_eq!(
            again.windows(b"", b"\xff").await.unwrap(),
            store.windows(b"", b"\xff").await.unwrap()
        );
    }
}

fn guard(generation: u64) -> Guard {
    Guard {
        key: b"g/org".to_vec(),
        generation,
    }
}

async fn a_guarded_ingest_after_a_bump_writes_nothing(store: Store) {
    assert_eq!(store.generation(b"g/org").await.unwrap(), 0);
    let got = store
        .ingest_guarded(vec![event("1", vec![add("g/n", 1.0)])], 1, guard(0))
        .await
        .unwrap();
    assert_eq!(got, Guarded::Inserted(vec![true]));
    let bumped = store
        .bump_generation(b"g/org", vec![(b"s/m1".to_vec(), b"pending".to_vec())])
        .await
        .unwrap();
    assert_eq!(bumped, 1);
    assert_eq!(store.generation(b"g/org").await.unwrap(), 1);
    // Computed for generation 0: refused whole, nothing written.
    let got = store
        .ingest_guarded(
            vec![event("2", vec![add("g/n", 1.0)]), event("1", vec![])],
            2,
            guard(0),
        )
        .await
        .unwrap();
    assert_eq!(got, Guarded::Stale(1));
    assert_eq!(store.usage_event(b"e/2").await.unwrap(), None);
    assert_eq!(agg(&store, "g/n").await.unwrap().n, 1);
    // A stale call gathered with good ones fails alone.
    let (stale, fresh) = tokio::join!(
        store.ingest_guarded(vec![event("3", vec![add("g/n", 1.0)])], 3, guard(0)),
        store.ingest_guarded(vec![event("4", vec![add("g/n", 1.0)])], 3, guard(1)),
    );
    assert_eq!(stale.unwrap(), Guarded::Stale(1));
    assert_eq!(fresh.unwrap(), Guarded::Inserted(vec![true]));
    assert_eq!(agg(&store, "g/n").await.unwrap().n, 2);
    // Unguarded ingests and other keys' guards are not concerned.
    assert_eq!(
        store.ingest(vec![event("5", vec![])], 4).await.unwrap(),
        vec![true]
    );
    let other = Guard {
        key: b"g/other".to_vec(),
        generation: 0,
    };
    assert_eq!(
        store
            .ingest_guarded(vec![event("6", vec![])], 4, other)
            .await
            .unwrap(),
        Guarded::Inserted(vec![true])
    );
    // The bump's entries, by key and by range; a snapshot carries them.
    assert_eq!(
        store
            .usage_meta(&[b"s/m1".to_vec(), b"s/none".to_vec()])
            .await
            .unwrap(),
        vec![Some(b"pending".to_vec()), None]
    );
    assert_eq!(
        store.usage_meta_range(b"s/", b"s0").await.unwrap(),
        vec![(b"s/m1".to_vec(), b"pending".to_vec())]
    );
    if let Ok(snapshot) = store.snapshot() {
        let again = Store::temporary().unwrap();
        again.restore(&snapshot).await.unwrap();
        assert_eq!(again.generation(b"g/org").await.unwrap(), 1);
        assert_eq!(
            again.usage_meta_range(b"", b"\xff").await.unwrap(),
            store.usage_meta_range(b"", b"\xff").await.unwrap()
        );
    }
}
both_engines!(a_guarded_ingest_after_a_bump_writes_nothing);

/// A job's steps by compare-and-swap (the meter backfill's): two runners race for every
/// step while events are ingested; a runner that stopped after a step ("crashed") is
/// taken over from the stored progress. Every step's deltas count once.
async fn steps_by_compare_and_swap_apply_once(store: Store) {
    let store = Arc::new(store);
    const STEPS: u32 = 30;
    assert!(store
        .usage_cas(b"p/job", None, b"0".to_vec(), vec![], 1)
        .await
        .unwrap());
    // Already there: a second creation writes nothing.
    assert!(!store
        .usage_cas(b"p/job", None, b"0".to_vec(), vec![add("c/n", 1.0)], 1)
        .await
        .unwrap());
    let runner = |store: Arc<Store>, stop_at: u32| async move {
        let mut applied = 0u32;
        loop {
            let now = store.usage_meta(&[b"p/job".to_vec()]).await.unwrap();
            let now = now[0].clone().unwrap();
            let step: u32 = String::from_utf8(now.clone()).unwrap().parse().unwrap();
            if step >= stop_at {
                return applied;
            }
            let next = (step + 1).to_string().into_bytes();
            let deltas = vec![add("c/n", 1.0), window("c/w", 1.0, 0, None)];
            if store
                .usage_cas(b"p/job", Some(&now), next, deltas, 2)
                .await
                .unwrap()
            {
                applied += 1;
            }
        }
    };
    let ingests = {
        let store = store.clone();
        async move {
            for i in 0..100 {
                let e = event(&format!("x{i}"), vec![add("c/n", 1.0)]);
                store.ingest(vec![e], 3).await.unwrap();
            }
        }
    };
    // The first runner "crashes" at step 10; two take over to the end.
    let crashed = runner(store.clone(), 10).await;
    assert_eq!(crashed, 10);
    let (a, b, ()) = tokio::join!(
        tokio::spawn(runner(store.clone(), STEPS)),
        tokio::spawn(runner(store.clone(), STEPS)),
        ingests
    );
    assert_eq!(crashed + a.unwrap() + b.unwrap(), STEPS);
    assert_eq!(agg(&store, "c/n").await.unwrap().n, i64::from(STEPS) + 100);
    assert_eq!(
        window_of(&store, "c/w").await.unwrap().consumed.n,
        i64::from(STEPS)
    );
}
both_engines!(steps_by_compare_and_swap_apply_once);

/// A measurement, not a check (`cargo test -p tollgate-storage --lib usage_throughput --
/// --ignored --nocapture`): 50,000 events of four deltas each, sent by 100 callers at once
/// in calls of 100, on each engine; prints events per second.
mod usage_throughput {
    use super::*;

    async fn measure(store: Store, engine: &str) {
        let store = Arc::new(store);
        let started = std::time::Instant::now();
        let mut callers = Vec::new();
        for caller in 0..100u32 {
            let store = store.clone();
            callers.push(tokio::spawn(async move {
                for call in 0..5u32 {
                    let events = (0..100u32)
                        .map(|i| {
                            let n = (caller * 5 + call) * 100 + i;
                            event(
                                &format!("{n:06}"),
                                vec![
                                    add("t/total", 1.0),
                                    add(&format!("t/b{}", n % 100), f64::from(n % 7)),
                                    distinct("t/u", &format!("{}", n % 5000)),
                                    window(&format!("t/w{}", n % 1000), 1.0, 0, Some("m")),
                                ],
                            )
                        })
                        .collect();
                    store.ingest(events, 1).await.unwrap();
                }
            }));
        }
        for c in callers {
            c.await.unwrap();
        }
        let took = started.elapsed();
        assert_eq!(agg(&store, "t/total").await.unwrap().n, 50_000);
        eprintln!(
            "usage throughput ({engine}): 50,000 events in {:.2} s = {:.0} events/s",
            took.as_secs_f64(),
            50_000.0 / took.as_secs_f64()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "a measurement: prints figures"]
    async fn embedded() {
        let dir = tempfile::tempdir().unwrap();
        measure(
            Store::open(&crate::StoreConfig::new(dir.path())).unwrap(),
            "embedded",
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "a measurement: prints figures"]
    async fn postgres() {
        let Some((store, _schema)) = crate::testing::store("usage_throughput").await else {
            return;
        };
        measure(store, "postgres").await;
    }
}
