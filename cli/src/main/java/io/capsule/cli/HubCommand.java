package io.capsule.cli;

import com.typesafe.config.Config;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.hub.ClusterTls;
import io.capsule.hub.HubCluster;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.http.ServerTls;
import io.capsule.hub.store.HubJournal;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.token.ProjectTokens;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code capsule hub}: a reference hub for one project; its subcommands {@code hub token} ({@link
 * HubTokenCommand}) and {@code hub migrate} ({@link HubMigrateCommand}) live in their own files.
 */
@Command(
    name = "hub",
    mixinStandardHelpOptions = true,
    description =
        "Run a reference hub: the runner endpoint /v1/runner and a small task API"
            + " (/v1/tasks, /v1/runners) on one address.",
    subcommands = {HubTokenCommand.class, HubMigrateCommand.class})
final class HubCommand implements Callable<Integer> {
  /**
   * How long the hub waits for its store to confirm each write: the store's one write bound, the
   * same as its JDBC journal's circuit breaker (see HubStore.WRITE_TIMEOUT).
   */
  static final Duration STORE_TIMEOUT = io.capsule.hub.store.HubStore.WRITE_TIMEOUT;

  /**
   * The first read of the store at start: a cold JVM, a forming cluster of one and a history that
   * grows with use, so it gets longer than one write (a hub restarted by {@code
   * HubRestartEndToEndTest} in CI exited before it listened; this bound is the likeliest of the
   * exits on that path, and the restart line now says how long the read took).
   */
  static final Duration STORE_START_TIMEOUT = Duration.ofSeconds(60);

