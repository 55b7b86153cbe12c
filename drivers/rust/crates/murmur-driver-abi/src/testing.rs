//! Native test support shared by the driver crates: running a transcript through a driver under
//! batch splits, and comparing the events with the checked-in golden files.
//!
//! Golden files live in the Maven module's test resources, so the Java golden tests read the very
//! same files: `drivers/src/test/resources/golden/<driver>/<transcript>.events.json`, with the
//! transcripts copied under `drivers/src/test/resources/transcripts/<harness>/`. Every golden run
//! first calls `launch` with [`golden_launch_request`] (also checked in, as
//! `golden/launch-request.json`), because `parse` may rely on what `launch` was given.

use crate::json::events_to_pretty_lines;
use crate::types::*;
use crate::Driver;
use std::path::PathBuf;

/// The batch sizes every transcript is split into: one line at a time, pairs, an odd size that
/// cuts messages at arbitrary places, and the runtime's largest batch.
pub const BATCH_SPLITS: [usize; 4] = [1, 2, 7, 256];

/// The `drivers` Maven module's `src/test/resources` folder.
pub fn test_resources() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../src/test/resources")
}

pub fn golden_launch_request() -> LaunchRequest {
    LaunchRequest {
        model: None,
        system_prompt: "You are a golden test.".to_owned(),
        config: None,
        bridge: Some(Bridge {
            server_name: "murmur".to_owned(),
            url: "http://127.0.0.1:8767/mcp".to_owned(),
            bearer_token: "golden-token".to_owned(),
            tool_names: vec!["echo".to_owned()],
        }),
        session: Session { id: "00000000-0000-4000-8000-000000000000".to_owned(), mode: SessionMode::New },
        harness_version: None,
        task: "Say hello.".to_owned(),
    }
}

pub fn read_transcript(harness: &str, name: &str) -> Vec<String> {
    let path = test_resources().join("transcripts").join(harness).join(format!("{}.jsonl", name));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    // The runtime's framing: split on `\n`, drop one trailing `\r`, drop bytes after the last `\n`.
    let mut lines: Vec<String> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned()).collect();
    lines.pop();
    lines
}

/// Runs `lines` through a fresh driver (after the golden launch) in batches of `batch` lines.
pub fn run<D: Driver>(lines: &[String], batch: usize) -> Vec<Event> {
    let mut driver = D::default();
    driver.launch(&golden_launch_request()).expect("the golden launch request is accepted");
    let mut events = Vec::new();
    for chunk in lines.chunks(batch) {
        events.extend(driver.parse(chunk));
    }
    events
}

/// Asserts the transcript invariants under every split and returns the events of the first.
pub fn check_transcript<D: Driver>(harness: &str, name: &str, terminal_events: usize) -> Vec<Event> {
    let lines = read_transcript(harness, name);
    let reference = run::<D>(&lines, BATCH_SPLITS[0]);
    for &batch in &BATCH_SPLITS[1..] {
        assert_eq!(run::<D>(&lines, batch), reference, "{}/{}: batch {} differs from batch 1", harness, name, batch);
    }
    let terminals: Vec<usize> =
        reference.iter().enumerate().filter(|(_, e)| e.is_terminal()).map(|(i, _)| i).collect();
    assert_eq!(terminals.len(), terminal_events, "{}/{}: terminal events {:?}", harness, name, reference);
    // A harness interrupted by a signal may print no terminal line at all (the runtime's
    // classify-exit ends such a turn); then there is nothing to check after it.
    let after_last = terminals.last().map(|i| i + 1).unwrap_or(reference.len());
    for after in &reference[after_last..] {
        assert!(
            matches!(after, Event::Quota(_) | Event::SuggestedPrompt(_)),
            "{}/{}: only quota or suggested-prompt may follow the terminal event, got {:?}",
            harness,
            name,
            after
        );
    }
    for event in &reference {
        assert!(!matches!(event, Event::Note(_)), "{}/{}: a line the driver understands became {:?}", harness, name, event);
    }
    reference
}

/// Compares `events` with the golden file, or rewrites it when `UPDATE_GOLDEN=1`.
pub fn assert_golden(driver: &str, transcript: &str, events: &[Event]) {
    let path = test_resources().join("golden").join(driver).join(format!("{}.events.json", transcript));
    let actual = events_to_pretty_lines(events);
    if std::env::var("UPDATE_GOLDEN").map(|v| v == "1").unwrap_or(false) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {} (run with UPDATE_GOLDEN=1 to create it, then review it)", path.display(), e));
    assert_eq!(actual, expected, "{} differs from the driver's events", path.display());
}

