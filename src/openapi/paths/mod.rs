//! The operations of the OpenAPI document, one per route the server registers (a test
//! holds the two lists equal). Each function only carries its `#[utoipa::path]`; the
//! handlers live in `crate::routes`. Error responses common to every operation (401, 403,
//! 404, 422) are added by `super::finish` from what each operation declares here.
#![allow(dead_code)] // Documentation stubs: described, never called.

mod pages;
pub use pages::*;

use crate::api::benefit::{BenefitCreate, BenefitType, BenefitUpdate, BenefitView};
use crate::api::custom_field::{
    CustomFieldCreate, CustomFieldTypeView, CustomFieldUpdate, CustomFieldView,
};
use crate::api::customer::{CustomerCreate, CustomerUpdate, CustomerView};
use crate::api::discount::{DiscountCreate, DiscountUpdate, DiscountView};
use crate::api::dispute::DisputeView;
use crate::api::health::Health;
use crate::api::license_key::{
    LicenseKeyActivate, LicenseKeyActivationCreated, LicenseKeyActivationRead,
    LicenseKeyDeactivate, LicenseKeyRead, LicenseKeyResend, LicenseKeyResendAccepted,
    LicenseKeyResendForm, LicenseKeyStatus, LicenseKeyUpdate, LicenseKeyValidate,
    LicenseKeyWithActivations, RotatedLicenseKey, ValidatedLicenseKey,
};
use crate::api::oauth2::{
    IntrospectTokenResponse, JwkSet, OAuth2ClientConfiguration, OAuth2ClientConfigurationUpdate,
    OAuth2ClientCreated, OAuth2ClientView, OpenIdConfiguration, PersonalAccessTokenCreate,
    PersonalAccessTokenCreateResponse, PersonalAccessTokenView, RevokeTokenResponse,
    TokenIntrospectionRequest, TokenRequest, TokenResponse, UserInfo,
};
use crate::api::order::OrderView;
use crate::api::organization::{OrganizationCreate, OrganizationUpdate, OrganizationView};
use crate::api::product::{ProductBenefitsUpdate, ProductCreate, ProductUpdate, ProductView};
use crate::api::refund::{RefundCreate, RefundView};
use crate::api::subscription::{
    SubscriptionChangePreviewInput, SubscriptionUpdate, SubscriptionView,
};
use crate::api::webhook::{
    WebhookDeliveryView, WebhookEndpointCreate, WebhookEndpointUpdate, WebhookEndpointView,
};
use crate::api::ListResource;
use crate::app::plan_change::SubscriptionChargePreview;
use crate::error::ErrorBody as Error;

/// The body of the OAuth endpoints' errors.
type OAuth2Error = crate::error::OAuthErrorBody<'static>;

// ---------------------------------------------------------------------------------------
// Health
// ---------------------------------------------------------------------------------------

/// Liveness: the process is up and serving HTTP.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, body = Health)))]
fn healthz() {}

/// Readiness: the store is open, start-up recovery has finished and the store acknowledges
/// writes (a storage failure such as a full disk answers 503). On PostgreSQL, also that
/// the database can be reached: while it cannot, 503 with `code` `database_read_only`
/// (validations of keys this node holds are still answered from memory, within
/// `storage.outage_window_secs`) or `database_down` (nothing is).
#[utoipa::path(get, path = "/readyz", tag = "health", responses(
    (status = 200, body = Health),
    (status = 503, description = "Starting up, a storage failure, or the database unreachable \
        (code database_read_only or database_down)", body = Error,
        headers(("Retry-After" = String, description = "Seconds to wait"))),
))]
fn readyz() {}

/// Metrics for operators in the Prometheus text format (version 0.0.4). Off (404) unless
/// `[metrics] token` is set; then only with that token as the bearer (401 otherwise).
#[utoipa::path(get, path = "/metrics", tag = "health",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The metrics", content_type = "text/plain; version=0.0.4", body = String),
        (status = 401, description = "Missing or wrong token", body = Error),
        (status = 404, description = "No token configured: metrics are off", body = Error),
))]
fn metrics() {}

/// A consistent snapshot of the whole store, for `tollgate backup` (binary; only a personal
/// access token of an admin user, such as the bootstrap token, may take one).
#[utoipa::path(get, path = "/v1/admin/backup", tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The snapshot", content_type = "application/octet-stream"),
))]
fn admin_backup() {}

