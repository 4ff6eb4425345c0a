// A seller's and a buyer's whole journey through Tollgate with Polar's official JS SDK.
//
// Pinned: @polar-sh/sdk 0.22.2 with zod 3.25.76 (package.json, package-lock.json). Reads
// TOLLGATE_URL and TOLLGATE_TOKEN (a personal access token with every scope, e.g. the
// bootstrap token of a fresh server). Every check is a named function; a failing check
// prints its name and the error and the run goes on with the next one (checks that need an
// earlier result fail with it). The last line is `N passed, M failed`; the exit code is 1
// when M > 0.
//
// Run by tests/api/clients.rs, which copies this file next to the installed node_modules.
// By hand: npm ci here, then TOLLGATE_URL=... TOLLGATE_TOKEN=... node journey.mjs

import { randomUUID } from "node:crypto";

import { Polar } from "@polar-sh/sdk";
import { AlreadyCanceledSubscription } from "@polar-sh/sdk/models/errors/alreadycanceledsubscription.js";
import { HTTPValidationError } from "@polar-sh/sdk/models/errors/httpvalidationerror.js";
import { NotPermitted } from "@polar-sh/sdk/models/errors/notpermitted.js";
import { ResourceNotFound } from "@polar-sh/sdk/models/errors/resourcenotfound.js";
import { SDKError } from "@polar-sh/sdk/models/errors/sdkerror.js";
import { SDKValidationError } from "@polar-sh/sdk/models/errors/sdkvalidationerror.js";
import { Unauthorized } from "@polar-sh/sdk/models/errors/unauthorized.js";

const URL = process.env.TOLLGATE_URL.replace(/\/+$/, "");
const TOKEN = process.env.TOLLGATE_TOKEN;
const RUN = randomUUID().slice(0, 8);
const TIMEOUT_MS = 15000;

const polar = new Polar({ accessToken: TOKEN, serverURL: URL, timeoutMs: TIMEOUT_MS });

/** Results of earlier checks that later checks use. */
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
  return JSON.stringify(v, (_, x) => {
    if (x instanceof Date) return x.toISOString();
    if (x && typeof x === "object" && !Array.isArray(x)) {
      return Object.fromEntries(Object.keys(x).sort().map((k) => [k, x[k]]));
    }
    return x;
  });
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

/** Awaits `promise` and returns the error of class `cls` it rejected with; fails otherwise. */
async function rejects(cls, promise) {
  let result;
  try {
    result = await promise;
  } catch (e) {
    if (e instanceof cls) return e;
    throw new Error(`expected ${cls.name}, got ${e?.constructor?.name}: ${e?.message ?? e}`);
  }
  throw new Error(`expected ${cls.name}, got a result: ${show(result)}`);
}

async function notFound(promise) {
  const e = await rejects(ResourceNotFound, promise);
  ensure(typeof e.detail === "string" && e.detail, `no detail in ${show(e.data$)}`);
  return e;
}

async function invalid(promise) {
  const e = await rejects(HTTPValidationError, promise);
  ensure(Array.isArray(e.detail) && e.detail.length > 0, `no validation items: ${e.message}`);
  for (const item of e.detail) {
    ensure(typeof item.msg === "string" && typeof item.type === "string", show(item));
  }
  return e;
}

function locs(e) {
  return e.detail.map((item) => item.loc);
}

function hasLoc(e, loc) {
  return locs(e).some((l) => show(l) === show(loc));
}

/** Every item over every page of a list call. */
async function allItems(pages) {
  const out = [];
  for await (const page of await pages) out.push(...page.result.items);
  return out;
}

/** The first page of a list call. */
async function firstPage(pages) {
  return (await pages).result;
}

const uid = () => randomUUID();
const email = () => `buyer-${RUN}@example.com`;

// --- Seller: organization ------------------------------------------------------------------

check("organization_create", async () => {
  const org = await polar.organizations.create({
    name: `Compat JS ${RUN}`,
    slug: `compat-js-${RUN}`,
  });
  S.org = org;
  equal(org.slug, `compat-js-${RUN}`, "slug");
  ensure(org.createdAt instanceof Date, "createdAt is not a Date");
  ensure(["invoice", "prorate"].includes(org.subscriptionSettings.prorationBehavior));
});

check("organization_get", async () => {
  const org = await polar.organizations.get({ id: need("org").id });
  equal(org.id, S.org.id, "id");
  equal(org.name, S.org.name, "name");
});

check("organization_update", async () => {
  const org = await polar.organizations.update({
    id: need("org").id,
    organizationUpdate: {
      name: `Compat JS ${RUN} renamed`,
      profileSettings: { description: "Sells compatible things" },
    },
  });
  equal(org.name, `Compat JS ${RUN} renamed`, "name");
  ensure(org.modifiedAt instanceof Date, "modifiedAt not set");
  S.org = org;
});

check("organization_list", async () => {
  const page = await firstPage(polar.organizations.list({ slug: `compat-js-${RUN}` }));
  equal(
    page.items.map((o) => o.id),
    [need("org").id],
    "ids",
  );
  equal(page.pagination.totalCount, 1, "totalCount");
  const all = await allItems(polar.organizations.list({ limit: 1 }));
  ensure(
    all.some((o) => o.id === S.org.id),
    "not found over pages",
  );
});

// --- Seller: catalogue ---------------------------------------------------------------------

