package io.capsule.driver.component;

import io.capsule.driver.engine.ByteReader;
import io.capsule.driver.engine.ByteReader.Malformed;
import java.util.List;

/** What the component readers share about sections: their names, vector counts. Pure. */
final class Sections {
  private Sections() {}

  private static final List<String> NAMES =
      List.of(
          "custom",
          "core module",
          "core instance",
          "core type",
          "component",
          "instance",
          "alias",
          "type",
          "canon",
          "start",
          "import",
          "export");

  /** {@code e} with the section it was found in, as every reader of the component reports it. */
  static Malformed malformedIn(int id, int offset, Malformed e) {
    String name = id >= 0 && id < NAMES.size() ? NAMES.get(id) : "unknown (id " + id + ")";
    return new Malformed("its " + name + " section at offset " + offset + ": " + e.getMessage());
  }

  /** A vector's length: each element takes at least a byte, so more than the rest is malformed. */
  static int count(ByteReader s) throws Malformed {
    int n = s.u32();
    if (n < 0 || n > s.remaining()) {
      throw new Malformed("a vector of " + Integer.toUnsignedString(n) + " does not fit");
    }
    return n;
  }
}
