package io.capsule.bench.hub;

import com.typesafe.config.ConfigFactory;
import io.capsule.hub.http.GuardedBinding;
import io.capsule.hub.http.ServerTls;
import io.capsule.protocol.tls.ClientTls;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.ConnectionContext;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.model.ws.TextMessage;
import org.apache.pekko.http.javadsl.model.ws.WebSocketRequest;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

/**
 * WebSocket frames per second into the hub's edge ({@link GuardedBinding}, as {@code capsule hub}
 * binds) over one connection, plain ({@code ws://}) and over TLS ({@code wss://}, {@link
 * ServerTls}), in one run: rounds alternate the two, each a fresh connection sending {@code frames}
 * text frames of 612 bytes (a {@code task.progress} frame's size) as fast as the socket takes them,
 * timed until the server has read the last one. Prints frames/s per round, the medians, the ratio
 * TLS ÷ plain, and the load average before and after. Client and server share the JVM, so the ratio
 * counts TLS's cost at both ends.
 *
 * <p>The certificate is made by the JDK's {@code keytool} (self-signed for 127.0.0.1, trusted by
 * the client as its own CA). Usage: {@code java -cp benchmarks/target/benchmarks.jar
 * io.capsule.bench.hub.EdgeTlsBench [frames=20000] [rounds=8]}. It also gives the JVM's CPU per
 * frame for each, and that ratio: on a busy machine wall-clock rates swing with the neighbours.
 */
public final class EdgeTlsBench {
  private static final String PAYLOAD = "x".repeat(612);

  /**
   * Rounds of each kind before measuring: with 3, the measured rates still rose round by round (a
   * JVM still compiling, at load ~20 on 2 cores); 8 leave them flat.
   */
  private static final int WARM_UP = 8;

