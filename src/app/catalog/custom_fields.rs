//! Custom fields: the questions a checkout asks the buyer (Polar's
//! `custom_field/endpoints.py` and `service.py`): list, find, create, update, (soft) delete,
//! and the fields a product attaches.

use std::cmp::Ordering;

use tollgate_storage::{Batch, Expect, StorageError, Stored};

use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::{compare_times, directed, sorted_page_of};
use crate::app::paging::{ListParams, Sorting};
use crate::auth::Subject;
use crate::domain::custom_field::{
    CustomField, CustomFieldChange, CustomFieldSort, CustomFieldType, NewCustomField,
};
use crate::domain::ids::{CustomFieldId, OrganizationId};
use crate::domain::product::AttachedCustomField;
use crate::error::AppError;
use crate::field;
use crate::state::AppState;

use super::found;

/// A custom field the subject may see, the writes so far included
/// (`GET /v1/custom-fields/{id}`).
pub async fn get(
    state: &AppState,
    subject: Subject,
    id: CustomFieldId,
) -> Result<CustomField, AppError> {
    state.store.read_barrier().await?;
    Ok(custom_field_for(state, subject, id).await?.value)
}

/// A custom field the subject may see (not deleted, in a reachable organization), else 404.
pub async fn custom_field_for(
    state: &AppState,
    subject: Subject,
    id: CustomFieldId,
) -> Result<Stored<CustomField>, AppError> {
    match state.store.get::<CustomField>(&id.key()).await? {
        Some(cf)
            if cf.value.deleted_at.is_none()
                && can_access(state, subject, cf.value.organization_id).await? =>
        {
            Ok(cf)
        }
        _ => Err(AppError::not_found()),
    }
}

/// A live custom field of this organization (what a product may attach), else `None`.
pub async fn custom_field_in_organization(
    state: &AppState,
    organization_id: OrganizationId,
    id: CustomFieldId,
) -> Result<Option<CustomField>, AppError> {
    Ok(state
        .store
        .get::<CustomField>(&id.key())
        .await?
        .map(|s| s.value)
        .filter(|cf| cf.deleted_at.is_none() && cf.organization_id == organization_id))
}

/// The fields behind a product's attachments, in `order`, each with its attachment. Deleted
/// or missing fields are left out: deleting a field detaches it everywhere, as in Polar.
/// Feed `(field, attachment.required)` pairs to `validate_custom_field_data`, and render
/// with `crate::api::custom_field::AttachedCustomFieldView::new`.
pub async fn attached_custom_fields(
    state: &AppState,
    attached: &[AttachedCustomField],
) -> Result<Vec<(CustomField, AttachedCustomField)>, AppError> {
    let mut out = Vec::with_capacity(attached.len());
    for a in attached {
        if let Some(cf) = state
            .store
            .get::<CustomField>(&a.custom_field_id.key())
            .await?
        {
            if cf.value.deleted_at.is_none() {
                out.push((cf.value, a.clone()));
            }
        }
    }
    out.sort_by_key(|(_, a)| a.order);
    Ok(out)
}

/// Postgres' `ILIKE '%<query>%'`: case-insensitive, with `%` (any run) and `_` (any one
/// character) as wildcards and `\` escaping them.
struct Ilike {
    tokens: Vec<Token>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    Char(char),
    One,
    Many,
}

impl Ilike {
    fn contains(query: &str) -> Ilike {
        let mut tokens = vec![Token::Many];
        let mut chars = query.chars().flat_map(char::to_lowercase);
        while let Some(c) = chars.next() {
            tokens.push(match c {
                '%' => Token::Many,
                '_' => Token::One,
                '\\' => Token::Char(chars.next().unwrap_or('\\')),
                c => Token::Char(c),
            });
        }
        tokens.push(Token::Many);
        Ilike { tokens }
    }

