package io.capsule.hub.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.config.diag.Code;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.hub.store.HubJournal.Direction;
import io.capsule.hub.store.HubJournal.Entry;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.frame.UsageSplit;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The hub journal's file: round trips, a torn last write, corruption, the lock. */
public class FileHubJournalTest {
  private static final RunnerKey RUNNER = new RunnerKey("p", "r-1");
  private static final FrameCodec CODEC = FrameCodec.shared();

  @TempDir Path dir;

  public static List<Entry> history() {
    TaskAssign assign =
        new TaskAssign(
                TaskSpec.builder("T-1", "feature", "Say hello").iterations(1).build(),
                "agent",
                Invocation.builder("capsule:hello").build())
            .withSeq(1);
    TaskProgress text =
        new TaskProgress("T-1", "text", JsonNodeFactory.instance.objectNode().put("delta", "hé\n"))
            .withSeq(1);
    TaskCancel cancel = new TaskCancel("T-1", "operator").withSeq(2);
    TaskReport report =
        new TaskReport(
                TaskReportBody.builder("T-1", "failed", new UsageSplit(1, 2, 3, 4, 5))
                    .failureType("canceled")
                    .build())
            .withSeq(2);
    return List.of(
        new Entry(RUNNER, Direction.SENT, assign),
        new Entry(RUNNER, Direction.APPLIED, text),
        new Entry(RUNNER, Direction.SENT, cancel),
        new Entry(RUNNER, Direction.APPLIED, report));
  }

  private static void assertSameEntries(List<Entry> expected, List<Entry> actual) {
    assertEquals(expected.size(), actual.size());
    for (int i = 0; i < expected.size(); i++) {
      assertEquals(expected.get(i).runner(), actual.get(i).runner());
      assertEquals(expected.get(i).direction(), actual.get(i).direction());
      assertArrayEquals(
          CODEC.encode(expected.get(i).frame()), CODEC.encode(actual.get(i).frame()), "entry " + i);
    }
  }

  @Test
  void entriesWrittenByOneHubAreReadBackByTheNextFrameForFrame() {
    try (FileHubJournal j = FileHubJournal.open(dir, false)) {
      assertTrue(j.recorded().isEmpty());
      history().forEach(j::append);
    }
    try (FileHubJournal j = FileHubJournal.open(dir, true)) {
      assertSameEntries(history(), j.recorded());
      assertEquals(0, j.droppedTornBytes());
    }
  }

  @Test
  void unknownFieldsOfARecordedFrameSurviveTheJournal() throws Exception {
    String wire =
        "{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\"T-1\",\"seq\":1,"
            + "\"kind\":\"text\",\"payload\":{\"n\":1.50},\"x_future\":[1,2]}";
    SequencedFrame f = (SequencedFrame) CODEC.decode(wire, false);
    try (FileHubJournal j = FileHubJournal.open(dir, false)) {
      j.append(new Entry(RUNNER, Direction.APPLIED, f));
    }
    try (FileHubJournal j = FileHubJournal.open(dir, false)) {
      assertEquals(wire, CODEC.encodeToString(j.recorded().get(0).frame()));
    }
  }

  @Test
  void aTornLastLineIsDroppedAndTheJournalGoesOnFromTheLastWholeEntry() throws Exception {
    try (FileHubJournal j = FileHubJournal.open(dir, false)) {
      history().subList(0, 2).forEach(j::append);
    }
    byte[] whole = FileHubJournal.encode(history().get(2));
    Files.write(
        dir.resolve(FileHubJournal.FILE),
        java.util.Arrays.copyOf(whole, whole.length / 2), // killed in the middle of a write
        StandardOpenOption.APPEND);
    try (FileHubJournal j = FileHubJournal.open(dir, false)) {
      assertSameEntries(history().subList(0, 2), j.recorded());
      assertEquals(whole.length / 2, j.droppedTornBytes());
      history().subList(2, 4).forEach(j::append);
    }
    try (FileHubJournal j = FileHubJournal.open(dir, false)) {
      assertSameEntries(history(), j.recorded());
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "not json",
        "{\"v\":2,\"project\":\"p\",\"runner\":\"r\",\"dir\":\"sent\",\"frame\":{}}",
        "{\"v\":1,\"project\":\"\",\"runner\":\"r\",\"dir\":\"sent\",\"frame\":{}}",
        "{\"v\":1,\"project\":\"p\",\"runner\":\"r\",\"dir\":\"sideways\",\"frame\":{}}",
        "{\"v\":1,\"project\":\"p\",\"runner\":\"r\",\"dir\":\"sent\",\"frame\":{\"type\":1}}",
        "{\"v\":1,\"project\":\"p\",\"runner\":\"r\",\"dir\":\"sent\",\"frame\":{\"type\":"
            + "\"task.progress\",\"schema_version\":1,\"task_id\":\"T\",\"seq\":1,"
            + "\"kind\":\"text\",\"payload\":{}}}",
        "{\"v\":1,\"project\":\"p\",\"runner\":\"r\",\"dir\":\"applied\",\"frame\":{\"type\":"
            + "\"task.cancel\",\"schema_version\":1,\"task_id\":\"T\",\"seq\":1}}",
      })
  void anUnreadableLineBeforeTheEndRefusesTheJournalWithItsLineNumber(String bad) throws Exception {
    try (FileHubJournal j = FileHubJournal.open(dir, false)) {
      j.append(history().get(0));
    }
    Files.write(
        dir.resolve(FileHubJournal.FILE),
        (bad + "\n").getBytes(StandardCharsets.UTF_8),
        StandardOpenOption.APPEND);
    Files.write( // a whole entry after it: the bad line is not a torn last write
        dir.resolve(FileHubJournal.FILE),
        FileHubJournal.encode(history().get(1)),
        StandardOpenOption.APPEND);
    ProtocolException e =
        assertThrows(ProtocolException.class, () -> FileHubJournal.open(dir, false));
    assertEquals(Code.E_PRO_010, e.diagnostic().code());
    assertTrue(e.getMessage().contains("line 2"), e.getMessage());
    assertTrue(e.diagnostic().hint().contains("--state-dir"), e.diagnostic().hint());
  }

  @Test
  void aSecondHubOnTheSameDirectoryIsRefusedUntilTheFirstCloses() {
    FileHubJournal first = FileHubJournal.open(dir, false);
    ProtocolException e =
        assertThrows(ProtocolException.class, () -> FileHubJournal.open(dir, false));
    assertEquals(Code.E_PRO_010, e.diagnostic().code());
    assertTrue(e.getMessage().contains("in use by another hub"), e.getMessage());
    first.close();
    FileHubJournal.open(dir, false).close();
  }

  @Test
  void aClosedJournalRefusesEntriesWithItsCode() {
    FileHubJournal j = FileHubJournal.open(dir, false);
    j.close();
    j.close(); // idempotent
    ProtocolException e = assertThrows(ProtocolException.class, () -> j.append(history().get(0)));
    assertEquals(Code.E_PRO_010, e.diagnostic().code());
  }

  @Test
  void anUnusableDirectoryIsRefusedWithItsCode() throws Exception {
    Path file = Files.writeString(dir.resolve("a-file"), "x");
    ProtocolException e =
        assertThrows(ProtocolException.class, () -> FileHubJournal.open(file, false));
    assertEquals(Code.E_PRO_010, e.diagnostic().code());
    assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
  }
}