check("benefit_license_keys_create", async () => {
  const benefit = await polar.benefits.create({
    type: "license_keys",
    description: "Compat license key",
    organizationId: need("org").id,
    properties: {
      prefix: "COMPAT",
      activations: { limit: 2, enableCustomerAdmin: true },
      limitUsage: 10,
    },
  });
  equal(benefit.type, "license_keys", "type");
  equal(benefit.organizationId, S.org.id, "organizationId");
  equal(benefit.properties.prefix, "COMPAT", "prefix");
  equal(benefit.properties.activations.limit, 2, "activations.limit");
  equal(benefit.properties.limitUsage, 10, "limitUsage");
  equal(benefit.properties.expires, null, "expires");
  S.benefit = benefit;
});

check("product_recurring_create", async () => {
  const product = await polar.products.create({
    name: `Compat Pro ${RUN}`,
    description: "Monthly",
    organizationId: need("org").id,
    metadata: { tier: "pro", seats: 3, beta: true },
    prices: [
      {
        type: "recurring",
        amountType: "fixed",
        priceAmount: 1500,
        priceCurrency: "usd",
        recurringInterval: "month",
      },
    ],
  });
  ensure(product.isRecurring, "not recurring");
  equal(product.metadata, { tier: "pro", seats: 3, beta: true }, "metadata");
  const price = product.prices[0];
  equal([price.type, price.amountType], ["recurring", "fixed"], "price kind");
  equal(price.priceAmount, 1500, "priceAmount");
  equal(price.recurringInterval, "month", "recurringInterval");
  S.recurring = product;
});

check("product_one_time_create", async () => {
  const product = await polar.products.create({
    name: `Compat Lifetime ${RUN}`,
    organizationId: need("org").id,
    prices: [{ type: "one_time", amountType: "fixed", priceAmount: 4900, priceCurrency: "usd" }],
  });
  ensure(!product.isRecurring, "recurring");
  const price = product.prices[0];
  equal([price.type, price.amountType], ["one_time", "fixed"], "price kind");
  S.oneTime = product;
});

check("product_update_benefits", async () => {
  for (const key of ["recurring", "oneTime"]) {
    const product = await polar.products.updateBenefits({
      id: need(key).id,
      productBenefitsUpdate: { benefits: [need("benefit").id] },
    });
    equal(
      product.benefits.map((b) => b.id),
      [S.benefit.id],
      `${key} benefits`,
    );
    equal(product.benefits[0].type, "license_keys", "benefit type");
    S[key] = product;
  }
});

check("discount_fixed_create", async () => {
  const discount = await polar.discounts.create({
    duration: "once",
    type: "fixed",
    amount: 500,
    currency: "usd",
    name: "Five off",
    code: `FIVE${RUN}`,
    organizationId: need("org").id,
  });
  equal([discount.duration, discount.type], ["once", "fixed"], "kind");
  equal(discount.amount, 500, "amount");
  equal(discount.products, [], "products");
  S.fixed = discount;
});

check("discount_percentage_create", async () => {
  const discount = await polar.discounts.create({
    duration: "forever",
    type: "percentage",
    basisPoints: 1000,
    name: "Ten percent",
    code: `TEN${RUN}`,
    organizationId: need("org").id,
    products: [need("recurring").id],
  });
  S.percent = discount;
  equal([discount.duration, discount.type], ["forever", "percentage"], "kind");
  equal(discount.basisPoints, 1000, "basisPoints");
  equal(
    discount.products.map((p) => p.id),
    [S.recurring.id],
    "products",
  );
});

check("discount_repeating_is_mangled_by_the_client", async () => {
  // 0.22.2's DiscountCreate union tries the once/forever percentage schema first, which
  // matches and strips durationInMonths: the server sees a repeating discount without its
  // months and must answer the 422 the client parses.
  const e = await invalid(
    polar.discounts.create({
      duration: "repeating",
      durationInMonths: 3,
      type: "percentage",
      basisPoints: 1000,
      name: "Ten percent for three months",
      organizationId: need("org").id,
    }),
  );
  ensure(hasLoc(e, ["body", "duration_in_months"]), `locs ${show(locs(e))}`);
});

check("catalogue_reads", async () => {
  const product = await polar.products.get({ id: need("recurring").id });
  equal(
    product.benefits.map((b) => b.id),
    [need("benefit").id],
    "benefits",
  );
  const products = await allItems(
    polar.products.list({ organizationId: need("org").id, isRecurring: true }),
  );
  equal(
    products.map((p) => p.id),
    [S.recurring.id],
    "recurring products",
  );
  const benefit = await polar.benefits.get({ id: S.benefit.id });
  equal(benefit.type, "license_keys", "benefit type");
  const benefits = await allItems(polar.benefits.list({ organizationId: S.org.id }));
  equal(
    benefits.map((b) => b.id),
    [S.benefit.id],
    "benefits list",
  );
  const discount = await polar.discounts.get({ id: need("percent").id });
  equal(discount.id, S.percent.id, "discount id");
  const discounts = await allItems(polar.discounts.list({ organizationId: S.org.id }));
  equal(
    discounts.map((d) => d.id).sort(),
    [need("fixed").id, S.percent.id].sort(),
    "discounts list",
  );
});

// --- Checkouts -----------------------------------------------------------------------------

check("checkout_create_by_price", async () => {
  const checkout = await polar.checkouts.custom.create({
    productPriceId: need("oneTime").prices[0].id,
    metadata: { source: "node" },
  });
  equal(checkout.status, "open", "status");
  equal(checkout.paymentProcessor, "stripe", "paymentProcessor");
  equal(checkout.productId, S.oneTime.id, "productId");
  equal(checkout.amount, 4900, "amount");
  equal(checkout.metadata, { source: "node" }, "metadata");
  ensure(checkout.clientSecret, "no clientSecret");
  S.checkoutOneTime = checkout;
});