    fn matches(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
        // Classic wildcard matching with backtracking to the last `%`.
        let (mut t, mut p) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            match self.tokens.get(p) {
                Some(Token::Many) => {
                    star = Some((p, t));
                    p += 1;
                }
                Some(Token::One) => {
                    t += 1;
                    p += 1;
                }
                Some(Token::Char(c)) if *c == text[t] => {
                    t += 1;
                    p += 1;
                }
                _ => match star {
                    Some((sp, st)) => {
                        p = sp + 1;
                        t = st + 1;
                        star = Some((sp, st + 1));
                    }
                    None => return false,
                },
            }
        }
        self.tokens[p..].iter().all(|t| *t == Token::Many)
    }
}

/// One criterion of the custom field list, as its index orders it (names case-folded
/// first, types alphabetically).
fn compare(field: CustomFieldSort, descending: bool, a: &CustomField, b: &CustomField) -> Ordering {
    let ordering = match field {
        CustomFieldSort::CreatedAt => compare_times(&a.created_at, &b.created_at),
        CustomFieldSort::Slug => a.slug.cmp(&b.slug),
        CustomFieldSort::Name => {
            (a.name.to_lowercase(), &a.name).cmp(&(b.name.to_lowercase(), &b.name))
        }
        CustomFieldSort::Type => a.kind().as_str().cmp(b.kind().as_str()),
    };
    directed(ordering, descending)
}

/// Which custom fields a list shows, and in what order.
#[derive(Debug, Clone)]
pub struct CustomFieldFilter {
    /// Of these organizations (all the subject reaches when empty).
    pub organization_id: Vec<OrganizationId>,
    /// Postgres' `ILIKE '%query%'` on the name or the slug.
    pub query: Option<String>,
    /// Of these types (any when empty).
    pub types: Vec<CustomFieldType>,
    pub sorting: Sorting<CustomFieldSort>,
}

impl Default for CustomFieldFilter {
    fn default() -> Self {
        Self {
            organization_id: Vec::new(),
            query: None,
            types: Vec::new(),
            sorting: Sorting::by(CustomFieldSort::Slug, false),
        }
    }
}

/// One page of the custom fields `subject` reaches, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &CustomFieldFilter,
    params: ListParams,
) -> Result<(Vec<CustomField>, u64), AppError> {
    let sorting = &filter.sorting;
    let types = &filter.types;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let by_type = !types.is_empty();
    let tenants: Vec<Vec<u8>> = if by_type {
        orgs.iter()
            .flat_map(|o| types.iter().map(move |t| CustomField::type_tenant(*o, *t)))
            .collect()
    } else {
        orgs.iter().map(|o| o.key()).collect()
    };
    let (primary, desc) = sorting.primary();
    let index = primary.index_name(by_type);
    let pattern = filter.query.as_deref().map(Ilike::contains);
    let matches = |cf: &CustomField| {
        pattern
            .as_ref()
            .is_none_or(|p| p.matches(&cf.name) || p.matches(&cf.slug))
    };

    let filter: Option<&dyn Fn(&CustomField) -> bool> = pattern
        .as_ref()
        .map(|_| &matches as &dyn Fn(&CustomField) -> bool);
    // The first criterion is served by an index (equal values follow the slug), the others
    // in memory.
    let several = sorting.several(compare);
    sorted_page_of::<CustomField>(
        state,
        index,
        &tenants,
        desc,
        params,
        filter,
        several.as_deref(),
    )
    .await
}

fn slug_taken(slug: &str) -> AppError {
    AppError::invalid(
        field!["slug"],
        "Custom field with this slug already exists.",
        slug,
    )
}

/// Whether another custom field of the organization (deleted ones included) holds `slug`.
async fn slug_held_by_other(
    state: &AppState,
    organization_id: OrganizationId,
    slug: &str,
    own: Option<CustomFieldId>,
) -> Result<bool, AppError> {
    Ok(state
        .store
        .lookup_unique(&CustomField::slug_key(organization_id, slug))
        .await?
        .is_some_and(|holder| own.is_none_or(|id| holder != id.key())))
}

