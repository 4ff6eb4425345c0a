"""What the browser suites share: checks and their tally, the environment, headless Chromium
with its console log, viewports and screenshots, and the run of a list of cases.

Every script prints one line per check and ends with `N passed, M failed`; the Rust test
that runs it (tests/api/browser.rs, `run_script`) reads that line.
"""

import json
import os
import re
import sys
import traceback
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

WAIT = 15
PHONE = (390, 844)
DESKTOP = (1280, 900)

tally = {"passed": 0, "failed": 0}


def check(name, condition, detail=""):
    if condition:
        tally["passed"] += 1
        print(f"ok   {name}")
    else:
        tally["failed"] += 1
        print(f"FAIL {name} {detail}")


def env(name):
    value = os.environ.get(name)
    if not value:
        print(f"missing environment variable {name}")
        print("0 passed, 1 failed")
        sys.exit(1)
    return value


def driver():
    """Headless Chromium at the desktop size, keeping the page's console log."""
    options = webdriver.ChromeOptions()
    options.binary_location = env("CHROMIUM")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--disable-extensions", "--no-first-run", "--hide-scrollbars",
                f"--window-size={DESKTOP[0]},{DESKTOP[1]}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(executable_path=env("CHROMEDRIVER")), options=options)
    d.set_page_load_timeout(WAIT)
    d.set_script_timeout(WAIT)
    return d


def console_errors(d, where, expected=()):
    """Checks that the console has logged no error since the last call (uncaught exceptions,
    Content-Security-Policy violations, failed loads); prints what it logged. `expected`
    lists, as (URL regular expression, status), the API answers the case causes on purpose
    and the page handles (a declined card's 400), which Chromium logs as failed loads: each
    must be there, and nothing else may."""
    entries = d.get_log("browser")
    errors = []
    seen = set()
    for e in entries:
        message = e.get("message", "")
        print(f"     console {e.get('level')}: {message}")
        if e.get("level") != "SEVERE":
            continue
        hit = next((x for x in expected if failed_load(message, *x)), None)
        if hit:
            seen.add(hit)
        else:
            errors.append(message)
    check(f"no console error: {where}", not errors, errors)
    if expected:
        missing = [x for x in expected if x not in seen]
        check(f"the expected API errors were logged: {where}", not missing, missing)


def failed_load(message, url_pattern, status):
    """Whether `message` is Chromium's log of a load of a URL matching `url_pattern` (a
    regular expression) answered with `status`."""
    url, _, rest = message.partition(" - ")
    return re.search(url_pattern, url) is not None and f"status of {status} " in rest


def viewport(d, size):
    """Sets the page's viewport (not the window) to `size`, phone emulation included."""
    width, height = size
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600,
    })


def shoot(d, name, focus=None):
    """A viewport screenshot at the phone and the desktop size (scrolled to the element
    `focus` names, a CSS selector, when given), and a full-page one of each."""
    shots = env("SCREENSHOT_DIR")
    for label, size in (("phone", PHONE), ("desktop", DESKTOP)):
        viewport(d, size)
        if focus:
            d.execute_script(
                "document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", focus)
        path = os.path.join(shots, f"{name}-{label}.png")
        d.save_screenshot(path)
        full = d.execute_script("return document.documentElement.scrollHeight")
        viewport(d, (size[0], max(size[1], int(full))))
        d.save_screenshot(os.path.join(shots, f"{name}-{label}-full.png"))
        check(f"screenshot {name} {label}", os.path.getsize(path) > 1000, path)
    viewport(d, DESKTOP)


def wait(d, seconds=WAIT):
    return WebDriverWait(d, seconds)


def visible_text(d, css):
    el = wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, css)))
    return el.text


def fill(d, element_id, value):
    el = d.find_element(By.ID, element_id)
    el.clear()
    el.send_keys(value)


def request(method, url, body=None, headers=None):
    """An HTTP request outside the browser: (status, JSON body or text)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Content-Type": "application/json", "Accept": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=WAIT) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as e:
        text = e.read().decode(errors="replace")
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, text


def validate(base, key, org_id):
    """Validates a license key as a customer's program does."""
    return request("POST", f"{base}/v1/customer-portal/license-keys/validate",
                   {"key": key, "organization_id": org_id})


def run(cases, stop_at_first_failure=False):
    """Runs each case with one browser, reports the tally and exits 0 only if none failed.
    A case that raises is a failure, with a screenshot of the page it was on."""
    shots = env("SCREENSHOT_DIR")
    os.makedirs(shots, exist_ok=True)
    d = driver()
    try:
        for case in cases:
            try:
                case(d)
            except Exception:  # noqa: BLE001 - report the case, then go on (or stop)
                tally["failed"] += 1
                print(f"FAIL {case.__name__} raised:\n{traceback.format_exc()}")
                try:
                    d.save_screenshot(os.path.join(shots, f"error-{case.__name__}.png"))
                    print(f"page at failure: {d.current_url}")
                except Exception:  # noqa: BLE001
                    pass
                if stop_at_first_failure:
                    break
    finally:
        d.quit()
    print(f"screenshots: {shots}")
    print(f"{tally['passed']} passed, {tally['failed']} failed")
    sys.exit(1 if tally["failed"] else 0)
