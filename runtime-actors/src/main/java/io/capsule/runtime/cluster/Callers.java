package io.capsule.runtime.cluster;

import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;

/**
 * What a {@link RunEntity} knows of its callers: each one's attempt, the seq of its next message
 * (per caller and attempt, from 0), which may still have a start on its way (not {@link
 * RunEntity.Sealed}), and which have not confirmed their outcome ({@link RunEntity.Settled}).
 *
 * <p>Why the outcome is confirmed: Artery drops a message when its outbound queue is full. A
 * dropped event shows as a gap in the seqs at the caller ({@code E-CLU-004}); a dropped {@link
 * RunEvent.Finished} would show as nothing at all, since it is the last message: the entity would
 * passivate, and the caller, seeing its entity stop without an outcome, would take the run for lost
 * with its node ({@code E-CLU-001}) and, with retries left, run a finished task again. So the
 * entity keeps each caller's outcome message, seq and all, and sends it again until the caller
 * confirms it (or the linger ends).
 *
 * <p>Messages are cut by size as well as by count ({@link CrossingSize}): Artery drops a message
 * over its frame size. One event too large for a message alone crosses in {@link RunCaller.Part}s,
 * its serialized form cut in pieces, each numbered like any other message.
 *
 * <p>Text and thinking deltas cross to a caller on another node without the text so far they
 * repeat, which the caller puts back ({@link SoFar}): with it, a long streamed answer put O(n²)
 * characters between nodes.
 *
 * <p>Not thread-safe: the entity's own state, used only inside its behaviour.
 */
final class Callers {
  private final Map<ActorRef<RunCaller.Command>, Integer> attempts = new LinkedHashMap<>();
  private final Map<ActorRef<RunCaller.Command>, long[]> nextSeq = new HashMap<>();
  private final Set<ActorRef<RunCaller.Command>> unsealed = new HashSet<>();

  /** Per caller, its outcome's message (or parts) as sent, until the caller confirms it. */
  private final Map<ActorRef<RunCaller.Command>, List<RunCaller.Command>> unsettled =
      new HashMap<>();

  /** Callers that confirmed an outcome of their attempt, or gave up on the run (a gap). */
  private final Set<ActorRef<RunCaller.Command>> settled = new HashSet<>();

  /** Per caller on another node, the text so far its deltas left out ({@link SoFar}). */
  private final Map<ActorRef<RunCaller.Command>, SoFar> soFar = new HashMap<>();

  private final Serialization serialization;
  private final Predicate<ActorRef<RunCaller.Command>> remote;

  /**
   * @param serialization this node's, for an event that crosses in parts
   */
  Callers(Serialization serialization) {
    this(serialization, caller -> !caller.path().address().hasLocalScope());
  }

  /**
   * @param remote which callers are on another node: their deltas cross without the text so far
   *     ({@link SoFar}); a caller in this JVM gets the events as they are, with nothing to rebuild
   */
  Callers(Serialization serialization, Predicate<ActorRef<RunCaller.Command>> remote) {
    this.serialization = serialization;
    this.remote = remote;
  }

  /**
   * Adds {@code caller} (or its newer attempt, which counts its seqs from 0 again); it may still
   * have starts on their way until it seals.
   */
  void join(ActorRef<RunCaller.Command> caller, int attempt) {
    Integer before = attempts.put(caller, attempt);
    if (before == null || before != attempt) {
      nextSeq.put(caller, new long[1]);
      soFar.remove(caller);
      unsettled.remove(caller);
      settled.remove(caller);
    }
    unsealed.add(caller);
  }

  void seal(ActorRef<RunCaller.Command> caller) {
    unsealed.remove(caller);
  }

  /**
   * {@code caller} has its outcome for {@code attempt}, or gave up on the run before it (it found
   * events missing): it is not sent the outcome again, nor kept waiting for.
   */
  void settle(ActorRef<RunCaller.Command> caller, int attempt) {
    Integer current = attempts.get(caller);
    if (current != null && current == attempt) {
      unsettled.remove(caller);
      settled.add(caller);
    }
  }

  /** No caller may still send a start, and every one told of the outcome has confirmed it. */
  boolean quiet() {
    return unsealed.isEmpty() && unsettled.isEmpty();
  }

  boolean anyUnsettled() {
    return !unsettled.isEmpty();
  }

  /** One event to every caller, numbered per caller. */
  void publish(RunEvent e) {
    attempts.forEach(
        (caller, attempt) -> single(caller, attempt, crossing(caller, e)).forEach(caller::tell));
  }

