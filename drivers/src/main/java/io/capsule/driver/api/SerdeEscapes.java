package io.capsule.driver.api;

import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;

/**
 * Escapes exactly as serde_json does, so a text holding a control character (a terminal's ESC, say)
 * is written byte for byte as the Rust drivers write it: the short forms for backspace, tab,
 * newline, form feed and carriage return; every other control character as a unicode escape with
 * four <b>lowercase</b> hex digits (Jackson's default is uppercase); nothing else escaped.
 */
final class SerdeEscapes extends CharacterEscapes {
  private static final long serialVersionUID = 1L;
  private final int[] codes = CharacterEscapes.standardAsciiEscapesForJSON();

  SerdeEscapes() {
    for (int c = 0; c < 0x20; c++) {
      if (codes[c] == CharacterEscapes.ESCAPE_STANDARD) {
        codes[c] = CharacterEscapes.ESCAPE_CUSTOM;
      }
    }
  }

  @Override
  public int[] getEscapeCodesForAscii() {
    return codes;
  }

  @Override
  public SerializableString getEscapeSequence(int ch) {
    // Asked for every non-ASCII character too: those are written as they are.
    return ch < 0x20 ? new SerializedString(String.format("\\u%04x", ch)) : null;
  }
}
