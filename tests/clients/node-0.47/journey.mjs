// A seller's and a buyer's journey through Tollgate with Polar's official JS SDK 0.47.
//
// Pinned: @polar-sh/sdk 0.47.1 (the newest 0.47 patch) with zod 4.6.7 (package.json,
// package-lock.json). 0.47 sends no `Polar-Version` header (Tollgate must answer as 2026-04),
// insists on the exact documented status code and content type, and parses every answer with
// its zod models: any mismatch is a ResponseValidationError ("Response validation failed").
//
// Reads TOLLGATE_URL and TOLLGATE_TOKEN (a personal access token with every scope, e.g. the
// bootstrap token of a fresh server). Every check is a named function; a failing check prints
// its name, the error (with the zod issues of a validation failure) and the HTTP exchanges it
// made, and the run goes on with the next one (checks that need an earlier result fail with
// it). The last line is `N passed, M failed`; the exit code is 1 when M > 0.
//
// By hand: npm ci here, then TOLLGATE_URL=... TOLLGATE_TOKEN=... node journey.mjs

import { randomUUID } from "node:crypto";

import { Polar } from "@polar-sh/sdk";
import { AlreadyCanceledSubscription } from "@polar-sh/sdk/models/errors/alreadycanceledsubscription.js";
import { HTTPValidationError } from "@polar-sh/sdk/models/errors/httpvalidationerror.js";
import { ResourceNotFound } from "@polar-sh/sdk/models/errors/resourcenotfound.js";
import { ResponseValidationError } from "@polar-sh/sdk/models/errors/responsevalidationerror.js";
import { SDKError } from "@polar-sh/sdk/models/errors/sdkerror.js";
import { Unauthorized } from "@polar-sh/sdk/models/errors/unauthorized.js";

const URL_ = process.env.TOLLGATE_URL.replace(/\/+$/, "");
const TOKEN = process.env.TOLLGATE_TOKEN;
const RUN = randomUUID().slice(0, 8);
const TIMEOUT_MS = 15000;
/** What Tollgate must answer as when no Polar-Version header is sent. */
const DEFAULT_VERSION = "2026-04";

// --- HTTP trace: every exchange is recorded, so a failure can show what was sent and answered.

/** Exchanges of the running check. */
let TRACE = [];
/** Every exchange of the run: {method, path, sentVersion, status, answeredVersion}. */
const EXCHANGES = [];
const realFetch = globalThis.fetch;

function clip(text, n = 600) {
  return text.length > n ? `${text.slice(0, n)}…(${text.length} chars)` : text;
}

globalThis.fetch = async (input, init) => {
  // The journey's own requests get the clients' timeout too.
  if (!(input instanceof Request) && !init?.signal) {
    init = { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) };
  }
  let method;
  let url;
  let body = "";
  let sentVersion = null;
  if (input instanceof Request) {
    method = input.method;
    url = input.url;
    sentVersion = input.headers.get("polar-version");
    body = await input
      .clone()
      .text()
      .catch(() => "");
  } else {
    method = init?.method ?? "GET";
    url = String(input);
    sentVersion = new Headers(init?.headers ?? {}).get("polar-version");
    body = typeof init?.body === "string" ? init.body : "";
  }
  const entry = { method, url, body, sentVersion };
  TRACE.push(entry);
  const res = await realFetch(input, init);
  entry.status = res.status;
  entry.answeredVersion = res.headers.get("polar-version");
  entry.contentType = res.headers.get("content-type");
  entry.answer = await res
    .clone()
    .text()
    .catch(() => "");
  const u = new URL(url);
  EXCHANGES.push({
    method,
    path: u.pathname,
    sentVersion,
    status: res.status,
    answeredVersion: entry.answeredVersion,
  });
  return res;
};

function showTrace(trace) {
  return trace
    .map((t) => {
      const u = new URL(t.url);
      const sent = `${t.method} ${u.pathname}${u.search}${t.body ? ` body=${clip(t.body, 400)}` : ""}`;
      const got =
        t.status === undefined
          ? "no answer"
          : `${t.status} ${t.contentType ?? ""} ${clip(t.answer ?? "", 600)}`;
      return `     > ${sent}\n     < ${got}`;
    })
    .join("\n");
}

// --- Check harness (as tests/clients/node/journey.mjs) ---------------------------------------

// A response the SDK's zod models reject fails the running check, but the journey goes on
// with the raw answer (keys camelCased) so that later checks still run and show their own
// problems: `sdk()` wraps a client so that every call does that.

/** ResponseValidationErrors of the running check, each with the exchange that caused it. */
let SOFT = [];

/** A raw answer as 0.47's models would give it: camelCase keys, datetimes as Dates. */
function camel(v) {
  if (typeof v === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(v)) return new Date(v);
  if (Array.isArray(v)) return v.map(camel);
  if (v && typeof v === "object") {
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase()), camel(x)]),
    );
  }
  return v;
}

async function salvage(promise) {
  try {
    return await promise;
  } catch (e) {
    if (e instanceof ResponseValidationError && e.rawValue !== undefined) {
      SOFT.push({ error: e, exchange: TRACE[TRACE.length - 1] });
      return camel(e.rawValue);
    }
    throw e;
  }
}

function sdk(target) {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver);
      if (typeof prop === "symbol" || prop.startsWith("_")) return value;
      if (typeof value === "function") return (...args) => salvage(value.apply(obj, args));
      if (value && typeof value === "object") return sdk(value);
      return value;
    },
  });
}

const polar = sdk(new Polar({ accessToken: TOKEN, serverURL: URL_, timeoutMs: TIMEOUT_MS }));
/** No credentials at all: 0.47 then sends no Authorization header. */
const anonymous = sdk(new Polar({ serverURL: URL_, timeoutMs: TIMEOUT_MS }));

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
      return Object.fromEntries(
        Object.keys(x)
          .sort()
          .map((k) => [k, x[k]]),
      );
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
    throw e;
  }
  throw new Error(`expected ${cls.name}, got a result: ${show(result)}`);
}