check("checkout_create_by_product", async () => {
  const checkout = await polar.checkouts.custom.create({
    productId: need("recurring").id,
    discountId: need("percent").id,
    customerEmail: email(),
  });
  equal(checkout.productPriceId, S.recurring.prices[0].id, "productPriceId");
  equal(checkout.discountId, S.percent.id, "discountId");
  equal(checkout.totalAmount, 1350, "totalAmount");
  S.checkoutRecurring = checkout;
});

check("checkout_get", async () => {
  const checkout = await polar.checkouts.custom.get({ id: need("checkoutOneTime").id });
  equal(checkout.id, S.checkoutOneTime.id, "id");
  equal(checkout.clientSecret, S.checkoutOneTime.clientSecret, "clientSecret");
});

check("checkout_update", async () => {
  const checkout = await polar.checkouts.custom.update({
    id: need("checkoutOneTime").id,
    checkoutUpdate: { metadata: { source: "node", step: 2 }, customerName: "Ada" },
  });
  equal(checkout.metadata, { source: "node", step: 2 }, "metadata");
  equal(checkout.customerName, "Ada", "customerName");
});

check("checkout_list", async () => {
  const ids = new Set(
    (await allItems(polar.checkouts.custom.list({ organizationId: need("org").id }))).map(
      (c) => c.id,
    ),
  );
  ensure(
    ids.has(need("checkoutOneTime").id) && ids.has(need("checkoutRecurring").id),
    `ids ${[...ids]}`,
  );
  const page = await firstPage(
    polar.checkouts.custom.list({ productId: S.oneTime.id, sorting: ["-created_at"] }),
  );
  equal(
    page.items.map((c) => c.id),
    [S.checkoutOneTime.id],
    "by product",
  );
});

check("checkout_client_get", async () => {
  const pub = await polar.checkouts.custom.clientGet({
    clientSecret: need("checkoutOneTime").clientSecret,
  });
  equal(pub.id, S.checkoutOneTime.id, "id");
  equal(pub.organization.id, S.org.id, "organization.id");
  equal(pub.status, "open", "status");
});

check("checkout_client_update", async () => {
  const pub = await polar.checkouts.custom.clientUpdate({
    clientSecret: need("checkoutOneTime").clientSecret,
    checkoutUpdatePublic: {
      customerEmail: email(),
      customerName: "Ada Lovelace",
      customerBillingAddress: {
        country: "US",
        line1: "1 Main St",
        postalCode: "10001",
        city: "New York",
        state: "NY",
      },
      discountCode: `FIVE${RUN}`,
    },
  });
  equal(pub.customerEmail, email(), "customerEmail");
  equal(pub.customerName, "Ada Lovelace", "customerName");
  equal(pub.customerBillingAddress.country, "US", "country");
  equal(pub.discountId, need("fixed").id, "discountId");
  equal(pub.totalAmount, 4400, "totalAmount");
});

async function waitSucceeded(clientSecret) {
  const deadline = Date.now() + 30000;
  for (;;) {
    const pub = await polar.checkouts.custom.clientGet({ clientSecret });
    if (pub.status === "succeeded") return pub;
    ensure(pub.status === "confirmed", `status ${pub.status}`);
    ensure(Date.now() < deadline, "checkout did not succeed within 30 s");
    await new Promise((r) => setTimeout(r, 200));
  }
}

check("checkout_client_confirm", async () => {
  const confirmed = await polar.checkouts.custom.clientConfirm({
    clientSecret: need("checkoutOneTime").clientSecret,
    checkoutConfirmStripe: { confirmationTokenId: "tok_visa" },
  });
  equal(confirmed.status, "confirmed", "status");
  ensure(confirmed.customerSessionToken, "no customerSessionToken");
  S.customerSessionToken = confirmed.customerSessionToken;
});

check("checkout_succeeds", async () => {
  const pub = await waitSucceeded(need("checkoutOneTime").clientSecret);
  ensure(pub.customerId, "no customerId");
  S.customerId = pub.customerId;
});

check("checkout_subscription_confirm_and_succeed", async () => {
  const confirmed = await polar.checkouts.custom.clientConfirm({
    clientSecret: need("checkoutRecurring").clientSecret,
    checkoutConfirmStripe: {
      confirmationTokenId: "tok_visa",
      customerName: "Ada Lovelace",
      customerBillingAddress: { country: "FR" },
    },
  });
  equal(confirmed.status, "confirmed", "status");
  const pub = await waitSucceeded(S.checkoutRecurring.clientSecret);
  equal(pub.customerId, need("customerId"), "same customer");
});

check("checkout_declined_payment", async () => {
  const checkout = await polar.checkouts.custom.create({ productId: need("oneTime").id });
  const e = await rejects(
    SDKError,
    polar.checkouts.custom.clientConfirm({
      clientSecret: checkout.clientSecret,
      checkoutConfirmStripe: {
        confirmationTokenId: "tok_decline_card",
        customerEmail: `poor-${RUN}@example.com`,
        customerName: "Poor Buyer",
        customerBillingAddress: { country: "DE" },
      },
    }),
  );
  equal(e.statusCode, 400, "status");
  const after = await polar.checkouts.custom.get({ id: checkout.id });
  equal(after.status, "open", "status after decline");
});

