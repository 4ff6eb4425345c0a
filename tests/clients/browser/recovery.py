"""A declined renewal the buyer fixes, in a real browser (headless Chromium).

Run by tests/api/browser_recovery.rs against a server whose processor is Stripe (localstripe
and its fake Stripe.js), with a subscription past due since its renewal was declined, and:
  RECOVER_URL       the one-use link of the "payment failed" e-mail
  SUBSCRIPTION_ID   that subscription; ORG_SLUG its seller's portal; ORG_ID the seller
  LICENSE_KEY       the subscription's key (in its grace while past due)
  TOLLGATE_URL      the server; STRIPE_JS_ORIGIN the fake Stripe.js's origin
  SCREENSHOT_DIR    where the screenshots go; CHROMIUM, CHROMEDRIVER the binaries
The buyer opens the link (signed in, on the subscription's page), adds a working card in
Stripe's card Element on the cards page, pays now with it, then looks at the plan page.
What Stripe holds, the mails and the events are checked by the Rust test. Prints one line
per check and ends with `N passed, M failed`.
"""

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from harness import check, console_errors, env, run, shoot, validate, wait

RECOVER_URL = env("RECOVER_URL")
SUBSCRIPTION_ID = env("SUBSCRIPTION_ID")
SLUG = env("ORG_SLUG")
ORG_ID = env("ORG_ID")
KEY = env("LICENSE_KEY")
BASE = env("TOLLGATE_URL")
STRIPE_JS_ORIGIN = env("STRIPE_JS_ORIGIN")

CARD_OK = "4242424242424242"
SUBSCRIPTION_PATH = f"/portal/{SLUG}/subscriptions/{SUBSCRIPTION_ID}"


def no_horizontal_scroll(d, label):
    width = d.execute_script("return document.documentElement.scrollWidth")
    inner = d.execute_script("return window.innerWidth")
    check(f"{label}: no horizontal scroll on a phone", width <= inner, f"{width} > {inner}")


def phone_check(d, label):
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 375, "height": 800, "deviceScaleFactor": 1, "mobile": True})
    no_horizontal_scroll(d, label)
    d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def the_mails_link_opens_the_past_due_subscription(d):
    status, body = validate(BASE, KEY, ORG_ID)
    check("the key validates in its grace before",
          status == 200 and body.get("grace_until") is not None, f"{status} {body}")
    d.get(RECOVER_URL)
    wait(d).until(EC.url_contains(SUBSCRIPTION_PATH))
    check("the link lands on the subscription", SUBSCRIPTION_PATH in d.current_url,
          d.current_url)
    failed = wait(d).until(EC.visibility_of_element_located((By.ID, "payment-failed"))).text
    check("the page says the payment failed and when access stops",
          "Payment failed on" in failed and "access stops on" in failed, failed)
    check("the amount due is shown",
          d.find_element(By.ID, "amount-due").text.startswith("$10.00"),
          d.find_element(By.ID, "amount-due").text)
    check("the status says a payment is due",
          "payment due" in d.find_element(By.ID, "subscription-status").text.lower(),
          d.find_element(By.ID, "subscription-status").text)
    shoot(d, "subscription-past-due", focus="#past-due")
    phone_check(d, "past-due subscription")
    console_errors(d, "the past-due subscription page")


def a_working_card_is_added_in_stripes_element(d):
    d.find_element(By.LINK_TEXT, "Add or manage cards").click()
    wait(d).until(EC.url_contains(f"/portal/{SLUG}/payment-methods"))
    check("the cards page loads Stripe.js from the configured origin",
          d.execute_script(
              "return Array.from(document.scripts).some(s => s.src.startsWith(arguments[0]))",
              STRIPE_JS_ORIGIN))
    wait(d).until(lambda _: d.find_elements(By.CSS_SELECTOR, "#card-element input"))
    check("the card Element is mounted",
          len(d.find_elements(By.CSS_SELECTOR, "#card-element input")) >= 4)
    listed = d.find_element(By.ID, "methods").text
    check("the declining card is listed", "0341" in listed, listed)
    shoot(d, "payment-methods", focus="#add-form")
    phone_check(d, "payment methods")
    for field, value in (("number", CARD_OK), ("exp_month", "12"), ("exp_year", "34"),
                         ("cvc", "123")):
        el = d.find_element(By.CSS_SELECTOR, f'#card-element input[placeholder="{field}"]')
        el.clear()
        el.send_keys(value)
    d.find_element(By.ID, "add").click()
    wait(d).until(EC.url_contains("done=added"))
    listed = d.find_element(By.ID, "methods").text
    check("the new card is listed", "4242" in listed, listed)
    default = d.find_elements(By.CSS_SELECTOR, ".method .badge")
    row = [e for e in d.find_elements(By.CSS_SELECTOR, ".method") if "4242" in e.text]
    check("the new card is the default", bool(row) and "Default" in row[0].text,
          [e.text for e in default])
    shoot(d, "payment-methods-added", focus="#methods")
    console_errors(d, "the cards page")


def the_renewal_is_paid_now(d):
    d.get(BASE + SUBSCRIPTION_PATH)
    radios = d.find_elements(By.CSS_SELECTOR, "#pay-form input[name=method_id]")
    chosen = [r for r in radios if r.is_selected()]
    label = chosen[0].find_element(By.XPATH, "..").text if chosen else ""
    check("the default card is the one chosen", "4242" in label, label)
    d.find_element(By.ID, "pay-now").click()
    wait(d, 30).until(EC.url_contains("done=paid"))
    status = d.find_element(By.ID, "subscription-status").text
    check("the subscription is active", status.lower() == "active", status)
    check("the past-due box is gone", not d.find_elements(By.ID, "payment-failed"))
    shoot(d, "subscription-paid")
    status, body = validate(BASE, KEY, ORG_ID)
    check("the key validates without grace_until",
          status == 200 and body.get("status") == "granted" and body.get("grace_until") is None,
          f"{status} {body}")
    console_errors(d, "the paid subscription page")


def the_plan_page_offers_the_other_plan(d):
    d.find_element(By.ID, "change-plan").click()
    wait(d).until(EC.url_contains(f"{SUBSCRIPTION_PATH}/plan"))
    text = d.find_element(By.TAG_NAME, "main").text
    check("the plan page lists the other plan", "Team" in text, text)
    check("the plan page says what is charged now", "now" in text.lower(), text)
    shoot(d, "plan")
    phone_check(d, "plan page")
    console_errors(d, "the plan page")


def the_account_page_shows_the_billing_details(d):
    d.get(f"{BASE}/portal/{SLUG}/account")
    text = d.find_element(By.TAG_NAME, "main").text
    check("the account page shows the buyer's e-mail", "recovery-browser.example" in text,
          text[:300])
    check("the account page has the e-mail change form",
          bool(d.find_elements(By.CSS_SELECTOR, "input[name=email]")))
    shoot(d, "account")
    phone_check(d, "account page")
    console_errors(d, "the account page")


def the_link_works_once(d):
    d.delete_all_cookies()
    d.get(RECOVER_URL)
    body = d.find_element(By.TAG_NAME, "body").text
    check("the link opened again is refused", "expired or was already used" in body, body[:300])
    shoot(d, "link-used")
    console_errors(d, "the used link", expected=((r"/recover/", 401),))


if __name__ == "__main__":
    run([
        the_mails_link_opens_the_past_due_subscription,
        a_working_card_is_added_in_stripes_element,
        the_renewal_is_paid_now,
        the_plan_page_offers_the_other_plan,
        the_account_page_shows_the_billing_details,
        the_link_works_once,
    ], stop_at_first_failure=True)
