//! `text_enum_impls!`: the text form of a fieldless enum, written once:
//! `ALL`, `as_str`, `Display`, and a `FromStr` (trimmed, case-insensitive)
//! whose error names what was being parsed and every accepted word.

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
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s.trim().to_ascii_lowercase().as_str() {
                    $($text => Ok($ty::$variant),)+
                    _ => Err(format!(
                        "{} {:?} is not one of: {}",
                        $what,
                        s,
                        [$($text),+].join(", ")
                    )),
                }
            }
        }
    };
}
