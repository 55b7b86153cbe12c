//! The fast path's check that a value's text is what serde_json writes for it
//! (`crate::json_text`): the value is skipped as it is checked, and any doubt answers "no" (the
//! caller then reads the value into a `Value` from where it started).

use super::Reader;
use crate::json_text::MAX_CHECKED_MEMBERS;
use crate::lenient::name_is;

impl<'de> Reader<'de> {
    /// The value at `pos` (after any whitespace) as text serde_json would write back unchanged,
    /// consumed; `None` when it is not (then `pos` and `depth` are as they were).
    pub(super) fn canonical_text(&mut self) -> Option<&'de str> {
        self.peek_ws();
        let (start, depth) = (self.pos, self.depth);
        if self.canonical_value() {
            return Some(&self.src[start..self.pos]);
        }
        self.pos = start;
        self.depth = depth;
        None
    }

    fn canonical_value(&mut self) -> bool {
        let b = self.bytes();
        let c = match b.get(self.pos) {
            Some(&c) => c,
            None => return false,
        };
        match c {
            b'"' => {
                self.pos += 1;
                self.canonical_string()
            }
            // At most 18 digits, no fraction or exponent, not `-0`: written back digit for digit.
            b'-' | b'0'..=b'9' => self.integer().is_ok(),
            b'n' => self.literal(b"null").is_ok(),
            b't' => self.literal(b"true").is_ok(),
            b'f' => self.literal(b"false").is_ok(),
            b'[' => {
                if self.enter().is_err() {
                    return false;
                }
                if b.get(self.pos) == Some(&b']') {
                    return self.close();
                }
                loop {
                    if !self.canonical_value() {
                        return false;
                    }
                    match b.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b']') => return self.close(),
                        _ => return false,
                    }
                }
            }
            b'{' => {
                if self.enter().is_err() {
                    return false;
                }
                if b.get(self.pos) == Some(&b'}') {
                    return self.close();
                }
                let mut names: [&str; MAX_CHECKED_MEMBERS] = [""; MAX_CHECKED_MEMBERS];
                let mut count = 0;
                loop {
                    if b.get(self.pos) != Some(&b'"') {
                        return false;
                    }
                    self.pos += 1;
                    let start = self.pos;
                    if !self.canonical_string() {
                        return false;
                    }
                    // Canonical escapes spell each string one way only, so equal texts are equal
                    // names.
                    let name = &self.src[start..self.pos - 1];
                    if count == MAX_CHECKED_MEMBERS || names[..count].iter().any(|n| name_is(n, name)) {
                        return false;
                    }
                    names[count] = name;
                    count += 1;
                    if b.get(self.pos) != Some(&b':') {
                        return false;
                    }
                    self.pos += 1;
                    if !self.canonical_value() {
                        return false;
                    }
                    match b.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => return self.close(),
                        _ => return false,
                    }
                }
            }
            _ => false,
        }
    }

    /// The closing byte of the array or object just read, at `pos`.
    fn close(&mut self) -> bool {
        self.pos += 1;
        self.depth -= 1;
        true
    }

    /// A string after its opening quote, consumed with its closing one, when its escapes are
    /// those serde_json writes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`).
    fn canonical_string(&mut self) -> bool {
        let b = self.bytes();
        let mut i = self.scan(self.pos);
        loop {
            match b.get(i) {
                Some(b'"') => {
                    self.pos = i + 1;
                    return true;
                }
                Some(b'\\') => match b.get(i + 1) {
                    Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i = self.scan(i + 2),
                    _ => return false,
                },
                _ => return false,
            }
        }
    }
}
