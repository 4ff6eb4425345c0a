"""Stripe's Payment Element on the hosted checkout, in a real browser (headless Chromium).

Run by tests/api/browser_payments.rs against a server whose processor is Stripe, pointed at
a localstripe whose fake Stripe.js has the Payment Element (tests/clients/stripe), with:
  CARD_URL       a checkout of a one-time price with a license-key benefit: paid by card
  IDEAL_URL      another: paid with iDEAL, a redirect to the (fake) bank and back
  SEPA_OK_URL    another: SEPA Direct Debit, processing, then settled as succeeded
  SEPA_FAIL_URL  another: SEPA Direct Debit, processing, then failed
  TOLLGATE_URL   the server; ORG_ID the seller; STRIPE_JS_ORIGIN the fake's origin
  LOCALSTRIPE_URL, LOCALSTRIPE_KEY  the fake and its secret key: a debit is settled there
                 (`POST /_tollgate/settle/{pi}`), which sends Tollgate Stripe's signed event
  SCREENSHOT_DIR where the screenshots go; CHROMIUM, CHROMEDRIVER the binaries
Prints one line per check and ends with `N passed, M failed`.
"""

from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from harness import (check, console_errors, env, fill, request, run, shoot, validate, wait)

CARD_URL = env("CARD_URL")
IDEAL_URL = env("IDEAL_URL")
SEPA_OK_URL = env("SEPA_OK_URL")
SEPA_FAIL_URL = env("SEPA_FAIL_URL")
BASE = env("TOLLGATE_URL")
ORG_ID = env("ORG_ID")
STRIPE_JS_ORIGIN = env("STRIPE_JS_ORIGIN")
LOCALSTRIPE_URL = env("LOCALSTRIPE_URL")
LOCALSTRIPE_KEY = env("LOCALSTRIPE_KEY")

CARD_OK = "4242424242424242"
# Stripe's test IBAN whose debit succeeds (the fake holds every debit until it is settled).
IBAN = "AT611904300234573201"
# A debit settles in days; a checkout waiting on one is confirmed until then.
SETTLE_WAIT = 30


def secret_of(url):
    return url.rstrip("/").rsplit("/", 1)[-1]


def checkout(url):
    """The checkout through the API, by the client secret its page URL holds."""
    status, body = request("GET", f"{BASE}/v1/checkouts/client/{secret_of(url)}")
    return body if status == 200 and isinstance(body, dict) else {"status": (status, body)}


def open_page(d, url, label):
    d.get(url)
    check(f"{label}: the page loads Stripe.js from the configured origin",
          d.execute_script(
              "return Array.from(document.scripts).some(s => s.src.startsWith(arguments[0]))",
              STRIPE_JS_ORIGIN))
    wait(d).until(lambda _: d.find_elements(By.CSS_SELECTOR, "#card-element [role=tab]"))
    tabs = [t.text for t in d.find_elements(By.CSS_SELECTOR, "#card-element [role=tab]")]
    check(f"{label}: the Payment Element offers card, iDEAL and SEPA Debit",
          tabs == ["Card", "iDEAL", "SEPA Debit"], tabs)


def choose(d, method):
    d.find_element(By.CSS_SELECTOR, f'#card-element [role=tab][data-method="{method}"]').click()
    wait(d).until(lambda _: d.find_element(
        By.CSS_SELECTOR, f'#card-element [role=tabpanel][data-method="{method}"]').is_displayed())


def remembered(d, url, method):
    """Waits until the checkout holds the method the buyer chose (`payment_method_type`)."""
    try:
        wait(d).until(lambda _: checkout(url).get("payment_method_type") == method)
        return True
    except TimeoutException:
        return False


def fill_buyer(d, email, name="Ada Lovelace"):
    fill(d, "customer_email", email)
    fill(d, "customer_name", name)
    country = d.find_elements(By.ID, "country")
    if country:
        Select(country[0]).select_by_value("NL")
        fill(d, "line1", "Dam 1")
        fill(d, "postal_code", "1012 JS")
        fill(d, "city", "Amsterdam")


def pay(d):
    d.find_element(By.ID, "pay").click()


def keys_on_confirmation(d, label, seconds=SETTLE_WAIT):
    wait(d, seconds).until(EC.visibility_of_element_located((By.CSS_SELECTOR, ".license-key")))
    keys = [e.text.strip() for e in d.find_elements(By.CSS_SELECTOR, ".license-key")]
    check(f"{label}: a license key is on the confirmation page",
          any(k.startswith("ACME-") for k in keys), keys)
    for key in keys:
        status, body = validate(BASE, key, ORG_ID)
        check(f"{label}: the key validates", status == 200 and body.get("status") == "granted",
              f"{status} {body}")
    return keys


def settle(intent, outcome):
    """The bank's answer to a debit, days later: localstripe settles it and sends Tollgate
    Stripe's signed event."""
    status, body = request("POST", f"{LOCALSTRIPE_URL}/_tollgate/settle/{intent}",
                           {"outcome": outcome},
                           headers={"Authorization": f"Bearer {LOCALSTRIPE_KEY}"})
    check(f"localstripe settles {intent} as {outcome}", status == 200, f"{status} {body}")


