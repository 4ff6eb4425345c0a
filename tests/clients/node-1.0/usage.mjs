// Issue 51 through Polar's JS SDK 1.0 (@polar-sh/sdk 1.0.1, pinned in package.json and
// package-lock.json): events ingested (a repeat counted as a duplicate), a meter created, its
// quantities read, the events listed, the customer meters listed by the seller and by the
// customer in its portal; every answer matches the type the package declares for it
// (types.mjs): `EventsIngestResponse`, `Meter`, `MeterQuantities`, `ListResourceEvent`,
// `ListResourceCustomerMeter`, `ListResourceCustomerCustomerMeter`, `CustomerCustomerMeter`.
//
// Reads TOLLGATE_URL, TOLLGATE_TOKEN (an organization access token with the usage scopes),
// TOLLGATE_SESSION (a customer session of the customer whose external id is
// TOLLGATE_EXTERNAL_ID) and TOLLGATE_API_VERSION (2026-04, 2026-10 or 2027-01). Prints one
// line per check and `N passed, M failed`; exits 1 when M > 0. Run by
// tests/api/customer_meters.rs.

import { randomUUID } from "node:crypto";

import { clip, loadTypes, mismatches } from "./types.mjs";

const VERSION = process.env.TOLLGATE_API_VERSION || "2026-04";
const URL_ = process.env.TOLLGATE_URL.replace(/\/+$/, "");
const TOKEN = process.env.TOLLGATE_TOKEN;
const SESSION = process.env.TOLLGATE_SESSION;
const EXTERNAL = process.env.TOLLGATE_EXTERNAL_ID;
const RUN = randomUUID().slice(0, 8);
const MODULE = `@polar-sh/sdk/${VERSION}`;
const { createPolar } = await import(MODULE);
const MODELS = loadTypes(MODULE);
const polar = createPolar({ accessToken: TOKEN, baseUrl: URL_, timeout: 15 });
const portal = createPolar({ accessToken: SESSION, baseUrl: URL_, timeout: 15 }).customerPortal;

const S = {};
const CHECKS = [];

function check(name, fn) {
  CHECKS.push([name, fn]);
}

function ensure(condition, message = "condition failed") {
  if (!condition) throw new Error(message);
}

function show(v) {
  return JSON.stringify(v);
}

function equal(actual, expected, what = "value") {
  if (show(actual) !== show(expected)) {
    throw new Error(`${what}: expected ${show(expected)}, got ${show(actual)}`);
  }
}

/** `value`, after checking that it is a `typeName` of this version's declarations. */
function typed(typeName, value) {
  ensure(
    typeName in MODELS.interfaces || typeName in MODELS.aliases,
    `${VERSION} declares no ${typeName}`,
  );
  const found = mismatches(value, { k: "ref", name: typeName, args: [] }, []);
  if (found.length) {
    const lines = found.slice(0, 30).map((x) => `${typeName}${x.path ? `.${x.path}` : ""}: ${x.text}`);
    throw new Error(`not a ${VERSION} ${typeName}:\n     ${lines.join("\n     ")}\n     in ${clip(show(value), 1500)}`);
  }
  return value;
}

async function rejects(cls, promise) {
  let result;
  try {
    result = await promise;
  } catch (e) {
    if (e instanceof cls) return e;
    throw e;
  }
  throw new Error(`expected ${cls.name}, got a result: ${clip(show(result), 300)}`);
}

check("create_a_meter", async () => {
  const m = typed("Meter", await polar.meters.create({
    name: `JS calls ${RUN}`,
    filter: { conjunction: "and", clauses: [{ property: "name", operator: "eq", value: `js_call_${RUN}` }] },
    aggregation: { func: "sum", property: "metadata.tokens" },
  }));
  equal(m.aggregation, { func: "sum", property: "tokens" }, "aggregation");
  S.meter = m.id;
});

check("ingest_events_and_a_duplicate", async () => {
  const events = [0, 1, 2].map((i) => ({
    name: `js_call_${RUN}`, external_customer_id: EXTERNAL, external_id: `${RUN}-${i}`,
    timestamp: `2025-08-01T1${i}:00:00Z`, metadata: { tokens: 10 * (i + 1) },
  }));
  const r = typed("EventsIngestResponse", await polar.events.ingest({ events }));
  equal([r.inserted, r.duplicates], [3, 0], "first");
  const again = typed("EventsIngestResponse", await polar.events.ingest({ events: events.slice(0, 1) }));
  equal([again.inserted, again.duplicates], [0, 1], "repeat");
});

check("quantities", async () => {
  const q = typed("MeterQuantities", await polar.meters.quantities(S.meter, {
    start_timestamp: "2025-08-01T00:00:00Z", end_timestamp: "2025-08-01T23:00:00Z", interval: "day",
  }));
  equal(q.total, 60, "total");
  const h = typed("MeterQuantities", await polar.meters.quantities(S.meter, {
    start_timestamp: "2025-08-01T10:00:00Z", end_timestamp: "2025-08-01T12:00:00Z", interval: "hour",
    timezone: "Asia/Kolkata", external_customer_id: EXTERNAL,
  }));
  equal(h.quantities.map((x) => x.quantity), [10, 20, 30], "hours");
});

check("list_events", async () => {
  const page = typed("ListResourceEvent", await polar.events.list({ name: `js_call_${RUN}`, limit: 2 }));
  equal(page.pagination.total_count, 3, "total");
  equal(page.items.length, 2, "page");
  typed("UserEvent", page.items[0]);
  equal(page.items[0].metadata.tokens, 30, "newest first");
});

check("customer_meters", async () => {
  const page = typed("ListResourceCustomerMeter", await polar.customerMeters.list({ meter_id: S.meter }));
  equal(page.items.length, 1, "one");
  equal([page.items[0].consumed_units, page.items[0].credited_units], [60, 0], "units");
  S.customerMeter = page.items[0].id;
});

check("portal_meters", async () => {
  const page = typed("ListResourceCustomerCustomerMeter", await portal.customerMeters.list({ query: RUN }));
  equal(page.items.length, 1, "one");
  const one = typed("CustomerCustomerMeter", await portal.customerMeters.get(S.customerMeter));
  equal(one.balance, -60, "balance");
});

async function main() {
  let passed = 0;
  let failed = 0;
  console.log(`# @polar-sh/sdk 1.0.1 usage, module ${MODULE}, against ${URL_}`);
  for (const [name, fn] of CHECKS) {
    try {
      await fn();
      passed += 1;
      console.log(`ok   ${name}`);
    } catch (e) {
      failed += 1;
      console.log(`FAIL ${name}: ${e?.constructor?.name}: ${clip(e?.message ?? String(e), 3000)}`);
      console.error(`--- ${name}`);
      console.error(e?.stack ?? e);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

process.exit(await main());
