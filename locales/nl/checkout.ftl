# De gehoste checkout, de bevestigingspagina en het script (zie locales/en/checkout.ftl).

## Paginakader

checkout-title = Afrekenen
payments-by = Betalingen via Tollgate

## Perioden

per-day = { $count ->
    [one] dag
   *[other] { $count } dagen
}
per-week = { $count ->
    [one] week
   *[other] { $count } weken
}
per-month = { $count ->
    [one] maand
   *[other] { $count } maanden
}
per-year = { $count ->
    [one] jaar
   *[other] { $count } jaar
}
length-day = { $count ->
    [one] 1 dag
   *[other] { $count } dagen
}
length-week = { $count ->
    [one] 1 week
   *[other] { $count } weken
}
length-month = { $count ->
    [one] 1 maand
   *[other] { $count } maanden
}
length-year = { $count ->
    [one] 1 jaar
   *[other] { $count } jaar
}

## De betaalpagina

close = Sluiten
back = ← Terug
price-per-seat = Prijs per plaats
seat-tiers-graduated = De plaatsen van elke staffel worden tegen het tarief van die staffel berekend.
included = Inbegrepen
order-summary = Besteloverzicht
seats = Plaatsen
price = Prijs
discount = Korting
subtotal = Subtotaal
total = Totaal
tax = Belasting
tax-includes = Inclusief { $label }
tax-reverse-charge = { $name } verlegd
tax-note-reverse-charge = Btw verlegd: er wordt geen btw in rekening gebracht; u geeft deze zelf aan in uw aangifte.
tax-note-refuted = Dit btw-nummer kon niet als geregistreerd worden bevestigd: er wordt btw in rekening gebracht.
trial-then = { $length } gratis, daarna
trial-first-charge = : de eerste afschrijving is op { $date }.
trial-free = { $length } gratis.
trial-nothing-today = Vandaag wordt er niets afgeschreven.
payment = Betaling
choose-product = Kies een product
amount-in = Bedrag ({ $currency })
update = Bijwerken
discount-code = Kortingscode
apply = Toepassen
contact = Contact
email = E-mail
cardholder-name = Naam van de kaarthouder
name = Naam
billing-address = Factuuradres
country = Land
choose = Kiezen…
state = Staat
province = Provincie of territorium
address = Adres
address-line2 = Adresregel 2
postal-code = Postcode
city = Plaats
buying-as-business = Ik koop als bedrijf
business-name = Bedrijfsnaam
tax-id = Fiscaal nummer (btw-nummer)
additional-information = Aanvullende informatie
test-card-token = Token van de testkaart
test-card-help = Testmodus: er wordt geen echte kaart belast. Elke token wordt goedgekeurd, behalve tokens die met tok_decline beginnen (bijvoorbeeld tok_decline_insufficient_funds).
payment-method = Betaalmethode
price-free = Gratis
price-pay-what-you-want = Betaal wat u wilt
seat-rate = { $amount } per plaats
seat-rate-from = Vanaf { $amount } per plaats
metered-rate = { $amount } per eenheid
metered-note = Gebruik wordt aan het einde van elke periode gefactureerd.
seat-range = { $min }–{ $max } plaatsen
seat-range-open = { $min }+ plaatsen
seat-count = { $count ->
    [one] 1 plaats
   *[other] { $count } plaatsen
}
seats-exactly = { $count ->
    [one] 1 plaats.
   *[other] { $count } plaatsen.
}
seats-between = Van { $min } tot { $max } plaatsen.
seats-at-least = Minstens { $min } plaatsen.
amount-between = Tussen { $min } en { $max }.
amount-at-least = Minstens { $min }.
amount-at-most = Hoogstens { $max }.
button-free = Gratis ontvangen
button-trial = Gratis proefperiode starten
button-subscribe = Abonneren voor { $amount }
button-pay = { $amount } betalen

## De bevestigingspagina

title-succeeded = Bedankt
title-processing = Uw betaling wordt verwerkt
title-failed = Betaling mislukt
processing-heading = Uw betaling wordt verwerkt…
processing-text = We bevestigen de betaling voor { $product }. Deze pagina ververst vanzelf.
failed-heading = Betaling mislukt
failed-text = De betaling voor { $product } is niet gelukt en er is niets afgeschreven. Ga terug naar de website van de verkoper om het opnieuw te proberen.
thanks-heading = Bedankt voor uw bestelling!
purchase-complete = Uw aankoop van { $product } is voltooid.
bought-as = Gekocht als { $email }.
total-paid = Totaal betaald
your-license-keys = { $count ->
    [one] Uw licentiesleutel
   *[other] Uw licentiesleutels
}
copy = Kopiëren
copy-license-key = Licentiesleutel { $number } kopiëren
key-status-revoked = ingetrokken
key-status-disabled = uitgeschakeld
valid-until = geldig tot { $date }
keys-on-their-way = { $count ->
    [one] Een bon met uw licentiesleutel is onderweg naar { $email }.
   *[other] Een bon met uw licentiesleutels is onderweg naar { $email }.
}
keys-lost = Kwijt?
keys-send-again = Uw sleutels opnieuw ontvangen
continue-to = Verder naar { $seller }

## Foutpagina's

checkout-not-found = Betaling niet gevonden
checkout-not-found-text = Deze betaallink is onbekend of verlopen. Ga terug naar de website van de verkoper om opnieuw te beginnen.
checkout-closed = Betaling gesloten
checkout-closed-text = De betaling is mislukt en deze checkout is gesloten. Ga terug naar de website van de verkoper om opnieuw te beginnen.

## Het script van de pagina

js-copied = Gekopieerd
js-check-form = Controleer het formulier.
js-invalid-value = Ongeldige waarde.
js-seats-whole = Voer een geheel aantal plaatsen in.
js-seats-failed = De plaatsen konden niet worden gewijzigd; probeer het opnieuw.
js-network-error = Netwerkfout; probeer het opnieuw.
js-product-failed = Het product kon niet worden gewijzigd; probeer het opnieuw.
js-code-applied = Code { $code } toegepast.
js-code-failed = De code kon niet worden toegepast; probeer het opnieuw.

## The payment part of the page script

js-form-not-loaded = Het betaalformulier kon niet worden geladen. Controleer je verbinding en laad de pagina opnieuw.
js-form-missing = Het betaalformulier is niet geladen.
js-check-payment = Controleer je betaalgegevens.
js-method-unusable = Deze betaalmethode kan niet worden gebruikt.
js-processing = Bezig…
js-waiting-bank = Wachten op je bank…
js-not-authenticated = Je betaling kon niet worden geverifieerd.
js-not-charged = Er is niets afgeschreven.
js-declined = Je betaling is geweigerd.
js-something-wrong = Er is iets misgegaan.
js-try-again = Probeer het opnieuw.
js-not-sent = Netwerkfout: de betaling is niet verzonden. Probeer het opnieuw.
js-redirecting = Doorsturen…
js-trial-used = Je hebt voor dit product al een proefperiode gebruikt: bij abonneren wordt nu afgeschreven.
js-payment-not-completed = De betaling is niet voltooid en er is niets afgeschreven. Probeer het opnieuw of kies een andere betaalmethode.
