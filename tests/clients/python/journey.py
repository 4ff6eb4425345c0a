"""A seller's and a buyer's whole journey through Tollgate with Polar's official Python SDK.

Pinned: polar-sdk==0.13.5 (tests/clients/python/requirements.txt). Reads TOLLGATE_URL and
TOLLGATE_TOKEN (a personal access token with every scope, e.g. the bootstrap token of a fresh
server). Every check is a named function; a failing check prints its name and the exception
and the run goes on with the next one (checks that need an earlier result fail with it).
The last line is `N passed, M failed`; the exit code is 1 when M > 0.

Run by tests/api/clients.rs; by hand:
    TOLLGATE_URL=http://127.0.0.1:8000 TOLLGATE_TOKEN=polar_pat_... python journey.py
"""

import os
import sys
import time
import traceback
import uuid

import pydantic
from polar_sdk import Polar, models

URL = os.environ["TOLLGATE_URL"].rstrip("/")
TOKEN = os.environ["TOLLGATE_TOKEN"]
RUN = uuid.uuid4().hex[:8]
TIMEOUT_MS = 15000

polar = Polar(access_token=TOKEN, server_url=URL, timeout_ms=TIMEOUT_MS)


class State:
    """Results of earlier checks that later checks use."""


S = State()
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def ensure(condition, message="condition failed"):
    if not condition:
        raise AssertionError(message)


def equal(actual, expected, what="value"):
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def raises(cls, fn, *args, **kwargs):
    """Calls fn and returns the exception of class `cls` it raised; fails otherwise."""
    try:
        result = fn(*args, **kwargs)
    except cls as e:
        return e
    except Exception as e:  # noqa: BLE001 - reported with its class
        raise AssertionError(f"expected {cls.__name__}, got {type(e).__name__}: {e}") from e
    raise AssertionError(f"expected {cls.__name__}, got a result: {result!r}")


def not_found(fn, *args, **kwargs):
    e = raises(models.ResourceNotFound, fn, *args, **kwargs)
    ensure(isinstance(e.data.detail, str) and e.data.detail, f"no detail in {e.data!r}")
    return e


def invalid(fn, *args, **kwargs):
    e = raises(models.HTTPValidationError, fn, *args, **kwargs)
    ensure(e.data.detail, f"no validation items in {e.data!r}")
    for item in e.data.detail:
        ensure(isinstance(item.msg, str) and isinstance(item.type, str), f"bad item {item!r}")
    return e


def locs(e):
    return [list(item.loc) for item in e.data.detail]


def items_of(page):
    """The items of a list call's first page (None when the call returned nothing)."""
    ensure(page is not None, "list returned None")
    return page.result.items


def all_items(page):
    """Every item over every page of a list call."""
    out = []
    while page is not None:
        out.extend(page.result.items)
        page = page.next()
    return out


def uid():
    return str(uuid.uuid4())


# --- Seller: organization -------------------------------------------------------------------


@check
def organization_create():
    org = polar.organizations.create(
        request={"name": f"Compat Py {RUN}", "slug": f"compat-py-{RUN}"}
    )
    S.org = org
    ensure(isinstance(org, models.Organization))
    equal(org.slug, f"compat-py-{RUN}", "slug")
    ensure(org.subscription_settings.proration_behavior in ("invoice", "prorate"))


@check
def organization_get():
    org = polar.organizations.get(id=S.org.id)
    equal(org.id, S.org.id, "id")
    equal(org.name, S.org.name, "name")


@check
def organization_update():
    org = polar.organizations.update(
        id=S.org.id,
        organization_update={
            "name": f"Compat Py {RUN} renamed",
            "profile_settings": {"description": "Sells compatible things"},
        },
    )
    equal(org.name, f"Compat Py {RUN} renamed", "name")
    ensure(org.modified_at is not None, "modified_at not set")
    S.org = org


@check
def organization_list():
    page = polar.organizations.list(slug=f"compat-py-{RUN}")
    items = items_of(page)
    equal([o.id for o in items], [S.org.id], "ids")
    equal(page.result.pagination.total_count, 1, "total_count")
    ensure(any(o.id == S.org.id for o in all_items(polar.organizations.list(limit=1))))


# --- Seller: catalogue ----------------------------------------------------------------------


@check
def benefit_license_keys_create():
    benefit = polar.benefits.create(
        request={
            "type": "license_keys",
            "description": "Compat license key",
            "organization_id": S.org.id,
            "properties": {
                "prefix": "COMPAT",
                "activations": {"limit": 2, "enable_customer_admin": True},
                "limit_usage": 10,
            },
        }
    )
    ensure(isinstance(benefit, models.BenefitLicenseKeys), f"got {type(benefit).__name__}")
    equal(benefit.organization_id, S.org.id, "organization_id")
    equal(benefit.properties.prefix, "COMPAT", "prefix")
    equal(benefit.properties.activations.limit, 2, "activations.limit")
    equal(benefit.properties.limit_usage, 10, "limit_usage")
    ensure(benefit.properties.expires is None, "expires set")
    S.benefit = benefit


@check
def product_recurring_create():
    product = polar.products.create(
        request={
            "name": f"Compat Pro {RUN}",
            "description": "Monthly",
            "organization_id": S.org.id,
            "metadata": {"tier": "pro", "seats": 3, "beta": True},
            "prices": [
                {
                    "type": "recurring",
                    "amount_type": "fixed",
                    "price_amount": 1500,
                    "price_currency": "usd",
                    "recurring_interval": "month",
                }
            ],
        }
    )
    ensure(isinstance(product, models.Product))
    ensure(product.is_recurring, "not recurring")
    equal(product.metadata, {"tier": "pro", "seats": 3, "beta": True}, "metadata")
    price = product.prices[0]
    ensure(isinstance(price, models.ProductPriceRecurringFixed), f"price {type(price).__name__}")
    equal(price.price_amount, 1500, "price_amount")
    equal(price.recurring_interval, "month", "recurring_interval")
    S.recurring = product


