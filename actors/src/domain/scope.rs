//! Polar's scopes (reference 6.4), in declaration order, as a compact bit set.

use std::fmt;

macro_rules! scopes {
    ($($variant:ident = $name:literal),* $(,)?) => {
        /// One OAuth2 / PAT scope.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Scope { $($variant),* }

        impl Scope {
            pub const ALL: &'static [Scope] = &[$(Scope::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self { $(Scope::$variant => $name),* }
            }

            pub fn parse(s: &str) -> Option<Scope> {
                match s { $($name => Some(Scope::$variant),)* _ => None }
            }
        }
    };
}

scopes! {
    Openid = "openid",
    Profile = "profile",
    Email = "email",
    UserRead = "user:read",
    Admin = "admin",
    WebDefault = "web_default",
    OrganizationsRead = "organizations:read",
    OrganizationsWrite = "organizations:write",
    CustomFieldsRead = "custom_fields:read",
    CustomFieldsWrite = "custom_fields:write",
    DiscountsRead = "discounts:read",
    DiscountsWrite = "discounts:write",
    CheckoutLinksRead = "checkout_links:read",
    CheckoutLinksWrite = "checkout_links:write",
    CheckoutsRead = "checkouts:read",
    CheckoutsWrite = "checkouts:write",
    ProductsRead = "products:read",
    ProductsWrite = "products:write",
    BenefitsRead = "benefits:read",
    BenefitsWrite = "benefits:write",
    FilesRead = "files:read",
    FilesWrite = "files:write",
    SubscriptionsRead = "subscriptions:read",
    SubscriptionsWrite = "subscriptions:write",
    CustomersRead = "customers:read",
    CustomersWrite = "customers:write",
    CustomerSessionsWrite = "customer_sessions:write",
    OrdersRead = "orders:read",
    MetricsRead = "metrics:read",
    WebhooksRead = "webhooks:read",
    WebhooksWrite = "webhooks:write",
    ExternalOrganizationsRead = "external_organizations:read",
    LicenseKeysRead = "license_keys:read",
    LicenseKeysWrite = "license_keys:write",
    RepositoriesRead = "repositories:read",
    RepositoriesWrite = "repositories:write",
    IssuesRead = "issues:read",
    IssuesWrite = "issues:write",
    CustomerPortalRead = "customer_portal:read",
    CustomerPortalWrite = "customer_portal:write",
    // Appended: a stored `ScopeSet` is a bit per declaration index.
    OrganizationAccessTokensRead = "organization_access_tokens:read",
    OrganizationAccessTokensWrite = "organization_access_tokens:write",
    RefundsRead = "refunds:read",
    RefundsWrite = "refunds:write",
    DisputesRead = "disputes:read",
    DisputesWrite = "disputes:write",
    OrdersWrite = "orders:write",
    EventsRead = "events:read",
    EventsWrite = "events:write",
    MetersRead = "meters:read",
    MetersWrite = "meters:write",
    CustomerMetersRead = "customer_meters:read",
}

impl Scope {
    /// `admin` and `web_default` are never granted to tokens or OAuth clients.
    pub fn is_reserved(self) -> bool {
        matches!(self, Scope::Admin | Scope::WebDefault)
    }