check("checkout_get_after_success", async () => {
  const checkout = await polar.checkouts.custom.get({ id: need("checkoutOneTime").id });
  equal(checkout.status, "succeeded", "status");
  equal(checkout.customerId, need("customerId"), "customerId");
});

check("a_closed_checkout_is_refused", async () => {
  // Polar answers 403 NotOpenCheckout; 0.22.2 reads every 403 of these calls as
  // AlreadyActiveSubscriptionError, whose const `error` rejects it: SDKValidationError,
  // exactly as against Polar itself.
  const { id, clientSecret } = need("checkoutOneTime");
  const calls = [
    () => polar.checkouts.custom.update({ id, checkoutUpdate: { customerName: "Late" } }),
    () =>
      polar.checkouts.custom.clientUpdate({
        clientSecret,
        checkoutUpdatePublic: { customerName: "Late" },
      }),
    () =>
      polar.checkouts.custom.clientConfirm({
        clientSecret,
        checkoutConfirmStripe: { confirmationTokenId: "tok_visa" },
      }),
  ];
  for (const call of calls) {
    const e = await rejects(SDKValidationError, call());
    ensure(show(e.rawValue).includes("NotOpenCheckout"), show(e.rawValue));
  }
  equal((await polar.checkouts.custom.get({ id })).customerName, "Ada Lovelace", "name");
});

// --- Orders and subscriptions --------------------------------------------------------------

check("orders_list", async () => {
  const orders = await allItems(polar.orders.list({ organizationId: need("org").id }));
  equal(orders.length, 2, "orders");
  const byProduct = Object.fromEntries(orders.map((o) => [o.productId, o]));
  const oneTime = byProduct[need("oneTime").id];
  ensure(oneTime && byProduct[need("recurring").id], `products ${Object.keys(byProduct)}`);
  equal(oneTime.billingReason, "purchase", "billingReason");
  equal(oneTime.amount, 4400, "amount");
  equal(oneTime.discountId, need("fixed").id, "discountId");
  equal(oneTime.checkoutId, need("checkoutOneTime").id, "checkoutId");
  equal(byProduct[S.recurring.id].billingReason, "subscription_create", "billingReason");
  const page = await firstPage(
    polar.orders.list({ organizationId: S.org.id, productPriceType: "one_time" }),
  );
  equal(
    page.items.map((o) => o.id),
    [oneTime.id],
    "one_time filter",
  );
  S.order = oneTime;
});

check("orders_get", async () => {
  const order = await polar.orders.get({ id: need("order").id });
  equal(order.id, S.order.id, "id");
  equal(order.customer.email, email(), "customer.email");
  ensure(order.user.email, "no user.email");
  equal(order.product.id, need("oneTime").id, "product.id");
});

check("subscriptions_list", async () => {
  const subs = await allItems(
    polar.subscriptions.list({ organizationId: need("org").id, active: true }),
  );
  equal(subs.length, 1, "subscriptions");
  const sub = subs[0];
  S.subscription = sub;
  equal(sub.status, "active", "status");
  equal(sub.product.id, need("recurring").id, "product.id");
  equal(sub.price.id, S.recurring.prices[0].id, "price.id");
  equal(sub.discountId, need("percent").id, "discountId");
  equal(sub.customerId, need("customerId"), "customerId");
});

check("subscription_get", async () => {
  const sub = await polar.subscriptions.get({ id: need("subscription").id });
  equal(sub.id, S.subscription.id, "id");
  ensure(sub.currentPeriodEnd instanceof Date, "currentPeriodEnd");
  equal(sub.cancelAtPeriodEnd, false, "cancelAtPeriodEnd");
});

check("orders_by_customer", async () => {
  const orders = await allItems(
    polar.orders.list({ customerId: need("customerId"), sorting: ["-created_at"] }),
  );
  equal(orders.length, 2, "orders of the customer");
});

// --- License keys (seller) -----------------------------------------------------------------

check("license_keys_list_by_organization", async () => {
  const keys = await allItems(polar.licenseKeys.list({ organizationId: need("org").id }));
  ensure(keys.length >= 1, "no license keys");
  for (const key of keys) {
    equal(key.benefitId, need("benefit").id, "benefitId");
    equal(key.customerId, need("customerId"), "customerId");
    ensure(key.key.startsWith("COMPAT"), `key ${key.key}`);
    equal(key.status, "granted", "status");
  }
  S.keys = keys;
  S.key = keys[0];
});

check("license_keys_list_by_benefit", async () => {
  const keys = await allItems(polar.licenseKeys.list({ benefitId: need("benefit").id }));
  equal(
    keys.map((k) => k.id).sort(),
    need("keys")
      .map((k) => k.id)
      .sort(),
    "ids",
  );
  equal(await allItems(polar.licenseKeys.list({ benefitId: uid() })), [], "unknown benefit");
});

check("license_keys_get", async () => {
  const key = await polar.licenseKeys.get({ id: need("key").id });
  equal(key.key, S.key.key, "key");
  equal(key.activations, [], "activations");
  equal(key.limitActivations, 2, "limitActivations");
  equal(key.limitUsage, 10, "limitUsage");
});

check("license_keys_update", async () => {
  const key = await polar.licenseKeys.update({
    id: need("key").id,
    licenseKeyUpdate: { limitUsage: 5 },
  });
  equal(key.limitUsage, 5, "limitUsage");
  equal(key.usage, 0, "usage");
  equal(key.status, "granted", "status");
});

// --- License keys (buyer's program) --------------------------------------------------------

