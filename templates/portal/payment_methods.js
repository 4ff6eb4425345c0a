// The portal's card scripts (with Stripe only; every form works without them where it can):
// - "Add a card": Stripe's card Element in `#card-element`; on submit, Stripe.js makes a
//   payment method of it and the form posts its id as `token`.
// - A card whose bank asks the buyer (3-D Secure) comes back with the confirm form: Stripe.js
//   shows its dialog (`confirmCardSetup`), then the form asks the server how it ended.
(function () {
  'use strict';
  var add = document.getElementById('add-form');
  var key = add && add.getAttribute('data-stripe-key');
  if (add && key) {
    var error = document.getElementById('card-error');
    var show = function (message) {
      error.textContent = message;
      error.hidden = !message;
    };
    if (typeof Stripe !== 'function') {
      show('The card form could not be loaded. Check your connection and reload the page.');
      return;
    }
    var stripe = Stripe(key);
    var card = stripe.elements().create('card', { hidePostalCode: true });
    card.mount('#card-element');
    card.on('change', function (e) {
      show(e && e.error ? e.error.message : '');
    });
    var button = document.getElementById('add');
    add.addEventListener('submit', function (event) {
      event.preventDefault();
      button.disabled = true;
      show('');
      stripe.createPaymentMethod({ type: 'card', card: card }).then(function (r) {
        if (r.error) {
          show(r.error.message || 'Your card could not be used.');
          button.disabled = false;
          return;
        }
        document.getElementById('token').value = r.paymentMethod.id;
        add.submit();
      }, function () {
        show('Your card could not be used.');
        button.disabled = false;
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
      .confirmCardSetup(confirm.getAttribute('data-client-secret'))
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
