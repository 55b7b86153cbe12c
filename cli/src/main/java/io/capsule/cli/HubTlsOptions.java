package io.capsule.cli;

import io.capsule.config.diag.Code;
import io.capsule.hub.ClusterTls;
import io.capsule.hub.http.ServerTls;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * TLS for {@code capsule hub} (docs/operations.md, "TLS on every wire"): the edge's certificate
 * (HTTPS and {@code wss://} for runners and API clients) and the cluster's mutual TLS between
 * nodes. Without them the hub speaks plain text, and says so at start when a wire leaves the
 * machine ({@code W-TLS-001}, {@code W-TLS-002}).
 */
final class HubTlsOptions {
  @Option(
      names = "--tls-cert",
      paramLabel = "PEM",
      description =
          "serve HTTPS and wss:// with this certificate (PEM; the hub's first, then its chain);"
              + " re-read when it changes")
  Path tlsCert;

  @Option(
      names = "--tls-key",
      paramLabel = "PEM",
      description = "the private key of --tls-cert (PEM: PKCS#8, or RSA/EC as openssl writes them)")
  Path tlsKey;

  @Option(
      names = "--cluster-tls-cert",
      paramLabel = "PEM",
      description =
          "with --cluster: this node's certificate for mutual TLS between the nodes (signed by"
              + " --cluster-tls-ca, sharing one subject name with every other node's)")
  Path clusterCert;

  @Option(
      names = "--cluster-tls-key",
      paramLabel = "PEM",
      description = "the RSA private key of --cluster-tls-cert (PEM)")
  Path clusterKey;

  @Option(
      names = "--cluster-tls-ca",
      paramLabel = "PEM",
      description = "the CA that signed every node's certificate; nodes without one are refused")
  Path clusterCa;

  /** The edge's TLS, when both files are given (refused when only one is). */
  Optional<ServerTls> edge(CommandLine cli) {
    if ((tlsCert == null) != (tlsKey == null)) {
      throw new CommandLine.ParameterException(cli, "--tls-cert and --tls-key go together");
    }
    return tlsCert == null ? Optional.empty() : Optional.of(ServerTls.fromFiles(tlsCert, tlsKey));
  }

  /** The cluster's mutual TLS, when the three files are given (refused when only some are). */
  Optional<ClusterTls> cluster(CommandLine cli, boolean clusterNode) {
    long given = Stream.of(clusterCert, clusterKey, clusterCa).filter(p -> p != null).count();
    if (given == 0) {
      return Optional.empty();
    }
    if (given != 3) {
      throw new CommandLine.ParameterException(
          cli, "--cluster-tls-cert, --cluster-tls-key and --cluster-tls-ca go together");
    }
    if (!clusterNode) {
      throw new CommandLine.ParameterException(
          cli, "--cluster-tls-cert, -key and -ca are for a cluster node: add --cluster");
    }
    return Optional.of(ClusterTls.checked(clusterCert, clusterKey, clusterCa));
  }

  /**
   * The warnings a plain-text wire that leaves the machine gets at start: the edge on a
   * non-loopback {@code listenHost}, a cluster node's transport on a non-loopback {@code
   * canonical}.
   */
  static List<String> warnings(
      String listenHost, boolean edgeTls, Optional<String> canonicalHost, boolean clusterTls) {
    List<String> out = new ArrayList<>();
    if (!edgeTls && !loopback(listenHost)) {
      out.add(
          Code.W_TLS_001.id()
              + " the hub serves plain HTTP and ws:// on "
              + listenHost
              + ": runners' and API clients' tokens cross the network in clear; start it with"
              + " --tls-cert and --tls-key, or listen on 127.0.0.1 behind a TLS proxy");
    }
    if (canonicalHost.isPresent() && !clusterTls && !loopback(canonicalHost.get())) {
      out.add(
          Code.W_TLS_002.id()
              + " the cluster transport is plain TCP on "
              + canonicalHost.get()
              + ": any host that reaches the port can talk to the cluster; give every node"
              + " --cluster-tls-cert, --cluster-tls-key and --cluster-tls-ca");
    }
    return out;
  }

  /** Whether {@code host} names this machine's loopback only (a name that does not resolve: no). */
  static boolean loopback(String host) {
    String h =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    try {
      InetAddress[] all = InetAddress.getAllByName(h);
      return Stream.of(all).allMatch(InetAddress::isLoopbackAddress);
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
