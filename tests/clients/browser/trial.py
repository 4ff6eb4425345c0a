"""A free trial on the hosted checkout page, in a real browser (headless Chromium).

Run by tests/api/browser.rs against a fresh server (test processor), with:
  TRIAL_URL      a checkout of "Pro" ($10.00 a month, a 14-day trial)
  AGAIN_URL      a second checkout of the same product
  PRODUCT_ID     the product; TOLLGATE_URL the server; TOLLGATE_TOKEN the seller's token
  SCREENSHOT_DIR where the screenshots go; CHROMIUM, CHROMEDRIVER the binaries

The buyer starts the trial on the first page (the card is saved, nothing charged) and the
subscription is `trialing`. On the second page the same buyer is refused a second trial
(403 TrialAlreadyRedeemed): the page drops the trial, reloads and says so, and the buyer
subscribes, paying now; that subscription is `active`. The second buyer uses the keyboard
only. Prints one line per check and ends with `N passed, M failed`.
"""

import datetime
import re
import time

from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from harness import (DESKTOP, check, console_errors, env, fill, request, run, shoot, viewport,
                     visible_text, wait)

TRIAL_URL = env("TRIAL_URL")
AGAIN_URL = env("AGAIN_URL")
PRODUCT_ID = env("PRODUCT_ID")
BASE = env("TOLLGATE_URL")
TOKEN = env("TOLLGATE_TOKEN")

BUYER = "ada@trial-browser.example"
NAME = "Ada Lovelace"
TRIAL_USED = "You have already used a trial for this product: subscribing now charges your card."
NARROW = (375, 812)

# The confirm refused for the second trial (403), which the page handles and Chromium logs.
CONFIRM_403 = (r"/v1/checkouts/client/[^/]+/confirm$", 403)


def secret_of(url):
    return url.rstrip("/").rsplit("/", 1)[-1]


def public_checkout(url):
    """The checkout as its page's script reads it (by the client secret, no token)."""
    status, body = request("GET", f"{BASE}/v1/checkouts/client/{secret_of(url)}")
    assert status == 200, (status, body)
    return body


def subscription_of(checkout_id):
    """The subscription a checkout created, read by the seller (waits, bounded)."""
    deadline = time.time() + 15
    while time.time() < deadline:
        status, body = request("GET", f"{BASE}/v1/subscriptions/?product_id={PRODUCT_ID}",
                               headers={"Authorization": f"Bearer {TOKEN}"})
        if status == 200:
            found = [s for s in body.get("items", []) if s.get("checkout_id") == checkout_id]
            if found:
                return found[0]
        time.sleep(0.2)
    return None


def replaced(old):
    """A wait condition: `old` (an element of the page before a reload) is gone."""

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


def fits_a_phone(d, name):
    """At 375 px, nothing to scroll sideways."""
    viewport(d, NARROW)
    scroll, inner = d.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth]")
    check(f"{name}: no horizontal scroll at 375 px", scroll <= NARROW[0] + 1 and scroll <= inner + 1,
          f"scrollWidth {scroll}, innerWidth {inner}")
    viewport(d, DESKTOP)


def labelled(d, name):
    """Every shown field of the form has a label that names it."""
    unlabelled = d.execute_script("""
        return Array.from(document.querySelectorAll('#checkout input, #checkout select'))
          .filter(el => el.type !== 'hidden' && el.offsetParent !== null)
          .filter(el => !(el.labels && el.labels.length && el.labels[0].textContent.trim()))
          .map(el => el.id || el.name);""")
    check(f"{name}: every field has a label", not unlabelled, unlabelled)


def pay_button(d):
    return d.find_element(By.ID, "pay")


def trial_notes(d):
    return d.find_elements(By.ID, "trial-note")


def fill_buyer(d):
    fill(d, "customer_email", BUYER)
    fill(d, "customer_name", NAME)
    Select(d.find_element(By.ID, "country")).select_by_value("FR")


def start_the_trial(d):
    d.get(TRIAL_URL)
    c = public_checkout(TRIAL_URL)
    check("the checkout has the product's trial",
          c.get("active_trial_interval") == "day" and c.get("active_trial_interval_count") == 14
          and c.get("trial_end"), c)
    day = (c.get("trial_end") or "")[:10]
    in_14_days = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=14)).date()
    check("its trial ends in 14 days",
          abs((datetime.date.fromisoformat(day) - in_14_days).days) <= 1 if day else False, day)

    check("the page has a title", "Pro" in d.title, d.title)
    notes = trial_notes(d)
    check("the page shows the trial note", len(notes) == 1 and notes[0].is_displayed())
    note = notes[0].text if notes else ""
    long_day = datetime.date.fromisoformat(day).strftime("%B %-d, %Y") if day else day
    expected = (f"Free for 14 days, then $10.00/month: the first charge is on {long_day}. "
                "Nothing is charged today.")
    check("the note tells the trial, the price and the first charge's date", note == expected,
          f"{note!r} != {expected!r}")
    check("the note is in the product's section",
          d.execute_script("return !!document.querySelector('section.product #trial-note')"))
    check("the button starts the trial", pay_button(d).text == "Start free trial", pay_button(d).text)
    check("the button submits the form",
          pay_button(d).get_attribute("type") == "submit" and pay_button(d).is_enabled())
    check("the price is shown", d.find_element(By.ID, "price").text == "$10.00/month",
          d.find_element(By.ID, "price").text)
    check("the form's error area is empty and announced when shown",
          not d.find_element(By.ID, "form-error").is_displayed()
          and d.find_element(By.ID, "form-error").get_attribute("role") == "alert")
    labelled(d, "the trial page")
    fits_a_phone(d, "the trial page")
    shoot(d, "trial", focus="#trial-note")

    fill_buyer(d)
    check("the card is prefilled", d.find_element(By.ID, "test-card").get_attribute("value") == "tok_visa")
    shoot(d, "trial-filled", focus="#pay")
    pay_button(d).click()
    wait(d).until(EC.url_contains("/confirmation"))
    check("starting the trial leads to the confirmation page", "/confirmation" in d.current_url,
          d.current_url)
    shoot(d, "trial-confirmation")
    console_errors(d, "the trial page and its confirmation")

    c = public_checkout(TRIAL_URL)
    check("the checkout succeeded", c.get("status") == "succeeded", c.get("status"))
    s = subscription_of(c.get("id"))
    check("the seller sees the subscription", s is not None)
    s = s or {}
    check("the subscription is trialing", s.get("status") == "trialing", s.get("status"))
    check("the subscription has the trial's end",
          (s.get("trial_end") or "")[:10] == day and s.get("trial_start"),
          (s.get("trial_start"), s.get("trial_end")))
    check("the first period ends with the trial", s.get("current_period_end") == s.get("trial_end"),
          (s.get("current_period_end"), s.get("trial_end")))
    check("the subscription's amount is the price", s.get("amount") == 1000, s.get("amount"))


