"""The hosted checkout page in a real browser (headless Chromium through chromedriver).

Run by tests/api/browser.rs against a fresh server, with:
  CHECKOUT_URL   a checkout for a one-time fixed price with a license-key benefit
  DECLINE_URL    a second checkout of the same price
  SEATS_URL      a checkout of a monthly seat-based price: 1-4 seats at $10.00, 5-10 at $8.00
  TOLLGATE_URL   the server; ORG_ID the seller; DISCOUNT_CODE a fixed-amount code
  SCREENSHOT_DIR where the screenshots go; CHROMIUM, CHROMEDRIVER the binaries
Prints one line per check and ends with `N passed, M failed`.
"""

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from harness import check, console_errors, env, fill, run, shoot, validate, visible_text, wait

CHECKOUT_URL = env("CHECKOUT_URL")
DECLINE_URL = env("DECLINE_URL")
SEATS_URL = env("SEATS_URL")
BASE = env("TOLLGATE_URL")
ORG_ID = env("ORG_ID")
CODE = env("DISCOUNT_CODE")

# The page's calls whose errors (the API's 422 and 400, shown in place) Chromium logs.
CONFIRM = r"/v1/checkouts/client/[^/]+/confirm$"
CHECKOUT = r"/v1/checkouts/client/[^/]+$"


def fill_buyer(d, email):
    fill(d, "customer_email", email)
    fill(d, "customer_name", "Ada Lovelace")
    Select(d.find_element(By.ID, "country")).select_by_value("FR")
    fill(d, "line1", "1 rue de Rivoli")
    fill(d, "postal_code", "75001")
    fill(d, "city", "Paris")


def declined_card(d):
    d.get(DECLINE_URL)
    check("the page shows the test card field", d.find_element(By.ID, "test-card").is_displayed())
    # An empty e-mail: the API's 422 is shown next to the field.
    fill_buyer(d, "x")
    d.find_element(By.ID, "customer_email").clear()
    d.find_element(By.ID, "pay").click()
    text = visible_text(d, "#err-customer_email")
    check("a missing e-mail is shown next to the field", len(text) > 0, text)
    check("the field is marked invalid",
          d.find_element(By.ID, "customer_email").get_attribute("aria-invalid") == "true")
    wait(d).until(lambda _: d.find_element(By.ID, "pay").is_enabled())
    # A declined card: its message next to the card field.
    fill(d, "customer_email", "declined@example.com")
    fill(d, "test-card", "tok_decline_insufficient_funds")
    d.find_element(By.ID, "pay").click()
    text = visible_text(d, "#card-error")
    check("a declined card is shown next to the card field", "declined" in text.lower(), text)
    check("the e-mail error is gone", not d.find_element(By.ID, "err-customer_email").is_displayed())
    wait(d).until(lambda _: d.find_element(By.ID, "pay").is_enabled())
    check("the buyer can try again", d.find_element(By.ID, "pay").is_enabled())
    check("still on the checkout page", "/confirmation" not in d.current_url, d.current_url)
    console_errors(d, "the checkout page with errors", expected=[(CONFIRM, 422), (CONFIRM, 400)])


def purchase(d):
    d.get(CHECKOUT_URL)
    check("the page has a title", "Ebook" in d.title, d.title)
    check("the product is shown", d.find_element(By.ID, "product-name").text == "Ebook")
    total = d.find_element(By.ID, "summary-total").text
    check("the total is the price", total == "$25.00", total)
    check("the button shows the total", d.find_element(By.ID, "pay").text == "Pay $25.00",
          d.find_element(By.ID, "pay").text)
    shoot(d, "checkout")

    # A wrong code: an inline message, nothing changes.
    fill(d, "discount_code", "NOT-A-CODE")
    d.find_element(By.ID, "apply-discount").click()
    text = visible_text(d, "#err-discount_code")
    check("an unknown code is refused inline", len(text) > 0, text)
    check("the total is unchanged", d.find_element(By.ID, "summary-total").text == "$25.00")

    fill(d, "discount_code", CODE)
    d.find_element(By.ID, "apply-discount").click()
    wait(d).until(lambda _: d.find_element(By.ID, "summary-total").text != "$25.00")
    total = d.find_element(By.ID, "summary-total").text
    check("the code lowers the total", total == "$20.00", total)
    check("the discount is shown", d.find_element(By.ID, "summary-discount").text == "-$5.00",
          d.find_element(By.ID, "summary-discount").text)
    check("the subtotal is shown", d.find_element(By.ID, "summary-subtotal").text == "$20.00")
    check("the button follows", d.find_element(By.ID, "pay").text == "Pay $20.00",
          d.find_element(By.ID, "pay").text)
    check("the code error is gone", not d.find_element(By.ID, "err-discount_code").is_displayed())

    fill_buyer(d, "ada@example.com")
    check("the card is prefilled", d.find_element(By.ID, "test-card").get_attribute("value") == "tok_visa")
    shoot(d, "checkout-filled")
    button = d.find_element(By.ID, "pay")
    button.click()
    # A second click while the first is pending is ignored (the button is disabled).
    try:
        button.click()
    except Exception:  # noqa: BLE001 - the page may already be gone
        pass
    wait(d).until(EC.url_contains("/confirmation"))
    check("paying leads to the confirmation page", "/confirmation" in d.current_url, d.current_url)
    key = visible_text(d, ".license-key").strip()
    check("a license key is shown", key.startswith("ACME-"), key)
    summary = d.find_element(By.ID, "summary-total").text
    check("the amount paid is shown", summary == "$20.00", summary)
    check("a copy button is there", d.find_element(By.CSS_SELECTOR, "button.copy").is_displayed())
    shoot(d, "confirmation")

    status, body = validate(BASE, key, ORG_ID)
    check("the key validates", status == 200, f"{status} {body}")
    check("the key is granted", isinstance(body, dict) and body.get("status") == "granted", body)

    # Coming back to the checkout page after paying leads to the confirmation again.
    d.get(CHECKOUT_URL)
    check("a paid checkout's page leads to the confirmation", "/confirmation" in d.current_url,
          d.current_url)
    # The copy button works (clipboard may be refused headless; the label says so).
    d.find_element(By.CSS_SELECTOR, "button.copy").click()

    # Lost the receipt later: the page that sends the keys again.
    d.find_element(By.ID, "resend-link").click()
    wait(d).until(EC.url_contains("/license-keys/resend"))
    check("the resend page names the seller", "Get your license keys again" in d.title
          or "Get your license keys again" in d.find_element(By.TAG_NAME, "h1").text)
    fill(d, "email", "ada@example.com")
    shoot(d, "resend")
    d.find_element(By.ID, "send").click()
    status = visible_text(d, "#status")
    check("the resend page answers without saying who bought", "we have sent them" in status, status)
    shoot(d, "resend-sent")
    console_errors(d, "the checkout and confirmation pages", expected=[(CHECKOUT, 422)])


