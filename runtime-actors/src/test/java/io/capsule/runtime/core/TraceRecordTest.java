package io.capsule.runtime.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TraceRecordTest {

  @Test
  void fieldsKeepTheOrderTheyWereAddedIn() {
    TraceRecord r = TraceRecord.of("tool_call").with("turn", 2).with("name", "ls").with("id", "c1");
    assertEquals(List.of("turn", "name", "id"), new ArrayList<>(r.fields().keySet()));
    assertEquals(List.of(2, "ls", "c1"), new ArrayList<>(r.fields().values()));
  }

  @Test
  void extendingARecordLeavesItAsItWas() {
    TraceRecord base = TraceRecord.of("note").with("a", 1);
    TraceRecord longer = base.with("b", 2);
    assertEquals(Map.of("a", 1), base.fields());
    assertEquals(1, base.size());
    assertEquals(Map.of("a", 1, "b", 2), longer.fields());
  }

  @Test
  void twoRecordsExtendedFromOneBaseDoNotSeeEachOthersFields() {
    TraceRecord base = TraceRecord.of("note").with("a", 1);
    TraceRecord first = base.with("b", 2);
    TraceRecord second = base.with("c", 3);
    TraceRecord firstMore = first.with("d", 4);
    assertEquals(List.of("a", "b"), new ArrayList<>(first.fields().keySet()));
    assertEquals(List.of("a", "c"), new ArrayList<>(second.fields().keySet()));
    assertEquals(List.of("a", "b", "d"), new ArrayList<>(firstMore.fields().keySet()));
    assertEquals(3, second.fields().get("c"));
    assertNull(second.fields().get("b"));
  }

  @Test
  void aKeyAddedAgainReplacesItsValueInPlaceAndTheOriginalKeepsItsValue() {
    TraceRecord r = TraceRecord.of("note").with("a", 1).with("b", 2);
    TraceRecord again = r.with("a", 9);
    assertEquals(List.of("a", "b"), new ArrayList<>(again.fields().keySet()));
    assertEquals(9, again.fields().get("a"));
    assertEquals(1, r.fields().get("a"));
  }

  @Test
  void aChainLongerThanTheFirstRoomKeepsEveryField() {
    TraceRecord r = TraceRecord.of("harness_start");
    List<TraceRecord> steps = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      r = r.with("k" + i, i);
      steps.add(r);
    }
    for (int i = 0; i < 40; i++) {
      assertEquals(i + 1, steps.get(i).fields().size());
      assertEquals(i, steps.get(i).fields().get("k" + i));
    }
  }

  @Test
  void aNullValueIsKeptAsAFieldAndNotMissing() {
    TraceRecord r = TraceRecord.of("inference").with("first_tool", null);
    assertTrue(r.fields().containsKey("first_tool"));
    assertNull(r.fields().get("first_tool"));
    assertFalse(r.fields().containsKey("other"));
  }

  @Test
  void recordsAreEqualByTypeAndFieldsHoweverTheyWereBuilt() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("a", 1);
    m.put("b", null);
    TraceRecord built = TraceRecord.of("x").with("a", 1).with("b", null);
    TraceRecord fromMap = new TraceRecord("x", m);
    assertEquals(fromMap, built);
    assertEquals(fromMap.hashCode(), built.hashCode());
    assertEquals(m, built.fields());
    assertEquals(m.toString(), built.fields().toString());
    assertNotEquals(built, TraceRecord.of("y").with("a", 1).with("b", null));
  }

  @Test
  void aRecordMadeFromAMapDoesNotChangeWhenTheMapDoes() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("a", 1);
    TraceRecord r = new TraceRecord("x", m);
    m.put("b", 2);
    assertEquals(Map.of("a", 1), r.fields());
  }

  @Test
  void theFieldsCannotBeChanged() {
    TraceRecord r = TraceRecord.of("x").with("a", 1);
    assertThrows(UnsupportedOperationException.class, () -> r.fields().put("b", 2));
    assertThrows(UnsupportedOperationException.class, () -> r.fields().remove("a"));
    assertThrows(UnsupportedOperationException.class, () -> r.fields().clear());
  }

  @Test
  void threadsExtendingOneSharedRecordEachGetTheirOwnFields() throws Exception {
    TraceRecord shared = TraceRecord.of("note").with("a", 0);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<List<TraceRecord>>> results = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int thread = t;
        results.add(
            pool.submit(
                () -> {
                  go.await();
                  List<TraceRecord> mine = new ArrayList<>();
                  for (int i = 0; i < 2_000; i++) {
                    mine.add(shared.with("t", thread).with("i", i));
                  }
                  return mine;
                }));
      }
      go.countDown();
      for (int t = 0; t < 4; t++) {
        List<TraceRecord> mine = results.get(t).get(30, TimeUnit.SECONDS);
        for (int i = 0; i < mine.size(); i++) {
          Map<String, Object> expected = new LinkedHashMap<>();
          expected.put("a", 0);
          expected.put("t", t);
          expected.put("i", i);
          assertEquals(expected, mine.get(i).fields());
        }
      }
      assertEquals(Map.of("a", 0), shared.fields());
    } finally {
      pool.shutdownNow();
    }
  }
}
