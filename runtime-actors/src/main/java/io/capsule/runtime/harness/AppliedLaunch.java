package io.capsule.runtime.harness;

import io.capsule.runtime.harness.contain.HarnessGrants;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A launch plan applied to the disk: what {@link HarnessProcess} spawns, and the private files
 * directory it owns. {@link #close()} removes that directory (idempotent); the run calls it when it
 * ends, on every path.
 *
 * <p>Argument values, environment values, file contents and stdin may be secrets: {@link
 * #toString()} shows counts and names only, and so must every trace or log line built from this.
 */
public final class AppliedLaunch implements AutoCloseable {

  private final Path binary;
  private final List<String> args;
  private final Map<String, String> env;
  private final Path workdir;
  private final Path filesDir;
  private final List<String> fileNames;
  private final byte[] stdin;
  private final boolean keepStdinOpen;
  private final Optional<byte[]> interruptStdin;
  private final HarnessGrants grants;
  private boolean closed;

  AppliedLaunch(
      Path binary,
      List<String> args,
      Map<String, String> env,
      Path workdir,
      Path filesDir,
      List<String> fileNames,
      byte[] stdin,
      boolean keepStdinOpen,
      Optional<byte[]> interruptStdin,
      HarnessGrants grants) {
    this.binary = Objects.requireNonNull(binary, "binary");
    this.args = List.copyOf(args);
    this.env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
    this.workdir = Objects.requireNonNull(workdir, "workdir");
    this.filesDir = Objects.requireNonNull(filesDir, "filesDir");
    this.fileNames = List.copyOf(fileNames);
    this.stdin = stdin.clone();
    this.keepStdinOpen = keepStdinOpen;
    this.interruptStdin = interruptStdin.map(byte[]::clone);
    this.grants = Objects.requireNonNull(grants, "grants");
  }

  /** The harness binary, as resolved by the run. */
  public Path binary() {
    return binary;
  }

  /** The arguments after {@code {files_dir}} substitution. Secret-bearing: never log them. */
  public List<String> args() {
    return args;
  }

  /** The harness's whole environment (nothing else is inherited). Values are secret-bearing. */
  public Map<String, String> env() {
    return env;
  }

  public Path workdir() {
    return workdir;
  }

  /** The private files directory (0700), absolute. */
  public Path filesDir() {
    return filesDir;
  }

  /** Names of the files written into {@link #filesDir()}, in plan order. */
  public List<String> fileNames() {
    return fileNames;
  }

  /** Bytes written to stdin at once after the spawn (may be empty); a copy. */
  public byte[] stdin() {
    return stdin.clone();
  }

  public boolean keepStdinOpen() {
    return keepStdinOpen;
  }

  /** What the {@code stdin-message} interrupt writes, if the plan has it; a copy. */
  public Optional<byte[]> interruptStdin() {
    return interruptStdin.map(byte[]::clone);
  }

  /** The manifest's grants, as a contained harness gets them. */
  public HarnessGrants grants() {
    return grants;
  }

  /** Removes the files directory and everything in it. Safe to call more than once. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      deleteTree(filesDir);
    } catch (IOException e) {
      throw new UncheckedIOException("could not remove the files directory " + filesDir, e);
    }
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    Files.walkFileTree(
        root,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Files.deleteIfExists(file);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            if (e instanceof NoSuchFileException) {
              return FileVisitResult.CONTINUE;
            }
            throw e;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
            if (e != null) {
              throw e;
            }
            Files.deleteIfExists(dir);
            return FileVisitResult.CONTINUE;
          }
        });
  }

  @Override
  public String toString() {
    return "AppliedLaunch[binary="
        + binary
        + ", args="
        + args.size()
        + ", env="
        + env.keySet()
        + ", files="
        + fileNames
        + ", stdinBytes="
        + stdin.length
        + ", keepStdinOpen="
        + keepStdinOpen
        + ", interruptStdin="
        + interruptStdin.isPresent()
        + "]";
  }
}
