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
- `GET /v1/charges` accepts Stripe's `payment_intent` filter (the charges of one intent);
- disputes, which localstripe lacks: Stripe's Dispute object (`dp_…`: amount, currency,
  charge, payment_intent, reason, status, evidence_details, is_charge_refundable, ...),
  `GET /v1/disputes/{id}`, `GET /v1/disputes` and `POST /v1/disputes/{id}/close`, which
  concedes a dispute that needs a response (`needs_response` becomes `lost`,
  `warning_needs_response` becomes `warning_closed`) and sends `charge.dispute.closed`, as
  Stripe does; closing one in any other status is refused (400). A dispute is opened as in
  Stripe's test mode: a payment with the card 4000000000000259 succeeds, and a moment
  later (a second, then the webhook's own second) it is disputed as `fraudulent`, with
  `charge.dispute.created`;
- Stripe Tax, which localstripe lacks: `POST /v1/tax/calculations` (a `tax.calculation`
  with its `tax_breakdown` and `line_items` list, from a small rate table: DE 19 %,
  FR 20 %, GB 20 %, IE 23 %, US-CA 7.25 %, US-NY 8.875 %, anywhere else 0 and
  `not_collecting`; an EU business with an `eu_vat` number outside the head office's
  country (IE) is `reverse_charge`), `GET /v1/tax/calculations/{id}` and its
  `/line_items`, `POST /v1/tax/transactions/create_from_calculation` and
  `/create_reversal` (`type` `transaction` or `reversal`, `reversal.original_transaction`,
  `mode` `full` or `partial` with a negative `flat_amount`), `GET
  /v1/tax/transactions/{id}` and its `/line_items`; required params are refused as Stripe
  refuses them (400 `parameter_missing`), a reference used twice and a reversal beyond
  what is left are refused (400), and a billing postal code `00000` makes a calculation
  fail with a 500 `api_error`, as when Stripe is down;
- a POST with an `Idempotency-Key` header answers a retry with the same key and path with
  the first answer instead of doing it again, as Stripe does (kept in memory);
- its fake Stripe.js (`localstripe-v3.js`, checked against the SHA-256 below so that an
  upgrade is noticed) is served at /js.stripe.com/v3/ with `stripe-js-additions.js`
  appended: `createPaymentMethod`, Stripe.js's change events and failed 3-D Secure
  answers (that file says how), and the Payment Element (`elements({mode, …})`,
  `create("payment")`, `submit`, `createConfirmationToken`, `handleNextAction`);
- the Payment Element's side of the API (payment_element.py says what): ConfirmationTokens,
  intents created with `confirmation_token`, `automatic_payment_methods` and `return_url`,
  iDEAL as a redirect method through a fake bank page, SEPA Direct Debit held `processing`
  until a test settles it.
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
from fractions import Fraction

from aiohttp import web

import localstripe
from localstripe import resources
from localstripe.errors import UserError
from localstripe.webhooks import schedule_webhook

import payment_element


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
    # The Payment Element's ConfirmationTokens, redirect and delayed methods (that module
    # says what): after the hooks above, which it wraps.
    payment_element.patch()
    SetupIntent._api_confirm = payment_element.wrap_setup_confirm(SetupIntent._api_confirm)
    # After the intent's own hook above, which it wraps.
    patch_disputes()
    patch_tax()
    patch_charge_list()
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


def patch_charge_list():
    """`GET /v1/charges?payment_intent=pi_…`: only that intent's charges, as Stripe's
    documented list filter does (localstripe ignores nothing else, but refuses it)."""
    Charge = resources.Charge
    original_list = Charge._api_list_all.__func__

    @classmethod
    def list_all(cls, url, payment_intent=None, **kwargs):
        if payment_intent is not None and not (
            type(payment_intent) is str and payment_intent.startswith("pi_")
        ):
            raise UserError(400, "Bad request")
        li = original_list(cls, url, **kwargs)
        if payment_intent is not None:
            li._list = [c for c in li._list if c.payment_intent == payment_intent]
        return li

    Charge._api_list_all = list_all


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


# ---------------------------------------------------------------------------------------
# Stripe Tax: calculations and transactions (https://docs.stripe.com/api/tax/calculations,
# https://docs.stripe.com/api/tax/transactions), which localstripe lacks.

# The seller's head office, as Stripe Tax settings hold it: a business of another EU
# member state with an `eu_vat` number is reverse-charged.
TAX_HEAD_OFFICE = "IE"
# The fake's registrations and rates (percent as Stripe writes `percentage_decimal`): a
# jurisdiction not listed is `not_collecting` (no registration there).
TAX_RATES = {
    ("DE", None): ("vat", "19.0"),
    ("FR", None): ("vat", "20.0"),
    ("GB", None): ("vat", "20.0"),
    ("IE", None): ("vat", "23.0"),
    ("US", "CA"): ("sales_tax", "7.25"),
    ("US", "NY"): ("sales_tax", "8.875"),
}
TAX_DISPLAY_NAMES = {"vat": "VAT", "sales_tax": "Sales Tax"}
TAX_EU = {
    "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU",
    "IE", "IT", "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK",
}
# A billing postal code that makes the calculation fail as Stripe does when it is down
# (500 `api_error`): the tests' way to play a provider outage.
TAX_FAIL_POSTAL_CODE = "00000"
# A billing postal code Stripe Tax cannot place (as it answers an address it cannot resolve).
TAX_UNPLACEABLE_POSTAL_CODE = "00001"
# Stripe keeps a calculation for 90 days.
TAX_CALCULATION_DAYS = 90


def tax_missing(param):
    return UserError(400, "Missing required param: %s." % param,
                     {"code": "parameter_missing", "param": param})


def tax_invalid(param, message, code="parameter_invalid_integer"):
    return UserError(400, message, {"code": code, "param": param})


def tax_unknown(params):
    name = sorted(params)[0]
    return UserError(400, "Received unknown parameter: %s" % name,
                     {"code": "parameter_unknown", "param": name})


def tax_int(value, param):
    converted = resources.try_convert_to_int(value)
    if type(converted) is not int:
        raise tax_invalid(param, "Invalid integer: %s" % (value,))
    return converted


def tax_percent_of(amount, percent, inclusive):
    """The tax of `amount` at `percent` (a decimal string), rounded half up to the unit;
    inside the amount when `inclusive`."""
    from decimal import Decimal, ROUND_HALF_UP
    rate = Decimal(percent) / 100
    if inclusive:
        net = (Decimal(amount) / (1 + rate)).quantize(Decimal(1), rounding=ROUND_HALF_UP)
        return amount - int(net)
    return int((Decimal(amount) * rate).quantize(Decimal(1), rounding=ROUND_HALF_UP))


class TaxCalculationLineItem(resources.StripeObject):
    """`tax.calculation_line_item`."""

    object = "tax.calculation_line_item"
    _id_prefix = "tax_li_"

    def __init__(self, amount, amount_tax, reference, tax_behavior, tax_code, breakdown):
        super().__init__()
        self.amount = amount
        self.amount_tax = amount_tax
        self.product = None
        self.quantity = 1
        self.reference = reference
        self.tax_behavior = tax_behavior
        self.tax_code = tax_code
        self.tax_breakdown = breakdown


class TaxCalculation(resources.StripeObject):
    """`tax.calculation`: one per POST /v1/tax/calculations."""

    object = "tax.calculation"
    _id_prefix = "taxcalc_"

    def __init__(self, currency=None, line_items=None, customer=None, customer_details=None,
                 tax_date=None, shipping_cost=None, ship_from_details=None, **unknown):
        if unknown:
            raise tax_unknown(unknown)
        if not currency:
            raise tax_missing("currency")
        if not line_items:
            raise tax_missing("line_items")
        if not isinstance(line_items, list):
            raise tax_invalid("line_items", "Invalid array", "parameter_invalid_empty")
        if customer is None and not customer_details:
            raise tax_missing("customer_details")
        details = customer_details or {}
        address = details.get("address")
        if not isinstance(address, dict) or not address.get("country"):
            raise tax_missing("customer_details[address][country]")
        if details.get("address_source") not in ("billing", "shipping"):
            raise tax_missing("customer_details[address_source]")
        country = address["country"].upper()
        state = (address.get("state") or "").upper() or None
        if (country == "US" and not address.get("postal_code") and not state) or \
                address.get("postal_code") == TAX_UNPLACEABLE_POSTAL_CODE:
            raise UserError(
                400, "The customer's location could not be determined.",
                {"code": "customer_tax_location_invalid", "param": "customer_details[address]"})
        if address.get("postal_code") == TAX_FAIL_POSTAL_CODE:
            error = UserError(500, "An unknown error occurred")
            error.body["error"]["type"] = "api_error"
            raise error
        tax_ids = details.get("tax_ids") or []
        for i, tax_id in enumerate(tax_ids):
            for field in ("type", "value"):
                if not isinstance(tax_id, dict) or not tax_id.get(field):
                    raise tax_missing("customer_details[tax_ids][%d][%s]" % (i, field))
        items = []
        for i, item in enumerate(line_items):
            if not isinstance(item, dict) or item.get("amount") is None:
                raise tax_missing("line_items[%d][amount]" % i)
            if not item.get("reference"):
                raise tax_missing("line_items[%d][reference]" % i)
            behavior = item.get("tax_behavior") or "exclusive"
            if behavior not in ("exclusive", "inclusive"):
                raise tax_invalid("line_items[%d][tax_behavior]" % i,
                                  "Invalid tax_behavior: must be one of exclusive or inclusive",
                                  "parameter_invalid_string")
            items.append((tax_int(item["amount"], "line_items[%d][amount]" % i),
                          item["reference"], behavior, item.get("tax_code")))
        super().__init__()
        self.currency = currency.lower()
        self.customer = customer
        self.customer_details = {
            "address": {k: address.get(k) for k in
                        ("city", "country", "line1", "line2", "postal_code", "state")},
            "address_source": details["address_source"],
            "ip_address": None,
            "tax_ids": [{"type": t["type"], "value": t["value"]} for t in tax_ids],
            "taxability_override": details.get("taxability_override") or "none",
        }
        self.expires_at = self.created + TAX_CALCULATION_DAYS * 86400
        self.ship_from_details = None
        self.shipping_cost = None
        self.tax_date = tax_int(tax_date, "tax_date") if tax_date is not None else self.created

        reverse_charge = (
            country in TAX_EU and country != TAX_HEAD_OFFICE
            and any(t["type"] == "eu_vat" for t in tax_ids))
        known = TAX_RATES.get((country, state if country == "US" else None))
        tax_type = known[0] if known else ("sales_tax" if country == "US" else "vat")
        self._items = []
        breakdown = {}
        for amount, reference, behavior, tax_code in items:
            inclusive = behavior == "inclusive"
            if reverse_charge:
                percent, reason, tax = "0.0", "reverse_charge", 0
            elif known:
                percent, reason = known[1], "standard_rated"
                tax = tax_percent_of(amount, percent, inclusive)
            else:
                percent, reason, tax = "0.0", "not_collecting", 0
            taxable = amount - tax if inclusive else amount
            if reason == "not_collecting":
                taxable = 0
            details = {"country": country, "percentage_decimal": percent,
                       "state": state if country == "US" else None, "tax_type": tax_type}
            line_breakdown = [{
                "amount": tax,
                "jurisdiction": {"country": country, "display_name": country,
                                 "level": "state" if country == "US" else "country",
                                 "state": details["state"]},
                "sourcing": "destination",
                "tax_rate_details": {"display_name": TAX_DISPLAY_NAMES.get(tax_type, tax_type),
                                     "percentage_decimal": percent, "tax_type": tax_type}
                if reason == "standard_rated" else None,
                "taxability_reason": reason,
                "taxable_amount": taxable,
            }]
            self._items.append(TaxCalculationLineItem(
                amount, tax, reference, behavior, tax_code, line_breakdown))
            key = (inclusive, reason, percent)
            line = breakdown.setdefault(key, {
                "amount": 0, "inclusive": inclusive, "tax_rate_details": details,
                "taxability_reason": reason, "taxable_amount": 0})
            line["amount"] += tax
            line["taxable_amount"] += taxable
        self.tax_breakdown = list(breakdown.values())
        self.tax_amount_exclusive = sum(
            li.amount_tax for li in self._items if li.tax_behavior == "exclusive")
        self.tax_amount_inclusive = sum(
            li.amount_tax for li in self._items if li.tax_behavior == "inclusive")
        self.amount_total = sum(li.amount for li in self._items) + self.tax_amount_exclusive

    @property
    def line_items(self):
        return tax_list("/v1/tax/calculations/%s/line_items" % self.id, self._items)

    @classmethod
    def _api_line_items(cls, id, limit=None, starting_after=None, **unknown):
        if unknown:
            raise tax_unknown(unknown)
        return tax_list_object("/v1/tax/calculations/%s/line_items" % id,
                               cls._api_retrieve(id)._items, limit)


class TaxTransactionLineItem(resources.StripeObject):
    """`tax.transaction_line_item`."""

    object = "tax.transaction_line_item"
    _id_prefix = "tax_li_"

    def __init__(self, amount, amount_tax, reference, tax_behavior, tax_code, kind,
                 original_line_item=None):
        super().__init__()
        self.amount = amount
        self.amount_tax = amount_tax
        self.metadata = {}
        self.product = None
        self.quantity = 1
        self.reference = reference
        self.reversal = ({"original_line_item": original_line_item}
                         if original_line_item else None)
        self.tax_behavior = tax_behavior
        self.tax_code = tax_code
        self.type = kind


class TaxTransaction(resources.StripeObject):
    """`tax.transaction`: a calculation recorded (`type: transaction`) or a reversal of one
    (`type: reversal`, `reversal.original_transaction`)."""

    object = "tax.transaction"
    _id_prefix = "tax_"

    def __init__(self, kind, reference, currency, customer_details, tax_date, items,
                 original=None, metadata=None, posted_at=None):
        super().__init__()
        self.currency = currency
        self.customer = None
        self.customer_details = customer_details
        self.metadata = metadata or {}
        self.posted_at = posted_at or self.created
        self.reference = reference
        self.reversal = {"original_transaction": original} if original else None
        self.ship_from_details = None
        self.shipping_cost = None
        self.tax_date = tax_date
        self.type = kind
        self._items = items

    @property
    def line_items(self):
        return tax_list("/v1/tax/transactions/%s/line_items" % self.id, self._items)

    @classmethod
    def _reference_used(cls, reference):
        return any(key.startswith(cls.object + ":") and obj.reference == reference
                   for key, obj in resources.store.items())

    @classmethod
    def _check_reference(cls, reference):
        if not reference:
            raise tax_missing("reference")
        if cls._reference_used(reference):
            raise UserError(
                400, "A transaction with the reference %r already exists." % reference,
                {"param": "reference"})

    @classmethod
    def _api_create_from_calculation(cls, calculation=None, reference=None, metadata=None,
                                     posted_at=None, **unknown):
        if unknown:
            raise tax_unknown(unknown)
        if not calculation:
            raise tax_missing("calculation")
        cls._check_reference(reference)
        calc = resources.store.get(TaxCalculation.object + ":" + calculation)
        if calc is None:
            raise UserError(404, "No such tax calculation: '%s'" % calculation,
                            {"code": "resource_missing", "param": "calculation"})
        items = [TaxTransactionLineItem(li.amount, li.amount_tax, li.reference,
                                        li.tax_behavior, li.tax_code, "transaction")
                 for li in calc._items]
        posted_at = tax_int(posted_at, "posted_at") if posted_at is not None else None
        return cls("transaction", reference, calc.currency, calc.customer_details,
                   calc.tax_date, items, metadata=metadata, posted_at=posted_at)

    def _reversed(self):
        """What the reversals of this transaction gave back so far, per line reference:
        (amount, amount_tax), both 0 or negative."""
        done = {li.reference: [0, 0] for li in self._items}
        for key, obj in resources.store.items():
            if (key.startswith(self.object + ":") and obj.reversal
                    and obj.reversal["original_transaction"] == self.id):
                for li in obj._items:
                    done[li.reference][0] += li.amount
                    done[li.reference][1] += li.amount_tax
        return done

    @classmethod
    def _api_create_reversal(cls, mode=None, original_transaction=None, reference=None,
                             flat_amount=None, line_items=None, shipping_cost=None,
                             metadata=None, **unknown):
        if unknown:
            raise tax_unknown(unknown)
        if not mode:
            raise tax_missing("mode")
        if mode not in ("full", "partial"):
            raise tax_invalid("mode", "Invalid mode: must be one of full or partial",
                              "parameter_invalid_string")
        if not original_transaction:
            raise tax_missing("original_transaction")
        cls._check_reference(reference)
        original = resources.store.get(cls.object + ":" + original_transaction)
        if original is None or original.type != "transaction":
            raise UserError(404, "No such tax transaction: '%s'" % original_transaction,
                            {"code": "resource_missing", "param": "original_transaction"})
        done = original._reversed()
        left = {li.reference: (li.amount + done[li.reference][0],
                               li.amount_tax + done[li.reference][1])
                for li in original._items}
        if all(a == 0 and t == 0 for a, t in left.values()):
            raise UserError(400, "Transaction %s has already been fully reversed."
                            % original_transaction, {"param": "original_transaction"})
        if mode == "full":
            if flat_amount is not None or line_items:
                raise tax_invalid("mode", "flat_amount and line_items cannot be used with "
                                  "mode=full", "parameter_invalid_string")
            if any(done[r] != [0, 0] for r in done):
                raise UserError(400, "Transaction %s has been partially reversed: reverse "
                                "the rest with mode=partial." % original_transaction,
                                {"param": "mode"})
            shares = {r: (-a, -t) for r, (a, t) in left.items()}
        else:
            if flat_amount is None:
                raise tax_missing("flat_amount")
            flat = tax_int(flat_amount, "flat_amount")
            total_left = sum(a + (t if li.tax_behavior == "exclusive" else 0)
                             for li in original._items
                             for a, t in [left[li.reference]])
            if flat >= 0 or -flat > total_left:
                raise tax_invalid(
                    "flat_amount", "flat_amount must be negative and at most what is left "
                    "to reverse (%d)." % total_left, "parameter_invalid_integer")
            shares = {}
            remaining = flat
            for i, li in enumerate(original._items):
                a, t = left[li.reference]
                line_total = a + (t if li.tax_behavior == "exclusive" else 0)
                if i == len(original._items) - 1:
                    part = remaining
                else:
                    part = round(Fraction(flat * line_total, total_left))
                    remaining -= part
                tax = round(Fraction(part * t, line_total)) if line_total else 0
                amount = part - tax if li.tax_behavior == "exclusive" else part
                shares[li.reference] = (amount, tax)
        items = [TaxTransactionLineItem(shares[li.reference][0], shares[li.reference][1],
                                        li.reference, li.tax_behavior, li.tax_code,
                                        "reversal", original_line_item=li.id)
                 for li in original._items]
        return cls("reversal", reference, original.currency, original.customer_details,
                   original.tax_date, items, original=original.id, metadata=metadata)

    @classmethod
    def _api_line_items(cls, id, limit=None, starting_after=None, **unknown):
        if unknown:
            raise tax_unknown(unknown)
        return tax_list_object("/v1/tax/transactions/%s/line_items" % id,
                               cls._api_retrieve(id)._items, limit)


def tax_list(url, items):
    return {"object": "list", "data": [li._export() for li in items], "has_more": False,
            "url": url}


def tax_list_object(url, items, limit):
    li = resources.List(url, limit=limit)
    li._list = list(items)
    return li


def patch_tax():
    resources.extra_apis.extend([
        ("POST", "/v1/tax/calculations", TaxCalculation._api_create),
        ("GET", "/v1/tax/calculations/{id}",
         lambda id, **data: TaxCalculation._api_retrieve(id)),
        ("GET", "/v1/tax/calculations/{id}/line_items", TaxCalculation._api_line_items),
        ("POST", "/v1/tax/transactions/create_from_calculation",
         TaxTransaction._api_create_from_calculation),
        ("POST", "/v1/tax/transactions/create_reversal", TaxTransaction._api_create_reversal),
        ("GET", "/v1/tax/transactions/{id}",
         lambda id, **data: TaxTransaction._api_retrieve(id)),
        ("GET", "/v1/tax/transactions/{id}/line_items", TaxTransaction._api_line_items),
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
        if payment_element.is_public(request):
            return await handler(request)
        # Stripe.js creates PaymentMethods with the publishable key, as it creates tokens.
        if (request.method == "POST" and request.path == "/v1/payment_methods"
                and server.get_api_key(request) is None):
            data = await server.get_post_data(request, remove_auth=False)
            key = data.get("key") if isinstance(data, dict) else None
            if isinstance(key, str) and key.startswith("pk_"):
                return await handler(request)
        if server.get_api_key(request) is None:
            if request.method == "POST":
                data = await server.get_post_data(request, remove_auth=False)
            else:
                data = request.query
            key = data.get("key") if hasattr(data, "get") else None
            if payment_element.publishable(request, key):
                return await handler(request)
        return await original_auth(request, handler)

    middlewares = server.app.middlewares
    middlewares[middlewares.index(original_auth)] = auth
    # After authentication (an unauthenticated retry is refused as the first was).
    middlewares.insert(middlewares.index(auth) + 1, idempotency)
    middlewares.insert(0, serve_stripe_js)
    payment_element.patch_server(server)


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

    payment_element.BASE["url"] = "http://127.0.0.1:%d" % sock.getsockname()[1]
    print("PORT %d" % sock.getsockname()[1], flush=True)
    web.run_app(server.app, sock=sock, access_log=None, print=None)


if __name__ == "__main__":
    main()
