"""Signed license-key answers checked by an implementation that shares no code with
Tollgate: `http-message-signatures` (PyPI) verifies the RFC 9421 signature with a key
resolver fed from the organization's JWKS, and the RFC 9530 Content-Digest against the
body; this script checks that the nonce it sent is the one signed.

It asks a running Tollgate for answers with `requests`, verifies them, and prints one JSON
line per case: {"case", "verdict": "accepted" | "refused", "reason", "kid", "status"}.
The test (tests/api/signature_clients.rs) decides which verdict each case must get.

Environment: TOLLGATE_URL, TOLLGATE_ORG, TOLLGATE_KEY (a granted license key of the
organization), TOLLGATE_TOKEN (rotates the organization's key), TOLLGATE_OLD_ANSWER (a
JSON file: an answer captured while the server's clock was hours back, with its request).
"""

import base64
import copy
import datetime
import hashlib
import json
import os
import secrets
import sys

import requests
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from http_message_signatures import (
    HTTPMessageVerifier,
    HTTPSignatureKeyResolver,
    InvalidSignature,
    algorithms,
)
from requests.structures import CaseInsensitiveDict

URL = os.environ["TOLLGATE_URL"]
ORG = os.environ["TOLLGATE_ORG"]
KEY = os.environ["TOLLGATE_KEY"]
TOKEN = os.environ["TOLLGATE_TOKEN"]
OLD_ANSWER = os.environ["TOLLGATE_OLD_ANSWER"]

VALIDATE = f"{URL}/v1/customer-portal/license-keys/validate"
# What a client needs covered before it trusts an answer.
REQUIRED = ("@status", "content-digest", '"@method";req', '"@path";req')
MAX_AGE = datetime.timedelta(minutes=5)
TIMEOUT = 10


