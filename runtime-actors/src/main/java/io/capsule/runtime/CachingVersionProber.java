package io.capsule.runtime;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * A {@link VersionProber} that remembers each readable version line per binary: the binary's real
 * path, size and modification time, plus the probe's arguments. An unchanged binary is not probed
 * again, so a run does not pay the probe each time ({@code gemini --version} takes seconds: it
 * starts a whole Node application). Installing another version changes the size or the time, and
 * the next run probes again. An unreadable probe is not remembered.
 *
 * <p>With a cache file, entries also outlive the process (each {@code capsule run} is its own JVM):
 * the file is read once, on first use, and rewritten whole after each new entry through a temporary
 * file and a rename, so a reader never sees half a file. A file that cannot be read or written only
 * costs a probe. Two processes writing at once lose one entry, which is probed again.
 *
 * <p>Threading: thread-safe. Stat calls and file I/O run on {@code io}; the stage may complete on
 * any thread.
 */
public final class CachingVersionProber implements VersionProber {

  /** Entries kept (oldest dropped first): a machine has a handful of harness installs. */
  static final int MAX_ENTRIES = 64;

  /** What identifies one probe of one installed binary. */
  record Key(Path realPath, long size, long modifiedMillis, List<String> args) {
    String line() {
      return String.join(
          "\t",
          realPath.toString(),
          Long.toString(size),
          Long.toString(modifiedMillis),
          String.join("\u001f", args));
    }
  }

  private final VersionProber inner;
  private final Optional<Path> file;
  private final Executor io;
  private final Map<String, String> entries = new LinkedHashMap<>();
  private boolean loaded;

  /**
   * @param inner the prober that really runs the binary
   * @param file where entries persist; empty for this process only
   * @param io where stat calls and file I/O run (never an actor thread)
   */
  public CachingVersionProber(VersionProber inner, Optional<Path> file, Executor io) {
    this.inner = Objects.requireNonNull(inner, "inner");
    this.file = Objects.requireNonNull(file, "file");
    this.io = Objects.requireNonNull(io, "io");
  }

  /**
   * The cache file for a host environment: {@code $CAPSULE_VERSION_CACHE} when set (an absolute
   * path; {@code off} or anything else keeps the cache in memory), else {@code
   * $XDG_CACHE_HOME/capsule/harness-versions.tsv}, else {@code ~/.cache/capsule/…}.
   */
  public static Optional<Path> defaultFile(Map<String, String> env) {
    String own = env.get("CAPSULE_VERSION_CACHE");
    if (own != null) {
      return own.startsWith("/") ? Optional.of(Path.of(own)) : Optional.empty();
    }
    String xdg = env.get("XDG_CACHE_HOME");
    if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
      return Optional.of(Path.of(xdg, "capsule", "harness-versions.tsv"));
    }
    String home = env.get("HOME");
    if (home == null || home.isBlank() || !Path.of(home).isAbsolute()) {
      return Optional.empty();
    }
    return Optional.of(Path.of(home, ".cache", "capsule", "harness-versions.tsv"));
  }

  @Override
  public CompletionStage<Optional<String>> probe(
      Path binary, List<String> args, Map<String, String> env, Path workdir) {
    return CompletableFuture.supplyAsync(() -> keyOf(binary, args), io)
        .thenCompose(
            key -> {
              Optional<String> known = key.flatMap(this::lookup);
              if (known.isPresent()) {
                return CompletableFuture.completedFuture(known);
              }
              return inner
                  .probe(binary, args, env, workdir)
                  .thenApplyAsync(
                      version -> {
                        if (version.isPresent() && key.isPresent()) {
                          remember(key.get(), version.get());
                        }
                        return version;
                      },
                      io);
            });
  }

  /** The binary's identity now; empty when it cannot be read (then it is probed, not cached). */
  static Optional<Key> keyOf(Path binary, List<String> args) {
    try {
      Path real = binary.toRealPath();
      return Optional.of(
          new Key(
              real,
              Files.size(real),
              Files.getLastModifiedTime(real).toMillis(),
              List.copyOf(args)));
    } catch (IOException | SecurityException e) {
      return Optional.empty();
    }
  }

  private synchronized Optional<String> lookup(Key key) {
    loadOnce();
    return Optional.ofNullable(entries.get(key.line()));
  }

  private synchronized void remember(Key key, String version) {
    if (key.line().indexOf('\n') >= 0 || version.indexOf('\t') >= 0 || version.indexOf('\n') >= 0) {
      return; // would not survive the file's format; such a binary is simply probed each time
    }
    loadOnce();
    entries.remove(key.line());
    entries.put(key.line(), version);
    while (entries.size() > MAX_ENTRIES) {
      entries.remove(entries.keySet().iterator().next());
    }
    file.ifPresent(this::store);
  }

  private void loadOnce() {
    if (loaded) {
      return;
    }
    loaded = true;
    file.filter(Files::isRegularFile).ifPresent(this::load);
  }

  private void load(Path path) {
    try {
      for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
        // key (4 fields) + version; anything else is a damaged line and skipped.
        int cut = line.lastIndexOf('\t');
        if (cut > 0 && line.substring(0, cut).split("\t", -1).length == 4) {
          entries.put(line.substring(0, cut), line.substring(cut + 1));
        }
      }
    } catch (IOException | RuntimeException e) {
      entries.clear();
    }
  }

  private void store(Path path) {
    StringBuilder text = new StringBuilder();
    entries.forEach((k, v) -> text.append(k).append('\t').append(v).append('\n'));
    try {
      Files.createDirectories(path.getParent());
      Path tmp = Files.createTempFile(path.getParent(), ".harness-versions", ".tmp");
      try {
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        try {
          Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
          Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING);
        }
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException | RuntimeException e) {
      // Not persisted: the next process probes again, which is all a cache miss costs.
    }
  }
}
