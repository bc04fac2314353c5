package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.proto.PushData;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.RawConnection;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import io.sluice.testutil.ThreadDump;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A seeded workload that keeps one server under memory pressure (a small {@code sluice.memory.max},
 * a flush size that lets splits fill it): map tasks push records of random sizes (merged and alone,
 * retried while CONGESTED), some maps also run a losing attempt that pushes copies of the same
 * records and is killed or reports late, and strangers open connections that announce a push body
 * and close half way. Every record of a winning attempt is read back exactly once, no losing copy
 * is read, the memory count never passes the maximum, and it returns to exactly zero.
 *
 * <p>The seed is random per run and named in every failure; rerun one with {@code
 * -Dsluice.stress.seed=N}.
 */
class PushPressureStressIT {
  private static final int MAPS = 6;
  private static final int PARTITIONS = 24;
  private static final long MEMORY_MAX = 8L << 20;

  /**
   * Shuffles pushed one after another on the same server; memory must be back at zero after each.
   */
  private static final int ROUNDS = 12;

  @TempDir Path tmp;

  @Test
  void everyRecordIsReadOnceAndMemoryReturnsToZero() throws Exception {
    long seed = Long.getLong("sluice.stress.seed", new Random().nextLong());
    try {
      run(seed);
    } catch (Throwable t) {
      throw new AssertionError(
          "push pressure stress failed with -Dsluice.stress.seed=" + seed + ": " + t, t);
    }
  }

  private void run(long seed) throws Exception {
    Random random = new Random(seed);
    try (TestCluster cluster =
        TestCluster.start(
            tmp,
            1,
            Map.of(
                "sluice.memory.max", Long.toString(MEMORY_MAX),
                "sluice.flush.size", "2m",
                "sluice.push.maxRetries", "1000",
                "sluice.push.compression", "none"))) {
      ShuffleServer server = cluster.server(0);
      for (int round = 0; round < ROUNDS; round++) {
        runRound(cluster, server, round, random);
      }
      // the workload did press on the budget: splits alone could have buffered several times it
      assertThat(server.memory().peak())
          .as("peak held memory")
          .isGreaterThanOrEqualTo(server.memory().pauseWatermarkBytes());
    }
  }

  /** One shuffle ({@code round} is its id): push, read every record, memory back at zero. */
  private static void runRound(TestCluster cluster, ShuffleServer server, int round, Random random)
      throws Exception {
    {
      int shuffleId = round;
      cluster.coordinator().registerShuffle(shuffleId, MAPS, PARTITIONS);
      ExecutorService pool = Executors.newFixedThreadPool(MAPS + 1);
      List<Future<?>> futures = new ArrayList<>();
      int[][] written = new int[MAPS][PARTITIONS];
      for (int m = 0; m < MAPS; m++) {
        long mapSeed = random.nextLong();
        int map = m;
        futures.add(
            pool.submit(() -> runMap(cluster, shuffleId, map, new Random(mapSeed), written[map])));
      }
      long strangerSeed = random.nextLong();
      futures.add(pool.submit(() -> strangers(server.port(), shuffleId, new Random(strangerSeed))));
      try {
        for (Future<?> f : futures) {
          f.get(3, TimeUnit.MINUTES);
        }
      } catch (TimeoutException e) {
        throw new AssertionError(
            "round "
                + round
                + ": pushers still running after 3 minutes; "
                + server.memory().congestedMessage("(state)")
                + "; threads:\n"
                + ThreadDump.all(),
            e);
      } finally {
        pool.shutdownNow();
      }

      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(shuffleId, 0, PARTITIONS, 0, MAPS)) {
        ShuffleBatch b;
        while ((b = reader.next()) != null) {
          checker.accept(b.partitionId(), b.payload());
        }
      }
      for (int m = 0; m < MAPS; m++) {
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(checker.count(m, p))
              .as("round %d: records of map %d partition %d", round, m, p)
              .isEqualTo(written[m][p]);
        }
      }
      assertThat(server.memory().peak()).isLessThanOrEqualTo(MEMORY_MAX);
      // the strangers' connections may still be closing on the server's event loop
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (server.memory().held() != 0 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(server.memory().held())
          .as("memory held after round %d (peak %d)", round, server.memory().peak())
          .isZero();
    }
  }

  /**
   * One map: the winning attempt 0 writes random records to every partition; a third of the maps
   * first start attempt 1, which pushes copies of some of the same records and is then killed or
   * reports after the winner.
   */
  private static Void runMap(
      TestCluster cluster, int shuffleId, int map, Random random, int[] written) throws Exception {
    MapOutputPusher loser = random.nextInt(3) == 0 ? cluster.pusher(shuffleId, map, 1) : null;
    if (loser != null) {
      writeRecords(loser, map, random, new int[PARTITIONS], 1 + random.nextInt(40));
    }
    try (MapOutputPusher winner = cluster.pusher(shuffleId, map, 0)) {
      writeRecords(winner, map, random, written, 600 + random.nextInt(600));
      winner.finish();
    }
    if (loser != null) {
      if (random.nextBoolean()) {
        try {
          loser.finish(); // late: the winner's report stands
        } catch (IOException e) {
          // the stage may be committed already (every winner reported): its pushes are refused
        }
      }
      loser.close();
    }
    return null;
  }

  /** Writes {@code count} records, each to a random partition, numbered per partition. */
  private static void writeRecords(
      MapOutputPusher pusher, int map, Random random, int[] seqs, int count) throws IOException {
    for (int i = 0; i < count; i++) {
      int p = random.nextInt(PARTITIONS);
      int size =
          random.nextInt(10) == 0 ? 16 * 1024 + random.nextInt(96 * 1024) : random.nextInt(3000);
      byte[] r = Records.record(map, p, seqs[p]++, size);
      pusher.write(p, r, 0, r.length);
      if (random.nextInt(50) == 0) {
        pusher.flush(); // small batches, sent at once: merged pushes of several partitions
      }
    }
  }

  /**
   * Connections that announce a push body, send part of it and close: the server reserves the
   * body's memory and must give it back.
   */
  private static Void strangers(int port, int shuffleId, Random random) throws IOException {
    for (int i = 0; i < 20; i++) {
      int body = 1024 + random.nextInt(256 * 1024);
      try (RawConnection c = new RawConnection("127.0.0.1", port)) {
        byte[] header =
            PushData.newBuilder()
                .setRequestId(1)
                .setAppId(TestCluster.APP_ID)
                .setShuffleId(shuffleId)
                .setPartitionId(random.nextInt(PARTITIONS))
                .build()
                .toByteArray();
        DataOutputStream out = new DataOutputStream(c.output());
        out.writeInt(5 + header.length + body);
        out.writeByte(MessageType.PUSH_DATA.id());
        out.writeInt(header.length);
        out.write(header);
        out.write(new byte[random.nextInt(body)]);
        out.flush();
      }
    }
    return null;
  }
}