const keyBody = () => ({ key: need("key").key, organizationId: need("org").id });

check("validate_key", async () => {
  const v = await polar.customerPortal.licenseKeys.validate(keyBody());
  equal(v.id, S.key.id, "id");
  equal(v.validations, 1, "validations");
  ensure(v.lastValidatedAt instanceof Date, "lastValidatedAt");
  ensure(v.activation == null, "activation");
});

check("activate_key", async () => {
  const a = await polar.customerPortal.licenseKeys.activate({ ...keyBody(), label: "laptop" });
  equal(a.label, "laptop", "label");
  equal(a.licenseKeyId, S.key.id, "licenseKeyId");
  equal(a.licenseKey.id, S.key.id, "licenseKey.id");
  S.activation = a;
});

check("validate_with_activation", async () => {
  const v = await polar.customerPortal.licenseKeys.validate({
    ...keyBody(),
    activationId: need("activation").id,
    benefitId: need("benefit").id,
    customerId: need("customerId"),
  });
  equal(v.activation.id, S.activation.id, "activation.id");
  equal(v.activation.label, "laptop", "activation.label");
});

check("validate_increment_usage", async () => {
  const v = await polar.customerPortal.licenseKeys.validate({ ...keyBody(), incrementUsage: 2 });
  equal(v.usage, 2, "usage");
  const key = await polar.licenseKeys.get({ id: S.key.id });
  equal(key.usage, 2, "usage read back");
  equal(
    key.activations.map((a) => a.id),
    [need("activation").id],
    "activations",
  );
});

check("validate_past_usage_limit", async () => {
  // Polar answers 400 BadRequest, which validate does not declare: a plain SDKError.
  const e = await rejects(
    SDKError,
    polar.customerPortal.licenseKeys.validate({ ...keyBody(), incrementUsage: 4 }),
  );
  equal(e.statusCode, 400, "status");
  ensure(e.body.includes("3 more usages"), `body ${e.body}`);
});

check("get_activation", async () => {
  const a = await polar.licenseKeys.getActivation({
    id: need("key").id,
    activationId: need("activation").id,
  });
  equal(a.id, S.activation.id, "id");
  equal(a.label, "laptop", "label");
});

check("activate_past_limit", async () => {
  S.secondActivation = await polar.customerPortal.licenseKeys.activate({
    ...keyBody(),
    label: "desktop",
  });
  const e = await rejects(
    NotPermitted,
    polar.customerPortal.licenseKeys.activate({ ...keyBody(), label: "third" }),
  );
  ensure(e.detail, "no detail");
});

check("deactivate", async () => {
  const result = await polar.customerPortal.licenseKeys.deactivate({
    ...keyBody(),
    activationId: need("secondActivation").id,
  });
  equal(result, undefined, "result");
  const key = await polar.licenseKeys.get({ id: S.key.id });
  equal(
    key.activations.map((a) => a.id),
    [need("activation").id],
    "activations left",
  );
});

check("deactivated_activation_is_gone", async () => {
  const activationId = need("secondActivation").id;
  await notFound(polar.customerPortal.licenseKeys.validate({ ...keyBody(), activationId }));
  await notFound(polar.licenseKeys.getActivation({ id: S.key.id, activationId }));
  await notFound(polar.customerPortal.licenseKeys.deactivate({ ...keyBody(), activationId }));
});

check("revoked_key_no_longer_validates", async () => {
  let key = await polar.licenseKeys.update({
    id: need("key").id,
    licenseKeyUpdate: { status: "revoked" },
  });
  equal(key.status, "revoked", "status");
  await notFound(polar.customerPortal.licenseKeys.validate(keyBody()));
  key = await polar.licenseKeys.update({ id: S.key.id, licenseKeyUpdate: { status: "granted" } });
  equal(key.status, "granted", "status");
  await polar.customerPortal.licenseKeys.validate(keyBody());
});

check("customer_sees_own_keys", async () => {
  // The buyer's customer session token from clientConfirm opens the customer portal.
  const buyer = new Polar({
    accessToken: need("customerSessionToken"),
    serverURL: URL,
    timeoutMs: TIMEOUT_MS,
  });
  const keys = await allItems(
    buyer.customerPortal.licenseKeys.list({ organizationId: need("org").id }),
  );
  equal(
    keys.map((k) => k.id).sort(),
    need("keys")
      .map((k) => k.id)
      .sort(),
    "keys",
  );
  const key = await buyer.customerPortal.licenseKeys.get({ id: need("key").id });
  equal(
    key.activations.map((a) => a.id),
    [need("activation").id],
    "activations",
  );
});

// --- The signed-in buyer: the customer portal ----------------------------------------------

function portalBuyer() {
  return new Polar({ accessToken: need("portalToken"), serverURL: URL, timeoutMs: TIMEOUT_MS });
}

check("portal_session_for_the_buyer", async () => {
  const session = await polar.customerSessions.create({ customerId: need("customerId") });
  ensure(session.token.startsWith("polar_cst_"), `token ${session.token.slice(0, 12)}`);
  equal(session.customerId, S.customerId, "customerId");
  S.portalToken = session.token;
  const url = new globalThis.URL(session.customerPortalUrl);
  equal(url.origin + url.pathname, `${URL}/portal/${need("org").slug}`, "customerPortalUrl");
  equal(url.searchParams.get("customer_session_token"), session.token, "customer_session_token");
  equal(url.searchParams.get("email"), email(), "email");
});

