"""What Stripe's Payment Element needs of Stripe's API, patched into localstripe 1.15.10 by
run_localstripe.py (`patch()` before the server module is imported, `patch_server()` after):

- ConfirmationTokens (https://docs.stripe.com/api/confirmation_tokens): `POST
  /v1/confirmation_tokens` with the publishable key (as Stripe.js's
  `createConfirmationToken` does), from `payment_method_data` (`type` card, ideal or
  sepa_debit, the method's details, `billing_details`), `return_url`,
  `setup_future_usage`, `shipping`; `GET /v1/confirmation_tokens/{id}` with the secret key:
  `payment_method_preview` (the method without its id), `expires_at` (12 hours),
  `payment_intent`/`setup_intent` once used. The PaymentMethod is created (and checked)
  with the token, and an intent that uses the token gets it; a token is used once;
- PaymentIntents accept `confirmation_token`, `automatic_payment_methods[enabled]`
  (and `[allow_redirects]`), `return_url`, `description` and
  `statement_descriptor_suffix`; `payment_method_types` and `automatic_payment_methods`
  exclude each other (400, as Stripe); a method whose type the intent does not allow is
  refused (`payment_intent_incompatible_payment_method`, without
  `automatic_payment_methods`, which allows card, ideal and sepa_debit); a redirect method
  confirmed without a `return_url` is refused as Stripe refuses it;
- PaymentMethods of type `ideal` (`ideal[bank]`), a redirect method: confirming its intent
  gives `requires_action` with `next_action {type: redirect_to_url, redirect_to_url: {url,
  return_url}}`, `url` a fake bank page `GET /_tollgate/bank/{pi}?client_secret=…` whose
  "Authorize" and "Fail" buttons POST back, charge (or fail the intent, with
  `payment_intent.payment_failed`) and answer 302 to the `return_url` with
  `payment_intent`, `payment_intent_client_secret` and `redirect_status`
  (`succeeded`|`failed`), as Stripe's redirect does;
- SEPA Direct Debit is a delayed method: its intent stays `processing` (Stripe sends
  `payment_intent.processing`) until a test settles it with `POST
  /_tollgate/settle/{pi}` (secret key, `outcome=succeeded|failed`): `succeeded` sends
  `payment_intent.succeeded`, `failed` leaves the intent `requires_payment_method` with
  Stripe's `insufficient_funds` error and sends `payment_intent.payment_failed`;
- `GET /v1/payment_intents/{id}` with the publishable key and the intent's
  `client_secret` (Stripe.js's `retrievePaymentIntent`, which `handleNextAction` reads);
- SetupIntents accept `automatic_payment_methods`, `return_url`, and a
  `confirmation_token` at confirmation.
"""

import html
import time
import urllib.parse

from aiohttp import web

from localstripe import resources
from localstripe.errors import UserError
from localstripe.webhooks import schedule_webhook

# Where this localstripe answers (`http://127.0.0.1:<port>`), set once it listens: the
# fake bank's pages are under it.
BASE = {"url": ""}

# A ConfirmationToken lives 12 hours (Stripe's `expires_at`).
TOKEN_SECONDS = 12 * 3600

# The method types an intent with `automatic_payment_methods[enabled]` accepts.
AUTOMATIC_TYPES = ("card", "ideal", "sepa_debit")
REDIRECT_TYPES = ("ideal",)
DELAYED_TYPES = ("sepa_debit",)
IDEAL_BANKS = ("abn_amro", "asn_bank", "bunq", "ing", "knab", "rabobank", "regiobank",
               "sns_bank", "triodos_bank", "van_lanschot")

# SEPA intents held in `processing`: intent id -> its pending charge.
HELD = {}


