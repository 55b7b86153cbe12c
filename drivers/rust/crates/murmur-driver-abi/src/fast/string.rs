//! Strings read and skipped eight bytes at a time (see the module's documentation).

use super::{Bail, Reader};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// A mask whose lowest set bit is the high bit of the word's first byte that is `"`, `\` or
/// below 0x20 (what ends a plain run of a JSON string), zero when there is none: the classic
/// zero-byte and less-than tests, whose lowest flag is exact (a borrow only flags bytes above a
/// true one).
#[inline(always)]
fn special_mask(x: u64) -> u64 {
    let quote = x ^ (ONES * b'"' as u64);
    let backslash = x ^ (ONES * b'\\' as u64);
    ((quote.wrapping_sub(ONES) & !quote) | (backslash.wrapping_sub(ONES) & !backslash) | (x.wrapping_sub(ONES * 0x20) & !x))
        & HIGH
}

/// One unaligned 8-byte load (`i64.load` on wasm32): eight indexings were left as eight byte
/// loads and shifts. `i + 8 <= b.len()`.
#[inline(always)]
fn word_at(b: &[u8], i: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(word)
}

#[inline(always)]
fn is_special(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20
}

fn hex(b: u8) -> Option<u32> {
    match b {
        b'0'..=b'9' => Some((b - b'0') as u32),
        b'a'..=b'f' => Some((b - b'a' + 10) as u32),
        b'A'..=b'F' => Some((b - b'A' + 10) as u32),
        _ => None,
    }
}

impl<'de> Reader<'de> {
    /// The index of the first `"`, `\` or control byte at or after `i`, or the end: eight bytes
    /// a step. The last few bytes are the text's last word shifted down, so no copy is made (a
    /// copy into a padded word was a `memory.copy` call, paid at the end of most lines): the zero
    /// bytes shifted in read as control bytes at or past the end.
    #[inline(always)]
    pub(super) fn scan(&self, mut i: usize) -> usize {
        let b = self.bytes();
        let len = b.len();
        while i + 8 <= len {
            let mask = special_mask(word_at(b, i));
            if mask != 0 {
                return i + (mask.trailing_zeros() / 8) as usize;
            }
            i += 8;
        }
        if i >= len {
            return len;
        }
        if len >= 8 {
            // 1 to 7 bytes are left: the last word, its first `i - (len - 8)` bytes shifted out.
            let mask = special_mask(word_at(b, len - 8) >> (8 * (i + 8 - len)));
            return (i + (mask.trailing_zeros() / 8) as usize).min(len);
        }
        while i < len && !is_special(b[i]) {
            i += 1;
        }
        i
    }

    /// Four hex digits at `pos`, consumed.
    fn hex4(&mut self) -> Result<u32, Bail> {
        let b = self.bytes();
        if self.pos + 4 > b.len() {
            return Err(Bail);
        }
        let mut n = 0;
        for k in 0..4 {
            n = n * 16 + hex(b[self.pos + k]).ok_or(Bail)?;
        }
        self.pos += 4;
        Ok(n)
    }

    /// A string after its opening quote, consumed with its closing one: `Some` borrowed from the
    /// line when it held no escapes, else `None` and the unescaped text in `scratch`. The common
    /// case (no escape) is small enough to inline where a string is read; escapes are read out of
    /// line.
    #[inline(always)]
    pub(super) fn string(&mut self) -> Result<Option<&'de str>, Bail> {
        let b = self.bytes();
        let start = self.pos;
        let i = self.scan(start);
        if i < b.len() && b[i] == b'"' {
            self.pos = i + 1;
            debug_assert!(start > 0 && b[start - 1] == b'"');
            // SAFETY: `start` follows the opening quote and `i` is at the closing one; both are
            // ASCII bytes of the `str`, so both are char boundaries.
            return Ok(Some(unsafe { self.src.get_unchecked(start..i) }));
        }
        self.escaped_string(start, i)
    }

    /// The rest of [`Reader::string`]: the string from `start` holds an escape (or is broken) at `i`.
    #[inline(never)]
    fn escaped_string(&mut self, start: usize, mut i: usize) -> Result<Option<&'de str>, Bail> {
        let b = self.bytes();
        self.scratch.clear();
        let mut run = start;
        loop {
            if i >= b.len() {
                return Err(Bail);
            }
            self.scratch.extend_from_slice(&b[run..i]);
            match b[i] {
                b'"' => {
                    self.pos = i + 1;
                    return Ok(None);
                }
                b'\\' => {
                    if i + 1 >= b.len() {
                        return Err(Bail);
                    }
                    self.pos = i + 2;
                    let unescaped = match b[i + 1] {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => b'\x08',
                        b'f' => b'\x0c',
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            let n = self.hex4()?;
                            // A surrogate (paired or not) is left to serde_json.
                            let c = char::from_u32(n).ok_or(Bail)?;
                            let mut buf = [0u8; 4];
                            self.scratch.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                            run = self.pos;
                            i = self.scan(run);
                            continue;
                        }
                        _ => return Err(Bail),
                    };
                    self.scratch.push(unescaped);
                    run = self.pos;
                    i = self.scan(run);
                }
                _ => return Err(Bail),
            }
        }
    }

    /// Skips a string after its opening quote, checking it as serde_json's `ignore_str` does.
    pub(super) fn skip_string(&mut self) -> Result<(), Bail> {
        let b = self.bytes();
        let mut i = self.scan(self.pos);
        loop {
            if i >= b.len() {
                return Err(Bail);
            }
            match b[i] {
                b'"' => {
                    self.pos = i + 1;
                    return Ok(());
                }
                b'\\' => {
                    if i + 1 >= b.len() {
                        return Err(Bail);
                    }
                    self.pos = i + 2;
                    match b[i + 1] {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        // Any four hex digits, as serde_json skips them.
                        b'u' => {
                            self.hex4()?;
                        }
                        _ => return Err(Bail),
                    }
                    i = self.scan(self.pos);
                }
                _ => return Err(Bail),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Reader;

    fn scan_from(text: &str, at: usize) -> usize {
        Reader { src: text, pos: 0, depth: 0, scratch: Vec::new() }.scan(at)
    }

    fn reference(text: &str, at: usize) -> usize {
        let b = text.as_bytes();
        (at..b.len()).find(|&i| b[i] == b'"' || b[i] == b'\\' || b[i] < 0x20).unwrap_or(b.len())
    }

    #[test]
    fn a_scan_stops_at_the_first_quote_backslash_or_control_byte_wherever_it_is() {
        let specials: Vec<char> = vec!['"', '\\', '\u{0}', '\u{1}', '\n', '\u{1f}'];
        let fillers = ["a", " ", "\u{7f}", "é", "€", "😀", "~!#"];
        for filler in fillers {
            for len in 0..24 {
                let plain = filler.repeat(len);
                for at in 0..=plain.len() {
                    if plain.is_char_boundary(at) {
                        assert_eq!(scan_from(&plain, at), reference(&plain, at), "{:?} from {}", plain, at);
                    }
                }
                for (p, _) in plain.char_indices().chain(std::iter::once((plain.len(), ' '))) {
                    for special in &specials {
                        for second in [None, Some('"'), Some('\u{2}')] {
                            let mut text = plain.clone();
                            text.insert(p, *special);
                            if let Some(c) = second {
                                text.push(c);
                            }
                            for at in 0..=text.len() {
                                if text.is_char_boundary(at) {
                                    assert_eq!(scan_from(&text, at), reference(&text, at), "{:?} from {}", text, at);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
