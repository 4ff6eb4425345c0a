//! Check digits of the EU VAT numbers that `tax.rs` used to check by format only, and of
//! GB's VAT numbers. Each function takes the number without its two-letter prefix,
//! already upper-cased and without separators (`tax.rs` cleans it), and says whether it is
//! well formed with a right check digit.
//!
//! The algorithms are the published ones, as python-stdnum implements them (LGPL; read,
//! not copied: <https://github.com/arthurdejong/python-stdnum>, `stdnum/<cc>/…`, named on
//! each function). Numbers that only private persons hold (Bulgarian 10-digit, Czech 9/10
//! digit birth numbers, Latvian personal codes) are accepted on their format: their
//! checks depend on a date of birth and several schemes, and a business buyer has the
//! legal-entity number anyway. The tests are python-stdnum's own vectors
//! (`tests/test_eu_vat.doctest`, `tests/test_gb_vat.doctest` and the module doctests).

/// The body of an EU VAT number with `prefix`, checked: `Some(Some(body))` when valid,
/// `Some(None)` when not, `None` when `prefix` is not one of the states checked here.
pub(super) fn eu_body(prefix: &str, rest: &str) -> Option<Option<String>> {
    let ok = match prefix {
        "AT" => at(rest),
        "BG" => bg(rest),
        "CY" => cy(rest),
        "CZ" => cz(rest),
        "DK" => dk(rest),
        "EE" => ee(rest),
        "EL" | "GR" => gr(rest),
        "FI" => fi(rest),
        "HR" => hr(rest),
        "HU" => hu(rest),
        "LT" => lt(rest),
        "LU" => lu(rest),
        "LV" => lv(rest),
        "MT" => mt(rest),
        "RO" => ro(rest),
        "SE" => se(rest),
        "SI" => si(rest),
        "SK" => sk(rest),
        _ => return None,
    };
    Some(ok.then(|| rest.to_string()))
}

/// A GB (or XI) VAT number without its prefix: nine digits, or twelve for a branch (the
/// last three not checked), whose first nine pass the mod-97 check (weights 8 7 6 5 4 3 2,
/// then the two check digits as a number: the sum is a multiple of 97) or, for numbers
/// from 100 000 000 on, the "9755" variant (the sum plus 55 is a multiple of 97: the
/// remainder is 42; python-stdnum also takes 55); or a government department (`GD` and
/// 000–499) or health authority (`HA` and 500–999) number, on format.
/// (`stdnum/gb/vat.py`)
pub(super) fn gb(rest: &str) -> Option<String> {
    let ok = if let Some(d) = digits_of(rest, 9).or_else(|| digits_of(rest, 12)) {
        let sum = weighted(&d, &[8, 7, 6, 5, 4, 3, 2, 10, 1]) % 97;
        let first3 = d[0] * 100 + d[1] * 10 + d[2];
        if first3 >= 100 {
            matches!(sum, 0 | 42 | 55)
        } else {
            sum == 0
        }
    } else if let Some(n) = rest.strip_prefix("GD") {
        digits_of(n, 3).is_some() && n < "500"
    } else if let Some(n) = rest.strip_prefix("HA") {
        digits_of(n, 3).is_some() && n >= "500"
    } else {
        false
    };
    ok.then(|| rest.to_string())
}

/// Exactly `len` ASCII digits, as numbers.
fn digits_of(s: &str, len: usize) -> Option<Vec<u32>> {
    if s.len() != len {
        return None;
    }
    s.chars().map(|c| c.to_digit(10)).collect()
}

/// Σ weight × digit over the shorter of the two.
fn weighted(d: &[u32], weights: &[u32]) -> u32 {
    d.iter().zip(weights).map(|(x, w)| x * w).sum()
}

