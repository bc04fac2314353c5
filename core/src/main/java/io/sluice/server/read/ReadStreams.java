package io.sluice.server.read;

import io.netty.channel.Channel;
import io.sluice.server.storage.CommittedSplitFile;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Open read streams: a stream is a committed split opened by one connection, read chunk by chunk.
 * Streams close when the reader closes them or its connection closes. At most {@code
 * maxPerConnection} per connection, and as many per application as its {@link StreamQuota} allows.
 * Thread safe.
 */
public final class ReadStreams {
  private final int maxPerConnection;
  private final StreamQuota quota;
  private final AtomicLong nextId = new AtomicLong();
  private final Map<Long, Stream> streams = new ConcurrentHashMap<>();
  private final Map<Channel, Set<Long>> byChannel = new ConcurrentHashMap<>();

  public ReadStreams(int maxPerConnection, StreamQuota quota) {
    this.maxPerConnection = maxPerConnection;
    this.quota = quota;
  }

  /** An open stream. */
  public static final class Stream {
    private final long id;
    private final Channel owner;
    private final CommittedSplitFile file;

    Stream(long id, Channel owner, CommittedSplitFile file) {
      this.id = id;
      this.owner = owner;
      this.file = file;
    }

    public long id() {
      return id;
    }

    public CommittedSplitFile file() {
      return file;
    }
  }

  /**
   * Opens a stream; null when the connection already holds its maximum or has closed. A stream
   * opened as its connection closes (an open answered after a sort, on another thread) is closed
   * here, never left behind: it is registered first, then the connection checked, while {@link
   * #closeAll} runs only once the connection is inactive; an open that finds it inactive removes
   * its stream itself, since the close may have taken the connection's streams before this one
   * joined.
   *
   * @throws io.sluice.server.storage.QuotaExceededException when the file's application holds as
   *     many streams as it may
   */
  public Stream open(Channel channel, CommittedSplitFile file) {
    if (!channel.isActive()) {
      return null;
    }
    Set<Long> ids = byChannel.computeIfAbsent(channel, c -> ConcurrentHashMap.newKeySet());
    if (ids.size() >= maxPerConnection) {
      return null;
    }
    quota.opened(file.key().appId(), file.key().toString());
    long id = nextId();
    Stream s = new Stream(id, channel, file);
    streams.put(id, s);
    ids.add(id);
    if (!channel.isActive()) {
      // the connection's closeAll may have taken its set before this stream was in it
      ids.remove(id);
      remove(id);
      closeAll(channel);
      return null;
    }
    return s;
  }

  /** A fresh stream id; map partition streams ({@link MapStreams}) share the id space. */
  public long nextId() {
    return nextId.incrementAndGet();
  }

  /** The stream {@code id} if {@code channel} opened it, else null. */
  public Stream get(Channel channel, long id) {
    Stream s = streams.get(id);
    return s != null && s.owner == channel ? s : null;
  }

  /**
   * @return false when {@code channel} has no such stream
   */
  public boolean close(Channel channel, long id) {
    Stream s = get(channel, id);
    if (s == null) {
      return false;
    }
    remove(id);
    Set<Long> ids = byChannel.get(channel);
    if (ids != null) {
      ids.remove(id);
    }
    return true;
  }

  /** Closes every stream of a closed connection. */
  public void closeAll(Channel channel) {
    Set<Long> ids = byChannel.remove(channel);
    if (ids != null) {
      for (Long id : ids) {
        remove(id);
      }
    }
  }

  private void remove(long id) {
    Stream s = streams.remove(id);
    if (s != null) {
      quota.closed(s.file.key().appId());
    }
  }

  public int openCount() {
    return streams.size();
  }
}
