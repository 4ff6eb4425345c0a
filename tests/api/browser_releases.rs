//! The dashboard's Releases page in a real browser: `tests/clients/browser/releases.py`
//! (selenium and Debian's chromium, as `browser.rs`) signs a seller in, reads the
//! update-signing public keys, is refused a version that is not semantic, creates a draft
//! with an uploaded file, publishes it (signed; the key then reads it from the electron
//! feed) and yanks it. Screenshots under `<CARGO_TARGET_TMPDIR>/releases-screenshots`.

use std::path::PathBuf;
use std::time::Duration;

use tollgate::auth::Scope;

use crate::browser::{ensure_chromium, run_script};
use crate::helpers::spawn_app;
use crate::oauth::user_with_password;

const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);
const MIN_CHECKS: u32 = 20;
const SELLER: &str = "releases-seller@example.com";

#[actix_web::test]
async fn a_seller_publishes_and_yanks_a_release_from_the_dashboard() {
    ensure_chromium();
    let app = spawn_app().await;
    let user = user_with_password(&app, SELLER).await;
    let token = app
        .issue_token(
            user,
            &[
                Scope::OrganizationsWrite,
                Scope::ProductsWrite,
                Scope::BenefitsWrite,
                Scope::FilesWrite,
                Scope::LicenseKeysRead,
                Scope::CheckoutsWrite,
            ],
        )
        .await;
    let org = app
        .created_org_as(&token, "Release Shop", "release-shop")
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    // A key of the product, sold by the admin token in the same organization.
    let sale = crate::releases::sale_in(&app, &token, &org).await;
    let name = "ReleaseShop-1.0.0.AppImage";
    crate::releases::upload_as(&app, &token, &org, name, &vec![7u8; 4096]).await;
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("releases-screenshots");
    run_script(
        "releases.py",
        &shots,
        &[
            ("TOLLGATE_URL", app.address.as_str()),
            ("SELLER_EMAIL", SELLER),
            ("ORG_ID", org.as_str()),
            ("PRODUCT_ID", sale.0.as_str()),
            ("LICENSE_KEY", sale.1.as_str()),
            ("FILE_NAME", name),
        ],
        SCRIPT_TIMEOUT,
        MIN_CHECKS,
    )
    .await;
}

/// The Releases pages over HTTP (a browser that keeps cookies, no script): a member reads
/// the page with the organization's public keys and creates a draft with the form; a
/// signed-in user who is not a member gets 404 for the page and each action, and changes
/// nothing; a form without the CSRF token is refused with 403.
#[actix_web::test]
async fn the_releases_pages_are_for_members_only() {
    use crate::oauth::{signed_in, Browser};
    let app = spawn_app().await;
    let user = user_with_password(&app, SELLER).await;
    let token = app
        .issue_token(
            user,
            &[
                Scope::OrganizationsWrite,
                Scope::ProductsWrite,
                Scope::BenefitsWrite,
                Scope::FilesWrite,
                Scope::LicenseKeysRead,
                Scope::CheckoutsWrite,
            ],
        )
        .await;
    let org = app
        .created_org_as(&token, "Release Shop", "release-shop-http")
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (product, _) = crate::releases::sale_in(&app, &token, &org).await;
    let file =
        crate::releases::upload_as(&app, &token, &org, "App-2.0.0.AppImage", &[1u8; 100]).await;
    let keys = app
        .get(
            &format!("/v1/releases/signing-key?organization_id={org}"),
            Some(&token),
        )
        .await;
    keys.expect(200);

    async fn csrf(b: &mut Browser) -> String {
        b.get("/oauth2/login").await.csrf()
    }
    let page_path = format!("/dashboard/{org}/releases");
    let mut seller = signed_in(&app, SELLER).await;
    let page = seller.get(&page_path).await;
    assert_eq!(page.status.as_u16(), 200, "{}", page.body);
    assert!(page
        .body
        .contains(keys.body["sparkle_public_ed_key"].as_str().unwrap()));
    let token_csrf = csrf(&mut seller).await;
    let created = seller
        .post(
            &page_path,
            &[
                ("csrf_token", token_csrf.as_str()),
                ("product_id", product.as_str()),
                ("version", "2.0.0"),
                ("channel", "beta"),
                ("notes", "Beta"),
                ("platform", "linux-x86_64"),
                ("bundle", "appimage"),
                ("file_id", file.as_str()),
                ("platform", "linux-x86_64"),
                ("bundle", "deb"),
                ("file_id", ""),
            ],
        )
        .await;
    assert_eq!(created.status.as_u16(), 303, "{}", created.body);
    let list = app
        .get(
            &format!("/v1/releases/?organization_id={org}"),
            Some(&token),
        )
        .await;
    assert_eq!(list.total_count(), 1);
    let release = list.items()[0].clone();
    assert_eq!(release["channel"], "beta");
    assert_eq!(release["artifacts"].as_array().unwrap().len(), 1);
    let id = release["id"].as_str().unwrap().to_string();

    // Without the CSRF token: 403, nothing published.
    let forged = seller
        .post(&format!("{page_path}/{id}/publish"), &[("csrf_token", "")])
        .await;
    assert_eq!(forged.status.as_u16(), 403);

    // Another signed-in user: 404 everywhere, nothing changes.
    let mut stranger = signed_in(&app, "stranger-releases@example.com").await;
    assert_eq!(stranger.get(&page_path).await.status.as_u16(), 404);
    let c = csrf(&mut stranger).await;
    for action in ["publish", "yank"] {
        let r = stranger
            .post(
                &format!("{page_path}/{id}/{action}"),
                &[("csrf_token", c.as_str())],
            )
            .await;
        assert_eq!(r.status.as_u16(), 404, "{action}");
    }
    let r = stranger
        .post(
            &page_path,
            &[("csrf_token", c.as_str()), ("version", "9.9.9")],
        )
        .await;
    assert_eq!(r.status.as_u16(), 404);
    let r = app.get(&format!("/v1/releases/{id}"), Some(&token)).await;
    assert_eq!(r.body["status"], "draft");

    // The member publishes it, then yanks it.
    let c = csrf(&mut seller).await;
    let r = seller
        .post(
            &format!("{page_path}/{id}/publish"),
            &[("csrf_token", c.as_str())],
        )
        .await;
    assert_eq!(r.status.as_u16(), 303, "{}", r.body);
    let r = app.get(&format!("/v1/releases/{id}"), Some(&token)).await;
    assert_eq!(r.body["status"], "published");
    let r = seller
        .post(
            &format!("{page_path}/{id}/yank"),
            &[("csrf_token", c.as_str())],
        )
        .await;
    assert_eq!(r.status.as_u16(), 303);
    let r = app.get(&format!("/v1/releases/{id}"), Some(&token)).await;
    assert_eq!(r.body["status"], "yanked");
}
