package io.sluice.client.mappartition;

import io.sluice.client.ClientContext;
import io.sluice.client.ServerRestartWait;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.proto.ServerAddress;
import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads subpartitions {@code [start, end]} of a map partition that has one or two copies ({@code
 * sluice.replication.factor}), like a {@link MapPartitionReader}: from the primary's copy and, when
 * that read fails in any way (the stream does not open, the server goes away mid-stream, a block
 * fails its check, or the stream's blocks do not add up to the writer's records), from the
 * replica's, resuming where the failed read stopped.
 *
 * <p><b>Resuming.</b> Blocks have no ids, but both copies hold the same blocks in the same order:
 * one {@link ReplicatedMapPartitionWriter} fed both copies' writers the same calls, and a server
 * serves a stream's blocks in file order (region by region, subpartition by subpartition). So the
 * replica's stream is opened over the same range from its start and the blocks already handed out
 * are skipped by count; the skipped blocks are still verified and must match what was handed out (a
 * fingerprint over their subpartitions and checksums), else the copies differ and the read fails
 * rather than deliver a duplicate or skip a block. The replica's reader checks its whole stream
 * against the writer's records, skipped blocks included. A block handed out is never taken back.
 * When every copy failed, the last because its server refused or dropped the connection as a
 * restarting server does, the reader opens the first copy again after a pause and resumes the same
 * way, for at most {@code sluice.client.serverRestartWait}; any other failure of the last copy
 * fails the reader, so the engine reruns the producer.
 *
 * <p>Threads as {@link MapPartitionReader}: one consumer thread polls; {@code onAvailable} runs on
 * network threads.
 */
