//! A stable 64-bit fingerprint (FNV-1a) of text: what ties a sweep file's
//! rows to their sweep and shows when a row was changed.
//!
//! Written out here rather than taken from `std::hash`, whose hashers may
//! change between Rust releases: a fingerprint is stored in files and must
//! read the same on every machine and version.

/// FNV-1a's 64-bit offset basis.
const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a's 64-bit prime.
const PRIME: u64 = 0x0000_0100_0000_01b3;
/// Ends each field, so that `["ab", "c"]` and `["a", "bc"]` differ.
const FIELD_END: u8 = 0x1f;

/// A fingerprint being built, field by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(u64);

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint(OFFSET_BASIS)
    }
}

impl Fingerprint {
    /// Adds raw bytes.
    pub fn bytes(mut self, bytes: &[u8]) -> Self {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(PRIME);
        }
        self
    }

    /// Adds one field, ended so that fields cannot run into each other.
    pub fn field(self, text: &str) -> Self {
        self.bytes(text.as_bytes()).bytes(&[FIELD_END])
    }

    /// The fingerprint as a number (a map cell's seed).
    pub fn value(self) -> u64 {
        self.0
    }

    /// The fingerprint as 16 lowercase hex digits.
    pub fn hex(self) -> String {
        format!("{:016x}", self.0)
    }

    /// The fingerprint of `text` as 16 hex digits.
    pub fn of(text: &str) -> String {
        Fingerprint::default().bytes(text.as_bytes()).hex()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_fnv1a_test_vectors() {
        // From the FNV reference test suite (Fowler, Noll, Vo).
        assert_eq!(Fingerprint::of(""), "cbf29ce484222325");
        assert_eq!(Fingerprint::of("a"), "af63dc4c8601ec8c");
        assert_eq!(Fingerprint::of("foobar"), "85944171f73967e8");
    }

    #[test]
    fn fields_do_not_run_into_each_other() {
        let ab_c = Fingerprint::default().field("ab").field("c");
        let a_bc = Fingerprint::default().field("a").field("bc");
        assert_ne!(ab_c, a_bc);
        assert_eq!(ab_c, Fingerprint::default().field("ab").field("c"));
    }
}
