"""The HTML part of a receipt, as a mail client shows it: opened in headless Chromium at
phone and desktop widths, screenshots taken, the key and the button in view.

Run by tests/api/mail.rs with RECEIPT_URL (a file:// URL of the HTML part), KEY (the key
the receipt lists), SCREENSHOT_DIR, CHROMIUM, CHROMEDRIVER.
Prints one line per check and ends with `N passed, M failed`.
"""

from selenium.webdriver.common.by import By

from harness import PHONE, check, console_errors, env, run, shoot, viewport

RECEIPT_URL = env("RECEIPT_URL")
KEY = env("KEY")


def receipt(d):
    d.get(RECEIPT_URL)
    check("the receipt shows the key", KEY in d.find_element(By.TAG_NAME, "body").text)
    check("the receipt has its button",
          any("View your purchase" in a.text for a in d.find_elements(By.TAG_NAME, "a")))
    viewport(d, PHONE)
    width = d.execute_script("return document.documentElement.scrollWidth")
    check("no sideways scrolling on a phone", width <= PHONE[0] + 1, width)
    shoot(d, "receipt")
    console_errors(d, "the receipt")


if __name__ == "__main__":
    run([receipt])