/// The Luhn checksum (0 for a valid number): from the right, digits at odd positions
/// doubled and their digit sums taken.
fn luhn_checksum(d: &[u32]) -> u32 {
    d.iter()
        .rev()
        .enumerate()
        .map(|(i, &x)| {
            if i % 2 == 1 {
                (x * 2) / 10 + (x * 2) % 10
            } else {
                x
            }
        })
        .sum::<u32>()
        % 10
}

/// ISO 7064 MOD 11,10 over all digits, the last being the check digit.
fn mod_11_10(d: &[u32]) -> bool {
    let Some((check, body)) = d.split_last() else {
        return false;
    };
    let mut product = 10;
    for &x in body {
        let mut sum = (x + product) % 10;
        if sum == 0 {
            sum = 10;
        }
        product = (2 * sum) % 11;
    }
    (11 - product) % 10 == *check
}

/// Austria (UID): `U` and eight digits; the last is `(6 − Luhn checksum of the previous
/// seven) mod 10`. (`stdnum/at/uid.py`)
fn at(rest: &str) -> bool {
    let Some(d) = rest.strip_prefix('U').and_then(|n| digits_of(n, 8)) else {
        return false;
    };
    (16 - luhn_checksum(&d[..7])) % 10 == d[7]
}

/// Bulgaria: nine digits for a legal entity, the last `Σ (i+1)·dᵢ mod 11` (when that is
/// 10: `Σ (i+3)·dᵢ mod 11`), taken mod 10; ten digits (persons, foreigners, others) on
/// format. (`stdnum/bg/vat.py`)
fn bg(rest: &str) -> bool {
    if digits_of(rest, 10).is_some() {
        return true;
    }
    let Some(d) = digits_of(rest, 9) else {
        return false;
    };
    let body = &d[..8];
    let mut check = weighted(body, &[1, 2, 3, 4, 5, 6, 7, 8]) % 11;
    if check == 10 {
        check = weighted(body, &[3, 4, 5, 6, 7, 8, 9, 10]) % 11;
    }
    check % 10 == d[8]
}

/// Cyprus: eight digits (not starting `12`) and a check letter: the digits at even
/// positions translated (0→1, 1→0, 2→5, 3→7, 4→9, 5→13, 6→15, 7→17, 8→19, 9→21), those
/// at odd positions as they are, summed mod 26 as a letter `A`–`Z`. (`stdnum/cy/vat.py`)
fn cy(rest: &str) -> bool {
    const EVEN: [u32; 10] = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21];
    let Some((body, letter)) = rest.split_at_checked(8) else {
        return false;
    };
    let Some(d) = digits_of(body, 8) else {
        return false;
    };
    if body.starts_with("12") {
        return false;
    }
    let sum: u32 = d
        .iter()
        .enumerate()
        .map(|(i, &x)| if i % 2 == 0 { EVEN[x as usize] } else { x })
        .sum();
    let expected = char::from(b'A' + (sum % 26) as u8);
    letter.len() == 1 && letter.starts_with(expected)
}

/// Czech Republic: eight digits for a legal entity (not starting with 9), the last
/// `(11 − Σ (8−i)·dᵢ mod 11) mod 11` (0 becomes 1), mod 10; nine digits starting with 6
/// (the "special" individual numbers) with their own check over digits 2–8; other nine-
/// and ten-digit numbers (birth numbers of persons) on format. (`stdnum/cz/dic.py`)
fn cz(rest: &str) -> bool {
    if let Some(d) = digits_of(rest, 8) {
        if d[0] == 9 {
            return false;
        }
        let check = (11 - weighted(&d[..7], &[8, 7, 6, 5, 4, 3, 2]) % 11) % 11;
        let check = if check == 0 { 1 } else { check };
        return check % 10 == d[7];
    }
    if let Some(d) = digits_of(rest, 9) {
        if d[0] == 6 {
            let sum = (weighted(&d[1..8], &[8, 7, 6, 5, 4, 3, 2]) % 11) as i32;
            let check = (8 - (10 - sum) % 11).rem_euclid(10);
            return check == d[8] as i32;
        }
        return true;
    }
    digits_of(rest, 10).is_some()
}