@check
def product_one_time_create():
    product = polar.products.create(
        request={
            "name": f"Compat Lifetime {RUN}",
            "organization_id": S.org.id,
            "prices": [
                {
                    "type": "one_time",
                    "amount_type": "fixed",
                    "price_amount": 4900,
                    "price_currency": "usd",
                }
            ],
        }
    )
    ensure(not product.is_recurring, "recurring")
    price = product.prices[0]
    ensure(isinstance(price, models.ProductPriceOneTimeFixed), f"price {type(price).__name__}")
    S.one_time = product


@check
def product_update_benefits():
    for attr in ("recurring", "one_time"):
        product = polar.products.update_benefits(
            id=getattr(S, attr).id, product_benefits_update={"benefits": [S.benefit.id]}
        )
        equal([b.id for b in product.benefits], [S.benefit.id], f"{attr} benefits")
        ensure(isinstance(product.benefits[0], models.BenefitLicenseKeys))
        setattr(S, attr, product)


@check
def discount_fixed_create():
    discount = polar.discounts.create(
        request={
            "duration": "once",
            "type": "fixed",
            "amount": 500,
            "currency": "usd",
            "name": "Five off",
            "code": f"FIVE{RUN}",
            "organization_id": S.org.id,
        }
    )
    ensure(
        isinstance(discount, models.DiscountFixedOnceForeverDuration),
        f"got {type(discount).__name__}",
    )
    equal(discount.amount, 500, "amount")
    equal(discount.products, [], "products")
    S.fixed = discount


@check
def discount_percentage_create():
    discount = polar.discounts.create(
        request={
            "duration": "repeating",
            "duration_in_months": 3,
            "type": "percentage",
            "basis_points": 1000,
            "name": "Ten percent",
            "code": f"TEN{RUN}",
            "organization_id": S.org.id,
            "products": [S.recurring.id],
        }
    )
    ensure(
        isinstance(discount, models.DiscountPercentageRepeatDuration),
        f"got {type(discount).__name__}",
    )
    equal(discount.basis_points, 1000, "basis_points")
    equal(discount.duration_in_months, 3, "duration_in_months")
    equal([p.id for p in discount.products], [S.recurring.id], "products")
    S.percent = discount


@check
def catalogue_reads():
    product = polar.products.get(id=S.recurring.id)
    equal([b.id for b in product.benefits], [S.benefit.id], "benefits")
    products = all_items(polar.products.list(organization_id=S.org.id, is_recurring=True))
    equal([p.id for p in products], [S.recurring.id], "recurring products")
    benefit = polar.benefits.get(id=S.benefit.id)
    ensure(isinstance(benefit, models.BenefitLicenseKeys), f"got {type(benefit).__name__}")
    benefits = all_items(polar.benefits.list(organization_id=S.org.id))
    equal([b.id for b in benefits], [S.benefit.id], "benefits list")
    discount = polar.discounts.get(id=S.percent.id)
    equal(discount.id, S.percent.id, "discount id")
    discounts = all_items(polar.discounts.list(organization_id=S.org.id))
    equal({d.id for d in discounts}, {S.fixed.id, S.percent.id}, "discounts list")


# --- Checkouts ------------------------------------------------------------------------------


@check
def checkout_create_by_price():
    checkout = polar.checkouts.custom.create(
        request={
            "product_price_id": S.one_time.prices[0].id,
            "metadata": {"source": "python"},
        }
    )
    ensure(isinstance(checkout, models.Checkout))
    equal(checkout.status, "open", "status")
    equal(checkout.payment_processor, "stripe", "payment_processor")
    equal(checkout.product_id, S.one_time.id, "product_id")
    equal(checkout.amount, 4900, "amount")
    equal(checkout.metadata, {"source": "python"}, "metadata")
    ensure(checkout.client_secret, "no client_secret")
    S.checkout_one_time = checkout


@check
def checkout_create_by_product():
    checkout = polar.checkouts.custom.create(
        request={
            "product_id": S.recurring.id,
            "discount_id": S.percent.id,
            "customer_email": f"buyer-{RUN}@example.com",
        }
    )
    equal(checkout.product_price_id, S.recurring.prices[0].id, "product_price_id")
    equal(checkout.discount_id, S.percent.id, "discount_id")
    equal(checkout.total_amount, 1350, "total_amount")
    S.checkout_recurring = checkout


@check
def checkout_get():
    checkout = polar.checkouts.custom.get(id=S.checkout_one_time.id)
    equal(checkout.id, S.checkout_one_time.id, "id")
    equal(checkout.client_secret, S.checkout_one_time.client_secret, "client_secret")


@check
def checkout_update():
    checkout = polar.checkouts.custom.update(
        id=S.checkout_one_time.id,
        checkout_update={"metadata": {"source": "python", "step": 2}, "customer_name": "Ada"},
    )
    equal(checkout.metadata, {"source": "python", "step": 2}, "metadata")
    equal(checkout.customer_name, "Ada", "customer_name")


@check
def checkout_list():
    ids = {c.id for c in all_items(polar.checkouts.custom.list(organization_id=S.org.id))}
    ensure({S.checkout_one_time.id, S.checkout_recurring.id} <= ids, f"ids {ids}")
    page = polar.checkouts.custom.list(product_id=S.one_time.id, sorting=["-created_at"])
    equal([c.id for c in items_of(page)], [S.checkout_one_time.id], "by product")


