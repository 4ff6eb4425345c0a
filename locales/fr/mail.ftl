# E-mails aux acheteurs (voir locales/en/mail.ftl).

## Cadre de chaque message

mail-sent-by = Envoyé par { $seller }
mail-questions = des questions ? répondez à cet e-mail ou écrivez à
order-ref = Commande { $order }

## Clés de licence

key-limit-activations = { $count ->
    [one] jusqu'à { $count } activation
   *[other] jusqu'à { $count } activations
}
key-limit-uses = { $count ->
    [one] { $count } utilisation
   *[other] { $count } utilisations
}
key-no-expiry = n'expire pas

## Reçus

receipt-subject = Votre reçu de { $seller } : { $product }
receipt-subject-renewal = Votre abonnement { $product } a été renouvelé : { $amount }
receipt-subject-seller = Nouvelle commande : { $buyer } a acheté { $product } ({ $amount })
receipt-heading = Merci pour votre commande
receipt-heading-renewal = Votre abonnement a été renouvelé
receipt-heading-seller = Vous avez une nouvelle commande
receipt-text = Votre achat de { $product } auprès de { $seller } le { $date } est terminé.
receipt-text-renewal = Votre abonnement à { $product } a été renouvelé le { $date } et votre carte a été débitée.
receipt-text-seller = { $buyer } a acheté { $product } le { $date }.
invoice-attached = La facture { $number } est jointe à cet e-mail ({ $file }).
view-purchase = Voir votre achat
downloads-ready = Vos fichiers sont prêts à être téléchargés dans l'espace client.
download-files = Télécharger vos fichiers
view-order = Voir la commande
your-purchase = Votre achat
the-order = La commande
lost-this-email = Vous avez perdu cet e-mail ?
your-tax-number = Votre numéro fiscal : { $number }

## Avis