check("portal_orders_list_and_get", async () => {
  const buyer = portalBuyer();
  const orders = await allItems(buyer.customerPortal.orders.list({}));
  const byProduct = Object.fromEntries(orders.map((o) => [o.productId, o]));
  equal(
    Object.keys(byProduct).sort(),
    [need("oneTime").id, need("recurring").id].sort(),
    "products of the buyer's orders",
  );
  const oneTime = byProduct[S.oneTime.id];
  equal(oneTime.id, need("order").id, "id");
  equal(oneTime.amount, 4400, "amount");
  equal(oneTime.product.id, S.oneTime.id, "product.id");
  equal(byProduct[S.recurring.id].subscriptionId, need("subscription").id, "subscriptionId");
  const page = await firstPage(buyer.customerPortal.orders.list({ productId: S.recurring.id }));
  equal(
    page.items.map((o) => o.productId),
    [S.recurring.id],
    "by product",
  );
  const order = await buyer.customerPortal.orders.get({ id: S.order.id });
  equal(order.id, S.order.id, "id");
  equal(order.productPriceId, S.oneTime.prices[0].id, "productPriceId");
  equal(order.userId, S.customerId, "userId (the customer)");
  await notFound(buyer.customerPortal.orders.get({ id: uid() }));
});

check("portal_subscriptions_list_and_get", async () => {
  const buyer = portalBuyer();
  const subs = await allItems(buyer.customerPortal.subscriptions.list({}));
  equal(
    subs.map((s) => s.id),
    [need("subscription").id],
    "subscriptions",
  );
  const sub = await buyer.customerPortal.subscriptions.get({ id: S.subscription.id });
  equal(sub.status, "active", "status");
  equal(sub.product.id, need("recurring").id, "product.id");
  equal(sub.price.id, S.recurring.prices[0].id, "price.id");
  equal(sub.cancelAtPeriodEnd, false, "cancelAtPeriodEnd");
  await notFound(buyer.customerPortal.subscriptions.get({ id: uid() }));
});

check("portal_subscription_cancel_and_uncancel", async () => {
  const buyer = portalBuyer();
  const id = need("subscription").id;
  let sub = await buyer.customerPortal.subscriptions.update({
    id,
    customerSubscriptionUpdate: {
      cancelAtPeriodEnd: true,
      cancellationReason: "missing_features",
      cancellationComment: "journey",
    },
  });
  equal(sub.cancelAtPeriodEnd, true, "cancelAtPeriodEnd");
  equal(sub.customerCancellationReason, "missing_features", "customerCancellationReason");
  const e = await rejects(AlreadyCanceledSubscription, buyer.customerPortal.subscriptions.cancel({ id }));
  ensure(e.detail, "no detail");
  sub = await buyer.customerPortal.subscriptions.update({
    id,
    customerSubscriptionUpdate: { cancelAtPeriodEnd: false },
  });
  equal(sub.cancelAtPeriodEnd, false, "cancelAtPeriodEnd after uncancel");
  equal((await polar.subscriptions.get({ id })).cancelAtPeriodEnd, false, "the seller's view");
});

check("portal_license_keys_list_and_get", async () => {
  const buyer = portalBuyer();
  const keys = await allItems(buyer.customerPortal.licenseKeys.list({}));
  equal(
    keys.map((k) => k.id).sort(),
    need("keys")
      .map((k) => k.id)
      .sort(),
    "keys",
  );
  const key = await buyer.customerPortal.licenseKeys.get({ id: need("key").id });
  equal(key.id, S.key.id, "id");
  await notFound(buyer.customerPortal.licenseKeys.get({ id: uid() }));
});

check("portal_benefit_grants_list_and_get", async () => {
  const buyer = portalBuyer();
  const grants = await allItems(buyer.customerPortal.benefitGrants.list({}));
  ensure(grants.length > 0, "no grants");
  for (const grant of grants) {
    equal(grant.customerId, need("customerId"), "customerId");
    equal(grant.benefitId, need("benefit").id, "benefitId");
    equal(grant.benefit.organization.id, need("org").id, "benefit.organization.id");
    equal(grant.isGranted, true, "isGranted");
    ensure(
      need("keys").some((k) => k.id === grant.properties.licenseKeyId),
      `licenseKeyId ${grant.properties.licenseKeyId}`,
    );
  }
  const grant = await buyer.customerPortal.benefitGrants.get({ id: grants[0].id });
  equal(grant.id, grants[0].id, "id");
  await notFound(buyer.customerPortal.benefitGrants.get({ id: uid() }));
});

check("portal_token_is_refused_on_the_sellers_api", async () => {
  const buyer = portalBuyer();
  for (const call of [
    () => allItems(buyer.products.list({ organizationId: need("org").id })),
    () => buyer.orders.get({ id: need("order").id }),
  ]) {
    try {
      await call();
    } catch (e) {
      if (e instanceof SDKError) equal(e.statusCode, 401, "status");
      else ensure(e instanceof Unauthorized || e instanceof SDKValidationError, `${e}`);
      continue;
    }
    throw new Error("the customer session token was accepted");
  }
});

// --- Error cases ---------------------------------------------------------------------------

