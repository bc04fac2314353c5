package io.sluice.client.mappartition;

import io.sluice.client.ClientContext;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.PartitionRecords;
import io.sluice.protocol.proto.OpenMapStream;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.ServerAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks servers whether they still hold a committed map partition, without reading it: it opens a
 * read stream over every subpartition, takes the writer's records from the answer and closes the
 * stream before asking for a single buffer. Flink's shuffle master uses it after a JobManager
 * failover to tell which finished producers need not run again, and how many bytes each of their
 * subpartitions holds. Never blocks.
 */
public final class MapPartitionProbe {
  private static final Logger LOG = LoggerFactory.getLogger(MapPartitionProbe.class);

  private MapPartitionProbe() {}

  /**
   * The bytes per subpartition that the writer of {@code id} recorded at its commit (the blocks
   * readers of each subpartition get, as stored), from the first of {@code servers} that holds the
   * partition committed. Completes with null when none does, or none knows the numbers (a server
   * restarted since the commit serves the partition but no longer has them); never exceptionally.
   */
  public static CompletableFuture<long[]> committedBytes(
      ClientContext context, MapPartitionId id, List<ServerAddress> servers, int numSubpartitions) {
    CompletableFuture<long[]> result = CompletableFuture.completedFuture(null);
    for (ServerAddress server : servers) {
      result =
          result.thenCompose(
              found ->
                  found != null
                      ? CompletableFuture.completedFuture(found)
                      : probe(context, id, server, numSubpartitions));
    }
    return result;
  }

  private static CompletableFuture<long[]> probe(
      ClientContext context, MapPartitionId id, ServerAddress server, int numSubpartitions) {
    return context
        .pool()
        .getAsync(server.getHost(), server.getPort(), id.appId())
        .thenCompose(
            connection ->
                context
                    .callAsync(
                        connection,
                        rid ->
                            Messages.request(
                                MessageType.OPEN_MAP_STREAM,
                                OpenMapStream.newBuilder()
                                    .setRequestId(rid)
                                    .setPartition(id.ref())
                                    .setStartSubpartition(0)
                                    .setEndSubpartition(numSubpartitions - 1)
                                    .build(),
                                rid))
                    .thenApply(
                        m -> {
                          m.release();
                          Response r = m.header(Response.class);
                          MapPartitionReader.closeStream(
                              context, connection, r.getMapStream().getStreamId());
                          return bytes(r, id, numSubpartitions);
                        }))
        .exceptionally(
            e -> {
              LOG.info(
                  "{} is not readable on {}: {}", id, ClientContext.format(server), e.getMessage());
              return null;
            });
  }

  private static long[] bytes(Response r, MapPartitionId id, int numSubpartitions) {
    if (!r.getMapStream().getWithRecords()) {
      return null;
    }
    PartitionRecords records =
        PartitionRecords.decode(r.getMapStream().getRecords(), "the records of " + id);
    long[] bytes = new long[numSubpartitions];
    for (int i = 0; i < records.size(); i++) {
      int subpartition = records.partition(i);
      if (subpartition >= numSubpartitions) {
        throw new IllegalArgumentException(
            "the server's records of " + id + " name subpartition " + subpartition);
      }
      bytes[subpartition] = records.bytes(i);
    }
    return bytes;
  }
}
