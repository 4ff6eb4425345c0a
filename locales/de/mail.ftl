# E-Mails an Käufer (siehe locales/en/mail.ftl).

## Rahmen jeder Nachricht

mail-sent-by = Gesendet von { $seller }
mail-questions = Fragen? Antworten Sie auf diese E-Mail oder schreiben Sie an
order-ref = Bestellung { $order }

## Lizenzschlüssel

key-limit-activations = { $count ->
    [one] bis zu 1 Aktivierung
   *[other] bis zu { $count } Aktivierungen
}
key-limit-uses = { $count ->
    [one] 1 Nutzung
   *[other] { $count } Nutzungen
}
key-no-expiry = läuft nicht ab

## Quittungen

receipt-subject = Ihre Quittung von { $seller }: { $product }
receipt-subject-renewal = Ihr Abonnement { $product } wurde verlängert: { $amount }
receipt-subject-seller = Neue Bestellung: { $buyer } hat { $product } gekauft ({ $amount })
receipt-heading = Vielen Dank für Ihre Bestellung
receipt-heading-renewal = Ihr Abonnement wurde verlängert
receipt-heading-seller = Sie haben eine neue Bestellung
receipt-text = Ihr Kauf von { $product } bei { $seller } am { $date } ist abgeschlossen.
receipt-text-renewal = Ihr Abonnement { $product } wurde am { $date } verlängert, und Ihre Karte wurde belastet.
receipt-text-seller = { $buyer } hat am { $date } { $product } gekauft.
invoice-attached = Die Rechnung { $number } ist dieser E-Mail beigefügt ({ $file }).
view-purchase = Ihren Kauf ansehen
downloads-ready = Ihre Dateien stehen im Kundenportal zum Download bereit.
download-files = Dateien herunterladen
view-order = Bestellung ansehen
your-purchase = Ihr Kauf
the-order = Die Bestellung
lost-this-email = Diese E-Mail verloren?
your-tax-number = Ihre Steuernummer: { $number }

## Mitteilungen