@check
def checkout_client_get():
    public = polar.checkouts.custom.client_get(client_secret=S.checkout_one_time.client_secret)
    ensure(isinstance(public, models.CheckoutPublic))
    equal(public.id, S.checkout_one_time.id, "id")
    equal(public.organization.id, S.org.id, "organization.id")
    equal(public.status, "open", "status")


@check
def checkout_client_update():
    public = polar.checkouts.custom.client_update(
        client_secret=S.checkout_one_time.client_secret,
        checkout_update_public={
            "customer_email": f"buyer-{RUN}@example.com",
            "customer_name": "Ada Lovelace",
            "customer_billing_address": {
                "country": "US",
                "line1": "1 Main St",
                "postal_code": "10001",
                "city": "New York",
                "state": "NY",
            },
            "discount_code": f"FIVE{RUN}",
        },
    )
    equal(public.customer_email, f"buyer-{RUN}@example.com", "customer_email")
    equal(public.customer_name, "Ada Lovelace", "customer_name")
    equal(public.customer_billing_address.country, "US", "country")
    equal(public.discount_id, S.fixed.id, "discount_id")
    equal(public.total_amount, 4400, "total_amount")


def wait_succeeded(client_secret):
    deadline = time.monotonic() + 30
    while True:
        public = polar.checkouts.custom.client_get(client_secret=client_secret)
        if public.status == "succeeded":
            return public
        ensure(public.status == "confirmed", f"status {public.status}")
        ensure(time.monotonic() < deadline, "checkout did not succeed within 30 s")
        time.sleep(0.2)


@check
def checkout_client_confirm():
    confirmed = polar.checkouts.custom.client_confirm(
        client_secret=S.checkout_one_time.client_secret,
        checkout_confirm_stripe={"confirmation_token_id": "tok_visa"},
    )
    ensure(isinstance(confirmed, models.CheckoutPublicConfirmed))
    # A const field: pydantic stores it as STATUS (alias "status").
    equal(confirmed.STATUS, "confirmed", "status")
    ensure(confirmed.customer_session_token, "no customer_session_token")
    S.customer_session_token = confirmed.customer_session_token


@check
def checkout_succeeds():
    public = wait_succeeded(S.checkout_one_time.client_secret)
    ensure(public.customer_id, "no customer_id")
    S.customer_id = public.customer_id


@check
def checkout_subscription_confirm_and_succeed():
    confirmed = polar.checkouts.custom.client_confirm(
        client_secret=S.checkout_recurring.client_secret,
        checkout_confirm_stripe={
            "confirmation_token_id": "tok_visa",
            "customer_name": "Ada Lovelace",
            "customer_billing_address": {"country": "FR"},
        },
    )
    equal(confirmed.STATUS, "confirmed", "status")
    public = wait_succeeded(S.checkout_recurring.client_secret)
    equal(public.customer_id, S.customer_id, "same customer")


@check
def checkout_declined_payment():
    checkout = polar.checkouts.custom.create(request={"product_id": S.one_time.id})
    e = raises(
        models.SDKError,
        polar.checkouts.custom.client_confirm,
        client_secret=checkout.client_secret,
        checkout_confirm_stripe={
            "confirmation_token_id": "tok_decline_card",
            "customer_email": f"poor-{RUN}@example.com",
            "customer_name": "Poor Buyer",
            "customer_billing_address": {"country": "DE"},
        },
    )
    equal(e.status_code, 400, "status")
    equal(polar.checkouts.custom.get(id=checkout.id).status, "open", "status after decline")


@check
def checkout_get_after_success():
    checkout = polar.checkouts.custom.get(id=S.checkout_one_time.id)
    equal(checkout.status, "succeeded", "status")
    equal(checkout.customer_id, S.customer_id, "customer_id")


@check
def a_closed_checkout_is_refused():
    # Polar answers 403 NotOpenCheckout; 0.13.5 reads every 403 of these calls as
    # AlreadyActiveSubscriptionError, whose const `error` rejects it: pydantic's
    # ValidationError, exactly as against Polar itself.
    calls = [
        lambda: polar.checkouts.custom.update(
            id=S.checkout_one_time.id, checkout_update={"customer_name": "Late"}
        ),
        lambda: polar.checkouts.custom.client_update(
            client_secret=S.checkout_one_time.client_secret,
            checkout_update_public={"customer_name": "Late"},
        ),
        lambda: polar.checkouts.custom.client_confirm(
            client_secret=S.checkout_one_time.client_secret,
            checkout_confirm_stripe={"confirmation_token_id": "tok_visa"},
        ),
    ]
    for call in calls:
        e = raises(pydantic.ValidationError, call)
        ensure("NotOpenCheckout" in str(e), str(e))
    equal(polar.checkouts.custom.get(id=S.checkout_one_time.id).customer_name, "Ada Lovelace")


# --- Orders and subscriptions ---------------------------------------------------------------


@check
def orders_list():
    orders = all_items(polar.orders.list(organization_id=S.org.id))
    equal(len(orders), 2, "orders")
    by_product = {o.product_id: o for o in orders}
    ensure({S.one_time.id, S.recurring.id} == set(by_product), f"products {set(by_product)}")
    one_time = by_product[S.one_time.id]
    equal(one_time.billing_reason, "purchase", "billing_reason")
    equal(one_time.amount, 4400, "amount")
    equal(one_time.discount_id, S.fixed.id, "discount_id")
    equal(one_time.checkout_id, S.checkout_one_time.id, "checkout_id")
    equal(by_product[S.recurring.id].billing_reason, "subscription_create", "billing_reason")
    page = polar.orders.list(organization_id=S.org.id, product_price_type="one_time")
    equal([o.id for o in items_of(page)], [one_time.id], "one_time filter")
    S.order = one_time


