"""VAT on the hosted checkout page in a real browser (headless Chromium through chromedriver).

Run by tests/api/browser_tax.rs against a fresh server whose seller is established in Germany
with a VAT number and the EU One-Stop-Shop registration (prices include VAT, by location),
selling a $12.00 one-time product, with:
  CONSUMER_URL   a checkout for a German consumer
  BUSINESS_URL   a checkout for a French business
  US_URL         a checkout for a buyer in the United States
  SCREENSHOT_DIR where the screenshots go; CHROMIUM, CHROMEDRIVER the binaries
Prints one line per check and ends with `N passed, M failed`.
"""

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from harness import check, console_errors, env, fill, run, shoot, visible_text, wait

CONSUMER_URL = env("CONSUMER_URL")
BUSINESS_URL = env("BUSINESS_URL")
US_URL = env("US_URL")


def text(d, element_id):
    return d.find_element(By.ID, element_id).text


def wait_label(d, label):
    """Waits until the tax row reads `label` (the page asks for a new quote on a change)."""
    wait(d).until(lambda _: text(d, "summary-tax-label") == label)


def address(d, country, line1, postal_code, city):
    Select(d.find_element(By.ID, "country")).select_by_value(country)
    fill(d, "line1", line1)
    fill(d, "postal_code", postal_code)
    fill(d, "city", city)
    # Leaving the field sends its change.
    d.find_element(By.ID, "city").click()


def pay_and_confirm(d, name):
    d.find_element(By.ID, "pay").click()
    wait(d).until(EC.url_contains("/confirmation"))
    check(f"{name}: paying leads to the confirmation page", "/confirmation" in d.current_url,
          d.current_url)


def german_consumer(d):
    d.get(CONSUMER_URL)
    fill(d, "customer_email", "hans@example.de")
    fill(d, "customer_name", "Hans Müller")
    address(d, "DE", "Hauptstraße 1", "10115", "Berlin")
    wait_label(d, "Includes VAT 19%")
    check("a German consumer sees German VAT inside the price",
          text(d, "summary-tax-label") == "Includes VAT 19%", text(d, "summary-tax-label"))
    check("the tax row shows the VAT in the price", text(d, "summary-tax") == "$1.92",
          text(d, "summary-tax"))
    check("the total is the price", text(d, "summary-total") == "$12.00", text(d, "summary-total"))
    check("the button shows the total", text(d, "pay") == "Pay $12.00", text(d, "pay"))
    check("no business fields unless asked", not d.find_element(By.ID, "business").is_displayed())
    shoot(d, "consumer-de", focus="#row-tax")
    pay_and_confirm(d, "German consumer")
    check("the confirmation labels the VAT", text(d, "summary-tax-label") == "Includes VAT 19%",
          text(d, "summary-tax-label"))
    check("the confirmation shows the VAT", text(d, "summary-tax") == "$1.92", text(d, "summary-tax"))
    check("the confirmation shows the total", text(d, "summary-total") == "$12.00",
          text(d, "summary-total"))
    shoot(d, "consumer-de-confirmation")


def french_business(d):
    d.get(BUSINESS_URL)
    fill(d, "customer_email", "compta@acme.fr")
    fill(d, "customer_name", "Claire Dubois")
    address(d, "FR", "1 rue de Rivoli", "75001", "Paris")
    wait_label(d, "Includes VAT 20%")
    check("as a consumer, French VAT applies", text(d, "summary-tax") == "$2.00",
          text(d, "summary-tax"))
    d.find_element(By.ID, "is_business_customer").click()
    check("ticking business shows its fields", d.find_element(By.ID, "business").is_displayed())
    fill(d, "customer_billing_name", "Acme SAS")
    # A wrong check digit: refused next to the field.
    fill(d, "customer_tax_id", "FR40303265046")
    d.find_element(By.ID, "customer_billing_name").click()
    err = visible_text(d, "#err-customer_tax_id")
    check("an invalid VAT number is refused next to the field", "Invalid tax ID" in err, err)
    fill(d, "customer_tax_id", "FR40303265045")
    d.find_element(By.ID, "customer_billing_name").click()
    wait_label(d, "VAT reverse charge")
    check("a valid number of another member state is reverse-charged",
          text(d, "summary-tax-label") == "VAT reverse charge", text(d, "summary-tax-label"))
    check("no VAT is charged", text(d, "summary-tax") == "$0.00", text(d, "summary-tax"))
    check("the business pays the price", text(d, "summary-total") == "$12.00",
          text(d, "summary-total"))
    note = visible_text(d, "#tax-note")
    check("the page says why", "Reverse charge" in note, note)
    check("the invalid-number message is gone",
          not d.find_element(By.ID, "err-customer_tax_id").is_displayed())
    check("the number is no longer marked invalid",
          d.find_element(By.ID, "customer_tax_id").get_attribute("aria-invalid") != "true")
    shoot(d, "business-fr", focus="#business")
    pay_and_confirm(d, "French business")
    check("the confirmation says reverse charge",
          text(d, "summary-tax-label") == "VAT reverse charge", text(d, "summary-tax-label"))
    shoot(d, "business-fr-confirmation")
    console_errors(d, "the business checkout", expected=[(r"/v1/checkouts/client/[^/]+$", 422)])


def us_buyer(d):
    d.get(US_URL)
    fill(d, "customer_email", "ada@example.com")
    fill(d, "customer_name", "Ada Lovelace")
    Select(d.find_element(By.ID, "country")).select_by_value("US")
    Select(d.find_element(By.ID, "state-US")).select_by_value("NY")
    fill(d, "line1", "1 Main St")
    fill(d, "postal_code", "10001")
    fill(d, "city", "New York")
    d.find_element(By.ID, "customer_name").click()
    wait(d).until(lambda _: not d.find_element(By.ID, "row-tax").is_displayed())
    check("a US buyer sees no tax row", not d.find_element(By.ID, "row-tax").is_displayed())
    check("the US total is the price", text(d, "summary-total") == "$12.00",
          text(d, "summary-total"))
    shoot(d, "us-buyer")
    pay_and_confirm(d, "US buyer")


run([german_consumer, french_business, us_buyer])
