//! Durations as configuration formats spell them, read into herdsim's
//! whole microseconds. Each format's own syntax is read exactly as its
//! project's parser does; a value herdsim cannot hold (a fraction of a
//! microsecond) is refused rather than rounded.

use crate::base::time::{Micros, format_duration};

/// A protobuf JSON `google.protobuf.Duration` ("0.1s", "1.000340012s",
/// "3s"): as grpc-go's `internal/serviceconfig.Duration.UnmarshalJSON`
/// reads it, digits with an optional fraction of at most nine digits and
/// the unit `s`, nothing else (no other unit, no exponent, no spaces). The
/// sign is refused here: no duration of a retry configuration may be
/// negative. Returns the µs and the text in herdsim's syntax.
pub fn proto3(text: &str) -> Result<Micros, String> {
    let accepted = "a protobuf JSON duration: seconds with up to 9 decimals and the unit s, \
                    such as \"0.1s\" or \"20s\"";
    let body = text
        .strip_suffix('s')
        .ok_or_else(|| format!("\"{text}\" has no unit s: expected {accepted}"))?;
    let (whole, fraction) = match body.split_once('.') {
        Some((w, f)) => (w, f),
        None => (body, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty())
        || !digits(whole)
        || !digits(fraction)
        || (body.contains('.') && fraction.is_empty() && whole.is_empty())
    {
        return Err(format!("\"{text}\" is not {accepted}"));
    }
    if fraction.len() > 9 {
        return Err(format!(
            "\"{text}\" has more than 9 decimals: expected {accepted}"
        ));
    }
    // protobuf's range: at most 315,576,000,000 s (10,000 years).
    let seconds: u64 = if whole.is_empty() {
        0
    } else {
        whole
            .parse()
            .map_err(|_| format!("\"{text}\" is out of range"))?
    };
    if seconds > 315_576_000_000 {
        return Err(format!("\"{text}\" is beyond protobuf's 315,576,000,000 s"));
    }
    let nanos: u64 = format!("{fraction:0<9}").parse().unwrap_or(0);
    if !nanos.is_multiple_of(1_000) {
        return Err(format!(
            "\"{text}\" is not a whole number of microseconds, herdsim's resolution for durations"
        ));
    }
    Ok(Micros::from_ticks(seconds * 1_000_000 + nanos / 1_000))
}

/// `us` in herdsim's syntax ("100ms"), for a setting's value.
pub fn herdsim(us: Micros) -> String {
    format_duration(us)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protobuf_durations_read_as_grpc_reads_them() {
        assert_eq!(proto3("0.1s"), Ok(Micros::from_ms(100)));
        assert_eq!(proto3("3s"), Ok(Micros::from_s(3)));
        assert_eq!(proto3("1.000340s"), Ok(Micros::from_us(1_000_340)));
        assert_eq!(proto3(".5s"), Ok(Micros::from_ms(500)));
        assert_eq!(proto3("5.s"), Ok(Micros::from_s(5)));
        assert!(proto3("0.000000001s").unwrap_err().contains("microseconds"));
        for bad in [
            "100ms",
            "1",
            "s",
            ".s",
            "-1s",
            "1e3s",
            " 1s",
            "1.0000000001s",
            "PT1S",
        ] {
            assert!(proto3(bad).is_err(), "{bad} read");
        }
    }
}
