# El pago alojado, su página de confirmación y su script (ver locales/en/checkout.ftl).

## Marco de la página

checkout-title = Pago
payments-by = Pagos con Tollgate

## Periodos

per-day = { $count ->
    [one] día
   *[other] { $count } días
}
per-week = { $count ->
    [one] semana
   *[other] { $count } semanas
}
per-month = { $count ->
    [one] mes
   *[other] { $count } meses
}
per-year = { $count ->
    [one] año
   *[other] { $count } años
}
length-day = { $count ->
    [one] 1 día
   *[other] { $count } días
}
length-week = { $count ->
    [one] 1 semana
   *[other] { $count } semanas
}
length-month = { $count ->
    [one] 1 mes
   *[other] { $count } meses
}
length-year = { $count ->
    [one] 1 año
   *[other] { $count } años
}

## La página de pago

close = Cerrar
back = ← Volver
price-per-seat = Precio por puesto
seat-tiers-graduated = Los puestos de cada tramo se facturan a la tarifa de ese tramo.
included = Incluye
order-summary = Resumen del pedido
seats = Puestos
price = Precio
discount = Descuento
subtotal = Subtotal
total = Total
tax = Impuestos
tax-includes = Incluye { $label }
tax-reverse-charge = { $name } inversión del sujeto pasivo
tax-note-reverse-charge = Inversión del sujeto pasivo: no se cobra IVA; usted lo declara en su propia declaración.
tax-note-refuted = No se pudo confirmar que este número de IVA esté registrado: se cobra el IVA.
trial-then = Gratis durante { $length }, después
trial-first-charge = : el primer cargo se realiza el { $date }.
trial-free = Gratis durante { $length }.
trial-nothing-today = Hoy no se cobra nada.
payment = Pago
choose-product = Elija un producto
amount-in = Importe ({ $currency })
update = Actualizar
discount-code = Código de descuento
apply = Aplicar
contact = Contacto
email = Correo electrónico
cardholder-name = Nombre del titular de la tarjeta
name = Nombre
billing-address = Dirección de facturación
country = País
choose = Elegir…
state = Estado
province = Provincia o territorio
address = Dirección
address-line2 = Línea 2 de la dirección
postal-code = Código postal
city = Ciudad
buying-as-business = Compro como empresa
business-name = Nombre de la empresa
tax-id = Identificación fiscal (número de IVA)
additional-information = Información adicional
test-card-token = Token de tarjeta de prueba
test-card-help = Modo de prueba: no se cobra ninguna tarjeta real. Se aprueba cualquier token excepto los que empiezan por tok_decline (por ejemplo tok_decline_insufficient_funds).
payment-method = Método de pago
price-free = Gratis
price-pay-what-you-want = Paga lo que quieras
seat-rate = { $amount } por puesto
seat-rate-from = Desde { $amount } por puesto
metered-rate = { $amount } por unidad
metered-note = El uso se factura al final de cada período.
seat-range = { $min }–{ $max } puestos
seat-range-open = { $min }+ puestos
seat-count = { $count ->
    [one] 1 puesto
   *[other] { $count } puestos
}
seats-exactly = { $count ->
    [one] 1 puesto.
   *[other] { $count } puestos.
}
seats-between = De { $min } a { $max } puestos.
seats-at-least = Al menos { $min } puestos.
amount-between = Entre { $min } y { $max }.
amount-at-least = Al menos { $min }.
amount-at-most = Como máximo { $max }.
button-free = Obtener gratis
button-trial = Empezar la prueba gratuita
button-subscribe = Suscribirse por { $amount }
button-pay = Pagar { $amount }

## La página de confirmación

title-succeeded = Gracias
title-processing = Procesando su pago
title-failed = El pago ha fallado
processing-heading = Procesando su pago…
processing-text = Estamos confirmando el pago de { $product }. Esta página se actualiza sola.
failed-heading = El pago ha fallado
failed-text = El pago de { $product } no se ha completado y no se le ha cobrado nada. Vuelva al sitio del vendedor para intentarlo de nuevo.
thanks-heading = ¡Gracias por su pedido!
purchase-complete = Su compra de { $product } se ha completado.
bought-as = Comprado como { $email }.
total-paid = Total pagado
your-license-keys = { $count ->
    [one] Su clave de licencia
   *[other] Sus claves de licencia
}
copy = Copiar
copy-license-key = Copiar la clave de licencia { $number }
key-status-revoked = revocada
key-status-disabled = desactivada
valid-until = válida hasta el { $date }
keys-on-their-way = { $count ->
    [one] Un recibo con su clave de licencia está de camino a { $email }.
   *[other] Un recibo con sus claves de licencia está de camino a { $email }.
}
keys-lost = ¿Lo ha perdido?
keys-send-again = Recibir sus claves de nuevo
continue-to = Continuar a { $seller }

## Páginas de error

checkout-not-found = Pago no encontrado
checkout-not-found-text = Este enlace de pago es desconocido o ha caducado. Vuelva al sitio del vendedor para empezar de nuevo.
checkout-closed = Pago cerrado
checkout-closed-text = El pago de esta compra ha fallado y está cerrada. Vuelva al sitio del vendedor para empezar de nuevo.

## El script de la página

js-copied = Copiado
js-check-form = Revise el formulario.
js-invalid-value = Valor no válido.
js-seats-whole = Introduzca un número entero de puestos.
js-seats-failed = No se pudieron cambiar los puestos; inténtelo de nuevo.
js-network-error = Error de red; inténtelo de nuevo.
js-product-failed = No se pudo cambiar el producto; inténtelo de nuevo.
js-code-applied = Código { $code } aplicado.
js-code-failed = No se pudo aplicar el código; inténtelo de nuevo.

## The payment part of the page script

js-form-not-loaded = No se pudo cargar el formulario de pago. Comprueba tu conexión y vuelve a cargar la página.
js-form-missing = El formulario de pago no está cargado.
js-check-payment = Revisa tus datos de pago.
js-method-unusable = No se puede usar este método de pago.
js-processing = Procesando…
js-waiting-bank = Esperando a tu banco…
js-not-authenticated = No se pudo autenticar tu pago.
js-not-charged = No se te ha cobrado nada.
js-declined = Tu pago ha sido rechazado.
js-something-wrong = Algo salió mal.
js-try-again = Inténtalo de nuevo.
js-not-sent = Error de red: el pago no se envió. Inténtalo de nuevo.
js-redirecting = Redirigiendo…
js-trial-used = Ya usaste una prueba para este producto: al suscribirte ahora se te cobra.
js-payment-not-completed = El pago no se completó y no se te ha cobrado nada. Inténtalo de nuevo o elige otro método de pago.
