package io.capsule.hub.web;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.getFromResource;
import static org.apache.pekko.http.javadsl.server.Directives.onSuccess;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.pathSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.respondWithHeaders;

import io.capsule.hub.metrics.HubMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * What the hub serves besides its APIs: {@code /healthz}, {@code /readyz}, {@code /metrics} and the
 * web page ({@code /} and its files under {@code /ui/}). None of these needs a token: health says
 * only yes or no, the metrics carry no task ids, prompts or tokens, and the page itself holds no
 * data (it asks the task API, with the token the person signs in with).
 */
public final class HubWeb {
  /** Where the page's files are in the jar. */
  static final String RESOURCES = "io/capsule/hub/web/";

  /** The page's files: a closed list, so no request path ever reaches the class path. */
  static final Set<String> FILES = Set.of("app.js", "app.css");

  /**
   * Prometheus's text exposition format 0.0.4, what every Prometheus server scrapes without
   * negotiation.
   */
  private static final ContentType PROMETHEUS_TEXT =
      ContentTypes.parse("text/plain; version=0.0.4; charset=utf-8");

  private static final java.nio.charset.Charset UTF8 = java.nio.charset.StandardCharsets.UTF_8;

  /**
   * The page runs only its own script and talks only to this origin: an injected script could read
   * the token in session storage, so none may run, and no other site may frame the page.
   */
  private static final List<HttpHeader> PAGE_HEADERS =
      List.of(
          RawHeader.create(
              "Content-Security-Policy",
              "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
                  + " connect-src 'self'; frame-ancestors 'none'; base-uri 'none';"
                  + " form-action 'none'"),
          RawHeader.create("X-Content-Type-Options", "nosniff"),
          RawHeader.create("Referrer-Policy", "no-referrer"),
          RawHeader.create("Cache-Control", "no-cache"));

  private final Readiness readiness;
  private final Optional<PrometheusMeterRegistry> scrape;
  private final HubMetrics metrics;

  private HubWeb(
      Readiness readiness, Optional<PrometheusMeterRegistry> scrape, HubMetrics metrics) {
    this.readiness = readiness;
    this.scrape = scrape;
    this.metrics = metrics;
  }

  /**
   * The routes over a Prometheus registry of the hub's own (served at {@code /metrics}).
   *
   * @param metrics what to register the hub's meters with, given the registry
   */
  public static HubWeb withPrometheus(
      Readiness readiness,
      java.util.function.Function<PrometheusMeterRegistry, HubMetrics> metrics) {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    return new HubWeb(readiness, Optional.of(registry), metrics.apply(registry));
  }

  /**
   * The routes over an embedder's meters: they live in its registry (which it exposes as it likes),
   * so {@code /metrics} answers 404 here.
   */
  public static HubWeb withMetrics(Readiness readiness, HubMetrics metrics) {
    return new HubWeb(readiness, Optional.empty(), metrics);
  }

  public HubMetrics metrics() {
    return metrics;
  }

  /**
   * The routes. Each matches its path first and only then the method, so a request for some other
   * path is left to the hub's other routes with no rejection from these (a POST elsewhere must not
   * turn into 405 because {@code /healthz} takes only GET).
   */
  public Route route() {
    return concat(
        path("healthz", () -> get(() -> complete(text("ok\n")))),
        path("readyz", () -> get(this::ready)),
        path("metrics", () -> get(this::scrape)),
        pathSingleSlash(() -> get(() -> page("index.html"))),
        pathPrefix(
            "ui",
            () ->
                path(
                    PathMatchers.segment(),
                    file -> get(() -> FILES.contains(file) ? page(file) : reject()))));
  }

  private Route ready() {
    return onSuccess(
        readiness.check().exceptionally(e -> false),
        ok ->
            complete(
                ok
                    ? text("ready\n")
                    : text("not ready\n").withStatus(StatusCodes.SERVICE_UNAVAILABLE)));
  }

  private Route scrape() {
    return scrape
        .map(
            r ->
                complete(
                    HttpResponse.create()
                        .withEntity(
                            HttpEntities.create(PROMETHEUS_TEXT, r.scrape().getBytes(UTF8)))))
        .orElseGet(() -> complete(StatusCodes.NOT_FOUND));
  }

  private static Route page(String file) {
    return respondWithHeaders(PAGE_HEADERS, () -> getFromResource(RESOURCES + file));
  }

  private static Route reject() {
    return complete(StatusCodes.NOT_FOUND);
  }

  private static HttpResponse text(String body) {
    return HttpResponse.create()
        .withEntity(HttpEntities.create(ContentTypes.TEXT_PLAIN_UTF8, body))
        .addHeader(RawHeader.create("Cache-Control", "no-store"));
  }
}
