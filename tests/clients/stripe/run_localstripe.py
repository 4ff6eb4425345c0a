"""Starts localstripe (a stateful fake Stripe) for tests/api/stripe.rs.

Usage: python run_localstripe.py [--max-seconds N]

Binds 127.0.0.1 on a free port, prints `PORT <n>` on stdout once it listens, and serves
until stdin is closed (the test that started it has gone), a SIGTERM/SIGKILL, or
--max-seconds have passed, whichever comes first.

localstripe 1.15.10 is patched at start, before serving, where it lacks what real Stripe
does and Tollgate relies on:

- its store is kept in memory only (it pickles every write to /tmp/localstripe.pickle,
  a file every instance would share);
- `POST /v1/payment_intents` accepts `setup_future_usage` (`on_session`/`off_session`),
  records it on the intent (exported, as Stripe does), and once the intent succeeds
  attaches its PaymentMethod to its customer, as Stripe does for a method saved for
  later;
- a failed 3-D Secure authentication sends `payment_intent.payment_failed`, as Stripe
  does (localstripe only sends it for invoices' intents);
- `off_session=true` is recorded on the intent (exported as `off_session`, which real
  Stripe does not show: for the tests' eyes only) and, as in Stripe, is refused unless
  the PaymentMethod is attached to the intent's customer;
- a SetupIntent with a customer attaches its PaymentMethod to that customer once its
  confirmation succeeds, as Stripe does (localstripe only records the method on the
  intent), so that the method a trial saved can be charged off-session at its end;
- `POST /v1/payment_methods` accepts the publishable key in the body (`key=pk_…`), as
  Stripe does for Stripe.js;
- `POST /v1/refunds` accepts Stripe's `reason` (`duplicate`, `fraudulent`,
  `requested_by_customer`, exported on the refund), refuses more than is left to refund
  on the charge (Stripe's `amount_too_large`), and sends `refund.created` and
  `charge.refunded`, as Stripe does;
- disputes, which localstripe lacks: Stripe's Dispute object (`dp_…`: amount, currency,
  charge, payment_intent, reason, status, evidence_details, is_charge_refundable, ...),
  `GET /v1/disputes/{id}`, `GET /v1/disputes` and `POST /v1/disputes/{id}/close`, which
  concedes a dispute that needs a response (`needs_response` becomes `lost`,
  `warning_needs_response` becomes `warning_closed`) and sends `charge.dispute.closed`, as
  Stripe does; closing one in any other status is refused (400). A dispute is opened as in
  Stripe's test mode: a payment with the card 4000000000000259 succeeds, and a moment
  later (a second, then the webhook's own second) it is disputed as `fraudulent`, with
  `charge.dispute.created`;
- a POST with an `Idempotency-Key` header answers a retry with the same key and path with
  the first answer instead of doing it again, as Stripe does (kept in memory);
- its fake Stripe.js (`localstripe-v3.js`, checked against the SHA-256 below so that an
  upgrade is noticed) is served at /js.stripe.com/v3/ with `stripe-js-additions.js`
  appended: `createPaymentMethod`, Stripe.js's change events and failed 3-D Secure
  answers (that file says how).
"""

import argparse
import asyncio
import hashlib
import logging
import os
import socket
import sys
import threading
import time

from aiohttp import web

import localstripe
from localstripe import resources
from localstripe.errors import UserError
from localstripe.webhooks import schedule_webhook


