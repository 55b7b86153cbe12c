package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.ManifestLoader;
import io.capsule.config.manifest.NetworkEntry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HarnessGrantsTest {

  private static final String MANIFEST =
      String.join(
          "\n",
          "name: scripted",
          "version: 0.1.0",
          "artifacts:",
          "  - name: jsonl",
          "    version: 0.6.0",
          "    runtime: driver",
          "    builtin: jsonl",
          "inference:",
          "  transport: process",
          "  driver: { artifact: jsonl }",
          "  command: ./harness/x.sh",
          "capabilities:",
          "  env: { allow: [HOME, PATH] }",
          "lifecycle:",
          "  conversation: stateless",
          "");

  @TempDir Path tmp;

  @Test
  void aManifestReadFromAFolderGrantsThatFolder() throws IOException {
    Path dir = Files.createDirectories(tmp.resolve("capsule"));
    Files.writeString(dir.resolve(Manifest.FILE_NAME), MANIFEST);
    Manifest m = ManifestLoader.load(dir);

    assertEquals(Optional.of(dir.toAbsolutePath()), HarnessGrants.of(m, tmp).capsuleDir());
    // Kept when the run adds its tool bridge.
    assertEquals(
        Optional.of(dir.toAbsolutePath()),
        HarnessGrants.of(m, tmp).withLoopback(4711).capsuleDir());
  }

  @Test
  void anAllowlistedLoopbackEntryIsLetThroughOnceBesideTheRunsOwnService() {
    HarnessGrants g =
        new HarnessGrants(
                List.of(NetworkEntry.parse("127.0.0.1:4711"), NetworkEntry.parse("api.x.com:443")),
                List.of(),
                false,
                tmp)
            .withLoopback(4712);

    assertEquals(List.of(4711, 4712), g.loopbackPorts());
    assertEquals(
        List.of("127.0.0.1:4711", "api.x.com:443", "127.0.0.1:4712"),
        g.egress().stream().map(NetworkEntry::toString).toList());
  }

  /** An in-memory manifest has no folder of its own (its capsuleDir is only a base for paths). */
  @Test
  void aManifestBuiltInMemoryGrantsNoFolder() {
    Manifest m = ManifestLoader.parse(MANIFEST, tmp, "in-memory");

    assertEquals(Optional.empty(), HarnessGrants.of(m, tmp).capsuleDir());
  }
}
