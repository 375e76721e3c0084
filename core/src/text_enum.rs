//! `text_enum_impls!`: the text form of a fieldless enum, written once:
//! `ALL`, `as_str`, `Display`, and a `FromStr` (trimmed, case-insensitive)
//! whose error ([`UnknownWord`]) names what was being parsed and every
//! accepted word.

/// A word that is not one of an enum's text forms.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} {got:?} is not one of: {}", accepted.join(", "))]
pub struct UnknownWord {
    /// What was being parsed (`state`, `--overlap`).
    pub what: &'static str,
    /// The text that was given, as given.
    pub got: String,
    /// Every word accepted.
    pub accepted: &'static [&'static str],
}

/// `text_enum_impls!(Type, "what", { Variant => "text", ... })`.
#[macro_export]
#[doc(hidden)]
macro_rules! text_enum_impls {
    ($ty:ident, $what:literal, { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];
            /// The stored and printed word.
            pub fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $text),+ }
            }
        }
        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl ::std::str::FromStr for $ty {
            type Err = $crate::text_enum::UnknownWord;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s.trim().to_ascii_lowercase().as_str() {
                    $($text => Ok($ty::$variant),)+
                    _ => Err($crate::text_enum::UnknownWord {
                        what: $what,
                        got: s.to_string(),
                        accepted: &[$($text),+],
                    }),
                }
            }
        }
    };
}

/// `text_enum_serde!(Type)`: serde as the text form of a `text_enum_impls!`
/// enum (a word it does not know is a deserialization error).
#[macro_export]
#[doc(hidden)]
macro_rules! text_enum_serde {
    ($ty:ident) => {
        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <::std::borrow::Cow<'de, str>>::deserialize(d)?;
                text.parse().map_err(::serde::de::Error::custom)
            }
        }
    };
}