check("unknown_ids_are_not_found", async () => {
  await notFound(polar.organizations.get({ id: uid() }));
  await notFound(polar.checkouts.custom.get({ id: uid() }));
  await notFound(
    polar.checkouts.custom.update({ id: uid(), checkoutUpdate: { customerName: "x" } }),
  );
  await notFound(polar.checkouts.custom.clientGet({ clientSecret: `polar_c_unknown${RUN}` }));
  await notFound(polar.orders.get({ id: uid() }));
  await notFound(polar.licenseKeys.get({ id: uid() }));
  await notFound(polar.licenseKeys.update({ id: uid(), licenseKeyUpdate: { limitUsage: 1 } }));
  await notFound(polar.licenseKeys.getActivation({ id: need("key").id, activationId: uid() }));
  await notFound(
    polar.products.updateBenefits({ id: uid(), productBenefitsUpdate: { benefits: [] } }),
  );
});

check("unknown_license_key_is_not_found", async () => {
  const org = need("org").id;
  await notFound(
    polar.customerPortal.licenseKeys.validate({ key: `COMPAT-NOPE-${RUN}`, organizationId: org }),
  );
  await notFound(
    polar.customerPortal.licenseKeys.validate({ key: need("key").key, organizationId: uid() }),
  );
  await notFound(
    polar.customerPortal.licenseKeys.activate({
      key: `COMPAT-NOPE-${RUN}`,
      organizationId: org,
      label: "x",
    }),
  );
});

check("invalid_uuids_are_validation_errors", async () => {
  let e = await invalid(polar.organizations.get({ id: "not-a-uuid" }));
  ensure(hasLoc(e, ["path", "id"]), `locs ${show(locs(e))}`);
  await invalid(polar.checkouts.custom.get({ id: "not-a-uuid" }));
  await invalid(polar.orders.get({ id: "not-a-uuid" }));
  await invalid(polar.licenseKeys.get({ id: "not-a-uuid" }));
  e = await invalid(
    polar.customerPortal.licenseKeys.validate({
      key: need("key").key,
      organizationId: "not-a-uuid",
    }),
  );
  ensure(hasLoc(e, ["body", "organization_id"]), `locs ${show(locs(e))}`);
  await invalid(polar.checkouts.custom.create({ productId: "not-a-uuid" }));
});

check("long_metadata_key_is_a_validation_error", async () => {
  const longKey = "k".repeat(41);
  const inMetadata = (e) => locs(e).some((l) => l[0] === "body" && l[1] === "metadata");
  let e = await invalid(
    polar.checkouts.custom.create({ productId: need("oneTime").id, metadata: { [longKey]: "v" } }),
  );
  ensure(inMetadata(e), `locs ${show(locs(e))}`);
  e = await invalid(
    polar.products.create({
      name: "Bad metadata",
      organizationId: need("org").id,
      metadata: { [longKey]: 1 },
      prices: [{ type: "one_time", amountType: "fixed", priceAmount: 100, priceCurrency: "usd" }],
    }),
  );
  ensure(inMetadata(e), `locs ${show(locs(e))}`);
  const ok = await polar.checkouts.custom.create({
    productId: S.oneTime.id,
    metadata: { ["k".repeat(40)]: "v" },
  });
  equal(ok.metadata, { ["k".repeat(40)]: "v" }, "40-character key kept");
});

check("missing_credentials_are_unauthorized", async () => {
  // An empty access token makes 0.22.2 send no Authorization header at all.
  const anonymous = new Polar({ accessToken: "", serverURL: URL, timeoutMs: TIMEOUT_MS });
  const e = await rejects(
    Unauthorized,
    allItems(anonymous.licenseKeys.list({ organizationId: need("org").id })),
  );
  ensure(e.detail, "no detail");
  await rejects(Unauthorized, anonymous.licenseKeys.get({ id: need("key").id }));
  await rejects(
    Unauthorized,
    anonymous.licenseKeys.update({ id: S.key.id, licenseKeyUpdate: { limitUsage: 1 } }),
  );
});

check("a_bad_token_is_refused", async () => {
  // Polar answers an unknown bearer token with 401 `invalid_token`; 0.22.2's Unauthorized
  // schema wants error "Unauthorized", so it surfaces as SDKValidationError, exactly as
  // against Polar itself.
  const bad = new Polar({
    accessToken: `polar_pat_bogus${RUN}`,
    serverURL: URL,
    timeoutMs: TIMEOUT_MS,
  });
  try {
    await allItems(bad.licenseKeys.list({ organizationId: need("org").id }));
  } catch (e) {
    if (e instanceof SDKError) equal(e.statusCode, 401, "status");
    else ensure(e instanceof Unauthorized || e instanceof SDKValidationError, `${e}`);
    if (e instanceof SDKValidationError) ensure(show(e.rawValue).includes("invalid_token"));
    return;
  }
  throw new Error("a bogus token listed license keys");
});

check("customer_portal_ignores_the_bearer_token", async () => {
  const bad = new Polar({
    accessToken: `polar_pat_bogus${RUN}`,
    serverURL: URL,
    timeoutMs: TIMEOUT_MS,
  });
  const v = await bad.customerPortal.licenseKeys.validate(keyBody());
  equal(v.id, S.key.id, "id");
  const pub = await bad.checkouts.custom.clientGet({
    clientSecret: need("checkoutOneTime").clientSecret,
  });
  equal(pub.id, S.checkoutOneTime.id, "id");
});

// --- Other kinds of price (each with its own buyer) -------------------------------------

async function productWith(price, name) {
  return polar.products.create({
    name: `${name} ${RUN}`,
    organizationId: need("org").id,
    prices: [price],
  });
}