  /** The JVM's CPU time, both ends' work: robust where wall time suffers from a busy machine. */
  private static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean)
          java.lang.management.ManagementFactory.getOperatingSystemMXBean();

  /** The round being served: the server completes it when it has read every frame. */
  private record Round(long frames, CompletableFuture<Long> done) {}

  /** The JVM's CPU µs per frame of the last {@link #send} (read on the main thread only). */
  private static double lastCpuPerFrameMicros;

  private EdgeTlsBench() {}

  public static void main(String[] args) throws Exception {
    long frames = args.length > 0 ? Long.parseLong(args[0]) : 20_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    Path dir = Files.createTempDirectory("edge-tls-bench");
    ActorSystem<Void> system =
        ActorSystem.create(Behaviors.empty(), "edge-tls-bench", ConfigFactory.load());
    try {
      Path cert = dir.resolve("edge.pem");
      Path key = dir.resolve("edge.key");
      selfSigned(dir, cert, key);
      AtomicReference<Round> round = new AtomicReference<>();
      Route route = Directives.handleWebSocketMessages(counting(round, system));
      GuardedBinding.Limits limits = GuardedBinding.Limits.fromConfig(system.settings().config());
      GuardedBinding plain =
          GuardedBinding.bind(system, "127.0.0.1", 0, route, limits, Optional.empty())
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      GuardedBinding tls =
          GuardedBinding.bind(
                  system,
                  "127.0.0.1",
                  0,
                  route,
                  limits,
                  Optional.of(ServerTls.fromFiles(cert, key)))
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      ClientTls trust = ClientTls.trusting(Optional.of(cert));
      String load0 = load();
      // Warm-up: a round each, not counted (the JIT, the TLS provider's first handshake).
      send(system, round, "ws://127.0.0.1:" + plain.localAddress().getPort() + "/", frames, null);
      send(system, round, "wss://127.0.0.1:" + tls.localAddress().getPort() + "/", frames, trust);
      List<Double> plainRates = new ArrayList<>();
      List<Double> tlsRates = new ArrayList<>();
      List<Double> ratios = new ArrayList<>();
      List<Double> cpuRatios = new ArrayList<>();
      for (int i = 1; i <= rounds; i++) {
        double p =
            send(
                system,
                round,
                "ws://127.0.0.1:" + plain.localAddress().getPort() + "/",
                frames,
                null);
        double plainCpu = lastCpuPerFrameMicros;
        double t =
            send(
                system,
                round,
                "wss://127.0.0.1:" + tls.localAddress().getPort() + "/",
                frames,
                trust);
        double tlsCpu = lastCpuPerFrameMicros;
        plainRates.add(p);
        tlsRates.add(t);
        ratios.add(t / p);
        cpuRatios.add(tlsCpu / plainCpu);
        System.out.printf(
            Locale.ROOT,
            "round %d: plain %.0f frames/s (%.1f µs CPU/frame), TLS %.0f frames/s (%.1f µs),"
                + " TLS ÷ plain %.2f in frames/s, %.2f in CPU per frame%n",
            i,
            p,
            plainCpu,
            t,
            tlsCpu,
            t / p,
            tlsCpu / plainCpu);
      }
      System.out.printf(
          Locale.ROOT,
          "%d frames of %d B per round, %d rounds: median plain %.0f frames/s, TLS %.0f frames/s;"
              + " median ratio TLS ÷ plain %.2f (min %.2f, max %.2f); CPU per frame TLS ÷ plain"
              + " %.2f (median); load average %s → %s%n",
          frames,
          PAYLOAD.length(),
          rounds,
          median(plainRates),
          median(tlsRates),
          median(ratios),
          Collections.min(ratios),
          Collections.max(ratios),
          median(cpuRatios),
          load0,
          load());
      plain.terminate().toCompletableFuture().get(10, TimeUnit.SECONDS);
      tls.terminate().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      try (var files = Files.list(dir)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(dir);
    }
  }

  /** The server side: counts the frames it reads and completes the round at the last one. */
  private static Flow<Message, Message, NotUsed> counting(
      AtomicReference<Round> round, ActorSystem<?> system) {
    Materializer mat = Materializer.matFromSystem(system);
    return Flow.fromSinkAndSource(
        Flow.<Message>create()
            .mapAsync(
                1,
                m ->
                    m.asTextMessage().isStrict()
                        ? CompletableFuture.completedFuture(1L)
                        : m.asTextMessage()
                            .getStreamedText()
                            .runWith(Sink.ignore(), mat)
                            .thenApply(d -> 1L))
            .to(
                Sink.fold(
                    0L,
                    (n, one) -> {
                      long seen = n + one;
                      Round r = round.get();
                      if (seen == r.frames()) {
                        r.done().complete(System.nanoTime());
                      }
                      return seen;
                    })),
        Source.maybe());
  }

  /**
   * One round: a fresh connection, {@code frames} frames; frames per second until all were read.
   */
  private static double send(
      ActorSystem<?> system, AtomicReference<Round> round, String url, long frames, ClientTls trust)
      throws Exception {
    Round r = new Round(frames, new CompletableFuture<>());
    round.set(r);
    long cpu0 = OS.getProcessCpuTime();
    long start = System.nanoTime();
    Http.get(system)
        .singleWebSocketRequest(
            WebSocketRequest.create(url),
            Flow.fromSinkAndSourceCoupled(
                Sink.<Message>ignore(),
                Source.range(1, (int) frames)
                    .<Message>map(i -> TextMessage.create(PAYLOAD))
                    .concat(Source.maybe())),
            trust == null ? ConnectionContext.noEncryption() : trust.httpsContext(),
            Materializer.matFromSystem(system));
    long end = r.done().get(5, TimeUnit.MINUTES);
    lastCpuPerFrameMicros = (OS.getProcessCpuTime() - cpu0) / 1e3 / frames;
    return frames / ((end - start) / 1e9);
  }

  private static double median(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    Collections.sort(s);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  private static String load() throws IOException {
    return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
  }

  /**
   * A self-signed certificate for 127.0.0.1 from the JDK's {@code keytool}, written as the PEM pair
   * the hub reads (keytool keeps keys in keystores only: the key is taken from it here).
   */
  private static void selfSigned(Path dir, Path cert, Path key) throws Exception {
    Path store = dir.resolve("edge.p12");
    char[] pass = "bench-only".toCharArray();
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-keystore",
                store.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                new String(pass),
                "-alias",
                "edge",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=127.0.0.1",
                "-ext",
                "san=ip:127.0.0.1",
                "-validity",
                "2")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IOException("keytool failed: " + out);
    }
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (var in = Files.newInputStream(store)) {
      ks.load(in, pass);
    }
    Key k = ks.getKey("edge", pass);
    Files.writeString(key, pem("PRIVATE KEY", k.getEncoded()));
    Files.writeString(cert, pem("CERTIFICATE", ks.getCertificate("edge").getEncoded()));
    Files.delete(store);
  }

  private static String pem(String label, byte[] der) {
    return "-----BEGIN "
        + label
        + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END "
        + label
        + "-----\n";
  }
}