@check
def orders_get():
    order = polar.orders.get(id=S.order.id)
    ensure(isinstance(order, models.Order))
    equal(order.id, S.order.id, "id")
    equal(order.customer.email, f"buyer-{RUN}@example.com", "customer.email")
    ensure(order.user.email, "no user.email")
    equal(order.product.id, S.one_time.id, "product.id")


@check
def subscriptions_list():
    subs = all_items(polar.subscriptions.list(organization_id=S.org.id, active=True))
    equal(len(subs), 1, "subscriptions")
    sub = subs[0]
    S.subscription = sub
    ensure(isinstance(sub, models.Subscription))
    equal(sub.status, "active", "status")
    equal(sub.product.id, S.recurring.id, "product.id")
    equal(sub.price.id, S.recurring.prices[0].id, "price.id")
    equal(sub.discount_id, S.percent.id, "discount_id")
    equal(sub.customer_id, S.customer_id, "customer_id")


@check
def subscription_get():
    sub = polar.subscriptions.get(id=S.subscription.id)
    ensure(isinstance(sub, models.Subscription))
    equal(sub.id, S.subscription.id, "id")
    ensure(sub.current_period_end is not None, "current_period_end")
    equal(sub.cancel_at_period_end, False, "cancel_at_period_end")


@check
def orders_by_customer():
    orders = all_items(polar.orders.list(customer_id=S.customer_id, sorting=["-created_at"]))
    equal(len(orders), 2, "orders of the customer")


# --- License keys (seller) ------------------------------------------------------------------


@check
def license_keys_list_by_organization():
    keys = all_items(polar.license_keys.list(organization_id=S.org.id))
    ensure(len(keys) >= 1, "no license keys")
    for key in keys:
        ensure(isinstance(key, models.LicenseKeyRead))
        equal(key.benefit_id, S.benefit.id, "benefit_id")
        equal(key.customer_id, S.customer_id, "customer_id")
        ensure(key.key.startswith("COMPAT"), f"key {key.key}")
        equal(key.status, "granted", "status")
    S.keys = keys
    S.key = keys[0]


@check
def license_keys_list_by_benefit():
    keys = all_items(polar.license_keys.list(benefit_id=S.benefit.id))
    equal({k.id for k in keys}, {k.id for k in S.keys}, "ids")
    other = all_items(polar.license_keys.list(benefit_id=uid()))
    equal(other, [], "unknown benefit")


@check
def license_keys_get():
    key = polar.license_keys.get(id=S.key.id)
    ensure(isinstance(key, models.LicenseKeyWithActivations))
    equal(key.key, S.key.key, "key")
    equal(key.activations, [], "activations")
    equal(key.limit_activations, 2, "limit_activations")
    equal(key.limit_usage, 10, "limit_usage")


@check
def license_keys_update():
    key = polar.license_keys.update(id=S.key.id, license_key_update={"limit_usage": 5})
    ensure(isinstance(key, models.LicenseKeyRead))
    equal(key.limit_usage, 5, "limit_usage")
    equal(key.usage, 0, "usage")
    equal(key.status, "granted", "status")


# --- License keys (buyer's program) ---------------------------------------------------------


@check
def validate_key():
    v = polar.customer_portal.license_keys.validate(
        request={"key": S.key.key, "organization_id": S.org.id}
    )
    ensure(isinstance(v, models.ValidatedLicenseKey))
    equal(v.id, S.key.id, "id")
    equal(v.validations, 1, "validations")
    ensure(v.last_validated_at is not None, "last_validated_at")
    ensure(v.activation is None, "activation")


@check
def activate_key():
    a = polar.customer_portal.license_keys.activate(
        request={"key": S.key.key, "organization_id": S.org.id, "label": "laptop"}
    )
    ensure(isinstance(a, models.LicenseKeyActivationRead))
    equal(a.label, "laptop", "label")
    equal(a.license_key_id, S.key.id, "license_key_id")
    equal(a.license_key.id, S.key.id, "license_key.id")
    S.activation = a


@check
def validate_with_activation():
    v = polar.customer_portal.license_keys.validate(
        request={
            "key": S.key.key,
            "organization_id": S.org.id,
            "activation_id": S.activation.id,
            "benefit_id": S.benefit.id,
            "customer_id": S.customer_id,
        }
    )
    equal(v.activation.id, S.activation.id, "activation.id")
    equal(v.activation.label, "laptop", "activation.label")


@check
def validate_increment_usage():
    v = polar.customer_portal.license_keys.validate(
        request={"key": S.key.key, "organization_id": S.org.id, "increment_usage": 2}
    )
    equal(v.usage, 2, "usage")
    key = polar.license_keys.get(id=S.key.id)
    equal(key.usage, 2, "usage read back")
    equal([a.id for a in key.activations], [S.activation.id], "activations")


@check
def validate_past_usage_limit():
    # Polar answers 400 BadRequest "License key only has 3 more usages.", which validate
    # does not declare: a plain SDKError.
    e = raises(
        models.SDKError,
        polar.customer_portal.license_keys.validate,
        request={"key": S.key.key, "organization_id": S.org.id, "increment_usage": 4},
    )
    equal(e.status_code, 400, "status")
    ensure("3 more usages" in e.body, f"body {e.body}")