def patch():
    resources.Store.dump_to_disk = lambda self: None
    resources.Store.try_load_from_disk = lambda self: None

    PaymentIntent = resources.PaymentIntent
    PaymentMethod = resources.PaymentMethod
    original_init = PaymentIntent.__init__
    original_on_success = PaymentIntent._on_success

    def init(self, setup_future_usage=None, **kwargs):
        if setup_future_usage not in (None, "on_session", "off_session"):
            raise UserError(400, "Invalid setup_future_usage: %r" % (setup_future_usage,))
        original_init(self, **kwargs)
        self.setup_future_usage = setup_future_usage
        self.off_session = False

    @classmethod
    def api_create(cls, confirm=None, off_session=None, **data):
        # As localstripe's own `_api_create`, plus the bookkeeping above.
        confirm = resources.try_convert_to_bool(confirm)
        off_session = resources.try_convert_to_bool(off_session)
        if confirm is not None and type(confirm) is not bool:
            raise UserError(400, "Bad request")
        if off_session is not None and (type(off_session) is not bool or confirm is not True):
            raise UserError(400, "Bad request")
        if off_session:
            method = data.get("payment_method")
            customer = data.get("customer")
            if not method or not customer:
                raise UserError(400, "off_session needs a customer and a payment_method")
            attached = PaymentMethod._api_retrieve(method).customer
            if attached != customer:
                raise UserError(
                    400,
                    "The provided PaymentMethod %s is not attached to customer %s."
                    % (method, customer),
                    {"code": "payment_method_not_attached"},
                )
            if data.get("setup_future_usage") is not None:
                raise UserError(400, "setup_future_usage cannot be used with off_session")
        obj = cls(**data)
        obj.off_session = bool(off_session)
        if confirm:
            obj._confirm(on_failure_now=obj._report_failure)
        return obj

    def on_success(self):
        if self.setup_future_usage and self.customer and self.payment_method:
            PaymentMethod._api_retrieve(self.payment_method).customer = self.customer
        original_on_success(self)

    original_authenticate = PaymentIntent._api_authenticate.__func__

    @classmethod
    def api_authenticate(cls, id, **kwargs):
        obj = original_authenticate(cls, id, **kwargs)
        if obj._authentication_failed and not obj.invoice:
            schedule_webhook(resources.Event("payment_intent.payment_failed", obj))
        return obj

    Refund = resources.Refund
    Charge = resources.Charge
    original_refund_init = Refund.__init__

    def refund_init(self, reason=None, **kwargs):
        if reason not in (None, "duplicate", "fraudulent", "requested_by_customer"):
            raise UserError(400, "Invalid reason: %r" % (reason,))
        amount = resources.try_convert_to_int(kwargs.get("amount"))
        charge_id = kwargs.get("charge")
        if charge_id is None and kwargs.get("payment_intent"):
            intent = PaymentIntent._api_retrieve(kwargs["payment_intent"])
            charge_id = intent.latest_charge.id if intent.latest_charge else None
        if charge_id is not None and isinstance(amount, int):
            charge = Charge._api_retrieve(charge_id)
            left = charge.amount - charge.amount_refunded
            if amount > left:
                raise UserError(
                    400,
                    "Refund amount (%d) is greater than unrefunded amount on charge (%d)"
                    % (amount, left),
                    {"code": "amount_too_large"},
                )
        original_refund_init(self, **kwargs)
        self.reason = reason

    original_refund_create = Refund._api_create.__func__

    @classmethod
    def refund_api_create(cls, **data):
        obj = original_refund_create(cls, **data)
        schedule_webhook(resources.Event("refund.created", obj))
        schedule_webhook(resources.Event("charge.refunded", Charge._api_retrieve(obj.charge)))
        return obj

    SetupIntent = resources.SetupIntent
    original_setup_confirm = SetupIntent._api_confirm.__func__

    @classmethod
    def setup_api_confirm(cls, id, **kwargs):
        obj = original_setup_confirm(cls, id, **kwargs)
        if obj.status == "succeeded" and obj.customer and obj.payment_method:
            PaymentMethod._api_retrieve(obj.payment_method).customer = obj.customer
        return obj

    Refund.__init__ = refund_init
    Refund._api_create = refund_api_create
    PaymentIntent.__init__ = init
    PaymentIntent._api_create = api_create
    PaymentIntent._on_success = on_success
    PaymentIntent._api_authenticate = api_authenticate
    SetupIntent._api_confirm = setup_api_confirm
    # After the intent's own hook above, which it wraps.
    patch_disputes()
    # The server module registers the routes of `extra_apis` when imported: after this.
    replaced = {
        "/v1/payment_intents/{id}/_authenticate": PaymentIntent._api_authenticate,
        "/v1/setup_intents/{id}/confirm": SetupIntent._api_confirm,
    }
    resources.extra_apis[:] = [
        (method, url, replaced.get(url, func)) for method, url, func in resources.extra_apis
    ]


# Stripe's test card whose payments are disputed (fraudulent) right after they succeed.
DISPUTED_CARD = "4000000000000259"
# Stripe gives the seller about three weeks to answer.
EVIDENCE_DAYS = 21


class Dispute(resources.StripeObject):
    """Stripe's Dispute (https://docs.stripe.com/api/disputes/object), as far as Tollgate
    and its tests read it."""

    object = "dispute"
    _id_prefix = "dp_"

    def __init__(self, charge, payment_intent, reason="fraudulent"):
        super().__init__()
        self.amount = charge.amount
        self.currency = charge.currency
        self.charge = charge.id
        self.payment_intent = payment_intent
        self.reason = reason
        self.status = "needs_response"
        self.is_charge_refundable = False
        self.balance_transactions = []
        self.evidence = {}
        self.evidence_details = {
            "due_by": int(time.time()) + EVIDENCE_DAYS * 86400,
            "has_evidence": False,
            "past_due": False,
            "submission_count": 0,
        }
        self.metadata = {}

    @classmethod
    def _api_close(cls, id, **kwargs):
        if kwargs:
            raise UserError(400, "Unexpected " + ", ".join(kwargs.keys()))
        obj = cls._api_retrieve(id)
        closed = {"needs_response": "lost", "warning_needs_response": "warning_closed"}
        if obj.status not in closed:
            raise UserError(
                400,
                "This dispute cannot be closed: its status is %s." % obj.status,
                {"code": "dispute_already_closed"} if obj.status in ("lost", "won", "warning_closed")
                else {},
            )
        obj.status = closed[obj.status]
        obj.evidence_details["due_by"] = None
        schedule_webhook(resources.Event("charge.dispute.closed", obj))
        return obj