async function notFound(promise) {
  const e = await rejects(ResourceNotFound, promise);
  ensure(typeof e.detail === "string" && e.detail, `no detail in ${show(e.data$)}`);
  return e;
}

/** Every item over every page of a list call (only the first page of a salvaged answer). */
async function allItems(pages) {
  const first = await pages;
  if (!first[Symbol.asyncIterator]) return (first.result ?? first.Result).items;
  const out = [];
  for await (const page of first) out.push(...page.result.items);
  return out;
}

/** The first page of a list call. */
async function firstPage(pages) {
  const first = await pages;
  return first.result ?? first.Result;
}

/**
 * Awaits an SDK call; if it fails, makes the request the SDK should not need (`body` sent raw,
 * e.g. with a field an older Tollgate still wants), keeps its answer for the later checks,
 * and fails the running check with the SDK's error all the same.
 */
async function orElse(promise, method, path, body) {
  try {
    return await promise;
  } catch (e) {
    const res = await fetch(`${URL_}${path}`, {
      method,
      headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.ok) {
      SOFT.push({ error: e, exchange: TRACE[TRACE.length - 2] });
      return camel(await res.json());
    }
    throw e;
  }
}

const email = () => `buyer-${RUN}@example.com`;
const externalId = () => `ext-${RUN}`;

// --- Seller: organization, benefit, product ------------------------------------------------

check("organization_create", async () => {
  const org = await polar.organizations.create({ name: `Compat 047 ${RUN}`, slug: `c047-${RUN}` });
  S.org = org;
  equal(org.slug, `c047-${RUN}`, "slug");
  equal(org.name, `Compat 047 ${RUN}`, "name");
  ensure(org.createdAt instanceof Date, "createdAt is not a Date");
});

check("organization_get", async () => {
  const org = await polar.organizations.get({ id: need("org").id });
  equal(org.id, S.org.id, "id");
  equal(org.slug, S.org.slug, "slug");
});

check("organization_list", async () => {
  const page = await firstPage(polar.organizations.list({ slug: `c047-${RUN}` }));
  equal(
    page.items.map((o) => o.id),
    [need("org").id],
    "ids",
  );
  equal(page.pagination.totalCount, 1, "totalCount");
});

check("benefit_license_keys_create", async () => {
  const benefit = await polar.benefits.create({
    type: "license_keys",
    description: "Compat 0.47 license key",
    organizationId: need("org").id,
    properties: {
      prefix: "TG",
      activations: { limit: 3, enableCustomerAdmin: true },
      limitUsage: 100,
    },
  });
  S.benefit = benefit;
  equal(benefit.type, "license_keys", "type");
  equal(benefit.organizationId, S.org.id, "organizationId");
  equal(benefit.properties.prefix, "TG", "prefix");
  equal(benefit.properties.activations?.limit, 3, "activations.limit");
  equal(benefit.properties.limitUsage, 100, "limitUsage");
});

check("benefit_get", async () => {
  const benefit = await polar.benefits.get({ id: need("benefit").id });
  equal(benefit.id, S.benefit.id, "id");
  equal(benefit.type, "license_keys", "type");
});

check("product_one_time_create", async () => {
  const body = {
    name: `Compat Lifetime ${RUN}`,
    description: "One-time",
    organizationId: need("org").id,
    prices: [{ amountType: "fixed", priceAmount: 4900, priceCurrency: "usd" }],
  };
  const product = await orElse(polar.products.create(body), "POST", "/v1/products/", {
    name: body.name,
    organization_id: body.organizationId,
    prices: [{ type: "one_time", amount_type: "fixed", price_amount: 4900, price_currency: "usd" }],
  });
  S.product = product;
  ensure(!product.isRecurring, "recurring");
  equal(product.recurringInterval, null, "recurringInterval");
  equal(product.prices.length, 1, "prices");
  equal(product.prices[0].amountType, "fixed", "amountType");
  equal(product.prices[0].priceAmount, 4900, "priceAmount");
});

check("product_update_benefits", async () => {
  const product = await polar.products.updateBenefits({
    id: need("product").id,
    productBenefitsUpdate: { benefits: [need("benefit").id] },
  });
  equal(
    product.benefits.map((b) => b.id),
    [S.benefit.id],
    "benefits",
  );
  S.product = product;
});

check("product_get_and_list", async () => {
  const product = await polar.products.get({ id: need("product").id });
  equal(product.id, S.product.id, "id");
  equal(
    product.benefits.map((b) => b.id),
    [need("benefit").id],
    "benefits",
  );
  const products = await allItems(polar.products.list({ organizationId: need("org").id }));
  equal(
    products.map((p) => p.id),
    [S.product.id],
    "listed",
  );
});

// --- Checkout ------------------------------------------------------------------------------

check("checkout_create", async () => {
  const checkout = await orElse(
    polar.checkouts.create({
      products: [need("product").id],
      externalCustomerId: externalId(),
      customerEmail: email(),
      metadata: { source: "node-0.47" },
    }),
    "POST",
    "/v1/checkouts/custom/",
    {
      product_id: need("product").id,
      external_customer_id: externalId(),
      customer_email: email(),
      metadata: { source: "node-0.47" },
    },
  );
  S.checkout = checkout;
  equal(checkout.status, "open", "status");
  equal(checkout.productId, S.product.id, "productId");
  equal(
    checkout.products.map((p) => p.id),
    [S.product.id],
    "products",
  );
  equal(checkout.amount, 4900, "amount");
  equal(checkout.externalCustomerId, externalId(), "externalCustomerId");
  equal(checkout.customerEmail, email(), "customerEmail");
  equal(checkout.metadata, { source: "node-0.47" }, "metadata");
  ensure(checkout.clientSecret, "no clientSecret");
  ensure(checkout.url, "no url");
});

/** checkouts.clientGet, falling back to the seed-era path so the journey can go on. */
function clientGet(clientSecret) {
  return orElse(
    polar.checkouts.clientGet({ clientSecret }),
    "GET",
    `/v1/checkouts/custom/client/${clientSecret}`,
  );
}

check("checkout_get", async () => {
  const checkout = await orElse(
    polar.checkouts.get({ id: need("checkout").id }),
    "GET",
    `/v1/checkouts/custom/${S.checkout.id}`,
  );
  equal(checkout.id, S.checkout.id, "id");
  equal(checkout.clientSecret, S.checkout.clientSecret, "clientSecret");
});

check("checkout_list", async () => {
  const items = await allItems(polar.checkouts.list({ organizationId: need("org").id }));
  ensure(
    items.some((c) => c.id === need("checkout").id),
    `ids ${items.map((c) => c.id)}`,
  );
});

check("checkout_client_get", async () => {
  const pub = await clientGet(need("checkout").clientSecret);
  equal(pub.id, S.checkout.id, "id");
  equal(pub.status, "open", "status");
  equal(pub.organization.id, need("org").id, "organization.id");
  equal(pub.product?.id, S.product.id, "product.id");
});

check("checkout_client_confirm", async () => {
  const confirm = {
    confirmationTokenId: "tok_visa",
    customerName: "Ada Lovelace",
    customerBillingAddress: { country: "US" },
  };
  const confirmed = await orElse(
    polar.checkouts.clientConfirm({
      clientSecret: need("checkout").clientSecret,
      checkoutConfirmStripe: confirm,
    }),
    "POST",
    `/v1/checkouts/custom/client/${S.checkout.clientSecret}/confirm`,
    { confirmation_token_id: "tok_visa", customer_name: "Ada Lovelace", customer_billing_address: { country: "US" } },
  );
  equal(confirmed.status, "confirmed", "status");
  ensure(confirmed.customerSessionToken, "no customerSessionToken");
  S.confirmToken = confirmed.customerSessionToken;
});

check("checkout_succeeds", async () => {
  const deadline = Date.now() + 10000;
  for (;;) {
    const pub = await clientGet(need("checkout").clientSecret);
    if (pub.status === "succeeded") {
      ensure(pub.customerId, "no customerId");
      S.customerId = pub.customerId;
      return;
    }
    ensure(pub.status === "confirmed", `status ${pub.status}`);
    ensure(Date.now() < deadline, "checkout did not succeed within 10 s");
    await new Promise((r) => setTimeout(r, 200));
  }
});

check("checkout_get_after_success", async () => {
  const checkout = await orElse(
    polar.checkouts.get({ id: need("checkout").id }),
    "GET",
    `/v1/checkouts/custom/${S.checkout.id}`,
  );
  equal(checkout.status, "succeeded", "status");
  equal(checkout.customerId, need("customerId"), "customerId");
});

// --- Orders, subscriptions, customers ------------------------------------------------------

check("orders_list", async () => {
  const orders = await allItems(polar.orders.list({ organizationId: need("org").id }));
  equal(orders.length, 1, "orders");
  const order = orders[0];
  S.order = order;
  equal(order.productId, need("product").id, "productId");
  equal(order.customerId, need("customerId"), "customerId");
  equal(order.checkoutId, need("checkout").id, "checkoutId");
  equal(order.billingReason, "purchase", "billingReason");
  equal(order.status, "paid", "status");
  equal(order.subtotalAmount, 4900, "subtotalAmount");
  equal(order.subscriptionId, null, "subscriptionId");
});

check("orders_get", async () => {
  const order = await polar.orders.get({ id: need("order").id });
  equal(order.id, S.order.id, "id");
  equal(order.customer.email, email(), "customer.email");
  equal(order.customer.externalId, externalId(), "customer.externalId");
  equal(order.product?.id, need("product").id, "product.id");
});

check("subscriptions_list_is_empty", async () => {
  const page = await firstPage(polar.subscriptions.list({ organizationId: need("org").id }));
  equal(page.items, [], "subscriptions of a one-time purchase");
  equal(page.pagination.totalCount, 0, "totalCount");
});

check("customers_list", async () => {
  const customers = await allItems(polar.customers.list({ organizationId: need("org").id }));
  equal(
    customers.map((c) => c.id),
    [need("customerId")],
    "ids",
  );
  equal(customers[0].email, email(), "email");
  equal(customers[0].externalId, externalId(), "externalId");
});

check("customers_get_external", async () => {
  const customer = await polar.customers.getExternal({ externalId: externalId() });
  equal(customer.id, need("customerId"), "id");
  equal(customer.email, email(), "email");
  equal(customer.organizationId, need("org").id, "organizationId");
});

check("customer_state_by_external_id", async () => {
  const state = await polar.customers.getStateExternal({ externalId: externalId() });
  equal(state.id, need("customerId"), "id");
  equal(state.externalId, externalId(), "externalId");
  equal(state.activeSubscriptions, [], "activeSubscriptions");
  equal(
    state.grantedBenefits.map((g) => g.benefitId),
    [need("benefit").id],
    "grantedBenefits",
  );
  equal(state.grantedBenefits[0].benefitType, "license_keys", "benefitType");
});

check("customer_state_by_id", async () => {
  const state = await polar.customers.getState({ id: need("customerId") });
  equal(state.id, S.customerId, "id");
  equal(state.grantedBenefits.length, 1, "grantedBenefits");
});

check("benefit_grants_list", async () => {
  const grants = await allItems(polar.benefitGrants.list({ organizationId: need("org").id }));
  equal(grants.length, 1, "grants");
  equal(grants[0].benefitId, need("benefit").id, "benefitId");
  equal(grants[0].customerId, need("customerId"), "customerId");
  equal(grants[0].isGranted, true, "isGranted");
  equal(grants[0].orderId, need("order").id, "orderId");
});

check("benefit_grants_of_benefit", async () => {
  const grants = await allItems(polar.benefits.grants({ id: need("benefit").id }));
  equal(
    grants.map((g) => g.customerId),
    [need("customerId")],
    "customers",
  );
});

// --- License keys (seller) -----------------------------------------------------------------

check("license_keys_list", async () => {
  const keys = await allItems(polar.licenseKeys.list({ organizationId: need("org").id }));
  equal(keys.length, 1, "keys");
  const key = keys[0];
  S.key = key;
  ensure(key.key.startsWith("TG-"), `key ${key.key}`);
  equal(key.benefitId, need("benefit").id, "benefitId");
  equal(key.customerId, need("customerId"), "customerId");
  equal(key.status, "granted", "status");
  equal(key.limitActivations, 3, "limitActivations");
  equal(key.limitUsage, 100, "limitUsage");
  ensure(key.displayKey.endsWith(key.key.slice(-6)), `displayKey ${key.displayKey}`);
});

check("license_keys_list_by_benefit", async () => {
  const keys = await allItems(polar.licenseKeys.list({ benefitId: need("benefit").id }));
  equal(
    keys.map((k) => k.id),
    [need("key").id],
    "ids",
  );
});

check("license_keys_get", async () => {
  const key = await polar.licenseKeys.get({ id: need("key").id });
  equal(key.key, S.key.key, "key");
  equal(key.activations, [], "activations");
  equal(key.customer.email, email(), "customer.email");
});

check("license_keys_update", async () => {
  const key = await polar.licenseKeys.update({
    id: need("key").id,
    licenseKeyUpdate: { limitUsage: 50 },
  });
  equal(key.limitUsage, 50, "limitUsage");
  equal(key.status, "granted", "status");
});

const keyBody = () => ({ key: need("key").key, organizationId: need("org").id });

check("license_keys_validate_with_token", async () => {
  const v = await polar.licenseKeys.validate(keyBody());
  equal(v.id, S.key.id, "id");
  equal(v.validations, 1, "validations");
  ensure(v.lastValidatedAt instanceof Date, "lastValidatedAt");
  equal(v.activation ?? null, null, "activation");
});

check("license_keys_activate_with_token", async () => {
  const a = await orElse(
    polar.licenseKeys.activate({ ...keyBody(), label: "laptop" }),
    "POST",
    "/v1/customer-portal/license-keys/activate",
    { key: S.key.key, organization_id: S.org.id, label: "laptop" },
  );
  equal(a.label, "laptop", "label");
  equal(a.licenseKeyId, S.key.id, "licenseKeyId");
  equal(a.licenseKey.id, S.key.id, "licenseKey.id");
  S.activation = a;
});

check("license_keys_get_activation", async () => {
  const a = await polar.licenseKeys.getActivation({
    id: need("key").id,
    activationId: need("activation").id,
  });
  equal(a.id, S.activation.id, "id");
  equal(a.label, "laptop", "label");
});

check("license_keys_validate_activation_and_usage", async () => {
  const v = await polar.licenseKeys.validate({
    ...keyBody(),
    activationId: need("activation").id,
    benefitId: need("benefit").id,
    customerId: need("customerId"),
    incrementUsage: 2,
  });
  equal(v.activation?.id, S.activation.id, "activation.id");
  equal(v.usage, 2, "usage");
  equal(v.validations, 2, "validations");
});

check("license_keys_deactivate_with_token", async () => {
  const result = await polar.licenseKeys.deactivate({
    ...keyBody(),
    activationId: need("activation").id,
  });
  equal(result, undefined, "result");
  const key = await polar.licenseKeys.get({ id: S.key.id });
  equal(key.activations, [], "activations left");
});

check("license_keys_validate_unknown_key", async () => {
  await notFound(polar.licenseKeys.validate({ key: `TG-NOPE-${RUN}`, organizationId: need("org").id }));
});

// --- License keys (buyer's program, customer portal, no credentials) -----------------------

check("portal_validate_unauthenticated", async () => {
  const before = (await polar.licenseKeys.get({ id: need("key").id })).validations;
  const v = await anonymous.customerPortal.licenseKeys.validate(keyBody());
  equal(v.id, S.key.id, "id");
  equal(v.key, S.key.key, "key");
  equal(v.validations, before + 1, "validations");
});

check("portal_activate_and_deactivate_unauthenticated", async () => {
  const a = await anonymous.customerPortal.licenseKeys.activate({ ...keyBody(), label: "desktop" });
  equal(a.label, "desktop", "label");
  const v = await anonymous.customerPortal.licenseKeys.validate({
    ...keyBody(),
    activationId: a.id,
  });
  equal(v.activation?.id, a.id, "activation.id");
  const result = await anonymous.customerPortal.licenseKeys.deactivate({
    ...keyBody(),
    activationId: a.id,
  });
  equal(result, undefined, "deactivate result");
  await notFound(
    anonymous.customerPortal.licenseKeys.validate({ ...keyBody(), activationId: a.id }),
  );
});

check("portal_validate_unknown_key", async () => {
  await notFound(
    anonymous.customerPortal.licenseKeys.validate({
      key: `TG-NOPE-${RUN}`,
      organizationId: need("org").id,
    }),
  );
});

// --- Customer sessions and the customer portal ---------------------------------------------

check("customer_session_create", async () => {
  // The portal checks below use S.session.token: this session's, or, when no session could
  // be created, the checkout's customer session token (so they still run).
  if (S.confirmToken) S.session = { token: S.confirmToken };
  const session = await polar.customerSessions.create({ customerId: need("customerId") });
  ensure(session.token, "no token");
  equal(session.customerId, S.customerId, "customerId");
  equal(session.customer.id, S.customerId, "customer.id");
  ensure(session.expiresAt instanceof Date && session.expiresAt > new Date(), "expiresAt");
  ensure(session.customerPortalUrl, "no customerPortalUrl");
  S.session = session;
});

check("customer_session_create_by_external_id", async () => {
  const session = await polar.customerSessions.create({ externalCustomerId: externalId() });
  equal(session.customerId, need("customerId"), "customerId");
  ensure(session.token && session.token !== need("session").token, "a fresh token");
});

check("portal_license_keys_list_with_session", async () => {
  const keys = await allItems(
    polar.customerPortal.licenseKeys.list({ customerSession: need("session").token }, {}),
  );
  equal(
    keys.map((k) => k.id),
    [need("key").id],
    "keys",
  );
  equal(keys[0].key, S.key.key, "key");
});

check("portal_license_keys_get_with_session", async () => {
  const key = await polar.customerPortal.licenseKeys.get(
    { customerSession: need("session").token },
    { id: need("key").id },
  );
  equal(key.id, S.key.id, "id");
  equal(key.activations, [], "activations");
});

check("portal_license_keys_list_with_checkout_token", async () => {
  const keys = await allItems(
    polar.customerPortal.licenseKeys.list(
      { customerSession: need("confirmToken") },
      { benefitId: need("benefit").id },
    ),
  );
  equal(
    keys.map((k) => k.id),
    [need("key").id],
    "keys",
  );
});

check("portal_needs_a_session", async () => {
  await rejects(Unauthorized, allItems(anonymous.customerPortal.licenseKeys.list({}, {})));
});

// --- Checkout links ------------------------------------------------------------------------

check("checkout_link_create", async () => {
  const link = await polar.checkoutLinks.create({
    paymentProcessor: "stripe",
    products: [need("product").id],
    label: `Link ${RUN}`,
  });
  S.link = link;
  equal(link.label, `Link ${RUN}`, "label");
  equal(link.organizationId, need("org").id, "organizationId");
  equal(
    link.products.map((p) => p.id),
    [S.product.id],
    "products",
  );
  ensure(link.clientSecret, "no clientSecret");
  ensure(link.url.includes(link.clientSecret), `url ${link.url}`);
});

check("checkout_link_get_and_list", async () => {
  const link = await polar.checkoutLinks.get({ id: need("link").id });
  equal(link.url, S.link.url, "url");
  const links = await allItems(polar.checkoutLinks.list({ organizationId: need("org").id }));
  equal(
    links.map((l) => l.id),
    [S.link.id],
    "ids",
  );
});

check("checkout_link_follow", async () => {
  const res = await fetch(need("link").url, { redirect: "manual" });
  equal(res.status, 307, "status");
  const location = res.headers.get("location");
  ensure(location, "no Location");
  const page = await fetch(new URL(location, S.link.url), { redirect: "follow" });
  equal(page.status, 200, "checkout page status");
  ensure((page.headers.get("content-type") ?? "").includes("text/html"), "not HTML");
  const html = await page.text();
  ensure(html.toLowerCase().includes("<html"), "not an HTML page");
  const secret = location.match(/polar_c_[A-Za-z0-9_-]+/)?.[0];
  ensure(secret, `no checkout client secret in ${location}`);
  const pub = await polar.checkouts.clientGet({ clientSecret: secret });
  equal(pub.status, "open", "status of the new checkout");
  equal(pub.product?.id, S.product.id, "product of the new checkout");
});

check("checkout_link_update_and_delete", async () => {
  const link = await polar.checkoutLinks.update({
    id: need("link").id,
    checkoutLinkUpdate: { label: `Renamed ${RUN}` },
  });
  equal(link.label, `Renamed ${RUN}`, "label");
  const result = await polar.checkoutLinks.delete({ id: S.link.id });
  equal(result, undefined, "delete result");
  await notFound(polar.checkoutLinks.get({ id: S.link.id }));
});

// --- Webhook endpoints ---------------------------------------------------------------------

check("webhook_endpoint_create", async () => {
  const endpoint = await polar.webhooks.createWebhookEndpoint({
    url: "https://example.com/hook",
    format: "raw",
    events: ["order.created", "order.paid"],
    organizationId: need("org").id,
  });
  S.endpoint = endpoint;
  equal(endpoint.url, "https://example.com/hook", "url");
  equal(endpoint.format, "raw", "format");
  equal([...endpoint.events].sort(), ["order.created", "order.paid"], "events");
  equal(endpoint.organizationId, S.org.id, "organizationId");
  ensure(endpoint.secret, "no secret");
});

check("webhook_endpoint_get_and_list", async () => {
  const endpoint = await polar.webhooks.getWebhookEndpoint({ id: need("endpoint").id });
  equal(endpoint.id, S.endpoint.id, "id");
  const endpoints = await allItems(
    polar.webhooks.listWebhookEndpoints({ organizationId: need("org").id }),
  );
  equal(
    endpoints.map((e) => e.id),
    [S.endpoint.id],
    "ids",
  );
});

check("webhook_endpoint_delete", async () => {
  const result = await polar.webhooks.deleteWebhookEndpoint({ id: need("endpoint").id });
  equal(result, undefined, "result");
  await notFound(polar.webhooks.getWebhookEndpoint({ id: S.endpoint.id }));
});

// --- Organization access tokens --------------------------------------------------------------

/** A client that authenticates with an organization access token. */
function asOrganization(token) {
  return sdk(new Polar({ accessToken: token, serverURL: URL_, timeoutMs: TIMEOUT_MS }));
}

check("organization_access_token_create", async () => {
  const before = Date.now();
  const created = await polar.organizationAccessTokens.create({
    organizationId: need("org").id,
    comment: `Server ${RUN}`,
    expiresIn: "P30D",
    scopes: ["products:read", "license_keys:read"],
  });
  S.oat = created;
  ensure(created.token.startsWith("polar_oat_"), `token ${created.token}`);
  const t = created.organizationAccessToken;
  equal(t.organizationId, S.org.id, "organizationId");
  equal(t.comment, `Server ${RUN}`, "comment");
  equal([...t.scopes].sort(), ["license_keys:read", "products:read"], "scopes");
  equal(t.lastUsedAt, null, "lastUsedAt");
  const days = (t.expiresAt - before) / 86400000;
  ensure(days > 29.9 && days < 30.1, `expiresAt ${t.expiresAt.toISOString()}`);
});

check("organization_access_token_acts_as_its_organization", async () => {
  const asOrg = asOrganization(need("oat").token);
  const products = await allItems(asOrg.products.list({}));
  equal(
    products.map((p) => p.id),
    [need("product").id],
    "products",
  );
  const keys = await allItems(asOrg.licenseKeys.list({}));
  equal(
    keys.map((k) => k.id),
    [need("key").id],
    "license keys",
  );
  // Its scopes only: no products:write.
  const e = await rejects(
    SDKError,
    asOrg.products.create({
      name: `Refused ${RUN}`,
      prices: [{ amountType: "fixed", priceAmount: 100, priceCurrency: "usd" }],
    }),
  );
  equal(e.statusCode, 403, "status of a write without the scope");
});

check("organization_access_token_list_and_update", async () => {
  const tokens = await allItems(
    polar.organizationAccessTokens.list({ organizationId: need("org").id }),
  );
  equal(
    tokens.map((t) => t.id),
    [need("oat").organizationAccessToken.id],
    "ids",
  );
  const sorted = await allItems(
    polar.organizationAccessTokens.list({ organizationId: S.org.id, sorting: ["-comment"] }),
  );
  equal(sorted.length, 1, "sorted list");
  const updated = await polar.organizationAccessTokens.update({
    id: S.oat.organizationAccessToken.id,
    organizationAccessTokenUpdate: { comment: `Renamed ${RUN}`, scopes: ["products:read"] },
  });
  equal(updated.comment, `Renamed ${RUN}`, "comment");
  equal(updated.scopes, ["products:read"], "scopes");
  ensure(updated.modifiedAt instanceof Date, "modifiedAt");
});

check("organization_access_token_scopes_within_the_callers", async () => {
  const e = await rejects(
    HTTPValidationError,
    polar.organizationAccessTokens.create({
      organizationId: need("org").id,
      comment: "Too much",
      scopes: ["organization_access_tokens:write"],
    }),
  );
  equal(e.detail?.[0]?.loc, ["body", "scopes", 0], "loc");
});

check("organization_access_token_delete", async () => {
  const result = await polar.organizationAccessTokens.delete({
    id: need("oat").organizationAccessToken.id,
  });
  equal(result, undefined, "result");
  const e = await rejects(SDKError, allItems(asOrganization(S.oat.token).products.list({})));
  equal(e.statusCode, 401, "status with the deleted token");
  const tokens = await allItems(
    polar.organizationAccessTokens.list({ organizationId: S.org.id }),
  );
  equal(tokens, [], "tokens left");
});

// --- Errors ----------------------------------------------------------------------------------

check("unknown_ids_are_not_found", async () => {
  await notFound(polar.organizations.get({ id: randomUUID() }));
  await notFound(polar.checkouts.get({ id: randomUUID() }));
  await notFound(polar.orders.get({ id: randomUUID() }));
  await notFound(polar.licenseKeys.get({ id: randomUUID() }));
  await notFound(polar.customers.getExternal({ externalId: `nobody-${RUN}` }));
  await notFound(polar.customers.getStateExternal({ externalId: `nobody-${RUN}` }));
});

check("invalid_uuid_is_a_validation_error", async () => {
  const e = await rejects(HTTPValidationError, polar.licenseKeys.get({ id: "not-a-uuid" }));
  ensure(Array.isArray(e.detail) && e.detail.length > 0, "no validation items");
});

check("missing_credentials_are_unauthorized", async () => {
  const e = await rejects(
    Unauthorized,
    allItems(anonymous.licenseKeys.list({ organizationId: need("org").id })),
  );
  ensure(e.detail, "no detail");
});

// --- The signed-in buyer: the customer portal ----------------------------------------------
// Last but the version checks, so that the subscription bought here changes nothing the
// seller's checks above count.

/** The customer session of the journey's buyer, as the portal calls take it. */
const buyer = () => ({ customerSession: need("portalToken") });

check("portal_session_for_the_buyer", async () => {
  const session = await polar.customerSessions.create({ customerId: need("customerId") });
  ensure(session.token.startsWith("polar_cst_"), `token ${session.token.slice(0, 12)}`);
  S.portalToken = session.token;
  const url = new URL(session.customerPortalUrl);
  equal(`${url.origin}${url.pathname}`, `${URL_}/portal/${need("org").slug}`, "customerPortalUrl");
  equal(url.searchParams.get("customer_session_token"), session.token, "customer_session_token");
  equal(url.searchParams.get("email"), email(), "email");
});

check("portal_buys_a_subscription", async () => {
  const monthly = await polar.products.create({
    name: `Compat 047 Monthly ${RUN}`,
    organizationId: need("org").id,
    recurringInterval: "month",
    prices: [{ amountType: "fixed", priceAmount: 900, priceCurrency: "usd" }],
  });
  S.monthly = monthly;
  equal(monthly.isRecurring, true, "isRecurring");
  const checkout = await polar.checkouts.create({
    products: [monthly.id],
    customerId: need("customerId"),
  });
  await polar.checkouts.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { confirmationTokenId: "tok_visa", customerBillingAddress: { country: "US" } },
  });
  const deadline = Date.now() + 10000;
  while ((await clientGet(checkout.clientSecret)).status !== "succeeded") {
    ensure(Date.now() < deadline, "the subscription's checkout did not succeed within 10 s");
    await new Promise((r) => setTimeout(r, 200));
  }
});

