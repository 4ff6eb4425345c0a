"""Issue 48's invoices through Polar's Python SDK 1.0.2 (polar-sdk==1.0.2,
tests/clients/python-1.0/requirements.txt): a German seller (DE136695976) invoicing on
request sells to French consumers at a price created with `tax_behavior="inclusive"`
(parsed back from `products.create` and `products.get`), and every invoice answer loads into
the SDK: the seller's `orders.update(billing_name, billing_address)` (`Order`),
`orders.generate_invoice` (`None`: the 202's body `null`), `orders.invoice`
(`OrderInvoice.url`, polled until issued, bounded; the PDF behind it); the buyer's
`customer_portal.orders.update` (`CustomerOrder`), `generate_invoice` and `invoice`
(`CustomerOrderInvoice`) with a customer session's token; and the refusals as the SDK
raises them with the body readable: 404 `InvoiceDoesNotExist`, 409 `InvoiceAlreadyIssued`,
422 `MissingInvoiceBillingDetails` and a country change's 422 `HTTPValidationError`.

The SDK declares 404 as `ResourceNotFound` (its model's `error` is the literal
"ResourceNotFound") and no 409 for `update`: for 404 `InvoiceDoesNotExist` (Polar's own
answer too) polar-sdk 1.0.2 raises `PolarDeserializationError` (the raw answer is checked),
for 409 `InvoiceAlreadyIssued` its `PolarClientError` with the body's text. A name is
required at the checkout, so the 422 `MissingInvoiceBillingDetails` is reached by clearing
the address (`billing_address=None`).

Reads TOLLGATE_URL, TOLLGATE_TOKEN (a token with every scope) and TOLLGATE_API_VERSION
(v2026_04, v2026_10 or v2027_01). Prints one line per check and `N passed, M failed`; exits
1 when M > 0. Run by tests/api/clients.rs.
"""

import importlib
import json
import os
import sys
import time
import traceback
import uuid

import httpx
from polar.base import PolarClientError, PolarDeserializationError

URL = os.environ["TOLLGATE_URL"].rstrip("/")
TOKEN = os.environ["TOLLGATE_TOKEN"]
API = os.environ.get("TOLLGATE_API_VERSION", "v2026_04")
sdk = importlib.import_module(f"polar.{API}")
models = importlib.import_module(f"polar.{API}.outputs")
errors = importlib.import_module(f"polar.{API}.errors")
RUN = uuid.uuid4().hex[:8]
SELLER_TAX = "DE136695976"

ANSWERS = []


def record(response):
    response.read()
    ANSWERS.append(response)


def raw_json():
    """The JSON of the last answer the SDK received."""
    return json.loads(ANSWERS[-1].text)


polar = sdk.Polar(TOKEN, base_url=URL, timeout=15.0)
polar._client._client.event_hooks["response"].append(record)
http = httpx.Client(base_url=URL, timeout=15.0, headers={"Authorization": f"Bearer {TOKEN}"})


class State:
    pass


S = State()
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def ensure(condition, message):
    if not condition:
        raise AssertionError(message)


def equal(actual, expected, what):
    ensure(actual == expected, f"{what}: {actual!r} != {expected!r}")


def model(value, name):
    ensure(isinstance(value, getattr(models, name)), f"{type(value).__name__}, not {name}")
    return value



def raised(call):
    """The exception `call` raises (a result is a failure)."""
    try:
        result = call()
    except Exception as e:  # noqa: BLE001 - the caller checks the type
        return e
    raise AssertionError(f"no error, a result: {result!r}")


def body_of(e):
    """The refusal's JSON body, from the SDK's error (a model, or the text it kept)."""
    err = e.error
    if isinstance(err, str):
        return json.loads(err)
    return {"error": err.error, "detail": err.detail}


def not_issued(call, what):
    """`call` answers 404 `InvoiceDoesNotExist` (the raw answer checked). The SDK maps 404 to
    `ResourceNotFound`, whose model's `error` is the literal "ResourceNotFound": the body
    naming `InvoiceDoesNotExist` (Polar's own answer too) does not load into it, and polar-sdk
    1.0.2 raises its `PolarDeserializationError` instead."""
    e = raised(call)
    ensure(isinstance(e, (errors.ResourceNotFound, PolarDeserializationError)),
           f"{what}: {type(e).__name__}: {e}")
    equal(ANSWERS[-1].status_code, 404, f"{what} status")
    equal(raw_json()["error"], "InvoiceDoesNotExist", f"{what} error (raw)")
    S.not_found_raises = type(e).__name__


