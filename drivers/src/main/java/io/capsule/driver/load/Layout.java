package io.capsule.driver.load;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.component.DriverBinary;
import io.capsule.driver.wasm.DriverException;
import java.util.Optional;

/**
 * The host calls a driver through the component-model naming convention ({@code
 * murmur:driver/process@0.6.0#<function>}, {@code cabi_post_<export>}, {@code memory}, {@code
 * cabi_realloc}); a component whose lifts name other core exports is refused {@code E-RUN-032}.
 */
final class Layout {
  private Layout() {}

  static void check(DriverBinary binary) {
    for (DriverBinary.Lift lift : binary.liftsInOrder()) {
      Optional<String> post = lift.postReturn();
      if (post.isPresent() && !post.get().equals("cabi_post_" + lift.coreExport())) {
        throw refuse("its post-return for " + lift.function() + " is '" + post.get() + "'");
      }
    }
    if (!binary.memoryExport().equals("memory")) {
      throw refuse("its lifts use the memory export '" + binary.memoryExport() + "'");
    }
    if (binary.reallocExport().isPresent()
        && !binary.reallocExport().get().equals("cabi_realloc")) {
      throw refuse("its lifts use the allocator '" + binary.reallocExport().get() + "'");
    }
  }

  private static DriverException refuse(String what) {
    return new DriverException(
        Diagnostic.of(
            Code.E_RUN_032,
            "the driver does not follow the component-model naming convention: " + what));
  }
}
