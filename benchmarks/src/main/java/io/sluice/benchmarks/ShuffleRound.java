package io.sluice.benchmarks;

import com.codahale.metrics.Meter;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.client.ClientContext;
import io.sluice.client.PartitionLocations;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.coordinator.ShuffleCommit;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.server.ServerMetrics;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.LongStream;

/**
 * One shuffle of the server benchmark: registers it, runs the map tasks concurrently (each a {@link
 * MapOutputPusher} writing its share of the bytes as {@link Records} to random partitions), waits
 * for the commit, reads every partition back like reduce tasks do and verifies every record.
 */
final class ShuffleRound {
  private final ClientContext context;
  private final ShuffleCoordinator coordinator;
  private final CoordinatorClient coordinatorClient;
  private final Records records;
  private final CpuMeter cpu;
  private final List<ServerMetrics> serverMetrics;
  private final int partitions;
  private final int readers;
  private final int mapsPerPusher;
  private final int partitionsPerReader;

  /**
   * @param mapsPerPusher map tasks per pusher: a round of {@code p} pushers runs {@code p *
   *     mapsPerPusher} map tasks, {@code p} at a time, each writing its share of the bytes (many
   *     small map tasks push small batches, as a wide shuffle of many tasks does)
   * @param partitionsPerReader partitions each reader reads at once, with one {@link
   *     PartitionReader} (a reduce task of a coalesced partition range)
   */
  ShuffleRound(
      ClientContext context,
      ShuffleCoordinator coordinator,
      CoordinatorClient coordinatorClient,
      Records records,
      CpuMeter cpu,
      List<ServerMetrics> serverMetrics,
      int partitions,
      int readers,
      int mapsPerPusher,
      int partitionsPerReader) {
    this.context = context;
    this.coordinator = coordinator;
    this.coordinatorClient = coordinatorClient;
    this.records = records;
    this.cpu = cpu;
    this.serverMetrics = List.copyOf(serverMetrics);
    this.partitions = partitions;
    this.readers = readers;
    this.mapsPerPusher = mapsPerPusher;
    this.partitionsPerReader = partitionsPerReader;
  }

  /** What one map task wrote. */
  private static final class MapOutput {
    final int[] counts;
    final long[] bytes;
    long total;
    long finishedNanos;

    MapOutput(int partitions) {
      counts = new int[partitions];
      bytes = new long[partitions];
    }
  }

  RoundResult run(int shuffleId, int pushers, long totalBytes)
      throws IOException, InterruptedException {
    coordinator.registerShuffle(shuffleId, pushers * mapsPerPusher, partitions);
    ExecutorService tasks =
        Executors.newFixedThreadPool(
            Math.max(pushers, readers), new DefaultThreadFactory("bench-task", true));
    try {
      return measure(tasks, shuffleId, pushers, totalBytes);
    } finally {
      tasks.shutdownNow();
      coordinator.unregisterShuffle(shuffleId);
    }
  }

  private RoundResult measure(ExecutorService tasks, int shuffleId, int pushers, long totalBytes)
      throws IOException, InterruptedException {
    RoundResult.Builder result = new RoundResult.Builder(pushers);
    int numMaps = pushers * mapsPerPusher;
    PartitionLocations locations = coordinator.locations(shuffleId);
    ReadVerifier verifier = new ReadVerifier(records, numMaps, partitions);
    long congested = count(ServerMetrics::pushesCongested);
    long batchesBefore = count(ServerMetrics::batchesPushed);
    long[] pushedBefore = counts(ServerMetrics::bytesPushed);
    long[] replicaPushedBefore = counts(ServerMetrics::replicaBytesPushed);

    CountDownLatch go = new CountDownLatch(1);
    Semaphore running = new Semaphore(pushers);
    List<Future<MapOutput>> maps = new ArrayList<>();
    for (int m = 0; m < numMaps; m++) {
      int map = m;
      long share = totalBytes / numMaps + (map < totalBytes % numMaps ? 1 : 0);
      maps.add(
          tasks.submit(
              () -> {
                go.await();
                running.acquire();
                try {
                  return pushMap(shuffleId, map, share, locations);
                } finally {
                  running.release();
                }
              }));
    }
    CpuMeter.Snapshot cpuStart = cpu.snapshot();
    long start = System.nanoTime();
    go.countDown();
    long pushEnd = start;
    for (int m = 0; m < numMaps; m++) {
      MapOutput out = await(maps.get(m), "map " + m);
      verifier.expect(m, out.counts, out.bytes);
      result.bytesWritten += out.total;
      pushEnd = Math.max(pushEnd, out.finishedNanos);
    }
    ShuffleCommit committed = awaitCommit(shuffleId);
    long committedAt = System.nanoTime();
    CpuMeter.Snapshot cpuCommitted = cpu.snapshot();
    if (!committed.lostPartitions().isEmpty()) {
      throw new IOException(
          "the commit lost "
              + committed.lostPartitions().cardinality()
              + " partition(s): "
              + committed.lostReason());
    }

    AtomicInteger nextPartition = new AtomicInteger();
    List<Future<Long>> reads = new ArrayList<>();
    for (int r = 0; r < readers; r++) {
      reads.add(tasks.submit(() -> readPartitions(shuffleId, numMaps, nextPartition, verifier)));
    }
    for (Future<Long> read : reads) {
      await(read, "a reader");
    }
    long readEnd = System.nanoTime();
    CpuMeter.Snapshot cpuRead = cpu.snapshot();

    result.pushNanos = pushEnd - start;
    result.commitNanos = committedAt - pushEnd;
    result.readNanos = readEnd - committedAt;
    result.serverCpuWriteNanos = cpuCommitted.serverNanos - cpuStart.serverNanos;
    result.serverCpuReadNanos = cpuRead.serverNanos - cpuCommitted.serverNanos;
    result.processCpuWriteNanos = cpuCommitted.processNanos - cpuStart.processNanos;
    result.processCpuReadNanos = cpuRead.processNanos - cpuCommitted.processNanos;
    result.congestedPushes = count(ServerMetrics::pushesCongested) - congested;
    result.batchesPushed = count(ServerMetrics::batchesPushed) - batchesBefore;
    result.serverBytesPushed = minus(counts(ServerMetrics::bytesPushed), pushedBefore);
    result.serverReplicaBytesPushed =
        minus(counts(ServerMetrics::replicaBytesPushed), replicaPushedBefore);
    result.outcome = verifier.finish();
    return result.build();
  }