/// Feeds every transcript of `harness` to one driver cut short at many places, and mangled, and
/// requires that nothing panics: on wasm a panic is a trap, which fails the whole run.
pub fn assert_survives_damaged_lines<D: Driver>(harness: &str, names: &[&str]) {
    let mut driver = D::default();
    driver.launch(&golden_launch_request()).expect("the golden launch request is accepted");
    for name in names {
        for line in read_transcript(harness, name) {
            let cuts: Vec<usize> = line.char_indices().map(|(i, _)| i).filter(|i| i % 13 == 0).collect();
            for cut in cuts {
                driver.parse(&[line[..cut].to_owned()]);
            }
            let mangled = [
                line.replace("\"type\"", "\"kind\""),
                line.replace(':', ":null,\"x\":"),
                line.replace("\"", "'"),
                line.replace("true", "\"true\"").replace("false", "1"),
                line.replace("[", "{\"a\":[").replace("]", "]}"),
            ];
            driver.parse(&mangled);
        }
    }
    driver.classify_exit(&ExitStatus {
        code: None,
        signal: None,
        stderr_tail: "\u{0}\n\u{fffd}".to_owned(),
        interrupted: false,
        saw_terminal: true,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn the_checked_in_launch_request_is_the_one_the_native_tests_use() {
        let path = test_resources().join("golden/launch-request.json");
        let json: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let r = golden_launch_request();
        let b = r.bridge.as_ref().unwrap();
        assert_eq!(json["model"], Value::Null);
        assert_eq!(json["config"], Value::Null);
        assert_eq!(json["harness-version"], Value::Null);
        assert_eq!(json["system-prompt"], r.system_prompt.as_str());
        assert_eq!(json["task"], r.task.as_str());
        assert_eq!(json["session"]["id"], r.session.id.as_str());
        assert_eq!(json["session"]["mode"], "new");
        assert_eq!(json["bridge"]["server-name"], b.server_name.as_str());
        assert_eq!(json["bridge"]["url"], b.url.as_str());
        assert_eq!(json["bridge"]["bearer-token"], b.bearer_token.as_str());
        assert_eq!(json["bridge"]["tool-names"], serde_json::json!(b.tool_names));
    }

    #[test]
    fn the_golden_index_names_an_existing_transcript_and_golden_file_for_every_entry() {
        let index: Value =
            serde_json::from_str(&std::fs::read_to_string(test_resources().join("golden/index.json")).unwrap()).unwrap();
        let entries = index.as_array().unwrap();
        assert!(entries.len() >= 14);
        for e in entries {
            let (driver, dir, name) =
                (e["driver"].as_str().unwrap(), e["transcripts"].as_str().unwrap(), e["name"].as_str().unwrap());
            assert!(!read_transcript(dir, name).is_empty(), "{}/{}", dir, name);
            assert!(test_resources().join(format!("golden/{}/{}.events.json", driver, name)).is_file());
        }
    }
}

/// What a driver's line type made of `text`: (the fast path read it, serde_json read it), each
/// into a fresh line (`fast::read_line`, `lenient::object_line_into`).
pub type LineReads = dyn Fn(&str) -> (bool, bool);

/// The fast path (`fast`) against serde_json on `text`: where the fast path reads a value,
/// serde_json reads the same one; where serde_json refuses, so does the fast path; the same for
/// `text` read as the driver's line (`line_reads`).
pub fn assert_fast_path_agrees(text: &str, line_reads: &LineReads) {
    let ours = crate::fast::read_value::<serde_json::Value>(text);
    let theirs = serde_json::from_str::<serde_json::Value>(text);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{:?}", text),
        (Ok(a), Err(e)) => panic!("the fast path read {:?} as {:?}, serde_json refused it ({})", text, a, e),
        (Err(_), _) => {}
    }
    let (fast, serde) = line_reads(text);
    assert!(serde || !fast, "the fast path read {:?} as a line, serde_json refused it", text);
}

/// Asserts that the fast path reads every line of `lines` that serde_json reads as the driver's
/// line, without giving up, and agrees with serde_json on each.
pub fn assert_fast_path_reads_every_line(lines: &[String], line_reads: &LineReads) {
    let mut read = 0;
    for line in lines {
        let (fast, serde) = line_reads(line);
        assert!(fast || !serde, "the fast path gave up on {}", line);
        read += fast as usize;
        assert_fast_path_agrees(line, line_reads);
    }
    assert!(read > 0, "no line was read");
}

/// The first line of each kind (`type`, `subtype`, `event.type`, `item.type`) that is a JSON
/// object: the damaged-line tests try every position of each, and every line would take minutes
/// unoptimised.
pub fn one_line_of_each_kind(lines: &[String]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    lines
        .iter()
        .filter(|line| match serde_json::from_str::<serde_json::Value>(line) {
            Ok(v) if v.is_object() => {
                seen.insert(format!("{}/{}/{}/{}", v["type"], v["subtype"], v["event"]["type"], v["item"]["type"]))
            }
            _ => false,
        })
        .cloned()
        .collect()
}

/// Asserts that the fast path never reads what serde_json refuses on damaged copies of `lines`
/// (see [`assert_fast_path_agrees`]): every prefix, the line without each of its characters, and
/// a byte that changes JSON's structure inserted at every position.
pub fn assert_fast_path_refuses_damaged_lines(lines: &[String], line_reads: &LineReads) {
    for line in lines {
        for (at, _) in line.char_indices() {
            assert_fast_path_agrees(&line[..at], line_reads);
            let mut damaged = line.clone();
            damaged.remove(at);
            assert_fast_path_agrees(&damaged, line_reads);
            for inserted in [",", "\"", "\\", "0", "-", ".", "}", "]", ":", "\u{1}"] {
                let mut damaged = line.clone();
                damaged.insert_str(at, inserted);
                assert_fast_path_agrees(&damaged, line_reads);
            }
        }
    }
}

/// Asserts that the members a line type has the fast path read straight into a `Field`
/// (`ReadInPlace::field`) are the ones its `read_member` fills: each of `names` (the members the
/// type reads), with a value of every JSON type, read by the fast path and by serde_json (which
/// goes through `read_member`) leaves the same value behind every index's `field`. A `field` that
/// named another member than `read_member` reads for that index fails it.
pub fn assert_fields_are_the_members_read<T: crate::lenient::ReadInPlace<'static> + Default>(names: &[&str]) {
    let values = ["\"v\"", "\"e\\n\"", "7", "-3", "true", "false", "null", "{\"a\":1}", "[1]"];
    let mut set = 0;
    for name in names {
        for value in values {
            let line: &'static str = Box::leak(format!("{{\"{}\":{}}}", name, value).into_boxed_str());
            let mut fast = T::default();
            assert!(crate::fast::read_line(line, &mut fast, &mut Vec::new()).is_ok(), "the fast path gave up on {}", line);
            let mut serde = T::default();
            assert!(crate::lenient::object_line_into(line, &mut serde), "serde_json refused {}", line);
            for index in 0..64 {
                let ours = fast.field(index).cloned();
                assert_eq!(ours, serde.field(index).cloned(), "member {} after {}", index, line);
                set += ours.map_or(false, |f| f.is_set()) as usize;
            }
        }
    }
    assert!(set > 0, "no member was read as a field");
}

