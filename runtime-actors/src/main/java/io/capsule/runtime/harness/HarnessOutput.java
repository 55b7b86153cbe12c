package io.capsule.runtime.harness;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * What the harness writes, as the listener of {@link HarnessProcess} sees it. Each stdout batch
 * becomes a {@link HarnessProcess.LineCut} per cut line and one {@link HarnessProcess.Lines}, and
 * stays unacknowledged until the listener's {@link HarnessProcess.BatchHandled}, which acknowledges
 * the oldest batch not yet acknowledged. The pump delivers at most {@link
 * HarnessLimits#batchesInFlight()} unacknowledged batches, then waits: the pipe fills and the
 * harness blocks in its write, and nothing is buffered without bound. Stderr chunks go into the
 * bounded {@link StderrTail} and are acknowledged at once.
 *
 * <p>Confined to the owning actor's thread; the acknowledgements complete the pumps' futures.
 */
final class HarnessOutput {

  private final ActorRef<HarnessProcess.Event> listener;
  private final int lineCapBytes;
  private final StderrTail stderr;
  // Oldest first; at most batchesInFlight long, since the pump waits for the oldest beyond that.
  private final Deque<CompletableFuture<Done>> pendingAcks = new ArrayDeque<>();
  private long batchesReceived;
  private long endsAfter = -1; // the pump's batch count at stdout's EOF, once it told it
  private boolean stdoutEnded;

  HarnessOutput(ActorRef<HarnessProcess.Event> listener, HarnessLimits limits) {
    this.listener = listener;
    this.lineCapBytes = limits.lineCapBytes();
    this.stderr = new StderrTail(limits.stderrTailBytes());
  }

  void onStdoutBatch(List<LineFramer.Line> lines, CompletableFuture<Done> ack) {
    pendingAcks.addLast(ack);
    List<String> texts = new ArrayList<>(lines.size());
    for (LineFramer.Line line : lines) {
      if (line.isCut()) {
        listener.tell(
            new HarnessProcess.LineCut(
                "stdout line of "
                    + line.originalBytes()
                    + " bytes cut at the line cap of "
                    + lineCapBytes
                    + " bytes"));
      }
      texts.add(line.text());
    }
    listener.tell(new HarnessProcess.Lines(texts));
    batchesReceived++;
    if (endsAfter >= 0 && batchesReceived >= endsAfter) {
      end();
    }
  }

  /**
   * The listener handled a batch: the oldest unacknowledged one (the listener handles them in the
   * order they came), so the pump may deliver one more. An acknowledgement with none pending is
   * ignored.
   */
  void batchHandled() {
    CompletableFuture<Done> oldest = pendingAcks.pollFirst();
    if (oldest != null) {
      oldest.complete(Done.getInstance());
    }
  }

  /**
   * stdout reached EOF after the pump sent {@code batches} batches on: {@link
   * HarnessProcess.StdoutEnded} goes to the listener once that many have come (now, or with the
   * last of them), before they are acknowledged: the listener may end the run while it handles
   * them.
   */
  void onStdoutEof(long batches) {
    endsAfter = batches;
    if (batchesReceived >= endsAfter) {
      end();
    }
  }

  /**
   * The stdout pump finished (every batch acknowledged) or failed: stdout has ended, if not yet.
   */
  void onStdoutDone() {
    end();
  }

  private void end() {
    if (!stdoutEnded) {
      stdoutEnded = true;
      listener.tell(new HarnessProcess.StdoutEnded());
    }
  }

  void onStderrChunk(byte[] bytes, CompletableFuture<Done> ack) {
    stderr.append(bytes);
    ack.complete(Done.getInstance());
  }

  /** The last bytes of stderr, for {@link HarnessProcess.Exited}. */
  String stderrTail() {
    return stderr.render();
  }
}
