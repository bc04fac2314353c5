package io.sluice.server.storage;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.MetricRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.proto.Status;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryAccount;
import io.sluice.server.memory.MemoryBudget;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.io.TempDir;

/**
 * Random interleavings of pushes, early flushes, commits (to files, or to the memory tier on odd
 * repetitions), write-backs of the memory tier, directory failures and unregisters: the memory
 * count never goes above the maximum or below what is buffered, and ends at zero.
 */
class AccountingBalanceTest {
  @TempDir Path tmp;

  @RepeatedTest(5)
  void accountingAlwaysBalances(org.junit.jupiter.api.RepetitionInfo info) throws Exception {
    Random random = new Random(info.getCurrentRepetition() * 7919L);
    ServerConf conf =
        new ServerConf(
            SluiceConf.of(
                Map.of(
                    "sluice.server.dirs",
                    tmp.resolve("a") + "," + tmp.resolve("b") + "," + tmp.resolve("c"),
                    "sluice.flush.size",
                    "8k",
                    "sluice.memory.max",
                    "1m",
                    "sluice.split.threshold",
                    "32k",
                    "sluice.flush.writebackBytes",
                    "16k",
                    // odd repetitions commit small splits in the memory tier and write them back
                    "sluice.storage.policy",
                    info.getCurrentRepetition() % 2 == 1 ? "memory,local" : "local",
                    "sluice.storage.memory.maxSplitSize",
                    "24k")));
    MemoryBudget memory = new MemoryBudget(conf.memoryMax(), 0.85, 0.95, 0.5, Clock.SYSTEM);
    DataDirectories dirs =
        new DataDirectories(conf, memory, new ServerMetrics(new MetricRegistry(), memory));
    ShuffleRegistry registry = new ShuffleRegistry(dirs, Clock.SYSTEM);
    memory.setListener(
        new MemoryBudget.Listener() {
          @Override
          public void stateChanged() {
            registry.flushLargest(memory.excessOverResume());
          }

          @Override
          public void needRoom(long bytes) {
            registry.flushLargest(bytes);
          }
        });
    List<CompletableFuture<?>> work = new ArrayList<>();
    try {
      for (int op = 0; op < 3000; op++) {
        int shuffleId = random.nextInt(4);
        int choice = random.nextInt(100);
        if (choice < 80) {
          ServerShuffle shuffle = registry.register("app", shuffleId, ShuffleShape.of(1000, 1000));
          ByteBuf body = body(random);
          int bytes = body.readableBytes();
          ReducePartitionSplit split = null;
          try {
            split = shuffle.splitForPush(random.nextInt(6), random.nextInt(2));
          } catch (StorageUnavailableException e) {
            // all directories failed; the push would be answered HARD_SPLIT
          }
          if (split == null || !memory.tryReserve(bytes)) {
            body.release();
            continue;
          }
          Status s = split.append(body);
          if (s != Status.OK && s != Status.SOFT_SPLIT) {
            memory.release(bytes);
            body.release();
          }
        } else if (choice < 88) {
          registry.flushLargest(random.nextInt(200_000));
        } else if (choice < 93) {
          ServerShuffle shuffle = registry.get("app", shuffleId);
          if (shuffle != null) {
            work.add(shuffle.commit().exceptionally(e -> null));
          }
        } else if (choice < 96) {
          work.add(registry.unregisterShuffle("app", shuffleId));
        } else if (choice < 98) {
          // the memory tier's write-back (age, a stop), racing with everything else
          work.add(registry.writeBackMemorySplits(0).exceptionally(e -> null));
        } else {
          DataDirectory d = dirs.all().get(random.nextInt(3));
          dirs.failed(d, "injected by the test", new java.io.IOException("injected"));
        }
        assertThat(memory.held()).isBetween(0L, memory.max());
      }
      for (int s = 0; s < 4; s++) {
        ServerShuffle shuffle = registry.get("app", s);
        if (shuffle != null && random.nextBoolean()) {
          work.add(shuffle.commit().exceptionally(e -> null));
        }
      }
      MemoryAccount account = memory.account("app");
      work.add(registry.unregisterApplication("app"));
      CompletableFuture.allOf(work.toArray(new CompletableFuture<?>[0])).get(2, TimeUnit.MINUTES);
      assertThat(memory.held()).isZero();
      // and so does the application's part of it, which flow control's fair share reads
      assertThat(account.held()).isZero();
      // and every split it opened was closed (sluice.app.maxOpenWriters counts them)
      assertThat(account.openWriters()).isZero();
    } finally {
      dirs.close();
    }
  }

  private static ByteBuf body(Random random) {
    ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer();
    int batches = 1 + random.nextInt(3);
    for (int i = 0; i < batches; i++) {
      int len = random.nextInt(6000);
      BatchFormat.writeHeader(b, random.nextInt(5), 0, random.nextInt(1000), len);
      b.writeZero(len);
    }
    return b;
  }
}