  /** A map task: writes at least {@code share} bytes of records, then finishes the pusher. */
  private MapOutput pushMap(int shuffleId, int map, long share, PartitionLocations locations)
      throws IOException {
    MapOutput out = new MapOutput(partitions);
    SplittableRandom random = new SplittableRandom(records.mapSeed(map));
    byte[] record = new byte[Records.MAX_LENGTH];
    try (MapOutputPusher pusher =
        new MapOutputPusher(
            context, coordinatorClient, coordinator.appId(), shuffleId, map, 0, locations)) {
      while (out.total < share) {
        int partition = random.nextInt(partitions);
        int length = records.write(map, partition, out.counts[partition], record);
        pusher.write(partition, record, 0, length);
        out.counts[partition]++;
        out.bytes[partition] += length;
        out.total += length;
      }
      pusher.finish();
    }
    out.finishedNanos = System.nanoTime();
    return out;
  }

  /**
   * A reader thread: reads whole partitions, one reader per range of {@code partitionsPerReader},
   * like reduce tasks.
   */
  private long readPartitions(
      int shuffleId, int numMaps, AtomicInteger nextPartition, ReadVerifier verifier)
      throws IOException {
    long bytes = 0;
    for (int p = nextPartition.getAndAdd(partitionsPerReader);
        p < partitions;
        p = nextPartition.getAndAdd(partitionsPerReader)) {
      CommittedShuffle committed;
      try {
        committed =
            coordinatorClient.committedSplits(
                shuffleId, p, Math.min(partitions, p + partitionsPerReader));
      } catch (StatusException e) {
        throw new IOException("coordinator: " + e.getMessage(), e);
      }
      try (PartitionReader reader =
          new PartitionReader(context, coordinator.appId(), shuffleId, committed, 0, numMaps)) {
        for (ShuffleBatch batch = reader.next(); batch != null; batch = reader.next()) {
          verifier.check(batch);
          bytes += batch.length();
        }
      }
    }
    return bytes;
  }

  /** One meter's count on each server, in server order. */
  private long[] counts(Function<ServerMetrics, Meter> meter) {
    return serverMetrics.stream().mapToLong(m -> meter.apply(m).getCount()).toArray();
  }

  /** One meter's count summed over the servers. */
  private long count(Function<ServerMetrics, Meter> meter) {
    return LongStream.of(counts(meter)).sum();
  }

  private static long[] minus(long[] after, long[] before) {
    long[] d = new long[after.length];
    for (int i = 0; i < d.length; i++) {
      d[i] = after[i] - before[i];
    }
    return d;
  }

  private ShuffleCommit awaitCommit(int shuffleId) throws IOException, InterruptedException {
    long timeout = context.conf().commitTimeoutMillis();
    try {
      return coordinator.committed(shuffleId).get(timeout, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IOException("the commit failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("the commit did not complete in " + timeout + " ms", e);
    }
  }

  private static <T> T await(Future<T> task, String what) throws IOException, InterruptedException {
    try {
      return task.get();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw new IOException(what + " failed: " + cause, cause);
    }
  }
}
