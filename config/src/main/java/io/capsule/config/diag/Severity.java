package io.capsule.config.diag;

/** Whether a diagnostic stops what it is about ({@code E-}) or only warns ({@code W-}). */
public enum Severity {
  ERROR,
  WARNING
}
