package io.capsule.runtime.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * What the harness writes, as the listener of {@link HarnessProcess} sees it. Each stdout batch
 * becomes a {@link HarnessProcess.LineCut} per cut line and one {@link HarnessProcess.Lines}, and
 * stays unacknowledged until the listener's {@link HarnessProcess.BatchHandled}: one batch in
 * flight, so the pump waits, the pipe fills and the harness blocks in its write, and nothing is
 * buffered without bound. Stderr chunks go into the bounded {@link StderrTail} and are acknowledged
 * at once.
 *
 * <p>Confined to the owning actor's thread; the acknowledgements complete the pumps' futures.
 */
final class HarnessOutput {

  private final ActorRef<HarnessProcess.Event> listener;
  private final int lineCapBytes;
  private final StderrTail stderr;
  private CompletableFuture<Done> pendingAck;
  private boolean stdoutEnded;

  HarnessOutput(ActorRef<HarnessProcess.Event> listener, HarnessLimits limits) {
    this.listener = listener;
    this.lineCapBytes = limits.lineCapBytes();
    this.stderr = new StderrTail(limits.stderrTailBytes());
  }

  void onStdoutBatch(List<LineFramer.Line> lines, CompletableFuture<Done> ack) {
    pendingAck = ack;
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
  }

  /** The listener handled the last batch: the pump may deliver the next. */
  void batchHandled() {
    if (pendingAck != null) {
      CompletableFuture<Done> done = pendingAck;
      pendingAck = null;
      done.complete(Done.getInstance());
    }
  }

  void onStdoutEnded() {
    stdoutEnded = true;
    listener.tell(new HarnessProcess.StdoutEnded());
  }

  boolean stdoutEnded() {
    return stdoutEnded;
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
