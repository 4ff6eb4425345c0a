//! Tax ids: a number checked against the billing country, stored with its Stripe tax-id
//! format (Polar's `kit/tax.py`). Polar validates with `python-stdnum`; this is a hand-written
//! subset: exact checks (format and, where well defined, check digits: those of most EU
//! states and GB in `tax_checks.rs`) for the EU VAT numbers of every member state, GB, US,
//! CA, AU, CH and NO; for the other formats Polar
//! lists, a loose shape check so that buyers from those countries are not turned away.

use serde::{Deserialize, Serialize};

use super::tax_checks;

macro_rules! tax_id_formats {
    ($($variant:ident = $name:literal),* $(,)?) => {
        /// Stripe's tax-id formats, as Polar lists them. Stored by position: add new
        /// formats at the end only.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum TaxIdFormat {
            $($variant),*
        }

        impl TaxIdFormat {
            pub const ALL: &'static [(&'static str, TaxIdFormat)] =
                &[$(($name, TaxIdFormat::$variant)),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(TaxIdFormat::$variant => $name),*
                }
            }

            pub fn parse(s: &str) -> Option<TaxIdFormat> {
                match s {
                    $($name => Some(TaxIdFormat::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

tax_id_formats! {
    AdNrt = "ad_nrt", AeTrn = "ae_trn", ArCuit = "ar_cuit", AuAbn = "au_abn",
    AuArn = "au_arn", BgUic = "bg_uic", BhVat = "bh_vat", BoTin = "bo_tin",
    BrCnpj = "br_cnpj", BrCpf = "br_cpf", CaBn = "ca_bn", CaGstHst = "ca_gst_hst",
    CaPstBc = "ca_pst_bc", CaPstMb = "ca_pst_mb", CaPstSk = "ca_pst_sk", CaQst = "ca_qst",
    ChUid = "ch_uid", ChVat = "ch_vat", ClTin = "cl_tin", CnTin = "cn_tin",
    CoNit = "co_nit", CrTin = "cr_tin", DeStn = "de_stn", DoRcn = "do_rcn",
    EcRuc = "ec_ruc", EgTin = "eg_tin", EsCif = "es_cif", EuOssVat = "eu_oss_vat",
    EuVat = "eu_vat", GbVat = "gb_vat", GeVat = "ge_vat", HkBr = "hk_br",
    HrOib = "hr_oib", HuTin = "hu_tin", IdNpwp = "id_npwp", IlVat = "il_vat",
    InGst = "in_gst", IsVat = "is_vat", JpCn = "jp_cn", JpRn = "jp_rn",
    JpTrn = "jp_trn", KePin = "ke_pin", KrBrn = "kr_brn", KzBin = "kz_bin",
    LiUid = "li_uid", MxRfc = "mx_rfc", MyFrp = "my_frp", MyItn = "my_itn",
    MySst = "my_sst", NgTin = "ng_tin", NoVat = "no_vat", NoVoec = "no_voec",
    NzGst = "nz_gst", OmVat = "om_vat", PeRuc = "pe_ruc", PhTin = "ph_tin",
    RoTin = "ro_tin", RsPib = "rs_pib", RuInn = "ru_inn", RuKpp = "ru_kpp",
    SaVat = "sa_vat", SgGst = "sg_gst", SgUen = "sg_uen", SiTin = "si_tin",
    SvNit = "sv_nit", ThVat = "th_vat", TrTin = "tr_tin", TwVat = "tw_vat",
    UaVat = "ua_vat", UsEin = "us_ein", UyRuc = "uy_ruc", VeRif = "ve_rif",
    VnTin = "vn_tin", ZaVat = "za_vat",
}

/// A validated tax id: the number in its compact form and its format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxId {
    pub value: String,
    pub format: TaxIdFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaxIdError {
    /// No tax-id format is known for the country.
    UnsupportedCountry,
    /// The number matches none of the country's formats.
    Invalid,
}

use TaxIdFormat as F;

/// The formats accepted per billing country, in the order they are tried (Polar's
/// `COUNTRY_TAX_ID_MAP`).
const COUNTRY_FORMATS: &[(&str, &[TaxIdFormat])] = &[
    ("AD", &[F::AdNrt]),
    ("AE", &[F::AeTrn]),
    ("AR", &[F::ArCuit]),
    ("AT", &[F::EuVat]),
    ("AU", &[F::AuAbn, F::AuArn]),
    ("BE", &[F::EuVat]),
    ("BG", &[F::BgUic, F::EuVat]),
    ("BH", &[F::BhVat]),
    ("BO", &[F::BoTin]),
    ("BR", &[F::BrCnpj, F::BrCpf]),
    (
        "CA",
        &[
            F::CaBn,
            F::CaGstHst,
            F::CaPstBc,
            F::CaPstMb,
            F::CaPstSk,
            F::CaQst,
        ],
    ),
    ("CH", &[F::ChUid, F::ChVat]),
    ("CL", &[F::ClTin]),
    ("CN", &[F::CnTin]),
    ("CO", &[F::CoNit]),
    ("CR", &[F::CrTin]),
    ("CY", &[F::EuVat]),
    ("CZ", &[F::EuVat]),
    ("DE", &[F::DeStn, F::EuVat]),
    ("DK", &[F::EuVat]),
    ("DO", &[F::DoRcn]),
    ("EC", &[F::EcRuc]),
    ("EE", &[F::EuVat]),
    ("EG", &[F::EgTin]),
    ("ES", &[F::EsCif, F::EuVat]),
    ("FI", &[F::EuVat]),
    ("FR", &[F::EuVat]),
    ("GB", &[F::GbVat]),
    ("GE", &[F::GeVat]),
    ("GR", &[F::EuVat]),
    ("HK", &[F::HkBr]),
    ("HR", &[F::HrOib, F::EuVat]),
    ("HU", &[F::HuTin, F::EuVat]),
    ("ID", &[F::IdNpwp]),
    ("IE", &[F::EuVat]),
    ("IL", &[F::IlVat]),
    ("IN", &[F::InGst]),
    ("IS", &[F::IsVat]),
    ("IT", &[F::EuVat]),
    ("JP", &[F::JpCn, F::JpRn, F::JpTrn]),
    ("KE", &[F::KePin]),
    ("KR", &[F::KrBrn]),
    ("KZ", &[F::KzBin]),
    ("LI", &[F::LiUid]),
    ("LT", &[F::EuVat]),
    ("LU", &[F::EuVat]),
    ("LV", &[F::EuVat]),
    ("MT", &[F::EuVat]),
    ("MX", &[F::MxRfc]),
    ("MY", &[F::MyFrp, F::MyItn, F::MySst]),
    ("NG", &[F::NgTin]),
    ("NL", &[F::EuVat]),
    ("NO", &[F::NoVat, F::NoVoec]),
    ("NZ", &[F::NzGst]),
    ("OM", &[F::OmVat]),
    ("PE", &[F::PeRuc]),
    ("PH", &[F::PhTin]),
    ("PL", &[F::EuVat]),
    ("PT", &[F::EuVat]),
    ("RO", &[F::RoTin, F::EuVat]),
    ("RS", &[F::RsPib]),
    ("RU", &[F::RuInn, F::RuKpp]),
    ("SA", &[F::SaVat]),
    ("SE", &[F::EuVat]),
    ("SG", &[F::SgGst, F::SgUen]),
    ("SI", &[F::SiTin, F::EuVat]),
    ("SK", &[F::EuVat]),
    ("SV", &[F::SvNit]),
    ("TH", &[F::ThVat]),
    ("TR", &[F::TrTin]),
    ("TW", &[F::TwVat]),
    ("UA", &[F::UaVat]),
    ("US", &[F::UsEin]),
    ("UY", &[F::UyRuc]),
    ("VE", &[F::VeRif]),
    ("VN", &[F::VnTin]),
    ("ZA", &[F::ZaVat]),
];

/// The tax-id formats of a country (empty when none is supported).
pub fn country_formats(country: &str) -> &'static [TaxIdFormat] {
    COUNTRY_FORMATS
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(country))
        .map(|(_, f)| *f)
        .unwrap_or(&[])
}

/// Validates `number` for a billing `country`: the first of the country's formats that
/// accepts it wins and gives the stored (compact) value. Formats checked exactly come
/// first; a format without an exact check accepts any plausible number (5–20 letters and
/// digits, at least one digit; digits only when the country has an exact format too)
/// only when no exact format matched.
pub fn validate_tax_id(number: &str, country: &str) -> Result<TaxId, TaxIdError> {
    let formats = country_formats(country);
    if formats.is_empty() {
        return Err(TaxIdError::UnsupportedCountry);
    }
    for format in formats {
        if let Some(Some(value)) = exact(*format, number) {
            return Ok(TaxId {
                value,
                format: *format,
            });
        }
    }
    // Where an exact format exists, a loose one only takes plain digits, so that a
    // mistyped VAT number is not stored under a sibling format.
    let has_exact = formats.iter().any(|f| exact(*f, "").is_some());
    for format in formats {
        if exact(*format, number).is_none() {
            if let Some(value) = loose(number) {
                if has_exact && !value.bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
                return Ok(TaxId {
                    value,
                    format: *format,
                });
            }
        }
    }
    Err(TaxIdError::Invalid)
}

/// `None` when the format has no exact check; `Some(None)` when it rejects the number;
/// `Some(Some(compact))` when it accepts it.
fn exact(format: TaxIdFormat, number: &str) -> Option<Option<String>> {
    Some(match format {
        F::EuVat => eu_vat(number),
        F::GbVat => gb_vat(number),
        F::UsEin => us_ein(number),
        F::CaBn => ca_bn(number),
        F::AuAbn => au_abn(number),
        F::ChUid => ch_uid(number),
        F::ChVat => ch_vat(number),
        F::NoVat => no_vat(number),
        _ => return None,
    })
}

/// Upper-cased, without the separators people type.
fn clean(number: &str) -> String {
    number
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '.' | '/' | ',' | ':' | '\t'))
        .flat_map(char::to_uppercase)
        .collect()
}

