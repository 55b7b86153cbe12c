package io.capsule.cli;

import io.capsule.config.settings.CapsuleSettings;
import io.capsule.driver.load.DriverLoader;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.tls.ClientTls;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.ConnectionState;
import io.capsule.protocol.ws.RunnerClient;
import io.capsule.runtime.hub.AssignReader;
import io.capsule.runtime.hub.HubLink;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;

/**
 * A runner inside an actor system: the runtime guardian, the protocol client dialling the hub, and
 * the hub link between them. {@code capsule runner} is one of these in its own JVM; tests run
 * several beside a hub.
 */
final class RunnerNode implements AutoCloseable {
  private final RunnerClient client;
  private final DriverLoader loader;

  private RunnerNode(RunnerClient client, DriverLoader loader) {
    this.client = client;
    this.loader = loader;
  }

  static RunnerNode start(
      ActorSystem<?> system,
      CapsuleSettings settings,
      String hubUrl,
      String projectId,
      TokenSource tokens,
      Path capsules,
      int maxRuns,
      Consumer<ConnectionState> onState,
      Consumer<HubLink.TaskNotice> onTask) {
    return start(
        system,
        settings,
        hubUrl,
        projectId,
        tokens,
        capsules,
        maxRuns,
        onState,
        onTask,
        ClientTls.system());
  }

  /** As above, a {@code wss://} hub's certificate verified against {@code tls}. */
  static RunnerNode start(
      ActorSystem<?> system,
      CapsuleSettings settings,
      String hubUrl,
      String projectId,
      TokenSource tokens,
      Path capsules,
      int maxRuns,
      Consumer<ConnectionState> onState,
      Consumer<HubLink.TaskNotice> onTask,
      ClientTls tls) {
    DriverLoader loader = RuntimeWiring.driverLoader(settings);
    EmbeddedRuntime runtime =
        EmbeddedRuntime.create(system, RuntimeWiring.limits(settings), RuntimeWiring.wasm(loader));
    RunnerClient.Settings defaults =
        RunnerClient.Settings.of(
            hubUrl, projectId, version(), tokens, RuntimeWiring.protocol(settings));
    RunnerClient client =
        RunnerClient.start(
            system,
            new RunnerClient.Settings(
                    hubUrl,
                    projectId,
                    defaults.runnerVersion(),
                    capabilities(defaults.capabilities(), capsules, maxRuns),
                    tokens,
                    defaults.config(),
                    null)
                .withOnState(onState)
                .withTls(tls));
    system.systemActorOf(
        HubLink.create(client, runtime.guardian(), new AssignReader(capsules), maxRuns, onTask),
        "hub-link-" + UUID.randomUUID(),
        Props.empty());
    return new RunnerNode(client, loader);
  }

  /**
   * What the hello announces: the client's own capabilities, then {@code capsule:<name>} for every
   * sub-folder of {@code capsules} the assign reader would accept (a capsule name holding a {@code
   * murmur.yaml}), sorted so the hello is stable, then {@code slots:<maxRuns>}. Read once, at
   * start: the hello is the same on every reconnect.
   */
  static List<String> capabilities(List<String> base, Path capsules, int maxRuns) {
    List<String> out = new ArrayList<>(base);
    try (Stream<Path> dirs = Files.list(capsules)) {
      dirs.filter(d -> Files.isRegularFile(d.resolve("murmur.yaml")))
          .map(d -> d.getFileName().toString())
          .filter(Capabilities::isCapsuleName)
          .sorted()
          .map(Capabilities::capsule)
          .forEach(out::add);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the capsules in " + capsules, e);
    }
    out.add(Capabilities.slots(maxRuns));
    return out;
  }

  RunnerClient client() {
    return client;
  }

  /** Closes the connection for good; runs in flight are the actor system's to stop. */
  CompletionStage<Done> stop() {
    return client.close();
  }

  @Override
  public void close() {
    stop().toCompletableFuture().join();
    loader.close();
  }

  /**
   * The release version the runner announces in its hello (and the hub shows in {@code /v1/runners}
   * and on its page): the one {@code capsule --version} prints, from the build's {@code
   * build.properties}; "development" only in an unbuilt tree.
   */
  static String version() {
    return CapsuleMain.Version.buildProperties().getProperty("version", "development");
  }
}