    /// `organization_access_tokens:read|write`: a user's (personal access token, browser
    /// session) to manage organization access tokens. Neither an organization access token
    /// nor an OAuth client may hold them (Polar's `SCOPES_SUPPORTED` leaves them out).
    pub fn manages_organization_tokens(self) -> bool {
        matches!(
            self,
            Scope::OrganizationAccessTokensRead | Scope::OrganizationAccessTokensWrite
        )
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of scopes (at most 64 kinds), cheap to copy and test.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct ScopeSet(u64);

impl ScopeSet {
    pub const fn empty() -> Self {
        ScopeSet(0)
    }

    /// Every scope a token may hold (all but the reserved ones).
    pub fn all_grantable() -> Self {
        Scope::ALL
            .iter()
            .filter(|s| !s.is_reserved())
            .copied()
            .collect()
    }

    pub fn contains(self, s: Scope) -> bool {
        self.0 & (1u64 << (s as u8)) != 0
    }

    pub fn insert(&mut self, s: Scope) {
        self.0 |= 1u64 << (s as u8);
    }

    pub fn contains_any(self, scopes: &[Scope]) -> bool {
        scopes.iter().any(|s| self.contains(*s))
    }

    pub fn is_subset_of(self, other: ScopeSet) -> bool {
        self.0 & !other.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL
            .iter()
            .copied()
            .filter(move |s| self.contains(*s))
    }

    /// Space-separated, in declaration order (OAuth2's `scope` format).
    pub fn to_space_separated(self) -> String {
        self.iter().map(Scope::as_str).collect::<Vec<_>>().join(" ")
    }

    /// Parses a space-separated list; returns the unknown names on failure.
    pub fn parse_space_separated(s: &str) -> Result<ScopeSet, Vec<String>> {
        let mut set = ScopeSet::empty();
        let mut unknown = Vec::new();
        for name in s.split_whitespace() {
            match Scope::parse(name) {
                Some(scope) => set.insert(scope),
                None => unknown.push(name.to_string()),
            }
        }
        if unknown.is_empty() {
            Ok(set)
        } else {
            Err(unknown)
        }
    }
}

impl FromIterator<Scope> for ScopeSet {
    fn from_iter<I: IntoIterator<Item = Scope>>(iter: I) -> Self {
        let mut set = ScopeSet::empty();
        for s in iter {
            set.insert(s);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scope_round_trips_and_fits_the_set() {
        assert!(Scope::ALL.len() <= 64);
        for s in Scope::ALL {
            assert_eq!(Scope::parse(s.as_str()), Some(*s));
        }
        assert_eq!(Scope::parse("nope"), None);
    }

    #[test]
    fn grantable_excludes_reserved() {
        let all = ScopeSet::all_grantable();
        assert!(!all.contains(Scope::Admin));
        assert!(!all.contains(Scope::WebDefault));
        assert!(all.contains(Scope::LicenseKeysWrite));
        assert_eq!(all.iter().count(), Scope::ALL.len() - 2);
    }

    #[test]
    fn stored_bits_keep_their_places() {
        // A `ScopeSet` is stored as its bits: a scope's index must never change.
        assert_eq!(Scope::Openid as u8, 0);
        assert_eq!(Scope::CustomerPortalWrite as u8, 39);
        assert_eq!(Scope::OrganizationAccessTokensRead as u8, 40);
        assert_eq!(Scope::OrganizationAccessTokensWrite as u8, 41);
        assert_eq!(Scope::OrdersWrite as u8, 46);
        assert_eq!(Scope::CustomerMetersRead as u8, 51);
        assert!(Scope::OrganizationAccessTokensWrite.manages_organization_tokens());
        assert!(!Scope::OrganizationsWrite.manages_organization_tokens());
    }

    #[test]
    fn space_separated_round_trip() {
        let set = ScopeSet::parse_space_separated("email openid  orders:read").unwrap();
        assert_eq!(set.to_space_separated(), "openid email orders:read");
        assert_eq!(
            ScopeSet::parse_space_separated("openid bogus").unwrap_err(),
            vec!["bogus".to_string()]
        );
    }

    #[test]
    fn subset_and_any() {
        let a: ScopeSet = [Scope::Openid, Scope::Email].into_iter().collect();
        let b: ScopeSet = [Scope::Openid].into_iter().collect();
        assert!(b.is_subset_of(a));
        assert!(!a.is_subset_of(b));
        assert!(a.contains_any(&[Scope::Profile, Scope::Email]));
        assert!(!b.contains_any(&[Scope::Profile, Scope::Email]));
    }
}
