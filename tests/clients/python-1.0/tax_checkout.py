"""Issue 48 through Polar's Python SDK 1.0.2 (polar-sdk==1.0.2,
tests/clients/python-1.0/requirements.txt): a German seller (DE136695976, EU One-Stop-Shop)
sells a one-time price of 1200, and every answer with tax loads into the SDK's models with
the tax values asserted: the organization updated and read (`Organization`, its
`default_tax_behavior`; the SDK ignores Tollgate's additive `tax` object), checkouts created,
updated by the buyer and the seller, read and confirmed (`Checkout`, `CheckoutPublic`,
`CheckoutPublicConfirmed`: `tax_amount`, `tax_behavior`, `net_amount`, `total_amount`,
`is_business_customer`, `customer_billing_name`, `customer_tax_id`), and the orders read
and listed (`Order`: `tax_amount`, `billing_name`, `invoice_number`,
`is_invoice_generated`). Tollgate's additive keys (`tax_breakdown`, an order's
`tax_behavior` and `customer_tax_id`) are read from the raw answer the SDK parsed. A number
whose check digits fail loads into the SDK's `HTTPValidationError`.

The `tax` object is set with a raw PATCH (the SDK's `OrganizationUpdate` has no such key).

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

URL = os.environ["TOLLGATE_URL"].rstrip("/")
TOKEN = os.environ["TOLLGATE_TOKEN"]
API = os.environ.get("TOLLGATE_API_VERSION", "v2026_04")
sdk = importlib.import_module(f"polar.{API}")
models = importlib.import_module(f"polar.{API}.outputs")
errors = importlib.import_module(f"polar.{API}.errors")
RUN = uuid.uuid4().hex[:8]
SELLER_TAX = "DE136695976"
FR_BUSINESS = "FR40303265045"
FR_BUSINESS_WRONG = "FR40303265046"

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


def amounts(c):
    return (c.tax_behavior, c.net_amount, c.tax_amount, c.total_amount)


def breakdown(raw, country, rate, reason, amount):
    b = raw["tax_breakdown"]
    equal(len(b), 1, "tax_breakdown entries")
    equal((b[0]["country"], b[0]["rate"], b[0]["taxability_reason"], b[0]["amount"]),
          (country, rate, reason, amount), "tax_breakdown[0]")


def paid(checkout, **buyer):
    """Confirms with the test card and waits (bounded) for the order; answers it."""
    confirmed = model(
        polar.checkouts.client_confirm(
            checkout.client_secret, confirmation_token_id="tok_visa",
            customer_email=f"buyer-{uuid.uuid4().hex[:6]}@example.com", **buyer),
        "CheckoutPublicConfirmed")
    equal(confirmed.total_amount, checkout.total_amount, "confirmed total_amount")
    equal(confirmed.tax_amount, checkout.tax_amount, "confirmed tax_amount")
    deadline = time.monotonic() + 10
    while polar.checkouts.client_get(checkout.client_secret).status != "succeeded":
        ensure(time.monotonic() < deadline, "the checkout did not succeed within 10 s")
        time.sleep(0.2)
    page = model(polar.orders.list(checkout_id=checkout.id), "ListResourceOrder")
    equal(len(page.items), 1, "orders of the checkout")
    listed = model(page.items[0], "Order")
    order = model(polar.orders.get(listed.id), "Order")
    equal((listed.tax_amount, listed.total_amount), (order.tax_amount, order.total_amount),
          "listed and read amounts")
    ensure(isinstance(order.invoice_number, str) and order.invoice_number,
           f"invoice_number {order.invoice_number!r}")
    ensure(isinstance(order.is_invoice_generated, bool), "is_invoice_generated")
    return order, raw_json()


@check
def the_seller_sets_its_tax_and_default_tax_behavior():
    org = model(polar.organizations.create(name=f"Tax {RUN}", slug=f"tax-{API.replace('_', '-')}-{RUN}"),
                "Organization")
    S.org = org.id
    r = http.patch(f"/v1/organizations/{org.id}",
                   json={"tax": {"country": "DE", "tax_id": SELLER_TAX,
                                 "registrations": ["eu_oss"]}})
    equal(r.status_code, 200, f"raw PATCH of tax: {r.text}")
    org = model(polar.organizations.update(S.org, default_tax_behavior="location"),
                "Organization")
    equal(org.default_tax_behavior, "location", "default_tax_behavior")
    org = model(polar.organizations.get(S.org), "Organization")
    equal(org.default_tax_behavior, "location", "default_tax_behavior read")
    tax = raw_json()["tax"]
    equal((tax["country"], tax["tax_id"], tax["registrations"]),
          ("DE", SELLER_TAX, ["eu_oss"]), "tax (raw)")
    product = model(polar.products.create(
        name=f"Lifetime {RUN}", organization_id=S.org,
        prices=[{"amount_type": "fixed", "price_amount": 1200, "price_currency": "usd"}]),
        "Product")
    S.product = product.id


@check
def a_german_consumer_pays_19_percent_inside_the_price():
    checkout = model(polar.checkouts.create(products=[S.product]), "Checkout")
    public = model(polar.checkouts.client_update(
        checkout.client_secret, customer_billing_address={"country": "DE"}), "CheckoutPublic")
    equal(amounts(public), ("inclusive", 1008, 192, 1200), "client_update amounts")
    breakdown(raw_json(), "DE", 19, "standard_rated", 192)
    checkout = model(polar.checkouts.get(checkout.id), "Checkout")
    equal(amounts(checkout), ("inclusive", 1008, 192, 1200), "get amounts")
    equal(checkout.is_business_customer, False, "is_business_customer")
    order, raw = paid(checkout, customer_name="Hans Muster",
                      customer_billing_address={"country": "DE"})
    equal((order.net_amount, order.tax_amount, order.total_amount), (1008, 192, 1200),
          "order amounts")
    equal(order.billing_address.country, "DE", "billing_address.country")
    equal(raw["tax_behavior"], "inclusive", "order tax_behavior (raw)")
    breakdown(raw, "DE", 19, "standard_rated", 192)
    S.german_order = order.id


@check
def half_a_refund_returns_half_the_tax():
    refund = model(polar.refunds.create(order_id=S.german_order, reason="customer_request",
                                        amount=504), "Refund")
    equal((refund.amount, refund.tax_amount), (504, 96), "refund amounts")
    order = model(polar.orders.get(S.german_order), "Order")
    equal((order.refunded_amount, order.refunded_tax_amount), (504, 96), "refunded")
    equal(order.status, "partially_refunded", "status")


@check
def a_french_business_is_reverse_charged():
    checkout = model(polar.checkouts.create(products=[S.product]), "Checkout")
    business = {
        "is_business_customer": True,
        "customer_billing_name": "Acme SAS",
        "customer_billing_address": {"country": "FR", "line1": "1 rue de Rivoli",
                                     "city": "Paris", "postal_code": "75001"},
    }
    e = None
    try:
        polar.checkouts.client_update(checkout.client_secret, customer_tax_id=FR_BUSINESS_WRONG,
                                      **business)
    except errors.HTTPValidationError as err:
        e = err
    ensure(e is not None, "a wrong number was accepted")
    equal(e.status_code, 422, "status")
    equal([(d.loc, d.msg) for d in e.error.detail],
          [(["body", "customer_tax_id"], "Invalid tax ID.")], "detail")
    public = model(polar.checkouts.client_update(
        checkout.client_secret, customer_tax_id=FR_BUSINESS, **business), "CheckoutPublic")
    equal((public.is_business_customer, public.customer_billing_name, public.customer_tax_id),
          (True, "Acme SAS", FR_BUSINESS), "business fields")
    equal((public.tax_amount, public.total_amount), (0, 1200), "amounts")
    breakdown(raw_json(), "FR", 0, "reverse_charge", 0)
    checkout = model(polar.checkouts.get(checkout.id), "Checkout")
    equal((checkout.customer_tax_id, checkout.tax_amount), (FR_BUSINESS, 0), "get")
    order, raw = paid(checkout, customer_name="Marie Curie", customer_tax_id=FR_BUSINESS,
                      **business)
    equal((order.tax_amount, order.total_amount, order.billing_name), (0, 1200, "Acme SAS"),
          "order")
    equal(raw["customer_tax_id"], FR_BUSINESS, "order customer_tax_id (raw)")
    breakdown(raw, "FR", 0, "reverse_charge", 0)


@check
def an_exclusive_seller_adds_the_vat():
    org = model(polar.organizations.update(S.org, default_tax_behavior="exclusive"),
                "Organization")
    equal(org.default_tax_behavior, "exclusive", "default_tax_behavior")
    checkout = model(polar.checkouts.create(products=[S.product]), "Checkout")
    checkout = model(polar.checkouts.update(
        checkout.id, customer_billing_address={"country": "DE"}), "Checkout")
    equal(amounts(checkout), ("exclusive", 1200, 228, 1428), "update amounts")
    order, raw = paid(checkout, customer_name="Hans Muster",
                      customer_billing_address={"country": "DE"})
    equal((order.net_amount, order.tax_amount, order.total_amount), (1200, 228, 1428),
          "order amounts")
    equal(raw["tax_behavior"], "exclusive", "order tax_behavior (raw)")


@check
def a_us_buyer_pays_no_tax():
    checkout = model(polar.checkouts.create(products=[S.product]), "Checkout")
    address = {"country": "US", "state": "US-NY", "postal_code": "10001"}
    public = model(polar.checkouts.client_update(
        checkout.client_secret, customer_billing_address=address), "CheckoutPublic")
    equal(amounts(public), ("exclusive", 1200, 0, 1200), "amounts")
    order, _ = paid(public, customer_name="Joe", customer_billing_address=address)
    equal((order.tax_amount, order.total_amount), (0, 1200), "order amounts")


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
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