def issued(call, name, what):
    """`call`'s answer once the invoice is issued (bounded: issued within a second)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            return model(call(), name)
        except Exception:  # noqa: BLE001 - 404 until issued
            if ANSWERS[-1].status_code != 404:
                raise
            ensure(time.monotonic() < deadline, f"{what}: not issued within 10 s")
            time.sleep(0.1)


def pdf(url, what):
    r = httpx.get(url, timeout=15.0)
    equal(r.status_code, 200, f"{what} PDF status")
    equal(r.headers["content-type"], "application/pdf", f"{what} PDF type")
    ensure(r.content.startswith(b"%PDF-"), f"{what}: not a PDF")


def already_issued(call, what):
    """`call` answers 409 `InvoiceAlreadyIssued`: the SDK declares no 409 for an update,
    so it raises its `PolarClientError` with the body's text."""
    e = raised(call)
    ensure(isinstance(e, PolarClientError), f"{what}: {type(e).__name__}: {e}")
    equal(e.status_code, 409, f"{what} status")
    equal(body_of(e)["error"], "InvoiceAlreadyIssued", f"{what} error")


def bought(name):
    """A French consumer's paid order."""
    checkout = model(polar.checkouts.create(products=[S.product]), "Checkout")
    address = {"country": "FR"}
    public = model(polar.checkouts.client_update(
        checkout.client_secret, customer_billing_address=address), "CheckoutPublic")
    buyer = {"customer_billing_address": address, "customer_name": name}
    confirmed = model(polar.checkouts.client_confirm(
        public.client_secret, confirmation_token_id="tok_visa",
        customer_email=f"buyer-{uuid.uuid4().hex[:6]}@example.fr", **buyer),
        "CheckoutPublicConfirmed")
    deadline = time.monotonic() + 10
    while polar.checkouts.client_get(confirmed.client_secret).status != "succeeded":
        ensure(time.monotonic() < deadline, "the checkout did not succeed within 10 s")
        time.sleep(0.2)
    page = model(polar.orders.list(checkout_id=checkout.id), "ListResourceOrder")
    equal(len(page.items), 1, "orders of the checkout")
    order = model(page.items[0], "Order")
    equal(order.is_invoice_generated, False, "is_invoice_generated")
    return order


LYON = {"country": "FR", "line1": "12 rue des Lilas", "city": "Lyon", "postal_code": "69001"}


@check
def a_seller_invoicing_on_request():
    org = model(polar.organizations.create(
        name=f"Invoices {RUN}", slug=f"inv-{API.replace('_', '-')}-{RUN}"), "Organization")
    S.org = org.id
    r = http.patch(f"/v1/organizations/{org.id}",
                   json={"tax": {"country": "DE", "tax_id": SELLER_TAX,
                                 "registrations": ["eu_oss"], "invoice_timing": "on_request",
                                 "invoice_prefix": "PY", "legal_name": "Py Software GmbH",
                                 "address": {"line1": "Friedrichstraße 12",
                                             "postal_code": "10117", "city": "Berlin",
                                             "country": "DE"}},
                         "default_tax_behavior": "location"})
    equal(r.status_code, 200, f"raw PATCH of tax: {r.text}")
    # The price includes its tax (what `location` means for French buyers too): the SDK
    # sends the price's `tax_behavior` and parses it back.
    product = model(polar.products.create(
        name=f"Lifetime {RUN}", organization_id=S.org,
        prices=[{"amount_type": "fixed", "price_amount": 1200, "price_currency": "usd",
                 "tax_behavior": "inclusive"}]),
        "Product")
    equal(product.prices[0].tax_behavior, "inclusive", "the price's tax_behavior")
    equal(raw_json()["prices"][0]["tax_behavior"], "inclusive", "tax_behavior on the wire")
    read = model(polar.products.get(product.id), "Product")
    equal(read.prices[0].tax_behavior, "inclusive", "the price's tax_behavior read")
    S.product = product.id
    S.order = bought("Marie Curie")
    S.portal_order = bought("Jean Dupont")


