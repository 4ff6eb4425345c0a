"""The dashboard's usage billing pages in a real browser (headless Chromium).

Run by tests/api/browser_meters.rs against a server it seeded (a seller with a password,
an organization, two customers, a meter summing the `tokens` of `llm_call` events and a
month of such events), with:
  TOLLGATE_URL, SELLER_EMAIL, SELLER_PASSWORD, ORG_ID, METER_ID, CUSTOMER_ID, CUSTOMER_EMAIL
  SCREENSHOT_DIR where the screenshots go; CHROMIUM, CHROMEDRIVER the binaries
The seller signs in to the Meters list, makes a meter with two clauses (the second row
added by the form's own button, no script), reads a meter's chart for everyone then for
one customer over 12 months, the customer's usage on its page, and creates a product with
a metered price. Prints one line per check and ends with `N passed, M failed`.
"""

import urllib.parse

from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from harness import PHONE, check, console_errors, env, fill, run, shoot, viewport, wait

BASE = env("TOLLGATE_URL")
EMAIL = env("SELLER_EMAIL")
PASSWORD = env("SELLER_PASSWORD")
ORG = env("ORG_ID")
METER = env("METER_ID")
CUSTOMER = env("CUSTOMER_ID")
CUSTOMER_EMAIL = env("CUSTOMER_EMAIL")


def org_url(rest=""):
    return f"{BASE}/dashboard/{ORG}{rest}"


def path(d):
    return urllib.parse.urlsplit(d.current_url).path


def text(d, css):
    return d.find_element(By.CSS_SELECTOR, css).text.strip()


def replaced(old):
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


def click(d, xpath):
    """Clicks the element and waits for the page it leads to."""
    old = d.find_element(By.TAG_NAME, "html")
    d.find_element(By.XPATH, xpath).click()
    wait(d).until(replaced(old))


def submit(d, label):
    click(d, f"//main//button[normalize-space()='{label}']")


def fits_the_phone(d, name):
    viewport(d, PHONE)
    scroll, inner = d.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth]")
    check(f"{name} has no horizontal scroll at phone width", scroll <= inner + 1,
          f"scrollWidth {scroll}, innerWidth {inner}")
    viewport(d, (1280, 900))


