package io.sluice.protocol;

import io.sluice.protocol.proto.PushData;

/**
 * How large a batch ({@link BatchFormat}) may be: the one place the side that builds batches (the
 * push client) and the sides that carry and read them (the server's frame decoder, the reader's
 * decompressor) take their numbers from, so the client never builds what another side must refuse.
 *
 * <table>
 *   <caption>Limits, outermost first</caption>
 *   <tr><th>limit</th><th>value</th><th>enforced by</th></tr>
 *   <tr><td>frame</td><td>{@code sluice.network.maxFrameSize}: 128 MiB by default, 1 KiB to 2
 *   GiB; must be the same on servers and clients</td><td>the frame decoder of either end, which
 *   closes the connection a larger frame came on. A frame's length counts {@value
 *   #FRAME_OVERHEAD} bytes (type, header length), the protobuf header and the body.</td></tr>
 *   <tr><td>batch (header + payload)</td><td>{@link #maxBatchSize}: half a frame, 64 MiB by
 *   default</td><td>the push client, which builds no larger batch. The other half of the frame
 *   carries the push request's header and, when the batch is read back, the rest of its chunk: a
 *   split's chunk holds less than {@code sluice.read.chunkSize + sluice.flush.size} bytes before
 *   its last batch (a sorted copy's chunk, less than {@code sluice.read.chunkSize}), so every
 *   chunk fits in a frame while those two add up to at most half a frame (9 MiB against 64 MiB by
 *   default).</td></tr>
 *   <tr><td>raw payload</td><td>{@link #MAX_RAW_SIZE}: 1 GiB before compression</td><td>the
 *   reader, which allocates no more for one batch, and the push client, which builds no batch
 *   that decompresses to more.</td></tr>
 * </table>
 *
 * <p>A record the push client cannot fit in one batch fails its map task at once, naming the map,
 * the partition, the record's size and the setting to change.
 */
public final class BatchLimits {
  /**
   * Bytes a frame's length counts besides header and body: {@code type:int8 | headerLength:int32}.
   */
  public static final int FRAME_OVERHEAD = 5;

  /** Most bytes a batch payload decompresses to: 1 GiB. */
  public static final int MAX_RAW_SIZE = 1 << 30;

  private BatchLimits() {}

  /**
   * The largest batch (header and payload) a client builds: half of {@code maxFrameSize}, and never
   * so large that the batch, the request header and the frame overhead exceed the frame.
   *
   * @param maxFrameSize {@code sluice.network.maxFrameSize}, bytes
   * @param requestHeaderSize most bytes the header of the request carrying the batch takes
   */
  public static int maxBatchSize(int maxFrameSize, int requestHeaderSize) {
    return Math.min(maxFrameSize / 2, maxFrameSize - FRAME_OVERHEAD - requestHeaderSize);
  }

  /** Most bytes a {@code PushData} header of {@code appId} takes, whatever its numbers. */
  public static int maxPushHeaderSize(String appId) {
    return PushData.newBuilder()
        .setRequestId(-1L)
        .setAppId(appId)
        .setShuffleId(-1)
        .setPartitionId(-1)
        .setEpoch(-1)
        .build()
        .getSerializedSize();
  }
}
