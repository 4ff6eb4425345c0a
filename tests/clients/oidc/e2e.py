"""End-to-end check of Tollgate's OpenID Connect server with Authlib, a client library we
did not write. Environment: TOLLGATE_URL (base URL), OIDC_EMAIL / OIDC_PASSWORD (a user
who can sign in; registration takes that user's browser session, as in Polar).

Each check prints one line; the last line is exactly `N passed, M failed`.
"""

import os
import re
import sys
import time
import traceback
from urllib.parse import parse_qs, urlparse

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
from authlib.oauth2.rfc7636 import create_s256_code_challenge

BASE = os.environ["TOLLGATE_URL"].rstrip("/")
EMAIL = os.environ["OIDC_EMAIL"]
PASSWORD = os.environ["OIDC_PASSWORD"]
REDIRECT = "http://localhost:8765/callback"
TIMEOUT = 15

passed = 0
failed = 0
ctx = {}


def check(name):
    def wrap(fn):
        global passed, failed
        try:
            fn()
            passed += 1
            print(f"PASS {name}")
        except Exception as e:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAIL {name}: {e!r}")
            traceback.print_exc(file=sys.stderr)
        return fn

    return wrap


@check("discovery document")
def _():
    r = requests.get(f"{BASE}/.well-known/openid-configuration", timeout=TIMEOUT)
    r.raise_for_status()
    meta = r.json()
    assert meta["issuer"] == BASE, meta["issuer"]
    assert "S256" in meta["code_challenge_methods_supported"]
    assert "openid" in meta["scopes_supported"]
    ctx["meta"] = meta


def form_value(html, name):
    m = re.search(r'name="%s" value="([^"]*)"' % re.escape(name), html)
    assert m, f"no {name} in page"
    return m.group(1).replace("&#38;", "&").replace("&amp;", "&").replace("&#34;", '"').replace("&#39;", "'")


def sign_in(browser):
    """Signs `browser` in through the sign-in form."""
    page = browser.get(f"{BASE}/oauth2/login", allow_redirects=False, timeout=TIMEOUT)
    assert page.status_code == 200, page.status_code
    signed = browser.post(
        f"{BASE}/oauth2/login",
        data={
            "csrf_token": form_value(page.text, "csrf_token"),
            "email": EMAIL,
            "password": PASSWORD,
            "next": "/settings/tokens",
        },
        allow_redirects=False,
        timeout=TIMEOUT,
    )
    assert signed.status_code == 303, signed.status_code


@check("client registration (from a signed-in browser session)")
def _():
    owner = requests.Session()
    sign_in(owner)
    r = owner.post(
        ctx["meta"]["registration_endpoint"],
        json={
            "client_name": "Authlib e2e",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "client_secret_basic",
            "scope": "openid email profile organizations:read",
        },
        timeout=TIMEOUT,
    )
    assert r.status_code == 200, r.text
    ctx["client"] = r.json()


def session(**kw):
    return OAuth2Session(
        client_id=ctx["client"]["client_id"],
        client_secret=ctx["client"]["client_secret"],
        token_endpoint_auth_method="client_secret_basic",
        redirect_uri=REDIRECT,
        scope="openid email organizations:read",
        code_challenge_method="S256",
        **kw,
    )


