//! Nested objects read by the fast path member by member, as the line's own object is
//! ([`Reader::object_line`]), not through serde's `MapAccess` and visitors.
//!
//! Why (issue #15): a `Nested` member (`jsonl`'s and `codex`'s `usage`, `codex`'s `item`) went
//! through `read_member`, `Nested`'s seed and visitor, and serde's `next_key_seed`/`next_value`
//! for each of its members: ~3 % of `jsonl`'s CPU per line at batch 16 for one line in six.

use super::{Bail, Reader};
use crate::lenient::{Nested, NestedState, ReadInPlace};

/// A member the fast path reads in place when its value is an object (see
/// [`ReadInPlace::nested`]); only [`Nested`] implements it.
pub trait NestedInPlace<'de> {
    /// Reads the object at `r`'s position (its `{` next) into the member, consumed with its `}`,
    /// as `Nested`'s visitor reads it through the fast path's `Deserializer`: the same depth
    /// check, members and refusals.
    #[doc(hidden)]
    fn read_object(&mut self, r: &mut Reader<'de>) -> Result<(), Bail>;
}

impl<'de, T: ReadInPlace<'de>> NestedInPlace<'de> for Nested<T> {
    fn read_object(&mut self, r: &mut Reader<'de>) -> Result<(), Bail> {
        if r.peek_ws() != Some(b'{') {
            return Err(Bail);
        }
        r.enter()?;
        r.members_into(&mut self.value)?;
        r.end(b'}')?;
        self.state = NestedState::Object;
        Ok(())
    }
}