fn digits(s: &str) -> Option<Vec<u32>> {
    s.chars().map(|c| c.to_digit(10)).collect()
}

fn all_digits(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit())
}

fn loose(number: &str) -> Option<String> {
    let n = clean(number);
    let len = n.chars().count();
    ((5..=20).contains(&len)
        && n.chars().all(|c| c.is_ascii_alphanumeric())
        && n.chars().any(|c| c.is_ascii_digit()))
    .then_some(n)
}

/// The Luhn checksum over all digits.
fn luhn(d: &[u32]) -> bool {
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &x)| {
            if i % 2 == 1 {
                let y = x * 2;
                if y > 9 {
                    y - 9
                } else {
                    y
                }
            } else {
                x
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// `n mod m` of a decimal string of any length.
fn mod_of(s: &str, m: u64) -> Option<u64> {
    let mut r = 0u64;
    for c in s.chars() {
        r = (r * 10 + u64::from(c.to_digit(10)?)) % m;
    }
    Some(r)
}

/// EU VAT numbers: two-letter member-state prefix, then the national format.
fn eu_vat(number: &str) -> Option<String> {
    let n = clean(number);
    let prefix = n.get(..2)?;
    let rest = n.get(2..)?;
    let body = match prefix {
        "BE" => be(rest),
        "DE" => de(rest),
        "ES" => es(rest),
        "FR" => fr(rest),
        "IE" => ie(rest),
        "IT" => it(rest),
        "NL" => nl(rest),
        "PL" => pl(rest),
        "PT" => pt(rest),
        "XI" => tax_checks::gb(rest),
        _ => tax_checks::eu_body(prefix, rest)?,
    }?;
    Some(format!("{prefix}{body}"))
}

/// Ten digits (a nine-digit number gets a leading 0), starting with 0 or 1, whose last two
/// are 97 minus the first eight mod 97.
fn be(rest: &str) -> Option<String> {
    let n = if rest.len() == 9 {
        format!("0{rest}")
    } else {
        rest.to_string()
    };
    if !all_digits(&n, 10) || !(n.starts_with('0') || n.starts_with('1')) {
        return None;
    }
    let head = mod_of(n.get(..8)?, 97)?;
    let check: u64 = n.get(8..)?.parse().ok()?;
    (97 - head == check).then_some(n)
}

/// Nine digits, the last an ISO 7064 MOD 11,10 check digit.
fn de(rest: &str) -> Option<String> {
    if !all_digits(rest, 9) || rest.starts_with('0') {
        return None;
    }
    let d = digits(rest)?;
    let mut product = 10;
    for &x in d.get(..8)? {
        let mut sum = (x + product) % 10;
        if sum == 0 {
            sum = 10;
        }
        product = (2 * sum) % 11;
    }
    let check = (11 - product) % 10;
    (Some(&check) == d.get(8)).then(|| rest.to_string())
}

/// A letter or digit, seven digits, a letter or digit.
fn es(rest: &str) -> Option<String> {
    let b = rest.as_bytes();
    (b.len() == 9
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.get(1..8)
            .is_some_and(|m| m.iter().all(u8::is_ascii_digit))
        && b.get(8).is_some_and(u8::is_ascii_alphanumeric)
        && b.iter().any(u8::is_ascii_digit))
    .then(|| rest.to_string())
}

/// Two key characters and the nine-digit SIREN. A numeric key must equal
/// `(SIREN × 100 + 12) mod 97`, and the SIREN must pass Luhn (except Monaco's `000…`).
fn fr(rest: &str) -> Option<String> {
    if rest.len() != 11 {
        return None;
    }
    let (key, siren) = rest.split_at_checked(2)?;
    if !all_digits(siren, 9) {
        return None;
    }
    let key_ok = key
        .bytes()
        .all(|b| b.is_ascii_digit() || (b.is_ascii_uppercase() && b != b'I' && b != b'O'));
    if !key_ok {
        return None;
    }
    if !siren.starts_with("000") && !luhn(&digits(siren)?) {
        return None;
    }
    if key.bytes().all(|b| b.is_ascii_digit()) {
        let expected = mod_of(&format!("{siren}12"), 97)?;
        let key: u64 = key.parse().ok()?;
        if key != expected {
            return None;
        }
    }
    Some(rest.to_string())
}

/// Seven digits and one or two letters, or the old digit-letter-five-digits-letter form.
fn ie(rest: &str) -> Option<String> {
    let b = rest.as_bytes();
    let new_style = (b.len() == 8 || b.len() == 9)
        && b.get(..7).is_some_and(|d| d.iter().all(u8::is_ascii_digit))
        && b.get(7..)
            .is_some_and(|l| l.iter().all(u8::is_ascii_uppercase));
    let old_style = b.len() == 8
        && b.first().is_some_and(u8::is_ascii_digit)
        && b.get(1)
            .is_some_and(|c| c.is_ascii_uppercase() || *c == b'+' || *c == b'*')
        && b.get(2..7)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
        && b.get(7).is_some_and(u8::is_ascii_uppercase);
    (new_style || old_style).then(|| rest.to_string())
}

/// Eleven digits passing Luhn.
fn it(rest: &str) -> Option<String> {
    (all_digits(rest, 11) && rest.get(..7) != Some("0000000") && luhn(&digits(rest)?))
        .then(|| rest.to_string())
}

/// Nine digits, `B`, two digits.
fn nl(rest: &str) -> Option<String> {
    let (d, tail) = rest.split_at_checked(9)?;
    let suffix = tail.strip_prefix('B')?;
    (all_digits(d, 9) && all_digits(suffix, 2)).then(|| rest.to_string())
}

/// Ten digits; weights 6 5 7 2 3 4 5 6 7 mod 11 give the last.
fn pl(rest: &str) -> Option<String> {
    if !all_digits(rest, 10) {
        return None;
    }
    let d = digits(rest)?;
    let weights = [6, 5, 7, 2, 3, 4, 5, 6, 7];
    let sum: u32 = weights.iter().zip(&d).map(|(w, x)| w * x).sum();
    (Some(&(sum % 11)) == d.get(9)).then(|| rest.to_string())
}

/// Nine digits; weights 9…2 give the check digit `(11 − sum mod 11) mod 11 mod 10`.
fn pt(rest: &str) -> Option<String> {
    if !all_digits(rest, 9) {
        return None;
    }
    let d = digits(rest)?;
    let sum: u32 = d
        .iter()
        .take(8)
        .enumerate()
        .map(|(i, x)| (9 - i as u32) * x)
        .sum();
    let check = (11 - sum % 11) % 11 % 10;
    (Some(&check) == d.get(8)).then(|| rest.to_string())
}

/// GB VAT: nine or twelve digits with their check digits, or a government (`GD` + 3) or
/// health (`HA` + 3) number (`tax_checks::gb`); stored without the `GB` prefix.
fn gb_vat(number: &str) -> Option<String> {
    let n = clean(number);
    let rest = n.strip_prefix("GB").unwrap_or(&n);
    tax_checks::gb(rest)
}

/// US employer identification number: nine digits (`12-3456789`).
fn us_ein(number: &str) -> Option<String> {
    let n = clean(number);
    (all_digits(&n, 9) && !n.starts_with("00")).then_some(n)
}

/// Canadian business number: nine digits passing Luhn, optionally followed by a program
/// account (`RC`, `RM`, `RP`, `RT`, `RR`, `RZ` and four digits).
fn ca_bn(number: &str) -> Option<String> {
    let n = clean(number);
    let (bn, program) = n.split_at_checked(9)?;
    if !all_digits(bn, 9) || !luhn(&digits(bn)?) {
        return None;
    }
    let program_ok = program.is_empty()
        || (program.len() == 6
            && ["RC", "RM", "RP", "RT", "RR", "RZ"].contains(&program.get(..2)?)
            && all_digits(program.get(2..)?, 4));
    program_ok.then_some(n)
}

/// Australian business number: eleven digits; subtracting 1 from the first and weighting
/// 10 1 3 5 7 9 11 13 15 17 19 gives a multiple of 89.
fn au_abn(number: &str) -> Option<String> {
    let n = clean(number);
    if !all_digits(&n, 11) {
        return None;
    }
    let mut d = digits(&n)?;
    let first = d.first_mut()?;
    if *first == 0 {
        return None;
    }
    *first -= 1;
    let weights = [10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19];
    let sum: u32 = weights.iter().zip(&d).map(|(w, x)| w * x).sum();
    sum.is_multiple_of(89).then_some(n)
}

/// Swiss UID: `CHE` and nine digits, the last a mod-11 check digit (weights 5 4 3 2 7 6 5 4).
fn ch_uid(number: &str) -> Option<String> {
    let n = clean(number);
    ch_uid_ok(&n).then_some(n)
}

fn ch_uid_ok(n: &str) -> bool {
    let Some(d) = n.strip_prefix("CHE") else {
        return false;
    };
    if !all_digits(d, 9) {
        return false;
    }
    let Some(d) = digits(d) else {
        return false;
    };
    let weights = [5, 4, 3, 2, 7, 6, 5, 4];
    let sum: u32 = weights.iter().zip(&d).map(|(w, x)| w * x).sum();
    let check = (11 - sum % 11) % 11;
    check != 10 && Some(&check) == d.get(8)
}

/// Swiss VAT number: a UID followed by `MWST`, `TVA`, `IVA` or `TPV`.
fn ch_vat(number: &str) -> Option<String> {
    let n = clean(number);
    let uid = ["MWST", "TVA", "IVA", "TPV"]
        .iter()
        .find_map(|s| n.strip_suffix(s))?;
    ch_uid_ok(uid).then_some(n)
}

/// Norwegian VAT number: the nine-digit organisation number (mod 11, weights
/// 3 2 7 6 5 4 3 2) followed by `MVA`; stored without the `NO` prefix.
fn no_vat(number: &str) -> Option<String> {
    let n = clean(number);
    let rest = n.strip_prefix("NO").unwrap_or(&n);
    let orgnr = rest.strip_suffix("MVA")?;
    if !all_digits(orgnr, 9) {
        return None;
    }
    let d = digits(orgnr)?;
    let weights = [3, 2, 7, 6, 5, 4, 3, 2];
    let sum: u32 = weights.iter().zip(&d).map(|(w, x)| w * x).sum();
    let check = (11 - sum % 11) % 11;
    (check != 10 && Some(&check) == d.get(8)).then(|| rest.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(number: &str, country: &str) -> (String, &'static str) {
        match validate_tax_id(number, country) {
            Ok(t) => (t.value, t.format.as_str()),
            Err(e) => panic!("{number} ({country}) rejected: {e:?}"),
        }
    }

    fn bad(number: &str, country: &str) {
        assert_eq!(
            validate_tax_id(number, country),
            Err(TaxIdError::Invalid),
            "{number} ({country}) accepted"
        );
    }

    #[test]
    fn polars_french_example() {
        assert_eq!(
            ok("FR61954506077", "FR"),
            ("FR61954506077".into(), "eu_vat")
        );
        assert_eq!(
            ok("fr 61 954 506 077", "FR"),
            ("FR61954506077".into(), "eu_vat")
        );
        bad("123", "FR");
        bad("FR62954506077", "FR");
        bad("61954506077", "FR");
    }

    #[test]
    fn eu_vat_numbers() {
        assert_eq!(ok("DE136695976", "DE").1, "eu_vat");
        bad("DE136695977", "DE");
        assert_eq!(ok("IT00743110157", "IT").0, "IT00743110157");
        bad("IT00743110158", "IT");
        assert_eq!(ok("BE403019261", "BE").0, "BE0403019261");
        bad("BE0403019262", "BE");
        assert_eq!(ok("PL8567346215", "PL").0, "PL8567346215");
        bad("PL8567346216", "PL");
        assert_eq!(ok("PT501964843", "PT").0, "PT501964843");
        bad("PT501964842", "PT");
        assert_eq!(ok("NL004495445B01", "NL").0, "NL004495445B01");
        assert_eq!(ok("ATU13585627", "AT").0, "ATU13585627");
        assert_eq!(ok("ESA13585625", "ES").1, "eu_vat");
        assert_eq!(ok("SE123456789701", "SE").0, "SE123456789701");
        assert_eq!(ok("EL094259216", "GR").0, "EL094259216");
        assert_eq!(ok("IE6388047V", "IE").0, "IE6388047V");
        // Like Polar, any member state's number is accepted for an EU country.
        assert_eq!(ok("FR61954506077", "DE").0, "FR61954506077");
        bad("XX123456789", "FR");
    }

    #[test]
    fn other_countries() {
        assert_eq!(ok("GB980780684", "GB"), ("980780684".into(), "gb_vat"));
        assert_eq!(ok("GD123", "GB").0, "GD123");
        bad("GB12345", "GB");
        assert_eq!(ok("12-3456789", "US"), ("123456789".into(), "us_ein"));
        bad("1234", "US");
        assert_eq!(ok("123456782", "CA"), ("123456782".into(), "ca_bn"));
        assert_eq!(ok("123456782 RT0001", "CA").0, "123456782RT0001");
        assert_eq!(ok("51 824 753 556", "AU"), ("51824753556".into(), "au_abn"));
        assert_eq!(
            ok("CHE-109.322.551", "CH"),
            ("CHE109322551".into(), "ch_uid")
        );
        assert_eq!(ok("CHE-109.322.551 MWST", "CH").1, "ch_vat");
        bad("CHE-109.322.552", "CH");
        assert_eq!(
            ok("NO 974760673 MVA", "NO"),
            ("974760673MVA".into(), "no_vat")
        );
        bad("NO974760674MVA", "NO");
    }

    #[test]
    fn loose_formats_and_unsupported_countries() {
        assert_eq!(
            ok("11.222.333/0001-81", "BR"),
            ("11222333000181".into(), "br_cnpj")
        );
        assert_eq!(ok("1234567890", "DE"), ("1234567890".into(), "de_stn"));
        bad("12", "BR");
        bad("ABCDEFG", "BR");
        assert_eq!(
            validate_tax_id("123456789", "AQ"),
            Err(TaxIdError::UnsupportedCountry)
        );
    }

    #[test]
    fn formats_round_trip() {
        for (name, f) in TaxIdFormat::ALL {
            assert_eq!(f.as_str(), *name);
            assert_eq!(TaxIdFormat::parse(name), Some(*f));
        }
        assert_eq!(TaxIdFormat::ALL.len(), 74);
    }
}
