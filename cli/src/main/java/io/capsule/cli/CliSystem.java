package io.capsule.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.capsule.config.settings.CapsuleSettings;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/** The actor system of one CLI command, configured from the (possibly overridden) settings. */
final class CliSystem {
  private CliSystem() {}

  static ActorSystem<Void> create(String name, CapsuleSettings settings) {
    return create(name, settings, ConfigFactory.empty());
  }

  /** With {@code overlay} in front of the settings (the hub's store and cluster settings). */
  static ActorSystem<Void> create(String name, CapsuleSettings settings, Config overlay) {
    Config config =
        ConfigFactory.parseString(
                // The CLI handles SIGINT itself (CtrlC): the system must outlive the JVM hook.
                "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off\n"
                    + "pekko.jvm-shutdown-hooks = off\n")
            .withFallback(overlay)
            .withFallback(settings.config());
    return ActorSystem.create(Behaviors.empty(), name, config);
  }
}
