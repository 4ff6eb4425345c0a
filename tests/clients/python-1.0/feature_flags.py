"""Issue 46: a `feature_flag` benefit through Polar's Python SDK 1.0.2 (polar-sdk==1.0.2,
tests/clients/python-1.0/requirements.txt): created and read as the SDK's
`BenefitFeatureFlag`, granted by a one-time purchase, and read back in the customer's state
(`CustomerStateIndividual`, its grant's `benefit_type` `feature_flag` and
`benefit_metadata`). One-time on purpose: 1.0.2 cannot load a state with an active
subscription (polar-2026.md §5.3).

Reads TOLLGATE_URL, TOLLGATE_TOKEN and TOLLGATE_API_VERSION (v2026_04, v2026_10 or
v2027_01). Prints one line per check and `N passed, M failed`; exits 1 when M > 0.
Run by tests/api/entitlements.rs.
"""

import importlib
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
RUN = uuid.uuid4().hex[:8]
METADATA = {"flag": "beta_dashboard", "max_projects": 10}

polar = sdk.Polar(TOKEN, base_url=URL, timeout=15.0)


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


@check
def organization_create():
    S.org = polar.organizations.create(name=f"Flags {RUN}", slug=f"flags-{RUN}")


@check
def feature_flag_create():
    b = polar.benefits.create(
        type="feature_flag",
        description="Beta features",
        organization_id=S.org.id,
        metadata=METADATA,
        properties={},
    )
    ensure(isinstance(b, models.BenefitFeatureFlag), type(b).__name__)
    equal(b.type, "feature_flag", "type")
    equal(b.metadata, METADATA, "metadata")
    equal(b.visibility, "public", "visibility")
    equal(b.visibility_configurable, True, "visibility_configurable")
    S.flag = b


@check
def feature_flag_get():
    b = polar.benefits.get(S.flag.id)
    ensure(isinstance(b, models.BenefitFeatureFlag), type(b).__name__)
    equal(b.id, S.flag.id, "id")


@check
def product_with_the_flag():
    p = polar.products.create(
        name=f"Beta {RUN}",
        organization_id=S.org.id,
        prices=[{"amount_type": "fixed", "price_amount": 1500, "price_currency": "usd"}],
    )
    p = polar.products.update_benefits(p.id, benefits=[S.flag.id])
    equal([b.id for b in p.benefits], [S.flag.id], "benefits")
    ensure(isinstance(p.benefits[0], models.BenefitFeatureFlag), type(p.benefits[0]).__name__)
    S.product = p


@check
def buy():
    c = polar.checkouts.create(
        products=[S.product.id],
        external_customer_id=f"ext-{RUN}",
        customer_email=f"flag-{RUN}@example.com",
    )
    polar.checkouts.client_confirm(
        c.client_secret,
        confirmation_token_id="tok_visa",
        customer_name="Ada Lovelace",
        customer_billing_address={"country": "US", "postal_code": "10001", "state": "US-NY"},
    )
    deadline = time.monotonic() + 10
    while True:
        public = polar.checkouts.client_get(c.client_secret)
        if public.status == "succeeded":
            break
        ensure(time.monotonic() < deadline, f"checkout still {public.status}")
        time.sleep(0.2)
    S.customer_id = public.customer_id


@check
def state_shows_the_flag():
    for state in (polar.customers.get_state(S.customer_id),
                  polar.customers.get_state_external(f"ext-{RUN}")):
        ensure(isinstance(state, models.CustomerStateIndividual), type(state).__name__)
        equal(state.active_subscriptions, [], "active_subscriptions")
        equal(len(state.granted_benefits), 1, "granted_benefits")
        g = state.granted_benefits[0]
        equal(g.benefit_id, S.flag.id, "benefit_id")
        equal(g.benefit_type, "feature_flag", "benefit_type")
        equal(g.benefit_metadata, METADATA, "benefit_metadata")


@check
def benefit_grants_list_the_flag():
    page = polar.benefit_grants.list(organization_id=S.org.id)
    equal([g.benefit_id for g in page.items], [S.flag.id], "grants")
    ensure(isinstance(page.items[0].benefit, models.BenefitFeatureFlag),
           type(page.items[0].benefit).__name__)


@check
def feature_flag_update():
    b = polar.benefits.update(S.flag.id, type="feature_flag", visibility="private")
    ensure(isinstance(b, models.BenefitFeatureFlag), type(b).__name__)
    equal(b.visibility, "private", "visibility")


def main():
    passed = failed = 0
    print(f"polar-sdk 1.0.2 feature flags, {API}, against {URL}")
    for fn in CHECKS:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported and counted
            failed += 1
            print(f"FAIL {fn.__name__}: {type(e).__name__}: {str(e)[:800]}")
            traceback.print_exc(file=sys.stderr)
        else:
            passed += 1
            print(f"ok   {fn.__name__}")
        sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