open-portal = Kundenportal öffnen
sign-in-subject = Zugang zu Ihren Käufen bei { $seller }
sign-in-heading = Ihr Anmeldecode
sign-in-text = Mit dem folgenden Code greifen Sie im Kundenportal von { $seller } auf Ihre Käufe zu.
code-expires = Dieser Code läuft in { $minutes } Minuten ab und gilt einmal.
sign-in-ignore = Wenn Sie ihn nicht angefordert haben, können Sie diese E-Mail ignorieren: Ohne den Code kann sich niemand anmelden.
renewal-failed-subject = Zahlung für Ihr Abonnement { $product } fehlgeschlagen
renewal-failed-heading = Die Zahlung Ihrer Verlängerung ist fehlgeschlagen
renewal-failed-text = Wir konnten Ihre Karte für die Verlängerung von { $product } nicht belasten.
renewal-failed-text-amount = Wir konnten Ihre Karte für die Verlängerung von { $product } ({ $amount }) nicht belasten.
retry-keys-until = Wir versuchen es am { $retry } erneut. Ihre Lizenzschlüssel funktionieren bis zum { $until }; sobald die Zahlung durchgeht, gelten sie für den neuen Zeitraum.
retry-keys = Wir versuchen es am { $retry } erneut. Ihre Lizenzschlüssel funktionieren so lange weiter.
gives-up = Schlägt die Zahlung bis zum { $date } weiter fehl, wird das Abonnement gekündigt und seine Lizenzschlüssel werden widerrufen.
recovery-lead = Bezahlen Sie jetzt oder aktualisieren Sie Ihre Karte im Kundenportal:
recovery-label = Jetzt bezahlen oder Karte aktualisieren
recovery-until = Der Link funktioniert einmal, bis zum { $date }. Der Zugang endet am { $date }.
questions-reply = Fragen? Antworten Sie auf diese E-Mail.
card-advice = Stellen Sie sicher, dass Ihre Karte belastet werden kann, oder kontaktieren Sie uns, indem Sie auf diese E-Mail antworten.
trial-ending-subject = Ihr Test von { $product } endet bald
trial-ending-heading = Ihr Test endet bald
trial-ending-text = Ihr kostenloser Test von { $product } endet am { $date }. Dann beginnt Ihr Abonnement, und Ihre Karte wird belastet.
trial-ending-text-amount = Ihr kostenloser Test von { $product } endet am { $date }. Dann beginnt Ihr Abonnement, und Ihre Karte wird mit { $amount } belastet.
trial-ending-keep = Wenn Sie es behalten möchten, müssen Sie nichts tun: Ihre Lizenzschlüssel funktionieren weiter. Um vor der ersten Abbuchung aufzuhören, kündigen Sie das Abonnement vor diesem Datum im Kundenportal.
plan-changed-subject = Ihr Abonnement wurde auf { $product } umgestellt
plan-changed-heading = Ihr Abonnement wurde geändert
plan-changed-text = Ihr Abonnement wurde auf { $product } umgestellt.
plan-renews-at = Es verlängert sich zu { $amount } pro Zeitraum; die nächste Verlängerung ist am { $date }, angepasst an die Änderung.
plan-renews-on = Es verlängert sich am { $date }.
plan-dropped-keys = Lizenzschlüssel Ihres bisherigen Plans, die der neue nicht enthält, funktionieren nicht mehr.
plan-keys-below = Ihre Lizenzschlüssel für den neuen Plan finden Sie unten.
canceled-subject = Ihr Abonnement { $product } wurde gekündigt
canceled-heading = Ihr Abonnement wurde gekündigt
canceled-text = Ihr Abonnement { $product } wurde gekündigt.
canceled-until = Es bleibt aktiv, und Ihre Lizenzschlüssel funktionieren weiter, bis zum { $date }. Sie werden nicht erneut belastet.
not-charged-again = Sie werden nicht erneut belastet.
ended-subject = Ihr Abonnement { $product } ist beendet
ended-heading = Ihr Abonnement ist beendet
ended-text = Ihr Abonnement { $product } ist beendet.
ended-keys = Die Lizenzschlüssel unten funktionieren nicht mehr.
ended-again = Sie werden nicht erneut belastet. Um erneut zu abonnieren, besuchen Sie die Website des Verkäufers.
revoked-keys = Widerrufene Lizenzschlüssel
license-key = Lizenzschlüssel
key-revoked-subject = Ein Lizenzschlüssel wurde widerrufen
key-disabled-subject = Ein Lizenzschlüssel wurde deaktiviert
key-revoked-text = Der Verkäufer hat den Lizenzschlüssel unten widerrufen: Er wird nicht mehr bestätigt.
key-disabled-text = Der Verkäufer hat den Lizenzschlüssel unten deaktiviert: Er wird nicht mehr bestätigt.
key-mistake = Wenn Sie das für einen Fehler halten, antworten Sie auf diese E-Mail.
refund-subject = Ihre Erstattung für { $product }
refund-heading = Ihre Erstattung ist unterwegs
refund-text = Wir haben { $amount } Ihres Kaufs von { $product } erstattet.
refund-text-full = Wir haben { $amount } Ihres Kaufs von { $product } erstattet (den gesamten Kauf).
refund-timing = Der Betrag erreicht Ihre Karte je nach Bank innerhalb von 5 bis 10 Werktagen.
refund-keys = Die Lizenzschlüssel dieses Kaufs funktionieren nicht mehr.
resent-heading = Ihre Lizenzschlüssel
resent-text = Sie haben Ihre Lizenzschlüssel erneut angefordert. Hier sind sie.
email-change-subject = Bestätigen Sie Ihre neue E-Mail-Adresse
email-change-heading = Bestätigen Sie Ihre neue E-Mail-Adresse
email-change-text = Jemand möchte { $email } für seine Käufe bei { $seller } verwenden. Geben Sie diesen Code im Kundenportal ein, um es zu bestätigen:
email-change-ignore = Wenn Sie das nicht angefordert haben, können Sie diese E-Mail ignorieren: Ohne den Code ändert sich nichts.
email-changed-subject = Ihre E-Mail-Adresse wurde geändert
email-changed-heading = Ihre E-Mail-Adresse wurde geändert
email-changed-text = Die E-Mail-Adresse Ihrer Käufe bei { $seller } ist jetzt { $email }. Quittungen und Anmeldecodes gehen ab sofort dorthin.
email-changed-contact-at = Wenn Sie diese Änderung nicht vorgenommen haben, kontaktieren Sie { $seller } sofort unter { $support }.
email-changed-contact = Wenn Sie diese Änderung nicht vorgenommen haben, kontaktieren Sie { $seller } sofort.

## Gutschriften

credit-note-subject = Gutschrift { $number } zur Rechnung { $invoice }
credit-note-heading = Gutschrift { $number }
credit-note-text = Wir haben am { $date } die Gutschrift { $number } zur Rechnung { $invoice } ({ $product }) ausgestellt: { $amount } werden erstattet.
credit-note-attached = Die Gutschrift ist dieser E-Mail beigefügt ({ $file }).
refunded-excluding-tax = Erstattet, ohne Steuer
total-refunded = Insgesamt erstattet
