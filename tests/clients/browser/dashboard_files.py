"""The dashboard's Files page (issue 50) in headless Chromium: a seller signs up and in,
creates an organization, uploads a 6 MiB file in the browser (the page's script: POST
/v1/files/ with the dashboard's session, two parts PUT from Blob.slice to their signed
URLs, POST /uploaded), sees it listed (name, version, size, 0 downloads), renames it,
creates a downloadables benefit attaching it
and archives it there, and deletes the file; screenshots at phone and desktop sizes, no
console error.

Reads TOLLGATE_URL, UPLOAD_FILE (a local file of 6 MiB) and the harness's variables. Run
by tests/api/downloadables.rs.
"""

import os
import re
import urllib.parse

from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By

from harness import check, console_errors, env, run, shoot, wait

BASE = env("TOLLGATE_URL").rstrip("/")
UPLOAD = env("UPLOAD_FILE")
EMAIL = "files-seller@example.com"
PASSWORD = "correct horse battery staple 50"
shop = {}


def path(d):
    return urllib.parse.urlsplit(d.current_url).path


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


def fill(d, name, value):
    el = d.find_element(By.NAME, name)
    el.clear()
    el.send_keys(value)


def submit(d, label, scope="main"):
    old = d.find_element(By.TAG_NAME, "html")
    d.find_element(By.XPATH, f"//{scope}//button[normalize-space()='{label}']").click()
    wait(d).until(replaced(old))


def sign_up_in_and_create_an_organization(d):
    d.get(f"{BASE}/oauth2/signup")
    fill(d, "email", EMAIL)
    fill(d, "password", PASSWORD)
    submit(d, "Sign up")
    fill(d, "email", EMAIL)
    fill(d, "password", PASSWORD)
    submit(d, "Sign in")
    check("signed in", path(d) == "/dashboard/organizations/new", d.current_url)
    fill(d, "name", "Acme Files")
    submit(d, "Create organization")
    m = re.fullmatch(r"/dashboard/([^/]+)", path(d))
    check("the organization is created", m is not None, d.current_url)
    shop["org"] = m.group(1)


def the_files_page_uploads_in_the_browser(d):
    d.get(f"{BASE}/dashboard/{shop['org']}/files")
    nav = d.find_element(By.CSS_SELECTOR, "nav.side a[aria-current=page]").text
    check("the navigation has Files", nav == "Files", nav)
    check("no file yet", "No files yet." in d.find_element(By.ID, "files").text)
    shoot(d, "dashboard-files-empty")
    d.find_element(By.ID, "file-input").send_keys(UPLOAD)
    d.find_element(By.ID, "file-version").send_keys("2.1.0")
    old = d.find_element(By.TAG_NAME, "html")
    d.find_element(By.ID, "upload-button").click()
    wait(d, 60).until(replaced(old))
    rows = d.find_elements(By.CSS_SELECTOR, "#files tr[data-file]")
    check("the uploaded file is listed", len(rows) == 1, d.find_element(By.ID, "files").text)
    cells = [c.text for c in rows[0].find_elements(By.TAG_NAME, "td")]
    check("its version, size and downloads", cells[1:3] == ["2.1.0", "6.0 MB"] and cells[4] == "0",
          cells)
    name = rows[0].find_element(By.NAME, "name").get_attribute("value")
    check("its name", name == os.path.basename(UPLOAD), name)
    shop["file"] = rows[0].get_attribute("data-file")
    shoot(d, "dashboard-files")
    console_errors(d, "the files page after an upload")


def a_downloadables_benefit_attaches_the_file(d):
    d.get(f"{BASE}/dashboard/{shop['org']}/benefits")
    form = d.find_element(By.ID, "new-downloadables")
    form.find_element(By.NAME, "description").send_keys("App downloads")
    box = form.find_element(By.ID, f"file-{shop['file']}")
    check("the form offers the file", box.is_displayed() and not box.is_selected())
    box.click()
    shoot(d, "dashboard-benefit-downloadables-new", "#new-downloadables")
    old = d.find_element(By.TAG_NAME, "html")
    form.find_element(By.XPATH, ".//button[normalize-space()='Create downloadables benefit']").click()
    wait(d).until(replaced(old))
    link = d.find_element(By.XPATH, "//main//a[normalize-space()='App downloads']")
    row = link.find_element(By.XPATH, "./ancestor::tr").text
    check("the benefit is listed as downloadables", "downloadables" in row, row)
    old = d.find_element(By.TAG_NAME, "html")
    link.click()
    wait(d).until(replaced(old))
    check("its file is attached", d.find_element(By.ID, f"file-{shop['file']}").is_selected())
    d.find_element(By.ID, f"archived-{shop['file']}").click()
    submit(d, "Save benefit")
    check("saved", "Saved." in d.find_element(By.TAG_NAME, "main").text)
    check("the file is archived now", d.find_element(By.ID, f"archived-{shop['file']}").is_selected())
    shoot(d, "dashboard-benefit-downloadables", "#downloadable-files")
    console_errors(d, "the downloadables benefit pages")
    d.get(f"{BASE}/dashboard/{shop['org']}/files")


def a_file_is_renamed_and_deleted(d):
    row = d.find_element(By.CSS_SELECTOR, f"#files tr[data-file='{shop['file']}']")
    field = row.find_element(By.NAME, "name")
    field.clear()
    field.send_keys("Acme-2.1.0.AppImage")
    old = d.find_element(By.TAG_NAME, "html")
    row.find_element(By.XPATH, ".//button[normalize-space()='Rename']").click()
    wait(d).until(replaced(old))
    name = d.find_element(By.CSS_SELECTOR, f"#files tr[data-file='{shop['file']}'] input[name=name]")
    check("renamed", name.get_attribute("value") == "Acme-2.1.0.AppImage",
          name.get_attribute("value"))
    old = d.find_element(By.TAG_NAME, "html")
    d.find_element(By.CSS_SELECTOR,
                   f"#files tr[data-file='{shop['file']}'] button.danger").click()
    wait(d).until(replaced(old))
    check("deleted", not d.find_elements(By.CSS_SELECTOR, "#files tr[data-file]"))


if __name__ == "__main__":
    run([sign_up_in_and_create_an_organization, the_files_page_uploads_in_the_browser,
         a_downloadables_benefit_attaches_the_file, a_file_is_renamed_and_deleted],
        stop_at_first_failure=True)