class ConfirmationToken(resources.StripeObject):
    """Stripe's ConfirmationToken (`ctoken_…`), as far as Tollgate and the tests read it."""

    object = "confirmation_token"
    _id_prefix = "ctoken_"

    def __init__(self, payment_method_data=None, return_url=None, setup_future_usage=None,
                 shipping=None, mandate_data=None, **kwargs):
        if kwargs:
            raise UserError(400, "Unexpected " + ", ".join(kwargs.keys()))
        if not isinstance(payment_method_data, dict) or "type" not in payment_method_data:
            raise UserError(400, "Missing required param: payment_method_data[type].",
                            {"param": "payment_method_data[type]"})
        if setup_future_usage not in (None, "on_session", "off_session"):
            raise UserError(400, "Invalid setup_future_usage: %r" % (setup_future_usage,))
        if return_url is not None and not (isinstance(return_url, str)
                                           and return_url.startswith(("http://", "https://"))):
            raise UserError(400, "Invalid URL: return_url", {"param": "return_url"})
        # Checked (and kept) now, as Stripe checks the details when the token is made.
        method = resources.PaymentMethod(**payment_method_data)
        super().__init__()
        self._payment_method = method.id
        self._used = False
        self.expires_at = self.created + TOKEN_SECONDS
        self.mandate_data = mandate_data
        self.payment_intent = None
        self.setup_intent = None
        preview = method._export()
        for key in ("id", "object", "created", "livemode", "customer", "metadata"):
            preview.pop(key, None)
        self.payment_method_preview = preview
        self.return_url = return_url
        self.setup_future_usage = setup_future_usage
        self.shipping = shipping
        self.use_stripe_sdk = None

    @classmethod
    def _use(cls, id):
        """The PaymentMethod of an unused token, which is now used."""
        if not isinstance(id, str) or not id.startswith("ctoken_"):
            raise UserError(400, "Invalid confirmation_token", {"param": "confirmation_token"})
        token = cls._api_retrieve(id)
        if token._used:
            raise UserError(400, "This ConfirmationToken has already been used.",
                            {"code": "confirmation_token_already_used",
                             "param": "confirmation_token"})
        if token.expires_at < time.time():
            raise UserError(400, "This ConfirmationToken has expired.",
                            {"param": "confirmation_token"})
        token._used = True
        return token


def method_type(method_id):
    return resources.PaymentMethod._api_retrieve(method_id).type


def patch_payment_method():
    """PaymentMethods of type `ideal`."""
    PaymentMethod = resources.PaymentMethod
    original_init = PaymentMethod.__init__

    def init(self, type=None, ideal=None, billing_details=None, metadata=None, **kwargs):
        if type != "ideal":
            if ideal is not None:
                raise UserError(400, "Unexpected ideal")
            return original_init(self, type=type, billing_details=billing_details,
                                 metadata=metadata, **kwargs)
        if kwargs:
            raise UserError(400, "Unexpected " + ", ".join(kwargs.keys()))
        ideal = ideal or {}
        bank = ideal.get("bank") if isinstance(ideal, dict) else None
        if not isinstance(ideal, dict) or (bank is not None and bank not in IDEAL_BANKS):
            raise UserError(400, "Invalid ideal[bank]", {"param": "ideal[bank]"})
        if billing_details is not None and not isinstance(billing_details, dict):
            raise UserError(400, "Bad request")
        resources.StripeObject.__init__(self)
        self.type = "ideal"
        self.billing_details = billing_details or {}
        self.ideal = {"bank": bank, "bic": None}
        self.customer = None
        self.metadata = metadata or {}

    PaymentMethod.__init__ = init


def patch_payment_intent():
    PaymentIntent = resources.PaymentIntent
    Charge = resources.Charge
    original_init = PaymentIntent.__init__
    original_create_charge = PaymentIntent._create_charge
    original_confirm = PaymentIntent._confirm

    def init(self, confirmation_token=None, automatic_payment_methods=None, return_url=None,
             description=None, statement_descriptor_suffix=None, payment_method_types=None,
             **kwargs):
        if automatic_payment_methods is not None and payment_method_types is not None:
            raise UserError(400, "You may only specify one of these parameters: "
                            "automatic_payment_methods, payment_method_types.")
        automatic = None
        if automatic_payment_methods is not None:
            if not isinstance(automatic_payment_methods, dict):
                raise UserError(400, "Bad request")
            enabled = resources.try_convert_to_bool(automatic_payment_methods.get("enabled"))
            redirects = automatic_payment_methods.get("allow_redirects", "always")
            if enabled is not True or redirects not in ("always", "never"):
                raise UserError(400, "Invalid automatic_payment_methods",
                                {"param": "automatic_payment_methods"})
            automatic = {"allow_redirects": redirects, "enabled": True}
        if confirmation_token is not None and kwargs.get("payment_method") is not None:
            raise UserError(400, "You may only specify one of these parameters: "
                            "confirmation_token, payment_method.")
        token = ConfirmationToken._use(confirmation_token) if confirmation_token else None
        if token is not None:
            kwargs["payment_method"] = token._payment_method
            if token.return_url and return_url is None:
                return_url = token.return_url
        types = payment_method_types if payment_method_types is not None else (
            list(AUTOMATIC_TYPES) if automatic else ["card"])
        if isinstance(types, str):
            types = [types]
        method = kwargs.get("payment_method")
        if method is not None and isinstance(method, str) and method.startswith("pm_"):
            kind = method_type(method)
            if kind not in types or (kind in REDIRECT_TYPES and automatic
                                     and automatic["allow_redirects"] == "never"):
                if token is not None:
                    token._used = False
                raise UserError(400, "The PaymentMethod provided (%s) is not allowed for "
                                "this PaymentIntent." % kind,
                                {"code": "payment_intent_incompatible_payment_method"})
        try:
            original_init(self, payment_method_types=payment_method_types, **kwargs)
        except UserError:
            if token is not None:
                token._used = False
            raise
        self.automatic_payment_methods = automatic
        self.payment_method_types = types
        self.description = description
        self.statement_descriptor_suffix = statement_descriptor_suffix
        self._return_url = return_url
        if token is not None:
            token.payment_intent = self.id

    def confirm(self, on_failure_now):
        method = resources.PaymentMethod._api_retrieve(self.payment_method)
        if method.type not in REDIRECT_TYPES:
            return original_confirm(self, on_failure_now)
        if not self._return_url:
            raise UserError(400, "This PaymentIntent requires a return_url to be confirmed "
                            "with a redirect-based payment method.",
                            {"param": "return_url"})
        self._authentication_failed = False
        query = urllib.parse.urlencode({"client_secret": self.client_secret})
        self.next_action = {
            "type": "redirect_to_url",
            "redirect_to_url": {
                "url": "%s/_tollgate/bank/%s?%s" % (BASE["url"], self.id, query),
                "return_url": self._return_url,
            },
        }

    def create_charge(self, on_failure_now):
        method = resources.PaymentMethod._api_retrieve(self.payment_method)
        if method.type not in DELAYED_TYPES or self.invoice:
            return original_create_charge(self, on_failure_now)
        if self.status != "requires_confirmation":
            raise UserError(400, "Bad request")
        # Held `pending` (the intent `processing`) until a test settles it.
        charge = Charge(amount=self.amount, currency=self.currency, customer=self.customer,
                        source=self.payment_method, capture=True)
        charge.payment_intent = self.id
        self.latest_charge = charge
        HELD[self.id] = charge
        schedule_webhook(resources.Event("payment_intent.processing", self))

    PaymentIntent.__init__ = init
    PaymentIntent._confirm = confirm
    PaymentIntent._create_charge = create_charge


