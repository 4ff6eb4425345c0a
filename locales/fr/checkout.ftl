# Le paiement hébergé, sa page de confirmation et son script (voir locales/en/checkout.ftl).

## Cadre de la page

checkout-title = Paiement
payments-by = Paiements par Tollgate

## Périodes

per-day = { $count ->
    [one] jour
   *[other] { $count } jours
}
per-week = { $count ->
    [one] semaine
   *[other] { $count } semaines
}
per-month = { $count ->
    [one] mois
   *[other] { $count } mois
}
per-year = { $count ->
    [one] an
   *[other] { $count } ans
}
length-day = { $count ->
    [one] 1 jour
   *[other] { $count } jours
}
length-week = { $count ->
    [one] 1 semaine
   *[other] { $count } semaines
}
length-month = { $count ->
    [one] 1 mois
   *[other] { $count } mois
}
length-year = { $count ->
    [one] 1 an
   *[other] { $count } ans
}

## La page de paiement

close = Fermer
back = ← Retour
price-per-seat = Prix par siège
seat-tiers-graduated = Les sièges de chaque palier sont facturés au tarif de ce palier.
included = Inclus
order-summary = Récapitulatif de la commande
seats = Sièges
price = Prix
discount = Remise
subtotal = Sous-total
total = Total
tax = Taxe
tax-includes = Dont { $label }
tax-reverse-charge = { $name } autoliquidation
tax-note-reverse-charge = Autoliquidation : aucune TVA n'est facturée ; vous la déclarez vous-même.
tax-note-refuted = Ce numéro de TVA n'a pas pu être confirmé comme enregistré : la TVA est facturée.
trial-then = Gratuit pendant { $length }, puis
trial-first-charge = {"\u00A0"}: le premier prélèvement a lieu le { $date }.
trial-free = Gratuit pendant { $length }.
trial-nothing-today = Rien n'est débité aujourd'hui.
payment = Paiement
choose-product = Choisissez un produit
amount-in = Montant ({ $currency })
update = Mettre à jour
discount-code = Code de réduction
apply = Appliquer
contact = Coordonnées
email = E-mail
cardholder-name = Nom du titulaire de la carte
name = Nom
billing-address = Adresse de facturation
country = Pays
choose = Choisir…
state = État
province = Province ou territoire
address = Adresse
address-line2 = Complément d'adresse
postal-code = Code postal
city = Ville
buying-as-business = J'achète en tant qu'entreprise
business-name = Nom de l'entreprise
tax-id = Numéro fiscal (numéro de TVA)
additional-information = Informations complémentaires
test-card-token = Jeton de carte de test
test-card-help = Mode test : aucune vraie carte n'est débitée. Tout jeton est accepté sauf ceux qui commencent par tok_decline (par exemple tok_decline_insufficient_funds).
payment-method = Moyen de paiement
price-free = Gratuit
price-pay-what-you-want = Payez ce que vous voulez
seat-rate = { $amount } par siège
seat-rate-from = À partir de { $amount } par siège
metered-rate = { $amount } par unité
metered-note = L’utilisation est facturée à la fin de chaque période.
seat-range = { $min } à { $max } sièges
seat-range-open = { $min } sièges et plus
seat-count = { $count ->
    [one] { $count } siège
   *[other] { $count } sièges
}
seats-exactly = { $count ->
    [one] { $count } siège.
   *[other] { $count } sièges.
}
seats-between = De { $min } à { $max } sièges.
seats-at-least = Au moins { $min } sièges.
amount-between = Entre { $min } et { $max }.
amount-at-least = Au moins { $min }.
amount-at-most = Au plus { $max }.
button-free = Obtenir gratuitement
button-trial = Commencer l'essai gratuit
button-subscribe = S'abonner pour { $amount }
button-pay = Payer { $amount }

## La page de confirmation

title-succeeded = Merci
title-processing = Traitement de votre paiement
title-failed = Échec du paiement
processing-heading = Traitement de votre paiement…
processing-text = Nous confirmons le paiement de { $product }. Cette page s'actualise d'elle-même.
failed-heading = Échec du paiement
failed-text = Le paiement de { $product } n'a pas abouti et vous n'avez pas été débité. Retournez sur le site du vendeur pour réessayer.
thanks-heading = Merci pour votre commande !
purchase-complete = Votre achat de { $product } est terminé.
bought-as = Acheté en tant que { $email }.
total-paid = Total payé
your-license-keys = { $count ->
    [one] Votre clé de licence
   *[other] Vos clés de licence
}
copy = Copier
copy-license-key = Copier la clé de licence { $number }
key-status-revoked = révoquée
key-status-disabled = désactivée
valid-until = valable jusqu'au { $date }
keys-on-their-way = { $count ->
    [one] Un reçu avec votre clé de licence est en route vers { $email }.
   *[other] Un reçu avec vos clés de licence est en route vers { $email }.
}
keys-lost = Vous l'avez perdu ?
keys-send-again = Recevoir à nouveau vos clés
continue-to = Continuer vers { $seller }

## Pages d'erreur

checkout-not-found = Paiement introuvable
checkout-not-found-text = Ce lien de paiement est inconnu ou a expiré. Retournez sur le site du vendeur pour recommencer.
checkout-closed = Paiement clôturé
checkout-closed-text = Le paiement a échoué et ce paiement est clôturé. Retournez sur le site du vendeur pour recommencer.

## Le script de la page

js-copied = Copié
js-check-form = Veuillez vérifier le formulaire.
js-invalid-value = Valeur non valide.
js-seats-whole = Saisissez un nombre entier de sièges.
js-seats-failed = Les sièges n'ont pas pu être modifiés ; réessayez.
js-network-error = Erreur réseau ; réessayez.
js-product-failed = Le produit n'a pas pu être changé ; réessayez.
js-code-applied = Code { $code } appliqué.
js-code-failed = Le code n'a pas pu être appliqué ; réessayez.

## The payment part of the page script

js-form-not-loaded = Le formulaire de paiement n’a pas pu être chargé. Vérifiez votre connexion et rechargez la page.
js-form-missing = Le formulaire de paiement n’est pas chargé.
js-check-payment = Veuillez vérifier vos informations de paiement.
js-method-unusable = Ce moyen de paiement ne peut pas être utilisé.
js-processing = Traitement…
js-waiting-bank = En attente de votre banque…
js-not-authenticated = Votre paiement n’a pas pu être authentifié.
js-not-charged = Vous n’avez pas été débité.
js-declined = Votre paiement a été refusé.
js-something-wrong = Une erreur s’est produite.
js-try-again = Veuillez réessayer.
js-not-sent = Erreur réseau : le paiement n’a pas été envoyé. Veuillez réessayer.
js-redirecting = Redirection…
js-trial-used = Vous avez déjà utilisé un essai pour ce produit : l’abonnement est facturé dès maintenant.
js-payment-not-completed = Le paiement n’a pas abouti et vous n’avez pas été débité. Réessayez ou choisissez un autre moyen de paiement.