/// Stripe's events about the payments Tollgate started (register this URL in Stripe with
/// the `payment_intent.succeeded` and `payment_intent.payment_failed` events). Verified by
/// the `Stripe-Signature` header; 404 unless `payments.processor = "stripe"`.
#[utoipa::path(post, path = "/v1/integrations/stripe/webhook", tag = "integrations",
    request_body(content = Object, content_type = "application/json", description = "A Stripe event"),
    params(("Stripe-Signature" = String, Header, description = "Stripe's signature of the body")),
    responses(
        (status = 200, description = "Handled, or a duplicate", body = Object),
        (status = 400, description = "Bad signature or not an event", body = Error),
        (status = 404, description = "Stripe is not the configured processor", body = Error),
))]
fn stripe_webhook() {}

/// This API's OpenAPI 3.1 document.
#[utoipa::path(get, path = "/openapi.json", tag = "meta", responses(
    (status = 200, description = "The OpenAPI document", content_type = "application/json"),
))]
fn openapi_json() {}

/// The OpenAPI document of one API version (`2026-04`, `2026-10`, `2027-01`): the fields
/// and routes that version serves. The same version is asked for with `Polar-Version`.
#[utoipa::path(get, path = "/{version}/openapi.json", tag = "meta",
    params(("version" = String, Path, description = "An API version, e.g. `2026-10`.")),
    responses(
        (status = 200, description = "The OpenAPI document", content_type = "application/json"),
        (status = 404, description = "Not a supported version", body = crate::error::ErrorBody),
))]
fn openapi_json_version() {}

/// The API reference, rendered from the OpenAPI document.
#[utoipa::path(get, path = "/docs", tag = "meta", responses(
    (status = 200, description = "An HTML page", content_type = "text/html"),
))]
fn docs() {}

// ---------------------------------------------------------------------------------------
// Organizations
// ---------------------------------------------------------------------------------------

/// List the organizations the caller is a member of.
#[utoipa::path(get, path = "/v1/organizations/", tag = "organizations",
    params(
        ("slug" = Option<String>, Query, description = "Filter by slug."),
        ("page" = Option<u32>, Query, description = "Page number, from 1."),
        ("limit" = Option<u32>, Query, description = "Page size, 1 to 100."),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `name`, `-` prefix for descending."),
    ),
    security(("bearer" = ["organizations:read"])),
    responses((status = 200, body = ListResource<OrganizationView>)))]
fn organizations_list() {}

/// Create an organization; the caller becomes its member.
#[utoipa::path(post, path = "/v1/organizations/", tag = "organizations",
    request_body = OrganizationCreate,
    security(("bearer" = ["organizations:write"])),
    responses((status = 201, body = OrganizationView), (status = 409, body = Error)))]
fn organizations_create() {}

/// Get an organization.
#[utoipa::path(get, path = "/v1/organizations/{id}", tag = "organizations",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["organizations:read"])),
    responses((status = 200, body = OrganizationView)))]
fn organizations_get() {}

/// Update an organization.
#[utoipa::path(patch, path = "/v1/organizations/{id}", tag = "organizations",
    params(("id" = Uuid, Path)),
    request_body = OrganizationUpdate,
    security(("bearer" = ["organizations:write"])),
    responses((status = 200, body = OrganizationView)))]
fn organizations_update() {}

// ---------------------------------------------------------------------------------------
// Benefits
// ---------------------------------------------------------------------------------------

/// List benefits.
#[utoipa::path(get, path = "/v1/benefits/", tag = "benefits",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("type" = Option<Vec<BenefitType>>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["benefits:read"])),
    responses((status = 200, body = ListResource<BenefitView>)))]
fn benefits_list() {}

/// Create a benefit.
#[utoipa::path(post, path = "/v1/benefits/", tag = "benefits",
    request_body = BenefitCreate,
    security(("bearer" = ["benefits:write"])),
    responses((status = 201, body = BenefitView)))]
fn benefits_create() {}

/// Get a benefit.
#[utoipa::path(get, path = "/v1/benefits/{id}", tag = "benefits",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["benefits:read"])),
    responses((status = 200, body = BenefitView)))]
fn benefits_get() {}

/// Update a benefit; `type` must be the benefit's.
#[utoipa::path(patch, path = "/v1/benefits/{id}", tag = "benefits",
    params(("id" = Uuid, Path)),
    request_body = BenefitUpdate,
    security(("bearer" = ["benefits:write"])),
    responses((status = 200, body = BenefitView), (status = 400, description = "The type of a benefit can't be changed", body = Error)))]
fn benefits_update() {}

/// Delete a benefit (soft); its grants are revoked.
#[utoipa::path(delete, path = "/v1/benefits/{id}", tag = "benefits",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["benefits:write"])),
    responses((status = 204, description = "Deleted")))]
fn benefits_delete() {}

// ---------------------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------------------

