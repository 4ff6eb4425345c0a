use chrono::Duration;
use tollgate_storage::{Batch, Expect};

use super::*;
use crate::app::testing::{app, seller};

/// Logs `n` events of `org` numbered 1..=n, the i-th logged `i` hours after `start`.
async fn logged(state: &AppState, org: OrganizationId, n: u64, start: DateTime<Utc>) {
    let mut batch = Batch::new();
    for seq in 1..=n {
        let at = start + Duration::hours(seq as i64);
        let e = LoggedEvent {
            organization_id: org,
            seq,
            event_type: "customer.updated".into(),
            timestamp: at,
            data: format!("{{\"n\":{seq}}}"),
            created_at: at,
            data_in: None,
        };
        batch.put(&e, Expect::Absent).unwrap();
    }
    batch
        .put(
            &EventLogHead {
                organization_id: org,
                last: n,
            },
            Expect::Any,
        )
        .unwrap();
    state.store.commit_durable(&batch).await.unwrap();
}

fn seqs(page: &EventPage) -> Vec<u64> {
    page.items.iter().map(|e| e.seq).collect()
}

#[actix_web::test]
async fn pages_follow_the_numbers_and_resume_after_the_last_one() {
    let app = app().await;
    let (org, subject) = seller(&app).await;
    logged(&app, org, 7, app.now()).await;

    let first = page(&app, subject, None, None, 3).await.unwrap().unwrap();
    assert_eq!(seqs(&first), [1, 2, 3]);
    assert_eq!(first.next, 3);
    let second = page(&app, subject, Some(org), Some(first.next), 3)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seqs(&second), [4, 5, 6]);
    let third = page(&app, subject, None, Some(second.next), 3)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seqs(&third), [7]);
    assert_eq!(third.next, 7);
    // Caught up: nothing, and the same place to resume from.
    let end = page(&app, subject, None, Some(7), 3)
        .await
        .unwrap()
        .unwrap();
    assert!(end.items.is_empty());
    assert_eq!(end.next, 7);
}

#[actix_web::test]
async fn another_organization_sees_nothing_and_several_must_name_one() {
    let app = app().await;
    let (org, _) = seller(&app).await;
    let (_, stranger) = seller(&app).await;
    logged(&app, org, 2, app.now()).await;
    // Naming it or not, a stranger reaches nothing of it.
    for requested in [None, Some(org)] {
        let p = page(&app, stranger, requested, None, 10)
            .await
            .unwrap()
            .unwrap();
        assert!(p.items.is_empty(), "{requested:?}");
        assert_eq!(p.next, 0);
    }
    // A user of two organizations must say which.
    let (second, _) = seller(&app).await;
    let user = match stranger {
        Subject::UserIn(user, _) => user,
        other => panic!("{other:?}"),
    };
    let mut batch = Batch::new();
    for o in [org, second] {
        let organization = app
            .store
            .get::<crate::domain::organization::Organization>(&o.key())
            .await
            .unwrap()
            .unwrap()
            .value;
        batch
            .put(
                &crate::domain::membership::Membership {
                    user_id: user,
                    organization_id: o,
                    organization_created_at: organization.created_at,
                    organization_slug: organization.slug.clone(),
                    created_at: app.now(),
                },
                Expect::Absent,
            )
            .unwrap();
    }
    app.store.commit_durable(&batch).await.unwrap();
    assert_eq!(
        page(&app, Subject::User(user), None, None, 10)
            .await
            .unwrap(),
        None
    );
    let named = page(&app, Subject::User(user), Some(org), None, 10)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seqs(&named), [1, 2]);
}

