package io.capsule.bench.runtime;

import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
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
 * Heap per idle parked run: {@code runs} runs in one ActorSystem, each with a live harness that
 * printed one line and waits ({@link ParkDriver}). The score is the time to park them all (spawn
 * rate); the figure to read is the {@code heap per parked run} line the teardown prints: used heap
 * after full GCs with every run parked, minus the same before the first, divided by {@code runs}.
 * The teardown also prints the JVM's resident-set growth per run and its thread count (thread
 * stacks and other native memory the heap figure misses; the harness processes are not in it), then
 * cancels every run and fails the benchmark unless each run finished exactly once, canceled, and no
 * harness process remains.
 *
 * <p>Each live harness holds two threads of {@code capsule.harness-io-dispatcher} (2,048 in
 * runtime-actors' reference.conf), so 1,000 parked runs need 2,000 of them. That pool is a
 * thread-pool executor whose core size is its cap, so it starts a new thread for every task until
 * it holds 2,048, whether or not idle ones exist: expect the thread count near the cap even with
 * few runs parked.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
@Fork(1)
public class ParkedRunsBench {

  /** How long parking, cancelling or reaping may take on a loaded 2-core machine. */
  private static final long SLOW_SECONDS = 300;

  /**
   * Runs starting at once. A thousand started in one burst queue their driver calls, version probes
   * and plan work on the 32-thread blocking dispatcher, and under load a trivial {@code launch}
   * then overruns its 30 s call deadline (E-RUN-034, seen at load 60–160): the deadline counts the
   * queueing. A host ramps up; this measures parked runs, not burst admission.
   */
  private static final int START_WINDOW = 32;

  /** Full collections before reading the heap: later ones free what finalization left. */
  private static final int GCS = 4;

  @Param({"1000"})
  public int runs;

  private BenchRuntime rt;
  private CapsuleRef capsule;
  private ActorRef<RunEvent> listener;
  private volatile CountDownLatch parked;
  private volatile CountDownLatch ended;
  private final Map<String, Integer> finished = new ConcurrentHashMap<>();

  /** Per run, the last event heard: where a run that never parks got stuck. */
  private final Map<String, String> lastEvent = new ConcurrentHashMap<>();

  private final Set<String> parkedRuns = ConcurrentHashMap.newKeySet();
  private boolean checked;
  private final Semaphore starting = new Semaphore(START_WINDOW);
  private final List<RunHandle> handles = new ArrayList<>();
  private long heapBefore;
  private long rssBefore;
  private int threadsBefore;

  @Setup(Level.Iteration)
  public void setUp() {
    rt = BenchRuntime.start("parked");
    capsule = rt.register("park", ParkDriver::new);
    parked = new CountDownLatch(1);
    ended = new CountDownLatch(1);
    listener = rt.system.systemActorOf(listen(), "bench-listener", Props.empty());
    // One run parked and cancelled first, so classes, pools and caches are not counted per run.
    starting.acquireUninterruptibly();
    RunHandle first = rt.runtime.start(RunRequest.of("warm", capsule, "park"), listener);
    await(parked, "the warm-up run to park");
    first.cancel();
    await(ended, "the warm-up run to finish");
    finished.clear();
    lastEvent.clear();
    parkedRuns.clear();
    parked = new CountDownLatch(runs);
    ended = new CountDownLatch(runs);
    heapBefore = Memory.usedHeapAfterGc(GCS);
    rssBefore = Memory.residentBytes();
    threadsBefore = Memory.liveThreads();
  }

  @Benchmark
  public int parkAll() throws InterruptedException {
    try {
      for (int i = 0; i < runs; i++) {
        if (!starting.tryAcquire(SLOW_SECONDS, TimeUnit.SECONDS)) {
          throw new IllegalStateException("timed out waiting for a place to start run " + i);
        }
        handles.add(rt.runtime.start(RunRequest.of("park-" + i, capsule, "park"), listener));
      }
      await(parked, runs + " runs to park");
    } catch (IllegalStateException stuck) {
      // JMH skips the teardown of a failed iteration: cancel here, or the harnesses (each in its
      // own session) outlive the forked JVM.
      for (RunHandle h : handles) {
        if (!parkedRuns.contains(h.taskId())) {
          System.out.printf(
              "%nnot parked: %s, last event: %s", h.taskId(), lastEvent.get(h.taskId()));
        }
      }
      try {
        cancelAndCheck();
      } catch (RuntimeException e) {
        stuck.addSuppressed(e);
      }
      throw stuck;
    }
    return handles.size();
  }

  @TearDown(Level.Iteration)
  public void cancelAndCheck() {
    if (checked) {
      return;
    }
    checked = true;
    long heap = Memory.usedHeapAfterGc(GCS) - heapBefore;
    long rss = Memory.residentBytes() - rssBefore;
    long harnesses = ProcessHandle.current().descendants().count();
    System.out.printf(
        "%nheap per parked run: %,d B (%,d B over %d runs); JVM RSS per run: %,d B;"
            + " JVM threads: %d before, %d parked; live child processes: %d%n",
        heap / runs, heap, runs, rss / runs, threadsBefore, Memory.liveThreads(), harnesses);
    List<ProcessHandle> children = ProcessHandle.current().descendants().toList();
    handles.forEach(RunHandle::cancel);
    Map<String, Integer> failureTypes = new TreeMap<>();
    long once;
    long left;
    try {
      for (RunHandle h : handles) {
        RunOutcome o =
            h.outcome().toCompletableFuture().orTimeout(SLOW_SECONDS, TimeUnit.SECONDS).join();
        failureTypes.merge(o.status().wire() + "/" + o.failureType().orElse("-"), 1, Integer::sum);
      }
      // Finished reaches the listener through the relay after the outcome: wait for the last one.
      await(ended, "every run's Finished");
      once = finished.values().stream().filter(n -> n == 1).count();
      // Strict: an outcome is reported only after its harness's process group is gone, so no
      // harness may still be alive once every outcome is in (no grace period).
      left = children.stream().filter(ProcessHandle::isAlive).count();
      System.out.printf(
          "outcomes: %s; runs finished exactly once: %d of %d; harness processes left: %d%n",
          failureTypes, once, runs, left);
    } finally {
      rt.close(); // stops every run's actors, which kill any harness group still there
    }
    boolean allCanceled = Map.of("failed/canceled", runs).equals(failureTypes);
    if (!allCanceled || once != runs || finished.size() != runs || left != 0) {
      throw new IllegalStateException("not every parked run ended cleanly (see the line above)");
    }
  }

  private Behavior<RunEvent> listen() {
    return Behaviors.receiveMessage(
        e -> {
          lastEvent.put(
              e.taskId(),
              e instanceof RunEvent.StateChanged c ? "state " + c.phase().wire() : e.toString());
          if (e instanceof RunEvent.Note n && ParkDriver.PARKED.equals(n.text())) {
            parkedRuns.add(e.taskId());
            parked.countDown();
            starting.release();
          } else if (e instanceof RunEvent.Finished) {
            if (!parkedRuns.contains(e.taskId())) {
              starting.release(); // ended before parking: its place in the window is free
            }
            finished.merge(e.taskId(), 1, Integer::sum);
            ended.countDown();
          }
          return Behaviors.same();
        });
  }

  private static void await(CountDownLatch latch, String what) {
    try {
      if (!latch.await(SLOW_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException(
            "timed out waiting for " + what + " (" + latch.getCount() + " missing)");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
