package io.sluice.common;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The JSON of the admin API and its command-line client: objects are {@code Map<String, ?>} (kept
 * in order), arrays {@code List<?>}, numbers {@code Long} or {@code Double}, plus strings, booleans
 * and null. Enough for documents of a few MiB; not a general-purpose library.
 */
public final class Json {
  private Json() {}

  /** Writes {@code value} as compact JSON. */
  public static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(out, value);
    return out.toString();
  }

  private static void write(StringBuilder out, Object v) {
    if (v == null) {
      out.append("null");
    } else if (v instanceof String) {
      string(out, (String) v);
    } else if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      out.append(Double.isFinite(d) ? String.format(Locale.ROOT, "%s", d) : "null");
    } else if (v instanceof Number || v instanceof Boolean) {
      out.append(v);
    } else if (v instanceof Map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        string(out, String.valueOf(e.getKey()));
        out.append(':');
        write(out, e.getValue());
      }
      out.append('}');
    } else if (v instanceof Iterable) {
      out.append('[');
      boolean first = true;
      for (Object o : (Iterable<?>) v) {
        if (!first) {
          out.append(',');
        }
        first = false;
        write(out, o);
      }
      out.append(']');
    } else if (v instanceof Enum) {
      string(out, ((Enum<?>) v).name());
    } else {
      throw new IllegalArgumentException("cannot write a " + v.getClass().getName() + " as JSON");
    }
  }

  private static void string(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20) {
        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    out.append('"');
  }

  /**
   * Parses one JSON document.
   *
   * @throws IllegalArgumentException naming the offset and what was expected, when it is not JSON
   */
  public static Object parse(String text) {
    Parser p = new Parser(text);
    p.space();
    Object v = p.value();
    p.space();
    if (p.pos != text.length()) {
      throw p.error("end of the document");
    }
    return v;
  }

  private static final class Parser {
    private final String s;
    private int pos;

    Parser(String s) {
      this.s = s;
    }

    IllegalArgumentException error(String expected) {
      String near = s.substring(pos, Math.min(s.length(), pos + 20));
      return new IllegalArgumentException(
          "not JSON: expected " + expected + " at offset " + pos + " (near '" + near + "')");
    }

    void space() {
      while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
        pos++;
      }
    }

    Object value() {
      if (pos >= s.length()) {
        throw error("a value");
      }
      char c = s.charAt(pos);
      switch (c) {
        case '{':
          return object();
        case '[':
          return array();
        case '"':
          return string();
        case 't':
          return literal("true", Boolean.TRUE);
        case 'f':
          return literal("false", Boolean.FALSE);
        case 'n':
          return literal("null", null);
        default:
          if (c == '-' || (c >= '0' && c <= '9')) {
            return number();
          }
          throw error("a value");
      }
    }

    private Object literal(String word, Object value) {
      if (!s.startsWith(word, pos)) {
        throw error(word);
      }
      pos += word.length();
      return value;
    }

    private Map<String, Object> object() {
      Map<String, Object> map = new LinkedHashMap<>();
      pos++;
      space();
      if (pos < s.length() && s.charAt(pos) == '}') {
        pos++;
        return map;
      }
      while (true) {
        space();
        if (pos >= s.length() || s.charAt(pos) != '"') {
          throw error("a member name");
        }
        String key = string();
        space();
        expect(':');
        space();
        map.put(key, value());
        space();
        if (pos < s.length() && s.charAt(pos) == ',') {
          pos++;
          continue;
        }
        expect('}');
        return map;
      }
    }

    private List<Object> array() {
      List<Object> list = new ArrayList<>();
      pos++;
      space();
      if (pos < s.length() && s.charAt(pos) == ']') {
        pos++;
        return list;
      }
      while (true) {
        space();
        list.add(value());
        space();
        if (pos < s.length() && s.charAt(pos) == ',') {
          pos++;
          continue;
        }
        expect(']');
        return list;
      }
    }

    private void expect(char c) {
      if (pos >= s.length() || s.charAt(pos) != c) {
        throw error("'" + c + "'");
      }
      pos++;
    }

    private String string() {
      pos++;
      StringBuilder out = new StringBuilder();
      while (true) {
        if (pos >= s.length()) {
          throw error("the end of a string");
        }
        char c = s.charAt(pos++);
        if (c == '"') {
          return out.toString();
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        if (pos >= s.length()) {
          throw error("an escape");
        }
        char e = s.charAt(pos++);
        switch (e) {
          case 'n':
            out.append('\n');
            break;
          case 't':
            out.append('\t');
            break;
          case 'r':
            out.append('\r');
            break;
          case 'b':
            out.append('\b');
            break;
          case 'f':
            out.append('\f');
            break;
          case 'u':
            if (pos + 4 > s.length()) {
              throw error("four hex digits");
            }
            try {
              out.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
            } catch (NumberFormatException x) {
              throw error("four hex digits");
            }
            pos += 4;
            break;
          default:
            if (e != '"' && e != '\\' && e != '/') {
              pos--;
              throw error("an escape");
            }
            out.append(e);
        }
      }
    }

    private Object number() {
      int start = pos;
      while (pos < s.length() && "+-0123456789.eE".indexOf(s.charAt(pos)) >= 0) {
        pos++;
      }
      String n = s.substring(start, pos);
      try {
        if (n.contains(".") || n.contains("e") || n.contains("E")) {
          return Double.parseDouble(n);
        }
        return Long.parseLong(n);
      } catch (NumberFormatException x) {
        pos = start;
        throw error("a number");
      }
    }
  }
}
