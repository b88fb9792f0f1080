//! Standard base64 (RFC 4648, section 4: `A-Z a-z 0-9 + /`, padded with `=`), encoding
//! only: how `read_media` carries a file's bytes in JSON.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The character for the six bits of `n` that start `shift` bits up.
fn sextet(n: u32, shift: u32) -> char {
    char::from(ALPHABET[((n >> shift) & 63) as usize])
}

/// `data` in standard base64, padded to a multiple of four characters.
pub fn encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    let mut groups = data.chunks_exact(3);
    for g in &mut groups {
        let n = u32::from(g[0]) << 16 | u32::from(g[1]) << 8 | u32::from(g[2]);
        for shift in [18, 12, 6, 0] {
            out.push(sextet(n, shift));
        }
    }
    match *groups.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            out.push(sextet(n, 18));
            out.push(sextet(n, 12));
            out.push_str("==");
        }
        [a, b] => {
            let n = u32::from(a) << 16 | u32::from(b) << 8;
            out.push(sextet(n, 18));
            out.push(sextet(n, 12));
            out.push(sextet(n, 6));
            out.push('=');
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A decoder written for the test alone, from the alphabet's definition.
    fn decode(text: &str) -> Vec<u8> {
        let value = |c: u8| ALPHABET.iter().position(|&a| a == c).unwrap() as u32;
        let mut out = Vec::new();
        for quad in text.as_bytes().chunks(4) {
            let digits: Vec<u32> = quad
                .iter()
                .filter(|&&c| c != b'=')
                .map(|&c| value(c))
                .collect();
            let n = digits.iter().fold(0, |n, d| n << 6 | d) << (6 * (4 - digits.len()));
            out.extend_from_slice(&n.to_be_bytes()[1..digits.len()]);
        }
        out
    }

    /// The test vectors of RFC 4648, section 10.
    #[test]
    fn the_rfc_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(plain.as_bytes()), coded, "{plain}");
        }
    }

    /// The last two characters of the alphabet, and every byte value, round trip.
    #[test]
    fn every_byte_round_trips() {
        assert_eq!(encode(&[0xFB, 0xFF]), "+/8=");
        assert_eq!(encode(&[0, 0, 0]), "AAAA");
        let all: Vec<u8> = (0..=255).collect();
        for len in 0..all.len() {
            let coded = encode(&all[..len]);
            assert_eq!(coded.len(), len.div_ceil(3) * 4);
            assert_eq!(decode(&coded), &all[..len], "{len}");
        }
    }
}
