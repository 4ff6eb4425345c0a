# E-mails to buyers (templates/mail/*, src/app/mail/*). Messages of checkout.ftl are used
# too (your-license-keys, subtotal, discount, tax, total-paid, included, payments-by,
# keys-send-again, key-status-revoked, key-status-disabled, valid-until, open-portal…).

## Frame of every message

mail-sent-by = Sent by { $seller }
mail-questions = questions? reply to this e-mail or write to
order-ref = Order { $order }

## License keys

key-limit-activations = { $count ->
    [one] up to 1 activation
   *[other] up to { $count } activations
}
key-limit-uses = { $count ->
    [one] 1 use
   *[other] { $count } uses
}
key-no-expiry = does not expire

## Receipts

receipt-subject = Your receipt from { $seller }: { $product }
receipt-subject-renewal = Your { $product } subscription renewed: { $amount }
receipt-subject-seller = New order: { $buyer } bought { $product } ({ $amount })
receipt-heading = Thank you for your order
receipt-heading-renewal = Your subscription renewed
receipt-heading-seller = You have a new order
receipt-text = Your purchase of { $product } from { $seller } on { $date } is complete.
receipt-text-renewal = Your subscription to { $product } renewed on { $date }, and your card was charged.
receipt-text-seller = { $buyer } bought { $product } on { $date }.
invoice-attached = Invoice { $number } is attached to this e-mail ({ $file }).
view-purchase = View your purchase
downloads-ready = Your files are ready to download in the customer portal.
download-files = Download your files
view-order = View the order
your-purchase = Your purchase
the-order = The order
lost-this-email = Lost this e-mail?
your-tax-number = Your tax number: { $number }

## Notices

open-portal = Open the customer portal
sign-in-subject = Access your { $seller } purchases
sign-in-heading = Your sign-in code
sign-in-text = You can use the following code to access your purchases on the { $seller } customer portal.
code-expires = This code expires in { $minutes } minutes, and works once.
sign-in-ignore = If you did not ask for it, you can ignore this e-mail: nobody can sign in without the code.
renewal-failed-subject = Payment failed for your { $product } subscription
renewal-failed-heading = Your renewal payment failed
renewal-failed-text = We could not charge your card for the renewal of { $product }.
renewal-failed-text-amount = We could not charge your card for the renewal of { $product } ({ $amount }).
retry-keys-until = We will try again on { $retry }. Your license keys keep working until { $until }; once the payment goes through, they work for the new period.
retry-keys = We will try again on { $retry }. Your license keys keep working meanwhile.
gives-up = If the payment still fails by { $date }, the subscription will be canceled and its license keys revoked.
recovery-lead = Pay now, or update your card, in the customer portal:
recovery-label = Pay now or update your card
recovery-until = The link works once, until { $date }. Access stops on { $date }.
questions-reply = Questions? Reply to this e-mail.
card-advice = Make sure your card can be charged, or contact us by replying to this e-mail.
trial-ending-subject = Your { $product } trial is ending soon
trial-ending-heading = Your trial is ending soon
trial-ending-text = Your free trial of { $product } ends on { $date }. Your subscription then starts, and your card is charged.
trial-ending-text-amount = Your free trial of { $product } ends on { $date }. Your subscription then starts, and your card is charged { $amount }.
trial-ending-keep = Nothing to do if you want to keep it: your license keys go on working. To stop before the first charge, cancel the subscription before that date in the customer portal.
plan-changed-subject = Your subscription has changed to { $product }
plan-changed-heading = Your subscription has changed
plan-changed-text = Your subscription has changed to { $product }.
plan-renews-at = It renews at { $amount } per period; the next renewal is on { $date }, adjusted for the change.
plan-renews-on = It renews on { $date }.
plan-dropped-keys = License keys of your previous plan that the new one does not include no longer work.
plan-keys-below = Your license keys for the new plan are below.
canceled-subject = Your { $product } subscription was canceled
canceled-heading = Your subscription was canceled
canceled-text = Your subscription to { $product } has been canceled.
canceled-until = It stays active, and your license keys keep working, until { $date }. You will not be charged again.
not-charged-again = You will not be charged again.
ended-subject = Your { $product } subscription has ended
ended-heading = Your subscription has ended
ended-text = Your subscription to { $product } has ended.
ended-keys = Its license keys below no longer work.
ended-again = You will not be charged again. To subscribe again, visit the seller's site.
revoked-keys = Revoked license keys
license-key = License key
key-revoked-subject = A license key was revoked
key-disabled-subject = A license key was disabled
key-revoked-text = The seller has revoked the license key below: it no longer validates.
key-disabled-text = The seller has disabled the license key below: it no longer validates.
key-mistake = If you think this is a mistake, reply to this e-mail.
refund-subject = Your refund for { $product }
refund-heading = Your refund is on its way
refund-text = We have refunded { $amount } of your purchase of { $product }.
refund-text-full = We have refunded { $amount } of your purchase of { $product } (the whole purchase).
refund-timing = It reaches your card within 5 to 10 business days, depending on your bank.
refund-keys = The license keys of this purchase no longer work.
resent-heading = Your license keys
resent-text = You asked for your license keys again. Here they are.
email-change-subject = Verify your new email address
email-change-heading = Confirm your new e-mail address
email-change-text = Someone asked to use { $email } for their purchases from { $seller }. Type this code in the customer portal to confirm it:
email-change-ignore = If you did not ask for it, you can ignore this e-mail: nothing changes without the code.
email-changed-subject = Your email address has been changed
email-changed-heading = Your e-mail address was changed
email-changed-text = The e-mail address of your purchases from { $seller } is now { $email }. Receipts and sign-in codes go there from now on.
email-changed-contact-at = If you did not make this change, contact { $seller } at { $support } right away.
email-changed-contact = If you did not make this change, contact { $seller } right away.

## Credit notes

credit-note-subject = Credit note { $number } for invoice { $invoice }
credit-note-heading = Credit note { $number }
credit-note-text = We have issued credit note { $number } for invoice { $invoice } ({ $product }) on { $date }: { $amount } is refunded.
credit-note-attached = The credit note is attached to this e-mail ({ $file }).
refunded-excluding-tax = Refunded, excluding tax
total-refunded = Total refunded
