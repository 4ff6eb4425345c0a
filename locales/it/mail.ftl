# E-mail agli acquirenti (vedi locales/en/mail.ftl).

## Cornice di ogni messaggio

mail-sent-by = Inviato da { $seller }
mail-questions = domande? rispondi a questa e-mail o scrivi a
order-ref = Ordine { $order }

## Chiavi di licenza

key-limit-activations = { $count ->
    [one] fino a 1 attivazione
   *[other] fino a { $count } attivazioni
}
key-limit-uses = { $count ->
    [one] 1 utilizzo
   *[other] { $count } utilizzi
}
key-no-expiry = non scade

## Ricevute

receipt-subject = La tua ricevuta da { $seller }: { $product }
receipt-subject-renewal = Il tuo abbonamento a { $product } è stato rinnovato: { $amount }
receipt-subject-seller = Nuovo ordine: { $buyer } ha acquistato { $product } ({ $amount })
receipt-heading = Grazie per il tuo ordine
receipt-heading-renewal = Il tuo abbonamento è stato rinnovato
receipt-heading-seller = Hai un nuovo ordine
receipt-text = Il tuo acquisto di { $product } da { $seller } del { $date } è completato.
receipt-text-renewal = Il tuo abbonamento a { $product } è stato rinnovato il { $date } e la tua carta è stata addebitata.
receipt-text-seller = { $buyer } ha acquistato { $product } il { $date }.
invoice-attached = La fattura { $number } è allegata a questa e-mail ({ $file }).
view-purchase = Visualizza il tuo acquisto
downloads-ready = I tuoi file sono pronti per il download nel portale clienti.
download-files = Scarica i tuoi file
view-order = Visualizza l'ordine
your-purchase = Il tuo acquisto
the-order = L'ordine
lost-this-email = Hai perso questa e-mail?
your-tax-number = Il tuo codice fiscale: { $number }

## Avvisi