/// List products.
#[utoipa::path(get, path = "/v1/products/", tag = "products",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("query" = Option<String>, Query, description = "Filter by name."),
        ("is_archived" = Option<bool>, Query),
        ("is_recurring" = Option<bool>, Query),
        ("benefit_id" = Option<Vec<Uuid>>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `name`, `price_type`, `price_amount_type`, `price_amount`, `-` prefix for descending."),
    ),
    security(("bearer" = ["products:read"])),
    responses((status = 200, body = ListResource<ProductView>)))]
fn products_list() {}

/// Create a product with its prices.
#[utoipa::path(post, path = "/v1/products/", tag = "products",
    request_body = ProductCreate,
    security(("bearer" = ["products:write"])),
    responses((status = 201, body = ProductView)))]
fn products_create() {}

/// Get a product.
#[utoipa::path(get, path = "/v1/products/{id}", tag = "products",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["products:read"])),
    responses((status = 200, body = ProductView)))]
fn products_get() {}

/// Update a product; `prices` replaces the price set (existing prices by id).
#[utoipa::path(patch, path = "/v1/products/{id}", tag = "products",
    params(("id" = Uuid, Path)),
    request_body = ProductUpdate,
    security(("bearer" = ["products:write"])),
    responses((status = 200, body = ProductView)))]
fn products_update() {}

/// Set the benefits of a product, in order.
#[utoipa::path(post, path = "/v1/products/{id}/benefits", tag = "products",
    params(("id" = Uuid, Path)),
    request_body = ProductBenefitsUpdate,
    security(("bearer" = ["products:write"])),
    responses((status = 200, body = ProductView)))]
fn products_update_benefits() {}

// ---------------------------------------------------------------------------------------
// Discounts
// ---------------------------------------------------------------------------------------

/// List discounts.
#[utoipa::path(get, path = "/v1/discounts/", tag = "discounts",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("query" = Option<String>, Query, description = "Filter by name or code."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `name`, `code`, `redemptions_count`, `-` prefix for descending."),
    ),
    security(("bearer" = ["discounts:read"])),
    responses((status = 200, body = ListResource<DiscountView>)))]
fn discounts_list() {}

/// Create a discount.
#[utoipa::path(post, path = "/v1/discounts/", tag = "discounts",
    request_body = DiscountCreate,
    security(("bearer" = ["discounts:write"])),
    responses((status = 201, body = DiscountView)))]
fn discounts_create() {}

/// Get a discount.
#[utoipa::path(get, path = "/v1/discounts/{id}", tag = "discounts",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["discounts:read"])),
    responses((status = 200, body = DiscountView)))]
fn discounts_get() {}

/// Update a discount; amounts and duration are fixed once it was redeemed.
#[utoipa::path(patch, path = "/v1/discounts/{id}", tag = "discounts",
    params(("id" = Uuid, Path)),
    request_body = DiscountUpdate,
    security(("bearer" = ["discounts:write"])),
    responses((status = 200, body = DiscountView)))]
fn discounts_update() {}

/// Delete a discount (soft).
#[utoipa::path(delete, path = "/v1/discounts/{id}", tag = "discounts",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["discounts:write"])),
    responses((status = 204, description = "Deleted")))]
fn discounts_delete() {}

// ---------------------------------------------------------------------------------------
// Customers
// ---------------------------------------------------------------------------------------

/// List customers.
#[utoipa::path(get, path = "/v1/customers/", tag = "customers",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("email" = Option<String>, Query, description = "Filter by exact e-mail address (case-insensitive)."),
        ("query" = Option<String>, Query, description = "Filter by name, e-mail or external ID (prefix). Under 3 characters: the start of a word of the e-mail or name, or of the external ID."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `email`, `name`, `-` prefix for descending."),
    ),
    security(("bearer" = ["customers:read"])),
    responses((status = 200, body = ListResource<CustomerView>)))]
fn customers_list() {}

/// Create a customer.
#[utoipa::path(post, path = "/v1/customers/", tag = "customers",
    request_body = CustomerCreate,
    security(("bearer" = ["customers:write"])),
    responses((status = 201, body = CustomerView)))]
fn customers_create() {}

/// Get a customer.
#[utoipa::path(get, path = "/v1/customers/{id}", tag = "customers",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customers:read"])),
    responses((status = 200, body = CustomerView)))]
fn customers_get() {}

/// Update a customer.
#[utoipa::path(patch, path = "/v1/customers/{id}", tag = "customers",
    params(("id" = Uuid, Path)),
    request_body = CustomerUpdate,
    security(("bearer" = ["customers:write"])),
    responses((status = 200, body = CustomerView)))]
fn customers_update() {}

/// Delete a customer (soft).
#[utoipa::path(delete, path = "/v1/customers/{id}", tag = "customers",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customers:write"])),
    responses((status = 204, description = "Deleted")))]
fn customers_delete() {}

// ---------------------------------------------------------------------------------------
// Custom fields
// ---------------------------------------------------------------------------------------

