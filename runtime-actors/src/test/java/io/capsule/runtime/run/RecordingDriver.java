package io.capsule.runtime.run;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.ProcessDriver;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link PlayDriver} with the lines it is handed recorded (how many, the longest, the short ones
 * holding U+FFFD) and, when {@code stdinBytes > 0}, a plan whose stdin is that many bytes instead
 * of the task: for the harness fault matrix.
 */
record RecordingDriver(PlayDriver play, RecordingDriver.Lines lines, int stdinBytes)
    implements ForwardingDriver {

  @Override
  public ProcessDriver inner() {
    return play;
  }

  /** The lines a driver was handed. Thread-safe: driver calls run on the blocking dispatcher. */
  static final class Lines {
    private final AtomicLong count = new AtomicLong();
    private final AtomicInteger longest = new AtomicInteger();
    private final ConcurrentLinkedQueue<String> replaced = new ConcurrentLinkedQueue<>();

    void saw(List<String> batch) {
      count.addAndGet(batch.size());
      for (String line : batch) {
        longest.accumulateAndGet(line.length(), Math::max);
        if (line.indexOf('\uFFFD') >= 0 && line.length() < 1024) {
          replaced.add(line);
        }
      }
    }

    long count() {
      return count.get();
    }

    int longest() {
      return longest.get();
    }

    /** The lines under 1 KiB that hold a replacement character. */
    List<String> replaced() {
      return List.copyOf(replaced);
    }
  }

  @Override
  public LaunchResult launch(LaunchRequest request) {
    LaunchResult r = play.launch(request);
    if (stdinBytes == 0 || !(r instanceof LaunchResult.Planned p)) {
      return r;
    }
    LaunchPlan plan = p.plan();
    byte[] big = new byte[stdinBytes];
    Arrays.fill(big, (byte) 'x');
    return new LaunchResult.Planned(
        new LaunchPlan(
            plan.args(),
            plan.envSet(),
            plan.files(),
            Optional.of(big),
            plan.keepStdinOpen(),
            plan.interruptStdin()));
  }

  @Override
  public List<Event> parse(List<String> batch) {
    lines.saw(batch);
    return play.parse(batch);
  }
}
