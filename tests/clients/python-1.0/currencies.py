"""Issue 49 (several currencies) through Polar's Python SDK 1.0.2 (polar-sdk==1.0.2,
tests/clients/python-1.0/requirements.txt): a product sold in usd, eur and jpy (`Product`,
each price's `price_currency`), the organization's `default_presentment_currency` changed
to eur (`Organization`), checkouts in each currency (an explicit `currency`, the buyer's
country from `customer_ip_address` when the server was given a GeoIP database, and the
organization's default), the refusal of a currency the product lacks (the SDK's
`HTTPValidationError`), and after each sale the order, the subscription and a refund in the
checkout's currency (`Checkout`, `CheckoutPublicConfirmed`, `Order`, `Subscription`,
`Refund`), amounts in the currency's minor unit (¥3,000 is 3000). `POST /v1/subscriptions/`
starts a free subscription in the organization's default currency.

Reads TOLLGATE_URL, TOLLGATE_TOKEN (a token with every scope), TOLLGATE_API_VERSION
(v2026_04, v2026_10 or v2027_01) and, optionally, TOLLGATE_GEOIP_JP_IP: an address the
server's GeoIP database places in Japan (without it the address check is not run). Prints
one line per check and `N passed, M failed`; exits 1 when M > 0. Run by tests/api/clients.rs.
"""

import importlib
import json
import os
import sys
import time
import traceback
import uuid

URL = os.environ["TOLLGATE_URL"].rstrip("/")
TOKEN = os.environ["TOLLGATE_TOKEN"]
API = os.environ.get("TOLLGATE_API_VERSION", "v2026_04")
sdk = importlib.import_module(f"polar.{API}")
models = importlib.import_module(f"polar.{API}.outputs")
errors = importlib.import_module(f"polar.{API}.errors")
RUN = uuid.uuid4().hex[:8]

ANSWERS = []


def record(response):
    response.read()
    ANSWERS.append(response)


def raw_json():
    """The JSON of the last answer the SDK received."""
    return json.loads(ANSWERS[-1].text)


polar = sdk.Polar(TOKEN, base_url=URL, timeout=15.0)
polar._client._client.event_hooks["response"].append(record)


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



GEOIP_JP_IP = os.environ.get("TOLLGATE_GEOIP_JP_IP")
# What each currency's prices are: one-time, monthly.
PRICES = {"usd": (2000, 1000), "eur": (1800, 900), "jpy": (3000, 1500)}
CURRENCIES = list(PRICES)
NOT_AVAILABLE = "Product is not available in the specified currency."


def fixed(currency, amount):
    return {"amount_type": "fixed", "price_amount": amount, "price_currency": currency}


def refused(call, loc, msg):
    e = None
    try:
        call()
    except errors.HTTPValidationError as err:
        e = err
    ensure(e is not None, f"accepted; expected a 422 at {loc}")
    equal(e.status_code, 422, "status")
    equal([(list(d.loc), d.msg) for d in e.error.detail], [(loc, msg)], "detail")


def paid(checkout):
    """Confirms with the test card and waits (bounded) for the order; answers it."""
    confirmed = model(
        polar.checkouts.client_confirm(
            checkout.client_secret, confirmation_token_id="tok_visa",
            customer_name="Ada Lovelace",
            customer_email=f"buyer-{uuid.uuid4().hex[:6]}@example.com",
            customer_billing_address={"country": "FR"}),
        "CheckoutPublicConfirmed")
    equal(confirmed.currency, checkout.currency, "confirmed currency")
    equal(confirmed.total_amount, checkout.total_amount, "confirmed total_amount")
    deadline = time.monotonic() + 10
    while polar.checkouts.client_get(checkout.client_secret).status != "succeeded":
        ensure(time.monotonic() < deadline, "the checkout did not succeed within 10 s")
        time.sleep(0.2)
    page = model(polar.orders.list(checkout_id=checkout.id), "ListResourceOrder")
    equal(len(page.items), 1, "orders of the checkout")
    order = model(polar.orders.get(page.items[0].id), "Order")
    equal(order.currency, checkout.currency, "order currency")
    equal(order.total_amount, checkout.total_amount, "order total_amount")
    return order


def bought_in(checkout, currency, amount):
    equal(checkout.currency, currency, "checkout currency")
    equal((checkout.amount, checkout.total_amount), (amount, amount), "checkout amounts")
    return paid(checkout)


