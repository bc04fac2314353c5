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

  public static final List<ConfigKey<?>> KEYS = List.of(VERIFY_ON_PUSH);

  private final boolean verifyOnPush;

  public IntegrityConf(SluiceConf conf) {
    this.verifyOnPush = conf.get(VERIFY_ON_PUSH);
  }

  /** Whether pushed batches and blocks are verified on receipt. */
  public boolean verifyOnPush() {
    return verifyOnPush;
  }
}
