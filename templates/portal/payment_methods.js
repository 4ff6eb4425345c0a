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