@check
def get_activation():
    a = polar.license_keys.get_activation(id=S.key.id, activation_id=S.activation.id)
    ensure(isinstance(a, models.LicenseKeyActivationRead))
    equal(a.id, S.activation.id, "id")
    equal(a.label, "laptop", "label")


@check
def activate_past_limit():
    second = polar.customer_portal.license_keys.activate(
        request={"key": S.key.key, "organization_id": S.org.id, "label": "desktop"}
    )
    S.second_activation = second
    e = raises(
        models.NotPermitted,
        polar.customer_portal.license_keys.activate,
        request={"key": S.key.key, "organization_id": S.org.id, "label": "third"},
    )
    ensure(e.data.detail, "no detail")


@check
def deactivate():
    result = polar.customer_portal.license_keys.deactivate(
        request={
            "key": S.key.key,
            "organization_id": S.org.id,
            "activation_id": S.second_activation.id,
        }
    )
    ensure(result is None, f"got {result!r}")
    key = polar.license_keys.get(id=S.key.id)
    equal([a.id for a in key.activations], [S.activation.id], "activations left")


@check
def deactivated_activation_is_gone():
    not_found(
        polar.customer_portal.license_keys.validate,
        request={
            "key": S.key.key,
            "organization_id": S.org.id,
            "activation_id": S.second_activation.id,
        },
    )
    not_found(
        polar.license_keys.get_activation, id=S.key.id, activation_id=S.second_activation.id
    )
    not_found(
        polar.customer_portal.license_keys.deactivate,
        request={
            "key": S.key.key,
            "organization_id": S.org.id,
            "activation_id": S.second_activation.id,
        },
    )


@check
def revoked_key_no_longer_validates():
    key = polar.license_keys.update(id=S.key.id, license_key_update={"status": "revoked"})
    equal(key.status, "revoked", "status")
    not_found(
        polar.customer_portal.license_keys.validate,
        request={"key": S.key.key, "organization_id": S.org.id},
    )
    key = polar.license_keys.update(id=S.key.id, license_key_update={"status": "granted"})
    equal(key.status, "granted", "status")
    polar.customer_portal.license_keys.validate(
        request={"key": S.key.key, "organization_id": S.org.id}
    )


@check
def customer_sees_own_keys():
    # The buyer's customer session token from client_confirm opens the customer portal.
    buyer = Polar(
        access_token=S.customer_session_token, server_url=URL, timeout_ms=TIMEOUT_MS
    )
    keys = all_items(buyer.customer_portal.license_keys.list(organization_id=S.org.id))
    equal({k.id for k in keys}, {k.id for k in S.keys}, "keys")
    key = buyer.customer_portal.license_keys.get(id=S.key.id)
    ensure(isinstance(key, models.LicenseKeyWithActivations))
    equal([a.id for a in key.activations], [S.activation.id], "activations")


# --- Refunds --------------------------------------------------------------------------------


@check
def refunds_create_and_list():
    refund = polar.refunds.create(request={
        "order_id": S.order.id, "reason": "customer_request", "amount": 100,
        "comment": "journey", "metadata": {"source": "journey"},
    })
    ensure(isinstance(refund, models.Refund), type(refund).__name__)
    equal(refund.status, "succeeded", "status")
    equal(refund.amount, 100, "amount")
    equal(refund.order_id, S.order.id, "order_id")
    equal(refund.revoke_benefits, False, "revoke_benefits")
    equal(refund.metadata.get("source"), "journey", "metadata")
    page = polar.refunds.list(order_id=S.order.id)
    equal([r.id for r in page.result.items], [refund.id], "refunds of the order")
    order = polar.orders.get(id=S.order.id)
    equal(order.status, "partially_refunded", "the order's status")
    equal(order.refunded_amount, 100, "refunded_amount")


# --- The signed-in buyer: the customer portal -----------------------------------------------


def portal_buyer():
    ensure(hasattr(S, "portal_token"), "no customer session: an earlier check failed")
    return Polar(access_token=S.portal_token, server_url=URL, timeout_ms=TIMEOUT_MS)


@check
def portal_session_for_the_buyer():
    session = polar.customer_sessions.create(request={"customer_id": S.customer_id})
    ensure(isinstance(session, models.CustomerSession), type(session).__name__)
    ensure(session.token.startswith("polar_cst_"), f"token {session.token[:12]!r}")
    equal(session.customer_id, S.customer_id, "customer_id")
    S.portal_token = session.token
    expected = f"{URL}/portal/{S.org.slug}?customer_session_token={session.token}"
    ensure(session.customer_portal_url.startswith(expected), session.customer_portal_url)


@check
def portal_orders_list_and_get():
    buyer = portal_buyer()
    orders = all_items(buyer.customer_portal.orders.list())
    by_product = {o.product_id: o for o in orders}
    equal(set(by_product), {S.one_time.id, S.recurring.id}, "products of the buyer's orders")
    one_time = by_product[S.one_time.id]
    ensure(isinstance(one_time, models.CustomerOrder), type(one_time).__name__)
    equal(one_time.id, S.order.id, "id")
    equal(one_time.product.organization.id, S.org.id, "product.organization.id")
    equal(one_time.amount, 4400, "amount")
    equal(by_product[S.recurring.id].subscription_id, S.subscription.id, "subscription_id")
    page = buyer.customer_portal.orders.list(product_id=S.recurring.id)
    equal([o.product_id for o in items_of(page)], [S.recurring.id], "by product")
    order = buyer.customer_portal.orders.get(id=S.order.id)
    equal(order.id, S.order.id, "id")
    equal(order.product.id, S.one_time.id, "product.id")
    not_found(buyer.customer_portal.orders.get, id=uid())