  /**
   * Events of one batch to every caller, in messages of at most {@code max} events and {@link
   * CrossingSize#MESSAGE_CHARS} characters; an event larger than that alone goes in parts.
   */
  void publishAll(List<RunEvent> all, int max) {
    attempts.forEach((caller, attempt) -> publishAll(caller, attempt, crossing(caller, all), max));
  }

  private void publishAll(
      ActorRef<RunCaller.Command> caller, int attempt, List<RunEvent> all, int max) {
    int from = 0;
    while (from < all.size()) {
      int to = from;
      long chars = 0;
      while (to < all.size() && to - from < max) {
        long next = CrossingSize.chars(all.get(to));
        if (to > from && chars + next > CrossingSize.MESSAGE_CHARS) {
          break;
        }
        chars += next;
        to++;
      }
      List<RunEvent> part = all.subList(from, to);
      if (part.size() == 1 && chars > CrossingSize.MESSAGE_CHARS) {
        single(caller, attempt, part.get(0)).forEach(caller::tell);
      } else {
        caller.tell(new RunCaller.Events(attempt, nextSeq.get(caller)[0]++, part));
      }
      from = to;
    }
  }

  /** {@code e} as it crosses to {@code caller}: shrunk for one on another node ({@link SoFar}). */
  private RunEvent crossing(ActorRef<RunCaller.Command> caller, RunEvent e) {
    return remote.test(caller) ? soFar.computeIfAbsent(caller, c -> new SoFar()).shrink(e) : e;
  }

  private List<RunEvent> crossing(ActorRef<RunCaller.Command> caller, List<RunEvent> all) {
    if (!remote.test(caller)) {
      return all;
    }
    SoFar s = soFar.computeIfAbsent(caller, c -> new SoFar());
    List<RunEvent> out = new ArrayList<>(all.size());
    for (RunEvent e : all) {
      out.add(s.shrink(e));
    }
    return out;
  }

  /** The outcome to every caller, kept per caller until it confirms. */
  void publishOutcome(RunOutcome outcome) {
    attempts.keySet().forEach(caller -> tellOutcome(caller, outcome));
  }

  /**
   * The outcome to one caller (a start after the outcome was known), kept until it confirms; to a
   * caller that has one unconfirmed for the same attempt, that one again (a second seq would make
   * the first, if it was dropped, look like a gap).
   */
  void tellOutcome(ActorRef<RunCaller.Command> caller, RunOutcome outcome) {
    if (settled.contains(caller)) {
      return;
    }
    unsettled
        .computeIfAbsent(caller, c -> single(c, attempts.get(c), new RunEvent.Finished(outcome)))
        .forEach(caller::tell);
  }

  /** Every outcome not confirmed yet, again, as it was first sent (the same seqs). */
  void resendOutcomes() {
    unsettled.forEach((caller, messages) -> messages.forEach(caller::tell));
  }

  /** Tells every caller its attempt was seen canceled. */
  void cancelSeen() {
    attempts.forEach((caller, attempt) -> caller.tell(new RunCaller.CancelSeen(attempt)));
  }

  /** Tells every caller its attempt was lost with this node. */
  void lost(String node, String why) {
    attempts.forEach((caller, attempt) -> caller.tell(new RunCaller.Lost(attempt, node, why)));
  }

  /** One event as the message(s) that carry it to {@code caller}, numbered. */
  private List<RunCaller.Command> single(
      ActorRef<RunCaller.Command> caller, int attempt, RunEvent e) {
    if (CrossingSize.chars(e) <= CrossingSize.MESSAGE_CHARS) {
      return List.of(new RunCaller.Event(attempt, nextSeq.get(caller)[0]++, e));
    }
    RunCaller.Event whole = new RunCaller.Event(attempt, -1, e);
    Serializer serializer = serialization.findSerializerFor(whole);
    String manifest = Serializers.manifestFor(serializer, whole);
    byte[] bytes = serialization.serialize(whole).get();
    List<RunCaller.Command> parts = new ArrayList<>();
    for (int from = 0; from < bytes.length; from += CrossingSize.PART_BYTES) {
      int to = Math.min(bytes.length, from + CrossingSize.PART_BYTES);
      parts.add(
          new RunCaller.Part(
              attempt,
              nextSeq.get(caller)[0]++,
              serializer.identifier(),
              manifest,
              Arrays.copyOfRange(bytes, from, to),
              to == bytes.length));
    }
    return parts;
  }
}
