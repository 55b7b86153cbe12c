package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The command line that runs a harness or a tool under bubblewrap (pure; table-tested). Outside:
 * {@code setsid} (the group the runtime signals and kills), then a short {@code /bin/sh} prelude
 * that ignores SIGINT (so a SIGINT to the group does not kill bwrap itself, whose death would kill
 * the sandbox before the harness could end its turn), moves itself into the run's cgroups (so every
 * process of the sandbox is bounded from its first instruction), opens the syscall filter on fd 3
 * and execs bubblewrap. Inside: a shell starts the egress forwarder on the sandbox's loopback,
 * waits until it listens, and execs {@code env --default-signal=INT} and the command exactly as
 * planned.
 *
 * <p>The sandbox (docs/containment.md): its own user, network (only {@code lo}), PID, IPC, UTS and
 * cgroup namespaces; no capabilities, {@code no_new_privs}, no new user namespaces, the syscall
 * filter; the sandbox's user is {@link Hardening#SANDBOX_USER} (its user namespace's root, without
 * capabilities); {@code --die-with-parent}; the sealed root of {@link SealedRoot}; {@code $HOME} an
 * empty tmpfs; then, shallowest first so a deeper bind is not hidden by a shallower one, the
 * command's installation read-only (where the system directories do not show it), each granted path
 * with its access, the working and files directories (read-only with {@code read_only}), the
 * proxy's socket, and the capsule's folder read-only.
 *
 * <p>Not {@code --new-session}: it would put the harness in a session of its own, out of the group
 * the runtime interrupts with SIGINT. The harness has no controlling terminal anyway ({@code
 * setsid}, pipes for stdio), and the filter refuses {@code TIOCSTI}, which is what the flag guards
 * against.
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

  /** Exit status of the outside prelude when it could not join a cgroup or open the filter. */
  public static final int PRELUDE_FAILED = 123;

  /** The fd bubblewrap reads the syscall filter from (opened by the prelude). */
  static final int FILTER_FD = 3;

  private SandboxCommand() {}

  /**
   * What is hardened beyond the namespaces, and the host it is built for.
   *
   * @param user the sandbox's uid and gid inside its user namespace; empty keeps the runner's (an
   *     unprivileged runner is already unprivileged inside)
   * @param seccompFilter the compiled filter bubblewrap applies ({@code --seccomp}); empty for none
   *     (only where the filter cannot be built for this machine's architecture)
   * @param cgroupProcs the {@code cgroup.procs} files of the run's cgroups, joined before bwrap
   *     starts
   * @param rlimitPrefix a command prefix that sets resource limits and execs the rest ({@code
   *     prlimit … --}), or empty
   * @param host the file system the sealed root is built from
   */
  public record Hardening(
      Optional<SandboxUser> user,
      Optional<Path> seccompFilter,
      List<Path> cgroupProcs,
      List<String> rlimitPrefix,
      HostView host) {

    /**
     * Who every sandbox runs as inside its user namespace: that namespace's own root, with no
     * capabilities (dropped), no new privileges, and no further user namespaces. Not a host
     * identity: what it may touch on the host is what the mounts show, and writes go as the
     * runner's user. Root inside, not {@code nobody}: a runner's files then appear as root's, which
     * harnesses check before trusting them (Gemini CLI reads its system settings only from files
     * and folders owned by uid 0), where under a mapped {@code nobody} they would all appear as
     * {@code nobody}'s, and nothing the sandbox can do changes with the number.
     */
    public static final SandboxUser SANDBOX_USER = new SandboxUser(0, 0);

    public Hardening {
      cgroupProcs = List.copyOf(cgroupProcs);
      rlimitPrefix = List.copyOf(rlimitPrefix);
    }

    public Hardening withCgroups(List<Path> procs, List<String> rlimits) {
      return new Hardening(user, seccompFilter, procs, rlimits, host);
    }

    public Hardening withSeccompFilter(Optional<Path> filter) {
      return new Hardening(user, filter, cgroupProcs, rlimitPrefix, host);
    }

    /**
     * This machine's: {@link #SANDBOX_USER}, the syscall filter of this machine's architecture
     * (written once per JVM into {@link #FILTER_DIR}; none on an architecture the filter does not
     * know, docs/containment.md), no cgroups yet, the live host. Blocking the first time (a small
     * file): call off actor threads.
     *
     * @throws IOException when the filter cannot be written
     */
    public static Hardening forThisMachine() throws IOException {
      return new Hardening(
          Optional.of(SANDBOX_USER), Filter.path(), List.of(), List.of(), HostView.LIVE);
    }

    /**
     * Where this JVM writes the filter: a {@code 0700} directory of the JVM user's under the temp
     * directory, named by the user, so that only that user (who could change the runtime anyway)
     * could replace it.
     */
    public static final Path FILTER_DIR =
        Path.of(
            System.getProperty("java.io.tmpdir"),
            "capsule-seccomp-" + System.getProperty("user.name", "runtime"));
  }

  /** The filter file of this JVM, written on first use. */
  private static final class Filter {
    private static Optional<Path> written;

    static synchronized Optional<Path> path() throws IOException {
      if (written == null || (written.isPresent() && !Files.isRegularFile(written.get()))) {
        Optional<SeccompFilter.Arch> arch = SeccompFilter.Arch.host();
        written =
            arch.isPresent()
                ? Optional.of(SeccompFilter.writeTo(Hardening.FILTER_DIR, arch.get()))
                : Optional.empty();
      }
      return written;
    }
  }

  /** A uid and gid inside the sandbox's user namespace. */
  public record SandboxUser(int uid, int gid) {}

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
      List<String> harnessCommand,
      Hardening hardening) {
    public Inputs {
      installation = List.copyOf(installation);
      harnessCommand = List.copyOf(harnessCommand);
      java.util.Objects.requireNonNull(hardening, "hardening");
    }
  }

  /** The whole argv, from {@code setsid} to the command's last argument. */
  public static List<String> argv(Inputs in) {
    Hardening h = in.hardening();
    List<String> cmd = new ArrayList<>();
    cmd.add(in.setsid().toString());
    cmd.add(SH.toString());
    cmd.add("-c");
    cmd.add(PRELUDE);
    cmd.add("capsule-prelude");
    cmd.add(h.seccompFilter().map(Path::toString).orElse(""));
    cmd.add(Integer.toString(h.cgroupProcs().size()));
    h.cgroupProcs().forEach(p -> cmd.add(p.toString()));
    cmd.addAll(h.rlimitPrefix());
    cmd.add(in.bwrap().toString());
    cmd.add("--unshare-user");
    h.user()
        .ifPresent(
            u ->
                cmd.addAll(
                    List.of(
                        "--uid", Integer.toString(u.uid()), "--gid", Integer.toString(u.gid()))));
    cmd.addAll(
        List.of(
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--disable-userns",
            "--cap-drop",
            "ALL",
            "--die-with-parent"));
    if (h.seccompFilter().isPresent()) {
      cmd.add("--seccomp");
      cmd.add(Integer.toString(FILTER_FD));
    }
    for (Mount m : mounts(in)) {
      m.appendTo(cmd);
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

  /**
   * The prelude outside the sandbox: {@code $1} the filter (or empty), {@code $2} how many cgroup
   * files follow, then those, then the command. Ignored signals stay ignored across exec, so bwrap
   * and everything outside the harness ignore SIGINT.
   */
  static final String PRELUDE =
      "trap '' INT\n"
          + "f=$1; n=$2; shift 2\n"
          + "while [ \"$n\" -gt 0 ]; do\n"
          + "  echo $$ > \"$1\" || { echo \"capsule: could not join the run's cgroup $1\" >&2; exit "
          + PRELUDE_FAILED
          + "; }\n"
          + "  n=$((n-1)); shift\n"
          + "done\n"
          + "if [ -n \"$f\" ]; then\n"
          + "  [ -r \"$f\" ] || { echo \"capsule: could not read the syscall filter $f\" >&2; exit "
          + PRELUDE_FAILED
          + "; }\n"
          + "  exec "
          + FILTER_FD
          + "< \"$f\"\n"
          + "fi\n"
          + "exec \"$@\"\n";

  /** The mounts of the sandbox, shallowest first. */
  static List<Mount> mounts(Inputs in) {
    HostView host = in.hardening().host();
    List<Mount> mounts = new ArrayList<>(SealedRoot.mounts(host));
    Path tmp = Path.of("/tmp");
    Path home = in.grants().home();
    boolean hideHome = home.isAbsolute() && home.getNameCount() > 0;
    if (hideHome) {
      mounts.add(Mount.fresh("--tmpfs", home));
    }
    for (Path dir : in.installation()) {
      if (!SealedRoot.shows(dir, host) && !covers(dir, home) && !covers(dir, tmp)) {
        mounts.add(Mount.bind("--ro-bind-try", dir));
      }
    }
    for (HarnessGrants.PathGrant g : in.grants().paths()) {
      mounts.add(Mount.bind(g.writable() ? "--bind-try" : "--ro-bind-try", g.path()));
    }
    String dirs = in.grants().readOnly() ? "--ro-bind" : "--bind";
    mounts.add(Mount.bind(dirs, in.workdir()));
    mounts.add(Mount.bind(dirs, in.filesDir()));
    mounts.add(new Mount("--bind", in.proxySocket(), Path.of(SOCKET_INSIDE)));
    // Last, so that at its own depth it covers a grant or working directory naming the same
    // folder: the capsule folder itself is never writable (deeper grants keep their access). Never
    // a folder holding $HOME or /tmp: that would show what they hide.
    in.grants()
        .capsuleDir()
        .filter(dir -> !covers(dir, home) && !covers(dir, tmp))
        .ifPresent(dir -> mounts.add(Mount.bind("--ro-bind-try", dir)));
    mounts.sort(Comparator.comparingInt(Mount::depth).thenComparingInt(Mount::order));
    return mounts;
  }

  /**
   * {@code dir} is {@code hidden} or a folder above it, or above a system directory: binding it
   * would show what the sandbox hides (the root, {@code /home} for {@code $HOME}).
   */
  private static boolean covers(Path dir, Path hidden) {
    if (hidden.startsWith(dir)) {
      return true;
    }
    for (Path system : SealedRoot.SYSTEM_DIRS) {
      if (system.startsWith(dir)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The forwarders in the background (their SIGINT stays ignored, so an interrupt does not cut the
   * harness's connections): the proxy's on 127.0.0.1:3128, and for each of the run's loopback
   * services one on its own port that tunnels through the proxy (socat's PROXY address), so a
   * harness reaches its tool bridge at the URL it was given. Then a bounded wait until all listen
   * (read from /proc/net/tcp: no tool beyond the shell is needed), then the harness in the shell's
   * place.
   */
  public static String insideScript(Path socat, List<Integer> loopbackPorts) {
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
