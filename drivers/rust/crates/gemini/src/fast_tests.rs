//! The shared fast path (`murmur_driver_abi::fast`) on this driver's lines, against serde_json: it
//! gives up on none of the transcripts' lines and never accepts a damaged line serde_json refuses.

use crate::parse::Line;
use murmur_driver_abi::fast;
use murmur_driver_abi::lenient::object_line_into;
use murmur_driver_abi::testing::*;

const TRANSCRIPTS: [&str; 5] = ["auth401", "happy", "interrupt", "mcp", "rate429"];

fn all_lines() -> Vec<String> {
    TRANSCRIPTS.iter().flat_map(|t| read_transcript("gemini-cli", t)).collect()
}

fn line_reads(text: &str) -> (bool, bool) {
    let fast = fast::read_line(text, &mut Line::default(), &mut Vec::new()).is_ok();
    (fast, object_line_into(text, &mut Line::default()))
}

#[test]
fn the_fast_path_reads_every_transcript_line_without_giving_up() {
    assert_fast_path_reads_every_line(&all_lines(), &line_reads);
}

#[test]
fn the_fast_path_never_accepts_a_damaged_transcript_line() {
    assert_fast_path_refuses_damaged_lines(&one_line_of_each_kind(&all_lines()), &line_reads);
}