/// List custom fields.
#[utoipa::path(get, path = "/v1/custom-fields/", tag = "custom-fields",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("query" = Option<String>, Query, description = "Filter by name or slug."),
        ("type" = Option<Vec<CustomFieldTypeView>>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`slug`, `created_at`, `name`, `type`, `-` prefix for descending."),
    ),
    security(("bearer" = ["custom_fields:read"])),
    responses((status = 200, body = ListResource<CustomFieldView>)))]
fn custom_fields_list() {}

/// Create a custom field.
#[utoipa::path(post, path = "/v1/custom-fields/", tag = "custom-fields",
    request_body = CustomFieldCreate,
    security(("bearer" = ["custom_fields:write"])),
    responses((status = 201, body = CustomFieldView)))]
fn custom_fields_create() {}

/// Get a custom field.
#[utoipa::path(get, path = "/v1/custom-fields/{id}", tag = "custom-fields",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["custom_fields:read"])),
    responses((status = 200, body = CustomFieldView)))]
fn custom_fields_get() {}

/// Update a custom field; `type` must be the field's.
#[utoipa::path(patch, path = "/v1/custom-fields/{id}", tag = "custom-fields",
    params(("id" = Uuid, Path)),
    request_body = CustomFieldUpdate,
    security(("bearer" = ["custom_fields:write"])),
    responses((status = 200, body = CustomFieldView)))]
fn custom_fields_update() {}

/// Delete a custom field (soft).
#[utoipa::path(delete, path = "/v1/custom-fields/{id}", tag = "custom-fields",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["custom_fields:write"])),
    responses((status = 204, description = "Deleted")))]
fn custom_fields_delete() {}

// ---------------------------------------------------------------------------------------
// Orders and subscriptions
// ---------------------------------------------------------------------------------------

/// List orders.
#[utoipa::path(get, path = "/v1/orders/", tag = "orders",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("product_id" = Option<Vec<Uuid>>, Query),
        ("product_price_type" = Option<Vec<String>>, Query, description = "`one_time` or `recurring`."),
        ("discount_id" = Option<Vec<Uuid>>, Query),
        ("customer_id" = Option<Vec<Uuid>>, Query),
        ("external_customer_id" = Option<Vec<String>>, Query, description = "The customers with these external ids."),
        ("checkout_id" = Option<Vec<Uuid>>, Query),
        ("query" = Option<String>, Query, description = "Tollgate's extension: the orders of the customers the customers list's `query` finds (e-mail, name, external ID), or the order with this id."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `amount`, `customer`, `product`, `discount`, `subscription`, `-` prefix for descending."),
    ),
    security(("bearer" = ["orders:read"])),
    responses((status = 200, body = ListResource<OrderView>)))]
fn orders_list() {}

/// Get an order.
#[utoipa::path(get, path = "/v1/orders/{id}", tag = "orders",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["orders:read"])),
    responses((status = 200, body = OrderView)))]
fn orders_get() {}

/// List refunds.
#[utoipa::path(get, path = "/v1/refunds/", tag = "refunds",
    params(
        ("id" = Option<Vec<Uuid>>, Query),
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("order_id" = Option<Vec<Uuid>>, Query),
        ("subscription_id" = Option<Vec<Uuid>>, Query),
        ("customer_id" = Option<Vec<Uuid>>, Query),
        ("external_customer_id" = Option<Vec<String>>, Query, description = "The customers with these external ids."),
        ("succeeded" = Option<bool>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `amount`, `-` prefix for descending."),
    ),
    security(("bearer" = ["refunds:read"])),
    responses((status = 200, body = ListResource<RefundView>)))]
fn refunds_list() {}

/// Refund an order, in full or in part, through the processor that took the payment;
/// `revoke_benefits` revokes the order's license keys.
#[utoipa::path(post, path = "/v1/refunds/", tag = "refunds",
    request_body = RefundCreate,
    security(("bearer" = ["refunds:write"])),
    responses((status = 201, body = RefundView, description = "The refund (in a named API version)"), (status = 200, body = RefundView, description = "The refund (without a `Polar-Version`: the seed era's status)"), (status = 400, description = "RevokeSubscriptionBenefitsProhibited, or PaymentError: the processor refused the refund", body = Error), (status = 403, description = "RefundedAlready: the order is refunded in full", body = Error), (status = 503, description = "The processor cannot be reached: the refund stays pending and is asked again", body = Error)))]
fn refunds_create() {}

/// List disputes (chargebacks Stripe reported).
#[utoipa::path(get, path = "/v1/disputes/", tag = "disputes",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("order_id" = Option<Vec<Uuid>>, Query),
        ("status" = Option<Vec<String>>, Query, description = "`prevented`, `early_warning`, `needs_response`, `under_review`, `lost`, `won`."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `amount`, `-` prefix for descending."),
    ),
    security(("bearer" = ["disputes:read"])),
    responses((status = 200, body = ListResource<DisputeView>)))]
