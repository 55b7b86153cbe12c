package io.capsule.driver.api;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * WIT {@code launch-plan}: how to spawn the harness for one turn. Equality compares the byte arrays
 * by content. {@link #toString()} shows counts only: argument values may carry secrets and are
 * never logged (docs/run-semantics.md §4).
 */
public record LaunchPlan(
    List<String> args,
    List<EnvVar> envSet,
    List<DriverFile> files,
    Optional<byte[]> stdin,
    boolean keepStdinOpen,
    Optional<byte[]> interruptStdin) {

  public LaunchPlan {
    args = List.copyOf(args);
    envSet = List.copyOf(envSet);
    files = List.copyOf(files);
    Objects.requireNonNull(stdin, "stdin");
    Objects.requireNonNull(interruptStdin, "interruptStdin");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LaunchPlan p
        && args.equals(p.args)
        && envSet.equals(p.envSet)
        && files.equals(p.files)
        && sameBytes(stdin, p.stdin)
        && keepStdinOpen == p.keepStdinOpen
        && sameBytes(interruptStdin, p.interruptStdin);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        args,
        envSet,
        files,
        stdin.map(Arrays::hashCode).orElse(0),
        keepStdinOpen,
        interruptStdin.map(Arrays::hashCode).orElse(0));
  }

  @Override
  public String toString() {
    return "LaunchPlan[args="
        + args.size()
        + ", env="
        + envSet.stream().map(EnvVar::name).toList()
        + ", files="
        + files.stream().map(DriverFile::name).toList()
        + ", stdinBytes="
        + stdin.map(b -> b.length).orElse(0)
        + ", keepStdinOpen="
        + keepStdinOpen
        + ", interruptStdin="
        + interruptStdin.isPresent()
        + "]";
  }

  private static boolean sameBytes(Optional<byte[]> a, Optional<byte[]> b) {
    return a.isPresent() == b.isPresent() && (a.isEmpty() || Arrays.equals(a.get(), b.get()));
  }
}
