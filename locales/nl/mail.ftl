# E-mails aan kopers (zie locales/en/mail.ftl).

## Kader van elk bericht

mail-sent-by = Verzonden door { $seller }
mail-questions = vragen? beantwoord deze e-mail of schrijf naar
order-ref = Bestelling { $order }

## Licentiesleutels

key-limit-activations = { $count ->
    [one] tot 1 activering
   *[other] tot { $count } activeringen
}
key-limit-uses = { $count ->
    [one] 1 gebruik
   *[other] { $count } keer gebruiken
}
key-no-expiry = verloopt niet

## Bonnen

receipt-subject = Uw bon van { $seller }: { $product }
receipt-subject-renewal = Uw abonnement op { $product } is verlengd: { $amount }
receipt-subject-seller = Nieuwe bestelling: { $buyer } kocht { $product } ({ $amount })
receipt-heading = Bedankt voor uw bestelling
receipt-heading-renewal = Uw abonnement is verlengd
receipt-heading-seller = U hebt een nieuwe bestelling
receipt-text = Uw aankoop van { $product } bij { $seller } op { $date } is voltooid.
receipt-text-renewal = Uw abonnement op { $product } is op { $date } verlengd en uw kaart is belast.
receipt-text-seller = { $buyer } kocht { $product } op { $date }.
invoice-attached = Factuur { $number } is bij deze e-mail gevoegd ({ $file }).
view-purchase = Uw aankoop bekijken
downloads-ready = Je bestanden staan klaar om te downloaden in het klantportaal.
download-files = Download je bestanden
view-order = De bestelling bekijken
your-purchase = Uw aankoop
the-order = De bestelling
lost-this-email = Deze e-mail kwijt?
your-tax-number = Uw fiscaal nummer: { $number }

## Berichten

