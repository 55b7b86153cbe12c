package io.capsule.bench.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/** Memory readings for ParkedRunsBench, on the benchmark's thread (no actor involved). */
final class Memory {

  private static final Path STATUS = Path.of("/proc/self/status");

  private Memory() {}

  /** Used heap after {@code gcs} full collections (System.gc is a full GC under G1 by default). */
  static long usedHeapAfterGc(int gcs) {
    for (int i = 0; i < gcs; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** The JVM's resident set ({@code VmRSS}), in bytes; 0 where /proc is missing. */
  static long residentBytes() {
    if (!Files.exists(STATUS)) {
      return 0;
    }
    try {
      for (String line : Files.readAllLines(STATUS)) {
        if (line.startsWith("VmRSS:")) {
          return 1024L * Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
      return 0;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Live JVM threads: each parked harness holds pipe readers of the harness I/O dispatcher. */
  static int liveThreads() {
    return ManagementFactory.getThreadMXBean().getThreadCount();
  }
}