@check
def portal_subscriptions_list_and_get():
    buyer = portal_buyer()
    subs = all_items(buyer.customer_portal.subscriptions.list())
    equal([s.id for s in subs], [S.subscription.id], "subscriptions")
    sub = buyer.customer_portal.subscriptions.get(id=S.subscription.id)
    ensure(isinstance(sub, models.CustomerSubscription), type(sub).__name__)
    equal(sub.status, "active", "status")
    equal(sub.product.id, S.recurring.id, "product.id")
    equal(sub.price.id, S.recurring.prices[0].id, "price.id")
    not_found(buyer.customer_portal.subscriptions.get, id=uid())


@check
def portal_subscription_cancel_and_uncancel():
    buyer = portal_buyer()
    sub = buyer.customer_portal.subscriptions.update(
        id=S.subscription.id,
        customer_subscription_update={
            "cancel_at_period_end": True,
            "cancellation_reason": "unused",
            "cancellation_comment": "journey",
        },
    )
    equal(sub.cancel_at_period_end, True, "cancel_at_period_end")
    equal(sub.customer_cancellation_reason, "unused", "customer_cancellation_reason")
    e = raises(
        models.AlreadyCanceledSubscription,
        buyer.customer_portal.subscriptions.cancel,
        id=S.subscription.id,
    )
    ensure(e.data.detail, "no detail")
    sub = buyer.customer_portal.subscriptions.update(
        id=S.subscription.id, customer_subscription_update={"cancel_at_period_end": False}
    )
    equal(sub.cancel_at_period_end, False, "cancel_at_period_end after uncancel")
    equal(polar.subscriptions.get(id=S.subscription.id).cancel_at_period_end, False, "seller")


@check
def portal_license_keys_list_and_get():
    buyer = portal_buyer()
    keys = all_items(buyer.customer_portal.license_keys.list(organization_id=S.org.id))
    equal({k.id for k in keys}, {k.id for k in S.keys}, "keys")
    key = buyer.customer_portal.license_keys.get(id=S.key.id)
    equal(key.id, S.key.id, "id")
    not_found(buyer.customer_portal.license_keys.get, id=uid())


@check
def portal_benefit_grants_list_and_get():
    buyer = portal_buyer()
    grants = all_items(buyer.customer_portal.benefit_grants.list())
    ensure(grants, "no grants")
    for grant in grants:
        ensure(isinstance(grant, models.CustomerBenefitGrantLicenseKeys), type(grant).__name__)
        equal(grant.customer_id, S.customer_id, "customer_id")
        equal(grant.benefit_id, S.benefit.id, "benefit_id")
        equal(grant.benefit.organization.id, S.org.id, "benefit.organization.id")
        equal(grant.is_granted, True, "is_granted")
    equal(
        {g.properties.license_key_id for g in grants} <= {k.id for k in S.keys},
        True,
        "license_key_id of each grant",
    )
    grant = buyer.customer_portal.benefit_grants.get(id=grants[0].id)
    equal(grant.id, grants[0].id, "id")
    not_found(buyer.customer_portal.benefit_grants.get, id=uid())


@check
def portal_token_is_refused_on_the_sellers_api():
    # 0.13.5 maps no 401 for these calls: the plain SDKError with the status.
    buyer = portal_buyer()
    for call in (
        lambda: buyer.products.list(organization_id=S.org.id),
        lambda: buyer.orders.get(id=S.order.id),
    ):
        try:
            call()
        except (models.Unauthorized, pydantic.ValidationError):
            continue
        except models.SDKError as e:
            equal(e.status_code, 401, "status")
            continue
        raise AssertionError("the customer session token was accepted")


# --- Error cases ----------------------------------------------------------------------------


@check
def unknown_ids_are_not_found():
    not_found(polar.organizations.get, id=uid())
    not_found(polar.checkouts.custom.get, id=uid())
    not_found(polar.checkouts.custom.update, id=uid(), checkout_update={"customer_name": "x"})
    not_found(polar.checkouts.custom.client_get, client_secret=f"polar_c_unknown{RUN}")
    not_found(polar.orders.get, id=uid())
    not_found(polar.license_keys.get, id=uid())
    not_found(polar.license_keys.update, id=uid(), license_key_update={"limit_usage": 1})
    not_found(polar.license_keys.get_activation, id=S.key.id, activation_id=uid())
    not_found(polar.products.update_benefits, id=uid(), product_benefits_update={"benefits": []})


@check
def unknown_license_key_is_not_found():
    not_found(
        polar.customer_portal.license_keys.validate,
        request={"key": f"COMPAT-NOPE-{RUN}", "organization_id": S.org.id},
    )
    not_found(
        polar.customer_portal.license_keys.validate,
        request={"key": S.key.key, "organization_id": uid()},
    )
    not_found(
        polar.customer_portal.license_keys.activate,
        request={"key": f"COMPAT-NOPE-{RUN}", "organization_id": S.org.id, "label": "x"},
    )


@check
def invalid_uuids_are_validation_errors():
    e = invalid(polar.organizations.get, id="not-a-uuid")
    ensure(["path", "id"] in locs(e), f"locs {locs(e)}")
    invalid(polar.checkouts.custom.get, id="not-a-uuid")
    invalid(polar.orders.get, id="not-a-uuid")
    invalid(polar.license_keys.get, id="not-a-uuid")
    e = invalid(
        polar.customer_portal.license_keys.validate,
        request={"key": S.key.key, "organization_id": "not-a-uuid"},
    )
    ensure(["body", "organization_id"] in locs(e), f"locs {locs(e)}")
    invalid(polar.checkouts.custom.create, request={"product_id": "not-a-uuid"})


