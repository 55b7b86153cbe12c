package io.capsule.cli;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.path;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.runtime.metrics.RuntimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;

/**
 * {@code capsule runner --metrics HOST:PORT}: the runner's meters ({@link RuntimeMetrics}) in a
 * Prometheus registry of its own, served as {@code GET /metrics} on that address. A separate
 * listener, because a runner otherwise listens on nothing (it dials out to its hub); loopback
 * unless the operator names another address.
 */
final class MetricsEndpoint {
  /** How long the bind may take before the runner refuses to start: a local bind takes ms. */
  private static final Duration BIND_TIMEOUT = Duration.ofSeconds(10);

  private MetricsEndpoint() {}

  /**
   * {@link #serve}, for a command: the URL to print; on a refusal the system is terminated first
   * (nothing else would stop it) and the refusal thrown.
   */
  static String serveOrStop(ActorSystem<?> system, String listen) {
    try {
      InetSocketAddress a = serve(system, listen);
      return "http://" + a.getHostString() + ":" + a.getPort() + "/metrics";
    } catch (RuntimeException e) {
      system.terminate();
      throw e;
    }
  }

  /**
   * Binds {@code listen} ({@code HOST:PORT}, port 0: any free one) and records the node's runs.
   *
   * @throws DiagnosticException {@code E-CFG-001} when {@code listen} is not HOST:PORT or cannot be
   *     bound
   */
  static InetSocketAddress serve(ActorSystem<?> system, String listen) {
    int colon = listen.lastIndexOf(':');
    int port = -1;
    try {
      port = colon < 1 ? -1 : Integer.parseInt(listen.substring(colon + 1));
    } catch (NumberFormatException e) {
      // refused below
    }
    if (port < 0 || port > 65535) {
      throw new DiagnosticException(
          Diagnostic.of(Code.E_CFG_001, "--metrics '" + listen + "' is not HOST:PORT")
              .withHint("e.g. --metrics 127.0.0.1:9464"));
    }
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    RuntimeMetrics.get(system).bind(registry);
    try {
      ServerBinding b =
          Http.get(system)
              .newServerAt(listen.substring(0, colon), port)
              .bind(
                  path(
                      "metrics",
                      () ->
                          get(
                              () ->
                                  complete(
                                      HttpResponse.create()
                                          .withEntity(
                                              HttpEntities.create(
                                                  ContentTypes.parse(
                                                      "text/plain; version=0.0.4; charset=utf-8"),
                                                  registry
                                                      .scrape()
                                                      .getBytes(StandardCharsets.UTF_8)))))))
              .toCompletableFuture()
              .get(BIND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      return b.localAddress();
    } catch (Exception e) {
      throw new DiagnosticException(
          Diagnostic.of(Code.E_CFG_001, "--metrics " + listen + " cannot be bound: " + e)
              .withHint("pick a free port (or 0 for any), or stop what listens there"));
    }
  }
}
