//! The operations of the OAuth 2.0 / OpenID Connect server, the personal access tokens and
//! the browser pages (HTML), documented like [`super`]'s.
#![allow(dead_code)] // Documentation stubs: described, never called.

#[allow(unused_imports)]
use super::*;
// ---------------------------------------------------------------------------------------
// OAuth 2.0 / OpenID Connect
// ---------------------------------------------------------------------------------------

/// Register an OAuth 2.0 client (RFC 7591): a signed-in browser session only (a token gets
/// 403). Answers 200, as Polar's SDK expects.
#[utoipa::path(post, path = "/v1/oauth2/register", tag = "oauth2",
    request_body = OAuth2ClientConfiguration,
    security(("session" = [])),
    responses((status = 200, body = OAuth2ClientCreated)))]
fn oauth2_register() {}

/// The signed-in user's clients: a browser session only (a token gets 403).
#[utoipa::path(get, path = "/v1/oauth2/", tag = "oauth2",
    params(("page" = Option<u32>, Query), ("limit" = Option<u32>, Query)),
    security(("session" = [])),
    responses((status = 200, body = ListResource<OAuth2ClientView>)))]
fn oauth2_clients_list() {}

/// Read a client's configuration (RFC 7592): the owner's browser session, or the client's
/// registration access token as the bearer token.
#[utoipa::path(get, path = "/v1/oauth2/register/{client_id}", tag = "oauth2",
    params(("client_id" = String, Path)),
    security(("session" = []), ("bearer" = [])),
    responses(
        (status = 200, body = OAuth2ClientView),
        (status = 400, description = "No credentials", body = OAuth2Error),
        (status = 401, description = "Unknown client, or neither the owner's session nor the client's registration access token", body = OAuth2Error),
    ))]
fn oauth2_client_get() {}

/// Update a client's configuration (RFC 7592): fields left out keep their values.
#[utoipa::path(put, path = "/v1/oauth2/register/{client_id}", tag = "oauth2",
    params(("client_id" = String, Path)),
    request_body = OAuth2ClientConfigurationUpdate,
    security(("session" = []), ("bearer" = [])),
    responses(
        (status = 200, body = OAuth2ClientView),
        (status = 400, description = "No credentials", body = OAuth2Error),
        (status = 401, description = "Unknown client, or neither the owner's session nor the client's registration access token", body = OAuth2Error),
    ))]
fn oauth2_client_update() {}

/// Delete a client (RFC 7592); its tokens stop working.
#[utoipa::path(delete, path = "/v1/oauth2/register/{client_id}", tag = "oauth2",
    params(("client_id" = String, Path)),
    security(("session" = []), ("bearer" = [])),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "No credentials", body = OAuth2Error),
        (status = 401, description = "Unknown client, or neither the owner's session nor the client's registration access token", body = OAuth2Error),
    ))]
fn oauth2_client_delete() {}

/// Exchange an authorization code or a refresh token for tokens.
#[utoipa::path(post, path = "/v1/oauth2/token", tag = "oauth2",
    request_body(content = TokenRequest, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, body = TokenResponse),
        (status = 400, description = "invalid_request, invalid_grant, unsupported_grant_type, invalid_scope", body = OAuth2Error),
        (status = 401, description = "invalid_client", body = OAuth2Error),
    ))]
fn oauth2_token() {}

/// Introspect a token (RFC 7662).
#[utoipa::path(post, path = "/v1/oauth2/introspect", tag = "oauth2",
    request_body(content = TokenIntrospectionRequest, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, body = IntrospectTokenResponse),
        (status = 400, body = OAuth2Error),
        (status = 401, description = "invalid_client", body = OAuth2Error),
    ))]
fn oauth2_introspect() {}

/// Revoke a token (RFC 7009).
#[utoipa::path(post, path = "/v1/oauth2/revoke", tag = "oauth2",
    request_body(content = TokenIntrospectionRequest, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, body = RevokeTokenResponse),
        (status = 400, body = OAuth2Error),
        (status = 401, description = "invalid_client", body = OAuth2Error),
    ))]
fn oauth2_revoke() {}

/// The claims of an OAuth 2.0 access token's subject.
#[utoipa::path(get, path = "/v1/oauth2/userinfo", tag = "oauth2",
    security(("bearer" = ["openid"])),
    responses((status = 200, body = UserInfo)))]
fn oauth2_userinfo_get() {}

/// The claims of an OAuth 2.0 access token's subject.
#[utoipa::path(post, path = "/v1/oauth2/userinfo", tag = "oauth2",
    security(("bearer" = ["openid"])),
    responses((status = 200, body = UserInfo)))]
fn oauth2_userinfo_post() {}

