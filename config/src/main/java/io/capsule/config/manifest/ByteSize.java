package io.capsule.config.manifest;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A byte size as a manifest writes it: a whole number of bytes ({@code 1048576}) or a whole number
 * with a unit ({@code 512MiB}, {@code 2 GiB}, {@code 500MB}). Binary units (KiB, MiB, GiB, TiB) are
 * powers of 1024, decimal ones (kB, MB, GB, TB) powers of 1000. A bare {@code K}, {@code M} or
 * {@code G} is refused: Kubernetes reads {@code G} as 1000³ and Docker as 1024³, so the manifest
 * makes the author say which (docs/manifest.md "capabilities.resources").
 */
public final class ByteSize {

  private static final Pattern SHAPE = Pattern.compile("\\s*(\\d{1,19})\\s*([A-Za-z]*)\\s*");

  private static final Map<String, Long> UNITS =
      Map.of(
          "B", 1L,
          "KiB", 1L << 10,
          "MiB", 1L << 20,
          "GiB", 1L << 30,
          "TiB", 1L << 40,
          "kB", 1_000L,
          "KB", 1_000L,
          "MB", 1_000_000L,
          "GB", 1_000_000_000L,
          "TB", 1_000_000_000_000L);

  private ByteSize() {}

  /**
   * The number of bytes {@code text} names.
   *
   * @throws IllegalArgumentException with a one-line reason when it is not a size
   */
  public static long parse(String text) {
    Matcher m = SHAPE.matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a size: write a whole number with a unit, like 512MiB or 2GiB");
    }
    String unit = m.group(2);
    Long scale = unit.isEmpty() ? Long.valueOf(1L) : UNITS.get(unit);
    if (scale == null) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "' has an unknown unit '"
              + unit
              + "': use B, KiB, MiB, GiB, TiB (powers of 1024) or kB, MB, GB, TB (powers of 1000)");
    }
    try {
      return Math.multiplyExact(Long.parseLong(m.group(1)), scale);
    } catch (ArithmeticException | NumberFormatException tooBig) {
      throw new IllegalArgumentException("'" + text + "' is larger than 8 EiB");
    }
  }

  /** A size as a person reads it: the largest binary unit that divides it, else bytes. */
  public static String show(long bytes) {
    String[] units = {"TiB", "GiB", "MiB", "KiB"};
    for (String unit : units) {
      long scale = UNITS.get(unit);
      if (bytes != 0 && bytes % scale == 0) {
        return (bytes / scale) + unit;
      }
    }
    return bytes + "B";
  }
}
