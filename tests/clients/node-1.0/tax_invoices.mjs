// Issue 48's invoices through Polar's JS SDK 1.0 (@polar-sh/sdk 1.0.1, pinned in
// package.json and package-lock.json): a German seller (DE136695976) invoicing on request
// sells to French consumers, and every invoice answer matches the type the package declares
// for it (types.mjs; 1.0 does not check answers at runtime): the seller's
// `orders.update({billing_name, billing_address})` (`Order`), `orders.generateInvoice`
// (`null`: the 202's body), `orders.invoice` (`OrderInvoice`, polled until issued, bounded;
// the PDF behind its url); the buyer's `customerPortal.orders.update` (`CustomerOrder`),
// `generateInvoice` and `invoice` (`CustomerOrderInvoice`) with a customer session's token;
// the refusals as the SDK throws them, the body readable: 404 `InvoiceDoesNotExist` (the
// SDK's `ResourceNotFound`), 409 `InvoiceAlreadyIssued` (no 409 declared for an update: its
// `PolarClientError` with the body's text), 422 `MissingInvoiceBillingDetails` and a country
// change's `HTTPValidationError` (reached by clearing the address: a checkout needs a name).
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
// The base classes every version's errors extend (the package's root export).
const { PolarClientError, PolarError } = await import("@polar-sh/sdk");
const MODELS = loadTypes(MODULE);
const polar = createPolar({ accessToken: TOKEN, baseUrl: URL_, timeout: 15 });
const SELLER_TAX = "DE136695976";

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

/** The error `promise` rejects with (a result is a failure). */
async function thrown(promise) {
  try {
    const result = await promise;
    throw new Error(`no error, a result: ${clip(show(result), 300)}`);
  } catch (e) {
    if (e instanceof PolarError) return e;
    throw e;
  }
}

/** The refusal's JSON body, from the SDK's error (the JSON, or the text it kept). */
const bodyOf = (e) => (typeof e.error === "string" ? JSON.parse(e.error) : e.error);

async function notIssued(promise, what) {
  const e = await thrown(promise);
  ensure(e instanceof errors.ResourceNotFound, `${what}: ${e.constructor.name}: ${e.message}`);
  equal(e.statusCode, 404, `${what} status`);
  equal(bodyOf(e).error, "InvoiceDoesNotExist", `${what} error`);
}

async function alreadyIssued(promise, what) {
  const e = await thrown(promise);
  ensure(e instanceof PolarClientError, `${what}: ${e.constructor.name}: ${e.message}`);
  equal(e.statusCode, 409, `${what} status`);
  equal(bodyOf(e).error, "InvoiceAlreadyIssued", `${what} error`);
}

/** `call()`'s answer once the invoice is issued (bounded: issued within a second). */
async function issued(call, typeName, what) {
  const deadline = Date.now() + 10000;
  for (;;) {
    try {
      return typed(typeName, await call());
    } catch (e) {
      if (!(e instanceof errors.ResourceNotFound)) throw e;
      ensure(Date.now() < deadline, `${what}: not issued within 10 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function pdf(url, what) {
  const r = await fetch(url);
  equal(r.status, 200, `${what} PDF status`);
  equal(r.headers.get("content-type"), "application/pdf", `${what} PDF type`);
  const bytes = Buffer.from(await r.arrayBuffer());
  equal(bytes.subarray(0, 5).toString(), "%PDF-", `${what} PDF magic`);
}

/** A French consumer's paid order. */
async function bought(name) {
  const checkout = typed("Checkout", await polar.checkouts.create({ products: [S.product] }));
  const address = { country: "FR" };
  typed("CheckoutPublic", await polar.checkouts.clientUpdate(checkout.client_secret, { customer_billing_address: address }));
  typed(
    "CheckoutPublicConfirmed",
    await polar.checkouts.clientConfirm(checkout.client_secret, {
      confirmation_token_id: "tok_visa",
      customer_email: `buyer-${randomUUID().slice(0, 6)}@example.fr`,
      customer_billing_address: address,
      customer_name: name,
    }),
  );
  const deadline = Date.now() + 10000;
  for (;;) {
    const pub = typed("CheckoutPublic", await polar.checkouts.clientGet(checkout.client_secret));
    if (pub.status === "succeeded") break;
    ensure(Date.now() < deadline, "checkout did not succeed within 10 s");
    await new Promise((r) => setTimeout(r, 200));
  }
  const page = typed("ListResourceOrder", await polar.orders.list({ checkout_id: checkout.id }));
  equal(page.items.length, 1, "orders of the checkout");
  equal(page.items[0].is_invoice_generated, false, "is_invoice_generated");
  return page.items[0];
}

const LYON = { country: "FR", line1: "12 rue des Lilas", city: "Lyon", postal_code: "69001" };

check("a_seller_invoicing_on_request", async () => {
  const org = typed(
    "Organization",
    await polar.organizations.create({ name: `Invoices ${RUN}`, slug: `inv-${VERSION.replace("-", "")}-${RUN}` }),
  );
  S.org = org.id;
  const r = await fetch(`${URL_}/v1/organizations/${org.id}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: show({
      tax: {
        country: "DE",
        tax_id: SELLER_TAX,
        registrations: ["eu_oss"],
        invoice_timing: "on_request",
        invoice_prefix: "JS",
        legal_name: "Js Software GmbH",
        address: { line1: "Friedrichstraße 12", postal_code: "10117", city: "Berlin", country: "DE" },
      },
      default_tax_behavior: "location",
    }),
  });
  equal(r.status, 200, `raw PATCH of tax: ${clip(await r.clone().text(), 300)}`);
  const product = typed(
    "Product",
    await polar.products.create({
      name: `Lifetime ${RUN}`,
      organization_id: S.org,
      prices: [{ amount_type: "fixed", price_amount: 1200, price_currency: "usd", tax_behavior: "inclusive" }],
    }),
  );
  // The price includes its tax: the SDK sends the price's tax_behavior and parses it back.
  equal(product.prices[0].tax_behavior, "inclusive", "the price's tax_behavior");
  const read = typed("Product", await polar.products.get(product.id));
  equal(read.prices[0].tax_behavior, "inclusive", "the price's tax_behavior read");
  S.product = product.id;
  S.order = await bought("Marie Curie");
  S.portalOrder = await bought("Jean Dupont");
});

