//! What the endpoint's token and a token file path must be.
//!
//! A token is 16 to 4096 visible ASCII characters (`!` to `~`): long enough
//! not to be guessed, and safe in an `Authorization` header as it is. A token
//! file's path is absolute; its contents are the token, surrounding white
//! space (a trailing newline) dropped.

/// The shortest token accepted.
pub const MIN_LEN: usize = 16;
/// The longest token accepted.
pub const MAX_LEN: usize = 4096;

/// A token as it is, or why it is not one (a fragment that follows "the
/// value given"; never repeats the value).
pub fn check(token: &str) -> Result<String, &'static str> {
    if token.len() < MIN_LEN {
        return Err("is shorter than 16 characters");
    }
    if token.len() > MAX_LEN {
        return Err("is longer than 4096 characters");
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("holds a space, a control or a non-ASCII character");
    }
    Ok(token.to_string())
}

/// The token in a token file's contents.
pub fn from_file_contents(contents: &str) -> Result<String, &'static str> {
    check(contents.trim())
}

/// A token file path as it is, or why it is not one.
pub fn check_file_path(path: &str) -> Result<String, &'static str> {
    if !path.starts_with('/') {
        return Err("is not an absolute path");
    }
    if path.len() > 4096 || path.contains('\0') {
        return Err("is not a usable path");
    }
    Ok(path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_visible_ascii() {
        assert!(check("0123456789abcdef").is_ok());
        assert!(check("0123456789abcde").is_err());
        assert!(check("0123456789 abcdef").is_err());
        assert!(check("0123456789abcdéf").is_err());
        assert!(check(&"x".repeat(4097)).is_err());
        assert_eq!(
            from_file_contents("  0123456789abcdef\n").as_deref(),
            Ok("0123456789abcdef")
        );
    }

    #[test]
    fn token_files_are_absolute() {
        assert!(check_file_path("/etc/hermes/token").is_ok());
        assert!(check_file_path("token").is_err());
        assert!(check_file_path("~/token").is_err());
    }
}
