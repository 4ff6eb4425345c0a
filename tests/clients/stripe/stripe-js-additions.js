// Tollgate's additions to localstripe 1.15.10's fake Stripe.js (`localstripe-v3.js`, whose
// SHA-256 run_localstripe.py checks), appended to it by run_localstripe.py and served at
// /js.stripe.com/v3/ in its place. The fake leaves out what the hosted checkout page relies
// on; these behave as Stripe.js documents it:
//
// - `createPaymentMethod({type: "card", card: element, billing_details})` reads the fake card
//   Element's fields, as the fake's own `createToken` does, refuses an incomplete card
//   without a request (Stripe.js's `validation_error`s), and otherwise POSTs
//   /v1/payment_methods with the publishable key; it resolves `{paymentMethod}` or
//   `{error}`, never rejects;
// - an Element's `change` handlers receive Stripe.js's event (`elementType`, `empty`,
//   `complete`, `brand`, `error`), where the fake passes nothing;
// - `confirmCardPayment` resolves `{error}` when the authentication failed (the intent is
//   back to `requires_payment_method`), with Stripe.js's code and message, where the fake
//   resolves `{paymentIntent}` whatever happened.
(function () {
  "use strict";

  const fakeStripe = window.Stripe;
  const CardElement = Element; // the fake's class, declared above in this script

  const AUTHENTICATION_FAILED = "We are unable to authenticate your payment method. " +
    "Please choose a different payment method and try again.";

  function validationError(code, message) {
    return { type: "validation_error", code: code, message: message };
  }

  // The card as typed: its fields, and what Stripe.js would say about them.
  function cardState(element) {
    const inputs = element._inputs || {};
    const field = (name) => ((inputs[name] && inputs[name].value) || "").trim();
    const number = field("number").replace(/\s+/g, "");
    const month = field("exp_month");
    const year = field("exp_year");
    const cvc = field("cvc");
    let error;
    if (number && !/^\d+$/.test(number)) {
      error = validationError("invalid_number", "Your card number is invalid.");
    } else if (month && !(/^\d{1,2}$/.test(month) && +month >= 1 && +month <= 12)) {
      error = validationError("invalid_expiry_month", "Your card's expiration date is invalid.");
    } else if (year && !/^\d{1,2}$/.test(year)) {
      error = validationError("invalid_expiry_year", "Your card's expiration year is invalid.");
    } else if (cvc && !/^\d+$/.test(cvc)) {
      error = validationError("invalid_cvc", "Your card's security code is invalid.");
    }
    let incomplete;
    if (number.length !== 16) {
      incomplete = validationError("incomplete_number", "Your card number is incomplete.");
    } else if (!month || year.length !== 2) {
      incomplete = validationError("incomplete_expiry", "Your card's expiration date is incomplete.");
    } else if (cvc.length !== 3) {
      incomplete = validationError("incomplete_cvc", "Your card's security code is incomplete.");
    }
    return {
      number: number,
      month: month,
      year: year,
      cvc: cvc,
      postalCode: field("postal_code"),
      empty: !number && !month && !year && !cvc,
      error: error,
      incomplete: incomplete,
    };
  }

  const on = CardElement.prototype.on;
  CardElement.prototype.on = function (event, handler) {
    const element = this;
    return on.call(this, event, function () {
      const s = cardState(element);
      handler({
        elementType: "card",
        empty: s.empty,
        complete: !s.error && !s.incomplete,
        brand: s.number.startsWith("4") ? "visa" : "unknown",
        error: s.error,
        value: { postalCode: s.postalCode },
      });
    });
  };

  async function createPaymentMethod(apiKey, data) {
    console.log("localstripe: Stripe().createPaymentMethod()");
    if (!data || data.type !== "card" || !(data.card instanceof CardElement)) {
      return { error: { type: "invalid_request_error",
        message: "createPaymentMethod: expected {type: 'card', card: <a card Element>}" } };
    }
    const s = cardState(data.card);
    if (s.error || s.incomplete) return { error: s.error || s.incomplete };
    const form = new URLSearchParams();
    form.append("type", "card");
    form.append("card[number]", s.number);
    form.append("card[exp_month]", s.month);
    form.append("card[exp_year]", "20" + s.year);
    form.append("card[cvc]", s.cvc);
    const details = Object.assign({}, data.billing_details || {});
    Object.keys(details).forEach((k) => {
      if (details[k] !== undefined && details[k] !== null && typeof details[k] !== "object") {
        form.append("billing_details[" + k + "]", String(details[k]));
      }
    });
    if (s.postalCode) form.append("billing_details[address][postal_code]", s.postalCode);
    form.append("key", apiKey);
    form.append("payment_user_agent", "localstripe");
    try {
      const response = await fetch(`${LOCALSTRIPE_BASE_API}/v1/payment_methods`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: form.toString(),
      });
      const res = await response.json().catch(() => ({}));
      if (response.status !== 200 || res.error) {
        return { error: res.error || { type: "api_error", message: "HTTP " + response.status } };
      }
      return { paymentMethod: res };
    } catch (err) {
      return { error: { type: "api_connection_error", message: String((err && err.message) || err) } };
    }
  }

  async function confirmCardPayment(original, clientSecret, data) {
    const result = await original(clientSecret, data);
    const intent = result && result.paymentIntent;
    if (intent && ["requires_payment_method", "canceled"].includes(intent.status)) {
      const last = intent.last_payment_error || {};
      const failedAuthentication = !last.code || last.code === "payment_intent_authentication_failure";
      return {
        error: {
          type: failedAuthentication ? "invalid_request_error" : "card_error",
          code: last.code || "payment_intent_authentication_failure",
          message: failedAuthentication ? AUTHENTICATION_FAILED : last.message,
          payment_intent: intent,
        },
      };
    }
    return result;
  }

  window.Stripe = function (apiKey, options) {
    const stripe = fakeStripe(apiKey, options);
    const fakeConfirm = stripe.confirmCardPayment;
    stripe.createPaymentMethod = (data) => createPaymentMethod(apiKey, data);
    stripe.confirmCardPayment = (clientSecret, data) => confirmCardPayment(fakeConfirm, clientSecret, data);
    return stripe;
  };
})();
