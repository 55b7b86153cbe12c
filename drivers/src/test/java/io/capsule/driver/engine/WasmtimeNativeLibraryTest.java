package io.capsule.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.kawamuray.wasmtime.NativeLibraryLoader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * wasmtime-java's extracted JNI library does not outlive the JVM: the pure choice of what to delete
 * as a table, and real child JVMs (each with its own {@code java.io.tmpdir}, so parallel builds do
 * not see each other's files) that load a built-in driver on the wasmtime engine.
 */
class WasmtimeNativeLibraryTest {

  private static final Path TMP = Path.of("/tmp/t");
  private static final String EXTRACTED = "libwasmtime_jni_0.19.0_linux_x86_64123456789.so";

  private static String mapsLine(String path) {
    return "7f1c2a000000-7f1c2a100000 r-xp 00000000 08:01 1234567                    " + path;
  }

  static Stream<Arguments> mapsTable() {
    return Stream.of(
        Arguments.of(
            "the loader's copy in the temp dir",
            List.of(mapsLine("/tmp/t/" + EXTRACTED)),
            Set.of(TMP.resolve(EXTRACTED))),
        Arguments.of(
            "the aarch64 copy",
            List.of(mapsLine("/tmp/t/libwasmtime_jni_0.19.0_linux_aarch64987.so")),
            Set.of(TMP.resolve("libwasmtime_jni_0.19.0_linux_aarch64987.so"))),
        Arguments.of(
            "one copy mapped by several segments",
            List.of(mapsLine("/tmp/t/" + EXTRACTED), mapsLine("/tmp/t/" + EXTRACTED)),
            Set.of(TMP.resolve(EXTRACTED))),
        Arguments.of(
            "already unlinked", List.of(mapsLine("/tmp/t/" + EXTRACTED + " (deleted)")), Set.of()),
        Arguments.of(
            "a library found on java.library.path",
            List.of(mapsLine("/work/main/cli/target/native/libwasmtime_jni.so")),
            Set.of()),
        Arguments.of(
            "the plain library name, even in the temp dir",
            List.of(mapsLine("/tmp/t/libwasmtime_jni.so")),
            Set.of()),
        Arguments.of(
            "a copy in another folder", List.of(mapsLine("/var/tmp/" + EXTRACTED)), Set.of()),
        Arguments.of(
            "a copy in a folder below the temp dir",
            List.of(mapsLine("/tmp/t/sub/" + EXTRACTED)),
            Set.of()),
        Arguments.of(
            "a name without the random digits",
            List.of(mapsLine("/tmp/t/libwasmtime_jni_0.19.0_linux_x86_64.so")),
            Set.of()),
        Arguments.of("another library", List.of(mapsLine("/tmp/t/libfoo123.so")), Set.of()),
        Arguments.of(
            "anonymous and pseudo mappings",
            List.of(
                "7f1c2a000000-7f1c2a100000 rw-p 00000000 00:00 0 ",
                "7ffd1000-7ffd2000 rw-p 00000000 00:00 0                          [stack]"),
            Set.of()),
        Arguments.of("a malformed line", List.of("garbage /tmp/t/" + EXTRACTED), Set.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("mapsTable")
  void deletesOnlyTheLoadersOwnCopyInTheTempDir(String row, List<String> maps, Set<Path> expected) {
    assertEquals(expected, WasmtimeNativeLibrary.extractedCopies(maps, TMP), row);
  }

  @Test
  @EnabledOnOs(OS.LINUX)
  void aJvmThatLoadsABuiltinDriverOnWasmtimeLeavesNoLibraryCopyInItsTempDir(@TempDir Path dir)
      throws Exception {
    Path tmp = Files.createDirectory(dir.resolve("tmp"));
    // An empty library path, so the loader must extract its copy.
    Path libraryPath = Files.createDirectory(dir.resolve("lib"));

    List<String> out = runChild(tmp, libraryPath);

    assertTrue(described(out), String.join("\n", out));
    List<String> mapped = lines(out, "mapped ");
    assertEquals(1, mapped.size(), String.join("\n", out));
    String only = mapped.get(0);
    assertTrue(
        only.startsWith(tmp.toRealPath() + "/libwasmtime_jni_") && only.endsWith(".so (deleted)"),
        "the child loaded a copy from its temp dir and unlinked it: " + only);
    assertEquals(List.of(), wasmtimeFiles(tmp), "nothing left in the child's temp dir");
  }

  @Test
  @EnabledOnOs(OS.LINUX)
  void aLibraryFoundOnTheLibraryPathIsLoadedFromThereAndKept(@TempDir Path dir) throws Exception {
    // The harshest placement: the kept library sits in the child's temp dir itself.
    Path tmp = Files.createDirectory(dir.resolve("tmp"));
    Path kept = tmp.resolve("libwasmtime_jni.so");
    try (InputStream in = NativeLibraryLoader.class.getResourceAsStream(bundledLibrary())) {
      Files.copy(in, kept);
    }

    List<String> out = runChild(tmp, tmp);

    assertTrue(described(out), String.join("\n", out));
    assertEquals(List.of(kept.toRealPath().toString()), lines(out, "mapped "));
    assertEquals(List.of("libwasmtime_jni.so"), wasmtimeFiles(tmp), "only the kept library");
  }

  private static boolean described(List<String> out) {
    return out.stream().anyMatch(l -> l.startsWith("described ") && l.length() > 10);
  }

  private static List<String> lines(List<String> out, String prefix) {
    return out.stream()
        .filter(l -> l.startsWith(prefix))
        .map(l -> l.substring(prefix.length()))
        .toList();
  }

  private static List<String> wasmtimeFiles(Path tmp) throws IOException {
    try (Stream<Path> files = Files.list(tmp)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.contains("wasmtime_jni"))
          .sorted()
          .collect(Collectors.toList());
    }
  }

  /**
   * The bundled Linux library's resource name, e.g. {@code
   * /libwasmtime_jni_0.19.0_linux_x86_64.so}.
   */
  private static String bundledLibrary() throws IOException {
    Properties meta = new Properties();
    try (InputStream in =
        NativeLibraryLoader.class.getResourceAsStream("/wasmtime-java-meta.properties")) {
      meta.load(in);
    }
    String arch = System.getProperty("os.arch").equals("aarch64") ? "aarch64" : "x86_64";
    return "/libwasmtime_jni_" + meta.getProperty("jnilib.version") + "_linux_" + arch + ".so";
  }

  /** Runs {@link LoadBuiltinOnWasmtimeMain} in a fresh JVM and returns its output lines. */
  private static List<String> runChild(Path tmp, Path libraryPath) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Djava.io.tmpdir=" + tmp);
    command.add("-Djava.library.path=" + libraryPath);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(LoadBuiltinOnWasmtimeMain.class.getName());
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().remove("WASMTIME_JNI_LOAD_DISABLED");
    Process child = pb.start();
    child.getOutputStream().close();
    String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child exits");
    assertEquals(0, child.exitValue(), out);
    return out.lines().toList();
  }
}
