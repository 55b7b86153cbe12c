package io.capsule.runtime.harness.contain;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The command line that runs a harness under bubblewrap (pure; table-tested). Outside: {@code
 * setsid} (the group the runtime signals and kills), then {@code env --ignore-signal=INT}, so that
 * a SIGINT to the group does not kill bwrap itself (its death would kill the sandbox before the
 * harness could end its turn). Inside: a shell starts the egress forwarder on the sandbox's
 * loopback, waits until it listens, and execs {@code env --default-signal=INT} and the harness
 * exactly as the driver planned it.
 *
 * <p>The sandbox: its own network (only {@code lo}), PID, IPC and UTS namespaces; {@code
 * --die-with-parent}; the root read-only; {@code /dev}, {@code /proc} fresh; {@code /tmp} and
 * {@code $HOME} empty tmpfs; then, shallowest first so a deeper bind is not hidden by a shallower
 * one, the harness's installation read-only (when under {@code $HOME} or {@code /tmp}), each
 * granted path with its access, the working and files directories (read-only with {@code
 * read_only}), the proxy's socket, and the capsule's folder read-only (when under {@code $HOME} or
 * {@code /tmp}, or under a writable bind; elsewhere the read-only root shows it as it is).
 */
public final class SandboxCommand {

  /** The loopback port inside the sandbox where the forwarder listens (the netns is private). */
  public static final int PROXY_PORT = 3128;

  /** Where the proxy's Unix socket appears inside (on the private /tmp). */
  public static final String SOCKET_INSIDE = "/tmp/.capsule-egress.sock";

  static final Path SH = Path.of("/bin/sh");
  static final Path ENV = Path.of("/usr/bin/env");

  /** How long (in 10 ms steps) the inside waits for the forwarder before giving up: 5 s. */
  static final int FORWARDER_WAIT_STEPS = 500;

  /** Exit status of the inside when the forwarder never listened. */
  public static final int FORWARDER_FAILED = 125;

  private SandboxCommand() {}

  /** One mount of the sandbox, in bwrap's terms. */
  record Mount(String op, Path source, Path target) {
    int depth() {
      return target.getNameCount();
    }

    /** A tmpfs is laid before the binds at the same depth (a bind on it must not be covered). */
    int order() {
      return op.equals("--tmpfs") ? 0 : 1;
    }
  }

  /** What the sandbox is built from. */
  public record Inputs(
      Path setsid,
      Path bwrap,
      Path socat,
      HarnessGrants grants,
      Path workdir,
      Path filesDir,
      List<Path> installation,
      Path proxySocket,
      List<String> harnessCommand) {
    public Inputs {
      installation = List.copyOf(installation);
      harnessCommand = List.copyOf(harnessCommand);
    }
  }

