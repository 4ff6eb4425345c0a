# O checkout hospedado, a sua página de confirmação e o seu script (ver locales/en/checkout.ftl).
# Um só português (pt-BR e pt-PT leem este arquivo).

## Moldura da página

checkout-title = Pagamento
payments-by = Pagamentos por Tollgate

## Períodos

per-day = { $count ->
    [one] dia
   *[other] { $count } dias
}
per-week = { $count ->
    [one] semana
   *[other] { $count } semanas
}
per-month = { $count ->
    [one] mês
   *[other] { $count } meses
}
per-year = { $count ->
    [one] ano
   *[other] { $count } anos
}
length-day = { $count ->
    [one] 1 dia
   *[other] { $count } dias
}
length-week = { $count ->
    [one] 1 semana
   *[other] { $count } semanas
}
length-month = { $count ->
    [one] 1 mês
   *[other] { $count } meses
}
length-year = { $count ->
    [one] 1 ano
   *[other] { $count } anos
}

## A página de pagamento

close = Fechar
back = ← Voltar
price-per-seat = Preço por assento
seat-tiers-graduated = Os assentos de cada faixa são cobrados pela tarifa dessa faixa.
included = Incluído
order-summary = Resumo do pedido
seats = Assentos
price = Preço
discount = Desconto
subtotal = Subtotal
total = Total
tax = Imposto
tax-includes = Inclui { $label }
tax-reverse-charge = { $name } autoliquidação
tax-note-reverse-charge = Autoliquidação: não é cobrado IVA; você o declara na sua própria declaração.
tax-note-refuted = Não foi possível confirmar o registro deste número de IVA: o IVA é cobrado.
trial-then = Grátis por { $length }, depois
trial-first-charge = : a primeira cobrança é em { $date }.
trial-free = Grátis por { $length }.
trial-nothing-today = Nada é cobrado hoje.
payment = Pagamento
choose-product = Escolha um produto
amount-in = Valor ({ $currency })
update = Atualizar
discount-code = Código de desconto
apply = Aplicar
contact = Contato
email = E-mail
cardholder-name = Nome do titular do cartão
name = Nome
billing-address = Endereço de cobrança
country = País
choose = Escolher…
state = Estado
province = Província ou território
address = Endereço
address-line2 = Complemento
postal-code = Código postal
city = Cidade
buying-as-business = Estou comprando como empresa
business-name = Nome da empresa
tax-id = Identificação fiscal (número de IVA)
additional-information = Informações adicionais
test-card-token = Token do cartão de teste
test-card-help = Modo de teste: nenhum cartão real é cobrado. Qualquer token é aprovado, exceto os que começam com tok_decline (por exemplo tok_decline_insufficient_funds).
payment-method = Forma de pagamento
price-free = Grátis
price-pay-what-you-want = Pague quanto quiser
seat-rate = { $amount } por assento
seat-rate-from = A partir de { $amount } por assento
metered-rate = { $amount } por unidade
metered-note = O uso é cobrado no final de cada período.
seat-range = { $min }–{ $max } assentos
seat-range-open = { $min }+ assentos
seat-count = { $count ->
    [one] { $count } assento
   *[other] { $count } assentos
}
seats-exactly = { $count ->
    [one] { $count } assento.
   *[other] { $count } assentos.
}
seats-between = De { $min } a { $max } assentos.
seats-at-least = Pelo menos { $min } assentos.
amount-between = Entre { $min } e { $max }.
amount-at-least = Pelo menos { $min }.
amount-at-most = No máximo { $max }.
button-free = Obter grátis
button-trial = Começar o teste grátis
button-subscribe = Assinar por { $amount }
button-pay = Pagar { $amount }

## A página de confirmação

title-succeeded = Obrigado
title-processing = Processando o seu pagamento
title-failed = Falha no pagamento
processing-heading = Processando o seu pagamento…
processing-text = Estamos confirmando o pagamento de { $product }. Esta página se atualiza sozinha.
failed-heading = Falha no pagamento
failed-text = O pagamento de { $product } não foi concluído e você não foi cobrado. Volte ao site do vendedor para tentar novamente.
thanks-heading = Obrigado pelo seu pedido!
purchase-complete = A sua compra de { $product } foi concluída.
bought-as = Comprado como { $email }.
total-paid = Total pago
your-license-keys = { $count ->
    [one] A sua chave de licença
   *[other] As suas chaves de licença
}
copy = Copiar
copy-license-key = Copiar a chave de licença { $number }
key-status-revoked = revogada
key-status-disabled = desativada
valid-until = válida até { $date }
keys-on-their-way = { $count ->
    [one] Um recibo com a sua chave de licença está a caminho de { $email }.
   *[other] Um recibo com as suas chaves de licença está a caminho de { $email }.
}
keys-lost = Perdeu?
keys-send-again = Receber as suas chaves novamente
continue-to = Continuar para { $seller }

## Páginas de erro

checkout-not-found = Pagamento não encontrado
checkout-not-found-text = Este link de pagamento é desconhecido ou expirou. Volte ao site do vendedor para começar de novo.
checkout-closed = Pagamento encerrado
checkout-closed-text = O pagamento falhou e este checkout está encerrado. Volte ao site do vendedor para começar de novo.

## O script da página

js-copied = Copiado
js-check-form = Verifique o formulário.
js-invalid-value = Valor inválido.
js-seats-whole = Informe um número inteiro de assentos.
js-seats-failed = Não foi possível alterar os assentos; tente novamente.
js-network-error = Erro de rede; tente novamente.
js-product-failed = Não foi possível trocar o produto; tente novamente.
js-code-applied = Código { $code } aplicado.
js-code-failed = Não foi possível aplicar o código; tente novamente.

## The payment part of the page script

js-form-not-loaded = Não foi possível carregar o formulário de pagamento. Verifique sua conexão e recarregue a página.
js-form-missing = O formulário de pagamento não foi carregado.
js-check-payment = Verifique seus dados de pagamento.
js-method-unusable = Esta forma de pagamento não pode ser usada.
js-processing = Processando…
js-waiting-bank = Aguardando seu banco…
js-not-authenticated = Não foi possível autenticar seu pagamento.
js-not-charged = Nada foi cobrado.
js-declined = Seu pagamento foi recusado.
js-something-wrong = Algo deu errado.
js-try-again = Tente novamente.
js-not-sent = Erro de rede: o pagamento não foi enviado. Tente novamente.
js-redirecting = Redirecionando…
js-trial-used = Você já usou um teste deste produto: ao assinar agora, a cobrança é feita.
js-payment-not-completed = O pagamento não foi concluído e nada foi cobrado. Tente novamente ou escolha outra forma de pagamento.
