//! Typed ids: one newtype over [`uuid::Uuid`] per kind of record, so that a `LicenseKeyId`
//! can never be passed where a `CheckoutId` is expected.
//!
//! ```
//! tollgate_actors::typed_id!(
//!     /// The id of a widget.
//!     pub WidgetId
//! );
//! let id = WidgetId::new();
//! let parsed: WidgetId = id.to_string().parse().unwrap();
//! assert_eq!(id, parsed);
//! assert_eq!(id.key().len(), 16);
//! ```
//!
//! The generated type derives serde's traits with `#[serde(transparent)]` (JSON: the plain
//! UUID string), so the crate invoking the macro must depend on `serde` (with `derive`).

#[doc(hidden)]
pub mod __private {
    pub use uuid;
}

/// Declares a typed id: a `Copy` newtype over a UUID with `new()` (random, v4), `Display`
/// and `FromStr` (the hyphenated UUID), `as_bytes()`/`key()` (the 16 big-endian bytes used as
/// storage keys), `from_key`, ordering, hashing and transparent serde.
#[macro_export]
macro_rules! typed_id {
    ($(#[$meta:meta])* $vis:vis $name:ident) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord,
            serde::Serialize, serde::Deserialize,
        )]
        #[serde(transparent)]
        $vis struct $name(pub $crate::ids::__private::uuid::Uuid);

        // Generated helpers: not every id type uses every one of them.
        #[allow(dead_code)]
        impl $name {
            /// A new random (version 4) id.
            // A random value is not a sensible `Default`.
            #[allow(clippy::new_without_default)]
            pub fn new() -> Self {
                Self($crate::ids::__private::uuid::Uuid::new_v4())
            }

            pub const fn from_uuid(uuid: $crate::ids::__private::uuid::Uuid) -> Self {
                Self(uuid)
            }

            pub const fn uuid(&self) -> $crate::ids::__private::uuid::Uuid {
                self.0
            }

            /// The 16 bytes of the UUID, in its big-endian (RFC 9562) order.
            pub const fn as_bytes(&self) -> [u8; 16] {
                *self.0.as_bytes()
            }

            /// The storage key: the 16 bytes of [`Self::as_bytes`].
            pub fn key(&self) -> ::std::vec::Vec<u8> {
                self.as_bytes().to_vec()
            }

            /// Reads a key written by [`Self::key`]; `None` unless it is exactly 16 bytes.
            pub fn from_key(key: &[u8]) -> ::std::option::Option<Self> {
                <[u8; 16]>::try_from(key)
                    .ok()
                    .map(|b| Self($crate::ids::__private::uuid::Uuid::from_bytes(b)))
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt(&self.0.hyphenated(), f)
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::ids::__private::uuid::Error;

            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                $crate::ids::__private::uuid::Uuid::parse_str(s).map(Self)
            }
        }

        impl ::std::convert::From<$name> for $crate::ids::__private::uuid::Uuid {
            fn from(id: $name) -> Self {
                id.0
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::typed_id!(
        /// An id for these tests.
        pub SampleId
    );
    crate::typed_id!(OtherId);

    #[test]
    fn display_parse_round_trip() {
        let id = SampleId::new();
        let text = id.to_string();
        assert_eq!(text.len(), 36);
        assert_eq!(text.parse::<SampleId>().unwrap(), id);
        assert!("not-a-uuid".parse::<SampleId>().is_err());
    }

    #[test]
    fn key_is_the_16_uuid_bytes() {
        let id = SampleId::new();
        assert_eq!(id.key(), id.uuid().as_bytes().to_vec());
        assert_eq!(SampleId::from_key(&id.key()), Some(id));
        assert_eq!(SampleId::from_key(&[1, 2, 3]), None);
    }

    #[test]
    fn serde_is_transparent() {
        let id = SampleId::new();
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, format!("\"{id}\""));
        assert_eq!(serde_json::from_str::<SampleId>(&json).unwrap(), id);
    }

    #[test]
    fn ids_are_distinct_types_and_ordered_by_bytes() {
        let a = SampleId::from_uuid(uuid::Uuid::from_bytes([0; 16]));
        let b = SampleId::from_uuid(uuid::Uuid::from_bytes([1; 16]));
        assert!(a < b);
        let _other: OtherId = OtherId::new();
    }
}

/// The ids of every entity Tollgate stores.
pub mod entity {
    crate::typed_id!(pub UserId);
    crate::typed_id!(pub OrganizationId);
    crate::typed_id!(pub PatId);
    crate::typed_id!(pub BenefitId);
    crate::typed_id!(pub ProductId);
    crate::typed_id!(pub PriceId);
    crate::typed_id!(pub DiscountId);
    crate::typed_id!(pub CustomerId);
    crate::typed_id!(pub CustomFieldId);
    crate::typed_id!(pub CheckoutId);
    crate::typed_id!(pub OrderId);
    crate::typed_id!(pub SubscriptionId);
    crate::typed_id!(pub LicenseKeyId);
    crate::typed_id!(pub ActivationId);
    crate::typed_id!(pub CustomerSessionId);
    crate::typed_id!(pub OAuth2ClientId);
    crate::typed_id!(pub OAuth2TokenId);
    crate::typed_id!(
        /// The tokens descended from one authorization code by refresh-token rotation.
        pub TokenFamilyId
    );
    crate::typed_id!(pub BrowserSessionId);
    crate::typed_id!(pub WebhookEndpointId);
    crate::typed_id!(
        /// One event for one endpoint: the `webhook-id` every attempt carries.
        pub WebhookEventId
    );
    crate::typed_id!(pub WebhookDeliveryId);
    crate::typed_id!(pub RefundId);
    crate::typed_id!(pub DisputeId);
    crate::typed_id!(
        /// One e-mail in the outbox; its `Message-ID` is derived from it.
        pub MailMessageId
    );
    crate::typed_id!(
        /// A customer's saved payment method (derived from the customer and the
        /// processor's reference, so that saving the same method twice is one record).
        pub PaymentMethodId
    );
}

/// A UUID derived deterministically from a parent id and a label (e.g. the order of a
/// checkout), so that a retried write of the same record can never create a second one.
/// Formatted as a version-4 UUID, since Polar's inputs accept only those.
pub fn derived_uuid(parent: uuid::Uuid, label: &str) -> uuid::Uuid {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new()
        .chain_update(b"tollgate-derived-id\0")
        .chain_update(parent.as_bytes())
        .chain_update(label.as_bytes())
        .finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

#[cfg(test)]
mod derived_tests {
    use super::derived_uuid;

    #[test]
    fn derived_ids_are_stable_distinct_and_version_4() {
        let parent = uuid::Uuid::new_v4();
        let a = derived_uuid(parent, "order");
        assert_eq!(a, derived_uuid(parent, "order"));
        assert_ne!(a, derived_uuid(parent, "subscription"));
        assert_ne!(a, derived_uuid(uuid::Uuid::new_v4(), "order"));
        assert_eq!(a.get_version_num(), 4);
    }
}
