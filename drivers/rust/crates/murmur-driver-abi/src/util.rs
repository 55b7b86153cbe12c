//! Small helpers every driver shares.

use crate::types::*;
use serde_json::Value;

/// Longest note a driver emits for a line it could not read; the rest is cut so a huge line
/// cannot flood the trace.
pub const NOTE_MAX_CHARS: usize = 512;

/// Cuts `s` to at most `max` characters (not bytes), never inside a character.
pub fn cut_chars(s: &str, max: usize) -> &str {
    // A character takes at least one byte: no longer than `max` bytes, nothing to cut.
    if s.len() <= max {
        return s;
    }
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Whether `bytes` are UTF-8, as `core::str::from_utf8(bytes).is_ok()` answers: eight bytes a step
/// while they are ASCII (harness lines nearly always are), the standard check from the first word
/// that holds a byte of 0x80 or more (every byte before it is ASCII, so it starts a character).
/// The lifting of a `parse` call's lines checks each line with it (issue #15: the standard check
/// alone was ~1.5–2 % of a short line's CPU, on wasm32 four bytes a step with a byte loop at the
/// end).
pub fn is_utf8(bytes: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(16);
    let mut at = 0;
    // Sixteen bytes a step: two words, one test.
    for chunk in &mut chunks {
        if (le_word(&chunk[..8]) | le_word(&chunk[8..])) & HIGH != 0 {
            return core::str::from_utf8(&bytes[at..]).is_ok();
        }
        at += 16;
    }
    let len = bytes.len();
    if at == len {
        return true;
    }
    // The last 1 to 15 bytes: the text's last two words (their first bytes, already seen, are
    // ASCII, so the first of them starts a character).
    if len >= 16 {
        let last = &bytes[len - 16..];
        if (le_word(&last[..8]) | le_word(&last[8..])) & HIGH == 0 {
            return true;
        }
        return core::str::from_utf8(last).is_ok();
    }
    core::str::from_utf8(bytes).is_ok()
}

/// The first eight bytes of `b` as a little-endian word: one unaligned load on wasm32.
#[inline(always)]
fn le_word(b: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&b[..8]);
    u64::from_le_bytes(word)
}

/// Whether `line` is empty or only whitespace, as `line.trim().is_empty()` answers, answered from
/// its first byte for a line that starts with anything else ASCII (a JSON line starts with `{`).
#[inline]
pub fn is_blank(line: &str) -> bool {
    match line.as_bytes().first() {
        None => true,
        Some(&b) if b.is_ascii() && !(b as char).is_whitespace() => false,
        Some(_) => line.trim().is_empty(),
    }
}

