// Issue 48 through Polar's JS SDK 1.0 (@polar-sh/sdk 1.0.1, pinned in package.json and
// package-lock.json): a German seller (DE136695976, EU One-Stop-Shop) sells a one-time price
// of 1200, and every answer with tax matches the type the package declares for it
// (types.mjs; 1.0 does not check answers at runtime), with the tax values asserted: the
// organization updated and read (`Organization`, its `default_tax_behavior`; Tollgate's
// additive `tax` object beside it), checkouts created, updated by the buyer and the seller,
// read and confirmed (`Checkout`, `CheckoutPublic`, `CheckoutPublicConfirmed`), the orders
// read and listed (`Order`, `ListResourceOrder`: `tax_amount`, `billing_name`,
// `invoice_number`, `is_invoice_generated`), a refund (`Refund`); a number whose check
// digits fail comes back as the SDK's `HTTPValidationError`. Tollgate's additive keys
// (`tax_breakdown`, an order's `tax_behavior` and `customer_tax_id`) are read from the same
// answers (the SDK hands back the JSON as received).
//
// The `tax` object is set with a raw PATCH (the SDK's `OrganizationUpdate` declares no such
// key).
//
// Reads TOLLGATE_URL, TOLLGATE_TOKEN (a token with every scope) and TOLLGATE_API_VERSION
// (2026-04, 2026-10 or 2027-01). Prints one line per check and `N passed, M failed`; exits 1
// when M > 0. Run by tests/api/clients.rs.

import { randomUUID } from "node:crypto";

import { clip, loadTypes, mismatches } from "./types.mjs";

const VERSION = process.env.TOLLGATE_API_VERSION || "2026-04";
if (!["2026-04", "2026-10", "2027-01"].includes(VERSION)) {
  throw new Error(`TOLLGATE_API_VERSION must be 2026-04, 2026-10 or 2027-01, not ${VERSION}`);
}
const URL_ = process.env.TOLLGATE_URL.replace(/\/+$/, "");
const TOKEN = process.env.TOLLGATE_TOKEN;
const RUN = randomUUID().slice(0, 8);
const MODULE = `@polar-sh/sdk/${VERSION}`;
const { createPolar, errors } = await import(MODULE);
const MODELS = loadTypes(MODULE);
const polar = createPolar({ accessToken: TOKEN, baseUrl: URL_, timeout: 15 });
const SELLER_TAX = "DE136695976";
const FR_BUSINESS = "FR40303265045";
const FR_BUSINESS_WRONG = "FR40303265046";

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

const amounts = (c) => [c.tax_behavior, c.net_amount, c.tax_amount, c.total_amount];

function breakdown(v, country, rate, reason, amount) {
  const b = v.tax_breakdown;
  ensure(Array.isArray(b) && b.length === 1, `tax_breakdown ${show(b)}`);
  equal(
    [b[0].country, b[0].rate, b[0].taxability_reason, b[0].amount],
    [country, rate, reason, amount],
    "tax_breakdown[0]",
  );
}

/** Confirms with the test card, waits (bounded) for success; answers the order. */
async function paid(checkout, buyer) {
  const confirmed = typed(
    "CheckoutPublicConfirmed",
    await polar.checkouts.clientConfirm(checkout.client_secret, {
      confirmation_token_id: "tok_visa",
      customer_email: `buyer-${randomUUID().slice(0, 6)}@example.com`,
      ...buyer,
    }),
  );
  equal([confirmed.total_amount, confirmed.tax_amount], [checkout.total_amount, checkout.tax_amount], "confirmed amounts");
  const deadline = Date.now() + 10000;
  for (;;) {
    const pub = typed("CheckoutPublic", await polar.checkouts.clientGet(checkout.client_secret));
    if (pub.status === "succeeded") break;
    ensure(pub.status === "confirmed", `status ${pub.status}`);
    ensure(Date.now() < deadline, "checkout did not succeed within 10 s");
    await new Promise((r) => setTimeout(r, 200));
  }
  const page = typed("ListResourceOrder", await polar.orders.list({ checkout_id: checkout.id }));
  equal(page.items.length, 1, "orders of the checkout");
  const order = typed("Order", await polar.orders.get(page.items[0].id));
  equal([page.items[0].tax_amount, page.items[0].total_amount], [order.tax_amount, order.total_amount], "listed and read");
  ensure(typeof order.invoice_number === "string" && order.invoice_number, `invoice_number ${order.invoice_number}`);
  ensure(typeof order.is_invoice_generated === "boolean", "is_invoice_generated");
  return order;
}

