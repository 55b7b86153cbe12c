//! The shared fast path (`murmur_driver_abi::fast`) on this driver's lines, against serde_json: it
//! gives up on none of the transcripts' lines and never accepts a damaged line serde_json refuses.

murmur_driver_abi::fast_path_tests!(crate::parse::Line, "gemini-cli", ["auth401", "happy", "interrupt", "mcp", "rate429"]);
