package io.capsule.protocol.frame;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Capability strings this runtime understands. Capabilities are open strings on the wire: a peer
 * ignores the ones it does not know, so new entries never break older peers.
 *
 * <p>What a runner can run (see {@code protocol/README.md}, "What a runner announces"): {@code
 * capsule:<name>} once per capsule it can run, and {@code slots:<n>} for how many runs it runs at
 * once. {@link #announced} reads them back; malformed entries are ignored, not refused, because a
 * hello must stay acceptable to peers of any version.
 */
public final class Capabilities {
  /** The runner wants {@code ack} frames and re-sends only what the hub lacks. */
  public static final String ACK = "ack";

  /** The peer wants {@code error} frames for refused frames instead of silence. */
  public static final String ERROR_FRAMES = "error-frames";

  /** Prefix of a capsule the runner can run: {@code capsule:<name>}. */
  public static final String CAPSULE_PREFIX = "capsule:";

  /** Prefix of the runner's concurrent-run count: {@code slots:<n>}. */
  public static final String SLOTS_PREFIX = "slots:";

  /** Slots of a runner that announces none: one run at a time is always safe to assume. */
  public static final int DEFAULT_SLOTS = 1;

  /**
   * The most slots an announcement may claim. Far above what one machine runs at once (every run is
   * an OS process); a larger figure is a mistake or a lie, and ignoring it keeps one runner from
   * soaking up a whole project's queue.
   */
  public static final int MAX_SLOTS = 4096;

  /**
   * A capsule name as the manifest allows it (the same pattern as the manifest validator's and the
   * runner's assign reader): a folder name, never a path.
   */
  private static final Pattern CAPSULE_NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

  /** Decimal digits only (no sign, no spaces); five is enough for {@link #MAX_SLOTS}. */
  private static final Pattern SLOT_DIGITS = Pattern.compile("[0-9]{1,5}");

  private Capabilities() {}

  /**
   * The entry announcing one capsule.
   *
   * @throws IllegalArgumentException when {@code name} is not a capsule name
   */
  public static String capsule(String name) {
    if (!isCapsuleName(name)) {
      throw new IllegalArgumentException(
          "not a capsule name (1-64 of a-z0-9-, starting with a letter or digit): " + name);
    }
    return CAPSULE_PREFIX + name;
  }

  /**
   * The entry announcing how many runs the runner runs at once.
   *
   * @throws IllegalArgumentException when {@code n} is outside 0..{@link #MAX_SLOTS}
   */
  public static String slots(int n) {
    if (n < 0 || n > MAX_SLOTS) {
      throw new IllegalArgumentException("slots must be 0.." + MAX_SLOTS + ", got " + n);
    }
    return SLOTS_PREFIX + n;
  }

  /** Whether {@code name} is a capsule name a runner may announce. */
  public static boolean isCapsuleName(String name) {
    return name != null && CAPSULE_NAME.matcher(name).matches();
  }

  /**
   * What a hello's capabilities announce. Every well-formed {@code capsule:} entry counts (once);
   * the first well-formed {@code slots:} entry counts and later ones are ignored; malformed entries
   * and unknown capabilities are ignored.
   */
  public static Announced announced(Collection<String> capabilities) {
    Objects.requireNonNull(capabilities, "capabilities");
    Set<String> capsules = new LinkedHashSet<>();
    int slots = -1;
    for (String c : capabilities) {
      if (c == null) {
        continue;
      }
      if (c.startsWith(CAPSULE_PREFIX)) {
        String name = c.substring(CAPSULE_PREFIX.length());
        if (isCapsuleName(name)) {
          capsules.add(name);
        }
      } else if (slots < 0 && c.startsWith(SLOTS_PREFIX)) {
        String digits = c.substring(SLOTS_PREFIX.length());
        if (SLOT_DIGITS.matcher(digits).matches() && Integer.parseInt(digits) <= MAX_SLOTS) {
          slots = Integer.parseInt(digits);
        }
      }
    }
    return new Announced(capsules, slots < 0 ? DEFAULT_SLOTS : slots);
  }

  /**
   * A runner's announcement, read from its hello.
   *
   * @param capsules the capsule names announced, in announcement order; empty when it announced
   *     none, which means it may run any capsule (runners older than the convention)
   * @param slots runs at once; {@link #DEFAULT_SLOTS} when it announced none (or only malformed)
   */
  public record Announced(Set<String> capsules, int slots) {
    public Announced {
      capsules = Collections.unmodifiableSet(new LinkedHashSet<>(capsules));
    }

    /** Whether the runner can run {@code capsule}: it announced it, or announced none at all. */
    public boolean runs(String capsule) {
      return capsules.isEmpty() || capsules.contains(capsule);
    }
  }
}
