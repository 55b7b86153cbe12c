package io.capsule.protocol.ws;

/** WebSocket close codes the runner protocol uses, and why. */
public final class CloseCodes {
  /** A regular close (hub or runner shutting down, operator disconnect). */
  public static final int NORMAL = 1000;

  /** No {@code hello} in time after the upgrade ({@code E-PRO-009}). */
  public static final int POLICY_VIOLATION = 1008;

  /** A frame above the frame cap ({@code E-PRO-005}). */
  public static final int TOO_BIG = 1009;

  /** The hub cannot keep its journal ({@code E-PRO-010}) and stops; the runner resumes later. */
  public static final int INTERNAL_ERROR = 1011;

  /** This connection was replaced by a newer one with the same {@code runner_id}. */
  public static final int REPLACED = 4000;

  /**
   * The project's brain moved to another node of the hub cluster ({@code E-HUB-007}): the node that
   * closed is alive and in its cluster, so the runner dials it again and resumes.
   */
  public static final int MOVED = 4012;

  /**
   * The hub node is cut off from its cluster ({@code E-HUB-009}): it cannot apply frames any more;
   * the runner dials its next hub URL and resumes there.
   */
  public static final int CUT_OFF = 4014;

  /** {@code hello.project_id} differs from the token's project ({@code E-PRO-008}). */
  public static final int PROJECT_MISMATCH = 4401;

  private CloseCodes() {}
}
