package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * What the sealed root needs to know about the host's file system: whether a path is a symbolic
 * link (and to what), a directory, or present at all. The one seam between {@link SealedRoot}'s
 * pure rules and the disk, so that what a sandbox shows is table-tested against made-up hosts.
 */
public interface HostView {

  /** The link's target as written (relative or absolute) when {@code path} is a symbolic link. */
  Optional<Path> symlinkTarget(Path path);

  /** {@code path} exists (a link counts when it resolves). */
  boolean exists(Path path);

  /** This machine's file system. */
  HostView LIVE =
      new HostView() {
        @Override
        public Optional<Path> symlinkTarget(Path path) {
          if (!Files.isSymbolicLink(path)) {
            return Optional.empty();
          }
          try {
            return Optional.of(Files.readSymbolicLink(path));
          } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
          }
        }

        @Override
        public boolean exists(Path path) {
          return Files.exists(path) || Files.exists(path, LinkOption.NOFOLLOW_LINKS);
        }
      };

  /**
   * A made-up host: {@code links} maps each symbolic link to its target, {@code present} lists the
   * other paths that exist. For tests and for describing a host in docs.
   */
  static HostView of(Map<Path, Path> links, java.util.Set<Path> present) {
    return new HostView() {
      @Override
      public Optional<Path> symlinkTarget(Path path) {
        return Optional.ofNullable(links.get(path));
      }

      @Override
      public boolean exists(Path path) {
        return links.containsKey(path) || present.contains(path);
      }
    };
  }
}