def number(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return None


def sign_in_to_the_meters(d):
    d.get(org_url("/meters"))
    check("a signed-out visitor is sent to sign in", path(d) == "/oauth2/login", d.current_url)
    fill(d, "email", EMAIL)
    fill(d, "password", PASSWORD)
    submit(d, "Sign in")
    check("signing in comes back to the meters", path(d) == f"/dashboard/{ORG}/meters",
          d.current_url)
    check("the page is the Meters list", text(d, "h1") == "Meters", text(d, "h1"))
    current = d.find_elements(By.CSS_SELECTOR, "nav.side a[aria-current=page]")
    check("the navigation marks Meters", [c.text.strip() for c in current] == ["Meters"],
          [c.text for c in current])
    row = d.find_element(By.CSS_SELECTOR, f"tr[data-meter='{METER}']")
    check("the seeded meter is listed with its aggregation",
          "sum of metadata.tokens" in row.text, row.text)
    check("its filter reads in words", "name = “llm_call”" in row.text, row.text)
    total = number(row.find_element(By.CSS_SELECTOR, ".month-total").text)
    check("this month's total is a number", total is not None, row.text)
    fits_the_phone(d, "the meters list")
    shoot(d, "meters-list")


def create_a_meter(d):
    click(d, "//main//a[normalize-space()='New meter']")
    check("the form opens with one clause row",
          len(d.find_elements(By.NAME, "property")) == 1)
    fill(d, "name", "API calls")
    fill(d, "property-0", "name")
    fill(d, "value-0", "api_call")
    submit(d, "Add a clause")
    check("Add a clause shows the form again, with what was typed",
          d.find_element(By.ID, "name").get_attribute("value") == "API calls"
          and d.find_element(By.ID, "value-0").get_attribute("value") == "api_call")
    check("…and more rows", len(d.find_elements(By.NAME, "property")) == 3)
    fill(d, "property-1", "metadata.endpoint")
    Select(d.find_element(By.ID, "operator-1")).select_by_visible_text("contains")
    fill(d, "value-1", "/v1/")
    Select(d.find_element(By.ID, "func")).select_by_visible_text("Count of events")
    shoot(d, "meter-form", focus="#filter-fields")
    fits_the_phone(d, "the meter form")
    submit(d, "Create the meter")
    check("the new meter's page opens", path(d).startswith(f"/dashboard/{ORG}/meters/"),
          d.current_url)
    check("it counts the two clauses",
          text(d, "#meter-filter") == "name = “api_call” and metadata.endpoint contains “/v1/”",
          text(d, "#meter-filter"))
    check("no usage yet: the empty state, no chart",
          d.find_elements(By.ID, "meter-empty") and not d.find_elements(By.CSS_SELECTOR, "svg.chart"))


def the_meter_chart(d):
    d.get(org_url(f"/meters/{METER}"))
    charts = d.find_elements(By.CSS_SELECTOR, "svg.chart")
    check("the meter's page draws its chart", len(charts) == 1 and charts[0].is_displayed())
    total = number(text(d, "#range-total"))
    check("the last 30 days add up to a positive total", total is not None and total > 0,
          text(d, "#range-total"))
    bars = d.find_elements(By.CSS_SELECTOR, "svg.chart rect[data-series=quantity]")
    summed = sum(float(b.get_attribute("data-value")) for b in bars)
    check("the bars add up to the total", total is not None and abs(summed - total) < 1e-6,
          f"{summed} vs {total}")
    check("the chart is labelled", "last 30 days" in charts[0].get_attribute("aria-label"),
          charts[0].get_attribute("aria-label"))
    fits_the_phone(d, "the meter's page")
    shoot(d, "meter-chart", focus="#meter-chart")
    Select(d.find_element(By.ID, "customer_id")).select_by_visible_text(CUSTOMER_EMAIL)
    submit(d, "Show")
    mine = number(text(d, "#range-total"))
    check("one customer's total over the same 30 days is part of everyone's",
          mine is not None and 0 < mine < total, f"{mine} of {total}")
    Select(d.find_element(By.ID, "range")).select_by_value("12m")
    submit(d, "Show")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(d.current_url).query)
    check("the customer and the range are in the address",
          query.get("customer_id") == [CUSTOMER] and query.get("range") == ["12m"], d.current_url)
    year = number(text(d, "#range-total"))
    check("over 12 months the customer used more", year is not None and year > mine,
          f"{year} vs {mine}")
    check("12 monthly bars", len(d.find_elements(By.CSS_SELECTOR, "svg.chart > g")) == 12)
    shoot(d, "meter-chart-customer", focus="#meter-chart")


def the_customer_usage(d):
    d.get(org_url(f"/customers/{CUSTOMER}"))
    rows = d.find_elements(By.CSS_SELECTOR, f"#customer-meters tr[data-meter='{METER}']")
    check("the customer's page lists its meter", len(rows) == 1)
    if rows:
        cells = [c.text for c in rows[0].find_elements(By.TAG_NAME, "td")]
        check("with consumed, credited and balance", len(cells) == 4 and number(cells[1]) > 0,
              cells)
    events = d.find_elements(By.CSS_SELECTOR, "#customer-events tr td code")
    check("and its last events, twenty at most", 0 < len(events) <= 20, len(events))
    shoot(d, "customer-usage", focus="#customer-meters")
    click(d, f"//table[@id='customer-meters']//a")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(d.current_url).query)
    check("the meter links to its chart for this customer",
          path(d) == f"/dashboard/{ORG}/meters/{METER}" and query.get("customer_id") == [CUSTOMER],
          d.current_url)


def a_metered_product(d):
    d.get(org_url("/products/new"))
    fill(d, "name", "LLM plan")
    Select(d.find_element(By.ID, "billing")).select_by_value("month")
    Select(d.find_element(By.ID, "amount_type")).select_by_value("free")
    Select(d.find_element(By.ID, "metered_meter_id")).select_by_visible_text("LLM tokens")
    fill(d, "metered_unit_amount", "0.0004")
    fill(d, "metered_cap", "25.00")
    check("the metered fields are shown", d.find_element(By.ID, "metered-fields").is_displayed())
    shoot(d, "product-metered", focus="#metered-fields")
    submit(d, "Create product")
    check("the product is created", "/products/" in path(d), d.current_url)
    body = d.find_element(By.TAG_NAME, "main").text
    check("its page shows the metered price", "0.0004 cents per unit (metered)" in body, body[:400])
    check("capped", "capped at" in body)
    console_errors(d, "the product page")


run([sign_in_to_the_meters, create_a_meter, the_meter_chart, the_customer_usage,
     a_metered_product])