def settle(id, outcome=None, **kwargs):
    """`POST /_tollgate/settle/{pi}`: a held SEPA payment succeeds or fails."""
    if kwargs:
        raise UserError(400, "Unexpected " + ", ".join(kwargs.keys()))
    if outcome not in ("succeeded", "failed"):
        raise UserError(400, "outcome must be succeeded or failed")
    intent = resources.PaymentIntent._api_retrieve(id)
    charge = HELD.pop(id, None)
    if charge is None:
        raise UserError(400, "This PaymentIntent is not processing: %s." % intent.status)
    if outcome == "succeeded":
        txn = resources.BalanceTransaction(
            amount=charge.amount, currency=charge.currency, description=charge.description,
            exchange_rate=1.0, reporting_category="charge", source=charge.id, type="charge")
        charge.balance_transaction = txn.id
        charge.status = "succeeded"
        intent._on_success()
    else:
        charge._authorized = False
        charge.status = "failed"
        charge.failure_code = "insufficient_funds"
        charge.failure_message = "The account has insufficient funds to cover this payment."
        intent._report_async_failure()
    return intent


def patch_setup_intent():
    SetupIntent = resources.SetupIntent
    original_init = SetupIntent.__init__

    def init(self, automatic_payment_methods=None, return_url=None, payment_method_types=None,
             **kwargs):
        if automatic_payment_methods is not None and payment_method_types is not None:
            raise UserError(400, "You may only specify one of these parameters: "
                            "automatic_payment_methods, payment_method_types.")
        automatic = None
        if automatic_payment_methods is not None:
            if not isinstance(automatic_payment_methods, dict):
                raise UserError(400, "Bad request")
            enabled = resources.try_convert_to_bool(automatic_payment_methods.get("enabled"))
            redirects = automatic_payment_methods.get("allow_redirects", "always")
            if enabled is not True or redirects not in ("always", "never"):
                raise UserError(400, "Invalid automatic_payment_methods",
                                {"param": "automatic_payment_methods"})
            automatic = {"allow_redirects": redirects, "enabled": True}
            payment_method_types = [t for t in ("card", "sepa_debit", "ideal")
                                    if redirects == "always" or t not in REDIRECT_TYPES]
        original_init(self, payment_method_types=payment_method_types, **kwargs)
        self.automatic_payment_methods = automatic
        self._return_url = return_url

    SetupIntent.__init__ = init


def wrap_setup_confirm(confirm):
    """A SetupIntent confirmed with a ConfirmationToken: its PaymentMethod."""

    @classmethod
    def setup_confirm(cls, id, confirmation_token=None, return_url=None, **kwargs):
        if confirmation_token is not None:
            if kwargs.get("payment_method") or kwargs.get("payment_method_data"):
                raise UserError(400, "You may only specify one of these parameters: "
                                "confirmation_token, payment_method.")
            token = ConfirmationToken._use(confirmation_token)
            kwargs["payment_method"] = token._payment_method
            token.setup_intent = id
        if return_url is not None:
            cls._api_retrieve(id)._return_url = return_url
        return confirm(id, **kwargs)

    return setup_confirm