check("free_product_checkout", async () => {
  const product = await productWith({ type: "one_time", amountType: "free" }, "Free");
  equal([product.prices[0].type, product.prices[0].amountType], ["one_time", "free"], "price");
  const checkout = await polar.checkouts.custom.create({ productId: product.id });
  ensure(checkout.isFreeProductPrice, "isFreeProductPrice");
  ensure(!checkout.isPaymentRequired, "isPaymentRequired");
  const confirmed = await polar.checkouts.custom.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { customerEmail: `free-${RUN}@example.com` },
  });
  equal(confirmed.status, "confirmed", "status");
  const pub = await waitSucceeded(checkout.clientSecret);
  const orders = await allItems(polar.orders.list({ customerId: pub.customerId }));
  equal(
    orders.map((o) => o.productId),
    [product.id],
    "orders",
  );
  equal(orders[0].amount, 0, "amount");
});

check("pay_what_you_want_checkout", async () => {
  const product = await productWith(
    {
      type: "one_time",
      amountType: "custom",
      priceCurrency: "usd",
      minimumAmount: 500,
      maximumAmount: 10000,
      presetAmount: 1000,
    },
    "Pay what you want",
  );
  equal(product.prices[0].amountType, "custom", "amountType");
  const checkout = await polar.checkouts.custom.create({ productId: product.id, amount: 2500 });
  equal(checkout.amount, 2500, "amount");
  const pub = await polar.checkouts.custom.clientUpdate({
    clientSecret: checkout.clientSecret,
    checkoutUpdatePublic: { amount: 3000 },
  });
  equal(pub.totalAmount, 3000, "totalAmount");
  await polar.checkouts.custom.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: {
      confirmationTokenId: "tok_visa",
      customerEmail: `pwyw-${RUN}@example.com`,
      customerName: "Generous",
      customerBillingAddress: { country: "GB" },
    },
  });
  const done = await waitSucceeded(checkout.clientSecret);
  const orders = await allItems(polar.orders.list({ customerId: done.customerId }));
  equal(
    orders.map((o) => o.amount),
    [3000],
    "order amounts",
  );
});

check("free_subscription", async () => {
  const product = await productWith(
    { type: "recurring", amountType: "free", recurringInterval: "year" },
    "Free plan",
  );
  equal(product.prices[0].amountType, "free", "amountType");
  const checkout = await polar.checkouts.custom.create({ productId: product.id });
  await polar.checkouts.custom.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { customerEmail: `plan-${RUN}@example.com` },
  });
  const pub = await waitSucceeded(checkout.clientSecret);
  const subs = await allItems(
    polar.subscriptions.list({ customerId: pub.customerId, sorting: ["-started_at", "amount"] }),
  );
  equal(subs.length, 1, "subscriptions");
  const sub = await polar.subscriptions.get({ id: subs[0].id });
  equal(sub.status, "active", "status");
  equal(sub.recurringInterval, "year", "recurringInterval");
  equal([sub.price.type, sub.price.amountType], ["recurring", "free"], "price");
});

check("optional_custom_fields", async () => {
  const fields = [];
  for (const kind of ["text", "number", "date"]) {
    fields.push(
      await polar.customFields.create({
        type: kind,
        slug: `${kind}${RUN}`,
        name: `${kind} field`,
        organizationId: need("org").id,
        properties: {},
      }),
    );
  }
  equal(fields[0].type, "text", "type");
  const product = await polar.products.create({
    name: `With fields ${RUN}`,
    organizationId: S.org.id,
    prices: [
      {
        type: "recurring",
        amountType: "fixed",
        priceAmount: 900,
        priceCurrency: "usd",
        recurringInterval: "month",
      },
    ],
    attachedCustomFields: fields.map((f) => ({ customFieldId: f.id, required: false })),
  });
  equal(
    product.attachedCustomFields.map((a) => a.customFieldId),
    fields.map((f) => f.id),
    "attached fields",
  );
  // Only the text field is answered: the others must not come back as nulls.
  const answers = { [`text${RUN}`]: "Acme" };
  const checkout = await polar.checkouts.custom.create({
    productId: product.id,
    customFieldData: answers,
  });
  equal(checkout.customFieldData, answers, "customFieldData");
  const pub = await polar.checkouts.custom.clientGet({ clientSecret: checkout.clientSecret });
  equal(pub.customFieldData, answers, "public customFieldData");
  await polar.checkouts.custom.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: {
      confirmationTokenId: "tok_visa",
      customerEmail: `fields-${RUN}@example.com`,
      customerName: "Field Tester",
      customerBillingAddress: { country: "SE" },
    },
  });
  const done = await waitSucceeded(checkout.clientSecret);
  const orders = await allItems(polar.orders.list({ customerId: done.customerId }));
  equal(
    orders.map((o) => o.customFieldData),
    [answers],
    "order data",
  );
  const subs = await allItems(polar.subscriptions.list({ customerId: done.customerId }));
  equal(
    subs.map((x) => x.customFieldData),
    [answers],
    "subscription data",
  );
});

async function main() {
  let passed = 0;
  let failed = 0;
  for (const [name, fn] of CHECKS) {
    const started = Date.now();
    try {
      await fn();
      passed += 1;
      console.log(`ok   ${name} (${((Date.now() - started) / 1000).toFixed(2)}s)`);
    } catch (e) {
      failed += 1;
      console.log(`FAIL ${name}: ${e?.constructor?.name}: ${e?.message ?? e}`);
      console.error(`--- ${name}`);
      console.error(e?.stack ?? e);
      if (e?.rawValue !== undefined) console.error("rawValue:", show(e.rawValue));
      if (e?.body !== undefined) console.error("body:", e.body);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
