//! The check digits of `tax_checks.rs` against python-stdnum's vectors, through the public
//! `validate_tax_id`.

use super::super::tax::{validate_tax_id, TaxIdError};

/// Every `valid` number is accepted as an EU VAT number of `country` (with the
/// prefix, compact, upper-cased), every `invalid` one refused as `Invalid`.
fn table(country: &str, valid: &[&str], invalid: &[&str]) {
    for number in valid {
        let id = validate_tax_id(number, country)
            .unwrap_or_else(|e| panic!("{number} ({country}) refused: {e:?}"));
        assert_eq!(id.format.as_str(), "eu_vat", "{number}");
        let compact: String = number
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .flat_map(char::to_uppercase)
            .collect();
        assert_eq!(id.value, compact, "{number}");
    }
    for number in invalid {
        assert_eq!(
            validate_tax_id(number, country),
            Err(TaxIdError::Invalid),
            "{number} ({country}) accepted"
        );
    }
}

// Valid numbers: python-stdnum tests/test_eu_vat.doctest ("found online and should
// all be valid"); invalid ones: the same file's "mangled so their check digit is
// wrong" list where it has one, otherwise a valid number with one digit changed.

#[test]
fn austria() {
    table(
        "AT",
        &[
            "ATU 142 43 102",
            "ATU 15159209",
            "ATU 54300000",
            "ATU13585627",
            "ATU 65480455",
            "ATU61195628",
        ],
        &[
            "ATU 143 43 102",
            "ATU 15169209",
            "ATU46080904",
            "ATU61191628",
            "ATU13585626",
            "AT 13585627",
        ],
    );
}

#[test]
fn bulgaria() {
    table(
        "BG",
        &[
            "BG 103873594",
            "BG 124 551 319",
            "BG 131 272 009",
            "BG130544585",
            "BG 200950556",
            "BG7523169263",
        ],
        &[
            "BG 131 172 009",
            "BG 147147471",
            "BG 200940556",
            "BG 103873595",
        ],
    );
}

#[test]
fn cyprus() {
    table(
        "CY",
        &[
            "CY 10246672X",
            "CY 10263870R",
            "CY- 10277198H",
            "CY-10008489 A",
            "CY00632993 F",
            "CY-10259033P",
        ],
        &[
            "CY 10246672F",
            "CY-10009489 A",
            "CY-10257074Y",
            "CY00632893 F",
            "CY-12259033P",
        ],
    );
}

#[test]
fn czech_republic() {
    table(
        "CZ",
        &[
            "CZ 25123891",
            "CZ 60 72 77 72",
            "CZ00023205",
            "CZ 640903926",
            "CZ 654123789",
            "CZ 640229/4448",
            "CZ6011270177",
        ],
        &["CZ 25557481", "CZ 48207726", "CZ 640913926", "CZ 95123891"],
    );
}

#[test]
fn denmark() {
    table(
        "DK",
        &[
            "DK 10 50 32 80",
            "DK 13 20 24 35",
            "DK 2566 2202",
            "DK-27630308",
            "DK: 21599336",
            "DK 13585628",
        ],
        &[
            "DK 11 96 56 58",
            "DK 2565 2202",
            "DK-27996592",
            "DK10159817",
        ],
    );
}

#[test]
fn estonia() {
    table(
        "EE",
        &[
            "EE 100 931 558",
            "EE 100523487",
            "EE 100594102",
            "EE 101288941",
            "EE101256753",
        ],
        &[
            "EE 100 941 558",
            "EE 100525487",
            "EE 101586639",
            "EE101256754",
        ],
    );
}

#[test]
fn greece() {
    table(
        "GR",
        &[
            "EL 039868210",
            "EL 094012834",
            "EL 998386804",
            "EL-082857563",
            "EL: 094279805",
            "EL094259216",
        ],
        &[
            "EL 094013834",
            "EL 094068733",
            "EL094501140",
            "EL: 094269805",
        ],
    );
}

