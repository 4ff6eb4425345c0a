// A seller's and a buyer's journey through Tollgate with Polar's official JS SDK 1.0.
//
// Pinned: @polar-sh/sdk 1.0.1 (package.json, package-lock.json). 1.0 has one client module per
// API version (`@polar-sh/sdk/2026-04`, `/2026-10`, `/2027-01`) and sends `Polar-Version` with
// every request; TOLLGATE_API_VERSION picks the module (default 2026-04). 1.0 does not check
// answers at runtime (any 2xx is returned as parsed JSON), so this journey checks them itself:
// every answer is matched against the TypeScript types the package declares for the chosen
// version (its `.d.mts` declarations, read at run time by types.mjs, which must sit beside
// this script): a required field that is missing, a null in a field that is not nullable, a
// wrong type or a value outside a literal union fails the check.
//
// Reads TOLLGATE_URL, TOLLGATE_TOKEN (a personal access token with every scope, e.g. the
// bootstrap token of a fresh server) and TOLLGATE_API_VERSION. Every check is a named
// function; a failing check prints its name, the error, the type mismatches and the HTTP
// exchanges it made, and the run goes on with the next one (checks that need an earlier
// result fail with it). The last line is `N passed, M failed`; the exit code is 1 when M > 0.
//
// By hand: npm ci here (with types.mjs beside), then
// TOLLGATE_URL=... TOLLGATE_TOKEN=... TOLLGATE_API_VERSION=2026-10 node journey.mjs

import { randomUUID } from "node:crypto";

import { clip, loadTypes, mismatches } from "./types.mjs";

const VERSION = process.env.TOLLGATE_API_VERSION || "2026-04";
if (!["2026-04", "2026-10", "2027-01"].includes(VERSION)) {
  throw new Error(`TOLLGATE_API_VERSION must be 2026-04, 2026-10 or 2027-01, not ${VERSION}`);
}
const URL_ = process.env.TOLLGATE_URL.replace(/\/+$/, "");
const TOKEN = process.env.TOLLGATE_TOKEN;
const RUN = randomUUID().slice(0, 8);
/** Seconds (1.0 takes its timeout in seconds). */
const TIMEOUT = 15;

const MODULE = `@polar-sh/sdk/${VERSION}`;
const { createPolar, errors } = await import(MODULE);

// --- HTTP trace: every exchange is recorded, so a failure can show what was sent and answered.

/** Exchanges of the running check. */
let TRACE = [];
/** Every exchange of the run: {method, path, sentVersion, status, answeredVersion}. */
const EXCHANGES = [];
const realFetch = globalThis.fetch;

