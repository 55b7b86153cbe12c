package io.capsule.cli.hub;

import static org.apache.pekko.http.javadsl.server.Directives.concat;

import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.ws.HubEvent;
import io.capsule.protocol.ws.HubServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * {@code capsule hub}: the protocol's hub endpoint ({@code /v1/runner}) and the task API ({@link
 * HubApi}) on one listening address, with the hub's events recorded in a {@link TaskBook}.
 */
public final class ReferenceHub {
  private final HubServer hub;
  private final ServerBinding binding;

  private ReferenceHub(HubServer hub, ServerBinding binding) {
    this.hub = hub;
    this.binding = binding;
  }

  /** Binds on {@code host:port} (port 0: a free one) for {@code projectId}. */
  public static CompletionStage<ReferenceHub> start(
      ActorSystem<?> system,
      ProtocolConfig config,
      ProjectTokens tokens,
      String projectId,
      String host,
      int port) {
    HubServer hub = HubServer.create(system, config, tokens);
    TaskBook book = new TaskBook();
    hub.events().runWith(Sink.foreach(e -> record(book, e)), system);
    HubApi api = new HubApi(system, hub, book, tokens, projectId);
    return Http.get(system)
        .newServerAt(host, port)
        .bind(concat(hub.route(), api.route()))
        .thenApply(b -> new ReferenceHub(hub, b));
  }

  private static void record(TaskBook book, HubEvent e) {
    if (e instanceof HubEvent.Progress p) {
      book.progress(p.progress());
    } else if (e instanceof HubEvent.Report r) {
      book.report(r.report());
    }
  }

  public InetSocketAddress address() {
    return binding.localAddress();
  }

  /** {@code http://host:port} of the API. */
  public String apiUrl() {
    return "http://" + address().getHostString() + ":" + address().getPort();
  }

  /** {@code ws://host:port/v1/runner} for runners. */
  public String runnerUrl() {
    return "ws://" + address().getHostString() + ":" + address().getPort() + "/v1/runner";
  }

  public HubServer hub() {
    return hub;
  }

  public CompletionStage<Done> stop() {
    return binding.terminate(Duration.ofSeconds(3)).thenCompose(t -> hub.close());
  }
}
