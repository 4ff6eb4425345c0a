"""The hosted checkout embedded in a seller's page (issue 54), in headless Chromium.

A page served here on PARENT_ORIGIN (another origin than Tollgate's) frames the checkout
as Polar's @polar-sh/checkout does (`?embed=true&embed_origin=…`) and records the
messages it receives, as that script reads them: `{type: "POLAR_CHECKOUT", event}` from
Tollgate's origin. Run by tests/api/browser.rs with:
  EMBED_URL      a checkout created with embed_origin = PARENT_ORIGIN, success_url set
  CLOSE_URL      another such checkout (closed without paying)
  FOREIGN_URL    a checkout whose embed_origin is another site
  PARENT_PORT    the port of PARENT_ORIGIN (http://127.0.0.1:PARENT_PORT: another origin
                 than Tollgate's, whose port differs)
  SCREENSHOT_DIR, CHROMIUM, CHROMEDRIVER
"""

import http.server
import json
import threading
import urllib.parse

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from harness import check, env, fill, run, shoot, wait

EMBED_URL = env("EMBED_URL")
CLOSE_URL = env("CLOSE_URL")
FOREIGN_URL = env("FOREIGN_URL")
PARENT_PORT = int(env("PARENT_PORT"))
PARENT_ORIGIN = f"http://127.0.0.1:{PARENT_PORT}"
TOLLGATE_ORIGIN = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(EMBED_URL))

PARENT = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Seller</title></head>
<body><h1>The seller's page</h1>
<iframe id="checkout" style="width:100%;height:900px;border:0" allow="payment"></iframe>
<script>
window.messages = [];
window.addEventListener("message", function (e) {
  if (e.origin !== TOLLGATE) return;
  if (!e.data || e.data.type !== "POLAR_CHECKOUT") return;
  window.messages.push({origin: e.origin, data: e.data});
});
var url = new URL(new URLSearchParams(location.search).get("checkout"));
url.searchParams.set("embed", "true");
url.searchParams.set("embed_origin", location.origin);
document.getElementById("checkout").src = url.toString();
</script></body></html>
"""


class Parent(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the handler's name
        body = PARENT.replace("TOLLGATE", json.dumps(TOLLGATE_ORIGIN)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", PARENT_PORT), Parent)
threading.Thread(target=server.serve_forever, daemon=True).start()


def messages(d):
    return d.execute_script("return window.messages;") or []


def events(d):
    return [m["data"].get("event") for m in messages(d)]


def open_parent(d, checkout_url):
    d.switch_to.default_content()
    d.get(f"{PARENT_ORIGIN}/?checkout=" + urllib.parse.quote(checkout_url, safe=""))


def embedded_purchase(d):
    open_parent(d, EMBED_URL)
    wait(d).until(lambda _: "loaded" in events(d))
    check("the checkout tells the seller's page it loaded", events(d) == ["loaded"], events(d))
    check("from Tollgate's origin", all(m["origin"] == TOLLGATE_ORIGIN for m in messages(d)),
          messages(d))
    frame = d.find_element(By.ID, "checkout")
    d.switch_to.frame(frame)
    fill(d, "customer_email", "ada-embed@example.com")
    fill(d, "customer_name", "Ada Lovelace")
    Select(d.find_element(By.ID, "country")).select_by_value("FR")
    d.find_element(By.ID, "customer_name").click()
    d.switch_to.default_content()
    shoot(d, "embedded")
    d.switch_to.frame(d.find_element(By.ID, "checkout"))
    d.find_element(By.ID, "pay").click()
    d.switch_to.default_content()
    wait(d).until(lambda _: "success" in events(d))
    got = events(d)
    check("then that it was confirmed, then paid", got[:3] == ["loaded", "confirmed", "success"],
          got)
    success = [m["data"] for m in messages(d) if m["data"].get("event") == "success"][0]
    check("success names the seller's success page", success.get("successURL", "").startswith(
        "https://shop.example/thanks"), success)
    check("and tells the seller's page to go there", success.get("redirect") is True, success)
    d.switch_to.frame(d.find_element(By.ID, "checkout"))
    check("the frame shows the confirmation", "/confirmation?embed=true" in d.execute_script(
        "return location.pathname + location.search;"), d.execute_script("return location.href;"))
    d.switch_to.default_content()
    shoot(d, "embedded-paid")


def closed(d):
    open_parent(d, CLOSE_URL)
    wait(d).until(lambda _: "loaded" in events(d))
    d.switch_to.frame(d.find_element(By.ID, "checkout"))
    d.find_element(By.ID, "embed-close").click()
    d.switch_to.default_content()
    wait(d).until(lambda _: "close" in events(d))
    check("the close button tells the seller's page", events(d) == ["loaded", "close"], events(d))
    # The page around the checkout is see-through (the seller's page shows, dimmed), and a
    # click on it, outside the checkout, closes the overlay too; a click inside does not.
    d.switch_to.frame(d.find_element(By.ID, "checkout"))
    backdrop = d.execute_script("return getComputedStyle(document.body).backgroundColor;")
    check("the overlay's backdrop is see-through", backdrop in ("rgba(0, 0, 0, 0)", "transparent"),
          backdrop)
    d.find_element(By.ID, "customer_email").click()
    d.execute_script("document.body.dispatchEvent(new MouseEvent('click', {bubbles: true}));")
    d.switch_to.default_content()
    wait(d).until(lambda _: events(d).count("close") == 2)
    check("a click on the backdrop closes it, one inside does not",
          events(d) == ["loaded", "close", "close"], events(d))


def refused(d):
    # The checkout is for another site: the browser refuses to frame it here, so it never
    # loads and tells nothing; the page itself is not blank elsewhere (its own tab).
    open_parent(d, FOREIGN_URL)
    d.switch_to.frame(d.find_element(By.ID, "checkout"))
    framed_pay = d.find_elements(By.ID, "pay")
    d.switch_to.default_content()
    check("a checkout for another site is not framed here", not framed_pay, framed_pay)
    check("and tells this page nothing", events(d) == [], events(d))
    logs = [e.get("message", "") for e in d.get_log("browser")]
    check("the browser names frame-ancestors", any("frame-ancestors" in m for m in logs), logs)
    d.get(FOREIGN_URL)
    check("opened on its own, it is a checkout", bool(d.find_elements(By.ID, "pay")),
          d.current_url)


run([embedded_purchase, closed, refused])
