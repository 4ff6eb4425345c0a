// Issue 49 (several currencies) through Polar's JS SDK 1.0 (@polar-sh/sdk 1.0.1, pinned in
// package.json and package-lock.json): a product sold in usd, eur and jpy (`Product`, each
// price's `price_currency`), the organization's `default_presentment_currency` changed to eur
// (`Organization`), checkouts in each currency (an explicit `currency`, the buyer's country
// from `customer_ip_address` when the server was given a GeoIP database, and the
// organization's default), the refusal of a currency the product lacks (the SDK's
// `HTTPValidationError`), and after each sale the order, the subscription and a refund in the
// checkout's currency (`Checkout`, `CheckoutPublicConfirmed`, `Order`, `Subscription`,
// `Refund`), amounts in the currency's minor unit (¥3,000 is 3000); every answer matches the
// type the package declares for it (types.mjs). `POST /v1/subscriptions/` starts a free
// subscription in the organization's default currency.
//
// Reads TOLLGATE_URL, TOLLGATE_TOKEN (a token with every scope), TOLLGATE_API_VERSION
// (2026-04, 2026-10 or 2027-01) and, optionally, TOLLGATE_GEOIP_JP_IP: an address the
// server's GeoIP database places in Japan (without it the address check is not run). Prints
// one line per check and `N passed, M failed`; exits 1 when M > 0. Run by
// tests/api/clients.rs.

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

const GEOIP_JP_IP = process.env.TOLLGATE_GEOIP_JP_IP;
// What each currency's prices are: [one-time, monthly].
const PRICES = { usd: [2000, 1000], eur: [1800, 900], jpy: [3000, 1500] };
const CURRENCIES = Object.keys(PRICES);
const NOT_AVAILABLE = "Product is not available in the specified currency.";

const fixed = (currency, amount) => ({ amount_type: "fixed", price_amount: amount, price_currency: currency });

async function refused(promise, loc, msg) {
  const e = await rejects(errors.HTTPValidationError, promise);
  equal(e.statusCode, 422, "status");
  equal(e.error.detail.map((d) => [d.loc, d.msg]), [[loc, msg]], "detail");
}

/** Confirms with the test card, waits (bounded) for success; answers the order. */
async function paid(checkout) {
  const confirmed = typed(
    "CheckoutPublicConfirmed",
    await polar.checkouts.clientConfirm(checkout.client_secret, {
      confirmation_token_id: "tok_visa",
      customer_name: "Ada Lovelace",
      customer_email: `buyer-${randomUUID().slice(0, 6)}@example.com`,
      customer_billing_address: { country: "FR" },
    }),
  );
  equal([confirmed.currency, confirmed.total_amount], [checkout.currency, checkout.total_amount], "confirmed");
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
  equal([order.currency, order.total_amount], [checkout.currency, checkout.total_amount], "order");
  return order;
}

async function boughtIn(checkout, currency, amount) {
  equal(checkout.currency, currency, "checkout currency");
  equal([checkout.amount, checkout.total_amount], [amount, amount], "checkout amounts");
  return paid(checkout);
}

check("a_product_sells_in_dollars_euros_and_yen", async () => {
  const org = typed(
    "Organization",
    await polar.organizations.create({ name: `Currencies ${RUN}`, slug: `cur-${VERSION.replace("-", "")}-${RUN}` }),
  );
  S.org = org.id;
  equal(org.default_presentment_currency, "usd", "default_presentment_currency");
  const ebook = typed(
    "Product",
    await polar.products.create({
      name: `Ebook ${RUN}`,
      organization_id: S.org,
      prices: CURRENCIES.map((c) => fixed(c, PRICES[c][0])),
    }),
  );
  equal(
    ebook.prices.map((p) => [p.price_currency, p.price_amount]),
    CURRENCIES.map((c) => [c, PRICES[c][0]]),
    "prices",
  );
  S.ebook = ebook.id;
  const plan = typed(
    "Product",
    await polar.products.create({
      name: `Plan ${RUN}`,
      organization_id: S.org,
      recurring_interval: "month",
      prices: CURRENCIES.map((c) => fixed(c, PRICES[c][1])),
    }),
  );
  equal(plan.prices.map((p) => p.price_currency).sort(), [...CURRENCIES].sort(), "plan currencies");
  S.plan = plan.id;
  const free = typed(
    "Product",
    await polar.products.create({
      name: `Community ${RUN}`,
      organization_id: S.org,
      recurring_interval: "month",
      prices: CURRENCIES.map((c) => ({ amount_type: "free", price_currency: c })),
    }),
  );
  S.free = free.id;
  const noYen = typed(
    "Product",
    await polar.products.create({
      name: `No yen ${RUN}`,
      organization_id: S.org,
      prices: [fixed("usd", 500), fixed("eur", 450)],
    }),
  );
  S.noYen = noYen.id;
});