/// A set of at most 32 words (none empty) to look for in a text at once ([`Words::found_in`]),
/// built as a constant: for each byte, the words that start with it.
pub struct Words<const N: usize> {
    words: [&'static str; N],
    starting: [u32; 256],
}

impl<const N: usize> Words<N> {
    pub const fn new(words: [&'static str; N]) -> Words<N> {
        assert!(N <= 32);
        let mut starting = [0u32; 256];
        let mut k = 0;
        while k < N {
            starting[words[k].as_bytes()[0] as usize] |= 1 << k;
            k += 1;
        }
        Words { words, starting }
    }

    /// Which of the words occur in `hay`: bit `k` set when `hay.contains(words[k])`. One pass
    /// over `hay`, each byte looked up in the table of the words that start with it and those
    /// compared byte by byte, in place of a `contains` per word: the drivers classify a failure
    /// message by a dozen or so words, and each `str::contains` set up a two-way searcher
    /// (`gemini`'s classification of a failed result was ~15 % of its `parse` CPU at batch 16).
    pub fn found_in(&self, hay: &str) -> u32 {
        self.found_among(hay, u32::MAX)
    }

    /// [`Words::found_in`] for the words whose bits are set in `among` only.
    pub fn found_among(&self, hay: &str, among: u32) -> u32 {
        self.scan::<false>(hay.as_bytes(), among)
    }

    /// [`Words::found_in`] of `hay.to_ascii_lowercase()`, read in place (the words must be in
    /// lower case): a driver that matched a lowercased copy of a message made a `String` per
    /// failure line for it.
    pub fn found_in_any_case(&self, hay: &str) -> u32 {
        self.scan::<true>(hay.as_bytes(), u32::MAX)
    }

    /// [`Words::found_in_any_case`] for the words whose bits are set in `among` only.
    pub fn found_among_any_case(&self, hay: &str, among: u32) -> u32 {
        self.scan::<true>(hay.as_bytes(), among)
    }

    /// The one pass of [`Words::found_among`]; with `FOLD` each byte of `hay` is read lowercased.
    fn scan<const FOLD: bool>(&self, hay: &[u8], among: u32) -> u32 {
        let mut found = 0;
        for i in 0..hay.len() {
            let mut candidates = self.starting[fold::<FOLD>(hay[i]) as usize] & among & !found;
            while candidates != 0 {
                let k = candidates.trailing_zeros();
                candidates &= candidates - 1;
                if has_at::<FOLD>(hay, i, self.words[k as usize].as_bytes()) {
                    found |= 1 << k;
                }
            }
        }
        found
    }
}

/// `b` lowercased (ASCII) when `FOLD`, else `b`.
#[inline(always)]
fn fold<const FOLD: bool>(b: u8) -> u8 {
    if FOLD {
        b.to_ascii_lowercase()
    } else {
        b
    }
}

/// Whether `word` is in `hay` at `i` (each byte of `hay` lowercased when `FOLD`), compared byte
/// by byte (a slice `==` calls `memcmp`, a call per candidate on wasm32; most candidates differ at
/// their second byte).
#[inline(always)]
fn has_at<const FOLD: bool>(hay: &[u8], i: usize, word: &[u8]) -> bool {
    if hay.len() - i < word.len() {
        return false;
    }
    let mut j = 1;
    while j < word.len() {
        if fold::<FOLD>(hay[i + j]) != word[j] {
            return false;
        }
        j += 1;
    }
    true
}

/// A `note` for a line the driver does not understand, cut at [`NOTE_MAX_CHARS`].
pub fn note_unreadable(prefix: &str, line: &str) -> Event {
    // Characters are at most bytes: a prefix and line within the limit in bytes need no count.
    let kept = if prefix.len() + line.len() <= NOTE_MAX_CHARS {
        line
    } else {
        cut_chars(line, NOTE_MAX_CHARS.saturating_sub(prefix.chars().count()))
    };
    // Not `format!`: its machinery cost more than the copies on a line that is only being noted.
    let mut note = String::with_capacity(prefix.len() + kept.len());
    note.push_str(prefix);
    note.push_str(kept);
    Event::Note(note)
}

/// The first non-empty trimmed line of `s`, without terminal control sequences, cut to `max`
/// characters; what a person is shown.
pub fn first_line(s: &str, max: usize) -> String {
    let plain = strip_controls(s);
    let line = plain.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    cut_chars(line, max).to_owned()
}

/// The last non-empty trimmed line of `s`, without terminal control sequences, cut to `max`
/// characters (for stderr tails, which CLIs colour).
pub fn last_line(s: &str, max: usize) -> String {
    let plain = strip_controls(s);
    let line = plain.lines().map(str::trim).filter(|l| !l.is_empty()).last().unwrap_or("");
    cut_chars(line, max).to_owned()
}

/// `s` without terminal control sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL` or `ESC \`,
/// other two-byte `ESC x`) and without C0/C1 control characters other than tab and newline: a
/// message copied from a harness's stderr is shown in JSON, traces and terminals, where colour
/// codes are noise and cursor movements would garble the person's screen.
pub fn strip_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates up to a final byte in @..~.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ST (ESC \).
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' {
                            if chars.peek() == Some(&'\\') {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\t' | '\n' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// `v` as compact JSON text, exactly as `v.to_string()` writes it, without going through
/// `core::fmt` for every token (that machinery was most of the cost of a tool call's input).
pub fn json_text(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| v.to_string())
}

pub fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

pub fn u64_field(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// Parses `inference.driver.config` as a JSON object; `None` config is an empty object.
pub fn config_object(config: &Option<String>) -> Result<serde_json::Map<String, Value>, String> {
    match config {
        None => Ok(serde_json::Map::new()),
        Some(text) if text.trim().is_empty() => Ok(serde_json::Map::new()),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(Value::Null) => Ok(serde_json::Map::new()),
            Ok(_) => Err("inference.driver.config must be a JSON object".to_owned()),
            Err(e) => Err(format!("inference.driver.config is not valid JSON: {}", e)),
        },
    }
}

/// Refuses config keys the driver does not know, so a typo is reported instead of ignored.
pub fn check_known_keys(config: &serde_json::Map<String, Value>, known: &[&str]) -> Result<(), String> {
    for key in config.keys() {
        if !known.contains(&key.as_str()) {
            return Err(format!(
                "unknown inference.driver.config key `{}` (known: {})",
                key,
                known.join(", ")
            ));
        }
    }
    Ok(())
}

/// An `env` config member: an object of string values, applied after the driver's own env.
pub fn config_env(config: &serde_json::Map<String, Value>) -> Result<Vec<(String, String)>, String> {
    match config.get("env") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) if valid_env_name(k) => Ok((k.clone(), s.clone())),
                Value::String(_) => Err(format!("config env name `{}` is not a valid variable name", k)),
                _ => Err(format!("config env `{}` must be a string", k)),
            })
            .collect(),
        Some(_) => Err("config `env` must be an object of strings".to_owned()),
    }
}

