# Der gehostete Checkout, seine Bestätigungsseite und sein Skript (siehe locales/en/checkout.ftl).

## Seitenrahmen

checkout-title = Kasse
payments-by = Zahlungen über Tollgate

## Zeiträume

per-day = { $count ->
    [one] Tag
   *[other] { $count } Tage
}
per-week = { $count ->
    [one] Woche
   *[other] { $count } Wochen
}
per-month = { $count ->
    [one] Monat
   *[other] { $count } Monate
}
per-year = { $count ->
    [one] Jahr
   *[other] { $count } Jahre
}
length-day = { $count ->
    [one] 1 Tag
   *[other] { $count } Tage
}
length-week = { $count ->
    [one] 1 Woche
   *[other] { $count } Wochen
}
length-month = { $count ->
    [one] 1 Monat
   *[other] { $count } Monate
}
length-year = { $count ->
    [one] 1 Jahr
   *[other] { $count } Jahre
}

## Die Checkout-Seite

close = Schließen
back = ← Zurück
price-per-seat = Preis pro Platz
seat-tiers-graduated = Die Plätze jeder Stufe werden zum Preis dieser Stufe berechnet.
included = Enthalten
order-summary = Bestellübersicht
seats = Plätze
price = Preis
discount = Rabatt
subtotal = Zwischensumme
total = Gesamt
tax = Steuer
tax-includes = Inkl. { $label }
tax-reverse-charge = { $name } (Reverse Charge)
tax-note-reverse-charge = Reverse Charge: Es wird keine USt. berechnet; Sie führen sie selbst in Ihrer Erklärung ab.
tax-note-refuted = Diese USt-IdNr. konnte nicht als registriert bestätigt werden: Es wird USt. berechnet.
trial-then = { $length } kostenlos, danach
trial-first-charge = : Die erste Abbuchung erfolgt am { $date }.
trial-free = { $length } kostenlos.
trial-nothing-today = Heute wird nichts berechnet.
payment = Zahlung
choose-product = Produkt auswählen
amount-in = Betrag ({ $currency })
update = Aktualisieren
discount-code = Rabattcode
apply = Einlösen
contact = Kontakt
email = E-Mail
cardholder-name = Name des Karteninhabers
name = Name
billing-address = Rechnungsadresse
country = Land
choose = Auswählen…
state = Bundesstaat
province = Provinz oder Territorium
address = Adresse
address-line2 = Adresszeile 2
postal-code = Postleitzahl
city = Ort
buying-as-business = Ich kaufe als Unternehmen
business-name = Firmenname
tax-id = Steuernummer (USt-IdNr.)
additional-information = Weitere Angaben
test-card-token = Token der Testkarte
test-card-help = Testmodus: Es wird keine echte Karte belastet. Jedes Token wird angenommen, außer solchen, die mit tok_decline beginnen (zum Beispiel tok_decline_insufficient_funds).
payment-method = Zahlungsmethode
price-free = Kostenlos
price-pay-what-you-want = Zahlen Sie, was Sie möchten
seat-rate = { $amount } pro Platz
seat-rate-from = Ab { $amount } pro Platz
metered-rate = { $amount } pro Einheit
metered-note = Die Nutzung wird am Ende jedes Zeitraums abgerechnet.
seat-range = { $min }–{ $max } Plätze
seat-range-open = { $min }+ Plätze
seat-count = { $count ->
    [one] 1 Platz
   *[other] { $count } Plätze
}
seats-exactly = { $count ->
    [one] 1 Platz.
   *[other] { $count } Plätze.
}
seats-between = Von { $min } bis { $max } Plätze.
seats-at-least = Mindestens { $min } Plätze.
amount-between = Zwischen { $min } und { $max }.
amount-at-least = Mindestens { $min }.
amount-at-most = Höchstens { $max }.
button-free = Kostenlos erhalten
button-trial = Kostenlos testen
button-subscribe = { $amount } abonnieren
button-pay = { $amount } bezahlen

## Die Bestätigungsseite

