package io.sluice.server.memory;

/**
 * Checks at start that the memory budget fits in the JVM's direct memory. Pushed data lives in
 * Netty's direct buffers, so a {@code sluice.memory.max} above the JVM's limit would end in {@code
 * OutOfDirectMemoryError} on connections before the server ever paused a writer.
 *
 * <p>Besides the budget, Netty needs headroom: its pooled arenas allocate in 4 MiB chunks per
 * arena, and each active connection may hold one 64 KiB socket read and one control frame outside
 * the budget (see {@code io.sluice.network.FrameDecoder}).
 */
public final class DirectMemoryLimit {
  /** The least headroom: a few pooled chunks per arena and the connections' socket reads. */
  static final long MIN_HEADROOM = 64L << 20;

  private DirectMemoryLimit() {}

  /** Headroom the server wants beside a budget of {@code memoryMax}: an eighth, at least 64 MiB. */
  public static long headroom(long memoryMax) {
    return Math.max(MIN_HEADROOM, memoryMax / 8);
  }

  /**
   * @param directLimit the JVM's direct memory limit (Netty's view of {@code
   *     -XX:MaxDirectMemorySize}); 0 or less means unknown and passes
   * @throws IllegalStateException naming the settings to change when the budget does not fit
   */
  public static void check(long memoryMax, long directLimit) {
    long needed = memoryMax + headroom(memoryMax);
    if (directLimit > 0 && needed > directLimit) {
      throw new IllegalStateException(
          "sluice.memory.max ("
              + mib(memoryMax)
              + ") and "
              + mib(headroom(memoryMax))
              + " of headroom for Netty's buffers do not fit in the JVM's direct memory limit ("
              + mib(directLimit)
              + "): raise -XX:MaxDirectMemorySize to at least "
              + mib(needed)
              + " (bin/shuffle-daemon: SLUICE_DIRECT_MEMORY; NodeManager: YARN_NODEMANAGER_OPTS)"
              + " or lower sluice.memory.max");
    }
  }

  private static String mib(long bytes) {
    return (bytes >> 20) + " MiB";
  }
}