def card(d):
    open_page(d, CARD_URL, "card")
    shoot(d, "payment-element-card", focus="#card-element")
    fill_buyer(d, "ada@example.com")
    # An empty card: the Element refuses it at submit, next to the field, with no request.
    pay(d)
    text = wait(d).until(EC.visibility_of_element_located((By.ID, "card-error"))).text
    check("card: an incomplete card is refused next to the Element", "incomplete" in text, text)
    wait(d).until(lambda _: d.find_element(By.ID, "pay").is_enabled())
    for field, value in (("number", CARD_OK), ("exp_month", "12"), ("exp_year", "34"),
                         ("cvc", "123"), ("postal_code", "1012")):
        el = d.find_element(By.CSS_SELECTOR, f'#card-element input[placeholder="{field}"]')
        el.clear()
        el.send_keys(value)
    check("card: the checkout remembers the method chosen", remembered(d, CARD_URL, "card"),
          checkout(CARD_URL).get("payment_method_type"))
    pay(d)
    wait(d).until(EC.url_contains("/confirmation"))
    keys_on_confirmation(d, "card")
    c = checkout(CARD_URL)
    check("card: the checkout succeeded", c.get("status") == "succeeded", c.get("status"))
    shoot(d, "payment-element-card-paid")
    console_errors(d, "a card through the Payment Element")


def ideal(d):
    open_page(d, IDEAL_URL, "iDEAL")
    fill_buyer(d, "grace@example.com", "Grace Hopper")
    choose(d, "ideal")
    Select(d.find_element(By.CSS_SELECTOR, '#card-element select[name="ideal_bank"]')) \
        .select_by_value("rabobank")
    check("iDEAL: the checkout remembers the method chosen", remembered(d, IDEAL_URL, "ideal"),
          checkout(IDEAL_URL).get("payment_method_type"))
    shoot(d, "payment-element-ideal", focus="#card-element")
    pay(d)
    # The bank's page (localstripe's stand-in), on the bank's origin.
    button = wait(d).until(EC.element_to_be_clickable((By.ID, "authorize")))
    check("iDEAL: the buyer is at the bank", d.current_url.startswith(LOCALSTRIPE_URL),
          d.current_url)
    c = checkout(IDEAL_URL)
    check("iDEAL: the checkout waits on the bank",
          c.get("status") == "confirmed"
          and c.get("payment_processor_metadata", {}).get("intent_status") == "requires_action",
          c)
    shoot(d, "payment-bank-page")
    button.click()
    # Back on the checkout's confirmation page, with Stripe's redirect parameters.
    wait(d).until(EC.url_contains("/confirmation"))
    url = d.current_url
    check("iDEAL: back on the checkout's confirmation page",
          url.startswith(f"{BASE}/checkout/{secret_of(IDEAL_URL)}/confirmation?"), url)
    check("iDEAL: with Stripe's redirect parameters",
          "payment_intent=pi_" in url and "redirect_status=succeeded" in url, url)
    keys_on_confirmation(d, "iDEAL")
    c = checkout(IDEAL_URL)
    check("iDEAL: the checkout succeeded", c.get("status") == "succeeded", c.get("status"))
    shoot(d, "payment-ideal-paid")
    console_errors(d, "iDEAL through the bank's page")


def sepa_confirmed(d, url, email, label):
    """Pays `url` by SEPA Direct Debit; returns the intent once the page says it is
    processing."""
    open_page(d, url, label)
    fill_buyer(d, email, "Ada Lovelace")
    choose(d, "sepa_debit")
    iban = d.find_element(By.CSS_SELECTOR, '#card-element input[name="iban"]')
    iban.send_keys("AT61 1904")
    pay(d)
    text = wait(d).until(EC.visibility_of_element_located((By.ID, "card-error"))).text
    check(f"{label}: an incomplete IBAN is refused next to the Element", "IBAN" in text, text)
    wait(d).until(lambda _: d.find_element(By.ID, "pay").is_enabled())
    iban.clear()
    iban.send_keys(IBAN)
    shoot(d, f"payment-element-{label}", focus="#card-element")
    pay(d)
    wait(d).until(EC.url_contains("/confirmation"))
    wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, ".spinner")))
    heading = d.find_element(By.TAG_NAME, "h1").text
    check(f"{label}: the confirmation page says the payment is processing",
          "Processing" in heading, heading)
    c = checkout(url)
    meta = c.get("payment_processor_metadata", {})
    check(f"{label}: the checkout stays confirmed while the debit is processing",
          c.get("status") == "confirmed" and meta.get("intent_status") == "processing", c)
    check(f"{label}: no license key is shown while processing",
          not d.find_elements(By.CSS_SELECTOR, ".license-key"))
    return meta.get("intent_id")


def sepa_succeeds(d):
    intent = sepa_confirmed(d, SEPA_OK_URL, "alan@example.com", "sepa")
    shoot(d, "payment-processing")
    settle(intent, "succeeded")
    # The page refreshes itself until the event has settled the checkout.
    keys_on_confirmation(d, "sepa, succeeded")
    c = checkout(SEPA_OK_URL)
    check("sepa: the checkout succeeded once the debit did", c.get("status") == "succeeded",
          c.get("status"))
    shoot(d, "payment-sepa-paid")
    console_errors(d, "SEPA Direct Debit, settled")


def sepa_fails(d):
    intent = sepa_confirmed(d, SEPA_FAIL_URL, "edsger@example.com", "sepa-failing")
    settle(intent, "failed")
    # The page refreshes itself until the event has settled the checkout.
    try:
        wait(d, SETTLE_WAIT).until(
            lambda _: "failed" in d.find_element(By.TAG_NAME, "h1").text.lower())
    except TimeoutException:
        pass
    heading = d.find_element(By.TAG_NAME, "h1").text
    check("sepa-failing: the confirmation page says the payment failed",
          "failed" in heading.lower(), heading)
    c = checkout(SEPA_FAIL_URL)
    check("sepa-failing: the checkout failed", c.get("status") == "failed", c.get("status"))
    check("sepa-failing: no license key is shown",
          not d.find_elements(By.CSS_SELECTOR, ".license-key"))
    shoot(d, "payment-sepa-failed")
    console_errors(d, "SEPA Direct Debit, failed")


if __name__ == "__main__":
    run([card, ideal, sepa_succeeds, sepa_fails])
