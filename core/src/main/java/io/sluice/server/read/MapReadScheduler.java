package io.sluice.server.read;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.network.Message;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.RequestLimits;
import io.sluice.protocol.proto.MapBuffer;
import io.sluice.protocol.proto.Status;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.storage.CommittedMapPartition;
import java.io.Closeable;
import java.io.IOException;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.function.ObjLongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The IO scheduler of one data directory for map partition reads. Every credit a reader grants
 * waits here; one thread serves them with a bounded pool of read buffers. Within an application it
 * serves the pending read with the smallest (file, offset), so many consumers of one map file, each
 * reading its own subpartitions, turn into one near-sequential sweep through the file instead of
 * random reads. Between applications it takes turns, one read each, so a large job's sweep does not
 * hold the disk while a small job's consumers wait. Each read buffer is reserved in the server's
 * memory budget until its response is written.
 */
public final class MapReadScheduler implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(MapReadScheduler.class);

  /** Sees every read, in the order the disk gets them (tests, metrics). */
  public interface ReadObserver {
    void read(CommittedMapPartition file, long offset, int length);
  }

  private static final Comparator<MapReadStream> ORDER =
      Comparator.comparingLong((MapReadStream s) -> s.file().sequence())
          .thenComparingLong(MapReadStream::nextOffset);

  private final String name;
  private final int maxBuffers;
  private final int bufferSize;
  private final MemoryBudget memory;
  private final ServerMetrics metrics;
  private volatile ReadObserver observer = (file, offset, length) -> {};

  // guarded by this
  private final ApplicationTurns<MapReadStream> ready =
      new ApplicationTurns<>(() -> new PriorityQueue<>(ORDER));
  private int buffersInUse;
  private boolean closed;
  private MapReadStream serving;
  private boolean paused;
  private Thread thread;

  private final ObjLongConsumer<String> readCounter;

  // the last read, for the in-order metric (scheduler thread only)
  private long lastSequence = -1;
  private long lastEnd;

  /**
   * @param readCounter told the application and the bytes of every read (its traffic)
   */
  public MapReadScheduler(
      String name,
      int maxBuffers,
      int bufferSize,
      MemoryBudget memory,
      ServerMetrics metrics,
      ObjLongConsumer<String> readCounter) {
    this.readCounter = readCounter;
    this.name = name;
    this.maxBuffers = maxBuffers;
    this.bufferSize = bufferSize;
    this.memory = memory;
    this.metrics = metrics;
  }

  /** Starts the scheduler's thread. */
  public synchronized void start() {
    thread = new DefaultThreadFactory("sluice-map-reader-" + name, true).newThread(this::run);
    thread.start();
  }

  public void setObserver(ReadObserver observer) {
    this.observer = observer;
  }

  public int bufferSize() {
    return bufferSize;
  }

  /** Holds every read until {@link #resume()} (tests; an operator draining a disk). */
  public synchronized void pause() {
    paused = true;
  }

  public synchronized void resume() {
    paused = false;
    notifyAll();
  }

  /** Credits waiting to be served. */
  public synchronized int waitingCredits() {
    int n = 0;
    for (MapReadStream s : ready.all()) {
      n += s.credits.size();
    }
    return n;
  }

  /** One credit of {@code stream}: the response to {@code requestId} carries one buffer. */
  /**
   * Queues one credit of {@code stream}.
   *
   * @throws IllegalArgumentException naming the limit when the stream already has {@link
   *     RequestLimits#MAX_CREDITS_PER_STREAM} credits queued
   */
  public synchronized void credit(MapReadStream stream, long requestId) {
    if (stream.closed || closed) {
      return;
    }
    if (stream.credits.size() >= RequestLimits.MAX_CREDITS_PER_STREAM) {
      throw new IllegalArgumentException(
          "map stream "
              + stream.id()
              + " of "
              + stream.file().key()
              + " already has "
              + stream.credits.size()
              + " credits waiting (RequestLimits.MAX_CREDITS_PER_STREAM)");
    }
    stream.credits.add(requestId);
    if (!stream.queued && serving != stream) {
      stream.queued = true;
      ready.add(appOf(stream), stream);
      notifyAll();
    }
  }

  /** The stream's reader went away: its waiting credits are dropped unanswered. */
  public synchronized void close(MapReadStream stream) {
    stream.closed = true;
    stream.credits.clear();
    if (stream.queued) {
      ready.remove(appOf(stream), stream);
      stream.queued = false;
    }
  }

  private void run() {
    while (true) {
      MapReadStream next;
      synchronized (this) {
        while (!closed && (paused || ready.isEmpty() || buffersInUse >= maxBuffers)) {
          try {
            wait();
          } catch (InterruptedException e) {
            return;
          }
        }
        if (closed) {
          return;
        }
        next = take();
      }
      serve(next);
    }
  }

  /**
   * Serves the best waiting credit on the calling thread.
   *
   * @return false when no credit was waiting
   */
  public boolean serveOne() {
    MapReadStream next;
    synchronized (this) {
      if (ready.isEmpty()) {
        return false;
      }
      next = take();
    }
    serve(next);
    return true;
  }

  /** Caller holds the lock. */
  private MapReadStream take() {
    MapReadStream s = ready.poll();
    s.queued = false;
    serving = s;
    buffersInUse++;
    return s;
  }

  private void serve(MapReadStream s) {
    long requestId;
    synchronized (this) {
      requestId = s.credits.poll();
    }
    long reserved = 0;
    Message response;
    try {
      if (s.failure != null) {
        response = Messages.error(requestId, Status.NOT_FOUND, s.failure);
      } else if (s.atEnd()) {
        response =
            Messages.response(
                Messages.okBuilder(requestId)
                    .setMapBuffer(MapBuffer.newBuilder().setEndOfStream(true))
                    .build());
      } else {
        int size = bufferSize;
        while (true) {
          reserved = reserve(size);
          ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
          try {
            long offset = s.nextOffset();
            int sub = s.readInto(buf);
            if (sub < 0) {
              // one block larger than a read buffer: read it alone
              buf.release();
              buf = null; // released: a failure below must not release it again
              memory.release(reserved);
              reserved = 0;
              size = s.blockSizeAtPosition();
              continue;
            }
            noteRead(s.file(), offset, buf.readableBytes());
            response =
                Message.withBody(
                    MessageType.RESPONSE.id(),
                    Messages.okBuilder(requestId)
                        .setMapBuffer(
                            MapBuffer.newBuilder()
                                .setSubpartition(sub)
                                .setBacklog(s.backlog())
                                .setOffset(offset))
                        .build(),
                    requestId,
                    buf);
            break;
          } catch (IOException | RuntimeException e) {
            if (buf != null) {
              buf.release();
            }
            throw e;
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      if (reserved > 0) {
        memory.release(reserved);
        reserved = 0;
      }
      s.failure = "cannot read " + s + ": " + e.getMessage();
      LOG.warn("{}", s.failure);
      response = Messages.error(requestId, Status.NOT_FOUND, s.failure);
    }
    long release = reserved;
    s.owner().writeAndFlush(response).addListener(f -> returned(release));
    synchronized (this) {
      serving = null;
      if (!s.closed && !s.credits.isEmpty() && !s.queued) {
        s.queued = true;
        ready.add(appOf(s), s);
      }
    }
  }

  private static String appOf(MapReadStream s) {
    return s.file().key().appId();
  }

  /** Waits until the memory budget has room for one buffer; reads free memory quickly. */
  private long reserve(int size) throws IOException {
    while (!memory.tryReserve(size)) {
      synchronized (this) {
        if (closed) {
          throw new IOException("the server is stopping");
        }
      }
      try {
        Thread.sleep(2);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while waiting for memory", e);
      }
    }
    return size;
  }

  private void noteRead(CommittedMapPartition file, long offset, int length) {
    metrics.bytesRead().mark(length);
    readCounter.accept(file.key().appId(), length);
    metrics.mapReads().inc();
    if (file.sequence() != lastSequence || offset >= lastEnd) {
      metrics.mapReadsInOrder().inc();
    }
    lastSequence = file.sequence();
    lastEnd = offset + length;
    observer.read(file, offset, length);
  }

  private void returned(long reserved) {
    if (reserved > 0) {
      memory.release(reserved);
    }
    synchronized (this) {
      buffersInUse--;
      notifyAll();
    }
  }

  @Override
  public void close() {
    Thread t;
    synchronized (this) {
      closed = true;
      ready.clear();
      notifyAll();
      t = thread;
    }
    if (t != null) {
      try {
        t.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
