"""Issue 50 (files, stage 1) through Polar's Python SDK 1.0.2 (polar-sdk==1.0.2,
tests/clients/python-1.0/requirements.txt): `files.create` (a `FileUpload` with one signed
part URL per part), each part PUT with httpx to its `url` with its `headers` (the ETag
kept), `files.uploaded(id_path, id=, path=, parts=)` (a `DownloadableFileRead`),
`files.list` (`ListResourceFileRead`), `files.update` and `files.delete`; and the SDK's
`HTTPValidationError` for a whole-file checksum the bytes do not match. Every answer is
loaded into the SDK's models.

Reads TOLLGATE_URL, TOLLGATE_TOKEN (a token with every scope) and TOLLGATE_API_VERSION
(v2026_04, v2026_10 or v2027_01). Prints one line per check and `N passed, M failed`;
exits 1 when M > 0. Run by tests/api/clients.rs.
"""

import base64
import hashlib
import importlib
import os
import sys
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

polar = sdk.Polar(TOKEN, base_url=URL, timeout=30.0)
MIB5 = 5 * 1024 * 1024
DATA = bytes((i * 7) % 256 for i in range(MIB5 + 12345))


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


def plan(data, cut):
    return [
        {"number": 1, "chunk_start": 0, "chunk_end": cut},
        {"number": 2, "chunk_start": cut, "chunk_end": len(data),
         "checksum_sha256_base64": b64sha(data[cut:])},
    ]


def send(upload, data):
    """PUTs every part with its url and headers; answers the parts for `uploaded`."""
    parts = []
    with httpx.Client(timeout=60.0) as http:
        for p in upload.upload.parts:
            r = http.put(p.url, content=data[p.chunk_start:p.chunk_end], headers=p.headers)
            equal(r.status_code, 200, f"part {p.number}")
            parts.append({"number": p.number, "checksum_etag": r.headers["etag"],
                          "checksum_sha256_base64": p.checksum_sha256_base64})
    return parts


@check
def a_file_is_created_with_signed_part_urls():
    org = model(polar.organizations.create(
        name=f"Files {RUN}", slug=f"files-{API.replace('_', '-')}-{RUN}"), "Organization")
    S.org = org.id
    upload = model(polar.files.create(
        organization_id=S.org, service="downloadable", name="app.AppImage",
        mime_type="application/octet-stream", size=len(DATA),
        checksum_sha256_base64=b64sha(DATA), upload={"parts": plan(DATA, MIB5)}), "FileUpload")
    equal(upload.is_uploaded, False, "is_uploaded")
    equal(upload.service, "downloadable", "service")
    equal(len(upload.upload.parts), 2, "parts")
    ensure(upload.upload.parts[0].url.startswith(f"{URL}/v1/files/{upload.id}/parts/1?"),
           upload.upload.parts[0].url)
    equal(upload.upload.parts[1].headers.get("x-amz-checksum-sha256"), b64sha(DATA[MIB5:]),
          "part checksum header")
    S.upload = upload


@check
def the_parts_are_put_and_the_file_marked_uploaded():
    parts = send(S.upload, DATA)
    f = polar.files.uploaded(S.upload.id, id=S.upload.upload.id, path=S.upload.upload.path,
                             parts=parts)
    model(f, "DownloadableFileRead")
    equal(f.is_uploaded, True, "is_uploaded")
    equal(f.checksum_sha256_hex, hashlib.sha256(DATA).hexdigest(), "checksum_sha256_hex")
    equal(f.size, len(DATA), "size")
    S.file = f


@check
def the_file_is_listed_renamed_and_deleted():
    page = model(polar.files.list(organization_id=S.org), "ListResourceFileRead")
    equal([f.id for f in page.items], [S.file.id], "listed")
    model(page.items[0], "DownloadableFileRead")
    f = polar.files.update(S.file.id, name="app-2.AppImage", version="2.0.0")
    model(f, "DownloadableFileRead")
    equal((f.name, f.version), ("app-2.AppImage", "2.0.0"), "patched")
    polar.files.delete(S.file.id)
    page = model(polar.files.list(organization_id=S.org), "ListResourceFileRead")
    equal(page.items, [], "after delete")


@check
def a_whole_file_checksum_that_differs_is_refused():
    data = DATA[:1000]
    upload = model(polar.files.create(
        organization_id=S.org, service="downloadable", name="bad.bin",
        mime_type="application/octet-stream", size=len(data),
        checksum_sha256_base64=b64sha(b"other"),
        upload={"parts": [{"number": 1, "chunk_start": 0, "chunk_end": len(data)}]}),
        "FileUpload")
    parts = send(upload, data)
    e = None
    try:
        polar.files.uploaded(upload.id, id=upload.upload.id, path=upload.upload.path,
                             parts=parts)
    except errors.HTTPValidationError as err:
        e = err
    ensure(e is not None, "accepted; expected a 422")
    equal(e.status_code, 422, "status")
    equal([list(d.loc) for d in e.error.detail], [["body"]], "loc")


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
