"""The customer portal in a real browser (headless Chromium through chromedriver).

Run by tests/api/browser_portal.rs against a fresh server that mails through aiosmtpd, with:
  TOLLGATE_URL       the server; ORG_ID, ORG_SLUG the seller ("Acme Tools")
  APP_CHECKOUT_URL   a checkout of "Desktop App" ($49, one time, a license key allowing two
                     activations the customer may manage)
  SYNC_CHECKOUT_URL  a checkout of "Cloud Sync" ($9 a month)
  BUYER_EMAIL        the buyer's address
  MAILBOX_URL        GET {MAILBOX_URL}/messages: what the SMTP server received, as JSON
  SCREENSHOT_DIR where the screenshots go; CHROMIUM, CHROMEDRIVER the binaries
Prints one line per check and ends with `N passed, M failed`.
"""

import re
import time
import urllib.parse

from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from harness import (DESKTOP, check, console_errors, env, fill, request, run, shoot, validate,
                     viewport, visible_text, wait)

BASE = env("TOLLGATE_URL")
ORG_ID = env("ORG_ID")
SLUG = env("ORG_SLUG")
APP_CHECKOUT_URL = env("APP_CHECKOUT_URL")
SYNC_CHECKOUT_URL = env("SYNC_CHECKOUT_URL")
BUYER = env("BUYER_EMAIL")
MAILBOX = env("MAILBOX_URL")
PORTAL = f"{BASE}/portal/{SLUG}"
# The narrowest phone the pages are made for.
NARROW = (375, 812)
# The code form's answer to a wrong code (the page shows it; Chromium logs the status).
SESSION_401 = (r"/portal/[^/]+/session$", 401)

# What the steps learn, for the later ones.
story = {}


# ---------------------------------------------------------------------------------------
# Helpers

def replaced(old):
    """A wait condition: `old` (an element of the page before a navigation) is gone."""

    def gone(_driver):
        try:
            old.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as e:
            if "does not belong to the document" in str(e):
                return True
            raise

    return gone


def click_and_wait(d, element):
    """Clicks `element` (a link or a submit button) and waits for the next page."""
    old = d.find_element(By.TAG_NAME, "html")
    element.click()
    wait(d).until(replaced(old))


def path(d):
    return urllib.parse.urlsplit(d.current_url).path


def text(d, css):
    return d.find_element(By.CSS_SELECTOR, css).text.strip()


def fits_a_phone(d, name):
    """At 375 px, nothing to scroll sideways."""
    viewport(d, NARROW)
    scroll, inner = d.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth]")
    check(f"{name}: no horizontal scroll at 375 px", scroll <= NARROW[0] + 1 and scroll <= inner + 1,
          f"scrollWidth {scroll}, innerWidth {inner}")
    viewport(d, DESKTOP)


def page(d, name, focus=None):
    """Screenshots at phone and desktop widths, the 375 px check, no console error."""
    fits_a_phone(d, name)
    shoot(d, f"portal-{name}", focus=focus)
    console_errors(d, name)


def sign_in_codes():
    """The sign-in codes mailed to the buyer, oldest first."""
    status, messages = request("GET", f"{MAILBOX}/messages")
    if status != 200 or not isinstance(messages, list):
        return []
    codes = []
    for m in messages:
        headers = m.get("headers") or {}
        if BUYER not in (headers.get("To") or "") or \
                not (headers.get("Subject") or "").startswith("Access your"):
            continue
        for line in (m.get("text") or "").splitlines():
            line = line.strip()
            if re.fullmatch(r"[A-Z0-9]{6}", line):
                codes.append(line)
                break
    return codes


def wait_for_code(seen):
    """Waits (bounded) for a code mailed after the first `seen` ones."""
    deadline = time.time() + 30
    while time.time() < deadline:
        codes = sign_in_codes()
        if len(codes) > seen:
            return codes[-1]
        time.sleep(0.2)
    return None


def activate(key, label):
    return request("POST", f"{BASE}/v1/customer-portal/license-keys/activate",
                   {"key": key, "organization_id": ORG_ID, "label": label,
                    "meta": {"hostname": f"{label}.local"}})


def fill_buyer(d):
    fill(d, "customer_email", BUYER)
    fill(d, "customer_name", "Ada Lovelace")
    Select(d.find_element(By.ID, "country")).select_by_value("FR")
    fill(d, "line1", "1 rue de Rivoli")
    fill(d, "postal_code", "75001")
    fill(d, "city", "Paris")