title-succeeded = Vielen Dank
title-processing = Ihre Zahlung wird verarbeitet
title-failed = Zahlung fehlgeschlagen
processing-heading = Ihre Zahlung wird verarbeitet…
processing-text = Wir bestätigen die Zahlung für { $product }. Diese Seite aktualisiert sich von selbst.
failed-heading = Zahlung fehlgeschlagen
failed-text = Die Zahlung für { $product } ist nicht durchgegangen, und Ihnen wurde nichts berechnet. Kehren Sie zur Website des Verkäufers zurück, um es erneut zu versuchen.
thanks-heading = Vielen Dank für Ihre Bestellung!
purchase-complete = Ihr Kauf von { $product } ist abgeschlossen.
bought-as = Gekauft als { $email }.
total-paid = Bezahlt
your-license-keys = { $count ->
    [one] Ihr Lizenzschlüssel
   *[other] Ihre Lizenzschlüssel
}
copy = Kopieren
copy-license-key = Lizenzschlüssel { $number } kopieren
key-status-revoked = widerrufen
key-status-disabled = deaktiviert
valid-until = gültig bis { $date }
keys-on-their-way = { $count ->
    [one] Eine Quittung mit Ihrem Lizenzschlüssel ist unterwegs an { $email }.
   *[other] Eine Quittung mit Ihren Lizenzschlüsseln ist unterwegs an { $email }.
}
keys-lost = Verloren?
keys-send-again = Schlüssel erneut zusenden lassen
continue-to = Weiter zu { $seller }

## Fehlerseiten

checkout-not-found = Bezahlvorgang nicht gefunden
checkout-not-found-text = Dieser Bezahllink ist unbekannt oder abgelaufen. Kehren Sie zur Website des Verkäufers zurück, um neu zu beginnen.
checkout-closed = Bezahlvorgang geschlossen
checkout-closed-text = Die Zahlung dieses Bezahlvorgangs ist fehlgeschlagen, und er ist geschlossen. Kehren Sie zur Website des Verkäufers zurück, um neu zu beginnen.

## Das Skript der Seite

js-copied = Kopiert
js-check-form = Bitte prüfen Sie das Formular.
js-invalid-value = Ungültiger Wert.
js-seats-whole = Geben Sie eine ganze Zahl von Plätzen ein.
js-seats-failed = Die Plätze konnten nicht geändert werden; bitte erneut versuchen.
js-network-error = Netzwerkfehler; bitte erneut versuchen.
js-product-failed = Das Produkt konnte nicht gewechselt werden; bitte erneut versuchen.
js-code-applied = Code { $code } eingelöst.
js-code-failed = Der Code konnte nicht eingelöst werden; bitte erneut versuchen.

## The payment part of the page script

js-form-not-loaded = Das Zahlungsformular konnte nicht geladen werden. Prüfen Sie Ihre Verbindung und laden Sie die Seite neu.
js-form-missing = Das Zahlungsformular ist nicht geladen.
js-check-payment = Bitte prüfen Sie Ihre Zahlungsangaben.
js-method-unusable = Diese Zahlungsmethode kann nicht verwendet werden.
js-processing = Wird verarbeitet…
js-waiting-bank = Warten auf Ihre Bank…
js-not-authenticated = Ihre Zahlung konnte nicht bestätigt werden.
js-not-charged = Ihnen wurde nichts berechnet.
js-declined = Ihre Zahlung wurde abgelehnt.
js-something-wrong = Etwas ist schiefgelaufen.
js-try-again = Bitte versuchen Sie es erneut.
js-not-sent = Netzwerkfehler: Die Zahlung wurde nicht gesendet. Bitte versuchen Sie es erneut.
js-redirecting = Weiterleitung…
js-trial-used = Sie haben für dieses Produkt bereits einen Testzeitraum genutzt: Beim Abonnieren wird jetzt belastet.
js-payment-not-completed = Die Zahlung wurde nicht abgeschlossen, und Ihnen wurde nichts berechnet. Versuchen Sie es erneut oder wählen Sie eine andere Zahlungsmethode.