open-portal = Het klantenportaal openen
sign-in-subject = Toegang tot uw aankopen bij { $seller }
sign-in-heading = Uw inlogcode
sign-in-text = Met de volgende code krijgt u toegang tot uw aankopen in het klantenportaal van { $seller }.
code-expires = Deze code verloopt over { $minutes } minuten en werkt één keer.
sign-in-ignore = Hebt u hier niet om gevraagd, dan kunt u deze e-mail negeren: zonder de code kan niemand inloggen.
renewal-failed-subject = Betaling mislukt voor uw abonnement op { $product }
renewal-failed-heading = De betaling van uw verlenging is mislukt
renewal-failed-text = We konden uw kaart niet belasten voor de verlenging van { $product }.
renewal-failed-text-amount = We konden uw kaart niet belasten voor de verlenging van { $product } ({ $amount }).
retry-keys-until = We proberen het opnieuw op { $retry }. Uw licentiesleutels werken tot { $until }; zodra de betaling lukt, gelden ze voor de nieuwe periode.
retry-keys = We proberen het opnieuw op { $retry }. Uw licentiesleutels blijven intussen werken.
gives-up = Mislukt de betaling nog steeds op { $date }, dan wordt het abonnement opgezegd en worden de licentiesleutels ingetrokken.
recovery-lead = Betaal nu, of werk uw kaart bij, in het klantenportaal:
recovery-label = Nu betalen of kaart bijwerken
recovery-until = De link werkt één keer, tot { $date }. De toegang stopt op { $date }.
questions-reply = Vragen? Beantwoord deze e-mail.
card-advice = Zorg dat uw kaart kan worden belast, of neem contact met ons op door deze e-mail te beantwoorden.
trial-ending-subject = Uw proefperiode van { $product } eindigt binnenkort
trial-ending-heading = Uw proefperiode eindigt binnenkort
trial-ending-text = Uw gratis proefperiode van { $product } eindigt op { $date }. Dan begint uw abonnement en wordt uw kaart belast.
trial-ending-text-amount = Uw gratis proefperiode van { $product } eindigt op { $date }. Dan begint uw abonnement en wordt uw kaart belast met { $amount }.
trial-ending-keep = Niets te doen als u het wilt houden: uw licentiesleutels blijven werken. Wilt u stoppen vóór de eerste afschrijving, zeg het abonnement dan vóór die datum op in het klantenportaal.
plan-changed-subject = Uw abonnement is gewijzigd naar { $product }
plan-changed-heading = Uw abonnement is gewijzigd
plan-changed-text = Uw abonnement is gewijzigd naar { $product }.
plan-renews-at = Het wordt verlengd voor { $amount } per periode; de volgende verlenging is op { $date }, aangepast aan de wijziging.
plan-renews-on = Het wordt verlengd op { $date }.
plan-dropped-keys = Licentiesleutels van uw vorige abonnement die het nieuwe niet bevat, werken niet meer.
plan-keys-below = Uw licentiesleutels voor het nieuwe abonnement staan hieronder.
canceled-subject = Uw abonnement op { $product } is opgezegd
canceled-heading = Uw abonnement is opgezegd
canceled-text = Uw abonnement op { $product } is opgezegd.
canceled-until = Het blijft actief, en uw licentiesleutels blijven werken, tot { $date }. U wordt niet meer belast.
not-charged-again = U wordt niet meer belast.
ended-subject = Uw abonnement op { $product } is beëindigd
ended-heading = Uw abonnement is beëindigd
ended-text = Uw abonnement op { $product } is beëindigd.
ended-keys = De licentiesleutels hieronder werken niet meer.
ended-again = U wordt niet meer belast. Wilt u opnieuw een abonnement, ga dan naar de website van de verkoper.
revoked-keys = Ingetrokken licentiesleutels
license-key = Licentiesleutel
key-revoked-subject = Een licentiesleutel is ingetrokken
key-disabled-subject = Een licentiesleutel is uitgeschakeld
key-revoked-text = De verkoper heeft de licentiesleutel hieronder ingetrokken: hij wordt niet meer gevalideerd.
key-disabled-text = De verkoper heeft de licentiesleutel hieronder uitgeschakeld: hij wordt niet meer gevalideerd.
key-mistake = Denkt u dat dit een vergissing is, beantwoord dan deze e-mail.
refund-subject = Uw terugbetaling voor { $product }
refund-heading = Uw terugbetaling is onderweg
refund-text = We hebben { $amount } van uw aankoop van { $product } terugbetaald.
refund-text-full = We hebben { $amount } van uw aankoop van { $product } terugbetaald (de hele aankoop).
refund-timing = Het bedrag staat binnen 5 tot 10 werkdagen op uw kaart, afhankelijk van uw bank.
refund-keys = De licentiesleutels van deze aankoop werken niet meer.
resent-heading = Uw licentiesleutels
resent-text = U hebt opnieuw om uw licentiesleutels gevraagd. Hier zijn ze.
email-change-subject = Bevestig uw nieuwe e-mailadres
email-change-heading = Bevestig uw nieuwe e-mailadres
email-change-text = Iemand wil { $email } gebruiken voor aankopen bij { $seller }. Voer deze code in het klantenportaal in om het te bevestigen:
email-change-ignore = Hebt u hier niet om gevraagd, dan kunt u deze e-mail negeren: zonder de code verandert er niets.
email-changed-subject = Uw e-mailadres is gewijzigd
email-changed-heading = Uw e-mailadres is gewijzigd
email-changed-text = Het e-mailadres van uw aankopen bij { $seller } is nu { $email }. Bonnen en inlogcodes gaan voortaan daarheen.
email-changed-contact-at = Hebt u deze wijziging niet gedaan, neem dan meteen contact op met { $seller } via { $support }.
email-changed-contact = Hebt u deze wijziging niet gedaan, neem dan meteen contact op met { $seller }.

## Creditnota's

credit-note-subject = Creditnota { $number } bij factuur { $invoice }
credit-note-heading = Creditnota { $number }
credit-note-text = We hebben op { $date } creditnota { $number } uitgegeven bij factuur { $invoice } ({ $product }): { $amount } wordt terugbetaald.
credit-note-attached = De creditnota is bij deze e-mail gevoegd ({ $file }).
refunded-excluding-tax = Terugbetaald, exclusief belasting
total-refunded = Totaal terugbetaald
