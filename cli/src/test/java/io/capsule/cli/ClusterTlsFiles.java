package io.capsule.cli;

import io.capsule.hub.http.TestPki;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The TLS files of an N-node hub cluster on 127.0.0.1, made by the test with the JDK ({@link
 * TestPki}) as docs/operations.md tells an operator to make them with openssl: an edge CA and one
 * edge certificate for 127.0.0.1 (served by every node: they share the address), a cluster CA and
 * one certificate per node from it, every node's naming {@code capsule-hub-cluster} (the subject
 * name Pekko's provider wants the nodes to share).
 */
final class ClusterTlsFiles {
  private final Path edgeCa;
  private final List<List<String>> hubArgs;

  private ClusterTlsFiles(Path edgeCa, List<List<String>> hubArgs) {
    this.edgeCa = edgeCa;
    this.hubArgs = hubArgs;
  }

  static ClusterTlsFiles create(Path work, int nodes) throws Exception {
    TestPki edgeIssuer = TestPki.ca("capsule-test-edge-ca", "EC");
    Path edgeCaFile = edgeIssuer.writeCa(work.resolve("edge-ca.pem"));
    TestPki.Issued edge = edgeIssuer.issue("capsule-hub", List.of("127.0.0.1", "localhost"));
    Path edgeCert = edge.writeCert(work.resolve("edge.pem"), edgeIssuer.cert());
    Path edgeKey = edge.writeKey(work.resolve("edge.key"));
    TestPki clusterIssuer = TestPki.ca("capsule-test-cluster-ca", "RSA");
    Path clusterCa = clusterIssuer.writeCa(work.resolve("cluster-ca.pem"));
    List<List<String>> args = new ArrayList<>();
    for (int k = 0; k < nodes; k++) {
      TestPki.Issued node =
          clusterIssuer.issue("capsule-hub-cluster", List.of("capsule-hub-cluster", "127.0.0.1"));
      args.add(
          List.of(
              "--tls-cert",
              edgeCert.toString(),
              "--tls-key",
              edgeKey.toString(),
              "--cluster-tls-cert",
              node.writeCert(work.resolve("node-" + k + ".pem")).toString(),
              "--cluster-tls-key",
              node.writeKey(work.resolve("node-" + k + ".key")).toString(),
              "--cluster-tls-ca",
              clusterCa.toString()));
    }
    return new ClusterTlsFiles(edgeCaFile, List.copyOf(args));
  }

  /** The CA of the edge's certificate, for clients ({@code --ca-file}). */
  Path edgeCa() {
    return edgeCa;
  }

  /** The TLS options of node {@code k}. */
  List<String> hubArgs(int k) {
    return hubArgs.get(k);
  }

  /** The options a runner needs to trust the edge. */
  List<String> runnerArgs() {
    return List.of("--ca-file", edgeCa.toString());
  }
}
