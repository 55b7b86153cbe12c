package io.capsule.cli;

/**
 * The exit codes of {@code capsule}, documented in the README. Scripts match on them, so they never
 * change meaning.
 */
public final class ExitCodes {
  /** The task completed ({@code turn-end}), or a command succeeded. */
  public static final int DONE = 0;

  /** The task did not complete: failed, max turns, spend ceiling or canceled (E-RUN-040). */
  public static final int TASK_FAILED = 1;

  /** Bad usage, or the manifest/settings are invalid (E-MAN-*, E-CFG-*). */
  public static final int USAGE = 2;

  /** The capsule's grants were refused (E-CAP-*, E-RUN-038, an unusable driver). */
  public static final int REFUSED_GRANTS = 3;

  /** The harness is not available: binary not found, cannot start, not logged in. */
  public static final int HARNESS_UNAVAILABLE = 4;

  private ExitCodes() {}
}
