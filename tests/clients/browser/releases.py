"""The dashboard's Releases page in a real browser (headless Chromium through chromedriver).

Run by tests/api/browser_releases.rs against a server where a seller (SELLER_EMAIL, password
"correct horse battery") has an organization (ORG_ID) with a product and an uploaded file
(FILE_NAME), and a license key of the product (LICENSE_KEY). The seller signs in, reads the
update-signing public keys, is refused a version that is not semantic (the API's message
next to the form), creates a draft with the file for linux-x86_64, publishes it (signed),
reads it from the electron feed with the key, and yanks it (out of the feed).
Prints one line per check and ends with `N passed, M failed`.
"""

import os
import urllib.error
import urllib.request

from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from selenium.webdriver.support.ui import Select

from harness import DESKTOP, PHONE, check, console_errors, env, fill, run, viewport

BASE = env("TOLLGATE_URL")
SHOTS = env("SCREENSHOT_DIR")
ORG = env("ORG_ID")
PRODUCT = env("PRODUCT_ID")
KEY = env("LICENSE_KEY")


def shoot(d, name):
    for label, size in (("phone", PHONE), ("desktop", DESKTOP)):
        viewport(d, size)
        full = d.execute_script("return document.documentElement.scrollHeight")
        viewport(d, (size[0], max(size[1], int(full))))
        path = os.path.join(SHOTS, f"releases-{name}-{label}.png")
        d.save_screenshot(path)
        check(f"screenshot {name} {label}", os.path.getsize(path) > 1000, path)
    viewport(d, DESKTOP)


def replaced(old):
    """The page `old` belonged to is gone: stale, or (Chromium racing the navigation)
    "Node with given id does not belong to the document", which means the same."""

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


def click(d, css):
    old = d.find_element(By.TAG_NAME, "html")
    d.find_element(By.CSS_SELECTOR, css).click()
    WebDriverWait(d, 15).until(replaced(old))


def feed_version():
    req = urllib.request.Request(f"{BASE}/v1/updates/{PRODUCT}/stable/latest-linux.yml",
                                 headers={"Authorization": f"Bearer {KEY}"})
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("version: "):
                    return line.removeprefix("version: ").strip('"')
    except urllib.error.HTTPError as e:
        return e.code
    return None


def sign_in(d):
    d.get(f"{BASE}/oauth2/login?next=/dashboard/{ORG}/releases")
    fill(d, "email", env("SELLER_EMAIL"))
    fill(d, "password", "correct horse battery")
    click(d, "main button[type=submit]")
    check("signing in opens the Releases page", d.current_url.endswith(f"/dashboard/{ORG}/releases"),
          d.current_url)
    check("the page is titled Releases", d.find_element(By.CSS_SELECTOR, "main h1").text == "Releases")
    nav = [a.text for a in d.find_elements(By.CSS_SELECTOR, "nav.side a")]
    check("the navigation has Releases", "Releases" in nav, nav)
    sparkle = d.find_element(By.ID, "sparkle-key").text
    tauri = d.find_element(By.ID, "tauri-key").text
    check("the Sparkle key is shown", len(sparkle) == 44 and sparkle.endswith("="), sparkle)
    check("the Tauri key is shown", len(tauri) > 100, tauri)
    check("no releases yet", "No releases yet." in d.find_element(By.ID, "releases").text)
    console_errors(d, "releases page")
    shoot(d, "empty")


def refused_version(d):
    fill(d, "version", "1.0")
    click(d, "#create-release")
    alert = d.find_elements(By.CSS_SELECTOR, "div.error")
    check("a version that is not semantic is refused next to the form",
          len(alert) == 1 and "semantic version" in alert[0].text, alert[0].text if alert else "")
    check("what was typed is kept", d.find_element(By.ID, "version").get_attribute("value") == "1.0")
    console_errors(d, "refused version", expected=[(r"/releases$", 422)])
    shoot(d, "refused")


def create_publish_yank(d):
    fill(d, "version", "1.0.0")
    fill(d, "notes", "The first release")
    Select(d.find_element(By.ID, "platform-0")).select_by_value("linux-x86_64")
    Select(d.find_element(By.ID, "bundle-0")).select_by_value("appimage")
    Select(d.find_element(By.ID, "file-0")).select_by_visible_text(env("FILE_NAME"))
    click(d, "#create-release")
    rows = d.find_elements(By.CSS_SELECTOR, "#releases tr[id^=release-]")
    check("the draft is listed", len(rows) == 1, len(rows))
    rid = rows[0].get_attribute("id").removeprefix("release-")
    check("it is a draft", d.find_element(By.ID, f"status-{rid}").text == "draft")
    check("a draft is in no feed", feed_version() == 404, feed_version())
    shoot(d, "draft")
    click(d, f"#publish-{rid}")
    check("publishing makes it published", d.find_element(By.ID, f"status-{rid}").text == "published")
    check("its file is signed", "signed" in d.find_element(By.ID, f"release-{rid}").text)
    check("the key reads it from the feed", feed_version() == "1.0.0", feed_version())
    console_errors(d, "published")
    shoot(d, "published")
    click(d, f"#yank-{rid}")
    check("yanking makes it yanked", d.find_element(By.ID, f"status-{rid}").text == "yanked")
    check("a yanked release leaves the feed", feed_version() == 404, feed_version())
    shoot(d, "yanked")


run([sign_in, refused_version, create_publish_yank], stop_at_first_failure=True)
