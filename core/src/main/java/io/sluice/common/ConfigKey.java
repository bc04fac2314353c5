package io.sluice.common;

import java.util.Objects;
import java.util.function.Function;

/**
 * One configuration key: its name, its default (as written in {@code conf/sluice-defaults.conf}),
 * how to parse it, and one sentence of documentation. Keys are declared as constants in the typed
 * config class of their concern and listed in {@link ConfigKeys#ALL}.
 *
 * @param <T> the parsed type
 */
public final class ConfigKey<T> {
  private final String name;
  private final String defaultValue;
  private final Function<String, T> parser;
  private final String doc;

  private ConfigKey(String name, String defaultValue, Function<String, T> parser, String doc) {
    this.name = Objects.requireNonNull(name, "name");
    this.defaultValue = Objects.requireNonNull(defaultValue, "defaultValue");
    this.parser = Objects.requireNonNull(parser, "parser");
    this.doc = Objects.requireNonNull(doc, "doc");
    if (!name.startsWith("sluice.")) {
      throw new IllegalArgumentException("config key must start with 'sluice.': " + name);
    }
    parser.apply(defaultValue); // a default that does not parse is a programming error
  }

  /** A size in bytes; accepts suffixes k, m, g, t (powers of 1024). */
  public static ConfigKey<Long> bytes(String name, String defaultValue, String doc) {
    return new ConfigKey<>(name, defaultValue, v -> ConfigValues.parseBytes(name, v), doc);
  }

  /** A duration in milliseconds; accepts suffixes ms, s, min, h. */
  public static ConfigKey<Long> millis(String name, String defaultValue, String doc) {
    return new ConfigKey<>(name, defaultValue, v -> ConfigValues.parseMillis(name, v), doc);
  }

  public static ConfigKey<Integer> integer(String name, int defaultValue, String doc) {
    return new ConfigKey<>(
        name, Integer.toString(defaultValue), v -> ConfigValues.parseInt(name, v), doc);
  }

  public static ConfigKey<Double> fraction(String name, double defaultValue, String doc) {
    return new ConfigKey<>(
        name, Double.toString(defaultValue), v -> ConfigValues.parseFraction(name, v), doc);
  }

  public static ConfigKey<Boolean> bool(String name, boolean defaultValue, String doc) {
    return new ConfigKey<>(
        name, Boolean.toString(defaultValue), v -> ConfigValues.parseBoolean(name, v), doc);
  }

  public static ConfigKey<String> string(String name, String defaultValue, String doc) {
    return new ConfigKey<>(name, defaultValue, v -> v, doc);
  }

  public String name() {
    return name;
  }

  public String defaultValue() {
    return defaultValue;
  }

  public String doc() {
    return doc;
  }

  /** Parses a raw value; throws {@link IllegalArgumentException} naming the key and the value. */
  public T parse(String raw) {
    return parser.apply(raw.trim());
  }

  @Override
  public String toString() {
    return name;
  }
}