/// Denmark (CVR): eight digits, not starting with 0, `Σ w·d mod 11 = 0` with weights
/// 2 7 6 5 4 3 2 1. (`stdnum/dk/cvr.py`)
fn dk(rest: &str) -> bool {
    digits_of(rest, 8)
        .is_some_and(|d| d[0] != 0 && weighted(&d, &[2, 7, 6, 5, 4, 3, 2, 1]).is_multiple_of(11))
}

/// Estonia (KMKR): nine digits, `Σ w·d mod 10 = 0` with weights 3 7 1 3 7 1 3 7 1.
/// (`stdnum/ee/kmkr.py`)
fn ee(rest: &str) -> bool {
    digits_of(rest, 9)
        .is_some_and(|d| weighted(&d, &[3, 7, 1, 3, 7, 1, 3, 7, 1]).is_multiple_of(10))
}

/// Greece: nine digits; the first eight read as binary-weighted (`c = 2c + d`), then
/// `2c mod 11 mod 10` is the last. (`stdnum/gr/vat.py`)
fn gr(rest: &str) -> bool {
    digits_of(rest, 9).is_some_and(|d| {
        let c = d[..8].iter().fold(0u64, |c, &x| c * 2 + u64::from(x));
        (c * 2 % 11 % 10) == u64::from(d[8])
    })
}

/// Finland (ALV): eight digits, `Σ w·d mod 11 = 0` with weights 7 9 10 5 8 4 2 1.
/// (`stdnum/fi/alv.py`)
fn fi(rest: &str) -> bool {
    digits_of(rest, 8).is_some_and(|d| weighted(&d, &[7, 9, 10, 5, 8, 4, 2, 1]).is_multiple_of(11))
}

/// Croatia (OIB): eleven digits, the last an ISO 7064 MOD 11,10 check digit.
/// (`stdnum/hr/oib.py`)
fn hr(rest: &str) -> bool {
    digits_of(rest, 11).is_some_and(|d| mod_11_10(&d))
}

/// Hungary (ANUM): eight digits, `Σ w·d mod 10 = 0` with weights 9 7 3 1 9 7 3 1.
/// (`stdnum/hu/anum.py`)
fn hu(rest: &str) -> bool {
    digits_of(rest, 8).is_some_and(|d| weighted(&d, &[9, 7, 3, 1, 9, 7, 3, 1]).is_multiple_of(10))
}

/// Lithuania (PVM): nine digits with 1 as the eighth (legal entities) or twelve with 1 as
/// the eleventh (temporary registrations); the last is `Σ (1 + i mod 9)·dᵢ mod 11` (when
/// that is 10: `Σ (1 + (i+2) mod 9)·dᵢ mod 11`), mod 10. (`stdnum/lt/pvm.py`)
fn lt(rest: &str) -> bool {
    let Some(d) = digits_of(rest, 9).or_else(|| digits_of(rest, 12)) else {
        return false;
    };
    if d[d.len() - 2] != 1 {
        return false;
    }
    let (check, body) = (d[d.len() - 1], &d[..d.len() - 1]);
    let sum = |shift: usize| -> u32 {
        body.iter()
            .enumerate()
            .map(|(i, &x)| (1 + ((i + shift) % 9) as u32) * x)
            .sum()
    };
    let mut c = sum(0) % 11;
    if c == 10 {
        c = sum(2) % 11;
    }
    c % 10 == check
}

/// Luxembourg: eight digits, the first six mod 89 are the last two. (`stdnum/lu/tva.py`)
fn lu(rest: &str) -> bool {
    digits_of(rest, 8).is_some_and(|d| {
        let head = d[..6].iter().fold(0u32, |n, &x| n * 10 + x);
        head % 89 == d[6] * 10 + d[7]
    })
}

