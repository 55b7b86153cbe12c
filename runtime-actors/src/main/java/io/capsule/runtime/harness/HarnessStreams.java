package io.capsule.runtime.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.ActorAttributes;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.UniqueKillSwitch;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.RunnableGraph;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.StreamConverters;
import org.apache.pekko.util.ByteString;

/**
 * The two pipe-reading streams of {@link HarnessProcess}. The blocking pipe read is its own async
 * island on the I/O dispatcher, so framing and batching never wait behind a blocked read. Each
 * graph materializes a kill switch (just before the sink, so a batch waiting for its
 * acknowledgement is cancelled too) and the completion of the stream.
 */
final class HarnessStreams {

  private HarnessStreams() {}

  /**
   * What the stdout graph materializes.
   *
   * @param kill stops the stream (placed just before the sink)
   * @param ended completes when stdout reached EOF and every batch was passed on towards {@code
   *     deliver}, with how many batches that makes (fails when reading failed or the stream was
   *     stopped first); unlike {@code done}, it does not wait for the last batches'
   *     acknowledgements
   * @param done completes when the stream has finished: every batch delivered and acknowledged
   */
  record Stdout(UniqueKillSwitch kill, CompletionStage<Long> ended, CompletionStage<Done> done) {}

  /**
   * stdout → {@link LineFramer} → batches of whatever is ready → {@code deliver}, at most {@link
   * HarnessLimits#batchesInFlight()} batches delivered and not yet acknowledged (a batch is
   * acknowledged when the stage returned for it completes; the stages complete in delivery order).
   * With more than one, the next batch is delivered while the listener still handles the one
   * before, so the pipe read and framing overlap the parse; past the limit the stream stops
   * reading.
   *
   * <p>A batch holds at most {@code batchMaxLines} lines and about two line caps of text ({@link
   * LineBatches}); the lines travel through the framing and batching stages a pipe read at a time,
   * cut into pieces that each fit a batch, not one element per line.
   *
   * <p>The end of stdout is told twice ({@link Stdout}): {@code ended} once the batches are all on
   * their way, with their count, so the owner can say "no more lines" as soon as it has received
   * that many, without waiting for the listener to handle the last ones (a few hops through the
   * actors and this stream at the end of every run); {@code done} once the stream has finished. The
   * count is taken where the batches leave for the delivery, not in it: a stage may see the end of
   * its input before the stage after it has taken the last element, so only the number sent on is
   * sure. Materialize the graph once (the count is the graph's).
   */
  static RunnableGraph<Stdout> stdout(
      Process process,
      HarnessLimits limits,
      int chunkSize,
      Function<List<LineFramer.Line>, CompletionStage<Done>> deliver) {
    LineBatches weights = new LineBatches(limits.batchMaxLines(), limits.lineCapBytes());
    AtomicLong sentOn = new AtomicLong();
    return pipe(process.getInputStream(), chunkSize, limits)
        .statefulMapConcat(
            () -> {
              LineFramer framer = new LineFramer(limits.lineCapBytes());
              return chunk -> weights.pieces(framer.feed(chunk.toArrayUnsafe()));
            })
        .batchWeighted(
            weights.max(),
            LineBatches.Piece::weight,
            piece -> new ArrayList<>(piece.lines()),
            (batch, piece) -> {
              batch.addAll(piece.lines());
              return batch;
            })
        .map(
            batch -> {
              sentOn.incrementAndGet();
              return batch;
            })
        .watchTermination((read, end) -> end.thenApply(d -> sentOn.get()))
        .mapAsync(limits.batchesInFlight(), deliver::apply)
        .viaMat(KillSwitches.single(), Keep.both())
        .toMat(Sink.ignore(), (ended, done) -> new Stdout(ended.second(), ended.first(), done));
  }

  /**
   * stderr → chunks conflated to the last {@code stderrTailBytes} while the actor is busy → {@code
   * deliver}, one at a time: a harness flooding stderr cannot flood the actor's mailbox.
   */
  static RunnableGraph<Pair<UniqueKillSwitch, CompletionStage<Done>>> stderr(
      Process process,
      HarnessLimits limits,
      int chunkSize,
      Function<byte[], CompletionStage<Done>> deliver) {
    // One byte more than the tail: the byte before the tail tells whether it starts mid-line.
    int keep = limits.stderrTailBytes() + 1;
    return pipe(process.getErrorStream(), chunkSize, limits)
        .conflate((older, newer) -> takeRight(older.concat(newer), keep))
        .mapAsync(1, chunk -> deliver.apply(chunk.toArray()))
        .viaMat(KillSwitches.single(), Keep.right())
        .toMat(Sink.ignore(), Keep.both());
  }

  private static Source<ByteString, ?> pipe(
      java.io.InputStream in, int chunkSize, HarnessLimits limits) {
    return StreamConverters.fromInputStream(() -> in, chunkSize)
        .addAttributes(ActorAttributes.dispatcher(limits.ioDispatcher()))
        .async();
  }

  private static ByteString takeRight(ByteString bytes, int n) {
    return bytes.size() <= n ? bytes : bytes.drop(bytes.size() - n);
  }
}
