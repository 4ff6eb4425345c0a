// Issue 46 through Polar's JS SDK 1.0 (@polar-sh/sdk 1.0.1, pinned in package.json and
// package-lock.json): a `feature_flag` benefit created with metadata, attached to a product,
// bought once, and read back in the customer's state by id and by external id; then every
// event type issue 46 added (customer.state_changed, customer.deleted, checkout.expired,
// discount.created|updated|deleted), as Tollgate delivered it to a receiver this script runs,
// passes the SDK's `validateEvent` (the signature over the raw body, the known event type) and
// matches the payload type the package declares for it (`WebhookCustomerStateChangedPayload`,
// ...), in the API version of TOLLGATE_API_VERSION (2026-04, 2026-10 or 2027-01; the module
// `@polar-sh/sdk/<version>` and the endpoint's `api_version`). 1.0 does not check answers at
// runtime, so every answer is matched against the package's types (types.mjs).
//
// One-time purchase on purpose, as tests/clients/python-1.0/feature_flags.py: a state with an
// active subscription is a question of the subscription journeys.
//
// Reads TOLLGATE_URL, TOLLGATE_TOKEN and TOLLGATE_API_VERSION. The server must deliver to
// loopback addresses and expire checkouts within a minute or so (tests/api/clients.rs runs it
// so: `checkout.expired` is awaited, not forced). Prints one line per check and
// `N passed, M failed`; exits 1 when M > 0.

import { randomUUID } from "node:crypto";
import { createServer } from "node:http";

import { clip, loadTypes, mismatches } from "./types.mjs";

const VERSION = process.env.TOLLGATE_API_VERSION || "2026-04";
if (!["2026-04", "2026-10", "2027-01"].includes(VERSION)) {
  throw new Error(`TOLLGATE_API_VERSION must be 2026-04, 2026-10 or 2027-01, not ${VERSION}`);
}
const URL_ = process.env.TOLLGATE_URL.replace(/\/+$/, "");
const TOKEN = process.env.TOLLGATE_TOKEN;
const RUN = randomUUID().slice(0, 8);
const MODULE = `@polar-sh/sdk/${VERSION}`;
const { createPolar, webhooks } = await import(MODULE);
const MODELS = loadTypes(MODULE);
const polar = createPolar({ accessToken: TOKEN, baseUrl: URL_, timeout: 15 });

/** The event types issue 46 added, each of which this script makes Tollgate send. */
const NEW_EVENTS = [
  "customer.state_changed",
  "customer.deleted",
  "checkout.expired",
  "discount.created",
  "discount.updated",
  "discount.deleted",
];
const METADATA = { flag: "beta_dashboard", max_projects: 10 };
/** How long the deliveries may take to arrive (the expiry waits for the server's sweep). */
const DELIVERY_DEADLINE_MS = 120_000;

// --- The receiver: every POST is kept with its raw body and headers, and answered 204.

/** [{headers, body}] in arrival order. */
const RECEIVED = [];
const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    if (req.method === "POST" && req.url === "/hooks") {
      RECEIVED.push({ headers: { ...req.headers }, body: Buffer.concat(chunks).toString("utf8") });
    }
    res.writeHead(req.method === "POST" ? 204 : 405).end();
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const HOOK_URL = `http://localhost:${server.address().port}/hooks`;

// --- Check harness

const S = {};
const CHECKS = [];

function check(name, fn) {
  CHECKS.push([name, fn]);
}

function ensure(condition, message = "condition failed") {
  if (!condition) throw new Error(message);
}

/** JSON with object keys sorted, so equal() ignores key order. */
function show(v) {
  return JSON.stringify(v, (_, x) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, x[k]]),
        )
      : x,
  );
}

function equal(actual, expected, what = "value") {
  if (show(actual) !== show(expected)) {
    throw new Error(`${what}: expected ${show(expected)}, got ${show(actual)}`);
  }
}

