"""The hosted checkout page in a real browser (headless Chromium through chromedriver).

Run by tests/api/browser.rs against a fresh server, with:
  CHECKOUT_URL   a checkout for a one-time fixed price with a license-key benefit
  DECLINE_URL    a second checkout of the same price
  TOLLGATE_URL   the server; ORG_ID the seller; DISCOUNT_CODE a fixed-amount code
  SCREENSHOT_DIR where the screenshots go; CHROMIUM, CHROMEDRIVER the binaries
Prints one line per check and ends with `N passed, M failed`.
"""

import json
import os
import sys
import traceback
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

WAIT = 15
PHONE = (390, 844)
DESKTOP = (1280, 900)

passed = 0
failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


def env(name):
    value = os.environ.get(name)
    if not value:
        print(f"missing environment variable {name}")
        print("0 passed, 1 failed")
        sys.exit(1)
    return value


CHECKOUT_URL = env("CHECKOUT_URL")
DECLINE_URL = env("DECLINE_URL")
BASE = env("TOLLGATE_URL")
ORG_ID = env("ORG_ID")
CODE = env("DISCOUNT_CODE")
SHOTS = env("SCREENSHOT_DIR")


def driver():
    options = webdriver.ChromeOptions()
    options.binary_location = env("CHROMIUM")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--disable-extensions", "--no-first-run", "--hide-scrollbars",
                f"--window-size={DESKTOP[0]},{DESKTOP[1]}"):
        options.add_argument(arg)
    d = webdriver.Chrome(service=Service(executable_path=env("CHROMEDRIVER")), options=options)
    d.set_page_load_timeout(WAIT)
    d.set_script_timeout(WAIT)
    return d


def viewport(d, size):
    """Sets the page's viewport (not the window) to `size`, phone emulation included."""
    width, height = size
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600,
    })


def shoot(d, name):
    """A viewport screenshot at the phone and the desktop size, and a full-page one of each."""
    for label, size in (("phone", PHONE), ("desktop", DESKTOP)):
        viewport(d, size)
        path = os.path.join(SHOTS, f"{name}-{label}.png")
        d.save_screenshot(path)
        full = d.execute_script("return document.documentElement.scrollHeight")
        viewport(d, (size[0], max(size[1], int(full))))
        d.save_screenshot(os.path.join(SHOTS, f"{name}-{label}-full.png"))
        check(f"screenshot {name} {label}", os.path.getsize(path) > 1000, path)
    viewport(d, DESKTOP)


def wait(d):
    return WebDriverWait(d, WAIT)


def visible_text(d, css):
    el = wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, css)))
    return el.text


def fill(d, element_id, value):
    el = d.find_element(By.ID, element_id)
    el.clear()
    el.send_keys(value)


def fill_buyer(d, email):
    fill(d, "customer_email", email)
    fill(d, "customer_name", "Ada Lovelace")
    Select(d.find_element(By.ID, "country")).select_by_value("FR")
    fill(d, "line1", "1 rue de Rivoli")
    fill(d, "postal_code", "75001")
    fill(d, "city", "Paris")


def validate(key):
    body = json.dumps({"key": key, "organization_id": ORG_ID}).encode()
    req = urllib.request.Request(
        f"{BASE}/v1/customer-portal/license-keys/validate", data=body, method="POST",
        headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=WAIT) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


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

    status, body = validate(key)
    check("the key validates", status == 200, f"{status} {body}")
    check("the key is granted", isinstance(body, dict) and body.get("status") == "granted", body)

    # Coming back to the checkout page after paying leads to the confirmation again.
    d.get(CHECKOUT_URL)
    check("a paid checkout's page leads to the confirmation", "/confirmation" in d.current_url,
          d.current_url)
    # The copy button works (clipboard may be refused headless; the label says so).
    d.find_element(By.CSS_SELECTOR, "button.copy").click()


def main():
    os.makedirs(SHOTS, exist_ok=True)
    d = driver()
    try:
        for case in (declined_card, purchase):
            try:
                case(d)
            except Exception:  # noqa: BLE001 - one failed case must not hide the others
                global failed
                failed += 1
                print(f"FAIL {case.__name__} raised:\n{traceback.format_exc()}")
                try:
                    d.save_screenshot(os.path.join(SHOTS, f"error-{case.__name__}.png"))
                    print(f"page at failure: {d.current_url}")
                except Exception:  # noqa: BLE001
                    pass
    finally:
        d.quit()
    print(f"screenshots: {SHOTS}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
