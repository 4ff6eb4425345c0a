// The portal's card scripts (with Stripe only; every form works without them where it can):
// - "Add a card": Stripe's Payment Element in `#card-element`, in setup mode (a card, or a
//   wallet's card: Apple Pay, Google Pay), without an intent until the buyer saves it; on
//   submit, Stripe.js checks it (`elements.submit()`), makes a ConfirmationToken of it and
//   the form posts its id as `token` (the server confirms a SetupIntent with it).
// - A card whose bank asks the buyer (3-D Secure) comes back with the confirm form: Stripe.js
//   runs the intent's next action (`handleNextAction`), then the form asks the server how it
//   ended.
// Their words and the Payment Element's language come from the page's hidden #i18n element.
(function () {
  'use strict';
  var strings = document.getElementById('i18n');
  var say = function (name, english) {
    return (strings && strings.getAttribute('data-' + name)) || english;
  };
  var lang = (strings && strings.getAttribute('data-lang')) || 'auto';
  var add = document.getElementById('add-form');
  var key = add && add.getAttribute('data-stripe-key');
  if (add && key) {
    var error = document.getElementById('card-error');
    var show = function (message) {
      error.textContent = message;
      error.hidden = !message;
    };
    if (typeof Stripe !== 'function') {
      show(say('form-not-loaded', 'The card form could not be loaded. Check your connection and reload the page.'));
      return;
    }
    var stripe = Stripe(key);
    // Cards only: the portal's saved methods are cards (a wallet pays with one).
    var elements = stripe.elements({
      mode: 'setup',
      paymentMethodCreation: 'manual',
      setupFutureUsage: 'off_session',
      paymentMethodTypes: ['card'],
      locale: lang
    });
    var element = elements.create('payment');
    element.mount('#card-element');
    element.on('change', function (e) {
      show(e && e.error ? e.error.message : '');
    });
    var button = document.getElementById('add');
    var failed = function (message) {
      show(message || say('card-unusable', 'Your card could not be used.'));
      button.disabled = false;
    };
    add.addEventListener('submit', function (event) {
      event.preventDefault();
      button.disabled = true;
      show('');
      elements.submit().then(function (r) {
        if (r.error) {
          failed(r.error.message);
          return null;
        }
        return stripe.createConfirmationToken({ elements: elements }).then(function (t) {
          if (t.error) {
            failed(t.error.message);
            return;
          }
          document.getElementById('token').value = t.confirmationToken.id;
          add.submit();
        });
      }).catch(function () {
        failed();
      });
    });
  }
  var confirm = document.getElementById('card-confirm');
  if (confirm && typeof Stripe === 'function') {
    var done = function () {
      confirm.submit();
    };
    document.getElementById('card-confirmed').disabled = true;
    // Whatever Stripe.js answers, the server asks Stripe how the setup ended.
    Stripe(confirm.getAttribute('data-stripe-key'))
      .handleNextAction({ clientSecret: confirm.getAttribute('data-client-secret') })
      .then(done, done);
  }
})();

// "Pay now" of a past-due subscription: when the bank asks the buyer to confirm the payment
// (3-D Secure), Stripe.js shows its dialog (`confirmCardPayment`), then the page asks the
// server how the payment ended (the check form). While the payment is still being
// confirmed, the page checks again every few seconds. Without this script the "Check the
// payment" button does the same.
(function () {
  'use strict';
  var form = document.getElementById('pay-check');
  if (!form) {
    return;
  }
  var check = function () {
    form.submit();
  };
  var secret = form.getAttribute('data-client-secret');
  var key = form.getAttribute('data-stripe-key');
  if (secret && key && typeof Stripe === 'function') {
    var button = document.getElementById('pay-checked');
    if (button) {
      button.disabled = true;
    }
    // Whatever Stripe.js answers, the server asks Stripe how the payment ended.
    Stripe(key).confirmCardPayment(secret).then(check, check);
    return;
  }
  window.setTimeout(check, 3000);
})();