function need(key) {
  if (!(key in S)) throw new Error(`needs ${key}, which an earlier check did not produce`);
  return S[key];
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

/** `customer.state_changed` → `WebhookCustomerStateChangedPayload`. */
function payloadType(eventType) {
  const pascal = eventType
    .split(/[._]/)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join("");
  return `Webhook${pascal}Payload`;
}

/** The deliveries received so far, each verified and parsed by `validateEvent`. */
async function validated() {
  const out = [];
  for (const { headers, body } of RECEIVED) {
    const event = await webhooks.validateEvent(body, headers, need("secret"));
    out.push({ headers, body, event });
  }
  return out;
}

/** Waits until `done(validated deliveries)` holds; returns them. */
async function deliveries(what, done) {
  const deadline = Date.now() + DELIVERY_DEADLINE_MS;
  for (;;) {
    const got = await validated();
    if (done(got)) return got;
    ensure(
      Date.now() < deadline,
      `${what} not delivered; got ${show(got.map((d) => d.event.type))}`,
    );
    await new Promise((r) => setTimeout(r, 250));
  }
}

// --- Seller: organization, endpoint, flag, product

check("organization_create", async () => {
  S.org = typed(
    "Organization",
    await polar.organizations.create({ name: `Flags ${RUN}`, slug: `flags-js-${VERSION.replace("-", "")}-${RUN}` }),
  );
});

check("webhook_endpoint_for_the_new_events", async () => {
  const endpoint = typed(
    "WebhookEndpoint",
    await polar.webhooks.createWebhookEndpoint({
      url: HOOK_URL,
      format: "raw",
      events: NEW_EVENTS,
      organization_id: need("org").id,
      api_version: VERSION,
    }),
  );
  equal([...endpoint.events].sort(), [...NEW_EVENTS].sort(), "events");
  ensure(endpoint.secret, "no secret");
  S.secret = endpoint.secret;
});

check("feature_flag_create", async () => {
  const b = typed(
    "BenefitFeatureFlag",
    await polar.benefits.create({
      type: "feature_flag",
      description: "Beta features",
      organization_id: need("org").id,
      metadata: METADATA,
      properties: {},
    }),
  );
  typed("Benefit", b);
  equal(b.type, "feature_flag", "type");
  equal(b.metadata, METADATA, "metadata");
  equal(b.properties, {}, "properties");
  equal(b.organization_id, S.org.id, "organization_id");
  S.flag = b;
});

check("feature_flag_get", async () => {
  const b = typed("BenefitFeatureFlag", await polar.benefits.get(need("flag").id));
  equal(b.id, S.flag.id, "id");
  equal(b.metadata, METADATA, "metadata");
});

check("product_with_the_flag", async () => {
  const created = typed(
    "Product",
    await polar.products.create({
      name: `Beta ${RUN}`,
      organization_id: need("org").id,
      prices: [{ amount_type: "fixed", price_amount: 1500, price_currency: "usd" }],
    }),
  );
  const p = typed("Product", await polar.products.updateBenefits(created.id, { benefits: [need("flag").id] }));
  equal(
    p.benefits.map((b) => [b.id, b.type]),
    [[S.flag.id, "feature_flag"]],
    "benefits",
  );
  S.product = p;
});

check("a_checkout_left_open", async () => {
  const c = typed("Checkout", await polar.checkouts.create({ products: [need("product").id] }));
  equal(c.status, "open", "status");
  S.openCheckout = c;
});

// --- Buyer: one purchase, then the state

check("buy", async () => {
  const c = typed(
    "Checkout",
    await polar.checkouts.create({
      products: [need("product").id],
      external_customer_id: `ext-${RUN}`,
      customer_email: `flag-${RUN}@example.com`,
    }),
  );
  typed(
    "CheckoutPublicConfirmed",
    await polar.checkouts.clientConfirm(c.client_secret, {
      confirmation_token_id: "tok_visa",
      customer_name: "Ada Lovelace",
      customer_billing_address: { country: "US", postal_code: "10001", state: "US-NY" },
    }),
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    const pub = typed("CheckoutPublic", await polar.checkouts.clientGet(c.client_secret));
    if (pub.status === "succeeded") {
      ensure(pub.customer_id, "no customer_id");
      S.customerId = pub.customer_id;
      return;
    }
    ensure(pub.status === "confirmed", `status ${pub.status}`);
    ensure(Date.now() < deadline, "the checkout did not succeed within 10 s");
    await new Promise((r) => setTimeout(r, 200));
  }
});

/** The state has the flag's grant, with its type and metadata, and nothing else. */
function flagInState(state) {
  typed("CustomerState", state);
  equal(state.id, need("customerId"), "id");
  equal(state.external_id, `ext-${RUN}`, "external_id");
  equal(state.active_subscriptions, [], "active_subscriptions");
  equal(
    state.granted_benefits.map((g) => [g.benefit_id, g.benefit_type, g.benefit_metadata]),
    [[need("flag").id, "feature_flag", METADATA]],
    "granted_benefits",
  );
}

check("customer_state_by_id", async () => {
  flagInState(await polar.customers.getState(need("customerId")));
});

check("customer_state_by_external_id", async () => {
  flagInState(await polar.customers.getStateExternal(`ext-${RUN}`));
});

// --- The other new events: a discount's life, a customer's deletion

check("discount_create_update_delete", async () => {
  const d = typed(
    "Discount",
    await polar.discounts.create({
      name: `Five off ${RUN}`,
      type: "fixed",
      amounts: { usd: 500, eur: 450 },
      duration: "forever",
      organization_id: need("org").id,
    }),
  );
  // A fixed discount in two currencies (Polar 2026): every amount, and the deprecated
  // amount and currency in the organization's default.
  equal(d.amounts, { usd: 500, eur: 450 }, "amounts");
  equal([d.amount, d.currency], [500, "usd"], "amount and currency");
  const u = typed("Discount", await polar.discounts.update(d.id, { metadata: { campaign: "spring" } }));
  equal(u.metadata, { campaign: "spring" }, "metadata");
  equal(u.amounts, { usd: 500, eur: 450 }, "amounts after an update");
  equal(await polar.discounts.delete(d.id), undefined, "delete");
  S.discount = d;
});

check("customer_create_and_delete", async () => {
  const c = typed(
    "Customer",
    await polar.customers.create({
      email: `gone-${RUN}@example.com`,
      external_id: `gone-${RUN}`,
      organization_id: need("org").id,
    }),
  );
  equal(await polar.customers.delete(c.id), undefined, "delete");
  S.deleted = c;
});

// --- What Tollgate delivered, through validateEvent

check("every_new_event_is_delivered", async () => {
  need("secret");
  const got = await deliveries("every new event type", (ds) => {
    const types = new Set(ds.map((d) => d.event.type));
    return NEW_EVENTS.every((t) => types.has(t));
  });
  S.deliveries = got;
});

for (const type of NEW_EVENTS) {
  check(`validate_event_${type}`, async () => {
    const of = need("deliveries").filter((d) => d.event.type === type);
    ensure(of.length > 0, `no ${type}`);
    for (const { headers, body, event } of of) {
      typed(payloadType(type), event);
      equal(event, JSON.parse(body), "the parsed event");
      equal(event.api_version, VERSION, "api_version");
      ensure(headers["webhook-id"], "no webhook-id");
    }
  });
}

check("the_state_changed_tells_the_flag", async () => {
  const states = need("deliveries")
    .map((d) => d.event)
    .filter((e) => e.type === "customer.state_changed" && e.data.id === need("customerId"));
  ensure(states.length > 0, "no customer.state_changed for the buyer");
  const last = states[states.length - 1].data;
  equal(
    last.granted_benefits.map((g) => [g.benefit_id, g.benefit_type, g.benefit_metadata]),
    [[need("flag").id, "feature_flag", METADATA]],
    "granted_benefits",
  );
  // The state told is the state read.
  equal(last, await polar.customers.getState(S.customerId), "the state read now");
});

check("the_events_name_their_objects", async () => {
  const events = need("deliveries").map((d) => d.event);
  const one = (type) => events.filter((e) => e.type === type).map((e) => e.data.id);
  equal(one("checkout.expired"), [need("openCheckout").id], "checkout.expired");
  equal(events.find((e) => e.type === "checkout.expired").data.status, "expired", "status");
  for (const type of ["discount.created", "discount.updated", "discount.deleted"]) {
    equal(one(type), [need("discount").id], type);
  }
  equal(one("customer.deleted"), [need("deleted").id], "customer.deleted");
  const deleted = events.find((e) => e.type === "customer.deleted").data;
  equal(deleted.metadata?.__external_id, `gone-${RUN}`, "metadata.__external_id");
});

check("a_changed_body_or_another_secret_is_refused", async () => {
  const { headers, body } = need("deliveries")[0];
  for (const [what, b, secret] of [
    ["a changed body", body.replace('"type"', '"type" '), S.secret],
    ["another secret", body, `${S.secret}x`],
  ]) {
    let error = null;
    try {
      await webhooks.validateEvent(b, headers, secret);
    } catch (e) {
      error = e;
    }
    ensure(error instanceof webhooks.PolarWebhookVerificationError, `${what}: ${error}`);
  }
});

// --- Runner

async function main() {
  let passed = 0;
  let failed = 0;
  console.log(`# @polar-sh/sdk 1.0.1 feature flags and new events, module ${MODULE}, against ${URL_}`);
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

const code = await main();
server.close();
process.exit(code);