@check
def the_seller_edits_the_billing_details_then_generates_the_invoice():
    oid = S.order.id
    not_issued(lambda: polar.orders.invoice(oid), "invoice before")
    order = model(polar.orders.update(oid, billing_name="Marie Curie SARL",
                                      billing_address=LYON), "Order")
    equal((order.billing_name, order.billing_address.city, order.billing_address.country),
          ("Marie Curie SARL", "Lyon", "FR"), "updated")
    e = raised(lambda: polar.orders.update(oid, billing_address={**LYON, "country": "DE"}))
    ensure(isinstance(e, errors.HTTPValidationError), f"{type(e).__name__}: {e}")
    equal(e.status_code, 422, "status")
    equal([(d.loc, d.msg) for d in e.error.detail],
          [(["body", "billing_address", "country"], "Country cannot be changed")], "detail")
    equal(polar.orders.generate_invoice(oid), None, "generate_invoice")
    equal(ANSWERS[-1].status_code, 202, "generate_invoice status")
    inv = issued(lambda: polar.orders.invoice(oid), "OrderInvoice", "invoice")
    ensure(f"/v1/invoices/" in inv.url and "signature=" in inv.url, inv.url)
    pdf(inv.url, "invoice")
    order = model(polar.orders.get(oid), "Order")
    equal(order.is_invoice_generated, True, "is_invoice_generated")
    ensure(order.invoice_number.startswith("PY-"), f"invoice_number {order.invoice_number}")
    # Asking again: 202 again, nothing changes.
    equal(polar.orders.generate_invoice(oid), None, "generate_invoice again")
    already_issued(lambda: polar.orders.update(oid, billing_name="Other"), "update after")


@check
def the_buyer_generates_its_invoice_in_the_portal():
    oid = S.portal_order.id
    session = model(polar.customer_sessions.create(customer_id=S.portal_order.customer_id),
                    "CustomerSession")
    portal = sdk.Polar(session.token, base_url=URL, timeout=15.0)
    portal._client._client.event_hooks["response"].append(record)
    not_issued(lambda: portal.customer_portal.orders.invoice(oid), "portal invoice before")
    # The address cleared (an explicit null): no address to invoice, 422.
    order = model(portal.customer_portal.orders.update(oid, billing_address=None),
                  "CustomerOrder")
    equal(order.billing_address, None, "billing_address cleared")
    e = raised(lambda: portal.customer_portal.orders.generate_invoice(oid))
    ensure(isinstance(e, errors.MissingInvoiceBillingDetails), f"{type(e).__name__}: {e}")
    equal(e.status_code, 422, "status")
    equal(body_of(e)["error"], "MissingInvoiceBillingDetails", "error")
    ensure(e.error.detail.startswith("Billing name and address are required"), e.error.detail)
    order = model(portal.customer_portal.orders.update(
        oid, billing_name="Jean Dupont", billing_address=LYON), "CustomerOrder")
    equal((order.billing_name, order.billing_address.city), ("Jean Dupont", "Lyon"), "updated")
    equal(portal.customer_portal.orders.generate_invoice(oid), None, "generate_invoice")
    inv = issued(lambda: portal.customer_portal.orders.invoice(oid), "CustomerOrderInvoice",
                 "portal invoice")
    pdf(inv.url, "portal invoice")
    already_issued(lambda: portal.customer_portal.orders.update(oid, billing_name="X"),
                   "portal update after")
    # The seller reads the same invoice.
    model(polar.orders.invoice(oid), "OrderInvoice")


def main():
    passed = failed = 0
    for fn in CHECKS:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported and counted
            failed += 1
            print(f"FAIL {fn.__name__}: {type(e).__name__}: {e}")
            traceback.print_exc(limit=3)
            if ANSWERS:
                last = ANSWERS[-1]
                print(f"  last: {last.request.method} {last.request.url} -> "
                      f"{last.status_code} {last.text[:600]}")
        else:
            passed += 1
            print(f"ok   {fn.__name__}")
    print(f"# a 404 InvoiceDoesNotExist raises {getattr(S, 'not_found_raises', '?')}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