#[test]
fn finland() {
    table(
        "FI",
        &[
            "FI 02459042",
            "FI 10320534",
            "FI 20774740",
            "FI- 22291259",
            "FI-214 95 540",
            "FI18261444",
        ],
        &["FI 20774741", "FI 02459043", "FI 10320634"],
    );
}

/// python-stdnum has one Croatian vector (`stdnum/hr/oib.py`); the check is ISO 7064
/// MOD 11,10, also Germany's (over nine digits there), so German numbers of
/// test_eu_vat.doctest pin the same function.
#[test]
fn croatia() {
    table(
        "HR",
        &["HR 33392005961", "HR33392005961"],
        &["HR 33392005962", "HR 33392015961", "HR 3339200596"],
    );
    for de in [
        "113866163",
        "118619592",
        "125014955",
        "129304291",
        "168347747",
    ] {
        let d: Vec<u32> = de.chars().filter_map(|c| c.to_digit(10)).collect();
        assert!(super::mod_11_10(&d), "{de}");
        let mut bad = d.clone();
        bad[5] = (bad[5] + 1) % 10;
        assert!(!super::mod_11_10(&bad), "{de} changed");
    }
}

#[test]
fn hungary() {
    table(
        "HU",
        &[
            "HU -12509403",
            "HU 10672101",
            "HU 23157653",
            "HU-12892312",
            "HU11377304",
        ],
        &["HU-12892313", "HU 10672102", "HU 23157753"],
    );
}

#[test]
fn lithuania() {
    table(
        "LT",
        &[
            "LT 119511515",
            "LT 235449811",
            "LT 100001919017",
            "LT100004801610",
            "LT 616414610",
            "LT290068995116",
        ],
        &[
            "LT 100001919018",
            "LT 119511516",
            "LT 100001354",
            "LT 100001509922",
        ],
    );
}

#[test]
fn luxembourg() {
    table(
        "LU",
        &[
            "LU 10059929",
            "LU 150 274 42",
            "LU 1871 0830",
            "LU.248.70.640",
            "LU: 2294 4200",
            "Lu 19980500",
        ],
        &["LU 150 274 43", "LU 10059939", "LU 22944201"],
    );
}

#[test]
fn latvia() {
    table(
        "LV",
        &[
            "LV 4000 3521 600",
            "LV 40003189718",
            "LV 5000 399 3021",
            "LV 90000528023",
            "LV-42103048183",
            // A person's code: accepted on format.
            "LV 161175-19997",
        ],
        &[
            "LV 40003189715",
            "LV 90000528022",
            "LV-42103048181",
            "LV 40003521601",
        ],
    );
}

#[test]
fn malta() {
    table(
        "MT",
        &[
            "MT 1039-6417",
            "MT 1167-9112",
            "MT 17025737",
            "MT 1966 1023",
            "MT 20630321",
        ],
        &["MT 1039-6418", "MT 17025747", "MT 20630311", "MT 01039641"],
    );
}

#[test]
fn romania() {
    table(
        "RO",
        &[
            "RO 11358544",
            "RO 1822964",
            "RO 185 472 90",
            "RO 573768",
            "RO-23867797",
            "Ro 15071875",
        ],
        &["RO 185 472 91", "RO 11358545", "RO 573778", "RO 0573768"],
    );
}

#[test]
fn sweden() {
    table(
        "SE",
        &[
            "SE 202 100-5000 01",
            "SE 556.383.740.901",
            "SE 556058115801",
            "SE-5562245190-01",
            "Se 556250398601",
            "SE123456789701",
        ],
        &["SE 556058115901", "SE123456789101", "SE 556058115802"],
    );
}

#[test]
fn slovenia() {
    table(
        "SI",
        &[
            "SI 26808498",
            "SI 3609 7152",
            "SI 50223054",
            "SI-83815201",
            "SI 92351069",
        ],
        &["SI 50223055", "SI 26808598", "SI 03609715"],
    );
}