def seats_error(d, typed, expected):
    """Types `typed` as the seat count and asks for the update: the message next to the
    field contains `expected`; the total is unchanged."""
    fill(d, "seats", typed)
    d.find_element(By.ID, "update-seats").click()
    wait(d).until(lambda _: expected in d.find_element(By.ID, "err-seats").text)
    text = d.find_element(By.ID, "err-seats").text
    check(f"{typed!r} seats is refused next to the field", d.find_element(By.ID, "err-seats")
          .is_displayed() and expected in text, text)
    check(f"the field is marked invalid after {typed!r}",
          d.find_element(By.ID, "seats").get_attribute("aria-invalid") == "true")
    total = d.find_element(By.ID, "summary-total").text
    check(f"the total is unchanged after {typed!r}", total == "$48.00/month", total)


def seats(d):
    d.get(SEATS_URL)
    price = d.find_element(By.ID, "price")
    check("the per-seat price is shown", price.is_displayed() and price.text
          == "$10.00 per seat/month", price.text)
    box = d.find_element(By.ID, "seats")
    check("the seats input is shown", box.is_displayed())
    check("the seats input is bounded by the tiers",
          (box.get_attribute("min"), box.get_attribute("max"), box.get_attribute("value"))
          == ("1", "10", "1"), (box.get_attribute("min"), box.get_attribute("max")))
    check("the tiers are listed", d.find_element(By.ID, "seat-tiers").is_displayed())
    total = d.find_element(By.ID, "summary-total").text
    check("the total is one seat", total == "$10.00/month", total)
    shoot(d, "checkout-seats", focus="#seats")

    fill(d, "seats", "6")
    d.find_element(By.ID, "update-seats").click()
    wait(d).until(lambda _: d.find_element(By.ID, "summary-total").text == "$48.00/month")
    check("six seats cost $48.00 a month", d.find_element(By.ID, "summary-total").text
          == "$48.00/month", d.find_element(By.ID, "summary-total").text)
    check("the per-seat price follows the tier",
          d.find_element(By.ID, "price").text == "$8.00 per seat/month",
          d.find_element(By.ID, "price").text)
    check("the summary counts the seats", d.find_element(By.ID, "summary-seats").text == "6")
    current = d.find_element(By.CSS_SELECTOR, "#seat-tiers li.current").text
    check("the tier of six is marked", current.startswith("5–10 seats"), current)
    check("the button follows", d.find_element(By.ID, "pay").text == "Subscribe $48.00/month",
          d.find_element(By.ID, "pay").text)
    check("no seats error is shown", not d.find_element(By.ID, "err-seats").is_displayed())

    seats_error(d, "0", "greater than or equal to 1")
    seats_error(d, "11", "less than or equal to 10")
    seats_error(d, "2.5", "Enter a whole number of seats.")
    shoot(d, "checkout-seats-error", focus="#seats")

    # Paying sends the count: the confirmation's total is six seats' (tax may be added).
    fill(d, "seats", "6")
    d.find_element(By.ID, "update-seats").click()
    wait(d).until(lambda _: not d.find_element(By.ID, "err-seats").is_displayed())
    fill_buyer(d, "team@example.com")
    d.find_element(By.ID, "pay").click()
    wait(d).until(EC.url_contains("/confirmation"))
    check("paying for seats leads to the confirmation", "/confirmation" in d.current_url,
          d.current_url)
    summary = d.find_element(By.ID, "summary-total").text
    check("the amount paid is six seats'", summary.startswith("$48.00"), summary)
    console_errors(d, "the seats", expected=[(CHECKOUT, 422)])


if __name__ == "__main__":
    run([declined_card, purchase, seats])