def pay(d, url, product):
    d.get(url)
    check(f"the checkout sells {product}", d.find_element(By.ID, "product-name").text == product,
          d.find_element(By.ID, "product-name").text)
    fill_buyer(d)
    d.find_element(By.ID, "pay").click()
    wait(d).until(EC.url_contains("/confirmation"))
    check(f"paying for {product} leads to the confirmation", "/confirmation" in d.current_url,
          d.current_url)


def key_page(d):
    d.get(f"{PORTAL}/license-keys/{story['key_id']}")
    wait(d).until(EC.presence_of_element_located((By.ID, "license-key")))


# ---------------------------------------------------------------------------------------
# The story

def purchase(d):
    pay(d, APP_CHECKOUT_URL, "Desktop App")
    key = visible_text(d, ".license-key").strip()
    check("the confirmation shows the key", key.startswith("ACME-"), key)
    story["key"] = key
    pay(d, SYNC_CHECKOUT_URL, "Cloud Sync")
    console_errors(d, "the checkout pages")
    # The program on two computers.
    ids = {}
    for label in ("laptop", "desktop"):
        status, body = activate(key, label)
        check(f"the key activates on the {label}", status == 200, f"{status} {body}")
        ids[label] = body.get("id") if isinstance(body, dict) else None
    status, body = activate(key, "tablet")
    check("a third activation is refused (limit 2)", status == 403, f"{status} {body}")
    story["activations"] = ids


def sign_in(d):
    d.get(PORTAL)
    check("the sign-in page names the seller",
          "Your purchases from Acme Tools" in text(d, "h1"), text(d, "h1"))
    check("the seller's name is in the header", text(d, "header.seller").endswith("Acme Tools"),
          text(d, "header.seller"))
    check("the e-mail field has a label",
          d.find_element(By.CSS_SELECTOR, "label[for=email]").text.strip() == "E-mail")
    page(d, "sign-in")
    seen = len(sign_in_codes())
    fill(d, "email", BUYER)
    click_and_wait(d, d.find_element(By.ID, "send-code"))
    notice = text(d, "#notice")
    check("the answer does not say whether the address bought",
          notice.startswith(f"If {BUYER} bought from Acme Tools"), notice)
    check("the code form keeps the address",
          d.find_element(By.CSS_SELECTOR, "input[name=email]").get_attribute("value") == BUYER)
    page(d, "code")
    code = wait_for_code(seen)
    check("the code arrives by e-mail", code is not None, sign_in_codes())

    # A wrong code first: the form again, with the error next to the field.
    fill(d, "code", "ZZZZZZ" if code != "ZZZZZZ" else "YYYYYY")
    click_and_wait(d, d.find_element(By.ID, "sign-in"))
    error = visible_text(d, "#err-code")
    check("a wrong code is refused in place", "wrong" in error, error)
    check("the field is marked invalid",
          d.find_element(By.ID, "code").get_attribute("aria-invalid") == "true")
    fits_a_phone(d, "wrong code")
    shoot(d, "portal-code-wrong")
    console_errors(d, "the wrong code", expected=[SESSION_401])

    fill(d, "code", code.lower())
    click_and_wait(d, d.find_element(By.ID, "sign-in"))
    check("the code leads to the overview", path(d) == f"/portal/{SLUG}/overview", d.current_url)
    check("the token is not in the address bar", "polar_cst_" not in d.current_url)
    cookies = {c["name"]: c for c in d.get_cookies()}
    session = cookies.get("tollgate_portal")
    check("the session cookie is HttpOnly", session is not None and session.get("httpOnly"),
          session)
    check("the session cookie is for the portal only",
          session is not None and session.get("path") == "/portal", session)