fn valid_env_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('=') && !name.contains('\0')
}

/// A config member that must be a list of strings (`extra_args`).
pub fn config_string_list(config: &serde_json::Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned).ok_or_else(|| format!("config `{}` must hold strings", key)))
            .collect(),
        Some(_) => Err(format!("config `{}` must be a list of strings", key)),
    }
}

pub fn config_bool(config: &serde_json::Map<String, Value>, key: &str, default: bool) -> Result<bool, String> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("config `{}` must be true or false", key)),
    }
}

pub fn config_string(config: &serde_json::Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("config `{}` must be a string", key)),
    }
}

pub fn config_u64(config: &serde_json::Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| format!("config `{}` must be a non-negative integer", key)),
    }
}

/// Exit classification shared by drivers whose harness has no richer rule: an interrupted run is
/// canceled whatever the code says; a signal is `other`; any other end without a terminal event
/// is a harness error naming the code and the last stderr line.
pub fn classify_exit_default(harness: &str, exit: &ExitStatus) -> Event {
    if exit.interrupted {
        return Event::failed(FailureKind::Canceled, "the turn was interrupted");
    }
    let detail = last_line(&exit.stderr_tail, 300);
    let how = match (exit.code, exit.signal) {
        (_, Some(signal)) => {
            return Event::failed(
                FailureKind::Other,
                with_detail(format!("{} was ended by signal {}", harness, signal), &detail),
            )
        }
        (Some(code), None) => format!("{} exited with code {} without reporting a result", harness, code),
        (None, None) => format!("{} ended without reporting a result", harness),
    };
    Event::failed(FailureKind::HarnessError, with_detail(how, &detail))
}

pub fn with_detail(message: String, detail: &str) -> String {
    if detail.is_empty() {
        message
    } else {
        format!("{}: {}", message, detail)
    }
}

/// Strips the naming a driver gave a bridge tool (`prefix` + bare name) when the rest is one of
/// the bridge's tools; any other name is returned unchanged.
pub fn strip_tool_prefix(name: &str, prefixes: &[String], tools: &[String]) -> String {
    for prefix in prefixes {
        if let Some(rest) = name.strip_prefix(prefix.as_str()) {
            if tools.is_empty() || tools.iter().any(|t| t == rest) {
                return rest.to_owned();
            }
        }
    }
    name.to_owned()
}
