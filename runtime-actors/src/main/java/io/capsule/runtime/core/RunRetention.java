package io.capsule.runtime.core;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which old run directories go ({@code capsule.run.keep}): of the finished runs in the work root,
 * the newest {@code count} stay unless older than {@code age}; every other one is removed. A run
 * still going is never touched (its trace has no {@code run_end} yet), nor the run doing the
 * cleaning, nor anything that is not a run directory by its name. {@link #select} is pure; {@link
 * #prune} does the file work and blocks: call it on the blocking dispatcher.
 */
public final class RunRetention {

  /**
   * @param count finished runs kept, newest first (0: only the run doing the cleaning)
   * @param age finished runs older than this go whatever the count
   */
  public record Keep(int count, Duration age) {
    public Keep {
      if (count < 0 || age.isNegative()) {
        throw new IllegalArgumentException("keep needs count >= 0 and age >= 0");
      }
    }
  }

  /** A finished run's directory and when it started (from its name). */
  public record Finished(Path dir, Instant started) {}

  /** A run directory's name: {@code <task>-<epoch millis>-<hex>} (see {@code RunDirs.name}). */
  private static final Pattern NAME =
      Pattern.compile("[A-Za-z0-9._-]{0,64}-(\\d{10,15})-[0-9a-f]+");

  /** The tail read to find {@code run_end}: the last line is short (outcome and code). */
  private static final int TAIL_BYTES = 512;

  private RunRetention() {}

  /** The directories to remove, oldest last; {@code own} is never one of them. */
  public static List<Path> select(List<Finished> finished, Path own, Keep keep, Instant now) {
    List<Finished> others =
        finished.stream()
            .filter(f -> !f.dir().equals(own))
            .sorted(Comparator.comparing(Finished::started).reversed())
            .toList();
    List<Path> remove = new ArrayList<>();
    for (int i = 0; i < others.size(); i++) {
      Finished f = others.get(i);
      boolean tooMany = i >= keep.count();
      boolean tooOld = Duration.between(f.started(), now).compareTo(keep.age()) > 0;
      if (tooMany || tooOld) {
        remove.add(f.dir());
      }
    }
    return remove;
  }

  /** When a directory name is a run's, the start it records. */
  public static Optional<Instant> startedOf(String name) {
    Matcher m = NAME.matcher(name);
    return m.matches()
        ? Optional.of(Instant.ofEpochMilli(Long.parseLong(m.group(1))))
        : Optional.empty();
  }

  /**
   * Removes what {@link #select} picks among the finished runs in {@code workRoot}.
   *
   * @return how many directories were removed; a directory that cannot be removed stays
   */
  public static int prune(Path workRoot, Path own, Keep keep, Instant now) {
    List<Finished> finished = new ArrayList<>();
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(workRoot, Files::isDirectory)) {
      for (Path dir : dirs) {
        Optional<Instant> started = startedOf(dir.getFileName().toString());
        if (started.isPresent() && ended(dir.resolve("trace.jsonl"))) {
          finished.add(new Finished(dir, started.get()));
        }
      }
    } catch (IOException e) {
      return 0; // no work root (yet), or unreadable: nothing to clean
    }
    int removed = 0;
    for (Path dir : select(finished, own, keep, now)) {
      if (removeTree(dir)) {
        removed++;
      }
    }
    return removed;
  }

  /** Whether the trace's last line is the run's end. */
  static boolean ended(Path trace) {
    try (RandomAccessFile f = new RandomAccessFile(trace.toFile(), "r")) {
      long len = f.length();
      int n = (int) Math.min(len, TAIL_BYTES);
      byte[] tail = new byte[n];
      f.seek(len - n);
      f.readFully(tail);
      String text = new String(tail, StandardCharsets.UTF_8).strip();
      String last = text.substring(text.lastIndexOf('\n') + 1);
      return last.startsWith("{\"event_type\":\"run_end\"");
    } catch (IOException e) {
      return false;
    }
  }

  private static boolean removeTree(Path dir) {
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              Files.delete(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
              Files.delete(d);
              return FileVisitResult.CONTINUE;
            }
          });
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