/// Latvia (PVN): eleven digits; a legal entity's (first digit above 3) satisfy
/// `Σ w·d mod 11 = 3` with weights 9 1 4 8 3 10 2 5 7 6 1; a person's code on format.
/// (`stdnum/lv/pvn.py`)
fn lv(rest: &str) -> bool {
    digits_of(rest, 11)
        .is_some_and(|d| d[0] <= 3 || weighted(&d, &[9, 1, 4, 8, 3, 10, 2, 5, 7, 6, 1]) % 11 == 3)
}

/// Malta: eight digits, not starting with 0, `Σ w·d mod 37 = 0` with weights
/// 3 4 6 7 8 9 10 1. (`stdnum/mt/vat.py`)
fn mt(rest: &str) -> bool {
    digits_of(rest, 8)
        .is_some_and(|d| d[0] != 0 && weighted(&d, &[3, 4, 6, 7, 8, 9, 10, 1]).is_multiple_of(37))
}

/// Romania (CUI/CIF): two to ten digits, not starting with 0; the others padded on the
/// left to nine and weighted 7 5 3 2 1 7 5 3 2: `10·Σ mod 11 mod 10` is the last.
/// (`stdnum/ro/cui.py`)
fn ro(rest: &str) -> bool {
    let Some(d) = digits_of(rest, rest.len()) else {
        return false;
    };
    if !(2..=10).contains(&d.len()) || d[0] == 0 {
        return false;
    }
    let (check, body) = (d[d.len() - 1], &d[..d.len() - 1]);
    let weights = [7, 5, 3, 2, 1, 7, 5, 3, 2];
    let sum = weighted(body, &weights[9 - body.len()..]);
    10 * sum % 11 % 10 == check
}

/// Sweden: the ten-digit organisation number (Luhn) and `01`. (`stdnum/se/vat.py`,
/// `stdnum/se/orgnr.py`)
fn se(rest: &str) -> bool {
    digits_of(rest, 12).is_some_and(|d| rest.ends_with("01") && luhn_checksum(&d[..10]) == 0)
}

/// Slovenia (DDV): eight digits, not starting with 0; the last is
/// `11 − Σ (8−i)·dᵢ mod 11` over the first seven (10 becomes 0; 11 is never valid).
/// (`stdnum/si/ddv.py`)
fn si(rest: &str) -> bool {
    digits_of(rest, 8).is_some_and(|d| {
        let check = 11 - weighted(&d[..7], &[8, 7, 6, 5, 4, 3, 2]) % 11;
        d[0] != 0 && (if check == 10 { 0 } else { check }) == d[7]
    })
}

/// Slovakia (IČ DPH): ten digits; a legal entity's do not start with 0, have 2, 3, 4, 7,
/// 8 or 9 as the third and are a multiple of 11; a person's birth number (a plausible
/// date, the first nine mod 11 mod 10 as the last) is accepted too. (`stdnum/sk/dph.py`,
/// `stdnum/cz/rc.py`)
fn sk(rest: &str) -> bool {
    let Some(d) = digits_of(rest, 10) else {
        return false;
    };
    let value = |ds: &[u32]| ds.iter().fold(0u64, |n, &x| n * 10 + u64::from(x));
    let birth_number = {
        let month = d[2] * 10 + d[3];
        let day = d[4] * 10 + d[5];
        let month_ok = [0, 20, 50, 70]
            .iter()
            .any(|off| (off + 1..=off + 12).contains(&month));
        month_ok && (1..=31).contains(&day) && value(&d[..9]) % 11 % 10 == u64::from(d[9])
    };
    let legal = d[0] != 0 && [2, 3, 4, 7, 8, 9].contains(&d[2]) && value(&d) % 11 == 0;
    birth_number || legal
}

#[cfg(test)]
#[path = "tax_checks_tests.rs"]
mod tests;
