package io.capsule.bench.protocol;

import io.capsule.hub.runner.RunnerKey;
import io.capsule.hub.store.FileHubJournal;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.TaskProgress;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the hub journal ({@code capsule hub --state-dir}) costs per applied frame: one {@link
 * FileHubJournal#append} of a realistic {@code task.progress} frame, beside encoding the same frame
 * once ({@link FrameCodec#encode}, work the hub does for every frame anyway) in the same run, so
 * the ratio is the journal's price in units of "one more encode". {@code sync}: {@code false} is
 * the default (one {@code write}, survives a killed process), {@code true} is {@code --fsync} (a
 * disk flush per frame, survives a machine crash).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class HubJournalBench {

  @Param({"tool", "text"})
  public String kind;

  @Param({"false", "true"})
  public boolean sync;

  private final FrameCodec codec = FrameCodec.shared();
  private final RunnerKey runner = new RunnerKey("project", "runner-1");
  private TaskProgress frame;
  private HubJournal.Entry entry;
  private Path dir;
  private FileHubJournal journal;

  @Setup(Level.Iteration)
  public void open() throws IOException {
    String wire = kind.equals("tool") ? ProtocolBench.TOOL : ProtocolBench.TEXT;
    frame = (TaskProgress) codec.decode(wire.getBytes(StandardCharsets.UTF_8), false);
    entry = new HubJournal.Entry(runner, HubJournal.Direction.APPLIED, frame);
    dir = Files.createTempDirectory("hub-journal-bench");
    journal = FileHubJournal.open(dir, sync);
  }

  @TearDown(Level.Iteration)
  public void close() throws IOException {
    journal.close();
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  @Benchmark
  public byte[] encodeOnce() {
    return codec.encode(frame);
  }

  @Benchmark
  public HubJournal.Entry append() {
    journal.append(entry);
    return entry;
  }
}
