//! Enums named on the command line and in files: one macro gives each its
//! names, its parser (an unknown name lists the accepted ones) and its
//! `Display`, so no variant's name is written twice.

use crate::base::error::BaseError;

/// Reads `text` as one of `variants` (named by `name`); `what` names the
/// kind of thing in the error.
pub fn parse_name<T: Copy>(
    text: &str,
    what: &'static str,
    variants: &[T],
    name: impl Fn(T) -> &'static str,
) -> Result<T, BaseError> {
    let text = text.trim();
    variants
        .iter()
        .copied()
        .find(|v| name(*v) == text)
        .ok_or_else(|| {
            let names: Vec<&str> = variants.iter().map(|v| name(*v)).collect();
            let expected = match names.as_slice() {
                [a, b] => format!("{a} or {b}"),
                _ => format!("one of {}", names.join(", ")),
            };
            BaseError::UnknownName {
                what,
                text: text.to_string(),
                expected,
            }
        })
}

/// `named!(Type, "what", { Type::A => "a", Type::B => "b" })` gives `Type` a
/// `VARIANTS` list, `name()`, `FromStr` and `Display`.
macro_rules! named {
    ($ty:ident, $what:literal, { $($variant:path => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every variant, in the order of its names.
            pub const VARIANTS: &'static [$ty] = &[$($variant),+];

            /// The name used on the command line, in files and in output.
            pub fn name(self) -> &'static str {
                match self {
                    $($variant => $name),+
                }
            }
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::base::error::BaseError;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                $crate::base::names::parse_name(text, $what, Self::VARIANTS, Self::name)
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use named;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Colour {
        Red,
        Green,
        Blue,
    }
    named!(Colour, "colour", { Colour::Red => "red", Colour::Green => "green", Colour::Blue => "blue" });

    #[test]
    fn names_parse_back_and_unknown_ones_list_the_accepted() {
        for &c in Colour::VARIANTS {
            assert_eq!(c.name().parse(), Ok(c));
            assert_eq!(c.to_string(), c.name());
        }
        assert_eq!(
            "mauve".parse::<Colour>().unwrap_err().to_string(),
            "unknown colour 'mauve': expected one of red, green, blue"
        );
        assert_eq!(
            parse_name("x", "mode", &[1, 2], |n| if n == 1 { "on" } else { "off" })
                .unwrap_err()
                .to_string(),
            "unknown mode 'x': expected on or off"
        );
    }
}
