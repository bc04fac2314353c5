package io.sluice.client.mappartition;

import io.sluice.client.ClientContext;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.proto.ServerAddress;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one map partition to each of its servers ({@code sluice.replication.factor}: one, or a
 * primary and a replica): one {@link MapPartitionWriter} per server, each fed the same calls, so
 * both copies hold the same blocks in the same order (a {@link MapPartitionWriter} cuts and
 * compresses blocks deterministically), which is what lets a reader resume a failed read on the
 * other copy ({@link ReplicatedMapPartitionReader}). The replica's writer marks its frames as
 * replica data, so a server under memory pressure pauses it only at its replica watermark.
 *
 * <p><b>A server that fails.</b> When one copy's writer fails (while writing a region or at the
 * commit) and the other has not, the failed copy is dropped (best effort) and writing goes on to
 * the survivor alone: the producer does not fail, and {@link #commit} reports which servers hold
 * the committed partition ({@link #committedOn()}), logged as a partition held by one server. The
 * shuffle descriptor still names both servers: a reader finds the dropped copy missing and reads
 * the other; should the survivor be lost too, the read fails and the engine reruns the producer, as
 * with one copy. Only when every copy failed does a call throw, with the first failure.
 *
 * <p>Not thread safe: one producer thread, like {@link MapPartitionWriter}.
 */
public final class ReplicatedMapPartitionWriter implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicatedMapPartitionWriter.class);

  private final MapPartitionId id;
  // the copies still written to, primary first
  private final List<MapPartitionWriter> live = new ArrayList<>();
  private final List<MapPartitionWriter> all = new ArrayList<>();
  private IOException firstFailure;

  /** A step applied to one copy's writer. */
  private interface Step {
    void apply(MapPartitionWriter writer) throws IOException;
  }

  /**
   * Opens one writer per server; nothing is sent until the first region.
   *
   * @param servers the primary, then the replica if any
   * @param maxBlockSize the largest block, uncompressed
   */
  public ReplicatedMapPartitionWriter(
      ClientContext context,
      MapPartitionId id,
      List<ServerAddress> servers,
      int numSubpartitions,
      int maxBlockSize) {
    if (servers.isEmpty() || servers.size() > 2) {
      throw new IllegalArgumentException(
          id + ": a map partition has one or two copies, not " + servers.size());
    }
    this.id = id;
    for (int i = 0; i < servers.size(); i++) {
      all.add(
          i == 0
              ? MapPartitionWriter.open(context, id, servers.get(0), numSubpartitions, maxBlockSize)
              : MapPartitionWriter.openReplica(
                  context, id, servers.get(i), numSubpartitions, maxBlockSize));
    }
    if (all.size() > 1) {
      // a copy whose server is away is dropped at once: the other goes on
      for (MapPartitionWriter w : all) {
        w.doNotWaitForRestart();
      }
    }
    live.addAll(all);
  }

  public MapPartitionId id() {
    return id;
  }

  /** See {@link MapPartitionWriter#startRegion}. */
  public void startRegion(boolean broadcast) throws IOException {
    onEachCopy(w -> w.startRegion(broadcast));
  }

  /** See {@link MapPartitionWriter#write}; consumes {@code data} once, for every copy. */
  public void write(int subpartition, ByteBuffer data) throws IOException {
    onEachCopy(w -> w.write(subpartition, data.duplicate()));
    data.position(data.limit());
  }

  /** See {@link MapPartitionWriter#writeEvent}; consumes {@code event} once, for every copy. */
  public void writeEvent(int subpartition, ByteBuffer event) throws IOException {
    onEachCopy(w -> w.writeEvent(subpartition, event.duplicate()));
    event.position(event.limit());
  }

  /** See {@link MapPartitionWriter#finishRegion}. */
  public void finishRegion() throws IOException {
    onEachCopy(MapPartitionWriter::finishRegion);
  }

  /**
   * Commits every copy still written to; succeeds when at least one commits.
   *
   * @return bytes stored on one server (after compression, with block headers)
   * @throws IOException with the first failure when no copy committed
   */
  public long commit() throws IOException {
    long[] stored = new long[1];
    onEachCopy(w -> stored[0] = w.commit());
    if (live.size() < all.size()) {
      LOG.warn(
          "{} is committed on {} only: its other copy failed ({}); should that server be lost too,"
              + " the producer runs again",
          id,
          ClientContext.format(live.get(0).server()),
          firstFailure.getMessage());
    }
    return stored[0];
  }

  /** The servers that hold the partition: after {@link #commit}, those that committed it. */
  public List<ServerAddress> committedOn() {
    List<ServerAddress> servers = new ArrayList<>(live.size());
    for (MapPartitionWriter w : live) {
      servers.add(w.server());
    }
    return servers;
  }

  /** See {@link MapPartitionWriter#bytesPerSubpartition}. */
  public long[] bytesPerSubpartition() {
    return all.get(0).bytesPerSubpartition();
  }

  /**
   * Applies {@code step} to each live copy; a copy whose step fails is dropped while another lives,
   * else the first failure is thrown.
   */
  private void onEachCopy(Step step) throws IOException {
    if (live.isEmpty()) {
      throw firstFailure;
    }
    for (MapPartitionWriter w : List.copyOf(live)) {
      try {
        step.apply(w);
      } catch (IOException e) {
        if (firstFailure == null) {
          firstFailure = e;
        }
        live.remove(w);
        w.close(); // drops what the failed copy holds, best effort
        if (live.isEmpty()) {
          throw firstFailure;
        }
        LOG.warn(
            "{}: writing the copy on {} failed; going on with the copy on {} only: {}",
            id,
            ClientContext.format(w.server()),
            ClientContext.format(live.get(0).server()),
            e.getMessage());
      }
    }
  }

  /** Closes every copy's writer: see {@link MapPartitionWriter#close}. Idempotent. */
  @Override
  public void close() {
    for (MapPartitionWriter w : all) {
      w.close();
    }
  }
}
