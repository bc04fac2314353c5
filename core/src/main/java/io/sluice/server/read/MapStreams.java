package io.sluice.server.read;

import io.netty.channel.Channel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.storage.CommittedMapPartition;
import io.sluice.server.storage.DataDirectory;
import java.io.Closeable;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongSupplier;
import java.util.function.ObjLongConsumer;

/**
 * Open map partition read streams and the IO schedulers (one per data directory) that serve their
 * credits. Streams close when the reader closes them or its connection closes; at most {@code
 * maxPerConnection} per connection, and as many per application as its {@link StreamQuota} allows.
 * Thread safe.
 */
public final class MapStreams implements Closeable {
  private final int maxPerConnection;
  private final StreamQuota quota;
  private final LongSupplier ids;
  private final Map<DataDirectory, MapReadScheduler> schedulers = new HashMap<>();
  private final Map<Long, MapReadStream> streams = new ConcurrentHashMap<>();
  private final Map<Channel, Set<Long>> byChannel = new ConcurrentHashMap<>();

  /**
   * Opens streams: opening reads the partition's index from disk, which must not happen on an event
   * loop. Two threads; the answers go out from them.
   */
  private final ExecutorService openers =
      Executors.newFixedThreadPool(2, new DefaultThreadFactory("sluice-map-stream-open", true));

  public MapStreams(
      List<DataDirectory> dirs,
      int maxPerConnection,
      StreamQuota quota,
      LongSupplier ids,
      int buffersPerDirectory,
      int bufferSize,
      MemoryBudget memory,
      ServerMetrics metrics,
      ObjLongConsumer<String> readCounter) {
    this.maxPerConnection = maxPerConnection;
    this.quota = quota;
    this.ids = ids;
    int i = 0;
    for (DataDirectory d : dirs) {
      MapReadScheduler s =
          new MapReadScheduler(
              "dir" + i++, buffersPerDirectory, bufferSize, memory, metrics, readCounter);
      s.start();
      schedulers.put(d, s);
    }
  }

  /** The IO scheduler of a data directory. */
  public MapReadScheduler scheduler(DataDirectory dir) {
    MapReadScheduler s = schedulers.get(dir);
    if (s == null) {
      throw new IllegalStateException("no IO scheduler for " + dir);
    }
    return s;
  }

  /**
   * Opens a stream over subpartitions {@code [start, end]}; null when the connection already holds
   * its maximum or has closed. A stream opened as its connection closes (on the opener threads) is
   * closed here, never left behind (see {@link ReadStreams#open}).
   *
   * @throws IllegalArgumentException naming the partition when the range is not in it
   * @throws IOException when its index cannot be read (for example it was released)
   * @throws io.sluice.server.storage.QuotaExceededException when the partition's application holds
   *     as many streams as it may
   */
  public MapReadStream open(Channel channel, CommittedMapPartition file, int start, int end)
      throws IOException {
    if (!channel.isActive()) {
      return null;
    }
    Set<Long> open = byChannel.computeIfAbsent(channel, c -> ConcurrentHashMap.newKeySet());
    if (open.size() >= maxPerConnection) {
      return null;
    }
    quota.opened(file.key().appId(), file.key().toString());
    MapReadStream s;
    try {
      s =
          new MapReadStream(
              ids.getAsLong(), channel, file, start, end, scheduler(file.directory()).bufferSize());
    } catch (IOException | RuntimeException e) {
      quota.closed(file.key().appId());
      throw e;
    }
    streams.put(s.id(), s);
    open.add(s.id());
    if (!channel.isActive()) {
      // the connection's closeAll may have taken its set before this stream was in it
      open.remove(s.id());
      closeStream(s);
      closeAll(channel);
      return null;
    }
    return s;
  }

  /**
   * {@link #open}, on the opener threads: completes with the stream, with null when the connection
   * holds its maximum, or exceptionally as {@link #open} throws.
   */
  public CompletableFuture<MapReadStream> openAsync(
      Channel channel, CommittedMapPartition file, int start, int end) {
    CompletableFuture<MapReadStream> opened = new CompletableFuture<>();
    try {
      openers.execute(
          () -> {
            try {
              opened.complete(open(channel, file, start, end));
            } catch (IOException | RuntimeException e) {
              opened.completeExceptionally(e);
            }
          });
    } catch (RejectedExecutionException e) {
      opened.completeExceptionally(new IOException("the server is stopping", e));
    }
    return opened;
  }

  /**
   * One credit for stream {@code id}.
   *
   * @return false when {@code channel} has no such stream
   */
  public boolean credit(Channel channel, long id, long requestId) {
    MapReadStream s = get(channel, id);
    if (s == null) {
      return false;
    }
    scheduler(s.file().directory()).credit(s, requestId);
    return true;
  }

  private MapReadStream get(Channel channel, long id) {
    MapReadStream s = streams.get(id);
    return s != null && s.owner() == channel ? s : null;
  }

  /**
   * @return false when {@code channel} has no such stream
   */
  public boolean close(Channel channel, long id) {
    MapReadStream s = get(channel, id);
    if (s == null) {
      return false;
    }
    closeStream(s);
    Set<Long> open = byChannel.get(channel);
    if (open != null) {
      open.remove(id);
    }
    return true;
  }

  /** Closes every stream of a closed connection. */
  public void closeAll(Channel channel) {
    Set<Long> open = byChannel.remove(channel);
    if (open != null) {
      for (Long id : open) {
        MapReadStream s = streams.get(id);
        if (s != null) {
          closeStream(s);
        }
      }
    }
  }

  private void closeStream(MapReadStream s) {
    if (streams.remove(s.id()) != null) {
      quota.closed(s.file().key().appId());
    }
    scheduler(s.file().directory()).close(s);
  }

  public int openCount() {
    return streams.size();
  }

  @Override
  public void close() {
    openers.shutdownNow();
    for (MapReadScheduler s : schedulers.values()) {
      s.close();
    }
  }
}
