package io.capsule.cli;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts N {@code capsule hub --cluster} JVMs on 127.0.0.1 at once, as a deployment would (each
 * JVM's start-up overlaps the others'): free HTTP and Artery ports, the same seed list in the same
 * order for all, and the shared store's options. Returns once every node listens (not yet once the
 * cluster has formed: the caller waits for the nodes' "cluster: N nodes up").
 */
final class HubClusterStart {
  private HubClusterStart() {}

  /**
   * Starts the nodes {@code hub-a}, {@code hub-b}, … and adds each one that started to {@code into}
   * (so the caller stops them even when another failed), in order.
   *
   * @param store the {@code --store…} options every node gets
   * @throws AssertionError when a node did not listen within 180 s
   */
  static void together(
      int n,
      Path work,
      List<String> jvm,
      String project,
      Path secret,
      List<String> store,
      List<HubProcess> into)
      throws Exception {
    together(n, work, jvm, project, secret, store, into, k -> List.of());
  }

  /** As above, node {@code k} (from 0) getting the options {@code perNode.apply(k)} too. */
  static void together(
      int n,
      Path work,
      List<String> jvm,
      String project,
      Path secret,
      List<String> store,
      List<HubProcess> into,
      java.util.function.IntFunction<List<String>> perNode)
      throws Exception {
    int[] http = freePorts(n);
    int[] artery = freePorts(n);
    List<String> seedList = new ArrayList<>();
    for (int port : artery) {
      seedList.add("127.0.0.1:" + port);
    }
    String seeds = String.join(",", seedList);
    List<Thread> starting = new ArrayList<>();
    HubProcess[] started = new HubProcess[n];
    Throwable[] failed = new Throwable[n];
    for (int i = 0; i < n; i++) {
      int k = i;
      List<String> args =
          new ArrayList<>(
              List.of(
                  "--listen",
                  "127.0.0.1:" + http[k],
                  "--project",
                  project,
                  "--secret-file",
                  secret.toString(),
                  "--cluster",
                  "--seed",
                  seeds,
                  "--canonical",
                  "127.0.0.1:" + artery[k]));
      args.addAll(store);
      args.addAll(perNode.apply(k));
      Thread t =
          new Thread(
              () -> {
                try {
                  started[k] =
                      HubProcess.start(
                          "hub-" + (char) ('a' + k), work, jvm, args, Duration.ofSeconds(180));
                } catch (Throwable e) {
                  failed[k] = e;
                }
              });
      t.start();
      starting.add(t);
    }
    for (Thread t : starting) {
      t.join();
    }
    for (HubProcess hub : started) {
      if (hub != null) {
        into.add(hub);
      }
    }
    for (Throwable e : failed) {
      if (e != null) {
        throw new AssertionError("a hub node did not start", e);
      }
    }
  }

  private static int[] freePorts(int n) throws Exception {
    int[] ports = new int[n];
    List<ServerSocket> held = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        held.add(s);
        ports[i] = s.getLocalPort();
      }
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
    return ports;
  }
}