check("portal_session_introspect_and_user", async () => {
  const session = await polar.customerPortal.customerSession.introspect(buyer());
  ensure(session.expiresAt instanceof Date && session.expiresAt > new Date(), "expiresAt");
  const user = await polar.customerPortal.customerSession.getAuthenticatedUser(buyer());
  equal(user.type, "customer", "type");
  equal(user.customerId, need("customerId"), "customerId");
  equal(user.email, email(), "email");
});

check("portal_customer_me", async () => {
  const me = await polar.customerPortal.customers.get(buyer());
  equal(me.id, need("customerId"), "id");
  equal(me.email, email(), "email");
  equal(me.name, "Ada Lovelace", "name");
  equal(me.oauthAccounts, {}, "oauthAccounts");
});

check("portal_orders_list_and_get", async () => {
  const orders = await allItems(polar.customerPortal.orders.list(buyer(), {}));
  const byProduct = Object.fromEntries(orders.map((o) => [o.productId, o]));
  equal(
    Object.keys(byProduct).sort(),
    [need("product").id, need("monthly").id].sort(),
    "products of the buyer's orders",
  );
  const oneTime = byProduct[S.product.id];
  equal(oneTime.id, need("order").id, "id");
  equal(oneTime.product.organization.id, need("org").id, "product.organization.id");
  const recurring = byProduct[S.monthly.id];
  equal(recurring.billingReason, "subscription_create", "billingReason");
  ensure(recurring.subscriptionId, "subscriptionId");
  S.portalSubscriptionId = recurring.subscriptionId;
  const order = await polar.customerPortal.orders.get(buyer(), { id: S.order.id });
  equal(order.id, S.order.id, "id");
  equal(order.totalAmount, oneTime.totalAmount, "totalAmount");
  await notFound(polar.customerPortal.orders.get(buyer(), { id: randomUUID() }));
});