@check
def a_product_sells_in_dollars_euros_and_yen():
    org = model(polar.organizations.create(
        name=f"Currencies {RUN}", slug=f"cur-{API.replace('_', '-')}-{RUN}"), "Organization")
    S.org = org.id
    equal(org.default_presentment_currency, "usd", "default_presentment_currency")
    ebook = model(polar.products.create(
        name=f"Ebook {RUN}", organization_id=S.org,
        prices=[fixed(c, one) for c, (one, _) in PRICES.items()]), "Product")
    equal([(p.price_currency, p.price_amount) for p in ebook.prices],
          [(c, one) for c, (one, _) in PRICES.items()], "prices")
    S.ebook = ebook.id
    plan = model(polar.products.create(
        name=f"Plan {RUN}", organization_id=S.org, recurring_interval="month",
        prices=[fixed(c, monthly) for c, (_, monthly) in PRICES.items()]), "Product")
    equal(sorted(p.price_currency for p in plan.prices), sorted(CURRENCIES), "plan currencies")
    S.plan = plan.id
    free = model(polar.products.create(
        name=f"Community {RUN}", organization_id=S.org, recurring_interval="month",
        prices=[{"amount_type": "free", "price_currency": c} for c in CURRENCIES]), "Product")
    S.free = free.id
    dollars_euros = model(polar.products.create(
        name=f"No yen {RUN}", organization_id=S.org,
        prices=[fixed("usd", 500), fixed("eur", 450)]), "Product")
    S.no_yen = dollars_euros.id


@check
def the_default_currency_becomes_the_euro():
    org = model(polar.organizations.update(S.org, default_presentment_currency="eur"),
                "Organization")
    equal(org.default_presentment_currency, "eur", "updated")
    org = model(polar.organizations.get(S.org), "Organization")
    equal(org.default_presentment_currency, "eur", "read")


@check
def an_explicit_currency_sells_and_refunds_in_it():
    for currency, (amount, _) in PRICES.items():
        checkout = model(polar.checkouts.create(products=[S.ebook], currency=currency),
                         "Checkout")
        equal(checkout.product_price.price_currency, currency, "product_price currency")
        order = bought_in(checkout, currency, amount)
        refund = model(polar.refunds.create(order_id=order.id, reason="customer_request",
                                            amount=amount // 2), "Refund")
        equal((refund.currency, refund.amount), (currency, amount // 2), "refund")
        order = model(polar.orders.get(order.id), "Order")
        equal((order.status, order.refunded_amount, order.currency),
              ("partially_refunded", amount // 2, currency), "refunded order")


@check
def without_a_currency_the_checkout_is_in_the_organizations_default():
    checkout = model(polar.checkouts.create(products=[S.ebook]), "Checkout")
    bought_in(checkout, "eur", PRICES["eur"][0])


@check
def a_currency_the_product_lacks_is_refused():
    refused(lambda: polar.checkouts.create(products=[S.no_yen], currency="jpy"),
            ["body", "products", 0], NOT_AVAILABLE)


@check
def subscriptions_are_in_their_checkouts_currency():
    for currency, (_, amount) in PRICES.items():
        checkout = model(polar.checkouts.create(products=[S.plan], currency=currency),
                         "Checkout")
        order = bought_in(checkout, currency, amount)
        s = model(polar.subscriptions.get(order.subscription_id), "Subscription")
        equal((s.currency, s.amount), (currency, amount), "subscription")
        equal(order.subscription.currency, currency, "order's subscription currency")


@check
def the_api_starts_a_free_subscription_in_the_default_currency():
    customer = model(polar.customers.create(
        email=f"free-{RUN}@example.com", organization_id=S.org), "Customer")
    s = model(polar.subscriptions.create(product_id=S.free, customer_id=customer.id),
              "Subscription")
    equal(s.currency, "eur", "currency")
    refused(lambda: polar.subscriptions.create(product_id=S.ebook, customer_id=customer.id),
            ["body", "product_id"], "Product is not a recurring product.")


if GEOIP_JP_IP:
    @check
    def the_buyers_address_picks_the_yen():
        checkout = model(polar.checkouts.create(products=[S.ebook],
                                                customer_ip_address=GEOIP_JP_IP), "Checkout")
        bought_in(checkout, "jpy", PRICES["jpy"][0])


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