/// The fast path's two tests on a driver's own line type, for a crate's `fast_tests.rs`: it gives
/// up on none of the harness's transcript lines, and never accepts a damaged copy of a line that
/// serde_json refuses. `fast_path_tests!(Line, "codex", ["happy", ...])`.
#[macro_export]
macro_rules! fast_path_tests {
    ($line:ty, $harness:literal, [$($transcript:literal),+ $(,)?]) => {
        fn all_lines() -> Vec<String> {
            [$($transcript),+].iter().flat_map(|t| $crate::testing::read_transcript($harness, t)).collect()
        }

        fn line_reads(text: &str) -> (bool, bool) {
            let fast = $crate::fast::read_line(text, &mut <$line>::default(), &mut Vec::new()).is_ok();
            (fast, $crate::lenient::object_line_into(text, &mut <$line>::default()))
        }

        #[test]
        fn the_fast_path_reads_every_transcript_line_without_giving_up() {
            $crate::testing::assert_fast_path_reads_every_line(&all_lines(), &line_reads);
        }

        #[test]
        fn the_fast_path_never_accepts_a_damaged_transcript_line() {
            let lines = $crate::testing::one_line_of_each_kind(&all_lines());
            $crate::testing::assert_fast_path_refuses_damaged_lines(&lines, &line_reads);
        }
    };
}
