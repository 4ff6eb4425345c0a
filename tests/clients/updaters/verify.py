"""Tauri's dynamic update JSON and Sparkle's appcast from Tollgate, read as the updaters
read them and verified with pyca/cryptography's Ed25519 (independent of Tollgate's code):
the minisign signature parsed by hand (prehashed "ED" form: BLAKE2b-512 of the file, the
global signature over signature + trusted comment), Sparkle's edSignature over the bytes.

Environment: FEED_URL (the product's feed base, `.../v1/updates/<product>/`), LICENSE_KEY,
TAURI_PUBKEY, SPARKLE_PUBLIC_ED_KEY, CURRENT_VERSION, EXPECT_VERSION (Tauri, stable
channel), SPARKLE_NEWEST (the appcast's first item, alpha channel).
Prints one line per check and `N passed, M failed` last.
"""

import base64
import datetime
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

SPARKLE = "http://www.andymatuschak.org/xml-namespaces/sparkle"
passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok - {name}")
    else:
        failed += 1
        print(f"FAILED - {name}: {detail}")


def get(url, key=True, accept=None):
    req = urllib.request.Request(url)
    if key:
        req.add_header("Authorization", f"Bearer {os.environ['LICENSE_KEY']}")
    if accept:
        req.add_header("Accept", accept)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def verifies(pk, sig, msg):
    try:
        pk.verify(sig, msg)
        return True
    except InvalidSignature:
        return False


def minisign_verify(pubkey_b64, signature_b64, data):
    """Tauri's verify_signature, by hand: answers the trusted comment, or None."""
    pub_lines = base64.b64decode(pubkey_b64).decode().splitlines()
    praw = base64.b64decode(pub_lines[1])
    if praw[:2] != b"Ed" or len(praw) != 42:
        return None
    pk = Ed25519PublicKey.from_public_bytes(praw[10:42])
    lines = base64.b64decode(signature_b64).decode().splitlines()
    if len(lines) != 4 or not lines[0].startswith("untrusted comment: "):
        return None
    raw = base64.b64decode(lines[1])
    alg, keynum, sig = raw[:2], raw[2:10], raw[10:74]
    if keynum != praw[2:10]:
        return None
    msg = hashlib.blake2b(data, digest_size=64).digest() if alg == b"ED" else data
    if not verifies(pk, sig, msg):
        return None
    trusted = lines[2].removeprefix("trusted comment: ")
    if not verifies(pk, base64.b64decode(lines[3]), sig + trusted.encode()):
        return None
    return trusted


def tauri(base, current, expect):
    url = f"{base}stable/tauri/linux/x86_64/{current}"
    status, headers, body = get(url, accept="application/json")
    check("tauri: 200 with an update", status == 200, f"{status} {body[:200]!r}")
    check("tauri: private, no-store", headers.get("Cache-Control") == "private, no-store", dict(headers))
    rel = json.loads(body)
    check("tauri: the newest allowed version", rel.get("version") == expect, rel)
    try:
        datetime.datetime.fromisoformat(rel["pub_date"])
        check("tauri: pub_date is RFC 3339", True)
    except Exception as e:  # noqa: BLE001
        check("tauri: pub_date is RFC 3339", False, e)
    status, _, data = get(rel["url"], accept="application/octet-stream")
    check("tauri: the artifact downloads", status == 200 and len(data) > 0, status)
    trusted = minisign_verify(os.environ["TAURI_PUBKEY"], rel["signature"], data)
    check("tauri: the minisign signature verifies", trusted is not None, rel["signature"][:40])
    fields = dict(f.split(":", 1) for f in (trusted or "").split("\t") if ":" in f)
    check("tauri: the trusted comment names the version", fields.get("version") == expect, trusted)
    tampered = bytes([data[0] ^ 1]) + data[1:]
    check(
        "tauri: a changed byte fails",
        minisign_verify(os.environ["TAURI_PUBKEY"], rel["signature"], tampered) is None,
    )
    status, _, _ = get(f"{base}stable/tauri/linux/x86_64/{expect}")
    check("tauri: 204 when not newer", status == 204, status)
    status, _, _ = get(url, key=False)
    check("tauri: 401 without a key", status == 401, status)


def sparkle(base, expect):
    status, headers, body = get(f"{base}alpha/appcast.xml")
    check("sparkle: 200", status == 200, status)
    check("sparkle: RSS", headers.get("Content-Type", "").startswith("application/rss+xml"), dict(headers))
    root = ET.fromstring(body)
    items = root.findall("./channel/item")
    check("sparkle: items", len(items) >= 2, body[:300])
    versions = [i.findtext(f"{{{SPARKLE}}}shortVersionString") for i in items]
    check("sparkle: newest allowed first", versions and versions[0] == expect, versions)
    pk = Ed25519PublicKey.from_public_bytes(base64.b64decode(os.environ["SPARKLE_PUBLIC_ED_KEY"]))
    for item in items:
        v = item.findtext(f"{{{SPARKLE}}}shortVersionString")
        enc = item.find("enclosure")
        status, _, data = get(enc.get("url"))
        check(f"sparkle {v}: the archive downloads", status == 200, status)
        check(f"sparkle {v}: length", int(enc.get("length")) == len(data), enc.get("length"))
        sig = base64.b64decode(enc.get(f"{{{SPARKLE}}}edSignature"))
        check(f"sparkle {v}: edSignature verifies", verifies(pk, sig, data))
        check(f"sparkle {v}: not over other bytes", not verifies(pk, sig, data + b"\0"))
        channel = item.findtext(f"{{{SPARKLE}}}channel")
        check(f"sparkle {v}: channel tag on pre-releases only", (channel is None) == ("-" not in v), channel)
        check(f"sparkle {v}: build number", item.findtext(f"{{{SPARKLE}}}version"), "missing")
    status, _, _ = get(f"{base}alpha/appcast.xml", key=False)
    check("sparkle: 401 without a key", status == 401, status)


def main():
    base = os.environ["FEED_URL"]
    tauri(base, os.environ["CURRENT_VERSION"], os.environ["EXPECT_VERSION"])
    sparkle(base, os.environ["SPARKLE_NEWEST"])
    print(f"{passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 else 1)


if __name__ == "__main__":
    main()