public final class ReplicatedMapPartitionReader implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicatedMapPartitionReader.class);

  private final ClientContext context;
  private final MapPartitionId id;
  private final List<ServerAddress> copies;
  private final int startSubpartition;
  private final int endSubpartition;
  private final Runnable onAvailable;

  // consumer thread only
  private MapPartitionReader current;
  private int copy;
  private long handedOut;
  private long handedOutPrint;
  // after a failover: blocks of the replica's stream still to skip, and what they add up to
  private long toSkip;
  private long skippedPrint;
  private IOException failure;
  private boolean closed;
  // once every copy failed as a restarting server fails: the wait for them, and when to reopen
  // (current is null until then)
  private ServerRestartWait.Wait restartWait;
  private long reopenAtNanos;

  private ReplicatedMapPartitionReader(
      ClientContext context,
      MapPartitionId id,
      List<ServerAddress> copies,
      int startSubpartition,
      int endSubpartition,
      Runnable onAvailable) {
    this.context = context;
    this.id = id;
    this.copies = List.copyOf(copies);
    this.startSubpartition = startSubpartition;
    this.endSubpartition = endSubpartition;
    this.onAvailable = onAvailable;
  }

  /**
   * Opens the read stream on the first copy at once; blocks arrive asynchronously.
   *
   * @param copies the servers of the partition's copies, primary first
   */
  public static ReplicatedMapPartitionReader open(
      ClientContext context,
      MapPartitionId id,
      List<ServerAddress> copies,
      int startSubpartition,
      int endSubpartition,
      Runnable onAvailable) {
    if (copies.isEmpty() || copies.size() > 2) {
      throw new IllegalArgumentException(
          id + ": a map partition has one or two copies, not " + copies.size());
    }
    ReplicatedMapPartitionReader reader =
        new ReplicatedMapPartitionReader(
            context, id, copies, startSubpartition, endSubpartition, onAvailable);
    reader.current = reader.openCopy(0);
    return reader;
  }

  private MapPartitionReader openCopy(int index) {
    return MapPartitionReader.open(
        context, id, copies.get(index), startSubpartition, endSubpartition, onAvailable);
  }

  /**
   * The next block, or null when none is available yet or the stream is finished; see {@link
   * MapPartitionReader#poll}.
   *
   * @throws IOException when the read failed on every copy it may use
   */
  public MapPartitionReader.Block poll() throws IOException {
    if (failure != null) {
      throw failure;
    }
    while (true) {
      if (current == null) {
        if (System.nanoTime() - reopenAtNanos < 0) {
          return null; // waiting for a restarting server; onAvailable runs when it is time
        }
        current = openCopy(copy);
      }
      MapPartitionReader.Block block;
      try {
        block = current.poll();
      } catch (IOException e) {
        failOver(e);
        continue;
      }
      if (block == null && toSkip > 0 && current.isFinished()) {
        throw copiesDiffer("its stream ended after " + (handedOut - toSkip) + " blocks");
      }
      if (block == null || toSkip == 0) {
        if (block != null) {
          handedOut++;
          handedOutPrint = fingerprint(handedOutPrint, block);
        }
        return block;
      }
      skippedPrint = fingerprint(skippedPrint, block);
      if (--toSkip == 0 && skippedPrint != handedOutPrint) {
        throw copiesDiffer("its first " + handedOut + " blocks differ");
      }
    }
  }

  /** Fails the reader: the replica's stream does not continue what the other copy handed out. */
  private IOException copiesDiffer(String how) {
    failure =
        new IOException(
            "Reading subpartitions ["
                + startSubpartition
                + ", "
                + endSubpartition
                + "] of "
                + id
                + " from its replica on Sluice server "
                + ClientContext.format(copies.get(copy))
                + " after "
                + handedOut
                + " blocks were read from the other copy: "
                + how
                + "; the copies are not the same");
    return failure;
  }

  /** Whether the stream is done: see {@link MapPartitionReader#isFinished}. */
  public boolean isFinished() {
    return failure == null && toSkip == 0 && current != null && current.isFinished();
  }

  /**
   * Continues on the next copy; when every copy failed, the last because its server refused or
   * dropped the connection as a restarting server does, on the first copy again after a pause,
   * resuming the same way, until {@code sluice.client.serverRestartWait} has passed ({@link
   * ServerRestartWait}); otherwise fails the reader with {@code e}.
   */
  private void failOver(IOException e) throws IOException {
    if (closed) {
      failure = e;
      throw e;
    }
    if (copy + 1 >= copies.size()) {
      waitForRestart(e);
      return;
    }
    current.close();
    copy++;
    LOG.warn(
        "Reading subpartitions [{}, {}] of {} from {} failed after {} blocks; going on with its"
            + " replica on {}: {}",
        startSubpartition,
        endSubpartition,
        id,
        ClientContext.format(copies.get(copy - 1)),
        handedOut,
        ClientContext.format(copies.get(copy)),
        e.getMessage());
    context.metrics().readFailedOver();
    toSkip = handedOut;
    skippedPrint = 0;
    current = openCopy(copy);
  }

  private void waitForRestart(IOException e) throws IOException {
    if (restartWait == null) {
      restartWait = context.restarts().start();
    }
    long pause = restartWait.nextPauseMillis(e);
    if (pause < 0) {
      failure = e;
      throw e;
    }
    if (restartWait.retries() == 1) {
      LOG.warn(
          "Reading subpartitions [{}, {}] of {} failed after {} blocks: waiting up to {} ms for"
              + " its server {} to come back (sluice.client.serverRestartWait): {}",
          startSubpartition,
          endSubpartition,
          id,
          handedOut,
          context.restarts().waitMillis(),
          ClientContext.format(copies.get(copy)),
          e.getMessage());
    }
    current.close();
    current = null;
    copy = 0;
    toSkip = handedOut;
    skippedPrint = 0;
    reopenAtNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pause);
    try {
      context.scheduler().schedule(onAvailable, pause, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closing) {
      failure = e; // the client is closing: nothing would wake the consumer
      throw e;
    }
  }

  /** Folds a block's subpartition and checksum into a running, order-sensitive fingerprint. */
  private static long fingerprint(long print, MapPartitionReader.Block block) {
    long term = ((long) block.subpartition() << 32) | (block.storedChecksum() & 0xffffffffL);
    return print * 0x9E3779B97F4A7C15L + term;
  }

  /** The server the reader reads from now. */
  public ServerAddress server() {
    return copies.get(copy);
  }

  /** Closes the current stream: see {@link MapPartitionReader#close}. Idempotent. */
  @Override
  public void close() {
    closed = true;
    if (current != null) {
      current.close();
    }
  }

  /** {@link MapPartitionReader#closedOnServer} of the copy read last. */
  public CompletableFuture<Void> closedOnServer() {
    return current == null ? CompletableFuture.completedFuture(null) : current.closedOnServer();
  }

  @Override
  public String toString() {
    return "reader of " + id + " on " + ClientContext.format(copies.get(copy));
  }
}
