# ホスト型チェックアウト、確認ページ、スクリプト（locales/en/checkout.ftl を参照）。

## ページの枠

checkout-title = お支払い
payments-by = Tollgate による決済

## 期間（日本語に単数・複数の区別はなく、1 だけを数値で選びます）

per-day = { $count ->
    [1] 日
   *[other] { $count }日
}
per-week = { $count ->
    [1] 週
   *[other] { $count }週間
}
per-month = { $count ->
    [1] 月
   *[other] { $count }か月
}
per-year = { $count ->
    [1] 年
   *[other] { $count }年
}
length-day = { $count ->
   *[other] { $count }日間
}
length-week = { $count ->
   *[other] { $count }週間
}
length-month = { $count ->
   *[other] { $count }か月
}
length-year = { $count ->
   *[other] { $count }年
}

## チェックアウトページ

close = 閉じる
back = ← 戻る
price-per-seat = シートあたりの価格
seat-tiers-graduated = 各段階のシートは、その段階の単価で請求されます。
included = 含まれるもの
order-summary = ご注文内容
seats = シート数
price = 価格
discount = 割引
subtotal = 小計
total = 合計
tax = 税
tax-includes = { $label } 込み
tax-reverse-charge = { $name }（リバースチャージ）
tax-note-reverse-charge = リバースチャージ：VAT は請求されません。ご自身の申告で納付してください。
tax-note-refuted = この VAT 番号は登録済みと確認できませんでした：VAT が請求されます。
trial-then = { $length }無料、その後
trial-first-charge = ：最初の請求日は { $date } です。
trial-free = { $length }無料。
trial-nothing-today = 本日の請求はありません。
payment = お支払い
choose-product = 商品を選択
amount-in = 金額（{ $currency }）
update = 更新
discount-code = 割引コード
apply = 適用
contact = 連絡先
email = メールアドレス
cardholder-name = カード名義人
name = お名前
billing-address = 請求先住所
country = 国
choose = 選択…
state = 州
province = 州または準州
address = 住所
address-line2 = 住所 2 行目
postal-code = 郵便番号
city = 市区町村
buying-as-business = 法人として購入する
business-name = 会社名
tax-id = 税番号（VAT 番号）
additional-information = 追加情報
test-card-token = テストカードのトークン
test-card-help = テストモード：実際のカードには請求されません。tok_decline で始まるもの（例：tok_decline_insufficient_funds）以外のトークンはすべて承認されます。
payment-method = お支払い方法
price-free = 無料
price-pay-what-you-want = お好きな金額で
seat-rate = シートあたり { $amount }
seat-rate-from = シートあたり { $amount } から
metered-rate = 1単位あたり { $amount }
metered-note = 利用料金は各期間の終わりに請求されます。
seat-range = { $min }～{ $max } シート
seat-range-open = { $min } シート以上
seat-count = { $count ->
   *[other] { $count } シート
}
seats-exactly = { $count ->
   *[other] { $count } シート。
}
seats-between = { $min }～{ $max } シート。
seats-at-least = { $min } シート以上。
amount-between = { $min }～{ $max }。
amount-at-least = { $min } 以上。
amount-at-most = { $max } 以下。
button-free = 無料で入手
button-trial = 無料トライアルを開始
button-subscribe = { $amount } で購読する
button-pay = { $amount } を支払う

## 確認ページ

title-succeeded = ありがとうございました
title-processing = お支払いを処理しています
title-failed = お支払いに失敗しました
processing-heading = お支払いを処理しています…
processing-text = { $product } のお支払いを確認しています。このページは自動的に更新されます。
failed-heading = お支払いに失敗しました
failed-text = { $product } のお支払いは完了せず、請求もされていません。販売者のサイトに戻って、もう一度お試しください。
thanks-heading = ご注文ありがとうございます！
purchase-complete = { $product } のご購入が完了しました。
bought-as = { $email } で購入しました。
total-paid = お支払い合計
your-license-keys = { $count ->
   *[other] ライセンスキー
}
copy = コピー
copy-license-key = ライセンスキー { $number } をコピー
key-status-revoked = 取り消し済み
key-status-disabled = 無効
valid-until = { $date } まで有効
keys-on-their-way = { $count ->
   *[other] ライセンスキーを記載した領収書を { $email } に送信しました。
}
keys-lost = なくしましたか？
keys-send-again = キーを再送する
continue-to = { $seller } へ進む

## エラーページ

checkout-not-found = チェックアウトが見つかりません
checkout-not-found-text = このチェックアウトのリンクは不明か、期限切れです。販売者のサイトに戻って、最初からやり直してください。
checkout-closed = チェックアウトは終了しました
checkout-closed-text = このチェックアウトのお支払いは失敗し、終了しました。販売者のサイトに戻って、最初からやり直してください。

## ページのスクリプト

js-copied = コピーしました
js-check-form = フォームを確認してください。
js-invalid-value = 無効な値です。
js-seats-whole = シート数を整数で入力してください。
js-seats-failed = シート数を変更できませんでした。もう一度お試しください。
js-network-error = ネットワークエラーです。もう一度お試しください。
js-product-failed = 商品を変更できませんでした。もう一度お試しください。
js-code-applied = コード { $code } を適用しました。
js-code-failed = コードを適用できませんでした。もう一度お試しください。

## The payment part of the page script

js-form-not-loaded = お支払いフォームを読み込めませんでした。接続を確認してページを再読み込みしてください。
js-form-missing = お支払いフォームが読み込まれていません。
js-check-payment = お支払い情報をご確認ください。
js-method-unusable = このお支払い方法はご利用いただけません。
js-processing = 処理中…
js-waiting-bank = 銀行の応答を待っています…
js-not-authenticated = お支払いを認証できませんでした。
js-not-charged = 料金は請求されていません。
js-declined = お支払いが拒否されました。
js-something-wrong = 問題が発生しました。
js-try-again = もう一度お試しください。
js-not-sent = ネットワークエラー：お支払いは送信されませんでした。もう一度お試しください。
js-redirecting = リダイレクト中…
js-trial-used = この製品のトライアルはすでにご利用済みです：今すぐ購読すると料金が請求されます。
js-payment-not-completed = お支払いは完了しておらず、料金は請求されていません。もう一度お試しいただくか、別のお支払い方法をお選びください。