check("portal_subscriptions_list_get_cancel_uncancel", async () => {
  const subs = await allItems(polar.customerPortal.subscriptions.list(buyer(), {}));
  const id = need("portalSubscriptionId");
  equal(
    subs.map((s) => s.id),
    [id],
    "subscriptions",
  );
  let sub = await polar.customerPortal.subscriptions.get(buyer(), { id });
  equal(sub.status, "active", "status");
  equal(sub.product.id, need("monthly").id, "product.id");
  sub = await polar.customerPortal.subscriptions.update(buyer(), {
    id,
    customerSubscriptionUpdate: { cancelAtPeriodEnd: true, cancellationReason: "switched_service" },
  });
  equal(sub.cancelAtPeriodEnd, true, "cancelAtPeriodEnd");
  equal(sub.customerCancellationReason, "switched_service", "customerCancellationReason");
  const e = await rejects(
    AlreadyCanceledSubscription,
    polar.customerPortal.subscriptions.cancel(buyer(), { id }),
  );
  ensure(e.detail, "no detail");
  sub = await polar.customerPortal.subscriptions.update(buyer(), {
    id,
    customerSubscriptionUpdate: { cancelAtPeriodEnd: false },
  });
  equal(sub.cancelAtPeriodEnd, false, "cancelAtPeriodEnd after uncancel");
  await notFound(polar.customerPortal.subscriptions.get(buyer(), { id: randomUUID() }));
});