def b64url(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


class JwksResolver(HTTPSignatureKeyResolver):
    """Public keys by `kid`, from a JWKS (RFC 8037 OKP / Ed25519 keys only)."""

    def __init__(self, keys):
        self.keys = {
            k["kid"]: Ed25519PublicKey.from_public_bytes(b64url(k["x"]))
            for k in keys
            if k.get("kty") == "OKP" and k.get("crv") == "Ed25519"
        }

    def resolve_public_key(self, key_id):
        if key_id not in self.keys:
            raise InvalidSignature(f"unknown key {key_id!r}")
        return self.keys[key_id]

    def resolve_private_key(self, key_id):
        raise NotImplementedError("a verifier holds no private key")


def jwks():
    r = requests.get(
        f"{URL}/v1/customer-portal/license-keys/jwks",
        params={"organization_id": ORG},
        timeout=TIMEOUT,
    )
    r.raise_for_status()
    return r.json()["keys"]


def verify(response, nonce, resolver, max_age=MAX_AGE):
    """The verified signature of `response` (raises InvalidSignature otherwise)."""
    verifier = HTTPMessageVerifier(
        signature_algorithm=algorithms.ED25519, key_resolver=resolver
    )
    try:
        [result] = verifier.verify(
            response, max_age=max_age, require_components=REQUIRED, body=response.content
        )
    except InvalidSignature as e:
        if str(e):
            raise
        # The ed25519 check itself failed (cryptography's exception has no message).
        raise InvalidSignature("the signature does not match the answer") from e
    if result.body is None:
        raise InvalidSignature("the body is not covered by a Content-Digest")
    if result.nonce != nonce:
        raise InvalidSignature(
            f"nonce {result.nonce!r} is not the one sent ({nonce!r})"
        )
    return result


def validate(key=KEY, nonce=None):
    """A live validation, asking for a signature bound to `nonce` when given."""
    headers = {}
    if nonce is not None:
        headers["Accept-Signature"] = (
            f'sig1=("@status" "content-digest" "@method";req "@path";req);nonce="{nonce}"'
        )
    return requests.post(
        VALIDATE,
        json={"key": key, "organization_id": ORG},
        headers=headers,
        timeout=TIMEOUT,
    )


def captured(path):
    """A `requests.Response` (with its request) rebuilt from an answer the test captured."""
    with open(path) as f:
        c = json.load(f)
    request = requests.Request(
        c["method"], c["url"], headers=c["request_headers"], data=c["request_body"]
    ).prepare()
    response = requests.Response()
    response.status_code = c["status"]
    response.headers = CaseInsensitiveDict(c["headers"])
    response._content = c["body"].encode()
    response.url = c["url"]
    response.request = request
    return response, c["nonce"]


def tampered(response, *, body=None, status=None, digest=False, request=None):
    """A copy of `response` as a man in the middle would alter it."""
    copy_ = copy.copy(response)
    copy_.headers = CaseInsensitiveDict(response.headers)
    if body is not None:
        copy_._content = body
        if digest:
            sha = base64.b64encode(hashlib.sha256(body).digest()).decode()
            copy_.headers["Content-Digest"] = f"sha-256=:{sha}:"
    if status is not None:
        copy_.status_code = status
    if request is not None:
        copy_.request = request
    return copy_


RESULTS = []


def case(name, check):
    """Runs `check` (returns the verified result) and prints the verdict."""
    line = {"case": name}
    try:
        result = check()
        line.update(
            verdict="accepted",
            reason="",
            kid=result.parameters.get("keyid"),
            status=int(result.covered_components['"@status"']),
        )
    except InvalidSignature as e:
        line.update(verdict="refused", reason=str(e))
    except Exception as e:  # noqa: BLE001 (a crash is a verdict the test must see)
        line.update(verdict="error", reason=f"{type(e).__name__}: {e}")
    RESULTS.append(line)
    print(json.dumps(line), flush=True)


def main():
    keys = jwks()
    every_key = JwksResolver(keys)

    nonce_a = secrets.token_urlsafe(16)
    answer_a = validate(nonce=nonce_a)
    assert answer_a.status_code == 200, answer_a.text
    assert answer_a.json()["status"] == "granted", answer_a.text
    case("fresh", lambda: verify(answer_a, nonce_a, every_key))

    grown = answer_a.content.replace(b'"limit_activations":3', b'"limit_activations":9')
    assert grown != answer_a.content, answer_a.text
    case("tampered_body", lambda: verify(tampered(answer_a, body=grown), nonce_a, every_key))
    case(
        "tampered_body_and_digest",
        lambda: verify(tampered(answer_a, body=grown, digest=True), nonce_a, every_key),
    )

    # A second request with its own nonce, answered by a replay of the first answer.
    nonce_b = secrets.token_urlsafe(16)
    answer_b = validate(nonce=nonce_b)
    assert answer_b.status_code == 200, answer_b.text
    case(
        "wrong_nonce",
        lambda: verify(tampered(answer_a, request=answer_b.request), nonce_b, every_key),
    )

    case("unsigned", lambda: verify(validate(), None, every_key))

    # A refusal is signed too, and cannot be turned into a success.
    nonce_c = secrets.token_urlsafe(16)
    refusal = validate(key="TG-NOT-A-KEY", nonce=nonce_c)
    assert refusal.status_code == 404, refusal.text
    case("signed_refusal", lambda: verify(refusal, nonce_c, every_key))
    case(
        "refusal_status_changed",
        lambda: verify(tampered(refusal, status=200), nonce_c, every_key),
    )

    old, old_nonce = captured(OLD_ANSWER)
    case("old_answer", lambda: verify(old, old_nonce, every_key))
    case("old_answer_without_age_limit", lambda: verify(old, old_nonce, every_key, max_age=None))

    # Rotation: the seller's new key signs from now on; the old one stays in the JWKS.
    r = requests.post(
        f"{URL}/v1/license-keys/signing/rotate",
        json={"organization_id": ORG},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 200, r.text
    rotated = jwks()
    assert rotated[0]["kid"] == r.json()["keys"][0]["kid"], (rotated, r.text)
    pinned = JwksResolver(rotated[:1])
    case("rotated_key_old_answer", lambda: verify(answer_a, nonce_a, pinned))
    case("retired_key_kept", lambda: verify(answer_a, nonce_a, JwksResolver(rotated)))
    nonce_d = secrets.token_urlsafe(16)
    answer_d = validate(nonce=nonce_d)
    case("rotated_key_new_answer", lambda: verify(answer_d, nonce_d, pinned))

    errors = sum(1 for r in RESULTS if r["verdict"] == "error")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
