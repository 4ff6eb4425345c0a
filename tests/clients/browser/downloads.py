"""The customer portal's downloads (issue 50) in headless Chromium: the overview opened with
a seller's `customer_portal_url` lists the files the purchase's downloadables benefit gives
(name, version, size) in a "Downloads" section; the first link, followed, answers the
file's bytes as an attachment; screenshots at the phone and desktop sizes.

Reads TOLLGATE_URL, PORTAL_URL (a customer session's customer_portal_url), FILE_NAMES
(comma-separated, in order), FIRST_SIZE (the first file's size in bytes) and the harness's
variables. Run by tests/api/downloadables.rs.
"""

import urllib.request

from selenium.webdriver.common.by import By

from harness import check, console_errors, env, run, shoot, visible_text, wait

PORTAL_URL = env("PORTAL_URL")
NAMES = env("FILE_NAMES").split(",")
FIRST_SIZE = int(env("FIRST_SIZE"))


def the_overview_lists_the_downloads(d):
    d.get(PORTAL_URL)
    heading = visible_text(d, "#downloads-h")
    check("the Downloads section", heading == "Downloads", heading)
    rows = d.find_elements(By.CSS_SELECTOR, "#downloads a[data-download]")
    names = [r.find_element(By.CSS_SELECTOR, ".what").text for r in rows]
    check("every file, in order", names == NAMES, names)
    meta = rows[0].find_element(By.CSS_SELECTOR, ".meta").text
    check("the version and the size", "Version 1.2.0" in meta and "B" in meta, meta)
    href = rows[0].get_attribute("href")
    check("a signed portal link", "/v1/customer-portal/downloadables/" in href, href)
    # The page's Content-Security-Policy allows it no fetch: the link is followed outside.
    with urllib.request.urlopen(href, timeout=30) as res:
        got = [res.status, len(res.read()), res.headers.get("Content-Disposition", "")]
    check("the link answers the file", got[:2] == [200, FIRST_SIZE], got)
    check("as an attachment", got[2].startswith("attachment"), got)
    shoot(d, "portal-downloads", "#downloads")
    console_errors(d, "the overview with downloads")


def the_section_fits_a_phone(d):
    d.set_window_size(390, 844)
    wait(d)
    d.get(PORTAL_URL)
    overflow = d.execute_script(
        "return document.documentElement.scrollWidth > document.documentElement.clientWidth")
    check("no horizontal scroll on a phone", not overflow)


if __name__ == "__main__":
    run([the_overview_lists_the_downloads, the_section_fits_a_phone])
