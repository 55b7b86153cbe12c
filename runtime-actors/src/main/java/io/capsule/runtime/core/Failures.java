package io.capsule.runtime.core;

import java.util.concurrent.CompletionException;

/** What went wrong in a future's stage, without the wrapper the stage put around it. */
public final class Failures {

  private Failures() {}

  /** The cause of a {@link CompletionException}; any other throwable (or null) as it is. */
  public static Throwable unwrap(Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }
}
