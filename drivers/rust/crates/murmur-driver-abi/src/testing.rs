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
