"""Issue 50 (downloadables) through Polar's Python SDK 1.0.2 (polar-sdk==1.0.2,
tests/clients/python-1.0/requirements.txt): a file uploaded (`files.create`, the parts PUT
with httpx, `files.uploaded`), a `downloadables` benefit created with `benefits.create`
(a `BenefitDownloadables`) and attached to a product, the product bought, a customer
session opened (`customer_sessions.create`), and `customer_portal.downloadables.list` read
with that session's token (a `ListResourceDownloadableRead`); the listed link downloads the
file's bytes, and the benefit filter narrows the list. Every answer is loaded into the
SDK's models.

Reads TOLLGATE_URL, TOLLGATE_TOKEN (a token with every scope) and TOLLGATE_API_VERSION
(v2026_04, v2026_10 or v2027_01). Prints one line per check and `N passed, M failed`;
exits 1 when M > 0. Run by tests/api/clients.rs.
"""

import base64
import hashlib
import importlib
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
RUN = uuid.uuid4().hex[:8]

polar = sdk.Polar(TOKEN, base_url=URL, timeout=30.0)
DATA = bytes((i * 13 + 5) % 256 for i in range(70000))


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


def b64sha(data):
    return base64.b64encode(hashlib.sha256(data).digest()).decode()


@check
def a_file_is_uploaded():
    S.org = model(polar.organizations.create(
        name=f"Downloads {RUN}", slug=f"downloads-{API.replace('_', '-')}-{RUN}"),
        "Organization").id
    upload = model(polar.files.create(
        organization_id=S.org, service="downloadable", name="app.AppImage",
        mime_type="application/octet-stream", size=len(DATA),
        checksum_sha256_base64=b64sha(DATA),
        upload={"parts": [{"number": 1, "chunk_start": 0, "chunk_end": len(DATA)}]}),
        "FileUpload")
    parts = []
    with httpx.Client(timeout=60.0) as http:
        for p in upload.upload.parts:
            r = http.put(p.url, content=DATA[p.chunk_start:p.chunk_end], headers=p.headers)
            equal(r.status_code, 200, f"part {p.number}")
            parts.append({"number": p.number, "checksum_etag": r.headers["etag"],
                          "checksum_sha256_base64": p.checksum_sha256_base64})
    f = polar.files.uploaded(upload.id, id=upload.upload.id, path=upload.upload.path,
                             parts=parts)
    model(f, "DownloadableFileRead")
    S.file = f.id


@check
def a_downloadables_benefit_is_created_with_the_sdk():
    b = polar.benefits.create(type="downloadables", description="App downloads",
                              organization_id=S.org, properties={"files": [S.file]})
    model(b, "BenefitDownloadables")
    equal(b.type, "downloadables", "type")
    equal(list(b.properties.files), [S.file], "files")
    equal(dict(b.properties.archived), {}, "archived")
    S.benefit = b.id


@check
def the_product_granting_it_is_bought():
    p = polar.products.create(
        name=f"App {RUN}", organization_id=S.org,
        prices=[{"amount_type": "fixed", "price_amount": 1500, "price_currency": "usd"}])
    p = polar.products.update_benefits(p.id, benefits=[S.benefit])
    model(p.benefits[0], "BenefitDownloadables")
    c = polar.checkouts.create(products=[p.id], customer_email=f"dl-{RUN}@example.com")
    polar.checkouts.client_confirm(
        c.client_secret, confirmation_token_id="tok_visa", customer_name="Ada Lovelace",
        customer_billing_address={"country": "US", "postal_code": "10001", "state": "US-NY"})
    deadline = time.monotonic() + 10
    while True:
        public = polar.checkouts.client_get(c.client_secret)
        if public.status == "succeeded":
            break
        ensure(time.monotonic() < deadline, f"checkout still {public.status}")
        time.sleep(0.2)
    session = polar.customer_sessions.create(customer_id=public.customer_id)
    S.customer = public.customer_id
    S.cst = session.token


@check
def the_portal_lists_the_file_and_its_link_downloads_it():
    page = polar.customer_portal.downloadables.list(request_access_token=S.cst)
    model(page, "ListResourceDownloadableRead")
    equal(page.pagination.total_count, 1, "total_count")
    d = model(page.items[0], "DownloadableRead")
    equal(d.benefit_id, S.benefit, "benefit_id")
    model(d.file, "FileDownload")
    equal(d.file.id, S.file, "file id")
    equal(d.file.size, len(DATA), "size")
    ensure(d.file.download.url.startswith(f"{URL}/v1/customer-portal/downloadables/"),
           d.file.download.url)
    r = httpx.get(d.file.download.url, headers=d.file.download.headers, timeout=60.0)
    equal(r.status_code, 200, "download")
    ensure(r.content == DATA, "the downloaded bytes differ")
    other = polar.customer_portal.downloadables.list(
        benefit_id=str(uuid.uuid4()), request_access_token=S.cst)
    equal(other.items, [], "another benefit's")
    the_grants_name_the_file()


def the_grants_name_the_file():
    # Part of the check above (the Rust test counts four checks).
    page = model(polar.benefit_grants.list(customer_id=S.customer), "ListResourceBenefitGrant")
    equal(len(page.items), 1, "seller's grants")
    g = model(page.items[0], "BenefitGrant")
    equal(g.benefit_id, S.benefit, "grant benefit_id")
    state = model(polar.customers.get_state(S.customer), "CustomerState")
    equal(len(state.granted_benefits), 1, "state grants")
    # `BenefitGrant.properties` and the state's are untagged unions in the SDK, which loads
    # the first member that fits (BenefitGrantDiscordProperties, all optional) and drops
    # `files`: read those two on the wire.
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=URL, headers=headers, timeout=30.0) as http:
        raw = http.get("/v1/benefit-grants/", params={"customer_id": S.customer}).json()
        equal(raw["items"][0]["properties"], {"files": [S.file]}, "grant properties")
        raw = http.get(f"/v1/customers/{S.customer}/state").json()
        equal(raw["granted_benefits"][0]["properties"], {"files": [S.file]}, "state properties")
    # The portal's grants are typed by benefit: the SDK reads `files` and `active_files`.
    mine = polar.customer_portal.benefit_grants.list(request_access_token=S.cst)
    model(mine, "ListResourceCustomerBenefitGrant")
    equal(len(mine.items), 1, "portal grants")
    p = model(mine.items[0], "CustomerBenefitGrantDownloadables")
    model(p.properties, "BenefitGrantDownloadablesProperties")
    equal(list(p.properties.files or []), [S.file], "portal properties.files")
    model(p.benefit, "BenefitDownloadablesSubscriber")
    equal(list(p.benefit.properties.active_files), [S.file], "portal active_files")


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
