"""Issue 47 through Polar's Python SDK 1.0.2 (polar-sdk==1.0.2,
tests/clients/python-1.0/requirements.txt): a buyer whose renewal was declined fixes it from
the customer portal with the SDK's own methods, and every answer loads into the SDK's models:
the customer read and updated (`CustomerPortalCustomer`), payment methods listed, added and
removed (`ListResourceCustomerPaymentMethod`, `CustomerPaymentMethodCreateSucceededResponse`),
the pending order paid now (`CustomerOrderPaymentConfirmation`, `CustomerOrderPaymentStatus`),
the plan changed (`CustomerSubscription`), an e-mail change requested; and the refusals load
into the SDK's typed errors (`OrderNotEligibleForRetry`, the e-mail code's 401).

Reads TOLLGATE_URL, TOLLGATE_SESSION (a customer session token of the buyer),
TOLLGATE_ORDER (the buyer's pending renewal order), TOLLGATE_SUBSCRIPTION (its past-due
subscription), TOLLGATE_PRODUCT (another recurring product of the shop) and
TOLLGATE_API_VERSION (v2026_04, v2026_10 or v2027_01). Prints one line per check and
`N passed, M failed`; exits 1 when M > 0. Run by tests/api/portal_billing_sdk.rs.
"""

import importlib
import os
import sys
import traceback
import uuid

URL = os.environ["TOLLGATE_URL"].rstrip("/")
SESSION = os.environ["TOLLGATE_SESSION"]
ORDER = os.environ["TOLLGATE_ORDER"]
SUBSCRIPTION = os.environ["TOLLGATE_SUBSCRIPTION"]
PRODUCT = os.environ["TOLLGATE_PRODUCT"]
API = os.environ.get("TOLLGATE_API_VERSION", "v2026_04")
sdk = importlib.import_module(f"polar.{API}")
models = importlib.import_module(f"polar.{API}.outputs")
errors = importlib.import_module(f"polar.{API}.errors")
RUN = uuid.uuid4().hex[:8]

portal = sdk.Polar(SESSION, base_url=URL, timeout=15.0).customer_portal


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


def raises(cls, fn, *args, **kwargs):
    """Calls fn and returns the exception of class `cls` it raised; fails otherwise."""
    try:
        fn(*args, **kwargs)
    except cls as e:
        return e
    except Exception as e:  # noqa: BLE001 - reported with its class
        raise AssertionError(f"raised {type(e).__name__}: {e}, not {cls.__name__}") from e
    raise AssertionError(f"no {cls.__name__} raised")


@check
def the_customer_reads_and_updates_its_billing_details():
    me = model(portal.customers.get(), "CustomerPortalCustomer")
    S.email = me.email
    me = model(
        portal.customers.update(
            billing_name=f"Analytical Engines {RUN}",
            billing_address={"country": "FR", "city": "Paris", "postal_code": "75001",
                             "line1": "1 rue de Rivoli"},
        ),
        "CustomerPortalCustomer",
    )
    equal(me.billing_name, f"Analytical Engines {RUN}", "billing_name")
    equal((me.billing_address.country, me.billing_address.city), ("FR", "Paris"), "address")


@check
def the_saved_card_is_listed():
    page = model(portal.customers.list_payment_methods(), "ListResourceCustomerPaymentMethod")
    ensure(page.items, "no payment method listed")
    S.old_card = page.items[0].id
    equal(page.items[0].type, "card", "type")


@check
def a_working_card_is_added_as_the_default():
    added = portal.customers.add_payment_method(
        confirmation_token_id="tok_visa", set_default=True, return_url=f"{URL}/portal/")
    model(added, "CustomerPaymentMethodCreateSucceededResponse")
    equal(added.status, "succeeded", "status")
    equal(added.payment_method.method_metadata.last4, "4242", "last4")
    S.new_card = added.payment_method.id
    me = model(portal.customers.get(), "CustomerPortalCustomer")
    equal(me.default_payment_method_id, S.new_card, "default_payment_method_id")


@check
def the_pending_order_is_paid_now():
    done = model(portal.orders.confirm_retry_payment(ORDER, payment_method_id=S.new_card),
                 "CustomerOrderPaymentConfirmation")
    equal(done.status, "succeeded", "status")
    status = model(portal.orders.get_payment_status(ORDER), "CustomerOrderPaymentStatus")
    equal(status.status, "succeeded", "payment status")
    order = model(portal.orders.get(ORDER), "CustomerOrder")
    equal(order.status, "paid", "order status")
    sub = model(portal.subscriptions.get(SUBSCRIPTION), "CustomerSubscription")
    equal(sub.status, "active", "subscription status")


@check
def a_paid_order_cannot_be_paid_again():
    e = raises(errors.OrderNotEligibleForRetry, portal.orders.confirm_retry_payment,
               ORDER, payment_method_id=S.new_card)
    equal(e.status_code, 422, "status")


@check
def the_old_card_is_removed():
    equal(portal.customers.delete_payment_method(S.old_card), None, "delete answer")
    page = model(portal.customers.list_payment_methods(), "ListResourceCustomerPaymentMethod")
    equal([m.id for m in page.items], [S.new_card], "cards left")


@check
def the_buyer_changes_plan():
    sub = model(portal.subscriptions.update(SUBSCRIPTION, product_id=PRODUCT),
                "CustomerSubscription")
    equal(sub.product_id, PRODUCT, "product_id")


@check
def an_email_change_is_requested_and_a_wrong_code_refused():
    equal(portal.customers.request_email_update(email=f"new-{RUN}@example.com"), None,
          "request answer")
    raises(errors.CustomerPortalCustomersVerifyEmailUpdate401Error,
           portal.customers.verify_email_update, token="WRONGCODE")
    me = model(portal.customers.get(), "CustomerPortalCustomer")
    equal(me.email, S.email, "the e-mail until the code is given")


def main():
    passed = failed = 0
    for fn in CHECKS:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported and counted
            failed += 1
            print(f"FAIL {fn.__name__}: {type(e).__name__}: {e}")
            traceback.print_exc(limit=3)
        else:
            passed += 1
            print(f"ok   {fn.__name__}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
