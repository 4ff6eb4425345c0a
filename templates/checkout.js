// Tollgate's hosted checkout page and its confirmation page. Everything is checked by
// the API: this script sends the form and shows the answers next to the fields.
(function () {
  "use strict";

  // The page's language and its strings (data attributes of #i18n, from locales/*.ftl);
  // `{name}` placeholders are filled from `vars`.
  var strings = document.getElementById("i18n");
  var lang = (strings && strings.getAttribute("data-lang")) || "en";
  function tr(key, vars) {
    var text = (strings && strings.getAttribute("data-" + key)) || key;
    Object.keys(vars || {}).forEach(function (k) { text = text.split("{" + k + "}").join(vars[k]); });
    return text;
  }

  // The confirmation page: copy buttons for license keys.
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var target = document.getElementById(button.getAttribute("data-copy"));
      if (!target) return;
      var text = target.textContent.trim();
      var done = function () {
        button.textContent = tr("copied");
        setTimeout(function () { button.textContent = tr("copy"); }, 2000);
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () { selectText(target); });
      } else {
        selectText(target);
      }
    });
  });

  function selectText(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  // In the overlay of the seller's page (the embed protocol of Polar's
  // @polar-sh/checkout): messages to that page, at the checkout's embed_origin only.
  var embed = document.getElementById("embed");
  var embedOrigin = embed ? embed.getAttribute("data-origin") : null;
  function tellParent(message) {
    if (!embedOrigin || window.parent === window) return;
    message.type = "POLAR_CHECKOUT";
    window.parent.postMessage(message, embedOrigin);
  }
  var closeButton = document.getElementById("embed-close");
  if (closeButton) {
    closeButton.addEventListener("click", function () { tellParent({ event: "close" }); });
    // A click on the backdrop around the checkout closes the overlay too.
    document.documentElement.classList.add("embedded");
    document.body.addEventListener("click", function (e) {
      if (e.target === document.body) tellParent({ event: "close" });
    });
  }
  if (embed && embed.hasAttribute("data-success")) {
    tellParent({
      event: "success",
      successURL: embed.getAttribute("data-success"),
      redirect: embed.getAttribute("data-redirect") === "true"
    });
  } else if (embed && embed.hasAttribute("data-loaded")) {
    tellParent({ event: "loaded" });
  }

  var form = document.getElementById("checkout");
  if (!form) return;

  var secret = form.dataset.secret;
  var currency = form.dataset.currency || "usd";
  var factor = parseInt(form.dataset.factor || "100", 10);
  var interval = form.dataset.interval || "";
  var mode = form.dataset.mode;
  var processor = form.dataset.processor;
  var api = "/v1/checkouts/client/" + encodeURIComponent(secret);
  var confirmationUrl = "/checkout/" + encodeURIComponent(secret) + "/confirmation" +
    (embedOrigin ? "?embed=true" : "");
  var payButton = document.getElementById("pay");
  var payStatus = document.getElementById("pay-status");
  var busy = false;
  var leaving = false;
  var total = null;

  var formatter;
  try {
    formatter = new Intl.NumberFormat(lang === "en" ? "en-US" : lang, { style: "currency", currency: currency.toUpperCase() });
  } catch (e) {
    formatter = null;
  }
  function money(minor) {
    var value = minor / factor;
    // The yen keeps its halfwidth sign, as the server writes it (¥1,900, not ￥1,900).
    if (formatter) return formatter.format(value).replace("\uFFE5", "\u00A5");
    return currency.toUpperCase() + " " + value.toFixed(factor === 1 ? 0 : 2);
  }
  function per() { return interval ? "/" + interval : ""; }

  function setText(id, text) {
    var el = document.getElementById(id);
    if (el) el.textContent = text;
  }

  function updateButton() {
    if (mode === "free") { payButton.textContent = tr("button-free"); return; }
    // A trial charges nothing today: the note tells the first charge.
    if (document.getElementById("trial-note")) { payButton.textContent = tr("button-trial"); return; }
    if (total === null) return;
    payButton.textContent = (mode === "subscribe" ? tr("button-subscribe", { amount: money(total) + per() }) : tr("button-pay", { amount: money(total) }));
  }

  // The tax row's label from the checkout's breakdown: "VAT 19%", "Includes VAT 19%" for a
  // price with its tax inside, "VAT reverse charge"; null when no tax is shown.
  function taxLabel(c) {
    var b = (c.tax_breakdown || [])[0];
    if (!b) return null;
    if (b.taxability_reason === "reverse_charge") return tr("tax-reverse-charge", { name: b.name });
    if (b.taxability_reason !== "standard_rated") return null;
    var l = b.name + " " + b.rate + "%";
    return c.tax_behavior === "inclusive" ? tr("tax-includes", { label: l }) : l;
  }

  // What the buyer is told under the tax number.
  function taxNote(c) {
    var b = (c.tax_breakdown || [])[0];
    if (b && b.taxability_reason === "reverse_charge") {
      return tr("tax-note-reverse-charge");
    }
    if (c.is_business_customer && c.customer_tax_id && b && b.taxability_reason === "standard_rated") {
      return tr("tax-note-refuted");
    }
    return "";
  }

  // The summary from a checkout as the API renders it.
  function showTotals(c) {
    var amount = c.amount || 0;
    var subtotal = c.subtotal_amount === null || c.subtotal_amount === undefined ? amount : c.subtotal_amount;
    var discount = amount - subtotal;
    var tax = c.tax_amount || 0;
    total = c.total_amount === null || c.total_amount === undefined ? subtotal + tax : c.total_amount;
    setText("summary-amount", money(amount) + per());
    setText("summary-discount", money(-discount));
    document.getElementById("row-discount").hidden = discount <= 0;
    setText("summary-subtotal", money(subtotal));
    setText("summary-tax", money(tax));
    var label = taxLabel(c);
    setText("summary-tax-label", label || tr("tax"));
    document.getElementById("row-tax").hidden = !label && tax <= 0;
    var note = document.getElementById("tax-note");
    if (note && c.tax_breakdown) {
      note.textContent = taxNote(c);
      note.hidden = !note.textContent;
    }
    setText("summary-total", money(total) + per());
    updateElementAmount();
    // The first charge after a trial is the total as it now stands (a discount changes it).
    if (document.getElementById("trial-amount") && document.getElementById("trial-amount").textContent) {
      setText("trial-amount", money(total));
    }
    updateButton();
  }

  // ----- Errors next to the fields.
  function clearErrors() {
    form.querySelectorAll(".field-error, #form-error").forEach(function (el) {
      el.textContent = "";
      el.hidden = true;
    });
    form.querySelectorAll("[aria-invalid]").forEach(function (el) { el.removeAttribute("aria-invalid"); });
  }

  function showError(id, message) {
    var el = document.getElementById(id);
    if (!el) el = document.getElementById("form-error");
    if (el.textContent) el.textContent += " ";
    el.textContent += message;
    el.hidden = false;
    var input = form.querySelector('[aria-describedby~="' + CSS.escape(id) + '"]');
    if (input) input.setAttribute("aria-invalid", "true");
  }

  // A 422 item's `loc` (["body", "customer_billing_address", "country"]) names the
  // element `err-customer_billing_address.country`; the nearest shown parent otherwise.
  function errorTarget(loc) {
    var parts = (loc || []).slice(loc && loc[0] === "body" ? 1 : 0).map(String);
    if (parts[0] === "confirmation_token_id") return "card-error";
    if (parts[0] === "customer_billing_address" && parts[1] === "state") return "err-customer_billing_address.state";
    for (var n = parts.length; n > 0; n--) {
      var id = "err-" + parts.slice(0, n).join(".");
      if (document.getElementById(id)) return id;
    }
    return "form-error";
  }

  function showValidation(detail) {
    if (!Array.isArray(detail)) {
      showError("form-error", String(detail || tr("check-form")));
      return;
    }
    var first = null;
    detail.forEach(function (item) {
      var id = errorTarget(item.loc);
      showError(id, item.msg || tr("invalid-value"));
      if (!first) first = id;
    });
    var el = document.getElementById(first);
    if (el && el.scrollIntoView) el.scrollIntoView({ block: "center" });
  }

  function readJson(res) {
    return res.text().then(function (text) {
      try { return JSON.parse(text); } catch (e) { return {}; }
    });
  }

  function send(method, url, body) {
    return fetch(url, {
      method: method,
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    }).then(function (res) {
      return readJson(res).then(function (data) { return { status: res.status, data: data }; });
    });
  }

  // ----- The custom amount.
  var amountInput = document.getElementById("amount");
  function customAmount() {
    var raw = amountInput.value.trim();
    var value = parseFloat(raw);
    if (raw === "" || isNaN(value)) return raw;
    return Math.round(value * factor);
  }
  if (amountInput) {
    var onAmount = function () {
      var a = customAmount();
      if (typeof a === "number") showTotals({ amount: a, subtotal_amount: a, tax_amount: 0, total_amount: a });
    };
    amountInput.addEventListener("input", onAmount);
    onAmount();
  }

  // ----- The seats of a seat-based price: the API re-prices the checkout for the count,
  // the page shows the rate of the tier the count falls in and the new total.
  var seatsInput = document.getElementById("seats");
  // The count typed, or null when it is not a whole number.
  function seatCount() {
    var raw = seatsInput.value.trim();
    if ((seatsInput.validity && seatsInput.validity.badInput) || !/^[0-9]+$/.test(raw)) return null;
    return parseInt(raw, 10);
  }
  function showSeatRate(n) {
    var tiers = document.querySelectorAll("#seat-tiers li");
    tiers.forEach(function (li) {
      var min = parseInt(li.getAttribute("data-min"), 10);
      var max = li.getAttribute("data-max");
      var hit = n >= min && (max === "" || n <= parseInt(max, 10));
      li.classList.toggle("current", hit);
      if (hit) setText("price", li.getAttribute("data-rate"));
    });
    setText("summary-seats", String(n));
  }
  function clearSeatError() {
    var err = document.getElementById("err-seats");
    err.textContent = "";
    err.hidden = true;
    seatsInput.removeAttribute("aria-invalid");
  }
  if (seatsInput) {
    var seatsButton = document.getElementById("update-seats");
    var updateSeats = function () {
      if (busy) return;
      clearSeatError();
      var n = seatCount();
      if (n === null) {
        showError("err-seats", tr("seats-whole"));
        return;
      }
      seatsButton.disabled = true;
      send("PATCH", api, { seats: n }).then(function (r) {
        if (r.status === 200) {
          showTotals(r.data);
          seatsInput.value = String(r.data.seats);
          showSeatRate(r.data.seats);
        } else if (r.status === 422 && Array.isArray(r.data.detail)) {
          showError("err-seats", r.data.detail.map(function (d) { return d.msg; }).join(" ") +
            " " + document.getElementById("seats-help").textContent);
        } else if (r.status === 404 || r.status === 403) {
          leaving = true;
          window.location.reload();
        } else {
          showError("err-seats", tr("seats-failed"));
        }
      }, function () {
        showError("err-seats", tr("network-error"));
      }).then(function () { seatsButton.disabled = false; });
    };
    seatsInput.addEventListener("change", updateSeats);
    seatsButton.addEventListener("click", updateSeats);
    seatsInput.addEventListener("keydown", function (e) {
      if (e.key === "Enter") { e.preventDefault(); updateSeats(); }
    });
  }

  // ----- The product, when the checkout offers several: the API re-prices the checkout,
  // and the page is rendered again for the new product.
  form.querySelectorAll('input[name="product_id"]').forEach(function (radio) {
    radio.addEventListener("change", function () {
      if (!radio.checked || busy) return;
      clearErrors();
      send("PATCH", api, { product_id: radio.value }).then(function (r) {
        if (r.status === 200 || r.status === 403 || r.status === 404) {
          leaving = true;
          window.location.reload();
        } else if (r.status === 422) {
          showValidation(r.data.detail);
        } else {
          showError("err-product_id", tr("product-failed"));
        }
      }, function () {
        showError("err-product_id", tr("network-error"));
      });
    });
  });

  // ----- The discount code.
  var discountButton = document.getElementById("apply-discount");
  if (discountButton) {
    var codeInput = document.getElementById("discount_code");
    var applyCode = function () {
      var code = codeInput.value.trim();
      var ok = document.getElementById("discount-ok");
      var err = document.getElementById("err-discount_code");
      err.hidden = true; err.textContent = ""; ok.hidden = true;
      codeInput.removeAttribute("aria-invalid");
      discountButton.disabled = true;
      send("PATCH", api, { discount_code: code || null }).then(function (r) {
        if (r.status === 200) {
          showTotals(r.data);
          if (r.data.discount) {
            ok.textContent = tr("code-applied", { code: r.data.discount.code || code });
            ok.hidden = false;
          }
        } else if (r.status === 422 && Array.isArray(r.data.detail)) {
          showError("err-discount_code", r.data.detail.map(function (d) { return d.msg; }).join(" "));
        } else if (r.status === 404 || r.status === 403) {
          window.location.reload();
        } else {
          showError("err-discount_code", (r.data && typeof r.data.detail === "string") ? r.data.detail : tr("code-failed"));
        }
      }, function () {
        showError("err-discount_code", tr("network-error"));
      }).then(function () { discountButton.disabled = false; });
    };
    discountButton.addEventListener("click", applyCode);
    codeInput.addEventListener("keydown", function (e) {
      if (e.key === "Enter") { e.preventDefault(); applyCode(); }
    });
  }

  // ----- The state of a US or Canadian address.
  var country = document.getElementById("country");
  function stateSelect() {
    var c = country ? country.value : "";
    return (c === "US" || c === "CA") ? document.getElementById("state-" + c) : null;
  }
  function showStates() {
    if (!country) return;
    var row = document.getElementById("state-row");
    var current = stateSelect();
    row.hidden = !current;
    ["US", "CA"].forEach(function (c) {
      var shown = current && current.id === "state-" + c;
      document.getElementById("state-" + c).hidden = !shown;
      document.getElementById("state-" + c + "-label").hidden = !shown;
    });
  }
  if (country) {
    country.addEventListener("change", showStates);
    showStates();
  }

  // ----- Business buyers, and the tax as the address and the number decide it: the
  // checkout is updated (and its tax quoted again) when they change.
  var business = document.getElementById("is_business_customer");
  if (business) {
    business.addEventListener("change", function () {
      document.getElementById("business").hidden = !business.checked;
    });
  }
  var taxTimer = null;
  // The billing address as typed, and the business fields (a consumer sends no number).
  function buyerFields(body) {
    var address = { country: country.value };
    ["line1", "line2", "postal_code", "city"].forEach(function (k) {
      var v = value(k);
      if (v) address[k] = v;
    });
    var s = stateSelect();
    if (s && s.value) address.state = country.value + "-" + s.value;
    if (address.country || Object.keys(address).length > 1) body.customer_billing_address = address;
    var isBusiness = !!(business && business.checked);
    body.is_business_customer = isBusiness;
    body.customer_tax_id = isBusiness ? (value("customer_tax_id") || null) : null;
    if (isBusiness) body.customer_billing_name = value("customer_billing_name") || null;
    return body;
  }
  function taxBody() {
    var body = buyerFields({});
    if (!body.customer_billing_address) body.customer_billing_address = null;
    return body;
  }
  function requote() {
    if (busy || leaving || !country) return;
    ["err-customer_tax_id", "err-customer_billing_address"].forEach(function (id) {
      var el = document.getElementById(id);
      if (el) { el.textContent = ""; el.hidden = true; }
    });
    var taxInput = document.getElementById("customer_tax_id");
    if (taxInput) taxInput.removeAttribute("aria-invalid");
    send("PATCH", api, taxBody()).then(function (r) {
      if (r.status === 200) {
        showTotals(r.data);
      } else if (r.status === 422 && Array.isArray(r.data.detail)) {
        showValidation(r.data.detail);
      } else if (r.status === 404 || r.status === 403) {
        leaving = true;
        window.location.reload();
      }
    }, function () { /* the confirm sends everything again */ });
  }
  function requoteSoon() {
    if (taxTimer) clearTimeout(taxTimer);
    taxTimer = setTimeout(requote, 400);
  }
  if (country) {
    country.addEventListener("change", requoteSoon);
    ["US", "CA"].forEach(function (c) {
      var s = document.getElementById("state-" + c);
      if (s) s.addEventListener("change", requoteSoon);
    });
    ["postal_code", "customer_tax_id"].forEach(function (id) {
      var el = document.getElementById(id);
      if (el) el.addEventListener("change", requoteSoon);
    });
    if (business) business.addEventListener("change", requoteSoon);
  }

  // ----- The payment method: Stripe's Payment Element (cards, wallets, redirect methods
  // such as iDEAL, delayed ones such as SEPA Direct Debit), without an intent until the
  // buyer pays (Stripe's deferred intent: the page makes a ConfirmationToken, the confirm
  // creates and confirms the intent on the server).
  var stripe = null;
  var elements = null;
  var paymentElement = null;
  var methodType = null;
  // What the Elements group prepares: a trial saves the method, a plan pays and saves it,
  // anything else pays once.
  function stripeMode() {
    if (document.getElementById("trial-note")) return "setup";
    return mode === "subscribe" ? "subscription" : "payment";
  }
  function showCardError(message) {
    var el = document.getElementById("card-error");
    el.textContent = message || "";
    el.hidden = !message;
  }
  // The buyer's choice, as Polar's page keeps it on the checkout (`payment_method_type`).
  function rememberMethod(type) {
    if (!type || type === methodType) return;
    methodType = type;
    if (busy || leaving) return;
    send("PATCH", api, { payment_method_type: type }).then(function () {}, function () {});
  }
  // The Element's amount only decides which methods it offers (the server charges the
  // checkout's total): the total once known, at least one minor unit.
  function elementAmount() {
    return Math.max(total || 0, 1);
  }
  function mountPaymentElement() {
    // The Element speaks the page's language.
    var options = { mode: stripeMode(), currency: currency.toLowerCase(), paymentMethodCreation: "manual", locale: lang };
    if (options.mode !== "setup") options.amount = elementAmount();
    if (options.mode !== "payment") options.setupFutureUsage = "off_session";
    elements = stripe.elements(options);
    paymentElement = elements.create("payment");
    paymentElement.mount("#card-element");
    paymentElement.on("change", function (e) {
      showCardError(e && e.error ? e.error.message : "");
      rememberMethod(e && e.value && e.value.type);
    });
  }
  function updateElementAmount() {
    if (elements && stripeMode() !== "setup") elements.update({ amount: elementAmount() });
  }
  if (processor === "stripe") {
    if (typeof window.Stripe === "function") {
      stripe = window.Stripe(form.dataset.stripeKey);
      // The total as the API prices it (tax, discount), then the Element.
      send("GET", api).then(function (r) {
        if (r.status === 200 && typeof r.data.total_amount === "number") total = r.data.total_amount;
      }, function () {}).then(function () {
        mountPaymentElement();
        updateButton();
      });
    } else {
      showError("card-error", tr("form-not-loaded"));
    }
  }

  function value(id) {
    var el = document.getElementById(id);
    return el ? el.value.trim() : "";
  }

  function collect() {
    var body = {};
    body.customer_email = value("customer_email");
    var name = value("customer_name");
    if (name) body.customer_name = name;
    if (amountInput) body.amount = customAmount();
    if (seatsInput) {
      var n = seatCount();
      body.seats = n === null ? seatsInput.value.trim() : n;
    }
    if (country) buyerFields(body);
    var fields = form.querySelectorAll("[data-slug]");
    if (fields.length) {
      var data = {};
      fields.forEach(function (el) {
        var slug = el.getAttribute("data-slug");
        var kind = el.getAttribute("data-kind");
        if (kind === "checkbox") { data[slug] = el.checked; return; }
        var v = el.value.trim();
        if (v === "") { data[slug] = null; return; }
        if (kind === "number") { var n = Number(v); data[slug] = (Number.isInteger(n) ? n : v); return; }
        data[slug] = v;
      });
      body.custom_field_data = data;
    }
    return body;
  }

  function leave() {
    leaving = true;
    tellParent({ event: "confirmed" });
    window.location.assign(confirmationUrl);
  }

  function paymentToken() {
    if (mode === "free") return Promise.resolve(null);
    if (processor === "test") return Promise.resolve(value("test-card"));
    if (!stripe || !paymentElement) return Promise.reject(new Error(tr("form-missing")));
    var details = { email: value("customer_email") || null, name: value("customer_name") || null };
    // Stripe.js checks the Element first, then makes the token the confirm sends.
    return elements.submit().then(function (r) {
      if (r.error) throw new Error(r.error.message || tr("check-payment"));
      return stripe.createConfirmationToken({
        elements: elements,
        params: { payment_method_data: { billing_details: details } }
      });
    }).then(function (r) {
      if (r.error) throw new Error(r.error.message || tr("method-unusable"));
      return r.confirmationToken.id;
    });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (busy || leaving) return;
    busy = true;
    payButton.disabled = true;
    payButton.setAttribute("aria-busy", "true");
    payStatus.textContent = tr("processing");
    clearErrors();
    var body = collect();
    // A checkout without a language of its own keeps the one the buyer reads the page in,
    // for the e-mails that follow.
    if (form.dataset.locale) body.locale = form.dataset.locale;
    paymentToken().then(function (token) {
      if (token !== null) body.confirmation_token_id = token;
      return send("POST", api + "/confirm", body).then(function (r) {
        if (r.status === 200) {
          var meta = r.data.payment_processor_metadata || {};
          if (meta.intent_status === "requires_action" && stripe && meta.intent_client_secret) {
            // The buyer's bank asks them: 3-D Secure here, or its own page (iDEAL), which
            // comes back to the confirmation page. A failed or abandoned authentication
            // charges nothing, and the buyer may try again here.
            payStatus.textContent = tr("waiting-bank");
            return stripe.handleNextAction({ clientSecret: meta.intent_client_secret }).then(function (result) {
              if (result && result.error) {
                showError("card-error", (result.error.message || tr("not-authenticated")) +
                  " " + tr("not-charged"));
                document.getElementById("card-error").scrollIntoView({ block: "center" });
              } else {
                leave();
              }
            }, leave);
          }
          leave();
        } else if (r.status === 422) {
          showValidation(r.data.detail);
        } else if (r.status === 400 && r.data.error === "PaymentError") {
          showError("card-error", r.data.detail || tr("declined"));
          document.getElementById("card-error").scrollIntoView({ block: "center" });
        } else if (r.status === 403 && r.data.error === "TrialAlreadyRedeemed") {
          // One trial per customer and product: the buyer may still subscribe, paying now.
          // What the buyer typed goes with the change, so that the page reloaded without
          // the trial keeps it (the refused confirm saved nothing); the change alone if
          // the API refuses it.
          var keep = collect();
          keep.allow_trial = false;
          return send("PATCH", api, keep).then(function (p) {
            return p.status === 200 ? p : send("PATCH", api, { allow_trial: false });
          }).then(function () {
            leaving = true;
            window.location.hash = "trial-used";
            window.location.reload();
          });
        } else if (r.status === 403 && r.data.error === "NotOpenCheckout") {
          leave();
        } else if (r.status === 404) {
          leaving = true;
          window.location.reload();
        } else {
          showError("form-error", (typeof r.data.detail === "string" ? r.data.detail : tr("something-wrong")) + " " + tr("try-again"));
        }
      });
    }, function (e) {
      showError("card-error", e.message);
    }).catch(function () {
      showError("form-error", tr("not-sent"));
    }).then(function () {
      busy = false;
      payStatus.textContent = "";
      if (!leaving) {
        payButton.disabled = false;
        payButton.removeAttribute("aria-busy");
      } else {
        payStatus.textContent = tr("redirecting");
      }
    });
  });

  updateButton();
  if (window.location.hash === "#payment-failed") {
    showError("card-error", tr("payment-not-completed"));
  }
  if (window.location.hash === "#trial-used") {
    showError("form-error", tr("trial-used"));
  }
})();