/// Creates a custom field (its body parsed by type) in an organization `subject` reaches;
/// its slug must be free there.
pub async fn create(
    state: &AppState,
    subject: Subject,
    new: NewCustomField,
) -> Result<CustomField, AppError> {
    let NewCustomField {
        slug,
        name,
        organization_id,
        metadata,
        properties,
    } = new;
    let organization_id = organization_for_create(state, subject, organization_id).await?;
    if slug_held_by_other(state, organization_id, &slug, None).await? {
        return Err(slug_taken(&slug));
    }
    let cf = CustomField {
        id: CustomFieldId::new(),
        organization_id,
        created_at: state.now(),
        modified_at: None,
        slug,
        name,
        metadata,
        properties,
        deleted_at: None,
    };
    let mut batch = Batch::new();
    batch.put(&cf, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => {}
        // Lost a race for the slug to a concurrent create.
        Err(StorageError::Unique { .. }) => return Err(slug_taken(&cf.slug)),
        Err(e) => return Err(e.into()),
    }
    Ok(cf)
}

/// Changes a custom field (never its type); a new slug must be free in the organization.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: CustomFieldId,
    change: CustomFieldChange,
) -> Result<CustomField, AppError> {
    let CustomFieldChange {
        kind,
        slug,
        name,
        metadata,
        properties,
    } = change;
    custom_field_for(state, subject, id).await?;
    let now = state.now();
    let mut decided_slug = None;
    let updated = state
        .store
        .update::<CustomField, AppError>(&id.key(), async |current| {
            if current.deleted_at.is_some() {
                return Err(AppError::not_found());
            }
            if current.kind() != kind {
                return Err(AppError::invalid(
                    field!["type"],
                    "The type of a custom field can't be changed.",
                    kind.as_str(),
                ));
            }
            let mut cf = current.clone();
            if let Some(slug) = &slug {
                if *slug != cf.slug {
                    if slug_held_by_other(state, cf.organization_id, slug, Some(cf.id)).await? {
                        return Err(slug_taken(slug));
                    }
                    cf.slug = slug.clone();
                }
            }
            if let Some(name) = &name {
                cf.name = name.clone();
            }
            if let Some(metadata) = &metadata {
                cf.metadata = metadata.clone();
            }
            if let Some(properties) = &properties {
                cf.properties = properties.clone();
            }
            cf.modified_at = Some(now);
            decided_slug = Some(cf.slug.clone());
            Ok(Some(cf))
        })
        .await;
    match updated {
        // Lost a race for the slug to another field.
        Err(tollgate_storage::UpdateError::Storage(StorageError::Unique { .. })) => {
            Err(slug_taken(decided_slug.as_deref().unwrap_or_default()))
        }
        other => found(other?),
    }
}

/// Soft-deletes a custom field: it is detached from every product.
pub async fn delete(state: &AppState, subject: Subject, id: CustomFieldId) -> Result<(), AppError> {
    custom_field_for(state, subject, id).await?;
    let now = state.now();
    state
        .store
        .update::<CustomField, AppError>(&id.key(), async |current| {
            if current.deleted_at.is_some() {
                return Err(AppError::not_found());
            }
            let mut cf = current.clone();
            cf.deleted_at = Some(now);
            cf.modified_at = Some(now);
            Ok(Some(cf))
        })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_field_query_is_an_ilike_substring() {
        let p = Ilike::contains("Size");
        assert!(p.matches("t-shirt size"));
        assert!(p.matches("SIZE"));
        assert!(!p.matches("siz"));
        let p = Ilike::contains("a_c");
        assert!(p.matches("xxabcxx"));
        assert!(p.matches("a-c"));
        assert!(!p.matches("ac"));
        let p = Ilike::contains("a%c");
        assert!(p.matches("abbbc"));
        assert!(p.matches("ac"));
        let p = Ilike::contains("a\\_c");
        assert!(p.matches("a_c"));
        assert!(!p.matches("abc"));
        assert!(Ilike::contains("").matches(""));
        assert!(Ilike::contains("").matches("anything"));
    }
}