check("the_default_currency_becomes_the_euro", async () => {
  const org = typed("Organization", await polar.organizations.update(S.org, { default_presentment_currency: "eur" }));
  equal(org.default_presentment_currency, "eur", "updated");
  const read = typed("Organization", await polar.organizations.get(S.org));
  equal(read.default_presentment_currency, "eur", "read");
});

check("an_explicit_currency_sells_and_refunds_in_it", async () => {
  for (const currency of CURRENCIES) {
    const amount = PRICES[currency][0];
    const checkout = typed("Checkout", await polar.checkouts.create({ products: [S.ebook], currency }));
    equal(checkout.product_price.price_currency, currency, "product_price currency");
    const order = await boughtIn(checkout, currency, amount);
    const refund = typed(
      "Refund",
      await polar.refunds.create({ order_id: order.id, reason: "customer_request", amount: amount / 2 }),
    );
    equal([refund.currency, refund.amount], [currency, amount / 2], "refund");
    const after = typed("Order", await polar.orders.get(order.id));
    equal(
      [after.status, after.refunded_amount, after.currency],
      ["partially_refunded", amount / 2, currency],
      "refunded order",
    );
  }
});

check("without_a_currency_the_checkout_is_in_the_organizations_default", async () => {
  const checkout = typed("Checkout", await polar.checkouts.create({ products: [S.ebook] }));
  await boughtIn(checkout, "eur", PRICES.eur[0]);
});

check("a_currency_the_product_lacks_is_refused", async () => {
  await refused(polar.checkouts.create({ products: [S.noYen], currency: "jpy" }), ["body", "products", 0], NOT_AVAILABLE);
});

check("subscriptions_are_in_their_checkouts_currency", async () => {
  for (const currency of CURRENCIES) {
    const amount = PRICES[currency][1];
    const checkout = typed("Checkout", await polar.checkouts.create({ products: [S.plan], currency }));
    const order = await boughtIn(checkout, currency, amount);
    const s = typed("Subscription", await polar.subscriptions.get(order.subscription_id));
    equal([s.currency, s.amount], [currency, amount], "subscription");
    equal(order.subscription?.currency, currency, "order's subscription currency");
  }
});

check("the_api_starts_a_free_subscription_in_the_default_currency", async () => {
  const customer = typed(
    "Customer",
    await polar.customers.create({ email: `free-${RUN}@example.com`, organization_id: S.org }),
  );
  const s = typed("Subscription", await polar.subscriptions.create({ product_id: S.free, customer_id: customer.id }));
  equal(s.currency, "eur", "currency");
  await refused(
    polar.subscriptions.create({ product_id: S.ebook, customer_id: customer.id }),
    ["body", "product_id"],
    "Product is not a recurring product.",
  );
});

if (GEOIP_JP_IP) {
  check("the_buyers_address_picks_the_yen", async () => {
    const checkout = typed(
      "Checkout",
      await polar.checkouts.create({ products: [S.ebook], customer_ip_address: GEOIP_JP_IP }),
    );
    await boughtIn(checkout, "jpy", PRICES.jpy[0]);
  });
}

async function main() {
  let passed = 0;
  let failed = 0;
  console.log(`# @polar-sh/sdk 1.0.1 currencies, module ${MODULE}, against ${URL_}`);
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
