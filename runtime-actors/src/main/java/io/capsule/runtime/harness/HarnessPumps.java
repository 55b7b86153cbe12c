package io.capsule.runtime.harness;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.UniqueKillSwitch;

/**
 * The two pumps of a running harness ({@link HarnessStreams}): stdout as framed line batches and
 * stderr as chunks, each handed on through a delivery that completes when its receiver acknowledged
 * it (the back-pressure), each ending with a stage and stoppable by {@link #shutdown()}.
 *
 * <p>Stdout is read by a Pekko stream (pipe reads on the blocking dispatcher named by {@link
 * HarnessLimits#ioDispatcher()}) that frames lines and batches whatever is ready (at most {@code
 * batchMaxLines}); while {@code batchesInFlight} batches are unacknowledged the stream stops
 * reading, so the pipe fills and the harness blocks in its write.
 *
 * <p>Leader exit: when the harness (the group's leader) exits, the JDK takes what the stdout pipe
 * holds and closes it, unless a read is in progress at that moment. So output that orphaned
 * children write after the leader's exit may be lost, and the end of stdout usually follows the
 * exit soon; the orphans are killed with the group.
 *
 * <p>Threading: the deliveries are called on stream threads and must only {@code tell}. The pumps
 * run on the system's materializer, not on one bound to the owning actor: a pipe read blocked until
 * the group dies would otherwise hold up the actor's stop, and with it the kill that ends the read.
 */
final class HarnessPumps {

  private static final int STDOUT_CHUNK = 64 * 1024;
  private static final int STDERR_CHUNK = 4 * 1024;

  private final UniqueKillSwitch stdout;
  private final UniqueKillSwitch stderr;
  private final CompletionStage<Long> stdoutEnded;
  private final CompletionStage<Done> stdoutDone;
  private final CompletionStage<Done> stderrDone;

  private HarnessPumps(
      HarnessStreams.Stdout out, Pair<UniqueKillSwitch, CompletionStage<Done>> err) {
    this.stdout = out.kill();
    this.stdoutEnded = out.ended();
    this.stdoutDone = out.done();
    this.stderr = err.first();
    this.stderrDone = err.second();
  }

  static HarnessPumps start(
      Process process,
      HarnessLimits limits,
      Materializer materializer,
      Function<List<LineFramer.Line>, CompletionStage<Done>> lines,
      Function<byte[], CompletionStage<Done>> chunks) {
    return new HarnessPumps(
        HarnessStreams.stdout(process, limits, STDOUT_CHUNK, lines).run(materializer),
        HarnessStreams.stderr(process, limits, STDERR_CHUNK, chunks).run(materializer));
  }

  /**
   * Completes at stdout's EOF once every batch is on its way to the delivery, with their number
   * (the delivery may not have been called for the last ones yet); fails when reading failed or the
   * pump was stopped first. See {@link HarnessStreams.Stdout}.
   */
  CompletionStage<Long> stdoutEnded() {
    return stdoutEnded;
  }

  /**
   * Completes at stdout's EOF, every batch delivered and acknowledged; fails when reading failed.
   */
  CompletionStage<Done> stdoutDone() {
    return stdoutDone;
  }

  /** Completes when stderr ended, however it ended. */
  CompletionStage<Done> stderrDone() {
    return stderrDone;
  }

  /** Stops both pumps; idempotent. */
  void shutdown() {
    stdout.shutdown();
    stderr.shutdown();
  }
}
