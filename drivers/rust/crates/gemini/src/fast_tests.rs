//! The shared fast path (`murmur_driver_abi::fast`) on this driver's lines, against serde_json: it
//! gives up on none of the transcripts' lines and never accepts a damaged line serde_json refuses.

murmur_driver_abi::fast_path_tests!(crate::parse::Line, "gemini-cli", ["auth401", "happy", "interrupt", "mcp", "rate429"]);

#[test]
fn the_members_read_straight_into_fields_are_those_read_member_fills() {
    murmur_driver_abi::testing::assert_fields_are_the_members_read::<crate::parse::Line>(&[
        "type", "role", "model", "delta", "error", "stats", "status", "output", "content", "tool_id", "message", "severity", "tool_name", "session_id", "parameters",
    ]);
}

#[test]
fn the_stats_members_read_straight_into_fields_are_those_read_member_fills() {
    murmur_driver_abi::testing::assert_fields_are_the_members_read::<crate::parse::Stats>(&[
        "input", "input_tokens", "output_tokens", "cached",
    ]);
}
