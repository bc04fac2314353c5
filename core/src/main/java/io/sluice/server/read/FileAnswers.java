package io.sluice.server.read;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.sluice.network.ReadGate;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The answers read from files that each connection has under way: accepted, being prepared off the
 * event loop (the file opened, or read under TLS) or waiting to be written. Each holds its file
 * open until it is written, so a peer that asks for chunks and never reads the answers would pile
 * up open files until the process has none left. Past {@code sluice.network.server.maxFileAnswers}
 * the server stops reading the connection ({@link ReadGate#FILE_ANSWERS}) and reads it again once
 * half of them went out: a connection holds at most that many files open for its answers. Thread
 * safe.
 */
public final class FileAnswers {
  private static final AttributeKey<AtomicInteger> UNDER_WAY =
      AttributeKey.valueOf("sluiceFileAnswers");

  private final int max;

  /**
   * @param max answers one connection may have under way, at least 2
   */
  public FileAnswers(int max) {
    if (max < 2) {
      throw new IllegalArgumentException("a connection must be allowed 2 file answers, not " + max);
    }
    this.max = max;
  }

  /** An answer of {@code channel} is under way; {@link #sent} must follow exactly once. */
  public void started(Channel channel) {
    if (underWay(channel).incrementAndGet() >= max) {
      ReadGate.pause(channel, ReadGate.FILE_ANSWERS);
    }
  }

  /** An answer {@link #started} went out, failed or was dropped with its connection. */
  public void sent(Channel channel) {
    if (underWay(channel).decrementAndGet() <= max / 2) {
      ReadGate.resumeDecoding(channel, ReadGate.FILE_ANSWERS);
    }
  }

  private static AtomicInteger underWay(Channel channel) {
    AtomicInteger n = channel.attr(UNDER_WAY).get();
    if (n == null) {
      AtomicInteger created = new AtomicInteger();
      AtomicInteger raced = channel.attr(UNDER_WAY).setIfAbsent(created);
      n = raced == null ? created : raced;
    }
    return n;
  }
}
