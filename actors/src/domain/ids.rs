//! Typed ids: a `UserId` can never be passed where an `OrganizationId` is expected.
//! Defined in `tollgate-actors`, whose aggregates use them too.

pub use crate::ids::entity::*;

crate::typed_id!(
    /// A stored file (`/v1/files`).
    pub FileId
);

crate::typed_id!(
    /// A release of a product (update feeds).
    pub ReleaseId
);

crate::typed_id!(
    /// A meter (`/v1/meters`).
    pub MeterId
);

crate::typed_id!(
    /// An ingested event (`/v1/events`).
    pub EventId
);