def overview(d):
    d.get(f"{PORTAL}/overview")
    check("signed in as the buyer", text(d, "#signed-in-as") == BUYER)
    orders = d.find_elements(By.CSS_SELECTOR, "#orders a.row")
    check("two orders", len(orders) == 2, [o.text for o in orders])
    check("the order of the app is listed",
          any("Desktop App" in o.text and "$49.00" in o.text for o in orders),
          [o.text for o in orders])
    subs = d.find_elements(By.CSS_SELECTOR, "#subscriptions a.row")
    check("the subscription is listed",
          len(subs) == 1 and "Cloud Sync" in subs[0].text and "$9.00 / month" in subs[0].text,
          [s.text for s in subs])
    check("the subscription is active", "Active" in subs[0].text, subs[0].text)
    keys = d.find_elements(By.CSS_SELECTOR, "#license-keys a.row")
    check("the key is listed", len(keys) == 1 and story["key"][-6:] in keys[0].text,
          [k.text for k in keys])
    story["key_id"] = keys[0].get_attribute("data-key")
    story["subscription_id"] = subs[0].get_attribute("data-subscription")
    story["order_id"] = next(o.get_attribute("data-order") for o in orders
                             if "Desktop App" in o.text)
    check("the resend link is there",
          f"/license-keys/resend?organization_id={ORG_ID}"
          in d.find_element(By.ID, "resend-keys").get_attribute("href"))
    check("the seller's support address is a mailto link",
          d.find_element(By.ID, "support").get_attribute("href") == f"mailto:support@{SLUG}.test")
    features = d.find_elements(By.CSS_SELECTOR, "#features [data-feature]")
    check("the Features section is shown",
          bool(d.find_elements(By.ID, "features")) and d.find_element(By.ID, "features").is_displayed())
    check("it lists the feature flag the app grants",
          [f.text for f in features] == ["Pro features"], [f.text for f in features])
    page(d, "overview")
    page(d, "features", focus="#features")


def order_and_receipt(d):
    d.get(f"{PORTAL}/overview")
    link = d.find_element(By.CSS_SELECTOR, f"a[data-order='{story['order_id']}']")
    click_and_wait(d, link)
    check("the order page shows the product", text(d, "#product") == "Desktop App")
    check("the order's total", text(d, "#total") == "$49.00", text(d, "#total"))
    check("the order's tax", text(d, "#tax").startswith("$"), text(d, "#tax"))
    check("the order is paid", text(d, "#order-status") == "Paid")
    invoice = text(d, "#invoice-number")
    page(d, "order")
    receipt = d.find_element(By.ID, "receipt-link").get_attribute("href")
    check("the receipt link is signed", "signature=" in receipt and "expires=" in receipt, receipt)
    d.get(receipt)
    check("the receipt has the invoice number", text(d, "#invoice-number") == invoice)
    check("the receipt names the seller", text(d, "#seller-name") == "Acme Tools")
    check("the receipt names the buyer", text(d, "#buyer-email") == BUYER)
    check("the receipt's total", text(d, "#total") == "$49.00", text(d, "#total"))
    check("the print button is shown (the script ran)",
          d.find_element(By.ID, "print").is_displayed())
    page(d, "receipt")
    # Printed: the receipt alone, no button.
    d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    check("the print button is not printed", not d.find_element(By.ID, "print").is_displayed())
    check("the footer is not printed",
          not d.find_element(By.TAG_NAME, "footer").is_displayed())
    shoot(d, "portal-receipt-print")
    d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    # A tampered link: the friendly 404 page.
    d.get(receipt.replace("signature=", "signature=x"))
    check("a tampered receipt link is refused", "Receipt link expired" in text(d, "h1"),
          text(d, "h1"))
    shoot(d, "portal-receipt-expired")
    console_errors(d, "the tampered receipt link", expected=[(r"/portal/receipts/", 404)])


def deactivate(d):
    key_page(d)
    check("the key is shown in full", text(d, "#license-key") == story["key"])
    check("two of two activations", text(d, "#activations-used") == "2 of 2",
          text(d, "#activations-used"))
    rows = d.find_elements(By.CSS_SELECTOR, "ul.activations li")
    check("both activations are listed", len(rows) == 2, [r.text for r in rows])
    copy = d.find_element(By.CSS_SELECTOR, "button.copy")
    check("the copy button is shown", copy.is_displayed())
    copy.click()
    wait(d).until(lambda _: copy.text != "Copy")
    check("the copy button answers", copy.text in ("Copied", "Selected: press Ctrl+C"), copy.text)
    page(d, "license-key")
    # At the limit, each activation can be moved to a new device (the benefit allows it).
    moves = [b for b in d.find_elements(By.CSS_SELECTOR, "ul.activations li button")
             if b.text == "Move to a new device"]
    check("a Move to a new device button per activation",
          len(moves) == 2 and all(b.is_displayed() for b in moves), [b.text for b in moves])
    check("the page explains the move", d.find_element(By.ID, "move-help").is_displayed())
    page(d, "license-key-move", focus="#move-help")
    laptop = story["activations"]["laptop"]
    row = d.find_element(By.CSS_SELECTOR, f"li[data-activation='{laptop}']")
    check("the laptop's activation shows its label", "laptop" in row.text, row.text)
    click_and_wait(d, row.find_element(By.CSS_SELECTOR, "button.danger"))
    check("the deactivation is confirmed", "slot is free" in text(d, "#notice"), text(d, "#notice"))
    check("one of two activations", text(d, "#activations-used") == "1 of 2")
    check("the laptop is gone",
          not d.find_elements(By.CSS_SELECTOR, f"li[data-activation='{laptop}']"))
    page(d, "license-key-deactivated", focus="#notice")
    # Outside the browser: the slot is free, the old activation is refused.
    status, body = activate(story["key"], "tablet")
    check("activate succeeds again within the limit", status == 200, f"{status} {body}")
    status, body = request("POST", f"{BASE}/v1/customer-portal/license-keys/validate",
                           {"key": story["key"], "organization_id": ORG_ID,
                            "activation_id": laptop})
    check("validate with the old activation is refused", status == 404, f"{status} {body}")
    status, body = request("POST", f"{BASE}/v1/customer-portal/license-keys/validate",
                           {"key": story["key"], "organization_id": ORG_ID,
                            "activation_id": story["activations"]["desktop"]})
    check("the other activation still validates", status == 200, f"{status} {body}")


