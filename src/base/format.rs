//! Numbers as people and CSV readers see them: one formatter of each kind for
//! every layer.

/// `1234567` as `1,234,567`.
pub fn group_thousands(n: u64) -> String {
    group_thousands_wide(u128::from(n))
}

/// [`group_thousands`] of a count past `u64` (a chain's states as computed).
pub fn group_thousands_wide(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// `n` and its noun, singular for one: "1 point", "2 points".
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", group_thousands(n), if n == 1 { one } else { many })
}

/// `v` to 5 significant digits, trailing zeros dropped, in exponent form
/// beyond 1e6 or below 1e-3: figures from a solve or an estimate, whose
/// size is not known in advance.
pub fn significant(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if !(1e-3..1e6).contains(&v.abs()) {
        let text = format!("{v:.4e}");
        let (mantissa, exponent) = text.split_once('e').expect("exponent form");
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        format!("{mantissa}e{exponent}")
    } else {
        let digits = 4 - v.abs().log10().floor() as i32;
        trimmed(v, digits.max(0) as usize)
    }
}

/// Seconds to 5 significant digits in ms below a second, and beside
/// them in hours or years when long: `215.08 ms`, `418.81 s`,
/// `7200 s (2 h)`.
pub fn readable_seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{} ms", significant(s * 1e3))
    } else if s < 3600.0 {
        format!("{} s", significant(s))
    } else if s < 86_400.0 * 365.0 {
        format!("{} s ({} h)", significant(s), significant(s / 3600.0))
    } else {
        format!(
            "{} s ({} years)",
            significant(s),
            significant(s / (86_400.0 * 365.25))
        )
    }
}

/// A figure that may be astronomically large (the plain runs a rare chance
/// would need): [`format_number`] below 10^15, e-notation from there, where
/// whole digits stop meaning anything.
pub fn large_number(v: f64, decimals: usize) -> String {
    if v.abs() < 1e15 {
        format_number(v, decimals)
    } else {
        significant(v)
    }
}

/// `v` with `decimals` decimals and thousands separators: `3,740.25`.
pub fn format_number(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let text = format!("{:.*}", decimals, v.abs());
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let mut out = String::new();
    if v < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') {
        out.push('-');
    }
    out += &group_thousands(whole.parse().unwrap_or(0));
    if !fraction.is_empty() {
        out.push('.');
        out += fraction;
    }
    out
}

/// `v` with at most `decimals` decimals, trailing zeros (and a bare point)
/// dropped, thousands not grouped, so it reads back as a value: `2.15`,
/// `512.5`, `4`.
pub fn trimmed(v: f64, decimals: usize) -> String {
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A number as CSV text: whole numbers without a fraction (`5050`), others in
/// the shortest form that reads back to the same `f64` (`0.02`), very small or
/// large ones in exponent form (`1.5e-9`). Deterministic on every machine.
pub fn csv_number(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v != 0.0 && (v.abs() < 1e-4 || v.abs() >= 1e15) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// `text` with its control characters escaped (`\n`, `\t`, `\r`, others as
/// `\u{1b}`), so a user's value quoted in a message keeps the message on one
/// line: every error and warning quotes values through this.
pub fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for ch in text.chars() {
        match ch {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(printable("a\nb"), "a\\nb");
        assert_eq!(printable("x\r\ty"), "x\\r\\ty");
        assert_eq!(printable("\u{1b}[31m"), "\\u{1b}[31m");
        assert_eq!(printable("\u{85}é µs"), "\\u{85}é µs");
        assert_eq!(printable("plain 'text'"), "plain 'text'");
    }

    #[test]
    fn trimmed_numbers_read_back_without_trailing_zeros() {
        assert_eq!(trimmed(2.15, 9), "2.15");
        assert_eq!(trimmed(512.5, 4), "512.5");
        assert_eq!(trimmed(4.0, 4), "4");
        assert_eq!(trimmed(1000.0, 0), "1000");
        assert_eq!(trimmed(0.333_333_33, 4), "0.3333");
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1_000), "1,000");
        assert_eq!(group_thousands(500_500), "500,500");
        assert_eq!(group_thousands(100_000_000), "100,000,000");
    }

    #[test]
    fn numbers_are_grouped_and_rounded() {
        assert_eq!(format_number(3_740.25, 1), "3,740.2");
        assert_eq!(format_number(500_500.0, 0), "500,500");
        assert_eq!(format_number(0.01234, 4), "0.0123");
        assert_eq!(format_number(-1_234.5, 1), "-1,234.5");
        assert_eq!(format_number(-0.0001, 2), "0.00");
    }

    #[test]
    fn csv_numbers_are_short_and_exact() {
        assert_eq!(csv_number(5_050.0), "5050");
        assert_eq!(csv_number(-3.0), "-3");
        assert_eq!(csv_number(0.0), "0");
        assert_eq!(csv_number(0.02), "0.02");
        assert_eq!(csv_number(9_856_040.7), "9856040.7");
        assert_eq!(csv_number(1.963_400_381_411_351e-9), "1.963400381411351e-9");
        assert_eq!(csv_number(0.1 + 0.2), "0.30000000000000004");
        for v in [0.1, 1.0 / 3.0, 2.5e-7, 123_456.789, 1e20] {
            assert_eq!(csv_number(v).parse::<f64>(), Ok(v));
        }
    }
}
