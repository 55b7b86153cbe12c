package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The release archive, after {@code package}: unpacked into a temp dir it runs with only a JDK (no
 * Maven, no source tree) and a fresh {@code HOME}: the README's archive commands as written, the
 * example capsule, {@code --version}, and eight commands started at once, which share one
 * extraction of the native engine library. Its docs point only at what it holds.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReleaseArchiveIT {
  /** A JVM start plus a driver load takes seconds; eight at once on two cores take longer. */
  private static final long COMMAND_TIMEOUT_S = 180;

  private Path dir;
  private Path home;
  private Path cache;

  @BeforeAll
  void unpack() throws Exception {
    // Named in -Dtest, the default (pre-package) execution runs it too: there is nothing to test
    // yet, and the release-archive-tests execution after package runs it for real.
    assumeTrue(
        Boolean.getBoolean("test.capsule-packaged"), "runs after package, on the real archive");
    Path archive = Path.of(System.getProperty("test.capsule-archive"));
    assertTrue(Files.isRegularFile(archive), "no release archive at " + archive);
    dir = Files.createTempDirectory("capsule-release-");
    Result tar = exec(dir, List.of("tar", "xzf", archive.toString()), Map.of());
    assertEquals(0, tar.exit(), tar.out());
    home = dir.resolve("capsule-" + System.getProperty("test.capsule-version"));
    cache = dir.resolve("cache");
  }

  @AfterAll
  void removeTheUnpackedTree() throws IOException {
    if (dir == null) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  @Test
  void theArchiveHoldsTheLauncherTheJarTheExamplesAndTheDocs() {
    assertTrue(Files.isExecutable(home.resolve("bin/capsule")));
    assertTrue(Files.isRegularFile(home.resolve("lib/capsule.jar")));
    assertTrue(Files.isExecutable(home.resolve("examples/hello/harness/hello.sh")));
    assertTrue(Files.isRegularFile(home.resolve("docs/run-semantics.md")));
    assertTrue(Files.isRegularFile(home.resolve("docs/murmur-driver-0.6.0.wit")));
    assertTrue(Files.isRegularFile(home.resolve("README.md")));
    assertTrue(Files.isRegularFile(home.resolve("LICENSE")));
    assertTrue(Files.isRegularFile(home.resolve("docs/jsonl.md")));
    assertTrue(Files.isRegularFile(home.resolve("examples/transcripts/jsonl/tools.jsonl")));
    assertTrue(Files.isExecutable(home.resolve("examples/clock/harness/agent.sh")));
  }

  @Test
  void theArchiveHoldsWhatItsDocsPointAt() throws IOException {
    Path source = Path.of("..").toAbsolutePath().normalize();
    List<String> problems =
        io.capsule.cli.readme.DocPaths.unresolved(
            home, io.capsule.cli.readme.DocPaths.sourceModules(source));
    assertTrue(problems.isEmpty(), String.join("\n", problems));
    assertTrue(Files.isRegularFile(home.resolve("conf/reference.conf")));
    assertTrue(
        Files.readString(home.resolve("conf/reference.conf")).contains("inactivity-timeout"));
  }

  /**
   * Each {@code bin/capsule} line of the README's "Install from the release archive" block, run as
   * written from the unpacked folder (the block's first line, which unpacks, was done above).
   */
  @Test
  void theReadmesArchiveCommandsRunFromTheUnpackedArchive() throws Exception {
    List<String> lines = Files.readAllLines(home.resolve("README.md"));
    int section = lines.indexOf("## Install from the release archive");
    assertTrue(section >= 0, "the README has its install section");
    int open = lines.subList(section, lines.size()).indexOf("```") + section;
    int close = lines.subList(open + 1, lines.size()).indexOf("```") + open + 1;
    List<List<String>> commands = new ArrayList<>();
    for (String line : lines.subList(open + 1, close)) {
      if (line.startsWith("bin/capsule ")) {
        commands.add(words(line.substring("bin/capsule ".length())));
      }
    }
    assertTrue(commands.size() >= 5, "install, run, doctor, describe, replay: " + commands);
    for (List<String> args : commands) {
      Result r = capsule(args);
      assertEquals(0, r.exit(), "bin/capsule " + args + "\n" + r.out());
    }
  }

  /** The README's capsule with a bridged tool, run from the archive as the README says. */
  @Test
  void theClockExampleCallsItsBridgedToolFromTheUnpackedArchive() throws Exception {
    Result r = capsule(List.of("run", "examples/clock", "--task", "What time is it?", "--json"));
    assertEquals(0, r.exit(), r.out());
    assertTrue(r.out().contains("\"event\":\"bridge_call\""), r.out());
    assertTrue(r.out().contains("It is "), r.out());
  }

  /** Shell words: spaces split, double quotes group (all the README's commands use). */
  private static List<String> words(String line) {
    List<String> out = new ArrayList<>();
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\"([^\"]*)\"|(\\S+)").matcher(line);
    while (m.find()) {
      out.add(m.group(1) != null ? m.group(1) : m.group(2));
    }
    return out;
  }

  @Test
  void theUnpackedArchiveRunsTheExampleCapsule() throws Exception {
    Result r = capsule(List.of("run", "examples/hello", "--task", "Say hello", "--json"));
    assertEquals(0, r.exit(), r.out());
    assertTrue(r.out().contains("\"event\":\"finished\""), r.out());
    assertTrue(r.out().contains("Say hello"), r.out());
  }

  @Test
  void eightCommandsStartedAtOnceAllSucceedAndTheNativeLibraryIsExtractedOnce() throws Exception {
    List<Process> started = new ArrayList<>();
    List<Path> outputs = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      Path out = dir.resolve("concurrent-" + i + ".txt");
      outputs.add(out);
      started.add(start(List.of("driver", "describe", "builtin:jsonl"), out));
    }
    for (int i = 0; i < started.size(); i++) {
      Process p = started.get(i);
      assertTrue(p.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS), "command " + i + " hung");
      assertEquals(0, p.exitValue(), Files.readString(outputs.get(i)));
    }
    Path lib = onlyNativeLibrary();
    Object extracted = Files.readAttributes(lib, BasicFileAttributes.class).fileKey();
    long modified = Files.getLastModifiedTime(lib).toMillis();

    Result again = capsule(List.of("driver", "describe", "builtin:jsonl"));
    assertEquals(0, again.exit(), again.out());
    assertEquals(lib, onlyNativeLibrary(), "the second start used the same library");
    assertEquals(extracted, Files.readAttributes(lib, BasicFileAttributes.class).fileKey());
    assertEquals(modified, Files.getLastModifiedTime(lib).toMillis(), "not extracted again");
    try (Stream<Path> left = Files.walk(cache)) {
      assertTrue(
          left.noneMatch(p -> p.getFileName().toString().startsWith(".extract")),
          "no extraction directory is left behind");
    }
  }

  @Test
  void versionPrintsTheReleaseVersion() throws Exception {
    Result r = capsule(List.of("--version"));
    assertEquals(0, r.exit(), r.out());
    assertTrue(
        r.out().startsWith("capsule " + System.getProperty("test.capsule-version") + "\n"),
        r.out());
  }

  /** An empty home folder, as on a machine where capsule never ran. */
  private Path freshHome() throws IOException {
    Path fresh = dir.resolve("home");
    Files.createDirectories(fresh);
    return fresh;
  }

  private Path onlyNativeLibrary() throws IOException {
    try (Stream<Path> found = Files.walk(cache)) {
      List<Path> libs =
          found.filter(p -> p.getFileName().toString().equals("libwasmtime_jni.so")).toList();
      assertEquals(1, libs.size(), "native libraries: " + libs);
      return libs.get(0);
    }
  }

  private Result capsule(List<String> args) throws Exception {
    Path out = Files.createTempFile(dir, "out-", ".txt");
    Process p = start(args, out);
    assertTrue(p.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS), "capsule " + args + " hung");
    return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
  }

  /** bin/capsule from the unpacked tree, with a private cache and no source tree around. */
  private Process start(List<String> args, Path out) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(home.resolve("bin/capsule").toString());
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command).directory(home.toFile());
    pb.environment().put("XDG_CACHE_HOME", cache.toString());
    pb.environment().put("HOME", freshHome().toString());
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    pb.environment().remove("CAPSULE_JAVA_OPTS");
    pb.redirectErrorStream(true).redirectOutput(out.toFile());
    return pb.start();
  }

  private static Result exec(Path cwd, List<String> command, Map<String, String> env)
      throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command).directory(cwd.toFile());
    pb.environment().putAll(env);
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS));
    return new Result(p.exitValue(), out);
  }

  private record Result(int exit, String out) {}
}