globalThis.fetch = async (input, init) => {
  // The journey's own requests get the clients' timeout too.
  if (!(input instanceof Request) && !init?.signal) {
    init = { ...init, signal: AbortSignal.timeout(TIMEOUT * 1000) };
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
  EXCHANGES.push({
    method,
    path: new URL(url).pathname,
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

// The package's TypeScript types for this version (types.mjs).
const MODELS = loadTypes(MODULE);

// --- Check harness (as tests/clients/node/journey.mjs) ---------------------------------------

const options = { accessToken: TOKEN, baseUrl: URL_, timeout: TIMEOUT };
const polar = createPolar(options);

/** Type mismatches and tolerated SDK errors of the running check (they fail it at its end). */
let SOFT = [];

/**
 * Checks `value`, an answer the package declares as `typeName`, against that type; a mismatch
 * fails the running check at its end, the check goes on with the value.
 */
function typed(typeName, value) {
  const found = mismatches(value, { k: "ref", name: typeName, args: [] }, []);
  if (found.length) {
    SOFT.push({
      error: new Error(`answer is not a ${VERSION} ${typeName}`),
      lines: found.map((x) => `${typeName}${x.path ? `.${x.path}` : ""}: ${x.text}`),
      exchange: TRACE[TRACE.length - 1],
    });
  }
  return value;
}

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
  throw new Error(`expected ${cls.name}, got a result: ${clip(show(result), 300)}`);
}

/** A 404 parsed as ResourceNotFound with Polar's body. */
async function notFound(promise) {
  const e = await rejects(errors.ResourceNotFound, promise);
  equal(e.error?.error, "ResourceNotFound", "error");
  ensure(typeof e.error?.detail === "string" && e.error.detail, `no detail in ${show(e.error)}`);
  return e;
}

/**
 * Awaits an SDK call; if it fails, makes the request the SDK should not need (e.g. a seed-era
 * path or a field an older Tollgate still wants), keeps its answer for the later checks, and
 * fails the running check with the SDK's error all the same.
 */
async function orElse(promise, method, path, body) {
  try {
    return await promise;
  } catch (e) {
    const exchange = TRACE[TRACE.length - 1];
    const res = await fetch(`${URL_}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${TOKEN}`,
        "Content-Type": "application/json",
        "Polar-Version": VERSION,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.ok) {
      SOFT.push({ error: e, lines: [], exchange });
      return res.json();
    }
    throw e;
  }
}

const email = () => `buyer-${RUN}@example.com`;
const externalId = () => `ext-${RUN}`;
const slug = `c10-${VERSION.replace("-", "")}-${RUN}`;

// --- Seller: organization, benefit, product ------------------------------------------------

check("organization_create", async () => {
  const org = typed(
    "Organization",
    await polar.organizations.create({ name: `Compat 1.0 ${RUN}`, slug }),
  );
  S.org = org;
  equal(org.slug, slug, "slug");
  equal(org.name, `Compat 1.0 ${RUN}`, "name");
  ensure(!Number.isNaN(Date.parse(org.created_at)), `created_at ${org.created_at}`);
});

check("organization_get", async () => {
  const org = typed("Organization", await polar.organizations.get(need("org").id));
  equal(org.id, S.org.id, "id");
  equal(org.slug, slug, "slug");
});

check("organization_list", async () => {
  const page = typed("ListResourceOrganization", await polar.organizations.list({ slug }));
  equal(
    page.items.map((o) => o.id),
    [need("org").id],
    "ids",
  );
  equal(page.pagination.total_count, 1, "total_count");
});

check("benefit_license_keys_create", async () => {
  const benefit = typed(
    "Benefit",
    await polar.benefits.create({
      type: "license_keys",
      description: "Compat 1.0 license key",
      organization_id: need("org").id,
      properties: {
        prefix: "TG",
        activations: { limit: 3, enable_customer_admin: true },
        limit_usage: 100,
      },
    }),
  );
  S.benefit = benefit;
  equal(benefit.type, "license_keys", "type");
  equal(benefit.organization_id, S.org.id, "organization_id");
  equal(benefit.properties?.prefix, "TG", "prefix");
  equal(benefit.properties?.activations?.limit, 3, "activations.limit");
  equal(benefit.properties?.limit_usage, 100, "limit_usage");
});

check("benefit_get", async () => {
  const benefit = typed("Benefit", await polar.benefits.get(need("benefit").id));
  equal(benefit.id, S.benefit.id, "id");
  equal(benefit.type, "license_keys", "type");
});

check("product_one_time_create", async () => {
  const body = {
    name: `Compat Lifetime ${RUN}`,
    description: "One-time",
    organization_id: need("org").id,
    prices: [{ amount_type: "fixed", price_amount: 4900, price_currency: "usd" }],
  };
  const product = typed(
    "Product",
    await orElse(polar.products.create(body), "POST", "/v1/products/", {
      ...body,
      prices: [{ ...body.prices[0], type: "one_time" }],
    }),
  );
  S.product = product;
  equal(product.is_recurring, false, "is_recurring");
  equal(product.recurring_interval, null, "recurring_interval");
  equal(product.prices.length, 1, "prices");
  equal(product.prices[0].amount_type, "fixed", "amount_type");
  equal(product.prices[0].price_amount, 4900, "price_amount");
});

check("product_update_benefits", async () => {
  const product = typed(
    "Product",
    await polar.products.updateBenefits(need("product").id, { benefits: [need("benefit").id] }),
  );
  equal(
    product.benefits.map((b) => b.id),
    [S.benefit.id],
    "benefits",
  );
  S.product = product;
});

check("product_get_and_list", async () => {
  const product = typed("Product", await polar.products.get(need("product").id));
  equal(
    product.benefits.map((b) => b.id),
    [need("benefit").id],
    "benefits",
  );
  const page = typed(
    "ListResourceProduct",
    await polar.products.list({ organization_id: need("org").id }),
  );
  equal(
    page.items.map((p) => p.id),
    [S.product.id],
    "listed",
  );
});

// --- Checkout ------------------------------------------------------------------------------

/** checkouts.clientGet, falling back to the seed-era path so the journey can go on. */
async function clientGet(clientSecret) {
  return typed(
    "CheckoutPublic",
    await orElse(
      polar.checkouts.clientGet(clientSecret),
      "GET",
      `/v1/checkouts/custom/client/${clientSecret}`,
    ),
  );
}

check("checkout_create", async () => {
  const checkout = typed(
    "Checkout",
    await orElse(
      polar.checkouts.create({
        products: [need("product").id],
        external_customer_id: externalId(),
        customer_email: email(),
        metadata: { source: "node-1.0" },
      }),
      "POST",
      "/v1/checkouts/custom/",
      {
        product_id: need("product").id,
        external_customer_id: externalId(),
        customer_email: email(),
        metadata: { source: "node-1.0" },
      },
    ),
  );
  S.checkout = checkout;
  equal(checkout.status, "open", "status");
  equal(checkout.product_id, S.product.id, "product_id");
  equal(
    (checkout.products ?? []).map((p) => p.id),
    [S.product.id],
    "products",
  );
  equal(checkout.amount, 4900, "amount");
  equal(checkout.external_customer_id, externalId(), "external_customer_id");
  equal(checkout.customer_email, email(), "customer_email");
  equal(checkout.metadata, { source: "node-1.0" }, "metadata");
  ensure(checkout.client_secret, "no client_secret");
  ensure(checkout.url, "no url");
});

check("checkout_get", async () => {
  const checkout = typed(
    "Checkout",
    await orElse(
      polar.checkouts.get(need("checkout").id),
      "GET",
      `/v1/checkouts/custom/${S.checkout.id}`,
    ),
  );
  equal(checkout.id, S.checkout.id, "id");
  equal(checkout.client_secret, S.checkout.client_secret, "client_secret");
});

check("checkout_list", async () => {
  const page = typed(
    "ListResourceCheckout",
    await polar.checkouts.list({ organization_id: need("org").id }),
  );
  ensure(
    page.items.some((c) => c.id === need("checkout").id),
    `ids ${page.items.map((c) => c.id)}`,
  );
});

check("checkout_client_get", async () => {
  const pub = await clientGet(need("checkout").client_secret);
  equal(pub.id, S.checkout.id, "id");
  equal(pub.status, "open", "status");
  equal(pub.organization?.id, need("org").id, "organization.id");
  equal(pub.product?.id, S.product.id, "product.id");
});

check("checkout_client_confirm", async () => {
  const body = {
    confirmation_token_id: "tok_visa",
    customer_name: "Ada Lovelace",
    customer_billing_address: { country: "US" },
  };
  const confirmed = typed(
    "CheckoutPublicConfirmed",
    await orElse(
      polar.checkouts.clientConfirm(need("checkout").client_secret, body),
      "POST",
      `/v1/checkouts/custom/client/${S.checkout.client_secret}/confirm`,
      body,
    ),
  );
  equal(confirmed.status, "confirmed", "status");
  ensure(confirmed.customer_session_token, "no customer_session_token");
  S.confirmToken = confirmed.customer_session_token;
});

check("checkout_succeeds", async () => {
  const deadline = Date.now() + 10000;
  for (;;) {
    const pub = await clientGet(need("checkout").client_secret);
    if (pub.status === "succeeded") {
      ensure(pub.customer_id, "no customer_id");
      S.customerId = pub.customer_id;
      return;
    }
    ensure(pub.status === "confirmed", `status ${pub.status}`);
    ensure(Date.now() < deadline, "checkout did not succeed within 10 s");
    await new Promise((r) => setTimeout(r, 200));
  }
});

check("checkout_get_after_success", async () => {
  const checkout = typed(
    "Checkout",
    await orElse(
      polar.checkouts.get(need("checkout").id),
      "GET",
      `/v1/checkouts/custom/${S.checkout.id}`,
    ),
  );
  equal(checkout.status, "succeeded", "status");
  equal(checkout.customer_id, need("customerId"), "customer_id");
});

// --- Orders, subscriptions, customers ------------------------------------------------------

check("orders_list", async () => {
  const page = typed("ListResourceOrder", await polar.orders.list({ organization_id: need("org").id }));
  equal(page.items.length, 1, "orders");
  const order = page.items[0];
  S.order = order;
  equal(order.product_id, need("product").id, "product_id");
  equal(order.customer_id, need("customerId"), "customer_id");
  equal(order.checkout_id, need("checkout").id, "checkout_id");
  equal(order.billing_reason, "purchase", "billing_reason");
  equal(order.status, "paid", "status");
  equal(order.subtotal_amount, 4900, "subtotal_amount");
  equal(order.subscription_id, null, "subscription_id");
});

check("orders_get", async () => {
  const order = typed("Order", await polar.orders.get(need("order").id));
  equal(order.id, S.order.id, "id");
  equal(order.customer?.email, email(), "customer.email");
  equal(order.customer?.external_id, externalId(), "customer.external_id");
  equal(order.product?.id, need("product").id, "product.id");
});

check("subscriptions_list_is_empty", async () => {
  const page = typed(
    "ListResourceSubscription",
    await polar.subscriptions.list({ organization_id: need("org").id }),
  );
  equal(page.items, [], "subscriptions of a one-time purchase");
  equal(page.pagination.total_count, 0, "total_count");
});

check("customers_list", async () => {
  const page = typed(
    "ListResourceCustomer",
    await polar.customers.list({ organization_id: need("org").id }),
  );
  equal(
    page.items.map((c) => c.id),
    [need("customerId")],
    "ids",
  );
  equal(page.items[0].email, email(), "email");
  equal(page.items[0].external_id, externalId(), "external_id");
});

check("customers_get_external", async () => {
  const customer = typed("Customer", await polar.customers.getExternal(externalId()));
  equal(customer.id, need("customerId"), "id");
  equal(customer.email, email(), "email");
  equal(customer.organization_id, need("org").id, "organization_id");
});

check("customer_state_by_external_id", async () => {
  const state = typed("CustomerState", await polar.customers.getStateExternal(externalId()));
  equal(state.id, need("customerId"), "id");
  equal(state.external_id, externalId(), "external_id");
  equal(state.active_subscriptions, [], "active_subscriptions");
  equal(
    (state.granted_benefits ?? []).map((g) => g.benefit_id),
    [need("benefit").id],
    "granted_benefits",
  );
  equal(state.granted_benefits[0].benefit_type, "license_keys", "benefit_type");
});

check("customer_state_by_id", async () => {
  const state = typed("CustomerState", await polar.customers.getState(need("customerId")));
  equal(state.id, S.customerId, "id");
  equal(state.granted_benefits?.length, 1, "granted_benefits");
});

check("benefit_grants_list", async () => {
  const page = typed(
    "ListResourceBenefitGrant",
    await polar.benefitGrants.list({ organization_id: need("org").id }),
  );
  equal(page.items.length, 1, "grants");
  const grant = page.items[0];
  equal(grant.benefit_id, need("benefit").id, "benefit_id");
  equal(grant.customer_id, need("customerId"), "customer_id");
  equal(grant.is_granted, true, "is_granted");
  equal(grant.order_id, need("order").id, "order_id");
});

check("benefit_grants_of_benefit", async () => {
  const page = typed(
    "ListResourceBenefitGrant",
    await polar.benefits.grants(need("benefit").id, {}),
  );
  equal(
    page.items.map((g) => g.customer_id),
    [need("customerId")],
    "customers",
  );
});

// --- License keys (seller) -----------------------------------------------------------------

check("license_keys_list", async () => {
  const page = typed(
    "ListResourceLicenseKeyRead",
    await polar.licenseKeys.list({ organization_id: need("org").id }),
  );
  equal(page.items.length, 1, "keys");
  const key = page.items[0];
  S.key = key;
  ensure(key.key.startsWith("TG-"), `key ${key.key}`);
  equal(key.benefit_id, need("benefit").id, "benefit_id");
  equal(key.customer_id, need("customerId"), "customer_id");
  equal(key.status, "granted", "status");
  equal(key.limit_activations, 3, "limit_activations");
  equal(key.limit_usage, 100, "limit_usage");
  ensure(key.display_key?.endsWith(key.key.slice(-6)), `display_key ${key.display_key}`);
});

check("license_keys_list_by_benefit", async () => {
  const page = typed(
    "ListResourceLicenseKeyRead",
    await polar.licenseKeys.list({ benefit_id: need("benefit").id }),
  );
  equal(
    page.items.map((k) => k.id),
    [need("key").id],
    "ids",
  );
});

check("license_keys_get", async () => {
  const key = typed("LicenseKeyWithActivations", await polar.licenseKeys.get(need("key").id));
  equal(key.key, S.key.key, "key");
  equal(key.activations, [], "activations");
  equal(key.customer?.email, email(), "customer.email");
});

check("license_keys_update", async () => {
  const key = typed(
    "LicenseKeyRead",
    await polar.licenseKeys.update(need("key").id, { limit_usage: 50 }),
  );
  equal(key.limit_usage, 50, "limit_usage");
  equal(key.status, "granted", "status");
});

const keyBody = () => ({ key: need("key").key, organization_id: need("org").id });

check("license_keys_validate_with_token", async () => {
  const v = typed("ValidatedLicenseKey", await polar.licenseKeys.validate(keyBody()));
  equal(v.id, S.key.id, "id");
  equal(v.validations, 1, "validations");
  ensure(v.last_validated_at, "last_validated_at");
  equal(v.activation ?? null, null, "activation");
});

check("license_keys_activate_with_token", async () => {
  const a = typed(
    "LicenseKeyActivationCreated",
    await orElse(
      polar.licenseKeys.activate({ ...keyBody(), label: "laptop" }),
      "POST",
      "/v1/customer-portal/license-keys/activate",
      { ...keyBody(), label: "laptop" },
    ),
  );
  equal(a.label, "laptop", "label");
  equal(a.license_key_id, S.key.id, "license_key_id");
  S.activation = a;
});

check("license_keys_get_activation", async () => {
  const a = typed(
    "LicenseKeyActivationRead",
    await polar.licenseKeys.getActivation(need("key").id, need("activation").id),
  );
  equal(a.id, S.activation.id, "id");
  equal(a.label, "laptop", "label");
  equal(a.license_key?.id, S.key.id, "license_key.id");
});

check("license_keys_validate_activation_and_usage", async () => {
  const v = typed(
    "ValidatedLicenseKey",
    await polar.licenseKeys.validate({
      ...keyBody(),
      activation_id: need("activation").id,
      benefit_id: need("benefit").id,
      customer_id: need("customerId"),
      increment_usage: 2,
    }),
  );
  equal(v.activation?.id, S.activation.id, "activation.id");
  equal(v.usage, 2, "usage");
});

check("license_keys_deactivate_with_token", async () => {
  const result = await polar.licenseKeys.deactivate({
    ...keyBody(),
    activation_id: need("activation").id,
  });
  equal(result, undefined, "result");
  equal(TRACE[TRACE.length - 1]?.status, 204, "status");
  const key = typed("LicenseKeyWithActivations", await polar.licenseKeys.get(S.key.id));
  equal(key.activations, [], "activations left");
});

check("license_keys_validate_unknown_key", async () => {
  await notFound(
    polar.licenseKeys.validate({ key: `TG-NOPE-${RUN}`, organization_id: need("org").id }),
  );
});

// --- License keys (buyer's program, customer portal) ---------------------------------------
// 1.0 always sends the client's bearer token; the buyer's program would use any it has.

check("portal_validate", async () => {
  const before = (await polar.licenseKeys.get(need("key").id)).validations;
  const v = typed("ValidatedLicenseKey", await polar.customerPortal.licenseKeys.validate(keyBody()));
  equal(v.id, S.key.id, "id");
  equal(v.key, S.key.key, "key");
  equal(v.validations, before + 1, "validations");
});

check("portal_activate_and_deactivate", async () => {
  const a = typed(
    "LicenseKeyActivationCreated",
    await polar.customerPortal.licenseKeys.activate({ ...keyBody(), label: "desktop" }),
  );
  equal(a.label, "desktop", "label");
  const v = typed(
    "ValidatedLicenseKey",
    await polar.customerPortal.licenseKeys.validate({ ...keyBody(), activation_id: a.id }),
  );
  equal(v.activation?.id, a.id, "activation.id");
  const result = await polar.customerPortal.licenseKeys.deactivate({
    ...keyBody(),
    activation_id: a.id,
  });
  equal(result, undefined, "deactivate result");
  await notFound(
    polar.customerPortal.licenseKeys.validate({ ...keyBody(), activation_id: a.id }),
  );
});

check("portal_validate_unknown_key", async () => {
  await notFound(
    polar.customerPortal.licenseKeys.validate({
      key: `TG-NOPE-${RUN}`,
      organization_id: need("org").id,
    }),
  );
});

// --- Customer sessions and the customer portal ---------------------------------------------

check("customer_session_create", async () => {
  // The portal checks below use S.buyer: this session's client, or, when no session could
  // be created, one with the checkout's customer session token (so they still run).
  if (S.confirmToken) S.buyer = createPolar({ ...options, accessToken: S.confirmToken });
  const session = typed(
    "CustomerSession",
    await polar.customerSessions.create({ customer_id: need("customerId") }),
  );
  ensure(session.token, "no token");
  equal(session.customer_id, S.customerId, "customer_id");
  equal(session.customer?.id, S.customerId, "customer.id");
  ensure(Date.parse(session.expires_at) > Date.now(), `expires_at ${session.expires_at}`);
  ensure(session.customer_portal_url, "no customer_portal_url");
  S.session = session;
  S.buyer = createPolar({ ...options, accessToken: session.token });
});

check("customer_session_create_by_external_id", async () => {
  const session = typed(
    "CustomerSession",
    await polar.customerSessions.create({ external_customer_id: externalId() }),
  );
  equal(session.customer_id, need("customerId"), "customer_id");
  ensure(session.token && session.token !== need("session").token, "a fresh token");
});

check("portal_license_keys_list_with_session", async () => {
  const page = typed(
    "ListResourceLicenseKeyRead",
    await need("buyer").customerPortal.licenseKeys.list({}),
  );
  equal(
    page.items.map((k) => k.id),
    [need("key").id],
    "keys",
  );
  equal(page.items[0].key, S.key.key, "key");
});

check("portal_license_keys_get_with_session", async () => {
  const key = typed(
    "LicenseKeyWithActivations",
    await need("buyer").customerPortal.licenseKeys.get(need("key").id),
  );
  equal(key.id, S.key.id, "id");
  equal(key.activations, [], "activations");
});

check("portal_license_keys_list_with_checkout_token", async () => {
  const buyer = createPolar({ ...options, accessToken: need("confirmToken") });
  const page = typed(
    "ListResourceLicenseKeyRead",
    await buyer.customerPortal.licenseKeys.list({ benefit_id: need("benefit").id }),
  );
  equal(
    page.items.map((k) => k.id),
    [need("key").id],
    "keys",
  );
});

check("portal_validate_with_session_token", async () => {
  const v = typed(
    "ValidatedLicenseKey",
    await need("buyer").customerPortal.licenseKeys.validate(keyBody()),
  );
  equal(v.id, S.key.id, "id");
});

// --- Rotation --------------------------------------------------------------------------------

check("license_keys_rotate", async () => {
  const old = need("key").key;
  const rotated = typed("RotatedLicenseKey", await polar.licenseKeys.rotate(S.key.id));
  equal(rotated.id, S.key.id, "id");
  ensure(rotated.key.startsWith("TG-") && rotated.key !== old, `key ${rotated.key}`);
  equal(rotated.status, "granted", "status");
  await notFound(polar.licenseKeys.validate({ key: old, organization_id: need("org").id }));
  const v = typed(
    "ValidatedLicenseKey",
    await polar.licenseKeys.validate({ key: rotated.key, organization_id: S.org.id }),
  );
  equal(v.id, S.key.id, "id after rotation");
  const key = typed("LicenseKeyWithActivations", await polar.licenseKeys.get(S.key.id));
  equal(key.key, rotated.key, "key read back");
  S.key = { ...S.key, key: rotated.key };
});

check("portal_license_keys_rotate_with_session", async () => {
  const old = need("key").key;
  const rotated = typed(
    "RotatedLicenseKey",
    await need("buyer").customerPortal.licenseKeys.rotate(S.key.id),
  );
  equal(rotated.id, S.key.id, "id");
  ensure(rotated.key.startsWith("TG-") && rotated.key !== old, `key ${rotated.key}`);
  await notFound(
    polar.customerPortal.licenseKeys.validate({ key: old, organization_id: need("org").id }),
  );
  const v = typed(
    "ValidatedLicenseKey",
    await polar.customerPortal.licenseKeys.validate({ key: rotated.key, organization_id: S.org.id }),
  );
  equal(v.id, S.key.id, "id after rotation");
  S.key = { ...S.key, key: rotated.key };
});

// --- Checkout links ------------------------------------------------------------------------

check("checkout_link_create", async () => {
  const link = typed(
    "CheckoutLink",
    await polar.checkoutLinks.create({
      payment_processor: "stripe",
      products: [need("product").id],
      label: `Link ${RUN}`,
    }),
  );
  S.link = link;
  equal(link.label, `Link ${RUN}`, "label");
  equal(link.organization_id, need("org").id, "organization_id");
  equal(
    (link.products ?? []).map((p) => p.id),
    [S.product.id],
    "products",
  );
  ensure(link.client_secret, "no client_secret");
  ensure(link.url?.includes(link.client_secret), `url ${link.url}`);
});

check("checkout_link_get_and_list", async () => {
  const link = typed("CheckoutLink", await polar.checkoutLinks.get(need("link").id));
  equal(link.url, S.link.url, "url");
  const page = typed(
    "ListResourceCheckoutLink",
    await polar.checkoutLinks.list({ organization_id: need("org").id }),
  );
  equal(
    page.items.map((l) => l.id),
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
  const pub = typed("CheckoutPublic", await polar.checkouts.clientGet(secret));
  equal(pub.status, "open", "status of the new checkout");
  equal(pub.product?.id, S.product.id, "product of the new checkout");
});

check("checkout_link_update_and_delete", async () => {
  const link = typed(
    "CheckoutLink",
    await polar.checkoutLinks.update(need("link").id, { label: `Renamed ${RUN}` }),
  );
  equal(link.label, `Renamed ${RUN}`, "label");
  const result = await polar.checkoutLinks.delete(S.link.id);
  equal(result, undefined, "delete result");
  await notFound(polar.checkoutLinks.get(S.link.id));
});

// --- Webhook endpoints ---------------------------------------------------------------------

check("webhook_endpoint_create", async () => {
  const endpoint = typed(
    "WebhookEndpoint",
    await polar.webhooks.createWebhookEndpoint({
      url: "https://example.com/hook",
      format: "raw",
      events: ["order.created", "order.paid"],
      organization_id: need("org").id,
      api_version: VERSION,
    }),
  );
  S.endpoint = endpoint;
  equal(endpoint.url, "https://example.com/hook", "url");
  equal(endpoint.format, "raw", "format");
  equal([...(endpoint.events ?? [])].sort(), ["order.created", "order.paid"], "events");
  equal(endpoint.organization_id, S.org.id, "organization_id");
  ensure(endpoint.secret, "no secret");
  if ("api_version" in MODELS.interfaces.WebhookEndpoint.fields) {
    equal(endpoint.api_version, VERSION, "api_version");
  }
});

check("webhook_endpoint_get_and_list", async () => {
  const endpoint = typed("WebhookEndpoint", await polar.webhooks.getWebhookEndpoint(need("endpoint").id));
  equal(endpoint.id, S.endpoint.id, "id");
  const page = typed(
    "ListResourceWebhookEndpoint",
    await polar.webhooks.listWebhookEndpoints({ organization_id: need("org").id }),
  );
  equal(
    page.items.map((e) => e.id),
    [S.endpoint.id],
    "ids",
  );
});

check("webhook_endpoint_delete", async () => {
  const result = await polar.webhooks.deleteWebhookEndpoint(need("endpoint").id);
  equal(result, undefined, "result");
  await notFound(polar.webhooks.getWebhookEndpoint(S.endpoint.id));
});

// --- Errors ----------------------------------------------------------------------------------

check("unknown_ids_are_not_found", async () => {
  await notFound(polar.organizations.get(randomUUID()));
  await notFound(polar.checkouts.get(randomUUID()));
  await notFound(polar.orders.get(randomUUID()));
  await notFound(polar.licenseKeys.get(randomUUID()));
  await notFound(polar.customers.getExternal(`nobody-${RUN}`));
  await notFound(polar.customers.getStateExternal(`nobody-${RUN}`));
});

check("invalid_uuid_is_a_validation_error", async () => {
  const e = await rejects(errors.HTTPValidationError, polar.licenseKeys.get("not-a-uuid"));
  ensure(Array.isArray(e.error?.detail) && e.error.detail.length > 0, "no validation items");
});

check("a_bad_token_is_unauthorized", async () => {
  const bad = createPolar({ ...options, accessToken: `polar_pat_bogus${RUN}` });
  const e = await rejects(
    errors.Unauthorized,
    bad.licenseKeys.list({ organization_id: need("org").id }),
  );
  equal(e.statusCode, 401, "status");
});

// --- The signed-in buyer: the customer portal ----------------------------------------------
// Last but the version checks, so that the subscription bought here changes nothing the
// seller's checks above count.

check("portal_session_for_the_buyer", async () => {
  const session = typed(
    "CustomerSession",
    await polar.customerSessions.create({ customer_id: need("customerId") }),
  );
  ensure(session.token.startsWith("polar_cst_"), `token ${session.token.slice(0, 12)}`);
  S.portal = createPolar({ ...options, accessToken: session.token });
  const url = new URL(session.customer_portal_url);
  equal(`${url.origin}${url.pathname}`, `${URL_}/portal/${need("org").slug}`, "customer_portal_url");
  equal(url.searchParams.get("customer_session_token"), session.token, "customer_session_token");
  equal(url.searchParams.get("email"), email(), "email");
});

check("portal_buys_a_subscription", async () => {
  const monthly = typed(
    "Product",
    await polar.products.create({
      name: `Compat 1.0 Monthly ${RUN}`,
      organization_id: need("org").id,
      recurring_interval: "month",
      prices: [{ amount_type: "fixed", price_amount: 900, price_currency: "usd" }],
    }),
  );
  S.monthly = monthly;
  equal(monthly.is_recurring, true, "is_recurring");
  const checkout = typed(
    "Checkout",
    await polar.checkouts.create({ products: [monthly.id], customer_id: need("customerId") }),
  );
  typed(
    "CheckoutPublicConfirmed",
    await polar.checkouts.clientConfirm(checkout.client_secret, {
      confirmation_token_id: "tok_visa",
      customer_billing_address: { country: "US" },
    }),
  );
  const deadline = Date.now() + 10000;
  while ((await clientGet(checkout.client_secret)).status !== "succeeded") {
    ensure(Date.now() < deadline, "the subscription's checkout did not succeed within 10 s");
    await new Promise((r) => setTimeout(r, 200));
  }
});

check("portal_session_introspect_and_user", async () => {
  const portal = need("portal");
  const session = typed(
    "CustomerCustomerSession",
    await portal.customerPortal.customerSession.introspect(),
  );
  ensure(Date.parse(session.expires_at) > Date.now(), `expires_at ${session.expires_at}`);
  const user = typed(
    "PortalAuthenticatedUser",
    await portal.customerPortal.customerSession.getAuthenticatedUser(),
  );
  equal(user.type, "customer", "type");
  equal(user.customer_id, need("customerId"), "customer_id");
  equal(user.email, email(), "email");
});

check("portal_customer_me", async () => {
  const me = typed("CustomerPortalCustomer", await need("portal").customerPortal.customers.get());
  equal(me.id, need("customerId"), "id");
  equal(me.email, email(), "email");
  equal(me.name, "Ada Lovelace", "name");
  equal(me.oauth_accounts, {}, "oauth_accounts");
});

check("portal_orders_list_get_and_receipt", async () => {
  const portal = need("portal");
  const page = typed("ListResourceCustomerOrder", await portal.customerPortal.orders.list());
  const byProduct = Object.fromEntries(page.items.map((o) => [o.product_id, o]));
  equal(
    Object.keys(byProduct).sort(),
    [need("product").id, need("monthly").id].sort(),
    "products of the buyer's orders",
  );
  const oneTime = byProduct[S.product.id];
  equal(oneTime.id, need("order").id, "id");
  equal(oneTime.product?.organization?.id, need("org").id, "product.organization.id");
  const recurring = byProduct[S.monthly.id];
  equal(recurring.billing_reason, "subscription_create", "billing_reason");
  ensure(recurring.subscription_id, "subscription_id");
  S.portalSubscriptionId = recurring.subscription_id;
  const order = typed("CustomerOrder", await portal.customerPortal.orders.get(S.order.id));
  equal(order.id, S.order.id, "id");
  const receipt = typed("CustomerOrderReceipt", await portal.customerPortal.orders.receipt(S.order.id));
  ensure(receipt.url.startsWith(`${URL_}/portal/receipts/`), `url ${receipt.url}`);
  const res = await fetch(receipt.url);
  equal(res.status, 200, "the receipt page");
  ensure((res.headers.get("content-type") ?? "").startsWith("text/html"), "a page");
  await notFound(portal.customerPortal.orders.get(randomUUID()));
});

check("portal_subscriptions_list_get_cancel_uncancel", async () => {
  const portal = need("portal");
  const id = need("portalSubscriptionId");
  const page = typed(
    "ListResourceCustomerSubscription",
    await portal.customerPortal.subscriptions.list(),
  );
  equal(
    page.items.map((s) => s.id),
    [id],
    "subscriptions",
  );
  let sub = typed("CustomerSubscription", await portal.customerPortal.subscriptions.get(id));
  equal(sub.status, "active", "status");
  equal(sub.product?.id, need("monthly").id, "product.id");
  sub = typed(
    "CustomerSubscription",
    await portal.customerPortal.subscriptions.update(id, {
      cancel_at_period_end: true,
      cancellation_reason: "low_quality",
    }),
  );
  equal(sub.cancel_at_period_end, true, "cancel_at_period_end");
  equal(sub.customer_cancellation_reason, "low_quality", "customer_cancellation_reason");
  const e = await rejects(
    errors.AlreadyCanceledSubscription,
    portal.customerPortal.subscriptions.cancel(id),
  );
  equal(e.statusCode, 403, "status");
  equal(e.error?.error, "AlreadyCanceledSubscription", "error");
  sub = typed(
    "CustomerSubscription",
    await portal.customerPortal.subscriptions.update(id, { cancel_at_period_end: false }),
  );
  equal(sub.cancel_at_period_end, false, "cancel_at_period_end after uncancel");
  await notFound(portal.customerPortal.subscriptions.get(randomUUID()));
});

check("portal_license_keys_list_and_get", async () => {
  const portal = need("portal");
  const page = typed("ListResourceLicenseKeyRead", await portal.customerPortal.licenseKeys.list({}));
  equal(
    page.items.map((k) => k.id),
    [need("key").id],
    "keys",
  );
  const key = typed(
    "LicenseKeyWithActivations",
    await portal.customerPortal.licenseKeys.get(S.key.id),
  );
  equal(key.key, S.key.key, "key");
  await notFound(portal.customerPortal.licenseKeys.get(randomUUID()));
});

check("portal_benefit_grants_list_and_get", async () => {
  const portal = need("portal");
  const page = typed(
    "ListResourceCustomerBenefitGrant",
    await portal.customerPortal.benefitGrants.list({ sorting: ["-granted_at"] }),
  );
  const grant = page.items.find((g) => g.benefit_id === need("benefit").id);
  ensure(grant, `no grant of the license key benefit in ${show(page.items.map((g) => g.benefit_id))}`);
  equal(grant.customer_id, need("customerId"), "customer_id");
  equal(grant.order_id, need("order").id, "order_id");
  equal(grant.benefit?.organization?.id, need("org").id, "benefit.organization.id");
  equal(grant.properties?.license_key_id, need("key").id, "properties.license_key_id");
  const again = typed("CustomerBenefitGrant", await portal.customerPortal.benefitGrants.get(grant.id));
  equal(again.id, grant.id, "id");
  await notFound(portal.customerPortal.benefitGrants.get(randomUUID()));
});

check("portal_benefit_grants_in_the_sdks_order", async () => {
  // The SDK's default sorting: ["product_benefit", "-granted_at"].
  const page = typed(
    "ListResourceCustomerBenefitGrant",
    await need("portal").customerPortal.benefitGrants.list(),
  );
  ensure(
    page.items.some((g) => g.benefit_id === need("benefit").id),
    "the license key grant",
  );
});

check("portal_token_is_refused_on_the_sellers_api", async () => {
  // Operations that map no 401 (products.list) raise the plain PolarClientError.
  const portal = need("portal");
  for (const call of [
    () => portal.products.list({ organization_id: need("org").id }),
    () => portal.orders.get(need("order").id),
  ]) {
    let result;
    try {
      result = await call();
    } catch (e) {
      equal(e?.statusCode, 401, `status (${e?.constructor?.name})`);
      continue;
    }
    throw new Error(`the customer session token was accepted: ${clip(show(result), 200)}`);
  }
});

// --- Seats ---------------------------------------------------------------------------------
// A seat-based plan bought by a buyer of its own (so the checks above count nothing of it):
// 3 seats, read back through the SDK as an order, a subscription and the customer's state,
// each matched against the package's types with `seats: 3`. In 2027-01 the price is created
// and read in polar-sdk 1.0.2's shape of that version (`tiers`, `minimum_units`,
// `maximum_units`), which answers carry beside the `seat_tiers` 1.0.1's types require; before
// it, in the 2026 shape (`seat_tiers`), sent raw in the version served.

async function seatBasedPlan() {
  if (VERSION >= "2027-01") {
    const team = typed(
      "Product",
      await polar.products.create({
        name: `Compat 1.0 Team ${RUN}`,
        organization_id: need("org").id,
        recurring_interval: "month",
        prices: [
          {
            amount_type: "seat_based",
            price_currency: "usd",
            tiers: {
              type: "volume",
              tiers: [
                { bound: 4, unit_amount: "1000" },
                { bound: null, unit_amount: 800 },
              ],
            },
          },
        ],
      }),
    );
    const price = typed("Product", await polar.products.get(team.id)).prices[0];
    equal(
      price.tiers.tiers.map((t) => [t.bound, t.unit_amount]),
      [
        [4, "1000"],
        [null, "800"],
      ],
      "the tiers",
    );
    equal(
      [price.tiers.type, price.minimum_units, price.maximum_units],
      ["volume", 1, null],
      "the tiers' type and the seats on sale",
    );
    // 1.0.1's 2027-01 types still require the 2026 `seat_tiers`: it is there too.
    equal(price.seat_tiers.maximum_seats, null, "seat_tiers beside tiers");
    return team.id;
  }
  const tiers = {
    tiers: [
      { min_seats: 1, max_seats: 4, price_per_seat: 1000 },
      { min_seats: 5, max_seats: null, price_per_seat: 800 },
    ],
  };
  const res = await fetch(`${URL_}/v1/products/`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${TOKEN}`,
      "Content-Type": "application/json",
      "Polar-Version": VERSION,
    },
    body: JSON.stringify({
      name: `Compat 1.0 Team ${RUN}`,
      organization_id: need("org").id,
      recurring_interval: "month",
      prices: [{ amount_type: "seat_based", price_currency: "usd", seat_tiers: tiers }],
    }),
  });
  equal(res.status, 201, "seat-based product created");
  return (await res.json()).id;
}

check("seats_are_bought_and_read_back", async () => {
  const team = await seatBasedPlan();
  const checkout = typed(
    "Checkout",
    await polar.checkouts.create({
      products: [team],
      seats: 3,
      external_customer_id: `seats-${RUN}`,
      customer_email: `seats-${RUN}@example.com`,
    }),
  );
  equal([checkout.seats, checkout.amount], [3, 3000], "checkout of 3 seats");
  typed(
    "CheckoutPublicConfirmed",
    await polar.checkouts.clientConfirm(checkout.client_secret, {
      confirmation_token_id: "tok_visa",
      customer_name: "Grace Hopper",
      customer_billing_address: { country: "US" },
    }),
  );
  const deadline = Date.now() + 10000;
  let done;
  while ((done = await clientGet(checkout.client_secret)).status !== "succeeded") {
    ensure(Date.now() < deadline, "the seats' checkout did not succeed within 10 s");
    await new Promise((r) => setTimeout(r, 200));
  }
  const customer = done.customer_id;
  const orders = typed(
    "ListResourceOrder",
    await polar.orders.list({ checkout_id: checkout.id }),
  ).items;
  equal(orders.map((o) => [o.seats, o.total_amount]), [[3, 3000]], "the order of 3 seats");
  equal(typed("Order", await polar.orders.get(orders[0].id)).seats, 3, "orders.get seats");
  const subs = typed(
    "ListResourceSubscription",
    await polar.subscriptions.list({ customer_id: customer }),
  ).items;
  equal(subs.map((x) => [x.seats, x.amount]), [[3, 3000]], "the subscription of 3 seats");
  equal(
    typed("Subscription", await polar.subscriptions.get(subs[0].id)).seats,
    3,
    "subscriptions.get seats",
  );
  // 1.0.1 types a state subscription's status as "granted" | "disabled" (as polar-sdk
  // 1.0.2 does): the state of an active subscription matches its type but for that.
  const state = await polar.customers.getState(customer);
  const found = mismatches(state, { k: "ref", name: "CustomerState", args: [] }, []);
  const odd = found.filter(
    (x) => !(x.path === "active_subscriptions.0.status" && x.text.includes('"active"')),
  );
  ensure(!odd.length, `the state matches CustomerState but for its status: ${show(odd)}`);
  equal(
    state.active_subscriptions.map((x) => x.seats),
    [3],
    "the state's seats",
  );
});

// --- Versioning ------------------------------------------------------------------------------

check("every_answer_says_the_requested_polar_version", async () => {
  const api = EXCHANGES.filter((x) => x.path.startsWith("/v1/") && x.sentVersion === VERSION);
  ensure(api.length > 10, `only ${api.length} exchanges recorded`);
  const wrong = api.filter((x) => x.answeredVersion !== VERSION);
  ensure(
    wrong.length === 0,
    `${wrong.length} of ${api.length} answers without Polar-Version ${VERSION}: ` +
      show(wrong.slice(0, 5)),
  );
});

check("raw_requested_version_header", async () => {
  const headers = { Authorization: `Bearer ${TOKEN}`, "Polar-Version": VERSION };
  const res = await fetch(`${URL_}/v1/organizations/${need("org").id}`, { headers });
  equal(res.status, 200, "status");
  equal(res.headers.get("polar-version"), VERSION, "Polar-Version");
  const err = await fetch(`${URL_}/v1/organizations/${randomUUID()}`, { headers });
  equal(err.status, 404, "status of an unknown id");
  equal(err.headers.get("polar-version"), VERSION, "Polar-Version on a 404");
});

check("raw_unknown_version_is_not_found", async () => {
  for (const version of ["1999-01", "2026-4"]) {
    const res = await fetch(`${URL_}/v1/organizations/${need("org").id}`, {
      headers: { Authorization: `Bearer ${TOKEN}`, "Polar-Version": version },
    });
    equal(res.status, 404, `status for ${version}`);
    equal(await res.json(), { detail: "Not Found" }, `body for ${version}`);
  }
});

// --- Runner ----------------------------------------------------------------------------------

async function main() {
  let passed = 0;
  let failed = 0;
  console.log(`# @polar-sh/sdk 1.0.1, module ${MODULE}`);
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
    console.log(`FAIL ${name}: ${first?.constructor?.name}: ${clip(first?.message ?? String(first), 400)}`);
    const seen = new Set();
    for (const { error: e, lines, exchange } of SOFT) {
      const key = `${exchange?.method} ${exchange?.url} ${e?.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (e !== first) console.log(`     ${e?.constructor?.name}: ${clip(e?.message ?? String(e), 400)}`);
      for (const line of lines.slice(0, 40)) console.log(`     type ${line}`);
      if (lines.length > 40) console.log(`     type … ${lines.length - 40} more`);
      if (exchange) console.log(showTrace([exchange]));
    }
    if (error) {
      if (SOFT.length) console.log(`     then ${error?.constructor?.name}: ${clip(error?.message ?? String(error), 400)}`);
      const trace = TRACE.slice(-2);
      if (trace.length) console.log(showTrace(trace));
      console.error(`--- ${name}`);
      console.error(error?.stack ?? error);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
