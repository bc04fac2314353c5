package io.sluice.flink;

import io.sluice.client.ServerList;
import io.sluice.common.ConfigKey;
import io.sluice.common.SluiceConf;
import io.sluice.common.UnknownKeys;
import io.sluice.protocol.proto.ServerAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;

/**
 * Settings of the Flink plugin, read from Flink's own configuration ({@code config.yaml}), where
 * every {@code sluice.*} key is also handed to the core client library. Memory sizes are rounded
 * down to whole network buffers ({@code taskmanager.memory.segment-size}).
 */
public final class FlinkClientConf {
  public static final ConfigKey<String> SERVERS =
      ConfigKey.string(
          "sluice.servers",
          "",
          "Flink: the Sluice servers a job's blocking exchanges go to, as host:port,host:port;"
              + " required on the JobManager.");
  public static final ConfigKey<Long> REGION_SIZE =
      ConfigKey.bytes(
          "sluice.flink.regionSize",
          "64m",
          "Flink: network memory of each result partition writer; its records are sorted by"
              + " subpartition in it and written as one region when it is full. At least two"
              + " network buffers.");
  public static final ConfigKey<Long> INPUT_GATE_MEMORY =
      ConfigKey.bytes(
          "sluice.flink.inputGateMemory",
          "2m",
          "Flink: network memory of each input gate, the buffers read blocks are decompressed"
              + " into. At least two network buffers.");
  public static final ConfigKey<Integer> READ_CONCURRENCY =
      ConfigKey.integer(
          "sluice.flink.readConcurrency",
          32,
          "Flink: read streams an input gate keeps open at once, one per producer partition; the"
              + " next opens when one ends.");

  public static final ConfigKey<String> FALLBACK =
      ConfigKey.string(
          "sluice.flink.fallback",
          "auto",
          "Flink: what runs the exchanges Sluice does not serve (streaming jobs, pipelined and"
              + " hybrid exchanges): auto, Flink's own Netty shuffle in the same cluster (logged"
              + " per job); never, they are refused naming the setting to change.");
  public static final ConfigKey<Double> FALLBACK_NETWORK_FRACTION =
      ConfigKey.fraction(
          "sluice.flink.fallback.networkMemoryFraction",
          0.25,
          "Flink, with sluice.flink.fallback auto: the share of each TaskManager's network memory"
              + " Flink's Netty shuffle gets for the exchanges it runs; Sluice's writers and"
              + " gates get the rest.");

  public static final List<ConfigKey<?>> KEYS =
      List.of(
          SERVERS,
          REGION_SIZE,
          INPUT_GATE_MEMORY,
          READ_CONCURRENCY,
          FALLBACK,
          FALLBACK_NETWORK_FRACTION);

  /**
   * Whether exchanges Sluice does not serve run on Flink's Netty shuffle ({@code
   * sluice.flink.fallback} auto) instead of being refused (never).
   *
   * @throws IllegalArgumentException naming the key and its values for any other value
   */
  static boolean fallsBack(Configuration flinkConf) {
    String value = sluiceConf(flinkConf).get(FALLBACK).trim();
    switch (value) {
      case "auto":
        return true;
      case "never":
        return false;
      default:
        throw new IllegalArgumentException(
            "Invalid value '" + value + "' for " + FALLBACK.name() + ": expected auto or never");
    }
  }

  /** The share of network memory Flink's Netty shuffle gets when exchanges fall back to it. */
  static double fallbackNetworkFraction(Configuration flinkConf) {
    double f = sluiceConf(flinkConf).get(FALLBACK_NETWORK_FRACTION);
    if (!(f > 0 && f < 1)) {
      throw new IllegalArgumentException(
          FALLBACK_NETWORK_FRACTION.name() + " must be between 0 and 1 (exclusive), got " + f);
    }
    return f;
  }

  private final SluiceConf sluiceConf;
  private final int segmentSize;
  private final int writerBuffers;
  private final int gateBuffers;
  private final int readConcurrency;

  /**
   * @param segmentSize Flink's network buffer size in bytes
   * @throws IllegalArgumentException naming the key when a value is invalid
   */
  public FlinkClientConf(Configuration flinkConf, int segmentSize) {
    this.sluiceConf = sluiceConf(flinkConf);
    this.segmentSize = segmentSize;
    this.writerBuffers = buffers(REGION_SIZE, segmentSize);
    this.gateBuffers = buffers(INPUT_GATE_MEMORY, segmentSize);
    this.readConcurrency = sluiceConf.get(READ_CONCURRENCY);
    if (readConcurrency < 1) {
      throw new IllegalArgumentException(
          READ_CONCURRENCY + " must be at least 1, got " + readConcurrency);
    }
  }

  private int buffers(ConfigKey<Long> key, int segmentSize) {
    long bytes = sluiceConf.get(key);
    long buffers = bytes / segmentSize;
    if (buffers < 2 || buffers > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          key
              + " must hold at least two network buffers of "
              + segmentSize
              + " bytes (taskmanager.memory.segment-size), got "
              + bytes
              + " bytes");
    }
    return (int) buffers;
  }

  /** Every {@code sluice.*} entry of Flink's configuration, for the core library. */
  public static SluiceConf sluiceConf(Configuration flinkConf) {
    Map<String, String> values = new HashMap<>();
    for (Map.Entry<String, String> e : flinkConf.toMap().entrySet()) {
      if (e.getKey().startsWith("sluice.")) {
        values.put(e.getKey(), e.getValue());
      }
    }
    return SluiceConf.of(values);
  }

  /**
   * The servers of {@link #SERVERS}.
   *
   * @throws IllegalArgumentException naming the key and the entry when the list is missing, empty
   *     or has an entry that is not {@code host:port}
   */
  public static List<InetSocketAddress> servers(Configuration flinkConf) {
    List<InetSocketAddress> servers = new ArrayList<>();
    for (ServerAddress a : ServerList.parse(SERVERS.name(), sluiceConf(flinkConf).get(SERVERS))) {
      servers.add(InetSocketAddress.createUnresolved(a.getHost(), a.getPort()));
    }
    return servers;
  }

  /**
   * {@code sluice.*} keys of Flink's configuration that neither the core library nor this plugin
   * declares, sorted: usually typos.
   */
  public static List<String> unknownKeys(Configuration flinkConf) {
    return UnknownKeys.core().withKeys(KEYS).find(sluiceConf(flinkConf));
  }

  /**
   * One warning per {@link #unknownKeys unknown key}, with the declared key it is close to; never a
   * value.
   */
  public static List<String> unknownKeyWarnings(Configuration flinkConf) {
    return UnknownKeys.core().withKeys(KEYS).warnings(sluiceConf(flinkConf));
  }

  /** The settings for the core client library. */
  public SluiceConf sluiceConf() {
    return sluiceConf;
  }

  /** Bytes of one network buffer. */
  public int segmentSize() {
    return segmentSize;
  }

  /** Network buffers of one result partition writer (its sort buffer plus one staging buffer). */
  public int writerBuffers() {
    return writerBuffers;
  }

  /** Network buffers of one input gate. */
  public int gateBuffers() {
    return gateBuffers;
  }

  public int readConcurrency() {
    return readConcurrency;
  }
}