  /** Every node of a cluster must use the same actor system name: it is part of the address. */
  static final String SYSTEM_NAME = "capsule-hub";

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--listen",
      defaultValue = "127.0.0.1:0",
      description = "HOST:PORT to listen on (default ${DEFAULT-VALUE}: loopback, a free port)")
  String listen;

  // Not `required`: picocli would then demand them for `hub token` too. Checked in call().
  @Option(names = "--project", description = "the project this hub serves (required)")
  String project;

  @Option(
      names = "--secret-file",
      description = "the shared token secret, at least 32 bytes (required)")
  Path secretFile;

  @CommandLine.Mixin HubStoreOptions storeOptions = new HubStoreOptions();

  @CommandLine.Mixin LogOptions logs = new LogOptions();

  @CommandLine.Mixin HubTlsOptions tls = new HubTlsOptions();

  @Option(
      names = "--cluster",
      description =
          "run as one node of a hub cluster (Pekko Cluster over Artery TCP): runners and API"
              + " clients may use any node; needs --seed, --canonical and a PostgreSQL --store"
              + " shared by every node")
  boolean cluster;

  @Option(
      names = "--seed",
      split = ",",
      paramLabel = "HOST:PORT",
      description =
          "the cluster's seed nodes, as their --canonical addresses; give every node the same"
              + " list in the same order (the first seed forms the cluster)")
  List<String> seeds = new ArrayList<>();

  @Option(
      names = "--canonical",
      paramLabel = "HOST:PORT",
      description =
          "where this node's cluster transport listens, as the other nodes reach it (not the"
              + " --listen address of runners and the API)")
  String canonical;

  @Override
  public Integer call() throws InterruptedException {
    logs.apply(); // steps at INFO, text or JSON
    if (project == null || secretFile == null) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "capsule hub needs --project and --secret-file");
    }
    try {
      ReferenceHub.checkProjectId(project);
    } catch (IllegalArgumentException e) {
      throw new DiagnosticException(
          Diagnostic.of(Code.E_CFG_001, "--project '" + project + "': " + e.getMessage()));
    }
    CapsuleSettings settings = CapsuleSettings.load();
    ProjectTokens tokens =
        new ProjectTokens(Secrets.read(secretFile), settings.protocol().tokenClockSkew());
    int colon = listen.lastIndexOf(':');
    if (colon < 1) {
      throw new DiagnosticException(
          Diagnostic.of(Code.E_CFG_001, "--listen '" + listen + "' is not HOST:PORT")
              .withHint("e.g. --listen 127.0.0.1:8600"));
    }
    String host = listen.substring(0, colon);
    int port = Integer.parseInt(listen.substring(colon + 1));
    PrintWriter out = spec.commandLine().getOut();
    HubStore store = storeOptions.resolve();
    // TLS files are read before anything starts: unusable ones refuse the start (E-TLS-001).
    Optional<ServerTls> edgeTls = tls.edge(spec.commandLine());
    Optional<ClusterTls> clusterTls = tls.cluster(spec.commandLine(), cluster);
    Config clusterConfig = clusterConfig(store, settings);
    if (clusterTls.isPresent()) {
      clusterConfig = clusterTls.get().config().withFallback(clusterConfig);
    }
    store.migrate(); // E-HUB-001 before anything listens: a hub without its store never starts
    ActorSystem<Void> system =
        CliSystem.create(SYSTEM_NAME, settings, store.pekkoConfig().withFallback(clusterConfig));
    HubJournal journal;
    ReferenceHub hub;
    long opening = System.nanoTime();
    try {
      journal = PersistentHubJournal.open(system, STORE_START_TIMEOUT, STORE_TIMEOUT);
    } catch (RuntimeException e) {
      system.terminate();
      throw e;
    }
    // First: a refusal to bind still says where state is; how long the read took, because it grows
    // with the store's history and is bounded by STORE_START_TIMEOUT.
    out.println(restoredLine(store, journal) + " in " + elapsed(opening));
    out.flush();
    try {
      hub =
          ReferenceHub.start(
                  system,
                  RuntimeWiring.protocol(settings),
                  tokens,
                  project,
                  host,
                  port,
                  journal,
                  Optional.empty(),
                  edgeTls)
              .toCompletableFuture()
              .join();
    } catch (RuntimeException e) {
      system.terminate();
      journal.close();
      Throwable cause = unwrap(e);
      for (Throwable t = cause; t != null; t = t.getCause()) {
        if (t instanceof java.net.BindException bind) { // Pekko wraps it in its own exception
          throw new DiagnosticException(
              Diagnostic.of(
                      Code.E_CFG_001,
                      "--listen " + listen + " cannot be bound: " + bind.getMessage())
                  .withHint("pick a free port (or 0 for any), or stop what listens there"));
        }
      }
      throw cause instanceof RuntimeException r ? r : e;
    }
    out.println("hub for project " + project + " listening on " + hub.apiUrl());
    out.println("runners connect to " + hub.runnerUrl());
    edgeTls.ifPresent(
        t -> out.println("TLS: " + t.describe() + " (re-read when the files change)"));
    clusterTls.ifPresent(t -> out.println("cluster transport: mutual TLS, CA " + t.ca()));
    Optional<String> canonicalHost =
        cluster ? Optional.of(HubCluster.Endpoint.parse(canonical).host()) : Optional.empty();
    HubTlsOptions.warnings(host, edgeTls.isPresent(), canonicalHost, clusterTls.isPresent())
        .forEach(out::println);
    if (cluster) {
      out.println(
          "cluster node "
              + canonical
              + " (seeds "
              + String.join(",", seeds)
              + "); a dead node's tasks move after ~"
              + HubCluster.Failover.fromConfig(settings.config()).expected().toSeconds()
              + " s");
      out.flush();
      system.systemActorOf(ClusterLines.create(out), "cluster-lines", Props.empty());
    }
    out.flush();
    CountDownLatch stopped = new CountDownLatch(1);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicBoolean stopping = new AtomicBoolean();
    system
        .getWhenTerminated()
        .whenComplete(
            (d, e) -> {
              if (!stopping.get()) { // not our hook: the cluster downed this node
                stopped.countDown();
              }
            });
    hub.terminated()
        .whenComplete(
            (d, e) -> {
              if (e != null) { // the hub stopped itself: it could not keep its journal
                failure.set(e);
                stopped.countDown();
              }
            });
    Thread hook =
        new Thread(
            () -> {
              stopping.set(true);
              hub.stop().toCompletableFuture().join();
              system.terminate();
              journal.close();
              stopped.countDown();
            },
            "capsule-hub-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    stopped.await();
    if (stopping.get()) { // the hook stops the hub
      return ExitCodes.DONE;
    }
    Runtime.getRuntime().removeShutdownHook(hook);
    stopping.set(true);
    if (leftCluster(system)) { // its actor system went with it; the event stream's end says less
      journal.close();
      throw new DiagnosticException(
          Diagnostic.of(
                  Code.E_HUB_006,
                  "this hub node left the cluster (downed by the split-brain resolver, or it"
                      + " could not join); its runners fail over to the other nodes")
              .withHint(
                  "start it again with the same --seed list; check that the other nodes reach"
                      + " its --canonical address"));
    }
    Throwable e = failure.get(); // set: nothing else ends the wait
    hub.stop().toCompletableFuture().join();
    system.terminate();
    journal.close();
    Throwable cause = unwrap(e);
    if (cause instanceof DiagnosticException d) {
      throw d;
    }
    throw new IllegalStateException("the hub stopped: " + cause, cause);
  }

  /**
   * The Pekko settings of this node: a cluster of one, or with {@code --cluster} one member of N
   * (refused unless the store is one every node can share: PostgreSQL).
   */
  private Config clusterConfig(HubStore store, CapsuleSettings settings) {
    if (!cluster) {
      if (!seeds.isEmpty() || canonical != null) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--seed and --canonical are for a cluster node: add --cluster");
      }
      return HubCluster.singleNode();
    }
    if (seeds.isEmpty() || canonical == null) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "capsule hub --cluster needs --seed HOST:PORT,... and --canonical");
    }
    if (store.kind() != HubStore.Kind.POSTGRES) {
      throw new DiagnosticException(
          Diagnostic.of(
                  Code.E_HUB_005,
                  "--cluster with the store "
                      + store.describe()
                      + ": the other nodes cannot read what this one writes")
              .withHint("give every node the same --store jdbc:postgresql://HOST:PORT/DB"));
    }
    HubCluster.Endpoint self = endpoint("--canonical", canonical);
    List<HubCluster.Endpoint> seedNodes = new ArrayList<>();
    for (String seed : seeds) {
      seedNodes.add(endpoint("--seed", seed));
    }
    return HubCluster.member(
        SYSTEM_NAME, self, seedNodes, HubCluster.Failover.fromConfig(settings.config()));
  }

  private static HubCluster.Endpoint endpoint(String option, String value) {
    try {
      return HubCluster.Endpoint.parse(value);
    } catch (IllegalArgumentException e) {
      throw new DiagnosticException(
          Diagnostic.of(Code.E_CLI_001, option + " " + e.getMessage())
              .withHint("e.g. " + option + " 10.0.0.1:2552"));
    }
  }

  /**
   * Whether this node was removed from its cluster: the split-brain resolver downed it, which ends
   * its actor system (Pekko's run-coordinated-shutdown-when-down).
   */
  private static boolean leftCluster(ActorSystem<?> system) {
    MemberStatus status = Cluster.get(system).selfMember().status();
    return status == MemberStatus.down()
        || status == MemberStatus.removed()
        || system.getWhenTerminated().toCompletableFuture().isDone();
  }

  /** A failed stage's own failure, without the {@code CompletionException} around it. */
  private static Throwable unwrap(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  private static String elapsed(long since) {
    long ms = (System.nanoTime() - since) / 1_000_000;
    return ms < 1000 ? ms + " ms" : String.format(java.util.Locale.ROOT, "%.1f s", ms / 1000.0);
  }

  private static String restoredLine(HubStore store, HubJournal journal) {
    long tasks = journal.restorable().stream().filter(e -> e.frame() instanceof TaskAssign).count();
    String where = "state: " + store.describe();
    return tasks == 0
        ? where + (store.durable() ? " (no tasks yet)" : "")
        : where
            + ": restored "
            + tasks
            + (tasks == 1 ? " task" : " tasks")
            + " from "
            + journal.restorable().size()
            + " entries";
  }
}
