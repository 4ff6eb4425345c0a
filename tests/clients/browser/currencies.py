"""The hosted checkout page in euros and yen in a real browser (headless Chromium).

Run by tests/api/browser.rs against a fresh server selling a one-time product at $20.00,
€18.00 and ¥3,000, and a pay-what-you-want one in the same currencies, with:
  EUR_URL        a checkout in euros
  JPY_URL        a checkout in yen
  JPY_TIP_URL    a pay-what-you-want checkout in yen
  SCREENSHOT_DIR where the screenshots go; CHROMIUM, CHROMEDRIVER the binaries
Every amount is written in the checkout's currency (`€18.00`, `¥3,000`, no decimals for
yen), on the page and on the confirmation. Prints one line per check and ends with
`N passed, M failed`.
"""

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from harness import check, console_errors, env, fill, run, shoot, wait

EUR_URL = env("EUR_URL")
JPY_URL = env("JPY_URL")
JPY_TIP_URL = env("JPY_TIP_URL")


def text(d, element_id):
    return d.find_element(By.ID, element_id).text


def buyer(d, email):
    fill(d, "customer_email", email)
    fill(d, "customer_name", "Ada Lovelace")
    Select(d.find_element(By.ID, "country")).select_by_value("FR")
    d.find_element(By.ID, "customer_name").click()


def pay_and_confirm(d, name):
    d.find_element(By.ID, "pay").click()
    wait(d).until(EC.url_contains("/confirmation"))
    check(f"{name}: paying leads to the confirmation page", "/confirmation" in d.current_url,
          d.current_url)


def in_euros(d):
    d.get(EUR_URL)
    check("the price is in euros", text(d, "price") == "€18.00", text(d, "price"))
    check("the summary's price is in euros", text(d, "summary-amount") == "€18.00",
          text(d, "summary-amount"))
    check("the total is in euros", text(d, "summary-total") == "€18.00",
          text(d, "summary-total"))
    check("the button pays in euros", text(d, "pay") == "Pay €18.00", text(d, "pay"))
    buyer(d, "ada-eur@example.com")
    wait(d).until(lambda _: text(d, "summary-total") == "€18.00")
    shoot(d, "eur")
    pay_and_confirm(d, "euros")
    check("the confirmation's total is in euros", text(d, "summary-total") == "€18.00",
          text(d, "summary-total"))
    shoot(d, "eur-confirmation")
    console_errors(d, "the euro checkout")


def in_yen(d):
    d.get(JPY_URL)
    check("the price is in yen, without decimals", text(d, "price") == "¥3,000", text(d, "price"))
    check("the total is in yen", text(d, "summary-total") == "¥3,000", text(d, "summary-total"))
    check("the button pays in yen", text(d, "pay") == "Pay ¥3,000", text(d, "pay"))
    buyer(d, "ada-jpy@example.com")
    wait(d).until(lambda _: text(d, "summary-total") == "¥3,000")
    shoot(d, "jpy")
    pay_and_confirm(d, "yen")
    check("the confirmation's total is in yen", text(d, "summary-total") == "¥3,000",
          text(d, "summary-total"))
    check("the confirmation's price is in yen", text(d, "summary-amount") == "¥3,000",
          text(d, "summary-amount"))
    shoot(d, "jpy-confirmation")
    console_errors(d, "the yen checkout")


def custom_yen(d):
    d.get(JPY_TIP_URL)
    amount = d.find_element(By.ID, "amount")
    label = d.find_element(By.CSS_SELECTOR, "label[for=amount]").text
    check("the amount is asked in yen", "JPY" in label, label)
    check("whole yen only", amount.get_attribute("step") == "1", amount.get_attribute("step"))
    check("at least the currency's minimum", amount.get_attribute("min") == "80",
          amount.get_attribute("min"))
    check("the preset amount has no decimals", "." not in amount.get_attribute("value"),
          amount.get_attribute("value"))
    fill(d, "amount", "1500")
    d.find_element(By.ID, "customer_email").click()
    wait(d).until(lambda _: text(d, "summary-total") == "¥1,500")
    check("a typed amount is yen as typed", text(d, "summary-total") == "¥1,500",
          text(d, "summary-total"))
    check("the button pays it", text(d, "pay") == "Pay ¥1,500", text(d, "pay"))
    shoot(d, "jpy-custom", focus="#amount")
    console_errors(d, "the yen pay-what-you-want checkout")


run([in_euros, in_yen, custom_yen])