/// OpenID Provider metadata.
#[utoipa::path(get, path = "/.well-known/openid-configuration", tag = "oauth2",
    responses((status = 200, body = OpenIdConfiguration)))]
fn openid_configuration() {}

/// The public keys of id_token signatures.
#[utoipa::path(get, path = "/.well-known/jwks.json", tag = "oauth2",
    responses((status = 200, body = JwkSet)))]
fn jwks() {}

/// Apple Pay's domain-association file (`payments.apple_pay_domain_association`); 404
/// when none is configured.
#[utoipa::path(get, path = "/.well-known/apple-developer-merchantid-domain-association",
    tag = "pages", responses((status = 200, content_type = "text/plain", body = String),
    (status = 404, description = "No file configured", body = Error)))]
fn apple_pay_domain_association() {}

// ---------------------------------------------------------------------------------------
// Personal access tokens (signed-in browser session)
// ---------------------------------------------------------------------------------------

/// The signed-in user's personal access tokens.
#[utoipa::path(get, path = "/v1/personal_access_tokens/", tag = "personal-access-tokens",
    security(("session" = [])),
    responses((status = 200, body = ListResource<PersonalAccessTokenView>)))]
fn pats_list() {}

/// Create a personal access token; the token is shown once.
#[utoipa::path(post, path = "/v1/personal_access_tokens/", tag = "personal-access-tokens",
    request_body = PersonalAccessTokenCreate,
    security(("session" = [])),
    responses((status = 201, body = PersonalAccessTokenCreateResponse)))]
fn pats_create() {}

/// Revoke a personal access token.
#[utoipa::path(delete, path = "/v1/personal_access_tokens/{id}", tag = "personal-access-tokens",
    params(("id" = Uuid, Path)),
    security(("session" = [])),
    responses((status = 204, description = "Revoked")))]
fn pats_delete() {}

// ---------------------------------------------------------------------------------------
// Browser pages (HTML)
// ---------------------------------------------------------------------------------------

/// The authorization request (OAuth 2.0 / OpenID Connect): signs the user in if needed,
/// then shows the consent page, or redirects back to the client when an earlier grant
/// covers the scopes (or with an error).
#[utoipa::path(get, path = "/oauth2/authorize", tag = "pages",
    params(
        ("client_id" = String, Query), ("redirect_uri" = String, Query),
        ("response_type" = String, Query, description = "`code`"),
        ("scope" = Option<String>, Query), ("state" = Option<String>, Query),
        ("nonce" = Option<String>, Query),
        ("code_challenge" = Option<String>, Query),
        ("code_challenge_method" = Option<String>, Query, description = "`S256`"),
        ("prompt" = Option<String>, Query, description = "`none`, `login` or `consent`"),
        ("sub_type" = Option<String>, Query, description = "`user` or `organization`"),
    ),
    responses(
        (status = 200, description = "The consent page", content_type = "text/html"),
        (status = 302, description = "Back to the client, or to sign in"),
        (status = 303, description = "To sign in"),
        (status = 400, description = "An invalid request that can't be sent back", content_type = "text/html"),
    ))]
fn page_authorize() {}

/// The consent form: allow or deny.
#[utoipa::path(post, path = "/oauth2/authorize", tag = "pages",
    responses(
        (status = 302, description = "Back to the client with a code or an error"),
        (status = 303, description = "To sign in"),
        (status = 400, description = "A form that can't be accepted", content_type = "text/html"),
        (status = 403, description = "CSRF check failed", content_type = "text/html"),
    ))]
fn page_consent() {}

/// The sign-in page.
#[utoipa::path(get, path = "/oauth2/login", tag = "pages",
    responses((status = 200, description = "The sign-in form", content_type = "text/html")))]
fn page_login() {}

/// Sign in with e-mail and password.
#[utoipa::path(post, path = "/oauth2/login", tag = "pages",
    responses(
        (status = 303, description = "Signed in; on to the next page"),
        (status = 400, description = "The form again, with the problem", content_type = "text/html"),
        (status = 401, description = "Wrong e-mail or password", content_type = "text/html"),
        (status = 403, description = "CSRF check failed", content_type = "text/html"),
        (status = 429, description = "Too many attempts from this address or for this account, or the account's delay after failed attempts runs (`Retry-After`, `RateLimit-Policy`, `RateLimit`)", body = Error),
        (status = 503, description = "Too many password checks at once (`Retry-After`)", body = Error),
    ))]
fn page_login_post() {}

/// The sign-up page.
#[utoipa::path(get, path = "/oauth2/signup", tag = "pages",
    responses((status = 200, description = "The sign-up form", content_type = "text/html")))]