#[test]
fn slovakia() {
    table(
        "SK",
        &[
            "SK 1078449064",
            "SK 202 274 96 19",
            "SK 2020 237 945",
            "SK 2021 6858 20",
            "SK2022193459",
        ],
        &[
            "SK 1078449164",
            "SK 302 274 96 19",
            "SK 2030 237 945",
            "SK 2020457679",
        ],
    );
}

/// python-stdnum tests/test_gb_vat.doctest (valid list, and its invalid check digit
/// `802311781`, `001234567`), `stdnum/gb/vat.py` for the short forms.
#[test]
fn united_kingdom() {
    for number in [
        "GB 002 4257 28",
        "GB 100 1950 75",
        "GB 100190874",
        "GB 242338087388",
        "GB 311 405 025",
        "GB 980780684",
        "GB653599494",
        "GD100",
        "HA501",
    ] {
        let id =
            validate_tax_id(number, "GB").unwrap_or_else(|e| panic!("{number} refused: {e:?}"));
        assert_eq!(id.format.as_str(), "gb_vat");
    }
    for number in [
        "802311781",
        "001234567",
        "GB 980780685",
        "GB 242338187388",
        "GD600",
        "HA201",
        "ZZ100",
    ] {
        assert_eq!(
            validate_tax_id(number, "GB"),
            Err(TaxIdError::Invalid),
            "{number}"
        );
    }
    // Northern Ireland's XI numbers are GB numbers within the EU format.
    table("IE", &["XI 432525179"], &["XI 432525178"]);
}

