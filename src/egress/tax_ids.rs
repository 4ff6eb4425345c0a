//! A business buyer's tax number, asked of its register. The number has already passed
//! its format and check digits (`validate_tax_id`: an invalid one is refused with 422
//! before this); here an EU VAT number is asked of VIES when `tax.vies` is on, a GB one of
//! HMRC when `tax.hmrc_client_id`/`hmrc_client_secret` are set. The register's answer
//! decides the status: registered → `Valid`, not registered → `Invalid` (the buyer is taxed
//! as a consumer), no answer in time or an error → `Unverified`, logged at warn: the sale
//! goes on. Without a register for the number, it is `Unverified` (format only).
//!
//! Answers (registered or not) are kept in memory for 24 hours per (country, number), at
//! most [`CACHE_CAPACITY`] of them; a missing answer is not kept, so the next check asks
//! again.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tollgate_actors::tax::TaxIdStatus;

use crate::config::TaxConfig;
use crate::domain::customer::{TaxId, TaxIdFormat};
use crate::egress::tax_id::{RegisterAnswer, TaxIdLookup};

/// How long a register's answer is reused.
pub const CACHE_TTL: Duration = Duration::from_secs(24 * 3600);

/// Answers kept at most; past it, expired ones go first, then the oldest.
pub const CACHE_CAPACITY: usize = 10_000;

/// The register a number was asked of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaxIdRegister {
    Vies,
    Hmrc,
}

/// A check's outcome, with the register's evidence when it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxIdVerdict {
    pub status: TaxIdStatus,
    /// The register that answered; `None` when none was asked or none answered.
    pub register: Option<TaxIdRegister>,
    /// The register's reference for this check (VIES's `requestIdentifier`, HMRC's
    /// `consultationNumber`).
    pub consultation: Option<String>,
    /// The registered name, when the register discloses it.
    pub name: Option<String>,
}

impl TaxIdVerdict {
    fn unverified() -> TaxIdVerdict {
        TaxIdVerdict {
            status: TaxIdStatus::Unverified,
            register: None,
            consultation: None,
            name: None,
        }
    }
}

/// Checks business buyers' tax numbers with the configured registers; held by the state.
pub struct TaxIdChecker {
    /// `None`: no register configured.
    lookup: Option<TaxIdLookup>,
    cache: Mutex<HashMap<(String, String), (Instant, TaxIdVerdict)>>,
    ttl: Duration,
    capacity: usize,
}

impl TaxIdChecker {
    /// The registers `config` turns on (none by default).
    pub fn from_config(config: &TaxConfig) -> anyhow::Result<TaxIdChecker> {
        let lookup = if config.vies || config.hmrc() {
            Some(TaxIdLookup::new(config)?)
        } else {
            None
        };
        Ok(Self::with_cache(lookup, CACHE_TTL, CACHE_CAPACITY))
    }

    /// No register: every number that passed its format is `Unverified`.
    pub fn disabled() -> TaxIdChecker {
        Self::with_cache(None, CACHE_TTL, CACHE_CAPACITY)
    }

    fn with_cache(lookup: Option<TaxIdLookup>, ttl: Duration, capacity: usize) -> TaxIdChecker {
        TaxIdChecker {
            lookup,
            cache: Mutex::new(HashMap::new()),
            ttl,
            capacity,
        }
    }

    /// How far `id` (validated for the billing `country`) is confirmed.
    pub async fn check(&self, id: &TaxId, country: &str) -> TaxIdStatus {
        self.verdict(id, country).await.status
    }

    /// [`TaxIdChecker::check`] with the register's evidence.
    pub async fn verdict(&self, id: &TaxId, country: &str) -> TaxIdVerdict {
        let Some(lookup) = &self.lookup else {
            return TaxIdVerdict::unverified();
        };
        let key = (country.trim().to_ascii_uppercase(), id.value.clone());
        if let Some(cached) = self.cached(&key) {
            return cached;
        }
        let (register, answer) = match self.register_for(id) {
            Some(TaxIdRegister::Vies) => {
                let (Some(prefix), Some(number)) = (id.value.get(..2), id.value.get(2..)) else {
                    return TaxIdVerdict::unverified();
                };
                // VIES knows Greece as EL.
                let code = if prefix == "GR" { "EL" } else { prefix };
                (TaxIdRegister::Vies, lookup.vies(code, number).await)
            }
            Some(TaxIdRegister::Hmrc) => (TaxIdRegister::Hmrc, lookup.hmrc(&id.value).await),
            None => return TaxIdVerdict::unverified(),
        };
        let verdict = match answer {
            RegisterAnswer::Valid { consultation, name } => TaxIdVerdict {
                status: TaxIdStatus::Valid,
                register: Some(register),
                consultation,
                name,
            },
            RegisterAnswer::Invalid => TaxIdVerdict {
                status: TaxIdStatus::Invalid,
                register: Some(register),
                consultation: None,
                name: None,
            },
            RegisterAnswer::Unknown(reason) => {
                tracing::warn!(
                    register = ?register,
                    country = %key.0,
                    reason = %reason,
                    "tax number left unverified: its register gave no answer"
                );
                return TaxIdVerdict::unverified();
            }
        };
        self.remember(key, verdict.clone());
        verdict
    }

    /// Whether any register is configured.
    pub fn has_registers(&self) -> bool {
        self.lookup.is_some()
    }

    /// The register `id` is asked of, `None` when none is configured for it (the number
    /// is then checked for its format only).
    pub fn register_for(&self, id: &TaxId) -> Option<TaxIdRegister> {
        let lookup = self.lookup.as_ref()?;
        match id.format {
            TaxIdFormat::EuVat if lookup.has_vies() => Some(TaxIdRegister::Vies),
            // HMRC's register has the nine- and twelve-digit numbers, not the government
            // departments' and health authorities' GD/HA ones.
            TaxIdFormat::GbVat
                if lookup.has_hmrc() && id.value.bytes().all(|b| b.is_ascii_digit()) =>
            {
                Some(TaxIdRegister::Hmrc)
            }
            _ => None,
        }
    }

    fn cached(&self, key: &(String, String)) -> Option<TaxIdVerdict> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .get(key)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, v)| v.clone())
    }

    fn remember(&self, key: (String, String), verdict: TaxIdVerdict) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= self.capacity && !cache.contains_key(&key) {
            cache.retain(|_, (at, _)| at.elapsed() < self.ttl);
            while cache.len() >= self.capacity {
                let Some(oldest) = cache
                    .iter()
                    .min_by_key(|(_, (at, _))| *at)
                    .map(|(k, _)| k.clone())
                else {
                    break;
                };
                cache.remove(&oldest);
            }
        }
        cache.insert(key, (Instant::now(), verdict));
    }
}

#[cfg(test)]
#[path = "tax_ids_tests.rs"]
mod tests;
