# E-mails aos compradores (ver locales/en/mail.ftl).

## Moldura de cada mensagem

mail-sent-by = Enviado por { $seller }
mail-questions = dúvidas? responda a este e-mail ou escreva para
order-ref = Pedido { $order }

## Chaves de licença

key-limit-activations = { $count ->
    [one] até { $count } ativação
   *[other] até { $count } ativações
}
key-limit-uses = { $count ->
    [one] { $count } uso
   *[other] { $count } usos
}
key-no-expiry = não expira

## Recibos

receipt-subject = O seu recibo de { $seller }: { $product }
receipt-subject-renewal = A sua assinatura de { $product } foi renovada: { $amount }
receipt-subject-seller = Novo pedido: { $buyer } comprou { $product } ({ $amount })
receipt-heading = Obrigado pelo seu pedido
receipt-heading-renewal = A sua assinatura foi renovada
receipt-heading-seller = Você tem um novo pedido
receipt-text = A sua compra de { $product } de { $seller } em { $date } foi concluída.
receipt-text-renewal = A sua assinatura de { $product } foi renovada em { $date } e o seu cartão foi cobrado.
receipt-text-seller = { $buyer } comprou { $product } em { $date }.
invoice-attached = A fatura { $number } está anexada a este e-mail ({ $file }).
view-purchase = Ver a sua compra
downloads-ready = Os seus arquivos estão prontos para baixar no portal do cliente.
download-files = Baixar os seus arquivos
view-order = Ver o pedido
your-purchase = A sua compra
the-order = O pedido
lost-this-email = Perdeu este e-mail?
your-tax-number = O seu número fiscal: { $number }

## Avisos

open-portal = Abrir o portal do cliente
sign-in-subject = Acesse as suas compras em { $seller }
sign-in-heading = O seu código de acesso
sign-in-text = Use o código a seguir para acessar as suas compras no portal do cliente de { $seller }.
code-expires = Este código expira em { $minutes } minutos e funciona uma vez.
sign-in-ignore = Se você não o pediu, pode ignorar este e-mail: ninguém pode entrar sem o código.
renewal-failed-subject = Falha no pagamento da sua assinatura de { $product }
renewal-failed-heading = O pagamento da sua renovação falhou
renewal-failed-text = Não conseguimos cobrar o seu cartão pela renovação de { $product }.
renewal-failed-text-amount = Não conseguimos cobrar o seu cartão pela renovação de { $product } ({ $amount }).
retry-keys-until = Tentaremos novamente em { $retry }. As suas chaves de licença funcionam até { $until }; quando o pagamento for aprovado, valerão para o novo período.
retry-keys = Tentaremos novamente em { $retry }. Enquanto isso, as suas chaves de licença continuam funcionando.
gives-up = Se o pagamento ainda falhar até { $date }, a assinatura será cancelada e as suas chaves de licença revogadas.
recovery-lead = Pague agora, ou atualize o seu cartão, no portal do cliente:
recovery-label = Pagar agora ou atualizar o cartão
recovery-until = O link funciona uma vez, até { $date }. O acesso termina em { $date }.
questions-reply = Dúvidas? Responda a este e-mail.
card-advice = Verifique se o seu cartão pode ser cobrado, ou fale conosco respondendo a este e-mail.
trial-ending-subject = O seu teste de { $product } termina em breve
trial-ending-heading = O seu teste termina em breve
trial-ending-text = O seu teste grátis de { $product } termina em { $date }. A sua assinatura começa então e o seu cartão é cobrado.
trial-ending-text-amount = O seu teste grátis de { $product } termina em { $date }. A sua assinatura começa então e o seu cartão é cobrado em { $amount }.
trial-ending-keep = Nada a fazer se quiser mantê-la: as suas chaves de licença continuam funcionando. Para parar antes da primeira cobrança, cancele a assinatura antes dessa data no portal do cliente.
plan-changed-subject = A sua assinatura mudou para { $product }
plan-changed-heading = A sua assinatura mudou
plan-changed-text = A sua assinatura mudou para { $product }.
plan-renews-at = Renova-se por { $amount } por período; a próxima renovação é em { $date }, ajustada pela mudança.
plan-renews-on = Renova-se em { $date }.
plan-dropped-keys = As chaves de licença do seu plano anterior que o novo não inclui deixam de funcionar.
plan-keys-below = As suas chaves de licença do novo plano estão abaixo.
canceled-subject = A sua assinatura de { $product } foi cancelada
canceled-heading = A sua assinatura foi cancelada
canceled-text = A sua assinatura de { $product } foi cancelada.
canceled-until = Continua ativa, e as suas chaves de licença continuam funcionando, até { $date }. Você não será cobrado novamente.
not-charged-again = Você não será cobrado novamente.
ended-subject = A sua assinatura de { $product } terminou
ended-heading = A sua assinatura terminou
ended-text = A sua assinatura de { $product } terminou.
ended-keys = As chaves de licença abaixo deixaram de funcionar.
ended-again = Você não será cobrado novamente. Para assinar de novo, visite o site do vendedor.
revoked-keys = Chaves de licença revogadas
license-key = Chave de licença
key-revoked-subject = Uma chave de licença foi revogada
key-disabled-subject = Uma chave de licença foi desativada
key-revoked-text = O vendedor revogou a chave de licença abaixo: ela deixou de ser validada.
key-disabled-text = O vendedor desativou a chave de licença abaixo: ela deixou de ser validada.
key-mistake = Se achar que é um engano, responda a este e-mail.
refund-subject = O seu reembolso de { $product }
refund-heading = O seu reembolso está a caminho
refund-text = Reembolsamos { $amount } da sua compra de { $product }.
refund-text-full = Reembolsamos { $amount } da sua compra de { $product } (a compra inteira).
refund-timing = O valor chega ao seu cartão em 5 a 10 dias úteis, conforme o seu banco.
refund-keys = As chaves de licença desta compra deixaram de funcionar.
resent-heading = As suas chaves de licença
resent-text = Você pediu as suas chaves de licença novamente. Aqui estão elas.
email-change-subject = Verifique o seu novo endereço de e-mail
email-change-heading = Confirme o seu novo endereço de e-mail
email-change-text = Alguém pediu para usar { $email } nas compras em { $seller }. Digite este código no portal do cliente para confirmar:
email-change-ignore = Se você não o pediu, pode ignorar este e-mail: nada muda sem o código.
email-changed-subject = O seu endereço de e-mail foi alterado
email-changed-heading = O seu endereço de e-mail foi alterado
email-changed-text = O endereço de e-mail das suas compras em { $seller } agora é { $email }. Recibos e códigos de acesso vão para lá a partir de agora.
email-changed-contact-at = Se não foi você que fez esta alteração, fale imediatamente com { $seller } em { $support }.
email-changed-contact = Se não foi você que fez esta alteração, fale imediatamente com { $seller }.

## Notas de crédito

credit-note-subject = Nota de crédito { $number } da fatura { $invoice }
credit-note-heading = Nota de crédito { $number }
credit-note-text = Emitimos a nota de crédito { $number } da fatura { $invoice } ({ $product }) em { $date }: { $amount } é reembolsado.
credit-note-attached = A nota de crédito está anexada a este e-mail ({ $file }).
refunded-excluding-tax = Reembolsado, sem impostos
total-refunded = Total reembolsado