/// Every valid number of the file's lists for the states checked here (as extracted,
/// a wider net than the tables above).
#[test]
fn all_numbers_of_python_stdnum_valid_list() {
    for number in [
        "ATU 28560205",
        "ATU 34172105",
        "ATU 40698107",
        "ATU 46276408",
        "ATU 49362201",
        "ATU 54299806",
        "ATU 56377717",
        "ATU 57194903",
        "ATU 64487479",
        "ATU 64762368",
        "ATU 64938009",
        "ATU 65020906",
        "ATU 65033803",
        "ATU 65034704",
        "ATU46080404",
        "BG 130 358 310",
        "BG 131202360",
        "BG 147137471",
        "BG 175074752",
        "BG 175186242",
        "BG 200182590",
        "BG175074752",
        "BG7111042925",
        "BG7542011030",
        "BG8032056031",
        "Bg 200442771",
        "CY 10274231F",
        "CY 10285193Z",
        "CY-10189098G",
        "CY-10258074Y",
        "CZ 25577581",
        "CZ 26852357",
        "CZ 61467839",
        "CZ 64628060",
        "CZ 682127228",
        "CZ 6956220612",
        "CZ 736028/5163",
        "CZ 8058012314",
        "CZ24158313",
        "CZ26780259",
        "CZ450 33 145",
        "CZ48207926",
        "CZ49620819",
        "CZ6109220348",
        "CZ61989100",
        "CZ6306150004",
        "CZ7205151536",
        "CZ7652046248",
        "DK 11 97 56 58",
        "DK 12 14 48 22",
        "DK 13 31 04 59",
        "DK 16 89 50 16",
        "DK 25 18 63 11",
        "DK 25 76 63 69",
        "DK 25 86 35 26",
        "DK 26 09 77 89",
        "DK 26 57 61 64",
        "DK 28 01 76 34",
        "DK 28107773",
        "DK 29523215",
        "DK 30 06 09 46",
        "DK 32 27 15 02",
        "DK 32329853",
        "DK 65 07 04 13",
        "DK 90 30 16 59",
        "DK-20 04 52 72",
        "DK-20 64 64 46",
        "DK-27926592",
        "DK-28840926",
        "DK-31882095",
        "DK-33053266",
        "DK10150817",
        "DK10290813",
        "DK26210895",
        "DK36149213",
        "EE 100572933",
        "EE 100578209",
        "EE 100594403",
        "EE 100832107",
        "EE 100834066",
        "EE 101031389",
        "EE 101286639",
        "EL 044824428",
        "EL 072130053",
        "EL 082499478",
        "EL 094064321",
        "EL 094068633",
        "EL 094237076",
        "EL 094263543",
        "EL 095217179",
        "EL 095304080",
        "EL 099548630",
        "EL 998408192",
        "EL 998722134",
        "EL 999038150",
        "EL 999107669",
        "EL 999533911",
        "EL 999698730",
        "EL 999715835",
        "EL094501040",
        "EL098099809",
        "FI 18949388",
        "FI 20194885",
        "FI 24416318",
        "FI- 01968312",
        "FI-22291240",
        "FI-24163066",
        "HU 10766172",
        "HU 11444923",
        "HU 12723650",
        "HU 12840937",
        "HU 13851909",
        "HU 18206373",
        "HU 64241281",
        "HU-10402434",
        "HU-14528114",
        "HU12078503",
        "HU13852467",
        "LT 100001354118",
        "LT 100001509912",
        "LT 100001799517",
        "LT 100001890913",
        "LT 100001906711",
        "LT 100002645517",
        "LT 100002922012",
        "LT 100003619917",
        "LT 100005066013",
        "LT 100005929611",
        "LT 250266219",
        "LT 258596610",
        "LT 354991917",
        "LT 757118413",
        "LT-100000979812",
        "LT100001251914",
        "LT100002894215",
        "LU 10590281",
        "LU 109 676 28",
        "LU 11082217",
        "LU 13178262",
        "LU 19184853",
        "LU 19406747",
        "LU 19979983",
        "LU 20981643",
        "LU 21989666",
        "LU 22 22 12 68",
        "LU 22690342",
        "LU 22991225",
        "LU: 20993674",
        "LV 40003282138",
        "LV 40003449366",
        "LV 40003655379",
        "LV 40003718068",
        "LV 40003754957",
        "LV 40003777428",
        "LV 40003939038",
        "LV 40008000102",
        "LV 40103077610",
        "LV 40103157009",
        "LV 40103179665",
        "LV 40103264016",
        "LV 43603009384",
        "LV 44103040262",
        "LV 50003087101",
        "LV-40003241337",
        "LV-40003467376",
        "LV-42103016370",
        "MT 1465 8213",
        "MT 1613-4207",
        "MT 18740407",
        "MT 1894 0705",
        "MT 19784818",
        "MT 2029 1423",
        "RO 13837330",
        "RO 14840784",
        "RO 16621241",
        "RO 17832344",
        "RO 18341035",
        "RO 18779508",
        "RO 20950021",
        "RO 21356044",
        "RO 21996566",
        "RO 241 30 20",
        "RO 24736200",
        "RO 3087444",
        "RO 4003786",
        "RO 4019740",
        "RO 4257679",
        "RO 6010151",
        "RO 6322498",
        "RO 6655328",
        "RO-27849238",
        "RO16241790",
        "SE 390 806 051 401",
        "SE 55 62 00-0777 01",
        "SE 55 67 59 32 48 01",
        "SE 556126249301",
        "SE 556433592401",
        "SE 556700 3552 01",
        "SE 556708202801",
        "SE 556728341001",
        "SE 556848115301",
        "SE 720 522 241 201",
        "SE-502053602401",
        "SE-556 644 662 001",
        "SE-556 792 355 101",
        "SE-556271210801",
        "SE-556666-4438-01",
        "SE556043606401",
        "SI 29664373",
        "SI 48673820",
        "SI 56633360",
        "SI 56951442",
        "SI 68297530",
        "SI 70310815",
        "SI 73567906",
        "SI 85390518",
        "SI-89036999",
        "SK 2020257679",
        "SK 2021853504",
        "SK 2021998528",
        "SK 2022193459",
    ] {
        let prefix = &number[..2];
        let country = if prefix.eq_ignore_ascii_case("EL") {
            "GR"
        } else {
            prefix
        };
        assert!(validate_tax_id(number, country).is_ok(), "{number} refused");
    }
}