@check("authorization code flow with PKCE (sign in, consent)")
def _():
    client = session()
    verifier = generate_token(48)
    nonce = generate_token(16)
    url, state = client.create_authorization_url(
        ctx["meta"]["authorization_endpoint"], code_verifier=verifier, nonce=nonce
    )
    browser = requests.Session()
    page = browser.get(url, allow_redirects=False, timeout=TIMEOUT)
    assert page.status_code == 200 and 'name="password"' in page.text, page.status_code
    signed = browser.post(
        f"{BASE}/oauth2/login",
        data={
            "csrf_token": form_value(page.text, "csrf_token"),
            "next": form_value(page.text, "next"),
            "email": EMAIL,
            "password": PASSWORD,
        },
        allow_redirects=False,
        timeout=TIMEOUT,
    )
    assert signed.status_code == 303, signed.status_code
    consent = browser.get(BASE + signed.headers["Location"], allow_redirects=False, timeout=TIMEOUT)
    assert consent.status_code == 200 and "Authlib e2e" in consent.text
    fields = {
        n: form_value(consent.text, n)
        for n in ["csrf_token", "response_type", "client_id", "redirect_uri", "scope", "state",
                  "nonce", "code_challenge", "code_challenge_method"]
    }
    fields["action"] = "allow"
    back = browser.post(f"{BASE}/oauth2/authorize", data=fields, allow_redirects=False, timeout=TIMEOUT)
    assert back.status_code == 302, back.status_code
    location = back.headers["Location"]
    assert location.startswith(REDIRECT)
    assert parse_qs(urlparse(location).query)["state"] == [state]
    token = client.fetch_token(
        ctx["meta"]["token_endpoint"],
        authorization_response=location,
        code_verifier=verifier,
        timeout=TIMEOUT,
    )
    assert token["access_token"].startswith("polar_at_u_")
    assert token["refresh_token"].startswith("polar_rt_u_")
    ctx["token"] = token
    ctx["nonce"] = nonce


@check("id_token signature and claims against the JWKS")
def _():
    jwks = requests.get(ctx["meta"]["jwks_uri"], timeout=TIMEOUT).json()
    key_set = JsonWebKey.import_key_set(jwks)
    claims = jwt.decode(
        ctx["token"]["id_token"],
        key_set,
        claims_options={
            "iss": {"essential": True, "value": ctx["meta"]["issuer"]},
            "aud": {"essential": True, "value": ctx["client"]["client_id"]},
            "nonce": {"essential": True, "value": ctx["nonce"]},
        },
    )
    claims.validate(now=int(time.time()))
    assert claims["email"] == EMAIL
    assert "auth_time" in claims
    # at_hash per OIDC Core 3.1.3.6, computed by Authlib.
    from authlib.oidc.core.util import create_half_hash

    expected = create_half_hash(ctx["token"]["access_token"], "RS256").decode()
    assert claims["at_hash"] == expected, (claims["at_hash"], expected)
    ctx["sub"] = claims["sub"]


@check("userinfo")
def _():
    client = session(token=ctx["token"])
    info = client.get(ctx["meta"]["userinfo_endpoint"], timeout=TIMEOUT).json()
    assert info["sub"] == ctx["sub"], info
    assert info["email"] == EMAIL


@check("API call with the access token")
def _():
    r = requests.get(
        f"{BASE}/v1/organizations/",
        headers={"Authorization": f"Bearer {ctx['token']['access_token']}"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 200, r.text


@check("refresh token rotation")
def _():
    client = session(token=ctx["token"])
    new = client.refresh_token(ctx["meta"]["token_endpoint"], timeout=TIMEOUT)
    assert new["access_token"] != ctx["token"]["access_token"]
    assert new["refresh_token"] != ctx["token"]["refresh_token"]
    ctx["old"] = ctx["token"]
    ctx["token"] = new


@check("introspection")
def _():
    client = session(token=ctx["token"])
    r = client.introspect_token(
        ctx["meta"]["introspection_endpoint"], token=ctx["token"]["access_token"], timeout=TIMEOUT
    )
    body = r.json()
    assert body["active"] is True and body["sub"] == ctx["sub"], body
    old = client.introspect_token(
        ctx["meta"]["introspection_endpoint"], token=ctx["old"]["access_token"], timeout=TIMEOUT
    ).json()
    assert old["active"] is False, old


@check("revocation")
def _():
    client = session(token=ctx["token"])
    r = client.revoke_token(
        ctx["meta"]["revocation_endpoint"], token=ctx["token"]["refresh_token"], timeout=TIMEOUT
    )
    assert r.status_code == 200, r.text
    after = client.introspect_token(
        ctx["meta"]["introspection_endpoint"], token=ctx["token"]["access_token"], timeout=TIMEOUT
    ).json()
    assert after["active"] is False, after


print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
