# Correos a los compradores (ver locales/en/mail.ftl).

## Marco de cada mensaje

mail-sent-by = Enviado por { $seller }
mail-questions = ¿preguntas? responda a este correo o escriba a
order-ref = Pedido { $order }

## Claves de licencia

key-limit-activations = { $count ->
    [one] hasta 1 activación
   *[other] hasta { $count } activaciones
}
key-limit-uses = { $count ->
    [one] 1 uso
   *[other] { $count } usos
}
key-no-expiry = no caduca

## Recibos

receipt-subject = Su recibo de { $seller }: { $product }
receipt-subject-renewal = Su suscripción a { $product } se ha renovado: { $amount }
receipt-subject-seller = Nuevo pedido: { $buyer } ha comprado { $product } ({ $amount })
receipt-heading = Gracias por su pedido
receipt-heading-renewal = Su suscripción se ha renovado
receipt-heading-seller = Tiene un nuevo pedido
receipt-text = Su compra de { $product } a { $seller } el { $date } se ha completado.
receipt-text-renewal = Su suscripción a { $product } se renovó el { $date } y se cobró a su tarjeta.
receipt-text-seller = { $buyer } compró { $product } el { $date }.
invoice-attached = La factura { $number } va adjunta a este correo ({ $file }).
view-purchase = Ver su compra
downloads-ready = Tus archivos están listos para descargar en el portal de clientes.
download-files = Descargar tus archivos
view-order = Ver el pedido
your-purchase = Su compra
the-order = El pedido
lost-this-email = ¿Ha perdido este correo?
your-tax-number = Su número fiscal: { $number }

## Avisos

open-portal = Abrir el portal de cliente
sign-in-subject = Acceda a sus compras en { $seller }
sign-in-heading = Su código de acceso
sign-in-text = Puede usar el siguiente código para acceder a sus compras en el portal de cliente de { $seller }.
code-expires = Este código caduca en { $minutes } minutos y sirve una sola vez.
sign-in-ignore = Si no lo ha pedido, puede ignorar este correo: nadie puede acceder sin el código.
renewal-failed-subject = Ha fallado el pago de su suscripción a { $product }
renewal-failed-heading = Ha fallado el pago de su renovación
renewal-failed-text = No pudimos cobrar a su tarjeta la renovación de { $product }.
renewal-failed-text-amount = No pudimos cobrar a su tarjeta la renovación de { $product } ({ $amount }).
retry-keys-until = Lo intentaremos de nuevo el { $retry }. Sus claves de licencia funcionan hasta el { $until }; cuando el pago se complete, valdrán para el nuevo periodo.
retry-keys = Lo intentaremos de nuevo el { $retry }. Mientras tanto, sus claves de licencia siguen funcionando.
gives-up = Si el pago sigue fallando el { $date }, la suscripción se cancelará y sus claves de licencia se revocarán.
recovery-lead = Pague ahora, o actualice su tarjeta, en el portal de cliente:
recovery-label = Pagar ahora o actualizar la tarjeta
recovery-until = El enlace sirve una sola vez, hasta el { $date }. El acceso termina el { $date }.
questions-reply = ¿Preguntas? Responda a este correo.
card-advice = Asegúrese de que se pueda cobrar a su tarjeta, o contáctenos respondiendo a este correo.
trial-ending-subject = Su prueba de { $product } termina pronto
trial-ending-heading = Su prueba termina pronto
trial-ending-text = Su prueba gratuita de { $product } termina el { $date }. Entonces comienza su suscripción y se cobra a su tarjeta.
trial-ending-text-amount = Su prueba gratuita de { $product } termina el { $date }. Entonces comienza su suscripción y se cobran { $amount } a su tarjeta.
trial-ending-keep = No tiene que hacer nada si quiere conservarla: sus claves de licencia siguen funcionando. Para dejarla antes del primer cargo, cancele la suscripción antes de esa fecha en el portal de cliente.
plan-changed-subject = Su suscripción ha cambiado a { $product }
plan-changed-heading = Su suscripción ha cambiado
plan-changed-text = Su suscripción ha cambiado a { $product }.
plan-renews-at = Se renueva a { $amount } por periodo; la próxima renovación es el { $date }, ajustada por el cambio.
plan-renews-on = Se renueva el { $date }.
plan-dropped-keys = Las claves de licencia de su plan anterior que el nuevo no incluye ya no funcionan.
plan-keys-below = Sus claves de licencia del nuevo plan están abajo.
canceled-subject = Su suscripción a { $product } se ha cancelado
canceled-heading = Su suscripción se ha cancelado
canceled-text = Su suscripción a { $product } se ha cancelado.
canceled-until = Sigue activa, y sus claves de licencia siguen funcionando, hasta el { $date }. No se le volverá a cobrar.
not-charged-again = No se le volverá a cobrar.
ended-subject = Su suscripción a { $product } ha terminado
ended-heading = Su suscripción ha terminado
ended-text = Su suscripción a { $product } ha terminado.
ended-keys = Sus claves de licencia de abajo ya no funcionan.
ended-again = No se le volverá a cobrar. Para suscribirse de nuevo, visite el sitio del vendedor.
revoked-keys = Claves de licencia revocadas
license-key = Clave de licencia
key-revoked-subject = Se ha revocado una clave de licencia
key-disabled-subject = Se ha desactivado una clave de licencia
key-revoked-text = El vendedor ha revocado la clave de licencia de abajo: ya no se valida.
key-disabled-text = El vendedor ha desactivado la clave de licencia de abajo: ya no se valida.
key-mistake = Si cree que es un error, responda a este correo.
refund-subject = Su reembolso de { $product }
refund-heading = Su reembolso está en camino
refund-text = Hemos reembolsado { $amount } de su compra de { $product }.
refund-text-full = Hemos reembolsado { $amount } de su compra de { $product } (la compra completa).
refund-timing = Llegará a su tarjeta en un plazo de 5 a 10 días hábiles, según su banco.
refund-keys = Las claves de licencia de esta compra ya no funcionan.
resent-heading = Sus claves de licencia
resent-text = Ha vuelto a pedir sus claves de licencia. Aquí las tiene.
email-change-subject = Verifique su nueva dirección de correo
email-change-heading = Confirme su nueva dirección de correo
email-change-text = Alguien ha pedido usar { $email } para sus compras en { $seller }. Escriba este código en el portal de cliente para confirmarlo:
email-change-ignore = Si no lo ha pedido, puede ignorar este correo: nada cambia sin el código.
email-changed-subject = Su dirección de correo ha cambiado
email-changed-heading = Su dirección de correo ha cambiado
email-changed-text = La dirección de correo de sus compras en { $seller } es ahora { $email }. Los recibos y los códigos de acceso se envían allí a partir de ahora.
email-changed-contact-at = Si usted no hizo este cambio, contacte de inmediato con { $seller } en { $support }.
email-changed-contact = Si usted no hizo este cambio, contacte de inmediato con { $seller }.

## Notas de crédito

credit-note-subject = Nota de crédito { $number } de la factura { $invoice }
credit-note-heading = Nota de crédito { $number }
credit-note-text = Hemos emitido la nota de crédito { $number } de la factura { $invoice } ({ $product }) el { $date }: se reembolsan { $amount }.
credit-note-attached = La nota de crédito va adjunta a este correo ({ $file }).
refunded-excluding-tax = Reembolsado, sin impuestos
total-refunded = Total reembolsado