fn page_signup() {}

/// Create an account. A taken e-mail address answers the same (and creates nothing), so
/// the page does not reveal who has an account.
#[utoipa::path(post, path = "/oauth2/signup", tag = "pages",
    responses(
        (status = 303, description = "To the sign-in page (`/oauth2/login?signed_up=1&next=…`)"),
        (status = 400, description = "The form again, with the problem", content_type = "text/html"),
        (status = 403, description = "CSRF check failed", content_type = "text/html"),
        (status = 422, description = "The form again: an implausible e-mail address or a bad password", content_type = "text/html"),
        (status = 429, description = "Too many sign-ups from this address (`Retry-After`, `RateLimit-Policy`, `RateLimit`)", body = Error),
        (status = 503, description = "Too many password hashes at once (`Retry-After`)", body = Error),
    ))]
fn page_signup_post() {}

/// Sign out.
#[utoipa::path(post, path = "/oauth2/logout", tag = "pages",
    responses(
        (status = 303, description = "Signed out"),
        (status = 403, description = "CSRF check failed", content_type = "text/html"),
    ))]
fn page_logout() {}

/// Personal access tokens of the signed-in user: list, create, revoke.
#[utoipa::path(get, path = "/settings/tokens", tag = "pages",
    responses(
        (status = 200, description = "The tokens page", content_type = "text/html"),
        (status = 303, description = "To sign in"),
    ))]
fn page_tokens() {}

/// Create a personal access token from the settings page.
#[utoipa::path(post, path = "/settings/tokens", tag = "pages",
    responses(
        (status = 200, description = "The page with the new token, shown once", content_type = "text/html"),
        (status = 303, description = "To sign in"),
        (status = 400, description = "The form again, with the problem", content_type = "text/html"),
        (status = 403, description = "CSRF check failed", content_type = "text/html"),
    ))]
fn page_tokens_create() {}

/// Revoke a personal access token from the settings page.
#[utoipa::path(post, path = "/settings/tokens/{id}/revoke", tag = "pages",
    params(("id" = String, Path)),
    responses(
        (status = 303, description = "Back to the tokens page"),
        (status = 403, description = "CSRF check failed", content_type = "text/html"),
        (status = 404, description = "No such token", content_type = "text/html"),
    ))]
fn page_tokens_revoke() {}

/// The hosted checkout page of a checkout session (its `url`): the product, the price, the
/// buyer's details and the payment form, which confirms through the client endpoints.
#[utoipa::path(get, path = "/checkout/{client_secret}", tag = "pages",
    params(("client_secret" = String, Path, description = "The checkout's client secret")),
    responses(
        (status = 200, description = "The checkout page", content_type = "text/html"),
        (status = 303, description = "Already confirmed: to the confirmation page"),
        (status = 404, description = "Unknown, expired or failed checkout", content_type = "text/html"),
    ))]
fn page_checkout() {}

/// "Send me my license keys again": a form for the buyer's e-mail address.
#[utoipa::path(get, path = "/license-keys/resend", tag = "pages",
    params(("organization_id" = String, Query, description = "The seller")),
    responses(
        (status = 200, description = "The form", content_type = "text/html"),
        (status = 404, description = "No such organization", content_type = "text/html"),
    ))]
fn page_resend_form() {}

/// Sends the buyer's keys again: the same answer whether or not the address has keys.
#[utoipa::path(post, path = "/license-keys/resend", tag = "pages",
    request_body(content = LicenseKeyResendForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "Sent, if the address has keys", content_type = "text/html"),
        (status = 404, description = "No such organization", content_type = "text/html"),
        (status = 422, description = "Not an e-mail address: the form again", content_type = "text/html"),
        (status = 429, description = "Too many requests from this client or for this address", content_type = "text/html"),
    ))]
fn page_resend_send() {}

/// The confirmation page (the default `success_url`): the payment in progress (refreshes
/// itself), or the order summary with the license keys the purchase granted.
#[utoipa::path(get, path = "/checkout/{client_secret}/confirmation", tag = "pages",
    params(("client_secret" = String, Path, description = "The checkout's client secret")),
    responses(
        (status = 200, description = "Processing, succeeded or failed", content_type = "text/html"),
        (status = 303, description = "Not confirmed yet: to the checkout page"),
        (status = 404, description = "Unknown or expired checkout", content_type = "text/html"),
    ))]
fn page_checkout_confirmation() {}

/// The script of the checkout pages (cached for a year; its URL carries a version).
#[utoipa::path(get, path = "/checkout/assets/checkout.js", tag = "pages",
    responses((status = 200, description = "JavaScript", content_type = "text/javascript")))]
fn page_checkout_script() {}
