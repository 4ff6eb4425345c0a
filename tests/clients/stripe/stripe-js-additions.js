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
//   resolves `{paymentIntent}` whatever happened;
// - the Payment Element with deferred intents (docs.stripe.com/js/elements_object/
//   create_without_intent): `elements({mode, amount, currency, paymentMethodCreation:
//   "manual", setupFutureUsage, locale})` (`mode` payment, subscription or setup; `amount`
//   a positive integer unless setup; `paymentMethodTypes` limits the methods),
//   `update(options)`, `create("payment")`: tabs Card | iDEAL | SEPA Debit (the card tab holds the fake card Element's fields, iDEAL a
//   bank, SEPA an IBAN and the mandate's text), whose `change` events carry
//   `{elementType: "payment", value: {type}, complete, empty, collapsed, error}`;
//   `elements.submit()` checks the chosen method (`{error}` as Stripe.js's validation
//   errors, `{}` otherwise) and must come before
//   `createConfirmationToken({elements, params})`, which POSTs /v1/confirmation_tokens
//   with the publishable key (`payment_method_data` from the Element and
//   `params.payment_method_data.billing_details`, `params.return_url`, the group's
//   `setupFutureUsage`) and resolves `{confirmationToken}` or `{error}`;
//   `handleNextAction({clientSecret})` reads the intent with its client secret: a
//   `redirect_to_url` navigates to the bank (the promise never settles, the page is left),
//   `use_stripe_sdk` runs the fake's 3-D Secure dialog (a SetupIntent's too) and resolves
//   `{paymentIntent|setupIntent}` or `{error}` as `confirmCardPayment` above.
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


  // ----- The Payment Element.

  const METHODS = [
    { type: "card", label: "Card" },
    { type: "ideal", label: "iDEAL" },
    { type: "sepa_debit", label: "SEPA Debit" },
  ];
  const IDEAL_BANKS = [["ing", "ING"], ["rabobank", "Rabobank"], ["abn_amro", "ABN AMRO"],
    ["bunq", "bunq"], ["knab", "Knab"], ["triodos_bank", "Triodos Bank"]];

  function ibanState(input) {
    const iban = ((input && input.value) || "").replace(/\s+/g, "").toUpperCase();
    let error;
    let incomplete;
    if (iban && !/^[A-Z]{2}[0-9]{2}[A-Z0-9]*$/.test(iban)) {
      error = validationError("invalid_iban", "Your IBAN is invalid.");
    } else if (iban.length < 15 || iban.length > 34) {
      incomplete = validationError("incomplete_iban", "Your IBAN is incomplete.");
    }
    return { iban: iban, empty: !iban, error: error, incomplete: incomplete };
  }

  function checkOptions(options) {
    const modes = ["payment", "subscription", "setup"];
    if (!modes.includes(options.mode)) {
      throw new Error("elements(): mode must be one of " + modes.join(", "));
    }
    if (options.mode !== "setup" && !(Number.isInteger(options.amount) && options.amount > 0)) {
      throw new Error("elements(): amount must be a positive integer in " + options.mode + " mode");
    }
    if (options.currency !== undefined && !/^[a-z]{3}$/.test(options.currency)) {
      throw new Error("elements(): currency must be a lowercase ISO code");
    }
  }

  class PaymentElement {
    constructor(group, cardElement) {
      this._group = group;
      this._card = cardElement;
      this._listeners = {};
      this._type = "card";
      this._root = null;
    }

    mount(domElement) {
      const target = typeof domElement === "string" ? document.querySelector(domElement) : domElement;
      if (!(target instanceof window.Element)) throw new Error("Invalid DOM element.");
      const root = document.createElement("div");
      root.className = "localstripe-payment-element";
      const tabs = document.createElement("div");
      tabs.setAttribute("role", "tablist");
      tabs.style.cssText = "display:flex;gap:.4em;margin-bottom:.6em";
      this._tabs = {};
      this._panels = {};
      const allowed = this._group._options.paymentMethodTypes;
      this._methods = METHODS.filter((m) => !allowed || allowed.includes(m.type));
      this._methods.forEach((m) => {
        const tab = document.createElement("button");
        tab.type = "button";
        tab.setAttribute("role", "tab");
        tab.setAttribute("data-method", m.type);
        tab.textContent = m.label;
        tab.style.cssText = "flex:1;padding:.5em;border:1px solid #bbb;border-radius:4px;background:#fff;color:#1a1f36;cursor:pointer;font-size:.95em";
        tab.addEventListener("click", () => this._select(m.type));
        tabs.appendChild(tab);
        this._tabs[m.type] = tab;
      });
      METHODS.forEach((m) => {
        const panel = document.createElement("div");
        panel.setAttribute("role", "tabpanel");
        panel.setAttribute("data-method", m.type);
        this._panels[m.type] = panel;
      });
      root.appendChild(tabs);
      this._methods.forEach((m) => root.appendChild(this._panels[m.type]));
      target.appendChild(root);
      this._root = root;
      // Card: the fake's card Element, as Stripe's card tab.
      this._card.mount(this._panels.card);
      this._card.on("change", () => this._emit());
      // iDEAL: the buyer's bank, then a redirect to it.
      const bank = document.createElement("select");
      bank.setAttribute("name", "ideal_bank");
      bank.setAttribute("aria-label", "iDEAL bank");
      IDEAL_BANKS.forEach(([value, label]) => {
        const o = document.createElement("option");
        o.value = value;
        o.textContent = label;
        bank.appendChild(o);
      });
      bank.addEventListener("change", () => this._emit());
      const idealNote = document.createElement("p");
      idealNote.textContent = "You will be redirected to your bank to authorize the payment.";
      this._panels.ideal.appendChild(bank);
      this._panels.ideal.appendChild(idealNote);
      this._bank = bank;
      // SEPA Direct Debit: the IBAN and the mandate.
      const iban = document.createElement("input");
      iban.type = "text";
      iban.setAttribute("placeholder", "iban");
      iban.setAttribute("name", "iban");
      iban.setAttribute("aria-label", "IBAN");
      iban.setAttribute("size", "34");
      iban.addEventListener("input", () => this._emit());
      const mandate = document.createElement("p");
      mandate.className = "mandate";
      mandate.textContent = "By providing your IBAN and confirming this payment, you authorise " +
        "the seller and Stripe, our payment service provider, to send instructions to your bank " +
        "to debit your account in accordance with those instructions.";
      this._panels.sepa_debit.appendChild(iban);
      this._panels.sepa_debit.appendChild(mandate);
      this._iban = iban;
      this._select("card", true);
      (this._listeners.ready || []).forEach((h) => h({ elementType: "payment" }));
    }

    _select(type, quiet) {
      this._type = type;
      this._methods.forEach((m) => {
        const on = m.type === type;
        this._panels[m.type].hidden = !on;
        this._tabs[m.type].setAttribute("aria-selected", on ? "true" : "false");
        this._tabs[m.type].style.borderColor = on ? "#0570de" : "#bbb";
        this._tabs[m.type].style.fontWeight = on ? "bold" : "normal";
      });
      if (!quiet) this._emit();
    }

    // What the chosen method holds, and what Stripe.js would say about it.
    _state() {
      if (this._type === "card") {
        const s = cardState(this._card);
        return { empty: s.empty, error: s.error, incomplete: s.incomplete, card: s };
      }
      if (this._type === "sepa_debit") {
        const s = ibanState(this._iban);
        return { empty: s.empty, error: s.error, incomplete: s.incomplete, iban: s.iban };
      }
      return { empty: false, bank: this._bank.value };
    }

    _emit() {
      const s = this._state();
      const event = {
        elementType: "payment",
        collapsed: false,
        empty: s.empty,
        complete: !s.error && !s.incomplete,
        value: { type: this._type },
        error: s.error,
      };
      (this._listeners.change || []).forEach((h) => h(event));
    }

    on(event, handler) {
      this._listeners[event] = this._listeners[event] || [];
      this._listeners[event].push(handler);
      return this;
    }

    unmount() {
      this._card.unmount();
      if (this._root) this._root.remove();
      this._root = null;
    }

    destroy() {
      this.unmount();
      this._group._payment = null;
    }
  }

  // The Elements group of a deferred intent.
  function deferredElements(fake, options) {
    checkOptions(options);
    const group = {
      _options: Object.assign({}, options),
      _payment: null,
      _submitted: false,
      create(type, createOptions) {
        if (type === "card") return fake.create("card", createOptions);
        if (type !== "payment") throw new Error("localstripe: no " + type + " Element");
        if (this._payment) throw new Error("Can only create one Element of type payment");
        this._payment = new PaymentElement(this, fake.create("card", { hidePostalCode: true }));
        return this._payment;
      },
      getElement(type) {
        return type === "payment" ? this._payment : fake.getElement(type);
      },
      update(changes) {
        const next = Object.assign({}, this._options, changes || {});
        checkOptions(next);
        this._options = next;
        this._submitted = false;
      },
      async submit() {
        if (!this._payment) {
          return { error: { type: "invalid_request_error", message: "submit(): no Payment Element" } };
        }
        const s = this._payment._state();
        if (s.error || s.incomplete) return { error: s.error || s.incomplete };
        this._submitted = true;
        return {};
      },
    };
    return group;
  }

  function appendDetails(form, prefix, value) {
    if (value === undefined || value === null) return;
    if (typeof value === "object") {
      Object.keys(value).forEach((k) => appendDetails(form, prefix + "[" + k + "]", value[k]));
    } else {
      form.append(prefix, String(value));
    }
  }

  async function postForm(apiKey, path, form) {
    form.append("key", apiKey);
    form.append("payment_user_agent", "localstripe");
    try {
      const response = await fetch(LOCALSTRIPE_BASE_API + path, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: form.toString(),
      });
      const res = await response.json().catch(() => ({}));
      if (response.status !== 200 || res.error) {
        return { error: res.error || { type: "api_error", message: "HTTP " + response.status } };
      }
      return { object: res };
    } catch (err) {
      return { error: { type: "api_connection_error", message: String((err && err.message) || err) } };
    }
  }

  async function createConfirmationToken(apiKey, data) {
    console.log("localstripe: Stripe().createConfirmationToken()");
    const group = data && data.elements;
    if (!group || !group._payment) {
      return { error: { type: "invalid_request_error",
        message: "createConfirmationToken: expected {elements} with a Payment Element" } };
    }
    if (!group._submitted) {
      return { error: { type: "invalid_request_error",
        message: "elements.submit() must be called before stripe.createConfirmationToken()." } };
    }
    group._submitted = false;
    const s = group._payment._state();
    if (s.error || s.incomplete) return { error: s.error || s.incomplete };
    const type = group._payment._type;
    const params = (data && data.params) || {};
    const form = new URLSearchParams();
    form.append("payment_method_data[type]", type);
    if (type === "card") {
      form.append("payment_method_data[card][number]", s.card.number);
      form.append("payment_method_data[card][exp_month]", s.card.month);
      form.append("payment_method_data[card][exp_year]", "20" + s.card.year);
      form.append("payment_method_data[card][cvc]", s.card.cvc);
    } else if (type === "sepa_debit") {
      form.append("payment_method_data[sepa_debit][iban]", s.iban);
    } else if (type === "ideal") {
      form.append("payment_method_data[ideal][bank]", s.bank);
    }
    const pmd = params.payment_method_data || {};
    appendDetails(form, "payment_method_data[billing_details]", pmd.billing_details);
    if (params.return_url) form.append("return_url", params.return_url);
    if (params.shipping) appendDetails(form, "shipping", params.shipping);
    const sfu = group._options.setupFutureUsage;
    if (sfu) form.append("setup_future_usage", sfu);
    const r = await postForm(apiKey, "/v1/confirmation_tokens", form);
    return r.error ? { error: r.error } : { confirmationToken: r.object };
  }

  async function setupNextAction(apiKey, clientSecret) {
    const seti = clientSecret.match(/^(seti_\w+)_secret_/)[1];
    const ok = await openModal("3D Secure\nDo you want to confirm or cancel?",
      "Complete authentication", "Fail authentication");
    const form = new URLSearchParams();
    form.append("client_secret", clientSecret);
    const r = await postForm(apiKey, "/v1/setup_intents/" + seti + (ok ? "/confirm" : "/cancel"), form);
    if (r.error) return { error: r.error };
    if (r.object.status !== "succeeded") {
      return { error: { type: "invalid_request_error", code: "setup_intent_authentication_failure",
        message: AUTHENTICATION_FAILED, setup_intent: r.object } };
    }
    return { setupIntent: r.object };
  }

  async function handleNextAction(apiKey, confirmPayment, options) {
    console.log("localstripe: Stripe().handleNextAction()");
    const clientSecret = options && options.clientSecret;
    const match = typeof clientSecret === "string" && clientSecret.match(/^((pi|seti)_\w+)_secret_/);
    if (!match) {
      return { error: { type: "invalid_request_error", message: "handleNextAction: a clientSecret is required" } };
    }
    if (match[2] === "seti") return setupNextAction(apiKey, clientSecret);
    let intent;
    try {
      const q = new URLSearchParams({ key: apiKey, client_secret: clientSecret });
      const response = await fetch(LOCALSTRIPE_BASE_API + "/v1/payment_intents/" + match[1] + "?" + q);
      intent = await response.json().catch(() => ({}));
      if (response.status !== 200 || intent.error) {
        return { error: intent.error || { type: "api_error", message: "HTTP " + response.status } };
      }
    } catch (err) {
      return { error: { type: "api_connection_error", message: String((err && err.message) || err) } };
    }
    const next = intent.next_action;
    if (intent.status !== "requires_action" || !next) return { paymentIntent: intent };
    if (next.type === "redirect_to_url") {
      window.location.assign(next.redirect_to_url.url);
      return new Promise(() => {}); // the page is left
    }
    return confirmPayment(clientSecret);
  }

  window.Stripe = function (apiKey, options) {
    const stripe = fakeStripe(apiKey, options);
    const fakeConfirm = stripe.confirmCardPayment;
    const fakeElements = stripe.elements;
    stripe.createPaymentMethod = (data) => createPaymentMethod(apiKey, data);
    stripe.confirmCardPayment = (clientSecret, data) => confirmCardPayment(fakeConfirm, clientSecret, data);
    // Without options, the fake's own group (the card Element); with a mode, a deferred one.
    stripe.elements = (elementsOptions) => {
      const fake = fakeElements();
      return elementsOptions && elementsOptions.mode ? deferredElements(fake, elementsOptions) : fake;
    };
    stripe.createConfirmationToken = (data) => createConfirmationToken(apiKey, data);
    stripe.handleNextAction = (opts) => handleNextAction(apiKey, stripe.confirmCardPayment, opts);
    return stripe;
  };
})();