check("portal_license_keys_list_and_get", async () => {
  const keys = await allItems(polar.customerPortal.licenseKeys.list(buyer(), {}));
  equal(
    keys.map((k) => k.id),
    [need("key").id],
    "keys",
  );
  const key = await polar.customerPortal.licenseKeys.get(buyer(), { id: S.key.id });
  equal(key.id, S.key.id, "id");
});

check("portal_benefit_grants_list_and_get", async () => {
  const grants = await allItems(polar.customerPortal.benefitGrants.list(buyer(), {}));
  const grant = grants.find((g) => g.benefitId === need("benefit").id);
  ensure(grant, `no grant of the license key benefit in ${show(grants.map((g) => g.benefitId))}`);
  equal(grant.customerId, need("customerId"), "customerId");
  equal(grant.orderId, need("order").id, "orderId");
  equal(grant.benefit.organization.id, need("org").id, "benefit.organization.id");
  equal(grant.properties.licenseKeyId, need("key").id, "properties.licenseKeyId");
  const again = await polar.customerPortal.benefitGrants.get(buyer(), { id: grant.id });
  equal(again.id, grant.id, "id");
  await notFound(polar.customerPortal.benefitGrants.get(buyer(), { id: randomUUID() }));
});

check("portal_token_is_refused_on_the_sellers_api", async () => {
  const asBuyer = sdk(
    new Polar({ accessToken: need("portalToken"), serverURL: URL_, timeoutMs: TIMEOUT_MS }),
  );
  for (const call of [
    () => allItems(asBuyer.products.list({ organizationId: need("org").id })),
    () => asBuyer.orders.get({ id: need("order").id }),
  ]) {
    try {
      await call();
    } catch (e) {
      if (e instanceof SDKError) equal(e.statusCode, 401, "status");
      else ensure(e instanceof Unauthorized, `${e?.constructor?.name}: ${e}`);
      continue;
    }
    throw new Error("the customer session token was accepted");
  }
});

