package io.capsule.driver.wasi;

/**
 * A WASI host function ended the guest's call: a dropped or foreign handle, {@code exit}, a wait
 * that could never end. The engine turns it into a trap whose message is this one, so the run
 * reports {@code E-RUN-034} (or {@code E-RUN-032} during load) with the reason.
 */
public final class WasiTrap extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public WasiTrap(String message) {
    super(message, null, false, false);
  }
}
