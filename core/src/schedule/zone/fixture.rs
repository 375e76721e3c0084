//! TZif files written in memory, for tests here and in the crates that
//! depend on this one (feature `testing`): no binary fixtures are committed.

/// A TZif (version 2) file: `transitions` as (Unix time, type index),
/// `types` as (UTC offset, is DST, abbreviation), and the footer rule.
pub fn tzif(transitions: &[(i64, u8)], types: &[(i32, bool, &str)], footer: &str) -> Vec<u8> {
    let mut chars = Vec::new();
    let mut index = Vec::new();
    for (_, _, abbr) in types {
        index.push(u8::try_from(chars.len()).unwrap());
        chars.extend_from_slice(abbr.as_bytes());
        chars.push(0);
    }
    let block = |wide: bool| {
        let mut out = Vec::new();
        out.extend_from_slice(b"TZif2");
        out.extend_from_slice(&[0; 15]);
        for count in [0, 0, 0, transitions.len(), types.len(), chars.len()] {
            out.extend_from_slice(&u32::try_from(count).unwrap().to_be_bytes());
        }
        for (at, _) in transitions {
            if wide {
                out.extend_from_slice(&at.to_be_bytes());
            } else {
                out.extend_from_slice(&i32::try_from(*at).unwrap().to_be_bytes());
            }
        }
        out.extend(transitions.iter().map(|(_, kind)| *kind));
        for ((utoff, dst, _), idx) in types.iter().zip(&index) {
            out.extend_from_slice(&utoff.to_be_bytes());
            out.push(u8::from(*dst));
            out.push(*idx);
        }
        out.extend_from_slice(&chars);
        out
    };
    let mut out = block(false);
    out.extend(block(true));
    out.extend_from_slice(format!("\n{footer}\n").as_bytes());
    out
}

/// A TZif file that is only its footer rule (how tzdata's "slim" files
/// describe the future).
pub fn rule_only(utoff: i32, abbr: &str, footer: &str) -> Vec<u8> {
    tzif(&[], &[(utoff, false, abbr)], footer)
}