#[actix_web::test]
async fn the_retention_removes_the_oldest_and_numbers_go_on() {
    let app = app().await;
    let (org, subject) = seller(&app).await;
    let start = app.now() - Duration::days(30);
    logged(&app, org, 5, start).await;
    // Everything logged before the third hour goes.
    let purged = purge(&app, start + Duration::hours(3)).await.unwrap();
    assert_eq!(purged, 2);
    let p = page(&app, subject, None, None, 10).await.unwrap().unwrap();
    assert_eq!(seqs(&p), [3, 4, 5], "from the oldest kept");
    // An `after` from before the oldest kept starts there too.
    let p = page(&app, subject, None, Some(1), 2)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seqs(&p), [3, 4]);
    // The head stays: the next number is 6, never 1 again.
    let head = app
        .store
        .get::<EventLogHead>(&org.key())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(head.value.last, 5);
}

#[actix_web::test]
async fn the_retention_removes_all_that_is_due_over_many_batches_in_one_run() {
    let app = app().await;
    let (org, subject) = seller(&app).await;
    let n = PURGE_BATCH as u64 * 2 + 50;
    let start = app.now() - Duration::days(400);
    logged(&app, org, n, start).await;
    // All but the last ten are due: more than two batches' worth, in one run.
    let cutoff = start + Duration::hours(n as i64 - 9);
    assert_eq!(purge(&app, cutoff).await.unwrap() as u64, n - 10);
    let p = page(&app, subject, None, None, 100).await.unwrap().unwrap();
    assert_eq!(seqs(&p), (n - 9..=n).collect::<Vec<_>>());
    assert_eq!(purge(&app, cutoff).await.unwrap(), 0);
}

#[test]
fn the_data_is_found_in_a_raw_payload_byte_for_byte_and_nowhere_else() {
    use crate::domain::webhook::WebhookFormat;
    let body = serde_json::json!({
        "type": "order.paid",
        "timestamp": "2026-11-30T15:57:28.788390626Z",
        "data": {"id": "o1", "amount": 2500, "note": "\"data\":{\"x\":1}", "metadata": {}},
    });
    let event = crate::webhooks::events::Event {
        event_type: crate::api::webhook::WebhookEventType::OrderPaid,
        organization_id: OrganizationId::new(),
        resource: "order:o1".into(),
        body: body.clone(),
    };
    let data = body["data"].to_string();
    let id = WebhookEventId::new();
    let raw = crate::webhooks::dispatch::format_body(WebhookFormat::Raw, Some("2026-10"), &event);
    let r = DataRef::find(id, &raw, &data).expect("found in the raw body");
    assert_eq!(r.slice(&raw), Some(data.as_str()));
    assert_eq!(r.event_id, id);
    // A chat format does not hold it: the log keeps its own copy.
    let slack = crate::webhooks::dispatch::format_body(WebhookFormat::Slack, None, &event);
    assert_eq!(DataRef::find(id, &slack, &data), None);
    // Out of range or off a character boundary: nothing, never a panic.
    let far = DataRef {
        event_id: id,
        offset: u32::MAX,
        len: 4,
    };
    assert_eq!(far.slice(&raw), None);
}

#[test]
fn a_version_1_entry_reads_with_its_data_inline() {
    #[derive(Serialize)]
    struct V1 {
        organization_id: OrganizationId,
        seq: u64,
        event_type: String,
        timestamp: DateTime<Utc>,
        data: String,
        created_at: DateTime<Utc>,
    }
    let at = Utc::now();
    let org = OrganizationId::new();
    let v1 = V1 {
        organization_id: org,
        seq: 7,
        event_type: "order.paid".into(),
        timestamp: at,
        data: "{\"id\":\"o1\"}".into(),
        created_at: at,
    };
    let bytes = tollgate_storage::codec::encode(&v1).unwrap();
    let e = LoggedEvent::decode(1, &bytes).unwrap();
    assert_eq!(e.data, "{\"id\":\"o1\"}");
    assert_eq!(e.data_in, None);
    assert_eq!((e.organization_id, e.seq), (org, 7));
    let again = LoggedEvent::decode(2, &e.encode().unwrap()).unwrap();
    assert_eq!(again, e);
}