def patch_disputes():
    PaymentIntent = resources.PaymentIntent
    PaymentMethod = resources.PaymentMethod
    succeeded = PaymentIntent._on_success

    def on_success(self):
        succeeded(self)
        method = PaymentMethod._api_retrieve(self.payment_method) if self.payment_method else None
        if method is None or getattr(method, "_card_number", None) != DISPUTED_CARD:
            return
        charge = self.latest_charge

        async def open_dispute():
            await asyncio.sleep(1)
            dispute = Dispute(charge, self.id)
            schedule_webhook(resources.Event("charge.dispute.created", dispute))

        asyncio.ensure_future(open_dispute())

    PaymentIntent._on_success = on_success
    resources.extra_apis.extend([
        ("GET", "/v1/disputes", lambda **data: Dispute._api_list_all("/v1/disputes", **data)),
        ("GET", "/v1/disputes/{id}", lambda id, **data: Dispute._api_retrieve(id)),
        ("POST", "/v1/disputes/{id}/close", Dispute._api_close),
    ])


# localstripe 1.15.10's localstripe-v3.js, to which stripe-js-additions.js is appended.
FAKE_STRIPE_JS_SHA256 = "9898c45b84c2f3395eb634a2a2c60a4c9a8d3d82e06f5e02da76265067adcad1"


def stripe_js():
    """The fake Stripe.js with Tollgate's additions, or an exception naming what changed."""
    path = os.path.join(os.path.dirname(localstripe.__file__), "localstripe-v3.js")
    with open(path, "rb") as f:
        fake = f.read()
    digest = hashlib.sha256(fake).hexdigest()
    if digest != FAKE_STRIPE_JS_SHA256:
        raise SystemExit(
            "%s changed (sha256 %s): check stripe-js-additions.js against it, then update "
            "FAKE_STRIPE_JS_SHA256" % (path, digest))
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "stripe-js-additions.js"), "rb") as f:
        additions = f.read()
    return (fake + b"\n" + additions).decode("utf-8")


def patch_server(server):
    script = stripe_js()

    @web.middleware
    async def serve_stripe_js(request, handler):
        if request.method == "GET" and request.path == "/js.stripe.com/v3/":
            return web.Response(text=script, content_type="application/javascript")
        return await handler(request)

    original_auth = server.auth_middleware
    answered = {}

    @web.middleware
    async def idempotency(request, handler):
        key = request.headers.get("Idempotency-Key")
        if request.method != "POST" or not key:
            return await handler(request)
        cache_key = (key, request.path)
        if cache_key in answered:
            status, body = answered[cache_key]
            return web.Response(status=status, body=body, content_type="application/json")
        response = await handler(request)
        if isinstance(response, web.Response) and response.body is not None:
            answered[cache_key] = (response.status, response.body)
        return response

    @web.middleware
    async def auth(request, handler):
        # Stripe.js creates PaymentMethods with the publishable key, as it creates tokens.
        if (request.method == "POST" and request.path == "/v1/payment_methods"
                and server.get_api_key(request) is None):
            data = await server.get_post_data(request, remove_auth=False)
            key = data.get("key") if isinstance(data, dict) else None
            if isinstance(key, str) and key.startswith("pk_"):
                return await handler(request)
        return await original_auth(request, handler)

    middlewares = server.app.middlewares
    middlewares[middlewares.index(original_auth)] = auth
    # After authentication (an unauthenticated retry is refused as the first was).
    middlewares.insert(middlewares.index(auth) + 1, idempotency)
    middlewares.insert(0, serve_stripe_js)


def exit_when_stdin_closes():
    try:
        sys.stdin.buffer.read()
    finally:
        os._exit(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-seconds", type=float, default=900)
    args = parser.parse_args()
    patch()
    from localstripe import server

    patch_server(server)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)

    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    deadline = threading.Timer(args.max_seconds, lambda: os._exit(3))
    deadline.daemon = True
    deadline.start()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)

    print("PORT %d" % sock.getsockname()[1], flush=True)
    web.run_app(server.app, sock=sock, access_log=None, print=None)


if __name__ == "__main__":
    main()
