"""Issue 51 (metered prices and the meter_credit benefit) through Polar's Python SDK 1.0.2
(polar-sdk==1.0.2, tests/clients/python-1.0/requirements.txt): `products.get` of a product
with a fixed and a metered price loads a `ProductPriceMeteredUnit` (its `unit_amount` a
string, its `meter` a `ProductPriceMeter`); `benefits.get` and `benefits.list` of a
`meter_credit` benefit load `BenefitMeterCredit` with its properties.

Reads TOLLGATE_URL, TOLLGATE_TOKEN (a token with every scope), TOLLGATE_API_VERSION
(v2026_04, v2026_10 or v2027_01), PRODUCT_ID, BENEFIT_ID and METER_ID (made by
tests/api/metered_prices.rs). Prints one line per check and `N passed, M failed`; exits 1
when M > 0.
"""

import importlib
import os
import sys
import traceback

URL = os.environ["TOLLGATE_URL"].rstrip("/")
TOKEN = os.environ["TOLLGATE_TOKEN"]
API = os.environ.get("TOLLGATE_API_VERSION", "v2026_04")
PRODUCT = os.environ["PRODUCT_ID"]
BENEFIT = os.environ["BENEFIT_ID"]
METER = os.environ["METER_ID"]
sdk = importlib.import_module(f"polar.{API}")
models = importlib.import_module(f"polar.{API}.outputs")

polar = sdk.Polar(TOKEN, base_url=URL, timeout=30.0)
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


@check
def product_with_a_metered_price():
    p = model(polar.products.get(id=PRODUCT), "Product")
    metered = [x for x in p.prices if isinstance(x, models.ProductPriceMeteredUnit)]
    equal(len(metered), 1, "metered prices")
    m = metered[0]
    equal(m.amount_type, "metered_unit", "amount_type")
    equal(m.unit_amount, "0.5", "unit_amount")
    equal(m.cap_amount, 10000, "cap_amount")
    equal(m.meter_id, METER, "meter_id")
    model(m.meter, "ProductPriceMeter")
    equal(m.meter.name, "API calls", "meter.name")
    equal(m.meter.unit, "scalar", "meter.unit")
    equal(m.meter.custom_label, None, "meter.custom_label")


@check
def meter_credit_benefit():
    b = model(polar.benefits.get(id=BENEFIT), "BenefitMeterCredit")
    equal(b.type, "meter_credit", "type")
    equal(b.properties.units, 100, "units")
    equal(b.properties.rollover, True, "rollover")
    equal(b.properties.meter_id, METER, "meter_id")


@check
def meter_credit_benefits_list():
    page = polar.benefits.list(type="meter_credit")
    items = [b for b in page.items if b.id == BENEFIT]
    equal(len(items), 1, "listed")
    model(items[0], "BenefitMeterCredit")


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
