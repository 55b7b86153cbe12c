package io.capsule.driver.abi;

import java.util.List;

/**
 * A cursor over flat core values being lifted (CanonicalABI.md {@code ValueIter}). Values are raw
 * bits: {@link #next} hands out the bits of the next slot, checked against the core type the lifter
 * wants.
 */
abstract class FlatIn {

  /** The next slot's bits; {@code want} is the core type the lifter reads it as. */
  abstract long next(FlatType want);

  /** Over a plain list of core values: a parameter or result list. */
  static final class Values extends FlatIn {
    private final long[] values;
    private int position;

    Values(long[] values) {
      this.values = values;
    }

    @Override
    long next(FlatType want) {
      if (position >= values.length) {
        throw Violations.of(
            "the function returned %d core values; lifting needs more", values.length);
      }
      return values[position++];
    }

    int consumed() {
      return position;
    }
  }

  /**
   * Over a variant's joined payload slots (CanonicalABI.md {@code CoerceValueIter}). A slot joined
   * to i64 but read as a 32-bit type must have its high 32 bits clear, else the value does not
   * lift. Every other coercion the spec lists is a reinterpretation, which raw bits already are.
   */
  static final class Coerced extends FlatIn {
    private final FlatIn outer;
    private final List<FlatType> slots;
    private int position;

    Coerced(FlatIn outer, List<FlatType> slots) {
      this.outer = outer;
      this.slots = slots;
    }

    @Override
    long next(FlatType want) {
      FlatType have = slots.get(position++);
      long bits = outer.next(have);
      if (have == FlatType.I64 && (want == FlatType.I32 || want == FlatType.F32)) {
        if ((bits >>> 32) != 0) {
          throw Violations.of(
              "a variant payload slot joined to i64 holds 0x%x where a 32-bit value is expected",
              bits);
        }
      }
      return bits;
    }

    /** Consumes the slots the lifted case did not use (they carry no meaning). */
    void skipRest() {
      while (position < slots.size()) {
        outer.next(slots.get(position++));
      }
    }
  }
}