fn disputes_list() {}

/// Get a dispute.
#[utoipa::path(get, path = "/v1/disputes/{id}", tag = "disputes",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["disputes:read"])),
    responses((status = 200, body = DisputeView)))]
fn disputes_get() {}

/// Accept a dispute, conceding the chargeback: closes it at Stripe, which settles it as
/// `lost` (the order's license keys are revoked, as for any lost dispute). Only a dispute
/// that needs a response can be accepted; any other is a 409 `DisputeNotOpenError`.
#[utoipa::path(post, path = "/v1/disputes/{id}/accept", tag = "disputes",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["disputes:write"])),
    responses(
        (status = 200, body = DisputeView),
        (status = 404, description = "Dispute not found", body = Error),
        (status = 409, description = "The dispute is not awaiting a response", body = Error),
))]
fn disputes_accept() {}

/// List subscriptions.
#[utoipa::path(get, path = "/v1/subscriptions/", tag = "subscriptions",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("product_id" = Option<Vec<Uuid>>, Query),
        ("customer_id" = Option<Vec<Uuid>>, Query),
        ("discount_id" = Option<Vec<Uuid>>, Query),
        ("active" = Option<bool>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`customer`, `status`, `started_at`, `current_period_end`, `amount`, `product`, `discount`, `-` prefix for descending."),
    ),
    security(("bearer" = ["subscriptions:read"])),
    responses((status = 200, body = ListResource<SubscriptionView>)))]
fn subscriptions_list() {}

/// Start a free subscription for an existing customer (no order, no e-mail).
#[utoipa::path(post, path = "/v1/subscriptions/", tag = "subscriptions",
    request_body = crate::api::subscription::SubscriptionCreate,
    security(("bearer" = ["subscriptions:write"])),
    responses((status = 201, body = SubscriptionView)))]
fn subscriptions_create() {}

/// End a subscription now and revoke its license keys.
#[utoipa::path(delete, path = "/v1/subscriptions/{id}", tag = "subscriptions",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["subscriptions:write"])),
    responses((status = 200, body = SubscriptionView), (status = 403, description = "Already ended (`AlreadyCanceledSubscription`)", body = Error), (status = 404, body = Error)))]
fn subscriptions_revoke() {}

/// Get a subscription.
#[utoipa::path(get, path = "/v1/subscriptions/{id}", tag = "subscriptions",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["subscriptions:read"])),
    responses((status = 200, body = SubscriptionView)))]
fn subscriptions_get() {}

/// Change the plan (another product or price, with proration), cancel (at period end) or
/// revoke (at once) a subscription.
#[utoipa::path(patch, path = "/v1/subscriptions/{id}", tag = "subscriptions",
    params(("id" = Uuid, Path)),
    request_body = SubscriptionUpdate,
    security(("bearer" = ["subscriptions:write"])),
    responses((status = 200, body = SubscriptionView), (status = 400, description = "The subscription can't make this change", body = Error), (status = 402, description = "The charge of an `invoice` change was declined (`PaymentFailed`)", body = Error), (status = 403, body = Error), (status = 409, description = "No saved payment method (`PaymentMethodRequired`), or the subscription changed meanwhile (`SubscriptionLocked`)", body = Error)))]
fn subscriptions_update() {}

/// Preview what a plan change costs now: the prorations, what is charged at once and what
/// goes on the next renewal. Nothing is written.
#[utoipa::path(post, path = "/v1/subscriptions/{id}/change-preview", tag = "subscriptions",
    params(("id" = Uuid, Path)),
    request_body = SubscriptionChangePreviewInput,
    security(("bearer" = ["subscriptions:read"])),
    responses((status = 200, body = SubscriptionChargePreview), (status = 403, body = Error)))]
fn subscriptions_change_preview() {}

// ---------------------------------------------------------------------------------------
// License keys
// ---------------------------------------------------------------------------------------

/// Import license keys issued elsewhere (1 to 1,000 per request; idempotent per key value;
/// body up to `server.import_body_limit_bytes`).
#[utoipa::path(post, path = "/v1/license-keys/import", tag = "license-keys",
    request_body = crate::api::license_key_import::LicenseKeyImport,
    security(("bearer" = ["license_keys:write"])),
    responses((status = 200, body = crate::api::license_key_import::LicenseKeyImportResult), (status = 404, body = Error), (status = 409, description = "A concurrent import of the same keys or customers", body = Error), (status = 413, body = Error)))]
fn license_keys_import() {}