def cancel_and_resume(d):
    d.get(f"{PORTAL}/subscriptions/{story['subscription_id']}")
    check("the subscription is active", text(d, "#subscription-status") == "Active")
    check("the next charge is shown", text(d, "#next").startswith("Renews on"), text(d, "#next"))
    check("no resume button while active", not d.find_elements(By.ID, "resume"))
    page(d, "subscription")
    d.find_element(By.CSS_SELECTOR, "#cancel-box > summary").click()
    wait(d).until(lambda _: d.find_element(By.ID, "cancel").is_displayed())
    Select(d.find_element(By.ID, "reason")).select_by_value("too_expensive")
    fill(d, "comment", "Only need it for one project.")
    shoot(d, "portal-subscription-cancel-form", focus="#cancel")
    click_and_wait(d, d.find_element(By.ID, "cancel"))
    check("canceled at the period's end", text(d, "#subscription-status") == "Canceling",
          text(d, "#subscription-status"))
    check("the end date is shown", text(d, "#next").startswith("Ends on"), text(d, "#next"))
    check("the cancel button gave way to resume",
          d.find_element(By.ID, "resume").is_displayed() and not d.find_elements(By.ID, "cancel"))
    page(d, "subscription-canceled")
    click_and_wait(d, d.find_element(By.ID, "resume"))
    check("resumed", text(d, "#subscription-status") == "Active", text(d, "#subscription-status"))
    check("the resume notice", "resumed" in text(d, "#notice"), text(d, "#notice"))
    check("cancel is offered again", len(d.find_elements(By.CSS_SELECTOR, "#cancel-box")) == 1)
    check("renews again", text(d, "#next").startswith("Renews on"), text(d, "#next"))
    page(d, "subscription-resumed")


def rotate(d):
    key_page(d)
    old = story["key"]
    d.find_element(By.CSS_SELECTOR, "#rotate-box > summary").click()
    wait(d).until(lambda _: d.find_element(By.ID, "rotate").is_displayed())
    shoot(d, "portal-rotate-confirm", focus="#rotate")
    click_and_wait(d, d.find_element(By.ID, "rotate"))
    new = text(d, "#license-key")
    check("the page shows a new key", new != old and new.startswith("ACME-"), new)
    check("the rotation is confirmed", "rotated" in text(d, "#notice"), text(d, "#notice"))
    page(d, "license-key-rotated")
    status, body = validate(BASE, old, ORG_ID)
    check("the old key is refused", status == 404, f"{status} {body}")
    status, body = validate(BASE, new, ORG_ID)
    check("the new key validates", status == 200 and body.get("status") == "granted",
          f"{status} {body}")
    story["key"] = new


def sign_out(d):
    d.get(f"{PORTAL}/overview")
    click_and_wait(d, d.find_element(By.ID, "sign-out"))
    check("signed out, on the sign-in page", path(d) == f"/portal/{SLUG}", d.current_url)
    check("it says so", text(d, "#notice") == "You are signed out.")
    check("the cookie is gone",
          all(c["name"] != "tollgate_portal" for c in d.get_cookies()))
    d.get(f"{PORTAL}/overview")
    check("the overview asks to sign in again", path(d) == f"/portal/{SLUG}", d.current_url)
    console_errors(d, "signing out")


if __name__ == "__main__":
    run([purchase, sign_in, overview, order_and_receipt, deactivate, cancel_and_resume, rotate,
         sign_out], stop_at_first_failure=True)
