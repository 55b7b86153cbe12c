package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When the plan's files directory goes: as soon as the harness's group is gone, not only once the
 * outcome is decided, so its removal is off the way to the report. Real processes ({@code
 * play.sh}).
 */
class RunFilesRemovalTest {

  /**
   * How long the driver's classification waits for the files directory to go. Before the removal
   * started at the harness's exit, it only went after the outcome, which waits for this call: the
   * wait ran to its end and saw the directory still there.
   */
  private static final Duration FILES_GONE_BOUND = Duration.ofSeconds(10);

  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  /**
   * {@link PlayDriver} whose {@code classify-exit} first waits (bounded) for every files directory
   * under the work root to be removed, and records the ones still there.
   */
  private record WaitsForFilesGone(
      ProcessDriver inner, Path workRoot, AtomicReference<List<Path>> left)
      implements ForwardingDriver {

    @Override
    public Event classifyExit(ExitStatus exit) {
      left.set(filesDirsAfterWaiting(workRoot));
      return inner.classifyExit(exit);
    }
  }

  @Test
  void theFilesDirectoryIsRemovedOnceTheHarnessExitedBeforeTheDriverClassifiesTheExit(
      @TempDir Path root) {
    RunFixture fx = new RunFixture(kit, RunFixture.limits(root));
    AtomicReference<List<Path>> left = new AtomicReference<>();
    CapsuleRef ref =
        fx.scenario(
            List.of("{\"type\":\"text\",\"value\":\"partial\"}", "!exit 0"),
            InterruptMethod.SIGNAL_INT,
            false,
            b -> b,
            play -> new WaitsForFilesGone(play, root, left));
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(fx.request(ref, "t"), probe.ref());

    List<RunEvent> events = RunFixture.events(probe, FILES_GONE_BOUND.multipliedBy(2));
    assertEquals(RunStatus.DONE, RunFixture.outcome(events).status(), "classified as turn-end");
    assertEquals(List.of(), left.get(), "files directories at the driver's classification");
    fx.assertNoFilesDirLeft();
  }

  /** The files-* directories under {@code root} once each is gone or the bound has passed. */
  private static List<Path> filesDirsAfterWaiting(Path root) {
    long deadline = System.nanoTime() + FILES_GONE_BOUND.toNanos();
    try (WatchService watch = FileSystems.getDefault().newWatchService()) {
      for (Path dir : filesDirs(root)) {
        dir.getParent().register(watch, StandardWatchEventKinds.ENTRY_DELETE);
      }
      // Registered before this look, so a removal in between still wakes the wait below.
      List<Path> left = filesDirs(root);
      while (!left.isEmpty()) {
        long wait = deadline - System.nanoTime();
        WatchKey key = wait <= 0 ? null : watch.poll(wait, TimeUnit.NANOSECONDS);
        if (key == null) {
          return filesDirs(root);
        }
        key.pollEvents();
        key.reset();
        left = filesDirs(root);
      }
      return left;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return filesDirs(root);
    }
  }

  /** The files-* directories in the run directories under {@code root}. */
  private static List<Path> filesDirs(Path root) {
    List<Path> found = new ArrayList<>();
    try (DirectoryStream<Path> runs = Files.newDirectoryStream(root, Files::isDirectory)) {
      for (Path run : runs) {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(run, "files-*")) {
          files.forEach(found::add);
        } catch (NoSuchFileException gone) {
          // A run directory removed meanwhile holds nothing.
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found;
  }
}
