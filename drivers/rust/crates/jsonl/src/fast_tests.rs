//! The shared fast path (`murmur_driver_abi::fast`) on this driver's lines, against serde_json: it
//! gives up on none of the transcripts' lines and never accepts a damaged line serde_json refuses.

murmur_driver_abi::fast_path_tests!(crate::parse::Line, "jsonl", ["error", "happy", "tools"]);

#[test]
fn the_members_read_straight_into_fields_are_those_read_member_fills() {
    murmur_driver_abi::testing::assert_fields_are_the_members_read::<crate::parse::Line>(&[
        "id", "type", "auth", "text", "name", "kind", "model", "input", "usage", "output", "reason", "attempt", "message", "is_error",
    ]);
}

#[test]
fn the_usage_members_read_straight_into_fields_are_those_read_member_fills() {
    murmur_driver_abi::testing::assert_fields_are_the_members_read::<crate::parse::UsageSplit>(&[
        "fresh_input", "cache_read", "cache_write", "output", "thinking",
    ]);
}