// --- Versioning (raw fetch) ------------------------------------------------------------------

check("every_answer_says_polar_version_2026_04", async () => {
  const api = EXCHANGES.filter((x) => x.path.startsWith("/v1/") && x.sentVersion === null);
  ensure(api.length > 10, `only ${api.length} exchanges recorded`);
  const wrong = api.filter((x) => x.answeredVersion !== DEFAULT_VERSION);
  ensure(
    wrong.length === 0,
    `${wrong.length} of ${api.length} answers without Polar-Version ${DEFAULT_VERSION}: ` +
      show(wrong.slice(0, 5)),
  );
});

check("raw_default_version_header", async () => {
  const res = await fetch(`${URL_}/v1/organizations/${need("org").id}`, {
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  equal(res.status, 200, "status");
  equal(res.headers.get("polar-version"), DEFAULT_VERSION, "Polar-Version");
  const err = await fetch(`${URL_}/v1/organizations/${randomUUID()}`, {
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  equal(err.status, 404, "status of an unknown id");
  equal(err.headers.get("polar-version"), DEFAULT_VERSION, "Polar-Version on a 404");
});

check("raw_unknown_version_is_not_found", async () => {
  for (const version of ["1999-01", "latest"]) {
    const res = await fetch(`${URL_}/v1/organizations/${need("org").id}`, {
      headers: { Authorization: `Bearer ${TOKEN}`, "Polar-Version": version },
    });
    equal(res.status, 404, `status for ${version}`);
    equal(await res.json(), { detail: "Not Found" }, `body for ${version}`);
  }
});

// --- Runner ----------------------------------------------------------------------------------

/** What the answer holds at `path`, for a zod issue. */
function describeAt(root, path) {
  let v = root;
  for (const k of path) {
    if (v === null || typeof v !== "object" || !(k in v)) return "missing";
    v = v[k];
  }
  return v === null ? "null" : clip(JSON.stringify(v), 80);
}

/** The zod issues of a ResponseValidationError, one line each, unions flattened. */
function zodIssues(e) {
  const out = [];
  const at = (path) => describeAt(e.rawValue, path);
  // A union branch whose literal (a discriminator) differs from a value present in the answer
  // is not the branch the answer was meant to be.
  const score = (issues, prefix) =>
    issues.reduce((n, i) => {
      const path = [...prefix, ...(i.path ?? [])];
      if (i.code === "invalid_union" && i.errors?.length) {
        return n + Math.min(...i.errors.map((b) => score(b, path)));
      }
      return n + (i.values && at(path) !== "missing" ? 100 : 1);
    }, 0);
  const walk = (issues, prefix) => {
    for (const i of issues ?? []) {
      const path = [...prefix, ...(i.path ?? [])];
      if (i.code === "invalid_union" && Array.isArray(i.errors) && i.errors.length) {
        const literals = i.errors.every((b) => b.length === 1 && b[0].values && !b[0].path?.length);
        if (literals) {
          const values = i.errors.flatMap((b) => b[0].values);
          out.push(`${path.join(".")}: expected one of ${values.map((x) => JSON.stringify(x)).join("|")}, got ${at(path)}`);
          continue;
        }
        const best = [...i.errors].sort((a, b) => score(a, path) - score(b, path))[0];
        if (best.length) {
          walk(best, path);
          continue;
        }
      }
      const got = at(path);
      const where = path.join(".") || "(root)";
      if (got === "missing") out.push(`${where}: required, missing`);
      else if (got === "null") out.push(`${where}: not nullable, got null`);
      else {
        const wanted = i.expected
          ? `expected ${i.expected}`
          : i.values
            ? `expected one of ${i.values.map((x) => JSON.stringify(x)).join("|")}`
            : i.code;
        out.push(`${where}: ${wanted}, got ${got}`);
      }
    }
  };
  walk(e?.cause?.issues, []);
  return out;
}

function report(e) {
  if (SOFT.some((x) => x.error === e) && !(e instanceof ResponseValidationError)) {
    console.log(`     ${e?.constructor?.name}: ${clip(e?.message ?? String(e), 400)}`);
  } else if (e instanceof ResponseValidationError) {
    for (const line of zodIssues(e).slice(0, 40)) console.log(`     zod ${line}`);
  } else if (e instanceof SDKError) {
    console.log(`     status ${e.statusCode} body ${clip(e.body ?? "", 400)}`);
  }
}

async function main() {
  let passed = 0;
  let failed = 0;
  for (const [name, fn] of CHECKS) {
    const started = Date.now();
    TRACE = [];
    SOFT = [];
    let error = null;
    try {
      await fn();
    } catch (e) {
      error = e;
    }
    if (!error && !SOFT.length) {
      passed += 1;
      console.log(`ok   ${name} (${((Date.now() - started) / 1000).toFixed(2)}s)`);
      continue;
    }
    failed += 1;
    const first = SOFT.length ? SOFT[0].error : error;
    console.log(`FAIL ${name}: ${first?.constructor?.name}: ${first?.message ?? first}`);
    const seen = new Set();
    for (const { error: e, exchange } of SOFT) {
      const key = `${exchange?.method} ${exchange?.url} ${e?.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (exchange) console.log(showTrace([exchange]));
      if (e !== first || e instanceof ResponseValidationError) report(e);
      console.error(`--- ${name}: ${e instanceof ResponseValidationError ? e.pretty() : e.stack}`);
    }
    if (error) {
      if (SOFT.length) console.log(`     then ${error?.constructor?.name}: ${error?.message ?? error}`);
      report(error);
      if (!(error instanceof ResponseValidationError) || !SOFT.length) {
        const trace = TRACE.slice(-2);
        if (trace.length) console.log(showTrace(trace));
      }
      console.error(`--- ${name}`);
      console.error(error?.stack ?? error);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
