# 購入者へのメール（locales/en/mail.ftl を参照）。

## 各メッセージの枠

mail-sent-by = { $seller } より送信
mail-questions = ご質問は、このメールに返信するか、次の宛先まで
order-ref = 注文 { $order }

## ライセンスキー

key-limit-activations = { $count ->
   *[other] 最大 { $count } 回のアクティベーション
}
key-limit-uses = { $count ->
   *[other] { $count } 回の使用
}
key-no-expiry = 有効期限なし

## 領収書

receipt-subject = { $seller } からの領収書：{ $product }
receipt-subject-renewal = { $product } のサブスクリプションが更新されました：{ $amount }
receipt-subject-seller = 新しい注文：{ $buyer } が { $product } を購入しました（{ $amount }）
receipt-heading = ご注文ありがとうございます
receipt-heading-renewal = サブスクリプションが更新されました
receipt-heading-seller = 新しい注文があります
receipt-text = { $date } の { $seller } での { $product } のご購入が完了しました。
receipt-text-renewal = { $product } のサブスクリプションが { $date } に更新され、カードに請求されました。
receipt-text-seller = { $buyer } が { $date } に { $product } を購入しました。
invoice-attached = 請求書 { $number } をこのメールに添付しています（{ $file }）。
view-purchase = ご購入内容を見る
downloads-ready = ファイルはカスタマーポータルからダウンロードできます。
download-files = ファイルをダウンロード
view-order = 注文を見る
your-purchase = ご購入内容
the-order = 注文
lost-this-email = このメールをなくしましたか？
your-tax-number = お客様の税番号：{ $number }

## お知らせ

open-portal = カスタマーポータルを開く
sign-in-subject = { $seller } でのご購入へのアクセス
sign-in-heading = サインインコード
sign-in-text = 次のコードで、{ $seller } のカスタマーポータルからご購入内容にアクセスできます。
code-expires = このコードの有効期限は { $minutes } 分で、1 回だけ使えます。
sign-in-ignore = お心当たりがない場合は、このメールを無視してください。コードがなければ誰もサインインできません。
renewal-failed-subject = { $product } のサブスクリプションのお支払いに失敗しました
renewal-failed-heading = 更新のお支払いに失敗しました
renewal-failed-text = { $product } の更新について、カードに請求できませんでした。
renewal-failed-text-amount = { $product } の更新（{ $amount }）について、カードに請求できませんでした。
retry-keys-until = { $retry } に再度お試しします。ライセンスキーは { $until } まで使えます。お支払いが完了すると、新しい期間も使えます。
retry-keys = { $retry } に再度お試しします。それまでライセンスキーは引き続き使えます。
gives-up = { $date } までにお支払いが完了しない場合、サブスクリプションは解約され、ライセンスキーは取り消されます。
recovery-lead = カスタマーポータルで、今すぐお支払いいただくか、カードを更新してください：
recovery-label = 今すぐ支払う、またはカードを更新する
recovery-until = このリンクは { $date } まで、1 回だけ使えます。アクセスは { $date } に停止します。
questions-reply = ご質問は、このメールに返信してください。
card-advice = カードに請求できることを確認するか、このメールに返信してご連絡ください。
trial-ending-subject = { $product } のトライアルがまもなく終了します
trial-ending-heading = トライアルがまもなく終了します
trial-ending-text = { $product } の無料トライアルは { $date } に終了します。その後サブスクリプションが始まり、カードに請求されます。
trial-ending-text-amount = { $product } の無料トライアルは { $date } に終了します。その後サブスクリプションが始まり、カードに { $amount } が請求されます。
trial-ending-keep = 継続される場合は何もする必要はありません。ライセンスキーは引き続き使えます。最初の請求の前にやめる場合は、その日までにカスタマーポータルでサブスクリプションを解約してください。
plan-changed-subject = サブスクリプションが { $product } に変更されました
plan-changed-heading = サブスクリプションが変更されました
plan-changed-text = サブスクリプションが { $product } に変更されました。
plan-renews-at = 期間ごとに { $amount } で更新されます。次回の更新は { $date } で、変更に応じて調整されます。
plan-renews-on = { $date } に更新されます。
plan-dropped-keys = 新しいプランに含まれない以前のプランのライセンスキーは使えなくなりました。
plan-keys-below = 新しいプランのライセンスキーは下記のとおりです。
canceled-subject = { $product } のサブスクリプションが解約されました
canceled-heading = サブスクリプションが解約されました
canceled-text = { $product } のサブスクリプションが解約されました。
canceled-until = { $date } までは有効で、ライセンスキーも使えます。今後請求されることはありません。
not-charged-again = 今後請求されることはありません。
ended-subject = { $product } のサブスクリプションが終了しました
ended-heading = サブスクリプションが終了しました
ended-text = { $product } のサブスクリプションが終了しました。
ended-keys = 下記のライセンスキーは使えなくなりました。
ended-again = 今後請求されることはありません。再度ご契約いただくには、販売者のサイトをご覧ください。
revoked-keys = 取り消されたライセンスキー
license-key = ライセンスキー
key-revoked-subject = ライセンスキーが取り消されました
key-disabled-subject = ライセンスキーが無効になりました
key-revoked-text = 販売者が下記のライセンスキーを取り消しました。このキーは検証されなくなります。
key-disabled-text = 販売者が下記のライセンスキーを無効にしました。このキーは検証されなくなります。
key-mistake = 誤りだと思われる場合は、このメールに返信してください。
refund-subject = { $product } の返金
refund-heading = 返金手続きを行いました
refund-text = { $product } のご購入について { $amount } を返金しました。
refund-text-full = { $product } のご購入について { $amount } を返金しました（ご購入の全額）。
refund-timing = ご利用の銀行により、5～10 営業日以内にカードに反映されます。
refund-keys = このご購入のライセンスキーは使えなくなりました。
resent-heading = ライセンスキー
resent-text = ライセンスキーの再送をご依頼いただきました。こちらです。
email-change-subject = 新しいメールアドレスの確認
email-change-heading = 新しいメールアドレスを確認してください
email-change-text = { $seller } でのご購入に { $email } を使うようリクエストがありました。確認するには、カスタマーポータルでこのコードを入力してください：
email-change-ignore = お心当たりがない場合は、このメールを無視してください。コードがなければ何も変わりません。
email-changed-subject = メールアドレスが変更されました
email-changed-heading = メールアドレスが変更されました
email-changed-text = { $seller } でのご購入のメールアドレスは { $email } になりました。今後、領収書とサインインコードはそちらに送られます。
email-changed-contact-at = この変更にお心当たりがない場合は、すぐに { $seller }（{ $support }）にご連絡ください。
email-changed-contact = この変更にお心当たりがない場合は、すぐに { $seller } にご連絡ください。

## クレジットノート

credit-note-subject = 請求書 { $invoice } のクレジットノート { $number }
credit-note-heading = クレジットノート { $number }
credit-note-text = { $date } に請求書 { $invoice }（{ $product }）のクレジットノート { $number } を発行しました。{ $amount } が返金されます。
credit-note-attached = クレジットノートをこのメールに添付しています（{ $file }）。
refunded-excluding-tax = 返金額（税抜）
total-refunded = 返金合計
