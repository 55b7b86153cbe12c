package io.capsule.bench.contain;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What containment costs per outgoing connection (docs/containment.md), beside the direct baseline
 * in the same run: one HTTP GET with {@code Connection: close} on a new connection to a loopback
 * server, directly ({@code path=direct}) or the way a contained harness sends it ({@code proxied}:
 * to a socat forwarder on loopback, over the Unix socket to the run's egress proxy, the allowlist
 * check, the upstream connect). Each operation checks the answer and throws on a wrong one. Needs
 * {@code /usr/bin/socat}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 4)
@Fork(1)
public class ContainEgressBench {

  @Param({"direct", "proxied"})
  public String path;

  private EgressRig rig;
  private byte[] request;

  @Setup(Level.Trial)
  public void setUp() throws IOException, InterruptedException {
    rig = EgressRig.start();
    int port = rig.originPort();
    String target = path.equals("direct") ? "/" : "http://127.0.0.1:" + port + "/";
    request =
        ("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    rig.close();
  }

  @Benchmark
  public int request() throws IOException {
    int port = path.equals("direct") ? rig.originPort() : rig.forwarderPort();
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      s.getOutputStream().write(request);
      InputStream in = s.getInputStream();
      String answer = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
      if (!answer.startsWith("HTTP/1.1 200") || !answer.endsWith("ok")) {
        throw new IllegalStateException("unexpected answer: " + answer);
      }
      return answer.length();
    }
  }
}
