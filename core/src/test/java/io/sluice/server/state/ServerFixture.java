package io.sluice.server.state;

import com.codahale.metrics.MetricRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.proto.Status;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.storage.DataDirectories;
import io.sluice.server.storage.ReducePartitionSplit;
import io.sluice.server.storage.ShuffleRegistry;
import io.sluice.server.storage.ShuffleShape;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * The storage side of one server run over two data directories, with its state store: what a {@code
 * ShuffleServer} wires, without the network.
 */
final class ServerFixture implements AutoCloseable {
  final ServerConf conf;
  final MemoryBudget memory;
  final DataDirectories dirs;
  final ServerStateStore store;
  final ShuffleRegistry registry;

  ServerFixture(Path root) throws IOException {
    this.conf =
        new ServerConf(
            SluiceConf.of(
                Map.of(
                    "sluice.server.dirs", root.resolve("a") + "," + root.resolve("b"),
                    "sluice.flush.size", "1k",
                    "sluice.read.chunkSize", "4k",
                    "sluice.memory.max", "4m",
                    "sluice.commit.fsync", "false")));
    this.memory = new MemoryBudget(conf.memoryMax());
    MetricRegistry metrics = new MetricRegistry();
    this.dirs = new DataDirectories(conf, memory, new ServerMetrics(metrics, memory));
    this.store = ServerStateStore.open(conf.stateDir(), false, metrics);
    this.registry = new ShuffleRegistry(dirs, Clock.SYSTEM, store);
  }

  StateRecovery.Summary recover() throws IOException {
    return StateRecovery.recover(store, registry, dirs);
  }

  /** Pushes one batch of {@code payload} bytes from {@code map}; returns the split's answer. */
  Status push(String appId, int shuffleId, int partition, int epoch, int map, int payload) {
    ReducePartitionSplit split =
        registry
            .register(appId, shuffleId, ShuffleShape.of(100, 100))
            .splitForPush(partition, epoch);
    ByteBuf body = PooledByteBufAllocator.DEFAULT.directBuffer();
    BatchFormat.writeHeader(body, map, 0, 0, payload);
    body.writeBytes(new byte[payload]);
    if (!memory.tryReserve(body.readableBytes())) {
      body.release();
      throw new AssertionError("test memory budget exhausted");
    }
    Status status = split.append(body);
    if (status != Status.OK && status != Status.SOFT_SPLIT) {
      memory.release(body.readableBytes());
      body.release();
    }
    return status;
  }

  /** What ShuffleServer.close() does to storage: commit the open splits, drop the rest. */
  void stopGracefully() throws Exception {
    registry.sealAndCommitOpenSplits().get();
    registry.discardUncommitted().get();
  }

  /**
   * A crash: what was accepted reaches its {@code .inprogress} files (so no buffer is left
   * unreleased), nothing more is committed, and the store is closed only so the next run can open
   * it, as the kernel releases its lock when a killed process dies.
   */
  void crash() {
    registry.flushLargest(Long.MAX_VALUE);
    close();
  }

  @Override
  public void close() {
    dirs.close();
    store.close();
  }
}
