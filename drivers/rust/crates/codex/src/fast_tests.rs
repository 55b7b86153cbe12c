//! The shared fast path (`murmur_driver_abi::fast`) on this driver's lines, against serde_json: it
//! gives up on none of the transcripts' lines and never accepts a damaged line serde_json refuses.

murmur_driver_abi::fast_path_tests!(crate::parse::Line, "codex", ["auth401", "happy", "interrupt", "mcp", "rate429"]);

#[test]
fn the_members_read_straight_into_fields_are_those_read_member_fills() {
    murmur_driver_abi::testing::assert_fields_are_the_members_read::<crate::parse::Line>(&[
        "type", "thread_id", "item", "usage", "error", "message",
    ]);
}

#[test]
fn the_nested_members_read_straight_into_fields_are_those_read_member_fills() {
    use murmur_driver_abi::testing::assert_fields_are_the_members_read;
    assert_fields_are_the_members_read::<crate::parse::Item>(&[
        "id", "type", "text", "server", "tool", "arguments", "result", "error", "status", "command", "exit_code",
        "aggregated_output",
    ]);
    assert_fields_are_the_members_read::<crate::parse::ErrorJson>(&["message"]);
    assert_fields_are_the_members_read::<crate::parse::UsageJson>(&[
        "input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens",
    ]);
}
