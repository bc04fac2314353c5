package io.sluice.server;

import io.sluice.common.ConfigKey;
import io.sluice.common.SluiceConf;
import java.util.List;

/**
 * Settings of the server's data integrity checks. Readers always verify the CRC32C of every batch
 * and block they read ({@link io.sluice.protocol.BatchFormat}, {@link
 * io.sluice.protocol.MapBlockFormat}); the server may also verify them as they arrive.
 */
public final class IntegrityConf {
  public static final ConfigKey<Boolean> VERIFY_ON_PUSH =
      ConfigKey.bool(
          "sluice.integrity.verifyOnPush",
          false,
          "Verify the CRC32C of every pushed batch and map partition block as it arrives and"
              + " answer BAD_REQUEST naming the batch and partition when one fails; costs one pass"
              + " over the pushed bytes. Readers verify every batch either way.");

  public static final ConfigKey<Integer> SUSPECT_AFTER =
      ConfigKey.integer(
          "sluice.integrity.suspectAfter",
          3,
          "Checksum failures reported by readers against the files of one data directory after"
              + " which the server marks it suspect: logged as an error and shown by the metric"
              + " sluice.server.dir.<dir>.suspect. A suspect directory keeps serving and taking"
              + " data; an operator decides.");

  public static final List<ConfigKey<?>> KEYS = List.of(VERIFY_ON_PUSH, SUSPECT_AFTER);

  private final boolean verifyOnPush;
  private final int suspectAfter;

  public IntegrityConf(SluiceConf conf) {
    this.verifyOnPush = conf.get(VERIFY_ON_PUSH);
    this.suspectAfter = conf.get(SUSPECT_AFTER);
    if (suspectAfter < 1) {
      throw new IllegalArgumentException(SUSPECT_AFTER.name() + " must be at least 1");
    }
  }

  /** Checksum failures of a directory's files after which it is marked suspect. */
  public int suspectAfter() {
    return suspectAfter;
  }

  /** Whether pushed batches and blocks are verified on receipt. */
  public boolean verifyOnPush() {
    return verifyOnPush;
  }
}
