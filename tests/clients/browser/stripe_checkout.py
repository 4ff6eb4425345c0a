"""The hosted checkout page paying through Stripe.js, in a real browser (headless Chromium).

Run by tests/api/browser_stripe.rs against a server whose processor is Stripe, pointed at a
localstripe whose fake Stripe.js the page loads (`payments.stripe_js_url`), with:
  APPROVED_URL      a checkout of a one-time price with a license-key benefit
  DECLINED_URL      another of the same price: a card that is declined, then one that pays
  THREEDS_URL       another: a 3-D Secure card, authenticated
  THREEDS_FAIL_URL  another: a 3-D Secure card whose authentication fails, then one that pays
  SUBSCRIPTION_URL  a checkout of a monthly price
  TOLLGATE_URL      the server; ORG_ID the seller; STRIPE_JS_ORIGIN the fake's origin
  SCREENSHOT_DIR    where the screenshots go; CHROMIUM, CHROMEDRIVER the binaries
The buyer types the card into the card Element as a buyer does; what Stripe holds afterwards
is checked by the Rust test. Prints one line per check and ends with `N passed, M failed`.
"""

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from harness import (check, console_errors, env, fill, request, run, shoot, validate,
                     visible_text, wait)

APPROVED_URL = env("APPROVED_URL")
DECLINED_URL = env("DECLINED_URL")
THREEDS_URL = env("THREEDS_URL")
THREEDS_FAIL_URL = env("THREEDS_FAIL_URL")
SUBSCRIPTION_URL = env("SUBSCRIPTION_URL")
BASE = env("TOLLGATE_URL")
ORG_ID = env("ORG_ID")
STRIPE_JS_ORIGIN = env("STRIPE_JS_ORIGIN")

# Stripe's test cards, as localstripe knows them.
CARD_OK = "4242424242424242"
CARD_DECLINED = "4000000000000341"  # attaches, then fails to charge
CARD_3DS = "4000000000003220"  # 3-D Secure required
CARD_3DS_OTHER = "4000002760003184"  # 3-D Secure required

# The page's confirm, whose 400 `PaymentError` for a declined card Chromium logs.
CONFIRM = r"/v1/checkouts/client/[^/]+/confirm$"


def checkout_status(url):
    """The checkout's status through the API, by the client secret its page URL holds."""
    secret = url.rstrip("/").rsplit("/", 1)[-1]
    status, body = request("GET", f"{BASE}/v1/checkouts/client/{secret}")
    return body.get("status") if status == 200 and isinstance(body, dict) else (status, body)


def open_page(d, url, label):
    d.get(url)
    check(f"{label}: the page loads Stripe.js from the configured origin",
          d.execute_script(
              "return Array.from(document.scripts).some(s => s.src.startsWith(arguments[0]))",
              STRIPE_JS_ORIGIN))
    # Stripe.js mounts its card field into #card-element.
    wait(d).until(lambda _: d.find_elements(By.CSS_SELECTOR, "#card-element input"))
    check(f"{label}: the card Element is mounted",
          len(d.find_elements(By.CSS_SELECTOR, "#card-element input")) >= 4)


def card_input(d, field):
    return d.find_element(By.CSS_SELECTOR, f'#card-element input[placeholder="{field}"]')


def type_card(d, number):
    """Types a card into the Element, as a buyer does (each field cleared first)."""
    for field, value in (("number", number), ("exp_month", "12"), ("exp_year", "34"),
                         ("cvc", "123"), ("postal_code", "75001")):
        el = card_input(d, field)
        el.clear()
        el.send_keys(value)


def fill_buyer(d, email):
    fill(d, "customer_email", email)
    fill(d, "customer_name", "Ada Lovelace")
    country = d.find_elements(By.ID, "country")
    if country:
        Select(country[0]).select_by_value("FR")
        fill(d, "line1", "1 rue de Rivoli")
        fill(d, "postal_code", "75001")
        fill(d, "city", "Paris")


def pay(d):
    d.find_element(By.ID, "pay").click()


def pay_enabled(d):
    wait(d).until(lambda _: d.find_element(By.ID, "pay").is_enabled())


def confirmation_with_keys(d, label, amount):
    """On the confirmation page: the keys are shown (an `ACME-` one among them), and each
    validates."""
    wait(d).until(EC.url_contains("/confirmation"))
    # A payment still settling shows "processing" and refreshes itself.
    wait(d, 30).until(EC.visibility_of_element_located((By.CSS_SELECTOR, ".license-key")))
    keys = [e.text.strip() for e in d.find_elements(By.CSS_SELECTOR, ".license-key")]
    check(f"{label}: a license key is on the confirmation page",
          any(k.startswith("ACME-") for k in keys), keys)
    total = d.find_element(By.ID, "summary-total").text
    check(f"{label}: the amount paid is shown", total.startswith(amount), total)
    for key in keys:
        status, body = validate(BASE, key, ORG_ID)
        check(f"{label}: the key validates", status == 200 and body.get("status") == "granted",
              f"{status} {body}")
    return keys


