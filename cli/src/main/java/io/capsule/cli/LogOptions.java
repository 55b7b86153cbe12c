package io.capsule.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import java.net.URL;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Option;

/**
 * {@code --log-format text|json} for the long-running commands ({@code capsule hub}, {@code capsule
 * runner}), which also log their steps at INFO. Applied by reloading the jar's {@code logback.xml}
 * with two context properties, so {@code -Dcapsule.log.*} still wins (a system property is looked
 * up after the context's own, and the xml names different keys).
 */
final class LogOptions {
  enum Format {
    text,
    json
  }

  @Option(
      names = "--log-format",
      defaultValue = "text",
      description =
          "text (one line per event) or json (one JSON object per line); default ${DEFAULT-VALUE}")
  Format format = Format.text;

  /** Logs this command's steps at INFO in the chosen format, on stderr. */
  void apply() {
    configure(System.getProperty("capsule.log.format", format.name()), "INFO");
  }

  /**
   * Reloads the logging config with {@code format} ({@code text} or {@code json}) and {@code steps}
   * as the project's default level.
   */
  static void configure(String format, String steps) {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) {
      return; // an embedder's own SLF4J binding: its configuration is its own
    }
    URL xml = LogOptions.class.getResource("/logback.xml");
    if (xml == null) {
      return;
    }
    ctx.reset();
    ctx.putProperty("capsule.log.format", format);
    ctx.putProperty("capsule.steps", steps);
    JoranConfigurator c = new JoranConfigurator();
    c.setContext(ctx);
    try {
      c.doConfigure(xml);
    } catch (JoranException e) {
      throw new IllegalStateException("the jar's logback.xml does not load: " + e.getMessage(), e);
    }
  }
}