open-portal = Apri il portale clienti
sign-in-subject = Accedi ai tuoi acquisti da { $seller }
sign-in-heading = Il tuo codice di accesso
sign-in-text = Puoi usare il codice seguente per accedere ai tuoi acquisti nel portale clienti di { $seller }.
code-expires = Questo codice scade tra { $minutes } minuti e vale una sola volta.
sign-in-ignore = Se non l'hai richiesto, puoi ignorare questa e-mail: nessuno può accedere senza il codice.
renewal-failed-subject = Pagamento non riuscito per il tuo abbonamento a { $product }
renewal-failed-heading = Il pagamento del rinnovo non è riuscito
renewal-failed-text = Non siamo riusciti ad addebitare la tua carta per il rinnovo di { $product }.
renewal-failed-text-amount = Non siamo riusciti ad addebitare la tua carta per il rinnovo di { $product } ({ $amount }).
retry-keys-until = Riproveremo il { $retry }. Le tue chiavi di licenza funzionano fino al { $until }; quando il pagamento andrà a buon fine, varranno per il nuovo periodo.
retry-keys = Riproveremo il { $retry }. Nel frattempo le tue chiavi di licenza continuano a funzionare.
gives-up = Se il pagamento non riesce ancora entro il { $date }, l'abbonamento sarà annullato e le sue chiavi di licenza revocate.
recovery-lead = Paga ora, o aggiorna la tua carta, nel portale clienti:
recovery-label = Paga ora o aggiorna la carta
recovery-until = Il link vale una sola volta, fino al { $date }. L'accesso termina il { $date }.
questions-reply = Domande? Rispondi a questa e-mail.
card-advice = Assicurati che la tua carta possa essere addebitata, o contattaci rispondendo a questa e-mail.
trial-ending-subject = La tua prova di { $product } sta per finire
trial-ending-heading = La tua prova sta per finire
trial-ending-text = La tua prova gratuita di { $product } finisce il { $date }. Poi inizia il tuo abbonamento e la tua carta viene addebitata.
trial-ending-text-amount = La tua prova gratuita di { $product } finisce il { $date }. Poi inizia il tuo abbonamento e alla tua carta vengono addebitati { $amount }.
trial-ending-keep = Se vuoi tenerlo non devi fare nulla: le tue chiavi di licenza continuano a funzionare. Per fermarti prima del primo addebito, annulla l'abbonamento prima di quella data nel portale clienti.
plan-changed-subject = Il tuo abbonamento è passato a { $product }
plan-changed-heading = Il tuo abbonamento è cambiato
plan-changed-text = Il tuo abbonamento è passato a { $product }.
plan-renews-at = Si rinnova a { $amount } per periodo; il prossimo rinnovo è il { $date }, adeguato al cambio.
plan-renews-on = Si rinnova il { $date }.
plan-dropped-keys = Le chiavi di licenza del piano precedente che il nuovo non include non funzionano più.
plan-keys-below = Le tue chiavi di licenza per il nuovo piano sono qui sotto.
canceled-subject = Il tuo abbonamento a { $product } è stato annullato
canceled-heading = Il tuo abbonamento è stato annullato
canceled-text = Il tuo abbonamento a { $product } è stato annullato.
canceled-until = Resta attivo, e le tue chiavi di licenza continuano a funzionare, fino al { $date }. Non ti verrà addebitato altro.
not-charged-again = Non ti verrà addebitato altro.
ended-subject = Il tuo abbonamento a { $product } è terminato
ended-heading = Il tuo abbonamento è terminato
ended-text = Il tuo abbonamento a { $product } è terminato.
ended-keys = Le sue chiavi di licenza qui sotto non funzionano più.
ended-again = Non ti verrà addebitato altro. Per abbonarti di nuovo, visita il sito del venditore.
revoked-keys = Chiavi di licenza revocate
license-key = Chiave di licenza
key-revoked-subject = Una chiave di licenza è stata revocata
key-disabled-subject = Una chiave di licenza è stata disattivata
key-revoked-text = Il venditore ha revocato la chiave di licenza qui sotto: non viene più convalidata.
key-disabled-text = Il venditore ha disattivato la chiave di licenza qui sotto: non viene più convalidata.
key-mistake = Se pensi che sia un errore, rispondi a questa e-mail.
refund-subject = Il tuo rimborso per { $product }
refund-heading = Il tuo rimborso è in arrivo
refund-text = Abbiamo rimborsato { $amount } del tuo acquisto di { $product }.
refund-text-full = Abbiamo rimborsato { $amount } del tuo acquisto di { $product } (l'intero acquisto).
refund-timing = Arriva sulla tua carta entro 5-10 giorni lavorativi, a seconda della banca.
refund-keys = Le chiavi di licenza di questo acquisto non funzionano più.
resent-heading = Le tue chiavi di licenza
resent-text = Hai richiesto di nuovo le tue chiavi di licenza. Eccole.
email-change-subject = Verifica il tuo nuovo indirizzo e-mail
email-change-heading = Conferma il tuo nuovo indirizzo e-mail
email-change-text = Qualcuno ha chiesto di usare { $email } per i propri acquisti da { $seller }. Inserisci questo codice nel portale clienti per confermarlo:
email-change-ignore = Se non l'hai richiesto, puoi ignorare questa e-mail: senza il codice non cambia nulla.
email-changed-subject = Il tuo indirizzo e-mail è stato modificato
email-changed-heading = Il tuo indirizzo e-mail è stato modificato
email-changed-text = L'indirizzo e-mail dei tuoi acquisti da { $seller } ora è { $email }. Da ora ricevute e codici di accesso arrivano lì.
email-changed-contact-at = Se non hai fatto tu questa modifica, contatta subito { $seller } a { $support }.
email-changed-contact = Se non hai fatto tu questa modifica, contatta subito { $seller }.

## Note di credito

credit-note-subject = Nota di credito { $number } per la fattura { $invoice }
credit-note-heading = Nota di credito { $number }
credit-note-text = Abbiamo emesso la nota di credito { $number } per la fattura { $invoice } ({ $product }) il { $date }: vengono rimborsati { $amount }.
credit-note-attached = La nota di credito è allegata a questa e-mail ({ $file }).
refunded-excluding-tax = Rimborsato, imposte escluse
total-refunded = Totale rimborsato
