# Il checkout ospitato, la sua pagina di conferma e il suo script (vedi locales/en/checkout.ftl).

## Cornice della pagina

checkout-title = Pagamento
payments-by = Pagamenti con Tollgate

## Periodi

per-day = { $count ->
    [one] giorno
   *[other] { $count } giorni
}
per-week = { $count ->
    [one] settimana
   *[other] { $count } settimane
}
per-month = { $count ->
    [one] mese
   *[other] { $count } mesi
}
per-year = { $count ->
    [one] anno
   *[other] { $count } anni
}
length-day = { $count ->
    [one] 1 giorno
   *[other] { $count } giorni
}
length-week = { $count ->
    [one] 1 settimana
   *[other] { $count } settimane
}
length-month = { $count ->
    [one] 1 mese
   *[other] { $count } mesi
}
length-year = { $count ->
    [one] 1 anno
   *[other] { $count } anni
}

## La pagina di pagamento

close = Chiudi
back = ← Indietro
price-per-seat = Prezzo per postazione
seat-tiers-graduated = Le postazioni di ogni fascia sono addebitate alla tariffa di quella fascia.
included = Incluso
order-summary = Riepilogo dell'ordine
seats = Postazioni
price = Prezzo
discount = Sconto
subtotal = Subtotale
total = Totale
tax = Imposte
tax-includes = Include { $label }
tax-reverse-charge = { $name } inversione contabile
tax-note-reverse-charge = Inversione contabile: non viene addebitata l'IVA; la dichiari nella tua dichiarazione.
tax-note-refuted = Non è stato possibile confermare la registrazione di questa partita IVA: l'IVA viene addebitata.
trial-then = Gratis per { $length }, poi
trial-first-charge = : il primo addebito avviene il { $date }.
trial-free = Gratis per { $length }.
trial-nothing-today = Oggi non viene addebitato nulla.
payment = Pagamento
choose-product = Scegli un prodotto
amount-in = Importo ({ $currency })
update = Aggiorna
discount-code = Codice sconto
apply = Applica
contact = Contatto
email = E-mail
cardholder-name = Nome del titolare della carta
name = Nome
billing-address = Indirizzo di fatturazione
country = Paese
choose = Scegli…
state = Stato
province = Provincia o territorio
address = Indirizzo
address-line2 = Indirizzo (riga 2)
postal-code = CAP
city = Città
buying-as-business = Acquisto come azienda
business-name = Ragione sociale
tax-id = Codice fiscale (partita IVA)
additional-information = Informazioni aggiuntive
test-card-token = Token della carta di prova
test-card-help = Modalità di prova: nessuna carta reale viene addebitata. Ogni token è approvato tranne quelli che iniziano con tok_decline (per esempio tok_decline_insufficient_funds).
payment-method = Metodo di pagamento
price-free = Gratis
price-pay-what-you-want = Paga quanto vuoi
seat-rate = { $amount } per postazione
seat-rate-from = Da { $amount } per postazione
metered-rate = { $amount } per unità
metered-note = L’utilizzo viene fatturato alla fine di ogni periodo.
seat-range = { $min }–{ $max } postazioni
seat-range-open = { $min }+ postazioni
seat-count = { $count ->
    [one] 1 postazione
   *[other] { $count } postazioni
}
seats-exactly = { $count ->
    [one] 1 postazione.
   *[other] { $count } postazioni.
}
seats-between = Da { $min } a { $max } postazioni.
seats-at-least = Almeno { $min } postazioni.
amount-between = Tra { $min } e { $max }.
amount-at-least = Almeno { $min }.
amount-at-most = Al massimo { $max }.
button-free = Ottieni gratis
button-trial = Inizia la prova gratuita
button-subscribe = Abbonati a { $amount }
button-pay = Paga { $amount }

## La pagina di conferma

title-succeeded = Grazie
title-processing = Elaborazione del pagamento
title-failed = Pagamento non riuscito
processing-heading = Elaborazione del pagamento…
processing-text = Stiamo confermando il pagamento di { $product }. Questa pagina si aggiorna da sola.
failed-heading = Pagamento non riuscito
failed-text = Il pagamento di { $product } non è andato a buon fine e non ti è stato addebitato nulla. Torna al sito del venditore per riprovare.
thanks-heading = Grazie per il tuo ordine!
purchase-complete = Il tuo acquisto di { $product } è completato.
bought-as = Acquistato come { $email }.
total-paid = Totale pagato
your-license-keys = { $count ->
    [one] La tua chiave di licenza
   *[other] Le tue chiavi di licenza
}
copy = Copia
copy-license-key = Copia la chiave di licenza { $number }
key-status-revoked = revocata
key-status-disabled = disattivata
valid-until = valida fino al { $date }
keys-on-their-way = { $count ->
    [one] Una ricevuta con la tua chiave di licenza è in arrivo a { $email }.
   *[other] Una ricevuta con le tue chiavi di licenza è in arrivo a { $email }.
}
keys-lost = L'hai persa?
keys-send-again = Ricevi di nuovo le tue chiavi
continue-to = Continua su { $seller }

## Pagine di errore

checkout-not-found = Pagamento non trovato
checkout-not-found-text = Questo link di pagamento è sconosciuto o scaduto. Torna al sito del venditore per ricominciare.
checkout-closed = Pagamento chiuso
checkout-closed-text = Il pagamento non è riuscito e questo checkout è chiuso. Torna al sito del venditore per ricominciare.

## Lo script della pagina

js-copied = Copiato
js-check-form = Controlla il modulo.
js-invalid-value = Valore non valido.
js-seats-whole = Inserisci un numero intero di postazioni.
js-seats-failed = Non è stato possibile cambiare le postazioni; riprova.
js-network-error = Errore di rete; riprova.
js-product-failed = Non è stato possibile cambiare il prodotto; riprova.
js-code-applied = Codice { $code } applicato.
js-code-failed = Non è stato possibile applicare il codice; riprova.

## The payment part of the page script

js-form-not-loaded = Impossibile caricare il modulo di pagamento. Controlla la connessione e ricarica la pagina.
js-form-missing = Il modulo di pagamento non è caricato.
js-check-payment = Controlla i dati di pagamento.
js-method-unusable = Questo metodo di pagamento non può essere usato.
js-processing = Elaborazione…
js-waiting-bank = In attesa della tua banca…
js-not-authenticated = Impossibile autenticare il pagamento.
js-not-charged = Non ti è stato addebitato nulla.
js-declined = Il pagamento è stato rifiutato.
js-something-wrong = Qualcosa è andato storto.
js-try-again = Riprova.
js-not-sent = Errore di rete: il pagamento non è stato inviato. Riprova.
js-redirecting = Reindirizzamento…
js-trial-used = Hai già usato una prova per questo prodotto: abbonandoti ora ti viene addebitato.
js-payment-not-completed = Il pagamento non è stato completato e non ti è stato addebitato nulla. Riprova o scegli un altro metodo di pagamento.