  /** The whole argv, from {@code setsid} to the harness's last argument. */
  public static List<String> argv(Inputs in) {
    List<String> cmd = new ArrayList<>();
    cmd.add(in.setsid().toString());
    cmd.add(ENV.toString());
    cmd.add("--ignore-signal=INT");
    cmd.add(in.bwrap().toString());
    cmd.addAll(
        List.of(
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc"));
    for (Mount m : mounts(in)) {
      cmd.add(m.op());
      if (m.source() != null) {
        cmd.add(m.source().toString());
      }
      cmd.add(m.target().toString());
    }
    cmd.add("--chdir");
    cmd.add(in.workdir().toString());
    cmd.add("--");
    cmd.add(SH.toString());
    cmd.add("-c");
    cmd.add(insideScript(in.socat(), in.grants().loopbackPorts()));
    cmd.add("capsule-sandbox");
    cmd.add(ENV.toString());
    cmd.add("--default-signal=INT");
    cmd.addAll(in.harnessCommand());
    return cmd;
  }

  /** The mounts after the read-only root, shallowest first. */
  static List<Mount> mounts(Inputs in) {
    List<Mount> mounts = new ArrayList<>();
    Path tmp = Path.of("/tmp");
    mounts.add(new Mount("--tmpfs", null, tmp));
    Path home = in.grants().home();
    boolean hideHome = home.isAbsolute() && home.getNameCount() > 0;
    if (hideHome) {
      mounts.add(new Mount("--tmpfs", null, home));
    }
    for (Path dir : in.installation()) {
      if (dir.startsWith(tmp) || (hideHome && dir.startsWith(home))) {
        mounts.add(new Mount("--ro-bind-try", dir, dir));
      }
    }
    for (HarnessGrants.PathGrant g : in.grants().paths()) {
      mounts.add(new Mount(g.writable() ? "--bind-try" : "--ro-bind-try", g.path(), g.path()));
    }
    String dirs = in.grants().readOnly() ? "--ro-bind" : "--bind";
    mounts.add(new Mount(dirs, in.workdir(), in.workdir()));
    mounts.add(new Mount(dirs, in.filesDir(), in.filesDir()));
    mounts.add(new Mount("--bind", in.proxySocket(), Path.of(SOCKET_INSIDE)));
    // Bound where the sandbox would hide it, or where a writable bind would make it writable;
    // last, so that at its own depth it covers a grant or working directory naming the same
    // folder: the capsule folder itself is never writable (deeper grants keep their access).
    List<Mount> writable =
        mounts.stream()
            .filter(m -> m.op().equals("--bind") || m.op().equals("--bind-try"))
            .toList();
    in.grants()
        .capsuleDir()
        .filter(
            dir ->
                hiddenBelow(dir, tmp)
                    || (hideHome && hiddenBelow(dir, home))
                    || writable.stream().anyMatch(m -> dir.startsWith(m.target())))
        .ifPresent(dir -> mounts.add(new Mount("--ro-bind-try", dir, dir)));
    mounts.sort(Comparator.comparingInt(Mount::depth).thenComparingInt(Mount::order));
    return mounts;
  }

  /** {@code dir} is strictly below {@code hidden} (an empty tmpfs inside), so it needs a bind. */
  private static boolean hiddenBelow(Path dir, Path hidden) {
    return dir.startsWith(hidden) && !dir.equals(hidden);
  }

  /**
   * The forwarders in the background (their SIGINT stays ignored, so an interrupt does not cut the
   * harness's connections): the proxy's on 127.0.0.1:3128, and for each of the run's loopback
   * services one on its own port that tunnels through the proxy (socat's PROXY address), so a
   * harness reaches its tool bridge at the URL it was given. Then a bounded wait until all listen
   * (read from /proc/net/tcp: no tool beyond the shell is needed), then the harness in the shell's
   * place.
   */
  static String insideScript(Path socat, List<Integer> loopbackPorts) {
    StringBuilder script = new StringBuilder();
    script
        .append(socat)
        .append(" TCP-LISTEN:")
        .append(PROXY_PORT)
        .append(",bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:")
        .append(SOCKET_INSIDE)
        .append(" </dev/null >/dev/null 2>&1 &\n");
    for (int port : loopbackPorts) {
      script
          .append(socat)
          .append(" TCP-LISTEN:")
          .append(port)
          .append(",bind=127.0.0.1,reuseaddr,fork PROXY:127.0.0.1:127.0.0.1:")
          .append(port)
          .append(",proxyport=")
          .append(PROXY_PORT)
          .append(" </dev/null >/dev/null 2>&1 &\n");
    }
    List<Integer> ports = new ArrayList<>(loopbackPorts);
    ports.add(0, PROXY_PORT);
    for (int port : ports) {
      String listening = String.format("0100007F:%04X 00000000:0000 0A", port);
      script
          .append("i=0\n")
          .append("while ! grep -q '")
          .append(listening)
          .append("' /proc/net/tcp; do\n")
          .append("  i=$((i+1))\n")
          .append("  if [ $i -gt ")
          .append(FORWARDER_WAIT_STEPS)
          .append(" ]; then echo 'capsule: the egress forwarder did not start' >&2; exit ")
          .append(FORWARDER_FAILED)
          .append("; fi\n")
          .append("  sleep 0.01\n")
          .append("done\n");
    }
    return script.append("exec \"$@\"\n").toString();
  }

  /**
   * The proxy variables added to the harness's environment: both spellings (tools differ), and
   * {@code NO_PROXY} cleared so nothing bypasses the proxy (a direct connection fails anyway).
   */
  public static Map<String, String> proxyEnv() {
    String url = "http://127.0.0.1:" + PROXY_PORT;
    return Map.of(
        "HTTPS_PROXY", url,
        "HTTP_PROXY", url,
        "https_proxy", url,
        "http_proxy", url,
        "NO_PROXY", "",
        "no_proxy", "");
  }

  /**
   * The directories that make up a harness's installation: the binary's directory, or the one above
   * when that is a {@code bin} (a prefix with {@code lib/} beside it), for the path as given and
   * for its real path (a symlinked launcher). A binary inside a {@code node_modules} tree (an npm
   * CLI: {@code node_modules/.bin/x} → {@code node_modules/pkg/dist/x.js}) needs the whole tree,
   * since the package loads its dependencies from sibling packages: the outermost {@code
   * node_modules} is its installation.
   */
  public static List<Path> installation(Path binary, Path realBinary) {
    List<Path> dirs = new ArrayList<>();
    for (Path b : List.of(binary, realBinary)) {
      Path dir = b.getParent();
      if (dir == null) {
        continue;
      }
      Path modules = outermostNodeModules(dir);
      if (modules != null) {
        if (!dirs.contains(modules)) {
          dirs.add(modules);
        }
        continue;
      }
      Path fileName = dir.getFileName();
      if (fileName != null && fileName.toString().equals("bin") && dir.getNameCount() > 1) {
        dir = dir.getParent();
      }
      if (!dirs.contains(dir)) {
        dirs.add(dir);
      }
    }
    return dirs;
  }

  private static Path outermostNodeModules(Path dir) {
    Path found = null;
    for (Path p = dir; p != null; p = p.getParent()) {
      Path name = p.getFileName();
      if (name != null && name.toString().equals("node_modules")) {
        found = p;
      }
    }
    return found;
  }
}