open-portal = Ouvrir l'espace client
sign-in-subject = Accédez à vos achats chez { $seller }
sign-in-heading = Votre code de connexion
sign-in-text = Utilisez le code suivant pour accéder à vos achats dans l'espace client de { $seller }.
code-expires = Ce code expire dans { $minutes } minutes et ne sert qu'une fois.
sign-in-ignore = Si vous ne l'avez pas demandé, ignorez cet e-mail : personne ne peut se connecter sans le code.
renewal-failed-subject = Échec du paiement de votre abonnement { $product }
renewal-failed-heading = Le paiement de votre renouvellement a échoué
renewal-failed-text = Nous n'avons pas pu débiter votre carte pour le renouvellement de { $product }.
renewal-failed-text-amount = Nous n'avons pas pu débiter votre carte pour le renouvellement de { $product } ({ $amount }).
retry-keys-until = Nous réessaierons le { $retry }. Vos clés de licence fonctionnent jusqu'au { $until } ; une fois le paiement passé, elles valent pour la nouvelle période.
retry-keys = Nous réessaierons le { $retry }. Vos clés de licence continuent de fonctionner d'ici là.
gives-up = Si le paiement échoue encore d'ici le { $date }, l'abonnement sera annulé et ses clés de licence révoquées.
recovery-lead = Payez maintenant, ou mettez à jour votre carte, dans l'espace client :
recovery-label = Payer maintenant ou mettre à jour la carte
recovery-until = Le lien ne sert qu'une fois, jusqu'au { $date }. L'accès s'arrête le { $date }.
questions-reply = Des questions ? Répondez à cet e-mail.
card-advice = Vérifiez que votre carte peut être débitée, ou contactez-nous en répondant à cet e-mail.
trial-ending-subject = Votre essai de { $product } se termine bientôt
trial-ending-heading = Votre essai se termine bientôt
trial-ending-text = Votre essai gratuit de { $product } se termine le { $date }. Votre abonnement commence alors et votre carte est débitée.
trial-ending-text-amount = Votre essai gratuit de { $product } se termine le { $date }. Votre abonnement commence alors et votre carte est débitée de { $amount }.
trial-ending-keep = Rien à faire si vous voulez le garder : vos clés de licence continuent de fonctionner. Pour arrêter avant le premier prélèvement, annulez l'abonnement avant cette date dans l'espace client.
plan-changed-subject = Votre abonnement est passé à { $product }
plan-changed-heading = Votre abonnement a changé
plan-changed-text = Votre abonnement est passé à { $product }.
plan-renews-at = Il se renouvelle à { $amount } par période ; le prochain renouvellement a lieu le { $date }, ajusté selon le changement.
plan-renews-on = Il se renouvelle le { $date }.
plan-dropped-keys = Les clés de licence de votre ancienne offre que la nouvelle n'inclut pas ne fonctionnent plus.
plan-keys-below = Vos clés de licence pour la nouvelle offre figurent ci-dessous.
canceled-subject = Votre abonnement { $product } a été annulé
canceled-heading = Votre abonnement a été annulé
canceled-text = Votre abonnement à { $product } a été annulé.
canceled-until = Il reste actif, et vos clés de licence continuent de fonctionner, jusqu'au { $date }. Vous ne serez plus débité.
not-charged-again = Vous ne serez plus débité.
ended-subject = Votre abonnement { $product } est terminé
ended-heading = Votre abonnement est terminé
ended-text = Votre abonnement à { $product } est terminé.
ended-keys = Ses clés de licence ci-dessous ne fonctionnent plus.
ended-again = Vous ne serez plus débité. Pour vous abonner à nouveau, rendez-vous sur le site du vendeur.
revoked-keys = Clés de licence révoquées
license-key = Clé de licence
key-revoked-subject = Une clé de licence a été révoquée
key-disabled-subject = Une clé de licence a été désactivée
key-revoked-text = Le vendeur a révoqué la clé de licence ci-dessous : elle n'est plus validée.
key-disabled-text = Le vendeur a désactivé la clé de licence ci-dessous : elle n'est plus validée.
key-mistake = Si vous pensez qu'il s'agit d'une erreur, répondez à cet e-mail.
refund-subject = Votre remboursement pour { $product }
refund-heading = Votre remboursement est en route
refund-text = Nous avons remboursé { $amount } de votre achat de { $product }.
refund-text-full = Nous avons remboursé { $amount } de votre achat de { $product } (l'achat entier).
refund-timing = Il arrive sur votre carte sous 5 à 10 jours ouvrés, selon votre banque.
refund-keys = Les clés de licence de cet achat ne fonctionnent plus.
resent-heading = Vos clés de licence
resent-text = Vous avez redemandé vos clés de licence. Les voici.
email-change-subject = Vérifiez votre nouvelle adresse e-mail
email-change-heading = Confirmez votre nouvelle adresse e-mail
email-change-text = Quelqu'un a demandé à utiliser { $email } pour ses achats chez { $seller }. Saisissez ce code dans l'espace client pour le confirmer :
email-change-ignore = Si vous ne l'avez pas demandé, ignorez cet e-mail : rien ne change sans le code.
email-changed-subject = Votre adresse e-mail a été modifiée
email-changed-heading = Votre adresse e-mail a été modifiée
email-changed-text = L'adresse e-mail de vos achats chez { $seller } est désormais { $email }. Les reçus et les codes de connexion y sont envoyés dorénavant.
email-changed-contact-at = Si vous n'êtes pas à l'origine de ce changement, contactez immédiatement { $seller } à { $support }.
email-changed-contact = Si vous n'êtes pas à l'origine de ce changement, contactez immédiatement { $seller }.

## Avoirs

credit-note-subject = Avoir { $number } sur la facture { $invoice }
credit-note-heading = Avoir { $number }
credit-note-text = Nous avons émis l'avoir { $number } sur la facture { $invoice } ({ $product }) le { $date } : { $amount } est remboursé.
credit-note-attached = L'avoir est joint à cet e-mail ({ $file }).
refunded-excluding-tax = Remboursé, hors taxes
total-refunded = Total remboursé
