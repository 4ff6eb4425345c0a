// Issue 47 through Polar's JS SDK 1.0 (@polar-sh/sdk 1.0.1, pinned in package.json and
// package-lock.json): a buyer whose renewal was declined fixes it from the customer portal
// with the SDK's own methods, and every answer matches the type the package declares for it
// (types.mjs; 1.0 does not check answers at runtime): the customer read and updated
// (`CustomerPortalCustomer`), payment methods listed, added and removed, the pending order
// paid now (`CustomerOrderPaymentConfirmation`, `CustomerOrderPaymentStatus`), the plan
// changed (`CustomerSubscription`), an e-mail change requested; the refusals come back as
// the SDK's typed errors (`OrderNotEligibleForRetry`, the e-mail code's 401).
//
// Reads TOLLGATE_URL, TOLLGATE_SESSION (a customer session token of the buyer),
// TOLLGATE_ORDER (the buyer's pending renewal order), TOLLGATE_SUBSCRIPTION (its past-due
// subscription), TOLLGATE_PRODUCT (another recurring product of the shop) and
// TOLLGATE_API_VERSION (2026-04, 2026-10 or 2027-01). Prints one line per check and
// `N passed, M failed`; exits 1 when M > 0. Run by tests/api/portal_billing_sdk.rs.

import { randomUUID } from "node:crypto";

import { clip, loadTypes, mismatches } from "./types.mjs";

const VERSION = process.env.TOLLGATE_API_VERSION || "2026-04";
if (!["2026-04", "2026-10", "2027-01"].includes(VERSION)) {
  throw new Error(`TOLLGATE_API_VERSION must be 2026-04, 2026-10 or 2027-01, not ${VERSION}`);
}
const URL_ = process.env.TOLLGATE_URL.replace(/\/+$/, "");
const SESSION = process.env.TOLLGATE_SESSION;
const ORDER = process.env.TOLLGATE_ORDER;
const SUBSCRIPTION = process.env.TOLLGATE_SUBSCRIPTION;
const PRODUCT = process.env.TOLLGATE_PRODUCT;
const RUN = randomUUID().slice(0, 8);
const MODULE = `@polar-sh/sdk/${VERSION}`;
const { createPolar, errors } = await import(MODULE);
const MODELS = loadTypes(MODULE);
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

check("the_customer_reads_and_updates_its_billing_details", async () => {
  const me = typed("CustomerPortalCustomer", await portal.customers.get());
  S.email = me.email;
  const updated = typed(
    "CustomerPortalCustomer",
    await portal.customers.update({
      billing_name: `Analytical Engines ${RUN}`,
      billing_address: { country: "FR", city: "Paris", postal_code: "75001", line1: "1 rue de Rivoli" },
    }),
  );
  equal(updated.billing_name, `Analytical Engines ${RUN}`, "billing_name");
  equal([updated.billing_address.country, updated.billing_address.city], ["FR", "Paris"], "address");
});

check("the_saved_card_is_listed", async () => {
  const page = typed("ListResourceCustomerPaymentMethod", await portal.customers.listPaymentMethods());
  ensure(page.items.length, "no payment method listed");
  S.oldCard = page.items[0].id;
  equal(page.items[0].type, "card", "type");
});

check("a_working_card_is_added_as_the_default", async () => {
  const added = typed(
    "CustomerPaymentMethodCreateResponse",
    await portal.customers.addPaymentMethod({
      confirmation_token_id: "tok_visa",
      set_default: true,
      return_url: `${URL_}/portal/`,
    }),
  );
  equal(added.status, "succeeded", "status");
  equal(added.payment_method.method_metadata.last4, "4242", "last4");
  S.newCard = added.payment_method.id;
  const me = typed("CustomerPortalCustomer", await portal.customers.get());
  equal(me.default_payment_method_id, S.newCard, "default_payment_method_id");
});

check("the_pending_order_is_paid_now", async () => {
  const done = typed(
    "CustomerOrderPaymentConfirmation",
    await portal.orders.confirmRetryPayment(ORDER, { payment_method_id: S.newCard }),
  );
  equal(done.status, "succeeded", "status");
  const status = typed("CustomerOrderPaymentStatus", await portal.orders.getPaymentStatus(ORDER));
  equal(status.status, "succeeded", "payment status");
  equal(typed("CustomerOrder", await portal.orders.get(ORDER)).status, "paid", "order status");
  equal(
    typed("CustomerSubscription", await portal.subscriptions.get(SUBSCRIPTION)).status,
    "active",
    "subscription status",
  );
});

check("a_paid_order_cannot_be_paid_again", async () => {
  const e = await rejects(
    errors.OrderNotEligibleForRetry,
    portal.orders.confirmRetryPayment(ORDER, { payment_method_id: S.newCard }),
  );
  equal(e.statusCode, 422, "status");
  equal(e.error?.error, "OrderNotEligibleForRetry", "error");
});

check("the_old_card_is_removed", async () => {
  equal(await portal.customers.deletePaymentMethod(S.oldCard), undefined, "delete answer");
  const page = typed("ListResourceCustomerPaymentMethod", await portal.customers.listPaymentMethods());
  equal(
    page.items.map((m) => m.id),
    [S.newCard],
    "cards left",
  );
});

check("the_buyer_changes_plan", async () => {
  const sub = typed(
    "CustomerSubscription",
    await portal.subscriptions.update(SUBSCRIPTION, { product_id: PRODUCT }),
  );
  equal(sub.product_id, PRODUCT, "product_id");
});

check("an_email_change_is_requested_and_a_wrong_code_refused", async () => {
  await portal.customers.requestEmailUpdate({ email: `new-${RUN}@example.com` });
  const e = await rejects(
    errors.CustomerPortalCustomersVerifyEmailUpdate401Error,
    portal.customers.verifyEmailUpdate({ token: "WRONGCODE" }),
  );
  equal(e.statusCode, 401, "status");
  equal(typed("CustomerPortalCustomer", await portal.customers.get()).email, S.email, "e-mail kept");
});

async function main() {
  let passed = 0;
  let failed = 0;
  console.log(`# @polar-sh/sdk 1.0.1 portal billing, module ${MODULE}, against ${URL_}`);
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