def no_second_trial(d):
    d.get(AGAIN_URL)
    check("the second page shows the trial too", len(trial_notes(d)) == 1)
    check("and offers it", pay_button(d).text == "Start free trial", pay_button(d).text)

    # The keyboard only: type into the fields, submit with Enter.
    email = d.find_element(By.ID, "customer_email")
    email.click()
    check("the e-mail field takes the focus",
          d.switch_to.active_element.get_attribute("id") == "customer_email")
    email.send_keys(BUYER)
    email.send_keys(Keys.TAB)
    check("Tab moves on to the name", d.switch_to.active_element.get_attribute("id") == "customer_name",
          d.switch_to.active_element.get_attribute("id"))
    d.switch_to.active_element.send_keys(NAME)
    Select(d.find_element(By.ID, "country")).select_by_value("FR")
    card = d.find_element(By.ID, "test-card")
    card.click()
    card.send_keys(Keys.TAB)
    check("Tab from the card reaches the button", d.switch_to.active_element.get_attribute("id") == "pay",
          d.switch_to.active_element.get_attribute("id"))
    old = d.find_element(By.TAG_NAME, "html")
    d.switch_to.active_element.send_keys(Keys.ENTER)

    # Refused (403 TrialAlreadyRedeemed): the page drops the trial and reloads, saying so.
    wait(d).until(replaced(old))
    wait(d).until(lambda _: d.find_element(By.ID, "form-error").is_displayed())
    check("the page reloaded at #trial-used", d.current_url.endswith("#trial-used"), d.current_url)
    message = visible_text(d, "#form-error")
    check("the page says the trial was used", message == TRIAL_USED, message)
    check("the message is announced", d.find_element(By.ID, "form-error").get_attribute("role") == "alert")
    check("no trial note any more", not trial_notes(d))
    label = pay_button(d).text
    check("the button subscribes, paying now", label == "Subscribe $10.00/month", label)
    check("the button is enabled and not busy",
          pay_button(d).is_enabled() and pay_button(d).get_attribute("aria-busy") is None)
    total = d.find_element(By.ID, "summary-total").text
    check("the total is the price", total == "$10.00/month", total)
    c = public_checkout(AGAIN_URL)
    check("the checkout has no trial now",
          c.get("active_trial_interval") is None and c.get("trial_end") is None
          and c.get("allow_trial") is False and c.get("is_payment_required") is True, c)
    check("the e-mail is kept", d.find_element(By.ID, "customer_email").get_attribute("value") == BUYER,
          d.find_element(By.ID, "customer_email").get_attribute("value"))
    check("the name is kept", d.find_element(By.ID, "customer_name").get_attribute("value") == NAME,
          d.find_element(By.ID, "customer_name").get_attribute("value"))
    check("the country is kept",
          Select(d.find_element(By.ID, "country")).first_selected_option.get_attribute("value") == "FR")
    labelled(d, "the page without the trial")
    fits_a_phone(d, "the page without the trial")
    shoot(d, "trial-used", focus="#form-error")
    console_errors(d, "the refused trial", expected=[CONFIRM_403])

    # Paying now, from the keyboard: Enter in a field submits the form.
    d.find_element(By.ID, "customer_name").send_keys(Keys.ENTER)
    wait(d).until(EC.url_contains("/confirmation"))
    check("paying leads to the confirmation page", "/confirmation" in d.current_url, d.current_url)
    shoot(d, "trial-used-confirmation")
    console_errors(d, "the paid subscription's confirmation")

    c = public_checkout(AGAIN_URL)
    check("the second checkout succeeded", c.get("status") == "succeeded", c.get("status"))
    s = subscription_of(c.get("id"))
    check("the seller sees the second subscription", s is not None)
    s = s or {}
    check("the second subscription is active", s.get("status") == "active", s.get("status"))
    check("with no trial", s.get("trial_end") is None and s.get("trial_start") is None,
          (s.get("trial_start"), s.get("trial_end")))
    period = (s.get("current_period_start") or "")[:10]
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    check("its period starts today", re.fullmatch(r"\d{4}-\d{2}-\d{2}", period) is not None
          and abs((datetime.date.fromisoformat(period)
                   - datetime.date.fromisoformat(today)).days) <= 1, period)


if __name__ == "__main__":
    run([start_the_trial, no_second_trial], stop_at_first_failure=True)