def the_3ds_dialog(d):
    """localstripe's 3-D Secure dialog, standing in for the bank's."""
    return wait(d).until(EC.element_to_be_clickable(
        (By.XPATH, "//button[normalize-space()='Complete authentication']")))


def another_card_pays(d, label, shot):
    """After a failed payment shown under the card: the buyer, still on the page, pays
    with the approved card."""
    pay_enabled(d)
    check(f"{label}: still on the checkout page", "/confirmation" not in d.current_url,
          d.current_url)
    shoot(d, shot, focus="#card-error")
    type_card(d, CARD_OK)
    pay(d)
    confirmation_with_keys(d, f"{label}, then another card", "$25.00")


def approved(d):
    open_page(d, APPROVED_URL, "approved")
    check("approved: the button shows the total", d.find_element(By.ID, "pay").text == "Pay $25.00",
          d.find_element(By.ID, "pay").text)
    shoot(d, "stripe-checkout")
    # An empty card: Stripe.js refuses it before any request, next to the card field.
    fill_buyer(d, "ada@example.com")
    pay(d)
    text = visible_text(d, "#card-error")
    check("approved: an incomplete card is refused next to the field", "incomplete" in text, text)
    pay_enabled(d)
    # A number with a letter: the Element's own change event reports it as it is typed.
    card_input(d, "number").send_keys("4242x")
    text = visible_text(d, "#card-error")
    check("approved: an invalid number is reported while typing", "invalid" in text, text)
    type_card(d, CARD_OK)
    wait(d).until(lambda _: not d.find_element(By.ID, "card-error").is_displayed())
    check("approved: the error goes once the card is right",
          not d.find_element(By.ID, "card-error").is_displayed())
    shoot(d, "stripe-checkout-filled")
    pay(d)
    confirmation_with_keys(d, "approved", "$25.00")
    shoot(d, "stripe-confirmation")
    console_errors(d, "an approved card")


def declined(d):
    open_page(d, DECLINED_URL, "declined")
    fill_buyer(d, "grace@example.com")
    type_card(d, CARD_DECLINED)
    pay(d)
    text = visible_text(d, "#card-error")
    check("declined: Stripe's message is next to the card field", "Your card was declined" in text,
          text)
    check("declined: the checkout is open", checkout_status(DECLINED_URL) == "open",
          checkout_status(DECLINED_URL))
    another_card_pays(d, "declined", "stripe-declined")
    console_errors(d, "a declined card, then another", expected=[(CONFIRM, 400)])


def three_d_secure(d):
    open_page(d, THREEDS_URL, "3-D Secure")
    fill_buyer(d, "alan@example.com")
    type_card(d, CARD_3DS)
    pay(d)
    button = the_3ds_dialog(d)
    check("3-D Secure: the page asks for authentication", "/confirmation" not in d.current_url)
    check("3-D Secure: the checkout waits on the buyer", checkout_status(THREEDS_URL) == "confirmed",
          checkout_status(THREEDS_URL))
    check("3-D Secure: the page says it waits for the bank",
          "bank" in d.find_element(By.ID, "pay-status").text.lower(),
          d.find_element(By.ID, "pay-status").text)
    shoot(d, "stripe-3ds-dialog", focus="#pay")
    button.click()
    confirmation_with_keys(d, "3-D Secure", "$25.00")
    shoot(d, "stripe-3ds-confirmation")
    console_errors(d, "a 3-D Secure card, authenticated")


def three_d_secure_fails(d):
    open_page(d, THREEDS_FAIL_URL, "failed 3-D Secure")
    fill_buyer(d, "edsger@example.com")
    type_card(d, CARD_3DS_OTHER)
    pay(d)
    the_3ds_dialog(d)
    d.find_element(By.XPATH, "//button[normalize-space()='Fail authentication']").click()
    text = visible_text(d, "#card-error")
    check("failed 3-D Secure: a clear message next to the card field",
          "authenticate" in text and "not charged" in text, text)
    # Paying again right away, with a card that needs no authentication: the checkout is
    # reopened (whether Stripe's webhook has arrived yet or not) and paid.
    another_card_pays(d, "failed 3-D Secure", "stripe-3ds-failed")
    console_errors(d, "a failed 3-D Secure, then another card")


def subscription(d):
    open_page(d, SUBSCRIPTION_URL, "subscription")
    label = d.find_element(By.ID, "pay").text
    check("subscription: the button says subscribe", label.startswith("Subscribe $15.00"), label)
    fill_buyer(d, "barbara@example.com")
    type_card(d, CARD_OK)
    pay(d)
    confirmation_with_keys(d, "subscription", "$15.00")
    shoot(d, "stripe-subscription-confirmation")
    console_errors(d, "a subscription")


if __name__ == "__main__":
    run([approved, declined, three_d_secure, three_d_secure_fails, subscription])
