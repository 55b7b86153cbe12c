package io.capsule.protocol.frame;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.schema.Schemas;
import java.util.List;

/** Shared checks for the JSON-backed bodies. */
final class Bodies {
  private Bodies() {}

  static ObjectNode checked(Schemas.Id schema, JsonNode json, String where) {
    if (json == null || !json.isObject()) {
      throw new FrameRejected(Code.E_PRO_004, where + ": must be an object");
    }
    List<String> errors = Schemas.validate(schema, json);
    if (!errors.isEmpty()) {
      throw new FrameRejected(Code.E_PRO_004, where + ": " + String.join("; ", errors));
    }
    return ((ObjectNode) json).deepCopy();
  }

  static ObjectNode withId(ObjectNode json, String idKey, String where) {
    if (json == null) {
      throw new FrameRejected(Code.E_PRO_004, where + ": must be an object");
    }
    JsonNode id = json.get(idKey);
    if (id == null || !id.isTextual()) {
      throw new FrameRejected(Code.E_PRO_004, "$." + where + "." + idKey + ": must be a string");
    }
    return json.deepCopy();
  }
}
