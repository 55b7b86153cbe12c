package io.capsule.protocol.seq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A runner streams 10,000 frames over five tasks through a wire that drops, duplicates and
 * reorders; it reconnects at random (the wire loses everything in flight), resumes from the hub's
 * ack and replays. Whatever the seed, the hub applies every frame exactly once and in order.
 */
class SeqStatePropertyTest {
  private static final int FRAMES = 10_000;
  private static final int TASKS = 5;

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 42, 20261129})
  void everyFrameIsAppliedExactlyOnceInOrderDespiteDropsDuplicatesAndReordering(long seed) {
    Random rnd = new Random(seed);
    SeqState runner = new SeqState(FRAMES, 8, 100);
    SeqState hub = new SeqState(FRAMES, 8, 100);
    LinkedList<SequencedFrame> wire = new LinkedList<>();
    Map<String, List<Long>> applied = new HashMap<>();
    int perTask = FRAMES / TASKS;
    int[] emitted = new int[TASKS];
    int total = 0;
    int reconnects = 0;

    while (total < FRAMES) {
      int t = rnd.nextInt(TASKS);
      if (emitted[t] == perTask) {
        continue;
      }
      String task = "T-" + t;
      emitted[t]++;
      total++;
      SequencedFrame f =
          emitted[t] == perTask
              ? runner.emit(
                  new TaskReport(TaskReportBody.builder(task, "done", UsageSplit.ZERO).build()))
              : runner.emit(new TaskProgress(task, "note", null));
      send(wire, f, rnd);
      deliverSome(wire, hub, applied, rnd);
      if (rnd.nextInt(100) < 3) { // the hub acks now and then
        runner.ack(hub.takeAckMap());
      }
      if (rnd.nextInt(1000) < 5) { // the connection drops: in-flight frames are lost
        wire.clear();
        reconnects++;
        Map<String, Long> acks = hub.takeAckMap();
        runner.ack(acks);
        for (SequencedFrame r : runner.replayListFor(acks)) {
          send(wire, r, rnd);
        }
      }
    }
    // Drain: reconnect until the runner holds nothing (bounded, so a livelock fails the test).
    for (int round = 0; round < 1_000 && runner.buffered() > 0; round++) {
      deliverSome(wire, hub, applied, rnd);
      wire.clear();
      Map<String, Long> acks = hub.takeAckMap();
      runner.ack(acks);
      for (SequencedFrame r : runner.replayListFor(acks)) {
        send(wire, r, rnd);
      }
      while (!wire.isEmpty()) {
        deliverSome(wire, hub, applied, rnd);
      }
      runner.ack(hub.takeAckMap());
    }

    assertEquals(0, runner.buffered(), "every frame acked");
    assertTrue(reconnects > 0, "the seed exercised reconnects");
    assertEquals(TASKS, applied.size());
    for (List<Long> seqs : applied.values()) {
      List<Long> expected = new ArrayList<>();
      for (long s = 1; s <= perTask; s++) {
        expected.add(s);
      }
      assertEquals(expected, seqs);
    }
    for (int t = 0; t < TASKS; t++) {
      assertTrue(hub.isFinished("T-" + t));
      assertTrue(runner.isFinished("T-" + t));
    }
  }

  /** 10 % dropped, 10 % sent twice, 20 % overtake the frame before them. */
  private static void send(LinkedList<SequencedFrame> wire, SequencedFrame f, Random rnd) {
    int roll = rnd.nextInt(100);
    if (roll < 10) {
      return;
    }
    int copies = roll < 20 ? 2 : 1;
    for (int i = 0; i < copies; i++) {
      if (!wire.isEmpty() && rnd.nextInt(100) < 20) {
        wire.add(wire.size() - 1, f);
      } else {
        wire.addLast(f);
      }
    }
  }

  private static void deliverSome(
      LinkedList<SequencedFrame> wire, SeqState hub, Map<String, List<Long>> applied, Random rnd) {
    int n = rnd.nextInt(4);
    for (int i = 0; i < n && !wire.isEmpty(); i++) {
      Receipt r = hub.receive(wire.removeFirst());
      for (SequencedFrame a : r.applied()) {
        applied.computeIfAbsent(a.taskId(), k -> new ArrayList<>()).add(a.seq());
      }
    }
  }
}
