//! Typed ids: a `UserId` can never be passed where an `OrganizationId` is expected.

macro_rules! typed_id {
    ($name:ident) => {
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            Hash,
            PartialOrd,
            Ord,
            serde::Serialize,
            serde::Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(pub uuid::Uuid);

        impl $name {
            pub fn new() -> Self {
                Self(uuid::Uuid::new_v4())
            }
            pub fn key(&self) -> Vec<u8> {
                self.0.as_bytes().to_vec()
            }
            pub fn from_key(bytes: &[u8]) -> Option<Self> {
                uuid::Uuid::from_slice(bytes).ok().map(Self)
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                uuid::Uuid::parse_str(s).map(Self)
            }
        }
    };
}

typed_id!(UserId);
typed_id!(OrganizationId);
typed_id!(PatId);
typed_id!(BenefitId);
typed_id!(ProductId);
typed_id!(PriceId);
typed_id!(DiscountId);
typed_id!(CustomerId);
typed_id!(CustomFieldId);
