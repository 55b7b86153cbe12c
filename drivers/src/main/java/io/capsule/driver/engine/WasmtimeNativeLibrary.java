package io.capsule.driver.engine;

import io.github.kawamuray.wasmtime.NativeLibraryLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Loads wasmtime-java's JNI library once per JVM and removes the copy its loader extracted, so no
 * extracted library outlives the JVM.
 *
 * <p>Why: wasmtime-java 0.19.0's {@code NativeLibraryLoader} first tries {@code
 * System.loadLibrary("wasmtime_jni")} (found only when a folder on {@code java.library.path} holds
 * it, as {@code bin/capsule} arranges); otherwise it copies its bundled ~18 MB library to a fresh
 * {@code Files.createTempFile} in {@code java.io.tmpdir}, {@code System.load}s it, and never
 * deletes it. Every JVM that used the engine left one behind.
 *
 * <p>Why delete-after-load rather than loading our own cached copy first: a prior {@code
 * System.load} of another copy does not stop that loader from extracting again. It remembers that
 * it loaded only in a private static flag, and its one switch, the environment variable {@code
 * WASMTIME_JNI_LOAD_DISABLED}, cannot be set from inside a running JVM; skipping its extraction
 * would take reflection into its private state, which breaks silently on a version bump. So we let
 * it load, then read {@code /proc/self/maps} for the exact file this process mapped and unlink it:
 * a mapped shared object stays usable after its name is gone, and the kernel frees it when the
 * process exits, however it exits. The only window left is the few milliseconds between its copy
 * and our unlink.
 *
 * <p>Deleted is only a file that this process has mapped, that lives directly in {@code
 * java.io.tmpdir}, and whose name has the shape the loader's {@code createTempFile} gives ({@code
 * libwasmtime_jni_<version>_linux_<arch><digits>.so}): never a library found on {@code
 * java.library.path} (such as {@code bin/capsule}'s {@code cli/target/native/libwasmtime_jni.so}),
 * never another JVM's copy. Where there is no {@code /proc} (macOS, Windows) this only loads;
 * failing to read the map or to delete is ignored, since the cleanup is best effort and the engine
 * works either way. Loading failures propagate, as they did before.
 *
 * <p>Thread-safe; the work happens once per class loader that loads this class.
 */
final class WasmtimeNativeLibrary {
  private WasmtimeNativeLibrary() {}

  /**
   * The name {@code Files.createTempFile(prefix, ".so")} gives the loader's copy: its prefix
   * ({@code libwasmtime_jni_<version>_linux_<arch>}), then the random unsigned long the JDK
   * appends.
   */
  private static final Pattern EXTRACTED_NAME =
      Pattern.compile("libwasmtime_jni_[0-9A-Za-z.\\-]+_linux_(x86_64|aarch64)[0-9]+\\.so");

  /**
   * A {@code /proc/self/maps} line: address, perms, offset, device, inode, then the path (which may
   * hold spaces, and ends with {@code " (deleted)"} once unlinked).
   */
  private static final Pattern MAPS_LINE =
      Pattern.compile("\\S+\\s+\\S+\\s+\\S+\\s+\\S+\\s+\\S+\\s+(/.*)");

  private static final String DELETED = " (deleted)";

  private static boolean loaded;

  /**
   * Loads the library (as {@code NativeLibraryLoader.init()} would: not at all when {@code
   * WASMTIME_JNI_LOAD_DISABLED} is set, since then the embedder loads it) and, the first time,
   * deletes this process's extracted copy. Cheap after the first call.
   */
  static synchronized void ensureLoaded() {
    if (loaded) {
      return;
    }
    NativeLibraryLoader.init();
    loaded = true;
    deleteOwnExtractedCopies();
  }

  private static void deleteOwnExtractedCopies() {
    Path maps = Path.of("/proc/self/maps");
    if (!Files.isReadable(maps)) {
      return;
    }
    try {
      Path tmpDir = Path.of(System.getProperty("java.io.tmpdir")).toRealPath();
      for (Path copy : extractedCopies(Files.readAllLines(maps), tmpDir)) {
        Files.deleteIfExists(copy);
      }
    } catch (IOException | InvalidPathException | SecurityException e) {
      // Best effort: the library is loaded and works; at worst one copy stays, as before.
    }
  }

  /**
   * The files among a process's mapped paths ({@code /proc/self/maps} lines) that wasmtime-java
   * extracted into {@code tmpDir} (a real path, as the kernel reports real paths) and that still
   * have a name. Pure; sorted for stable output.
   */
  static Set<Path> extractedCopies(List<String> mapsLines, Path tmpDir) {
    Set<Path> copies = new TreeSet<>();
    for (String line : mapsLines) {
      Matcher m = MAPS_LINE.matcher(line);
      if (!m.matches()) {
        continue;
      }
      String name = m.group(1).strip();
      if (name.endsWith(DELETED)) {
        continue;
      }
      Path path;
      try {
        path = Path.of(name);
      } catch (InvalidPathException e) {
        continue;
      }
      Path fileName = path.getFileName();
      if (tmpDir.equals(path.getParent())
          && fileName != null
          && EXTRACTED_NAME.matcher(fileName.toString()).matches()) {
        copies.add(path);
      }
    }
    return copies;
  }
}
