"""Issue 51 through Polar's Python SDK 1.0.2 (polar-sdk==1.0.2,
tests/clients/python-1.0/requirements.txt): events ingested (and a repeat counted as a
duplicate), a meter created, its quantities read, the events listed, the customer meters
listed by the seller and by the customer in its portal; every answer loads into the SDK's
models (`EventsIngestResponse`, `Meter`, `MeterQuantities`, `ListResourceEvent`,
`ListResourceCustomerMeter`, `ListResourceCustomerCustomerMeter`), and a bad ingestion
raises the SDK's `HTTPValidationError`.

Reads TOLLGATE_URL, TOLLGATE_TOKEN (an organization access token with the usage scopes),
TOLLGATE_SESSION (a customer session of the customer whose external id is
TOLLGATE_EXTERNAL_ID) and TOLLGATE_API_VERSION. Prints one line per check and
`N passed, M failed`; exits 1 when M > 0. Run by tests/api/customer_meters.rs.
"""

import importlib
import os
import sys
import traceback
import uuid

URL = os.environ["TOLLGATE_URL"].rstrip("/")
TOKEN = os.environ["TOLLGATE_TOKEN"]
SESSION = os.environ["TOLLGATE_SESSION"]
EXTERNAL = os.environ["TOLLGATE_EXTERNAL_ID"]
API = os.environ.get("TOLLGATE_API_VERSION", "v2026_04")
sdk = importlib.import_module(f"polar.{API}")
models = importlib.import_module(f"polar.{API}.outputs")
errors = importlib.import_module(f"polar.{API}.errors")
RUN = uuid.uuid4().hex[:8]

polar = sdk.Polar(TOKEN, base_url=URL, timeout=15.0)
portal = sdk.Polar(SESSION, base_url=URL, timeout=15.0).customer_portal


class State:
    pass


S = State()
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def ensure(condition, message):
    if not condition:
        raise AssertionError(message)


def equal(actual, expected, what):
    ensure(actual == expected, f"{what}: {actual!r} != {expected!r}")


def model(value, name):
    ensure(isinstance(value, getattr(models, name)), f"{type(value).__name__}, not {name}")
    return value


@check
def create_a_meter():
    m = model(polar.meters.create(
        name=f"SDK calls {RUN}",
        filter={"conjunction": "and", "clauses": [
            {"property": "name", "operator": "eq", "value": f"sdk_call_{RUN}"}]},
        aggregation={"func": "sum", "property": "metadata.tokens"},
    ), "Meter")
    equal(m.aggregation.property, "tokens", "the stripped property")
    S.meter = m.id


@check
def ingest_events_and_a_duplicate():
    events = [
        {"name": f"sdk_call_{RUN}", "external_customer_id": EXTERNAL,
         "external_id": f"{RUN}-{i}", "timestamp": f"2025-08-01T1{i}:00:00Z",
         "metadata": {"tokens": 10 * (i + 1), "model": "gpt"}}
        for i in range(3)
    ]
    r = model(polar.events.ingest(events=events), "EventsIngestResponse")
    equal((r.inserted, r.duplicates), (3, 0), "first ingestion")
    r = model(polar.events.ingest(events=events[:1]), "EventsIngestResponse")
    equal((r.inserted, r.duplicates), (0, 1), "the repeat")


@check
def a_bad_ingestion_is_a_validation_error():
    try:
        polar.events.ingest(events=[{"name": "x"}])
    except errors.HTTPValidationError as e:
        ensure(len(e.error.detail) == 2, f"two errors: {e.error.detail}")
    else:
        raise AssertionError("no error")


@check
def quantities():
    q = model(polar.meters.quantities(
        S.meter, start_timestamp="2025-08-01T00:00:00Z",
        end_timestamp="2025-08-01T23:00:00Z", interval="day"), "MeterQuantities")
    equal(len(q.quantities), 1, "one day")
    equal(q.total, 60.0, "the sum")
    q = model(polar.meters.quantities(
        S.meter, start_timestamp="2025-08-01T10:00:00Z",
        end_timestamp="2025-08-01T12:00:00Z", interval="hour", timezone="Europe/Paris",
        external_customer_id=EXTERNAL), "MeterQuantities")
    equal([x.quantity for x in q.quantities], [10.0, 20.0, 30.0], "hours")


@check
def list_events():
    page = polar.events.list(name=f"sdk_call_{RUN}", limit=2)
    model(page, "ListResourceEvent")
    equal(page.pagination.total_count, 3, "total")
    equal(len(page.items), 2, "a page")
    model(page.items[0], "UserEvent")
    equal(page.items[0].metadata["tokens"], 30, "newest first")
    one = polar.events.get(page.items[0].id)
    equal(one.id, page.items[0].id, "by id")


@check
def customer_meters():
    page = model(polar.customer_meters.list(meter_id=S.meter), "ListResourceCustomerMeter")
    equal(len(page.items), 1, "one customer")
    cm = page.items[0]
    equal(cm.consumed_units, 60.0, "consumed")
    equal(cm.credited_units, 0, "credited")
    equal(cm.customer.external_id, EXTERNAL, "the customer")
    S.customer_meter = cm.id


@check
def portal_meters():
    page = model(portal.customer_meters.list(query=RUN), "ListResourceCustomerCustomerMeter")
    equal(len(page.items), 1, "the customer's meter")
    equal(page.items[0].meter.name, f"SDK calls {RUN}", "the meter")
    one = model(portal.customer_meters.get(S.customer_meter), "CustomerCustomerMeter")
    equal(one.balance, -60.0, "balance")


def main():
    passed = failed = 0
    for fn in CHECKS:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported and counted
            failed += 1
            print(f"FAIL {fn.__name__}: {type(e).__name__}: {e}")
            traceback.print_exc(limit=3)
        else:
            passed += 1
            print(f"ok   {fn.__name__}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
