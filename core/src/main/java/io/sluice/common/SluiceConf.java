package io.sluice.common;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The raw {@code sluice.*} settings, whatever their source (a properties file, Hadoop's {@code
 * Configuration}, Spark's conf, a {@code Map} in tests). Typed config classes ({@code ServerConf},
 * {@code NetworkConf}, ...) read their keys through {@link #get(ConfigKey)}. Immutable.
 *
 * <p>Values may refer to {@code ${java.io.tmpdir}} and {@code ${user.home}}; they are expanded on
 * read.
 */
public final class SluiceConf {
  private final Map<String, String> values;

  private SluiceConf(Map<String, String> values) {
    this.values = Collections.unmodifiableMap(new TreeMap<>(values));
  }

  public static SluiceConf empty() {
    return new SluiceConf(Map.of());
  }

  public static SluiceConf of(Map<String, String> values) {
    return new SluiceConf(values);
  }

  /** Reads a properties-style file ({@code key = value}, {@code #} comments). */
  public static SluiceConf load(Path file) throws IOException {
    Properties props = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      props.load(reader);
    }
    Map<String, String> map = new TreeMap<>();
    for (String name : props.stringPropertyNames()) {
      map.put(name, props.getProperty(name).trim());
    }
    return new SluiceConf(map);
  }

  /** A new conf with {@code overrides} layered on top of this one. */
  public SluiceConf with(Map<String, String> overrides) {
    Map<String, String> merged = new TreeMap<>(values);
    merged.putAll(overrides);
    return new SluiceConf(merged);
  }

  public SluiceConf with(String key, String value) {
    return with(Map.of(key, value));
  }

  /** The value of {@code key}, or its default; throws naming the key when it does not parse. */
  public <T> T get(ConfigKey<T> key) {
    String raw = values.get(key.name());
    if (raw == null || raw.isEmpty()) {
      raw = key.defaultValue();
    }
    return key.parse(expand(raw));
  }

  public Map<String, String> asMap() {
    return values;
  }

  /**
   * Prefix of Hadoop settings passed through to the Hadoop {@code Configuration} the distributed
   * storage tier uses: {@code sluice.hadoop.dfs.replication} is {@code dfs.replication}.
   */
  public static final String HADOOP_PREFIX = "sluice.hadoop.";

  /** The {@value #HADOOP_PREFIX} settings, without the prefix. */
  public Map<String, String> hadoopSettings() {
    Map<String, String> hadoop = new TreeMap<>();
    for (Map.Entry<String, String> e : values.entrySet()) {
      if (e.getKey().startsWith(HADOOP_PREFIX) && e.getKey().length() > HADOOP_PREFIX.length()) {
        hadoop.put(e.getKey().substring(HADOOP_PREFIX.length()), e.getValue());
      }
    }
    return hadoop;
  }

  /**
   * Keys starting with {@code sluice.} that no config class of the core declares, sorted: usually
   * typos. Hadoop settings ({@value #HADOOP_PREFIX}) are not checked. Components with keys of their
   * own, and warnings with suggestions, use {@link UnknownKeys}.
   */
  public List<String> unknownKeys() {
    return UnknownKeys.core().find(this);
  }

  static String expand(String raw) {
    String v = raw;
    if (v.contains("${java.io.tmpdir}")) {
      String tmp = System.getProperty("java.io.tmpdir");
      v =
          v.replace(
              "${java.io.tmpdir}", tmp.endsWith("/") ? tmp.substring(0, tmp.length() - 1) : tmp);
    }
    if (v.contains("${user.home}")) {
      v = v.replace("${user.home}", System.getProperty("user.home"));
    }
    return v;
  }

  /**
   * The settings, with the values redacted of keys that look secret ({@link SecretSettings}) and of
   * keys nobody declares, since a misspelled secret key ({@code sluice.auth.clusterSecert}) need
   * not look secret.
   */
  @Override
  public String toString() {
    Map<String, String> shown = SecretSettings.redacted(values);
    for (String unknown : unknownKeys()) {
      shown.put(unknown, SecretSettings.REDACTED);
    }
    return shown.toString();
  }
}