check("the_seller_edits_the_billing_details_then_generates_the_invoice", async () => {
  const id = S.order.id;
  await notIssued(polar.orders.invoice(id), "invoice before");
  const order = typed("Order", await polar.orders.update(id, { billing_name: "Marie Curie SARL", billing_address: LYON }));
  equal([order.billing_name, order.billing_address?.city, order.billing_address?.country], ["Marie Curie SARL", "Lyon", "FR"], "updated");
  const e = await thrown(polar.orders.update(id, { billing_address: { ...LYON, country: "DE" } }));
  ensure(e instanceof errors.HTTPValidationError, `${e.constructor.name}: ${e.message}`);
  equal(e.statusCode, 422, "status");
  equal(e.error.detail.map((d) => [d.loc, d.msg]), [[["body", "billing_address", "country"], "Country cannot be changed"]], "detail");
  equal(await polar.orders.generateInvoice(id), null, "generateInvoice");
  const inv = await issued(() => polar.orders.invoice(id), "OrderInvoice", "invoice");
  ensure(inv.url.includes("/v1/invoices/") && inv.url.includes("signature="), inv.url);
  await pdf(inv.url, "invoice");
  const read = typed("Order", await polar.orders.get(id));
  equal(read.is_invoice_generated, true, "is_invoice_generated");
  ensure(read.invoice_number.startsWith("JS-"), `invoice_number ${read.invoice_number}`);
  equal(await polar.orders.generateInvoice(id), null, "generateInvoice again");
  await alreadyIssued(polar.orders.update(id, { billing_name: "Other" }), "update after");
});

check("the_buyer_generates_its_invoice_in_the_portal", async () => {
  const id = S.portalOrder.id;
  const session = typed("CustomerSession", await polar.customerSessions.create({ customer_id: S.portalOrder.customer_id }));
  const portal = createPolar({ accessToken: session.token, baseUrl: URL_, timeout: 15 });
  await notIssued(portal.customerPortal.orders.invoice(id), "portal invoice before");
  // The address cleared (an explicit null): no address to invoice, 422.
  const cleared = typed("CustomerOrder", await portal.customerPortal.orders.update(id, { billing_address: null }));
  equal(cleared.billing_address, null, "billing_address cleared");
  const e = await thrown(portal.customerPortal.orders.generateInvoice(id));
  ensure(e instanceof errors.MissingInvoiceBillingDetails, `${e.constructor.name}: ${e.message}`);
  equal(e.statusCode, 422, "status");
  equal(e.error.error, "MissingInvoiceBillingDetails", "error");
  ensure(e.error.detail.startsWith("Billing name and address are required"), e.error.detail);
  const order = typed(
    "CustomerOrder",
    await portal.customerPortal.orders.update(id, { billing_name: "Jean Dupont", billing_address: LYON }),
  );
  equal([order.billing_name, order.billing_address?.city], ["Jean Dupont", "Lyon"], "updated");
  equal(await portal.customerPortal.orders.generateInvoice(id), null, "generateInvoice");
  const inv = await issued(() => portal.customerPortal.orders.invoice(id), "CustomerOrderInvoice", "portal invoice");
  await pdf(inv.url, "portal invoice");
  await alreadyIssued(portal.customerPortal.orders.update(id, { billing_name: "X" }), "portal update after");
  typed("OrderInvoice", await polar.orders.invoice(id));
});

async function main() {
  let passed = 0;
  let failed = 0;
  console.log(`# @polar-sh/sdk 1.0.1 invoices, module ${MODULE}, against ${URL_}`);
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