/// Generate keys of a license-key benefit without an order (giveaways, bundles): each is
/// claimed by one customer (`POST /v1/customer-portal/license-keys/claim`).
#[utoipa::path(post, path = "/v1/license-keys/generate", tag = "license-keys",
    request_body = crate::api::license_key_import::LicenseKeyGenerate,
    security(("bearer" = ["license_keys:write"])),
    responses((status = 200, body = crate::api::license_key_import::GeneratedKeys), (status = 404, body = Error)))]
fn license_keys_generate() {}

/// List license keys.
#[utoipa::path(get, path = "/v1/license-keys", tag = "license-keys",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("benefit_id" = Option<Vec<Uuid>>, Query),
        ("status" = Option<Vec<LicenseKeyStatus>>, Query, description = "Any of these statuses"),
        ("query" = Option<String>, Query, description = "Tollgate's extension: part of the key (at least 4 characters, from the start of one of its segments, or its end; a leading `****-` is dropped), or the customer's e-mail, name or external ID (as the customers list's `query`) or id."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["license_keys:read"])),
    responses((status = 200, body = ListResource<LicenseKeyRead>)))]
fn license_keys_list() {}

/// List license keys: the spelling today's Polar clients call (the same list).
#[utoipa::path(get, path = "/v1/license-keys/", tag = "license-keys",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("benefit_id" = Option<Vec<Uuid>>, Query),
        ("status" = Option<Vec<LicenseKeyStatus>>, Query, description = "Any of these statuses"),
        ("query" = Option<String>, Query, description = "Tollgate's extension: part of the key (at least 4 characters, from the start of one of its segments, or its end; a leading `****-` is dropped), or the customer's e-mail, name or external ID (as the customers list's `query`) or id."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["license_keys:read"])),
    responses((status = 200, body = ListResource<LicenseKeyRead>)))]
fn license_keys_list_slash() {}

/// Get a license key with its activations.
#[utoipa::path(get, path = "/v1/license-keys/{id}", tag = "license-keys",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["license_keys:read"])),
    responses((status = 200, body = LicenseKeyWithActivations)))]
fn license_keys_get() {}

/// Update a license key.
#[utoipa::path(patch, path = "/v1/license-keys/{id}", tag = "license-keys",
    params(("id" = Uuid, Path)),
    request_body = LicenseKeyUpdate,
    security(("bearer" = ["license_keys:write"])),
    responses((status = 200, body = LicenseKeyRead)))]
fn license_keys_update() {}

/// Rotate a license key: a new value (with the benefit's prefix) for the same key, whose
/// status, usage, limits, expiry and activations are kept; the old value validates no more.
/// Only a granted or disabled key rotates.
#[utoipa::path(post, path = "/v1/license-keys/{id}/rotate", tag = "license-keys",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["license_keys:write"])),
    responses((status = 200, body = RotatedLicenseKey), (status = 400, description = "RotateNotPermitted: the key is revoked", body = Error)))]
fn license_keys_rotate() {}

/// Get an activation of a license key.
#[utoipa::path(get, path = "/v1/license-keys/{id}/activations/{activation_id}", tag = "license-keys",
    params(("id" = Uuid, Path), ("activation_id" = Uuid, Path)),
    security(("bearer" = ["license_keys:read"])),
    responses((status = 200, body = LicenseKeyActivationRead)))]
fn license_keys_get_activation() {}

/// Validate a license key of an organization the token reaches (the customer portal's
/// validation, with a token).
#[utoipa::path(post, path = "/v1/license-keys/validate", tag = "license-keys",
    request_body = LicenseKeyValidate,
    security(("bearer" = ["license_keys:write"])),
    responses((status = 200, body = ValidatedLicenseKey), (status = 400, description = "Unreadable body, the usage limit would be exceeded, or an `Accept-Signature` Tollgate cannot honour", body = Error), (status = 404, description = "No such key in an organization the token reaches, or the key does not validate", body = Error)))]
fn license_keys_validate() {}

/// Activate a license key of an organization the token reaches on a device.
#[utoipa::path(post, path = "/v1/license-keys/activate", tag = "license-keys",
    request_body = LicenseKeyActivate,
    security(("bearer" = ["license_keys:write"])),
    responses((status = 200, body = LicenseKeyActivationCreated), (status = 400, description = "Unreadable body", body = Error), (status = 403, description = "The key takes no activation, is not granted, has expired, or has no free activation", body = Error), (status = 404, description = "No such key in an organization the token reaches", body = Error)))]
fn license_keys_activate() {}

/// Remove an activation of a license key of an organization the token reaches.
#[utoipa::path(post, path = "/v1/license-keys/deactivate", tag = "license-keys",
    request_body = LicenseKeyDeactivate,
    security(("bearer" = ["license_keys:write"])),
    responses((status = 204, description = "Deactivated"), (status = 400, description = "Unreadable body", body = Error), (status = 404, description = "No such key, or no such live activation", body = Error)))]