@check
def long_metadata_key_is_a_validation_error():
    long_key = "k" * 41
    e = invalid(
        polar.checkouts.custom.create,
        request={"product_id": S.one_time.id, "metadata": {long_key: "v"}},
    )
    ensure(any(loc[:2] == ["body", "metadata"] for loc in locs(e)), f"locs {locs(e)}")
    e = invalid(
        polar.products.create,
        request={
            "name": "Bad metadata",
            "organization_id": S.org.id,
            "metadata": {long_key: 1},
            "prices": [
                {"type": "one_time", "amount_type": "fixed", "price_amount": 100,
                 "price_currency": "usd"}
            ],
        },
    )
    ensure(any(loc[:2] == ["body", "metadata"] for loc in locs(e)), f"locs {locs(e)}")
    ok = polar.checkouts.custom.create(
        request={"product_id": S.one_time.id, "metadata": {"k" * 40: "v"}}
    )
    equal(ok.metadata, {"k" * 40: "v"}, "40-character key kept")


@check
def missing_credentials_are_unauthorized():
    # An empty access_token makes 0.13.5 send "Bearer ", which httpx refuses to send; an
    # empty Authorization header stands for a caller without credentials.
    no_auth = {"Authorization": ""}
    e = raises(
        models.Unauthorized,
        polar.license_keys.list,
        organization_id=S.org.id,
        http_headers=no_auth,
    )
    ensure(e.data.detail, "no detail")
    raises(models.Unauthorized, polar.license_keys.get, id=S.key.id, http_headers=no_auth)
    raises(
        models.Unauthorized,
        polar.license_keys.update,
        id=S.key.id,
        license_key_update={"limit_usage": 1},
        http_headers=no_auth,
    )


@check
def a_bad_token_is_refused():
    # Polar answers an unknown bearer token with 401 `invalid_token`, which 0.13.5's
    # UnauthorizedData (error must be "Unauthorized") cannot parse: it surfaces as
    # pydantic's ValidationError, exactly as against Polar itself.
    bad = Polar(access_token=f"polar_pat_bogus{RUN}", server_url=URL, timeout_ms=TIMEOUT_MS)
    try:
        bad.license_keys.list(organization_id=S.org.id)
    except (models.Unauthorized, pydantic.ValidationError, models.SDKError) as e:
        if isinstance(e, models.SDKError):
            equal(e.status_code, 401, "status")
        return
    raise AssertionError("a bogus token listed license keys")


@check
def customer_portal_ignores_the_bearer_token():
    bad = Polar(access_token=f"polar_pat_bogus{RUN}", server_url=URL, timeout_ms=TIMEOUT_MS)
    v = bad.customer_portal.license_keys.validate(
        request={"key": S.key.key, "organization_id": S.org.id}
    )
    equal(v.id, S.key.id, "id")
    public = bad.checkouts.custom.client_get(client_secret=S.checkout_one_time.client_secret)
    equal(public.id, S.checkout_one_time.id, "id")


# --- Other kinds of price (each with its own buyer) --------------------------------------


def product_with(price, name):
    return polar.products.create(
        request={"name": f"{name} {RUN}", "organization_id": S.org.id, "prices": [price]}
    )


@check
def free_product_checkout():
    product = product_with({"type": "one_time", "amount_type": "free"}, "Free")
    ensure(isinstance(product.prices[0], models.ProductPriceOneTimeFree))
    checkout = polar.checkouts.custom.create(request={"product_id": product.id})
    ensure(checkout.is_free_product_price, "is_free_product_price")
    ensure(not checkout.is_payment_required, "is_payment_required")
    confirmed = polar.checkouts.custom.client_confirm(
        client_secret=checkout.client_secret,
        checkout_confirm_stripe={"customer_email": f"free-{RUN}@example.com"},
    )
    equal(confirmed.STATUS, "confirmed", "status")
    public = wait_succeeded(checkout.client_secret)
    orders = all_items(polar.orders.list(customer_id=public.customer_id))
    equal([o.product_id for o in orders], [product.id], "orders")
    equal(orders[0].amount, 0, "amount")


@check
def pay_what_you_want_checkout():
    product = product_with(
        {
            "type": "one_time",
            "amount_type": "custom",
            "price_currency": "usd",
            "minimum_amount": 500,
            "maximum_amount": 10000,
            "preset_amount": 1000,
        },
        "Pay what you want",
    )
    ensure(isinstance(product.prices[0], models.ProductPriceOneTimeCustom))
    checkout = polar.checkouts.custom.create(request={"product_id": product.id, "amount": 2500})
    equal(checkout.amount, 2500, "amount")
    public = polar.checkouts.custom.client_update(
        client_secret=checkout.client_secret, checkout_update_public={"amount": 3000}
    )
    equal(public.total_amount, 3000, "total_amount")
    polar.checkouts.custom.client_confirm(
        client_secret=checkout.client_secret,
        checkout_confirm_stripe={
            "confirmation_token_id": "tok_visa",
            "customer_email": f"pwyw-{RUN}@example.com",
            "customer_name": "Generous",
            "customer_billing_address": {"country": "GB"},
        },
    )
    public = wait_succeeded(checkout.client_secret)
    orders = all_items(polar.orders.list(customer_id=public.customer_id))
    equal([o.amount for o in orders], [3000], "order amounts")


