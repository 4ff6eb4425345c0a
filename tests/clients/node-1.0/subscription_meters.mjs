// Issue 51 through Polar's JS SDK 1.0 (@polar-sh/sdk 1.0.1, pinned in package.json and
// package-lock.json): a subscription to a product with a fixed and a metered price, whose
// customer used the meter, read by the seller (`subscriptions.get`, `subscriptions.list`),
// in the customer state (`customers.getState`) and by the customer in its portal
// (`customerPortal.subscriptions.get`): `prices` holds both prices, `meters` the running
// usage (1,250 units, 6.25); every answer matches the type the package declares for it
// (types.mjs): `Subscription`, `ListResourceSubscription`, `CustomerState`,
// `CustomerSubscription`.
//
// Reads TOLLGATE_URL, TOLLGATE_TOKEN (a token with every scope), TOLLGATE_SESSION (a
// customer session of the subscription's customer), TOLLGATE_API_VERSION (2026-04, 2026-10
// or 2027-01), SUBSCRIPTION_ID, CUSTOMER_ID and METER_ID. Prints one line per check and
// `N passed, M failed`; exits 1 when M > 0. Run by tests/api/subscription_meters.rs.

import { clip, loadTypes, mismatches } from "./types.mjs";

const VERSION = process.env.TOLLGATE_API_VERSION || "2026-04";
const URL_ = process.env.TOLLGATE_URL.replace(/\/+$/, "");
const TOKEN = process.env.TOLLGATE_TOKEN;
const SESSION = process.env.TOLLGATE_SESSION;
const SUBSCRIPTION = process.env.SUBSCRIPTION_ID;
const CUSTOMER = process.env.CUSTOMER_ID;
const METER = process.env.METER_ID;
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

function oneMeter(meters, what) {
  equal(meters.length, 1, `${what}: meters`);
  const m = meters[0];
  equal([m.meter_id, m.consumed_units, m.credited_units, m.amount], [METER, 1250, 0, 625], what);
  return m;
}

check("subscription_get", async () => {
  const s = typed("Subscription", await polar.subscriptions.get(SUBSCRIPTION));
  equal(s.prices.map((p) => p.amount_type), ["fixed", "metered_unit"], "prices");
  const m = oneMeter(s.meters, "meters");
  equal(m.meter.name, "API calls", "meter.name");
  S.meterLine = m.id;
});

check("subscription_list", async () => {
  const page = typed("ListResourceSubscription", await polar.subscriptions.list({ customer_id: CUSTOMER }));
  const s = page.items.find((x) => x.id === SUBSCRIPTION);
  ensure(s, "listed");
  equal(oneMeter(s.meters, "listed").id, S.meterLine, "id");
});

check("customer_state", async () => {
  // @polar-sh/sdk 1.0.1 declares an active subscription's `status` "granted" | "disabled"
  // (spec §5.3), so no state with one is a `CustomerState` to it: the state is read as
  // JSON and its subscription meter checked against `CustomerStateSubscriptionMeter`.
  const r = await fetch(`${URL_}/v1/customers/${CUSTOMER}/state`, {
    headers: { Authorization: `Bearer ${TOKEN}`, "Polar-Version": VERSION },
  });
  equal(r.status, 200, "status");
  const state = await r.json();
  equal(state.active_subscriptions.length, 1, "active subscriptions");
  const meters = state.active_subscriptions[0].meters.map((m) => typed("CustomerStateSubscriptionMeter", m));
  equal(oneMeter(meters, "state").id, S.meterLine, "id");
});

check("portal_subscription", async () => {
  const s = typed("CustomerSubscription", await portal.subscriptions.get(SUBSCRIPTION));
  equal(s.prices.length, 2, "prices");
  const m = oneMeter(s.meters, "portal");
  equal(m.meter.name, "API calls", "meter.name");
});

async function main() {
  let passed = 0;
  let failed = 0;
  console.log(`# @polar-sh/sdk 1.0.1 subscription meters, module ${MODULE}, against ${URL_}`);
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
