package io.sluice.server.state;

import io.sluice.protocol.MapPartitionId;
import io.sluice.server.storage.SplitKey;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The key layout of the server's state store, <b>format version 1</b>.
 *
 * <p>Keys are UTF-8 strings made of a type prefix and fields separated by {@code /}; application
 * ids never contain {@code /} ({@link io.sluice.common.Ids#checkAppId}). Integers are written as
 * ten zero-padded decimal digits, so keys of one prefix sort by shuffle, partition and epoch.
 * Values are protobuf messages from {@code sluice.proto}:
 *
 * <pre>
 * format                                        -&gt; 4-byte big-endian int: the format version
 * app/&lt;appId&gt;                                   -&gt; StateApplication
 * shuffle/&lt;appId&gt;/&lt;shuffleId&gt;                   -&gt; StateShuffle (committed = stage commit done)
 * open/&lt;appId&gt;/&lt;shuffleId&gt;/&lt;partition&gt;/&lt;epoch&gt;  -&gt; StateSplit, key fields only: being written
 * split/&lt;appId&gt;/&lt;shuffleId&gt;/&lt;partition&gt;/&lt;epoch&gt; -&gt; StateSplit: committed, every field
 * map/&lt;appId&gt;/&lt;shuffleId&gt;/&lt;mapIndex&gt;/&lt;attempt&gt;  -&gt; StateMapPartition: a committed map partition
 * </pre>
 *
 * <p>{@code map} records were added within version 1: a server that predates them drops them as
 * unknown records at start, which loses only map partitions, whose producers the engine reruns.
 *
 * <p>An {@code open} record is written when a split is created and replaced by its {@code split}
 * record in one atomic batch when it commits; an {@code open} record found at start therefore means
 * the server stopped without committing that split (a crash), and its shuffle has lost acknowledged
 * data. A store without a {@code format} key is empty; a store of a higher version is refused
 * rather than misread. A later version that changes this layout bumps {@link #VERSION} and migrates
 * older stores when it opens them.
 */
final class StateKeys {
  static final int VERSION = 1;

  static final byte[] FORMAT = bytes("format");
  static final String APP = "app/";
  static final String SHUFFLE = "shuffle/";
  static final String OPEN = "open/";
  static final String SPLIT = "split/";
  static final String MAP = "map/";

  private StateKeys() {}

  static byte[] app(String appId) {
    return bytes(APP + appId);
  }

  static byte[] shuffle(String appId, int shuffleId) {
    return bytes(SHUFFLE + appId + "/" + number(shuffleId));
  }

  static byte[] openSplit(SplitKey key) {
    return bytes(OPEN + splitFields(key));
  }

  static byte[] committedSplit(SplitKey key) {
    return bytes(SPLIT + splitFields(key));
  }

  static byte[] mapPartition(MapPartitionId key) {
    return bytes(
        MAP
            + key.appId()
            + "/"
            + number(key.shuffleId())
            + "/"
            + number(key.mapIndex())
            + "/"
            + number(key.attempt()));
  }

  private static String splitFields(SplitKey key) {
    return key.appId()
        + "/"
        + number(key.shuffleId())
        + "/"
        + number(key.partitionId())
        + "/"
        + number(key.epoch());
  }

  /** The first key of {@code prefix}'s records of one application. */
  static byte[] applicationStart(String prefix, String appId) {
    return bytes(prefix + appId + "/");
  }

  /** The key after the last of {@code prefix}'s records of one application ('0' follows '/'). */
  static byte[] applicationEnd(String prefix, String appId) {
    return bytes(prefix + appId + "0");
  }

  /** The first key of {@code prefix}'s records of one shuffle. */
  static byte[] shuffleStart(String prefix, String appId, int shuffleId) {
    return bytes(prefix + appId + "/" + number(shuffleId) + "/");
  }

  /** The key after the last of {@code prefix}'s records of one shuffle. */
  static byte[] shuffleEnd(String prefix, String appId, int shuffleId) {
    return bytes(prefix + appId + "/" + number(shuffleId) + "0");
  }

  static byte[] version(int version) {
    return ByteBuffer.allocate(4).putInt(version).array();
  }

  /**
   * Reads a {@code format} value.
   *
   * @throws IllegalArgumentException when it is not 4 bytes
   */
  static int readVersion(byte[] value) {
    if (value.length != 4) {
      throw new IllegalArgumentException(
          "the format value has " + value.length + " bytes, expected 4");
    }
    return ByteBuffer.wrap(value).getInt();
  }

  static String string(byte[] key) {
    return new String(key, StandardCharsets.UTF_8);
  }

  private static String number(int n) {
    if (n < 0) {
      throw new IllegalArgumentException("negative id " + n + " in a state key");
    }
    String digits = Integer.toString(n); // at most 10: the width of Integer.MAX_VALUE
    return "0000000000".substring(digits.length()) + digits; // not String.format: every commit
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
