package io.capsule.config.diag;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;
import java.util.TreeSet;

/**
 * The known word closest to a misspelt one, for "did you mean" in a refusal: a manifest key, a
 * setting's path. Pure; ties go to the alphabetically first known word, so a message is stable.
 */
public final class DidYouMean {
  private DidYouMean() {}

  /**
   * The known word a few edits from {@code word}, if one is: at most two edits (typos, plurals, a
   * doubled letter), or a tenth of the word's length for long dotted paths, and never more than
   * half the word, so an unrelated short word is not suggested.
   */
  public static Optional<String> closest(String word, Collection<String> known) {
    String w = word.toLowerCase(Locale.ROOT);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String k : new TreeSet<>(known)) {
      int d = distance(w, k.toLowerCase(Locale.ROOT));
      if (d < bestDistance) {
        best = k;
        bestDistance = d;
      }
    }
    int allowed = Math.min(Math.max(2, w.length() / 10), w.length() / 2);
    return best != null && bestDistance <= allowed ? Optional.of(best) : Optional.empty();
  }

  /** The suffix of a refusal: {@code ; did you mean "x"?}, or nothing. */
  public static String suffix(String word, Collection<String> known) {
    return closest(word, known).map(k -> "; did you mean \"" + k + "\"?").orElse("");
  }

  /** Levenshtein distance. */
  static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
