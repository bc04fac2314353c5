package io.sluice.testutil;

import java.nio.ByteBuffer;

/** Test helper: where the batches of a committed split file end (its map-run trailer follows). */
public final class SplitFileBytes {
  private static final int TRAILER_MAGIC = 0x534C4D52; // "SLMR", see MapRunIndex
  private static final int FOOTER_SIZE = 24;

  private SplitFileBytes() {}

  /** Bytes of batches at the start of {@code file}: all of it when it has no trailer. */
  public static int dataLength(byte[] file) {
    if (file.length < FOOTER_SIZE) {
      return file.length;
    }
    ByteBuffer footer = ByteBuffer.wrap(file, file.length - FOOTER_SIZE, FOOTER_SIZE).slice();
    if (footer.getInt(0) != TRAILER_MAGIC) {
      return file.length;
    }
    return (int) footer.getLong(8);
  }
}