fn license_keys_deactivate() {}

// ---------------------------------------------------------------------------------------
// Customer portal
// ---------------------------------------------------------------------------------------

/// The customer's license keys (customer session token).
#[utoipa::path(get, path = "/v1/customer-portal/license-keys/", tag = "customer-portal",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("benefit_id" = Option<Vec<Uuid>>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = ListResource<LicenseKeyRead>)))]
fn portal_license_keys_list() {}

/// One of the customer's license keys (customer session token).
#[utoipa::path(get, path = "/v1/customer-portal/license-keys/{id}", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = LicenseKeyWithActivations)))]
fn portal_license_keys_get() {}

/// Rotate one of the customer's license keys (customer session token): as
/// `POST /v1/license-keys/{id}/rotate`.
#[utoipa::path(post, path = "/v1/customer-portal/license-keys/{id}/rotate", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:write"])),
    responses((status = 200, body = RotatedLicenseKey), (status = 400, description = "RotateNotPermitted: the key is revoked", body = Error)))]
fn portal_license_keys_rotate() {}

/// Send a buyer's license keys to their e-mail again (no authentication). The answer is
/// the same whether or not the address holds keys from the organization.
#[utoipa::path(post, path = "/v1/customer-portal/license-keys/resend", tag = "customer-portal",
    request_body = LicenseKeyResend,
    responses((status = 202, body = LicenseKeyResendAccepted), (status = 429, description = "Too many requests from this client, or for this address", body = Error)))]
fn portal_resend() {}

/// Validate a license key (no authentication).
#[utoipa::path(post, path = "/v1/customer-portal/license-keys/validate", tag = "customer-portal",
    params(("Accept-Signature" = Option<String>, Header, description = "RFC 9421 §5.1: ask for a signed answer, e.g. `sig1=(\"@status\" \"content-digest\" \"@method\";req \"@path\";req);nonce=\"…\"`. The answer then carries `Content-Digest`, `Signature-Input` and `Signature` (ed25519, `keyid` from the organization's JWKS)")),
    request_body = LicenseKeyValidate,
    responses((status = 200, body = ValidatedLicenseKey), (status = 400, description = "Unreadable body, the usage limit would be exceeded, or an `Accept-Signature` Tollgate cannot honour", body = Error), (status = 403, body = Error), (status = 404, body = Error)))]
fn portal_validate() {}

/// Activate a license key on a device (no authentication).
#[utoipa::path(post, path = "/v1/customer-portal/license-keys/activate", tag = "customer-portal",
    params(("Accept-Signature" = Option<String>, Header, description = "RFC 9421 §5.1: ask for a signed answer, e.g. `sig1=(\"@status\" \"content-digest\" \"@method\";req \"@path\";req);nonce=\"…\"`. The answer then carries `Content-Digest`, `Signature-Input` and `Signature` (ed25519, `keyid` from the organization's JWKS)")),
    request_body = LicenseKeyActivate,
    responses((status = 200, body = LicenseKeyActivationCreated), (status = 400, description = "Unreadable body, the usage limit would be exceeded, or an `Accept-Signature` Tollgate cannot honour", body = Error), (status = 403, body = Error), (status = 404, body = Error)))]
fn portal_activate() {}

/// Remove an activation of a license key (no authentication).
#[utoipa::path(post, path = "/v1/customer-portal/license-keys/deactivate", tag = "customer-portal",
    params(("Accept-Signature" = Option<String>, Header, description = "RFC 9421 §5.1: ask for a signed answer, e.g. `sig1=(\"@status\" \"content-digest\" \"@method\";req \"@path\";req);nonce=\"…\"`. The answer then carries `Content-Digest`, `Signature-Input` and `Signature` (ed25519, `keyid` from the organization's JWKS)")),
    request_body = LicenseKeyDeactivate,
    responses((status = 204, description = "Deactivated"), (status = 400, description = "Unreadable body, the usage limit would be exceeded, or an `Accept-Signature` Tollgate cannot honour", body = Error), (status = 404, body = Error)))]
fn portal_deactivate() {}

/// Validate a license key: the older path of the same endpoint.
#[utoipa::path(post, path = "/v1/users/license-keys/validate", tag = "customer-portal",
    request_body = LicenseKeyValidate,
    responses((status = 200, body = ValidatedLicenseKey), (status = 400, description = "Unreadable body, the usage limit would be exceeded, or an `Accept-Signature` Tollgate cannot honour", body = Error), (status = 403, body = Error), (status = 404, body = Error)))]
fn users_validate() {}