check("the_seller_sets_its_tax_and_default_tax_behavior", async () => {
  const org = typed(
    "Organization",
    await polar.organizations.create({ name: `Tax ${RUN}`, slug: `tax-${VERSION.replace("-", "")}-${RUN}` }),
  );
  S.org = org.id;
  const r = await fetch(`${URL_}/v1/organizations/${org.id}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: show({ tax: { country: "DE", tax_id: SELLER_TAX, registrations: ["eu_oss"] } }),
  });
  equal(r.status, 200, `raw PATCH of tax: ${clip(await r.clone().text(), 300)}`);
  const updated = typed("Organization", await polar.organizations.update(S.org, { default_tax_behavior: "location" }));
  equal(updated.default_tax_behavior, "location", "default_tax_behavior");
  const read = typed("Organization", await polar.organizations.get(S.org));
  equal(read.default_tax_behavior, "location", "default_tax_behavior read");
  equal([read.tax?.country, read.tax?.tax_id, read.tax?.registrations], ["DE", SELLER_TAX, ["eu_oss"]], "tax");
  const product = typed(
    "Product",
    await polar.products.create({
      name: `Lifetime ${RUN}`,
      organization_id: S.org,
      prices: [{ amount_type: "fixed", price_amount: 1200, price_currency: "usd" }],
    }),
  );
  S.product = product.id;
});

check("a_german_consumer_pays_19_percent_inside_the_price", async () => {
  const checkout = typed("Checkout", await polar.checkouts.create({ products: [S.product] }));
  const pub = typed(
    "CheckoutPublic",
    await polar.checkouts.clientUpdate(checkout.client_secret, { customer_billing_address: { country: "DE" } }),
  );
  equal(amounts(pub), ["inclusive", 1008, 192, 1200], "client update amounts");
  breakdown(pub, "DE", 19, "standard_rated", 192);
  const got = typed("Checkout", await polar.checkouts.get(checkout.id));
  equal(amounts(got), ["inclusive", 1008, 192, 1200], "get amounts");
  equal(got.is_business_customer, false, "is_business_customer");
  const order = await paid(got, { customer_name: "Hans Muster", customer_billing_address: { country: "DE" } });
  equal([order.net_amount, order.tax_amount, order.total_amount], [1008, 192, 1200], "order amounts");
  equal(order.tax_behavior, "inclusive", "order tax_behavior");
  breakdown(order, "DE", 19, "standard_rated", 192);
  S.germanOrder = order.id;
});

check("half_a_refund_returns_half_the_tax", async () => {
  const refund = typed(
    "Refund",
    await polar.refunds.create({ order_id: S.germanOrder, reason: "customer_request", amount: 504 }),
  );
  equal([refund.amount, refund.tax_amount], [504, 96], "refund amounts");
  const order = typed("Order", await polar.orders.get(S.germanOrder));
  equal([order.refunded_amount, order.refunded_tax_amount, order.status], [504, 96, "partially_refunded"], "order");
});

check("a_french_business_is_reverse_charged", async () => {
  const checkout = typed("Checkout", await polar.checkouts.create({ products: [S.product] }));
  const business = {
    is_business_customer: true,
    customer_billing_name: "Acme SAS",
    customer_billing_address: { country: "FR", line1: "1 rue de Rivoli", city: "Paris", postal_code: "75001" },
  };
  const e = await rejects(
    errors.HTTPValidationError,
    polar.checkouts.clientUpdate(checkout.client_secret, { ...business, customer_tax_id: FR_BUSINESS_WRONG }),
  );
  equal(e.statusCode, 422, "status");
  equal(
    e.error.detail.map((d) => [d.loc, d.msg]),
    [[["body", "customer_tax_id"], "Invalid tax ID."]],
    "detail",
  );
  const pub = typed(
    "CheckoutPublic",
    await polar.checkouts.clientUpdate(checkout.client_secret, { ...business, customer_tax_id: FR_BUSINESS }),
  );
  equal(
    [pub.is_business_customer, pub.customer_billing_name, pub.customer_tax_id],
    [true, "Acme SAS", FR_BUSINESS],
    "business fields",
  );
  equal([pub.tax_amount, pub.total_amount], [0, 1200], "amounts");
  breakdown(pub, "FR", 0, "reverse_charge", 0);
  const got = typed("Checkout", await polar.checkouts.get(checkout.id));
  equal([got.customer_tax_id, got.tax_amount], [FR_BUSINESS, 0], "get");
  const order = await paid(got, { ...business, customer_name: "Marie Curie", customer_tax_id: FR_BUSINESS });
  equal([order.tax_amount, order.total_amount, order.billing_name], [0, 1200, "Acme SAS"], "order");
  equal(order.customer_tax_id, FR_BUSINESS, "order customer_tax_id");
  breakdown(order, "FR", 0, "reverse_charge", 0);
});

check("an_exclusive_seller_adds_the_vat", async () => {
  const org = typed("Organization", await polar.organizations.update(S.org, { default_tax_behavior: "exclusive" }));
  equal(org.default_tax_behavior, "exclusive", "default_tax_behavior");
  const created = typed("Checkout", await polar.checkouts.create({ products: [S.product] }));
  const checkout = typed(
    "Checkout",
    await polar.checkouts.update(created.id, { customer_billing_address: { country: "DE" } }),
  );
  equal(amounts(checkout), ["exclusive", 1200, 228, 1428], "update amounts");
  const order = await paid(checkout, { customer_name: "Hans Muster", customer_billing_address: { country: "DE" } });
  equal([order.net_amount, order.tax_amount, order.total_amount], [1200, 228, 1428], "order amounts");
  equal(order.tax_behavior, "exclusive", "order tax_behavior");
});

check("a_us_buyer_pays_no_tax", async () => {
  const checkout = typed("Checkout", await polar.checkouts.create({ products: [S.product] }));
  const address = { country: "US", state: "US-NY", postal_code: "10001" };
  const pub = typed(
    "CheckoutPublic",
    await polar.checkouts.clientUpdate(checkout.client_secret, { customer_billing_address: address }),
  );
  equal(amounts(pub), ["exclusive", 1200, 0, 1200], "amounts");
  const order = await paid(pub, { customer_name: "Joe", customer_billing_address: address });
  equal([order.tax_amount, order.total_amount], [0, 1200], "order amounts");
});

async function main() {
  let passed = 0;
  let failed = 0;
  console.log(`# @polar-sh/sdk 1.0.1 tax checkout, module ${MODULE}, against ${URL_}`);
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
