//! Dates as each language writes them in a sentence (CLDR's long date format: `August 2,
//! 2026`, `2. August 2026`, `2026年8月2日`): pure tables, tested against CLDR's strings.

use chrono::{Datelike, NaiveDate};

use super::locale::Lang;

const EN: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DE: [&str; 12] = [
    "Januar",
    "Februar",
    "März",
    "April",
    "Mai",
    "Juni",
    "Juli",
    "August",
    "September",
    "Oktober",
    "November",
    "Dezember",
];
const FR: [&str; 12] = [
    "janvier",
    "février",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
];
const ES: [&str; 12] = [
    "enero",
    "febrero",
    "marzo",
    "abril",
    "mayo",
    "junio",
    "julio",
    "agosto",
    "septiembre",
    "octubre",
    "noviembre",
    "diciembre",
];
const IT: [&str; 12] = [
    "gennaio",
    "febbraio",
    "marzo",
    "aprile",
    "maggio",
    "giugno",
    "luglio",
    "agosto",
    "settembre",
    "ottobre",
    "novembre",
    "dicembre",
];
const PT: [&str; 12] = [
    "janeiro",
    "fevereiro",
    "março",
    "abril",
    "maio",
    "junho",
    "julho",
    "agosto",
    "setembro",
    "outubro",
    "novembro",
    "dezembro",
];
const NL: [&str; 12] = [
    "januari",
    "februari",
    "maart",
    "april",
    "mei",
    "juni",
    "juli",
    "augustus",
    "september",
    "oktober",
    "november",
    "december",
];

/// `date` in `lang`'s long format (`Intl.DateTimeFormat(lang, {dateStyle: "long"})`).
pub fn long_date(lang: Lang, date: NaiveDate) -> String {
    let (d, y) = (date.day(), date.year());
    let m = date.month0() as usize;
    match lang {
        Lang::En => format!("{} {d}, {y}", EN[m]),
        Lang::De => format!("{d}. {} {y}", DE[m]),
        Lang::Fr => format!("{d} {} {y}", FR[m]),
        Lang::Es => format!("{d} de {} de {y}", ES[m]),
        Lang::It => format!("{d} {} {y}", IT[m]),
        Lang::Pt => format!("{d} de {} de {y}", PT[m]),
        Lang::Nl => format!("{d} {} {y}", NL[m]),
        Lang::Ja => format!("{y}年{}月{d}日", m + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_writes_a_date_as_cldr_does() {
        let day = NaiveDate::from_ymd_opt(2026, 8, 2).unwrap();
        let want = [
            (Lang::En, "August 2, 2026"),
            (Lang::De, "2. August 2026"),
            (Lang::Fr, "2 août 2026"),
            (Lang::Es, "2 de agosto de 2026"),
            (Lang::It, "2 agosto 2026"),
            (Lang::Pt, "2 de agosto de 2026"),
            (Lang::Nl, "2 augustus 2026"),
            (Lang::Ja, "2026年8月2日"),
        ];
        for (lang, s) in want {
            assert_eq!(long_date(lang, day), s);
        }
        let new_year = NaiveDate::from_ymd_opt(2027, 1, 31).unwrap();
        assert_eq!(long_date(Lang::De, new_year), "31. Januar 2027");
        assert_eq!(long_date(Lang::Ja, new_year), "2027年1月31日");
    }
}