def patch():
    patch_payment_method()
    patch_payment_intent()
    patch_setup_intent()
    resources.extra_apis.extend([
        ("POST", "/v1/confirmation_tokens", ConfirmationToken._api_create),
        ("GET", "/v1/confirmation_tokens/{id}",
         lambda id, **data: ConfirmationToken._api_retrieve(id)),
        ("POST", "/_tollgate/settle/{id}", settle),
    ])


# ---------------------------------------------------------------------------------------
# The fake bank of redirect methods.

BANK_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Test bank · iDEAL</title>
<style>body{{font-family:sans-serif;background:#eef2f7;margin:0;padding:3em}}
main{{max-width:26em;margin:auto;background:#fff;border-radius:8px;padding:2em;
box-shadow:0 2px 8px #0002}}h1{{font-size:1.3em}}button{{font-size:1em;padding:.6em 1.2em;
margin-right:.6em;border-radius:4px;border:1px solid #999;cursor:pointer}}
.ok{{background:#0a7d32;color:#fff;border-color:#0a7d32}}</style></head>
<body><main><h1>localstripe test bank</h1>
<p>Payment of <strong id="amount">{amount} {currency}</strong> by {kind}.</p>
<p>This page stands in for the buyer's bank: authorize the payment, or make it fail.</p>
<form method="post" action="/_tollgate/bank/{id}">
<input type="hidden" name="client_secret" value="{secret}">
<button class="ok" name="action" value="authorize" id="authorize">Authorize test payment</button>
<button name="action" value="fail" id="fail">Fail test payment</button>
</form></main></body></html>"""


def bank_intent(id, secret):
    try:
        intent = resources.PaymentIntent._api_retrieve(id)
    except UserError:
        raise web.HTTPNotFound(text="No such payment")
    if secret != intent.client_secret:
        raise web.HTTPForbidden(text="Wrong client_secret")
    return intent


async def bank_page(request):
    intent = bank_intent(request.match_info["id"], request.query.get("client_secret"))
    if intent.status != "requires_action":
        raise web.HTTPBadRequest(text="This payment is %s." % intent.status)
    method = resources.PaymentMethod._api_retrieve(intent.payment_method)
    body = BANK_PAGE.format(
        id=html.escape(intent.id), secret=html.escape(intent.client_secret),
        amount="%.2f" % (intent.amount / 100), currency=html.escape(intent.currency.upper()),
        kind=html.escape(method.type))
    return web.Response(text=body, content_type="text/html")


async def bank_answer(request):
    form = await request.post()
    intent = bank_intent(request.match_info["id"], form.get("client_secret"))
    if intent.status != "requires_action" or not intent.next_action \
            or intent.next_action.get("type") != "redirect_to_url":
        raise web.HTTPBadRequest(text="This payment is %s." % intent.status)
    return_url = intent.next_action["redirect_to_url"]["return_url"]
    intent.next_action = None
    if form.get("action") == "authorize":
        intent._create_charge(on_failure_now=intent._report_async_failure)
    else:
        intent._authentication_failed = True
        intent.payment_method = None
        schedule_webhook(resources.Event("payment_intent.payment_failed", intent))
    redirect_status = {"succeeded": "succeeded", "processing": "processing"}.get(
        intent.status, "failed")
    query = urllib.parse.urlencode({
        "payment_intent": intent.id,
        "payment_intent_client_secret": intent.client_secret,
        "redirect_status": redirect_status,
    })
    joiner = "&" if urllib.parse.urlsplit(return_url).query else "?"
    raise web.HTTPFound(return_url + joiner + query)


def is_public(request):
    """Requests Stripe.js (or the buyer's browser) makes without the secret key."""
    return request.path.startswith("/_tollgate/bank/")


def publishable(request, key):
    """Whether a request without the secret key may go on with the publishable `key`:
    a ConfirmationToken made by Stripe.js, or an intent read with its client secret."""
    if not (isinstance(key, str) and key.startswith("pk_")):
        return False
    if request.method == "POST" and request.path == "/v1/confirmation_tokens":
        return True
    prefix = "/v1/payment_intents/"
    if request.method == "GET" and request.path.startswith(prefix):
        id = request.path[len(prefix):]
        obj = resources.store.get("payment_intent:" + id)
        return obj is not None and request.query.get("client_secret") == obj.client_secret
    return False


def patch_server(server):
    router = server.app.router
    router.add_get("/_tollgate/bank/{id}", bank_page)
    router.add_post("/_tollgate/bank/{id}", bank_answer)
