package io.capsule.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CachingVersionProberTest {

  /** Runs I/O on the caller: the test is about what is probed, not where. */
  private static final Executor SAME_THREAD = Runnable::run;

  @TempDir Path dir;
  private Path binary;
  private Path cacheFile;

  /** A prober that answers with {@code answer} and counts how often it really ran. */
  private static final class Counting implements VersionProber {
    final AtomicInteger calls = new AtomicInteger();
    volatile Optional<String> answer = Optional.of("0.61.0");

    @Override
    public CompletionStage<Optional<String>> probe(
        Path binary, List<String> args, Map<String, String> env, Path workdir) {
      calls.incrementAndGet();
      return CompletableFuture.completedFuture(answer);
    }
  }

  @BeforeEach
  void binary() throws IOException {
    binary = Files.writeString(dir.resolve("gemini"), "#!/bin/sh\necho 0.61.0\n");
    cacheFile = dir.resolve("cache").resolve("harness-versions.tsv");
  }

  private static Optional<String> probe(VersionProber p, Path binary, String... args) {
    return p.probe(binary, List.of(args), Map.of(), Path.of("/")).toCompletableFuture().join();
  }

  @Test
  void anUnchangedBinaryIsProbedOnce() {
    Counting inner = new Counting();
    VersionProber cached = new CachingVersionProber(inner, Optional.empty(), SAME_THREAD);
    assertEquals(Optional.of("0.61.0"), probe(cached, binary, "--version"));
    assertEquals(Optional.of("0.61.0"), probe(cached, binary, "--version"));
    assertEquals(1, inner.calls.get());
  }

  @Test
  void otherArgumentsOrAChangedSizeOrTimeAreProbedAgain() throws IOException {
    Counting inner = new Counting();
    VersionProber cached = new CachingVersionProber(inner, Optional.empty(), SAME_THREAD);
    probe(cached, binary, "--version");
    probe(cached, binary, "-V");
    assertEquals(2, inner.calls.get());

    Files.setLastModifiedTime(binary, FileTime.fromMillis(1_000_000L));
    inner.answer = Optional.of("0.62.0");
    assertEquals(Optional.of("0.62.0"), probe(cached, binary, "--version"));
    assertEquals(3, inner.calls.get());

    FileTime same = Files.getLastModifiedTime(binary);
    Files.writeString(binary, "#!/bin/sh\necho 0.63.0 # longer\n");
    Files.setLastModifiedTime(binary, same);
    inner.answer = Optional.of("0.63.0");
    assertEquals(Optional.of("0.63.0"), probe(cached, binary, "--version"));
    assertEquals(4, inner.calls.get());
  }

  @Test
  void aSymlinkIsKeyedByTheFileItNames() throws IOException {
    Counting inner = new Counting();
    VersionProber cached = new CachingVersionProber(inner, Optional.empty(), SAME_THREAD);
    Path link = Files.createSymbolicLink(dir.resolve("link"), binary);
    probe(cached, binary, "--version");
    probe(cached, link, "--version");
    assertEquals(1, inner.calls.get());
  }

  @Test
  void anUnreadableVersionIsNotRemembered() {
    Counting inner = new Counting();
    inner.answer = Optional.empty();
    VersionProber cached = new CachingVersionProber(inner, Optional.of(cacheFile), SAME_THREAD);
    assertEquals(Optional.empty(), probe(cached, binary, "--version"));
    assertEquals(Optional.empty(), probe(cached, binary, "--version"));
    assertEquals(2, inner.calls.get());
    assertTrue(Files.notExists(cacheFile));
  }

  @Test
  void aMissingBinaryIsProbedNotCached() {
    Counting inner = new Counting();
    VersionProber cached = new CachingVersionProber(inner, Optional.empty(), SAME_THREAD);
    probe(cached, dir.resolve("absent"), "--version");
    probe(cached, dir.resolve("absent"), "--version");
    assertEquals(2, inner.calls.get());
  }

  @Test
  void theCacheFileCarriesEntriesToTheNextProcess() {
    Counting first = new Counting();
    probe(
        new CachingVersionProber(first, Optional.of(cacheFile), SAME_THREAD), binary, "--version");
    assertEquals(1, first.calls.get());

    Counting second = new Counting();
    second.answer = Optional.of("never asked");
    VersionProber next = new CachingVersionProber(second, Optional.of(cacheFile), SAME_THREAD);
    assertEquals(Optional.of("0.61.0"), probe(next, binary, "--version"));
    assertEquals(0, second.calls.get());
  }

  @Test
  void aDamagedCacheFileOnlyCostsAProbe() throws IOException {
    Files.createDirectories(cacheFile.getParent());
    Files.writeString(cacheFile, "garbage\nmore\tgarbage\n\u0000\n");
    Counting inner = new Counting();
    VersionProber cached = new CachingVersionProber(inner, Optional.of(cacheFile), SAME_THREAD);
    assertEquals(Optional.of("0.61.0"), probe(cached, binary, "--version"));
    assertEquals(1, inner.calls.get());
    assertEquals(1, Files.readAllLines(cacheFile).size());
  }

  @Test
  void theCacheFileKeepsAtMostItsBound() throws IOException {
    Counting inner = new Counting();
    VersionProber cached = new CachingVersionProber(inner, Optional.of(cacheFile), SAME_THREAD);
    for (int i = 0; i < CachingVersionProber.MAX_ENTRIES + 5; i++) {
      probe(cached, binary, "--v" + i);
    }
    assertEquals(CachingVersionProber.MAX_ENTRIES, Files.readAllLines(cacheFile).size());
  }

  @Test
  void theDefaultFileFollowsTheEnvironment() {
    assertEquals(
        Optional.of(Path.of("/x/cache.tsv")),
        CachingVersionProber.defaultFile(Map.of("CAPSULE_VERSION_CACHE", "/x/cache.tsv")));
    assertEquals(
        Optional.empty(),
        CachingVersionProber.defaultFile(Map.of("CAPSULE_VERSION_CACHE", "off", "HOME", "/h")));
    assertEquals(
        Optional.of(Path.of("/xdg/capsule/harness-versions.tsv")),
        CachingVersionProber.defaultFile(Map.of("XDG_CACHE_HOME", "/xdg", "HOME", "/h")));
    assertEquals(
        Optional.of(Path.of("/h/.cache/capsule/harness-versions.tsv")),
        CachingVersionProber.defaultFile(Map.of("HOME", "/h")));
    assertEquals(Optional.empty(), CachingVersionProber.defaultFile(Map.of()));
  }
}
