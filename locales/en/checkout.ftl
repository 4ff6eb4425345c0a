# The hosted checkout, its confirmation page and its script (templates/checkout*.html,
# templates/checkout.js through the data attributes of #i18n, src/web/checkout.rs).
# Every other language has exactly these messages and variables (a test checks it).

## Page frame

checkout-title = Checkout
payments-by = Payments by Tollgate

## Recurring periods ("/month") and lengths of time ("14 days")

per-day = { $count ->
    [one] day
   *[other] { $count } days
}
per-week = { $count ->
    [one] week
   *[other] { $count } weeks
}
per-month = { $count ->
    [one] month
   *[other] { $count } months
}
per-year = { $count ->
    [one] year
   *[other] { $count } years
}
length-day = { $count ->
    [one] 1 day
   *[other] { $count } days
}
length-week = { $count ->
    [one] 1 week
   *[other] { $count } weeks
}
length-month = { $count ->
    [one] 1 month
   *[other] { $count } months
}
length-year = { $count ->
    [one] 1 year
   *[other] { $count } years
}

## The checkout page

close = Close
back = ← Back
price-per-seat = Price per seat
seat-tiers-graduated = Each tier's seats are billed at that tier's rate.
included = Included
order-summary = Order summary
seats = Seats
price = Price
discount = Discount
subtotal = Subtotal
total = Total
tax = Tax
tax-includes = Includes { $label }
tax-reverse-charge = { $name } reverse charge
tax-note-reverse-charge = Reverse charge: no VAT is charged; you account for it in your own return.
tax-note-refuted = This VAT number could not be confirmed as registered: VAT is charged.
trial-then = Free for { $length }, then
trial-first-charge = : the first charge is on { $date }.
trial-free = Free for { $length }.
trial-nothing-today = Nothing is charged today.
payment = Payment
choose-product = Choose a product
amount-in = Amount ({ $currency })
update = Update
discount-code = Discount code
apply = Apply
contact = Contact
email = E-mail
cardholder-name = Cardholder name
name = Name
billing-address = Billing address
country = Country
choose = Choose…
state = State
province = Province or territory
address = Address
address-line2 = Address line 2
postal-code = Postal code
city = City
buying-as-business = I'm buying as a business
business-name = Business name
tax-id = Tax ID (VAT number)
additional-information = Additional information
test-card-token = Test card token
test-card-help = Test mode: no real card is charged. Any token is approved except ones starting with tok_decline (for example tok_decline_insufficient_funds).
payment-method = Payment method
price-free = Free
price-pay-what-you-want = Pay what you want
seat-rate = { $amount } per seat
seat-rate-from = From { $amount } per seat
metered-rate = { $amount } per unit
metered-note = Usage is billed at the end of each period.
seat-range = { $min }–{ $max } seats
seat-range-open = { $min }+ seats
seat-count = { $count ->
    [one] 1 seat
   *[other] { $count } seats
}
seats-exactly = { $count ->
    [one] 1 seat.
   *[other] { $count } seats.
}
seats-between = From { $min } to { $max } seats.
seats-at-least = At least { $min } seats.
amount-between = Between { $min } and { $max }.
amount-at-least = At least { $min }.
amount-at-most = At most { $max }.
button-free = Get it free
button-trial = Start free trial
button-subscribe = Subscribe { $amount }
button-pay = Pay { $amount }

## The confirmation page

title-succeeded = Thank you
title-processing = Processing your payment
title-failed = Payment failed
processing-heading = Processing your payment…
processing-text = We are confirming the payment for { $product }. This page refreshes by itself.
failed-heading = Payment failed
failed-text = The payment for { $product } did not go through, and you were not charged. Go back to the seller's site to try again.
thanks-heading = Thank you for your order!
purchase-complete = Your purchase of { $product } is complete.
bought-as = Bought as { $email }.
total-paid = Total paid
your-license-keys = { $count ->
    [one] Your license key
   *[other] Your license keys
}
copy = Copy
copy-license-key = Copy license key { $number }
key-status-revoked = revoked
key-status-disabled = disabled
valid-until = valid until { $date }
keys-on-their-way = { $count ->
    [one] A receipt with your license key is on its way to { $email }.
   *[other] A receipt with your license keys is on its way to { $email }.
}
keys-lost = Lost it?
keys-send-again = Get your keys sent again
continue-to = Continue to { $seller }

## Error pages

checkout-not-found = Checkout not found
checkout-not-found-text = This checkout link is unknown or has expired. Go back to the seller's site to start again.
checkout-closed = Checkout closed
checkout-closed-text = The payment of this checkout failed and it is closed. Go back to the seller's site to start again.

## The page's script ({ $…} kept as {…} for the script to fill in)

js-copied = Copied
js-check-form = Please check the form.
js-invalid-value = Invalid value.
js-seats-whole = Enter a whole number of seats.
js-seats-failed = The seats could not be changed; try again.
js-network-error = Network error; try again.
js-product-failed = The product could not be changed; try again.
js-code-applied = Code { $code } applied.
js-code-failed = The code could not be applied; try again.

## The payment part of the page script

js-form-not-loaded = The payment form could not be loaded. Check your connection and reload the page.
js-form-missing = The payment form is not loaded.
js-check-payment = Please check your payment details.
js-method-unusable = This payment method could not be used.
js-processing = Processing…
js-waiting-bank = Waiting for your bank…
js-not-authenticated = Your payment could not be authenticated.
js-not-charged = You were not charged.
js-declined = Your payment was declined.
js-something-wrong = Something went wrong.
js-try-again = Please try again.
js-not-sent = Network error: the payment was not sent. Please try again.
js-redirecting = Redirecting…
js-trial-used = You have already used a trial for this product: subscribing now charges your card.
js-payment-not-completed = The payment was not completed, and you were not charged. Try again or choose another payment method.