/// Activate a license key: the older path of the same endpoint.
#[utoipa::path(post, path = "/v1/users/license-keys/activate", tag = "customer-portal",
    request_body = LicenseKeyActivate,
    responses((status = 200, body = LicenseKeyActivationCreated), (status = 400, description = "Unreadable body, the usage limit would be exceeded, or an `Accept-Signature` Tollgate cannot honour", body = Error), (status = 403, body = Error), (status = 404, body = Error)))]
fn users_activate() {}

/// Remove an activation: the older path of the same endpoint.
#[utoipa::path(post, path = "/v1/users/license-keys/deactivate", tag = "customer-portal",
    request_body = LicenseKeyDeactivate,
    responses((status = 204, description = "Deactivated"), (status = 400, description = "Unreadable body, the usage limit would be exceeded, or an `Accept-Signature` Tollgate cannot honour", body = Error), (status = 404, body = Error)))]
fn users_deactivate() {}

// ---------------------------------------------------------------------------------------
// Webhooks
// ---------------------------------------------------------------------------------------

/// List webhook endpoints, newest first.
#[utoipa::path(get, path = "/v1/webhooks/endpoints", tag = "webhooks",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["webhooks:read"])),
    responses((status = 200, body = ListResource<WebhookEndpointView>)))]
fn webhooks_endpoints_list() {}

/// Create a webhook endpoint. The URL must be `https://` (or `http://` on localhost when
/// private targets are allowed) and must not point at a private, loopback or link-local
/// address; the signing secret is generated unless given, and shown in the answer.
#[utoipa::path(post, path = "/v1/webhooks/endpoints", tag = "webhooks",
    request_body = WebhookEndpointCreate,
    security(("bearer" = ["webhooks:write"])),
    responses((status = 201, body = WebhookEndpointView)))]
fn webhooks_endpoints_create() {}

/// Get a webhook endpoint.
#[utoipa::path(get, path = "/v1/webhooks/endpoints/{id}", tag = "webhooks",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["webhooks:read"])),
    responses((status = 200, body = WebhookEndpointView)))]
fn webhooks_endpoints_get() {}

/// Update a webhook endpoint; `enabled` pauses or resumes it.
#[utoipa::path(patch, path = "/v1/webhooks/endpoints/{id}", tag = "webhooks",
    params(("id" = Uuid, Path)),
    request_body = WebhookEndpointUpdate,
    security(("bearer" = ["webhooks:write"])),
    responses((status = 200, body = WebhookEndpointView)))]
fn webhooks_endpoints_update() {}

/// Regenerate a webhook endpoint's secret (no body). The old secret stops at once: every
/// later delivery, retries of earlier events included, is signed with the new one.
#[utoipa::path(patch, path = "/v1/webhooks/endpoints/{id}/secret", tag = "webhooks",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["webhooks:write"])),
    responses(
        (status = 200, body = WebhookEndpointView),
        (status = 404, description = "Webhook endpoint not found", body = Error),
))]
fn webhooks_endpoints_secret() {}

/// Delete a webhook endpoint; its undelivered events are dropped.
#[utoipa::path(delete, path = "/v1/webhooks/endpoints/{id}", tag = "webhooks",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["webhooks:write"])),
    responses((status = 204, description = "Deleted")))]
fn webhooks_endpoints_delete() {}

/// The delivery log: every attempt, newest first, with its event.
#[utoipa::path(get, path = "/v1/webhooks/deliveries", tag = "webhooks",
    params(
        ("endpoint_id" = Option<Vec<Uuid>>, Query),
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["webhooks:read"])),
    responses((status = 200, body = ListResource<WebhookDeliveryView>)))]
fn webhooks_deliveries_list() {}

/// Send an event again (with the same `webhook-id`), whatever became of it.
#[utoipa::path(post, path = "/v1/webhooks/events/{id}/redeliver", tag = "webhooks",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["webhooks:write"])),
    responses(
        (status = 202, description = "Queued for delivery"),
        (status = 409, description = "The event is archived", body = Error),
))]
fn webhooks_events_redeliver() {}

/// The event cursor: every event of the organization (the webhooks' payloads, whether an
/// endpoint listens or not) numbered in commit order; resume with `after` = the last
/// `seq` handled. Without `after`, from the oldest kept (`webhooks.retention_days`).
/// `limit`: 1–1000, 100 by default. A token reaching several organizations names one.
#[utoipa::path(get, path = "/v1/webhooks/events", tag = "webhooks",
    params(
        ("organization_id" = Option<Uuid>, Query),
        ("after" = Option<u64>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["webhooks:read"])),
    responses(
        (status = 200, body = crate::api::webhook::WebhookCursorPage),
        (status = 422, body = crate::error::ValidationErrorBody),
))]
fn webhooks_events_cursor() {}