@check
def free_subscription():
    product = product_with(
        {"type": "recurring", "amount_type": "free", "recurring_interval": "year"}, "Free plan"
    )
    ensure(isinstance(product.prices[0], models.ProductPriceRecurringFree))
    checkout = polar.checkouts.custom.create(request={"product_id": product.id})
    polar.checkouts.custom.client_confirm(
        client_secret=checkout.client_secret,
        checkout_confirm_stripe={"customer_email": f"plan-{RUN}@example.com"},
    )
    public = wait_succeeded(checkout.client_secret)
    subs = all_items(
        polar.subscriptions.list(
            customer_id=public.customer_id, sorting=["-started_at", "amount"]
        )
    )
    equal(len(subs), 1, "subscriptions")
    sub = polar.subscriptions.get(id=subs[0].id)
    equal(sub.status, "active", "status")
    equal(sub.recurring_interval, "year", "recurring_interval")
    ensure(isinstance(sub.price, models.ProductPriceRecurringFree), type(sub.price).__name__)


@check
def trial_subscription_and_a_price_change():
    """A monthly plan with a 7-day trial (created in Polar's 2026 shape, which 0.13.5
    cannot send): the trialing subscription parses, and a change of price in the January
    2025 shape (`product_price_id`) moves it to a dearer plan."""
    import httpx

    def create(body):
        answer = httpx.post(
            f"{URL}/v1/products/",
            json={"organization_id": S.org.id, "recurring_interval": "month", **body},
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=TIMEOUT_MS / 1000,
        )
        equal(answer.status_code, 201, f"product status: {answer.text}")
        return polar.products.get(id=answer.json()["id"])

    plan = create(
        {
            "name": f"Trial plan {RUN}",
            "trial_interval": "day",
            "trial_interval_count": 7,
            "prices": [{"amount_type": "fixed", "price_amount": 800, "price_currency": "usd"}],
        }
    )
    dearer = create(
        {
            "name": f"Dearer plan {RUN}",
            "prices": [{"amount_type": "fixed", "price_amount": 2400, "price_currency": "usd"}],
        }
    )
    checkout = polar.checkouts.custom.create(request={"product_id": plan.id})
    polar.checkouts.custom.client_confirm(
        client_secret=checkout.client_secret,
        checkout_confirm_stripe={
            "confirmation_token_id": "tok_visa",
            "customer_name": "Trial Buyer",
            "customer_email": f"trial-{RUN}@example.com",
            "customer_billing_address": {"country": "FR"},
        },
    )
    public = wait_succeeded(checkout.client_secret)
    subs = all_items(polar.subscriptions.list(customer_id=public.customer_id))
    equal(len(subs), 1, "subscriptions")
    sub = polar.subscriptions.get(id=subs[0].id)
    ensure(isinstance(sub, models.Subscription))
    equal(sub.status, "trialing", "status")
    equal(sub.amount, 800, "amount")
    sub = polar.subscriptions.update(
        id=sub.id,
        subscription_update={
            "product_price_id": dearer.prices[0].id,
            "proration_behavior": "prorate",
        },
    )
    equal(sub.product_id, dearer.id, "product_id")
    equal(sub.price_id, dearer.prices[0].id, "price_id")
    equal(sub.status, "trialing", "still trialing")
    equal(sub.amount, 2400, "amount")


@check
def optional_custom_fields():
    fields = [
        polar.custom_fields.create(
            request={
                "type": kind,
                "slug": f"{kind}{RUN}",
                "name": f"{kind} field",
                "organization_id": S.org.id,
                "properties": {},
            }
        )
        for kind in ("text", "number", "date")
    ]
    ensure(isinstance(fields[0], models.CustomFieldText), type(fields[0]).__name__)
    product = polar.products.create(
        request={
            "name": f"With fields {RUN}",
            "organization_id": S.org.id,
            "prices": [
                {"type": "recurring", "amount_type": "fixed", "price_amount": 900,
                 "price_currency": "usd", "recurring_interval": "month"}
            ],
            "attached_custom_fields": [
                {"custom_field_id": f.id, "required": False} for f in fields
            ],
        }
    )
    equal(
        [a.custom_field_id for a in product.attached_custom_fields],
        [f.id for f in fields],
        "attached fields",
    )
    # Only the text field is answered: the others must not come back as nulls.
    checkout = polar.checkouts.custom.create(
        request={"product_id": product.id, "custom_field_data": {f"text{RUN}": "Acme"}}
    )
    equal(checkout.custom_field_data, {f"text{RUN}": "Acme"}, "custom_field_data")
    public = polar.checkouts.custom.client_get(client_secret=checkout.client_secret)
    equal(public.custom_field_data, {f"text{RUN}": "Acme"}, "public custom_field_data")
    polar.checkouts.custom.client_confirm(
        client_secret=checkout.client_secret,
        checkout_confirm_stripe={
            "confirmation_token_id": "tok_visa",
            "customer_email": f"fields-{RUN}@example.com",
            "customer_name": "Field Tester",
            "customer_billing_address": {"country": "SE"},
        },
    )
    public = wait_succeeded(checkout.client_secret)
    orders = all_items(polar.orders.list(customer_id=public.customer_id))
    equal([o.custom_field_data for o in orders], [{f"text{RUN}": "Acme"}], "order data")
    subs = all_items(polar.subscriptions.list(customer_id=public.customer_id))
    equal([s.custom_field_data for s in subs], [{f"text{RUN}": "Acme"}], "subscription data")


def main():
    passed = failed = 0
    for fn in CHECKS:
        name = fn.__name__
        started = time.monotonic()
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported and counted
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            traceback.print_exc(file=sys.stderr)
        else:
            passed += 1
            print(f"ok   {name} ({time.monotonic() - started:.2f}s)")
        sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
